// Writing text: one character at a time, each sampled from the model's distribution for the
// next one, then fed back in.
//
// Without a cache every new character runs the whole window through the model again: T
// positions of every layer, of which only the last is new. With the key/value cache each
// layer keeps the keys and values of the positions it has seen (nn::KeyValueCache), so a new
// character costs one position: the query of the new character against the cached keys.
#include <algorithm>
#include <cmath>
#include <utility>

#include "lesson.h"

namespace attend::lesson12 {

Index sample_logits(std::span<const float> logits, const Sampling& sampling, Generator& gen) {
  const auto V = static_cast<Index>(logits.size());
  std::vector<double> scaled(logits.begin(), logits.end());
  for (double& s : scaled) s /= sampling.temperature;  // < 1 sharpens, > 1 flattens
  if (sampling.top_k > 0 && sampling.top_k < V) {      // only the k likeliest may be drawn
    std::vector<double> sorted = scaled;
    std::nth_element(sorted.begin(), sorted.begin() + (sampling.top_k - 1), sorted.end(),
                     std::greater<>());
    const double kth = sorted[static_cast<std::size_t>(sampling.top_k - 1)];
    for (double& s : scaled)
      if (s < kth) s = -INFINITY;
  }
  const double top = *std::max_element(scaled.begin(), scaled.end());
  std::vector<double> p(scaled.size());
  for (std::size_t i = 0; i < p.size(); ++i) p[i] = std::exp(scaled[i] - top);
  return gen.categorical(p);  // normalises
}

namespace {

// The logits of the last position of [1, S, V], as floats.
std::vector<float> last_row(const Tensor& logits) {
  const Index S = logits.size(1), V = logits.size(2);
  const auto all = std::as_const(logits.data()).span<float>();
  return {all.begin() + (S - 1) * V, all.begin() + S * V};
}

Tensor as_ids(std::span<const std::int64_t> ids) {
  return Tensor(NDArray::from_vector(ids, {1, static_cast<Index>(ids.size())}));
}

}  // namespace

std::string generate(Gpt& model, const data::CharVocabulary& vocabulary, const std::string& prompt,
                     Index chars, const Sampling& sampling, bool use_cache, Generator& gen) {
  NoGradGuard no_graph;
  model.eval();
  const Index context = model.config.context;
  std::vector<std::int64_t> ids = vocabulary.encode(prompt.empty() ? std::string("\n") : prompt);
  std::vector<nn::KeyValueCache> caches;
  auto window = [&](Index length) {  // the last `length` ids
    const Index n = std::min<Index>(length, static_cast<Index>(ids.size()));
    return std::span<const std::int64_t>(ids).last(static_cast<std::size_t>(n));
  };
  // With the cache: the prompt's keys and values first, then one character per step.
  std::vector<float> logits;
  if (use_cache) logits = last_row(model.forward_step(as_ids(window(context)), caches));
  for (Index i = 0; i < chars; ++i) {
    if (!use_cache) logits = last_row(model.forward(as_ids(window(context))));
    ids.push_back(sample_logits(logits, sampling, gen));
    if (!use_cache) continue;
    if (caches[0].length() == context) {  // full: restart from the last half of the window
      caches.clear();
      logits = last_row(model.forward_step(as_ids(window(context / 2)), caches));
    } else {
      logits = last_row(model.forward_step(as_ids(window(1)), caches));
    }
  }
  model.train();
  return vocabulary.decode(
      std::span<const std::int64_t>(ids).last(static_cast<std::size_t>(chars)));
}

}  // namespace attend::lesson12
