// qairt targets list | show NAME|FILE [--op OPNAME] [--json] | diff A B [--json]
// Uses only the public C API (qairt_target.h).
#include <qairt/qairt_target.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "help.h"

namespace {

constexpr const char* kUsage =
    "usage: qairt targets list\n"
    "       qairt targets show NAME|FILE [--op OPNAME] [--json]\n"
    "       qairt targets diff A B [--json]\n"
    "       qairt targets soc SOC\n"
    "NAME is a built-in target (see `qairt targets list`); FILE is a descriptor,\n"
    "compiled (.qatd) or JSON source.\n";

int Usage(const char* message) {
  if (message) std::fprintf(stderr, "qairt targets: %s\n", message);
  std::fputs(kUsage, stderr);
  return 2;
}

// Prints and frees a status; returns 1 if it was an error.
int Fail(qairt_status_t* s) {
  std::fprintf(stderr, "qairt targets: %s\n", qairt_status_message(s));
  qairt_status_free(s);
  return 1;
}

struct TargetHandle {
  qairt_target_t* t = nullptr;
  ~TargetHandle() { qairt_target_destroy(t); }
};

std::string DTypes(const qairt_kernel_slot& s) {
  std::string out;
  for (size_t i = 0; i < s.num_dtypes; ++i) out += (i ? "|" : "") + std::string(qairt_dtype_short_name(s.dtypes[i]));
  return out;
}

const char* RoleName(qairt_slot_role_t r) {
  switch (r) {
    case QAIRT_SLOT_ACTIVATION: return "act";
    case QAIRT_SLOT_WEIGHT: return "weight";
    case QAIRT_SLOT_BIAS: return "bias";
    case QAIRT_SLOT_INDEX: return "index";
    default: return "?";
  }
}

std::string SlotText(const qairt_target_t* t, const char* op, size_t k, uint32_t dir, size_t i,
                     const qairt_kernel_slot& s) {
  static const char* kSym[] = {"asym", "sym", "strict_sym", "unsigned_sym"};
  static const char* kGran[] = {"?", "float", "per_tensor", "per_channel", "per_block", "lpbq", "array_of"};
  std::string out = std::string(RoleName(s.role)) + " " + DTypes(s);
  if (s.optional) out += " (optional)";
  std::string extra;
  auto add = [&](const std::string& x) { extra += (extra.empty() ? "" : ", ") + x; };
  if (s.symmetry_mask) {
    std::string v;
    for (uint32_t b = 0; b < 4; ++b)
      if (s.symmetry_mask & (1u << b)) v += (v.empty() ? "" : "|") + std::string(kSym[b]);
    add(v);
  }
  if (s.granularity_mask) {
    std::string v;
    for (uint32_t b = 1; b < 7; ++b)
      if (s.granularity_mask & (1u << b)) v += (v.empty() ? "" : "|") + std::string(kGran[b]);
    add(v);
  }
  if (s.channel_axis >= 0) add("axis " + std::to_string(s.channel_axis));
  if (s.block_size_min) add("block >= " + std::to_string(s.block_size_min));
  if (s.block_size_multiple) add("block % " + std::to_string(s.block_size_multiple) + " == 0");
  if (s.scale_rule == QAIRT_SCALE_RULE_PRODUCT_OF_INPUTS) add("scale = in0 x in1");
  if (s.scale_rule == QAIRT_SCALE_RULE_SAME_AS_INPUT) add("encoding = input's");
  if (s.has_value_range) {
    char buf[96];
    std::snprintf(buf, sizeof buf, "range [%g, %g]", s.range_min, s.range_max);
    add(buf);
  }
  for (size_t e = 0; e < s.num_fixed_encodings; ++e) {
    qairt_fixed_encoding fe;
    fe.struct_size = sizeof fe;
    if (qairt_status_t* st = qairt_target_kernel_fixed_encoding(t, op, k, dir, i, e, &fe)) {
      qairt_status_free(st);
      continue;
    }
    char buf[128];
    std::snprintf(buf, sizeof buf, "%s fixed scale %.9g offset %d", qairt_dtype_short_name(fe.dtype), fe.scale,
                  fe.offset);
    add(buf);
  }
  if (!extra.empty()) out += " [" + extra + "]";
  return out;
}

int PrintOp(const qairt_target_t* t, const char* op) {
  size_t n = 0;
  if (qairt_status_t* s = qairt_target_kernel_count(t, op, &n)) return Fail(s);
  std::printf("%s%s\n", op, qairt_target_is_data_movement(t, op) ? "  (data movement)" : "");
  if (n == 0) std::printf("  no kernels on this target\n");
  for (size_t k = 0; k < n; ++k) {
    qairt_kernel_info info;
    info.struct_size = sizeof info;
    if (qairt_status_t* s = qairt_target_kernel_info(t, op, k, &info)) return Fail(s);
    std::printf("  %-10s%s%s%s\n", info.name, info.accuracy_preserving ? "" : "  (not accuracy preserving)",
                info.note[0] ? "  # " : "", info.note);
    for (uint32_t dir = 0; dir < 2; ++dir) {
      const size_t slots = dir == QAIRT_SLOT_INPUT ? info.num_inputs : info.num_outputs;
      for (size_t i = 0; i < slots; ++i) {
        qairt_kernel_slot s;
        s.struct_size = sizeof s;
        if (qairt_status_t* st = qairt_target_kernel_slot(t, op, k, dir, i, &s)) return Fail(st);
        const bool last_variadic = dir == QAIRT_SLOT_INPUT && info.variadic_inputs && i + 1 == slots;
        std::printf("    %s[%zu]%s %s\n", dir == QAIRT_SLOT_INPUT ? "in" : "out", i, last_variadic ? "..." : "",
                    SlotText(t, op, k, dir, i, s).c_str());
      }
    }
  }
  return 0;
}

int Load(const char* what, TargetHandle* h) {
  if (qairt_status_t* s = qairt_target_load(what, &h->t)) return Fail(s);
  return 0;
}

int List() {
  const size_t n = qairt_target_builtin_count();
  std::printf("%-10s %-7s %-5s %-4s %s\n", "name", "backend", "arch", "ops", "description / SoCs");
  for (size_t i = 0; i < n; ++i) {
    TargetHandle h;
    if (qairt_status_t* s = qairt_target_load_builtin(qairt_target_builtin_name(i), &h.t)) return Fail(s);
    qairt_target_info info;
    info.struct_size = sizeof info;
    if (qairt_status_t* s = qairt_target_get_info(h.t, &info)) return Fail(s);
    static const char* kBackend[] = {"?", "HTP", "LPAI", "CPU", "AIC", "Custom"};
    std::string socs;
    for (size_t k = 0; k < info.num_socs; ++k) {
      qairt_target_soc soc;
      soc.struct_size = sizeof soc;
      if (qairt_status_t* s = qairt_target_get_soc(h.t, k, &soc)) return Fail(s);
      socs += (k ? " " : "") + std::string(soc.name);
    }
    std::printf("%-10s %-7s %-5u %-4zu %s%s%s\n", info.name, info.backend < 6 ? kBackend[info.backend] : "?",
                info.arch_version, info.num_ops, info.description, socs.empty() ? "" : "; ", socs.c_str());
  }
  return 0;
}

int Show(const char* what, const char* op, bool json) {
  TargetHandle h;
  if (int rc = Load(what, &h)) return rc;
  if (json) {
    size_t len = 0;
    if (qairt_status_t* s = qairt_target_to_json(h.t, op, nullptr, 0, &len)) return Fail(s);
    std::vector<char> buf(len + 1);
    if (qairt_status_t* s = qairt_target_to_json(h.t, op, buf.data(), buf.size(), &len)) return Fail(s);
    std::printf("%s\n", buf.data());
    return 0;
  }
  if (op) return PrintOp(h.t, op);
  qairt_target_info info;
  info.struct_size = sizeof info;
  if (qairt_status_t* s = qairt_target_get_info(h.t, &info)) return Fail(s);
  std::printf("target      %s  (%s)\n", info.name, info.origin);
  std::printf("description %s\n", info.description);
  std::printf("arch        %u   schema %u (min reader %u)\n", info.arch_version, info.schema_version,
              info.min_reader_version);
  std::printf("float       %s for tensors without encodings\n",
              info.default_float_dtype ? qairt_dtype_short_name(info.default_float_dtype) : "none (error)");
  static const char* kCaps[] = {"fp16_compute", "fp32_compute", "int16_activations", "a16w16",
                                "int4_weights", "per_channel_weights", "block_weights", "lpbq_weights"};
  std::printf("capabilities");
  for (int b = 0; b < 8; ++b) std::printf(" %s%s", (info.capabilities >> b) & 1 ? "+" : "-", kCaps[b]);
  std::printf("\nsocs       ");
  for (size_t k = 0; k < info.num_socs; ++k) {
    qairt_target_soc soc;
    soc.struct_size = sizeof soc;
    if (qairt_status_t* s = qairt_target_get_soc(h.t, k, &soc)) return Fail(s);
    std::printf(" %s", soc.name);
  }
  std::printf("\ndata movement");
  for (size_t k = 0; k < info.num_data_movement_ops; ++k) std::printf(" %s", qairt_target_data_movement_op(h.t, k));
  std::printf("\nsuper groups\n");
  for (size_t k = 0; k < info.num_super_groups; ++k) {
    qairt_super_group g;
    g.struct_size = sizeof g;
    if (qairt_status_t* s = qairt_target_get_super_group(h.t, k, &g)) return Fail(s);
    std::printf("  ");
    for (size_t i = 0; i < g.num_ops; ++i) std::printf("%s%s", i ? " + " : "", g.ops[i]);
    std::printf("\n");
  }
  std::printf("kernels (%zu ops)\n", info.num_ops);
  for (size_t i = 0; i < info.num_ops; ++i)
    if (int rc = PrintOp(h.t, qairt_target_op_name(h.t, i))) return rc;
  std::printf("sources\n");
  for (size_t i = 0; i < info.num_sources; ++i) std::printf("  %s\n", qairt_target_source(h.t, i));
  return 0;
}

int Diff(const char* a, const char* b, bool json) {
  TargetHandle ha, hb;
  if (int rc = Load(a, &ha)) return rc;
  if (int rc = Load(b, &hb)) return rc;
  const uint32_t format = json ? QAIRT_TARGET_DIFF_JSON : QAIRT_TARGET_DIFF_TEXT;
  size_t len = 0;
  if (qairt_status_t* s = qairt_target_diff(ha.t, hb.t, format, nullptr, 0, &len)) return Fail(s);
  std::vector<char> buf(len + 1);
  if (qairt_status_t* s = qairt_target_diff(ha.t, hb.t, format, buf.data(), buf.size(), &len)) return Fail(s);
  std::fputs(buf.data(), stdout);
  if (json) std::fputs("\n", stdout);
  return 0;
}

int Soc(const char* soc) {
  TargetHandle h;
  if (qairt_status_t* s = qairt_target_for_soc(soc, &h.t)) return Fail(s);
  qairt_target_info info;
  info.struct_size = sizeof info;
  if (qairt_status_t* s = qairt_target_get_info(h.t, &info)) return Fail(s);
  std::printf("%s\n", info.name);
  return 0;
}

}  // namespace

