// The windowed read of large 2.0.0 files (list_layout.h, reader_windows.cpp)
// must give what the whole-document read gives: the same entries, the same
// diagnostics (good files), and for bad files the whole read's own
// diagnostics. Small windows (down to one entry) and several threads make
// small texts take the windowed path; mutated texts check that nothing a
// window sees differently leaks into the result.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "enc_test_util.h"
#include "encodings/list_layout.h"

namespace qairt::encodings {
namespace {

using testing::DataFile;
using testing::Slurp;

struct Outcome {
  bool ok = false;
  std::string status;
  File file;
  Diags diags;
};

// Reads `source` (a text, or a file's path when from_file) with windows of
// `window_bytes` on `threads` threads. Large files are read window by window
// from a mapping of the file, texts from their padded copy.
Outcome ReadWith(const std::string& source, bool from_file, uint64_t window_bytes, uint32_t threads) {
  ReadOptions o;
  o.window_bytes = window_bytes;
  o.threads = threads;
  Outcome out;
  auto r = from_file ? ReadEncodingsFile(source, o, &out.diags)
                     : ReadEncodingsBytes(source.data(), source.size(), "t.json", o, &out.diags);
  out.ok = r.ok();
  if (r.ok()) {
    out.file = std::move(r.value());
  } else {
    out.status = r.status().message();
  }
  return out;
}

Outcome Read(const std::string& text, uint64_t window_bytes, uint32_t threads) {
  return ReadWith(text, false, window_bytes, threads);
}

Outcome ReadFile(const std::string& path, uint64_t window_bytes, uint32_t threads) {
  return ReadWith(path, true, window_bytes, threads);
}

std::string DiagText(const Diag& d) {
  return fmt::format("{}|{}|{}|{}|{}:{}|{}|{}|{}|{}", static_cast<int>(d.severity), d.code, d.file, d.offset, d.line,
                     d.column, d.tensor, d.field, d.message, d.suggestion);
}

std::string EntryText(const Entry& e) {
  std::string s = fmt::format("{}|{}|{}|{}|{}|{}|{}|{}|[", e.name, e.encoding.ToString(), static_cast<int>(e.section),
                              e.offset, e.axis_inferred, e.negative_axis, e.block_size, e.channel_axis);
  for (int64_t d : e.grid_shape) s += fmt::format("{},", d);
  s += "]|";
  for (auto [key, off] : e.field_offsets) s += fmt::format("{}@{},", key, off);
  return s;
}

void CheckSame(const Outcome& whole, const Outcome& windowed) {
  REQUIRE(windowed.ok == whole.ok);
  CHECK(windowed.status == whole.status);
  REQUIRE(windowed.diags.size() == whole.diags.size());
  for (size_t i = 0; i < whole.diags.size(); ++i) CHECK(DiagText(windowed.diags[i]) == DiagText(whole.diags[i]));
  if (!whole.ok) return;
  CHECK(windowed.file.version == whole.file.version);
  CHECK(windowed.file.version_string == whole.file.version_string);
  CHECK(windowed.file.bare_list == whole.file.bare_list);
  REQUIRE(windowed.file.entries.size() == whole.file.entries.size());
  for (size_t i = 0; i < whole.file.entries.size(); ++i) {
    CHECK(EntryText(windowed.file.entries[i]) == EntryText(whole.file.entries[i]));
    CHECK(windowed.file.entries[i].encoding == whole.file.entries[i].encoding);  // bit-exact floats
  }
}

// A 2.0.0 file with every entry kind, names that hold brackets, quotes and
// escapes, unknown keys (warnings), and both compact and spaced separators.
std::string MixedFile(int entries, bool bare) {
  std::string s = bare ? "[\n" : "{\"version\": \"2.0.0\", \"producer\": \"encodings\", \"encodings\": [\n";
  for (int i = 0; i < entries; ++i) {
    if (i) s += i % 3 ? ",\n" : ",";
    switch (i % 6) {
      case 0:
        s += fmt::format(R"({{"name": "act_{}", "output_dtype": "uint16", "y_scale": 0.0{}1, "y_zero_point": {}}})", i,
                         i + 1, i % 65536);
        break;
      case 1:
        s += fmt::format(R"({{"name":"w\"{}\\[x]{{y}}","output_dtype":"int8","y_scale":[0.5,0.25,0.125],"axis":0}})", i);
        break;
      case 2:
        s += fmt::format(R"({{"name": "blk_{}", "output_dtype": "int4", "y_scale": [[0.1, 0.2], [0.3, 0.4]], )"
                         R"("axis": 1, "block_size": 32}})",
                         i);
        break;
      case 3:
        s += fmt::format(R"({{"name": "lpbq_{}", "output_dtype": "int4", "per_channel_float_scale": [[0.5], [0.25]], )"
                         R"("per_block_int_scale": [[1, 2, 3], [4, 5, 6]], "axis": 1, "block_size": 64}})",
                         i);
        break;
      case 4:
        s += fmt::format(R"({{"name": "\u00e9t\u00e9_{}", "output_dtype": "int16", "y_scale": 1e-3, )"
                         R"("note": {{"k": ["]", "}}", "\\"], "n": null, "b": true}}}})",
                         i);
        break;
      default:
        s += fmt::format(R"({{ "name" : "f_{}" , "output_dtype" : "float16" }})", i);
        break;
    }
  }
  s += bare ? "\n]\n" : "\n], \"quantizer_args\": {\"activation_bitwidth\": 16}}\n";
  return s;
}

