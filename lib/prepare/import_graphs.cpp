// The IR of the original model, imported once per specialization with its
// symbols bound (the importer checks that every shape is static).
#include "onnx/onnx_import.h"
#include "prepare/prepare_internal.h"

namespace qairt::prepare::internal {

void Preparer::ImportGraphs() {
  for (size_t i = 0; i < spec_symbols_.size(); ++i) {
    ImportOptions io;
    io.define_symbols = spec_symbols_[i];
    io.input_dims = o_.input_dims;
    ImportReport rep;
    auto g = ImportOnnxFile(o_.model_path, io, &rep);
    if (!g.ok()) {
      Add(Severity::kError, "import", BaseName(o_.model_path), "{}{}", spec_symbols_.size() > 1 ? fmt::format("specializations[{}]: ", i) : "",
          g.status().message());
      return;
    }
    for (const auto& d : rep.dynamic_dims)
      Add(Severity::kError, "dynamic-shape", d, "{} is still symbolic after binding the symbols: the compiler needs static "
          "shapes", d);
    graphs_.push_back(std::move(g).value());
  }
}

}  // namespace qairt::prepare::internal
