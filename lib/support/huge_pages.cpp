#include "support/huge_pages.h"

#include <sys/mman.h>

#include <cstdint>

namespace qairt {

void* MapHugePages(size_t capacity) {
  // Over-allocate by one huge page, then trim both ends to the aligned window.
  const size_t over = capacity + kHugePageBytes;
  void* p = ::mmap(nullptr, over, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return nullptr;
  const auto start = reinterpret_cast<uintptr_t>(p);
  const uintptr_t aligned = (start + kHugePageBytes - 1) & ~(kHugePageBytes - 1);
  if (aligned > start) ::munmap(p, aligned - start);
  const uintptr_t tail = aligned + capacity;
  if (start + over > tail) ::munmap(reinterpret_cast<void*>(tail), start + over - tail);
#ifdef MADV_HUGEPAGE
  ::madvise(reinterpret_cast<void*>(aligned), capacity, MADV_HUGEPAGE);  // a hint: failure is harmless
#endif
  return reinterpret_cast<void*>(aligned);
}

void AdviseHugePages(void* p, size_t bytes) {
#ifdef MADV_HUGEPAGE
  const auto start = reinterpret_cast<uintptr_t>(p);
  const uintptr_t first = (start + kHugePageBytes - 1) & ~(kHugePageBytes - 1);
  const uintptr_t last = (start + bytes) & ~(kHugePageBytes - 1);
  if (last > first) ::madvise(reinterpret_cast<void*>(first), last - first, MADV_HUGEPAGE);
#else
  (void)p;
  (void)bytes;
#endif
}

}  // namespace qairt
