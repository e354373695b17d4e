// Target-specific processing passes (spec "Target specific processing"), one
// per file, in the order registry.cpp runs them.
#pragma once

#include "passes/session.h"

namespace qairt::pass {

Status PropagateDataMovementEncodings(Session& s);  // propagate_encodings.cpp
Status InjectDataMovementConverts(Session& s);      // inject_converts.cpp: the converts propagation planned
Status InjectConverts(Session& s);                  // inject_converts.cpp: after kernel selection
Status TagSuperGroups(Session& s);                  // tag_super_groups.cpp
Status FillMissingEncodings(Session& s);            // fill_missing_encodings.cpp
Status DuplicateSharedBiases(Session& s);           // duplicate_shared_biases.cpp
Status MakeRequestedKernels(Session& s);            // make_requested_kernels.cpp
Status SelectKernels(Session& s);                   // select_kernels.cpp
Status RaiseWeightScalesForBias(Session& s);        // raise_weight_scales_for_bias.cpp
Status ComputeStaticEncodings(Session& s);          // compute_static_encodings.cpp
Status QuantizeStaticTensors(Session& s);           // quantize_static_tensors.cpp
Status Fp16Audit(Session& s);                       // fp16_audit.cpp

// ---- shared helpers (pass_util.cpp) -----------------------------------------

// Whether input `slot` of `op` is a bias (the target's kernels say so; ops the
// target does not describe use the QNN convention: input 2 of convolutions
// and FullyConnected).
bool IsBiasSlot(const target::Target& t, const Op& op, size_t slot);
// Whether input `slot` of `op` is a weight.
bool IsWeightSlot(const target::Target& t, const Op& op, size_t slot);
// Convert/Cast/Quantize/Dequantize.
bool IsConvertOp(const Op& op);
// "Convert" -> "convert" (names of injected ops).
std::string ToLowerOpName(std::string_view type);

}  // namespace qairt::pass
