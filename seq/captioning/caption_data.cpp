// Canvases as a captioner sees them: word ids and image tensors (caption_data.h).
//
// The decoder is trained with teacher forcing: at step t it is given the true previous word
// y_{t-1} (starting from <bos>) and asked for y_t (ending with <eos>). So a caption of n
// words gives n + 1 steps, with inputs and targets shifted by one.
#include "seq/captioning/caption_data.h"

#include <algorithm>
#include <cstring>

namespace attend::captioning {

Vocabulary caption_vocabulary(const data::CanvasGenerator& generator) {
  Vocabulary vocab;
  for (const std::string& word : generator.caption_words()) vocab.add(word);
  return vocab;
}

CaptionBatch make_caption_batch(const std::vector<const CanvasExample*>& examples,
                                const Vocabulary& vocab, DType dtype) {
  std::vector<std::vector<std::int64_t>> input_ids, target_ids;
  for (const CanvasExample* example : examples) {
    std::vector<std::int64_t> ids = vocab.encode_words(example->words);
    std::vector<std::int64_t> in = {Vocabulary::kBos}, out = ids;
    in.insert(in.end(), ids.begin(), ids.end());
    out.push_back(Vocabulary::kEos);
    input_ids.push_back(in);
    target_ids.push_back(out);
  }
  CaptionBatch batch;
  batch.inputs = Tensor(data::pad_sequences(input_ids));
  batch.targets = Tensor(data::pad_sequences(target_ids));
  const NDArray targets = batch.targets.data();
  NDArray mask = NDArray::zeros(targets.shape(), kFloat64);
  for (Index i = 0; i < targets.numel(); ++i)
    mask.data<double>()[i] = targets.data<std::int64_t>()[i] != Vocabulary::kPad;
  batch.mask = Tensor(mask.to(dtype));
  return batch;
}

Tensor stack_images(const std::vector<const CanvasExample*>& examples) {
  if (examples.empty()) fail("stack_images: no canvases to stack");
  const NDArray& first = examples[0]->image;
  const Index size = first.numel();
  NDArray images = NDArray::empty(
      {static_cast<Index>(examples.size()), first.size(0), first.size(1), first.size(2)});
  float* out = images.data<float>();
  for (std::size_t i = 0; i < examples.size(); ++i) {
    const NDArray& image = examples[i]->image;
    if (image.shape() != first.shape())
      fail("stack_images: canvas {} is {}, canvas 0 is {}", i, image.shape(), first.shape());
    std::memcpy(out + static_cast<Index>(i) * size, image.data<float>(), sizeof(float) * size);
  }
  return Tensor(images);
}

Tensor rows(const NDArray& all, const std::vector<Index>& indices) {
  Shape shape = all.shape();
  const Index row = all.numel() / shape[0];
  shape[0] = static_cast<Index>(indices.size());
  NDArray out = NDArray::empty(shape, all.dtype());
  const std::size_t bytes = static_cast<std::size_t>(row) * dtype_size(all.dtype());
  const auto* src = static_cast<const unsigned char*>(all.raw_data());
  auto* dst = static_cast<unsigned char*>(out.raw_data());
  for (std::size_t i = 0; i < indices.size(); ++i) {
    if (indices[i] < 0 || indices[i] >= all.size(0))
      fail("rows: index {} is outside 0..{}", indices[i], all.size(0) - 1);
    std::memcpy(dst + i * bytes, src + static_cast<std::size_t>(indices[i]) * bytes, bytes);
  }
  return Tensor(out);
}

}  // namespace attend::captioning
