// A small fixed-size thread pool. ParallelFor hands out task indices; callers
// make results independent of the thread count by fixing the task split
// (never "one task per thread") and combining per-task results in order.
//
// Why it spins: on this class of machine (a 2-vCPU VM) a worker sleeping in
// a futex takes ~25 us to wake between back-to-back calls and ~100 us after
// the vCPU went idle, while many executor ops and weight tensors take well
// under a millisecond. Idle workers therefore poll for new work for a short
// while (kSpinMicros) before sleeping, and the caller never waits for a
// worker that has not claimed a task: a job is finished when its tasks are.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace qairt::kernels {

class ThreadPool {
 public:
  // threads: total threads including the caller (>= 1); 0 = hardware concurrency.
  explicit ThreadPool(size_t threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  size_t size() const { return workers_.size() + 1; }

  // Runs fn(task, worker) for task in [0, tasks); worker in [0, size()) names
  // the executing thread (for per-thread scratch). Blocks until all are done.
  // Not reentrant: one ParallelFor at a time per pool (a mutex serialises).
  // If a task throws, tasks not yet started are skipped and the first
  // exception is rethrown here once every started task has finished (a
  // throwing worker would otherwise terminate the process).
  void ParallelFor(size_t tasks, const std::function<void(size_t task, size_t worker)>& fn);

  // How long an idle thread polls for work (or the caller for completion)
  // before it blocks.
  static constexpr int64_t kSpinMicros = 100;

 private:
  void WorkerLoop(size_t worker);
  // Claims and runs tasks of the current job until none is left.
  void RunTasks(size_t worker);
  // Spins up to kSpinMicros while `busy()` holds; true if it stopped holding.
  template <class Pred>
  static bool SpinWhile(Pred busy);

  std::vector<std::thread> workers_;
  std::mutex run_mutex_;  // one ParallelFor at a time

  // The current job: high 32 bits a generation (changes every job), low 32
  // bits the number of tasks not yet claimed. A thread claims a task by
  // decrementing it with a compare-exchange; a successful claim proves the
  // job is unfinished, so fn_ and tasks_ (written by the caller before it
  // publishes the job, and not again until every task is done) belong to it.
  std::atomic<uint64_t> job_{0};
  std::atomic<const std::function<void(size_t, size_t)>*> fn_{nullptr};
  std::atomic<uint32_t> tasks_{0};
  std::atomic<uint32_t> done_{0};  // tasks finished in the current job
  std::atomic<bool> stop_{false};
  std::atomic<bool> failed_{false};  // a task of the current job threw
  std::exception_ptr error_;         // its exception (under mutex_)

  // Sleeping: workers wait on start_cv_ for a job with unclaimed tasks, the
  // caller on done_cv_ for done_ == tasks_. Wakers take mutex_ before they
  // notify, so a sleeper that re-checks its condition under mutex_ cannot
  // miss the wake-up.
  std::mutex mutex_;
  std::condition_variable start_cv_;
  std::condition_variable done_cv_;
};

// Runs fn over [0, tasks) on `pool`, or inline when pool is null.
void ParallelFor(ThreadPool* pool, size_t tasks, const std::function<void(size_t task, size_t worker)>& fn);
inline size_t PoolSize(const ThreadPool* pool) { return pool ? pool->size() : 1; }

}  // namespace qairt::kernels
