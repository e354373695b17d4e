// Choosing calibration techniques by measurement (AIMET's AutoQuant idea,
// written here): which of bias correction, the weight searches (seqmse,
// adaptive rounding), error-based activation ranges and 16-bit fixed-range
// outputs pay differs per model and precision, and sometimes a technique
// costs accuracy (on the PaddleOCR classifier at W8A16 bias correction on
// top of adaptive rounding loses 7 dB). Each candidate is calibrated on one
// half of the samples and scored, as the target will run it, on the other,
// and the other way round; the best worse fold is chosen. The graph itself is
// not calibrated here: the caller calibrates it with the chosen options on
// every sample.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "analyze/sensitivity.h"
#include "calib/calibrate.h"
#include "calib/input_list.h"

namespace qairt::analyze {

struct AutoQuantOptions {
  // The user's calibration (precision, granularity, methods: techniques it
  // turns on stay on in every candidate), realize, threads.
  Options analysis;
  // The target's fixed-range ops (calib::Options::wide_fixed_ranges); empty:
  // no candidate widens them.
  std::vector<calib::FixedOutputRange> fixed_ranges;
  std::function<void(size_t, size_t, const char*)> progress;
};

struct AutoQuantTrial {
  std::string label;  // "min-max", "bias correction", "seqmse + adaptive rounding", ...
  calib::Options options;
  // Held-out SQNR of the worst output, the worse of the folds;
  // analyze::detail::kInfeasible when the target refused it.
  double sqnr_db = 0;
  std::vector<double> fold_db;  // each fold's held-out SQNR
  double seconds = 0;  // calibrating and scoring it
};

struct AutoQuantReport {
  size_t samples = 0;
  size_t held_out = 0;  // samples scored where not calibrated (all of them with two folds)
  size_t folds = 0;     // 2: calibrated on each half, scored on the other; 1: too few samples to split
  std::vector<AutoQuantTrial> trials;  // in the order tried; trials[0] is the user's options as given
  size_t chosen = 0;
  double seconds = 0;
};

// Tries the candidates on `graph` (float, possibly with some encodings) and
// sets *chosen to the best one's options. The graph is not modified.
Status ChooseCalibration(const Graph& graph, const calib::SampleSource& samples, const AutoQuantOptions& options,
                         calib::Options* chosen, AutoQuantReport* report);

std::string AutoQuantText(const AutoQuantReport& r);
std::string AutoQuantJson(const AutoQuantReport& r);

}  // namespace qairt::analyze
