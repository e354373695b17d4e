// Hostile-input corpus (docs/TESTING.md): every case runs the
// whole convert flow through the C API on one hostile file and asserts the
// status code, that the message names the file / tensor / field at fault,
// and that nothing was written to the output folder. Categories follow the
// reliability catalogue: ONNX container, external data, encodings JSON,
// input_list and raw files, target descriptors, numeric edge cases, outputs
// and environment.
#include <onnx/onnx_pb.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "fuzz/fuzz_models.h"
#include "hostile/hostile_util.h"
#include "qairt/qairt_container.h"
#include "qairt/qairt_import.h"

using qairt::hostile::ExpectRejected;
using qairt::hostile::Job;
using qairt::hostile::JobFor;
using qairt::hostile::Sandbox;
namespace fs = std::filesystem;

namespace {

onnx::ModelProto BaseModel() {
  onnx::ModelProto m;
  REQUIRE(m.ParseFromString(qairt_fuzz::SmallConvModel()));
  return m;
}

onnx::TensorProto* Init(onnx::ModelProto& m, const std::string& name) {
  for (auto& t : *m.mutable_graph()->mutable_initializer())
    if (t.name() == name) return &t;
  FAIL("no initializer " << name);
  return nullptr;
}

onnx::NodeProto* NodeNamed(onnx::ModelProto& m, const std::string& name) {
  for (auto& n : *m.mutable_graph()->mutable_node())
    if (n.name() == name) return &n;
  FAIL("no node " << name);
  return nullptr;
}

std::string Save(const Sandbox& sb, const onnx::ModelProto& m, const std::string& name = "model.onnx") {
  return sb.Put(name, m.SerializeAsString());
}

// conv.w [8,4,3,3] float moved to external data with these keys.
std::string ExternalModel(const Sandbox& sb, const std::string& location, const std::string& offset = "",
                          const std::string& length = "") {
  onnx::ModelProto m = BaseModel();
  onnx::TensorProto* t = Init(m, "conv.w");
  sb.Put("weights.bin", t->raw_data());
  t->clear_raw_data();
  t->set_data_location(onnx::TensorProto::EXTERNAL);
  auto add = [&](const char* k, const std::string& v) {
    auto* e = t->add_external_data();
    e->set_key(k);
    e->set_value(v);
  };
  add("location", location);
  if (!offset.empty()) add("offset", offset);
  if (!length.empty()) add("length", length);
  return Save(sb, m);
}

void SetAttrInts(onnx::NodeProto* n, const std::string& name, const std::vector<int64_t>& v) {
  for (auto& a : *n->mutable_attribute())
    if (a.name() == name) {
      a.clear_ints();
      for (int64_t x : v) a.add_ints(x);
      return;
    }
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INTS);
  for (int64_t x : v) a->add_ints(x);
}

std::string Floats(const std::vector<float>& v) {
  return std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(float));
}

// x is float32 [1,4,8,8]: 256 floats.
std::string GoodRaw() {
  std::vector<float> v(256);
  for (size_t i = 0; i < v.size(); ++i) v[i] = std::sin(static_cast<float>(i));
  return Floats(v);
}

// A 2.0.0 document with these entries (comma-joined).
std::string Enc200(const std::string& first, const std::string& second = "") {
  return R"({"version":"2.0.0","encodings":[)" + first + (first.empty() || second.empty() ? "" : ",") + second + "]}";
}

// A 2.0.0 entry for relu_out with these y_scale / y_zero_point tokens.
std::string Act(const std::string& scale, const std::string& zero_point) {
  return R"({"name":"relu_out","output_dtype":"uint8","y_scale":)" + scale + R"(,"y_zero_point":)" + zero_point + "}";
}

// A 0.6.1 document with one relu_out entry.
std::string Legacy(const std::string& bitwidth, const std::string& is_symmetric, const std::string& min,
                   const std::string& max) {
  return R"({"version":"0.6.1","activation_encodings":{"relu_out":[{"bitwidth":)" + bitwidth +
         R"(,"dtype":"int","is_symmetric":)" + is_symmetric + R"(,"max":)" + max + R"(,"min":)" + min +
         R"(,"offset":0,"scale":0.00392}]},"param_encodings":{}})";
}

