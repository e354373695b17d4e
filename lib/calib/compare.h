// Accuracy of a quantized graph against its float original:
// both run in the executor on the same samples (the float one without
// quantization simulation, the quantized one with it); per output cosine
// similarity, SQNR (dB) and max abs error over all samples; per layer, the
// SQNR of every tensor present in both graphs by name, worst first, and the
// ops that lose the most of it.
#pragma once

#include <string>
#include <vector>

#include "calib/calibrate.h"
#include "ir/graph.h"

namespace qairt::calib {

struct Accuracy {
  std::string name;
  double cosine = 1;      // over all samples, flattened
  double sqnr_db = 0;     // 10 log10(sum ref^2 / sum (ref - q)^2); +inf when identical
  double max_abs = 0;
  size_t argmax_agree = 0;  // samples whose argmax over the whole output matches (outputs)
  // Outputs: the argmax along the last axis at every position of the leading
  // axes, over all samples (a sequence's steps, an LLM's tokens). Where an
  // output has several positions per sample this is the agreement to read: a
  // whole-output argmax of a [1, T, C] output compares one of T x C values,
  // where saturated probabilities tie. 0 when the output's shape is unknown.
  size_t positions = 0, positions_agree = 0;
  size_t samples = 0;  // the samples measured (positions > samples: several per sample)
  bool per_position() const { return positions > samples; }
};

// Where accuracy is lost: an op whose output is much less accurate than its
// least accurate measured input (a Log of values that quantized to 0, a
// clipped range), not a tensor that merely inherits its producers' error.
struct AccuracyLoss {
  std::string tensor;          // the op's output
  std::string op_name, op_type;
  std::string input;           // its least accurate measured input
  double input_sqnr_db = 0;
  double sqnr_db = 0;
  double loss_db() const;      // input_sqnr_db - sqnr_db, infinities capped at 300 dB
};

struct CompareReport {
  size_t samples = 0;
  std::vector<Accuracy> outputs;      // graph-output order of the float graph
  std::vector<Accuracy> layers;       // per_layer: worst SQNR first
  // per_layer: largest loss first, those of 1 dB or more (ops with a measured
  // input; ops that only move values are left out).
  std::vector<AccuracyLoss> losses;
};

// `quantized` may have injected converts: outputs are matched by name.
// Progress (sample, samples, "compare") after each sample when `progress` is set.
Status Compare(const Graph& float_graph, const Graph& quantized, const SampleSource& samples, bool per_layer,
               CompareReport* report, const std::function<void(size_t, size_t, const char*)>& progress = {});

std::string CompareText(const CompareReport& r, size_t max_layers = 20);
std::string CompareJson(const CompareReport& r);
// "accuracy on 32 samples: softmax_0.tmp_0 SQNR 31.2 dB, cosine 0.99962, max abs 0.0123, argmax 32/32"
std::string CompareSummaryLine(const CompareReport& r);
// "argmax 24/24" (per sample) or "argmax 1412/1440 positions (98.1%, last axis)".
std::string ArgmaxText(const Accuracy& a, size_t samples);

}  // namespace qairt::calib
