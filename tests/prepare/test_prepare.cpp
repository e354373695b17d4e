// Unit tests of the Cloud AI 100 preparation library (lib/prepare).
// The models are built as ONNX protobufs here so every value is known; the
// expected counts are computed from those values, not copied from a run.
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include "import/onnx_model_builder.h"
#include "prepare/prepare.h"

namespace {

using qairt::Status;
using qairt::StatusCode;
using qairt::prepare::Finding;
using qairt::prepare::Options;
using qairt::prepare::Report;
using qairt::prepare::Severity;
using qairt::testing::OnnxModelBuilder;

constexpr float kF16Max = 65504.0f;

// A fresh folder per test case, removed with its content afterwards.
class TempDir {
 public:
  TempDir() {
    char tmpl[] = "/tmp/qairt_prepare_test_XXXXXX";
    const char* p = ::mkdtemp(tmpl);
    REQUIRE(p != nullptr);
    path_ = p;
  }
  ~TempDir() {
    const std::string cmd = "rm -rf '" + path_ + "'";
    if (std::system(cmd.c_str()) != 0) WARN("could not remove " << path_);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  std::string operator/(const std::string& name) const { return path_ + "/" + name; }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

void Save(const OnnxModelBuilder& b, const std::string& path) {
  std::ofstream f(path, std::ios::binary);
  f << b.Bytes();
  REQUIRE(f.good());
}

void WriteText(const std::string& path, const std::string& text) {
  std::ofstream f(path, std::ios::binary);
  f << text;
  REQUIRE(f.good());
}

onnx::ModelProto Load(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  REQUIRE(f.good());
  onnx::ModelProto m;
  REQUIRE(m.ParseFromIstream(&f));
  return m;
}

std::vector<std::string> List(const std::string& dir) {
  std::vector<std::string> names;
  DIR* d = ::opendir(dir.c_str());
  if (!d) return names;
  while (const dirent* e = ::readdir(d))
    if (std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0) names.push_back(e->d_name);
  ::closedir(d);
  std::sort(names.begin(), names.end());
  return names;
}

bool Exists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

std::vector<const Finding*> With(const Report& r, const std::string& code) {
  std::vector<const Finding*> out;
  for (const auto& f : r.findings)
    if (f.code == code) out.push_back(&f);
  return out;
}

std::vector<const Finding*> Errors(const Report& r) {
  std::vector<const Finding*> out;
  for (const auto& f : r.findings)
    if (f.severity == Severity::kError) out.push_back(&f);
  return out;
}

uint64_t CountOver(const std::vector<float>& v) {
  return static_cast<uint64_t>(std::count_if(v.begin(), v.end(), [](float x) { return std::fabs(x) > kF16Max; }));
}

std::vector<float> Floats(const onnx::TensorProto& t) {
  std::vector<float> v(t.raw_data().size() / 4);
  if (!v.empty()) std::memcpy(v.data(), t.raw_data().data(), v.size() * 4);
  return v;
}

const onnx::TensorProto* FindInit(const onnx::ModelProto& m, const std::string& name) {
  for (const auto& t : m.graph().initializer())
    if (t.name() == name) return &t;
  return nullptr;
}

// y = Slice(Max(Min(Min(x, hi), c), lo), 0, INT32_MAX, axis 1) with x in
// [-1, 1]: the out-of-range bounds never bind, so clipping them keeps the
// outputs (the fixed-model check must find max |d| = 0). `c` is a Constant
// node's value; `ends` is the int64 bound exporters write for "to the end".
struct ClipModel {
  std::vector<float> hi = {1e5f, kF16Max, 7e4f};
  std::vector<float> lo = {-1e5f, -3.0f, -std::numeric_limits<float>::max()};
  std::vector<float> c = {1e6f};
  std::vector<int64_t> ends = {int64_t{2147483647}};
  std::vector<int64_t> big_int = {int64_t{1} << 40};  // an int64 beyond fp16, never touched

  OnnxModelBuilder Build() const {
    OnnxModelBuilder b;
    b.Input("x", onnx::TensorProto::FLOAT, {1, 3});
    b.Output("y", onnx::TensorProto::FLOAT, {1, 3});
    b.Init("hi", onnx::TensorProto::FLOAT, {3}, hi);
    b.Init("lo", onnx::TensorProto::FLOAT, {3}, lo);
    b.Init("starts", onnx::TensorProto::INT64, {1}, std::vector<int64_t>{0});
    b.Init("ends", onnx::TensorProto::INT64, {1}, ends);
    b.Init("axes", onnx::TensorProto::INT64, {1}, std::vector<int64_t>{1});
    b.Init("steps", onnx::TensorProto::INT64, {1}, big_int);
    auto* k = b.Node("Constant", {}, {"c"}, "const_c");
    auto* a = k->add_attribute();
    a->set_name("value");
    a->set_type(onnx::AttributeProto::TENSOR);
    a->mutable_t()->set_data_type(onnx::TensorProto::FLOAT);
    a->mutable_t()->add_dims(1);
    a->mutable_t()->set_raw_data(std::string(reinterpret_cast<const char*>(c.data()), c.size() * 4));
    b.Node("Min", {"x", "hi"}, {"m1"}, "min_hi");
    b.Node("Min", {"m1", "c"}, {"m2"}, "min_c");
    b.Node("Max", {"m2", "lo"}, {"m3"}, "max_lo");
    b.Node("Slice", {"m3", "starts", "ends", "axes"}, {"y"}, "slice");
    return b;
  }
};

}  // namespace

TEST_CASE("prepare: constant audit and clip count exactly and leave integers alone", "[prepare]") {
  TempDir tmp;
  ClipModel cm;
  const std::string model = tmp / "clip.onnx";
  Save(cm.Build(), model);
  const onnx::ModelProto before = Load(model);

  SECTION("audit only: each out-of-range float tensor is a warning with its count, nothing changes") {
    Options o;
    o.model_path = model;
    Report r;
    Status s = qairt::prepare::Prepare(o, &r);
    REQUIRE(s.ok());
    auto over = With(r, "constant-overflow");
    REQUIRE(over.size() == 3);
    for (const auto* f : over) CHECK(f->severity == Severity::kWarning);
    std::vector<std::string> subjects;
    for (const auto* f : over) subjects.push_back(f->subject);
    std::sort(subjects.begin(), subjects.end());
    CHECK(subjects == std::vector<std::string>{"c", "hi", "lo"});
    for (const auto* f : over) {
      const auto& v = f->subject == "hi" ? cm.hi : f->subject == "lo" ? cm.lo : cm.c;
      CHECK_THAT(f->message, Catch::Contains(std::to_string(CountOver(v)) + " of " + std::to_string(v.size()) + " values"));
    }
    CHECK(r.changes.empty());
    CHECK(r.files.empty());
  }

  SECTION("clip: exact counts per tensor, fixed model equal on the executor, integers byte-identical") {
    Options o;
    o.model_path = model;
    o.output_dir = tmp / "out";
    o.clip_fp16_constants = true;
    Report r;
    Status s = qairt::prepare::Prepare(o, &r);
    REQUIRE(s.ok());
    CHECK(With(r, "constant-overflow").empty());
    CHECK(With(r, "constant-clipped").size() == 3);
    REQUIRE(r.changes.size() == 3);
    for (const auto& c : r.changes) {
      const auto& v = c.tensor == "hi" ? cm.hi : c.tensor == "lo" ? cm.lo : cm.c;
      INFO(c.tensor);
      CHECK(c.count == CountOver(v));
      CHECK(c.what == "clipped to +-65504");
    }
    CHECK(r.fixed_max_abs_diff == 0.0);
    CHECK(r.fixed_check_samples > 0);

    const onnx::ModelProto after = Load(tmp / "out/clip.onnx");
    for (const char* name : {"hi", "lo"}) {
      const auto& v = std::string(name) == "hi" ? cm.hi : cm.lo;
      const auto* t = FindInit(after, name);
      REQUIRE(t != nullptr);
      std::vector<float> expect = v;
      for (float& x : expect) x = std::max(-kF16Max, std::min(kF16Max, x));
      CHECK(Floats(*t) == expect);
    }
    bool found_constant = false;
    for (const auto& n : after.graph().node())
      if (n.op_type() == "Constant") {
        found_constant = true;
        CHECK(Floats(n.attribute(0).t()) == std::vector<float>{kF16Max});
      }
    CHECK(found_constant);
    for (const char* name : {"starts", "ends", "axes", "steps"}) {
      INFO(name);
      REQUIRE(FindInit(after, name) != nullptr);
      CHECK(FindInit(after, name)->SerializeAsString() == FindInit(before, name)->SerializeAsString());
    }
    // Only the changed tensors differ: node names and everything else stay.
    CHECK(after.graph().node_size() == before.graph().node_size());
    for (int i = 0; i < after.graph().node_size(); ++i) CHECK(after.graph().node(i).name() == before.graph().node(i).name());
    std::vector<std::string> expect_files = r.files;
    std::sort(expect_files.begin(), expect_files.end());
    CHECK(List(tmp / "out") == expect_files);
  }
}

TEST_CASE("prepare: an fp32-min additive mask before Softmax is an error naming the tensor", "[prepare]") {
  TempDir tmp;
  const int64_t n = 4;
  std::vector<float> mask(static_cast<size_t>(n * n), 0.0f);
  uint64_t masked = 0;
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = i + 1; j < n; ++j, ++masked) mask[static_cast<size_t>(i * n + j)] = std::numeric_limits<float>::lowest();
  OnnxModelBuilder b;
  b.Input("scores", onnx::TensorProto::FLOAT, {1, n, n});
  b.Output("probs", onnx::TensorProto::FLOAT, {1, n, n});
  b.Init("causal_mask", onnx::TensorProto::FLOAT, {1, n, n}, mask);
  b.Node("Add", {"scores", "causal_mask"}, {"masked"}, "mask_add");
  auto* sm = b.Node("Softmax", {"masked"}, {"probs"}, "softmax");
  OnnxModelBuilder::IntAttr(sm, "axis", -1);
  const std::string model = tmp / "mask.onnx";
  Save(b, model);