struct EncCase {
  const char* name;
  std::string json;
  qairt_code_t code;
  std::vector<std::string> needles;
};

// 256 floats (x's size): `value` at `index`, or everywhere when `all`.
std::string RawWith(size_t index, float value, bool all = false) {
  std::vector<float> v(256, 1.0f);
  if (all) std::fill(v.begin(), v.end(), value);
  v[index] = value;
  return Floats(v);
}

void MakeFifo(const std::string& path) { REQUIRE(::mkfifo(path.c_str(), 0600) == 0); }

}  // namespace

TEST_CASE("hostile ONNX model files are rejected, nothing is written", "[hostile][import]") {
  Sandbox sb;
  SECTION("empty file") {
    ExpectRejected(sb, JobFor(sb, sb.Put("empty.onnx", "")), QAIRT_PARSE_ERROR, {"empty.onnx", "no graph"});
  }
  SECTION("one byte 0x0A") {
    ExpectRejected(sb, JobFor(sb, sb.Put("one.onnx", "\x0a")), QAIRT_PARSE_ERROR, {"one.onnx", "not a valid ONNX model"});
  }
  SECTION("JSON renamed .onnx") {
    ExpectRejected(sb, JobFor(sb, sb.Put("json.onnx", R"({"graph": {"node": []}})")), QAIRT_PARSE_ERROR,
                   {"json.onnx", "not a valid ONNX model"});
  }
  SECTION("truncated model") {
    const std::string full = qairt_fuzz::SmallConvModel();
    ExpectRejected(sb, JobFor(sb, sb.Put("cut.onnx", full.substr(0, full.size() / 2))), QAIRT_PARSE_ERROR,
                   {"cut.onnx", "truncated, corrupt"});
  }
  SECTION("missing file") {
    ExpectRejected(sb, JobFor(sb, sb.In("missing.onnx")), QAIRT_IO_ERROR, {"missing.onnx", "No such file"});
  }
  SECTION("a directory") {
    fs::create_directories(sb.In("dir.onnx"));
    ExpectRejected(sb, JobFor(sb, sb.In("dir.onnx")), QAIRT_IO_ERROR, {"dir.onnx", "not a regular file"});
  }
  SECTION("a FIFO (must not block)") {
    MakeFifo(sb.In("fifo.onnx"));
    ExpectRejected(sb, JobFor(sb, sb.In("fifo.onnx")), QAIRT_IO_ERROR, {"fifo.onnx", "not a regular file"});
  }
  SECTION("raw_data shorter than the shape") {
    onnx::ModelProto m = BaseModel();
    Init(m, "conv.w")->mutable_raw_data()->resize(100);
    ExpectRejected(sb, JobFor(sb, Save(sb, m)), QAIRT_VALIDATION_FAILED, {"'conv.w'", "raw_data has 100 bytes", "1152"});
  }
  SECTION("negative dim") {
    onnx::ModelProto m = BaseModel();
    Init(m, "conv.w")->set_dims(1, -4);
    ExpectRejected(sb, JobFor(sb, Save(sb, m)), QAIRT_VALIDATION_FAILED, {"'conv.w'", "dims[1] is negative"});
  }
  SECTION("shape x dtype overflowing 64 bits") {
    onnx::ModelProto m = BaseModel();
    onnx::TensorProto* t = Init(m, "conv.b");
    t->clear_dims();
    for (int i = 0; i < 3; ++i) t->add_dims(int64_t{3037000499});
    ExpectRejected(sb, JobFor(sb, Save(sb, m)), QAIRT_VALIDATION_FAILED, {"'conv.b'", "overflows"});
  }
  SECTION("data_type UNDEFINED") {
    onnx::ModelProto m = BaseModel();
    Init(m, "fc.b")->set_data_type(0);
    ExpectRejected(sb, JobFor(sb, Save(sb, m)), QAIRT_VALIDATION_FAILED, {"'fc.b'", "data type 0"});
  }
  SECTION("data_type 9999") {
    onnx::ModelProto m = BaseModel();
    Init(m, "fc.b")->set_data_type(9999);
    ExpectRejected(sb, JobFor(sb, Save(sb, m)), QAIRT_VALIDATION_FAILED, {"'fc.b'", "data type 9999"});
  }
  SECTION("a cycle") {
    onnx::ModelProto m = BaseModel();
    NodeNamed(m, "conv")->set_input(0, "relu_out");
    ExpectRejected(sb, JobFor(sb, Save(sb, m)), QAIRT_VALIDATION_FAILED, {"cycle", "conv"});
  }
  SECTION("an input nothing produces") {
    onnx::ModelProto m = BaseModel();
    NodeNamed(m, "relu")->set_input(0, "ghost");
    ExpectRejected(sb, JobFor(sb, Save(sb, m)), QAIRT_VALIDATION_FAILED, {"ghost", "relu"});
  }
  SECTION("Conv stride 0") {
    onnx::ModelProto m = BaseModel();
    SetAttrInts(NodeNamed(m, "conv"), "strides", {0, 0});
    ExpectRejected(sb, JobFor(sb, Save(sb, m)), QAIRT_VALIDATION_FAILED, {"conv", "strides"});
  }
  SECTION("Conv kernel_shape of the wrong rank") {
    onnx::ModelProto m = BaseModel();
    SetAttrInts(NodeNamed(m, "conv"), "kernel_shape", {3, 3, 3});
    ExpectRejected(sb, JobFor(sb, Save(sb, m)), QAIRT_VALIDATION_FAILED, {"conv", "kernel_shape"});
  }
  SECTION("an op of an unknown domain") {
    onnx::ModelProto m = BaseModel();
    NodeNamed(m, "relu")->set_domain("com.evil");
    auto* o = m.add_opset_import();
    o->set_domain("com.evil");
    o->set_version(1);
    ExpectRejected(sb, JobFor(sb, Save(sb, m)), QAIRT_VALIDATION_FAILED, {"relu", "com.evil"});
  }
  SECTION("subgraphs nested 100 deep (protobuf recursion limit)") {
    onnx::ModelProto m = BaseModel();
    onnx::GraphProto* g = m.mutable_graph();
    auto* n = g->add_node();
    for (int depth = 0; depth < 100; ++depth) {
      n->set_op_type("If");
      auto* a = n->add_attribute();
      a->set_name("then_branch");
      a->set_type(onnx::AttributeProto::GRAPH);
      n = a->mutable_g()->add_node();
    }
    ExpectRejected(sb, JobFor(sb, Save(sb, m)), QAIRT_PARSE_ERROR, {"model.onnx", "not a valid ONNX model"});
  }
  SECTION("a 1 MiB node name with format directives") {
    onnx::ModelProto m = BaseModel();
    NodeNamed(m, "relu")->set_domain("com.evil");
    NodeNamed(m, "relu")->set_name("%n%s%x" + std::string(1 << 20, 'A'));
    ExpectRejected(sb, JobFor(sb, Save(sb, m)), QAIRT_VALIDATION_FAILED, {"node '%n%s%xAAAA", "AAAA..."});
  }
}