TEST_CASE("list layout: entries, windows and the shapes it declines", "[encodings][windowed]") {
  ListLayout l;
  const std::string wrapped = R"({"version": "2.0.0", "encodings": [ {"name": "a]"} ,{"name": "b\"}"}, {"x": [1]} ]})";
  REQUIRE(FindListLayout(wrapped.data(), wrapped.size(), 1, &l));
  CHECK(wrapped[l.open] == '[');
  CHECK(wrapped[l.close] == ']');
  CHECK(l.close == wrapped.size() - 2);
  CHECK(l.entries == 3);
  REQUIRE(l.windows.size() == 3);  // one entry per window: each is >= 1 byte
  CHECK(wrapped.substr(l.windows[1].begin, l.windows[1].end - l.windows[1].begin) == R"({"name": "b\"}"})");
  CHECK(l.windows[2].first_entry == 2);

  REQUIRE(FindListLayout(wrapped.data(), wrapped.size(), 1000, &l));
  REQUIRE(l.windows.size() == 1);
  CHECK(l.windows[0].entries == 3);

  const std::string bare = " [{\"a\": 1}]";
  REQUIRE(FindListLayout(bare.data(), bare.size(), 1, &l));
  CHECK(l.open == 1);
  CHECK(l.entries == 1);

  const std::string empty = R"({"encodings": []})";
  REQUIRE(FindListLayout(empty.data(), empty.size(), 1, &l));
  CHECK(l.entries == 0);
  CHECK(l.windows.empty());

  // "encodings" as a value, or nested, is not the list.
  const std::string value = R"({"producer": "encodings", "x": {"encodings": [{}]}, "encodings": [{}]})";
  REQUIRE(FindListLayout(value.data(), value.size(), 1, &l));
  CHECK(l.open == value.rfind('['));

  for (const char* bad : {
           R"({"encodings": [{}, 1]})",          // an element that is not an object
           R"({"encodings": [{}, ]})",           // trailing comma
           R"({"encodings": [{} {}]})",          // no comma
           R"({"encodings": [{},, {}]})",        // two commas
           R"({"encodings": {"a": 1}})",         // not a list
           R"({"encodings": [{"a": "]})",        // unterminated string
           R"({"encodings": [{"a": 1}})",        // never closed
           R"({"version": "2.0.0"})",            // no list
           R"("encodings")",
           "",
       }) {
    INFO(bad);
    const std::string t = bad;
    CHECK_FALSE(FindListLayout(t.data(), t.size(), 1, &l));
  }
  // The scan stops at the list's end: what follows is the skeleton read's to
  // check.
  const std::string after = R"({"encodings": [{}] x, "encodings": 1})";
  CHECK(FindListLayout(after.data(), after.size(), 1, &l));
}

