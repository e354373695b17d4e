// Target processing as a function of the graph, for the passes that score
// or measure a configuration as the target will run it.
#include <memory>

#include "calib/calibrate.h"
#include "capi/capi_internal.h"
#include "passes/pass_manager.h"
#include "target/target_descriptor.h"

namespace qairt::capi {

std::function<Result<Graph>(const Graph&)> RealizeFor(std::shared_ptr<const target::Target> t) {
  return [t](const Graph& g) -> Result<Graph> {
    pass::Options po;
    po.target = t;
    Graph work = g;
    pass::ProcessResult r;
    if (auto st = pass::Process(&work, std::move(po), &r); !st.ok()) return st;
    if (!r.errors.empty()) return InvalidArgument("{}", r.errors.front());
    return work;
  };
}

std::vector<calib::FixedOutputRange> FixedOutputRangesOf(const target::Target& t) {
  std::vector<calib::FixedOutputRange> out;
  for (const target::OpKernels& op : t.ops) {
    const target::Slot* fixed = nullptr;
    bool wide = false;
    for (const target::Kernel& k : op.kernels) {
      if (k.outputs.empty()) continue;
      const target::Slot& s = k.outputs[0];
      const bool narrow = s.Allows(DType::kUFixed8) || s.Allows(DType::kSFixed8);
      if (narrow && s.has_range && !fixed) fixed = &s;
      wide = wide || s.Allows(DType::kUFixed16) || s.Allows(DType::kSFixed16);
    }
    if (fixed && wide) out.push_back({op.op, fixed->range_min, fixed->range_max});
  }
  return out;
}

}  // namespace qairt::capi
