#include "support/piece_stream.h"

#include <fmt/format.h>

#include <algorithm>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <new>
#include <thread>

namespace qairt {

void AddStaticDataPieces(const StaticData& data, std::vector<StreamPiece>* out, size_t max_piece) {
  const size_t size = data.size();
  if (size == 0) return;
  if (!data.lazy() && !data.file_path().empty()) {
    out->push_back({nullptr, nullptr, 0, size, &data});
    return;
  }
  if (!data.lazy() || data.materialized()) {
    out->push_back({data.data(), nullptr, 0, size});
    return;
  }
  const size_t unit = data.piece_unit();
  if (unit == 0) {
    out->push_back({nullptr, &data, 0, size});  // made whole
    return;
  }
  const size_t step = std::max<size_t>(unit, max_piece / unit * unit);
  for (size_t b = 0; b < size; b += step) out->push_back({nullptr, &data, b, std::min(size, b + step)});
}

namespace {

// One buffer the maker fills and the writer drains.
struct Slot {
  std::shared_ptr<const StaticData> buffer;
  uint8_t* bytes = nullptr;
  size_t capacity = 0;
  bool full = false;
};

uint8_t* Ensure(Slot* s, size_t n) {
  if (s->capacity < n) {
    s->buffer.reset();  // the old buffer goes before the larger one is made
    s->buffer = StaticData::Uninitialized(n, &s->bytes);
    s->capacity = n;
  }
  return s->bytes;
}

}  // namespace

Status StreamPieces(const std::vector<StreamPiece>& pieces, const std::function<Status(const void*, size_t)>& sink,
                    const char* what, const FileSink& file_sink) {
  // A piece that is not made on the way.
  auto pass = [&](const StreamPiece& p) {
    if (!p.file) return sink(p.bytes, p.end);
    if (file_sink) return file_sink(*p.file, p.begin, p.end);
    return sink(p.file->data() + p.begin, p.end - p.begin);
  };
  std::vector<size_t> made;  // indices of the pieces to make, in order
  for (size_t i = 0; i < pieces.size(); ++i)
    if (pieces[i].make) made.push_back(i);
  auto out_of_memory = [&] {
    return Status(StatusCode::kOutOfMemory, fmt::format("{}: out of memory making the bytes to write", what));
  };
  if (made.size() < 2 || std::thread::hardware_concurrency() < 2) {
    Slot slot;
    for (const StreamPiece& p : pieces) {
      if (!p.make) {
        QAIRT_RETURN_IF_ERROR(pass(p));
        continue;
      }
      try {
        p.make->CopyRangeTo(Ensure(&slot, p.end - p.begin), p.begin, p.end);
      } catch (...) {  // as on the helper threads: nothing escapes the writer
        return out_of_memory();
      }
      QAIRT_RETURN_IF_ERROR(sink(slot.bytes, p.end - p.begin));
    }
    return Status::Ok();
  }

  // Each maker takes the next piece nobody has taken (pieces differ in
  // size: an LLM's key projection is an eighth of its MLP's, and makers
  // taking turns waited on each other a quarter of the time). Piece j goes
  // to slot j % slots, which holds it until it is written; a slot takes
  // piece j only after piece j - slots left it, so the writer finds every
  // piece in order. No deadlock: the lowest unwritten piece was taken, and
  // its slot's previous piece, lower still, was written.
  const unsigned makers = std::min<unsigned>(2, std::thread::hardware_concurrency());
  const size_t nslots = 2 * size_t{makers} + 1;
  std::vector<Slot> slots(nslots);
  std::vector<size_t> expect(nslots);
  for (size_t k = 0; k < nslots; ++k) expect[k] = k;
  std::mutex mu;
  std::condition_variable cv;
  bool cancel = false, failed = false;
  size_t next = 0;  // the next piece to take
  auto make = [&] {
    for (;;) {
      size_t j = 0;
      {
        std::unique_lock<std::mutex> lock(mu);
        if (cancel || failed || next >= made.size()) return;
        j = next++;
        cv.wait(lock, [&] { return cancel || (!slots[j % nslots].full && expect[j % nslots] == j); });
        if (cancel) return;
      }
      Slot& sl = slots[j % nslots];
      const StreamPiece& p = pieces[made[j]];
      bool ok = true;
      try {
        p.make->CopyRangeTo(Ensure(&sl, p.end - p.begin), p.begin, p.end);
      } catch (...) {
        ok = false;
      }
      {
        const std::lock_guard<std::mutex> lock(mu);
        (ok ? sl.full : failed) = true;
      }
      cv.notify_all();
      if (!ok) return;
    }
  };
  std::vector<std::thread> threads;
  Status status = Status::Ok();
  try {
    for (unsigned m = 0; m < makers; ++m) threads.emplace_back(make);
  } catch (...) {
    status = Status(StatusCode::kOutOfMemory, fmt::format("{}: cannot start a thread to make its bytes", what));
  }
  size_t j = 0;
  for (const StreamPiece& p : pieces) {
    if (!status.ok()) break;
    if (!p.make) {
      status = pass(p);
      continue;
    }
    Slot& sl = slots[j % nslots];
    {
      std::unique_lock<std::mutex> lock(mu);
      cv.wait(lock, [&] { return sl.full || failed || threads.size() < makers; });
      if (!sl.full) {  // a maker failed before this piece
        status = out_of_memory();
        break;
      }
    }
    status = sink(sl.bytes, p.end - p.begin);
    {
      const std::lock_guard<std::mutex> lock(mu);
      sl.full = false;
      expect[j % nslots] = j + nslots;
    }
    cv.notify_all();
    ++j;
  }
  {
    const std::lock_guard<std::mutex> lock(mu);
    cancel = true;
  }
  cv.notify_all();
  for (std::thread& t : threads) t.join();
  return status;
}

}  // namespace qairt
