// Batch normalisation, and any other per-channel affine map, folded into the
// convolution (or FullyConnected) that feeds it. The ONNX importer folds a
// BatchNormalization into its Conv/ConvTranspose and lowers one it cannot
// fold to the IR's Batchnorm (scale, shift); the fold_affine_into_conv
// rewrite later folds Batchnorm and constant Mul/Add/Sub/Div into Conv and
// FullyConnected. All of them round as the functions below do.
#pragma once

#include <cstdint>
#include <vector>

namespace qairt {

// y = x * scale[c] + shift[c] for each channel c.
struct ChannelAffine {
  std::vector<float> scale;
  std::vector<float> shift;
};

// Inference-mode batch normalisation
//   y = (x - mean[c]) / sqrt(var[c] + epsilon) * gamma[c] + beta[c]
// as a ChannelAffine: scale = gamma / sqrt(var + epsilon) and shift =
// beta - mean * scale, computed in double from the double scale and each
// rounded to float once. With `x_bias`, x is a convolution's output that
// includes that bias, and the shift absorbs it as (x_bias - mean) * scale +
// beta, the mean coming off the bias first (in float), so a bias equal to
// the mean cancels exactly. Every vector has one entry per channel.
ChannelAffine BatchNormAffine(const std::vector<float>& gamma, const std::vector<float>& beta,
                              const std::vector<float>& mean, const std::vector<float>& var, double epsilon,
                              const std::vector<float>* x_bias = nullptr);

// Where a weight tensor keeps its output channels.
struct ConvWeightLayout {
  // false: [O, ...] (Conv, DepthWiseConv2d, FullyConnected). true: a
  // transposed convolution's [C_in, O / group, k...], where input channel i
  // feeds output channels (i / (C_in / group)) * (O / group) + [0, O / group).
  bool transposed = false;
  int64_t group = 1;
  int64_t kernel_size = 1;  // product of the k... dims (transposed only)
};

// Folds y = conv(x) * a.scale[c] + a.shift[c] into the convolution, in float:
//   W'[c] = W[c] * scale[c],  b'[c] = b[c] * scale[c] + shift[c].
// `bias` holds one entry per output channel (zeros for a convolution
// without one). False, changing nothing, when the sizes do not fit `layout`.
bool FoldChannelAffineIntoConv(const ChannelAffine& a, const ConvWeightLayout& layout,
                               std::vector<float>* weights, std::vector<float>* bias);

// Folds a batch normalisation of a convolution's output into it: the
// weights scaled as FoldChannelAffineIntoConv scales them, the bias
// replaced by BatchNormAffine's shift with `bias` absorbed. False, changing
// nothing, when the sizes do not fit.
bool FoldBatchNormIntoConv(const std::vector<float>& gamma, const std::vector<float>& beta,
                           const std::vector<float>& mean, const std::vector<float>& var, double epsilon,
                           const ConvWeightLayout& layout, std::vector<float>* weights, std::vector<float>* bias);

}  // namespace qairt
