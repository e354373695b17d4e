// The one resolution of ONNX auto_pad (ir/ops/shape_helpers.h) that shape
// inference, the executor and the ONNX importer share: the spec's pads,
// its odd-unit rule, and overflow reported rather than computed.
#include <catch2/catch.hpp>

#include <cstdint>
#include <limits>
#include <vector>

#include "ir/graph.h"
#include "ir/ops/shape_helpers.h"

namespace qairt {
namespace {

using ops::AutoPad;
using ops::DimPads;

bool Eq(const std::optional<DimPads>& p, int64_t begin, int64_t end) {
  return p && p->begin == begin && p->end == end;
}

TEST_CASE("auto_pad names parse to their modes and nothing else does", "[ir][auto_pad]") {
  CHECK(ops::ParseAutoPad("NOTSET") == AutoPad::kNotSet);
  CHECK(ops::ParseAutoPad("SAME_UPPER") == AutoPad::kSameUpper);
  CHECK(ops::ParseAutoPad("SAME_LOWER") == AutoPad::kSameLower);
  CHECK(ops::ParseAutoPad("VALID") == AutoPad::kValid);
  CHECK_FALSE(ops::ParseAutoPad("same_upper"));
  CHECK_FALSE(ops::ParseAutoPad(""));
}

TEST_CASE("convolution and pooling pads for every auto_pad mode", "[ir][auto_pad]") {
  const DimPads given{3, 4};
  CHECK(Eq(ops::WindowPads(AutoPad::kNotSet, 7, 4, 2, 1, given), 3, 4));
  CHECK(Eq(ops::WindowPads(AutoPad::kValid, 7, 4, 2, 1, given), 0, 0));
  // in 7, kernel 4, stride 2: out 4, total (4 - 1) * 2 + 4 - 7 = 3.
  CHECK(ops::SameOutputExtent(7, 2) == 4);
  CHECK(Eq(ops::WindowPads(AutoPad::kSameUpper, 7, 4, 2, 1, given), 1, 2));
  CHECK(Eq(ops::WindowPads(AutoPad::kSameLower, 7, 4, 2, 1, given), 2, 1));
  // Dilation widens the window: kernel 2, dilation 3 spans 4.
  CHECK(Eq(ops::WindowPads(AutoPad::kSameUpper, 6, 2, 1, 3, {}), 1, 2));
  // A window that fits without padding gets none (never negative).
  CHECK(Eq(ops::WindowPads(AutoPad::kSameUpper, 9, 1, 4, 1, {}), 0, 0));
  CHECK(Eq(ops::WindowPads(AutoPad::kSameLower, 0, 3, 1, 1, {}), 1, 1));
  // Out of range and overflowing arguments: no pads.
  CHECK_FALSE(ops::WindowPads(AutoPad::kSameUpper, 7, 0, 1, 1, {}));
  CHECK_FALSE(ops::WindowPads(AutoPad::kSameUpper, 7, 3, 0, 1, {}));
  CHECK_FALSE(ops::WindowPads(AutoPad::kSameUpper, 7, 3, 1, std::numeric_limits<int64_t>::max(), {}));
}

TEST_CASE("transposed convolution pads split as the ONNX spec writes them", "[ir][auto_pad]") {
  // in 3, kernel 3, stride 2 to out 6: total 2 * 2 + 3 - 6 = 1.
  CHECK(Eq(ops::TransposeWindowPads(AutoPad::kSameUpper, false, 3, 6, 3, 2, 1, 0, {}), 0, 1));
  CHECK(Eq(ops::TransposeWindowPads(AutoPad::kSameLower, false, 3, 6, 3, 2, 1, 0, {}), 1, 0));
  // output_shape: SAME_UPPER smaller half first, any other mode larger first.
  CHECK(Eq(ops::TransposeWindowPads(AutoPad::kSameUpper, true, 3, 6, 3, 2, 1, 0, {5, 5}), 0, 1));
  CHECK(Eq(ops::TransposeWindowPads(AutoPad::kNotSet, true, 3, 6, 3, 2, 1, 0, {5, 5}), 1, 0));
  CHECK(Eq(ops::TransposeWindowPads(AutoPad::kValid, true, 3, 6, 3, 2, 1, 0, {5, 5}), 1, 0));
  // output_padding counts; an output larger than the unpadded one gives a
  // negative total, halved toward negative infinity.
  CHECK(Eq(ops::TransposeWindowPads(AutoPad::kNotSet, true, 3, 6, 3, 2, 1, 1, {}), 1, 1));
  CHECK(Eq(ops::TransposeWindowPads(AutoPad::kNotSet, true, 3, 9, 3, 2, 1, 0, {}), -1, -1));
  CHECK(Eq(ops::TransposeWindowPads(AutoPad::kSameUpper, true, 3, 10, 3, 2, 1, 0, {}), -2, -1));
  CHECK(Eq(ops::TransposeWindowPads(AutoPad::kNotSet, true, 3, 10, 3, 2, 1, 0, {}), -1, -2));
  // Without output_shape: NOTSET the given pads, VALID none.
  CHECK(Eq(ops::TransposeWindowPads(AutoPad::kNotSet, false, 3, 7, 3, 2, 1, 0, {2, 1}), 2, 1));
  CHECK(Eq(ops::TransposeWindowPads(AutoPad::kValid, false, 3, 7, 3, 2, 1, 0, {2, 1}), 0, 0));
  CHECK_FALSE(ops::TransposeWindowPads(AutoPad::kSameUpper, false, 3, 6, 3, 2, std::numeric_limits<int64_t>::max(),
                                       0, {}));
}

TEST_CASE("a SAME window whose padding overflows does not validate", "[ir][auto_pad]") {
  Graph g("overflow");
  auto x = g.AddInput("x", DType::kFloat32, Shape{1, 1, 8, 8}).value();
  const std::vector<float> w(9, 1.0f);
  auto wt = g.AddConstant("w", DType::kFloat32, Shape{1, 1, 3, 3}, StaticData::Copy(w.data(), w.size() * 4)).value();
  const int64_t huge = std::numeric_limits<int64_t>::max() / 2 + 1;
  auto op = g.AddOp("Conv2d", "conv", {x, wt}, {"y"},
                    {{"auto_pad", std::string("SAME_UPPER")}, {"dilations", std::vector<int64_t>{huge, 1}}});
  REQUIRE(op.ok());
  REQUIRE(g.MarkOutput(g.op(op.value()).outputs[0]).ok());
  CHECK_FALSE(g.Validate().empty());
}

}  // namespace
}  // namespace qairt
