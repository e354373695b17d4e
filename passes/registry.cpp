// The one place passes are registered. Two pipelines: the pre-quantization
// rewrites on the float graph (before calibration; each optional and
// reported), then target-specific processing in the spec's order ("Target
// specific processing": handle data movement ops, tag super groups, select op
// precision, insert converts, quantize static tensors).
#include "passes/pass_manager.h"
#include "passes/passes.h"
#include "passes/rewrite/rewrite.h"
#include "passes/rewrite/rewrites.h"

namespace qairt::pass {

namespace {

constexpr PassInfo kPipeline[] = {
    {"propagate-encodings", "Propagate Encodings",
     "one encoding along each chain of data-movement ops (minimum bit width)", PropagateDataMovementEncodings},
    {"inject-dm-converts", "Inject Convert Ops", "converts at the ends of data-movement chains", InjectDataMovementConverts},
    {"tag-super-groups", "Tag Tensors In SuperGroups",
     "target super-group patterns; encodings only at group boundaries", TagSuperGroups},
    {"fill-missing-encodings", "Fill Missing Encodings",
     "float fallback for tensors without encodings; biases fixed point", FillMissingEncodings},
    {"duplicate-shared-biases", "Duplicate Shared Biases", "one bias tensor per consumer", DuplicateSharedBiases},
    {"make-requested-kernels", "Make Requested Kernels", "requested dtype tuple per op", MakeRequestedKernels},
    {"select-kernels", "Kernel Selection",
     "nearest accuracy-preserving kernel per op (symmetry, granularity, scale, sign, bit width)", SelectKernels},
    {"inject-converts", "Inject Convert Ops",
     "Convert/Cast/Quantize/Dequantize where producer and consumer disagree; redundant ones pruned", InjectConverts},
    {"raise-weight-scales-for-bias", "Raise Weight Scales For Biases",
     "a channel's weight scale raised where input scale x weight scale cannot hold its int32 bias",
     RaiseWeightScalesForBias},
    {"compute-static-encodings", "Compute Static / Bias Encodings",
     "bias scale = input scale x weight scale; encodings for static tensors", ComputeStaticEncodings},
    {"quantize-static-tensors", "Quantize Static Tensors",
     "weights and biases stored quantized, sub-8-bit values packed", QuantizeStaticTensors},
    {"fp16-audit", "FP16 Audit", "float compute on targets without it is an error", Fp16Audit},
};

}  // namespace

std::span<const PassInfo> Pipeline() { return kPipeline; }

}  // namespace qairt::pass

namespace qairt::rewrite {

namespace {

// Order matters: norms and Gelu first (their patterns contain Mul/Add that
// the affine fold would otherwise absorb into nothing useful), HardSwish
// before the fold (its "x + 3" is an Add after a conv), MatMul ->
// FullyConnected before the fold (so a bias Add after it folds).
constexpr RewriteInfo kRewrites[] = {
    {"fuse-layernorm", "ReduceMean/Sub/Pow/ReduceMean/Add/Sqrt/Div[/Mul/Add] -> LayerNorm", FuseLayerNorm, "LayerNorm"},
    {"fuse-rmsnorm", "Pow/ReduceMean/Add/Sqrt/Div (or Rsqrt/Mul)[/Mul] -> RmsNorm", FuseRmsNorm, "RmsNorm"},
    {"fuse-gelu", "x * 0.5 * (1 + erf(x / sqrt 2)) -> Gelu", FuseGelu, "Gelu"},
    {"fuse-hardswish", "x * relu6(x + 3) / 6 and x * HardSigmoid(x) -> HardSwish", FuseHardSwish, "HardSwish"},
    // Opt-in (qairt convert turns it on with --use_per_row_quantization):
    // the weight is stored transposed under a new name, so encodings files
    // and exports name "<w>_nk" instead of the model's tensor.
    {"matmul-to-fully-connected",
     "MatMul by a static 2-D weight -> FullyConnected (per-channel weight scales; opt-in)", MatMulToFullyConnected,
     "FullyConnected", false},
    {"fold-affine-into-conv",
     "constant per-channel Mul/Div/Add/Sub/Batchnorm after Conv/DepthWiseConv/FullyConnected -> its weights and bias",
     FoldAffineIntoConv, nullptr},
};

}  // namespace

std::span<const RewriteInfo> Rewrites() { return kRewrites; }

}  // namespace qairt::rewrite
