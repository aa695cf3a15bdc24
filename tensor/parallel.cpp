// A small thread pool for parallel_for. Workers sleep on a condition variable between
// jobs rather than spinning: on the course's virtual machines a spinning thread can take
// the core that the working thread needs.
#include "tensor/parallel.h"

#include <algorithm>
#include <charconv>
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
      ++generation_;
    }
    wake_.notify_all();
    std::exception_ptr error;
    try {
      task(0);
    } catch (...) {
      error = std::current_exception();
    }
    std::unique_lock lock(mutex_);
    done_.wait(lock, [this] { return pending_ == 0; });
    task_ = nullptr;
    if (!error) error = worker_error_;
    worker_error_ = nullptr;
    if (error) std::rethrow_exception(error);
  }

 private:
  void work(int t, std::uint64_t seen) {
    for (;;) {
      const std::function<void(int)>* task;
      {
        std::unique_lock lock(mutex_);
        wake_.wait(lock, [&] { return stopping_ || generation_ != seen; });
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
  std::uint64_t generation_ = 0;
  int pending_ = 0;
  bool stopping_ = false;
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

}  // namespace attend
