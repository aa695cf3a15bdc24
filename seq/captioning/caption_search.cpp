// Decoding: turning the model's word probabilities into a caption.
//
// Greedy decoding takes the most likely word at every step and feeds it back in. It can walk
// into a dead end: one locally likely word may make every continuation unlikely. Beam search
// keeps the `width` best partial captions instead (ranked by their summed log-probability),
// extends each by every word, keeps the best `width` again, and sets a caption aside when it
// ends with <eos>; the beam shrinks by one for each caption set aside, and the best finished
// caption wins. Our captions come from a fixed grammar, so we do not normalise by length.
#include "seq/captioning/caption_search.h"

#include <algorithm>
#include <cmath>

#include "autograd/ops.h"

namespace attend::captioning {

std::vector<Caption> greedy_decode(CaptionDecoder& decoder, const Tensor& regions,
                                   Index max_words) {
  NoGradGuard no_graph;
  const Index batch = regions.size(0);
  Tensor projected = decoder.project_regions(regions);
  nn::LSTMState state = decoder.initial_state(regions);
  Tensor previous = Tensor(NDArray::full({batch}, Vocabulary::kBos, kInt64));
  std::vector<Caption> captions(static_cast<std::size_t>(batch));
  std::vector<bool> done(static_cast<std::size_t>(batch), false);
  // A caption that reaches max_words words stops there, without <eos>.
  for (Index t = 0; t < max_words; ++t) {
    DecoderStep out = decoder.step(regions, projected, previous, state);
    const NDArray log_p = log_softmax(out.logits, -1).data().to(kFloat64);
    const NDArray best = argmax(out.logits, -1).data();  // int64 [B]
    const NDArray alpha = out.alpha.data().to(kFloat32);
    const Index regions_count = alpha.size(1), vocab = log_p.size(1);
    for (Index b = 0; b < batch; ++b) {
      const auto i = static_cast<std::size_t>(b);
      if (done[i]) continue;
      const std::int64_t word = best.data<std::int64_t>()[b];
      captions[i].log_probability += log_p.data<double>()[b * vocab + word];
      if (word == Vocabulary::kEos) {
        done[i] = true;
        continue;
      }
      captions[i].ids.push_back(word);
      NDArray row = NDArray::empty({regions_count});
      std::copy_n(alpha.data<float>() + b * regions_count, regions_count, row.data<float>());
      captions[i].alphas.push_back(row);
    }
    if (std::all_of(done.begin(), done.end(), [](bool d) { return d; })) break;
    previous = Tensor(best);
    state = out.state;
  }
  return captions;
}

namespace {

struct Hypothesis {
  Caption caption;
  nn::LSTMState state;  // [1, n] each
};

}  // namespace

Caption beam_decode(CaptionDecoder& decoder, const Tensor& regions, Index width, Index max_words) {
  NoGradGuard no_graph;
  if (regions.size(0) != 1) fail("beam_decode: one image at a time, got {}", regions.shape());
  if (width < 1) fail("beam_decode: the beam width must be at least 1, got {}", width);
  Tensor projected = decoder.project_regions(regions);
  std::vector<Hypothesis> live = {{Caption{}, decoder.initial_state(regions)}};
  std::vector<Caption> finished;
  for (Index t = 0; t < max_words && !live.empty(); ++t) {
    const Index k = static_cast<Index>(live.size());
    std::vector<std::int64_t> previous;
    std::vector<Tensor> hs, cs;
    for (const Hypothesis& hyp : live) {
      previous.push_back(hyp.caption.ids.empty() ? Vocabulary::kBos : hyp.caption.ids.back());
      hs.push_back(hyp.state.h);
      cs.push_back(hyp.state.c);
    }
    Tensor words(NDArray::from_vector(previous, {k}));
    Tensor many_regions = broadcast_to(regions, {k, regions.size(1), regions.size(2)});
    Tensor many_projected = broadcast_to(projected, {k, projected.size(1), projected.size(2)});
    DecoderStep out =
        decoder.step(many_regions, many_projected, words, {concat(hs, 0), concat(cs, 0)});
    const NDArray log_p = log_softmax(out.logits, -1).data().to(kFloat64);
    const NDArray alpha = out.alpha.data().to(kFloat32);
    const Index vocab = log_p.size(1), regions_count = alpha.size(1);

    // Every (hypothesis, word) extension, best first; keep as many as the beam has room for.
    std::vector<std::pair<double, Index>> candidates;
    for (Index h = 0; h < k; ++h)
      for (Index w = 0; w < vocab; ++w)
        candidates.push_back({live[static_cast<std::size_t>(h)].caption.log_probability +
                                  log_p.data<double>()[h * vocab + w],
                              h * vocab + w});
    const Index room = width - static_cast<Index>(finished.size());
    std::partial_sort(candidates.begin(), candidates.begin() + std::min<Index>(room, k * vocab),
                      candidates.end(),
                      [](const auto& a, const auto& b) { return a.first > b.first; });
    std::vector<Hypothesis> next;
    for (Index c = 0; c < std::min<Index>(room, k * vocab); ++c) {
      const Index h = candidates[static_cast<std::size_t>(c)].second / vocab;
      const std::int64_t word = candidates[static_cast<std::size_t>(c)].second % vocab;
      Caption caption = live[static_cast<std::size_t>(h)].caption;
      caption.log_probability = candidates[static_cast<std::size_t>(c)].first;
      if (word == Vocabulary::kEos) {
        finished.push_back(caption);
        continue;
      }
      caption.ids.push_back(word);
      NDArray row = NDArray::empty({regions_count});
      std::copy_n(alpha.data<float>() + h * regions_count, regions_count, row.data<float>());
      caption.alphas.push_back(row);
      next.push_back({caption, {slice(out.state.h, 0, h, h + 1), slice(out.state.c, 0, h, h + 1)}});
    }
    live = std::move(next);
  }
  // Captions that reached max_words words stop there, without <eos>.
  for (const Hypothesis& hyp : live) finished.push_back(hyp.caption);
  return *std::max_element(
      finished.begin(), finished.end(),
      [](const Caption& a, const Caption& b) { return a.log_probability < b.log_probability; });
}

std::vector<std::string> words_of(const Caption& caption, const Vocabulary& vocab) {
  return vocab.decode_words(caption.ids);
}

viz::AttentionExample canvas_attention_example(const data::CanvasExample& canvas,
                                               std::string name) {
  viz::AttentionExample e{.name = std::move(name),
                          .target = canvas.words,
                          .image = viz::png_data_uri(canvas.image),
                          .image_width = canvas.image.size(2),
                          .image_height = canvas.image.size(1)};
  for (const data::CanvasObject& object : canvas.objects) {
    const data::Box& b = object.box;
    e.boxes.push_back({.x0 = static_cast<double>(b.x0),
                       .y0 = static_cast<double>(b.y0),
                       .x1 = static_cast<double>(b.x1),
                       .y1 = static_cast<double>(b.y1)});
  }
  return e;
}

void add_caption_maps(viz::AttentionExample& example, const Caption& caption,
                      const Vocabulary& vocab, const std::string& method) {
  const std::vector<std::string> words = words_of(caption, vocab);
  for (std::size_t i = 0; i < caption.alphas.size(); ++i)
    example.maps.push_back(
        {.step = static_cast<int>(i),
         .method = method,
         .token = i < words.size() ? words[i] : "",
         .values = viz::map_rows(caption.alphas[i].reshape({kGridSide, kGridSide}))});
}

}  // namespace attend::captioning
