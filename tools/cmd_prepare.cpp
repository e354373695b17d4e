// qairt prepare -i MODEL --target aic100 ... -o OUT_DIR: the Cloud AI 100
// preparation (lib/prepare/prepare.h) through the C ABI.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "cli_util.h"
#include "help.h"
#include "qairt/qairt.h"
#include "qairt/qairt_prepare.h"

using qairt_cli::ParseDims;
using qairt_cli::ParseInt;

namespace {

const char kUsage[] =
    "usage: qairt prepare -i MODEL --target aic100 [--define_symbol NAME VALUE]... [-d NAME DIMS]...\n"
    "                     [--batch_size N] [--specializations FILE [--named_specializations]]\n"
    "                     [--input_list LIST [--max_samples N]] [--clip_fp16_constants] [--fp16_min_abs V]\n"
    "                     [--fix_additive_masks [--mask_value V]] [--tolerance T] [--force]\n"
    "                     [--fp32_nodes auto|FILE [--fp16_budget E]] [--supported_ops OnnxSupportedOperators.txt]\n"
    "                     [--external_data_threshold BYTES] [--json] (-o OUT_DIR | --audit_only)\n";

bool ParseDouble(const char* s, double* out) {
  char* end = nullptr;
  *out = std::strtod(s, &end);
  return end && *end == '\0' && end != s;
}

std::string Fetch(qairt_status_t* (*fn)(const qairt_prepare_report_t*, char*, size_t, size_t*),
                  const qairt_prepare_report_t* r) {
  size_t n = 0;
  if (qairt_status_t* s = fn(r, nullptr, 0, &n)) {
    qairt_status_free(s);
    return {};
  }
  std::string out(n + 1, '\0');
  if (qairt_status_t* s = fn(r, out.data(), out.size(), &n)) {
    qairt_status_free(s);
    return {};
  }
  out.resize(n);
  return out;
}

}  // namespace

