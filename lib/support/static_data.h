// Bytes of a static tensor: owned by the graph, borrowed from the caller, or a
// window into a memory-mapped file. Large weights are never copied: cloning a
// graph shares the same StaticData (it is immutable once created).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "support/status.h"

namespace qairt {

enum class StaticDataOrigin : uint8_t { kOwned, kBorrowed, kMapped };

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

  const uint8_t* data() const { return data_; }
  size_t size() const { return size_; }
  StaticDataOrigin origin() const { return origin_; }
  bool owned() const { return origin_ == StaticDataOrigin::kOwned; }

  StaticData(const uint8_t* data, size_t size, StaticDataOrigin origin, std::shared_ptr<void> keepalive)
      : data_(data), size_(size), origin_(origin), keepalive_(std::move(keepalive)) {}

 private:
  const uint8_t* data_;
  size_t size_;
  StaticDataOrigin origin_;
  std::shared_ptr<void> keepalive_;  // owned vector or mapping; null when borrowed
};

}  // namespace qairt
