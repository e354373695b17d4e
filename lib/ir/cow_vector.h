// A vector whose copies share their elements until one of them is changed
// (copy on write). An encoding's tables (per-block scales, LPBQ integer
// scales) are one entry per block: an LLM's run to tens of MB, and the
// graph, its clones and the processing session's records each hold a copy
// of every encoding. Shared, those copies cost a pointer each.
//
// A table of one element (a per-tensor encoding's scale or offset: most of
// a model's, and all of an LLM encodings file's 200k activations) is held
// inline, without an allocation (on the heap, a vector and its elements are
// two blocks, 80 bytes of fresh memory, per table).
//
// Reading is a std::vector's const interface over contiguous elements
// (iterators are pointers; to_vector() copies). Writing goes through mut(),
// or the mutators below, which first make the elements this object's own:
// there is no non-const operator[] or data(), so a write can never reach
// elements another copy still shares.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <iterator>
#include <memory>
#include <span>
#include <stdexcept>
#include <type_traits>
#include <utility>
#include <vector>

namespace qairt {

template <class T>
class CowVector {
  static_assert(std::is_trivially_copyable_v<T> && sizeof(T) <= 8, "CowVector holds scalars");

 public:
  using value_type = T;
  using size_type = size_t;
  using const_reference = const T&;
  using const_iterator = const T*;
  using iterator = const_iterator;  // elements are written through mut()

  CowVector() = default;
  CowVector(const CowVector&) = default;
  CowVector& operator=(const CowVector&) = default;
  // A moved-from table is empty, inline or not (as a moved-from vector is).
  CowVector(CowVector&& o) noexcept : p_(std::move(o.p_)), one_(o.one_), inline_size_(o.inline_size_) {
    o.inline_size_ = 0;
  }
  CowVector& operator=(CowVector&& o) noexcept {
    if (this != &o) {
      p_ = std::move(o.p_);
      one_ = o.one_;
      inline_size_ = std::exchange(o.inline_size_, 0);
    }
    return *this;
  }
  CowVector(std::vector<T> v) { Set(std::move(v)); }  // NOLINT(google-explicit-constructor): a vector is one
  CowVector(std::initializer_list<T> v) { assign(v.begin(), v.end()); }
  CowVector(size_t n, const T& value) { assign(n, value); }
  template <class It, class = typename std::iterator_traits<It>::iterator_category>
  CowVector(It first, It last) {
    assign(first, last);
  }
  CowVector& operator=(std::vector<T> v) {
    Set(std::move(v));
    return *this;
  }
  CowVector& operator=(std::initializer_list<T> v) {
    assign(v.begin(), v.end());
    return *this;
  }

  size_t size() const { return p_ ? p_->size() : inline_size_; }
  bool empty() const { return size() == 0; }
  const T* data() const { return p_ ? p_->data() : inline_size_ ? &one_ : nullptr; }
  const T& operator[](size_t i) const { return data()[i]; }
  const T& at(size_t i) const {
    if (i >= size()) throw std::out_of_range("CowVector::at");
    return data()[i];
  }
  const T& front() const { return data()[0]; }
  const T& back() const { return data()[size() - 1]; }
  const_iterator begin() const { return data(); }
  const_iterator end() const { return data() + size(); }
  const_iterator cbegin() const { return begin(); }
  const_iterator cend() const { return end(); }
  std::vector<T> to_vector() const { return std::vector<T>(begin(), end()); }
  operator std::span<const T>() const { return {data(), size()}; }  // NOLINT(google-explicit-constructor)

  // The elements as this object's own, copied first if another copy
  // shares them (an inline element moves to the heap).
  std::vector<T>& mut() {
    if (!p_) {
      p_ = std::make_shared<std::vector<T>>(begin(), end());
      inline_size_ = 0;
    } else if (p_.use_count() > 1) {
      p_ = std::make_shared<std::vector<T>>(*p_);
    }
    return *p_;
  }
  void clear() {
    p_.reset();
    inline_size_ = 0;
  }
  void resize(size_t n) { mut().resize(n); }
  void resize(size_t n, const T& value) { mut().resize(n, value); }
  void reserve(size_t n) { mut().reserve(n); }
  void push_back(const T& v) {
    if (empty()) return SetOne(v);
    mut().push_back(v);
  }
  template <class... Args>
  T& emplace_back(Args&&... args) {
    return mut().emplace_back(std::forward<Args>(args)...);
  }
  void pop_back() { mut().pop_back(); }
  void assign(size_t n, const T& value) {
    if (n == 1) return SetOne(value);
    Set(std::vector<T>(n, value));
  }
  template <class It, class = typename std::iterator_traits<It>::iterator_category>
  void assign(It first, It last) {
    using Category = typename std::iterator_traits<It>::iterator_category;
    if constexpr (std::is_base_of_v<std::forward_iterator_tag, Category>) {
      if (first != last && std::next(first) == last) return SetOne(static_cast<T>(*first));
    }
    Set(std::vector<T>(first, last));
  }
  template <class It>
  void insert(const_iterator pos, It first, It last) {
    const auto at = pos - begin();
    std::vector<T>& v = mut();
    v.insert(v.begin() + at, first, last);
  }
  void swap(CowVector& o) noexcept {
    p_.swap(o.p_);
    std::swap(one_, o.one_);
    std::swap(inline_size_, o.inline_size_);
  }

  // Whether both hold the very same elements without comparing them one by
  // one: both empty, one heap buffer shared by both, or one inline element
  // with the same bits.
  bool SharesElementsWith(const CowVector& o) const {
    if (p_ || o.p_) return p_ == o.p_ && p_ != nullptr;
    return inline_size_ == o.inline_size_ && (!inline_size_ || std::memcmp(&one_, &o.one_, sizeof(T)) == 0);
  }

  friend bool operator==(const CowVector& a, const CowVector& b) {
    return (a.p_ && a.p_ == b.p_) || std::equal(a.begin(), a.end(), b.begin(), b.end());
  }
  friend bool operator!=(const CowVector& a, const CowVector& b) { return !(a == b); }
  friend bool operator==(const CowVector& a, const std::vector<T>& b) {
    return std::equal(a.begin(), a.end(), b.begin(), b.end());
  }
  friend bool operator!=(const CowVector& a, const std::vector<T>& b) { return !(a == b); }

 private:
  void SetOne(const T& v) {
    p_.reset();
    one_ = v;
    inline_size_ = 1;
  }
  void Set(std::vector<T>&& v) {
    if (v.size() <= 1) {
      if (v.empty()) return clear();
      return SetOne(v[0]);
    }
    p_ = std::make_shared<std::vector<T>>(std::move(v));
    inline_size_ = 0;
  }
  std::shared_ptr<std::vector<T>> p_;  // two or more elements (or any, once mut() was called)
  T one_{};                            // the element when inline_size_ is 1
  uint8_t inline_size_ = 0;            // 0 or 1; 0 whenever p_ is set
};

}  // namespace qairt
