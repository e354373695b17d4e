// Atomic outputs under SIGKILL, at a known point: a child process writes a
// container (or ONNX export) with the test hook QAIRT_TEST_STOP_IN_WRITE
// set (lib/support/atomic_file), stops itself inside the write, once the
// bytes are in the file and before the file has a name, and is killed there.
// The destination must hold the old file (or nothing, when there was none)
// and the folder nothing else: no partial file under the real name, no
// temporary. Without the hook the same write completes.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <functional>
#include <vector>

#include "hostile/hostile_util.h"
#include "qairt/qairt_container.h"
#include "qairt/qairt_export.h"
#include "qairt/qairt_import.h"
#include "qairt/qairt.h"

using qairt::hostile::Sandbox;
using qairt::hostile::Slurp;
namespace fs = std::filesystem;

namespace {

// y = x + w with w holding `n` floats (n * 4 bytes of weights).
qairt_graph_t* BigGraph(size_t n) {
  qairt_graph_t* g = nullptr;
  REQUIRE(qairt_graph_create(nullptr, &g) == nullptr);
  const int64_t dims[2] = {1, static_cast<int64_t>(n)};
  qairt_tensor_desc d;
  qairt_tensor_desc_init(&d);
  d.dtype = QAIRT_DTYPE_FLOAT32;
  d.rank = 2;
  d.dims = dims;
  d.name = "x";
  qairt_tensor_id x = 0, w = 0, y = 0;
  REQUIRE(qairt_graph_add_input(g, &d, &x) == nullptr);
  std::vector<float> weights(n);
  for (size_t i = 0; i < n; ++i) weights[i] = static_cast<float>(i % 1000) * 0.001f;
  d.name = "w";
  REQUIRE(qairt_graph_add_constant(g, &d, weights.data(), weights.size() * 4, 0, &w) == nullptr);
  d.name = "y";
  d.dtype = QAIRT_DTYPE_UNDEFINED;
  d.rank_known = 0;
  REQUIRE(qairt_graph_add_tensor(g, &d, &y) == nullptr);
  qairt_op_desc op;
  qairt_op_desc_init(&op);
  op.type = "ElementWiseAdd";
  op.name = "add";
  const qairt_tensor_id ins[2] = {x, w};
  op.inputs = ins;
  op.num_inputs = 2;
  op.outputs = &y;
  op.num_outputs = 1;
  qairt_op_id id = 0;
  REQUIRE(qairt_graph_add_op(g, &op, &id) == nullptr);
  REQUIRE(qairt_graph_mark_output(g, y) == nullptr);
  return g;
}

using Writer = qairt_status_t* (*)(const qairt_graph_t*, const char*);

qairt_status_t* WriteContainer(const qairt_graph_t* g, const char* path) { return qairt_container_write_file(g, path, nullptr); }
qairt_status_t* WriteOnnx(const qairt_graph_t* g, const char* path) { return qairt_export_onnx_file(g, path, nullptr); }

// Forks a writer of `path` that stops inside the write (the hook), kills it
// there and checks the folder; then writes for real.
void KillInsideWrite(Writer write, const std::string& name, bool old_file,
                     const std::function<bool(const std::string&)>& complete) {
  Sandbox sb;
  qairt_graph_t* g = BigGraph(size_t{1} << 20);  // 4 MiB of weights
  const std::string path = sb.Out(name);
  if (old_file) std::ofstream(path) << "old";
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::setenv("QAIRT_TEST_STOP_IN_WRITE", name.c_str(), 1);
    qairt_status_t* s = write(g, path.c_str());
    ::_exit(s ? 2 : 0);
  }
  int status = 0;
  REQUIRE(::waitpid(pid, &status, WUNTRACED) == pid);
  REQUIRE(WIFSTOPPED(status));  // the kill lands inside the write, every time
  ::kill(pid, SIGKILL);
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  CHECK(WIFSIGNALED(status));
  const std::vector<std::string> left = sb.OutFiles();
  if (old_file) {
    CHECK(Slurp(path) == "old");
    CHECK(left == std::vector<std::string>{name});
  } else {
    CHECK(left.empty());  // neither a partial file nor a temporary
  }
  qairt_status_t* s = write(g, path.c_str());
  CHECK(s == nullptr);
  qairt_status_free(s);
  CHECK(complete(path));
  CHECK(sb.OutFiles() == std::vector<std::string>{name});
  qairt_graph_destroy(g);
}

}  // namespace

namespace {

bool LoadsAsContainer(const std::string& p) {
  qairt_container_t* c = nullptr;
  qairt_status_t* s = qairt_container_load_file(p.c_str(), &c);
  const bool ok = s == nullptr;
  qairt_status_free(s);
  qairt_container_destroy(c);
  return ok;
}

bool ImportsAsTheModel(const std::string& p) {
  qairt_graph_t* g = nullptr;
  qairt_status_t* s = qairt_import_onnx_file(p.c_str(), nullptr, &g, nullptr);
  const bool ok = s == nullptr && qairt_graph_tensor_count(g) == 3;
  qairt_status_free(s);
  qairt_graph_destroy(g);
  return ok;
}

}  // namespace

TEST_CASE("a container writer killed inside its write leaves the old file and nothing else", "[hostile][atomic]") {
  KillInsideWrite(WriteContainer, "model.qairt", true, LoadsAsContainer);
  KillInsideWrite(WriteContainer, "model.qairt", false, LoadsAsContainer);
}

TEST_CASE("an ONNX export killed inside its write leaves the old file and nothing else", "[hostile][atomic]") {
  KillInsideWrite(WriteOnnx, "model.onnx", true, ImportsAsTheModel);
  KillInsideWrite(WriteOnnx, "model.onnx", false, ImportsAsTheModel);
}

namespace {

// The public writer, with the bytes of a 4 MiB container of the graph.
qairt_status_t* WritePublic(const qairt_graph_t* g, const char* path) {
  size_t n = 0;
  if (qairt_status_t* s = qairt_container_write_bytes(g, nullptr, nullptr, 0, &n)) return s;
  std::vector<char> bytes(n);
  if (qairt_status_t* s = qairt_container_write_bytes(g, nullptr, bytes.data(), bytes.size(), &n)) return s;
  return qairt_write_file_atomically(path, bytes.data(), n);
}

}  // namespace

TEST_CASE("qairt_write_file_atomically killed inside its write leaves the old file and nothing else",
          "[hostile][atomic]") {
  KillInsideWrite(WritePublic, "bytes.qairt", true, LoadsAsContainer);
  KillInsideWrite(WritePublic, "bytes.qairt", false, LoadsAsContainer);
}

TEST_CASE("qairt_write_file_atomically: errors name the path, empty files are written", "[hostile][atomic]") {
  Sandbox sb;
  const std::string missing = sb.Out("no/such/folder/f.txt");
  qairt_status_t* s = qairt_write_file_atomically(missing.c_str(), "x", 1);
  REQUIRE(s != nullptr);
  CHECK(qairt_status_code(s) == QAIRT_IO_ERROR);
  CHECK(std::string(qairt_status_message(s)).find(missing) != std::string::npos);
  qairt_status_free(s);
  s = qairt_write_file_atomically(sb.Out("d").c_str(), nullptr, 3);
  CHECK(qairt_status_code(s) == QAIRT_INVALID_ARGUMENT);
  qairt_status_free(s);
  CHECK(sb.OutFiles().empty());
  const std::string empty = sb.Out("empty.txt");
  CHECK(qairt_write_file_atomically(empty.c_str(), nullptr, 0) == nullptr);
  CHECK(fs::exists(empty));
  CHECK(fs::file_size(empty) == 0);
}
