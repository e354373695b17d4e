// How calibration quantizes a static tensor, decided from its first
// consumer: skipped (a bias, which processing computes), a constant operand
// quantized like an activation, a normalization scale, or a weight with its
// granularity (per tensor, channel, row, block or LPBQ) and bit width.
#pragma once

#include <string>
#include <vector>

#include "calib/calibrate.h"
#include "ir/graph.h"

namespace qairt::calib {

// How a static tensor is quantized, from its first consumer.
struct ParamPlan {
  bool skip = false;  // biases (computed by processing) and non-float data
  EncodingKind kind = EncodingKind::kPerTensor;
  int32_t axis = -1;
  std::vector<int64_t> block_sizes;
  uint32_t bitwidth = 8;
  bool lpbq = false;
  bool activation_like = false;  // a constant operand, quantized like an activation
  bool asymmetric = false;       // a parameter quantized with the asymmetric schema
  int32_t channel_axis = -1;     // a weight's output-channel axis, whatever its granularity
};

// Warnings (a weight whose input dim the block size does not divide) are
// appended to `warnings`.
ParamPlan PlanParam(const Graph& g, const Tensor& t, const Options& o, std::vector<std::string>* warnings);

}  // namespace qairt::calib
