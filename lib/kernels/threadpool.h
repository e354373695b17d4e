// A small fixed-size thread pool. ParallelFor hands out task indices; callers
// make results independent of the thread count by fixing the task split
// (never "one task per thread") and combining per-task results in order.
#pragma once

#include <condition_variable>
#include <cstddef>
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
  void ParallelFor(size_t tasks, const std::function<void(size_t task, size_t worker)>& fn);

 private:
  void WorkerLoop(size_t worker);
  void RunTasks(size_t worker);

  std::vector<std::thread> workers_;
  std::mutex run_mutex_;  // one ParallelFor at a time
  std::mutex mutex_;
  std::condition_variable start_cv_;
  std::condition_variable done_cv_;
  const std::function<void(size_t, size_t)>* fn_ = nullptr;
  size_t tasks_ = 0;
  size_t next_ = 0;
  size_t active_ = 0;
  size_t generation_ = 0;
  bool stop_ = false;
};

// Runs fn over [0, tasks) on `pool`, or inline when pool is null.
void ParallelFor(ThreadPool* pool, size_t tasks, const std::function<void(size_t task, size_t worker)>& fn);
inline size_t PoolSize(const ThreadPool* pool) { return pool ? pool->size() : 1; }

}  // namespace qairt::kernels
