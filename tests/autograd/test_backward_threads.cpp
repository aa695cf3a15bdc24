// backward() in two threads at once, each on its own graph. Its topological sort marks the
// nodes it visits with a number from a counter shared by all passes; while that counter
// was a plain `static`, two threads incremented it in a data race. A lost increment can
// give a pass the number its graph's nodes already carry from the previous pass: the nodes
// look visited, are left out of the order, and the leaves get no gradient. That needs a
// thread to be preempted between reading and writing the counter, so a run of this test
// against the old counter fails only now and then; ThreadSanitizer reports the race on
// every run (see autograd/backward.cpp).
#include <thread>

#include "support.h"

using namespace attend;

namespace {

// A small recurrent chain with weights of its own: h <- tanh(h * w + b), 20 steps.
struct Graph {
  Tensor w, b, loss;
};

Graph make_graph(double start) {
  Graph g;
  g.w = tensor({0.9, -0.7, 0.5}, kFloat64).requires_grad_();
  g.b = tensor({0.1, 0.2, -0.3}, kFloat64).requires_grad_();
  Tensor h = tensor({start, -start, 2 * start}, kFloat64);
  for (int step = 0; step < 20; ++step) h = tanh(h * g.w + g.b);
  g.loss = sum(h * h);
  return g;
}

struct Expected {
  std::vector<double> w, b;
};

// One pass over the kept graph; the leaves' gradients start from zero.
Expected gradients_of(Graph& g) {
  g.w.zero_grad();
  g.b.zero_grad();
  g.loss.backward({.retain_graph = true});
  if (!g.w.grad().defined() || !g.b.grad().defined()) return {};
  return {g.w.grad().data().to_vector(), g.b.grad().data().to_vector()};
}

// Runs `passes` passes and counts those whose gradients are not exactly the expected ones
// (the same ops in the same order give the same bits). No Catch2 assertion runs inside a
// thread: Catch2 v2's assertions are not thread-safe.
int wrong_passes(Graph& g, const Expected& expected, int passes) {
  int wrong = 0;
  for (int p = 0; p < passes; ++p) {
    Expected got = gradients_of(g);
    if (got.w != expected.w || got.b != expected.b) ++wrong;
  }
  return wrong;
}

}  // namespace

TEST_CASE("two threads each run backward() on their own graph", "[autograd]") {
  Graph first = make_graph(0.5), second = make_graph(-0.25);
  const Expected first_expected = gradients_of(first), second_expected = gradients_of(second);
  REQUIRE(first_expected.w.size() == 3);
  REQUIRE(second_expected.w.size() == 3);
  REQUIRE(first_expected.w != second_expected.w);  // two different graphs

  const int passes = 3000;
  int first_wrong = -1, second_wrong = -1;
  std::thread a([&] { first_wrong = wrong_passes(first, first_expected, passes); });
  std::thread b([&] { second_wrong = wrong_passes(second, second_expected, passes); });
  a.join();
  b.join();
  CHECK(first_wrong == 0);
  CHECK(second_wrong == 0);
}

TEST_CASE("run_both: the second piece runs with the caller's grad mode and anomaly detection",
          "[autograd]") {
  // grad mode and anomaly detection are per thread; run_both's second piece runs on a pool
  // thread, which used to keep its own (grad on): a NoGradGuard around run_both then held in
  // the first piece only, and the second recorded a graph.
  testing::ThreadCount two(2);
  const Tensor w = tensor({1.0, 2.0}, kFloat64).requires_grad_();
  struct Piece {
    std::thread::id thread;
    bool grad = true, anomaly = false, recorded = true;
  };
  auto look = [&](Piece& piece) {
    piece.thread = std::this_thread::get_id();
    piece.grad = grad_enabled();
    piece.anomaly = anomaly_detection_enabled();
    piece.recorded = (w * 2.0).requires_grad();
  };
  Piece first, second;
  {
    NoGradGuard no_grad;
    DetectAnomalyGuard anomaly;
    run_both([&] { look(first); }, [&] { look(second); });
  }
  REQUIRE(first.thread != second.thread);  // the second piece ran on the other thread
  CHECK_FALSE(first.grad);
  CHECK_FALSE(second.grad);
  CHECK(second.anomaly);
  CHECK_FALSE(second.recorded);
  // Afterwards the pool thread has its own settings back (grad on, no anomaly detection), as
  // a parallel loop's piece on it sees them.
  parallel_for(2, 1, [&](Index begin, Index) {
    if (begin == 1) look(second);
  });
  REQUIRE(second.thread != first.thread);
  CHECK(second.grad);
  CHECK_FALSE(second.anomaly);
  CHECK(second.recorded);
}

TEST_CASE("carry_thread_settings takes one registration with both functions", "[autograd]") {
  // autograd registered its pair when the program started; a second layer cannot replace it.
  auto read = [] { return std::uint64_t{0}; };
  auto write = [](std::uint64_t) {};
  CHECK_THROWS_WITH(carry_thread_settings({read, nullptr}),
                    Catch::Matchers::Contains("both the read and the write function"));
  CHECK_THROWS_WITH(carry_thread_settings({read, write}),
                    Catch::Matchers::Contains("registered already"));
  NoGradGuard no_grad;  // and autograd's pair is still the one carried
  bool second_grad = true;
  run_both([] {}, [&] { second_grad = grad_enabled(); });
  CHECK_FALSE(second_grad);
}
