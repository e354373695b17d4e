#include "prepare/prepare.h"

#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>
#include <simdjson.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <optional>
#include <sstream>

#include "calib/input_list.h"
#include "exec/executor.h"
#include "exec/kernel.h"
#include "import/onnx/onnx_import.h"
#include "prepare/onnx_model.h"
#include "support/atomic_file.h"
#include "support/json_writer.h"

namespace qairt::prepare {

const char* SeverityName(Severity s) {
  switch (s) {
    case Severity::kInfo: return "info";
    case Severity::kWarning: return "warning";
    case Severity::kError: return "error";
  }
  return "?";
}

size_t Report::Count(Severity s) const {
  return static_cast<size_t>(std::count_if(findings.begin(), findings.end(), [&](const Finding& f) { return f.severity == s; }));
}

namespace {

constexpr size_t kMaxFixedCheckSamples = 4;
constexpr size_t kMaxAutoIterations = 64;

std::string Num(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return fmt::format("{:.6g}", v);
}

std::string BaseName(const std::string& p) {
  auto s = p.find_last_of('/');
  return s == std::string::npos ? p : p.substr(s + 1);
}

// ---------------------------------------------------------------------------
// Samples and runs
// ---------------------------------------------------------------------------

using Sample = std::vector<std::vector<uint8_t>>;  // one buffer per graph input

// Deterministic inputs when no input_list is given (fixed-model check only):
// floats uniform in [-1, 1], integers 0, bools true.
Sample GeneratedSample(const std::vector<calib::InputSpec>& specs, uint32_t seed) {
  Sample s;
  uint64_t state = 0x9E3779B97F4A7C15ull ^ seed;
  for (const auto& in : specs) {
    std::vector<uint8_t> b(in.bytes, 0);
    if (in.dtype == DType::kFloat32) {
      float* f = reinterpret_cast<float*>(b.data());
      for (size_t k = 0; k < in.bytes / 4; ++k) {
        state = state * 6364136223846793005ull + 1442695040888963407ull;
        f[k] = static_cast<float>(static_cast<double>(state >> 11) / 9007199254740992.0 * 2.0 - 1.0);
      }
    } else if (in.dtype == DType::kBool) {
      std::fill(b.begin(), b.end(), uint8_t{1});
    }
    s.push_back(std::move(b));
  }
  return s;
}

std::vector<float> ToFloats(const exec::HostTensor& t) {
  std::vector<float> v;
  const uint8_t* p = t.bytes.data();
  switch (t.dtype) {
    case DType::kFloat32:
      v.resize(t.bytes.size() / 4);
      if (!v.empty()) std::memcpy(v.data(), p, v.size() * 4);
      break;
    case DType::kFloat16:
      for (size_t k = 0; k + 1 < t.bytes.size() + 1 && 2 * k + 1 < t.bytes.size(); ++k) {
        uint16_t h;
        std::memcpy(&h, p + 2 * k, 2);
        v.push_back(exec::HalfBitsToFloat(h));
      }
      break;
    case DType::kFloat64:
      for (size_t k = 0; 8 * k + 7 < t.bytes.size(); ++k) {
        double d;
        std::memcpy(&d, p + 8 * k, 8);
        v.push_back(static_cast<float>(d));
      }
      break;
    default:
      break;  // integer / bool outputs are not compared numerically
  }
  return v;
}

struct RunOutputs {
  std::vector<std::vector<float>> outputs;  // float outputs, per graph output
};

Result<std::vector<RunOutputs>> RunAll(const Graph& g, const std::vector<Sample>& samples, bool round_inputs,
                                      const std::function<Status(size_t sample, const exec::ObservedTensor&)>& observe) {
  auto ex = exec::Executor::Create(g);
  if (!ex.ok()) return ex.status();
  std::vector<RunOutputs> all;
  for (size_t si = 0; si < samples.size(); ++si) {
    Sample s = samples[si];
    if (round_inputs) {
      // -convert-to-fp16 converts float inputs too.
      for (size_t i = 0; i < s.size() && i < g.inputs().size(); ++i) {
        if (g.tensor(g.inputs()[i]).dtype != DType::kFloat32) continue;
        float* f = reinterpret_cast<float*>(s[i].data());
        for (size_t k = 0; k < s[i].size() / 4; ++k) f[k] = exec::HalfRound(f[k]);
      }
    }
    std::vector<const void*> ptrs;
    std::vector<size_t> sizes;
    for (auto& b : s) {
      ptrs.push_back(b.data());
      sizes.push_back(b.size());
    }
    exec::Observer obs;
    if (observe) obs = [&](const exec::ObservedTensor& t) { return observe(si, t); };
    auto out = ex.value()->Run(ptrs, sizes, observe ? &obs : nullptr);
    if (!out.ok()) return out.status();
    RunOutputs ro;
    for (const auto& h : out.value()) ro.outputs.push_back(ToFloats(h));
    all.push_back(std::move(ro));
  }
  return all;
}

// Output error of `b` against reference `a`: max |d| / max |ref| per output
// (range-relative, so an output near zero does not dominate), the worst over
// outputs and samples. A non-finite value where the reference is finite
// counts as infinite error.
double OutputError(const std::vector<RunOutputs>& a, const std::vector<RunOutputs>& b, double* max_abs = nullptr) {
  double worst = 0.0, worst_abs = 0.0;
  if (a.empty() || a.size() != b.size()) return std::numeric_limits<double>::infinity();
  for (size_t o = 0; o < a[0].outputs.size(); ++o) {
    double scale = 0.0, d = 0.0;
    for (size_t s = 0; s < a.size(); ++s) {
      const auto& ra = a[s].outputs[o];
      const auto& rb = b[s].outputs[o];
      if (ra.size() != rb.size()) return std::numeric_limits<double>::infinity();
      for (size_t k = 0; k < ra.size(); ++k) {
        if (!std::isfinite(ra[k])) {
          if (!(std::isnan(ra[k]) && std::isnan(rb[k])) && ra[k] != rb[k]) d = std::numeric_limits<double>::infinity();
          continue;
        }
        scale = std::max(scale, std::fabs(static_cast<double>(ra[k])));
        const double diff = std::fabs(static_cast<double>(ra[k]) - static_cast<double>(rb[k]));
        d = std::isnan(diff) ? std::numeric_limits<double>::infinity() : std::max(d, diff);
      }
    }
    worst_abs = std::max(worst_abs, d);
    worst = std::max(worst, d / std::max(scale, 1e-12));
  }
  if (max_abs) *max_abs = worst_abs;
  return worst;
}

struct TensorStats {
  double absmax = 0.0;
  uint64_t n = 0, over = 0, nonfinite = 0, nonzero = 0, under = 0;
};

// ---------------------------------------------------------------------------
// The run
// ---------------------------------------------------------------------------

class Preparer {
 public:
  Preparer(const Options& o, Report* r) : o_(o), r_(*r) {}
  Status Run();

 private:
  template <typename... Args>
  void Add(Severity s, std::string code, std::string subject, fmt::format_string<Args...> f, Args&&... args) {
    r_.findings.push_back(Finding{s, std::move(code), std::move(subject), fmt::format(f, std::forward<Args>(args)...)});
  }
  bool Failed() const { return r_.HasErrors(); }

  Status CheckOptions();
  void Shapes();
  Status ReadSpecializations(std::vector<Specialization>* out);
  void Bf16AndSize();
  void Constants();
  bool FeedsWhere(const std::string& value) const;
  std::string AdditiveMaskSoftmax(const std::string& value, std::string* via_add) const;
  void ImportGraphs();
  void OpSupport();
  void Samples();
  void FixedCheck();
  void Activations();
  void Islands();
  Result<Graph> Fp16Graph(const std::vector<bool>& node_fp32) const;
  double Simulate(const std::vector<bool>& node_fp32, const std::vector<Sample>& samples, std::string* first_tensor);
  void CompileCommand();
  Status Write();

