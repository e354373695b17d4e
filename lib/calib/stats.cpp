#include "calib/stats.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "calib/calib_stats_generated.h"
#include "ir/attribute.h"

namespace qairt::calib {

namespace {

// FNV-1a, 64-bit; bulk data eight bytes at a time (a weights pass at memory
// speed rather than byte by byte).
struct Fnv {
  uint64_t h = 0xcbf29ce484222325ull;
  void Byte(uint8_t b) { h = (h ^ b) * 0x100000001b3ull; }
  void U64(uint64_t v) {
    for (int i = 0; i < 8; ++i) Byte(static_cast<uint8_t>(v >> (8 * i)));
  }
  void Str(std::string_view s) {
    U64(s.size());
    for (char c : s) Byte(static_cast<uint8_t>(c));
  }
  void Bytes(const uint8_t* p, size_t n) {
    U64(n);
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
      uint64_t w;
      std::memcpy(&w, p + i, 8);
      h = (h ^ w) * 0x100000001b3ull;
    }
    for (; i < n; ++i) Byte(p[i]);
  }
};

uint32_t FloatBits(float f) {
  uint32_t b;
  std::memcpy(&b, &f, 4);
  return b;
}

}  // namespace

uint64_t ModelFingerprint(const Graph& g) {
  Fnv f;
  f.Str(g.name());
  f.U64(g.tensor_count());
  for (TensorId id = 0; id < g.tensor_count(); ++id) {
    const Tensor& t = g.tensor(id);
    f.Str(t.name);
    f.U64(static_cast<uint64_t>(t.dtype));
    f.U64(static_cast<uint64_t>(t.kind));
    f.Str(t.shape.ToString());
    f.U64(t.encoding ? 1 : 0);
    if (t.data) f.Bytes(t.data->data(), t.data->size());
  }
  f.U64(g.op_count());
  for (OpId id = 0; id < g.op_count(); ++id) {
    const Op& op = g.op(id);
    f.Str(op.type);
    f.Str(op.name);
    for (TensorId in : op.inputs) f.U64(in);
    f.U64(~uint64_t{0});
    for (TensorId o : op.outputs) f.U64(o);
    for (const auto& [key, value] : op.attrs) {
      f.Str(key);
      f.Str(AttributeToString(value));
    }
    f.Str(op.source_op_type);  // decides how some ops sum (see FullyConnectedExportsAsGemm)
  }
  for (TensorId in : g.inputs()) f.U64(in);
  for (TensorId o : g.outputs()) f.U64(o);
  return f.h;
}

uint64_t OptionsFingerprint(const Options& o) {
  Fnv f;
  f.U64(o.histogram_bins);
  std::vector<std::string> floats = o.float_inputs;
  std::sort(floats.begin(), floats.end());
  for (const std::string& n : floats) f.Str(n);
  return f.h;
}

uint64_t Stats::RangesFingerprint() const {
  Fnv f;
  f.U64(model_fingerprint);
  f.U64(options_fingerprint);
  for (const TensorStats& t : tensors) {
    f.Str(t.name);
    f.U64(FloatBits(t.min));
    f.U64(FloatBits(t.max));
    f.U64((t.low_sentinel ? 1 : 0) | (t.high_sentinel ? 2 : 0));
  }
  return f.h;
}

Status CheckStatsFit(const Stats& have, const Stats& expect, std::string_view what) {
  if (have.model_fingerprint != expect.model_fingerprint)
    return InvalidArgument("{} were computed on another model (fingerprint {:016x}, this graph's is {:016x}): the "
                           "model, its shapes and the conversion options before calibration (rewrites, overrides) "
                           "must be the same", what, have.model_fingerprint, expect.model_fingerprint);
  if (have.histogram_bins != expect.histogram_bins)
    return InvalidArgument("{} use {} histogram bins, this calibration {}", what, have.histogram_bins,
                           expect.histogram_bins);
  if (have.options_fingerprint != expect.options_fingerprint)
    return InvalidArgument("{} were computed with other calibration options (the float inputs, "
                           "--input_encoding NAME other, differ)", what);
  return Status::Ok();
}

std::string MissingShards(const Stats& s) {
  std::string out;
  size_t listed = 0, missing = 0;
  for (uint32_t k = 0; k < s.shard_count; ++k) {
    if (std::binary_search(s.shards.begin(), s.shards.end(), k)) continue;
    ++missing;
    if (listed < 8) out += (listed++ ? ", " : "") + std::to_string(k);
  }
  if (missing > listed) out += fmt::format(" and {} more", missing - listed);
  return out;
}

