// Reading an encodings file and applying it to a graph in one pass
// (ReadAndApplyEncodingsFile): a large 2.0.0 file's entries are applied as
// the reader's workers finish each window, so the file's 200k entries and
// their names are never all in memory at once. In a fresh process (a user's
// convert) those were ~85 MB of new pages, which a virtual machine backs page
// by page: more time than parsing them. What is kept per window is small: its
// diagnostics, the entries naming no tensor, the tensors it set and the
// encodings they held.
//
// The outcome must be exactly ReadEncodingsFile + ApplyEncodings'. Every case
// that would differ from applying entry by entry as the file is read (an
// entry with an error, where nothing may be applied; a name given twice; a
// name the graph lacks when that is an error; entries outside the list) puts
// the graph back as it was and reads and applies the file the usual way:
// these are the files with problems, whose diagnostics matter more than
// their speed.
#include <atomic>
#include <optional>
#include <span>
#include <string_view>
#include <unordered_set>
#include <utility>
#include <vector>

#include "encodings/apply_internal.h"
#include "encodings/encodings.h"
#include "encodings/reader_internal.h"

namespace qairt::encodings {
namespace {

// What applying one window did, kept apart: the result is assembled in file
// order whatever order the workers took the windows in.
struct WindowOutcome {
  struct Previous {
    TensorId tensor;
    uint64_t entry_offset;
    Graph::EncodingExchange::Held held;
  };
  Diags diags;                    // the checks' against the tensors (warnings: an error ends streaming)
  std::vector<Entry> unmatched;   // entries naming no tensor of the graph, in file order
  std::vector<TensorId> stored;   // tensors given an encoding
  std::vector<Previous> previous;  // the encodings those tensors held, where they held one
};

class StreamApplier final : public reader_internal::WindowSink {
 public:
  StreamApplier(Graph* graph, const std::string& path)
      : graph_(graph), exchange_(graph), claimed_(graph->tensor_count()) {
    file_.path = path;
  }

  void Begin(size_t windows, const std::shared_ptr<const SourceText>& source) override {
    outcomes_.resize(windows);
    file_.source = source;
  }

  bool Take(size_t window, std::span<Entry> entries) override {
    WindowOutcome& out = outcomes_[window];
    std::vector<std::string_view> names;
    names.reserve(entries.size());
    for (const Entry& e : entries) names.push_back(e.name);
    const std::vector<TensorId> ids = graph_->FindTensors(names);
    for (size_t i = 0; i < entries.size(); ++i) {
      Entry& e = entries[i];
      const TensorId id = ids[i];
      if (id == kInvalidId) {
        out.unmatched.push_back(std::move(e));
        continue;
      }
      if (claimed_[id].exchange(1, std::memory_order_relaxed)) return false;  // named twice
      std::optional<Encoding> enc = apply_internal::Resolve(file_, e, std::move(e.encoding), *graph_, id, &out.diags);
      if (!enc) return false;  // an error: nothing may be applied
      // Recorded before the exchange (which cannot throw), so Undo finds
      // every tensor changed even when memory runs out here; a tensor is in
      // `stored` only with its place in `previous`, where it needs one.
      out.stored.push_back(id);
      if (graph_->tensor(id).encoding) {
        try {
          out.previous.push_back({id, e.offset, {}});
        } catch (...) {
          out.stored.pop_back();
          throw;
        }
        out.previous.back().held = exchange_.Exchange(id, std::move(*enc));
      } else {
        exchange_.Exchange(id, std::move(*enc));  // held nothing (a shape checked for no encoding is moot)
      }
    }
    return true;
  }

  // Puts every tensor a window set back as it was (on the calling thread,
  // after the workers).
  void Undo() {
    for (WindowOutcome& out : outcomes_)
      for (TensorId id : out.stored) exchange_.Exchange(id, std::nullopt);
    for (WindowOutcome& out : outcomes_)
      for (WindowOutcome::Previous& p : out.previous) exchange_.Restore(p.tensor, std::move(p.held));
    outcomes_.clear();
    exchange_.RestoreVersion();
  }

