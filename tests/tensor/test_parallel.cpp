// The thread pool's two entry points, parallel_for and run_both, and the products that the
// backward passes of matmul and linear run side by side (run_two_products).
#include <atomic>
#include <stdexcept>
#include <thread>

#include "support.h"
#include "tensor/matmul.h"

using namespace attend;
using namespace attend::testing;

TEST_CASE("run_both runs each function once: side by side at two threads, in order at one",
          "[tensor]") {
  const auto caller = std::this_thread::get_id();
  std::thread::id first_ran_on, second_ran_on;
  auto run = [&] {
    run_both([&] { first_ran_on = std::this_thread::get_id(); },
             [&] { second_ran_on = std::this_thread::get_id(); });
  };
  {
    ThreadCount two(2);
    run();
    CHECK(first_ran_on == caller);
    CHECK(second_ran_on != caller);  // on the pool's worker
  }
  {
    ThreadCount one(1);
    std::vector<int> order;
    run_both([&] { order.push_back(1); }, [&] { order.push_back(2); });
    CHECK(order == std::vector<int>{1, 2});
    run();
    CHECK(second_ran_on == caller);
  }
}

TEST_CASE("inside a parallel loop, run_both runs both on that loop's thread", "[tensor]") {
  ThreadCount two(2);
  std::atomic<int> on_own_thread = 0, calls = 0;
  parallel_for(2, 1, [&](Index, Index) {
    const auto here = std::this_thread::get_id();
    auto same_thread = [&] {
      calls += 1;
      if (std::this_thread::get_id() == here) on_own_thread += 1;
    };
    run_both(same_thread, same_thread);
  });
  CHECK(calls == 4);
  CHECK(on_own_thread == 4);
}

TEST_CASE("an exception in either half of run_both reaches the caller", "[tensor]") {
  for (int threads : {1, 2}) {
    CAPTURE(threads);
    ThreadCount count(threads);
    std::atomic<bool> other_ran = false;
    CHECK_THROWS_WITH(
        run_both([] { throw std::runtime_error("first failed"); }, [&] { other_ran = true; }),
        "first failed");
    // Side by side, the other half ran to its end before run_both returned (it may use the
    // caller's variables); one after the other, a failed first half stops there.
    CHECK(other_ran == (threads == 2));
    other_ran = false;
    CHECK_THROWS_WITH(
        run_both([&] { other_ran = true; }, [] { throw std::runtime_error("second failed"); }),
        "second failed");
    CHECK(other_ran);
    // The pool still works after a failed job.
    int sum = 0;
    run_both([&] { sum += 1; }, [&] { sum += 2; });
    CHECK(sum == 3);
  }
}

TEST_CASE("thousands of small jobs in a row each run exactly once", "[tensor]") {
  // The workers watch for the next job for a moment before they sleep: jobs that come while
  // they spin and jobs that wake them must both be seen, none twice.
  ThreadCount two(2);
  std::vector<int> seen(64, 0);
  for (int job = 0; job < 5000; ++job) {
    if (job % 1000 == 999) std::this_thread::sleep_for(std::chrono::milliseconds(2));  // asleep
    parallel_for(64, 1, [&](Index begin, Index end) {
      for (Index i = begin; i < end; ++i) seen[static_cast<std::size_t>(i)] += 1;
    });
  }
  CHECK(std::count(seen.begin(), seen.end(), 5000) == 64);
}

TEST_CASE("run_two_products gives the same arrays whichever way it runs", "[tensor]") {
  Generator gen(5);
  const NDArray g = NDArray::normal({48, 40}, gen, 0, 1, kFloat32);
  const NDArray w = NDArray::normal({40, 36}, gen, 0, 1, kFloat32);
  const NDArray x = NDArray::normal({48, 36}, gen, 0, 1, kFloat32);
  auto products = [&](int threads, Index work) {
    ThreadCount count(threads);
    NDArray gx, gw;
    run_two_products(
        work, [&] { gx = matmul(g, w); }, [&] { gw = matmul(g, x, true, false); });
    return std::vector<NDArray>{gx, gw};
  };
  const Index work = 48 * 40 * 36;  // above the side-by-side threshold
  const auto alone = products(1, work);
  check_same_bits(products(2, work), alone);
  check_same_bits(products(2, 1), alone);  // tiny: one after the other
}
