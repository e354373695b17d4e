// The one place passes are registered, in the spec's order ("Target specific
// processing": handle data movement ops, tag super groups, select op
// precision, insert converts, quantize static tensors).
#include "passes/pass_manager.h"
#include "passes/passes.h"

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
    {"compute-static-encodings", "Compute Static / Bias Encodings",
     "bias scale = input scale x weight scale; encodings for static tensors", ComputeStaticEncodings},
    {"quantize-static-tensors", "Quantize Static Tensors",
     "weights and biases stored quantized, sub-8-bit values packed", QuantizeStaticTensors},
    {"fp16-audit", "FP16 Audit", "float compute on targets without it is an error", Fp16Audit},
};

}  // namespace

std::span<const PassInfo> Pipeline() { return kPipeline; }

}  // namespace qairt::pass
