// Where the entries of a 2.0.0 encodings document are, found without parsing
// it: the span of its list (the "encodings" array, or the document when it is
// a bare list) and windows of whole entries, so the reader can parse a large
// file window by window (and on several threads) instead of building
// simdjson's structural index over all of it: that index is ~0.6 bytes per
// byte of file, and in a fresh process its pages cost more than the parse.
//
// The scan only tracks strings and brackets. It needs not be a validator:
// the reader parses every window as a JSON array and the rest of the document
// (with the list emptied) as a document; if all of them are valid and the
// gaps between windows are a comma and whitespace, the document is valid and
// each entry is the text the whole-document parse would have read.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace qairt::encodings {

struct ListWindow {
  size_t begin = 0;        // file offset of the window's first entry ('{')
  size_t end = 0;          // one past its last entry's closing '}'
  size_t first_entry = 0;  // index of its first entry in the list
  size_t entries = 0;
};

struct ListLayout {
  size_t open = 0;   // offset of the list's '['
  size_t close = 0;  // offset of its ']'
  size_t entries = 0;
  std::vector<ListWindow> windows;  // in file order; none for an empty list
};

// Finds the layout of `data` (`size` bytes). Each window holds whole entries
// and at least `window_bytes` of text (the last one may hold less, and with
// `threads` >= 2 a large document is scanned in two halves, whose first
// half's last window may too; an entry larger than that is a window of its
// own). Returns false when the document
// is not shaped as a 2.0.0 list of objects as far as the scan can tell: no
// top-level "encodings" array (or two), an element that is not an object,
// anything but a comma and whitespace between entries, unbalanced brackets,
// an unterminated string. The caller then reads the document whole.
bool FindListLayout(const char* data, size_t size, size_t window_bytes, ListLayout* out, unsigned threads = 1);

}  // namespace qairt::encodings
