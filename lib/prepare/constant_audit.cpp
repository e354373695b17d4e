// The constant audit: float32 initializers and Constant values beyond the fp16
// range, NaN, values that flush to zero, additive masks and -inf kept for a
// Where; and the edits the options ask for.
#include <cmath>
#include <limits>
#include <set>

#include "prepare/prepare_internal.h"

namespace qairt::prepare::internal {

namespace {

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

}  // namespace

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

}  // namespace qairt::prepare::internal
