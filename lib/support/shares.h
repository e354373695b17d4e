// Work split into contiguous shares run at once: the caller's thread takes
// the first share, a thread of its own each of the others. For short bursts
// of parallel work on large arrays (the encodings reader and apply, faulting
// in memory) where a pool's queue buys nothing.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <thread>
#include <vector>

namespace qairt {

// Runs body(begin, end) for each share [k * share, min(n, (k + 1) * share))
// of [0, n), share > 0. Shares whose thread cannot be started run on the
// caller after its own. Returns when all are done.
template <class F>
void RunShares(size_t n, size_t share, F&& body) {
  if (n == 0) return;
  share = std::max<size_t>(share, 1);
  std::vector<std::thread> workers;
  size_t begin = share;
  try {
    for (; begin < n; begin += share) workers.emplace_back(body, begin, std::min(n, begin + share));
  } catch (...) {  // no thread to be had: the caller runs the rest
  }
  body(size_t{0}, std::min(n, share));
  for (; begin < n; begin += share) body(begin, std::min(n, begin + share));
  for (std::thread& t : workers) t.join();
}

// The share size that splits n items over `threads` threads.
inline size_t ShareOf(size_t n, unsigned threads) { return (n + std::max(1u, threads) - 1) / std::max(1u, threads); }

// The threads an option asks for: `requested`, or with 0 up to `cap` as the
// machine has cores.
inline unsigned ThreadsFor(uint32_t requested, unsigned cap) {
  return requested ? requested : std::min(cap, std::max(1u, std::thread::hardware_concurrency()));
}

// Below this many items (names looked up, encodings moved, entries checked
// for duplicates) a second thread costs more than it saves.
inline constexpr size_t kItemsWorthAThread = 32768;

}  // namespace qairt
