// Sequential writes of a new file that its writer commits with fsync (an
// AtomicFile): every byte goes to the disk before the writer returns, so a
// large file goes around the page cache. Written through the page cache, the
// bytes are first copied into fresh page-cache pages, then written back by
// the fsync; fresh pages are costly where a VM hands freed memory back to its
// host (free page reporting: each page a host fault when touched again). On
// the 2-vCPU VM of benchmarks/README.md, 690 MB took 1.4-1.9 s to write and
// fsync through the page cache and 0.73-0.88 s with O_DIRECT.
//
// Direct mode stages the bytes in an aligned buffer and writes it in whole
// blocks; the last block is padded and the file cut back to its size. After
// the first, full stages are written by two background threads at their
// offsets while the caller fills the next (a direct write blocks until the
// disk has the bytes: written one at a time, the disk's time added to the
// caller's; two in flight also write faster on the VM's virtual disk, 2.2
// against 1.5 GB/s). Where the file system refuses O_DIRECT, or the first direct
// write fails with EINVAL, the rest goes through the page cache (every 8 MB
// written, its writeback is started so the fsync finds little left); a
// failed background write is an error. Errors name `path`.
//
// Zeros are not written: a run of them (a whole stage in direct mode, a
// 1 MiB chunk through the page cache, a hole of the file a StaticData maps)
// is left as a hole, and Finish gives the file its full size. The file reads
// the same; a sparse or zero-padded weight takes no disk.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "support/static_data.h"
#include "support/status.h"

namespace qairt {

class StreamWriter {
 public:
  // From this size up, direct mode is tried.
  static constexpr uint64_t kDirectFrom = uint64_t{64} << 20;

  // `fd`: a new, empty file open for writing at offset 0; `expected`: about
  // how many bytes will be written (chooses the mode). `what` names the file
  // kind in errors ("container").
  StreamWriter(int fd, std::string path, std::string what, uint64_t expected);
  ~StreamWriter();  // the descriptor's flags as they were (not Finish: the caller's error path)
  StreamWriter(const StreamWriter&) = delete;
  StreamWriter& operator=(const StreamWriter&) = delete;

  Status Write(const void* bytes, size_t n);
  // Bytes [begin, end) of a StaticData, read from its file when it is a
  // window of one (StaticDataReader in direct mode, a file-to-file copy in
  // the kernel otherwise), never through its mapping.
  Status WriteData(const StaticData& data, size_t begin, size_t end);
  // Writes what is staged and cuts the file to the bytes written; the
  // descriptor's flags are restored.
  Status Finish();

  bool direct() const { return direct_; }
  uint64_t written() const { return written_; }
  // Bytes handed to the background threads (0 when every stage was written
  // in place).
  uint64_t background_bytes() const { return background_bytes_; }
  // Bytes left as holes (zeros not written).
  uint64_t hole_bytes() const { return hole_bytes_; }

 private:
  Status WriteThrough(const void* bytes, size_t n);  // page cache
  Status FlushStage(size_t n);                       // n staged bytes, a multiple of the block (or the padded tail)
  Status FlushFullStage();                           // in the background when it can
  Status LeaveDirect();
  Status Skip(uint64_t n);  // n zero bytes left as a hole
  void Written(uint64_t k);
  Status Io(const char* step);  // the error, kept in failed_
  // Background direct writes of full stages (nullptr: written in place).
  struct Flusher;
  bool StartFlusher();
  Status HandOff();       // the full stage to the flusher, a free one to fill
  Status StopFlusher();   // waits for the writes in flight; their error
                          // (the destructor discards instead)

  int fd_;
  std::string path_, what_;
  int flags_ = -1;
  bool direct_ = false;
  bool direct_proven_ = false;  // a direct write went through (O_DIRECT works here)
  bool may_skip_ = false;  // a new, empty regular file written from its start: zeros may be holes
  bool holes_ = false;
  uint64_t hole_bytes_ = 0;
  uint64_t written_ = 0;  // bytes of the file so far (staged ones included)
  uint64_t on_disk_ = 0;  // bytes handed to the kernel
  std::shared_ptr<const StaticData> stage_keep_;
  uint8_t* stage_ = nullptr;
  size_t staged_ = 0;
  std::unique_ptr<Flusher> flusher_;
  bool flusher_failed_ = false;  // no threads: stages are written in place
  uint64_t background_bytes_ = 0;
  Status failed_ = Status::Ok();  // the first I/O error, returned by every later call
};

}  // namespace qairt
