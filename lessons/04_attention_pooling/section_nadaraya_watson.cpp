// Section 1 of the program: Nadaraya-Watson kernel regression as attention, with a fixed and
// a learned kernel width, the fits and the weights drawn (nadaraya_watson.cpp computes them).
#include <cmath>
#include <fstream>

#include "program.h"

namespace attend::lesson04 {
namespace {

// The w values of the width table.
const std::vector<double> kWidthTable = {0.5, 1, 2, 4, 8, 16};

// The average over rows of each row's largest weight: 1 for one-hot rows, 1/n for uniform.
double mean_largest_weight(const NDArray& weights) {
  return mean(max(weights.to(kFloat64), 1)).item();
}

// nw_fit.png (the fits), nw_weights.png (the weights as heatmaps: rows are test queries,
// columns training keys) and nw_width.csv (the loss of every step of w).
void draw_fits(app::Transcript& t, const std::string& out, const RegressionData& data,
               const Tensor& average, const KernelRegression& fixed,
               const KernelRegression& learned, const WidthTraining& training) {
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
  const bool fit_drawn = viz::plot_curves(
      out + "/nw_fit.png", {truth, mean_fit, fixed_fit, learned_fit},
      {.title = "Nadaraya-Watson regression", .x_label = "x", .y_label = "f(x)", .y2_label = {}});
  viz::PanelOptions panel;
  panel.heatmap.title =
      "colour: the attention weight of each test query (row) on each training key (column)";
  panel.heatmap.x_label = "training input x_i (sorted)";
  panel.heatmap.y_label = "test query x";
  // No colour-bar label: the title says the colours are weights, and a label beside the
  // left panel's bar would run into the right panel's y label. Panels wide enough for the
  // x tics of 50 columns.
  panel.heatmap.width = 520;
  panel.heatmap.height = 380;
  panel.columns = 2;
  t.say_plot_files(fit_drawn, "nw_fit");
  const bool weights_drawn = viz::plot_heatmap_panel(
      out + "/nw_weights.png",
      {{"kernel, w = 1", fixed.weights.data()},
       {fmt::format("learned w = {:.2f}", training.width), learned.weights.data()}},
      panel);
  std::ofstream csv(out + "/nw_width.csv");
  csv << "step,loss\n";
  for (std::size_t i = 0; i < training.losses.size(); ++i)
    csv << fmt::format("{},{}\n", i, training.losses[i]);
  if (!csv) fail("cannot write {}/nw_width.csv", out);
  t.say_plot_files(weights_drawn, "nw_weights");
  t.say("Wrote the loss of every step to nw_width.csv.\n");
}

}  // namespace

void section_nadaraya_watson(app::Transcript& t, const Options& o) {
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

  draw_fits(t, o.out, data, average, fixed, learned, training);
}

}  // namespace attend::lesson04
