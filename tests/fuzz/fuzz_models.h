// Small ONNX models built in memory, shared by the fuzz targets that need a
// graph to act on and by the concurrency test (tests/hostile).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "import/onnx_model_builder.h"

namespace qairt_fuzz {

// x[1,C,H,H] -> Conv(3x3, pads 1, C->2C) -> Relu -> GlobalAveragePool ->
// Flatten -> Gemm(10) -> "logits". `seed` varies the weights so different
// calls give different models of the same structure.
inline std::string SmallConvModel(int64_t channels = 4, int64_t hw = 8, int seed = 0) {
  qairt::testing::OnnxModelBuilder b;
  const int64_t c = channels, o = 2 * channels;
  b.Input("x", 1, {1, c, hw, hw});
  b.Output("logits", 1, {1, 10});
  auto ramp = [seed](size_t n, float step) {
    std::vector<float> v(n);
    for (size_t i = 0; i < n; ++i) v[i] = step * static_cast<float>((static_cast<int>(i) * 7 + seed * 13) % 23 - 11);
    return v;
  };
  b.Init("conv.w", 1, {o, c, 3, 3}, ramp(static_cast<size_t>(o * c * 9), 0.02f));
  b.Init("conv.b", 1, {o}, ramp(static_cast<size_t>(o), 0.01f));
  b.Init("fc.w", 1, {10, o}, ramp(static_cast<size_t>(10 * o), 0.05f));
  b.Init("fc.b", 1, {10}, ramp(10, 0.01f));
  auto* conv = b.Node("Conv", {"x", "conv.w", "conv.b"}, {"conv_out"}, "conv");
  qairt::testing::OnnxModelBuilder::IntsAttr(conv, "pads", {1, 1, 1, 1});
  qairt::testing::OnnxModelBuilder::IntsAttr(conv, "kernel_shape", {3, 3});
  b.Node("Relu", {"conv_out"}, {"relu_out"}, "relu");
  b.Node("GlobalAveragePool", {"relu_out"}, {"gap_out"}, "gap");
  b.Node("Flatten", {"gap_out"}, {"flat"}, "flatten");
  auto* fc = b.Node("Gemm", {"flat", "fc.w", "fc.b"}, {"logits"}, "fc");
  qairt::testing::OnnxModelBuilder::IntAttr(fc, "transB", 1);
  return b.Bytes();
}

}  // namespace qairt_fuzz
