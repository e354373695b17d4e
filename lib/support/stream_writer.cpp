#include "support/stream_writer.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include <fmt/format.h>

namespace qairt {
namespace {

constexpr size_t kStageBytes = size_t{8} << 20;
// O_DIRECT's alignment of buffers, offsets and sizes: 4 KiB covers the
// logical block size of the disks and file systems in use (a larger one
// fails the first write with EINVAL, and the page cache takes over).
constexpr size_t kBlock = 4096;

// Stage buffers when writing in the background: two in flight, one being
// filled, one spare.
constexpr size_t kStages = 4;
constexpr size_t kFlushThreads = 2;

// Runs of zeros at least this long are left as holes (sparse files): a
// pruned or padded weight costs no disk, and a weight mapped from a sparse
// file is not written out as gigabytes of zeros. A write of real data leaves
// the check at its first non-zero byte.
constexpr size_t kHoleChunk = size_t{1} << 20;

bool AllZero(const uint8_t* b, size_t n) { return n > 0 && b[0] == 0 && std::memcmp(b, b + 1, n - 1) == 0; }

// How many bytes from `at` (at most `max`) are a hole of file `fd`: 0 where
// data starts there, or where the file system cannot say.
size_t HoleLength(int fd, uint64_t at, size_t max) {
#if defined(__linux__) && defined(SEEK_DATA)
  if (fd < 0 || max == 0) return 0;
  const off_t data = ::lseek(fd, static_cast<off_t>(at), SEEK_DATA);
  if (data < 0) return errno == ENXIO ? max : 0;  // ENXIO: no data after `at`
  return static_cast<uint64_t>(data) <= at ? 0 : static_cast<size_t>(std::min<uint64_t>(max, data - at));
#else
  (void)fd, (void)at, (void)max;
  return 0;
#endif
}

// Writes n bytes at `offset`; 0 or an errno.
int WriteAt(int fd, const uint8_t* b, size_t n, uint64_t offset) {
  while (n > 0) {
    const ssize_t k = ::pwrite(fd, b, n, static_cast<off_t>(offset));
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) return k == 0 ? EIO : errno;
    b += k;
    n -= static_cast<size_t>(k);
    offset += static_cast<uint64_t>(k);
  }
  return 0;
}

}  // namespace

struct StreamWriter::Flusher {
  struct Job {
    uint8_t* bytes;
    uint64_t offset;
    size_t n;
  };
  std::mutex mu;
  std::condition_variable cv;
  std::vector<std::shared_ptr<const StaticData>> keep;  // the stage buffers
  std::vector<uint8_t*> free;                           // not queued, written or being filled
  std::deque<Job> queue;
  size_t in_flight = 0;      // queued or being written
  int error = 0;             // the first errno of a write
  bool stop = false;
  std::vector<std::thread> threads;

  // Waits for the writes in flight, then ends the threads.
  void Shutdown() {
    {
      std::unique_lock<std::mutex> lock(mu);
      cv.wait(lock, [&] { return in_flight == 0; });
      stop = true;
    }
    cv.notify_all();
    for (std::thread& t : threads) t.join();
    threads.clear();
  }

  void Run(int fd) {
    std::unique_lock<std::mutex> lock(mu);
    for (;;) {
      cv.wait(lock, [&] { return stop || !queue.empty(); });
      if (queue.empty()) return;
      const Job job = queue.front();
      queue.pop_front();
      lock.unlock();
      const int err = WriteAt(fd, job.bytes, job.n, job.offset);
      lock.lock();
      if (err != 0 && error == 0) error = err;
      free.push_back(job.bytes);
      --in_flight;
      cv.notify_all();
    }
  }
};

StreamWriter::StreamWriter(int fd, std::string path, std::string what, uint64_t expected)
    : fd_(fd), path_(std::move(path)), what_(std::move(what)) {
  // Holes (and direct writes) need a new, empty regular file written from
  // its start: a seek past a zero run lands at the byte it stands for, and
  // Finish gives the file its size. Anything else gets its zeros written.
  struct stat st;
  may_skip_ = fd_ >= 0 && ::fstat(fd_, &st) == 0 && S_ISREG(st.st_mode) && st.st_size == 0 &&
              ::lseek(fd_, 0, SEEK_CUR) == 0;
#if defined(__linux__) && defined(O_DIRECT)
  if (expected < kDirectFrom || !may_skip_) return;
  flags_ = ::fcntl(fd_, F_GETFL);
  // O_APPEND would send every background pwrite to the end, in whatever
  // order the writes finish.
  if (flags_ < 0 || (flags_ & O_APPEND) != 0 || ::lseek(fd_, 0, SEEK_CUR) != 0) return;
  stage_keep_ = StaticData::Uninitialized(kStageBytes, &stage_);  // 2 MiB-aligned (huge pages)
  if (reinterpret_cast<uintptr_t>(stage_) % kBlock != 0) return;
  direct_ = ::fcntl(fd_, F_SETFL, flags_ | O_DIRECT) == 0;
#else
  (void)expected;
#endif
}

