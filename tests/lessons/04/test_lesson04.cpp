// Lesson 04's functions: Nadaraya-Watson regression (weights by hand, leave-one-out, the learned
// width), the bags and the four MIL poolings (by hand, invariances, training, localisation),
// the noisy linear model (closed form, expected loss, training), and the figure. Every model
// has a float64 gradcheck with gradcheck's default tolerances: an element passes when
// |analytic - numeric| <= atol + rtol * |numeric|, eps 1e-6, atol 1e-5, rtol 1e-3.
#include <algorithm>
#include <cmath>

#include "lessons/04_attention_pooling/lesson.h"
#include "nn/viz/scratch.h"
#include "support.h"

using namespace attend;
using namespace attend::testing;
using namespace attend::lesson04;
using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;
using Catch::Matchers::WithinAbs;

namespace {

// Small MIL sizes for the gradchecks and invariance tests: 6 "pixels" per instance.
MilSizes tiny_sizes() {
  MilSizes s;
  s.input = 6;
  s.hidden = 5;
  s.embedding = 4;
  s.attention = 3;
  s.lse_sharpness = 1.5;
  return s;
}

// Three bags of 4, 2 and 3 instances (padded to 4), random float64 "pictures" of 6 values.
Bags tiny_bags(Generator& gen) {
  Bags bags;
  bags.images = NDArray::normal({3, 4, 6}, gen, 0, 1, kFloat64);
  bags.mask = NDArray::from_list({1, 1, 1, 1, 1, 1, 0, 0, 1, 1, 1, 0}, {3, 4});
  bags.labels = NDArray::from_list({1, 0, 1}, {3});
  bags.instance_labels = NDArray::from_list({0, 1, 0, 0, 0, 0, 0, 0, 1, 1, 0, 0}, {3, 4});
  bags.classes = NDArray::from_list({0, 8, 1, 2, 3, 4, -1, -1, 8, 8, 5, -1}, {3, 4}, kInt64);
  return bags;
}

const std::vector<Pooling> kAllPoolings = {Pooling::kMean, Pooling::kMax, Pooling::kLogSumExp,
                                           Pooling::kAttention, Pooling::kGatedAttention};

double row_sum(const NDArray& m, Index row) {
  double total = 0;
  for (Index k = 0; k < m.size(1); ++k) total += m.at({row, k});
  return total;
}

}  // namespace

// ---- Nadaraya-Watson -----------------------------------------------------------------------

TEST_CASE("regression data: d2l's setting", "[lesson04]") {
  Generator gen(0);
  RegressionData data = make_regression_data(50, 0.5, gen);
  REQUIRE(data.x_train.shape() == Shape{50});
  REQUIRE(data.x_test.shape() == Shape{kTestPoints});
  std::vector<double> x = data.x_train.data().to_vector();
  CHECK(std::is_sorted(x.begin(), x.end()));
  CHECK(x.front() >= 0);
  CHECK(x.back() < kInputRange);
  CHECK_THAT(data.x_test.data().at({49}), WithinAbs(4.9, 1e-6));
  CHECK_THAT(data.y_truth.data().at({10}), WithinAbs(2 * std::sin(1.0) + 1.0, 1e-6));
  CHECK(regression_target(0) == 0);
  // The noise has the requested size: the residual standard deviation is near 0.5.
  double squares = 0;
  std::vector<double> y = data.y_train.data().to_vector();
  for (std::size_t i = 0; i < x.size(); ++i) squares += std::pow(y[i] - regression_target(x[i]), 2);
  CHECK_THAT(std::sqrt(squares / 50), WithinAbs(0.5, 0.15));
  CHECK_THAT(error_message([&] { make_regression_data(1, 0.5, gen); }),
             Contains("at least 2 training points"));
}