TEST_CASE("hostile ONNX external data is rejected before any read, nothing is written", "[hostile][import]") {
  Sandbox sb;
  SECTION("parent folder") {
    ExpectRejected(sb, JobFor(sb, ExternalModel(sb, "../weights.bin")), QAIRT_VALIDATION_FAILED,
                   {"'conv.w'", "'../weights.bin'", "leaves the model's folder"});
  }
  SECTION("nested traversal a/../../x") {
    ExpectRejected(sb, JobFor(sb, ExternalModel(sb, "a/../../weights.bin")), QAIRT_VALIDATION_FAILED,
                   {"'conv.w'", "leaves the model's folder"});
  }
  SECTION("Windows separators a\\..\\..\\x") {
    ExpectRejected(sb, JobFor(sb, ExternalModel(sb, "a\\..\\..\\weights.bin")), QAIRT_VALIDATION_FAILED,
                   {"'conv.w'", "leaves the model's folder"});
  }
  SECTION("traversal to a file that does not exist is still traversal") {
    ExpectRejected(sb, JobFor(sb, ExternalModel(sb, "../../no/such/file.bin")), QAIRT_VALIDATION_FAILED,
                   {"'conv.w'", "leaves the model's folder"});
  }
  SECTION("absolute path") {
    ExpectRejected(sb, JobFor(sb, ExternalModel(sb, "/etc/passwd")), QAIRT_VALIDATION_FAILED,
                   {"'conv.w'", "'/etc/passwd'", "absolute"});
  }
  SECTION("symlink leaving the folder") {
    const std::string outside = (sb.root() / "secret.bin").string();
    std::ofstream(outside) << std::string(1152, 'S');
    const std::string model = ExternalModel(sb, "link.bin");
    fs::create_symlink(outside, sb.In("link.bin"));
    ExpectRejected(sb, JobFor(sb, model), QAIRT_VALIDATION_FAILED, {"'conv.w'", "outside the model's folder"});
  }
  SECTION("ONNX Runtime memory marker") {
    ExpectRejected(sb, JobFor(sb, ExternalModel(sb, "*/_ORT_MEM_ADDR_/*", "1094795585")), QAIRT_VALIDATION_FAILED,
                   {"'conv.w'", "_ORT_MEM_ADDR_"});
  }
  SECTION("empty location") {
    ExpectRejected(sb, JobFor(sb, ExternalModel(sb, "")), QAIRT_VALIDATION_FAILED, {"'conv.w'", "location is empty"});
  }
  SECTION("offset past the end of the file") {
    ExpectRejected(sb, JobFor(sb, ExternalModel(sb, "weights.bin", "8")), QAIRT_VALIDATION_FAILED,
                   {"'conv.w'", "weights.bin", "offset=8"});
  }
  SECTION("offset -1") {
    ExpectRejected(sb, JobFor(sb, ExternalModel(sb, "weights.bin", "-1")), QAIRT_VALIDATION_FAILED,
                   {"'conv.w'", "offset '-1'"});
  }
  SECTION("offset 0x10") {
    ExpectRejected(sb, JobFor(sb, ExternalModel(sb, "weights.bin", "0x10")), QAIRT_VALIDATION_FAILED,
                   {"'conv.w'", "offset '0x10'"});
  }
  SECTION("offset 2^64-1 with length 2 (wrap-around)") {
    ExpectRejected(sb, JobFor(sb, ExternalModel(sb, "weights.bin", "18446744073709551615", "1152")),
                   QAIRT_VALIDATION_FAILED, {"'conv.w'", "overflows int64"});
  }
  SECTION("length not matching the shape") {
    ExpectRejected(sb, JobFor(sb, ExternalModel(sb, "weights.bin", "0", "12")), QAIRT_VALIDATION_FAILED,
                   {"'conv.w'", "length 12", "1152 bytes"});
  }
  SECTION("location is a directory") {
    const std::string model = ExternalModel(sb, "sub");
    fs::create_directories(sb.In("sub"));
    ExpectRejected(sb, JobFor(sb, model), QAIRT_VALIDATION_FAILED, {"'conv.w'", "not a regular file"});
  }
  SECTION("location is a FIFO (must not block)") {
    const std::string model = ExternalModel(sb, "pipe.bin");
    MakeFifo(sb.In("pipe.bin"));
    ExpectRejected(sb, JobFor(sb, model), QAIRT_VALIDATION_FAILED, {"'conv.w'", "not a regular file"});
  }
  SECTION("missing external file") {
    ExpectRejected(sb, JobFor(sb, ExternalModel(sb, "gone.bin")), QAIRT_VALIDATION_FAILED, {"'conv.w'", "gone.bin", "does not exist"});
  }
}

