// A small thread pool for parallel_for. Between jobs a worker watches for the next one for
// a moment (kSpinTime), then sleeps on a condition variable: spinning for longer could take
// the core that a working thread needs.
#include "tensor/parallel.h"

#include <algorithm>
#include <atomic>
#include <charconv>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <mutex>
#include <string_view>
#include <system_error>
#include <thread>
#include <vector>

#include "tensor/error.h"

namespace attend {
namespace {

// ATTEND_NUM_THREADS if set (a whole number from 1 to kMaxThreads, else an error: a typo
// must not silently run on another count), otherwise the number of cores.
int initial_threads() {
  if (const char* env = std::getenv("ATTEND_NUM_THREADS")) {
    const std::string_view text(env);
    int n = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), n);
    if (error != std::errc() || end != text.data() + text.size() || n < 1 || n > kMaxThreads)
      fail("ATTEND_NUM_THREADS: '{}' is not a number of threads from 1 to {}", text, kMaxThreads);
    return n;
  }
  return std::clamp(static_cast<int>(std::thread::hardware_concurrency()), 1, kMaxThreads);
}

// Waking a sleeping thread takes tens of microseconds on the course's virtual machines, as
// long as a small product itself. So a thread that has just finished a job, or waits for one
// to finish, first watches for the next event this long before it goes to sleep: in a loop
// of many small parallel jobs (a backward pass) no one sleeps, and a thread with nothing to
// do burns at most this much of a core before it leaves the core to others.
constexpr auto kSpinTime = std::chrono::microseconds(200);

// Tells the core that this is a wait loop (so a sibling thread on the same core gets its
// share, and leaving the loop does not stall on a mis-speculated memory order).
inline void spin_pause() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

// Spins until done() or kSpinTime has passed; returns done().
template <class Done>
bool spin_until(const Done& done) {
  const auto deadline = std::chrono::steady_clock::now() + kSpinTime;
  for (int i = 0;; ++i) {
    if (done()) return true;
    // The clock costs ~20 ns; reading it every 64 rounds keeps the loop a loop of loads.
    if (i % 64 == 63 && std::chrono::steady_clock::now() > deadline) return done();
    spin_pause();
  }
}

class ThreadPool {
 public:
  explicit ThreadPool(int threads) { resize(threads); }
  ~ThreadPool() { stop(); }

  int size() const { return static_cast<int>(workers_.size()) + 1; }

  // Starts threads - 1 workers. If the system refuses to start one (a container's process
  // limit, say), the pool keeps those that started: size() tells how many there are.
  void resize(int threads) {
    stop();
    stopping_ = false;
    // A new worker waits for the next job, not for the jobs the pool ran before it was
    // resized (it would wake at once and run task_, which is null between jobs).
    const std::uint64_t next = generation_;
    try {
      for (int t = 1; t < threads; ++t) workers_.emplace_back([this, t, next] { work(t, next); });
    } catch (const std::system_error&) {
    }
  }

  // Runs task(t) for t = 0 .. size()-1; task(0) on the calling thread. Returns when all ran.
  void run(const std::function<void(int)>& task) {
    {
      std::lock_guard lock(mutex_);
      task_ = &task;
      pending_ = size() - 1;
      ++generation_;  // after task_ and pending_: a spinning worker reads them once it sees this
    }
    wake_.notify_all();
    std::exception_ptr error;
    try {
      task(0);
    } catch (...) {
      error = std::current_exception();
    }
    if (!spin_until([this] { return pending_ == 0; })) {
      std::unique_lock lock(mutex_);
      done_.wait(lock, [this] { return pending_ == 0; });
    }
    std::lock_guard lock(mutex_);
    task_ = nullptr;
    if (!error) error = worker_error_;
    worker_error_ = nullptr;
    if (error) std::rethrow_exception(error);
  }

 private:
  void work(int t, std::uint64_t seen) {
    for (;;) {
      auto next_job = [&] { return stopping_ || generation_ != seen; };
      const std::function<void(int)>* task;
      {
        const bool ready = spin_until(next_job);
        std::unique_lock lock(mutex_);
        if (!ready) wake_.wait(lock, next_job);
        if (stopping_) return;
        seen = generation_;
        task = task_;
      }
      std::exception_ptr error;
      try {
        (*task)(t);
      } catch (...) {
        error = std::current_exception();
      }
      std::lock_guard lock(mutex_);
      if (error && !worker_error_) worker_error_ = error;
      if (--pending_ == 0) done_.notify_one();
    }
  }

