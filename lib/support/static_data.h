// Bytes of a static tensor: owned by the graph, borrowed from the caller, or a
// window into a memory-mapped file. Large weights are never copied: cloning a
// graph shares the same StaticData (it is immutable once created).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "support/status.h"

namespace qairt {

enum class StaticDataOrigin : uint8_t { kOwned, kBorrowed, kMapped };

class StaticData;

// What a transposed view holds: `source` is [rows, cols] of `elem`-byte
// elements; the view's bytes are its [cols, rows] transpose.
struct StaticTransposition {
  std::shared_ptr<const StaticData> source;
  size_t elem = 0;
  int64_t rows = 0;
  int64_t cols = 0;
};

class StaticData {
 public:
  // Copies `size` bytes.
  static std::shared_ptr<const StaticData> Copy(const void* data, size_t size);
  // Takes ownership of `bytes` (no copy).
  static std::shared_ptr<const StaticData> Adopt(std::vector<uint8_t>&& bytes);
  // `size` fresh bytes left uninitialized for the creator to fill through
  // *writable before sharing the result (a transformed weight: no zeroing
  // pass over memory the transform overwrites anyway).
  static std::shared_ptr<const StaticData> Uninitialized(size_t size, uint8_t** writable);
  // Takes the caller's buffer; the caller guarantees it outlives every graph using it.
  static std::shared_ptr<const StaticData> Borrow(const void* data, size_t size);
  // A window [offset, offset+length) of a read-only mapping of `path`. Fails
  // with a message naming the file if it cannot be opened or the window does
  // not fit inside it (overflow-safe).
  static Result<std::shared_ptr<const StaticData>> MapFile(const std::string& path, uint64_t offset,
                                                           uint64_t length);

  // The transpose of `source` ([rows, cols] of `elem`-byte elements),
  // computed by `transpose(in, out)` into fresh memory the first time data()
  // is asked for. Consumers that can read the source in its own layout
  // (bands of rows, layout-free statistics, a GEMM that takes B either way) use
  // transposition() and never pay for, or hold, the transposed copy: a
  // rewritten LLM projection is otherwise a second copy of the model.
  static std::shared_ptr<const StaticData> TransposeOf(
      std::shared_ptr<const StaticData> source, size_t elem, int64_t rows, int64_t cols,
      std::function<void(const uint8_t* in, uint8_t* out)> transpose);
  // `size` bytes made by `fill(out)`: into fresh memory, kept, the first time
  // data() is asked for; into the caller's buffer, not kept, by CopyTo. A
  // weight quantized from a mapped float source is this: a writer that
  // streams the model (the container) makes each tensor's bytes when it
  // writes them, so the quantized model is never held whole. `fill` must
  // not fail: its creator checks everything that could make it fail.
  static std::shared_ptr<const StaticData> Deferred(size_t size, std::function<void(uint8_t* out)> fill);
  // Deferred data whose bytes can also be made piece by piece:
  // fill_range(out, begin, end) makes bytes [begin, end) into `out`, for
  // begin and end multiples of `unit` (end may also be size()). A streaming
  // writer then needs a buffer of a piece, not of the tensor (an LLM's
  // embedding table quantized to 16 bits is 131 MB of fresh pages).
  static std::shared_ptr<const StaticData> DeferredInPieces(
      size_t size, size_t unit, std::function<void(uint8_t* out, size_t begin, size_t end)> fill_range);

  // Thread-safe; a transposed view or deferred data is materialized once, on
  // first call.
  const uint8_t* data() const { return lazy_ ? Materialized() : data_; }
  // Copies the size() bytes to `out`; bytes not made yet are made there
  // (and not kept).
  void CopyTo(uint8_t* out) const;
  // Bytes [begin, end) to `out`. Bytes not made yet are made there, in
  // pieces when piece_unit() is not 0 (begin and end multiples of it, or end
  // == size()); other lazy data is made whole first (and kept).
  void CopyRangeTo(uint8_t* out, size_t begin, size_t end) const;
  // The unit pieces of unmade bytes can be made in (DeferredInPieces); 0
  // when they are only made whole, or are already there.
  size_t piece_unit() const { return lazy_ && lazy_->fill_range && !materialized() ? lazy_->unit : 0; }
  // Non-null for a view made by TransposeOf (whether or not data() has
  // materialized it yet).
  const StaticTransposition* transposition() const { return lazy_ ? lazy_->view.get() : nullptr; }
  // Made by TransposeOf or Deferred: its bytes exist once data() was called.
  bool lazy() const { return lazy_ != nullptr; }
  // A lazy view whose bytes have been made (by a data() call).
  bool materialized() const { return lazy_ && lazy_->done.load(std::memory_order_acquire); }
  // The bytes (or, for a view, the source's bytes) are memory-mapped from a
  // file: keeping them alive costs no anonymous memory.
  bool mapped() const {
    return origin_ == StaticDataOrigin::kMapped || (lazy_ && lazy_->view && lazy_->view->source->mapped());
  }
  // Every float32 value is finite: recorded by a scan that refuses NaN and
  // Inf (an encoding computed from the values), so later readers can rely
  // on it without a pass of their own.
  void MarkFinite() const { finite_.store(true, std::memory_order_release); }
  bool known_finite() const { return finite_.load(std::memory_order_acquire); }
  size_t size() const { return size_; }
  StaticDataOrigin origin() const { return origin_; }
  // A window of a mapped file: the file and where the window starts in it
  // (an empty path for any other data). StaticDataReader reads it from there.
  const std::string& file_path() const { return file_path_; }
  uint64_t file_offset() const { return file_offset_; }
  bool owned() const { return origin_ == StaticDataOrigin::kOwned; }