StreamWriter::~StreamWriter() {
  if (flusher_) {
    // The caller's error path (the file is discarded): what is in flight
    // ends, nothing is rewritten or reported.
    flusher_->Shutdown();
  }
  if (flags_ >= 0) (void)::fcntl(fd_, F_SETFL, flags_);
}

bool StreamWriter::StartFlusher() {
  auto f = std::make_unique<Flusher>();
  try {
    f->free.reserve(kStages);
    for (size_t k = 1; k < kStages; ++k) {
      uint8_t* bytes = nullptr;
      f->keep.push_back(StaticData::Uninitialized(kStageBytes, &bytes));
      if (reinterpret_cast<uintptr_t>(bytes) % kBlock != 0) return false;
      f->free.push_back(bytes);
    }
    for (size_t t = 0; t < kFlushThreads; ++t) f->threads.emplace_back([p = f.get(), fd = fd_] { p->Run(fd); });
  } catch (...) {  // no memory or no thread: stages are written in place
    f->Shutdown();
    return false;
  }
  flusher_ = std::move(f);
  return true;
}

Status StreamWriter::HandOff() {
  Flusher& f = *flusher_;
  std::unique_lock<std::mutex> lock(f.mu);
  f.queue.push_back({stage_, on_disk_, staged_});
  ++f.in_flight;
  background_bytes_ += staged_;
  on_disk_ += staged_;
  staged_ = 0;
  f.cv.notify_all();
  f.cv.wait(lock, [&] { return !f.free.empty() || f.error != 0; });
  if (f.error != 0) {
    errno = f.error;
    stage_ = nullptr;
    return Io("write");
  }
  stage_ = f.free.back();
  f.free.pop_back();
  return Status::Ok();
}

Status StreamWriter::StopFlusher() {
  std::unique_ptr<Flusher> f = std::move(flusher_);
  f->Shutdown();
  Status status = Status::Ok();
  if (f->error != 0) {
    errno = f->error;
    status = Io("write");
  }
  // The buffers go with the flusher, but for the one being filled (which
  // may be any of them): it is kept in place of the first.
  if (stage_ != nullptr && stage_keep_ && stage_ != stage_keep_->data()) {
    for (const auto& buffer : f->keep)
      if (buffer->data() == stage_) stage_keep_ = buffer;
  }
  return status;
}

Status StreamWriter::Io(const char* step) {
  // Every later call returns it too: a caller that goes on after an error
  // gets it again, never a crash or a Finish that calls a file with a hole
  // written.
  failed_ = Status(StatusCode::kIoError,
                   fmt::format("cannot write {} '{}': {}: {}", what_, path_, step, std::strerror(errno)));
  return failed_;
}

void StreamWriter::Written(uint64_t k) {
  const uint64_t before = on_disk_;
  on_disk_ += k;
#if defined(__linux__)
  if (direct_) return;
  constexpr uint64_t kWriteback = uint64_t{8} << 20;
  if (on_disk_ / kWriteback != before / kWriteback) {
    const uint64_t to = on_disk_ / kWriteback * kWriteback;
    (void)::sync_file_range(fd_, static_cast<off_t>(to - kWriteback), static_cast<off_t>(kWriteback),
                            SYNC_FILE_RANGE_WRITE);  // a hint: a failure shows in the fsync
  }
#else
  (void)before;
#endif
}