TEST_CASE("hostile encodings files are rejected naming file and field, nothing is written", "[hostile][encodings]") {
  Sandbox sb;
  Job job = JobFor(sb, Save(sb, BaseModel()));
  const std::vector<EncCase> cases = {
      {"empty file", "", QAIRT_PARSE_ERROR, {"enc.json"}},
      {"trailing garbage after the document", Enc200("") + "}}", QAIRT_PARSE_ERROR, {"enc.json"}},
      {"duplicate key", R"({"version":"2.0.0","encodings":[],"encodings":[]})", QAIRT_PARSE_ERROR, {"enc.json", "encodings"}},
      {"NaN literal", Enc200(Act("NaN", "0")), QAIRT_PARSE_ERROR, {"enc.json"}},
      {"invalid UTF-8 in a key", "{\"ver\xff\xfesion\":\"2.0.0\"}", QAIRT_PARSE_ERROR, {"enc.json"}},
      {"bitwidth 33 (0.6.1)", Legacy("33", "\"False\"", "0.0", "1.0"), QAIRT_PARSE_ERROR, {"enc.json", "relu_out", "bitwidth"}},
      {"negative scale", Enc200(Act("-0.5", "0")), QAIRT_PARSE_ERROR, {"enc.json", "relu_out", "scale"}},
      {"zero scale", Enc200(Act("0", "0")), QAIRT_PARSE_ERROR, {"enc.json", "relu_out", "scale"}},
      {"string where a number is expected", Enc200(Act("\"0.5\"", "0")), QAIRT_PARSE_ERROR, {"enc.json", "relu_out", "y_scale"}},
      {"is_symmetric neither a boolean nor True/False", Legacy("8", "\"maybe\"", "0.0", "1.0"), QAIRT_PARSE_ERROR,
       {"enc.json", "relu_out", "is_symmetric"}},
      {"zero point outside the integer range", Enc200(Act("0.1", "300")), QAIRT_PARSE_ERROR, {"enc.json", "relu_out", "zero_point"}},
      {"a tensor the model does not have", Enc200(R"({"name":"relu_ot","output_dtype":"uint8","y_scale":0.1,"y_zero_point":0})"),
       QAIRT_VALIDATION_FAILED, {"relu_ot", "relu_out"}},
      {"per-channel scales of the wrong count",
       Enc200(R"({"name":"conv.w","output_dtype":"int8","axis":0,"y_scale":[0.1,0.1,0.1],"y_zero_point":[0,0,0]})"),
       QAIRT_VALIDATION_FAILED, {"conv.w", "3", "8"}},
      {"per-channel axis out of range",
       Enc200(R"({"name":"conv.w","output_dtype":"int8","axis":7,"y_scale":[0.1,0.1],"y_zero_point":[0,0]})"),
       QAIRT_VALIDATION_FAILED, {"conv.w", "axis"}},
  };
  for (const EncCase& c : cases) {
    DYNAMIC_SECTION(c.name) {
      job.encodings = sb.Put("enc.json", c.json);
      ExpectRejected(sb, job, c.code, c.needles);
    }
  }
  SECTION("missing file") {
    job.encodings = sb.In("nope.json");
    ExpectRejected(sb, job, QAIRT_IO_ERROR, {"nope.json"});
  }
  SECTION("a FIFO (must not block)") {
    MakeFifo(sb.In("fifo.json"));
    job.encodings = sb.In("fifo.json");
    ExpectRejected(sb, job, QAIRT_IO_ERROR, {"fifo.json", "not a regular file"});
  }
}

