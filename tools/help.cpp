// Help texts of the qairt commands, one table per command: usage, the options
// its parser accepts in groups (flag spellings, argument placeholder, one
// sentence, the default) and an example. The tables are the single source of
// the help, the usage line of usage errors and the typo suggestions; the CLI
// test checks them against the parsers' sources so they cannot drift apart.
#include "help.h"

#include <algorithm>
#include <cstring>
#include <string_view>

namespace qairt_cli {

namespace {

struct Option {
  const char* flags;     // spellings separated by ", " ("-i, --input_network"); positional: no leading '-'
  const char* arg;       // placeholder of the value(s), "" for a switch
  const char* sentence;  // what it does, one sentence
  const char* def;       // the default; "required..." prints as is, "" (subcommands, -h) prints nothing
};

struct Group {
  const char* title;
  std::vector<Option> options;
};

struct CommandHelp {
  const char* name;
  const char* usage;  // "qairt ..." lines separated by '\n'
  const char* about;  // one or two sentences
  std::vector<Group> groups;
  const char* example;
};

// Options shared by several commands: one wording wherever they appear.
const Option kInputDim{"-d, --input_dim", "NAME DIMS",
                       "fix the shape of input NAME, e.g. -d data 1,3,224,224; repeatable", "the model's shape"};
const Option kDefineSymbol{"--define_symbol", "NAME VALUE",
                           "give the symbolic dim NAME a value (a non-negative integer); repeatable",
                           "none; symbolic dims stay dynamic"};
const Option kOnnxDefineSymbol{"--onnx-define-symbol", "NAME,VALUE", "--define_symbol in the vendor's spelling",
                               "none"};
const Option kOnnxDefineSymbolEq{"-onnx-define-symbol=NAME,VALUE", "",
                                 "--define_symbol in the vendor's one-argument spelling", "none"};

// Options of the convert parser (cmd_import.cpp Parse + cmd_convert.cpp
// ParseProcessArg), shared by convert and analyze.
const Option kModel{"-i, --input_network", "MODEL", "the ONNX or TFLite model to read", "required"};
const Option kOverrides{"--quantization_overrides", "FILE",
                        "encodings file (2.0.0, 1.0.0 or 0.6.1) applied over the model's own Q-DQ encodings; names "
                        "of tensors the rewrites make (a file --export_encodings wrote) are applied after them",
                        "none"};
const Option kIgnoreOverrides{"--ignore_quantization_overrides", "",
                              "do not read or apply the --quantization_overrides file", "off"};
const Option kKeepInt64{"--keep_int64_inputs", "",
                        "keep int64 graph inputs as int64 instead of narrowing them to int32 as the vendor converter does",
                        "off; int64 inputs become int32"};
const Option kTarget{"--target", "NAME|FILE",
                     "a built-in target (qairt targets list) or a target descriptor file (.qatd or JSON)",
                     "none; one target option is needed unless --dry_run"};
const Option kTargetBackend{"--target_backend", "HTP|LPAI|CPU|AIC",
                            "the target in the vendor's spelling: the backend, with --target_arch for its version",
                            "none"};
const Option kTargetArch{"--target_arch", "vNN", "the backend's architecture version; needs --target_backend",
                         "v73 for HTP, v6 for LPAI"};
const Option kTargetSoc{"--target_soc_model", "SOC",
                        "the target of a Snapdragon SoC, e.g. SM8650; with --target_backend it gives the architecture "
                        "(a SoC of another backend or architecture is an error)",
                        "none"};
const Option kInputList{"--input_list", "LIST",
                        "calibration samples, one line of raw input files per sample; turns calibration on",
                        "none; only the encodings the model and the overrides carry"};
const Option kEvalInputList{"--eval_input_list", "LIST",
                            "samples for the accuracy summary printed after conversion (the --input_list itself "
                            "measures on the calibration samples)",
                            "none: no accuracy is measured, no model execution beyond calibration"};
const Option kActBitwidth{"--act_bitwidth, --act_bw", "8|16", "activation bit width", "8"};
const Option kWeightsBitwidth{"--weights_bitwidth, --weight_bw", "4|8|16", "weight bit width", "8"};
const Option kBiasBitwidth{"--bias_bitwidth, --bias_bw", "8|32", "bias bit width", "32"};
const Option kFloatBitwidth{"--float_bitwidth, --float_bw", "16|32", "bit width of tensors left without encodings",
                            "the target's default"};
const Option kFloatFallback{"--float_fallback, --enable_float_fallback", "",
                            "without --input_list: weights the encodings leave out are encoded from their values "
                            "(the weight flags apply); activations without an encoding run in float "
                            "(--float_bitwidth; the stats count them as FP16/FP32 FALLBACK, which qairt does anyway); "
                            "as the vendor converter, refused with --input_list", "off"};
const Option kQuantizedIo{"--quantized_io", "",
                          "graph inputs and outputs take the quantized type instead of a Quantize/Dequantize at the edge",
                          "off; float inputs and outputs"};
const Option kNoBiasAwareWeightScales{
    "--no_bias_aware_weight_scales", "",
    "keep calibrated weight scales even where input scale x weight scale cannot hold a channel's int32 bias "
    "(then the bias saturates, with a warning)",
    "off: such a channel's weight scale is raised just enough"};
const Option kActCalibration{"--act_quantizer_calibration", "min-max|sqnr|mse|percentile",
                             "how activation ranges are chosen from the observed values", "min-max"};
const Option kParamCalibration{"--param_quantizer_calibration", "min-max|sqnr|mse|percentile|seqmse",
                               "how weight ranges are chosen; seqmse: by each FullyConnected, MatMul and convolution's "
                               "output error on the samples, its quantized predecessors feeding it (needs --input_list; "
                               "runs the samples once per level of weighted ops)",
                               "min-max"};
const Option kActSchema{"--act_quantizer_schema", "asymmetric|symmetric|unsignedsymmetric",
                        "the activation encodings' symmetry", "asymmetric"};
const Option kParamSchema{"--param_quantizer_schema", "asymmetric|symmetric|unsignedsymmetric",
                          "the weight encodings' symmetry", "symmetric"};
const Option kActQuantizer{"--act_quantizer", "tf|enhanced|symmetric",
                           "legacy spelling: tf = min-max asymmetric, enhanced = sqnr asymmetric, symmetric = min-max symmetric",
                           "tf"};
const Option kParamQuantizer{"--param_quantizer", "tf|enhanced|symmetric", "legacy spelling of the weight method and schema",
                             "symmetric"};
const Option kPercentile{"--percentile_calibration_value", "P", "the percentile of the percentile method, in [50, 100]",
                         "99.99"};
const Option kPerChannel{"--use_per_channel_quantization", "", "one encoding per output channel of convolution weights",
                         "off; per tensor"};
const Option kPerRow{"--use_per_row_quantization", "",
                     "one encoding per row of MatMul/FullyConnected weights (MatMul by constants becomes FullyConnected)",
                     "off"};
const Option kBlockSize{"--weights_block_size", "N", "block-wise MatMul, FullyConnected and convolution weights: blocks of N >= 2 along the input dim (a convolution's block: N input channels with all their taps)",
                        "0; no blocks"};
const Option kLpbq{"--use_lpbq", "", "low-power block quantization of the blocks (needs 4-bit weights)", "off"};
const Option kAdaptiveRounding{"--adaptive_rounding", "",
                               "round each FullyConnected, MatMul and convolution weight up or down as lowers its "
                               "op's output error on the samples (needs --input_list; runs the samples once per "
                               "level of weighted ops)",
                               "off: to nearest"};
const Option kBiasCorrection{"--bias_correction", "",
                             "move each FullyConnected and convolution bias so its output's mean per channel on the "
                             "samples is the float model's (the shift quantization causes; needs --input_list; runs "
                             "the samples once float and once per level of such ops)",
                             "off"};
const Option kWideFixedRanges{"--wide_fixed_ranges", "",
                              "with 8-bit activations, 16 bits for the outputs of ops whose range the target fixes "
                              "(HTP Softmax, Sigmoid: [0, 1], where 8 bits keep few levels for small probabilities; "
                              "needs --input_list)",
                              "off: 8 bits, as the vendor's converter"};
const Option kAutoQuant{"--auto_quant", "",
                        "choose the calibration techniques by measurement: bias correction, seqmse with adaptive "
                        "rounding, both, mse activation ranges, all, then --wide_fixed_ranges, each calibrated on "
                        "half the samples and scored on the other as the target runs it; the best is used (needs "
                        "--input_list; costs about one calibration with each)",
                        "off"};
const Option kInputEncoding{"--input_encoding", "NAME other",
                            "leave input NAME unquantized (only 'other' is supported); repeatable",
                            "every input quantized"};
const Option kMixedPrecision{"--mixed_precision", "off|budget=DB|percent=P",
                             "per unit, keep the higher precision to meet an output SQNR budget or for P% of the units "
                             "(needs --input_list)",
                             "off"};
const Option kMixedPromotionsOnly{"--mixed_precision_promotions_only", "",
                                  "with --mixed_precision budget=DB: promote only, from the calibration as given (by "
                                  "default a budget that 20% of the layers at the high precision miss makes it measure "
                                  "the calibration techniques, as --auto_quant does, and search again from the best)",
                                  "off"};
const Option kNumThreads{"--num_threads", "N", "threads for weight quantization, rewrites, calibration and accuracy; 0 uses every core", "0 (every core)"};
const Option kNoProgress{"--no_progress", "", "no calibration/accuracy progress on stderr", "off; progress shown"};
const Option kNoRewrites{"--no_rewrites", "", "skip the accuracy rewrites that run before calibration",
                         "off; rewrites run"};
const Option kVerifyRewrites{"--verify_rewrites", "",
                             "check each rewrite by running the model on --input_list (or synthetic) samples", "off"};
const Option kKeepRewrites{"--keep_rewrites", "",
                           "keep every rewrite that fires; with --input_list each one is otherwise kept only where the "
                           "quantized model (calibrated, processed, simulated on up to 4 samples) scores no worse with it",
                           "off; judged when calibrating"};
const Option kDisableRewrite{"--disable_rewrite", "NAME", "skip one rewrite (names: --list_rewrites); repeatable",
                             "none"};
const Option kListRewrites{"--list_rewrites", "", "print the rewrites with a sentence each and exit", "off"};
const Option kOutputPath{"-o, --output_path", "OUT.qairt", "the converted model (a .qairt container; a .dlc name is refused)",
                         "required unless --dry_run or --stop_after"};
const Option kDryRun{"--dry_run", "",
                     "import and check only: inputs, outputs, ops and the target's kernel coverage; writes nothing",
                     "off"};
const Option kJsonDryRun{"--json", "", "the --dry_run report as JSON", "off; text"};
const Option kExportEncodings{"--export_encodings", "FILE", "also write the final encodings as JSON", "none"};
const Option kEncodingsFormat{"--encodings_format", "2.0.0|1.0.0|0.6.1", "the format of --export_encodings", "2.0.0"};
const Option kExportQdq{"--export_qdq_onnx", "FILE",
                        "also write a Q-DQ ONNX model with the encodings and the options as metadata", "none"};
const Option kQdqOpset{"--qdq_opset", "13|21", "the Q-DQ model's opset (13: com.microsoft Q/DQ nodes)",
                       "17, or 21 when a Q/DQ node needs it"};
const Option kCalibrationStats{"--calibration_stats", "MERGED.stats",
                                "calibrate from merged statistics of qairt calibrate instead of --input_list's "
                                "samples (sharded calibration)",
                                "none"};
const Option kQdqExternalData{"--qdq_external_data", "",
                               "write the Q-DQ model's initializers of 1 KiB and more to FILE.data (ONNX external "
                               "data; always so above 1 GiB of weights)",
                               "off"};
const Option kShardOnConvert{"--shard", "K/N", "an option of qairt calibrate (sharded calibration): convert refuses it",
                             "none"};
const Option kRangesOnConvert{"--ranges", "R.stats",
                              "an option of qairt calibrate (sharded calibration): convert refuses it", "none"};
const Option kPlotOnConvert{"--plot", "FILE.svg", "an option of qairt analyze: convert refuses it", "none"};
const Option kReport{"--report", "FILE.html",
                     "also write the HTML report: the graph coloured by precision, each op's encodings, kernel and "
                     "reasons, per-op accuracy with samples, the stats summary (also when processing fails)",
                     "none"};
const Option kQuantizerLog{"--quantizer_log", "FILE", "write the quantizer log (needs --quantizer_log_level)",
                           "none"};
const Option kQuantizerLogLevel{"--quantizer_log_level", "NONE|INFO|TRACE",
                                "INFO: a CSV row per changed tensor; TRACE: every phase and decision", "NONE"};
const Option kDiagnostics{"--diagnostics", "FILE",
                          "write every error and warning with its rule id, op and tensor: SARIF 2.1.0 for .sarif, "
                          "JSON for .json, else text (also when the conversion fails)",
                          "none"};
const Option kInputLayout{"-l, --input_layout, --source_model_input_layout", "NAME LAYOUT",
                          "declare an input's source layout (NCHW, NHWC, NFC, ...; checked against its rank): qairt "
                          "keeps every tensor, and the raw input files, in the source layout",
                          "none"};
const Option kInputDtype{"--input_dtype, --source_model_input_datatype", "NAME DTYPE",
                         "the input's data type; it must be the one qairt gives it (the model's, int32 for int64 "
                         "unless --keep_int64_inputs): changing it is refused",
                         "the model's"};
const Option kPreserveIo{"--preserve_io, --preserve_io_datatype", "[layout|datatype] [NAMES]",
                         "keep graph I/O in the model's layout and data type, as qairt does unless --quantized_io "
                         "(a per-name data type list is refused)",
                         "on, unless --quantized_io"};
const Option kIgnoreEncodings{"--ignore_encodings", "",
                              "drop the model's own encodings (Q-DQ nodes, TFLite quantization) and calibrate every "
                              "tensor; needs --input_list, not with --quantization_overrides",
                              "off"};
const Option kExportFormat{"--export_format", "DLC_DEFAULT|DLC_STRIP_QUANT",
                           "DLC_STRIP_QUANT is --ignore_encodings; the vendor's cpp and dlc are refused",
                           "DLC_DEFAULT"};
const Option kVerbose{"--verbose", "", "list every error; by default alike errors are one line with a count",
                      "off"};
const Option kPrintPipeline{"--print_pipeline", "", "print the processing passes and exit", "off"};
const Option kStopAfter{"--stop_after", "PASS", "stop processing after this pass (names: --print_pipeline)",
                        "every pass runs"};

const Option kHelpOption{"-h, --help", "", "print this help and exit", ""};

std::vector<CommandHelp> MakeTable() {
  std::vector<CommandHelp> t;
  t.push_back({"version", "qairt version\nqairt --version",
               "Prints the library version and its ABI version.",
               {},
               "qairt version"});
  t.push_back({"ops", "qairt ops",
               "Lists the op types of the IR by their QNN names, one a line (the count goes to stderr).",
               {},
               "qairt ops"});
  t.push_back({"dtypes", "qairt dtypes",
               "Lists the element types with their TRACE-log tokens and bit widths.",
               {},
               "qairt dtypes"});
  t.push_back({"inspect",
               "qairt inspect MODEL [-d NAME DIMS]... [--define_symbol NAME VALUE]... "
               "[--target NAME|FILE | --target_soc_model SOC] [--json]\n"
               "qairt inspect FILE.qairt [--json]",
               "Reports a model's inputs, outputs, ops, parameters, encodings and dynamic dims, and whether every op "
               "has a kernel on a target; for a .qairt container, its target and options (only --json applies).",
               {{"input",
                 {{"MODEL", "", "the ONNX or TFLite model, or a .qairt container", "required: MODEL or -i"},
                  {"-i, --input_network", "MODEL", "the model, as a flag", "required: MODEL or -i"}}},
                {"shapes", {kInputDim, kDefineSymbol, kOnnxDefineSymbol, kOnnxDefineSymbolEq}},
                {"target",
                 {{"--target", "NAME|FILE", "also check that every op type has a kernel on this target", "none"},
                  {"--target_soc_model", "SOC", "the same for the target of a Snapdragon SoC (used without --target)",
                   "none"}}},
                {"outputs", {{"--json", "", "the report as JSON", "off; text"}}}},
               "qairt inspect model.onnx -d input 1,3,224,224 --target htp_v73"});
  t.push_back({"convert",
               "qairt convert -i MODEL (--target NAME|FILE | --target_backend HTP|LPAI|CPU|AIC [--target_arch vNN] "
               "| --target_soc_model SOC)\n"
               "              [--input_list LIST] [options] (-o OUT.qairt | --dry_run [--json])",
               "Converts a model for a target (vendor converter flags it has no option for: qairt help vendor): "
               "import, accuracy rewrites, calibration on --input_list, target-specific "
               "processing, then the .qairt container and the optional encodings and Q-DQ ONNX exports.",
               {{"input",
                 {kModel, kOverrides, kIgnoreOverrides, kKeepInt64, kInputLayout, kInputDtype, kPreserveIo,
                  kIgnoreEncodings}},
                {"shapes", {kInputDim, kDefineSymbol, kOnnxDefineSymbol, kOnnxDefineSymbolEq}},
                {"target", {kTarget, kTargetBackend, kTargetArch, kTargetSoc}},
                {"precision",
                 {kActBitwidth, kWeightsBitwidth, kBiasBitwidth, kFloatBitwidth, kFloatFallback, kQuantizedIo,
                  kNoBiasAwareWeightScales}},
                {"quantization (calibration)",
                 {kInputList, kEvalInputList, kCalibrationStats, kActCalibration, kParamCalibration, kActSchema, kParamSchema,
                  kActQuantizer, kParamQuantizer, kPercentile, kPerChannel, kPerRow, kBlockSize, kLpbq, kAdaptiveRounding, kBiasCorrection, kWideFixedRanges, kAutoQuant, kInputEncoding,
                  kMixedPrecision, kMixedPromotionsOnly, kNumThreads, kNoProgress}},
                {"rewrites", {kNoRewrites, kVerifyRewrites, kKeepRewrites, kDisableRewrite, kListRewrites}},
                {"outputs",
                 {kOutputPath, kDryRun, kJsonDryRun, kExportEncodings, kEncodingsFormat, kExportQdq, kQdqOpset, kQdqExternalData,
                  kExportFormat, kReport, kPlotOnConvert, kShardOnConvert, kRangesOnConvert}},
                {"logs", {kQuantizerLog, kQuantizerLogLevel, kDiagnostics, kVerbose, kPrintPipeline, kStopAfter}}},
               "qairt convert -i model.onnx --target htp_v73 --input_list calib/input_list.txt -o model.qairt"});
  t.push_back({"targets",
               "qairt targets list\n"
               "qairt targets show NAME|FILE [--op OPNAME] [--json]\n"
               "qairt targets diff A B [--json]\n"
               "qairt targets soc SOC",
               "Lists the built-in targets and shows a target's ops, kernels and encodings constraints. NAME is a "
               "built-in target; FILE a descriptor, compiled (.qatd) or JSON source.",
               {{"subcommands",
                 {{"list", "", "the built-in targets with their SoCs", ""},
                  {"show", "NAME|FILE", "a target's ops, kernels, super groups and sources", ""},
                  {"diff", "A B", "what differs between two targets", ""},
                  {"soc", "SOC", "the target of a Snapdragon SoC, e.g. SM8550", ""}}},
                {"outputs",
                 {{"--op", "OPNAME", "show only this op type's kernels (show)", "every op"},
                  {"--json", "", "JSON instead of text (show, diff)", "off; text"}}}},
               "qairt targets show htp_v73 --op Conv2d"});
  t.push_back({"encodings",
               "qairt encodings check -i MODEL --quantization_overrides FILE [--format text|json|sarif]\n"
               "                      [shape options] [--version 0.6.1|1.0.0|2.0.0] [--allow_unmatched]\n"
               "qairt encodings convert FILE --to 2.0.0|1.0.0|0.6.1 [-i MODEL [shape options]] -o OUT",
               "Validates an encodings file against a model (diagnostics as text, JSON or SARIF 2.1.0) and converts "
               "between the 2.0.0, 1.0.0 and 0.6.1 formats.",
               {{"subcommands",
                 {{"check", "", "validate the encodings file, against the model when -i is given", ""},
                  {"convert", "", "rewrite the encodings file in another format version", ""}}},
                {"input",
                 {{"FILE", "", "the encodings file (convert; check takes it here or as --quantization_overrides)",
                   "required: FILE or --quantization_overrides"},
                  {"--quantization_overrides", "FILE", "the encodings file, as a flag",
                   "required: FILE or --quantization_overrides"},
                  {"-i, --input_network", "MODEL", "the model the encodings refer to", "none; the file alone"},
                  {"--version", "0.6.1|1.0.0|2.0.0", "read the file as this version", "auto; detected"},
                  {"--allow_unmatched", "", "check: entries naming no tensor of the model are not errors", "off"}}},
                {"shapes", {kInputDim, kDefineSymbol, kOnnxDefineSymbol, kOnnxDefineSymbolEq}},
                {"outputs",
                 {{"--format", "text|json|sarif", "check: the diagnostics' format", "text"},
                  {"--to", "2.0.0|1.0.0|0.6.1", "convert: the version to write", "required for convert"},
                  {"-o, --output_path", "OUT", "convert: the file to write", "required for convert"}}}},
               "qairt encodings check -i model.onnx --quantization_overrides model.encodings --format sarif"});
  t.push_back({"analyze",
               "qairt analyze -i MODEL --input_list LIST [--target NAME|FILE] [calibration options] [--no_rewrites] "
               "[--json] [--plot FILE.svg]",
               "Per-layer quantization sensitivity: how much output SQNR each unit costs at the base precision, "
               "after the same rewrites and calibration settings as convert. It reads convert's options; those "
               "that only shape convert's outputs are accepted and have no effect here.",
               {{"input",
                 {kModel, kOverrides, kIgnoreOverrides, kKeepInt64, kInputLayout, kInputDtype, kPreserveIo,
                  kIgnoreEncodings}},
                {"shapes", {kInputDim, kDefineSymbol, kOnnxDefineSymbol, kOnnxDefineSymbolEq}},
                {"target",
                 {{kTarget.flags, kTarget.arg, "limit the higher precision to what this target has kernels for",
                   "none"},
                  kTargetBackend, kTargetArch, kTargetSoc}},
                {"quantization (calibration)",
                 {{kInputList.flags, kInputList.arg, "the samples the sensitivity is measured on", "required"},
                  kActBitwidth, kWeightsBitwidth, kActCalibration, kParamCalibration, kActSchema, kParamSchema,
                  kActQuantizer, kParamQuantizer, kPercentile, kPerChannel, kPerRow, kBlockSize, kLpbq, kAdaptiveRounding, kBiasCorrection, kWideFixedRanges, kAutoQuant, kInputEncoding,
                  kNumThreads}},
                {"rewrites", {kNoRewrites, kVerifyRewrites, kKeepRewrites, kDisableRewrite, kListRewrites}},
                {"outputs",
                 {{"--json", "", "the sensitivity table as JSON", "off; text"},
                  {"--plot", "FILE.svg", "also write the sensitivity plot as SVG", "none"},
                  {"--report", "FILE.html", "also write the HTML report of the analyzed graph with the sensitivity plot",
                   "none"},
                  {kDiagnostics.flags, kDiagnostics.arg, "an option of qairt convert: analyze refuses it", "none"}}},
                {"logs", {kPrintPipeline}},
                {"accepted for convert's command lines; analyze does not use them and says so in a note",
                 {{kOutputPath.flags, kOutputPath.arg, "analyze writes no model", "none"},
                  {kDryRun.flags, "", "analyze always runs the samples", "off"},
                  {kBiasBitwidth.flags, kBiasBitwidth.arg, "bias bit width of convert", "32"},
                  {kFloatBitwidth.flags, kFloatBitwidth.arg, "float bit width of convert", "the target's default"},
                  {kFloatFallback.flags, "", "changes nothing yet", "off"},
                  {kQuantizedIo.flags, "", "quantized graph I/O of convert", "off"},
                  {kNoBiasAwareWeightScales.flags, "", "a processing option of convert", "off"},
                  {kVerbose.flags, "", "convert's error listing", "off"},
                  {kExportFormat.flags, kExportFormat.arg, "convert's output format (DLC_STRIP_QUANT is "
                   "--ignore_encodings, which analyze honours)", "DLC_DEFAULT"},
                  {kEvalInputList.flags, kEvalInputList.arg, "convert's accuracy samples", "none"},
                  {kMixedPrecision.flags, kMixedPrecision.arg, "convert's mixed precision", "off"},
                  {kMixedPromotionsOnly.flags, "", "convert's mixed precision", "off"},
                  {kNoProgress.flags, "", "analyze shows no progress", "off"},
                  {kExportEncodings.flags, kExportEncodings.arg, "convert's encodings export", "none"},
                  {kEncodingsFormat.flags, kEncodingsFormat.arg, "convert's encodings format", "2.0.0"},
                  {kExportQdq.flags, kExportQdq.arg, "convert's Q-DQ export", "none"},
                  {kQdqOpset.flags, kQdqOpset.arg, "convert's Q-DQ opset", "automatic"},
                  {kQdqExternalData.flags, kQdqExternalData.arg, "convert's Q-DQ external data", "off"},
                  {kCalibrationStats.flags, kCalibrationStats.arg, "convert's statistics input", "none"},
                  {kShardOnConvert.flags, kShardOnConvert.arg, "qairt calibrate's shard", "none"},
                  {kRangesOnConvert.flags, kRangesOnConvert.arg, "qairt calibrate's round 1", "none"},
                  {kQuantizerLog.flags, kQuantizerLog.arg, "convert's quantizer log", "none"},
                  {kQuantizerLogLevel.flags, kQuantizerLogLevel.arg, "convert's quantizer log level", "NONE"},
                  {kStopAfter.flags, kStopAfter.arg, "convert's processing stop", "every pass"}}}},
               "qairt analyze -i model.onnx --input_list calib/input_list.txt --target htp_v73 --plot sensitivity.svg"});
  t.push_back({"compare",
               "qairt compare --float MODEL|FILE.qairt --quantized OUT.qairt --input_list LIST [-d NAME DIMS]... "
               "[--define_symbol NAME VALUE]... [--per_layer] [--json] [--no_progress]",
               "How much accuracy quantization costs: SQNR and cosine per output and, with --per_layer, per encoded "
               "tensor and where it is lost (the ops whose output is much less accurate than their least accurate "
               "input: a Log of values that quantized to 0, a clipped range), running both models on the reference "
               "executor.",
               {{"input",
                 {{"--float", "MODEL|FILE.qairt", "the float reference model", "required"},
                  {"--quantized", "OUT.qairt", "the converted model", "required"},
                  {"--input_list", "LIST", "the samples both models run on", "required"}}},
                {"shapes", {kInputDim, kDefineSymbol}},
                {"outputs",
                 {{"--per_layer", "", "also compare every encoded tensor and name the ops that lose accuracy",
                   "off; outputs only"},
                  {"--json", "", "the report as JSON", "off; text"},
                  {"--no_progress", "", "no progress on stderr", "off; progress shown"}}}},
               "qairt compare --float model.onnx --quantized model.qairt --input_list calib/input_list.txt --per_layer"});
  t.push_back({"calibrate",
               "qairt calibrate -i MODEL --target T --input_list LIST [convert's shape, precision, rewrite and "
               "calibration options] [--shard K/N] [--ranges R.stats] -o OUT.stats\n"
               "qairt calibrate --merge A.stats B.stats ... -o MERGED.stats",
               "Sharded calibration for batch systems: each job observes shard K of N of the samples (samples K, K+N, "
               "K+2N, ...) on the graph qairt convert calibrates and writes mergeable statistics; --merge adds them up "
               "exactly; qairt convert --calibration_stats MERGED.stats then gives the encodings of an unsharded "
               "convert, byte for byte. Round 1 (without --ranges) holds each activation's range; the histogram "
               "methods (mse, sqnr, percentile) need round 2: run the shards again with --ranges MERGED_ROUND1.stats "
               "and merge those. Give every job the options of the final convert.",
               {{"sharding",
                 {{"--shard", "K/N", "observe shard K of N (0 <= K < N)", "0/1; every sample"},
                  {"--ranges", "R.stats", "the merged round 1: collect round 2 (histograms) on its ranges",
                   "none; round 1"},
                  {"--merge", "FILES...", "merge statistics files of one round into -o", "off"},
                  {"-o, --output_path", "OUT.stats", "the statistics file", "required"}}},
                {"convert's options", {kInputList, kActCalibration, kTarget, kNumThreads}}},
               "qairt calibrate -i model.onnx --target htp_v73 --input_list list.txt --shard 0/3 -o s0.stats"});
  t.push_back({"report",
               "qairt report OUT.qairt [--float MODEL --compare LIST] [-d NAME DIMS]... [--define_symbol NAME VALUE]... "
               "-o REPORT.html",
               "Writes the HTML report of a converted model: one self-contained file (no network) with the graph top to "
               "bottom, ops coloured by precision (int4/int8/int16/fp16/fp32), converts and float fallbacks marked, super "
               "groups outlined; clicking an op shows its encodings, kernel and reasons; search by name; the stats "
               "summary and the options. With --float and --compare, each op shows its SQNR against the float model.",
               {{"input",
                 {{"OUT.qairt", "", "the converted model (a .qairt container)", "required"},
                  {"--float", "MODEL", "the float model the container was converted from (with --compare)", "none"},
                  {"--compare", "LIST", "samples to run through both models for per-op accuracy (with --float)",
                   "none; no accuracy"}}},
                {"shapes", {kInputDim, kDefineSymbol}},
                {"outputs",
                 {{"-o, --output", "REPORT.html", "the report", "required"},
                  {"--no_progress", "", "no comparison progress on stderr", "off; progress shown"}}}},
               "qairt report model.qairt --float model.onnx --compare calib/input_list.txt -o model.html"});
  t.push_back({"run",
               "qairt run MODEL.onnx|MODEL.qairt --input_list LIST --output_dir DIR [-d NAME DIMS]... "
               "[--define_symbol NAME VALUE]... [--num_threads N] [--debug] [--no_quant_sim]",
               "Runs a model on the reference CPU executor over the samples of an input_list and writes the outputs as "
               "qnn-net-run does: DIR/Result_<i>/<output name>.raw.",
               {{"input",
                 {{"MODEL", "", "the ONNX or TFLite model, or a .qairt container", "required: MODEL or -i"},
                  {"-i, --input_network", "MODEL", "the model, as a flag", "required: MODEL or -i"},
                  {"--input_list", "LIST", "one line of raw input files per sample (NAME:=PATH entries or in order)",
                   "required"}}},
                {"shapes",
                 {{kInputDim.flags, kInputDim.arg, "fix the shape of input NAME; repeatable (ignored for .qairt)",
                   kInputDim.def},
                  {kDefineSymbol.flags, kDefineSymbol.arg,
                   "give the symbolic dim NAME a value; repeatable (ignored for .qairt)", "none"}}},
                {"execution",
                 {{"--num_threads", "N", "executor threads, 1..1024", "1"},
                  {"--no_quant_sim", "", "run in float even where tensors carry integer encodings",
                   "off; encodings are simulated"}}},
                {"outputs",
                 {{"--output_dir", "DIR", "where Result_<i>/ folders are written", "required"},
                  {"--debug", "", "also write every intermediate tensor of each sample", "off; outputs only"}}}},
               "qairt run model.qairt --input_list calib/input_list.txt --output_dir out"});
  t.push_back({"prepare",
               "qairt prepare -i MODEL --target aic100 [--define_symbol NAME VALUE]... [-d NAME DIMS]...\n"
               "              [--batch_size N] [--specializations FILE [--named_specializations]]\n"
               "              [--input_list LIST [--max_samples N]] [--clip_fp16_constants] [--fp16_min_abs V]\n"
               "              [--fix_additive_masks [--mask_value V]] [--tolerance T] [--force]\n"
               "              [--fp32_nodes auto|FILE [--fp16_budget E]] [--supported_ops OnnxSupportedOperators.txt]\n"
               "              [--external_data_threshold BYTES] [--json] (-o OUT_DIR | --audit_only)",
               "Cloud AI 100 fp16 preparation: audits an ONNX model for qaic-compile -convert-to-fp16 and writes the "
               "prepared model, specializations, fp32 nodes and the compile command.",
               {{"input",
                 {{"-i, --input_network", "MODEL", "the ONNX model", "required"},
                  {"--input_list", "LIST", "samples for the activation-range and fp16 simulation audits",
                   "none; no activation audit"},
                  {"--max_samples", "N", "how many of the --input_list samples are used, 1..1000000", "16"}}},
                {"shapes",
                 {{kDefineSymbol.flags, kDefineSymbol.arg, "give the symbolic dim NAME a positive value; repeatable",
                   "none"},
                  kInputDim,
                  {"--batch_size", "N", "the compile batch size; also binds an undefined symbolic leading dim",
                   "none"},
                  {"--specializations", "FILE", "symbol values of the specializations to compile", "none"},
                  {"--named_specializations", "", "write {\"name\",\"symbols\"} specializations", "off; flat"}}},
                {"target",
                 {{"--target", "aic100", "the target; only aic100 is supported", "required"},
                  {"--supported_ops", "FILE", "the compiler's OnnxSupportedOperators.txt to check the ops against",
                   "none"}}},
                {"fp16",
                 {{"--clip_fp16_constants", "", "clip float32 constants to +-65504", "off; report only"},
                  {"--fp16_min_abs", "V", "raise nonzero constants below |V| to +-V", "0; report only"},
                  {"--fix_additive_masks", "", "set additive-mask values <= -65504 to --mask_value", "off"},
                  {"--mask_value", "V", "what the fixed additive-mask values become", "-10000"},
                  {"--tolerance", "T", "the largest change of a fixed model's outputs allowed", "1e-4"},
                  {"--force", "", "a fixed model beyond --tolerance is a warning, not an error", "off"},
                  {"--fp32_nodes", "auto|FILE", "nodes to keep in fp32: chosen automatically or listed in a file",
                   "none"},
                  {"--fp16_budget", "E", "the fp16 vs fp32 output error --fp32_nodes auto must meet", "1e-2"}}},
                {"outputs",
                 {{"-o, --output_dir", "OUT_DIR", "where the prepared model and its files go",
                   "required unless --audit_only"},
                  {"--audit_only", "", "report the findings and write nothing", "off"},
                  {"--external_data_threshold", "BYTES", "models at least this big keep their weights in a .data file",
                   "2147483648, 2 GiB"},
                  {"--json", "", "the report as JSON", "off; text"}}}},
               "qairt prepare -i model.onnx --target aic100 --define_symbol batch 1 --clip_fp16_constants -o out"});
  t.push_back({"help", "qairt help [COMMAND]\nqairt COMMAND --help|-h",
               "Lists the commands, or prints one command's usage, options and an example.",
               {{"input", {{"COMMAND", "", "the command to describe", "none; the list of commands"}}}},
               "qairt help convert"});
  return t;
}

const std::vector<CommandHelp>& Table() {
  static const std::vector<CommandHelp> table = MakeTable();
  return table;
}

const CommandHelp* Find(const std::string& name) {
  for (const CommandHelp& c : Table())
    if (name == c.name) return &c;
  return nullptr;
}

// The spellings of one option ("-i, --input_network" -> {"-i", "--input_network"}).
std::vector<std::string> Spellings(const char* flags) {
  std::vector<std::string> out;
  std::string_view s = flags;
  while (!s.empty()) {
    const size_t comma = s.find(", ");
    out.emplace_back(s.substr(0, comma));
    if (comma == std::string_view::npos) break;
    s.remove_prefix(comma + 2);
  }
  return out;
}

std::string Column(const Option& o) { return std::string(o.flags) + (*o.arg ? " " : "") + o.arg; }

void PrintUsageLines(const CommandHelp& c, FILE* out) {
  std::string_view s = c.usage;
  const char* lead = "usage: ";
  while (!s.empty()) {
    const size_t nl = s.find('\n');
    std::fprintf(out, "%s%.*s\n", lead, static_cast<int>(s.substr(0, nl).size()), s.data());
    lead = "       ";
    if (nl == std::string_view::npos) break;
    s.remove_prefix(nl + 1);
  }
}

size_t Distance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

std::string Lower(std::string s) {
  for (char& ch : s) ch = static_cast<char>(ch >= 'A' && ch <= 'Z' ? ch - 'A' + 'a' : ch);
  return s;
}

}  // namespace

bool PrintCommandHelp(const std::string& command, FILE* out) {
  const CommandHelp* c = Find(command);
  if (!c) return false;
  PrintUsageLines(*c, out);
  std::fprintf(out, "\n%s\n", c->about);
  // Every command takes -h/--help (main() answers it before the parser runs).
  if (c->groups.empty()) std::fputs("\noptions: none besides -h, --help (this help)\n", out);
  std::vector<Group> groups = c->groups;
  if (!groups.empty()) groups.push_back({"other", {kHelpOption}});
  // One column width per command, capped so a long placeholder does not
  // push every sentence to the right.
  size_t width = 0;
  for (const Group& g : groups)
    for (const Option& o : g.options) width = std::max(width, std::min<size_t>(Column(o).size(), 36));
  for (const Group& g : groups) {
    std::fprintf(out, "\n%s:\n", g.title);
    for (const Option& o : g.options) {
      const std::string col = Column(o);
      const bool required = std::strncmp(o.def, "required", 8) == 0;
      std::fprintf(out, "  %-*s  %s", static_cast<int>(width), col.c_str(), o.sentence);
      if (*o.def) std::fprintf(out, " (%s%s)", required ? "" : "default: ", o.def);
      std::fputc('\n', out);
    }
  }
  std::fprintf(out, "\nexample:\n  %s\n", c->example);
  return true;
}

void PrintCommandUsage(const std::string& command, FILE* out) {
  const CommandHelp* c = Find(command);
  if (!c) return;
  PrintUsageLines(*c, out);
  std::fprintf(out, "every option with its default: qairt help %s\n", c->name);
}

std::string ClosestName(const std::string& word, const std::vector<std::string>& candidates) {
  const std::string w = Lower(word);
  // Short words are within 2 edits of too much ("-x" of every short flag).
  const size_t limit = w.size() <= 4 ? 1 : 2;
  std::string best, prefix_of;
  size_t best_distance = limit + 1, prefixes = 0;
  for (const std::string& cand : candidates) {
    const std::string c = Lower(cand);
    const size_t d = Distance(w, c);
    if (d < best_distance) best_distance = d, best = cand;
    if (w.size() >= 2 && c.size() > w.size() && c.compare(0, w.size(), w) == 0) ++prefixes, prefix_of = cand;
  }
  if (!best.empty()) return best;
  return prefixes == 1 ? prefix_of : std::string();
}

std::string SuggestFlag(const std::string& command, const std::string& arg) {
  const CommandHelp* c = Find(command);
  // Too short to guess from: "-x" is one edit from every one-letter flag.
  if (!c || arg.size() < 3 || arg[0] != '-') return {};
  std::vector<std::string> flags = Spellings(kHelpOption.flags);
  for (const Group& g : c->groups)
    for (const Option& o : g.options)
      for (std::string& s : Spellings(o.flags))
        if (s[0] == '-') flags.push_back(s.substr(0, s.find('=')));
  // "--input_lst=l.txt" misspells the flag, not its value.
  std::string name = Lower(arg.substr(0, arg.find('=')));
  if (name.find_first_not_of('-') == std::string::npos) return {};
  const std::string guess = ClosestName(name, flags);
  return guess.empty() ? std::string() : " (did you mean '" + guess + "'?)";
}

}  // namespace qairt_cli
