#include "ir/shape.h"

#include <fmt/format.h>

namespace qairt {

Shape Shape::FromExtents(const std::vector<int64_t>& extents) {
  std::vector<Dim> dims;
  dims.reserve(extents.size());
  for (int64_t e : extents) dims.emplace_back(e < 0 ? -1 : e);
  return Shape(std::move(dims));
}

bool Shape::fully_known() const {
  if (!known_) return false;
  for (const Dim& d : dims_)
    if (!d.known()) return false;
  return true;
}

std::optional<uint64_t> Shape::element_count() const {
  if (!fully_known()) return std::nullopt;
  uint64_t n = 1;
  for (const Dim& d : dims_) {
    const auto v = static_cast<uint64_t>(d.value);
    if (v != 0 && n > UINT64_MAX / v) return std::nullopt;
    n *= v;
  }
  return n;
}

std::vector<int64_t> Shape::extents() const {
  std::vector<int64_t> out;
  out.reserve(dims_.size());
  for (const Dim& d : dims_) out.push_back(d.value);
  return out;
}

std::string Shape::ToString() const {
  if (!known_) return "[?]";
  std::string s = "[";
  for (size_t i = 0; i < dims_.size(); ++i) {
    if (i) s += ", ";
    if (dims_[i].known())
      s += fmt::format("{}", dims_[i].value);
    else
      s += dims_[i].symbol.empty() ? "?" : dims_[i].symbol;
  }
  return s + "]";
}

std::optional<size_t> NormalizeAxis(int64_t axis, size_t rank) {
  const auto r = static_cast<int64_t>(rank);
  if (axis < -r || axis >= r) return std::nullopt;
  return static_cast<size_t>(axis < 0 ? axis + r : axis);
}

bool ShapesConflict(const Shape& a, const Shape& b) {
  if (!a.rank_known() || !b.rank_known()) return false;
  if (a.rank() != b.rank()) return true;
  for (size_t i = 0; i < a.rank(); ++i)
    if (a[i].known() && b[i].known() && a[i].value != b[i].value) return true;
  return false;
}

}  // namespace qairt
