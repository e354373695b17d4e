#include "support/static_data.h"

#include "support/huge_pages.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>
#include <vector>

namespace qairt {
namespace {

// Owns one read-only mapping of a whole file.
struct Mapping {
  void* base = MAP_FAILED;
  size_t length = 0;
  ~Mapping() {
    if (base == MAP_FAILED || length == 0) return;
    // Pages dropped first: that takes the address space's lock for reading,
    // so mappings released on several threads drop theirs in parallel, where
    // munmap alone holds it for writing (qairt_graph_destroy of an LLM).
    if (length >= kParallelReleaseFrom) (void)madvise(base, length, MADV_DONTNEED);
    munmap(base, length);
  }
  static constexpr size_t kParallelReleaseFrom = size_t{1} << 20;
};

}  // namespace

std::shared_ptr<const StaticData> StaticData::Copy(const void* data, size_t size) {
  auto bytes = std::make_shared<std::vector<uint8_t>>(size);
  if (size != 0) std::memcpy(bytes->data(), data, size);
  const uint8_t* ptr = bytes->data();
  return std::make_shared<const StaticData>(ptr, size, StaticDataOrigin::kOwned, std::move(bytes));
}

std::shared_ptr<const StaticData> StaticData::Adopt(std::vector<uint8_t>&& bytes) {
  auto owned = std::make_shared<std::vector<uint8_t>>(std::move(bytes));
  const uint8_t* ptr = owned->data();
  const size_t size = owned->size();
  return std::make_shared<const StaticData>(ptr, size, StaticDataOrigin::kOwned, std::move(owned));
}

std::shared_ptr<const StaticData> StaticData::Uninitialized(size_t size, uint8_t** writable) {
  // From 2 MiB: an anonymous mapping with transparent huge pages requested,
  // so filling a 256 MB weight takes ~128 page faults instead of ~65k (each
  // a kernel entry and a page cleared). Smaller: new[] of a trivial type,
  // which leaves the bytes uninitialized (a vector would zero them).
  if (size >= kHugePageBytes) {
    const size_t capacity = RoundUpToHugePages(size);
    if (void* p = MapHugePages(capacity)) {
      auto mapping = std::make_shared<Mapping>();
      mapping->base = p;
      mapping->length = capacity;
      *writable = static_cast<uint8_t*>(p);
      return std::make_shared<const StaticData>(*writable, size, StaticDataOrigin::kOwned, std::move(mapping));
    }
  }
  // Cache-line aligned: kernels write whole lines of it with non-temporal
  // stores only where a line starts.
  constexpr std::align_val_t kLine{64};
  std::shared_ptr<uint8_t[]> buffer(new (kLine) uint8_t[size > 0 ? size : 1],
                                    [](uint8_t* p) { ::operator delete[](p, kLine); });
  *writable = buffer.get();
  return std::make_shared<const StaticData>(buffer.get(), size, StaticDataOrigin::kOwned, std::move(buffer));
}

std::shared_ptr<const StaticData> StaticData::TransposeOf(
    std::shared_ptr<const StaticData> source, size_t elem, int64_t rows, int64_t cols,
    std::function<void(const uint8_t* in, uint8_t* out)> transpose) {
  const size_t size = source->size();
  auto view = std::make_shared<StaticData>(nullptr, size, StaticDataOrigin::kOwned, nullptr);
  view->lazy_ = std::make_unique<Lazy>();
  view->lazy_->view = std::make_unique<StaticTransposition>(StaticTransposition{source, elem, rows, cols});
  // The function holds the source through the view it belongs to.
  const StaticData* src = source.get();
  view->lazy_->fill = [src, transpose = std::move(transpose)](uint8_t* out) { transpose(src->data(), out); };
  return view;
}

std::shared_ptr<const StaticData> StaticData::Deferred(size_t size, std::function<void(uint8_t* out)> fill) {
  auto data = std::make_shared<StaticData>(nullptr, size, StaticDataOrigin::kOwned, nullptr);
  data->lazy_ = std::make_unique<Lazy>();
  data->lazy_->fill = std::move(fill);
  return data;
}

std::shared_ptr<const StaticData> StaticData::DeferredInPieces(
    size_t size, size_t unit, std::function<void(uint8_t* out, size_t begin, size_t end)> fill_range) {
  auto data = std::make_shared<StaticData>(nullptr, size, StaticDataOrigin::kOwned, nullptr);
  data->lazy_ = std::make_unique<Lazy>();
  data->lazy_->fill_range = std::move(fill_range);
  data->lazy_->unit = unit ? unit : 1;
  // The whole is the one piece (the function lives in the data it points to).
  data->lazy_->fill = [raw = data.get(), size](uint8_t* out) { raw->lazy_->fill_range(out, 0, size); };
  return data;
}

const uint8_t* StaticData::Materialized() const {
  std::call_once(lazy_->once, [this] {
    uint8_t* out = nullptr;
    auto bytes = Uninitialized(size_, &out);
    lazy_->fill(out);
    data_ = out;
    keepalive_ = std::const_pointer_cast<StaticData>(bytes);
    lazy_->done.store(true, std::memory_order_release);
  });
  return data_;
}

void StaticData::CopyTo(uint8_t* out) const {
  if (lazy_ && !materialized()) {
    lazy_->fill(out);
    return;
  }
  if (size_ != 0) std::memcpy(out, data(), size_);
}

void StaticData::CopyRangeTo(uint8_t* out, size_t begin, size_t end) const {
  if (begin >= end) return;
  if (lazy_ && !materialized()) {
    if (lazy_->fill_range) {
      lazy_->fill_range(out, begin, end);
      return;
    }
    if (begin == 0 && end == size_) {
      lazy_->fill(out);
      return;
    }
  }
  std::memcpy(out, data() + begin, end - begin);
}

std::shared_ptr<const StaticData> StaticData::Borrow(const void* data, size_t size) {
  return std::make_shared<const StaticData>(static_cast<const uint8_t*>(data), size, StaticDataOrigin::kBorrowed,
                                            nullptr);
}

Result<std::shared_ptr<const StaticData>> StaticData::MapFile(const std::string& path, uint64_t offset,
                                                              uint64_t length) {
  // O_NONBLOCK: a FIFO (or a device) given as a file must fail below, not
  // block the caller in open() until some writer appears.
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return Error(StatusCode::kIoError, "failed to open '{}': {}", path, std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    int err = errno;
    ::close(fd);
    return Error(StatusCode::kIoError, "failed to stat '{}': {}", path, std::strerror(err));
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    return Error(StatusCode::kIoError, "'{}' is not a regular file", path);
  }
  const uint64_t file_size = static_cast<uint64_t>(st.st_size);
  if (offset > file_size || length > file_size - offset) {
    ::close(fd);
    return Error(StatusCode::kInvalidArgument,
                 "failed to map '{}' with offset={} length={}: the file has only {} bytes", path, offset, length,
                 file_size);
  }
  auto mapping = std::make_shared<Mapping>();
  if (file_size != 0) {
    mapping->base = ::mmap(nullptr, file_size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (mapping->base == MAP_FAILED) {
      int err = errno;
      ::close(fd);
      return Error(StatusCode::kIoError, "failed to map '{}': {}", path, std::strerror(err));
    }
    mapping->length = file_size;
  }
  ::close(fd);  // the mapping stays valid after close
  const uint8_t* base = file_size != 0 ? static_cast<const uint8_t*>(mapping->base) + offset : nullptr;
  auto data = std::make_shared<StaticData>(base, static_cast<size_t>(length), StaticDataOrigin::kMapped,
                                           std::move(mapping));
  data->file_path_ = path;
  data->file_offset_ = offset;
  data->file_dev_ = static_cast<uint64_t>(st.st_dev);
  data->file_ino_ = static_cast<uint64_t>(st.st_ino);
  return std::shared_ptr<const StaticData>(std::move(data));
}

namespace {

// How mapped files are read, decided once per process: 0 undecided, 1 pread,
// 2 through the mapping.
std::atomic<int> file_reads{0};

// Seconds to reduce `n` bytes at `p` (what a kernel does with a band).
double ReduceSeconds(const uint8_t* p, size_t n) {
  const auto t0 = std::chrono::steady_clock::now();
  uint64_t acc = 0;
  for (size_t i = 0; i + 8 <= n; i += 8) {
    uint64_t v;
    std::memcpy(&v, p + i, 8);
    acc ^= v;
  }
  const auto t1 = std::chrono::steady_clock::now();
  volatile uint64_t sink = acc;
  (void)sink;
  return std::chrono::duration<double>(t1 - t0).count();
}

// Which way reads a mapped file faster here, timed on `data` (at least
// 4 probe regions long): each region read twice, as convert reads every
// weight (its range, then its quantization; calibration reads them once per
// sample): a pread of a region into a buffer and its reduction, twice,
// against the reduction of another region through the mapping, twice (the
// first with its page faults, the second without), interleaved, the best of
// two trials kept. Where the page cache holds large folios and the CPU
// walks page tables in hardware, the mapping needs no copy (1.0-1.1 against
// 1.25-1.33 s for an LLM's 3.4 GB of weights on a 2-vCPU Intel VM); under
// shadow page tables each 4 KiB page costs a TLB miss and a fault per 16
// pages (4x slower than pread on an AMD VM). A single read would weigh the
// first touch's faults alone and pick pread on that Intel VM half the time.
// Either way gives the same bytes.
// 0 when a pread fails (the file cut short since it was checked): nothing
// is decided, and this reader reads the mapping.
int ProbeMappingFaster(const StaticData& data, int fd) {
  constexpr size_t kRegion = size_t{2} << 20;
  std::vector<uint8_t> buf(kRegion, 1);
  auto read_region = [&](size_t at) {
    for (size_t done = 0; done < kRegion;) {
      const ssize_t k =
          ::pread(fd, buf.data() + done, kRegion - done, static_cast<off_t>(data.file_offset() + at + done));
      if (k < 0 && errno == EINTR) continue;
      if (k <= 0) return false;
      done += static_cast<size_t>(k);
    }
    return true;
  };
  // Every region in the page cache first (untimed): on a cold file the disk
  // would be timed, and one side's readahead would warm the other's region.
  for (size_t r = 0; r < 4; ++r)
    if (!read_region(r * kRegion)) return 0;
  double pread_best = 1e9, map_best = 1e9;
  for (size_t trial = 0; trial < 2; ++trial) {
    const size_t at_read = (2 * trial) * kRegion, at_map = (2 * trial + 1) * kRegion;
    double pread_seconds = 0;
    for (int read = 0; read < 2; ++read) {
      const auto t0 = std::chrono::steady_clock::now();
      if (!read_region(at_read)) return 0;
      pread_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() +
                       ReduceSeconds(buf.data(), kRegion);
    }
    pread_best = std::min(pread_best, pread_seconds);
    map_best = std::min(map_best, ReduceSeconds(data.data() + at_map, kRegion) +
                                      ReduceSeconds(data.data() + at_map, kRegion));
  }
  return map_best < pread_best ? 2 : 1;
}

}  // namespace

void StaticDataReader::SetFileReads(FileReads how) {
  file_reads.store(how == FileReads::kPread ? 1 : how == FileReads::kMapping ? 2 : 0, std::memory_order_release);
}

bool StaticDataReader::ReadThroughMapping(const StaticData& data, int fd) {
  int choice = file_reads.load(std::memory_order_acquire);
  if (choice == 0) {
    if (const char* forced = std::getenv("QAIRT_FILE_READS")) {
      if (std::strcmp(forced, "pread") == 0) choice = 1;
      if (std::strcmp(forced, "map") == 0) choice = 2;
    }
  }
  if (choice == 0) {
    // Too small to time: pread, undecided.
    if (data.size() < 4 * (size_t{2} << 20)) return false;
    static std::mutex probing;
    const std::lock_guard<std::mutex> lock(probing);
    choice = file_reads.load(std::memory_order_acquire);
    if (choice != 0) return choice == 2;
    choice = ProbeMappingFaster(data, fd);
    if (choice == 0) return true;  // undecided; this reader reads the mapping
    // Unless set meanwhile (SetFileReads wins).
    int undecided = 0;
    if (!file_reads.compare_exchange_strong(undecided, choice, std::memory_order_acq_rel)) return undecided == 2;
    return choice == 2;
  }
  return choice == 2;
}

StaticDataReader::StaticDataReader(const StaticData& data) : data_(data) {
  // A file that is gone or now a different kind of file: read the mapping.
  if (data.origin() != StaticDataOrigin::kMapped || data.file_path().empty() || data.size() == 0) return;
  fd_ = ::open(data.file_path().c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd_ < 0) return;
  struct stat st {};
  if (::fstat(fd_, &st) != 0 || !S_ISREG(st.st_mode) || static_cast<uint64_t>(st.st_dev) != data.file_dev_ ||
      static_cast<uint64_t>(st.st_ino) != data.file_ino_ ||
      static_cast<uint64_t>(st.st_size) < data.file_offset() + data.size()) {
    ::close(fd_);
    fd_ = -1;
    return;
  }
  through_mapping_ = ReadThroughMapping(data, fd_);
}

StaticDataReader::~StaticDataReader() {
  if (fd_ >= 0) ::close(fd_);
}

void StaticDataReader::ReadRuns(size_t begin, size_t run, size_t stride, size_t count, uint8_t* out) const {
  for (size_t i = 0; i < count; ++i) {
    const size_t at = begin + i * stride;
    uint8_t* to = out + i * run;
    size_t done = 0;
    while (fd_ >= 0 && !through_mapping_ && done < run) {
      const ssize_t k = ::pread(fd_, to + done, run - done, static_cast<off_t>(data_.file_offset() + at + done));
      if (k > 0) {
        done += static_cast<size_t>(k);
      } else if (k < 0 && errno == EINTR) {
        continue;
      } else {
        // An error, or the file cut short since it was opened: the rest
        // from the mapping (pages past a truncated end would fault there,
        // as they would for any reader of the mapping).
        break;
      }
    }
    if (done < run) std::memcpy(to + done, data_.data() + at + done, run - done);
  }
}

}  // namespace qairt
