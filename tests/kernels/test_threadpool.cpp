// ThreadPool: every task of every job runs exactly once, whether the workers
// are spinning (back-to-back jobs) or asleep (jobs further apart than the
// spin window); workers really run tasks concurrently; pools are destroyed
// cleanly in any state; ParallelFor from several threads is serialised.
#include <atomic>
#include <chrono>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include "kernels/threadpool.h"

namespace qairt::kernels::test {
namespace {

using Clock = std::chrono::steady_clock;

// Runs one job of `tasks` tasks and checks each ran once on a valid worker.
void CheckJob(ThreadPool& pool, size_t tasks) {
  std::vector<std::atomic<int>> runs(tasks);
  std::atomic<bool> bad_worker{false};
  pool.ParallelFor(tasks, [&](size_t t, size_t w) {
    if (w >= pool.size()) bad_worker = true;
    runs[t].fetch_add(1);
  });
  REQUIRE_FALSE(bad_worker.load());
  for (size_t t = 0; t < tasks; ++t) {
    INFO("task " << t << " of " << tasks);
    REQUIRE(runs[t].load() == 1);
  }
}

TEST_CASE("ThreadPool runs every task of back-to-back jobs exactly once", "[kernels][threadpool]") {
  std::mt19937 rng(7);
  for (size_t threads : {1, 2, 3, 4}) {
    ThreadPool pool(threads);
    REQUIRE(pool.size() == threads);
    for (int job = 0; job < 3000; ++job) CheckJob(pool, 1 + rng() % 40);
    CheckJob(pool, 100000);
  }
}

TEST_CASE("ThreadPool wakes sleeping workers for jobs further apart than the spin window", "[kernels][threadpool]") {
  ThreadPool pool(3);
  const auto gap = std::chrono::microseconds(4 * ThreadPool::kSpinMicros);
  for (int job = 0; job < 20; ++job) {
    std::this_thread::sleep_for(gap);
    CheckJob(pool, 1 + static_cast<size_t>(job) % 7);
  }
}

TEST_CASE("ThreadPool workers run tasks concurrently with the caller", "[kernels][threadpool]") {
  // Task 0 waits for task 1 to start: only a second thread can start it.
  // Repeated after sleeps so sleeping workers are woken, not just spinning ones.
  ThreadPool pool(2);
  for (int round = 0; round < 10; ++round) {
    if (round % 2) std::this_thread::sleep_for(std::chrono::microseconds(4 * ThreadPool::kSpinMicros));
    std::atomic<bool> started1{false};
    std::atomic<bool> overlapped{false};
    std::vector<size_t> worker(2, 99);
    pool.ParallelFor(2, [&](size_t t, size_t w) {
      worker[t] = w;
      if (t == 1) {
        started1 = true;
        return;
      }
      const auto deadline = Clock::now() + std::chrono::seconds(10);
      while (!started1.load() && Clock::now() < deadline) std::this_thread::yield();
      overlapped = started1.load();
    });
    REQUIRE(overlapped.load());
    REQUIRE(worker[0] != worker[1]);
  }
}

TEST_CASE("ThreadPool is destroyed cleanly while its workers spin, sleep or never ran", "[kernels][threadpool]") {
  for (int i = 0; i < 50; ++i) {
    ThreadPool never_used(2);
  }
  for (int i = 0; i < 50; ++i) {
    ThreadPool pool(3);
    CheckJob(pool, 9);  // workers are spinning when the destructor runs
  }
  ThreadPool pool(2);
  CheckJob(pool, 5);
  std::this_thread::sleep_for(std::chrono::microseconds(4 * ThreadPool::kSpinMicros));  // asleep now
}

TEST_CASE("ThreadPool serialises ParallelFor calls from several threads", "[kernels][threadpool]") {
  // Two callers share one pool; each checks that every task of each of its
  // own jobs ran exactly once (Catch2 assertions stay on the main thread).
  ThreadPool pool(2);
  std::atomic<int> bad_jobs{0};
  auto caller = [&](int jobs) {
    for (int j = 0; j < jobs; ++j) {
      std::vector<std::atomic<int>> runs(8);
      pool.ParallelFor(runs.size(), [&](size_t t, size_t) { runs[t].fetch_add(1); });
      for (auto& r : runs)
        if (r.load() != 1) {
          ++bad_jobs;
          break;
        }
    }
  };
  std::thread a(caller, 500), b(caller, 500);
  a.join();
  b.join();
  REQUIRE(bad_jobs.load() == 0);
}

TEST_CASE("ThreadPool rethrows a task's exception in the caller and stays usable", "[kernels][threadpool]") {
  // Whichever thread runs the throwing task, the caller gets the exception
  // after every started task finished; the next job runs normally.
  ThreadPool pool(2);
  for (size_t throwing : {size_t{0}, size_t{1}, size_t{37}, size_t{63}}) {
    std::atomic<int> ran{0};
    bool caught = false;
    try {
      pool.ParallelFor(64, [&](size_t t, size_t) {
        if (t == throwing) throw std::runtime_error("task " + std::to_string(t));
        ++ran;
      });
    } catch (const std::runtime_error& e) {
      caught = std::string(e.what()) == "task " + std::to_string(throwing);
    }
    INFO("throwing task " << throwing);
    CHECK(caught);
    CHECK(ran.load() < 64);
    CheckJob(pool, 64);
  }
}

TEST_CASE("ParallelFor without a pool runs inline in order", "[kernels][threadpool]") {
  std::vector<size_t> order;
  ParallelFor(nullptr, 5, [&](size_t t, size_t w) {
    REQUIRE(w == 0);
    order.push_back(t);
  });
  REQUIRE(order == std::vector<size_t>{0, 1, 2, 3, 4});
  REQUIRE(PoolSize(nullptr) == 1);
}

}  // namespace
}  // namespace qairt::kernels::test
