// Embedding guarantees: concurrent conversions through the C API
// (one graph per thread, one shared read-only target; run under TSan, see
// docs/TESTING.md), byte-identical outputs across runs and thread counts, and
// independence from the host's locale.
#include <clocale>
#include <cmath>
#include <cstring>
#include <thread>
#include <vector>

#include "fuzz/fuzz_models.h"
#include "hostile/hostile_util.h"
#include "qairt/qairt_calib.h"
#include "qairt/qairt_container.h"
#include "qairt/qairt_encodings.h"
#include "qairt/qairt_import.h"
#include "qairt/qairt_process.h"
#include "qairt/qairt_target.h"

using qairt::hostile::Job;
using qairt::hostile::JobFor;
using qairt::hostile::Sandbox;
using qairt::hostile::Slurp;

namespace {

struct Converted {
  std::string error;  // empty on success
  std::vector<uint8_t> container;
  std::string encodings;
  std::string log;
};

std::vector<float> Samples(size_t n, int seed) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = std::sin(0.37f * static_cast<float>(i) + static_cast<float>(seed));
  return v;
}

// Model `variant` (channels 2..5) calibrated on 3 samples, processed for the
// shared target, serialized. Only the C API: what a host process does.
Converted ConvertInMemory(int variant, const qairt_target_t* target, uint32_t threads) {
  Converted out;
  auto fail = [&](qairt_status_t* s) {
    if (!s) return false;
    out.error = qairt_status_message(s);
    qairt_status_free(s);
    return true;
  };
  const int64_t channels = 2 + variant % 4, hw = 4;
  const std::string model = qairt_fuzz::SmallConvModel(channels, hw, variant);
  qairt_graph_t* g = nullptr;
  if (fail(qairt_import_onnx_bytes(model.data(), model.size(), nullptr, &g, nullptr))) return out;
  const size_t n = static_cast<size_t>(channels * hw * hw);
  std::vector<std::vector<float>> data;
  std::vector<const void*> ptrs;
  std::vector<size_t> sizes;
  for (int s = 0; s < 3; ++s) data.push_back(Samples(n, variant * 10 + s));
  for (const auto& d : data) {
    ptrs.push_back(d.data());
    sizes.push_back(d.size() * sizeof(float));
  }
  qairt_calibration_options co;
  qairt_calibration_options_init(&co);
  co.num_threads = threads;
  co.flags = QAIRT_CALIBRATION_PER_CHANNEL;
  co.act_bitwidth = 16;
  if (!fail(qairt_calibrate_buffers(g, data.size(), ptrs.data(), sizes.data(), &co, nullptr))) {
    qairt_process_options po;
    qairt_process_options_init(&po);
    po.target = target;
    po.log_level = QAIRT_QUANTIZER_LOG_INFO;
    qairt_process_result_t* r = nullptr;
    if (!fail(qairt_process(g, &po, &r))) {
      out.log = qairt_process_result_log(r);
      size_t size = 0;
      if (!fail(qairt_container_write_bytes(g, nullptr, nullptr, 0, &size))) {
        out.container.resize(size);
        fail(qairt_container_write_bytes(g, nullptr, out.container.data(), size, &size));
      }
      size_t len = 0;
      if (!fail(qairt_encodings_write_bytes(nullptr, g, nullptr, nullptr, nullptr, 0, &len))) {
        out.encodings.resize(len + 1);
        fail(qairt_encodings_write_bytes(nullptr, g, nullptr, nullptr, out.encodings.data(), len + 1, &len));
        out.encodings.resize(len);
      }
    }
    qairt_process_result_destroy(r);
  }
  qairt_graph_destroy(g);
  return out;
}

struct TargetHandle {
  qairt_target_t* t = nullptr;
  TargetHandle() { REQUIRE(qairt_target_load_builtin("htp_v73", &t) == nullptr); }
  ~TargetHandle() { qairt_target_destroy(t); }
};

}  // namespace

