// TFLite import: a .tflite FlatBuffer (float, fp16-weight or int8/int16
// quantized) -> IR graph with QNN-style ops and encodings.
//
// Pipeline: size and identifier -> flatbuffers::Verifier with explicit limits
// (on the FlatBuffer part only for files over 2 GiB) -> a semantic pass over
// every field before any use (VerifyTfliteModel: indices, -1 only in optional
// slots, dims and overflow-checked element counts, data sizes, external
// buffer windows, quantization arrays, subgraph references) -> lowering of
// subgraph 0 op by op (NHWC activations, convolution-like ops in NCHW between
// Transpose ops that are only emitted where a consumer needs the other
// layout; see docs/ARCHITECTURE.md "TFLite import").
#pragma once

#include <cstdint>
#include <string>

#include "ir/graph.h"
#include "ir/import.h"  // the options and report every importer shares
#include "support/status.h"

namespace qairt {

// True when bytes 4..7 are the TFLite file identifier "TFL3".
bool LooksLikeTflite(const void* data, size_t size);

// Imports the model at `path` (memory-mapped; constant data is copied into
// the graph). `options.input_dims` resizes inputs (by tensor name), as
// TFLite's ResizeInputTensor does: the dims a shape_signature marks -1 are
// the ones meant to change; the ops' output shapes then follow the lowered
// graph. `define_symbols` are not used (TFLite names no dims). The report (if
// given) is filled either way: its
// `producer` is "tflite" plus the model description, `ir_version` the schema
// version, `source_ops` counts TFLite builtin op names.
Result<Graph> ImportTfliteFile(const std::string& path, const ImportOptions& options, ImportReport* report);
Result<Graph> ImportTfliteBytes(const void* data, size_t size, const ImportOptions& options,
                                ImportReport* report);

namespace tflite_import {
// The structural and semantic checks alone (what the importer runs first).
// `file_size` bounds external buffers (Buffer.offset/size); it is `size` for
// an in-memory model. Returns the first problems found, naming the field
// path (e.g. "subgraphs[0].operators[3].inputs[1]").
Status VerifyTfliteModel(const uint8_t* data, size_t size, uint64_t file_size, const std::string& what);
}  // namespace tflite_import

}  // namespace qairt
