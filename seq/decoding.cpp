// Decoding: turning the model's next-token scores into an output sentence.
#include <algorithm>
#include <cmath>

#include "seq/decoding.h"

#include "autograd/ops.h"
#include "nn/data/vocabulary.h"
#include "tensor/reduce.h"
#include "tensor/softmax.h"

namespace attend::seq {

using data::Vocabulary;

namespace {

// Row b of a [B, S] array as doubles.
std::vector<double> row_of(const NDArray& matrix, Index b) {
  const Index columns = matrix.size(1);
  std::span<const double> all = matrix.span<double>();
  return {all.begin() + b * columns, all.begin() + (b + 1) * columns};
}

}  // namespace

std::vector<Decoded> greedy_decode(Seq2SeqModel& model, const Tensor& source, const Tensor& mask,
                                   Index max_length) {
  NoGradGuard no_graph;
  const Index batch = source.size(0);
  Encoded encoded = model.encode(source, mask);
  Tensor state = encoded.initial_state;
  NDArray previous = NDArray::full({batch}, static_cast<double>(Vocabulary::kBos), kInt64);
  std::vector<Decoded> out(static_cast<std::size_t>(batch));
  Index unfinished = batch;
  for (Index i = 0; i < max_length && unfinished > 0; ++i) {
    DecoderStep step = model.step(encoded, state, Tensor(previous));
    state = step.state;
    // argmax takes the first of equal maxima, as beam search's stable sort does.
    const NDArray logits = model.output_layer(step.features).data();
    const NDArray best = argmax(logits, 1);
    const NDArray log_p = log_softmax(logits, 1).to(kFloat64);
    const NDArray weights = step.weights.defined() ? step.weights.data().to(kFloat64) : NDArray();
    for (Index b = 0; b < batch; ++b) {
      Decoded& d = out[static_cast<std::size_t>(b)];
      if (d.finished) continue;
      const std::int64_t token = best.data<std::int64_t>()[b];
      d.log_probability += log_p.at({b, token});
      if (weights.defined()) d.weights.push_back(row_of(weights, b));
      if (token == Vocabulary::kEos) {
        d.finished = true;
        --unfinished;
      } else {
        d.tokens.push_back(token);
      }
    }
    previous = best;
  }
  return out;
}

Decoded beam_search(Seq2SeqModel& model, const Tensor& source, const Tensor& mask,
                    const BeamOptions& options) {
  if (source.ndim() != 2 || source.size(0) != 1)
    fail("beam_search: one sentence at a time, source [1, S]; got {}", source.shape());
  if (options.width < 1) fail("beam_search: the width must be at least 1, got {}", options.width);
  NoGradGuard no_graph;
  Encoded encoded = model.encode(source, mask);
  Tensor states = encoded.initial_state;   // one row per live hypothesis
  std::vector<Decoded> live(1), finished;  // start from one empty hypothesis
  const auto ranking = [&](const Decoded& d) {
    const double length = static_cast<double>(d.tokens.size() + (d.finished ? 1 : 0));
    return d.log_probability / std::pow(std::max(length, 1.0), options.length_penalty);
  };
  for (Index i = 0; i < options.max_length; ++i) {
    const Index k = static_cast<Index>(live.size());
    NDArray previous = NDArray::empty({k}, kInt64);
    for (Index h = 0; h < k; ++h) {
      const TokenIds& tokens = live[static_cast<std::size_t>(h)].tokens;
      previous.data<std::int64_t>()[h] = tokens.empty() ? Vocabulary::kBos : tokens.back();
    }
    // Every live hypothesis reads the same sentence: row 0 of the encoding, k times.
    Encoded rows = select_rows(encoded, Tensor(NDArray::zeros({k}, kInt64)));
    DecoderStep step = model.step(rows, states, Tensor(previous));
    NDArray log_p = log_softmax(model.output_layer(step.features).data(), 1).to(kFloat64);
    const NDArray weights = step.weights.defined() ? step.weights.data().to(kFloat64) : NDArray();

    // Every (hypothesis, token) extension with its total log-probability. Only the best
    // `width` are needed, best first; equal scores are kept in (hypothesis, token) order,
    // so that width 1 picks the first maximum, as argmax does.
    struct Candidate {
      double log_probability;
      Index hypothesis;
      std::int64_t token;
    };
    const Index vocabulary = log_p.size(1);
    std::vector<Candidate> candidates;
    candidates.reserve(static_cast<std::size_t>(k * vocabulary));
    for (Index h = 0; h < k; ++h)
      for (Index v = 0; v < vocabulary; ++v)
        candidates.push_back(
            {live[static_cast<std::size_t>(h)].log_probability + log_p.at({h, v}), h, v});
    const std::size_t keep = std::min(candidates.size(), static_cast<std::size_t>(options.width));
    std::partial_sort(candidates.begin(), candidates.begin() + static_cast<std::ptrdiff_t>(keep),
                      candidates.end(), [](const Candidate& a, const Candidate& b) {
                        if (a.log_probability != b.log_probability)
                          return a.log_probability > b.log_probability;
                        return a.hypothesis != b.hypothesis ? a.hypothesis < b.hypothesis
                                                            : a.token < b.token;
                      });

    std::vector<Decoded> next;
    std::vector<double> parents;
    for (std::size_t c = 0; c < keep; ++c) {
      const Candidate& best = candidates[c];
      Decoded d = live[static_cast<std::size_t>(best.hypothesis)];
      d.log_probability = best.log_probability;
      if (weights.defined()) d.weights.push_back(row_of(weights, best.hypothesis));
      if (best.token == Vocabulary::kEos) {
        d.finished = true;
        finished.push_back(std::move(d));
      } else {
        d.tokens.push_back(best.token);
        next.push_back(std::move(d));
        parents.push_back(static_cast<double>(best.hypothesis));
      }
    }
    live = std::move(next);
    if (static_cast<Index>(finished.size()) >= options.width || live.empty()) break;
    Tensor parent_rows(
        NDArray::from_vector(std::span<const double>(parents), {static_cast<Index>(parents.size())})
            .to(kInt64));
    states = index_select(step.state, 0, parent_rows);
  }
  // Cut at max_length with nothing finished: the unfinished hypotheses compete instead.
  const std::vector<Decoded>& pool = finished.empty() ? live : finished;
  return *std::max_element(pool.begin(), pool.end(), [&](const Decoded& a, const Decoded& b) {
    return ranking(a) < ranking(b);
  });
}

}  // namespace attend::seq
