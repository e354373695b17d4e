#include "exec/input_gram.h"

#include <algorithm>
#include <string>

#include "exec/kernel.h"
#include "exec/spatial.h"

namespace qairt::exec {
namespace {

bool IsConv(std::string_view type) {
  return type == "Conv1d" || type == "Conv2d" || type == "Conv3d" || type == "DepthWiseConv2d";
}

Status Unsupported(const Op& op, const std::string& why) {
  return Status(StatusCode::kUnsupported, fmt::format("op '{}' ({}): {}", op.name, op.type, why));
}

int64_t AttrInt(const Op& op, const char* name) {
  auto it = op.attrs.find(name);
  return it != op.attrs.end() && std::holds_alternative<int64_t>(it->second) ? std::get<int64_t>(it->second) : 0;
}

}  // namespace

std::pair<const float*, bool> WeightValues(const Tensor& t) {
  const StaticTransposition* view = t.data->transposition();
  if (view && view->elem == sizeof(float) && t.shape.rank() == 2 && t.shape[0].value == view->cols &&
      t.shape[1].value == view->rows)
    return {reinterpret_cast<const float*>(view->source->data()), true};
  return {reinterpret_cast<const float*>(t.data->data()), false};
}

bool IsWeightedOpType(std::string_view type) {
  return type == "FullyConnected" || type == "MatMul" || IsConv(type);
}

Result<WeightRows> WeightRowsOf(const Graph& g, OpId id) {
  const Op& op = g.op(id);
  if (!IsWeightedOpType(op.type)) return Unsupported(op, "not a FullyConnected, MatMul or convolution");
  const bool fc = op.type == "FullyConnected", matmul = op.type == "MatMul";
  if (op.inputs.size() < 2 || op.inputs[0] == kInvalidId || op.inputs[1] == kInvalidId)
    return Unsupported(op, "needs an input and a weight");
  const Tensor& x = g.tensor(op.inputs[0]);
  const Tensor& w = g.tensor(op.inputs[1]);
  if (w.kind != TensorKind::kStatic) return Unsupported(op, "its weight is not static");
  if (x.kind == TensorKind::kStatic) return Unsupported(op, "its input is static");
  if (!x.shape.fully_known() || !w.shape.fully_known()) return Unsupported(op, "shapes are not static");
  const std::vector<int64_t> wd = w.shape.extents();
  const std::vector<int64_t> xd = x.shape.extents();
  WeightRows r;
  if (fc || matmul) {
    if (wd.size() != 2) return Unsupported(op, fmt::format("weight of rank {} (a batched weight)", wd.size()));
    if (matmul && AttrInt(op, "transpose_in0")) return Unsupported(op, "its input is transposed");
    const bool n_first = fc || AttrInt(op, "transpose_in1");
    r.rows_per_group = n_first ? wd[0] : wd[1];
    r.k = n_first ? wd[1] : wd[0];
    r.columns = !n_first;
    if (xd.empty() || xd.back() != r.k) return Unsupported(op, "input's last dim is not the weight's K");
    return r;
  }
  if (wd.size() < 3 || xd.size() != wd.size()) return Unsupported(op, "weight and input ranks differ");
  const int64_t cin = xd[1], cout = wd[0];
  const int64_t group = op.type == "DepthWiseConv2d" ? cin : std::max<int64_t>(1, AttrInt(op, "group"));
  if (cin % group || cout % group || wd[1] * group != cin) return Unsupported(op, "group does not divide channels");
  r.groups = group;
  r.rows_per_group = cout / group;
  r.k = wd[1];
  for (size_t d = 2; d < wd.size(); ++d) r.k *= wd[d];
  return r;
}

Result<InputGram> InputGram::For(const Graph& g, OpId id, bool second_moment) {
  auto rows = WeightRowsOf(g, id);
  if (!rows.ok()) return rows.status();
  InputGram m;
  m.op_ = &g.op(id);
  m.rows_ = rows.value();
  m.in_dims_ = g.tensor(m.op_->inputs[0]).shape.extents();
  const TensorId y = m.op_->outputs.empty() ? kInvalidId : m.op_->outputs[0];
  if (y == kInvalidId || !g.tensor(y).shape.fully_known()) return Unsupported(*m.op_, "output shape is not static");
  m.out_dims_ = g.tensor(y).shape.extents();
  const std::vector<int64_t> wd = g.tensor(m.op_->inputs[1]).shape.extents();
  m.kernel_.assign(wd.begin() + 2, wd.end());
  const int64_t k = m.rows_.k;
  // Bounded by the weight's own size squared over its rows, not by the data.
  m.second_moment_ = second_moment;
  if (second_moment) m.h_.assign(static_cast<size_t>(m.rows_.groups * k * k), 0.0);
  m.sum_.assign(static_cast<size_t>(m.rows_.groups * k), 0.0);
  return m;
}

Status InputGram::Add(const float* x, size_t count) {
  QAIRT_RETURN_IF_ERROR(Contribution(x, count, &own_));
  Accumulate(own_);
  return Status::Ok();
}

void InputGram::Accumulate(const Sample& s) {
  for (size_t i = 0; i < h_.size(); ++i) h_[i] += s.h[i];
  for (size_t i = 0; i < sum_.size(); ++i) sum_[i] += s.sum[i];
  vectors_ += s.vectors;
}

Status InputGram::Contribution(const float* x, size_t count, Sample* out) const {
  int64_t expect = 1;
  for (int64_t d : in_dims_) expect *= d;
  if (static_cast<int64_t>(count) != expect)
    return InvalidArgument("op '{}': input has {} values, its shape holds {}", op_->name, count, expect);
  const int64_t k = rows_.k;
  out->h.assign(h_.size(), 0.0f);
  out->sum.assign(sum_.size(), 0.0);
  out->vectors = 0;
  if (!IsConv(op_->type)) {
    const int64_t m = expect / k;
    if (second_moment_) Gemm(true, false, k, k, m, 1.0f, x, k, x, k, 0.0f, out->h.data(), k);
    // Per row in float (a row is short), then into double.
    std::vector<float> row_sum(static_cast<size_t>(k), 0.0f);
    for (int64_t r = 0; r < m; ++r) {
      const float* xr = x + r * k;
      for (int64_t j = 0; j < k; ++j) row_sum[static_cast<size_t>(j)] += xr[j];
      if ((r & 255) == 255 || r + 1 == m) {
        for (int64_t j = 0; j < k; ++j) out->sum[static_cast<size_t>(j)] += row_sum[static_cast<size_t>(j)];
        std::fill(row_sum.begin(), row_sum.end(), 0.0f);
      }
    }
    out->vectors = static_cast<uint64_t>(m);
    return Status::Ok();
  }
  Buf xb, yb;
  xb.dims = in_dims_;
  yb.dims = out_dims_;
  Ctx ctx(*op_, {&xb}, {&yb}, 1, nullptr);
  Result<Geo> geo = MakeGeo(ctx, xb, yb, kernel_);
  if (!geo.ok()) return geo.status();
  const Geo& gm = geo.value();
  const int64_t osz = gm.out_size(), cin = in_dims_[1], cg = cin / rows_.groups;
  out->col.resize(static_cast<size_t>(k * osz));
  for (int64_t n = 0; n < in_dims_[0]; ++n) {
    for (int64_t gi = 0; gi < rows_.groups; ++gi) {
      Im2Col(x + (n * cin + gi * cg) * gm.in_size(), cg, gm, out->col.data());
      // Batches after the first add to what the first wrote.
      if (second_moment_)
        Gemm(false, true, k, k, osz, 1.0f, out->col.data(), osz, out->col.data(), osz, n ? 1.0f : 0.0f,
             out->h.data() + gi * k * k, k);
      for (int64_t j = 0; j < k; ++j) {
        const float* c = out->col.data() + j * osz;
        double s = 0;
        for (int64_t p = 0; p < osz; ++p) s += c[p];
        out->sum[static_cast<size_t>(gi * k + j)] += s;
      }
    }
    out->vectors += static_cast<uint64_t>(osz);
  }
  return Status::Ok();
}

}  // namespace qairt::exec