Status StreamWriter::Skip(uint64_t n) {
  if (!may_skip_) {  // a pipe or a file with content: the zeros are written
    alignas(4096) static const uint8_t kZeros[kHoleChunk] = {};
    while (n > 0) {
      const size_t chunk = static_cast<size_t>(std::min<uint64_t>(n, kHoleChunk));
      const ssize_t k = ::write(fd_, kZeros, chunk);
      if (k < 0 && errno == EINTR) continue;
      if (k <= 0) {
        if (k == 0) errno = EIO;
        return Io("write");
      }
      n -= static_cast<uint64_t>(k);
      Written(static_cast<uint64_t>(k));
    }
    return Status::Ok();
  }
  // The descriptor's position moves past the hole (in-place writes go there;
  // background ones carry their offsets). Finish gives the file its size.
  on_disk_ += n;
  hole_bytes_ += n;
  holes_ = true;
  if (::lseek(fd_, static_cast<off_t>(on_disk_), SEEK_SET) < 0) return Io("seek");
  return Status::Ok();
}

Status StreamWriter::WriteThrough(const void* bytes, size_t n) {
  const auto* b = static_cast<const uint8_t*>(bytes);
  while (n > 0) {
    const size_t chunk = std::min(n, kHoleChunk);
    if (chunk == kHoleChunk && AllZero(b, chunk)) {
      QAIRT_RETURN_IF_ERROR(Skip(chunk));
      b += chunk;
      n -= chunk;
      continue;
    }
    const ssize_t k = ::write(fd_, b, chunk);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) {
      if (k == 0) errno = EIO;  // nothing written and no error: would loop forever
      return Io("write");
    }
    b += k;
    n -= static_cast<size_t>(k);
    Written(static_cast<uint64_t>(k));
  }
  return Status::Ok();
}

Status StreamWriter::LeaveDirect() {
  direct_ = false;
  if (::fcntl(fd_, F_SETFL, flags_) != 0) return Io("fcntl");
  // What was staged goes through the page cache.
  const size_t n = staged_;
  staged_ = 0;
  return WriteThrough(stage_, n);
}

Status StreamWriter::FlushFullStage() {
  // The first stage is written in place: a file system that refuses
  // O_DIRECT says so there (EINVAL), and the rest goes through the page
  // cache; once one direct write went through, the same writes are made in
  // the background, and any failure there is an error.
  if (AllZero(stage_, kStageBytes)) {
    staged_ = 0;
    return Skip(kStageBytes);
  }
  if (!direct_proven_) return FlushStage(kStageBytes);
  if (!flusher_failed_ && (flusher_ || StartFlusher())) return HandOff();
  flusher_failed_ = true;  // no memory or no thread for it
  return FlushStage(kStageBytes);
}

Status StreamWriter::FlushStage(size_t n) {
  size_t done = 0;
  while (done < n) {
    const ssize_t k = ::write(fd_, stage_ + done, n - done);
    if (k < 0 && errno == EINTR) continue;
    if (k < 0 && errno == EINVAL) {
      // O_DIRECT refused (alignment, or a file system without it): the
      // rest of the stage, and all that follows, through the page cache.
      std::memmove(stage_, stage_ + done, staged_ - done);
      staged_ -= done;
      return LeaveDirect();
    }
    if (k <= 0) {
      if (k == 0) errno = EIO;  // nothing written and no error: would loop forever
      return Io("write");
    }
    done += static_cast<size_t>(k);
    direct_proven_ = true;
    Written(static_cast<uint64_t>(k));
    if (done < n && done % kBlock != 0) {
      // A short write off the block grid: the rest cannot be written direct.
      std::memmove(stage_, stage_ + done, staged_ - done);
      staged_ -= done;
      return LeaveDirect();
    }
  }
  std::memmove(stage_, stage_ + n, staged_ - std::min(n, staged_));
  staged_ -= std::min(n, staged_);
  return Status::Ok();
}

Status StreamWriter::Write(const void* bytes, size_t n) {
  if (!failed_.ok()) return failed_;
  if (!direct_) {
    written_ += n;
    return WriteThrough(bytes, n);
  }
  const auto* b = static_cast<const uint8_t*>(bytes);
  while (n > 0) {
    const size_t take = std::min(n, kStageBytes - staged_);
    std::memcpy(stage_ + staged_, b, take);
    staged_ += take;
    written_ += take;
    b += take;
    n -= take;
    if (staged_ == kStageBytes) QAIRT_RETURN_IF_ERROR(FlushFullStage());
    if (!direct_) return Write(b, n);
  }
  return Status::Ok();
}