TEST_CASE("Nadaraya-Watson: the Gaussian kernel's weights by hand", "[lesson04]") {
  Tensor queries = tensor({0, 1}, kFloat64), keys = tensor({0, 1, 3}, kFloat64);
  Tensor values = tensor({1, 2, 4}, kFloat64), width = full({}, 1.0, kFloat64);
  KernelRegression fit = nadaraya_watson(queries, keys, values, width);
  // Query 0: scores -(0)^2/2, -(1)^2/2, -(3)^2/2.
  const double e0 = 1, e1 = std::exp(-0.5), e2 = std::exp(-4.5), z = e0 + e1 + e2;
  // Query 1: distances 1, 0, -2, so scores -1/2, 0, -2.
  const double f0 = std::exp(-0.5), f1 = 1, f2 = std::exp(-2.0), y = f0 + f1 + f2;
  check_close(fit.weights.data(), f64({e0 / z, e1 / z, e2 / z, f0 / y, f1 / y, f2 / y}, {2, 3}),
              1e-12);
  CHECK_THAT(fit.predictions.data().at({0}), WithinAbs((1 * e0 + 2 * e1 + 4 * e2) / z, 1e-12));
  for (Index q = 0; q < 2; ++q) CHECK_THAT(row_sum(fit.weights.data(), q), WithinAbs(1, 1e-12));
  // A wider kernel (smaller w) spreads the weights; w = 0 is average pooling.
  KernelRegression flat = nadaraya_watson(queries, keys, values, full({}, 0.0, kFloat64));
  check_close(flat.predictions.data(), average_pooling(queries, values).data(), 1e-12);
  check_close(average_pooling(queries, values).data(), NDArray::full({2}, 7.0 / 3, kFloat64));
  CHECK_THAT(error_message([&] {
               nadaraya_watson(queries, keys, tensor({1, 2}), width);
             }),
             Contains("need queries [Q], keys [n] and values [n]"));
  CHECK_THAT(error_message([&] { parse_kernel("boxcar"); }), Contains("use gaussian or laplace"));
}

TEST_CASE("leave-one-out: a training point never attends to itself", "[lesson04]") {
  Generator gen(3);
  RegressionData data = make_regression_data(12, 0.5, gen, kFloat64);
  Tensor width = full({}, 2.0, kFloat64);
  Tensor mask = leave_one_out_mask(12, kFloat64);
  KernelRegression fit = nadaraya_watson(data.x_train, data.x_train, data.y_train, width, mask);
  for (Index i = 0; i < 12; ++i) {
    CHECK(fit.weights.data().at({i, i}) == 0.0);
    CHECK_THAT(row_sum(fit.weights.data(), i), WithinAbs(1, 1e-12));
  }
  // The loss is half the mean squared error of those predictions.
  const double manual = 0.5 * mean(pow(fit.predictions.data() - data.y_train.data(), 2.0)).item();
  CHECK_THAT(width_loss(data, width).item(), WithinAbs(manual, 1e-12));
  // Without leaving points out, a very narrow kernel predicts each point from itself: the
  // training loss goes to 0, which is why w would grow without bound.
  CHECK(width_loss(data, full({}, 1000.0, kFloat64), Kernel::kGaussian, false).item() < 1e-12);
  CHECK(width_loss(data, full({}, 1000.0, kFloat64)).item() > 0.01);
}

TEST_CASE("learning the width: the numbers of section 1", "[lesson04]") {
  // The program's defaults: seed 0, 50 points, noise 0.5, 500 steps of lr 5 from w = 1.
  Generator gen(0);
  RegressionData data = make_regression_data(50, 0.5, gen);
  WidthTraining training = learn_width(data, 1.0, 500, 5.0);
  REQUIRE(training.losses.size() == 500);
  CHECK(training.final_loss < training.losses.front());
  CHECK(std::abs(training.final_gradient) < 1e-6);  // converged
  CHECK_THAT(training.width, WithinAbs(3.37, 0.01));
  // The chapter's ordering: learned kernel < fixed kernel < average pooling in test error.
  const double average =
      mean_squared_error(average_pooling(data.x_test, data.y_train), data.y_truth);
  const double fixed = mean_squared_error(
      nadaraya_watson(data.x_test, data.x_train, data.y_train, full({}, 1.0)).predictions,
      data.y_truth);
  const double learned = mean_squared_error(
      nadaraya_watson(data.x_test, data.x_train, data.y_train, full({}, training.width))
          .predictions,
      data.y_truth);
  CHECK(learned < fixed);
  CHECK(fixed < average);
  // From w = 10, on the flat side of the loss, it reaches the same w given enough steps.
  CHECK_THAT(learn_width(data, 10.0, 3000, 2.0).width, WithinAbs(training.width, 0.01));
}

