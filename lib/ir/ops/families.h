// Each op family appends its schemas; op_registry.cpp calls them all once.
#pragma once

#include <vector>

#include "ir/op_registry.h"

namespace qairt::ops {

void RegisterElementwiseOps(std::vector<OpSchema>* out);    // unary, binary (broadcast), select, activations
void RegisterNnOps(std::vector<OpSchema>* out);             // conv, pool, fully connected, matmul, norms, softmax
void RegisterDataMovementOps(std::vector<OpSchema>* out);   // reshape, transpose, concat, gather, slice, ...
void RegisterReductionOps(std::vector<OpSchema>* out);      // reduce*, argmax/argmin, topk, cumsum
void RegisterRecurrentOps(std::vector<OpSchema>* out);      // lstm, gru
void RegisterQuantizationOps(std::vector<OpSchema>* out);   // convert, cast, quantize, dequantize

}  // namespace qairt::ops
