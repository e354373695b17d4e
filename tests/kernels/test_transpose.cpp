// Transpose2D against the element-by-element definition: every element size
// the IR stores, shapes around the tile size, with and without threads.
#include <catch2/catch.hpp>

#include <cstring>
#include <vector>

#include "kernels/ops.h"
#include "kernels/threadpool.h"

using namespace qairt::kernels;

TEST_CASE("Transpose2D moves every element to its transposed place", "[kernels][transpose]") {
  ThreadPool pool(3);
  for (size_t elem : {1u, 2u, 3u, 4u, 8u}) {
    for (auto [rows, cols] : std::vector<std::pair<int64_t, int64_t>>{
             {1, 1}, {1, 70}, {70, 1}, {31, 33}, {32, 32}, {64, 96}, {97, 65}, {130, 7}}) {
      INFO("elem " << elem << " rows " << rows << " cols " << cols);
      const size_t n = static_cast<size_t>(rows * cols) * elem;
      std::vector<uint8_t> in(n);
      for (size_t i = 0; i < n; ++i) in[i] = static_cast<uint8_t>((i * 131 + i / 7) & 0xFF);
      std::vector<uint8_t> want(n);
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t c = 0; c < cols; ++c)
          std::memcpy(&want[static_cast<size_t>(c * rows + r) * elem], &in[static_cast<size_t>(r * cols + c) * elem],
                      elem);
      for (ThreadPool* p : {static_cast<ThreadPool*>(nullptr), &pool}) {
        std::vector<uint8_t> got(n, 0xAB);
        ExecOptions o;
        o.pool = p;
        Transpose2D(elem, rows, cols, in.data(), got.data(), o);
        CHECK(got == want);
      }
    }
  }
  // 4-byte elements at an address that is not 4-aligned (external data may
  // sit at any offset): whole tiles and edges alike.
  {
    const int64_t rows = 70, cols = 64;
    std::vector<uint8_t> buf(static_cast<size_t>(rows * cols) * 4 + 1);
    for (size_t i = 0; i < buf.size(); ++i) buf[i] = static_cast<uint8_t>((i * 29 + i / 3) & 0xFF);
    const uint8_t* in = buf.data() + 1;
    std::vector<uint8_t> want(static_cast<size_t>(rows * cols) * 4), got(want.size(), 0);
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < cols; ++c)
        std::memcpy(&want[static_cast<size_t>(c * rows + r) * 4], in + static_cast<size_t>(r * cols + c) * 4, 4);
    Transpose2D(4, rows, cols, in, got.data());
    CHECK(got == want);
  }
  // Empty shapes write nothing.
  uint8_t untouched = 7;
  Transpose2D(4, 0, 5, nullptr, &untouched);
  CHECK(untouched == 7);
}

TEST_CASE("Transpose2DStrided transposes a window into rows of another width", "[kernels][transpose]") {
  // A [rows, cols] window at (r0, c0) of a [R, C] matrix, written at column
  // 3 of an output whose rows are out_ld elements apart; the rest untouched.
  const int64_t R = 70, C = 90, r0 = 5, c0 = 17, rows = 61, cols = 41, out_ld = rows + 6;
  for (size_t elem : {1u, 4u, 3u}) {
    INFO("elem " << elem);
    std::vector<uint8_t> in(static_cast<size_t>(R * C) * elem);
    for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<uint8_t>((i * 37 + i / 5) & 0xFF);
    std::vector<uint8_t> want(static_cast<size_t>(cols * out_ld) * elem, 0xCD), got = want;
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < cols; ++c)
        std::memcpy(&want[static_cast<size_t>(c * out_ld + 3 + r) * elem],
                    &in[static_cast<size_t>((r0 + r) * C + c0 + c) * elem], elem);
    Transpose2DStrided(elem, rows, cols, &in[static_cast<size_t>(r0 * C + c0) * elem], C, &got[3 * elem], out_ld);
    CHECK(got == want);
  }
}