TEST_CASE("hostile input_lists and raw files are rejected naming line, input and file", "[hostile][calib]") {
  Sandbox sb;
  Job job = JobFor(sb, Save(sb, BaseModel()));
  sb.Put("good.raw", GoodRaw());
  auto with = [&](const std::string& text) {
    job.input_list = sb.Put("list.txt", text);
    return job;
  };
  SECTION("empty list") { ExpectRejected(sb, with(""), QAIRT_INVALID_ARGUMENT, {"list.txt", "no samples"}); }
  SECTION("only comments") {
    ExpectRejected(sb, with("# a\n#b\n"), QAIRT_INVALID_ARGUMENT, {"list.txt", "no samples"});
  }
  SECTION("raw file of the wrong size") {
    sb.Put("short.raw", std::string(12, '\0'));
    ExpectRejected(sb, with("x:=short.raw\n"), QAIRT_INVALID_ARGUMENT,
                   {"list.txt' line 1", "input 'x'", "short.raw", "has 12 bytes", "needs 1024"});
  }
  SECTION("missing raw file") {
    ExpectRejected(sb, with("x:=good.raw\nx:=gone.raw\n"), QAIRT_IO_ERROR, {"line 2", "input 'x'", "gone.raw"});
  }
  SECTION("unknown input name") {
    ExpectRejected(sb, with("y:=good.raw\n"), QAIRT_INVALID_ARGUMENT, {"line 1", "no graph input named 'y'", "'x'"});
  }
  SECTION("an input given twice on one line") {
    ExpectRejected(sb, with("x:=good.raw x:=good.raw\n"), QAIRT_INVALID_ARGUMENT, {"line 1", "'x' is given twice"});
  }
  SECTION("bare paths and name:=path mixed") {
    ExpectRejected(sb, with("x:=good.raw good.raw\n"), QAIRT_INVALID_ARGUMENT, {"line 1", "mixes"});
  }
  SECTION("more bare paths than inputs") {
    ExpectRejected(sb, with("good.raw good.raw\n"), QAIRT_INVALID_ARGUMENT, {"line 1", "2 paths for 1 graph inputs"});
  }
  SECTION("empty path after :=") {
    ExpectRejected(sb, with("x:=\n"), QAIRT_INVALID_ARGUMENT, {"line 1", "input 'x'"});
  }
  SECTION("NaN in the data") {
    sb.Put("nan.raw", RawWith(17, std::numeric_limits<float>::quiet_NaN()));
    ExpectRejected(sb, with("x:=good.raw\nx:=nan.raw\n"), QAIRT_INVALID_ARGUMENT,
                   {"line 2", "input 'x'", "nan.raw", "element 17 is NaN"});
  }
  SECTION("+Inf in the data") {
    sb.Put("inf.raw", RawWith(255, std::numeric_limits<float>::infinity()));
    ExpectRejected(sb, with("x:=inf.raw\n"), QAIRT_INVALID_ARGUMENT, {"inf.raw", "element 255 is +Inf"});
  }
  SECTION("raw path is a FIFO") {
    MakeFifo(sb.In("pipe.raw"));
    ExpectRejected(sb, with("x:=pipe.raw\n"), QAIRT_INVALID_ARGUMENT, {"line 1", "pipe.raw", "has 0 bytes"});
  }
  SECTION("the list is a directory") {
    fs::create_directories(sb.In("listdir"));
    job.input_list = sb.In("listdir");
    ExpectRejected(sb, job, QAIRT_IO_ERROR, {"listdir", "not a file"});
  }
  SECTION("the list does not exist") {
    job.input_list = sb.In("nolist.txt");
    ExpectRejected(sb, job, QAIRT_IO_ERROR, {"nolist.txt"});
  }
}

