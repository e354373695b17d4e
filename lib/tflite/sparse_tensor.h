// TFLite's sparse constant tensors (SparsityParameters): the stored values
// are the non-zeros of a dense tensor, visited in `traversal_order` over the
// dims and, for block-sparse tensors, the dims of each block (`block_map`
// names the dense dim each block dim splits); each visited level is DENSE
// (every index up to its dense_size) or SPARSE_CSR (the indices
// array_indices[array_segments[p] .. array_segments[p + 1]) under parent
// position p). MediaPipe's pruned models store their fp16 weights this way.
// Internal to the TFLite importer.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "support/status.h"
#include "tflite/tflite_subset_generated.h"

namespace qairt::tflite_import {

// The number of values the sparsity parameters visit for a tensor of
// `dense_shape`, after checking them (what the file's buffer must hold);
// an error says which field is wrong.
Result<uint64_t> SparseValueCount(const tflite::fb::SparsityParameters& sp, const std::vector<int64_t>& dense_shape);

// The dense bytes (row-major, zeros where nothing is stored) of a tensor of
// `dense_shape` and `elem_bytes`-byte elements from its stored values
// (`value_bytes` of them at `values`, exactly SparseValueCount elements).
Result<std::vector<uint8_t>> Densify(const tflite::fb::SparsityParameters& sp, const std::vector<int64_t>& dense_shape,
                                     size_t elem_bytes, const uint8_t* values, uint64_t value_bytes);

}  // namespace qairt::tflite_import
