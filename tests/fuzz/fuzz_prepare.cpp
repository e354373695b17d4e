// libFuzzer target: the inputs `qairt prepare --target aic100` parses besides
// the model -- the specializations file (flat or named JSON) and the FP32
// node list (YAML FP32NodeInstanceNames or one name a line) -- on a small
// model with two symbolic dimensions (x: [d0, 4, d2] -> Mul by a constant ->
// Relu -> y). The input is split (FuzzedDataProvider) into the two files,
// up to two --define_symbol values and whether the outputs are written to a
// scratch folder. Seeds: tests/fuzz/corpus/prepare.
#include <fuzzer/FuzzedDataProvider.h>

#include <vector>

#include "fuzz_util.h"
#include "import/onnx_model_builder.h"
#include "qairt/qairt_prepare.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string dir = qairt_fuzz::ScratchDir();
  static const std::string model_path = [] {
    qairt::testing::OnnxModelBuilder b;
    b.Input("x", 1, {-1, 4, -1});
    b.Output("y", 1, {-1, 4, -1});
    b.Init("k", 1, {4, 1}, std::vector<float>{0.5f, -2.0f, 70000.0f, 1e-9f});
    b.Node("Mul", {"x", "k"}, {"scaled"}, "scale");
    b.Node("Relu", {"scaled"}, {"y"}, "relu");
    const std::string bytes = b.Bytes();
    const std::string path = qairt_fuzz::ScratchDir() + "/model.onnx";
    qairt_fuzz::WriteFile(path, bytes.data(), bytes.size());
    return path;
  }();

  FuzzedDataProvider in(data, size);
  const std::string specs = in.ConsumeRandomLengthString(4096);
  const std::string fp32 = in.ConsumeRandomLengthString(1024);
  const int64_t d0 = in.ConsumeIntegralInRange<int64_t>(-2, 5);
  const int64_t d2 = in.ConsumeIntegralInRange<int64_t>(-2, 5);
  const bool write = in.ConsumeBool();
  const std::string specs_path = dir + "/specializations.json", fp32_path = dir + "/fp32.yaml";
  qairt_fuzz::WriteFile(specs_path, specs.data(), specs.size());
  qairt_fuzz::WriteFile(fp32_path, fp32.data(), fp32.size());

  const char* names[] = {"d0", "d2"};
  const int64_t values[] = {d0, d2};
  qairt_prepare_options o;
  qairt_prepare_options_init(&o);
  o.model_path = model_path.c_str();
  o.output_dir = write ? dir.c_str() : nullptr;
  o.specializations_path = specs.empty() ? nullptr : specs_path.c_str();
  o.fp32_nodes = fp32.empty() ? nullptr : fp32_path.c_str();
  // d0 = 0 leaves it to the specializations file; negative values must be refused.
  o.num_define_symbols = d0 == 0 ? 1 : 2;
  o.define_symbol_names = d0 == 0 ? names + 1 : names;
  o.define_symbol_values = d0 == 0 ? values + 1 : values;
  o.max_samples = 1;

  qairt_prepare_report_t* report = nullptr;
  qairt_status_t* s = qairt_prepare_run(&o, &report);
  if (s && qairt_status_code(s) != QAIRT_VALIDATION_FAILED) {
    qairt_fuzz::Check(s);
  } else {
    if (s) qairt_status_free(s);
  }
  if (report) {
    for (qairt_report_format_t f : {QAIRT_REPORT_TEXT, QAIRT_REPORT_JSON}) {
      size_t n = 0;
      if (!qairt_fuzz::Check(qairt_prepare_report_render(report, f, nullptr, 0, &n))) std::abort();
      std::vector<char> buf(n + 1);
      if (!qairt_fuzz::Check(qairt_prepare_report_render(report, f, buf.data(), buf.size(), &n))) std::abort();
    }
    for (size_t i = 0; i < qairt_prepare_report_finding_count(report); ++i) {
      qairt_prepare_finding finding = {};
      finding.struct_size = sizeof finding;
      if (!qairt_fuzz::Check(qairt_prepare_report_finding(report, i, &finding))) std::abort();
      if (!finding.code || !finding.message) std::abort();
    }
  }
  qairt_prepare_report_destroy(report);
  return 0;
}