Status StreamWriter::WriteData(const StaticData& data, size_t begin, size_t end) {
  if (!failed_.ok()) return failed_;
  if (begin >= end) return Status::Ok();
  if (data.file_path().empty()) return Write(data.data() + begin, end - begin);
  if (direct_) {
    const StaticDataReader reader(data);
    while (begin < end) {
      const size_t take = std::min(end - begin, kStageBytes - staged_);
      // The source's holes are not read: whole stages of them stay holes,
      // a part of a stage is zeros.
      const size_t hole = HoleLength(reader.fd(), data.file_offset() + begin, end - begin);
      if (staged_ == 0 && hole >= kStageBytes) {
        const size_t stages = hole / kStageBytes * kStageBytes;
        QAIRT_RETURN_IF_ERROR(Skip(stages));
        begin += stages;
        written_ += stages;
        continue;
      }
      if (hole >= take) {
        std::memset(stage_ + staged_, 0, take);
      } else {
        reader.Read(begin, take, stage_ + staged_);
      }
      staged_ += take;
      written_ += take;
      begin += take;
      if (staged_ == kStageBytes) QAIRT_RETURN_IF_ERROR(FlushFullStage());
      if (!direct_) return WriteData(data, begin, end);
    }
    return Status::Ok();
  }
#if defined(__linux__)
  // File to file in the kernel, from the reader's descriptor: the file that
  // was mapped, not whatever is at its path now (a save over the file it was
  // loaded from renames a new file there). What it does not copy (another
  // file system on an old kernel, a file that is gone or replaced) is
  // written from the mapping: the same bytes.
  // The source's holes (a sparse file) stay holes here: only its data
  // extents are copied.
  const StaticDataReader reader(data);
  if (reader.fd() >= 0) {
    const auto base = static_cast<loff_t>(data.file_offset());
    while (begin < end) {
      const loff_t at = base + static_cast<loff_t>(begin);
      const size_t left = end - begin;
      const size_t hole = HoleLength(reader.fd(), static_cast<uint64_t>(at), left);
      if (hole >= kHoleChunk) {
        QAIRT_RETURN_IF_ERROR(Skip(hole));
        begin += hole;
        written_ += hole;
        continue;
      }
      // The extent that follows, with a short hole before it (copied as
      // data); at least a chunk, so a run of short extents moves on.
      const off_t data_to = ::lseek(reader.fd(), at + static_cast<loff_t>(hole), SEEK_HOLE);
      size_t take = data_to > at ? std::min(left, static_cast<size_t>(data_to - at)) : left;
      take = std::max(take, std::min(left, kHoleChunk));
      auto from = at;
      const ssize_t k = ::copy_file_range(reader.fd(), &from, fd_, nullptr, take, 0);
      if (k < 0 && errno == EINTR) continue;
      if (k <= 0) break;
      begin += static_cast<size_t>(k);
      written_ += static_cast<uint64_t>(k);
      Written(static_cast<uint64_t>(k));
    }
  }
#endif
  return Write(data.data() + begin, end - begin);
}

Status StreamWriter::Finish() {
  if (!failed_.ok()) return failed_;
  if (flusher_) {
    // The stages in flight end first; the tail is written in place at its
    // offset (the background writes never moved the descriptor's position).
    QAIRT_RETURN_IF_ERROR(StopFlusher());
    if (::lseek(fd_, static_cast<off_t>(on_disk_), SEEK_SET) < 0) return Io("seek");
    if (!direct_ && staged_ > 0) QAIRT_RETURN_IF_ERROR(WriteThrough(stage_, std::exchange(staged_, 0)));
  }
  if (direct_ && staged_ > 0) {
    // The tail padded to a block, then the file cut back to its size.
    const size_t padded = (staged_ + kBlock - 1) / kBlock * kBlock;
    std::memset(stage_ + staged_, 0, padded - staged_);
    staged_ = padded;
    QAIRT_RETURN_IF_ERROR(FlushStage(padded));
    // The file cut back to its bytes, and the position at its end.
    if (::ftruncate(fd_, static_cast<off_t>(written_)) != 0) return Io("truncate");
    if (::lseek(fd_, static_cast<off_t>(written_), SEEK_SET) < 0) return Io("seek");
  }
  if (holes_) {
    // A hole at the end has no bytes to give the file its size.
    if (::ftruncate(fd_, static_cast<off_t>(written_)) != 0) return Io("truncate");
    if (::lseek(fd_, static_cast<off_t>(written_), SEEK_SET) < 0) return Io("seek");
  }
  if (flags_ >= 0 && ::fcntl(fd_, F_SETFL, flags_) != 0) return Io("fcntl");
  flags_ = -1;
  direct_ = false;
  return Status::Ok();
}

}  // namespace qairt
