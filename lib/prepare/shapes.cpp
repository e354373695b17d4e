// Static shapes: the symbols from --define_symbol, --batch_size and the
// specializations file, the input shapes per specialization and the
// specializations.json the compiler reads.
#include <simdjson.h>

#include <algorithm>
#include <set>

#include "prepare/prepare_internal.h"
#include "support/json_writer.h"

namespace qairt::prepare::internal {

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
  w.Key("specializations").BeginArray();
  for (size_t i = 0; i < specs.size(); ++i) {
    w.BeginObject();
    if (o_.named_specializations) {
      w.Key("name").String(specs[i].name);
      w.Key("symbols").BeginObject();
    }
    // The compiler's reader takes the symbol values as strings.
    for (const auto& [k, v] : spec_symbols_[i]) w.Key(k).String(std::to_string(v));
    if (o_.named_specializations) w.EndObject();
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  specs_json_ = w.Take() + "\n";
}

}  // namespace qairt::prepare::internal