  const Options& o_;
  Report& r_;
  LoadedModel model_;
  onnx::ModelProto original_;  // as loaded (external data inlined), before edits
  GraphIndex ix_;
  std::vector<std::map<std::string, int64_t, std::less<>>> spec_symbols_;  // merged, per specialization
  std::vector<Graph> graphs_;  // original model, per specialization
  size_t audit_spec_ = 0;      // the specialization the samples fit
  std::vector<Sample> samples_;
  bool samples_generated_ = true;
  std::vector<RunOutputs> ref_;  // fp32 outputs of the original on samples_
  std::map<std::string, TensorStats> stats_;
  std::map<std::string, std::vector<float>> first_sample_;  // fp32 activations of sample 0
  std::vector<int> node_of_op_;  // IR op -> ONNX node (audit graph), -1 if none
  std::vector<std::string> yaml_names_;
  std::string specs_json_;
  std::string yaml_;
};

Status Preparer::CheckOptions() {
  if (o_.model_path.empty()) return InvalidArgument("no model given (-i MODEL)");
  if (!(o_.mask_value < 0.0 && o_.mask_value > -kFp16Max))
    return InvalidArgument("mask value {} must be negative and above -65504 (e.g. -10000)", Num(o_.mask_value));
  if (!(o_.tolerance >= 0.0)) return InvalidArgument("tolerance {} must be >= 0", Num(o_.tolerance));
  if (!(o_.fp16_budget > 0.0)) return InvalidArgument("fp16 budget {} must be > 0", Num(o_.fp16_budget));
  if (!(o_.fp16_min_abs >= 0.0 && o_.fp16_min_abs < 1.0))
    return InvalidArgument("fp16_min_abs {} must be in [0, 1)", Num(o_.fp16_min_abs));
  if (o_.fp16_min_abs > 0.0 && o_.fp16_min_abs < kFp16MinSubnormal)
    return InvalidArgument("fp16_min_abs {} is below the smallest fp16 value 2^-24 (5.96e-08): it would still flush "
                           "to zero",
                           Num(o_.fp16_min_abs));
  if (!(o_.headroom_margin >= 1.0)) return InvalidArgument("headroom margin {} must be >= 1", Num(o_.headroom_margin));
  if (o_.batch_size < 0) return InvalidArgument("batch size {} must be positive", o_.batch_size);
  if (o_.fp32_nodes == "auto" && o_.input_list_path.empty())
    return InvalidArgument("--fp32_nodes auto needs calibration data (--input_list)");
  if (o_.target_name != "aic100") return InvalidArgument("target '{}': prepare supports only aic100", o_.target_name);
  return Status::Ok();
}

// ---- static shapes --------------------------------------------------------

Status Preparer::ReadSpecializations(std::vector<Specialization>* out) {
  const std::string& path = o_.specializations_path;
  simdjson::dom::parser parser;
  simdjson::padded_string text;
  if (auto e = simdjson::padded_string::load(path).get(text); e)
    return Error(StatusCode::kIoError, "specializations '{}': {}", path, simdjson::error_message(e));
  simdjson::dom::element doc;
  if (auto e = parser.parse(text).get(doc); e)
    return Error(StatusCode::kParseError, "specializations '{}': not JSON: {}", path, simdjson::error_message(e));
  simdjson::dom::array list;
  if (doc.is_array()) {
    list = doc.get_array().value_unsafe();
  } else if (doc.is_object()) {
    simdjson::dom::element s;
    if (doc["specializations"].get(s) || !s.is_array())
      return Error(StatusCode::kParseError,
                   "specializations '{}': expected {{\"specializations\": [ ... ]}} (or a top-level array)", path);
    list = s.get_array().value_unsafe();
  } else {
    return Error(StatusCode::kParseError, "specializations '{}': expected an object or an array", path);
  }
  if (list.size() == 0) return Error(StatusCode::kParseError, "specializations '{}': the list is empty", path);
  size_t i = 0;
  for (simdjson::dom::element e : list) {
    Specialization sp;
    sp.name = fmt::format("spec_{}", i);
    if (!e.is_object())
      return Error(StatusCode::kParseError, "specializations '{}': specializations[{}] must be an object of symbol values",
                   path, i);
    simdjson::dom::object obj = e.get_object().value_unsafe();
    simdjson::dom::element sym;
    simdjson::dom::object values = obj;
    if (!obj["symbols"].get(sym)) {  // named format {"name": ..., "symbols": {...}}
      if (!sym.is_object())
        return Error(StatusCode::kParseError, "specializations '{}': specializations[{}].symbols must be an object", path,
                     i);
      values = sym.get_object().value_unsafe();
      simdjson::dom::element nm;
      if (!obj["name"].get(nm)) {
        if (!nm.is_string())
          return Error(StatusCode::kParseError, "specializations '{}': specializations[{}].name must be a string", path, i);
        sp.name = std::string(nm.get_string().value_unsafe());
      }
      for (auto field : obj)
        if (field.key != "symbols" && field.key != "name")
          return Error(StatusCode::kParseError, "specializations '{}': specializations[{}].{}: unknown field", path, i,
                       std::string(field.key));
    }
    for (auto field : values) {
      const std::string key(field.key);
      int64_t v = 0;
      bool ok = false;
      if (field.value.is_int64()) {
        v = field.value.get_int64().value_unsafe();
        ok = true;
      } else if (field.value.is_string()) {
        std::string s(field.value.get_string().value_unsafe());
        ok = !s.empty() && s.size() < 18 && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
        if (ok) v = std::stoll(s);
      }
      if (!ok || v <= 0)
        return Error(StatusCode::kParseError,
                     "specializations '{}': specializations[{}].{} must be a positive integer (number or decimal string)",
                     path, i, key);
      sp.symbols[key] = v;
    }
    if (sp.symbols.empty())
      return Error(StatusCode::kParseError, "specializations '{}': specializations[{}] binds no symbol", path, i);
    out->push_back(std::move(sp));
    ++i;
  }
  return Status::Ok();
}

void Preparer::Shapes() {
  const auto& g = model_.proto.graph();
  std::set<std::string> initializer_names;
  for (const auto& t : g.initializer()) initializer_names.insert(t.name());
  std::map<std::string, std::vector<std::string>> symbol_uses;  // symbol -> where
  auto scan = [&](const onnx::ValueInfoProto& v, const char* what) {
    if (!v.type().has_tensor_type() || !v.type().tensor_type().has_shape()) return;
    const auto& sh = v.type().tensor_type().shape();
    for (int d = 0; d < sh.dim_size(); ++d)
      if (sh.dim(d).has_dim_param() && !sh.dim(d).dim_param().empty())
        symbol_uses[sh.dim(d).dim_param()].push_back(fmt::format("{} '{}' dim {}", what, v.name(), d));
  };
  std::vector<const onnx::ValueInfoProto*> inputs;
  for (const auto& v : g.input())
    if (!initializer_names.count(v.name())) {
      inputs.push_back(&v);
      scan(v, "input");
    }
  for (const auto& v : g.output()) scan(v, "output");
  for (const auto& v : g.value_info()) scan(v, "value");
  auto known = [&]() {
    std::string s;
    for (const auto& [k, _] : symbol_uses) s += (s.empty() ? "" : ", ") + k;
    return s.empty() ? std::string("none") : s;
  };
  for (const auto& [name, _] : o_.define_symbols)
    if (!symbol_uses.count(name))
      Add(Severity::kError, "unknown-symbol", name, "--define_symbol {}: the model has no symbolic dim named '{}' (its symbols: {})",
          name, name, known());
  for (const auto& given : o_.input_dims) {
    // Not a structured binding: clang 14 cannot capture one in the lambda.
    const std::string& name = given.first;
    const std::vector<int64_t>& dims = given.second;
    auto it = std::find_if(inputs.begin(), inputs.end(), [&](const auto* v) { return v->name() == name; });
    if (it == inputs.end()) {
      Add(Severity::kError, "unknown-input", name, "-d {}: the model has no graph input named '{}'", name, name);
      continue;
    }
    const auto& sh = (*it)->type().tensor_type().shape();
    if ((*it)->type().tensor_type().has_shape() && sh.dim_size() != static_cast<int>(dims.size()))
      Add(Severity::kError, "input-dim-rank", name, "-d {}: {} dims given, the input has rank {}", name, dims.size(),
          sh.dim_size());
  }
  std::vector<Specialization> specs;
  if (!o_.specializations_path.empty()) {
    Status s = ReadSpecializations(&specs);
    if (!s.ok()) {
      Add(Severity::kError, "specializations", o_.specializations_path, "{}", s.message());
      return;
    }
    for (size_t i = 0; i < specs.size(); ++i)
      for (const auto& [k, v] : specs[i].symbols) {
        if (!symbol_uses.count(k))
          Add(Severity::kError, "unknown-symbol", k, "specializations '{}': specializations[{}] ({}) binds '{}', which is "
              "not a symbolic dim of the model (its symbols: {})",
              o_.specializations_path, i, specs[i].name, k, known());
        else if (o_.define_symbols.count(k))
          Add(Severity::kError, "symbol-defined-twice", k, "symbol '{}' is given by --define_symbol and by specializations[{}]",
              k, i);
      }
  }
  if (Failed()) return;
  // Fixed symbols: --define_symbol, then the batch size for a symbolic
  // leading input dim nobody else binds.
  r_.symbols = o_.define_symbols;
  if (o_.batch_size > 0)
    for (const auto* v : inputs) {
      const auto& sh = v->type().tensor_type().shape();
      if (sh.dim_size() == 0 || !sh.dim(0).has_dim_param() || o_.input_dims.count(v->name())) continue;
      const std::string& p = sh.dim(0).dim_param();
      bool in_spec = std::any_of(specs.begin(), specs.end(), [&](const auto& sp) { return sp.symbols.count(p) > 0; });
      if (!r_.symbols.count(p) && !in_spec) {
        r_.symbols[p] = o_.batch_size;
        Add(Severity::kInfo, "batch-symbol", p, "symbol '{}' (input '{}' dim 0) set to the batch size {}", p, v->name(),
            o_.batch_size);
        continue;
      }
      // Bound elsewhere: the command line would carry two batch sizes.
      std::set<int64_t> others;
      if (r_.symbols.count(p)) others.insert(r_.symbols.at(p));
      for (const auto& sp : specs)
        if (sp.symbols.count(p)) others.insert(sp.symbols.at(p));
      others.erase(o_.batch_size);
      if (!others.empty())
        Add(Severity::kWarning, "batch-size-conflict", p, "--batch_size {} differs from symbol '{}' (input '{}' dim 0) "
            "= {} given by {}: the compile command carries both -batchsize={} and that value", o_.batch_size, p,
            v->name(), *others.begin(), r_.symbols.count(p) ? "--define_symbol" : "the specializations", o_.batch_size);
    }
  if (specs.empty()) specs.push_back(Specialization{"", {}});
  else r_.specializations = specs;
  std::vector<std::vector<std::vector<int64_t>>> shapes(specs.size());
  for (size_t i = 0; i < specs.size(); ++i) {
    auto merged = r_.symbols;
    for (const auto& [k, v] : specs[i].symbols) merged[k] = v;
    for (const auto* v : inputs) {
      std::vector<int64_t> dims;
      auto given = o_.input_dims.find(v->name());
      if (given != o_.input_dims.end()) {
        dims = given->second;
      } else if (v->type().has_tensor_type()) {
        const auto& sh = v->type().tensor_type().shape();
        for (int d = 0; d < sh.dim_size(); ++d) {
          if (sh.dim(d).has_dim_value() && sh.dim(d).dim_value() > 0) {
            dims.push_back(sh.dim(d).dim_value());
          } else if (sh.dim(d).has_dim_param() && merged.count(sh.dim(d).dim_param())) {
            dims.push_back(merged.find(sh.dim(d).dim_param())->second);
          } else {
            const std::string p = sh.dim(d).has_dim_param() ? sh.dim(d).dim_param() : "";
            std::string where = specs.size() > 1 ? fmt::format(" in specializations[{}]", i) : "";
            Add(Severity::kError, "unbound-symbol", p.empty() ? v->name() : p,
                "input '{}' dim {} {}has no value{}: the compiler needs static shapes ({})", v->name(), d,
                p.empty() ? "" : fmt::format("('{}') ", p), where,
                p.empty() ? std::string("give -d NAME DIMS") : fmt::format("--define_symbol {} N or a specialization", p));
            dims.push_back(-1);
          }
        }
      }
      shapes[i].push_back(dims);
      r_.input_shapes[v->name()].push_back(dims);
    }
    spec_symbols_.push_back(std::move(merged));
  }
  for (size_t i = 0; i < specs.size(); ++i)
    for (size_t j = i + 1; j < specs.size(); ++j) {
      if (specs[i].symbols == specs[j].symbols) {
        Add(Severity::kError, "duplicate-specialization", specs[j].name,
            "specializations[{}] and specializations[{}] bind the same symbol values", i, j);
      } else if (shapes[i] == shapes[j]) {
        Add(Severity::kError, "indistinguishable-specializations", specs[j].name,
            "specializations[{}] and specializations[{}] give every graph input the same shape, so no input identifies "
            "which one runs (the compiler fails with \"No input that uniquely identifies specialization\"); make them "
            "differ in a symbol that an input uses",
            i, j);
      }
    }
  if (r_.specializations.empty()) return;
  JsonWriter w;
  w.BeginObject();
  w.Key("specializations");
  w.BeginArray();
  for (size_t i = 0; i < specs.size(); ++i) {
    w.BeginObject();
    if (o_.named_specializations) {
      w.Key("name");
      w.String(specs[i].name);
      w.Key("symbols");
      w.BeginObject();
    }
    for (const auto& [k, v] : spec_symbols_[i]) {
      w.Key(k);
      w.String(std::to_string(v));  // the compiler's reader takes strings
    }
    if (o_.named_specializations) w.EndObject();
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  specs_json_ = w.Take() + "\n";
}

// ---- bf16 and size --------------------------------------------------------

void Preparer::Bf16AndSize() {
  auto& g = *model_.proto.mutable_graph();
  ForEachTensor(&g, [&](const TensorSite& s) {
    if (s.tensor->data_type() == onnx::TensorProto::BFLOAT16)
      Add(Severity::kError, "bf16", s.name, "tensor '{}' is bfloat16: Cloud AI 100 does not support bf16 (convert the "
          "model to float32 before preparing)", s.name);
  });
  auto vi = [&](const onnx::ValueInfoProto& v) {
    if (v.type().has_tensor_type() && v.type().tensor_type().elem_type() == onnx::TensorProto::BFLOAT16)
      Add(Severity::kError, "bf16", v.name(), "value '{}' is bfloat16: Cloud AI 100 does not support bf16", v.name());
  };
  for (const auto& v : g.input()) vi(v);
  for (const auto& v : g.output()) vi(v);
  for (const auto& n : g.node())
    if (n.op_type() == "Cast")
      for (const auto& a : n.attribute())
        if (a.name() == "to" && a.i() == onnx::TensorProto::BFLOAT16)
          Add(Severity::kError, "bf16", n.name(), "Cast '{}' converts to bfloat16: Cloud AI 100 does not support bf16",
              n.name());
  r_.model_bytes = model_.proto.ByteSizeLong();
  r_.external_data = model_.had_external || r_.model_bytes >= o_.external_data_threshold;
  if (r_.model_bytes >= o_.external_data_threshold)
    Add(Severity::kInfo, "external-data", BaseName(o_.model_path),
        "the model is {} bytes ({}2 GiB protobuf limit): written with its weights in external data", r_.model_bytes,
        r_.model_bytes >= (uint64_t{2} << 30) ? "beyond the " : "at the threshold, near the ");
  else if (model_.had_external)
    Add(Severity::kInfo, "external-data", BaseName(o_.model_path), "the model keeps its weights in external data; so "
        "does the prepared model");
}

// ---- constants ------------------------------------------------------------

// Ops a mask passes through before it is added (or selected) and ops between
// the addition and the Softmax: shape plumbing and broadcasting arithmetic.
bool MaskBuildingOp(const std::string& t) {
  static const std::set<std::string> k = {"Cast", "Reshape", "Expand", "Unsqueeze", "Squeeze", "Identity", "Tile",
                                          "Transpose", "Slice", "Concat", "Gather", "Mul", "Sub", "Min", "Max", "Where"};
  return k.count(t) > 0;
}
bool ScoresPathOp(const std::string& t) {
  static const std::set<std::string> k = {"Add", "Reshape", "Transpose", "Cast", "Identity", "Div", "Mul", "Sub",
                                          "Squeeze", "Unsqueeze", "Where"};
  return k.count(t) > 0;
}

bool Preparer::FeedsWhere(const std::string& value) const {
  // Through shape plumbing only: -inf must arrive at the select as -inf.
  // Every use must end in a select's value slot: -inf read by anything else
  // (an Add, a graph output) would overflow there, so such a tensor is
  // treated like any other out-of-range constant.
  static const std::set<std::string> pass = {"Cast", "Reshape", "Expand", "Unsqueeze", "Squeeze", "Identity", "Tile",
                                             "Transpose", "Slice", "Concat", "Gather"};
  std::set<std::string> outputs;
  const auto& g = model_.proto.graph();
  for (const auto& o : g.output()) outputs.insert(o.name());
  std::vector<std::string> todo{value};
  std::set<std::string> seen;
  bool select = false;
  while (!todo.empty()) {
    std::string v = todo.back();
    todo.pop_back();
    if (!seen.insert(v).second) continue;
    if (seen.size() > 256 || outputs.count(v)) return false;  // too far to follow, or read outside the model
    auto it = ix_.consumers.find(v);
    if (it == ix_.consumers.end()) continue;
    for (auto [n, slot] : it->second) {
      const auto& node = g.node(n);
      if (node.op_type() == "Where" && slot >= 1) {
        select = true;
      } else if (pass.count(node.op_type())) {
        for (const auto& o : node.output()) todo.push_back(o);
      } else {
        return false;
      }
    }
  }
  return select;
}

// Name of the Softmax the value reaches after being added to something, or
// "" if it does not.
std::string Preparer::AdditiveMaskSoftmax(const std::string& value, std::string* via_add) const {
  struct Item {
    std::string v;
    bool added;
    std::string add;
    int hops;
  };
  std::vector<Item> todo{{value, false, "", 0}};
  std::set<std::pair<std::string, bool>> seen;
  const auto& g = model_.proto.graph();
  while (!todo.empty()) {
    Item it = todo.back();
    todo.pop_back();
    if (it.hops > 16 || !seen.insert({it.v, it.added}).second) continue;
    auto c = ix_.consumers.find(it.v);
    if (c == ix_.consumers.end()) continue;
    for (auto [n, slot] : c->second) {
      const auto& node = g.node(n);
      const std::string& t = node.op_type();
      const std::string nname = node.name().empty() ? (node.output_size() ? node.output(0) : t) : node.name();
      if (it.added && (t == "Softmax" || t == "LogSoftmax")) {
        *via_add = it.add;
        return nname;
      }
      bool next_added = it.added;
      std::string add = it.add;
      if (!it.added && t == "Add") {
        next_added = true;
        add = nname;
      } else if (!(it.added ? ScoresPathOp(t) : MaskBuildingOp(t))) {
        continue;
      }
      for (const auto& o : node.output()) todo.push_back({o, next_added, add, it.hops + 1});
    }
  }
  return "";
}

void Preparer::Constants() {
  const float f16max = static_cast<float>(kFp16Max);
  ForEachTensor(model_.proto.mutable_graph(), [&](const TensorSite& site) {
    std::vector<float> v;
    if (!ReadFloats(*site.tensor, &v)) return;  // float32 only: integers are never touched
    uint64_t pos_over = 0, neg_over = 0, pinf = 0, ninf = 0, nan = 0, nonzero = 0, under = 0, below_floor = 0;
    double maxabs = 0.0, minv = std::numeric_limits<double>::infinity(), under_max = 0.0;
    for (float x : v) {
      if (std::isnan(x)) { ++nan; continue; }
      minv = std::min(minv, static_cast<double>(x));
      if (std::isinf(x)) { (x > 0 ? pinf : ninf)++; continue; }
      maxabs = std::max(maxabs, static_cast<double>(std::fabs(x)));
      if (x > f16max) ++pos_over;
      if (x < -f16max) ++neg_over;
      if (x != 0.0f) {
        ++nonzero;
        if (std::fabs(x) < kFp16MinSubnormal) {
          ++under;
          under_max = std::max(under_max, static_cast<double>(std::fabs(x)));
        }
        if (o_.fp16_min_abs > 0 && std::fabs(x) < o_.fp16_min_abs) ++below_floor;
      }
    }
    const std::string& name = site.name;
    std::string add, softmax;
    const bool low = minv <= -kFp16Max;
    if (low && !site.in_subgraph) softmax = AdditiveMaskSoftmax(name, &add);
    const bool mask = !softmax.empty();
    const bool where = ninf > 0 && !site.in_subgraph && FeedsWhere(name);
    const bool fix_mask = mask && o_.fix_additive_masks;
    uint64_t mask_values = 0;
    if (mask)
      for (float x : v) mask_values += (!std::isnan(x) && x <= -f16max) ? 1 : 0;
    if (mask) {
      if (fix_mask)
        Add(Severity::kInfo, "additive-mask-fixed", name, "tensor '{}': {} mask values <= -65504 (min {}) added to the "
            "scores of Softmax '{}' (via '{}') set to {}", name, mask_values, Num(minv), softmax, add, Num(o_.mask_value));
      else
        Add(Severity::kError, "additive-mask", name,
            "tensor '{}' holds {} values <= -65504 (min {}) that are added to the scores of Softmax '{}' (via '{}'): in "
            "fp16 the sum overflows to -inf and a fully masked row becomes NaN. Fix: use a finite mask value such as "
            "-10000 (--fix_additive_masks rewrites these values to --mask_value), or select with Where(mask, -inf, "
            "scores) when no row is fully masked",
            name, mask_values, Num(minv), softmax, add);
    }
    // Out-of-range values the mask finding does not already cover.
    const uint64_t over_hi = pos_over + pinf;
    const uint64_t over_lo = mask ? 0 : neg_over + (where ? 0 : ninf);
    if (where)
      Add(Severity::kInfo, "inf-kept", name, "tensor '{}': {} -inf values kept: they feed a Where select (-inf stays a "
          "valid fp16 value there)", name, ninf);
    if (over_hi + over_lo > 0) {
      if (o_.clip_fp16_constants)
        Add(Severity::kInfo, "constant-clipped", name, "tensor '{}': {} of {} values beyond +-65504 (max |x| {}) clipped "
            "to the fp16 range", name, over_hi + over_lo, v.size(), Num(pinf + ninf ? INFINITY : maxabs));
      else
        Add(Severity::kWarning, "constant-overflow", name, "tensor '{}': {} of {} values beyond +-65504 (max |x| {}) "
            "become inf in fp16 (--clip_fp16_constants clips them)", name, over_hi + over_lo, v.size(),
            Num(pinf + ninf ? INFINITY : maxabs));
    }
    if (nan)
      Add(Severity::kWarning, "constant-nan", name, "tensor '{}' holds {} NaN values (left as they are)", name, nan);
    if (under > 0) {
      const double frac = static_cast<double>(under) / static_cast<double>(nonzero);
      const std::string msg = fmt::format("tensor '{}': {} of {} nonzero values ({:.3g}%) are below 2^-24 (largest {}) "
                                          "and flush to zero in fp16", name, under, nonzero, 100.0 * frac, Num(under_max));
      // Flushing v to zero changes the tensor by |v| < 2^-24: that matters
      // when the tensor itself lives below fp16's normal range (a layer of
      // 1e-30 weights vanishes), not for a few stray tiny values next to
      // ordinary ones (BatchNorm statistics, biases).
      if (o_.fp16_min_abs > 0) Add(Severity::kInfo, "constant-underflow", name, "{}: raised to +-{}", msg, Num(o_.fp16_min_abs));
      else if (frac >= o_.underflow_fraction && maxabs < kFp16MinNormal)
        Add(Severity::kWarning, "constant-underflow", name, "{}; the whole tensor is below fp16's normal range (max |x| {}) "
            "(--fp16_min_abs V raises them to +-V)", msg, Num(maxabs));
      else
        Add(Severity::kInfo, "constant-underflow", name, "{}; negligible next to the tensor's max |x| {}", msg, Num(maxabs));
    }
    // Edits.
    uint64_t n_mask = 0, n_clip = 0, n_floor = 0;
    const bool clip = o_.clip_fp16_constants;
    if (!fix_mask && !(clip && over_hi + over_lo > 0) && below_floor == 0) return;
    for (float& x : v) {
      if (std::isnan(x)) continue;
      if (fix_mask && x <= -f16max) { x = static_cast<float>(o_.mask_value); ++n_mask; continue; }
      if (clip) {
        if (x == -INFINITY) { if (!where) { x = -f16max; ++n_clip; } }
        else if (x > f16max) { x = f16max; ++n_clip; }
        else if (x < -f16max && !mask) { x = -f16max; ++n_clip; }
      }
      if (o_.fp16_min_abs > 0 && x != 0.0f && std::fabs(x) < o_.fp16_min_abs) {
        x = std::copysign(static_cast<float>(o_.fp16_min_abs), x);
        ++n_floor;
      }
    }
    WriteFloats(site.tensor, v);
    if (n_mask) r_.changes.push_back({name, fmt::format("additive-mask values set to {}", Num(o_.mask_value)), n_mask});
    if (n_clip) r_.changes.push_back({name, "clipped to +-65504", n_clip});
    if (n_floor) r_.changes.push_back({name, fmt::format("raised to +-{}", Num(o_.fp16_min_abs)), n_floor});
  });
}

// ---- import, op support ---------------------------------------------------

void Preparer::ImportGraphs() {
  for (size_t i = 0; i < spec_symbols_.size(); ++i) {
    OnnxImportOptions io;
    io.define_symbols = spec_symbols_[i];
    io.input_dims = o_.input_dims;
    OnnxImportReport rep;
    auto g = ImportOnnxFile(o_.model_path, io, &rep);
    if (!g.ok()) {
      Add(Severity::kError, "import", BaseName(o_.model_path), "{}{}", spec_symbols_.size() > 1 ? fmt::format("specializations[{}]: ", i) : "",
          g.status().message());
      return;
    }
    for (const auto& d : rep.dynamic_dims)
      Add(Severity::kError, "dynamic-shape", d, "{} is still symbolic after binding the symbols: the compiler needs static "
          "shapes", d);
    graphs_.push_back(std::move(g).value());
  }
}

void Preparer::OpSupport() {
  const auto& g = model_.proto.graph();
  std::map<std::string, std::vector<std::string>> onnx_ops;
  for (const auto& n : g.node()) {
    const std::string key = n.domain().empty() || n.domain() == "ai.onnx" ? n.op_type() : n.domain() + "::" + n.op_type();
    onnx_ops[key].push_back(n.name().empty() ? (n.output_size() ? n.output(0) : "?") : n.name());
  }
  for (const auto& [op, nodes] : onnx_ops) {
    if (op.rfind("com.qti.aisw.onnx::", 0) == 0 || op.rfind("com.qualcomm.cloud::", 0) == 0)
      Add(Severity::kInfo, "compiler-custom-op", op, "{} ({} nodes): a compiler-known custom op", op, nodes.size());
    if (op == "Einsum" || op == "NonZero")
      Add(Severity::kWarning, "op-risky", op, "{} ({} nodes, first '{}'): {}", op, nodes.size(), nodes[0],
          op == "Einsum" ? "not in the compiler's ONNX op list in practice: rewrite it as MatMul/Transpose"
                         : "data-dependent output shape: the compiler needs static shapes");
  }
  if (!o_.supported_ops_path.empty()) {
    std::ifstream in(o_.supported_ops_path);
    if (!in) {
      Add(Severity::kError, "supported-ops-file", o_.supported_ops_path, "cannot read '{}': {}", o_.supported_ops_path,
          std::strerror(errno));
    } else {
      std::set<std::string> listed;
      std::string line;
      while (std::getline(in, line)) {
        // One op per line; anything after the first token (versions, notes)
        // and comment lines are ignored.
        std::istringstream ls(line);
        std::string tok;
        if (!(ls >> tok) || tok[0] == '#') continue;
        while (!tok.empty() && (tok.back() == ',' || tok.back() == ':')) tok.pop_back();
        listed.insert(tok);
      }
      if (listed.empty())
        Add(Severity::kError, "supported-ops-file", o_.supported_ops_path, "'{}' lists no operator", o_.supported_ops_path);
      else
        for (const auto& [op, nodes] : onnx_ops) {
          const std::string bare = op.substr(op.find("::") == std::string::npos ? 0 : op.find("::") + 2);
          if (!listed.count(op) && !listed.count(bare))
            Add(Severity::kError, "op-unsupported", op, "{} ({} nodes, first '{}') is not in '{}'", op, nodes.size(),
                nodes[0], o_.supported_ops_path);
        }
    }
  }
  if (o_.target_fp16_ops.empty() || graphs_.empty()) return;
  std::map<std::string, std::vector<std::string>> missing;
  const Graph& ir = graphs_[audit_spec_];
  for (OpId i = 0; i < ir.op_count(); ++i)
    if (!o_.target_fp16_ops.count(ir.op(i).type)) missing[ir.op(i).type].push_back(ir.op(i).source_name.empty() ? ir.op(i).name : ir.op(i).source_name);
  for (const auto& [op, nodes] : missing)
    Add(Severity::kWarning, "op-not-in-descriptor", op, "{} ({} ops, first from node '{}') has no fp16 kernel in the {} "
        "descriptor (targets/builtin/{}.json); check the compiler's OnnxSupportedOperators.txt (--supported_ops)",
        op, nodes.size(), nodes[0], o_.target_name, o_.target_name);
}

// ---- samples and the fixed-model check -------------------------------------

void Preparer::Samples() {
  if (graphs_.empty()) return;
  if (o_.input_list_path.empty()) {
    auto specs = calib::GraphInputSpecs(graphs_[0]);
    if (!specs.ok()) {
      Add(Severity::kError, "inputs", BaseName(o_.model_path), "{}", specs.status().message());
      return;
    }
    for (uint32_t s = 0; s < 2; ++s) samples_.push_back(GeneratedSample(specs.value(), s));
    return;
  }
  Status first;
  for (size_t i = 0; i < graphs_.size(); ++i) {
    auto specs = calib::GraphInputSpecs(graphs_[i]);
    if (!specs.ok()) continue;
    auto list = calib::ReadInputList(o_.input_list_path, specs.value());
    if (!list.ok()) {
      if (first.ok()) first = list.status();
      continue;
    }
    audit_spec_ = i;
    const size_t n = std::min(list.value().samples.size(), o_.max_samples);
    for (size_t k = 0; k < n; ++k) {
      auto s = calib::LoadSample(list.value(), k);
      if (!s.ok()) {
        Add(Severity::kError, "input-list", o_.input_list_path, "{}", s.status().message());
        return;
      }
      samples_.push_back(std::move(s).value());
    }
    samples_generated_ = false;
    if (samples_.empty()) Add(Severity::kError, "input-list", o_.input_list_path, "'{}' has no sample", o_.input_list_path);
    return;
  }
  Add(Severity::kError, "input-list", o_.input_list_path, "{}{}", first.message(),
      graphs_.size() > 1 ? " (no specialization fits the samples)" : "");
}

void Preparer::FixedCheck() {
  if (graphs_.empty() || samples_.empty()) return;
  std::vector<Sample> samples(samples_.begin(), samples_.begin() + std::min(samples_.size(), kMaxFixedCheckSamples));
  auto ref = RunAll(graphs_[audit_spec_], samples, false, nullptr);
  if (!ref.ok()) {
    Add(Severity::kError, "executor", BaseName(o_.model_path), "the executor cannot run the model: {}",
        ref.status().message());
    return;
  }
  if (r_.changes.empty()) return;
  std::string bytes;
  if (r_.model_bytes >= (uint64_t{2} << 30) - (uint64_t{1} << 20)) {
    Add(Severity::kWarning, "fixed-check-skipped", BaseName(o_.model_path), "the model is too large to check the edited "
        "copy in memory; the constant changes were not verified with the executor");
    return;
  }
  if (!model_.proto.SerializeToString(&bytes)) {
    Add(Severity::kError, "internal", BaseName(o_.model_path), "failed to serialize the edited model");
    return;
  }
  OnnxImportOptions io;
  io.define_symbols = spec_symbols_[audit_spec_];
  io.input_dims = o_.input_dims;
  OnnxImportReport rep;
  auto fixed = ImportOnnxBytes(bytes.data(), bytes.size(), "", io, &rep);
  if (!fixed.ok()) {
    Add(Severity::kError, "fixed-check", BaseName(o_.model_path), "the edited model does not import: {}",
        fixed.status().message());
    return;
  }
  auto out = RunAll(fixed.value(), samples, false, nullptr);
  if (!out.ok()) {
    Add(Severity::kError, "fixed-check", BaseName(o_.model_path), "the edited model does not run: {}", out.status().message());
    return;
  }
  double max_abs = 0.0;
  OutputError(ref.value(), out.value(), &max_abs);
  r_.fixed_max_abs_diff = max_abs;
  r_.fixed_check_samples = samples.size();
  const std::string where = fmt::format("on {} {}sample{}", samples.size(), samples_generated_ ? "generated " : "",
                                        samples.size() == 1 ? "" : "s");
  if (!(max_abs <= o_.tolerance))
    Add(o_.force ? Severity::kWarning : Severity::kError, "fixed-check", BaseName(o_.model_path),
        "the edited model differs from the original by max |d| = {} {} (tolerance {}){}", Num(max_abs), where,
        Num(o_.tolerance), o_.force ? "; kept because of --force" : "; use --tolerance or --force to accept");
  else
    Add(Severity::kInfo, "fixed-check", BaseName(o_.model_path),
        "the edited model matches the original within {}: max |d| = {} {}", Num(o_.tolerance), Num(max_abs), where);
}

// ---- activations and fp16 simulation ----------------------------------------

Result<Graph> Preparer::Fp16Graph(const std::vector<bool>& node_fp32) const {
  Graph g = graphs_[audit_spec_];
  auto op_fp32 = [&](OpId op) {
    const int n = op < node_of_op_.size() ? node_of_op_[op] : -1;
    return n >= 0 && node_fp32[static_cast<size_t>(n)];
  };
  for (TensorId t = 0; t < g.tensor_count(); ++t) {
    const Tensor& ten = g.tensor(t);
    if (ten.dtype != DType::kFloat32 || ten.kind == TensorKind::kInput) continue;
    // A tensor stays fp32 only when everything around it is fp32: an fp16
    // consumer would convert it (and overflow) on the device.
    bool fp32 = !ten.consumers.empty() || ten.is_output;
    for (const Use& u : ten.consumers) fp32 = fp32 && op_fp32(u.op);
    if (ten.kind == TensorKind::kActivation) fp32 = fp32 && ten.producer != kInvalidId && op_fp32(ten.producer);
    if (fp32) continue;
    if (ten.kind == TensorKind::kStatic) {
      std::vector<float> v(ten.data->size() / 4);
      if (!v.empty()) std::memcpy(v.data(), ten.data->data(), v.size() * 4);
      for (float& x : v) x = exec::HalfRound(x);
      std::vector<uint8_t> b(v.size() * 4);
      if (!v.empty()) std::memcpy(b.data(), v.data(), b.size());
      Status s = g.SetStaticData(t, DType::kFloat32, StaticData::Adopt(std::move(b)));
      if (!s.ok()) return s;
    } else {
      Status s = g.SetTensorDType(t, DType::kFloat16);
      if (!s.ok()) return s;
    }
  }
  return g;
}

double Preparer::Simulate(const std::vector<bool>& node_fp32, const std::vector<Sample>& samples,
                          std::string* first_tensor) {
  auto g = Fp16Graph(node_fp32);
  if (!g.ok()) {
    Add(Severity::kError, "fp16-simulation", BaseName(o_.model_path), "{}", g.status().message());
    return std::numeric_limits<double>::infinity();
  }
  std::string first;
  auto observe = [&](size_t si, const exec::ObservedTensor& t) -> Status {
    if (si != 0 || !first.empty() || t.storage_dtype != DType::kFloat32) return Status::Ok();
    auto it = first_sample_.find(*t.name);
    if (it == first_sample_.end() || it->second.size() * 4 != t.bytes) return Status::Ok();
    const float* p = static_cast<const float*>(t.data);
    double scale = 0.0, d = 0.0;
    for (size_t k = 0; k < it->second.size(); ++k) {
      const double a = it->second[k];
      if (!std::isfinite(a)) continue;
      scale = std::max(scale, std::fabs(a));
      const double diff = std::fabs(a - static_cast<double>(p[k]));
      d = std::isnan(diff) ? INFINITY : std::max(d, diff);
    }
    if (d / std::max(scale, 1e-12) > o_.fp16_budget) first = *t.name;
    return Status::Ok();
  };
  auto out = RunAll(g.value(), samples, true, observe);
  if (!out.ok()) {
    Add(Severity::kError, "fp16-simulation", BaseName(o_.model_path), "{}", out.status().message());
    return std::numeric_limits<double>::infinity();
  }
  if (first_tensor) *first_tensor = first;
  std::vector<RunOutputs> ref(ref_.begin(), ref_.begin() + static_cast<std::ptrdiff_t>(samples.size()));
  return OutputError(ref, out.value());
}

void Preparer::Activations() {
  if (graphs_.empty() || samples_.empty() || samples_generated_) return;
  const Graph& g = graphs_[audit_spec_];
  // IR op -> ONNX node: by the node name, else by an output name.
  const auto& og = model_.proto.graph();
  node_of_op_.assign(g.op_count(), -1);
  for (OpId i = 0; i < g.op_count(); ++i) {
    const Op& op = g.op(i);
    auto byname = ix_.by_name.find(op.source_name);
    if (!op.source_name.empty() && byname != ix_.by_name.end()) {
      node_of_op_[i] = byname->second;
      continue;
    }
    for (TensorId t : op.outputs) {
      auto p = ix_.producer.find(g.tensor(t).name);
      if (p != ix_.producer.end()) {
        node_of_op_[i] = p->second;
        break;
      }
    }
  }
  auto observe = [&](size_t si, const exec::ObservedTensor& t) -> Status {
    if (t.storage_dtype != DType::kFloat32) return Status::Ok();
    const float* p = static_cast<const float*>(t.data);
    const size_t n = t.bytes / 4;
    TensorStats& s = stats_[*t.name];
    for (size_t k = 0; k < n; ++k) {
      const float x = p[k];
      if (!std::isfinite(x)) { ++s.nonfinite; continue; }
      const double a = std::fabs(static_cast<double>(x));
      s.absmax = std::max(s.absmax, a);
      if (a > kFp16Max) ++s.over;
      if (x != 0.0f) {
        ++s.nonzero;
        if (a < kFp16MinSubnormal) ++s.under;
      }
    }
    s.n += n;
    if (si == 0) first_sample_[*t.name].assign(p, p + n);
    return Status::Ok();
  };
  auto ref = RunAll(g, samples_, false, observe);
  if (!ref.ok()) {
    Add(Severity::kError, "executor", BaseName(o_.model_path), "the executor cannot run the model: {}", ref.status().message());
    return;
  }
  ref_ = std::move(ref).value();
  r_.audit_samples = samples_.size();
  auto node_of_tensor = [&](const std::string& name) -> std::string {
    auto t = g.FindTensor(name);
    if (!t || g.tensor(*t).producer == kInvalidId) return "";
    const int n = node_of_op_[g.tensor(*t).producer];
    if (n < 0) return g.op(g.tensor(*t).producer).name;
    const auto& node = og.node(n);
    return node.name().empty() ? node.output(0) : node.name();
  };
  // Report in execution order.
  auto order = g.TopologicalOrder();
  std::vector<std::string> names;
  if (order.ok())
    for (OpId op : order.value())
      for (TensorId t : g.op(op).outputs) names.push_back(g.tensor(t).name);
  for (const std::string& name : names) {
    auto it = stats_.find(name);
    if (it == stats_.end()) continue;
    const TensorStats& s = it->second;
    const std::string node = node_of_tensor(name);
    if (s.nonfinite)
      Add(Severity::kWarning, "activation-nonfinite", name, "tensor '{}' (node '{}'): {} non-finite values already in fp32",
          name, node, s.nonfinite);
    if (s.over) {
      Add(Severity::kWarning, "activation-overflow", name, "tensor '{}' (node '{}'): max |x| = {} in fp32, beyond the "
          "fp16 limit 65504 ({} of {} values); keep it in fp32 (--fp32_nodes) or rescale", name, node, Num(s.absmax),
          s.over, s.n);
    } else if (s.absmax > kFp16Max / o_.headroom_margin) {
      Add(Severity::kWarning, "activation-headroom", name, "tensor '{}' (node '{}'): max |x| = {} is within {}x of the "
          "fp16 limit 65504", name, node, Num(s.absmax), Num(o_.headroom_margin));
    }
    if (s.nonzero && s.under) {
      const double frac = static_cast<double>(s.under) / static_cast<double>(s.nonzero);
      // As for constants: a warning only when the tensor's scale is below
      // fp16's normal range (tiny softmax probabilities next to ~1 are fine).
      if (frac >= o_.underflow_fraction)
        Add(frac >= o_.underflow_fraction && s.absmax < kFp16MinNormal ? Severity::kWarning : Severity::kInfo,
            "activation-underflow", name, "tensor '{}' (node '{}'): {:.3g}% of nonzero values are below 2^-24 and flush "
            "to zero in fp16 (max |x| {})", name, node, 100.0 * frac, Num(s.absmax));
    }
  }
  std::string first;
  const std::vector<bool> none(static_cast<size_t>(og.node_size()), false);
  r_.fp16_error = Simulate(none, samples_, &first);
  r_.first_diverging_tensor = first;
  r_.first_diverging_node = first.empty() ? "" : node_of_tensor(first);
  if (r_.fp16_error <= o_.fp16_budget)
    Add(Severity::kInfo, "fp16-simulation", BaseName(o_.model_path), "fp16 simulation vs fp32: output error {} (budget "
        "{}) on {} samples", Num(r_.fp16_error), Num(o_.fp16_budget), samples_.size());
  else
    Add(o_.fp32_nodes.empty() ? Severity::kWarning : Severity::kInfo, "fp16-divergence", first.empty() ? BaseName(o_.model_path) : first,
        "fp16 simulation vs fp32: output error {} exceeds the budget {}; first diverging tensor '{}' (node '{}'){}",
        Num(r_.fp16_error), Num(o_.fp16_budget), first, r_.first_diverging_node,
        o_.fp32_nodes.empty() ? "; --fp32_nodes auto picks nodes to keep in fp32" : "");
}

// ---- precision islands ----------------------------------------------------

void Preparer::Islands() {
  if (o_.fp32_nodes.empty()) return;
  if (ref_.empty()) {
    if (o_.input_list_path.empty())
      Add(Severity::kError, "fp32-nodes", o_.fp32_nodes, "--fp32_nodes needs calibration data (--input_list)");
    return;
  }
  const Graph& g = graphs_[audit_spec_];
  const auto& og = model_.proto.graph();
  const size_t nn = static_cast<size_t>(og.node_size());
  std::vector<bool> island(nn, false);
  std::map<std::string, int> first_output;
  for (int i = 0; i < og.node_size(); ++i)
    if (og.node(i).output_size() && !og.node(i).output(0).empty()) first_output[og.node(i).output(0)] = i;
  auto count = [&]() { return static_cast<size_t>(std::count(island.begin(), island.end(), true)); };

  if (o_.fp32_nodes != "auto") {
    std::ifstream in(o_.fp32_nodes);
    if (!in) {
      Add(Severity::kError, "fp32-nodes", o_.fp32_nodes, "cannot read '{}': {}", o_.fp32_nodes, std::strerror(errno));
      return;
    }
    std::string line;
    size_t lineno = 0, names = 0;
    while (std::getline(in, line)) {
      ++lineno;
      std::string s = line;
      auto trim = [](std::string& x) {
        x.erase(0, x.find_first_not_of(" \t\r"));
        x.erase(x.find_last_not_of(" \t\r") + 1);
      };
      trim(s);
      if (s.empty() || s[0] == '#' || s.rfind("FP32NodeInstanceNames", 0) == 0) continue;
      if (s[0] == '-') {
        s.erase(0, 1);
        trim(s);
      } else if (s.find(':') != std::string::npos && s.front() != '"') {
        Add(Severity::kError, "fp32-nodes", o_.fp32_nodes, "'{}' line {}: only FP32NodeInstanceNames is supported, got "
            "'{}'", o_.fp32_nodes, lineno, s);
        continue;
      }
      if (s.size() >= 2 && (s.front() == '"' || s.front() == '\'') && s.back() == s.front()) s = s.substr(1, s.size() - 2);
      ++names;
      auto it = first_output.find(s);
      if (it == first_output.end())
        Add(Severity::kError, "fp32-nodes", s, "'{}' line {}: '{}' is not the first output of any node of the model",
            o_.fp32_nodes, lineno, s);
      else
        island[static_cast<size_t>(it->second)] = true;
    }
    if (names == 0) Add(Severity::kError, "fp32-nodes", o_.fp32_nodes, "'{}' names no node", o_.fp32_nodes);
    if (Failed()) return;
  } else {
    const size_t nsim = std::min<size_t>(samples_.size(), 4);
    std::vector<Sample> sims(samples_.begin(), samples_.begin() + static_cast<std::ptrdiff_t>(nsim));
    std::string first;
    double err = r_.fp16_error;
    auto node_of = [&](const std::string& tensor) -> int {
      auto t = g.FindTensor(tensor);
      if (!t || g.tensor(*t).producer == kInvalidId) return -1;
      return node_of_op_[g.tensor(*t).producer];
    };
    // Nodes whose outputs overflow fp16 in fp32 must be fp32, and so must
    // their consumers (they would read an out-of-range value).
    auto closure = [&]() {
      bool changed = true;
      while (changed) {
        changed = false;
        for (OpId op = 0; op < g.op_count(); ++op) {
          const int n = node_of_op_[op];
          if (n < 0 || !island[static_cast<size_t>(n)]) continue;
          for (TensorId t : g.op(op).outputs) {
            auto s = stats_.find(g.tensor(t).name);
            if (s == stats_.end() || (s->second.over == 0 && s->second.nonfinite == 0)) continue;
            for (const Use& u : g.tensor(t).consumers) {
              const int c = node_of_op_[u.op];
              if (c >= 0 && !island[static_cast<size_t>(c)]) island[static_cast<size_t>(c)] = changed = true;
            }
          }
        }
      }
    };
    if (err > o_.fp16_budget) {
      for (const auto& [name, s] : stats_)
        if (s.over) {
          const int n = node_of(name);
          if (n >= 0) island[static_cast<size_t>(n)] = true;
        }
      closure();
      for (size_t iter = 0; iter < kMaxAutoIterations; ++iter) {
        err = Simulate(island, sims, &first);
        if (err <= o_.fp16_budget || first.empty()) break;
        const int n = node_of(first);
        if (n < 0) break;
        if (!island[static_cast<size_t>(n)]) {
          island[static_cast<size_t>(n)] = true;
        } else {
          // Already fp32 but its output is still rounded: an fp16 consumer
          // reads it. Take the consumers in.
          bool added = false;
          auto t = g.FindTensor(first);
          for (const Use& u : g.tensor(*t).consumers) {
            const int c = node_of_op_[u.op];
            if (c >= 0 && !island[static_cast<size_t>(c)]) island[static_cast<size_t>(c)] = added = true;
          }
          if (!added) break;
        }
        closure();
      }
      // Drop nodes the budget does not need (latest first).
      if (err <= o_.fp16_budget)
        for (size_t k = nn; k-- > 0;) {
          if (!island[k]) continue;
          island[k] = false;
          std::vector<bool> before = island;
          closure();
          if (island != before) {  // a required consumer of an overflowing node
            island = before;
            island[k] = true;
            continue;
          }
          std::string f2;
          const double e2 = Simulate(island, sims, &f2);
          if (e2 <= o_.fp16_budget) err = e2;
          else island[k] = true;
        }
    }
  }
  // Final numbers on every sample.
  std::string first;
  r_.fp32_island_nodes = count();
  r_.fp16_island_error = r_.fp32_island_nodes ? Simulate(island, samples_, &first) : r_.fp16_error;
  std::set<std::string> names;
  for (size_t k = 0; k < nn; ++k) {
    if (!island[k]) continue;
    const auto& node = og.node(static_cast<int>(k));
    if (node.output_size() == 0 || node.output(0).empty()) continue;
    if (names.insert(node.output(0)).second) yaml_names_.push_back(node.output(0));
    // The compiler's precision info is per first output; a Clip's producer
    // must be listed too or the value is converted before the Clip.
    if (node.op_type() == "Clip" && node.input_size() && ix_.producer.count(node.input(0))) {
      const auto& p = og.node(ix_.producer.at(node.input(0)));
      if (p.output_size() && names.insert(p.output(0)).second) yaml_names_.push_back(p.output(0));
    }
  }
  r_.fp32_nodes = yaml_names_;
  const bool met = r_.fp16_island_error <= o_.fp16_budget;
  Add(met ? Severity::kInfo : Severity::kWarning, "fp32-island", o_.fp32_nodes == "auto" ? "auto" : o_.fp32_nodes,
      "{} of {} nodes kept in fp32 ({} YAML names): fp16 output error {} -> {} (budget {}{})", r_.fp32_island_nodes, nn,
      yaml_names_.size(), Num(r_.fp16_error), Num(r_.fp16_island_error), Num(o_.fp16_budget), met ? ", met" : ", NOT met");
  if (!yaml_names_.empty()) {
    yaml_ = "# qairt prepare: nodes qaic-compile keeps in fp32 (-node-precision-info), by first output name\n"
            "FP32NodeInstanceNames:\n";
    for (const auto& n : yaml_names_) {
      std::string q;
      AppendJsonString(&q, n);  // a JSON string is a valid double-quoted YAML scalar
      yaml_ += "  - " + q + "\n";
    }
  }
}

// ---- outputs --------------------------------------------------------------

std::string ShellQuote(const std::string& s) {
  if (!s.empty() && s.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.,/=:+") ==
                        std::string::npos)
    return s;
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

void Preparer::CompileCommand() {
  std::string c = "/opt/qti-aic/exec/qaic-compile -m=" + ShellQuote(BaseName(o_.model_path)) +
                  " -aic-hw -aic-hw-version=ai100 -convert-to-fp16";
  if (specs_json_.empty())
    for (const auto& [k, v] : r_.symbols) c += " " + ShellQuote(fmt::format("-onnx-define-symbol={},{}", k, v));
  else
    c += " -network-specialization-config=specializations.json";
  if (!yaml_.empty()) c += " -node-precision-info=fp32_nodes.yaml";
  if (o_.batch_size > 0) c += fmt::format(" -batchsize={}", o_.batch_size);
  c += " -aic-binary-dir=qpc";
  r_.compile_command = c;
}

Status Preparer::Write() {
  if (o_.output_dir.empty()) return Status::Ok();
  const std::string& dir = o_.output_dir;
  const std::string model_name = BaseName(o_.model_path);
  std::vector<std::pair<std::string, std::string>> files;  // name, bytes
  std::string model_bytes, data_bytes;
  Status s = SerializeModel(model_.proto, r_.external_data, model_name + ".data", &model_bytes, &data_bytes);
  if (!s.ok()) return s;
  files.push_back({model_name, std::move(model_bytes)});
  if (r_.external_data) files.push_back({model_name + ".data", std::move(data_bytes)});
  if (!specs_json_.empty()) files.push_back({"specializations.json", specs_json_});
  if (!yaml_.empty()) files.push_back({"fp32_nodes.yaml", yaml_});
  files.push_back({"compile_command.txt", "# run in this folder\n" + r_.compile_command + "\n"});
  for (const auto& f : files) r_.files.push_back(f.first);
  r_.files.push_back("report.txt");
  r_.files.push_back("report.json");
  files.push_back({"report.txt", r_.Text()});
  files.push_back({"report.json", r_.Json() + "\n"});

  bool created = false;
  struct stat st;
  if (::stat(dir.c_str(), &st) == 0) {
    if (!S_ISDIR(st.st_mode)) {
      r_.files.clear();
      return Error(StatusCode::kIoError, "output '{}' exists and is not a folder", dir);
    }
  } else {
    if (::mkdir(dir.c_str(), 0777) != 0) {
      r_.files.clear();
      return Error(StatusCode::kIoError, "cannot create output folder '{}': {}", dir, std::strerror(errno));
    }
    created = true;
  }
  std::vector<std::string> written;
  for (const auto& [name, bytes] : files) {
    const std::string path = dir + "/" + name;
    Status w = WriteFileAtomically(path, bytes, name);
    if (!w.ok()) {
      // No partial output: what this run wrote goes, and so does the folder
      // if this run made it.
      for (const auto& p : written) ::unlink(p.c_str());
      if (created) ::rmdir(dir.c_str());
      r_.files.clear();
      return w;
    }
    written.push_back(path);
  }
  return Status::Ok();
}

Status Preparer::Run() {
  r_.model_path = o_.model_path;
  r_.target = o_.target_name;
  Status s = CheckOptions();
  if (!s.ok()) {
    Add(Severity::kError, "options", "", "{}", s.message());
    return s;
  }
  s = LoadModel(o_.model_path, &model_);
  if (!s.ok()) {
    Add(Severity::kError, "model", o_.model_path, "{}", s.message());
    return s;
  }
  ix_ = IndexGraph(model_.proto.graph());
  Shapes();
  Bf16AndSize();
  Constants();
  const auto mask_errors = static_cast<size_t>(std::count_if(r_.findings.begin(), r_.findings.end(), [](const Finding& f) {
    return f.severity == Severity::kError && f.code == "additive-mask";
  }));
  if (r_.Count(Severity::kError) == mask_errors) {
    // Shapes are fine: the graph-level checks can run (a mask error alone
    // does not stop the audit, so every finding is reported at once).
    ImportGraphs();
    OpSupport();
    Samples();
    FixedCheck();
    Activations();
    Islands();
  }
  CompileCommand();
  if (Failed()) {
    std::string msg;
    for (const auto& f : r_.findings)
      if (f.severity == Severity::kError) msg += (msg.empty() ? "" : "\n") + f.message;
    return Error(StatusCode::kValidationFailed, "prepare found {} error{}; nothing written:\n{}", r_.Count(Severity::kError),
                 r_.Count(Severity::kError) == 1 ? "" : "s", msg);
  }
  return Write();
}

}  // namespace

// ---------------------------------------------------------------------------
// Report rendering
// ---------------------------------------------------------------------------

std::string Report::Text() const {
  std::string t = fmt::format("qairt prepare --target {}: {}\n", target, model_path);
  auto dims = [](const std::vector<int64_t>& d) {
    std::string s;
    for (int64_t x : d) s += (s.empty() ? "" : ",") + (x < 0 ? std::string("?") : std::to_string(x));
    return "[" + s + "]";
  };
  if (!symbols.empty()) {
    t += "symbols:";
    for (const auto& [k, v] : symbols) t += fmt::format(" {}={}", k, v);
    t += "\n";
  }
  for (size_t i = 0; i < specializations.size(); ++i) {
    t += fmt::format("specialization {} '{}':", i, specializations[i].name);
    for (const auto& [k, v] : specializations[i].symbols) t += fmt::format(" {}={}", k, v);
    t += "\n";
  }
  for (const auto& [name, per] : input_shapes) {
    t += fmt::format("input {}:", name);
    for (const auto& d : per) t += " " + dims(d);
    t += "\n";
  }
  t += fmt::format("model: {} bytes{}\n", model_bytes, external_data ? ", external data" : "");
  t += fmt::format("findings: {} error(s), {} warning(s), {} info\n", Count(Severity::kError), Count(Severity::kWarning),
                   Count(Severity::kInfo));
  for (const auto& f : findings) t += fmt::format("  {:<7} {:<28} {}\n", SeverityName(f.severity), f.code, f.message);
  if (!changes.empty()) {
    t += "changes:\n";
    for (const auto& c : changes) t += fmt::format("  {}: {} ({} values)\n", c.tensor, c.what, c.count);
  }
  if (fixed_max_abs_diff >= 0)
    t += fmt::format("fixed vs original (executor, {} samples): max |d| = {}\n", fixed_check_samples, Num(fixed_max_abs_diff));
  if (fp16_error >= 0 || std::isinf(fp16_error))
    t += fmt::format("fp16 simulation ({} samples): output error {}{}\n", audit_samples, Num(fp16_error),
                     first_diverging_tensor.empty() ? "" : fmt::format(", first diverging tensor '{}' (node '{}')",
                                                                       first_diverging_tensor, first_diverging_node));
  if (!fp32_nodes.empty())
    t += fmt::format("fp32 island: {} nodes, {} names, fp16 output error {}\n", fp32_island_nodes, fp32_nodes.size(),
                     Num(fp16_island_error));
  if (!compile_command.empty()) t += "compile: " + compile_command + "\n";
  if (!files.empty()) {
    t += "wrote:";
    for (const auto& f : files) t += " " + f;
    t += "\n";
  }
  return t;
}

std::string Report::Json() const {
  JsonWriter w;
  w.BeginObject();
  w.Key("model");
  w.String(model_path);
  w.Key("target");
  w.String(target);
  w.Key("ok");
  w.Bool(!HasErrors());
  w.Key("symbols");
  w.BeginObject();
  for (const auto& [k, v] : symbols) {
    w.Key(k);
    w.Int(v);
  }
  w.EndObject();
  w.Key("specializations");
  w.BeginArray();
  for (const auto& s : specializations) {
    w.BeginObject();
    w.Key("name");
    w.String(s.name);
    w.Key("symbols");
    w.BeginObject();
    for (const auto& [k, v] : s.symbols) {
      w.Key(k);
      w.Int(v);
    }
    w.EndObject();
    w.EndObject();
  }
  w.EndArray();
  w.Key("input_shapes");
  w.BeginObject();
  for (const auto& [name, per] : input_shapes) {
    w.Key(name);
    w.BeginArray();
    for (const auto& d : per) {
      w.BeginArray();
      for (int64_t x : d) w.Int(x);
      w.EndArray();
    }
    w.EndArray();
  }
  w.EndObject();
  w.Key("model_bytes");
  w.UInt(model_bytes);
  w.Key("external_data");
  w.Bool(external_data);
  w.Key("findings");
  w.BeginArray();
  for (const auto& f : findings) {
    w.BeginObject();
    w.Key("severity");
    w.String(SeverityName(f.severity));
    w.Key("code");
    w.String(f.code);
    w.Key("subject");
    w.String(f.subject);
    w.Key("message");
    w.String(f.message);
    w.EndObject();
  }
  w.EndArray();
  w.Key("changes");
  w.BeginArray();
  for (const auto& c : changes) {
    w.BeginObject();
    w.Key("tensor");
    w.String(c.tensor);
    w.Key("what");
    w.String(c.what);
    w.Key("count");
    w.UInt(c.count);
    w.EndObject();
  }
  w.EndArray();
  auto num = [&](const char* key, double v) {
    w.Key(key);
    if (std::isinf(v) && v > 0) w.String("inf");
    else if (v < 0) w.Null();
    else w.Double(v);
  };
  num("fixed_max_abs_diff", fixed_max_abs_diff);
  w.Key("fixed_check_samples");
  w.UInt(fixed_check_samples);
  num("fp16_error", fp16_error);
  w.Key("first_diverging_tensor");
  w.String(first_diverging_tensor);
  w.Key("first_diverging_node");
  w.String(first_diverging_node);
  w.Key("audit_samples");
  w.UInt(audit_samples);
  w.Key("fp32_nodes");
  w.BeginArray();
  for (const auto& n : fp32_nodes) w.String(n);
  w.EndArray();
  w.Key("fp32_island_nodes");
  w.UInt(fp32_island_nodes);
  num("fp16_island_error", fp16_island_error);
  w.Key("compile_command");
  w.String(compile_command);
  w.Key("files");
  w.BeginArray();
  for (const auto& f : files) w.String(f);
  w.EndArray();
  w.EndObject();
  return w.Take();
}

Status Prepare(const Options& options, Report* report) {
  *report = Report{};
  try {
    Preparer p(options, report);
    return p.Run();
  } catch (const std::bad_alloc&) {
    return Error(StatusCode::kOutOfMemory, "prepare: out of memory");
  }
}

}  // namespace qairt::prepare
