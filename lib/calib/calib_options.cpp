// Calibration option names (CLI and C spellings) and the input-list sample
// source: what calibrate.h declares besides the calibration itself.
#include "calib/calibrate.h"

namespace qairt::calib {

std::string_view MethodName(Method m) {
  switch (m) {
    case Method::kMinMax: return "min-max";
    case Method::kSqnr: return "sqnr";
    case Method::kMse: return "mse";
    case Method::kPercentile: return "percentile";
    case Method::kSeqMse: return "seqmse";
  }
  return "?";
}

bool ParseMethod(std::string_view s, Method* out) {
  if (s == "min-max" || s == "minmax" || s == "tf") *out = Method::kMinMax;
  else if (s == "sqnr" || s == "enhanced" || s == "tf_enhanced") *out = Method::kSqnr;
  else if (s == "mse") *out = Method::kMse;
  else if (s == "percentile") *out = Method::kPercentile;
  else if (s == "seqmse") *out = Method::kSeqMse;
  else return false;
  return true;
}

bool ParseSchema(std::string_view s, Symmetry* out) {
  if (s == "asymmetric" || s == "tf" || s == "enhanced") *out = Symmetry::kAsymmetric;
  else if (s == "symmetric") *out = Symmetry::kSymmetric;
  else if (s == "unsignedsymmetric" || s == "unsigned_symmetric") *out = Symmetry::kUnsignedSymmetric;
  else return false;
  return true;
}

SampleSource SampleSource::FromInputList(const InputList& list) {
  SampleSource s;
  s.count = list.samples.size();
  s.load = [&list](size_t i) { return LoadSample(list, i); };
  return s;
}

}  // namespace qairt::calib