TEST_CASE("hostile target descriptors are rejected naming file and field", "[hostile][target]") {
  Sandbox sb;
  Job job = JobFor(sb, Save(sb, BaseModel()));
  std::string cpu = qairt::hostile::Slurp((fs::path(__FILE__).parent_path().parent_path().parent_path() / "targets/builtin/cpu.json").string());
  auto replace = [&](const std::string& from, const std::string& to) {
    const size_t at = cpu.find(from);
    REQUIRE(at != std::string::npos);
    cpu.replace(at, from.size(), to);
    job.target = sb.Put("npu.json", cpu);
    return job;
  };
  SECTION("empty file") {
    job.target = sb.Put("empty.qatd", "");
    ExpectRejected(sb, job, QAIRT_PARSE_ERROR, {"empty.qatd"});
  }
  SECTION("8 bytes with a wrong identifier") {
    job.target = sb.Put("bad.qatd", std::string("\x08\0\0\0NOPE", 8));
    ExpectRejected(sb, job, QAIRT_PARSE_ERROR, {"bad.qatd"});
  }
  SECTION("unknown op") { ExpectRejected(sb, replace(R"("op": "Argmax")", R"("op": "Bogus")"), QAIRT_VALIDATION_FAILED, {"npu.json", "ops[0].op", "Bogus"}); }
  SECTION("unknown backend") { ExpectRejected(sb, replace(R"("backend": "CPU")", R"("backend": "GPU")"), QAIRT_PARSE_ERROR, {"npu.json", "GPU"}); }
  SECTION("needs a newer reader") {
    ExpectRejected(sb, replace(R"("min_reader_version": 1)", R"("min_reader_version": 2)"), QAIRT_UNSUPPORTED,
                   {"npu.json", "min_reader_version"});
  }
  SECTION("unknown dtype in a kernel slot") {
    ExpectRejected(sb, replace(R"("dtypes": ["u8", "s8"])", R"("dtypes": ["u8", "q9"])"), QAIRT_PARSE_ERROR, {"npu.json", "q9"});
  }
  SECTION("truncated JSON") {
    job.target = sb.Put("cut.json", cpu.substr(0, cpu.size() / 2));
    ExpectRejected(sb, job, QAIRT_PARSE_ERROR, {"cut.json"});
  }
  SECTION("unknown built-in name that is not a file either") {
    job.target = "htp_v99";
    ExpectRejected(sb, job, QAIRT_NOT_FOUND, {"htp_v99"});
  }
}