TEST_CASE("gradcheck: Nadaraya-Watson with a learnable width", "[lesson04][gradcheck]") {
  Generator gen(4);
  RegressionData data = make_regression_data(8, 0.5, gen, kFloat64);
  for (double w : {0.7, 2.5}) {
    Tensor width = full({}, w, kFloat64).requires_grad_();
    Tensor queries = tensor({0.3, 1.7, 4.2}, kFloat64).requires_grad_();
    Tensor keys = Tensor(data.x_train.data().clone(), true);
    Tensor values = Tensor(data.y_train.data().clone(), true);
    // The test predictions, through every input (queries, keys, values, width).
    GradcheckResult r = gradcheck(
        [](const std::vector<Tensor>& in) {
          return nadaraya_watson(in[0], in[1], in[2], in[3]).predictions;
        },
        {queries, keys, values, width});
    INFO(r.report);
    CHECK(r.ok);
    CHECK(r.elements_checked == 3 + 8 + 8 + 1);
    // The leave-one-out training loss (with its mask) with respect to w.
    GradcheckResult loo =
        gradcheck([&](const std::vector<Tensor>& in) { return width_loss(data, in[0]); }, {width});
    INFO(loo.report);
    CHECK(loo.ok);
  }
}

// ---- bags -----------------------------------------------------------------------------------

TEST_CASE("bags: half positive, each positive bag holds 1 to max_positives targets", "[lesson04]") {
  data::LabelledImages pictures = data::synthetic_fashion_mnist(data::Split::kTrain, 300, 1);
  Generator gen(5);
  BagOptions options{.count = 40, .mean_size = 6, .target_class = 3, .max_positives = 2};
  Bags bags = make_bags(pictures, options, gen);
  REQUIRE(bags.size() == 40);
  REQUIRE(bags.images.shape() == Shape{40, bags.length(), 1, 28, 28});
  Index positives = 0;
  for (Index b = 0; b < bags.size(); ++b) {
    Index size = 0, targets = 0;
    for (Index k = 0; k < bags.length(); ++k) {
      const bool real = bags.mask.at({b, k}) == 1;
      size += real;
      if (!real) {
        CHECK(bags.classes.at({b, k}) == -1);
        CHECK(bags.instance_labels.at({b, k}) == 0);
        CHECK(max(slice(slice(bags.images, 0, b, b + 1), 1, k, k + 1)).item() == 0);
        continue;
      }
      CHECK(bags.classes.at({b, k}) >= 0);
      CHECK((bags.instance_labels.at({b, k}) == 1) == (bags.classes.at({b, k}) == 3));
      targets += bags.instance_labels.at({b, k}) == 1;
    }
    CHECK(size >= options.min_size);
    // Y = max_k y_k.
    CHECK((bags.labels.at({b}) == 1) == (targets > 0));
    CHECK(targets <= 2);
    positives += bags.labels.at({b}) == 1;
  }
  CHECK(positives == 20);
  CHECK_THAT(error_message([&] { make_bags(pictures, {.count = 4, .target_class = 10}, gen); }),
             Contains("the target class must be in 0..9"));
}

