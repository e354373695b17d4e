#include "support/stream_writer.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <fmt/format.h>

namespace qairt {
namespace {

constexpr size_t kStageBytes = size_t{8} << 20;
// O_DIRECT's alignment of buffers, offsets and sizes: 4 KiB covers the
// logical block size of the disks and file systems in use (a larger one
// fails the first write with EINVAL, and the page cache takes over).
constexpr size_t kBlock = 4096;

}  // namespace

StreamWriter::StreamWriter(int fd, std::string path, std::string what, uint64_t expected)
    : fd_(fd), path_(std::move(path)), what_(std::move(what)) {
#if defined(__linux__) && defined(O_DIRECT)
  if (expected < kDirectFrom || fd_ < 0) return;
  flags_ = ::fcntl(fd_, F_GETFL);
  if (flags_ < 0 || ::lseek(fd_, 0, SEEK_CUR) != 0) return;
  stage_keep_ = StaticData::Uninitialized(kStageBytes, &stage_);  // 2 MiB-aligned (huge pages)
  if (reinterpret_cast<uintptr_t>(stage_) % kBlock != 0) return;
  direct_ = ::fcntl(fd_, F_SETFL, flags_ | O_DIRECT) == 0;
#else
  (void)expected;
#endif
}

StreamWriter::~StreamWriter() {
  if (flags_ >= 0) (void)::fcntl(fd_, F_SETFL, flags_);
}

Status StreamWriter::Io(const char* step) const {
  return Status(StatusCode::kIoError,
                fmt::format("cannot write {} '{}': {}: {}", what_, path_, step, std::strerror(errno)));
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

Status StreamWriter::WriteThrough(const void* bytes, size_t n) {
  const auto* b = static_cast<const uint8_t*>(bytes);
  while (n > 0) {
    const ssize_t k = ::write(fd_, b, std::min<size_t>(n, size_t{1} << 30));
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
    if (staged_ == kStageBytes) QAIRT_RETURN_IF_ERROR(FlushStage(kStageBytes));
    if (!direct_) return Write(b, n);
  }
  return Status::Ok();
}

Status StreamWriter::WriteData(const StaticData& data, size_t begin, size_t end) {
  if (begin >= end) return Status::Ok();
  if (data.file_path().empty()) return Write(data.data() + begin, end - begin);
  if (direct_) {
    const StaticDataReader reader(data);
    while (begin < end) {
      const size_t take = std::min(end - begin, kStageBytes - staged_);
      reader.Read(begin, take, stage_ + staged_);
      staged_ += take;
      written_ += take;
      begin += take;
      if (staged_ == kStageBytes) QAIRT_RETURN_IF_ERROR(FlushStage(kStageBytes));
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
  const StaticDataReader reader(data);
  if (reader.fd() >= 0) {
    auto from = static_cast<loff_t>(data.file_offset() + begin);
    while (begin < end) {
      const ssize_t k = ::copy_file_range(reader.fd(), &from, fd_, nullptr, end - begin, 0);
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
  if (flags_ >= 0 && ::fcntl(fd_, F_SETFL, flags_) != 0) return Io("fcntl");
  flags_ = -1;
  direct_ = false;
  return Status::Ok();
}

}  // namespace qairt
