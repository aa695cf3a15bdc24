// (d) A task that a score has to learn: find the key a query was made from. The query is
// q = P k_target + noise, with P a fixed random matrix the model never sees, so the query
// and its key live in different coordinates (as a decoder state and an encoder annotation
// do). A parameter-free score compares coordinates that do not correspond; a learned one
// can undo P.
//
// Each example has its own number of real keys; the other slots are padding. The loss is
// the cross-entropy of the scores against the target slot with the padding's scores set to
// -inf, so the padding gets probability exactly 0, as in masked_softmax.
#include <cmath>
#include <limits>

#include "lesson.h"

namespace attend::lesson05 {
namespace {

// [B, T] scores of the single query of each example.
Tensor query_scores(Scorer& scorer, const MatchingBatch& batch) {
  return squeeze(scorer.forward(batch.queries, batch.keys), 1);
}

// The real-key count of each example, from its mask row.
std::vector<Index> real_keys(const MatchingBatch& batch) {
  NDArray mask = batch.mask.data().to(kFloat64);
  std::vector<Index> counts;
  for (Index b = 0; b < mask.size(0); ++b) {
    Index n = 0;
    for (Index k = 0; k < mask.size(1); ++k) n += mask.at({b, k}) != 0;
    counts.push_back(n);
  }
  return counts;
}

}  // namespace

NDArray make_mixing_matrix(const MatchingTask& task, Generator& gen) {
  if (!task.mixed) {
    if (task.query_size != task.key_size)
      fail(
          "make_mixing_matrix: without mixing the query is a copy of its key, so the query "
          "size {} must equal the key size {}",
          task.query_size, task.key_size);
    NDArray identity = NDArray::zeros({task.key_size, task.key_size}, kFloat64);
    for (Index i = 0; i < task.key_size; ++i) identity.set({i, i}, 1);
    return identity;
  }
  return NDArray::normal({task.query_size, task.key_size}, gen, 0,
                         1 / std::sqrt(static_cast<double>(task.key_size)), kFloat64);
}

MatchingBatch draw_matching_batch(const MatchingTask& task, const NDArray& mixing, Index batch,
                                  Generator& gen, DType dtype) {
  if (task.min_keys < 1 || task.max_keys < task.min_keys)
    fail("draw_matching_batch: need 1 <= min_keys <= max_keys, got {} and {}", task.min_keys,
         task.max_keys);
  if (mixing.shape() != Shape{task.query_size, task.key_size})
    fail("draw_matching_batch: the mixing matrix is {}, need [{},{}]", mixing.shape(),
         task.query_size, task.key_size);
  const Index T = task.max_keys, Dk = task.key_size;
  NDArray keys = NDArray::normal({batch, T, Dk}, gen, 0, 1, kFloat64);  // padding too
  NDArray mask = NDArray::zeros({batch, T}, kFloat64);
  NDArray targets = NDArray::zeros({batch}, kInt64);
  NDArray chosen = NDArray::zeros({batch, Dk}, kFloat64);  // k_target of each example
  for (Index b = 0; b < batch; ++b) {
    const Index n = task.min_keys + gen.randint(task.max_keys - task.min_keys + 1);
    for (Index k = 0; k < n; ++k) mask.set({b, k}, 1);
    const Index target = gen.randint(n);
    targets.set({b}, static_cast<double>(target));
    for (Index i = 0; i < Dk; ++i) chosen.set({b, i}, keys.at({b, target, i}));
  }
  NDArray noise = NDArray::normal({batch, task.query_size}, gen, 0, task.noise, kFloat64);
  NDArray queries = matmul(chosen, mixing, false, true) + noise;  // q = P k_target + noise
  return {Tensor(queries.reshape({batch, 1, task.query_size}).to(dtype)), Tensor(keys.to(dtype)),
          Tensor(mask.to(dtype)), Tensor(targets)};
}

Tensor matching_loss(Scorer& scorer, const MatchingBatch& batch) {
  Tensor scores = query_scores(scorer, batch);
  Tensor padding = eq(batch.mask, zeros({}, batch.mask.dtype()));
  Tensor masked = masked_fill(scores, padding, -std::numeric_limits<double>::infinity());
  return nn::cross_entropy(masked, batch.targets);
}

double matching_accuracy(Scorer& scorer, const MatchingBatch& batch) {
  NoGradGuard no_graph;
  NDArray scores = query_scores(scorer, batch).data().to(kFloat64);
  std::vector<Index> counts = real_keys(batch);
  Index correct = 0;
  for (Index b = 0; b < scores.size(0); ++b) {
    Index best = 0;
    for (Index k = 1; k < counts[static_cast<std::size_t>(b)]; ++k)
      if (scores.at({b, k}) > scores.at({b, best})) best = k;
    correct += best == static_cast<Index>(batch.targets.data().at({b}));
  }
  return static_cast<double>(correct) / static_cast<double>(scores.size(0));
}

double mean_target_weight(Scorer& scorer, const MatchingBatch& batch) {
  NoGradGuard no_graph;
  NDArray weights = nn::masked_softmax(query_scores(scorer, batch), batch.mask).data();
  NDArray target = gather(weights.to(kFloat64), 1, batch.targets.data().reshape({-1, 1}));
  return mean(target).item();
}

double chance_accuracy(const MatchingBatch& batch) {
  double total = 0;
  std::vector<Index> counts = real_keys(batch);
  for (Index n : counts) total += 1.0 / static_cast<double>(n);
  return total / static_cast<double>(counts.size());
}

MatchingCurve train_matching(Scorer& scorer, const MatchingTask& task, const NDArray& mixing,
                             const MatchingBatch& test, const MatchingTraining& options,
                             Generator& gen) {
  if (options.steps < 0 || options.batch < 1 || options.eval_every < 1)
    fail("train_matching: need steps >= 0, batch >= 1 and eval_every >= 1");
  MatchingCurve curve;
  curve.steps.push_back(0);
  curve.accuracies.push_back(matching_accuracy(scorer, test));
  if (scorer.parameters().empty()) {
    // dot and scaled: nothing to learn; the accuracy is what it is from the start.
    curve.steps.push_back(options.steps);
    curve.accuracies.push_back(curve.accuracies.back());
    return curve;
  }
  optim::Adam adam(scorer.parameters(), {.lr = options.lr});
  for (int step = 1; step <= options.steps; ++step) {
    MatchingBatch batch = draw_matching_batch(task, mixing, options.batch, gen);
    adam.zero_grad();
    Tensor loss = matching_loss(scorer, batch);
    // Before backward() and the step: an inf or NaN loss must not reach the scorer.
    optim::check_loss_is_finite(fmt::format("train_matching (learning rate {})", options.lr), step,
                                loss.item());
    loss.backward();
    adam.step();
    curve.losses.push_back(loss.item());
    if (step % options.eval_every == 0 || step == options.steps) {
      curve.steps.push_back(step);
      curve.accuracies.push_back(matching_accuracy(scorer, test));
    }
  }
  return curve;
}

}  // namespace attend::lesson05
