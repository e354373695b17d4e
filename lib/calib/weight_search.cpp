#include "calib/weight_search.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <string>

#include "exec/kernel.h"
#include "kernels/ops.h"
#include "quant/quantize.h"

namespace qairt::calib {
namespace {

// Fine steps near the min-max range (where 8-bit optima lie), then coarse
// ones down to a quarter of it (an outlier the data rarely multiplies).
constexpr int kFineCandidates = 24;
constexpr int kAlphaCandidates = kFineCandidates + 6;
double Alpha(int i) { return i < kFineCandidates ? 1.0 - i / 48.0 : 0.5 - 0.05 * (i - kFineCandidates); }

Status Unsupported(std::string_view name, const std::string& why) {
  return Status(StatusCode::kUnsupported, fmt::format("weight '{}': {}", name, why));
}

// The search's view of the weight: N rows of K in cells of `bs` along K.
struct Layout {
  int64_t n = 0, k = 0, bs = 0, blocks = 0;  // blocks = k / bs per row
  bool per_tensor = false;
  bool lpbq = false;
  bool columns = false;  // the encoding's tables index [block][channel] (a [K, N] weight)
  // Index into the encoding's scale table of cell (row, block).
  size_t Index(int64_t row, int64_t block) const {
    if (per_tensor) return 0;
    return static_cast<size_t>(columns ? block * n + row : row * blocks + block);
  }
};

// Candidate grids of one cell: scale and offset per candidate.
struct CellGrids {
  std::vector<float> scale;
  std::vector<int32_t> offset;
};

// Quantizes then dequantizes rows [r0, r0 + nr) of the canonical weight with
// the candidate `pick` names for each cell: the same kernels as the final
// quantization.
Status FakeQuant(std::string_view name, const Layout& l, const Encoding& base, const float* w, int64_t r0, int64_t nr,
                 const std::function<int(size_t)>& pick, const std::vector<CellGrids>& grids, std::vector<float>* out,
                 std::vector<uint8_t>* bytes) {
  Encoding e;
  e.kind = EncodingKind::kPerBlock;
  e.dtype = base.dtype;
  e.bitwidth = base.bitwidth;
  e.symmetry = l.lpbq ? Symmetry::kSymmetric : base.symmetry;
  e.axis = 1;
  e.block_sizes = {1, l.bs};
  std::vector<float> scales(static_cast<size_t>(nr * l.blocks));
  std::vector<int32_t> offsets(scales.size());
  for (int64_t r = 0; r < nr; ++r)
    for (int64_t b = 0; b < l.blocks; ++b) {
      const size_t cell = l.per_tensor ? 0 : static_cast<size_t>((r0 + r) * l.blocks + b);
      const CellGrids& g = grids[cell];
      const auto c = static_cast<size_t>(pick(cell));
      scales[static_cast<size_t>(r * l.blocks + b)] = g.scale[c];
      offsets[static_cast<size_t>(r * l.blocks + b)] = g.offset[c];
    }
  e.scales = std::move(scales);
  e.offsets = std::move(offsets);
  const std::vector<int64_t> dims{nr, l.k};
  auto q = quant::QuantizeTensor(name, DType::kFloat32, w + r0 * l.k, dims, e);
  if (!q.ok()) return q.status();
  *bytes = std::move(q).value();
  out->resize(static_cast<size_t>(nr * l.k));
  return quant::DequantizeTensor(name, bytes->data(), bytes->size(), dims, e, out->data());
}

// Adaptive rounding over the chosen grids; on return `w` holds the rounded
// values (canonical rows) and res->error their output error.
Status OptimizeRounding(std::string_view name, const Layout& l, const Encoding& base, const exec::WeightRows& rows,
                        std::vector<float>& w, const std::vector<CellGrids>& grids, const std::vector<int>& choice,
                        const std::vector<const double*>& grams, WeightSearchResult* res) {
  const QuantRange qr = QuantRangeOf(base.dtype, base.effective_bitwidth());
  const double qmin = static_cast<double>(qr.qmin + (base.symmetry == Symmetry::kStrictSymmetric ? 1 : 0));
  const double qmax = static_cast<double>(qr.qmax);
  auto pick = [&](size_t cell) { return choice[cell]; };
  std::vector<float> hf, deq, e, g;
  std::vector<uint8_t> bytes;
  double total = 0;
  // Dampening (GPTQ's 1% of the mean diagonal): where the samples leave
  // directions of H unmeasured, rounding is not steered into them.
  constexpr double kDamp = 0.01;
  for (int64_t gi = 0; gi < rows.groups; ++gi) {
    hf.assign(grams[static_cast<size_t>(gi)], grams[static_cast<size_t>(gi)] + l.k * l.k);
    double mean_diag = 0;
    for (int64_t i = 0; i < l.k; ++i) mean_diag += hf[size_t(i * l.k + i)];
    mean_diag /= static_cast<double>(l.k);
    const float damp = static_cast<float>(kDamp * mean_diag);
    for (int64_t i = 0; i < l.k; ++i) hf[size_t(i * l.k + i)] += damp;
    for (int64_t n = gi * rows.rows_per_group; n < (gi + 1) * rows.rows_per_group; ++n) {
      QAIRT_RETURN_IF_ERROR(FakeQuant(name, l, base, w.data(), n, 1, pick, grids, &deq, &bytes));
      float* row = w.data() + n * l.k;
      e.resize(static_cast<size_t>(l.k));
      g.assign(static_cast<size_t>(l.k), 0.0f);
      for (int64_t i = 0; i < l.k; ++i) e[size_t(i)] = deq[size_t(i)] - row[i];
      exec::Gemm(false, false, 1, l.k, l.k, 1.0f, e.data(), l.k, hf.data(), l.k, 0.0f, g.data(), l.k);
      double err = 0;
      for (int64_t i = 0; i < l.k; ++i) err += static_cast<double>(e[size_t(i)]) * g[size_t(i)];
      for (int sweep = 0; sweep < 3; ++sweep) {
        uint64_t flips = 0;
        for (int64_t i = 0; i < l.k; ++i) {
          const float ei = e[size_t(i)];
          if (ei == 0.0f) continue;
          const size_t cell = l.per_tensor ? 0 : static_cast<size_t>(n * l.blocks + i / l.bs);
          const size_t c = static_cast<size_t>(choice[cell]);
          const double s = grids[cell].scale[c];
          const double q = std::nearbyint(static_cast<double>(deq[size_t(i)]) / s) - grids[cell].offset[c];
          const double dir = ei > 0 ? -1.0 : 1.0;  // the grid point on the other side of the weight
          if (q + dir < qmin || q + dir > qmax) continue;
          const double d = dir * s;
          const double delta = d * d * hf[size_t(i * l.k + i)] + 2.0 * d * g[size_t(i)];
          if (!(delta < 0)) continue;
          const float df = static_cast<float>(d);
          deq[size_t(i)] = static_cast<float>((q + dir + grids[cell].offset[c]) * s);
          e[size_t(i)] = deq[size_t(i)] - row[i];
          const float* h = hf.data() + i * l.k;  // H is symmetric: row i is column i
          for (int64_t j = 0; j < l.k; ++j) g[size_t(j)] += df * h[j];
          err += delta;
          ++flips;
        }
        res->roundings_changed += flips;
        if (!flips) break;
      }
      // Reported without the dampening: e^T (H + dI) e - d |e|^2.
      double norm = 0;
      for (int64_t i = 0; i < l.k; ++i) norm += static_cast<double>(e[size_t(i)]) * e[size_t(i)];
      total += std::max(0.0, err - damp * norm);
      std::copy(deq.begin(), deq.begin() + l.k, row);  // the rounded values
    }
  }
  res->error = total;
  return Status::Ok();
}

}  // namespace

Result<WeightSearchResult> SearchWeightEncoding(std::string_view name, const float* data, bool data_columns,
                                                const std::vector<int64_t>& dims, const exec::WeightRows& rows,
                                                const Encoding& base, const std::vector<const double*>& grams,
                                                const WeightSearchOptions& options) {
  Layout l;
  l.n = rows.rows();
  l.k = rows.k;
  l.columns = rows.columns;
  if (static_cast<int64_t>(grams.size()) != rows.groups) return Unsupported(name, "one H per group is needed");
  if (!base.is_fixed_point()) return Unsupported(name, "its encoding is not fixed-point");
  const int32_t out_axis = rows.columns ? 1 : 0;
  const int32_t k_axis = rows.columns ? 0 : 1;
  switch (base.kind) {
    case EncodingKind::kPerTensor:
      l.per_tensor = true;
      l.bs = l.k;
      break;
    case EncodingKind::kPerChannel:
      if (base.axis != out_axis) return Unsupported(name, "its channels are not its output channels");
      l.bs = l.k;
      break;
    case EncodingKind::kPerBlock:
    case EncodingKind::kLpbq:
      if (dims.size() > 2 && !rows.columns) {
        // A convolution's [O, I, spatial...]: a block of input channels with
        // all their taps is a run of K = I x taps in the row.
        bool whole_taps = base.axis == 1 && base.block_sizes.size() == dims.size() && base.block_sizes[0] == 1;
        int64_t taps = 1;
        for (size_t d = 2; d < dims.size() && whole_taps; ++d) {
          whole_taps = base.block_sizes[d] == dims[d];
          taps *= dims[d];
        }
        if (!whole_taps || rows.groups != 1)
          return Unsupported(name, "blocks other than of whole input channels of an ungrouped convolution");
        l.bs = base.block_sizes[1] * taps;
      } else {
        if (dims.size() != 2 || rows.groups != 1 || base.axis != k_axis || base.block_sizes.size() != 2 ||
            base.block_sizes[static_cast<size_t>(out_axis)] != 1)
          return Unsupported(name, "blocks other than along K of a 2-D weight");
        l.bs = base.block_sizes[static_cast<size_t>(k_axis)];
      }
      l.lpbq = base.kind == EncodingKind::kLpbq;
      if (!base.float_offsets.empty()) return Unsupported(name, "float offsets");
      break;
    default: return Unsupported(name, fmt::format("{} encodings", EncodingKindName(base.kind)));
  }
  if (l.bs <= 0 || l.k % l.bs) return Unsupported(name, "blocks do not divide K");
  l.blocks = l.k / l.bs;
  const size_t cells = l.per_tensor ? 1 : static_cast<size_t>(l.n * l.blocks);
  if ((l.lpbq ? base.block_int_scales.size() : base.scales.size()) != cells ||
      (!l.lpbq && !base.offsets.empty() && base.offsets.size() != cells) || (l.lpbq && base.scales.size() != size_t(l.n)))
    return Unsupported(name, fmt::format("its encoding's tables ({} scales, {} offsets, {} block scales) do not match "
                                         "{} rows of {} in blocks of {}",
                                         base.scales.size(), base.offsets.size(), base.block_int_scales.size(), l.n,
                                         l.k, l.bs));

  // Canonical rows: w[n * k + i].
  std::vector<float> w(static_cast<size_t>(l.n * l.k));
  if (rows.columns != data_columns) {
    for (int64_t i = 0; i < l.k; ++i)
      for (int64_t n = 0; n < l.n; ++n) w[static_cast<size_t>(n * l.k + i)] = data[i * l.n + n];
  } else {
    std::copy(data, data + w.size(), w.begin());
  }

  // Candidates per cell; candidate 0 is the given encoding.
  const uint32_t bw = base.effective_bitwidth();
  int candidates = options.search_grids ? kAlphaCandidates : 1;
  if (l.lpbq) {
    if (base.decompressed_bitwidth <= bw || base.decompressed_bitwidth > 16)
      return Unsupported(name, "LPBQ decompressed bitwidth out of range");
    if (options.search_grids) candidates = 1 << (base.decompressed_bitwidth - bw);
  }
  std::vector<CellGrids> grids(cells);
  const bool is_signed = IsSigned(base.dtype);
  const auto schema = static_cast<kernels::Schema>(static_cast<uint32_t>(base.symmetry));
  for (size_t cell = 0; cell < cells; ++cell) {
    const int64_t row = l.per_tensor ? 0 : static_cast<int64_t>(cell) / l.blocks;
    const int64_t block = l.per_tensor ? 0 : static_cast<int64_t>(cell) % l.blocks;
    const size_t idx = l.Index(row, block);
    CellGrids& g = grids[cell];
    g.scale.resize(static_cast<size_t>(candidates));
    g.offset.resize(static_cast<size_t>(candidates));
    if (l.lpbq) {
      // Candidate 0 is the given integer scale; the others every other one.
      const int32_t given = base.block_int_scales[idx];
      const float ch = base.scales[static_cast<size_t>(row)];
      g.scale[0] = static_cast<float>(given) * ch;
      int c = 1;
      for (int s = 1; s <= (1 << (base.decompressed_bitwidth - bw)); ++s)
        if (s != given && c < candidates) g.scale[static_cast<size_t>(c++)] = static_cast<float>(s) * ch;
      for (; c < candidates; ++c) g.scale[static_cast<size_t>(c)] = g.scale[0];
      continue;
    }
    float mn = std::numeric_limits<float>::infinity(), mx = -mn;
    const int64_t r_lo = l.per_tensor ? 0 : row, r_hi = l.per_tensor ? l.n : row + 1;
    for (int64_t r = r_lo; r < r_hi; ++r) {
      const float* p = w.data() + r * l.k + (l.per_tensor ? 0 : block * l.bs);
      const int64_t len = l.per_tensor ? l.k : l.bs;
      for (int64_t i = 0; i < len; ++i) mn = std::min(mn, p[i]), mx = std::max(mx, p[i]);
    }
    g.scale[0] = base.scales[idx];
    g.offset[0] = base.offsets.empty() ? 0 : base.offsets[idx];
    for (int c = 1; c < candidates; ++c) {
      const double a = Alpha(c);
      const kernels::GridParams gp = kernels::ComputeGrid(static_cast<float>(a * mn), static_cast<float>(a * mx), bw,
                                                          is_signed, schema, kernels::kDefaultMinRange);
      g.scale[static_cast<size_t>(c)] = gp.scale;
      g.offset[static_cast<size_t>(c)] = gp.offset;
    }
  }

  // Error of candidate c on rows: per row, e^T H e.
  WeightSearchResult res;
  std::vector<int> choice(cells, 0);
  std::vector<double> best(cells, std::numeric_limits<double>::infinity());
  std::vector<double> tensor_err(static_cast<size_t>(candidates), 0.0);
  std::vector<float> hf, deq, err, prod, e_row, g_row, d;
  std::vector<uint8_t> bytes;
  // Rows per band: every candidate's errors of a band are held at once.
  const int64_t band_cap =
      std::max<int64_t>(1, std::min<int64_t>(64, (int64_t{1} << 24) / std::max<int64_t>(1, candidates * l.k)));
  for (int64_t gi = 0; gi < rows.groups; ++gi) {
    hf.assign(grams[static_cast<size_t>(gi)], grams[static_cast<size_t>(gi)] + l.k * l.k);
    const int64_t g_lo = gi * rows.rows_per_group, g_hi = g_lo + rows.rows_per_group;
    for (int64_t r0 = g_lo; r0 < g_hi; r0 += band_cap) {
      const int64_t nr = std::min(band_cap, g_hi - r0);
      const size_t band = static_cast<size_t>(nr * l.k);
      err.resize(static_cast<size_t>(candidates) * band);  // err[c][r][i]
      for (int c = 0; c < candidates; ++c) {
        QAIRT_RETURN_IF_ERROR(
            FakeQuant(name, l, base, w.data(), r0, nr, [c](size_t) { return c; }, grids, &deq, &bytes));
        float* e = err.data() + static_cast<size_t>(c) * band;
        const float* src = w.data() + r0 * l.k;
        for (size_t i = 0; i < band; ++i) e[i] = deq[i] - src[i];
      }
      prod.resize(band);
      if (l.blocks == 1) {
        // One cell per row (or one for the tensor): each candidate's error per row.
        for (int c = 0; c < candidates; ++c) {
          const float* e = err.data() + static_cast<size_t>(c) * band;
          exec::Gemm(false, false, nr, l.k, l.k, 1.0f, e, l.k, hf.data(), l.k, 0.0f, prod.data(), l.k);
          for (int64_t r = 0; r < nr; ++r) {
            double s = 0;
            for (int64_t i = 0; i < l.k; ++i)
              s += static_cast<double>(prod[static_cast<size_t>(r * l.k + i)]) * e[r * l.k + i];
            if (c == 0) res.base_error += s;
            if (l.per_tensor) {
              tensor_err[static_cast<size_t>(c)] += s;
            } else {
              const size_t cell = static_cast<size_t>(r0 + r);
              if (s < best[cell]) best[cell] = s, choice[cell] = c;
            }
          }
        }
        continue;
      }
      // Blocks of a row: coordinate descent from the given encoding.
      e_row.resize(static_cast<size_t>(l.k));
      g_row.resize(static_cast<size_t>(l.k));
      d.resize(static_cast<size_t>(l.bs));
      exec::Gemm(false, false, nr, l.k, l.k, 1.0f, err.data(), l.k, hf.data(), l.k, 0.0f, prod.data(), l.k);
      for (int64_t r = 0; r < nr; ++r) {
        const size_t row_cell = static_cast<size_t>((r0 + r) * l.blocks);
        std::copy(err.begin() + r * l.k, err.begin() + (r + 1) * l.k, e_row.begin());
        std::copy(prod.begin() + r * l.k, prod.begin() + (r + 1) * l.k, g_row.begin());
        double row_err = 0;
        for (int64_t i = 0; i < l.k; ++i) row_err += static_cast<double>(e_row[size_t(i)]) * g_row[size_t(i)];
        res.base_error += row_err;
        for (int sweep = 0; sweep < 2; ++sweep) {
          for (int64_t b = 0; b < l.blocks; ++b) {
            const int64_t o = b * l.bs;
            double best_delta = 0;
            int best_c = -1;
            for (int c = 0; c < candidates; ++c) {
              const float* ec = err.data() + static_cast<size_t>(c) * band + r * l.k + o;
              double lin = 0, quad = 0;
              for (int64_t j = 0; j < l.bs; ++j) d[size_t(j)] = ec[j] - e_row[size_t(o + j)];
              for (int64_t j = 0; j < l.bs; ++j) {
                const float dj = d[size_t(j)];
                if (dj == 0.0f) continue;
                lin += static_cast<double>(dj) * g_row[size_t(o + j)];
                const float* h = hf.data() + (o + j) * l.k + o;
                double hd = 0;
                for (int64_t i = 0; i < l.bs; ++i) hd += static_cast<double>(h[i]) * d[size_t(i)];
                quad += dj * hd;
              }
              const double delta = quad + 2 * lin;
              if (delta < best_delta) best_delta = delta, best_c = c;
            }
            if (best_c < 0) continue;
            const float* ec = err.data() + static_cast<size_t>(best_c) * band + r * l.k + o;
            for (int64_t j = 0; j < l.bs; ++j) {
              const float dj = ec[j] - e_row[size_t(o + j)];
              e_row[size_t(o + j)] = ec[j];
              if (dj == 0.0f) continue;
              const float* h = hf.data() + (o + j) * l.k;  // H is symmetric: row o + j is its column
              for (int64_t i = 0; i < l.k; ++i) g_row[size_t(i)] += dj * h[i];
            }
            choice[row_cell + static_cast<size_t>(b)] = best_c;
            row_err += best_delta;
          }
        }
        res.error += std::max(0.0, row_err);
      }
    }
  }
  if (l.per_tensor) {
    choice[0] = static_cast<int>(std::min_element(tensor_err.begin(), tensor_err.end()) - tensor_err.begin());
    res.error = tensor_err[static_cast<size_t>(choice[0])];
  } else if (l.blocks == 1) {
    res.error = 0;
    for (double b : best) res.error += b;
  }

  if (options.adaptive_rounding) {
    QAIRT_RETURN_IF_ERROR(OptimizeRounding(name, l, base, rows, w, grids, choice, grams, &res));
    res.values.resize(w.size());
    if (rows.columns) {
      for (int64_t n = 0; n < l.n; ++n)
        for (int64_t i = 0; i < l.k; ++i) res.values[static_cast<size_t>(i * l.n + n)] = w[size_t(n * l.k + i)];
    } else {
      res.values = w;
    }
  }

  // The chosen candidates in the weight's own tables.
  res.encoding = base;
  std::vector<float> scales(base.scales.begin(), base.scales.end());
  std::vector<int32_t> offsets(base.offsets.begin(), base.offsets.end());
  std::vector<int32_t> ints(base.block_int_scales.begin(), base.block_int_scales.end());
  for (size_t cell = 0; cell < cells; ++cell) {
    if (choice[cell] == 0) continue;
    ++res.cells_changed;
    const int64_t row = l.per_tensor ? 0 : static_cast<int64_t>(cell) / l.blocks;
    const size_t idx = l.Index(row, l.per_tensor ? 0 : static_cast<int64_t>(cell) % l.blocks);
    const CellGrids& g = grids[cell];
    if (l.lpbq) {
      ints[idx] = static_cast<int32_t>(std::lround(g.scale[size_t(choice[cell])] / base.scales[size_t(row)]));
      continue;
    }
    scales[idx] = g.scale[static_cast<size_t>(choice[cell])];
    if (!offsets.empty()) offsets[idx] = g.offset[static_cast<size_t>(choice[cell])];
  }
  if (l.lpbq) {
    res.encoding.block_int_scales = std::move(ints);
  } else {
    res.encoding.scales = std::move(scales);
    res.encoding.offsets = std::move(offsets);
  }
  return res;
}

}  // namespace qairt::calib