  StaticData(const uint8_t* data, size_t size, StaticDataOrigin origin, std::shared_ptr<void> keepalive)
      : data_(data), size_(size), origin_(origin), keepalive_(std::move(keepalive)) {}

 private:
  struct Lazy {
    std::unique_ptr<StaticTransposition> view;  // TransposeOf only
    std::function<void(uint8_t*)> fill;
    std::function<void(uint8_t*, size_t, size_t)> fill_range;  // DeferredInPieces only
    size_t unit = 0;
    std::once_flag once;
    std::atomic<bool> done{false};
  };
  const uint8_t* Materialized() const;

  mutable const uint8_t* data_;  // written once, under lazy_->once
  std::unique_ptr<Lazy> lazy_;
  size_t size_;
  StaticDataOrigin origin_;
  mutable std::shared_ptr<void> keepalive_;  // owned vector or mapping; null when borrowed
  mutable std::atomic<bool> finite_{false};
  std::string file_path_;  // MapFile only
  uint64_t file_offset_ = 0;
  uint64_t file_dev_ = 0, file_ino_ = 0;  // the mapped file's identity (a file renamed over it is another)
  friend class StaticDataReader;
};

// Bytes of a StaticData copied into a caller's buffer, for a pass that reads
// a weight once in pieces (its ranges, its quantization). A window of a
// mapped file is read from the file (pread) where that is faster than the
// mapping (see ReadThroughMapping): the kernel copies from the page cache
// through its own mapping, so the process's mapping is never touched.
// Reading the page cache through a 4 KiB-page user mapping costs a TLB miss
// per page, and a fault per 16 pages on the first pass; on virtual machines
// with shadow page tables that made it 4x slower than pread on an AMD VM
// (3.8 against 16 GB/s on an LLM's 3.4 GB of weights), and the pages count
// in the process's RSS. Any other data, or a file that can no longer be opened or
// read whole, or another file now at its path, is copied from memory (the
// same bytes). Thread-safe: pread keeps no file position.
class StaticDataReader {
 public:
  explicit StaticDataReader(const StaticData& data);
  ~StaticDataReader();
  StaticDataReader(const StaticDataReader&) = delete;
  StaticDataReader& operator=(const StaticDataReader&) = delete;

  // `count` runs of `run` bytes, run i starting at byte begin + i * stride
  // of the data, back to back into `out`. The runs must lie inside the data.
  void ReadRuns(size_t begin, size_t run, size_t stride, size_t count, uint8_t* out) const;
  void Read(size_t begin, size_t bytes, uint8_t* out) const { ReadRuns(begin, bytes, bytes, 1, out); }
  // Whether reads go to the file (else they copy from the mapping).
  bool from_file() const { return fd_ >= 0 && !through_mapping_; }
  // The mapped file, opened and checked to be the same file (device and
  // inode) and still long enough; -1 when there is none (a file-to-file
  // copy may use it even when reads go through the mapping).
  int fd() const { return fd_; }

  // How reads of mapped files are made, for the whole process: timed once
  // on the first file large enough (the default; QAIRT_FILE_READS=pread|map
  // in the environment decides instead), or set (tests, benchmarks).
  enum class FileReads { kTimed, kPread, kMapping };
  static void SetFileReads(FileReads how);

 private:
  static bool ReadThroughMapping(const StaticData& data, int fd);

  const StaticData& data_;
  int fd_ = -1;
  bool through_mapping_ = false;
};

// How mapped files are read, set for a scope (a test of one way), then
// timed again.
class ScopedFileReads {
 public:
  explicit ScopedFileReads(StaticDataReader::FileReads how) { StaticDataReader::SetFileReads(how); }
  ~ScopedFileReads() { StaticDataReader::SetFileReads(StaticDataReader::FileReads::kTimed); }
  ScopedFileReads(const ScopedFileReads&) = delete;
  ScopedFileReads& operator=(const ScopedFileReads&) = delete;
};

}  // namespace qairt
