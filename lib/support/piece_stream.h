// Writes a file's bytes in order from pieces, some of which are made on the
// way (StaticData not made yet: deferred quantization, transposed views).
// Two helper threads make the next such pieces while the sink writes the one
// before, each into one of five buffers reused from piece to piece: the
// write (a copy into the page cache, much of a big convert's time) overlaps
// the quantization, and the anonymous memory is five pieces, not the model.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "support/static_data.h"
#include "support/status.h"

namespace qairt {

struct StreamPiece {
  const uint8_t* bytes = nullptr;  // bytes ready to write, or
  const StaticData* make = nullptr;  // bytes [begin, end) of this data, made on the way, or
  size_t begin = 0;
  size_t end = 0;  // with `bytes`: the size
  const StaticData* file = nullptr;  // bytes [begin, end) of this window of a mapped file, as they are
};

// How a sink copies bytes [begin, end) of a window of a mapped file
// (StaticData::file_path) without reading them through the mapping: a
// file-to-file copy in the kernel (copy_file_range) moves an LLM's 262 MB
// float embedding 3x faster than write() from the mapping here.
using FileSink = std::function<Status(const StaticData& data, size_t begin, size_t end)>;

// Appends the pieces that write all of `data` (its unmade bytes in pieces of
// at most ~max_piece bytes where it can be made in pieces).
void AddStaticDataPieces(const StaticData& data, std::vector<StreamPiece>* out, size_t max_piece = size_t{4} << 20);

// Hands every piece's bytes to sink(bytes, size), in order (file pieces to
// file_sink when there is one). The first error of a sink is returned (no
// piece after it is made); out of memory while making a piece is an error
// naming `what`.
Status StreamPieces(const std::vector<StreamPiece>& pieces, const std::function<Status(const void*, size_t)>& sink,
                    const char* what, const FileSink& file_sink = nullptr);

}  // namespace qairt
