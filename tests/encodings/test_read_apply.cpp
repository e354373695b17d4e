// ReadAndApplyEncodingsFile must do exactly what ReadEncodingsFile followed by
// ApplyEncodings(File&&) does: the same status, counts, diagnostics (in the
// same order), encodings on every tensor and entries handed back for later.
// Small windows make small files take the streamed path on one and several
// threads; files with problems late in the list make it apply windows before
// it meets them, so the graph must be put back before the usual read.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "capi/capi_internal.h"
#include "enc_test_util.h"
#include "qairt/qairt_encodings.h"

namespace qairt::encodings {
namespace {

// One entry of each kind the streamed path resolves, with the shape of the
// tensor it fits; the fourth kind has an unknown key (a read warning).
struct Kind {
  const char* json;  // fmt pattern, {0} = index
  const char* name;
  std::vector<Dim> shape;
};
const std::vector<Kind>& Kinds() {
  static const std::vector<Kind> kinds = {
      {R"({{"name": "act_{0}", "output_dtype": "uint16", "y_scale": 0.0{0}1, "y_zero_point": 7}})", "act_{0}", {1, 4}},
      {R"({{"name":"w\"{0}\\[x]","output_dtype":"int8","y_scale":[0.5,0.25,0.125],"axis":0}})", "w\"{0}\\[x]", {3, 8}},
      {R"({{"name": "blk_{0}", "output_dtype": "int4", "y_scale": [[0.1, 0.2], [0.3, 0.4]], "axis": 1, )"
       R"("block_size": 32}})",
       "blk_{0}",
       {2, 64}},
      {R"({{"name": "note_{0}", "output_dtype": "int16", "y_scale": 1e-3, "note": {{"k": ["]", "}}"]}}}})", "note_{0}",
       {1, 4}},
      {R"({{ "name" : "f_{0}" , "output_dtype" : "float16" }})", "f_{0}", {1, 4}},
  };
  return kinds;
}

std::string Name(int i) { return fmt::format(fmt::runtime(Kinds()[static_cast<size_t>(i) % Kinds().size()].name), i); }

std::string File(int entries, bool bare) {
  std::string s = bare ? "[\n" : "{\"version\": \"2.0.0\", \"encodings\": [\n";
  for (int i = 0; i < entries; ++i)
    s += (i ? ",\n" : "") + fmt::format(fmt::runtime(Kinds()[static_cast<size_t>(i) % Kinds().size()].json), i);
  return s + (bare ? "\n]\n" : "\n], \"quantizer_args\": {\"activation_bitwidth\": 16}}\n");
}

// A tensor for each entry of File(entries) but those in `absent`.
Graph Tensors(int entries, const std::vector<int>& absent = {}) {
  Graph g("g");
  for (int i = 0; i < entries; ++i) {
    if (std::find(absent.begin(), absent.end(), i) != absent.end()) continue;
    REQUIRE(g.AddInput(Name(i), DType::kFloat32, Shape(Kinds()[static_cast<size_t>(i) % Kinds().size()].shape)).ok());
  }
  return g;
}

std::string DiagText(const Diag& d) {
  return fmt::format("{}|{}|{}|{}|{}:{}|{}|{}|{}|{}", static_cast<int>(d.severity), d.code, d.file, d.offset, d.line,
                     d.column, d.tensor, d.field, d.message, d.suggestion);
}

struct Outcome {
  bool ok = false;
  std::string status;
  ApplyStats stats;
  std::vector<std::string> diags;
  size_t errors = 0;
  std::vector<std::string> encodings;  // per tensor, with `overridden`
  std::vector<std::string> later;      // entries handed to unmatched_out
};

std::vector<std::string> EncodingsOf(const Graph& g) {
  std::vector<std::string> out;
  for (TensorId t = 0; t < g.tensor_count(); ++t) {
    const auto& e = g.tensor(t).encoding;
    out.push_back(e ? fmt::format("{} overridden={}", e->ToString(), e->overridden) : "none");
  }
  return out;
}

Outcome Collect(const Result<ApplyStats>& r, const Diags& diags, const Graph& g, const encodings::File& later) {
  Outcome out;
  out.ok = r.ok();
  if (r.ok()) {
    out.stats = r.value();
  } else {
    out.status = r.status().message();
  }
  for (const Diag& d : diags) out.diags.push_back(DiagText(d));
  out.errors = CountErrors(diags);
  out.encodings = EncodingsOf(g);
  for (const Entry& e : later.entries) out.later.push_back(fmt::format("{}@{}: {}", e.name, e.offset, e.encoding.ToString()));
  return out;
}

