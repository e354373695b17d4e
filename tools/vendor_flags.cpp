#include "vendor_flags.h"

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace qairt_cli {

namespace {

enum class Disposition { kNoOp, kRefused };

struct VendorFlag {
  const char* spellings;  // '|'-separated
  int values;             // arguments the flag takes (-1: zero or one, if the next does not start with '-')
  Disposition disposition;
  const char* reason;     // why it is a no-op here, or why it is refused (and what to use)
};

constexpr const char* kInternal = "an internal switch of the vendor's graph optimiser with no qairt equivalent";

// Sources: ../shared/spec (classic flow, quantization spec) and the vendor
// converter's option list with defaults (research/converter-defaults.md).
constexpr VendorFlag kFlags[] = {
    // Model loading
    {"--defer_loading|--disable_defer_loading", 0, Disposition::kNoOp,
     "qairt memory-maps external weights and reads them when they are used"},
    {"-n|--no_simplification|--onnx_skip_simplification", 0, Disposition::kRefused,
     "qairt has no separate simplifier: its importer folds constant subgraphs (the import report counts them)"},
    {"--keep_disconnected_nodes", 0, Disposition::kRefused,
     "qairt keeps the ops the model's outputs need; choose outputs in the model"},
    // Inputs and outputs
    {"--custom_io|--config", 1, Disposition::kRefused,
     "qairt reads no I/O YAML: use --quantized_io, --input_encoding NAME other and -d NAME DIMS"},
    {"--dump_custom_io_config_template|--dump_config_template|--dump_qairt_io_config_yaml", 1, Disposition::kRefused,
     "qairt reads no I/O YAML, so it writes no template"},
    {"--desired_input_layout|--desired_output_layout", 2, Disposition::kRefused,
     "qairt keeps the source model's layout; add a Transpose to the model to change it"},
    {"--perform_axes_to_spatial_first_order", 0, Disposition::kRefused,
     "qairt keeps the source model's layout (no NCHW -> NHWC transform)"},
    {"--keep_quant_nodes", 0, Disposition::kRefused,
     "qairt folds every Quantize/Dequantize pair into encodings, as the quantization spec requires; "
     "--export_qdq_onnx writes a model with Q/DQ nodes"},
    {"--export_format", 1, Disposition::kRefused,
     "qairt writes a .qairt container (-o), an encodings file (--export_encodings) and a Q-DQ ONNX model "
     "(--export_qdq_onnx); it writes no QNN model.cpp or DLC"},
    {"--out_node|--out_name|--out_tensor_node|--out_tensor_name", 1, Disposition::kRefused,
     "choosing outputs other than the model's is not implemented: export the sub-model you want (for ONNX, "
     "onnx.utils.extract_model) and convert that"},
    // Quantizer
    {"--float_bias_bitwidth|--float_bias_bw", 1, Disposition::kRefused,
     "a float bias takes its kernel's float type (16-bit on HTP, --float_bitwidth); a separate width is not "
     "implemented"},
    {"--restrict_quantization_steps", 1, Disposition::kRefused,
     "restricting the weight grid to MIN..MAX steps is not implemented: --param_quantizer_schema symmetric gives "
     "the symmetric grid of --weights_bitwidth"},
    {"--algorithms|--apply_algorithms", 1, Disposition::kRefused,
     "cross-layer equalisation is not implemented; bias correction is --bias_correction; qairt's own rewrites: "
     "--list_rewrites"},
    {"--use_aimet_quantizer", 0, Disposition::kRefused,
     "qairt does not run AIMET: run AIMET and give its encodings with --quantization_overrides"},
    {"--use_native_input_files|--use_native_dtype", 0, Disposition::kNoOp,
     "qairt reads every raw input file in its input's own datatype"},
    {"--use_native_output_files", 0, Disposition::kRefused,
     "qairt convert writes no output tensors; qairt run --output_dir does"},
    {"--pack_4_bit_weights", 0, Disposition::kNoOp, "qairt always packs 4-bit static tensors two values per byte"},
    {"--calc_static_encodings|--use_quantize_v2|--include_data_invariant_ops", 0, Disposition::kRefused,
     "an internal switch of the vendor quantizer with no qairt equivalent"},
    // Logs and metadata
    {"--debug", -1, Disposition::kRefused,
     "qairt has no debug log level: use --quantizer_log_level TRACE or --diagnostics FILE"},
    {"--overwrite_model_prefix|--exclude_named_tensors", 0, Disposition::kRefused, "qairt writes no model.cpp"},
    {"--dump_qairt_quantizer_command", 0, Disposition::kRefused,
     "qairt convert is one step: there is no separate quantizer command"},
    {"--dump_ir|--dump_inferred_model|--dump_value_info", 0, Disposition::kRefused,
     "use qairt inspect --json for the imported graph, --export_qdq_onnx for the converted one"},
    {"--enable_framework_trace", 0, Disposition::kRefused, "qairt has no framework trace"},
    {"--arch_checker", 0, Disposition::kRefused,
     "qairt has no architecture checker: --dry_run lists the ops the target has no kernel for"},
    {"--disable_node_validation|--disable_qnn_op_config_validation", 0, Disposition::kRefused,
     "qairt's kernel check cannot be skipped; --dry_run shows it"},
    // Graph optimiser internals
    {"--align_matmul_ranks|--squash_box_decoder|--match_caffe_ssd_to_tf|--adjust_nms_features_dims|"
     "--extract_color_transform|--preprocess_roi_pool_inputs|--force_prune_cast_ops|--enable_match_gathernd|"
     "--enable_match_topk|--prepare_inputs_as_params|--use_convert_quantization_nodes",
     0, Disposition::kRefused, kInternal},
    {"--optimization_pass_mode", 1, Disposition::kRefused, kInternal},
    {"--expand_lstm_op_structure|--expand_gru_op_structure|--expand_sparse_op_structure|--unroll_lstm_time_steps|"
     "--unroll_gru_time_steps|--multi_time_steps_lstm|--multi_time_steps_gru",
     0, Disposition::kRefused, "qairt imports LSTM and GRU as single ops; expanding or unrolling them is not implemented"},
    {"--apply_masked_softmax|--packed_masked_softmax_inputs", 0, Disposition::kRefused,
     "the vendor's masked-softmax rewrite for LLMs is not implemented"},
    {"--packed_max_seq", 1, Disposition::kRefused, "the vendor's masked-softmax rewrite for LLMs is not implemented"},
    // Custom ops, LoRA, GGUF
    {"-opl|--op_package_lib|-cpl|--converter_op_package_lib|-p|--package_name|-opc|--op_package_config|"
     "--udo_config_paths",
     1, Disposition::kRefused, "qairt has no custom op packages: every op is one of `qairt ops`"},
    {"--lora_weight_list", 1, Disposition::kRefused, "LoRA-updatable weights are not supported"},
    {"--gguf_config", 1, Disposition::kRefused, "GGUF input is not supported"},
};

bool Matches(const char* spellings, const std::string& arg) {
  const char* p = spellings;
  while (*p) {
    const char* bar = std::strchr(p, '|');
    const size_t n = bar ? static_cast<size_t>(bar - p) : std::strlen(p);
    if (arg.size() == n && arg.compare(0, n, p, n) == 0) return true;
    if (!bar) break;
    p = bar + 1;
  }
  return false;
}

}  // namespace

int ParseVendorFlag(int argc, char** argv, int* i, const char* command) {
  const std::string arg = argv[*i];
  for (const VendorFlag& f : kFlags) {
    if (!Matches(f.spellings, arg)) continue;
    if (f.disposition == Disposition::kRefused) {
      std::fprintf(stderr, "qairt %s: %s (a vendor converter flag) is not supported: %s\n", command, arg.c_str(),
                   f.reason);
      return -1;
    }
    int take = f.values;
    if (take < 0) take = *i + 1 < argc && argv[*i + 1][0] != '-' ? 1 : 0;
    if (*i + take >= argc) {
      std::fprintf(stderr, "qairt %s: %s needs %d argument%s\n", command, arg.c_str(), take, take > 1 ? "s" : "");
      return -1;
    }
    *i += take;
    std::fprintf(stderr, "note: %s (a vendor converter flag) changes nothing here: %s\n", arg.c_str(), f.reason);
    return 1;
  }
  return 0;
}

void PrintVendorFlags() {
  std::printf("Vendor converter flags qairt convert handles without an option of its own\n"
              "(accepted: qairt already behaves so; refused: the reason, and what to use):\n\n");
  for (const VendorFlag& f : kFlags) {
    std::string names = f.spellings;
    for (char& c : names)
      if (c == '|') c = ' ';
    std::printf("  %s\n      %s: %s\n", names.c_str(), f.disposition == Disposition::kNoOp ? "accepted" : "refused",
                f.reason);
  }
}

void SplitEqualsForms(int argc, char** argv, std::vector<std::string>* storage, std::vector<char*>* out) {
  storage->clear();
  storage->reserve(2 * static_cast<size_t>(argc));
  for (int k = 0; k < argc; ++k) {
    const std::string a = argv[k];
    const size_t eq = a.find('=');
    if (k > 0 && a.rfind("--", 0) == 0 && eq != std::string::npos && eq > 2) {
      storage->push_back(a.substr(0, eq));
      storage->push_back(a.substr(eq + 1));
    } else {
      storage->push_back(a);
    }
  }
  out->clear();
  for (std::string& s : *storage) out->push_back(s.data());
  out->push_back(nullptr);
}

}  // namespace qairt_cli
