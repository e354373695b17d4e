// libFuzzer target: calibration input_list plus raw tensor files. The input
// is split (FuzzedDataProvider) into the list text and three raw files
// a.raw, b.raw and sub/c.raw in a scratch folder; the list is then used to
// calibrate a small graph (input x: float32 [1,2,2,2], 32 bytes per sample).
// Seeds: tests/fuzz/corpus/input_list.
#include <fuzzer/FuzzedDataProvider.h>

#include "fuzz_models.h"
#include "fuzz_util.h"
#include "qairt/qairt_calib.h"
#include "qairt/qairt_import.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static qairt_graph_t* base = qairt_fuzz::ImportBaseGraph(qairt_fuzz::SmallConvModel(2, 2));
  static const std::string dir = qairt_fuzz::ScratchDir();
  static const bool made = ::mkdir((dir + "/sub").c_str(), 0755) == 0;
  (void)made;

  FuzzedDataProvider in(data, size);
  const std::string list = in.ConsumeRandomLengthString(4096);
  for (const char* name : {"/a.raw", "/b.raw", "/sub/c.raw"}) {
    const std::string raw = in.ConsumeRandomLengthString(256);
    qairt_fuzz::WriteFile(dir + name, raw.data(), raw.size());
  }
  const uint32_t threads = in.ConsumeIntegralInRange<uint32_t>(1, 2);
  const std::string list_path = dir + "/list.txt";
  qairt_fuzz::WriteFile(list_path, list.data(), list.size());

  qairt_graph_t* g = nullptr;
  if (!qairt_fuzz::Check(qairt_graph_clone(base, &g))) std::abort();
  qairt_calibration_options opts;
  qairt_calibration_options_init(&opts);
  opts.num_threads = threads;
  qairt_calibration_report_t* report = nullptr;
  if (qairt_fuzz::Check(qairt_calibrate_input_list(g, list_path.c_str(), &opts, &report))) {
    for (size_t i = 0; i < qairt_calibration_report_warning_count(report); ++i)
      if (!qairt_calibration_report_warning(report, i)) std::abort();
  }
  qairt_calibration_report_destroy(report);
  qairt_graph_destroy(g);
  return 0;
}