Outcome Usual(const std::string& path, const Graph& graph, const ReadOptions& ro, ApplyOptions ao, bool later) {
  Graph g = graph;
  Diags d;
  encodings::File out_later;
  if (later) ao.unmatched_out = &out_later;
  auto file = ReadEncodingsFile(path, ro, &d);
  if (!file.ok()) return Collect(file.status(), d, g, out_later);
  auto r = ApplyEncodings(std::move(file.value()), &g, ao, &d);
  return Collect(r, d, g, out_later);
}

Outcome Streamed(const std::string& path, const Graph& graph, const ReadOptions& ro, ApplyOptions ao, bool later) {
  Graph g = graph;
  Diags d;
  encodings::File out_later;
  if (later) ao.unmatched_out = &out_later;
  auto r = ReadAndApplyEncodingsFile(path, ro, &g, ao, &d);
  return Collect(r, d, g, out_later);
}

// Compares the two on windows of one entry, on 1 and 3 threads; returns the
// streamed windows (0 when the file was read, then applied).
size_t CheckSame(const std::string& path, const Graph& graph, ApplyOptions ao = {}, bool later = false) {
  const Outcome usual = Usual(path, graph, ReadOptions{}, ao, later);
  size_t streamed_windows = SIZE_MAX;
  for (uint32_t threads : {1u, 3u}) {
    INFO(threads << " threads");
    ReadOptions ro;
    ro.window_bytes = 64;
    ro.threads = threads;
    const Outcome s = Streamed(path, graph, ro, ao, later);
    REQUIRE(s.ok == usual.ok);
    CHECK(s.status == usual.status);
    CHECK(s.stats.applied == usual.stats.applied);
    CHECK(s.stats.replaced_model_encodings == usual.stats.replaced_model_encodings);
    CHECK(s.stats.unmatched == usual.stats.unmatched);
    CHECK(s.stats.failed == usual.stats.failed);
    CHECK(s.stats.tensors_without_encoding == usual.stats.tensors_without_encoding);
    REQUIRE(s.diags.size() == usual.diags.size());
    for (size_t i = 0; i < s.diags.size(); ++i) CHECK(s.diags[i] == usual.diags[i]);
    CHECK(s.encodings == usual.encodings);
    CHECK(s.later == usual.later);
    if (streamed_windows != SIZE_MAX) CHECK(s.stats.streamed_windows == streamed_windows);  // threads do not matter
    streamed_windows = s.stats.streamed_windows;
  }
  return streamed_windows;
}

// The file with four scales for the [3, 8] tensor of entry 56 (near the end).
std::string Misfit(std::string text) {
  const std::string three = R"("w\"56\\[x]","output_dtype":"int8","y_scale":[0.5,0.25,0.125])";
  const size_t at = text.find(three);
  REQUIRE(at != std::string::npos);
  return text.replace(at, three.size(), R"("w\"56\\[x]","output_dtype":"int8","y_scale":[0.5,0.25,0.125,1])");
}

struct TempFile {
  std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("qairt_read_apply_" + std::to_string(::getpid()));
  std::string path = (dir / "e.json").string();
  TempFile() { std::filesystem::create_directories(dir); }
  ~TempFile() { std::filesystem::remove_all(dir); }
  void Write(const std::string& text) const {
    std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
    REQUIRE(std::filesystem::file_size(path) == text.size());
  }
};

constexpr int kEntries = 60;

TEST_CASE("read and apply in one pass equals reading, then applying, on good files", "[encodings][apply][threads]") {
  const TempFile tmp;
  for (bool bare : {false, true}) {
    INFO((bare ? "bare list" : "wrapped"));
    tmp.Write(File(kEntries, bare));
    const Graph graph = Tensors(kEntries);
    // Every entry applied as its window was read; the read's warnings (the
    // unknown keys) and the missing-encoding note in the usual order.
    const size_t windows = CheckSame(tmp.path, graph);
    CHECK(windows >= kEntries / 2);  // windows of at least 64 bytes of whole entries
    const Outcome o = Streamed(tmp.path, graph, ReadOptions{}, {}, false);
    REQUIRE(o.ok);
    CHECK(o.stats.applied == kEntries);
    CHECK(o.stats.streamed_windows == 0);  // the default windows: a file this small is read whole

    // Tensors the file does not name: the note lists them.
    Graph more = graph;
    REQUIRE(more.AddInput("extra", DType::kFloat32, Shape({2})).ok());
    CHECK(CheckSame(tmp.path, more) == windows);
  }
}

