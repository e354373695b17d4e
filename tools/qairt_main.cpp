// qairt: command-line front end. Uses only the public C API (it is the first
// client of libqairt.so). Exits 0 on success, 1 on a failed operation, 2 on a
// usage error; messages go to stderr.
#include <qairt/qairt.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "commands.h"
#include "help.h"
#include "vendor_flags.h"

namespace {

int PrintVersion(int, char**) {
  const uint32_t abi = qairt_abi_version();
  std::printf("qairt %s (ABI %u.%u)\n", qairt_version_string(), abi >> 16, abi & 0xFFFFu);
  return 0;
}

int PrintOps(int, char**) {
  const size_t n = qairt_op_type_count();
  for (size_t i = 0; i < n; ++i) std::printf("%s\n", qairt_op_type_name(i));
  std::fprintf(stderr, "%zu op types\n", n);
  return 0;
}

int PrintDTypes(int, char**) {
  std::printf("%-18s %-6s %s\n", "name", "token", "bits");
  for (qairt_dtype_t d = 1;; ++d) {
    const uint32_t bits = qairt_dtype_bitwidth(d);
    if (bits == 0) break;
    std::printf("%-18s %-6s %u\n", qairt_dtype_name(d), qairt_dtype_short_name(d), bits);
  }
  return 0;
}

int PrintHelp(int, char**);

}  // namespace

int RunInspect(int argc, char** argv);  // cmd_import.cpp
int RunConvert(int argc, char** argv);  // cmd_import.cpp
int RunAnalyze(int argc, char** argv);  // cmd_import.cpp
int RunTargets(int argc, char** argv);  // cmd_targets.cpp
int RunEncodings(int argc, char** argv);  // cmd_encodings.cpp
int RunRun(int argc, char** argv);  // cmd_run.cpp
int RunCompare(int argc, char** argv);  // cmd_compare.cpp
int RunPrepare(int argc, char** argv);  // cmd_prepare.cpp
int RunReport(int argc, char** argv);  // cmd_report.cpp
int RunCalibrate(int argc, char** argv);  // cmd_calibrate.cpp

namespace {

// One line per subcommand.
constexpr qairt_cli::Command kCommands[] = {
    {"version", PrintVersion, "print the library version and ABI version"},
    {"ops", PrintOps, "list the op types of the IR (QNN names)"},
    {"dtypes", PrintDTypes, "list the element types with their TRACE-log tokens"},
    {"inspect", RunInspect, "MODEL|FILE.qairt: inputs, outputs, ops, parameters, encodings, dynamic dims; a container's target and options"},
    {"convert", RunConvert, "-i MODEL --target T [--input_list LIST] [--quantization_overrides F] [--quantizer_log F --quantizer_log_level L] -o OUT.qairt | --dry_run [--json]"},
    {"targets", RunTargets, "list | show NAME|FILE [--op OP] [--json] | diff A B [--json] | soc SOC"},
    {"encodings", RunEncodings, "check -i MODEL --quantization_overrides FILE [--format text|json|sarif] | convert FILE --to V -o OUT"},
    {"calibrate", RunCalibrate, "-i MODEL --target T --input_list LIST [--shard K/N] [--ranges R.stats] -o OUT.stats | --merge A.stats B.stats ... -o MERGED.stats: sharded calibration statistics"},
    {"analyze", RunAnalyze, "-i MODEL --input_list LIST [--target T] [calibration options] [--no_rewrites] [--json] [--plot F.svg]: per-layer quantization sensitivity"},
    {"compare", RunCompare, "--float MODEL --quantized OUT.qairt --input_list LIST [-d NAME DIMS] [--per_layer] [--json]: accuracy per output and per layer"},
    {"report", RunReport, "OUT.qairt [--float MODEL --compare LIST] -o REPORT.html: the HTML report (graph by precision, encodings, kernels, per-op accuracy)"},
    {"run", RunRun, "MODEL --input_list LIST --output_dir DIR [-d NAME DIMS] [--define_symbol NAME VALUE] [--num_threads N] [--debug]"},
    {"prepare", RunPrepare, "-i MODEL --target aic100 [--define_symbol N V] [--specializations F] [--input_list L] [--clip_fp16_constants] [--fp32_nodes auto|F] -o OUT_DIR: Cloud AI 100 fp16 preparation and audit"},
    {"help", PrintHelp, "print this message"},
};

void PrintUsage(FILE* out) {
  std::fputs("usage: qairt <command> [options]\n\ncommands:\n", out);
  for (const auto& c : kCommands) std::fprintf(out, "  %-12s %s\n", c.name, c.summary);
  std::fputs("\nqairt help COMMAND (or qairt COMMAND --help) lists a command's options with their defaults.\n"
             "Exit status: 0 done; 1 the operation failed (the model, the data or an output: the cause is printed "
             "first); 2 a usage error (an unknown, missing or conflicting option).\n",
             out);
}

// " (did you mean 'convert'?)" for a misspelled command, "" otherwise.
std::string SuggestCommand(const std::string& name) {
  std::vector<std::string> names;
  for (const auto& c : kCommands) names.emplace_back(c.name);
  const std::string guess = qairt_cli::ClosestName(name, names);
  return guess.empty() ? std::string() : " (did you mean '" + guess + "'?)";
}

// `qairt help` lists the commands; `qairt help CMD` prints CMD's help.
int PrintHelp(int argc, char** argv) {
  if (argc < 2) {
    PrintUsage(stdout);
    return 0;
  }
  std::string name = argv[1];
  if (name == "--help" || name == "-h") name = "help";
  if (name == "--version") name = "version";
  if (name == "vendor") {
    qairt_cli::PrintVendorFlags();
    return 0;
  }
  for (const auto& c : kCommands)
    if (name == c.name) {
      if (qairt_cli::PrintCommandHelp(name, stdout)) return 0;
      std::fprintf(stdout, "usage: qairt %s %s\n", c.name, c.summary);  // a command without a help table
      return 0;
    }
  std::fprintf(stderr, "qairt help: unknown command '%s'%s\n\n", name.c_str(), SuggestCommand(name).c_str());
  PrintUsage(stderr);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    PrintUsage(stderr);
    return 2;
  }
  if ((qairt_abi_version() >> 16) != QAIRT_ABI_MAJOR) {
    std::fprintf(stderr, "qairt: libqairt ABI %u does not match this tool's %d\n", qairt_abi_version() >> 16,
                 QAIRT_ABI_MAJOR);
    return 1;
  }
  std::string command = argv[1];
  if (command == "--version") command = "version";
  if (command == "--help" || command == "-h") command = "help";
  for (const auto& c : kCommands) {
    if (command != c.name) continue;
    // -h/--help anywhere in a command's arguments answers before its parser
    // runs, so no parser has to know about it (`help` reads its own argument).
    if (command != "help")
      for (int i = 2; i < argc; ++i)
        if (std::strcmp(argv[i], "--help") == 0 || std::strcmp(argv[i], "-h") == 0) {
          char name[] = "help";
          char* help_argv[] = {name, argv[1], nullptr};
          return PrintHelp(2, help_argv);
        }
    return c.run(argc - 1, argv + 1);
  }
  std::fprintf(stderr, "qairt: unknown command '%s'%s\n\n", command.c_str(), SuggestCommand(command).c_str());
  PrintUsage(stderr);
  return 2;
}
