#include "ir/op_registry.h"

#include <algorithm>

#include "ir/ops/families.h"

namespace qairt {
namespace {

std::vector<OpSchema> BuildRegistry() {
  std::vector<OpSchema> all;
  ops::RegisterElementwiseOps(&all);
  ops::RegisterNnOps(&all);
  ops::RegisterDataMovementOps(&all);
  ops::RegisterReductionOps(&all);
  ops::RegisterRecurrentOps(&all);
  ops::RegisterQuantizationOps(&all);
  std::sort(all.begin(), all.end(), [](const OpSchema& a, const OpSchema& b) { return a.type < b.type; });
  return all;
}

const std::vector<OpSchema>& Registry() {
  static const std::vector<OpSchema> registry = BuildRegistry();  // thread-safe init
  return registry;
}

std::string_view AttributeTypeName(const Attribute& a) {
  static constexpr std::string_view kNames[] = {"int", "float", "string", "ints", "floats", "strings"};
  return kNames[a.index()];
}

}  // namespace

std::span<const OpSchema> AllOpSchemas() { return Registry(); }

const OpSchema* FindOpSchema(std::string_view type) {
  const auto& r = Registry();
  auto it = std::lower_bound(r.begin(), r.end(), type, [](const OpSchema& s, std::string_view t) { return s.type < t; });
  return (it != r.end() && it->type == type) ? &*it : nullptr;
}

void InferContext::Report(DiagKind kind, std::string field, std::string message) {
  failed_ = true;
  if (!diags_) return;
  Diagnostic d;
  d.severity = Severity::kError;
  d.kind = kind;
  d.op = op_id_;
  d.field = std::move(field);
  d.message = fmt::format("op '{}' ({}): {}", op_.name, op_.type, message);
  diags_->push_back(std::move(d));
}

const Attribute* InferContext::Find(std::string_view name) const {
  auto it = op_.attrs.find(name);
  return it == op_.attrs.end() ? nullptr : &it->second;
}

void InferContext::WrongType(std::string_view name, std::string_view expected) {
  Error(DiagKind::kAttribute, std::string(name), "attribute '{}' must be {}, got {}", name, expected,
        AttributeTypeName(*Find(name)));
}

int64_t InferContext::Int(std::string_view name, int64_t default_value) {
  const Attribute* a = Find(name);
  if (!a) return default_value;
  if (auto* v = std::get_if<int64_t>(a)) return *v;
  WrongType(name, "an int");
  return default_value;
}

double InferContext::Float(std::string_view name, double default_value) {
  const Attribute* a = Find(name);
  if (!a) return default_value;
  if (auto* v = std::get_if<double>(a)) return *v;
  if (auto* i = std::get_if<int64_t>(a)) return static_cast<double>(*i);
  WrongType(name, "a float");
  return default_value;
}

std::string InferContext::String(std::string_view name, std::string default_value) {
  const Attribute* a = Find(name);
  if (!a) return default_value;
  if (auto* v = std::get_if<std::string>(a)) return *v;
  WrongType(name, "a string");
  return default_value;
}

std::vector<int64_t> InferContext::Ints(std::string_view name, std::vector<int64_t> default_value) {
  const Attribute* a = Find(name);
  if (!a) return default_value;
  if (auto* v = std::get_if<std::vector<int64_t>>(a)) return *v;
  if (auto* i = std::get_if<int64_t>(a)) return {*i};
  WrongType(name, "a list of ints");
  return default_value;
}

std::vector<double> InferContext::Floats(std::string_view name, std::vector<double> default_value) {
  const Attribute* a = Find(name);
  if (!a) return default_value;
  if (auto* v = std::get_if<std::vector<double>>(a)) return *v;
  if (auto* i = std::get_if<double>(a)) return {*i};
  WrongType(name, "a list of floats");
  return default_value;
}

std::optional<int64_t> InferContext::RequiredInt(std::string_view name) {
  const Attribute* a = Find(name);
  if (!a) {
    Error(DiagKind::kAttribute, std::string(name), "required attribute '{}' is missing", name);
    return std::nullopt;
  }
  if (auto* v = std::get_if<int64_t>(a)) return *v;
  WrongType(name, "an int");
  return std::nullopt;
}

std::optional<std::vector<int64_t>> InferContext::RequiredInts(std::string_view name) {
  const Attribute* a = Find(name);
  if (!a) {
    Error(DiagKind::kAttribute, std::string(name), "required attribute '{}' is missing", name);
    return std::nullopt;
  }
  if (auto* v = std::get_if<std::vector<int64_t>>(a)) return *v;
  if (auto* i = std::get_if<int64_t>(a)) return std::vector<int64_t>{*i};
  WrongType(name, "a list of ints");
  return std::nullopt;
}

}  // namespace qairt
