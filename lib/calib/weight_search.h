// Choosing one weight's encoding by the output error it causes, not by the
// weight's own rounding error. With the weight as rows w_n (output channels)
// and H = sum x x^T of the vectors its op multiplies them with
// (exec/input_gram.h), rounding row n to q_n costs e^T H e (e = q_n - w_n)
// of squared output error. Candidates:
//  * per tensor, per channel, per block: the min-max grid of each cell (the
//    given encoding) and the grids of that cell's range shrunk by
//    alpha = 1 - i/48, i = 1..23, then 0.5 down to 0.25 in steps of 0.05
//    (clipping outliers the data rarely multiplies);
//  * LPBQ: every integer block scale 1..2^(decompressed - bitwidth) on the
//    channel's float scale (the LPBQ grid itself).
// A cell that is a whole row (per channel) or the whole tensor takes the
// candidate with the least error summed over its rows. Blocks of one row
// share the row's error, so they are chosen by coordinate descent from the
// given encoding: each block in turn takes the candidate that lowers e^T H e
// most given the others (two sweeps); the error never rises.
//
// Adaptive rounding (optional, after the grids are chosen): each weight may
// round to the other grid point around it (floor instead of ceil, or the
// reverse) where that lowers its row's e^T H e, by coordinate descent over
// the row (three sweeps, from round-to-nearest; the error never rises). The
// choice is carried by the weight's values: they are moved onto the chosen
// grid points, so quantizing them with the encoding gives those integers.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "exec/input_gram.h"
#include "ir/encoding.h"
#include "support/status.h"

namespace qairt::calib {

struct WeightSearchOptions {
  bool search_grids = true;        // false: keep the given encoding (only rounding is searched)
  bool adaptive_rounding = false;
};

struct WeightSearchResult {
  Encoding encoding;         // the chosen one, in the weight's own layout
  double base_error = 0;     // output error of the given encoding (sum over rows of e^T H e)
  double error = 0;          // of the chosen one (<= base_error), rounding included
  uint64_t cells_changed = 0;
  uint64_t roundings_changed = 0;
  std::vector<float> values;  // adaptive rounding: the weight's new values (its own layout, float32)
};

// `data` holds the weight's float32 values: in the layout `rows` describes
// (data_columns false), or, for a 2-D weight, its transpose (data_columns
// true: [K, N] when rows reads [N, K], or the reverse). `dims` are the
// weight tensor's dims, `base` its min-max encoding: per tensor, per channel
// on the output-channel axis, or per block / LPBQ along K (2-D weights).
// grams[g]: H of group g (k x k, row-major). Anything else is kUnsupported.
Result<WeightSearchResult> SearchWeightEncoding(std::string_view name, const float* data, bool data_columns,
                                                const std::vector<int64_t>& dims, const exec::WeightRows& rows,
                                                const Encoding& base, const std::vector<const double*>& grams,
                                                const WeightSearchOptions& options = {});

}  // namespace qairt::calib
