#include "kernels/threadpool.h"

#include <algorithm>
#include <chrono>
#include <limits>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace qairt::kernels {

namespace {

constexpr uint64_t kUnclaimedMask = 0xFFFFFFFFu;

inline void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#else
  std::this_thread::yield();
#endif
}

}  // namespace

template <class Pred>
bool ThreadPool::SpinWhile(Pred busy) {
  using Clock = std::chrono::steady_clock;
  const auto deadline = Clock::now() + std::chrono::microseconds(kSpinMicros);
  for (;;) {
    // Read the clock only every 64 polls: it costs more than a poll.
    for (int i = 0; i < 64; ++i) {
      if (!busy()) return true;
      CpuRelax();
    }
    if (Clock::now() >= deadline) return !busy();
  }
}

ThreadPool::ThreadPool(size_t threads) {
  if (threads == 0) threads = std::thread::hardware_concurrency();
  if (threads == 0) threads = 1;
  workers_.reserve(threads - 1);
  for (size_t w = 1; w < threads; ++w) workers_.emplace_back([this, w] { WorkerLoop(w); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_.store(true);
  }
  start_cv_.notify_all();
  for (auto& t : workers_) t.join();
}

void ThreadPool::RunTasks(size_t worker) {
  uint64_t job = job_.load(std::memory_order_acquire);
  for (;;) {
    const uint64_t unclaimed = job & kUnclaimedMask;
    if (unclaimed == 0) return;
    if (!job_.compare_exchange_weak(job, job - 1, std::memory_order_acq_rel, std::memory_order_acquire)) continue;
    // Claimed: the job cannot finish before this task does, so fn_ and
    // tasks_ are this job's.
    const uint32_t tasks = tasks_.load(std::memory_order_relaxed);
    if (!failed_.load(std::memory_order_relaxed)) {
      try {
        (*fn_.load(std::memory_order_relaxed))(tasks - unclaimed, worker);
      } catch (...) {
        std::lock_guard<std::mutex> lock(mutex_);
        if (!error_) error_ = std::current_exception();
        failed_.store(true, std::memory_order_relaxed);
      }
    }
    if (done_.fetch_add(1, std::memory_order_acq_rel) + 1 == tasks) {
      std::lock_guard<std::mutex> lock(mutex_);
      done_cv_.notify_one();
    }
    job = job_.load(std::memory_order_acquire);
  }
}

void ThreadPool::WorkerLoop(size_t worker) {
  auto no_work = [this] { return (job_.load(std::memory_order_acquire) & kUnclaimedMask) == 0; };
  for (;;) {
    if (!SpinWhile([&] { return no_work() && !stop_.load(std::memory_order_relaxed); })) {
      std::unique_lock<std::mutex> lock(mutex_);
      start_cv_.wait(lock, [&] { return !no_work() || stop_.load(); });
    }
    if (stop_.load()) return;
    RunTasks(worker);
  }
}

void ThreadPool::ParallelFor(size_t tasks, const std::function<void(size_t, size_t)>& fn) {
  if (tasks == 0) return;
  if (workers_.empty() || tasks == 1) {
    for (size_t t = 0; t < tasks; ++t) fn(t, 0);
    return;
  }
  std::lock_guard<std::mutex> run_lock(run_mutex_);
  // A job counts its tasks in 32 bits; larger counts run as several jobs.
  constexpr size_t kMaxJob = std::numeric_limits<uint32_t>::max();
  for (size_t first = 0; first < tasks; first += kMaxJob) {
    const auto count = static_cast<uint32_t>(std::min(kMaxJob, tasks - first));
    const std::function<void(size_t, size_t)> offset_fn = [&](size_t t, size_t w) { fn(first + t, w); };
    fn_.store(first == 0 ? &fn : &offset_fn, std::memory_order_relaxed);
    tasks_.store(count, std::memory_order_relaxed);
    done_.store(0, std::memory_order_relaxed);
    failed_.store(false, std::memory_order_relaxed);
    const uint64_t generation = (job_.load(std::memory_order_relaxed) >> 32) + 1;
    {
      // Under the mutex so a worker about to sleep sees the job or the wake-up.
      std::lock_guard<std::mutex> lock(mutex_);
      job_.store(generation << 32 | count, std::memory_order_release);
    }
    start_cv_.notify_all();
    RunTasks(0);
    auto unfinished = [&] { return done_.load(std::memory_order_acquire) != count; };
    if (!SpinWhile(unfinished)) {
      std::unique_lock<std::mutex> lock(mutex_);
      done_cv_.wait(lock, [&] { return !unfinished(); });
    }
    if (failed_.load(std::memory_order_acquire)) {
      std::exception_ptr error;
      {
        std::lock_guard<std::mutex> lock(mutex_);
        std::swap(error, error_);
      }
      std::rethrow_exception(error);
    }
  }
}

void ParallelFor(ThreadPool* pool, size_t tasks, const std::function<void(size_t, size_t)>& fn) {
  if (pool) {
    pool->ParallelFor(tasks, fn);
  } else {
    for (size_t t = 0; t < tasks; ++t) fn(t, 0);
  }
}

}  // namespace qairt::kernels
