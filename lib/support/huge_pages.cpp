#include "support/huge_pages.h"

#include <sys/mman.h>

#include <cstdint>

#include "support/shares.h"

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

namespace {

void TouchEachPage(char* p, size_t bytes) {
  constexpr size_t kPage = 4096;
  for (size_t i = 0; i < bytes; i += kPage) static_cast<volatile char*>(p)[i] = 0;
  if (bytes) static_cast<volatile char*>(p)[bytes - 1] = 0;  // the last page, when p is not page-aligned
}

}  // namespace

void FaultInPages(void* p, size_t bytes, unsigned threads) {
  char* base = static_cast<char*>(p);
  // Shares of whole huge pages, so that no 2 MiB page is cleared twice over.
  RunShares(bytes, RoundUpToHugePages(ShareOf(bytes, threads)),
            [base](size_t begin, size_t end) { TouchEachPage(base + begin, end - begin); });
}

}  // namespace qairt
