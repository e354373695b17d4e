// Large 2.0.0 files, window by window. The whole-document parse builds
// simdjson's structural index over the entire file (~0.6 bytes per byte); in a
// fresh process faulting in those pages cost more than the parse itself.
// Here the file's list is found by a scan (list_layout.h), the rest of the
// document (the skeleton: the file with the list emptied) is read as one
// small document, and the list's entries in windows of a few hundred KiB,
// each copied behind a '[' and parsed as an array with a parser whose
// buffers stay in cache. Windows go to worker threads; each entry is written
// to its place in the list (or, with a WindowSink, the window's entries are
// handed to it: ReadAndApplyEncodingsFile applies them there and then), and
// each window's diagnostics are kept apart and appended in file order, so
// the result does not depend on the thread count.
//
// Any error anywhere makes the caller read the file whole instead: bad files
// get exactly the whole-document reader's diagnostics.
#include <algorithm>
#include <atomic>
#include <cstring>
#include <thread>
#include <utility>
#include <vector>

#include "encodings/reader_internal.h"
#include "support/shares.h"
#include "support/huge_pages.h"

namespace qairt::encodings::reader_internal {
namespace {

struct WindowsFailed {};  // internal: a window could not be read this way

unsigned WorkerCount(const ReadOptions& opt, size_t windows) {
  return static_cast<unsigned>(std::min<size_t>(ThreadsFor(opt.threads, 4), windows));
}

}  // namespace

std::optional<Result<File>> Reader::RunSkeleton(const ListLayout& layout, WindowSink* sink) {
  file_.path = name_;
  layout_ = &layout;
  sink_ = sink;
  const char* src = src_->data();
  const size_t size = src_->size();
  // The file without the list's inside: "...[" + "]...".
  const size_t head = layout.open + 1, tail = size - layout.close;
  std::vector<char> skeleton(head + tail + simdjson::SIMDJSON_PADDING, '\0');
  std::memcpy(skeleton.data(), src, head);
  std::memcpy(skeleton.data() + head, src + layout.close, tail);
  view_ = View{skeleton.data(), head + tail, 0, head, layout.close - head};
  od::parser parser;
  if (parser.allocate(std::max<size_t>(head + tail, 4096), ParserDepth())) return std::nullopt;
  if (parser.iterate(skeleton.data(), head + tail, skeleton.size()).get(doc_)) return std::nullopt;
  try {
    ReadDocument();
  } catch (const ParseAbort&) {
    return std::nullopt;
  } catch (const WindowsFailed&) {
    return std::nullopt;
  }
  if (!windows_read_ || errors_) return std::nullopt;
  RemoveDuplicates();
  if (errors_) return std::nullopt;
  file_.source = src_;
  return Result<File>(std::move(file_));
}

void Reader::ReadWindows() {
  if (windows_read_) throw WindowsFailed{};  // the cut list seen twice: cannot be
  windows_read_ = true;
  const std::vector<ListWindow>& windows = layout_->windows;
  file_.windows = windows.size();
  const unsigned workers = WorkerCount(opt_, windows.size());
  Entry* slots = nullptr;  // the list's entries in file_.entries, without a sink
  if (sink_) {
    sink_->Begin(windows.size(), src_);
  } else {
    const size_t base = file_.entries.size();
    file_.entries.reserve(base + layout_->entries);
    // Written once, front to back: 2 MiB pages (a 100 MB file's entries are
    // ~70 MB, otherwise ~18k page faults), faulted in on every worker at once
    // before the (serial) construction of the slots.
    AdviseHugePages(file_.entries.data(), file_.entries.capacity() * sizeof(Entry));
    FaultInPages(file_.entries.data() + base, layout_->entries * sizeof(Entry), workers);
    file_.entries.resize(base + layout_->entries);
    slots = file_.entries.data() + base;
  }

  std::vector<Diags> window_diags(windows.size());
  std::atomic<size_t> next{0};
  std::atomic<bool> failed{false};
  auto work = [&] {
    try {
      Reader reader(src_, name_, opt_, nullptr);
      od::parser parser;
      std::vector<char> buf;
      std::vector<Entry> local;  // with a sink: a window's entries (memory reused window after window)
      for (;;) {
        const size_t k = next.fetch_add(1, std::memory_order_relaxed);
        if (k >= windows.size() || failed.load(std::memory_order_relaxed)) return;
        const ListWindow& w = windows[k];
        if (sink_) {
          local.clear();
          local.resize(w.entries);
          if (!reader.ReadWindow(w, local.data(), &window_diags[k], &parser, &buf) || !sink_->Take(k, local))
            failed = true;
        } else if (!reader.ReadWindow(w, slots + w.first_entry, &window_diags[k], &parser, &buf)) {
          failed = true;
        }
      }
    } catch (...) {  // out of memory in a worker: the whole-document read reports it on the caller's thread
      failed = true;
    }
  };
  std::vector<std::thread> threads;
  try {
    for (unsigned i = 1; i < workers; ++i) threads.emplace_back(work);
  } catch (...) {  // no thread to be had: the calling thread reads what is left
  }
  work();
  for (std::thread& t : threads) t.join();
  if (failed) throw WindowsFailed{};
  for (Diags& d : window_diags)
    for (Diag& x : d) diags_->push_back(std::move(x));
}

bool Reader::ReadWindow(const ListWindow& w, Entry* slots, Diags* diags, od::parser* parser,
                        std::vector<char>* buf) {
  diags_ = diags;
  const size_t inner = w.end - w.begin, len = inner + 2;
  if (buf->size() < len + simdjson::SIMDJSON_PADDING) buf->resize(len + simdjson::SIMDJSON_PADDING);
  char* b = buf->data();
  b[0] = '[';
  std::memcpy(b + 1, src_->data() + w.begin, inner);
  b[len - 1] = ']';
  std::memset(b + len, 0, simdjson::SIMDJSON_PADDING);  // not a digit: the number scan may look past the end
  view_ = View{b, len, w.begin - 1};
  if (parser->capacity() < len && parser->allocate(std::max<size_t>(len, 4096), ParserDepth())) return false;
  if (parser->iterate(b, len, buf->size()).get(doc_)) return false;
  slots_ = slots;
  slots_count_ = w.entries;
  slots_filled_ = 0;
  try {
    ForEachElement(doc_, [&](od::value& entry) { ReadV2Entry(entry); });
    const char* rest = nullptr;
    if (!doc_.current_location().get(rest) && rest) return false;  // the window was not one array
  } catch (const ParseAbort&) {
    return false;
  }
  return errors_ == 0 && slots_filled_ == slots_count_;
}

}  // namespace qairt::encodings::reader_internal
