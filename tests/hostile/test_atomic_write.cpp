// Atomic outputs under SIGKILL: a child process writes a large container (or
// ONNX export) over an existing file and is killed at increasing delays. The
// destination must always hold the old file or the complete new one; the only
// other thing a kill may leave is the writer's hidden temporary
// (".<name>.qairt-tmp-XXXXXX", lib/support/atomic_file, for both), never a
// partial file under the real name.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <functional>
#include <regex>
#include <thread>
#include <vector>

#include "hostile/hostile_util.h"
#include "qairt/qairt_container.h"
#include "qairt/qairt_export.h"
#include "qairt/qairt_import.h"

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

// Forks a writer, kills it `delay` after it starts writing; returns true if
// it was killed (false: it finished first).
bool WriteAndKill(const qairt_graph_t* g, const std::string& path, Writer write, std::chrono::microseconds delay) {
  int ready[2];
  REQUIRE(::pipe(ready) == 0);
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::close(ready[0]);
    const char go = 'g';
    if (::write(ready[1], &go, 1) != 1) ::_exit(3);
    qairt_status_t* s = write(g, path.c_str());
    ::_exit(s ? 2 : 0);
  }
  ::close(ready[1]);
  char go = 0;
  REQUIRE(::read(ready[0], &go, 1) == 1);
  ::close(ready[0]);
  std::this_thread::sleep_for(delay);
  ::kill(pid, SIGKILL);
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  if (WIFEXITED(status)) {
    CHECK(WEXITSTATUS(status) == 0);
    return false;
  }
  REQUIRE(WIFSIGNALED(status));
  return true;
}

// Kills writers of `name` at growing delays; checks the folder after each.
void KillLoop(Writer write, const std::string& name, const std::regex& temp_name,
              const std::function<bool(const std::string&)>& complete) {
  Sandbox sb;
  qairt_graph_t* g = BigGraph(size_t{12} << 20);  // 48 MiB of weights
  const std::string path = sb.Out(name);
  std::ofstream(path) << "old";
  int killed_mid_write = 0, finished = 0;
  // One kill at `delay`: checks the folder; returns (killed, a temporary was left).
  auto attempt = [&](std::chrono::microseconds delay) {
    const bool killed = WriteAndKill(g, path, write, delay);
    bool temp_left = false;
    for (const auto& f : sb.OutFiles()) {
      if (f == name) continue;
      INFO("delay " << delay.count() << " us: unexpected file " << f);
      CHECK(std::regex_match(f, temp_name));
      temp_left = true;
      fs::remove(sb.Out(f));  // what a later cleanup does with a dead writer's temporary
    }
    const std::string now = Slurp(path);
    INFO("delay " << delay.count() << " us, killed " << killed << ", " << now.size() << " bytes at the destination");
    CHECK((now == "old" || complete(path)));
    if (killed && temp_left) ++killed_mid_write;
    if (now != "old") {
      ++finished;
      std::ofstream(path, std::ios::trunc) << "old";
    }
    return std::make_pair(killed, temp_left);
  };
  // Growing delays until a write completes before the kill; `early` is the
  // last delay that killed the writer before its temporary existed.
  std::chrono::microseconds early{-1}, late{-1};
  for (int delay_ms : {0, 2, 5, 10, 20, 40, 80, 160, 320, 640, 1280, 5000, 20000}) {
    const std::chrono::microseconds d = std::chrono::milliseconds(delay_ms);
    const auto [killed, temp_left] = attempt(d);
    if (!killed) {
      late = d;
      break;
    }
    if (!temp_left) early = d;
  }
  // The write window (temporary open, bytes going in) may fall between two
  // of those delays on a busy machine: bisect between the last kill that
  // came too early and the first that came too late.
  for (int step = 0; step < 24 && killed_mid_write == 0 && late.count() > early.count() + 1; ++step) {
    const std::chrono::microseconds mid{(std::max<int64_t>(early.count(), 0) + late.count()) / 2};
    const auto [killed, temp_left] = attempt(mid);
    if (!killed) late = mid;
    else if (!temp_left) early = mid;
  }
  qairt_graph_destroy(g);
  // Writes do complete. Whether a kill landed inside the write window is
  // timing: on a loaded machine or under sanitizers (build 10x slower) the
  // window can escape every delay and the bisection, so that is reported,
  // not required; every attempt above checked the destination either way.
  if (killed_mid_write == 0) WARN("no kill landed while the temporary existed; destination checks still ran");
  CHECK(finished > 0);
}

}  // namespace

TEST_CASE("a container writer killed mid-write leaves the old file or the new one", "[hostile][atomic]") {
  KillLoop(WriteContainer, "model.qairt", std::regex(R"(\.model\.qairt\.qairt-tmp-[A-Za-z0-9]{6})"),
           [](const std::string& p) {
             qairt_container_t* c = nullptr;
             qairt_status_t* s = qairt_container_load_file(p.c_str(), &c);
             const bool ok = s == nullptr;
             qairt_status_free(s);
             qairt_container_destroy(c);
             return ok;
           });
}

TEST_CASE("an ONNX export killed mid-write leaves the old file or the new one", "[hostile][atomic]") {
  KillLoop(WriteOnnx, "model.onnx", std::regex(R"(\.model\.onnx\.qairt-tmp-[A-Za-z0-9]{6})"), [](const std::string& p) {
    qairt_graph_t* g = nullptr;
    qairt_status_t* s = qairt_import_onnx_file(p.c_str(), nullptr, &g, nullptr);
    const bool ok = s == nullptr && qairt_graph_tensor_count(g) == 3;
    qairt_status_free(s);
    qairt_graph_destroy(g);
    return ok;
  });
}