Status MergeStats(const std::vector<const Stats*>& parts, Stats* out) {
  if (!out) return InvalidArgument("MergeStats: out must not be NULL");
  if (parts.empty()) return InvalidArgument("merging calibration statistics needs at least one file");
  for (size_t i = 0; i < parts.size(); ++i)
    if (!parts[i]) return InvalidArgument("merging calibration statistics: part {} is NULL", i);
  const Stats& first = *parts[0];
  Stats m = first;
  std::vector<uint32_t> covered = first.shards;
  for (size_t i = 1; i < parts.size(); ++i) {
    const Stats& p = *parts[i];
    const std::string what = fmt::format("part {}", i + 1);
    QAIRT_RETURN_IF_ERROR(CheckStatsFit(p, first, what));
    if (p.round != first.round)
      return InvalidArgument("{} holds round {}, part 1 round {}: merge shards of one round", what, p.round, first.round);
    if (p.round == 2 && p.ranges_fingerprint != first.ranges_fingerprint)
      return InvalidArgument("{}: its histograms were computed on other ranges than part 1's", what);
    if (p.shard_count != first.shard_count || p.list_samples != first.list_samples)
      return InvalidArgument("{} is a shard of {} over {} samples, part 1 of {} over {}", what, p.shard_count,
                             p.list_samples, first.shard_count, first.list_samples);
    if (p.tensors.size() != m.tensors.size())
      return InvalidArgument("{} holds {} tensors, part 1 {}", what, p.tensors.size(), m.tensors.size());
    for (uint32_t k : p.shards) {
      if (std::binary_search(covered.begin(), covered.end(), k))
        return InvalidArgument("{}: shard {} of {} is already in the merge (each shard counts once)", what, k,
                               p.shard_count);
      covered.insert(std::upper_bound(covered.begin(), covered.end(), k), k);
    }
    for (size_t t = 0; t < m.tensors.size(); ++t) {
      TensorStats& a = m.tensors[t];
      const TensorStats& b = p.tensors[t];
      if (a.name != b.name) return InvalidArgument("{}: tensor {} is '{}', part 1's '{}'", what, t, b.name, a.name);
      if (a.hist.size() != b.hist.size())
        return InvalidArgument("{}: tensor '{}' has {} histogram bins, part 1 {}", what, a.name, b.hist.size(),
                               a.hist.size());
      if (p.round == 1) {
        a.min = std::min(a.min, b.min);
        a.max = std::max(a.max, b.max);
        a.low_sentinel = a.low_sentinel || b.low_sentinel;
        a.high_sentinel = a.high_sentinel || b.high_sentinel;
      }
      for (size_t k = 0; k < a.hist.size(); ++k) a.hist[k] += b.hist[k];
    }
    m.samples += p.samples;
  }
  m.shards = std::move(covered);
  *out = std::move(m);
  return Status::Ok();
}

std::string SerializeStats(const Stats& s) {
  flatbuffers::FlatBufferBuilder b(1024 + s.tensors.size() * (64 + s.histogram_bins * 8));
  std::vector<flatbuffers::Offset<fb::TensorStats>> tensors;
  tensors.reserve(s.tensors.size());
  for (const TensorStats& t : s.tensors) {
    auto name = b.CreateString(t.name);
    auto hist = t.hist.empty() ? 0 : b.CreateVector(t.hist);
    fb::TensorStatsBuilder tb(b);
    tb.add_name(name);
    tb.add_min(t.min);
    tb.add_max(t.max);
    tb.add_low_sentinel(t.low_sentinel);
    tb.add_high_sentinel(t.high_sentinel);
    if (!t.hist.empty()) {
      tb.add_histogram(hist);
      uint64_t total = 0;
      for (uint64_t c : t.hist) total += c;
      tb.add_observed(total);
    }
    tensors.push_back(tb.Finish());
  }
  auto tv = b.CreateVector(tensors);
  auto list = b.CreateString(s.input_list);
  auto shards = b.CreateVector(s.shards);
  fb::CalibrationStatsBuilder cb(b);
  cb.add_format_version(kStatsFormatVersion);
  cb.add_round(s.round);
  cb.add_model_fingerprint(s.model_fingerprint);
  cb.add_options_fingerprint(s.options_fingerprint);
  cb.add_ranges_fingerprint(s.ranges_fingerprint);
  cb.add_histogram_bins(s.histogram_bins);
  cb.add_shard_count(s.shard_count);
  cb.add_shards(shards);
  cb.add_samples(s.samples);
  cb.add_list_samples(s.list_samples);
  cb.add_tensors(tv);
  cb.add_input_list(list);
  b.Finish(cb.Finish(), fb::CalibrationStatsIdentifier());
  return std::string(reinterpret_cast<const char*>(b.GetBufferPointer()), b.GetSize());
}

