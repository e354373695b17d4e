// Encodings reader: simdjson on-demand over the file's bytes, one pass per
// entry, every value type-checked and every problem located (file:line:col,
// tensor, JSON field).
//
// simdjson's on-demand API neither rejects duplicate keys nor validates values
// it skips, so this reader walks every object itself: duplicate keys are
// errors (simdjson keeps the first, Python the last: a parser differential),
// unknown keys are warnings and their values are still validated.
//
// This file holds the entry points and the dialect dispatcher; the dialects
// are read in reader_v2.cpp (QAIRT 2.0.0), reader_aimet_v1.cpp (AIMET 1.0.0)
// and reader_legacy.cpp (AIMET 0.4 / 0.5 / 0.6.1), on the shared JSON layer
// (reader_json.cpp) and checks (reader_checks.cpp) declared in
// reader_internal.h.
#include <fmt/format.h>
#include <simdjson.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include "encodings/encodings.h"
#include "support/huge_pages.h"
#include "encodings/reader_internal.h"
#include "support/shares.h"

namespace qairt::encodings {
namespace reader_internal {

static_assert(SourceText::kPadding >= simdjson::SIMDJSON_PADDING);
static_assert(std::is_nothrow_move_constructible_v<Entry>);

// ---------------------------------------------------------------------------
// Top level
// ---------------------------------------------------------------------------

void Reader::ReadTopObject() {
  // Pass 1: the keys and "version" (AIMET sorts keys, so "version" often
  // comes last); the values are skipped.
  KeySet keys;
  std::string version;
  uint64_t version_off = Diag::kNoOffset;
  bool has_encodings = false, has_sections = false, sections_are_lists = false, sections_are_objects = false;
  // Duplicates are reported, yet still read: a second "version" is checked too.
  ForEachMember(doc_, [&](std::string_view key, uint64_t key_off, od::value& val) {
    CheckDuplicate(&keys, key, key_off, "");
    if (key == "version") {
      version_off = Off(val);
      GetString(val, "", "version", &version);
    } else if (key == "encodings") {
      has_encodings = true;
    } else if (key == "activation_encodings" || key == "param_encodings") {
      has_sections = true;
      od::json_type t;
      if (!val.type().get(t)) {
        sections_are_lists |= t == od::json_type::array;
        sections_are_objects |= t == od::json_type::object;
      }
    }
  });
  if (errors_) return;  // duplicate top-level keys or a bad version: nothing is trustworthy
  Version detected = Version::kAuto;
  if (!version.empty()) {
    auto v = VersionFromName(version);
    if (!v || *v == Version::kAuto) {
      Add(Severity::kError, "version", version_off, "", "version",
          "unsupported version \"{}\": expected 0.4.0, 0.5.0, 0.6.1, 1.0.0 or 2.0.0", version);
      return;
    }
    detected = *v;
  } else if (has_encodings) {
    detected = Version::kV2_0_0;
    Add(Severity::kWarning, "version", 0, "", "version",
        "no \"version\": read as 2.0.0 because of the \"encodings\" list (QAIRT falls back to the legacy format "
        "without it)");
  } else if (has_sections) {
    detected = sections_are_lists && !sections_are_objects ? Version::kV1_0_0 : Version::kV0_6_1;
    if (detected == Version::kV1_0_0)
      Add(Severity::kWarning, "version", 0, "", "version", "no \"version\": read as 1.0.0 (the sections are lists)");
  } else {
    Add(Severity::kError, "version", 0, "", "",
        "not an encodings file: expected {{\"version\": \"2.0.0\", \"encodings\": [...]}} or "
        "\"activation_encodings\"/\"param_encodings\" (AIMET)");
    return;
  }
  Version use = detected;
  if (opt_.version != Version::kAuto) {
    use = opt_.version;
    if (use != detected)
      Add(Severity::kWarning, "version", version_off == Diag::kNoOffset ? 0 : version_off, "", "version",
          "read as {} as requested, although the file looks like {}", VersionName(use), VersionName(detected));
  }
  file_.version = use;
  file_.version_string = version;

  // Pass 2: the entries.
  doc_.rewind();
  ForEachMember(doc_, [&](std::string_view key, uint64_t key_off, od::value& val) {
    if (key == "version") return;
    if (use == Version::kV2_0_0) {
      if (key == "encodings") {
        ReadV2List(val);
      } else if (key == "quantizer_args" || key == "excluded_layers" || key == "producer") {
        Validate(val, 1, "", key);
      } else {
        UnknownKey(key, key_off, "", val, "version, encodings, quantizer_args");
      }
    } else {
      const bool v1 = use == Version::kV1_0_0;
      if (key == "activation_encodings" || key == "param_encodings") {
        const Section s = key == "param_encodings" ? Section::kParam : Section::kActivation;
        if (v1) ReadV1Section(val, s);
        else ReadLegacySection(val, s);
      } else if (key == "quantizer_args" || key == "excluded_layers" || key == "producer") {
        Validate(val, 1, "", key);
      } else {
        UnknownKey(key, key_off, "", val,
                   "version, activation_encodings, param_encodings, quantizer_args, excluded_layers");
      }
    }
  });
}

bool Reader::WindowedCandidate(uint64_t size, const ReadOptions& opt) {
  return opt.window_bytes && size >= 4 * opt.window_bytes && opt.version != Version::kV0_6_1 &&
         opt.version != Version::kV1_0_0;
}

Result<File> Reader::Run() {
  if (auto r = RunWindowed()) return std::move(*r);
  return RunWhole();
}

std::optional<Result<File>> Reader::RunWindowed(WindowSink* sink) {
  file_.path = name_;
  const size_t size = src_->size();
  auto fail = [&](const char* code, std::string msg) -> Status {
    Add(Severity::kError, code, size ? 0 : Diag::kNoOffset, "", "", "{}", msg);
    return Status(StatusCode::kParseError, fmt::format("{}: {}", name_, msg));
  };
  if (size == 0) return fail("json-syntax", "empty file: expected a JSON encodings document");
  if (size > opt_.max_bytes)
    return fail("file-size", fmt::format("file is {} bytes, above the limit of {} bytes", size, opt_.max_bytes));
  const auto* u = reinterpret_cast<const unsigned char*>(src_->data());
  if (size >= 3 && u[0] == 0xEF && u[1] == 0xBB && u[2] == 0xBF)
    return fail("file-encoding",
                "file starts with a UTF-8 byte order mark, which JSON forbids (RFC 8259 §8.1; Python's json rejects "
                "it too): save the file without BOM");
  if (size >= 2 && ((u[0] == 0xFF && u[1] == 0xFE) || (u[0] == 0xFE && u[1] == 0xFF) || u[0] == 0 ||
                    (size >= 2 && u[1] == 0)))
    return fail("file-encoding", "file is UTF-16 or binary: JSON encodings files must be UTF-8");

  // Large 2.0.0 files window by window; anything else, and any file the
  // windowed read has a problem with, whole (by the caller).
  if (WindowedCandidate(size, opt_)) {
    ListLayout layout;
    if (FindListLayout(src_->data(), size, opt_.window_bytes, &layout, ThreadsFor(opt_.threads, 4))) {
      Diags local;
      Reader skeleton(src_, name_, opt_, &local);
      if (auto r = skeleton.RunSkeleton(layout, sink)) {
        for (Diag& d : local) diags_->push_back(std::move(d));
        return std::move(*r);
      }
    }
  }
  return std::nullopt;
}

size_t Reader::ParserDepth() const {
  // simdjson's own depth limit sits above ours so that the reader's check
  // (a diagnostic) always fires first: on-demand iteration *assumes* it never
  // reaches the parser's max_depth (an assertion in debug builds, undefined
  // behaviour in release ones).
  constexpr size_t kSimdjsonDepthMargin = 8;
  return opt_.max_depth + kSimdjsonDepthMargin;
}

void Reader::ReadDocument() {
  od::json_type t;
  Check(doc_.type().get(t));
  if (t == od::json_type::array) {
    file_.version = opt_.version == Version::kAuto ? Version::kV2_0_0 : opt_.version;
    file_.bare_list = true;
    if (file_.version != Version::kV2_0_0) {
      Add(Severity::kError, "version", 0, "", "",
          "a top-level list is the 2.0.0 format (without wrapper), not {}", VersionName(file_.version));
    } else {
      ForEachElement(doc_, [&](od::value& entry) { ReadV2Entry(entry); });
      if (layout_) ReadWindows();  // a skeleton's bare list is the cut one
    }
  } else if (t == od::json_type::object) {
    ReadTopObject();
  } else {
    Add(Severity::kError, "wrong-type", 0, "", "", "the document must be a JSON object or array");
  }
  const char* rest = nullptr;
  if (errors_ == 0 && !doc_.current_location().get(rest) && rest) {
    const uint64_t off = Off(rest);
    Add(Severity::kError, "json-syntax", off, "", "", "unexpected content after the JSON document");
  }
}

Result<File> Reader::RunWhole() {
  if (!src_->padded()) return Status(StatusCode::kInternal, "encodings reader: an unpadded text parsed whole");
  const size_t size = src_->size();
  const auto* u = reinterpret_cast<const unsigned char*>(src_->data());
  auto fail = [&](const char* code, std::string msg) -> Status {
    Add(Severity::kError, code, size ? 0 : Diag::kNoOffset, "", "", "{}", msg);
    return Status(StatusCode::kParseError, fmt::format("{}: {}", name_, msg));
  };
  // Room for the entries up front: an LLM file has ~200k of them, and growing
  // the vector moves every Entry ~log2(n) times. ~512 bytes per entry is a
  // mid estimate (an activation takes ~120, a blocked weight ~400k).
  file_.entries.reserve(std::min<size_t>(size / 512 + 16, size_t{1} << 22));
  // Written once, front to back: 2 MiB pages (a 100 MB file's ~80 MB of
  // entries is otherwise ~20k page faults, most of a fresh process's parse).
  AdviseHugePages(file_.entries.data(), file_.entries.capacity() * sizeof(Entry));

  // One parser per thread is reused for files up to 256 MiB (its buffers are
  // ~5x the largest file read); bigger files get their own.
  constexpr size_t kReuseLimit = size_t{256} << 20;
  if (size <= kReuseLimit) {
    static thread_local od::parser tl_parser;
    parser_ = &tl_parser;
  } else {
    own_parser_ = std::make_unique<od::parser>();
    parser_ = own_parser_.get();
  }
  const size_t parser_depth = ParserDepth();
  error_code e = simdjson::SUCCESS;
  if (parser_->capacity() < size || parser_->max_depth() != parser_depth)
    e = parser_->allocate(std::max<size_t>(size, 4096), parser_depth);
  if (e) return fail("file-size", fmt::format("cannot allocate the JSON parser: {}", simdjson::error_message(e)));
  e = parser_->iterate(src_->data(), size, size + SourceText::kPadding).get(doc_);
  if (e) {
    if (e == simdjson::UTF8_ERROR) {
      // Locate the first invalid byte for the message.
      size_t i = 0;
      while (i < size) {
        const unsigned char c = u[i];
        size_t n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
        bool ok = n != 0 && i + n <= size;
        for (size_t k = 1; ok && k < n; ++k) ok = (u[i + k] & 0xC0) == 0x80;
        if (!ok) break;
        i += n;
      }
      Add(Severity::kError, "file-encoding", i, "", "", "invalid UTF-8 byte 0x{:02X}", i < size ? u[i] : 0);
      return Status(StatusCode::kParseError,
                    fmt::format("{}: invalid UTF-8 at byte {}", name_, i));
    }
    if (e == simdjson::DEPTH_ERROR)
      return fail("json-depth", fmt::format("JSON nested deeper than {} levels", opt_.max_depth));
    return fail("json-syntax", fmt::format("invalid JSON: {}", simdjson::error_message(e)));
  }
  try {
    ReadDocument();
  } catch (const ParseAbort&) {
    return Status(StatusCode::kParseError, fatal_);
  }
  RemoveDuplicates();
  if (errors_ && !opt_.keep_going) {
    std::string msg = fmt::format("{}: {} error{} in the encodings file", name_, errors_, errors_ > 1 ? "s" : "");
    size_t shown = 0;
    for (const Diag& d : *diags_)
      if (d.severity == Severity::kError && shown++ < 5) msg += "\n  " + d.Format();
    return Status(StatusCode::kParseError, msg);
  }
  file_.source = src_;
  return std::move(file_);
}

}  // namespace reader_internal

using reader_internal::Reader;

namespace {

// Refuses an input before any of it is parsed (unreadable, too large): one
// diagnostic without a location, and the matching status.
Status Refuse(Diags* diags, StatusCode status, const char* code, const std::string& name, std::string message) {
  Diag d;
  d.code = code;
  d.file = name;
  d.message = std::move(message);
  diags->push_back(d);
  return Status(status, fmt::format("{}: {}", name, d.message));
}

}  // namespace

Result<File> ReadEncodingsBytes(const void* data, size_t size, const std::string& display_name,
                                const ReadOptions& options, Diags* diags) {
  Diags local;
  if (!diags) diags = &local;
  if (!data && size) return InvalidArgument("encodings buffer is NULL");
  if (size > options.max_bytes)
    return Refuse(diags, StatusCode::kParseError, "file-size", display_name,
                  fmt::format("buffer is {} bytes, above the limit of {} bytes", size, options.max_bytes));
  auto src = std::make_shared<SourceText>(size);
  if (size) std::memcpy(src->mutable_data(), data, size);
  Reader r(std::move(src), display_name, options, diags);
  return r.Run();
}

Result<File> ReadEncodingsFile(const std::string& path, const ReadOptions& options, Diags* diags) {
  return reader_internal::ReadFile(path, options, diags, nullptr, nullptr);
}

Result<File> reader_internal::ReadFile(const std::string& path, const ReadOptions& options, Diags* diags,
                                       WindowSink* sink, bool* streamed) {
  if (streamed) *streamed = false;
  Diags local;
  if (!diags) diags = &local;
  auto io_error = [&](std::string msg) { return Refuse(diags, StatusCode::kIoError, "io", path, std::move(msg)); };
  // O_NONBLOCK: a FIFO is refused below instead of blocking in open().
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return io_error(fmt::format("cannot open: {}", std::strerror(errno)));
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat st;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) return io_error("not a regular file");
  const auto size = static_cast<uint64_t>(st.st_size);
  if (size > options.max_bytes)
    return Refuse(diags, StatusCode::kParseError, "file-size", path,
                  fmt::format("file is {} bytes, above the limit of {} bytes", size, options.max_bytes));
  // A large file is read window by window from a mapping (no copy of it in
  // fresh memory); if it cannot be read that way, it is read whole below,
  // and the windowed attempt has left no diagnostics.
  ReadOptions whole = options;
  if (Reader::WindowedCandidate(size, options)) {
    if (auto mapped = SourceText::MapFile(fd, static_cast<size_t>(size))) {
      Reader r(std::move(mapped), path, options, diags);
      if (auto result = r.RunWindowed(sink)) {
        if (streamed) *streamed = result->ok();
        return std::move(*result);
      }
      whole.window_bytes = 0;  // the windowed read declined this file: not again
    }
  }
  auto src = std::make_shared<SourceText>(static_cast<size_t>(size));
  size_t done = 0;
  while (done < size) {
    const ssize_t n = ::read(fd, src->mutable_data() + done, static_cast<size_t>(size) - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return io_error("short read (was the file changed while reading?)");
    done += static_cast<size_t>(n);
  }
  Reader r(std::move(src), path, whole, diags);
  return r.Run();
}

}  // namespace qairt::encodings
