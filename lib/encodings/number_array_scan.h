// A fast path for the bulk of an LLM-scale encodings file: rectangular nested
// arrays of plain JSON numbers (block-quantized `y_scale`, `per_block_int_scale`),
// read straight from the text instead of one simdjson on-demand step per number.
//
// It accepts only what it can read exactly and otherwise declines, leaving the
// caller's simdjson path to read the value and report any problem with its
// precise location. "Exactly" means every value is the double simdjson's
// get_double() gives for the same token: most decimals take Clinger's exact
// path (an integer <= 2^53 times or divided by an exact power of ten <= 1e22),
// the other ones of up to 19 digits std::from_chars; both are correctly rounded,
// as simdjson is for up to 19 digits.
#pragma once

#include <cstdint>
#include <vector>

namespace qairt::encodings {

struct NumberArrayScan {
  std::vector<int64_t> shape;  // one entry per nesting level
  std::vector<double> values;  // row-major
  bool any_float_literal = false;  // some token has '.', 'e' or 'E'
  const char* end = nullptr;       // one past the closing ']'
};

// `text` points at '[' inside a buffer with at least 64 readable bytes after
// the document's end (simdjson's padding, which is not a digit). Returns false
// (declines) for: empty arrays, nesting deeper than `max_rank`, ragged arrays,
// anything that is not a JSON number, numbers of more than 19 digits (leading
// zeros included: simdjson's reading of those is not always the correctly
// rounded one, and this must equal it), numbers out of double range and
// numbers that underflow to zero or a denormal. `out`'s buffers keep their
// capacity between calls.
bool ScanNumberArray(const char* text, int max_rank, NumberArrayScan* out);

}  // namespace qairt::encodings