TEST_CASE("select_bags picks bags and cuts the padding they do not need", "[lesson04]") {
  Generator gen(6);
  Bags bags = tiny_bags(gen);
  Bags two = select_bags(bags, {1, 2});
  CHECK(two.length() == 3);  // bag 2 has 3 instances, bag 1 has 2
  CHECK(two.images.shape() == Shape{2, 3, 6});
  CHECK(two.labels.to_vector() == std::vector<double>{0, 1});
  CHECK(two.classes.at({1, 0}) == 8);
  check_close(slice(two.images, 0, 1, 2), slice(slice(bags.images, 0, 2, 3), 1, 0, 3), 0);
}

// ---- the poolings -----------------------------------------------------------------------------

TEST_CASE("the poolings by hand, with padding that must not count", "[lesson04]") {
  // One bag of 2 real instances (embeddings (1, 4) and (3, 2)) and a padding slot whose
  // embedding is huge: it must change nothing.
  Tensor h = tensor({1, 4, 3, 2, 100, 100}, {1, 3, 2}, kFloat64);
  Tensor mask = tensor({1, 1, 0}, {1, 3}, kFloat64);
  check_close(mean_pool(h, mask).data(), f64({2, 3}, {1, 2}));
  check_close(max_pool(h, mask).data(), f64({3, 4}, {1, 2}));
  const double r = 2;
  NDArray lse = logsumexp_pool(h, mask, r).data();
  CHECK_THAT(lse.at({0, 0}), WithinAbs(std::log((std::exp(2.0) + std::exp(6.0)) / 2) / r, 1e-12));
  CHECK_THAT(lse.at({0, 1}), WithinAbs(std::log((std::exp(8.0) + std::exp(4.0)) / 2) / r, 1e-12));
  // Between the mean and the max; the max for large r, the mean for small r.
  CHECK(lse.at({0, 0}) > 2);
  CHECK(lse.at({0, 0}) < 3);
  check_close(logsumexp_pool(h, mask, 1e4).data(), max_pool(h, mask).data(), 1e-3);
  check_close(logsumexp_pool(h, mask, 1e-6).data(), mean_pool(h, mask).data(), 1e-5);
  CHECK_THAT(error_message([&] { logsumexp_pool(h, mask, 0); }), Contains("must be positive"));
  CHECK_THAT(error_message([&] {
               mean_pool(h, tensor({1, 1}, {1, 2}, kFloat64));
             }),
             Contains("need embeddings [B, T, M] and a mask [B, T]"));

  // Localisation weights: instance 1 wins dimension 0, instance 0 dimension 1: half each.
  check_close(max_pool_shares(h.data(), mask.data()), f64({0.5, 0.5, 0}, {1, 3}));
  // logsumexp: softmax_k(r h_km) averaged over m.
  NDArray shares = logsumexp_pool_shares(h.data(), mask.data(), r);
  const double s0 = 1 / (1 + std::exp(4.0)), s1 = 1 / (1 + std::exp(-4.0));  // dim 0, dim 1
  CHECK_THAT(shares.at({0, 0}), WithinAbs((s0 + s1) / 2, 1e-12));
  CHECK(shares.at({0, 2}) == 0.0);
  CHECK_THAT(row_sum(shares, 0), WithinAbs(1, 1e-12));
}

TEST_CASE("MIL models: parameters, shapes, weights that sum to 1", "[lesson04]") {
  const MilSizes s = tiny_sizes();
  const Index encoder = (6 * 5 + 5) + (5 * 4 + 4), classifier = 4 + 1;
  const Index attention = 4 * 3 + 3;
  for (Pooling pooling : kAllPoolings) {
    INFO(pooling_name(pooling));
    Generator gen(7);
    MilModel model(pooling, s, gen);
    Index expected = encoder + classifier;
    if (pooling == Pooling::kAttention) expected += attention;
    if (pooling == Pooling::kGatedAttention) expected += attention + 4 * 3;
    CHECK(model.parameter_count() == expected);
    CHECK(parse_pooling(pooling_name(pooling)) == pooling);
    Generator data_gen(8);
    Bags bags = tiny_bags(data_gen);
    MilModel::Output out = predict(model, bags);
    CHECK(out.logits.shape() == Shape{3});
    REQUIRE(out.instance_weights.shape() == Shape{3, 4});
    NDArray w = out.instance_weights.data();
    for (Index b = 0; b < 3; ++b) {
      CHECK_THAT(row_sum(w, b), WithinAbs(1, 1e-6));
      for (Index k = 0; k < 4; ++k)
        if (bags.mask.at({b, k}) == 0) CHECK(w.at({b, k}) == 0.0);
    }
  }
  CHECK_THAT(error_message([] { parse_pooling("median"); }), Contains("unknown pooling 'median'"));
}

