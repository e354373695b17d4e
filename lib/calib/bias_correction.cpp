#include "calib/bias_correction.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <optional>
#include <unordered_map>
#include <utility>

#include "calib/observe_level.h"
#include "exec/input_gram.h"
#include "quant/quantize.h"

namespace qairt::calib {
namespace {

struct Target {
  OpId op = kInvalidId;
  TensorId weight = kInvalidId, bias = kInvalidId;
  size_t level = 0;
};

// Whether this pass corrects `op`'s bias: nullopt for an op it does not
// take (no bias, no integer weight: said nothing), "" for one it corrects,
// else why it leaves that bias as it is.
std::optional<std::string> Unfit(const Graph& g, const Graph& fg, const Op& op) {
  if (!exec::IsWeightedOpType(op.type) || op.type == "MatMul") return std::nullopt;
  if (op.inputs.size() < 3 || op.inputs[2] == kInvalidId) return std::nullopt;
  const Tensor& w = g.tensor(op.inputs[1]);
  const Tensor& b = g.tensor(op.inputs[2]);
  // A float op (no integer weight encoding) has no rounding to correct.
  if (w.kind != TensorKind::kStatic || !w.encoding || !w.encoding->is_fixed_point()) return std::nullopt;
  if (b.kind != TensorKind::kStatic || b.dtype != DType::kFloat32 || !b.data) return "its bias is not a float constant";
  if (w.dtype != DType::kFloat32 || !w.data) return "its weight is not float32";
  if (b.consumers.size() != 1) return "its bias is shared with another op";
  const Tensor& fw = fg.tensor(op.inputs[1]);
  const Tensor& fb = fg.tensor(op.inputs[2]);
  if (fw.name != w.name || fb.name != b.name || !fw.data || !fb.data || fb.dtype != DType::kFloat32 ||
      fw.dtype != DType::kFloat32)
    return "the float graph differs here";
  return std::string();
}

// Row-major [rows x k] float values of a FullyConnected's or convolution's
// weight: its own layout, read from a transposed view's source if it is one.
std::vector<float> Rows(const Tensor& w, const exec::WeightRows& r) {
  const auto [data, columns] = exec::WeightValues(w);
  const int64_t n = r.rows(), k = r.k;
  std::vector<float> out(static_cast<size_t>(n * k));
  if (!columns) {
    std::memcpy(out.data(), data, out.size() * sizeof(float));
  } else {
    for (int64_t j = 0; j < k; ++j)
      for (int64_t i = 0; i < n; ++i) out[static_cast<size_t>(i * k + j)] = data[j * n + i];
  }
  return out;
}

}  // namespace

Status CorrectBiases(Graph* graph, const Graph& float_graph, const SampleSource& samples, uint32_t num_threads,
                     const Realize& realize, BiasCorrectionReport* report,
                     const std::function<void(size_t, size_t, const char*)>& progress, uint64_t resume_budget_bytes) {
  if (!graph || !report) return InvalidArgument("CorrectBiases: graph and report must not be NULL");
  *report = BiasCorrectionReport{};
  if (samples.count == 0 || !samples.load)
    return InvalidArgument("--bias_correction compares the float and quantized models' outputs on the samples, so it "
                           "needs them (--input_list)");
  if (graph->tensor_count() != float_graph.tensor_count() || graph->op_count() != float_graph.op_count())
    return InvalidArgument("bias correction: the float graph is not the calibrated graph's source");
  Graph work = *graph;  // an error leaves the graph as it was

  std::vector<Target> targets;
  for (OpId id = 0; id < work.op_count(); ++id) {
    const Op& op = work.op(id);
    const std::optional<std::string> why = Unfit(work, float_graph, op);
    if (!why) continue;
    if (!why->empty()) {
      report->skipped.push_back(fmt::format("{}: {}", op.name, *why));
      continue;
    }
    auto rows = exec::WeightRowsOf(work, id);
    if (!rows.ok()) {
      if (rows.status().code() != StatusCode::kUnsupported) return rows.status();
      report->skipped.push_back(rows.status().message());
      continue;
    }
    const auto bias_count = work.tensor(op.inputs[2]).shape.element_count();
    if (!bias_count || static_cast<int64_t>(*bias_count) != rows.value().rows()) {
      report->skipped.push_back(fmt::format("{}: bias does not hold one value per output channel", op.name));
      continue;
    }
    targets.push_back(Target{id, op.inputs[1], op.inputs[2], 0});
  }
  if (targets.empty()) return Status::Ok();

  {
    std::vector<OpId> ops;
    for (const Target& t : targets) ops.push_back(t.op);
    auto levels = SequentialLevels(work, ops, &report->levels);
    if (!levels.ok()) return levels.status();
    for (size_t i = 0; i < targets.size(); ++i) targets[i].level = levels.value()[i];
  }

  // First moments of every target's input: convolutions each with their
  // own geometry, FullyConnected ops reading one tensor share theirs.
  using Key = std::pair<TensorId, OpId>;
  // ops[i]: target i's op in `g` (the graph itself, or as processing made it).
  auto gather = [&](const Graph& g, const std::vector<size_t>& which, const std::vector<OpId>& ops,
                    std::vector<exec::InputGram>* grams, std::unordered_map<TensorId, std::vector<size_t>>* of_input,
                    std::vector<size_t>* index) -> Status {
    std::map<Key, size_t> seen;
    for (size_t i : which) {
      const Op& op = g.op(ops[i]);
      const Key key(op.inputs[0], op.type == "FullyConnected" ? kInvalidId : ops[i]);
      auto it = seen.find(key);
      if (it == seen.end()) {
        auto m = exec::InputGram::For(g, ops[i], /*second_moment=*/false);
        if (!m.ok()) return m.status();
        it = seen.emplace(key, grams->size()).first;
        (*of_input)[key.first].push_back(grams->size());
        grams->push_back(std::move(m).value());
      }
      (*index)[i] = it->second;
    }
    return Status::Ok();
  };

  size_t done = 0;
  const size_t total = (report->levels + 1) * samples.count;
  auto step = [&] {
    if (progress) progress(++done, total, "bias correction");
  };
  std::vector<size_t> all(targets.size()), float_index(targets.size()), index(targets.size());
  std::vector<OpId> own_ops(targets.size()), run_ops(targets.size(), kInvalidId);
  for (size_t i = 0; i < all.size(); ++i) all[i] = i, own_ops[i] = targets[i].op;
  std::vector<exec::InputGram> float_grams;
  {
    std::unordered_map<TensorId, std::vector<size_t>> of_input;
    QAIRT_RETURN_IF_ERROR(gather(float_graph, all, own_ops, &float_grams, &of_input, &float_index));
    QAIRT_RETURN_IF_ERROR(ObserveLevel(float_graph, samples, num_threads, /*quantized=*/false, "bias correction",
                                       &float_grams, of_input, step));
  }

  std::vector<uint8_t> scratch;
  LevelResume resume(resume_budget_bytes);
  for (size_t level = 1; level <= report->levels; ++level) {
    std::vector<size_t> mine;
    for (size_t i = 0; i < targets.size(); ++i)
      if (targets[i].level == level) mine.push_back(i);
    if (mine.empty()) continue;
    // The quantized model as it will run: processed for the target when
    // given (its kernels, super groups and converts change what each op
    // reads), with the corrections of the levels before.
    std::optional<Graph> realized;
    if (realize) {
      auto r = realize(work);
      if (!r.ok())
        return Status(r.status().code(), fmt::format("bias correction: target processing: {}", r.status().message()));
      realized = std::move(r).value();
    }
    const Graph& run = realized ? *realized : work;
    std::vector<size_t> present;
    for (size_t i : mine) {
      const std::optional<OpId> id = realized ? run.FindOp(work.op(targets[i].op).name) : targets[i].op;
      const bool same = id && run.op(*id).inputs.size() > 1 &&
                        run.tensor(run.op(*id).inputs[1]).name == work.tensor(targets[i].weight).name;
      if (!same) {
        report->skipped.push_back(fmt::format("{}: processing replaced it", work.op(targets[i].op).name));
        continue;
      }
      run_ops[i] = *id;
      present.push_back(i);
    }
    if (present.empty()) continue;
    std::vector<exec::InputGram> grams;
    std::unordered_map<TensorId, std::vector<size_t>> of_input;
    QAIRT_RETURN_IF_ERROR(gather(run, present, run_ops, &grams, &of_input, &index));
    // What the corrections below change in the next level's run: the
    // static inputs of the ops whose biases they correct (each bias is read
    // by its op alone, see Unfit). Processing reacting to a bias (a weight
    // scale raised so the bias fits its grid) changes that op's own weight,
    // among those inputs; nothing it does upstream depends on a bias.
    std::vector<TensorId> changing;
    for (size_t i : present)
      for (TensorId in : run.op(run_ops[i]).inputs)
        if (in != kInvalidId && run.tensor(in).kind == TensorKind::kStatic) changing.push_back(in);
    QAIRT_RETURN_IF_ERROR(ObserveLevel(run, samples, num_threads, /*quantized=*/true, "bias correction", &grams,
                                       of_input, step, &resume, changing));
    for (size_t i : present) {
      const Target& t = targets[i];
      const exec::InputGram& qm = grams[index[i]];
      const exec::InputGram& fm = float_grams[float_index[i]];
      // A mean may be shared with ops of other widths reading the same
      // input (q, k and v projections): the rows are this op's.
      auto rows = exec::WeightRowsOf(work, t.op);
      if (!rows.ok()) return rows.status();
      const exec::WeightRows& r = rows.value();
      if (qm.vectors() == 0 || fm.vectors() == 0 || qm.rows().k != r.k || fm.rows().k != r.k ||
          qm.rows().groups != r.groups || fm.rows().groups != r.groups)
        continue;
      // q(w): the weight as the quantized model runs it (processing may have
      // widened its scales; an op it left in float runs it as it is). A
      // FullyConnected's or convolution's rows are its own layout, so Rows
      // is what FakeQuantize reads (for a transposed view too).
      // The values are the calibrated graph's (processing may store them
      // otherwise), the encoding the one the run uses.
      const Tensor& w = work.tensor(t.weight);
      const Tensor& rw = run.tensor(run.op(run_ops[i]).inputs[1]);
      if (rw.shape.extents() != w.shape.extents()) continue;
      std::vector<float> wq = Rows(w, r);
      if (rw.encoding && rw.encoding->is_fixed_point())
        QAIRT_RETURN_IF_ERROR(quant::FakeQuantize(w.name, wq.data(), w.shape.extents(), *rw.encoding, &scratch));
      const std::vector<float> wf = Rows(float_graph.tensor(t.weight), r);
      const float* fb = reinterpret_cast<const float*>(float_graph.tensor(t.bias).data->data());
      std::vector<float> nb(static_cast<size_t>(r.rows()));
      const double inv_f = 1.0 / static_cast<double>(fm.vectors()), inv_q = 1.0 / static_cast<double>(qm.vectors());
      double largest = 0;
      for (int64_t n = 0; n < r.rows(); ++n) {
        const int64_t g = n / r.rows_per_group;
        const double* sf = fm.sum(g);
        const double* sq = qm.sum(g);
        double d = 0;
        for (int64_t j = 0; j < r.k; ++j)
          d += static_cast<double>(wf[static_cast<size_t>(n * r.k + j)]) * sf[j] * inv_f -
               static_cast<double>(wq[static_cast<size_t>(n * r.k + j)]) * sq[j] * inv_q;
        nb[static_cast<size_t>(n)] = static_cast<float>(fb[n] + d);
        largest = std::max(largest, std::abs(d));
      }
      if (largest > report->largest_shift) {
        report->largest_shift = largest;
        report->largest_op = work.op(t.op).name;
      }
      std::vector<uint8_t> bytes(nb.size() * sizeof(float));
      std::memcpy(bytes.data(), nb.data(), bytes.size());
      QAIRT_RETURN_IF_ERROR(work.SetStaticData(t.bias, DType::kFloat32, StaticData::Adopt(std::move(bytes))));
      ++report->corrected;
    }
  }
  report->sample_runs = static_cast<double>(samples.count) +
                        static_cast<double>(resume.ops_run) / static_cast<double>(std::max<size_t>(1, resume.order.size()));
  *graph = std::move(work);
  return Status::Ok();
}

std::string BiasCorrectionSummary(const BiasCorrectionReport& r) {
  std::string out = fmt::format("bias correction: {} bias{} in {} level{}", r.corrected, r.corrected == 1 ? "" : "es",
                                r.levels, r.levels == 1 ? "" : "s");
  if (!r.largest_op.empty()) out += fmt::format(", largest shift {:.3g} at '{}'", r.largest_shift, r.largest_op);
  if (!r.skipped.empty()) out += fmt::format(", {} left as they are (e.g. {})", r.skipped.size(), r.skipped.front());
  return out;
}

}  // namespace qairt::calib
