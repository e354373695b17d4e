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
                    const char* what) {
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
        QAIRT_RETURN_IF_ERROR(sink(p.bytes, p.end));
        continue;
      }
      try {
        p.make->CopyRangeTo(Ensure(&slot, p.end - p.begin), p.begin, p.end);
      } catch (const std::bad_alloc&) {
        return out_of_memory();
      }
      QAIRT_RETURN_IF_ERROR(sink(slot.bytes, p.end - p.begin));
    }
    return Status::Ok();
  }

  Slot slots[2];
  std::mutex mu;
  std::condition_variable cv;
  bool cancel = false, failed = false;
  std::thread maker([&] {
    for (size_t j = 0; j < made.size(); ++j) {
      Slot& s = slots[j % 2];
      {
        std::unique_lock<std::mutex> lock(mu);
        cv.wait(lock, [&] { return cancel || !s.full; });
        if (cancel) return;
      }
      const StreamPiece& p = pieces[made[j]];
      bool ok = true;
      try {
        p.make->CopyRangeTo(Ensure(&s, p.end - p.begin), p.begin, p.end);
      } catch (...) {
        ok = false;
      }
      {
        const std::lock_guard<std::mutex> lock(mu);
        (ok ? s.full : failed) = true;
      }
      cv.notify_all();
      if (!ok) return;
    }
  });
  Status status = Status::Ok();
  size_t j = 0;
  for (const StreamPiece& p : pieces) {
    if (!p.make) {
      status = sink(p.bytes, p.end);
      if (!status.ok()) break;
      continue;
    }
    Slot& s = slots[j % 2];
    {
      std::unique_lock<std::mutex> lock(mu);
      cv.wait(lock, [&] { return s.full || failed; });
      if (!s.full) {  // the maker failed before this piece
        status = out_of_memory();
        break;
      }
    }
    status = sink(s.bytes, p.end - p.begin);
    if (!status.ok()) break;
    {
      const std::lock_guard<std::mutex> lock(mu);
      s.full = false;
    }
    cv.notify_all();
    ++j;
  }
  {
    const std::lock_guard<std::mutex> lock(mu);
    cancel = true;
  }
  cv.notify_all();
  maker.join();
  return status;
}

}  // namespace qairt
