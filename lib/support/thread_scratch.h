// Per-thread scratch buffers: kept from call to call, within a bound.
//
// Static-data passes run once per weight, and an LLM has hundreds: a fresh
// buffer per call is fresh pages, zeroed by the kernel (and on virtual
// machines that return freed memory to their host, a host fault per page),
// which cost more than the work. So such buffers are thread_local and kept.
// But one huge tensor (a 128k-token vocabulary's tables) would then hold
// its buffers for the life of the thread, in a host process that converts
// once and runs for hours: a ScratchRelease at the end of the use frees any
// named buffer grown past kScratchKeepBytes.
#pragma once

#include <cstddef>
#include <tuple>
#include <vector>

namespace qairt {

inline constexpr size_t kScratchKeepBytes = size_t{16} << 20;

template <class T>
void TrimScratch(std::vector<T>& v) {
  if (v.capacity() * sizeof(T) > kScratchKeepBytes) std::vector<T>().swap(v);
}

// Trims the buffers it names when it goes out of scope.
template <class... T>
class ScratchRelease {
 public:
  explicit ScratchRelease(std::vector<T>&... v) : v_(v...) {}
  ~ScratchRelease() {
    std::apply([](auto&... v) { (TrimScratch(v), ...); }, v_);
  }
  ScratchRelease(const ScratchRelease&) = delete;
  ScratchRelease& operator=(const ScratchRelease&) = delete;

 private:
  std::tuple<std::vector<T>&...> v_;
};

}  // namespace qairt