int RunPrepare(int argc, char** argv) {
  qairt_prepare_options o;
  qairt_prepare_options_init(&o);
  std::string model, out_dir, target, specs, input_list, fp32_nodes, supported;
  bool json = false, audit_only = false;
  std::vector<std::string> sym_names, dim_names;
  std::vector<int64_t> sym_values, dims_flat;
  std::vector<size_t> ranks;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&](int n) {
      if (i + n >= argc) {
        std::fprintf(stderr, "qairt prepare: %s needs %d argument%s\n", a.c_str(), n, n > 1 ? "s" : "");
        return false;
      }
      return true;
    };
    auto number = [&](double* out) {
      if (!value(1)) return false;
      if (!ParseDouble(argv[i + 1], out)) {
        std::fprintf(stderr, "qairt prepare: %s %s: not a number\n", a.c_str(), argv[i + 1]);
        return false;
      }
      ++i;
      return true;
    };
    auto integer = [&](int64_t* out) {
      if (!value(1)) return false;
      if (!ParseInt(argv[i + 1], out)) {
        std::fprintf(stderr, "qairt prepare: %s %s: not a non-negative integer\n", a.c_str(), argv[i + 1]);
        return false;
      }
      ++i;
      return true;
    };
    int64_t iv = 0;
    if ((a == "-i" || a == "--input_network") && value(1)) model = argv[++i];
    else if ((a == "-o" || a == "--output_dir") && value(1)) out_dir = argv[++i];
    else if (a == "--target" && value(1)) target = argv[++i];
    else if (a == "--specializations" && value(1)) specs = argv[++i];
    else if (a == "--named_specializations") o.flags |= QAIRT_PREPARE_NAMED_SPECIALIZATIONS;
    else if (a == "--input_list" && value(1)) input_list = argv[++i];
    else if (a == "--fp32_nodes" && value(1)) fp32_nodes = argv[++i];
    else if (a == "--supported_ops" && value(1)) supported = argv[++i];
    else if (a == "--clip_fp16_constants") o.flags |= QAIRT_PREPARE_CLIP_FP16_CONSTANTS;
    else if (a == "--fix_additive_masks") o.flags |= QAIRT_PREPARE_FIX_ADDITIVE_MASKS;
    else if (a == "--force") o.flags |= QAIRT_PREPARE_FORCE;
    else if (a == "--json") json = true;
    else if (a == "--audit_only") audit_only = true;
    else if (a == "--fp16_min_abs") { if (!number(&o.fp16_min_abs)) return 2; }
    else if (a == "--mask_value") { if (!number(&o.mask_value)) return 2; }
    else if (a == "--tolerance") { if (!number(&o.tolerance)) return 2; }
    else if (a == "--fp16_budget") { if (!number(&o.fp16_budget)) return 2; }
    else if (a == "--batch_size") {
      if (!integer(&iv)) return 2;
      if (iv == 0) {
        std::fprintf(stderr, "qairt prepare: --batch_size must be positive\n");
        return 2;
      }
      o.batch_size = iv;
    }
    else if (a == "--max_samples") { if (!integer(&iv) || iv == 0 || iv > 1000000) { std::fprintf(stderr, "qairt prepare: --max_samples must be in 1..1000000\n"); return 2; } o.max_samples = static_cast<uint32_t>(iv); }
    else if (a == "--external_data_threshold") { if (!integer(&iv) || iv == 0) { std::fprintf(stderr, "qairt prepare: --external_data_threshold must be positive\n"); return 2; } o.external_data_threshold = static_cast<uint64_t>(iv); }
    else if (a == "--define_symbol" && value(2)) {
      int64_t v = 0;
      if (!ParseInt(argv[i + 2], &v) || v == 0) {
        std::fprintf(stderr, "qairt prepare: --define_symbol %s: '%s' is not a positive integer\n", argv[i + 1], argv[i + 2]);
        return 2;
      }
      sym_names.push_back(argv[i + 1]);
      sym_values.push_back(v);
      i += 2;
    } else if ((a == "-d" || a == "--input_dim") && value(2)) {
      std::vector<int64_t> d;
      if (!ParseDims(argv[i + 2], &d)) {
        std::fprintf(stderr, "qairt prepare: %s %s: '%s' is not a dims list like 1,3,224,224\n", a.c_str(), argv[i + 1],
                     argv[i + 2]);
        return 2;
      }
      dim_names.push_back(argv[i + 1]);
      ranks.push_back(d.size());
      dims_flat.insert(dims_flat.end(), d.begin(), d.end());
      i += 2;
    } else {
      if (a != "--input_network" && a != "-i" && a != "-o" && a != "--output_dir" && a != "--target" &&
          a != "--specializations" && a != "--input_list" && a != "--fp32_nodes" && a != "--supported_ops" &&
          a != "--define_symbol" && a != "-d" && a != "--input_dim")
        std::fprintf(stderr, "qairt prepare: unknown option '%s'%s\n", a.c_str(),
                     qairt_cli::SuggestFlag("prepare", a).c_str());
      std::fputs(kUsage, stderr);
      return 2;
    }
  }
  if (model.empty() || target.empty() || (out_dir.empty() && !audit_only) || (!out_dir.empty() && audit_only)) {
    std::fputs("qairt prepare: -i MODEL, --target and one of -o OUT_DIR / --audit_only are required\n", stderr);
    std::fputs(kUsage, stderr);
    return 2;
  }
  if (target != "aic100") {
    std::fprintf(stderr, "qairt prepare: --target %s: only aic100 is supported\n", target.c_str());
    return 2;
  }
  std::vector<const char*> sn, dn;
  for (const auto& s : sym_names) sn.push_back(s.c_str());
  for (const auto& s : dim_names) dn.push_back(s.c_str());
  o.model_path = model.c_str();
  o.output_dir = out_dir.empty() ? nullptr : out_dir.c_str();
  o.target = target.c_str();
  o.num_define_symbols = sn.size();
  o.define_symbol_names = sn.data();
  o.define_symbol_values = sym_values.data();
  o.num_input_dims = dn.size();
  o.input_dim_names = dn.data();
  o.input_dim_ranks = ranks.data();
  o.input_dims = dims_flat.data();
  o.specializations_path = specs.empty() ? nullptr : specs.c_str();
  o.input_list_path = input_list.empty() ? nullptr : input_list.c_str();
  o.fp32_nodes = fp32_nodes.empty() ? nullptr : fp32_nodes.c_str();
  o.supported_ops_path = supported.empty() ? nullptr : supported.c_str();

  qairt_prepare_report_t* report = nullptr;
  qairt_status_t* s = qairt_prepare_run(&o, &report);
  if (report) {
    const std::string text = json ? Fetch(qairt_prepare_report_json, report) + "\n" : Fetch(qairt_prepare_report_text, report);
    std::fputs(text.c_str(), stdout);
    std::fflush(stdout);
    qairt_prepare_report_destroy(report);
  }
  if (s) {
    std::fprintf(stderr, "qairt prepare: %s\n", qairt_status_message(s));
    qairt_status_free(s);
    return 1;
  }
  return 0;
}