TEST_CASE("list layout: escapes and brackets across 64-byte blocks", "[encodings][windowed]") {
  // Backslashes and quotes at every position around a block boundary.
  for (size_t pad = 0; pad < 70; ++pad) {
    const std::string name = std::string(pad, 'x') + "\\\\\\\"]}[{\\\\";
    const std::string t = "{\"encodings\": [{\"name\": \"" + name + "\"},{\"name\": \"" + name + "\"}]}";
    ListLayout l;
    INFO(pad);
    REQUIRE(FindListLayout(t.data(), t.size(), 1, &l));
    CHECK(l.entries == 2);
    CHECK(l.close == t.size() - 2);
  }
}

// A list of `entries` entries whose names hold "}, {" (what the two-thread
// scan takes for an entry boundary when it is not in a string), padded at
// the start by `pad` spaces so that the middle falls at a different place.
std::string BoundaryLikeNames(int entries, size_t pad, bool bare) {
  std::string s(pad, ' ');
  s += bare ? "[\n" : "{\"version\": \"2.0.0\", \"encodings\": [\n";
  for (int i = 0; i < entries; ++i)
    s += fmt::format("{}{{\"name\": \"n{}}}, {{x\", \"output_dtype\": \"uint8\", \"y_scale\": [0.5, 0.25]}}",
                     i ? ",\n" : "", i);
  return s + (bare ? "\n]" : "\n]}");
}

// Layouts equal but for where windows are cut: the same list and entries,
// windows that cover them in order without gaps.
void CheckSameEntries(const ListLayout& one, const ListLayout& two) {
  CHECK(two.open == one.open);
  CHECK(two.close == one.close);
  CHECK(two.entries == one.entries);
  REQUIRE_FALSE(two.windows.empty());
  CHECK(two.windows.front().begin == one.windows.front().begin);
  CHECK(two.windows.back().end == one.windows.back().end);
  size_t next = 0;
  for (const ListWindow& w : two.windows) {
    CHECK(w.first_entry == next);
    next += w.entries;
  }
  CHECK(next == two.entries);
}

TEST_CASE("list layout of a large document on two threads equals one thread's", "[encodings][windowed][threads]") {
  constexpr size_t kLarge = size_t{9} << 20;  // above the size a second thread is used for
  std::vector<std::pair<std::string, std::string>> texts;
  for (bool bare : {false, true}) {
    std::string mixed = MixedFile(2000, bare);
    std::string big = MixedFile(static_cast<int>(2000 * (kLarge / mixed.size() + 1)), bare);
    texts.emplace_back(bare ? "mixed, bare" : "mixed", std::move(big));
    // Every name holds "}, {": the first boundary-like text after the middle
    // is in a string or between entries, depending on the padding.
    for (size_t pad = 0; pad < 90; pad += bare ? 29 : 7) {  // an entry is ~80 bytes: the middle falls everywhere in one
      std::string t = BoundaryLikeNames(150000, pad, bare);
      REQUIRE(t.size() >= kLarge);
      texts.emplace_back(fmt::format("boundary-like names, pad {}{}", pad, bare ? ", bare" : ""), std::move(t));
    }
  }
  for (const auto& [what, text] : texts) {
    INFO(what);
    for (size_t window : {size_t{1}, size_t{65536}}) {
      INFO("window " << window);
      ListLayout one, two;
      REQUIRE(FindListLayout(text.data(), text.size(), window, &one, 1));
      REQUIRE(FindListLayout(text.data(), text.size(), window, &two, 2));
      CheckSameEntries(one, two);
      if (window == 1) {  // every entry a window of its own: the same windows exactly
        REQUIRE(two.windows.size() == one.windows.size());
        for (size_t k = 0; k < one.windows.size(); ++k) {
          CHECK(two.windows[k].begin == one.windows[k].begin);
          CHECK(two.windows[k].end == one.windows[k].end);
        }
      }
    }
  }
  // The list ends before the middle: what follows it is not read as entries.
  std::string early = "{\"encodings\": [{\"name\": \"a\"}], \"quantizer_args\": {\"pad\": [";
  while (early.size() < kLarge) early += "{\"k\": 1}, {\"k\": 2}, ";
  early += "{}]}}";
  ListLayout one, two;
  REQUIRE(FindListLayout(early.data(), early.size(), 1, &one, 1));
  REQUIRE(FindListLayout(early.data(), early.size(), 1, &two, 2));
  CHECK(two.entries == 1);
  CheckSameEntries(one, two);
  // Broken after the middle (a missing comma, a stray string element): refused as one thread refuses it.
  const std::string good = BoundaryLikeNames(150000, 0, false);
  for (const std::string& broken : {good.substr(0, good.rfind(",\n")) + good.substr(good.rfind(",\n") + 1),
                                    good.substr(0, good.size() - 3) + ", \"s\"\n]}"}) {
    CHECK_FALSE(FindListLayout(broken.data(), broken.size(), 65536, &one, 1));
    CHECK_FALSE(FindListLayout(broken.data(), broken.size(), 65536, &two, 2));
  }
}

