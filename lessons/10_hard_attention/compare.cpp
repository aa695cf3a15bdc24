// Measurements for the soft-versus-hard table: the course material describes the two in
// words ("hard attention is not differentiable", "its gradient estimate is noisy", "it is
// cheaper at inference"); these functions turn each phrase into a number.
#include <chrono>
#include <cmath>

#include "lesson.h"

namespace attend::lesson10 {

std::vector<double> attention_gradient(CaptionDecoder& decoder) {
  std::vector<double> flat;
  for (const Tensor& p : decoder.attention.parameters()) {
    if (p.grad().defined()) {
      std::vector<double> g = p.grad().data().to_vector();
      flat.insert(flat.end(), g.begin(), g.end());
    } else {
      flat.insert(flat.end(), static_cast<std::size_t>(p.numel()), 0.0);  // no path reached it
    }
  }
  return flat;
}

GradientSpread gradient_spread(CaptionDecoder& decoder, const NDArray& regions,
                               const std::vector<CanvasExample>& canvases, const Vocabulary& vocab,
                               bool soft, bool same_batch, Index draws, Index batch_size,
                               const HardOptions& options, double lambda, Generator& gen) {
  HardAttentionLoss hard(decoder, options, gen);
  std::vector<std::vector<double>> gradients;
  for (Index d = 0; d < draws; ++d) {
    std::vector<Index> indices;
    std::vector<const CanvasExample*> batch;
    for (Index i = 0; i < batch_size; ++i) {
      const Index n = same_batch ? i : gen.randint(static_cast<Index>(canvases.size()));
      indices.push_back(n);
      batch.push_back(&canvases[static_cast<std::size_t>(n)]);
    }
    CaptionBatch captions = make_caption_batch(batch, vocab);
    Tensor chunk = rows(regions, indices);
    decoder.zero_grad();
    Tensor loss = soft ? soft_attention_loss(decoder, chunk, captions, lambda).total
                       : hard(chunk, captions).total;
    loss.backward();
    gradients.push_back(attention_gradient(decoder));
  }
  decoder.zero_grad();
  const std::size_t size = gradients[0].size();
  std::vector<double> average(size, 0.0);
  for (const auto& g : gradients)
    for (std::size_t j = 0; j < size; ++j) average[j] += g[j] / static_cast<double>(draws);
  double variance = 0, norm2 = 0;
  for (std::size_t j = 0; j < size; ++j) {
    norm2 += average[j] * average[j];
    for (const auto& g : gradients)
      variance += (g[j] - average[j]) * (g[j] - average[j]) / static_cast<double>(draws - 1);
  }
  return {norm2 > 0 ? variance / norm2 : 0.0, std::sqrt(norm2)};
}

double backprop_gradient_norm(CaptionDecoder& decoder, const Tensor& regions,
                              const CaptionBatch& batch, bool soft, Generator& gen) {
  decoder.zero_grad();
  Tensor nll =
      soft ? caption_nll(unroll(decoder, regions, batch.inputs).logits, batch.targets)
           : -mean(hard_unroll(decoder, regions, batch, /*semi_sampling=*/0, gen).log_likelihood);
  nll.backward();
  double norm2 = 0;
  for (double g : attention_gradient(decoder)) norm2 += g * g;
  decoder.zero_grad();
  return std::sqrt(norm2);
}

double microseconds_per_word(CaptionDecoder& decoder, const NDArray& regions, Index repeats) {
  double best = 1e300;
  for (Index r = 0; r < repeats; ++r) {
    Index words = 0;
    const auto start = std::chrono::steady_clock::now();
    for (Index first = 0; first < regions.size(0); first += 64) {
      std::vector<Index> indices;
      for (Index i = first; i < std::min(regions.size(0), first + 64); ++i) indices.push_back(i);
      for (const Caption& c : greedy_decode(decoder, rows(regions, indices)))
        words += static_cast<Index>(c.ids.size()) + 1;  // + the <eos> step
    }
    const double took =
        std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
    best = std::min(best, took / static_cast<double>(words));
  }
  return best;
}

}  // namespace attend::lesson10
