// libFuzzer target: calibration statistics files (.stats). The bytes are
// loaded (verified), written back (must load again to the same bytes),
// merged with themselves (must be refused: the same shard twice) and, when
// complete, used to calibrate a small graph (accepted or refused with a
// message, e.g. another model's fingerprint). Seeds: tests/fuzz/corpus/stats.
#include <vector>

#include "fuzz_models.h"
#include "fuzz_util.h"
#include "qairt/qairt_calib.h"
#include "qairt/qairt_import.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static qairt_graph_t* base = qairt_fuzz::ImportBaseGraph(qairt_fuzz::SmallConvModel(2, 2));
  qairt_calibration_stats_t* stats = nullptr;
  if (!qairt_fuzz::Check(qairt_calibration_stats_load_bytes(data, size, &stats))) return 0;
  size_t n = 0;
  if (!qairt_fuzz::Check(qairt_calibration_stats_write_bytes(stats, nullptr, 0, &n))) std::abort();
  std::vector<char> again(n);
  if (!qairt_fuzz::Check(qairt_calibration_stats_write_bytes(stats, again.data(), again.size(), &n))) std::abort();
  qairt_calibration_stats_t* reloaded = nullptr;
  if (!qairt_fuzz::Check(qairt_calibration_stats_load_bytes(again.data(), again.size(), &reloaded))) std::abort();
  qairt_calibration_stats_destroy(reloaded);

  const qairt_calibration_stats_t* twice[2] = {stats, stats};
  qairt_calibration_stats_t* merged = nullptr;
  if (qairt_fuzz::Check(qairt_calibration_stats_merge(twice, 2, &merged))) std::abort();  // a shard counted twice

  qairt_graph_t* g = nullptr;
  if (!qairt_fuzz::Check(qairt_graph_clone(base, &g))) std::abort();
  qairt_calibration_options o;
  qairt_calibration_options_init(&o);
  o.act_method = qairt_calibration_stats_round(stats) == 2 ? QAIRT_CALIBRATION_MSE : QAIRT_CALIBRATION_MIN_MAX;
  qairt_calibration_report_t* report = nullptr;
  qairt_fuzz::Check(qairt_calibrate_from_stats(g, stats, &o, &report));
  qairt_calibration_report_destroy(report);
  qairt_graph_destroy(g);
  qairt_calibration_stats_destroy(stats);
  return 0;
}