TEST_CASE("numeric edge cases are rejected naming tensor and field", "[hostile][numeric]") {
  Sandbox sb;
  Job job = JobFor(sb, Save(sb, BaseModel()));
  const std::vector<EncCase> cases = {
      {"scale overflowing float (1e39)", Enc200(Act("1e39", "0")), QAIRT_PARSE_ERROR, {"enc.json", "relu_out", "scale"}},
      {"number beyond double (1e999)", Enc200(Act("1e999", "0")), QAIRT_PARSE_ERROR, {"enc.json"}},
      {"integer beyond 64 bits as zero point", Enc200(Act("0.1", "18446744073709551616")), QAIRT_PARSE_ERROR, {"enc.json"}},
      {"non-integral bitwidth 8.5 (0.6.1)", Legacy("8.5", "\"False\"", "0.0", "1.0"), QAIRT_PARSE_ERROR,
       {"enc.json", "relu_out", "bitwidth"}},
      {"min greater than max (0.6.1)", Legacy("8", "\"False\"", "1.0", "-1.0"), QAIRT_PARSE_ERROR, {"enc.json", "relu_out", "min"}},
  };
  for (const EncCase& c : cases) {
    DYNAMIC_SECTION(c.name) {
      job.encodings = sb.Put("enc.json", c.json);
      ExpectRejected(sb, job, c.code, c.needles);
    }
  }
  const std::vector<std::pair<const char*, std::pair<size_t, float>>> bad_data = {
      {"all calibration data NaN", {0, std::numeric_limits<float>::quiet_NaN()}},
      {"-Inf in calibration data", {3, -std::numeric_limits<float>::infinity()}},
  };
  for (const auto& [name, at] : bad_data) {
    DYNAMIC_SECTION(name) {
      sb.Put("bad.raw", RawWith(at.first, at.second, at.first == 0));
      job.input_list = sb.Put("list.txt", "x:=bad.raw\n");
      ExpectRejected(sb, job, QAIRT_INVALID_ARGUMENT,
                     {"bad.raw", "element " + std::to_string(at.first) + " is " + (std::isnan(at.second) ? "NaN" : "-Inf")});
    }
  }
  SECTION("NaN in a weight") {
    onnx::ModelProto m = BaseModel();
    float nan = std::numeric_limits<float>::quiet_NaN();
    std::memcpy(Init(m, "conv.w")->mutable_raw_data()->data() + 4 * 5, &nan, 4);
    sb.Put("good.raw", GoodRaw());
    job = JobFor(sb, Save(sb, m, "nan_weights.onnx"));
    job.input_list = sb.Put("list.txt", "x:=good.raw\n");
    ExpectRejected(sb, job, QAIRT_INVALID_ARGUMENT, {"conv.w"});
  }
}

