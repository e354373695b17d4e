// Tensor shapes with symbolic dims. A dim is either a known extent (>= 0) or
// unknown (-1), optionally carrying a symbol ("batch", "seq_len") that shape
// functions propagate so two dims with the same symbol are known equal.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace qairt {

struct Dim {
  int64_t value = -1;  // -1: unknown
  std::string symbol;  // optional name of an unknown dim

  Dim() = default;
  Dim(int64_t v) : value(v) {}  // NOLINT(implicit): shapes are written as {1, 3, 224, 224}
  static Dim Symbolic(std::string name) {
    Dim d;
    d.symbol = std::move(name);
    return d;
  }
  bool known() const { return value >= 0; }
  bool operator==(const Dim& o) const { return value == o.value && symbol == o.symbol; }
  bool operator!=(const Dim& o) const { return !(*this == o); }
};

class Shape {
 public:
  Shape() = default;  // unknown rank
  Shape(std::initializer_list<Dim> dims) : known_(true), dims_(dims) {}
  explicit Shape(std::vector<Dim> dims) : known_(true), dims_(std::move(dims)) {}
  static Shape FromExtents(const std::vector<int64_t>& extents);
  static Shape Unknown() { return Shape(); }
  // Rank 0. Note: Shape{} is the unknown-rank shape, not a scalar.
  static Shape Scalar() { return Shape(std::vector<Dim>{}); }

  bool rank_known() const { return known_; }
  size_t rank() const { return dims_.size(); }
  const std::vector<Dim>& dims() const { return dims_; }
  std::vector<Dim>& mutable_dims() { return dims_; }
  const Dim& operator[](size_t i) const { return dims_[i]; }
  Dim& operator[](size_t i) { return dims_[i]; }

  // True when the rank and every dim are known.
  bool fully_known() const;
  // Product of dims; nullopt if any is unknown or the product overflows.
  std::optional<uint64_t> element_count() const;
  std::vector<int64_t> extents() const;  // -1 for unknown dims

  // "[1, 3, batch, 224]" or "[?]" for unknown rank.
  std::string ToString() const;

  bool operator==(const Shape& o) const { return known_ == o.known_ && dims_ == o.dims_; }
  bool operator!=(const Shape& o) const { return !(*this == o); }

 private:
  bool known_ = false;
  std::vector<Dim> dims_;
};

// Normalises a possibly negative axis against `rank`; nullopt if out of range.
std::optional<size_t> NormalizeAxis(int64_t axis, size_t rank);

// True when the two shapes cannot describe the same tensor: ranks differ, or
// some dim is known in both with different values.
bool ShapesConflict(const Shape& a, const Shape& b);

}  // namespace qairt
