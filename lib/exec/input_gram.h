// What a weighted op's output error owes to its weight's rounding, gathered
// from its inputs. Write the weight as rows w_n (one per output channel) and
// the vectors the op multiplies them with as x (FullyConnected, MatMul: the
// rows of its input; convolutions: the im2col patches of a group). Rounding
// w_n to q_n changes output n by x . e_n (e_n = q_n - w_n), so its squared
// error over every x seen is
//
//   sum_x (x . e_n)^2 = e_n^T H e_n,   H = sum_x x x^T,
//
// and H (k x k per group) is all a weight search needs from the data: it
// streams, one sample at a time, and its size does not depend on how many
// samples or positions there are. Sequential MSE (calib/seqmse.h) builds one
// per weighted op from the inputs the quantized predecessors produce.
#pragma once

#include <cstdint>
#include <string_view>
#include <utility>
#include <vector>

#include "ir/graph.h"
#include "support/status.h"

namespace qairt::exec {

// How an op's static weight (input 1) reads as rows: `groups` groups of
// `rows_per_group` output channels, each a row of `k` values in the order H
// is indexed. Row n of group n / rows_per_group is, in the weight's own
// layout: FullyConnected [N, K] row n; MatMul [K, N] column n (transpose_in1
// [N, K]: row n); convolution [O, I/group, k...] w[n] flattened ([c, kd, kh,
// kw], im2col's order).
struct WeightRows {
  int64_t groups = 1;
  int64_t rows_per_group = 0;
  int64_t k = 0;
  bool columns = false;  // MatMul [K, N]: row n is column n of the weight
  int64_t rows() const { return groups * rows_per_group; }
};

// A weight's float32 values as the row readers take them: the tensor's own
// layout, or for a transposed view (a MatMul weight under a FullyConnected)
// its source, flagged true (row n is then column n), so no transposed copy
// is made.
std::pair<const float*, bool> WeightValues(const Tensor& t);

// FullyConnected, MatMul and the convolutions: the op types WeightRowsOf reads.
bool IsWeightedOpType(std::string_view type);

// The layout of `op`'s weight, or why its inputs cannot be gathered
// (kUnsupported: op type, a transposed or non-static input, a batched
// weight, unknown shapes).
Result<WeightRows> WeightRowsOf(const Graph& g, OpId op);

class InputGram {
 public:
  // second_moment false: only the first moment (the sum of the x vectors,
  // what a bias correction needs) is gathered, without H's k x k cost.
  static Result<InputGram> For(const Graph& g, OpId op, bool second_moment = true);

  // One sample's value of the op's input 0 (float32, `count` elements in the
  // graph's shape of that tensor).
  Status Add(const float* x, size_t count);

  // The same in two steps, so samples can be observed on several threads
  // and still summed in one fixed order: Contribution writes the sample's
  // x x^T sums (float, groups x k x k) into `out`, touching nothing shared;
  // Accumulate adds one to H.
  struct Sample {
    std::vector<float> h;
    std::vector<double> sum;  // groups x k: the sum of the x vectors
    std::vector<float> col;
    uint64_t vectors = 0;
  };
  Status Contribution(const float* x, size_t count, Sample* out) const;
  void Accumulate(const Sample& s);

  const WeightRows& rows() const { return rows_; }
  // H of group gi, k x k row-major, summed in double.
  const double* group(int64_t gi) const { return h_.data() + gi * rows_.k * rows_.k; }
  // Sum of the x vectors of group gi (k values); divided by vectors(), the
  // mean x, so the op's mean output row n is w_n . mean.
  const double* sum(int64_t gi) const { return sum_.data() + gi * rows_.k; }
  uint64_t vectors() const { return vectors_; }  // x vectors added (per group)

 private:
  InputGram() = default;
  const Op* op_ = nullptr;
  WeightRows rows_;
  std::vector<int64_t> in_dims_, out_dims_, kernel_;
  std::vector<double> h_;
  std::vector<double> sum_;
  bool second_moment_ = true;
  Sample own_;
  uint64_t vectors_ = 0;
};

}  // namespace qairt::exec