int RunTargets(int argc, char** argv) {
  std::vector<const char*> pos;
  const char* op = nullptr;
  bool json = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--json") == 0) {
      json = true;
    } else if (std::strcmp(argv[i], "--op") == 0) {
      if (i + 1 >= argc) return Usage("--op needs an op type");
      op = argv[++i];
    } else if (std::strcmp(argv[i], "--help") == 0 || std::strcmp(argv[i], "-h") == 0) {
      std::fputs(kUsage, stdout);
      return 0;
    } else if (argv[i][0] == '-' && argv[i][1] != '\0') {
      return Usage((std::string("unknown option ") + argv[i] + qairt_cli::SuggestFlag("targets", argv[i])).c_str());
    } else {
      pos.push_back(argv[i]);
    }
  }
  if (pos.empty()) return Usage("missing subcommand");
  const std::string sub = pos[0];
  if (sub == "list" && pos.size() == 1 && !op && !json) return List();
  if (sub == "show" && pos.size() == 2) return Show(pos[1], op, json);
  if (sub == "diff" && pos.size() == 3 && !op) return Diff(pos[1], pos[2], json);
  if (sub == "soc" && pos.size() == 2 && !op && !json) return Soc(pos[1]);
  return Usage(("bad arguments for '" + sub + "'").c_str());
}