Status ParseStats(std::string_view bytes, std::string_view what, Stats* out) {
  if (!out) return InvalidArgument("ParseStats: out must not be NULL");
  auto bad = [&](std::string_view why) {
    return Error(StatusCode::kParseError, "calibration statistics '{}': {}", what, why);
  };
  if (bytes.size() < 8 || !flatbuffers::BufferHasIdentifier(bytes.data(), fb::CalibrationStatsIdentifier()))
    return bad("not a qairt calibration statistics file (identifier QACS missing)");
  flatbuffers::Verifier::Options vo;
  vo.max_depth = 16;
  vo.max_tables = 1u << 24;
  flatbuffers::Verifier v(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), vo);
  if (!fb::VerifyCalibrationStatsBuffer(v)) return bad("truncated or corrupt (the FlatBuffers verifier refused it)");
  const fb::CalibrationStats* r = fb::GetCalibrationStats(bytes.data());
  if (r->format_version() != kStatsFormatVersion)
    return Error(r->format_version() > kStatsFormatVersion ? StatusCode::kUnsupported : StatusCode::kParseError,
                 "calibration statistics '{}': format version {} (this reader reads {})", what, r->format_version(),
                 kStatsFormatVersion);
  Stats s;
  s.round = r->round();
  if (s.round != 1 && s.round != 2) return bad(fmt::format("round {} (must be 1 or 2)", s.round));
  s.model_fingerprint = r->model_fingerprint();
  s.options_fingerprint = r->options_fingerprint();
  s.ranges_fingerprint = r->ranges_fingerprint();
  s.histogram_bins = r->histogram_bins();
  if (s.histogram_bins < 16 || s.histogram_bins > (1u << 16))
    return bad(fmt::format("histogram_bins {} (must be in [16, 65536])", s.histogram_bins));
  s.shard_count = r->shard_count();
  s.samples = r->samples();
  s.list_samples = r->list_samples();
  if (r->input_list()) s.input_list = r->input_list()->str();
  if (s.shard_count == 0 || s.shard_count > s.list_samples)
    return bad(fmt::format("shard_count {} for {} samples", s.shard_count, s.list_samples));
  if (!r->shards() || r->shards()->size() == 0) return bad("no shards listed");
  for (uint32_t k : *r->shards()) {
    if (k >= s.shard_count) return bad(fmt::format("shard {} of {}", k, s.shard_count));
    if (!s.shards.empty() && k <= s.shards.back()) return bad("shards not strictly ascending");
    s.shards.push_back(k);
  }
  uint64_t expected = 0;  // samples of the listed shards
  for (uint32_t k : s.shards) expected += (s.list_samples - k + s.shard_count - 1) / s.shard_count;
  if (s.samples != expected)
    return bad(fmt::format("samples {} but shards {} of {} over {} samples hold {}", s.samples, s.shards.size(),
                           s.shard_count, s.list_samples, expected));
  if (r->tensors()) {
    s.tensors.reserve(r->tensors()->size());
    for (const fb::TensorStats* t : *r->tensors()) {
      if (!t || !t->name()) return bad(fmt::format("tensors[{}] has no name", s.tensors.size()));
      TensorStats ts;
      ts.name = t->name()->str();
      ts.min = t->min();
      ts.max = t->max();
      ts.low_sentinel = t->low_sentinel();
      ts.high_sentinel = t->high_sentinel();
      if (std::isnan(ts.min) || std::isnan(ts.max))
        return bad(fmt::format("tensor '{}': min or max is NaN", ts.name));
      const size_t bins = t->histogram() ? t->histogram()->size() : 0;
      if (s.round == 2 && bins != s.histogram_bins)
        return bad(fmt::format("tensor '{}': {} histogram bins, the file says {}", ts.name, bins, s.histogram_bins));
      if (s.round == 1 && bins != 0) return bad(fmt::format("tensor '{}': a histogram in round 1", ts.name));
      if (bins) {
        ts.hist.assign(t->histogram()->begin(), t->histogram()->end());
        uint64_t total = 0;
        for (uint64_t c : ts.hist) {
          if (total + c < total) return bad(fmt::format("tensor '{}': histogram counts overflow", ts.name));
          total += c;
        }
        if (total != t->observed())
          return bad(fmt::format("tensor '{}': histogram counts sum to {}, the file says {} values were observed",
                                 ts.name, total, t->observed()));
      }
      s.tensors.push_back(std::move(ts));
    }
  }
  *out = std::move(s);
  return Status::Ok();
}

}  // namespace qairt::calib