TEST_CASE("outputs: bad paths fail with the path named; nothing partial is left", "[hostile][outputs]") {
  Sandbox sb;
  Job job = JobFor(sb, Save(sb, BaseModel()));
  job.out_encodings.clear();
  SECTION("output path is a directory") {
    fs::create_directories(sb.Out("dir.qairt"));
    job.out_container = sb.Out("dir.qairt");
    ExpectRejected(sb, job, QAIRT_IO_ERROR, {"dir.qairt", "is a directory"}, {"dir.qairt"});
  }
  SECTION("output folder does not exist") {
    job.out_container = sb.Out("no/such/dir/model.qairt");
    ExpectRejected(sb, job, QAIRT_IO_ERROR, {"no/such/dir/model.qairt"});
  }
  SECTION("output folder is a file") {
    job.out_container = sb.In("model.onnx") + "/model.qairt";
    ExpectRejected(sb, job, QAIRT_IO_ERROR, {"model.onnx/model.qairt"});
  }
  SECTION("empty output path") {
    job.out_container = "";
    job.out_encodings = "";
    qairt_graph_t* g = nullptr;
    REQUIRE(qairt_import_onnx_file(job.model.c_str(), nullptr, &g, nullptr) == nullptr);
    qairt_status_t* s = qairt_container_write_file(g, "", nullptr);
    REQUIRE(s != nullptr);
    CHECK(qairt_status_code(s) == QAIRT_INVALID_ARGUMENT);
    CHECK(std::string(qairt_status_message(s)).find("empty") != std::string::npos);
    qairt_status_free(s);
    qairt_graph_destroy(g);
    CHECK(sb.OutFiles() == std::vector<std::string>{});
  }
  SECTION("output names the folder itself ('out/.')") {
    job.out_container = sb.Out(".");
    ExpectRejected(sb, job, QAIRT_INVALID_ARGUMENT, {"out/.", "not a file name"});
  }
  SECTION("encodings output is a directory") {
    job.out_container.clear();
    fs::create_directories(sb.Out("enc.json"));
    job.out_encodings = sb.Out("enc.json");
    ExpectRejected(sb, job, QAIRT_IO_ERROR, {"enc.json"}, {"enc.json"});
  }
  SECTION("a failing conversion leaves an existing output untouched") {
    std::ofstream(sb.Out("model.qairt")) << "old";
    onnx::ModelProto m = BaseModel();
    Init(m, "conv.w")->mutable_raw_data()->resize(3);
    job.model = Save(sb, m, "bad.onnx");
    ExpectRejected(sb, job, QAIRT_VALIDATION_FAILED, {"'conv.w'", "raw_data has 3 bytes"}, {"model.qairt"});
    CHECK(qairt::hostile::Slurp(sb.Out("model.qairt")) == "old");
  }
  SECTION("an output that is a symlink is replaced, its target never written through") {
    const std::string victim = (sb.root() / "victim.txt").string();
    std::ofstream(victim) << "precious";
    fs::create_symlink(victim, sb.Out("model.qairt"));
    const auto o = qairt::hostile::Convert(job);
    INFO(o.message);
    REQUIRE(o.code == QAIRT_OK);
    CHECK(qairt::hostile::Slurp(victim) == "precious");
    CHECK_FALSE(fs::is_symlink(sb.Out("model.qairt")));
    CHECK(sb.OutFiles() == std::vector<std::string>{"model.qairt"});
  }
}