TEST_CASE("windowed read equals the whole read on good files", "[encodings][windowed][threads]") {
  std::vector<std::pair<std::string, std::string>> texts;
  for (bool bare : {false, true}) texts.emplace_back(bare ? "bare" : "wrapped", MixedFile(61, bare));
  texts.emplace_back("fixture doc examples", Slurp(DataFile("qairt_2.0.0__seed000_doc_examples_TRANSCRIBED.json")));
  texts.emplace_back("fixture fastforward", Slurp(DataFile("qairt_2.0.0__fastforward_test_export_schemas_TRANSCRIBED.json")));
  for (const auto& [what, text] : texts) {
    INFO(what);
    const Outcome whole = Read(text, 0, 1);
    REQUIRE(whole.ok);
    CHECK(whole.file.windows == 0);
    for (uint64_t window : {1, 100, 1000}) {
      for (uint32_t threads : {1, 3}) {
        INFO("window " << window << ", threads " << threads);
        const Outcome windowed = Read(text, window, threads);
        CheckSame(whole, windowed);
        // The windowed path did read it (files under 4 windows are read whole).
        if (text.size() >= 4 * window) CHECK(windowed.file.windows > 0);
        if (window == 1) CHECK(windowed.file.windows == whole.file.entries.size());
      }
    }
  }
  // The mixed file has warnings (unknown keys) in windows: they keep file order.
  const Outcome whole = Read(MixedFile(61, false), 0, 1);
  CHECK(CountSeverity(whole.diags, Severity::kWarning) >= 10);
  CHECK(whole.file.entries.size() == 61);
}

TEST_CASE("windowed read of bad files gives the whole read's diagnostics", "[encodings][windowed]") {
  const std::string good = MixedFile(40, false);
  std::vector<std::string> bad = {
      // an error in one entry, in a late window
      good.substr(0, good.rfind("\"act_")) + "\"act_X\", \"y_scale\": NaN, \"dup\": 1, \"dup\": 2, \"output_dtype\": "
                                            "\"uint8\"}]}",
      good + " trailing",
      // a duplicate entry across windows (the reader's own check)
      "{\"encodings\": [" + std::string(R"({"name": "a", "output_dtype": "int8", "y_scale": 0.1},)") +
          R"({"name": "b", "output_dtype": "int8", "y_scale": 0.1}, {"name": "a", "output_dtype": "int8", "y_scale": 0.2}]})",
      // a second "encodings" key after the list
      good.substr(0, good.size() - 2) + ", \"encodings\": []}\n",
  };
  std::mt19937 rng(7);
  const std::string alphabet = "\"[]{},:0a\\ -.e";
  for (int i = 0; i < 300; ++i) {
    std::string t = good;
    const int edits = 1 + static_cast<int>(rng() % 3);
    for (int k = 0; k < edits; ++k) {
      const size_t at = rng() % t.size();
      const char c = alphabet[rng() % alphabet.size()];
      switch (rng() % 3) {
        case 0: t[at] = c; break;
        case 1: t.erase(at, 1); break;
        default: t.insert(at, 1, c); break;
      }
    }
    bad.push_back(t);
  }
  size_t failed_whole = 0;
  for (size_t i = 0; i < bad.size(); ++i) {
    INFO("case " << i << ": " << bad[i].substr(0, 200));
    const Outcome whole = Read(bad[i], 0, 1);
    failed_whole += !whole.ok || CountErrors(whole.diags) > 0;
    for (uint64_t window : {1, 300}) CheckSame(whole, Read(bad[i], window, 2));
  }
  CHECK(failed_whole > bad.size() / 2);  // the mutations do reach the errors this checks
}