TEST_CASE("MIL models ignore padding and the order of the instances", "[lesson04]") {
  for (Pooling pooling : kAllPoolings) {
    INFO(pooling_name(pooling));
    Generator gen(9);
    MilModel model(pooling, tiny_sizes(), gen);
    model.to(kFloat64);
    Generator data_gen(10);
    Bags bags = tiny_bags(data_gen);
    const NDArray logits = predict(model, bags).logits.data();
    // Different pictures in the padding slots: the same logits.
    Bags noisy = bags;
    noisy.images = bags.images.clone();
    noisy.images.set({1, 2, 0}, 50);
    noisy.images.set({2, 3, 4}, -50);
    check_close(predict(model, noisy).logits.data(), logits, 1e-12);
    // Bag 0's instances in another order (a permutation-invariant pooling): the same logit.
    Bags shuffled = bags;
    shuffled.images = bags.images.clone();
    for (Index k = 0; k < 4; ++k)
      for (Index i = 0; i < 6; ++i) shuffled.images.set({0, k, i}, bags.images.at({0, 3 - k, i}));
    CHECK_THAT(predict(model, shuffled).logits.data().at({0}), WithinAbs(logits.at({0}), 1e-12));
  }
}

TEST_CASE("gradcheck: the MIL model with every pooling, with padding", "[lesson04][gradcheck]") {
  for (Pooling pooling : kAllPoolings) {
    INFO(pooling_name(pooling));
    Generator gen(11);
    MilModel model(pooling, tiny_sizes(), gen);
    model.to(kFloat64);
    Generator data_gen(12);
    Bags bags = tiny_bags(data_gen);
    GradcheckResult r = gradcheck([&](const std::vector<Tensor>&) { return mil_loss(model, bags); },
                                  model.parameters());
    INFO(r.report);
    CHECK(r.ok);
    CHECK(r.elements_checked == model.parameter_count());
  }
}

TEST_CASE("MIL training: attention pooling learns the bags and points at the positives",
          "[lesson04]") {
  data::LabelledImages train_pictures = data::synthetic_fashion_mnist(data::Split::kTrain, 600, 2);
  data::LabelledImages test_pictures = data::synthetic_fashion_mnist(data::Split::kTest, 300, 2);
  Generator gen(13);
  BagOptions options{.count = 120, .mean_size = 6, .target_class = 4};
  Bags train = make_bags(train_pictures, options, gen);
  options.count = 60;
  Bags test = make_bags(test_pictures, options, gen);
  MilSizes sizes;
  sizes.hidden = 16;
  sizes.embedding = 8;
  sizes.attention = 8;
  MilTraining training{.epochs = 4, .batch_bags = 8, .lr = 3e-3, .progress = false};

  Generator init(14);
  MilModel attention(Pooling::kAttention, sizes, init);
  std::vector<double> losses = train_mil(attention, train, training);
  REQUIRE(losses.size() == 4);
  CHECK(losses.back() < losses.front());
  MilScores scores = score_mil(attention, test);
  CHECK(scores.positive_bags == 30);
  CHECK(scores.accuracy > 0.85);
  CHECK(scores.localisation > scores.chance + 0.3);

  // Mean pooling weighs every instance equally: its localisation is exactly chance.
  Generator init_mean(14);
  MilModel mean_model(Pooling::kMean, sizes, init_mean);
  MilScores mean_scores = score_mil(mean_model, test);
  CHECK_THAT(mean_scores.localisation, WithinAbs(mean_scores.chance, 1e-12));
  // ... and chance is the mean share of positives in the positive bags.
  double share = 0;
  for (Index b = 0; b < test.size(); ++b) {
    if (test.labels.at({b}) != 1) continue;
    share += row_sum(test.instance_labels.to(kFloat64), b) / row_sum(test.mask.to(kFloat64), b);
  }
  CHECK_THAT(mean_scores.chance, WithinAbs(share / 30, 1e-12));
}

