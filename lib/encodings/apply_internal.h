// The stages of applying an encodings file that ApplyEncodings (apply.cpp)
// and ReadAndApplyEncodingsFile (read_apply.cpp) share. Not an API.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string_view>
#include <vector>

#include "encodings/encodings.h"

namespace qairt::encodings::apply_internal {

// ResolveEntry with the encoding to start from given: the entry's own, moved
// out by a caller that owns the entry, or a copy.
std::optional<Encoding> Resolve(const File& file, const Entry& entry, Encoding start, const Graph& graph,
                                TensorId tensor, Diags* diags);

// Entries naming no tensor of the graph, in file order: handed to
// options.unmatched_out (take(i) gives unmatched[i], moved or copied) or
// reported, with a "did you mean" suggestion, as errors (warnings with
// allow_unmatched). Counts them in stats->unmatched.
void HandleUnmatched(const File& file, const std::vector<const Entry*>& unmatched,
                     const std::function<Entry(size_t)>& take, const Graph& graph, const ApplyOptions& options,
                     Diags* diags, ApplyStats* stats);

// An encoding from the model's Q-DQ nodes that an entry replaces.
struct Replaced {
  std::string_view tensor;
  uint64_t entry_offset;
  const Encoding* previous;
};
// Notes on the replaced encodings (the first 20, then a count), in the
// order given; counts them in stats->replaced_model_encodings.
void NoteReplaced(const File& file, const std::vector<Replaced>& replaced, Diags* diags, ApplyStats* stats);

// The note on float tensors left without an encoding (options.report_missing)
// and the call's result: an error status summarizing the errors added to
// `diags` since `errors_before`, else `stats`.
Result<ApplyStats> Finish(const File& file, const Graph& graph, const ApplyOptions& options, size_t errors_before,
                          ApplyStats stats, Diags* diags);

}  // namespace qairt::encodings::apply_internal
