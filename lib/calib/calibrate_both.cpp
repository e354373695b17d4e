// Two calibrations of one graph from one observation of the samples.
#include "calib/calibrate.h"
#include "calib/stats.h"

namespace qairt::calib {

Status CalibrateBoth(Graph* a, const Options& oa, Graph* b, const Options& ob, const SampleSource& samples,
                     Report* report, const std::function<void(size_t, size_t, const char*)>& progress) {
  if (!a || !b || !report) return InvalidArgument("CalibrateBoth: graphs and report must not be NULL");
  // Statistics depend on the graph, the activation method (histograms or
  // not), the bins and the float inputs only; bit widths and weight
  // granularity are applied after. Searching weight methods run the model
  // themselves.
  const bool shared = oa.act_method == ob.act_method && oa.histogram_bins == ob.histogram_bins &&
                      oa.float_inputs == ob.float_inputs && oa.param_method != Method::kSeqMse &&
                      ob.param_method != Method::kSeqMse && !oa.adaptive_rounding && !ob.adaptive_rounding &&
                      !oa.bias_correction && !ob.bias_correction;
  if (!shared) {
    Graph ga = *a;
    QAIRT_RETURN_IF_ERROR(Calibrate(&ga, samples, oa, report, progress));
    QAIRT_RETURN_IF_ERROR(Calibrate(b, samples, ob, report, progress));
    *a = std::move(ga);
    return Status::Ok();
  }
  Stats st;
  QAIRT_RETURN_IF_ERROR(CollectStats(*a, samples, oa, 0, 1, nullptr, &st, progress));
  if (oa.act_method != Method::kMinMax) {
    Stats ranges = std::move(st);
    QAIRT_RETURN_IF_ERROR(CollectStats(*a, samples, oa, 0, 1, &ranges, &st, progress));
  }
  Graph ga = *a, gb = *b;
  QAIRT_RETURN_IF_ERROR(CalibrateFromStats(&ga, st, oa, report, "calibration"));
  Report rb;
  QAIRT_RETURN_IF_ERROR(CalibrateFromStats(&gb, st, ob, &rb, "calibration"));
  *a = std::move(ga);
  *b = std::move(gb);
  return Status::Ok();
}

}  // namespace qairt::calib
