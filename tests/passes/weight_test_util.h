// Helpers of the static-weight tests (deferred and transposed quantization):
// a temporary file removed on scope exit, weights with outliers, floats
// mapped from a file, and encoding requests.
#pragma once

#include <filesystem>
#include <fstream>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "quant/quantize.h"
#include "support/static_data.h"

namespace qairt::testing {

struct TempPath {
  std::filesystem::path path;
  explicit TempPath(const std::string& name) : path(std::filesystem::temp_directory_path() / name) {}
  ~TempPath() {
    std::error_code ec;
    std::filesystem::remove(path, ec);
  }
};

// Normal weights with every 61st one 30x larger: scales differ between rows
// and blocks.
inline std::vector<float> OutlierWeights(size_t count, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> d(0.f, 0.05f);
  std::vector<float> v(count);
  for (float& x : v) x = d(rng);
  for (size_t i = 3; i < count; i += 61) v[i] *= 30.f;
  return v;
}

// `values` written to `file` and mapped back (StaticData::MapFile).
inline std::shared_ptr<const StaticData> MappedFloats(const TempPath& file, const std::vector<float>& values) {
  std::ofstream(file.path, std::ios::binary)
      .write(reinterpret_cast<const char*>(values.data()), static_cast<std::streamsize>(values.size() * sizeof(float)));
  return StaticData::MapFile(file.path.string(), 0, values.size() * sizeof(float)).value();
}

inline quant::EncodingRequest WeightRequest(EncodingKind kind, DType dtype, Symmetry sym, int32_t axis,
                                            std::vector<int64_t> blocks = {}) {
  quant::EncodingRequest r;
  r.kind = kind;
  r.dtype = dtype;
  r.symmetry = sym;
  r.axis = axis;
  r.block_sizes = std::move(blocks);
  if (kind == EncodingKind::kLpbq) r.decompressed_bitwidth = 8;
  return r;
}

}  // namespace qairt::testing