  // The rest of ApplyEncodings after a streamed read of `file` (what is
  // outside its list), or nullopt when the outcome could differ from it.
  std::optional<Result<ApplyStats>> Finish(const File& file, const ApplyOptions& options, Diags&& read_diags,
                                           Diags* diags) {
    if (!file.entries.empty()) return std::nullopt;  // entries outside the list: duplicates are not checked across
    std::vector<Entry*> unmatched;
    for (WindowOutcome& out : outcomes_)
      for (Entry& e : out.unmatched) unmatched.push_back(&e);
    if (!unmatched.empty() && !options.allow_unmatched && !options.unmatched_out) return std::nullopt;  // errors
    std::unordered_set<std::string_view> names;
    for (const Entry* e : unmatched)
      if (!names.insert(e->name).second) return std::nullopt;  // named twice
    // ReadEncodingsFile's diagnostics, then ApplyEncodings' in its order.
    for (Diag& d : read_diags) diags->push_back(std::move(d));
    const size_t errors_before = CountErrors(*diags);
    ApplyStats stats;
    stats.streamed_windows = outcomes_.size();
    for (WindowOutcome& out : outcomes_) {
      for (Diag& d : out.diags) diags->push_back(std::move(d));
      stats.applied += out.stored.size();
    }
    const std::vector<const Entry*> unmatched_view(unmatched.begin(), unmatched.end());
    apply_internal::HandleUnmatched(
        file, unmatched_view, [&](size_t i) { return std::move(*unmatched[i]); }, *graph_, options, diags, &stats);
    std::vector<apply_internal::Replaced> replaced;
    for (const WindowOutcome& out : outcomes_)
      for (const WindowOutcome::Previous& p : out.previous)
        if (!p.held.encoding->overridden)
          replaced.push_back({graph_->tensor(p.tensor).name, p.entry_offset, &*p.held.encoding});
    apply_internal::NoteReplaced(file, replaced, diags, &stats);
    return apply_internal::Finish(file, *graph_, options, errors_before, stats, diags);
  }

 private:
  Graph* graph_;
  Graph::EncodingExchange exchange_;
  std::vector<std::atomic<uint8_t>> claimed_;  // per tensor: set by a window
  File file_;                                  // path and source: where the checks' messages point
  std::vector<WindowOutcome> outcomes_;
};

}  // namespace

Result<ApplyStats> ReadAndApplyEncodingsFile(const std::string& path, const ReadOptions& read_options, Graph* graph,
                                             const ApplyOptions& apply_options, Diags* diags) {
  Diags local;
  if (!diags) diags = &local;
  if (!graph) return InvalidArgument("ReadAndApplyEncodingsFile: graph is NULL");
  auto apply = [&](Result<File> file) -> Result<ApplyStats> {
    if (!file.ok()) return file.status();
    return ApplyEncodings(std::move(file.value()), graph, apply_options, diags);
  };
  // The file as read whole (streaming declined it after taking some windows),
  // or nothing (streamed: read again below unless it gave the result).
  std::optional<Result<File>> whole;
  {
    StreamApplier applier(graph, path);
    Diags read_diags;
    bool streamed = false;
    std::optional<Result<File>> file;
    std::optional<Result<ApplyStats>> result;
    try {
      file = reader_internal::ReadFile(path, read_options, &read_diags, &applier, &streamed);
      if (streamed) result = applier.Finish(file->value(), apply_options, std::move(read_diags), diags);
    } catch (...) {  // out of memory: no partial apply left behind
      applier.Undo();
      throw;
    }
    if (result) return std::move(*result);
    // Windows taken before one failed, or a streamed file whose outcome could
    // differ: put back, then read and applied the usual way.
    applier.Undo();
    if (!streamed) {
      for (Diag& d : read_diags) diags->push_back(std::move(d));
      whole = std::move(file);
    }
  }
  return apply(whole ? std::move(*whole) : ReadEncodingsFile(path, read_options, diags));
}

}  // namespace qairt::encodings
