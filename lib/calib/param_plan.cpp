#include "calib/param_plan.h"

#include <fmt/format.h>

namespace qairt::calib {

ParamPlan PlanParam(const Graph& g, const Tensor& t, const Options& o, std::vector<std::string>* warnings) {
  ParamPlan p;
  // Constants of elementwise ops are operands next to activations: they take
  // the activation bit width and schema (an a16 Add needs both inputs 16-bit).
  p.bitwidth = o.act_bitwidth;
  p.activation_like = true;
  if (t.consumers.empty()) {
    p.skip = true;
    return p;
  }
  const Use u = t.consumers.front();
  const Op& op = g.op(u.op);
  const size_t rank = t.shape.rank();
  const bool conv = op.type == "Conv2d" || op.type == "Conv1d" || op.type == "Conv3d" || op.type == "DepthWiseConv2d";
  const bool tconv = op.type == "TransposeConv2d" || op.type == "TransposeConv3d";
  const bool fc = op.type == "FullyConnected";
  const bool matmul = op.type == "MatMul";
  const bool norm = op.type == "LayerNorm" || op.type == "GroupNorm" || op.type == "InstanceNorm" ||
                    op.type == "Batchnorm" || op.type == "RmsNorm";
  if ((conv || tconv || fc || norm) && u.slot == 2) {
    p.skip = true;  // bias: input scale x weight scale, computed by target processing
    return p;
  }
  if (norm && u.slot == 1) {
    // A normalization's scale is a parameter (HTP's a16w8 / a8w8 norm
    // kernels), per tensor and asymmetric (AIMET's HTP configs); 4-bit
    // weight settings are meant for the large matrices, so it stays 8-bit;
    // 16-bit with 16-bit activations where the target runs a16w16 norms.
    p.bitwidth = o.wide_norm_scales && o.act_bitwidth == 16 ? 16 : o.weights_bitwidth == 4 ? 8 : o.weights_bitwidth;
    p.activation_like = false;
    p.asymmetric = true;
    return p;
  }
  if (u.slot != 1 || !(conv || tconv || fc || matmul) || rank < 2) return p;
  p.bitwidth = o.weights_bitwidth;
  p.activation_like = false;
  p.channel_axis = tconv ? 1 : 0;
  if (conv && o.block_size > 0) {
    // [O, I/g, spatial...]: blocks of input channels, each with all its
    // spatial taps (HTP's Conv2d block and LPBQ weights); a weight with fewer
    // input channels than a block (depthwise) is one block per channel.
    const int64_t k = t.shape[1].value;
    const int64_t block = k > 0 && k < o.block_size ? k : o.block_size;
    if (k > 0 && k % block == 0) {
      p.kind = o.lpbq ? EncodingKind::kLpbq : EncodingKind::kPerBlock;
      p.axis = 1;
      p.block_sizes.assign(rank, 1);
      for (size_t d = 2; d < rank; ++d) p.block_sizes[d] = t.shape[d].value;
      p.block_sizes[1] = block;
      p.lpbq = o.lpbq;
      return p;
    }
    warnings->push_back(fmt::format("weight '{}': {} input channels are not a multiple of --weights_block_size {}; "
                                    "quantized per {} instead",
                                    t.name, k, o.block_size, o.per_channel ? "channel" : "tensor"));
  }
  if (conv || tconv) {
    if (o.per_channel) {
      p.kind = EncodingKind::kPerChannel;
      p.axis = tconv ? 1 : 0;
    }
    return p;
  }
  // FullyConnected [N, K]; MatMul [..., K, N] (transpose_in1: [..., N, K]).
  bool n_last = matmul;
  if (matmul) {
    auto it = op.attrs.find("transpose_in1");
    if (it != op.attrs.end() && std::holds_alternative<int64_t>(it->second) && std::get<int64_t>(it->second))
      n_last = false;
  }
  const int32_t out_axis = n_last ? static_cast<int32_t>(rank - 1) : static_cast<int32_t>(rank - 2);
  const int32_t in_axis = n_last ? static_cast<int32_t>(rank - 2) : static_cast<int32_t>(rank - 1);
  p.channel_axis = out_axis;
  if (o.block_size > 0) {
    const int64_t k = t.shape[in_axis].value;
    // A row no longer than a block is one block: per-channel scales on the
    // block grid, so the weight keeps the blockwise kind its target kernel
    // needs (an LPBQ-only 4-bit kernel has no per-tensor fallback).
    const int64_t block = k > 0 && k < o.block_size ? k : o.block_size;
    if (k > 0 && k % block == 0) {
      p.kind = o.lpbq ? EncodingKind::kLpbq : EncodingKind::kPerBlock;
      p.axis = in_axis;
      p.block_sizes.assign(rank, 1);
      for (size_t d = 0; d < rank; ++d)
        if (static_cast<int32_t>(d) != out_axis) p.block_sizes[d] = t.shape[d].value;
      p.block_sizes[in_axis] = block;
      p.lpbq = o.lpbq;
      return p;
    }
    warnings->push_back(fmt::format("weight '{}': input dim {} is not a multiple of --weights_block_size {}; "
                                    "quantized per {} instead",
                                    t.name, k, o.block_size, o.per_row ? "row" : "tensor"));
  }
  if (o.per_row) {
    p.kind = EncodingKind::kPerChannel;
    p.axis = out_axis;
  }
  return p;
}

}  // namespace qairt::calib
