#include "ir/batchnorm_fold.h"

#include <cmath>
#include <cstddef>
#include <utility>

namespace qairt {
namespace {

// Whether `weights` has a whole number of elements per output channel of
// `layout`, for `channels` output channels.
bool FitsLayout(const ConvWeightLayout& layout, size_t channels, size_t weights) {
  if (channels == 0 || weights % channels != 0) return false;
  if (!layout.transposed) return true;
  if (layout.group < 1 || layout.kernel_size < 1) return false;
  const auto group = static_cast<size_t>(layout.group), inner = static_cast<size_t>(layout.kernel_size);
  if (channels % group != 0) return false;
  const size_t per_input = channels / group * inner;  // one input channel's weights
  if (weights % per_input != 0) return false;
  const size_t inputs = weights / per_input;
  return inputs % group == 0;
}

// W'[c] = W[c] * scale[c]; precondition: FitsLayout.
void ScaleOutputChannels(const ConvWeightLayout& layout, const std::vector<float>& scale, std::vector<float>* w) {
  const size_t channels = scale.size();
  if (!layout.transposed) {
    const size_t per = w->size() / channels;
    for (size_t c = 0; c < channels; ++c)
      for (size_t k = 0; k < per; ++k) (*w)[c * per + k] *= scale[c];
    return;
  }
  const auto group = static_cast<size_t>(layout.group), inner = static_cast<size_t>(layout.kernel_size);
  const size_t per_group = channels / group;  // output channels of a group
  const size_t inputs = w->size() / (per_group * inner);
  const size_t inputs_per_group = inputs / group;
  for (size_t i = 0; i < inputs; ++i) {
    const size_t first = i / inputs_per_group * per_group;  // the group's first output channel
    for (size_t j = 0; j < per_group; ++j)
      for (size_t k = 0; k < inner; ++k) (*w)[(i * per_group + j) * inner + k] *= scale[first + j];
  }
}

}  // namespace

ChannelAffine BatchNormAffine(const std::vector<float>& gamma, const std::vector<float>& beta,
                              const std::vector<float>& mean, const std::vector<float>& var, double epsilon,
                              const std::vector<float>* x_bias) {
  const size_t n = gamma.size();
  ChannelAffine a{std::vector<float>(n), std::vector<float>(n)};
  for (size_t c = 0; c < n; ++c) {
    const double scale = gamma[c] / std::sqrt(static_cast<double>(var[c]) + epsilon);
    a.scale[c] = static_cast<float>(scale);
    a.shift[c] = x_bias ? static_cast<float>(((*x_bias)[c] - mean[c]) * scale + beta[c])
                        : static_cast<float>(beta[c] - mean[c] * scale);
  }
  return a;
}

bool FoldChannelAffineIntoConv(const ChannelAffine& a, const ConvWeightLayout& layout,
                               std::vector<float>* weights, std::vector<float>* bias) {
  const size_t channels = a.scale.size();
  if (a.shift.size() != channels || bias->size() != channels || !FitsLayout(layout, channels, weights->size()))
    return false;
  ScaleOutputChannels(layout, a.scale, weights);
  for (size_t c = 0; c < channels; ++c) (*bias)[c] = (*bias)[c] * a.scale[c] + a.shift[c];
  return true;
}

bool FoldBatchNormIntoConv(const std::vector<float>& gamma, const std::vector<float>& beta,
                           const std::vector<float>& mean, const std::vector<float>& var, double epsilon,
                           const ConvWeightLayout& layout, std::vector<float>* weights, std::vector<float>* bias) {
  const size_t channels = gamma.size();
  if (beta.size() != channels || mean.size() != channels || var.size() != channels || bias->size() != channels ||
      !FitsLayout(layout, channels, weights->size()))
    return false;
  ChannelAffine a = BatchNormAffine(gamma, beta, mean, var, epsilon, bias);
  ScaleOutputChannels(layout, a.scale, weights);
  *bias = std::move(a.shift);
  return true;
}

}  // namespace qairt
