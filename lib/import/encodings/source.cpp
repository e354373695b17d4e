// SourceText, Diag formatting, version names, entry field lookup.
#include <fmt/format.h>

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "import/encodings/encodings.h"

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

SourceText::SourceText(size_t size) : data_(new char[size + kPadding]), size_(size) {
  std::memset(data_.get() + size, 0, kPadding);  // the bytes are filled by the reader
}

std::shared_ptr<SourceText> SourceText::Map(int fd, size_t size) {
  const auto page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  if (size == 0 || page == 0) return nullptr;
  const size_t tail = size % page;
  if (tail == 0 || page - tail < kPadding) return nullptr;  // no room for the padding inside the last page
  const size_t length = size + (page - tail);
  void* p = ::mmap(nullptr, length, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
  if (p == MAP_FAILED) return nullptr;
  std::shared_ptr<SourceText> s(new SourceText());
  s->mapped_ = static_cast<const char*>(p);
  s->map_length_ = length;
  s->size_ = size;
  return s;
}

SourceText::~SourceText() {
  if (mapped_) ::munmap(const_cast<char*>(mapped_), map_length_);
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

std::string Diag::Format() const {
  std::string s = file.empty() ? std::string("<encodings>") : file;
  if (line) s += fmt::format(":{}:{}", line, column);
  s += severity == Severity::kError ? ": error: " : severity == Severity::kWarning ? ": warning: " : ": note: ";
  if (!tensor.empty()) s += fmt::format("tensor '{}': ", tensor);
  if (!field.empty()) s += fmt::format("field '{}': ", field);
  s += message;
  if (!suggestion.empty()) s += fmt::format(" (did you mean '{}'?)", suggestion);
  return s;
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