TEST_CASE("read and apply in one pass: names the graph lacks", "[encodings][apply]") {
  const TempFile tmp;
  tmp.Write(File(kEntries, false));
  const Graph graph = Tensors(kEntries, {3, 17, 58});
  ApplyOptions allow;
  allow.allow_unmatched = true;
  CHECK(CheckSame(tmp.path, graph, allow) >= kEntries / 2);                // warnings, with suggestions
  CHECK(CheckSame(tmp.path, graph, {}, /*later=*/true) >= kEntries / 2);  // handed back for later, in file order
  CHECK(CheckSame(tmp.path, graph) == 0);                                    // errors: nothing applied
  ApplyOptions keep_going;
  keep_going.keep_going = true;
  CHECK(CheckSame(tmp.path, graph, keep_going) == 0);
}

TEST_CASE("read and apply in one pass puts the graph back before the usual read of a bad file",
          "[encodings][apply][threads]") {
  const TempFile tmp;
  const Graph graph = Tensors(kEntries);
  const std::string good = File(kEntries, false);
  ApplyOptions keep_going;
  keep_going.keep_going = true;
  // An entry the tensor does not fit (three scales on axis 0 of a [3, 8]
  // tensor, here four), near the end: the windows before it were applied.
  const std::string misfit = Misfit(good);
  // A tensor named twice, the second time near the end.
  std::string twice = good;
  twice.insert(twice.rfind("\n]"), ",\n" + fmt::format(fmt::runtime(Kinds()[0].json), 0));
  // A bad number in the last entries (the read reports it and drops the
  // entry), and a syntax error there (the list's layout is still found: the
  // window holding it fails to parse, and so does the whole read).
  std::string bad_number = good;
  bad_number.insert(bad_number.rfind("\"y_zero_point\": 7") + 17, "x");
  std::string syntax = good;
  const size_t comma = syntax.find("\"act_55\",");
  REQUIRE(comma != std::string::npos);
  syntax.erase(comma + 8, 1);
  // A name the graph lacks, given twice (allowed unmatched: the read reports the second).
  std::string unmatched_twice = good;
  unmatched_twice.insert(unmatched_twice.rfind("\n]"), ",\n{\"name\": \"nowhere\", \"output_dtype\": \"float16\"},\n"
                                                          "{\"name\": \"nowhere\", \"output_dtype\": \"float16\"}");
  ApplyOptions allow;
  allow.allow_unmatched = true;
  // Where the file cannot be read, or an entry cannot be applied, nothing is
  // (without keep_going); an entry the read reports (a bad number, a name
  // given twice) is dropped, and the rest is applied.
  for (const auto& [what, text, options] :
       std::vector<std::tuple<std::string, std::string, ApplyOptions>>{{"misfit", misfit, {}},
                                                                        {"misfit, keep going", misfit, keep_going},
                                                                        {"named twice", twice, {}},
                                                                        {"bad number", bad_number, {}},
                                                                        {"syntax error", syntax, {}},
                                                                        {"unmatched twice", unmatched_twice, allow}}) {
    INFO(what);
    tmp.Write(text);
    CHECK(CheckSame(tmp.path, graph, options) == 0);
    const Outcome usual = Usual(tmp.path, graph, ReadOptions{}, options, false);
    CHECK(usual.errors > 0);
    if (what == "misfit" || what == "syntax error") {  // nothing applied: every tensor as it was
      for (const std::string& e : usual.encodings) CHECK(e == "none");
    }
  }
}

TEST_CASE("read and apply in one pass replaces the model's encodings with the usual notes",
          "[encodings][apply][threads]") {
  const TempFile tmp;
  tmp.Write(File(kEntries, false));
  // Encodings from a model's Q-DQ nodes on the per-tensor activations (more
  // than the 20 noted one by one), one set by an earlier override (no note).
  Graph graph = Tensors(kEntries);
  int model_encodings = 0;
  for (int i = 0; i < kEntries; i += static_cast<int>(Kinds().size())) {
    Encoding e;
    e.dtype = DType::kUFixed8;
    e.scales = {0.5f};
    e.offsets = {-3};
    e.overridden = i == 5;
    REQUIRE(graph.SetEncoding(*graph.FindTensor(Name(i)), e).ok());
    model_encodings += !e.overridden;
  }
  for (int i = 1; i < kEntries; i += static_cast<int>(Kinds().size())) {  // per-channel weights too
    Encoding e;
    e.kind = EncodingKind::kPerChannel;
    e.dtype = DType::kSFixed8;
    e.symmetry = Symmetry::kSymmetric;
    e.axis = 0;
    e.scales = {1.f, 2.f, 3.f};
    e.offsets = {0, 0, 0};
    REQUIRE(graph.SetEncoding(*graph.FindTensor(Name(i)), e).ok());
    ++model_encodings;
  }
  REQUIRE(model_encodings > 20);
  CHECK(CheckSame(tmp.path, graph) >= kEntries / 2);
  const Outcome o = Streamed(tmp.path, graph, [] {
    ReadOptions ro;
    ro.window_bytes = 64;
    return ro;
  }(), {}, false);
  CHECK(o.stats.replaced_model_encodings == static_cast<size_t>(model_encodings));
  // Put back as they were when an entry late in the file does not fit its
  // tensor (the windows before it replaced some of them).
  tmp.Write(Misfit(File(kEntries, false)));
  CHECK(CheckSame(tmp.path, graph) == 0);
  // Exactly as they were: what SetEncoding checked stays checked, and the
  // graph's version is the same (nothing changed).
  Graph g = graph;
  const uint64_t version = g.version();
  ReadOptions ro;
  ro.window_bytes = 64;
  Diags d;
  CHECK_FALSE(ReadAndApplyEncodingsFile(tmp.path, ro, &g, {}, &d).ok());
  CHECK(g.version() == version);
  for (int i = 0; i < kEntries; i += static_cast<int>(Kinds().size()))
    CHECK(g.EncodingCheckedForShape(*g.FindTensor(Name(i))));
}

