// Lesson 02: automatic differentiation. Run it and read docs/02_autograd.md next to it:
//
//   ./build/bin/02_autograd                # seed 0, into output/02_autograd
//   ./build/bin/02_autograd --help         # the flags
//
// The sections follow the chapter: one neuron by hand and by backward(), gradients adding
// up, a tiny MLP trained by gradient descent, gradcheck, and a wrong backward caught.
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <fstream>

#include "attend.h"
#include "lesson.h"

using namespace attend;
using namespace attend::lesson02;
using attend::app::Transcript;

namespace {

// Every hyper-parameter, each with the flag that changes it.
struct Options : app::Flags {
  std::uint64_t seed = flag(seed, "seed", 0, "seed of the MLP's initial weights");
  int steps = flag(steps, "steps", 60, "gradient-descent steps of the MLP", app::at_least(1));
  double lr = flag(lr, "lr", 0.2, "learning rate of the MLP", app::above(0.0));
  Index hidden =
      flag(hidden, "hidden", 8, "tanh units in the MLP's hidden layer", app::at_least<Index>(1));
  double bias = flag(bias, "bias", NeuronValues{}.b, "the neuron's b (try 0: a saturated tanh)");
  std::string out =
      flag(out, "out", "output/02_autograd", "folder for summary.txt, the graphs and loss.csv");
};

// How many loss lines section 3 prints while training (loss.csv has every step).
constexpr int kLossLines = 10;

// Writes the graph behind `root` as <out>/<name>.dot and, when Graphviz is installed, .png.
void draw(Transcript& t, const Tensor& root, const std::string& out, const std::string& name) {
  const std::string dot = out + "/" + name + ".dot", png = out + "/" + name + ".png";
  write_dot(root, dot);
  if (render_dot_to_png(dot, png))
    t.say("Wrote the graph to {} and {}.\n", dot, png);
  else
    t.say(
        "Wrote the graph to {}. Graphviz (`dot`) is not installed, so there is no PNG:\n"
        "paste the file into an online DOT viewer, or apt-get install graphviz.\n",
        dot);
}

void section_neuron(Transcript& t, const Options& o) {
  t.heading("1. One neuron: o = tanh(x1*w1 + x2*w2 + b)");
  NeuronValues values;
  values.b = o.bias;
  Neuron nr = build_neuron(values);
  t.say("x1 = {}, x2 = {}, w1 = {}, w2 = {}, b = {:.10f}\n", values.x1, values.x2, values.w1,
        values.w2, values.b);
  t.say("forward: n = x1*w1 + x2*w2 + b = {:.10f}, o = tanh(n) = {:.10f}\n", nr.n.item(),
        nr.o.item());

  // Only leaves keep their gradient; retain_grad() asks backward() to keep n's too.
  nr.n.retain_grad();
  {
    // Under this guard backward() records every node's gradient norm (and stops at the
    // first NaN or infinity), so the drawing can show |grad| on every box, not only leaves.
    DetectAnomalyGuard record_every_gradient;
    nr.o.backward();
  }
  NeuronGradients hand = neuron_gradients_by_hand(values);
  t.say("\n{:<4} {:>14} {:>14} {:>14}   {}\n", "", "value", "backward()", "by hand", "rule");
  auto row = [&](const char* name, const Tensor& x, double by_hand, const char* rule) {
    t.say("{:<4} {:>14.10f} {:>14.10f} {:>14.10f}   {}\n", name, x.item(), x.grad().item(), by_hand,
          rule);
  };
  row("n", nr.n, hand.n, "do/dn = 1 - o^2 (n.retain_grad() kept it)");
  row("b", nr.b, hand.b, "do/db = do/dn * 1");
  row("x1", nr.x1, hand.x1, "do/dx1 = do/dn * w1");
  row("w1", nr.w1, hand.w1, "do/dw1 = do/dn * x1");
  row("x2", nr.x2, hand.x2, "do/dx2 = do/dn * w2");
  row("w2", nr.w2, hand.w2, "do/dw2 = do/dn * x2");
  t.say("x1*w1 was not retained: x1w1.grad().defined() = {} (backward used it, then dropped it)\n",
        nr.x1w1.grad().defined());
  draw(t, nr.o, o.out, "neuron");
}

void section_accumulation(Transcript& t) {
  t.heading("2. Gradients add up");
  Accumulation acc = accumulation_demo();
  t.say("a = 3; b = a + a; c = b + b; c.backward():        a.grad = {}  (dc/db = 2, db/da = 2)\n",
        acc.first);
  t.say("a second backward() through a fresh c:           a.grad = {}  (added, not replaced)\n",
        acc.second);
  t.say("a.zero_grad(): a.grad().defined() = {}; one more backward(): a.grad = {}\n",
        acc.defined_after_zero, acc.after_zero);
  t.say("That is why every training step starts with zero_grad() (mlp.cpp, sgd_step).\n");
}

// loss.csv: the loss before each step's update, then the loss after the last update.
void write_loss_csv(const std::vector<double>& losses, double final_loss, const std::string& path) {
  std::ofstream csv(path);
  csv << "step,loss\n";
  for (std::size_t step = 0; step < losses.size(); ++step)
    csv << fmt::format("{},{}\n", step, losses[step]);
  csv << fmt::format("{},{}\n", losses.size(), final_loss);
  if (!csv) fail("cannot write {}", path);
}

void section_mlp(Transcript& t, const Options& o) {
  t.heading("3. A tiny MLP learns XOR");
  Generator gen(o.seed);
  Mlp mlp = init_mlp(o.hidden, gen);
  Dataset data = xor_dataset();
  Index parameters = 0;
  for (const Tensor& p : mlp.parameters()) parameters += p.numel();
  t.say(
      "prediction = tanh(x @ w1 + b1) @ w2 + b2: 2 -> {} -> 1, {} parameters, loss = mean\n"
      "squared error on the 4 XOR points, {} steps of p -= {} * dL/dp.\n",
      o.hidden, parameters, o.steps, o.lr);

  std::vector<double> losses = train_mlp(mlp, data, o.steps, o.lr);
  const int every = std::max(1, o.steps / kLossLines);
  for (int step = 0; step < o.steps; ++step)
    if (step % every == 0 || step == o.steps - 1)
      t.say("  step {:3d}  loss {:.4g}\n", step, losses[step]);
  const double final_loss = evaluate_loss(mlp, data);
  t.say("first loss {:.4g}, loss after the last update {:.4g}\n", losses.front(), final_loss);
  {
    NoGradGuard no_graph;
    t.say("predictions [{:.3f}] for targets [{}]\n",
          fmt::join(mlp_forward(mlp, data.x).data().to_vector(), ", "),
          fmt::join(data.y.data().to_vector(), ", "));
  }
  write_loss_csv(losses, final_loss, o.out + "/loss.csv");
  t.say("Wrote the loss of every step to {}/loss.csv.\n", o.out);

  // One more forward and backward, only to draw the graph with its gradient norms (from
  // zero: the parameters still hold the last step's gradients).
  for (Tensor p : mlp.parameters()) p.zero_grad();
  Tensor loss = mse_loss(mlp_forward(mlp, data.x), data.y);
  {
    DetectAnomalyGuard record_every_gradient;
    loss.backward();
  }
  draw(t, loss, o.out, "mlp");
}

void section_gradcheck(Transcript& t, const Options& o) {
  t.heading("4. gradcheck: backward() against finite differences");
  t.say("neuron:  {}\n", gradcheck_neuron().report);
  t.say("MLP:     {}\n", gradcheck_mlp(o.hidden, o.seed).report);
  t.say("\nIn float32 gradcheck refuses to run:\n  {}\n", gradcheck_float32_message());
  t.say("\nWhy: the error of (tanh(x+eps) - tanh(x-eps)) / (2 eps) at x = 0.5, by dtype:\n");
  t.say("  {:>8} {:>12} {:>12}\n", "eps", "float32", "float64");
  double best32 = INFINITY, best64 = INFINITY;
  for (double eps : {1e-1, 1e-2, 1e-3, 1e-4, 1e-6, 1e-8}) {
    const double e32 = central_difference_error(0.5, eps, kFloat32);
    const double e64 = central_difference_error(0.5, eps, kFloat64);
    t.say("  {:>8.0e} {:>12.2e} {:>12.2e}\n", eps, e32, e64);
    best32 = std::min(best32, e32);
    best64 = std::min(best64, e64);
  }
  t.say(
      "Large eps: the formula's own error, about eps^2. Small eps: rounding, about\n"
      "(unit roundoff) / eps. The best float32 can do is {:.1e}; float64 gets to {:.1e}.\n",
      best32, best64);
}

void section_custom_op(Transcript& t, const Options& o) {
  t.heading("5. A wrong backward, caught");
  t.say(
      "sigmoid y = 1/(1+e^-x) has dy/dx = y (1 - y). A custom op whose backward returns\n"
      "g * y (the (1 - y) forgotten) runs without any error. gradcheck says:\n");
  t.say("{}\n", gradcheck_unary(sigmoid_forgetting_one_minus_y, o.seed).report);
  t.say("\nWith the backward fixed to g * y * (1 - y):\n{}\n",
        gradcheck_unary(sigmoid_custom, o.seed).report);
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  o.parse(argc, argv, "02_autograd",
          "Lesson 02: a neuron's gradients by hand and by backward(), a tiny MLP trained on XOR, "
          "gradcheck, and a wrong backward caught (docs/02_autograd.md).");
  return app::run_program([&] {
    app::make_output_folder(o.out);
    Transcript t;
    t.say("Lesson 02: autograd (seed {}, {} steps, lr {}, hidden {}, outputs in {})\n", o.seed,
          o.steps, o.lr, o.hidden, o.out);
    section_neuron(t, o);
    section_accumulation(t);
    section_mlp(t, o);
    section_gradcheck(t, o);
    section_custom_op(t, o);
    t.say("\nWrote {0}/summary.txt, {0}/neuron.dot, {0}/mlp.dot and {0}/loss.csv\n", o.out);
    t.save(o.out + "/summary.txt");
    return 0;
  });
}
