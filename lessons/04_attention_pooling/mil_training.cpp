// (b) Training the bag classifiers and scoring them: bag accuracy, and instance localisation,
// the share of positive bags whose most heavily weighted instance is a positive one.
//
// The loss is the negative Bernoulli log-likelihood of the bag label (Ilse et al. 2018), i.e.
// binary cross-entropy on the bag's logit. Every pooling gets the same
// encoder, the same initial encoder weights, the same bags in the same order and the same
// number of Adam steps.
#include <algorithm>
#include <cmath>
#include <sstream>

#include "lesson.h"

namespace attend::lesson04 {
namespace {

DType model_dtype(const MilModel& model) {
  return model.classifier.weight.dtype();
}

std::vector<Index> range_of(Index first, Index count) {
  std::vector<Index> positions;
  for (Index i = first; i < first + count; ++i) positions.push_back(i);
  return positions;
}

}  // namespace

Tensor mil_loss(MilModel& model, const Bags& bags) {
  const DType dtype = model_dtype(model);
  MilModel::Output out = model.forward(Tensor(bags.images.to(dtype)), Tensor(bags.mask));
  return nn::binary_cross_entropy_with_logits(out.logits, Tensor(bags.labels.to(dtype)));
}

MilModel::Output predict(MilModel& model, const Bags& bags) {
  NoGradGuard no_graph;
  const DType dtype = model_dtype(model);
  return model.forward(Tensor(bags.images.to(dtype)), Tensor(bags.mask));
}

std::vector<double> train_mil(MilModel& model, const Bags& train, const MilTraining& options) {
  if (options.epochs < 1 || options.batch_bags < 1)
    fail("train_mil: epochs and batch_bags must be at least 1, got {} and {}", options.epochs,
         options.batch_bags);
  optim::Adam adam(model.parameters(), {.lr = options.lr, .weight_decay = options.weight_decay});
  Generator order_gen(options.seed);
  const Index batches = (train.size() + options.batch_bags - 1) / options.batch_bags;
  std::ostringstream silent;
  viz::ProgressOptions progress_options;
  progress_options.epochs = options.epochs;
  progress_options.unit = "bags";
  if (!options.progress) progress_options.out = &silent;
  viz::Progress progress(batches, progress_options);
  std::vector<double> epoch_losses;
  Index step = 0;
  for (int epoch = 0; epoch < options.epochs; ++epoch) {
    progress.start_epoch();
    std::vector<Index> order = order_gen.permutation(train.size());
    for (Index first = 0; first < train.size(); first += options.batch_bags) {
      const Index last = std::min(train.size(), first + options.batch_bags);
      Bags batch =
          select_bags(train, std::vector<Index>(order.begin() + first, order.begin() + last));
      adam.zero_grad();
      Tensor loss = mil_loss(model, batch);
      optim::check_loss_is_finite("train_mil", ++step, loss.item());
      loss.backward();
      adam.step();
      progress.step(loss.item(), batch.size());
    }
    epoch_losses.push_back(progress.end_epoch());
  }
  return epoch_losses;
}

MilScores score_mil(MilModel& model, const Bags& bags, Index batch_bags) {
  MilScores scores;
  Index correct = 0;
  double found = 0, chance = 0;
  for (Index first = 0; first < bags.size(); first += batch_bags) {
    Bags batch = select_bags(bags, range_of(first, std::min(batch_bags, bags.size() - first)));
    MilModel::Output out = predict(model, batch);
    const NDArray logits = out.logits.data().to(kFloat64);
    const NDArray weights = out.instance_weights.data().to(kFloat64);
    const NDArray mask = batch.mask.to(kFloat64), positive = batch.instance_labels.to(kFloat64);
    const Index T = batch.length();
    for (Index b = 0; b < batch.size(); ++b) {
      const bool label = batch.labels.at({b}) > 0.5;
      if ((logits.at({b}) > 0) == label) ++correct;
      if (!label) continue;
      // Localisation: the top-weighted instance, ties shared out evenly.
      double top = -1, real = 0, positives = 0;
      for (Index k = 0; k < T; ++k)
        if (mask.at({b, k}) != 0) {
          top = std::max(top, weights.at({b, k}));
          real += 1;
          positives += positive.at({b, k});
        }
      double tied = 0, tied_positive = 0;
      for (Index k = 0; k < T; ++k)
        if (mask.at({b, k}) != 0 && weights.at({b, k}) == top) {
          tied += 1;
          tied_positive += positive.at({b, k});
        }
      found += tied_positive / tied;
      chance += positives / real;
      ++scores.positive_bags;
    }
  }
  scores.accuracy = static_cast<double>(correct) / static_cast<double>(bags.size());
  if (scores.positive_bags > 0) {
    scores.localisation = found / static_cast<double>(scores.positive_bags);
    scores.chance = chance / static_cast<double>(scores.positive_bags);
  }
  return scores;
}

}  // namespace attend::lesson04
