// SourceText, Diag formatting, version names, entry field lookup.
#include <fmt/format.h>

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <utility>

#include "encodings/encodings.h"
#include "support/huge_pages.h"

namespace qairt::encodings {

std::string_view VersionName(Version v) {
  switch (v) {
    case Version::kAuto: return "auto";
    case Version::kV0_6_1: return "0.6.1";
    case Version::kV1_0_0: return "1.0.0";
    case Version::kV2_0_0: return "2.0.0";
  }
  return "invalid";
}

std::optional<Version> VersionFromName(std::string_view s) {
  if (s == "2.0.0" || s == "2.0" || s == "2") return Version::kV2_0_0;
  if (s == "1.0.0" || s == "1.0" || s == "1") return Version::kV1_0_0;
  if (s == "0.6.1" || s == "0.6" || s == "0.5.0" || s == "0.5" || s == "0.4.0" || s == "0.4")
    return Version::kV0_6_1;
  if (s == "auto") return Version::kAuto;
  return std::nullopt;
}

namespace {

// Buffers of 1 MiB or more are anonymous mappings with transparent huge pages
// requested: a 100 MB file then takes ~50 page faults instead of ~25k. The
// last one released on a thread is kept for the next file read on it (files up
// to 256 MiB, like the reader's simdjson parser, which keeps ~5x that), so a
// process that reads encodings repeatedly touches warm memory.
constexpr size_t kLargeBuffer = size_t{1} << 20;
constexpr size_t kKeptBufferLimit = size_t{256} << 20;

struct SpareBuffer {
  char* data = nullptr;
  size_t capacity = 0;
  ~SpareBuffer() {
    if (data) ::munmap(data, capacity);
    data = nullptr;
    capacity = SIZE_MAX;  // a text released after this (a static's, at exit) is unmapped, not kept
  }
};
thread_local SpareBuffer t_spare;

}  // namespace

SourceText::SourceText(size_t size) : size_(size) {
  const size_t needed = size + kPadding;
  if (needed >= kLargeBuffer) {
    if (t_spare.data && t_spare.capacity >= needed) {
      data_ = std::exchange(t_spare.data, nullptr);
      capacity_ = std::exchange(t_spare.capacity, 0);
    } else {
      const size_t capacity = RoundUpToHugePages(needed);
      data_ = static_cast<char*>(MapHugePages(capacity));
      if (data_) capacity_ = capacity;
    }
  }
  if (!data_) data_ = new char[needed];  // small, or the mapping failed (then bad_alloc is the caller's to see)
  std::memset(data_ + size, 0, kPadding);  // the bytes are filled by the reader
}

std::shared_ptr<SourceText> SourceText::MapFile(int fd, size_t size) {
  if (size == 0) return nullptr;
  void* p = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
  if (p == MAP_FAILED) return nullptr;
  std::shared_ptr<SourceText> text(new SourceText());
  text->data_ = static_cast<char*>(p);
  text->size_ = size;
  text->mapped_ = true;
  return text;
}

SourceText::~SourceText() {
  if (mapped_) {
    ::munmap(data_, size_);
    return;
  }
  if (!capacity_) {
    delete[] data_;
    return;
  }
  if (capacity_ <= kKeptBufferLimit && capacity_ > t_spare.capacity) {
    std::swap(data_, t_spare.data);
    std::swap(capacity_, t_spare.capacity);
  }
  if (data_) ::munmap(data_, capacity_);
}

std::pair<uint32_t, uint32_t> SourceText::Locate(uint64_t offset) const {
  if (offset > size_) return {0, 0};
  std::call_once(once_, [this] {
    line_starts_.push_back(0);
    const char* base = data();
    const char* p = base;
    const char* end = p + size_;
    while (p < end) {
      const void* nl = std::memchr(p, '\n', static_cast<size_t>(end - p));
      if (!nl) break;
      p = static_cast<const char*>(nl) + 1;
      line_starts_.push_back(static_cast<uint64_t>(p - base));
    }
  });
  auto it = std::upper_bound(line_starts_.begin(), line_starts_.end(), offset);
  const size_t line = static_cast<size_t>(it - line_starts_.begin());  // 1-based
  const uint64_t start = line_starts_[line - 1];
  uint32_t column = 1;
  for (uint64_t i = start; i < offset; ++i)
    if ((static_cast<unsigned char>(data()[i]) & 0xC0) != 0x80) ++column;  // count code points
  return {static_cast<uint32_t>(std::min<size_t>(line, UINT32_MAX)), column};
}

void File::Locate(Diag* d) const {
  if (d->file.empty()) d->file = path;
  if (source && d->offset != Diag::kNoOffset) {
    auto [line, col] = source->Locate(d->offset);
    d->line = line;
    d->column = col;
  }
}

const Entry* File::Find(std::string_view name) const {
  for (const Entry& e : entries)
    if (e.name == name) return &e;
  return nullptr;
}

namespace {
// The keys the formats define ("" names an AIMET 0.6.1 entry's list).
constexpr std::string_view kKnownKeys[] = {
    "name",   "output_dtype", "y_scale",       "y_zero_point",     "axis",         "block_size", "per_channel_float_scale",
    "per_block_int_scale", "index_tensor", "offset", "enc_type", "dtype", "bw", "is_sym", "scale", "compressed_bw",
    "zero_point_shift", "bitwidth", "is_symmetric", ""};
}  // namespace

int FieldOffsets::KeyIndex(std::string_view key) {
  for (size_t i = 0; i < std::size(kKnownKeys); ++i)
    if (kKnownKeys[i] == key) return static_cast<int>(i);
  return -1;
}

std::string_view FieldOffsets::KeyName(int index) {
  return index >= 0 && static_cast<size_t>(index) < std::size(kKnownKeys) ? kKnownKeys[index] : std::string_view();
}

void FieldOffsets::Add(std::string_view key, uint64_t offset) {
  const int k = KeyIndex(key);
  if (k < 0 || size_ == kCapacity) return;
  keys_[size_] = static_cast<uint8_t>(k);
  offsets_[size_++] = offset < kNone ? static_cast<uint32_t>(offset) : kNone;
}

namespace {
// IR field root -> JSON keys that carry it in some format.
const std::vector<std::string_view>* JsonKeysOf(std::string_view root) {
  static const std::pair<std::string_view, std::vector<std::string_view>> kMap[] = {
      {"scales", {"y_scale", "per_channel_float_scale", "scale"}},
      {"offsets", {"y_zero_point", "offset"}},
      {"float_offsets", {"y_zero_point"}},
      {"block_int_scales", {"per_block_int_scale"}},
      {"block_sizes", {"block_size"}},
      {"axis", {"axis"}},
      {"dtype", {"output_dtype", "dtype", "bitwidth", "bw"}},
      {"bitwidth", {"bitwidth", "bw", "compressed_bw"}},
      {"decompressed_bitwidth", {"bw", "compressed_bw"}},
      {"index_tensor", {"index_tensor"}},
      {"symmetry", {"is_symmetric", "is_sym", "y_zero_point", "offset"}},
  };
  for (const auto& [ir, keys] : kMap)
    if (ir == root) return &keys;
  return nullptr;
}

std::string_view RootOf(std::string_view f) {
  if (auto dot = f.rfind('.'); dot != std::string_view::npos) f = f.substr(dot + 1);
  if (auto br = f.find('['); br != std::string_view::npos) f = f.substr(0, br);
  return f;
}
}  // namespace

std::string Entry::JsonField(std::string_view ir_field) const {
  const std::string_view root = RootOf(ir_field);
  if (const auto* keys = JsonKeysOf(root)) {
    for (std::string_view k : *keys)
      for (const auto& [key, off] : field_offsets)
        if (key == k) {
          std::string out(ir_field);
          const size_t pos = out.rfind(std::string(root));
          return out.replace(pos, root.size(), k);
        }
  }
  return std::string(ir_field);
}

uint64_t Entry::FieldOffset(std::string_view ir_field) const {
  // IR field ("offsets[3]", "sub_encodings[1].scales") -> the first JSON key
  // of the entry that carries it.
  if (const auto* keys = JsonKeysOf(RootOf(ir_field)))
    for (std::string_view k : *keys)
      for (const auto& [key, off] : field_offsets)
        if (key == k) return off;
  return offset;
}

}  // namespace qairt::encodings