  void stop() {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    wake_.notify_all();
    for (auto& w : workers_) w.join();
    workers_.clear();
  }

  std::mutex mutex_;
  std::condition_variable wake_, done_;
  std::vector<std::thread> workers_;
  const std::function<void(int)>* task_ = nullptr;
  std::exception_ptr worker_error_;
  // Written under mutex_; atomic so that a spinning thread may read them without it.
  std::atomic<std::uint64_t> generation_ = 0;
  std::atomic<int> pending_ = 0;
  std::atomic<bool> stopping_ = false;
};

// Set while a thread runs a parallel_for body: a nested parallel_for (a GEMM inside a
// convolution's per-sample loop, say) then runs inline on that thread instead of waiting
// for a pool that is busy with the outer loop.
thread_local bool inside_parallel_for = false;

// One parallel_for at a time may use the pool; another thread calling it meanwhile runs
// its loop inline.
std::mutex pool_in_use;

int& thread_setting() {
  static int threads = initial_threads();
  return threads;
}

ThreadPool& pool() {
  static ThreadPool instance(thread_setting());
  if (instance.size() != thread_setting()) instance.resize(thread_setting());
  if (instance.size() < thread_setting()) {  // once: the setting follows what really runs
    fmt::print(stderr, "warning: only {} of {} threads could be started; going on with {}\n",
               instance.size(), thread_setting(), instance.size());
    thread_setting() = instance.size();
  }
  return instance;
}

}  // namespace

int num_threads() {
  return thread_setting();
}

void set_num_threads(int threads) {
  if (threads < 1 || threads > kMaxThreads)
    fail("set_num_threads: the number of threads must be from 1 to {}, got {}", kMaxThreads,
         threads);
  thread_setting() = threads;
}

void parallel_for(Index n, Index grain, const std::function<void(Index, Index)>& body) {
  if (n <= 0) return;
  grain = std::max<Index>(grain, 1);
  const Index grains = (n + grain - 1) / grain;
  const int threads = static_cast<int>(std::min<Index>(num_threads(), grains));
  std::unique_lock<std::mutex> lock(pool_in_use, std::defer_lock);
  if (threads <= 1 || inside_parallel_for || !lock.try_lock()) {
    body(0, n);
    return;
  }
  ThreadPool& workers = pool();
  const int used = std::min(threads, workers.size());
  // Thread t takes grains [t * grains / used, (t + 1) * grains / used).
  workers.run([&](int t) {
    if (t >= used) return;
    const Index first = t * grains / used, last = (t + 1) * grains / used;
    const Index begin = first * grain, end = std::min(n, last * grain);
    inside_parallel_for = true;
    struct Reset {
      ~Reset() { inside_parallel_for = false; }
    } reset;
    if (begin < end) body(begin, end);
  });
}

namespace {
ThreadSettings& carried_settings() {
  static ThreadSettings settings;
  return settings;
}
}  // namespace

void carry_thread_settings(ThreadSettings settings) {
  if (!settings.read || !settings.write)
    fail("carry_thread_settings: both the read and the write function are needed");
  if (carried_settings().read)
    fail("carry_thread_settings: the settings carried are registered already (one layer, once)");
  carried_settings() = settings;
}

void run_both(const std::function<void()>& first, const std::function<void()>& second) {
  const ThreadSettings carried = carried_settings();
  const std::uint64_t callers = carried.read ? carried.read() : 0;
  parallel_for(2, 1, [&](Index begin, Index end) {
    if (begin == 0) first();
    if (end != 2) return;
    if (!carried.read) return second();
    // On a pool thread: the caller's settings while second() runs, the thread's own after.
    struct Restore {
      ThreadSettings carried;
      std::uint64_t own;
      ~Restore() { carried.write(own); }
    } restore{carried, carried.read()};
    carried.write(callers);
    second();
  });
}

}  // namespace attend
