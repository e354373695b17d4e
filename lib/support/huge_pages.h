// Anonymous memory on transparent huge pages, for large buffers filled once
// (a file read, a transformed weight): a 100 MB buffer then takes ~50 page
// faults instead of ~25k, each a kernel entry and a cleared page.
#pragma once

#include <cstddef>

namespace qairt {

inline constexpr size_t kHugePageBytes = size_t{2} << 20;

// `bytes` rounded up to whole huge pages.
inline size_t RoundUpToHugePages(size_t bytes) { return (bytes + kHugePageBytes - 1) & ~(kHugePageBytes - 1); }

// A kHugePageBytes-aligned private anonymous mapping of `capacity` bytes (a
// multiple of kHugePageBytes) with huge pages requested (a hint), or nullptr.
// Release with munmap(p, capacity).
void* MapHugePages(size_t capacity);

// Requests huge pages for the whole huge pages inside [p, p + bytes) of an
// allocation the caller owns and has not touched yet (a reserved vector):
// its first writes then fault 2 MiB at a time. A hint: nothing happens for
// small ranges or where the kernel declines.
void AdviseHugePages(void* p, size_t bytes);

// Faults in the pages of [p, p + bytes), raw storage the caller owns and
// has not constructed anything in yet (a reserved vector's capacity), on up
// to `threads` threads (the caller's included), each a contiguous share. A
// fresh page's first touch is the kernel clearing it, which a virtual
// machine's host may back page by page; one thread then clearing tens of MB
// ahead of a parallel parse is a serial step the other cores wait for.
// Writes a zero byte per 4 KiB; threads that cannot be started leave their
// share to the caller.
void FaultInPages(void* p, size_t bytes, unsigned threads);

}  // namespace qairt
