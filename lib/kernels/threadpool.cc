#include "kernels/threadpool.h"

namespace qairt::kernels {

ThreadPool::ThreadPool(size_t threads) {
  if (threads == 0) threads = std::thread::hardware_concurrency();
  if (threads == 0) threads = 1;
  workers_.reserve(threads - 1);
  for (size_t w = 1; w < threads; ++w) workers_.emplace_back([this, w] { WorkerLoop(w); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  start_cv_.notify_all();
  for (auto& t : workers_) t.join();
}

void ThreadPool::RunTasks(size_t worker) {
  for (;;) {
    size_t task;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (next_ >= tasks_) return;
      task = next_++;
    }
    (*fn_)(task, worker);
  }
}

void ThreadPool::WorkerLoop(size_t worker) {
  size_t seen = 0;
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(mutex_);
      start_cv_.wait(lock, [&] { return stop_ || generation_ != seen; });
      if (stop_) return;
      seen = generation_;
    }
    RunTasks(worker);
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (--active_ == 0) done_cv_.notify_one();
    }
  }
}

void ThreadPool::ParallelFor(size_t tasks, const std::function<void(size_t, size_t)>& fn) {
  if (tasks == 0) return;
  if (workers_.empty() || tasks == 1) {
    for (size_t t = 0; t < tasks; ++t) fn(t, 0);
    return;
  }
  std::lock_guard<std::mutex> run_lock(run_mutex_);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    fn_ = &fn;
    tasks_ = tasks;
    next_ = 0;
    active_ = workers_.size();
    ++generation_;
  }
  start_cv_.notify_all();
  RunTasks(0);
  std::unique_lock<std::mutex> lock(mutex_);
  done_cv_.wait(lock, [&] { return active_ == 0; });
  fn_ = nullptr;
}

void ParallelFor(ThreadPool* pool, size_t tasks, const std::function<void(size_t, size_t)>& fn) {
  if (pool) {
    pool->ParallelFor(tasks, fn);
  } else {
    for (size_t t = 0; t < tasks; ++t) fn(t, 0);
  }
}

}  // namespace qairt::kernels
