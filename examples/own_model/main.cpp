// own_model: a program of your own on attend, outside the course (docs/your_own_model.md).
//
//   ./own_model                 # seed 0, outputs into output/own_model
//   ./own_model --help          # the flags
//
// The task: a set of N elements, each gray, red or blue and carrying a value v in [-1, 1];
// exactly one is red and one is blue. Predict v(red) - v(blue). Averaging the set cannot
// do it (the gray values are noise); two learned queries that find the red and the blue
// element can. The program
//   1. checks QueryPooling's gradients against finite differences (float64 gradcheck),
//   2. trains a QueryPooling regressor with Adam on generated sets,
//   3. measures where each query looks, and
//   4. draws the attention weights of one set into <out>/attention.png.
#include <algorithm>
#include <vector>

#include "attend.h"
#include "query_pooling.h"

using namespace attend;
using own_model::QueryPooling;

namespace {

constexpr const char* kDescription =
    "Trains attention pooling with learned queries to compute v(red) - v(blue) over sets.";

struct Options : app::Flags {
  std::uint64_t seed = flag(seed, "seed", 0, "random seed (data and initial weights)");
  int steps = flag(steps, "steps", 2000, "Adam steps", app::at_least(1));
  Index batch = flag(batch, "batch", 32, "sets per step", app::at_least(Index{1}));
  Index set_size = flag(set_size, "set-size", 8, "elements per set", app::at_least(Index{2}));
  Index queries = flag(queries, "queries", 2, "learned queries", app::at_least(Index{1}));
  double lr = flag(lr, "lr", 1e-2, "Adam's learning rate", app::above(0.0));
  std::string out = flag(out, "out", "output/own_model", "folder for the outputs");
};

// Features of one element: [is red, is blue, is gray, v].
constexpr Index kFeatures = 4;
enum Colour { kRed = 0, kBlue = 1, kGray = 2 };

struct Batch {
  Tensor sets;                              // [B, N, 4]
  Tensor targets;                           // [B]: v(red) - v(blue)
  std::vector<std::vector<Colour>> colour;  // colour[b][i]
};

Batch make_batch(Index sets, Index size, Generator& gen) {
  Batch batch;
  std::vector<float> x(sets * size * kFeatures), y(sets);
  for (Index b = 0; b < sets; ++b) {
    std::vector<Colour> colour(size, kGray);
    Index red = gen.randint(size), blue = (red + 1 + gen.randint(size - 1)) % size;
    colour[red] = kRed;
    colour[blue] = kBlue;
    for (Index i = 0; i < size; ++i) {
      float* element = &x[(b * size + i) * kFeatures];
      element[colour[i]] = 1;
      element[3] = static_cast<float>(gen.uniform(-1, 1));
    }
    y[b] = x[(b * size + red) * kFeatures + 3] - x[(b * size + blue) * kFeatures + 3];
    batch.colour.push_back(colour);
  }
  batch.sets = Tensor(NDArray::from_vector(x, {sets, size, kFeatures}));
  batch.targets = Tensor(NDArray::from_vector(y, {sets}));
  return batch;
}

// The queries pool the set, a linear layer reads the pooled vectors side by side.
struct SetRegressor : nn::Module {
  static constexpr Index kKeySize = 8, kValueSize = 8;
  QueryPooling pool;
  nn::Linear head;
  SetRegressor(Index queries, Generator& gen)
      : pool(kFeatures, queries, kKeySize, kValueSize, gen),
        head(queries * kValueSize, 1, /*bias=*/true, gen) {
    register_module("pool", pool);
    register_module("head", head);
  }
  // -> the predictions [B] and the attention weights [B, Q, N].
  std::pair<Tensor, Tensor> forward(const Tensor& sets) {
    own_model::Pooled pooled = pool.forward(sets);
    Tensor side_by_side = reshape(pooled.context, {sets.size(0), -1});
    return {reshape(head(side_by_side), {-1}), pooled.weights};
  }
};

// 1. Does backward() give QueryPooling's true gradient? In float64, every parameter and
// every input element against central differences.
bool check_gradients(app::Transcript& t, Generator& gen) {
  QueryPooling pool(kFeatures, 2, 3, 3, gen);
  pool.to(kFloat64);
  Tensor set = randn({2, 5, kFeatures}, gen, kFloat64).requires_grad_();
  std::vector<Tensor> inputs = pool.parameters();
  inputs.push_back(set);
  GradcheckResult result =
      gradcheck([&](const std::vector<Tensor>&) { return pool.forward(set).context; }, inputs);
  t.say("gradcheck QueryPooling: {} ({} elements, largest relative error {:.1e})\n",
        result.ok ? "passed" : "FAILED", result.elements_checked, result.max_rel_error);
  if (!result) t.say("{}\n", result.report);
  return result.ok;
}

// 2. Adam on fresh sets every step; the test sets are never trained on.
void train(app::Transcript& t, SetRegressor& model, const Options& o, const Batch& test,
           Generator& gen) {
  optim::Adam adam(model.parameters(), {.lr = o.lr});
  auto test_loss = [&] {
    NoGradGuard no_grad;
    return nn::mse_loss(model.forward(test.sets).first, test.targets).item();
  };
  t.say("predicting 0 for every set: test MSE {:.4f}\n",
        nn::mse_loss(zeros({test.targets.numel()}), test.targets).item());
  t.say("{:>6}  {:>10}  {:>9}\n", "step", "train MSE", "test MSE");
  // The library's loop (optim::fit): each step the loss of fresh sets, backward(), Adam's step;
  // after some steps, a line with the test loss.
  auto loss_of_step = [&](Index) {
    Batch batch = make_batch(o.batch, o.set_size, gen);
    return nn::mse_loss(model.forward(batch.sets).first, batch.targets);
  };
  auto report = [&](Index step, double loss) {
    if (step == 1 || step % std::max<Index>(o.steps / 5, 1) == 0 || step == o.steps)
      t.say("{:>6}  {:>10.4f}  {:>9.4f}\n", step, loss, test_loss());
  };
  const optim::FitResult fitted = optim::fit(adam, {.steps = o.steps}, loss_of_step, report);
  t.say("trained {} parameters in {:.1f} s\n", model.parameter_count(), fitted.seconds);
}

// 3. The share of each query's attention that goes to the red, the blue and the gray elements,
// averaged over the test sets.
void where_queries_look(app::Transcript& t, const Tensor& weights, const Batch& test) {
  const NDArray& a = weights.data();
  t.say("{:>8}  {:>5}  {:>5}  {:>5}\n", "", "red", "blue", "gray");
  for (Index q = 0; q < a.size(1); ++q) {
    double share[3] = {0, 0, 0};
    for (Index b = 0; b < a.size(0); ++b)
      for (Index i = 0; i < a.size(2); ++i) share[test.colour[b][i]] += a.at({b, q, i});
    t.say("query {}:  {:.3f}  {:.3f}  {:.3f}\n", q + 1, share[kRed] / a.size(0),
          share[kBlue] / a.size(0), share[kGray] / a.size(0));
  }
}

// 4. The weights of the first test set: one row per query, one column per element.
void plot_first_set(app::Transcript& t, const Tensor& weights, const Batch& test,
                    const std::string& out) {
  std::vector<std::string> queries, elements;
  for (Index q = 0; q < weights.size(1); ++q) queries.push_back(fmt::format("query {}", q + 1));
  const NDArray& features = test.sets.data();
  for (Index i = 0; i < features.size(1); ++i) {
    const char* name[] = {"red", "blue", "gray"};
    elements.push_back(fmt::format("{} {:+.2f}", name[test.colour[0][i]], features.at({0, i, 3})));
  }
  viz::HeatmapOptions options{.title = "where each query looks (first test set)",
                              .x_label = "elements of the set (colour, value)",
                              .y_label = "learned queries",
                              .value_label = "attention weight",
                              .row_labels = queries,
                              .column_labels = elements,
                              .min_value = 0,
                              .max_value = 1,  // the same colours in every run
                              .show_values = true,
                              .value_digits = 2};
  NDArray first = slice(weights.data(), 0, 0, 1).reshape({weights.size(1), weights.size(2)});
  bool drawn = viz::plot_heatmap(out + "/attention.png", first, options);
  t.say("{}: {}\n", out + "/attention.png", drawn ? "drawn" : "not drawn (no gnuplot)");
}

int run(const Options& o) {
  app::make_output_folder(o.out);
  app::Transcript t;
  Generator gen(o.seed);

  t.heading("1. gradcheck");
  if (!check_gradients(t, gen)) return 1;

  t.heading("2. training");
  Batch test = make_batch(1000, o.set_size, gen);
  SetRegressor model(o.queries, gen);
  train(t, model, o, test, gen);

  t.heading("3. where the queries look");
  NoGradGuard no_grad;
  Tensor weights = model.forward(test.sets).second;
  where_queries_look(t, weights, test);

  t.heading("4. the attention of one set");
  plot_first_set(t, weights, test, o.out);
  t.save(o.out + "/summary.txt");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  options.parse(argc, argv, "own_model", kDescription);
  return app::run_program([&] { return run(options); });
}