TEST_CASE("different models convert concurrently with one shared target", "[hostile][threads]") {
  TargetHandle target;
  constexpr int kThreads = 4;
  // Reference: one after the other.
  std::vector<Converted> serial;
  for (int i = 0; i < kThreads; ++i) serial.push_back(ConvertInMemory(i, target.t, 1));
  for (const auto& c : serial) {
    INFO(c.error);
    REQUIRE(c.error.empty());
    REQUIRE(!c.container.empty());
  }
  // Different models give different outputs (the comparison below means something).
  CHECK(serial[0].container != serial[1].container);

  for (int round = 0; round < 2; ++round) {
    std::vector<Converted> parallel(kThreads);
    std::vector<std::thread> threads;
    for (int i = 0; i < kThreads; ++i)
      threads.emplace_back([&, i] { parallel[i] = ConvertInMemory(i, target.t, 1 + i % 2); });
    for (auto& t : threads) t.join();
    for (int i = 0; i < kThreads; ++i) {
      INFO("thread " << i << ": " << parallel[i].error);
      CHECK(parallel[i].error.empty());
      CHECK(parallel[i].container == serial[i].container);
      CHECK(parallel[i].encodings == serial[i].encodings);
      CHECK(parallel[i].log == serial[i].log);
    }
  }
}

TEST_CASE("outputs are byte-identical across runs and thread counts", "[hostile][determinism][threads]") {
  TargetHandle target;
  const Converted a = ConvertInMemory(3, target.t, 1);
  const Converted b = ConvertInMemory(3, target.t, 1);
  const Converted c = ConvertInMemory(3, target.t, 2);
  const Converted d = ConvertInMemory(3, target.t, 0);  // all cores
  REQUIRE(a.error.empty());
  CHECK(a.encodings.find("\"y_scale\"") != std::string::npos);
  for (const Converted* other : {&b, &c, &d}) {
    INFO(other->error);
    CHECK(other->container == a.container);
    CHECK(other->encodings == a.encodings);
    CHECK(other->log == a.log);
  }
}

TEST_CASE("files written are byte-identical across runs, thread counts and host locales", "[hostile][determinism][locale]") {
  Sandbox sb;
  const std::string model = sb.Put("model.onnx", qairt_fuzz::SmallConvModel());
  std::string list;
  for (int s = 0; s < 4; ++s) {
    const std::vector<float> v = Samples(256, s);
    sb.Put("s" + std::to_string(s) + ".raw", std::string(reinterpret_cast<const char*>(v.data()), v.size() * 4));
    list += "x:=s" + std::to_string(s) + ".raw\n";
  }
  const std::string list_path = sb.Put("list.txt", list);
  // Overrides with decimals: the reader runs under each locale too.
  const std::string overrides = sb.Put("enc.json", R"({"version":"2.0.0","encodings":[{"name":"relu_out",)"
                                                   R"("output_dtype":"uint8","y_scale":0.0125,"y_zero_point":0}]})");
  auto run = [&](const std::string& tag, uint32_t threads) {
    Job j = JobFor(sb, model);
    j.input_list = list_path;
    j.encodings = overrides;
    j.num_threads = threads;
    j.out_container = sb.Out(tag + ".qairt");
    j.out_encodings = sb.Out(tag + ".json");
    const auto o = qairt::hostile::Convert(j);
    INFO(o.message);
    REQUIRE(o.code == QAIRT_OK);
    return std::make_pair(Slurp(j.out_container), Slurp(j.out_encodings));
  };
  const auto first = run("a", 1);
  CHECK(run("b", 1) == first);
  CHECK(run("c", 2) == first);
  REQUIRE(first.second.find("0.01") != std::string::npos);  // decimals present: the locale check can fail

  // A host (IDE, Qt, Python) switched to a comma-decimal locale.
  const std::string saved = std::setlocale(LC_ALL, nullptr);
  const char* de = std::setlocale(LC_ALL, "de_DE.UTF-8");
  REQUIRE(de != nullptr);  // scripts/setup-deps.sh generates it
  char buf[16];
  std::snprintf(buf, sizeof buf, "%.1f", 0.5);
  CHECK(std::string(buf) == "0,5");  // the locale is really in effect
  const auto german = run("de", 2);
  std::setlocale(LC_ALL, saved.c_str());
  CHECK(german.first == first.first);
  CHECK(german.second == first.second);
  // And what was written under de_DE reads back under C.
  qairt_encodings_t* enc = nullptr;
  CHECK(qairt_encodings_load_file(sb.Out("de.json").c_str(), nullptr, nullptr, &enc) == nullptr);
  CHECK(qairt_encodings_entry_count(enc) > 0);
  qairt_encodings_destroy(enc);
}