TEST_CASE("C API: qairt_encodings_apply_file is load then apply, with both options", "[encodings][capi]") {
  const TempFile tmp;
  tmp.Write(File(kEntries, false));
  const Graph graph = Tensors(kEntries, {17});
  auto* g = new qairt_graph_t("g");
  g->graph = graph;
  qairt_encodings_diagnostics_t* diags = nullptr;
  REQUIRE(qairt_encodings_diagnostics_create(&diags) == nullptr);
  // Defaults: the name the graph lacks is an error, nothing applied.
  qairt_status_t* s = qairt_encodings_apply_file(tmp.path.c_str(), nullptr, g, nullptr, diags);
  CHECK(qairt_status_code(s) == QAIRT_VALIDATION_FAILED);
  qairt_status_free(s);
  const Outcome usual = Usual(tmp.path, graph, ReadOptions{}, {}, false);
  REQUIRE(qairt_encodings_diagnostics_count(diags) == usual.diags.size());
  for (size_t i = 0; i < usual.diags.size(); ++i) CHECK(DiagText(diags->diags[i]) == usual.diags[i]);
  CHECK(EncodingsOf(g->graph) == usual.encodings);
  // ALLOW_UNMATCHED: applied, one warning for the name.
  qairt_encodings_diagnostics_clear(diags);
  qairt_encodings_apply_options ao;
  qairt_encodings_apply_options_init(&ao);
  ao.flags = QAIRT_ENCODINGS_APPLY_ALLOW_UNMATCHED;
  REQUIRE(qairt_encodings_apply_file(tmp.path.c_str(), nullptr, g, &ao, diags) == nullptr);
  CHECK(g->graph.tensor(*g->graph.FindTensor(Name(0))).encoding);
  ApplyOptions allow;
  allow.allow_unmatched = true;
  CHECK(EncodingsOf(g->graph) == Usual(tmp.path, graph, ReadOptions{}, allow, false).encodings);
  // STRICT load: a bad entry fails the read; nothing more is applied.
  std::string bad_dtype = File(kEntries, false);
  bad_dtype.replace(bad_dtype.find("uint16"), 6, "uint99");
  tmp.Write(bad_dtype);
  qairt_encodings_load_options lo;
  qairt_encodings_load_options_init(&lo);
  lo.flags = QAIRT_ENCODINGS_LOAD_STRICT;
  auto* fresh = new qairt_graph_t("g");
  fresh->graph = graph;
  s = qairt_encodings_apply_file(tmp.path.c_str(), &lo, fresh, &ao, nullptr);
  CHECK(qairt_status_code(s) == QAIRT_PARSE_ERROR);
  qairt_status_free(s);
  for (const std::string& e : EncodingsOf(fresh->graph)) CHECK(e == "none");
  // Bad arguments are refused.
  s = qairt_encodings_apply_file(nullptr, nullptr, g, nullptr, nullptr);
  CHECK(qairt_status_code(s) == QAIRT_INVALID_ARGUMENT);
  qairt_status_free(s);
  s = qairt_encodings_apply_file(tmp.path.c_str(), nullptr, nullptr, nullptr, nullptr);
  CHECK(qairt_status_code(s) == QAIRT_INVALID_ARGUMENT);
  qairt_status_free(s);
  ao.flags = 0x80;
  s = qairt_encodings_apply_file(tmp.path.c_str(), nullptr, g, &ao, nullptr);
  CHECK(qairt_status_code(s) == QAIRT_INVALID_ARGUMENT);
  qairt_status_free(s);
  qairt_graph_destroy(fresh);
  qairt_graph_destroy(g);
  qairt_encodings_diagnostics_destroy(diags);
}

}  // namespace
}  // namespace qairt::encodings
