// Lesson 04: attention pooling. Run it and read docs/04_attention_pooling.md next to it:
//
//   ./build/bin/04_attention_pooling               # seed 0, into output/04_attention_pooling
//   ./build/bin/04_attention_pooling --help        # the flags
//
// Three sections, as in the chapter: Nadaraya-Watson kernel regression as attention,
// attention-based multiple-instance pooling on bags of Fashion-MNIST pictures, and a linear
// model whose noisy inputs shrink its weights.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>

#include "lessons/04_attention_pooling/lesson.h"
#include "lessons/common/cli.h"
#include "lessons/common/transcript.h"

using namespace attend;
using namespace attend::lesson04;
using attend::lessons::Transcript;

namespace {

// Every hyper-parameter, each with the flag that changes it.
struct Options {
  std::uint64_t seed = 0;                           // --seed
  std::string out = "output/04_attention_pooling";  // --out
  // (a) Nadaraya-Watson, d2l's setting
  Index train_points = 50;          // --train-points
  double noise = 0.5;               // --noise: standard deviation of the targets' noise
  double initial_width = 1;         // --initial-width: w before training (1 = the fixed kernel)
  int width_steps = 500;            // --width-steps: gradient-descent steps on w
  double width_lr = 5;              // --width-lr
  std::string kernel = "gaussian";  // --kernel: gaussian or laplace (exercise 1)
  bool leave_one_out = true;        // --leave-one-out: train w on held-out points (exercise 2)
  // (b) multiple-instance learning
  bool synthetic = false;                        // --synthetic: generated pictures
  std::string data = data::kFashionMnistFolder;  // --data
  std::string pooling = "all";                   // --pooling: all, or one of them
  Index target_class = 8;                        // --target-class: 8 is "Bag"
  Index train_bags = 2000;                       // --train-bags
  Index test_bags = 1000;                        // --test-bags
  double bag_size = 10;                          // --bag-size: mean instances per bag
  Index max_positives = 3;                       // --max-positives
  int epochs = 5;                                // --epochs
  Index batch_bags = 8;                          // --batch-bags
  double mil_lr = 1e-3;                          // --mil-lr
  Index hidden = 128;                            // --hidden
  Index embedding = 64;                          // --embedding
  Index attention = 32;                          // --attention
  double lse_sharpness = 1;                      // --lse-r
  Index figure_bags = 4;                         // --figure-bags
  // (c) the noisy linear model
  Index features = 16;           // --features
  double lowest_variance = 0.1;  // --lowest-variance
  double highest_variance = 10;  // --highest-variance
  int linear_steps = 3000;       // --linear-steps
  Index linear_batch = 256;      // --linear-batch
  double linear_lr = 0.01;       // --linear-lr
};

// Pictures read for the bags: enough of each class to draw bags from.
constexpr Index kTrainPictures = 20000, kTestPictures = 10000;
// The w values of the width table in section 1.
const std::vector<double> kWidthTable = {0.5, 1, 2, 4, 8, 16};
// Samples of the Monte-Carlo check of the expected loss in section 3.
constexpr Index kMonteCarloSamples = 200000;

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Says which files a plot wrote: the PNG needs gnuplot, the .txt data file is always there.
void report_plot(Transcript& t, bool drawn, const std::string& name) {
  if (drawn)
    t.say("Wrote {0}.png and its data, {0}.txt.\n", name);
  else
    t.say("Wrote {}.txt (no gnuplot: no PNG; apt-get install gnuplot-nox).\n", name);
}

viz::CurveOptions curve_options(const std::string& title, const std::string& x_label,
                                const std::string& y_label) {
  viz::CurveOptions options;
  options.title = title;
  options.x_label = x_label;
  options.y_label = y_label;
  return options;
}

// The average over rows of each row's largest weight: 1 for one-hot rows, 1/n for uniform.
double mean_largest_weight(const NDArray& weights) {
  return mean(max(weights.to(kFloat64), 1)).item();
}

// ---- 1. Nadaraya-Watson --------------------------------------------------------------------

void section_nadaraya_watson(Transcript& t, const Options& o) {
  t.heading("1. Nadaraya-Watson kernel regression is attention");
  const Kernel kernel = parse_kernel(o.kernel);
  Generator gen(o.seed);
  RegressionData data = make_regression_data(o.train_points, o.noise, gen);
  t.say(
      "{} training points x ~ U(0, 5), y = 2 sin(x) + x^0.8 + N(0, {}^2); {} test queries\n"
      "0, 0.1, ..., 4.9, scored by the mean squared error against the noise-free f(x).\n"
      "Kernel: {}.\n",
      o.train_points, o.noise, kTestPoints, kernel_name(kernel));

  Tensor fixed_width = full({}, 1.0);
  Tensor average = average_pooling(data.x_test, data.y_train);
  KernelRegression fixed =
      nadaraya_watson(data.x_test, data.x_train, data.y_train, fixed_width, {}, kernel);
  const double fixed_loo = width_loss(data, fixed_width, kernel).item();

  WidthTraining training =
      learn_width(data, o.initial_width, o.width_steps, o.width_lr, kernel, o.leave_one_out);
  Tensor learned_width = full({}, training.width);
  KernelRegression learned =
      nadaraya_watson(data.x_test, data.x_train, data.y_train, learned_width, {}, kernel);
  const double learned_loo = width_loss(data, learned_width, kernel).item();

  if (o.leave_one_out)
    t.say("\nLearning w by leave-one-out (each training x_i attends to the other {} points):\n",
          o.train_points - 1);
  else
    t.say(
        "\nLearning w WITHOUT leave-one-out (each training x_i attends to all {} points,\n"
        "itself included):\n",
        o.train_points);
  t.say(
      "{} steps of w -= {} * dL/dw from w = {}: loss {:.4f} -> {:.4f}, w = {:.3f} (where\n"
      "dL/dw = {:.1e}), so the kernel's width is 1/w = {:.3f}.\n",
      o.width_steps, o.width_lr, o.initial_width,
      training.losses.empty() ? training.final_loss : training.losses.front(), training.final_loss,
      training.width, training.final_gradient, 1 / std::abs(training.width));

  t.say("\n{:<34} {:>10} {:>16} {:>14}\n", "pooling", "test MSE", "leave-one-out L",
        "largest weight");
  t.say("{:<34} {:>10.4f} {:>16} {:>14.3f}\n", "average pooling (1/n each)",
        mean_squared_error(average, data.y_truth), "-", 1.0 / static_cast<double>(o.train_points));
  t.say("{:<34} {:>10.4f} {:>16.4f} {:>14.3f}\n", "kernel, w = 1",
        mean_squared_error(fixed.predictions, data.y_truth), fixed_loo,
        mean_largest_weight(fixed.weights.data()));
  t.say("{:<34} {:>10.4f} {:>16.4f} {:>14.3f}\n",
        fmt::format("kernel, learned w = {:.2f}", training.width),
        mean_squared_error(learned.predictions, data.y_truth), learned_loo,
        mean_largest_weight(learned.weights.data()));
  t.say("(largest weight: the mean over test queries of the largest attention weight)\n");

  t.say("\nThe leave-one-out loss as a guide to the test error, for a few w:\n");
  t.say("  {:>6} {:>16} {:>10}\n", "w", "leave-one-out L", "test MSE");
  for (double w : kWidthTable) {
    Tensor width = full({}, w);
    KernelRegression fit =
        nadaraya_watson(data.x_test, data.x_train, data.y_train, width, {}, kernel);
    t.say("  {:>6} {:>16.4f} {:>10.4f}\n", w, width_loss(data, width, kernel).item(),
          mean_squared_error(fit.predictions, data.y_truth));
  }

  // The fits, and the weights as heatmaps (rows: test queries, columns: training keys).
  viz::Series truth{"f(x) = 2 sin x + x^0.8"}, mean_fit{"average pooling"},
      fixed_fit{"kernel, w = 1"},
      learned_fit{fmt::format("kernel, learned w = {:.2f}", training.width)};
  for (Index i = 0; i < kTestPoints; ++i) {
    const double x = data.x_test.data().at({i});
    truth.add(x, data.y_truth.data().at({i}));
    mean_fit.add(x, average.data().at({i}));
    fixed_fit.add(x, fixed.predictions.data().at({i}));
    learned_fit.add(x, learned.predictions.data().at({i}));
  }
  t.say("\n");
  const bool fit_drawn =
      viz::plot_curves(o.out + "/nw_fit.png", {truth, mean_fit, fixed_fit, learned_fit},
                       curve_options("Nadaraya-Watson regression", "x", "f(x)"));
  viz::PanelOptions panel;
  panel.heatmap.title = "attention weights: test queries (rows) x training keys (columns)";
  panel.heatmap.x_label = "training input x_i (sorted)";
  panel.heatmap.y_label = "test query x";
  panel.heatmap.value_label = "weight";
  panel.columns = 2;
  report_plot(t, fit_drawn, "nw_fit");
  const bool weights_drawn = viz::plot_heatmap_panel(
      o.out + "/nw_weights.png",
      {{"kernel, w = 1", fixed.weights.data()},
       {fmt::format("learned w = {:.2f}", training.width), learned.weights.data()}},
      panel);
  std::ofstream csv(o.out + "/nw_width.csv");
  csv << "step,loss\n";
  for (std::size_t i = 0; i < training.losses.size(); ++i)
    csv << fmt::format("{},{}\n", i, training.losses[i]);
  if (!csv) fail("cannot write {}/nw_width.csv", o.out);
  report_plot(t, weights_drawn, "nw_weights");
  t.say("Wrote the loss of every step to nw_width.csv.\n");
}

// ---- 2. Multiple-instance learning ---------------------------------------------------------

struct Pictures {
  data::LabelledImages train, test;
  std::string source;
};

Pictures load_pictures(Transcript& t, const Options& o) {
  const bool real = !o.synthetic && data::fashion_mnist_available(data::Split::kTrain, o.data) &&
                    data::fashion_mnist_available(data::Split::kTest, o.data);
  if (!o.synthetic && !real)
    t.say(
        "Fashion-MNIST is not in {} (apt-get install dataset-fashion-mnist): using the\n"
        "generated stand-in, as --synthetic would.\n",
        o.data);
  Pictures p;
  if (real) {
    p.train = data::load_fashion_mnist(data::Split::kTrain, o.data, kTrainPictures);
    p.test = data::load_fashion_mnist(data::Split::kTest, o.data, kTestPictures);
    p.source = "Fashion-MNIST";
  } else {
    p.train = data::synthetic_fashion_mnist(data::Split::kTrain, kTrainPictures / 10, o.seed);
    p.test = data::synthetic_fashion_mnist(data::Split::kTest, kTestPictures / 10, o.seed);
    p.source = "the generated stand-in (--synthetic)";
  }
  return p;
}

std::vector<Pooling> poolings_to_train(const Options& o) {
  if (o.pooling == "all")
    return {Pooling::kMean, Pooling::kMax, Pooling::kLogSumExp, Pooling::kAttention,
            Pooling::kGatedAttention};
  return {parse_pooling(o.pooling)};
}

// The first `count` positive test bags, with the model's weights, for the figure.
std::vector<BagRow> figure_rows(MilModel& model, const Bags& test, Index count) {
  std::vector<Index> chosen;
  for (Index b = 0; b < test.size() && static_cast<Index>(chosen.size()) < count; ++b)
    if (test.labels.at({b}) > 0.5) chosen.push_back(b);
  if (chosen.empty()) return {};
  Bags bags = select_bags(test, chosen);
  MilModel::Output out = predict(model, bags);
  std::vector<BagRow> rows;
  for (Index b = 0; b < bags.size(); ++b) {
    BagRow row;
    const double probability = 1 / (1 + std::exp(-out.logits.data().at({b})));
    row.title =
        fmt::format("{} pooling, test bag {}: positive, p(positive) = {:.2f}",
                    pooling_name(model.pooling), chosen[static_cast<std::size_t>(b)], probability);
    for (Index k = 0; k < bags.length(); ++k) {
      if (bags.mask.at({b, k}) == 0) continue;
      row.instances.push_back(slice(slice(bags.images, 0, b, b + 1), 1, k, k + 1));
      row.weights.push_back(out.instance_weights.data().at({b, k}));
      row.positive.push_back(bags.instance_labels.at({b, k}) > 0.5);
    }
    rows.push_back(row);
  }
  return rows;
}

void section_mil(Transcript& t, const Options& o) {
  t.heading("2. Attention pooling over bags of pictures (multiple-instance learning)");
  Pictures pictures = load_pictures(t, o);
  const auto& names = pictures.train.class_names;
  Generator gen(o.seed);
  BagOptions bag_options{.count = o.train_bags,
                         .mean_size = o.bag_size,
                         .target_class = o.target_class,
                         .max_positives = o.max_positives};
  Bags train = make_bags(pictures.train, bag_options, gen);
  bag_options.count = o.test_bags;
  Bags test = make_bags(pictures.test, bag_options, gen);
  double instances = 0;
  for (Index i = 0; i < train.mask.numel(); ++i) instances += train.mask.data<float>()[i];
  t.say(
      "Pictures: {}. A bag is positive iff it holds a '{}' (class {}); half of the bags\n"
      "are, each with {} of them. {} training bags (from the training split, {:.1f}\n"
      "instances per bag on average, the longest {}), {} test bags (from the test split).\n",
      pictures.source, names[static_cast<std::size_t>(o.target_class)], o.target_class,
      o.max_positives == 1 ? "exactly 1" : fmt::format("1 to {}", o.max_positives), o.train_bags,
      instances / static_cast<double>(o.train_bags), train.length(), o.test_bags);

  MilSizes sizes{.hidden = o.hidden,
                 .embedding = o.embedding,
                 .attention = o.attention,
                 .lse_sharpness = o.lse_sharpness};
  MilTraining training{
      .epochs = o.epochs, .batch_bags = o.batch_bags, .lr = o.mil_lr, .seed = o.seed};
  t.say(
      "Each pooling gets the same encoder (784 -> {} -> {}, ReLU), the same initial encoder\n"
      "weights, the same bags in the same order: {} epochs of Adam (lr {}, weight decay {}),\n"
      "{} bags per step.\n\n",
      o.hidden, o.embedding, o.epochs, o.mil_lr, training.weight_decay, o.batch_bags);

  std::vector<viz::Series> curves;
  std::vector<std::string> rows;
  double accuracy_sum = 0;
  for (Pooling pooling : poolings_to_train(o)) {
    Generator init(o.seed + 1);  // the same initial weights for every pooling
    MilModel model(pooling, sizes, init);
    const auto start = std::chrono::steady_clock::now();
    std::fputs(fmt::format("training {} pooling\n", pooling_name(pooling)).c_str(), stderr);
    std::vector<double> losses = train_mil(model, train, training);
    const double seconds = seconds_since(start);
    MilScores scores = score_mil(model, test);
    accuracy_sum += scores.accuracy;
    viz::Series curve{pooling_name(pooling)};
    for (std::size_t e = 0; e < losses.size(); ++e)
      curve.add(static_cast<double>(e + 1), losses[e]);
    curves.push_back(curve);
    rows.push_back(fmt::format("{:<10} {:>10} {:>12.4f} {:>12.1f}% {:>14.1f}% {:>9.1f}% {:>7.1f}\n",
                               pooling_name(pooling), model.parameter_count(), losses.back(),
                               100 * scores.accuracy, 100 * scores.localisation,
                               100 * scores.chance, seconds));
    write_bag_figure(o.out + "/mil_bags_" + pooling_name(pooling) + ".png",
                     figure_rows(model, test, o.figure_bags));
  }
  t.say("{:<10} {:>10} {:>12} {:>13} {:>15} {:>10} {:>7}\n", "pooling", "parameters", "train loss",
        "bag accuracy", "localisation", "chance", "seconds");
  for (const std::string& row : rows) t.say("{}", row);
  t.say(
      "(train loss: the mean binary cross-entropy of the last epoch. localisation: the share\n"
      "of positive test bags whose most heavily weighted instance is a '{}'; chance: the\n"
      "same for a pick at random, which is what mean pooling's equal weights give.)\n",
      names[static_cast<std::size_t>(o.target_class)]);
  const double p = accuracy_sum / static_cast<double>(rows.size());
  t.say(
      "On {} test bags an accuracy near {:.1f}% has a standard error of {:.1f}% (sqrt(p(1-p)/n)):\n"
      "smaller gaps between the poolings are noise.\n",
      o.test_bags, 100 * p, 100 * std::sqrt(p * (1 - p) / static_cast<double>(o.test_bags)));
  const bool drawn = viz::plot_curves(
      o.out + "/mil_loss.png", curves,
      curve_options("bag classifiers: training loss", "epoch", "binary cross-entropy"));
  report_plot(t, drawn, "mil_loss");
  t.say(
      "Wrote mil_bags_<pooling>.png: {} positive test bags, each instance's weight under it\n"
      "(green: a '{}', red: another class), the weights also in mil_bags_<pooling>.txt.\n",
      o.figure_bags, names[static_cast<std::size_t>(o.target_class)]);
}

// ---- 3. Noise in the inputs shrinks the weights --------------------------------------------

void section_noisy_linear(Transcript& t, const Options& o) {
  t.heading("3. Noisy inputs shrink the weights: y = w . (x + eps)");
  Generator gen(o.seed);
  NoisyLinearProblem problem =
      make_noisy_linear_problem(o.features, o.lowest_variance, o.highest_variance, gen);
  std::vector<double> optimum = optimal_noisy_weights(problem);
  NoisyTraining training =
      train_noisy_linear(problem, o.linear_steps, o.linear_batch, o.linear_lr, gen);
  t.say(
      "{} features x_i ~ N(0, 1), y = w_true . x with w_true_i = +-1; the model sees\n"
      "x_i + eps_i, eps_i ~ N(0, s_i^2), s_i^2 from {} to {}. SGD from w = 0: {} steps of\n"
      "{} fresh samples (fresh noise every step), lr {}.\n\n",
      o.features, o.lowest_variance, o.highest_variance, o.linear_steps, o.linear_batch,
      o.linear_lr);
  t.say("  {:>3} {:>8} {:>7} {:>16} {:>10}\n", "i", "s_i^2", "w_true", "w* = w/(1+s^2)", "learned");
  std::vector<double> magnitude, inverse_variance, shrink;
  double largest_gap = 0;
  for (std::size_t i = 0; i < optimum.size(); ++i) {
    t.say("  {:>3} {:>8.3f} {:>7} {:>16.4f} {:>10.4f}\n", i, problem.noise_variances[i],
          problem.true_weights[i], optimum[i], training.weights[i]);
    magnitude.push_back(std::abs(training.weights[i]));
    inverse_variance.push_back(1 / problem.noise_variances[i]);
    shrink.push_back(1 / (1 + problem.noise_variances[i]));
    largest_gap = std::max(largest_gap, std::abs(training.weights[i] - optimum[i]));
  }
  t.say("\ncorrelation of the learned w_i with the closed-form w*_i:    {:.4f}\n",
        pearson_correlation(training.weights, optimum));
  t.say("largest |learned - w*|:                                      {:.4f}\n", largest_gap);
  t.say("correlation of |w_i| with 1/s_i^2 (Pearson):                 {:.4f}\n",
        pearson_correlation(magnitude, inverse_variance));
  t.say("rank correlation of |w_i| with 1/s_i^2 (Spearman):           {:.4f}\n",
        spearman_correlation(magnitude, inverse_variance));
  t.say("correlation of |w_i| with the shrink factor 1/(1 + s_i^2):   {:.4f}\n",
        pearson_correlation(magnitude, shrink));

  ExpectedLoss expected = expected_noisy_loss(problem, training.weights);
  Generator check_gen(o.seed + 2);
  NoisyBatch big = draw_noisy_batch(problem, kMonteCarloSamples, check_gen, kFloat64);
  Tensor w(NDArray::from_vector(training.weights, Shape{o.features}).to(kFloat64));
  double measured = 0;
  {
    NoGradGuard no_graph;
    measured = noisy_linear_loss(w, big).item();
  }
  t.say(
      "\nThe loss of the learned w: |w - w_true|^2 = {:.4f} plus sum_i w_i^2 s_i^2 = {:.4f}\n"
      "gives {:.4f}; measured on {} fresh noisy samples: {:.4f}. At w = w_true the\n"
      "ridge term alone would be sum_i s_i^2 = {:.4f}; at w* the total is {:.4f}.\n",
      expected.clean, expected.ridge, expected.total(), kMonteCarloSamples, measured,
      expected_noisy_loss(problem, problem.true_weights).total(),
      expected_noisy_loss(problem, optimum).total());

  viz::Series learned{"|learned w_i|"}, closed{"|w*_i| = 1 / (1 + s_i^2)"};
  for (std::size_t i = 0; i < optimum.size(); ++i) {
    learned.add(problem.noise_variances[i], magnitude[i]);
    closed.add(problem.noise_variances[i], std::abs(optimum[i]));
  }
  const bool drawn = viz::plot_curves(
      o.out + "/noisy_linear.png", {closed, learned},
      curve_options("noisier features get smaller weights", "s_i^2 (noise variance)", "|w_i|"));
  report_plot(t, drawn, "noisy_linear");
}

void check_options(const Options& o) {
  if (o.train_points < 2) fail("--train-points must be at least 2, got {}", o.train_points);
  if (!(o.noise >= 0)) fail("--noise must be >= 0, got {}", o.noise);
  if (o.width_steps < 0) fail("--width-steps must be >= 0, got {}", o.width_steps);
  if (!(o.width_lr > 0)) fail("--width-lr must be positive, got {}", o.width_lr);
  parse_kernel(o.kernel);
  if (o.train_bags < 2 || o.test_bags < 2)
    fail("--train-bags and --test-bags must be at least 2, got {} and {}", o.train_bags,
         o.test_bags);
  if (o.epochs < 1) fail("--epochs must be at least 1, got {}", o.epochs);
  if (o.batch_bags < 1) fail("--batch-bags must be at least 1, got {}", o.batch_bags);
  if (!(o.mil_lr > 0)) fail("--mil-lr must be positive, got {}", o.mil_lr);
  if (o.hidden < 1 || o.embedding < 1 || o.attention < 1)
    fail("--hidden, --embedding and --attention must be at least 1");
  if (!(o.bag_size >= 1)) fail("--bag-size must be at least 1, got {}", o.bag_size);
  if (o.max_positives < 1) fail("--max-positives must be at least 1, got {}", o.max_positives);
  const Index classes = static_cast<Index>(data::fashion_mnist_class_names().size());
  if (o.target_class < 0 || o.target_class >= classes)
    fail("--target-class must be in 0..{}, got {}", classes - 1, o.target_class);
  if (o.figure_bags < 1) fail("--figure-bags must be at least 1, got {}", o.figure_bags);
  if (o.pooling != "all") parse_pooling(o.pooling);
  if (o.linear_steps < 1 || o.linear_batch < 1)
    fail("--linear-steps and --linear-batch must be at least 1");
  if (!(o.linear_lr > 0)) fail("--linear-lr must be positive, got {}", o.linear_lr);
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  lessons::CommandLine cli(
      "04_attention_pooling",
      "Lesson 04: Nadaraya-Watson kernel regression as attention, attention-based "
      "multiple-instance pooling on bags of Fashion-MNIST pictures, and noisy inputs that "
      "shrink a linear model's weights (docs/04_attention_pooling.md).");
  cli.add("seed", o.seed, "seed of the data, the initial weights and the bag order");
  cli.add("out", o.out, "folder for summary.txt, plots and CSV files");
  cli.add("train-points", o.train_points, "Nadaraya-Watson: training points");
  cli.add("noise", o.noise, "Nadaraya-Watson: standard deviation of the targets' noise");
  cli.add("initial-width", o.initial_width, "Nadaraya-Watson: w before learning");
  cli.add("width-steps", o.width_steps, "Nadaraya-Watson: gradient-descent steps on w");
  cli.add("width-lr", o.width_lr, "Nadaraya-Watson: learning rate of w");
  cli.add("kernel", o.kernel, "Nadaraya-Watson: gaussian or laplace");
  cli.add("leave-one-out", o.leave_one_out,
          "Nadaraya-Watson: learn w by predicting each point from the others");
  cli.add("synthetic", o.synthetic, "MIL: use generated pictures instead of Fashion-MNIST");
  cli.add("data", o.data, "MIL: the Fashion-MNIST folder");
  cli.add("pooling", o.pooling, "MIL: all, or one of mean, max, logsumexp, attention, gated");
  cli.add("target-class", o.target_class, "MIL: the class that makes a bag positive");
  cli.add("train-bags", o.train_bags, "MIL: training bags");
  cli.add("test-bags", o.test_bags, "MIL: test bags");
  cli.add("bag-size", o.bag_size, "MIL: mean number of instances per bag");
  cli.add("max-positives", o.max_positives, "MIL: most target instances in a positive bag");
  cli.add("epochs", o.epochs, "MIL: passes over the training bags");
  cli.add("batch-bags", o.batch_bags, "MIL: bags per Adam step");
  cli.add("mil-lr", o.mil_lr, "MIL: Adam's learning rate");
  cli.add("hidden", o.hidden, "MIL: the encoder's hidden units");
  cli.add("embedding", o.embedding, "MIL: size M of an instance embedding");
  cli.add("attention", o.attention, "MIL: size L of the attention MLP");
  cli.add("lse-r", o.lse_sharpness, "MIL: sharpness r of log-sum-exp pooling");
  cli.add("figure-bags", o.figure_bags, "MIL: positive test bags drawn in the figures");
  cli.add("features", o.features, "noisy linear model: number of features");
  cli.add("lowest-variance", o.lowest_variance, "noisy linear model: smallest s_i^2");
  cli.add("highest-variance", o.highest_variance, "noisy linear model: largest s_i^2");
  cli.add("linear-steps", o.linear_steps, "noisy linear model: SGD steps");
  cli.add("linear-batch", o.linear_batch, "noisy linear model: samples per step");
  cli.add("linear-lr", o.linear_lr, "noisy linear model: SGD learning rate");
  cli.parse(argc, argv);

  return lessons::run_lesson([&] {
    check_options(o);
    lessons::make_output_folder(o.out);
    const auto start = std::chrono::steady_clock::now();
    Transcript t;
    t.say("Lesson 04: attention pooling (seed {}, outputs in {})\n", o.seed, o.out);
    section_nadaraya_watson(t, o);
    section_mil(t, o);
    section_noisy_linear(t, o);
    t.say("\nDone in {:.0f} s. Wrote {}/summary.txt.\n", seconds_since(start), o.out);
    t.save(o.out + "/summary.txt");
    return 0;
  });
}