TEST_CASE("duplicate entries of a large file are found on several threads as on one", "[encodings][threads]") {
  // Enough entries for the duplicate check to run on several threads; names
  // repeated near and far, one of them three times.
  std::string text = "{\"version\": \"2.0.0\", \"encodings\": [\n";
  const std::vector<int> names = [] {
    std::vector<int> v;
    for (int i = 0; i < 40000; ++i) v.push_back(i);
    v[1] = 0;
    v[20000] = 7;
    v[39999] = 7;
    v[30001] = 30000;
    return v;
  }();
  for (size_t i = 0; i < names.size(); ++i)
    text += fmt::format("{}{{\"name\": \"act_{}\", \"output_dtype\": \"uint8\", \"y_scale\": 0.{}}}", i ? ",\n" : "",
                        names[i], i + 1);
  text += "\n]}";
  const Outcome one = Read(text, 0, 1);
  REQUIRE(one.ok);
  CHECK(CountErrors(one.diags) == 4);
  CHECK(one.file.entries.size() == names.size() - 4);
  for (uint32_t threads : {2u, 3u, 4u}) {
    INFO(threads << " threads");
    CheckSame(one, Read(text, 0, threads));
    CheckSame(one, Read(text, 4096, threads));  // the windowed attempt falls back to the whole read
  }
}

TEST_CASE("windowed read of a mapped file equals the whole read of its bytes", "[encodings][windowed]") {
  const auto dir = std::filesystem::temp_directory_path() / ("qairt_windowed_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "e.json").string();
  auto write = [&](const std::string& text) {
    std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
    REQUIRE(std::filesystem::file_size(path) == text.size());
  };
  // A text ending exactly at a page boundary: the mapping has no byte after
  // it, so any read past the end (simdjson's padding) faults.
  std::string paged = MixedFile(300, false);
  const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  paged.insert(paged.size() - 1, page - paged.size() % page, ' ');
  REQUIRE(paged.size() % page == 0);
  std::string good = MixedFile(200, true);
  std::string bad_entry = good;
  bad_entry.replace(bad_entry.rfind("\"output_dtype\": \"uint16\""), 24, "\"output_dtype\": \"uint99\"");
  std::string bad_syntax = good;
  bad_syntax.insert(bad_syntax.find(",\n", bad_syntax.size() / 2), ",");  // an empty element
  for (const std::string* text : {&paged, &good, &bad_entry, &bad_syntax}) {
    INFO(text->substr(0, 80) << " (" << text->size() << " bytes)");
    write(*text);
    const Outcome whole = ReadFile(path, 0, 1);  // read into a padded copy, whole
    const Outcome mapped = ReadFile(path, 256, 2);
    CheckSame(whole, mapped);
    if (whole.ok && CountErrors(whole.diags) == 0) {
      CHECK(mapped.file.windows > 0);  // it was read window by window
      // Diagnostics found later are still located in the mapped text.
      Diag d;
      d.offset = mapped.file.entries.back().offset;
      mapped.file.Locate(&d);
      CHECK(d.line > 1);
      CHECK(d.column >= 1);
    } else {
      CHECK(mapped.file.windows == 0);  // read whole after the windowed attempt failed
    }
  }
  CHECK(CountErrors(Read(bad_entry, 0, 1).diags) > 0);
  CHECK_FALSE(Read(bad_syntax, 0, 1).ok);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace qairt::encodings