  Options o;
  o.model_path = model;
  o.output_dir = tmp / "out";
  o.clip_fp16_constants = true;  // clipping alone must not hide the mask
  Report r;
  Status s = qairt::prepare::Prepare(o, &r);
  REQUIRE_FALSE(s.ok());
  CHECK(s.code() == StatusCode::kValidationFailed);
  CHECK_THAT(s.message(), Catch::Contains("causal_mask"));
  auto errors = Errors(r);
  REQUIRE(errors.size() == 1);
  CHECK(errors[0]->code == "additive-mask");
  CHECK(errors[0]->subject == "causal_mask");
  CHECK_THAT(errors[0]->message, Catch::Contains("holds " + std::to_string(masked) + " values <= -65504"));
  CHECK_THAT(errors[0]->message, Catch::Contains("Softmax 'softmax'"));
  CHECK_THAT(errors[0]->message, Catch::Contains("via 'mask_add'"));
  CHECK(r.changes.empty());
  CHECK(r.files.empty());
  CHECK_FALSE(Exists(tmp / "out"));

  // The suggested fix works: the masked values become the mask value.
  o.fix_additive_masks = true;
  Report fixed;
  REQUIRE(qairt::prepare::Prepare(o, &fixed).ok());
  REQUIRE(fixed.changes.size() == 1);
  CHECK(fixed.changes[0].tensor == "causal_mask");
  CHECK(fixed.changes[0].count == masked);
  const onnx::ModelProto written = Load(tmp / "out/mask.onnx");
  const auto* t = FindInit(written, "causal_mask");
  REQUIRE(t != nullptr);
  std::vector<float> expect = mask;
  for (float& x : expect)
    if (x <= -kF16Max) x = static_cast<float>(o.mask_value);
  CHECK(Floats(*t) == expect);
  CHECK(fixed.fixed_max_abs_diff >= 0.0);
  CHECK(fixed.fixed_max_abs_diff <= o.tolerance);
}

TEST_CASE("prepare: specialization and symbol errors name the problem and write nothing", "[prepare]") {
  TempDir tmp;
  OnnxModelBuilder b;
  b.Input("x", onnx::TensorProto::FLOAT, {-1, -1, 4});
  b.Output("y", onnx::TensorProto::FLOAT, {-1, -1, 4});
  auto* shape = b.graph().mutable_input(0)->mutable_type()->mutable_tensor_type()->mutable_shape();
  shape->mutable_dim(0)->set_dim_param("batch");
  shape->mutable_dim(1)->set_dim_param("seq");
  auto* oshape = b.graph().mutable_output(0)->mutable_type()->mutable_tensor_type()->mutable_shape();
  oshape->mutable_dim(0)->set_dim_param("batch");
  oshape->mutable_dim(1)->set_dim_param("seq");
  std::vector<float> w(16);
  for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<float>(i % 5) * 0.1f - 0.2f;
  b.Init("w", onnx::TensorProto::FLOAT, {4, 4}, w);
  b.Node("MatMul", {"x", "w"}, {"y"}, "proj");
  const std::string model = tmp / "two.onnx";
  Save(b, model);

  Options o;
  o.model_path = model;
  o.output_dir = tmp / "out";
  auto run = [&](Report* r) {
    Status s = qairt::prepare::Prepare(o, r);
    CHECK_FALSE(s.ok());
    CHECK(s.code() == StatusCode::kValidationFailed);
    CHECK(r->files.empty());
    CHECK_FALSE(Exists(tmp / "out"));
    return s;
  };

  SECTION("duplicate") {
    o.specializations_path = tmp / "dup.json";
    WriteText(o.specializations_path,
              R"({"specializations": [{"batch": "1", "seq": "8"}, {"batch": "2", "seq": "8"}, {"batch": 1, "seq": "8"}]})");
    Report r;
    Status s = run(&r);
    auto errors = Errors(r);
    REQUIRE(errors.size() == 1);
    CHECK(errors[0]->code == "duplicate-specialization");
    CHECK(errors[0]->subject == "spec_2");
    CHECK_THAT(s.message(), Catch::Contains("specializations[0] and specializations[2] bind the same symbol values"));
  }
  SECTION("indistinguishable: -d fixes the input, so both give the same shapes") {
    o.specializations_path = tmp / "same.json";
    WriteText(o.specializations_path, R"({"specializations": [{"batch": "1"}, {"batch": "2"}]})");
    o.input_dims["x"] = {1, 8, 4};
    Report r;
    Status s = run(&r);
    auto errors = Errors(r);
    REQUIRE(errors.size() == 1);
    CHECK(errors[0]->code == "indistinguishable-specializations");
    CHECK_THAT(s.message(), Catch::Contains("specializations[0] and specializations[1]"));
    CHECK_THAT(s.message(), Catch::Contains("No input that uniquely identifies specialization"));
  }
  SECTION("unknown symbol in a specialization") {
    o.specializations_path = tmp / "unknown.json";
    WriteText(o.specializations_path, R"({"specializations": [{"batch": "1", "seq": "8", "ctx_len": "64"}]})");
    Report r;
    Status s = run(&r);
    auto errors = Errors(r);
    REQUIRE(errors.size() == 1);
    CHECK(errors[0]->code == "unknown-symbol");
    CHECK(errors[0]->subject == "ctx_len");
    CHECK_THAT(s.message(), Catch::Contains("binds 'ctx_len'"));
    CHECK_THAT(s.message(), Catch::Contains("its symbols: batch, seq"));
  }
  SECTION("unknown symbol in --define_symbol, and an unbound one") {
    o.define_symbols["sequence"] = 8;
    o.define_symbols["batch"] = 1;
    Report r;
    Status s = run(&r);
    auto errors = Errors(r);
    REQUIRE(errors.size() == 1);
    CHECK(errors[0]->code == "unknown-symbol");
    CHECK(errors[0]->subject == "sequence");
    CHECK_THAT(s.message(), Catch::Contains("no symbolic dim named 'sequence'"));
    o.define_symbols.erase("sequence");
    Report r2;
    Status s2 = run(&r2);
    auto errors2 = Errors(r2);
    REQUIRE(errors2.size() == 1);
    CHECK(errors2[0]->code == "unbound-symbol");
    CHECK(errors2[0]->subject == "seq");
    CHECK_THAT(s2.message(), Catch::Contains("input 'x' dim 1"));
  }
  SECTION("a specialization file of the wrong shape names the file and the entry") {
    o.specializations_path = tmp / "shape.json";
    WriteText(o.specializations_path, R"({"specializations": [{"batch": "1", "seq": "8"}, {"batch": -2, "seq": "8"}]})");
    Report r;
    Status s = run(&r);
    CHECK_THAT(s.message(), Catch::Contains(o.specializations_path));
    CHECK_THAT(s.message(), Catch::Contains("specializations[1].batch must be a positive integer"));
  }
  SECTION("valid specializations are accepted (the same model and folder)") {
    o.specializations_path = tmp / "good.json";
    WriteText(o.specializations_path, R"({"specializations": [{"batch": "1", "seq": "8"}, {"batch": "1", "seq": 16}]})");
    Report r;
    REQUIRE(qairt::prepare::Prepare(o, &r).ok());
    CHECK(r.input_shapes.at("x") == std::vector<std::vector<int64_t>>{{1, 8, 4}, {1, 16, 4}});
    CHECK(Exists(tmp / "out/specializations.json"));
  }
}

TEST_CASE("prepare: a failed prepare leaves no output content", "[prepare]") {
  TempDir tmp;
  ClipModel cm;
  const std::string model = tmp / "clip.onnx";
  Save(cm.Build(), model);
  const std::string out = tmp / "out";
  REQUIRE(::mkdir(out.c_str(), 0777) == 0);

  SECTION("an audit error: the existing folder stays empty") {
    Options o;
    o.model_path = model;
    o.output_dir = out;
    o.supported_ops_path = tmp / "ops.txt";  // lists neither Min nor Max
    WriteText(o.supported_ops_path, "# ops\nSlice\nConstant\n");
    Report r;
    Status s = qairt::prepare::Prepare(o, &r);
    REQUIRE_FALSE(s.ok());
    auto errors = Errors(r);
    REQUIRE(errors.size() == 2);
    CHECK(errors[0]->subject == "Max");
    CHECK(errors[1]->subject == "Min");
    CHECK_THAT(errors[1]->message, Catch::Contains("first 'min_hi'"));
    CHECK(List(out).empty());
  }
  SECTION("a write error halfway: the files written before it are removed") {
    // compile_command.txt comes after the model; a folder in its place makes
    // its atomic rename fail once the model is already written.
    REQUIRE(::mkdir((out + "/compile_command.txt").c_str(), 0777) == 0);
    Options o;
    o.model_path = model;
    o.output_dir = out;
    o.clip_fp16_constants = true;
    Report r;
    Status s = qairt::prepare::Prepare(o, &r);
    REQUIRE_FALSE(s.ok());
    CHECK_THAT(s.message(), Catch::Contains("compile_command.txt"));
    CHECK(r.files.empty());
    CHECK(List(out) == std::vector<std::string>{"compile_command.txt"});
  }
  SECTION("an unreadable model names the file") {
    Options o;
    o.model_path = tmp / "missing.onnx";
    o.output_dir = out;
    Report r;
    Status s = qairt::prepare::Prepare(o, &r);
    REQUIRE_FALSE(s.ok());
    CHECK_THAT(s.message(), Catch::Contains("missing.onnx"));
    CHECK(List(out).empty());
  }
}

TEST_CASE("prepare: -inf is kept only where every use is a select's value", "[prepare]") {
  TempDir tmp;
  const float ninf = -std::numeric_limits<float>::infinity();
  OnnxModelBuilder b;
  b.Input("x", onnx::TensorProto::FLOAT, {1, 4});
  for (const char* out : {"a", "b", "c"}) b.Output(out, onnx::TensorProto::FLOAT, {1, 4});
  b.Init("cond", onnx::TensorProto::BOOL, {1, 4}, std::vector<uint8_t>{1, 0, 1, 0});
  b.Init("fill", onnx::TensorProto::FLOAT, {1}, std::vector<float>{ninf});        // only a select reads it
  b.Init("fill_too", onnx::TensorProto::FLOAT, {1}, std::vector<float>{ninf});    // a select and a Max read it
  b.Init("shape", onnx::TensorProto::INT64, {1}, std::vector<int64_t>{1});
  // Through shape plumbing (Reshape) into the select: still a select's value.
  b.Node("Reshape", {"fill", "shape"}, {"fill_r"}, "reshape_fill");
  b.Node("Where", {"cond", "fill_r", "x"}, {"sel_a"}, "select_a");
  b.Node("Where", {"cond", "fill_too", "x"}, {"sel_b"}, "select_b");
  // Softmax of a masked row is the same with -inf or -65504 in fp32, and
  // Max(x, -65504) = x for x in [-1, 1]: the clip changes no output.
  OnnxModelBuilder::IntAttr(b.Node("Softmax", {"sel_a"}, {"a"}, "softmax_a"), "axis", -1);
  OnnxModelBuilder::IntAttr(b.Node("Softmax", {"sel_b"}, {"b"}, "softmax_b"), "axis", -1);
  b.Node("Max", {"x", "fill_too"}, {"c"}, "floor");
  const std::string model = tmp / "where.onnx";
  Save(b, model);

  Options o;
  o.model_path = model;
  o.output_dir = tmp / "out";
  o.clip_fp16_constants = true;
  Report r;
  Status s = qairt::prepare::Prepare(o, &r);
  INFO(r.Text());
  REQUIRE(s.ok());
  auto kept = With(r, "inf-kept");
  REQUIRE(kept.size() == 1);
  CHECK(kept[0]->subject == "fill");
  CHECK_THAT(kept[0]->message, Catch::Contains("1 -inf values kept"));
  auto clipped = With(r, "constant-clipped");
  REQUIRE(clipped.size() == 1);
  CHECK(clipped[0]->subject == "fill_too");
  REQUIRE(r.changes.size() == 1);
  CHECK(r.changes[0].tensor == "fill_too");
  CHECK(r.changes[0].count == 1);
  CHECK(r.fixed_max_abs_diff == 0.0);
  const onnx::ModelProto written = Load(tmp / "out/where.onnx");
  REQUIRE(FindInit(written, "fill") != nullptr);
  REQUIRE(FindInit(written, "fill_too") != nullptr);
  CHECK(Floats(*FindInit(written, "fill")) == std::vector<float>{ninf});
  CHECK(Floats(*FindInit(written, "fill_too")) == std::vector<float>{-kF16Max});
}