// ---- the noisy linear model ------------------------------------------------------------------

TEST_CASE("noisy linear model: the closed form and the ridge term", "[lesson04]") {
  Generator gen(15);
  NoisyLinearProblem problem = make_noisy_linear_problem(5, 0.1, 10, gen);
  CHECK_THAT(problem.noise_variances.front(), WithinAbs(0.1, 1e-12));
  CHECK_THAT(problem.noise_variances.back(), WithinAbs(10, 1e-12));
  CHECK_THAT(problem.noise_variances[2], WithinAbs(1, 1e-12));  // log-spaced: the middle is 1
  for (double w : problem.true_weights) CHECK(std::abs(w) == 1);
  std::vector<double> optimum = optimal_noisy_weights(problem);
  CHECK_THAT(optimum[2], WithinAbs(problem.true_weights[2] / 2, 1e-12));
  // w* minimises the expected loss: any small step away raises it.
  const double best = expected_noisy_loss(problem, optimum).total();
  for (std::size_t i = 0; i < optimum.size(); ++i)
    for (double step : {-0.01, 0.01}) {
      std::vector<double> moved = optimum;
      moved[i] += step;
      CHECK(expected_noisy_loss(problem, moved).total() > best);
    }
  // The closed form against a Monte-Carlo average over fresh noise.
  std::vector<double> w = {0.5, -0.3, 0.2, 0.8, -0.1};
  ExpectedLoss expected = expected_noisy_loss(problem, w);
  NoisyBatch big = draw_noisy_batch(problem, 200000, gen, kFloat64);
  const double measured = noisy_linear_loss(Tensor(NDArray::from_vector(w, Shape{5})), big).item();
  CHECK_THAT(measured, WithinAbs(expected.total(), 0.02 * expected.total()));
  CHECK_THAT(expected.ridge,
             WithinAbs(0.25 * problem.noise_variances[0] + 0.09 * problem.noise_variances[1] +
                           0.04 * problem.noise_variances[2] + 0.64 * problem.noise_variances[3] +
                           0.01 * problem.noise_variances[4],
                       1e-12));
  CHECK_THAT(error_message([&] { make_noisy_linear_problem(4, 0, 1, gen); }),
             Contains("need 0 < lowest variance <= highest"));
}

TEST_CASE("gradcheck: the noisy linear model's loss", "[lesson04][gradcheck]") {
  Generator gen(16);
  NoisyLinearProblem problem = make_noisy_linear_problem(6, 0.1, 10, gen);
  NoisyBatch batch = draw_noisy_batch(problem, 32, gen, kFloat64);
  Tensor w = randn({6}, gen, kFloat64).requires_grad_();
  GradcheckResult r = gradcheck(
      [&](const std::vector<Tensor>& in) { return noisy_linear_loss(in[0], batch); }, {w});
  INFO(r.report);
  CHECK(r.ok);
  // By hand: dL/dw = 2/B X~^T (X~ w - y).
  Tensor loss = noisy_linear_loss(w, batch);
  w.zero_grad();
  loss.backward();
  NDArray residual = matmul(batch.observed.data(), w.data().reshape({6, 1})) -
                     batch.targets.data().reshape({32, 1});
  check_close(w.grad().data(),
              (matmul(batch.observed.data(), residual, true, false) * (2.0 / 32)).reshape({6}),
              1e-12);
}

