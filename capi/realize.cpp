// Target processing as a function of the graph, for the passes that score
// or measure a configuration as the target will run it.
#include <memory>

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

}  // namespace qairt::capi