TEST_CASE("noisy linear model: SGD finds the shrunken weights", "[lesson04]") {
  Generator gen(0);
  NoisyLinearProblem problem = make_noisy_linear_problem(16, 0.1, 10, gen);
  NoisyTraining training = train_noisy_linear(problem, 1500, 256, 0.01, gen);
  REQUIRE(training.losses.size() == 1500);
  std::vector<double> optimum = optimal_noisy_weights(problem), magnitude, inverse;
  for (std::size_t i = 0; i < optimum.size(); ++i) {
    magnitude.push_back(std::abs(training.weights[i]));
    inverse.push_back(1 / problem.noise_variances[i]);
  }
  CHECK(pearson_correlation(training.weights, optimum) > 0.99);
  CHECK(spearman_correlation(magnitude, inverse) > 0.95);
  CHECK(pearson_correlation(magnitude, inverse) > 0.7);
}

TEST_CASE("Pearson and Spearman correlations", "[lesson04]") {
  CHECK_THAT(pearson_correlation({1, 2, 3}, {2, 4, 6}), WithinAbs(1, 1e-15));
  CHECK_THAT(pearson_correlation({1, 2, 3}, {3, 2, 1}), WithinAbs(-1, 1e-15));
  CHECK_THAT(pearson_correlation({1, 2, 3, 4}, {1, 3, 2, 4}), WithinAbs(0.8, 1e-12));
  // Spearman sees only the order: any increasing function gives 1.
  CHECK_THAT(spearman_correlation({1, 2, 3, 4}, {1, 8, 27, 1000}), WithinAbs(1, 1e-15));
  CHECK(pearson_correlation({1, 2, 3, 4}, {1, 8, 27, 1000}) < 0.9);
  // Ties share their mean rank: ranks (1, 2.5, 2.5, 4) against (1, 2, 3, 4).
  CHECK_THAT(spearman_correlation({1, 5, 5, 9}, {1, 2, 3, 4}),
             WithinAbs(pearson_correlation({1, 2.5, 2.5, 4}, {1, 2, 3, 4}), 1e-15));
  CHECK_THAT(error_message([] {
               pearson_correlation({1, 2}, {1, 2, 3});
             }),
             Contains("same length"));
  CHECK_THAT(error_message([] { pearson_correlation({1, 1}, {1, 2}); }), Contains("constant"));
}

// ---- the figure -------------------------------------------------------------------------------

TEST_CASE("the bag figure: a PNG and the weights beside it", "[lesson04]") {
  ScratchFolder folder("lesson04-figure");
  BagRow row;
  row.title = "test bag 3: positive";
  for (int k = 0; k < 3; ++k) row.instances.push_back(NDArray::full({1, 28, 28}, 0.1 * k));
  row.weights = {0.2, 0.7, 0.1};
  row.positive = {false, true, false};
  const std::string png = (folder / "bags.png").string();
  write_bag_figure(png, {row, row});
  NDArray image = viz::read_image(png);
  CHECK(image.size(1) > 2 * 28 * 2);  // two rows of pictures drawn twice their size
  const std::string text = read_text(folder / "bags.txt");
  CHECK_THAT(text, Contains("# test bag 3: positive\n0.2000:0 0.7000:1 0.1000:0\n"));
  row.weights.pop_back();
  CHECK_THAT(error_message([&] { write_bag_figure(png, {row}); }),
             Contains("has 3 instances, 2 weights and 3 labels"));
}

TEST_CASE("noisy linear model: too large a learning rate stops at the first infinite loss",
          "[lesson04]") {
  Generator gen(0);
  NoisyLinearProblem problem = make_noisy_linear_problem(16, 0.1, 10, gen);
  // The loss is checked before backward() and the step (optim::check_loss_is_finite).
  CHECK_THROWS_WITH(train_noisy_linear(problem, 1500, 256, 10.0, gen),
                    StartsWith("train_noisy_linear (learning rate 10): the loss of step ") &&
                        Contains("; training stopped there"));
}
