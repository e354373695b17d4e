// A vector whose copies share their elements until one of them is changed
// (copy on write). An encoding's tables (per-block scales, LPBQ integer
// scales) are one entry per block: an LLM's run to tens of MB, and the
// graph, its clones and the processing session's records each hold a copy
// of every encoding. Shared, those copies cost a pointer each.
//
// Reading is a std::vector's const interface (and a conversion to
// const std::vector<T>&). Writing goes through mut(), or the mutators below,
// which first make the elements this object's own: there is no non-const
// operator[] or data(), so a write can never reach elements another copy
// still shares.
#pragma once

#include <cstddef>
#include <initializer_list>
#include <iterator>
#include <memory>
#include <type_traits>
#include <utility>
#include <vector>

namespace qairt {

template <class T>
class CowVector {
 public:
  using value_type = T;
  using size_type = size_t;
  using const_reference = const T&;
  using const_iterator = typename std::vector<T>::const_iterator;
  using iterator = const_iterator;  // elements are written through mut()

  CowVector() = default;
  CowVector(std::vector<T> v) { Set(std::move(v)); }  // NOLINT(google-explicit-constructor): a vector is one
  CowVector(std::initializer_list<T> v) { Set(std::vector<T>(v)); }
  CowVector(size_t n, const T& value) { Set(std::vector<T>(n, value)); }
  template <class It, class = typename std::iterator_traits<It>::iterator_category>
  CowVector(It first, It last) {
    Set(std::vector<T>(first, last));
  }
  CowVector& operator=(std::vector<T> v) {
    Set(std::move(v));
    return *this;
  }
  CowVector& operator=(std::initializer_list<T> v) {
    Set(std::vector<T>(v));
    return *this;
  }

  const std::vector<T>& vec() const { return p_ ? *p_ : Empty(); }
  operator const std::vector<T>&() const { return vec(); }  // NOLINT(google-explicit-constructor)
  size_t size() const { return p_ ? p_->size() : 0; }
  bool empty() const { return !p_ || p_->empty(); }
  const T& operator[](size_t i) const { return (*p_)[i]; }
  const T& at(size_t i) const { return vec().at(i); }
  const T* data() const { return p_ ? p_->data() : nullptr; }
  const T& front() const { return p_->front(); }
  const T& back() const { return p_->back(); }
  const_iterator begin() const { return vec().begin(); }
  const_iterator end() const { return vec().end(); }
  const_iterator cbegin() const { return vec().begin(); }
  const_iterator cend() const { return vec().end(); }

  // The elements as this object's own, copied first if another copy
  // shares them.
  std::vector<T>& mut() {
    if (!p_) {
      p_ = std::make_shared<std::vector<T>>();
    } else if (p_.use_count() > 1) {
      p_ = std::make_shared<std::vector<T>>(*p_);
    }
    return *p_;
  }
  void clear() { p_.reset(); }
  void resize(size_t n) { mut().resize(n); }
  void resize(size_t n, const T& value) { mut().resize(n, value); }
  void reserve(size_t n) { mut().reserve(n); }
  void push_back(const T& v) { mut().push_back(v); }
  template <class... Args>
  T& emplace_back(Args&&... args) {
    return mut().emplace_back(std::forward<Args>(args)...);
  }
  void pop_back() { mut().pop_back(); }
  void assign(size_t n, const T& value) { Set(std::vector<T>(n, value)); }
  template <class It, class = typename std::iterator_traits<It>::iterator_category>
  void assign(It first, It last) {
    Set(std::vector<T>(first, last));
  }
  template <class It>
  void insert(const_iterator pos, It first, It last) {
    const auto at = pos - begin();
    std::vector<T>& v = mut();
    v.insert(v.begin() + at, first, last);
  }
  void swap(CowVector& o) noexcept { p_.swap(o.p_); }

  friend bool operator==(const CowVector& a, const CowVector& b) { return a.p_ == b.p_ || a.vec() == b.vec(); }
  friend bool operator==(const CowVector& a, const std::vector<T>& b) { return a.vec() == b; }

 private:
  static const std::vector<T>& Empty() {
    static const std::vector<T> empty;
    return empty;
  }
  void Set(std::vector<T>&& v) {
    if (v.empty()) {
      p_.reset();
    } else {
      p_ = std::make_shared<std::vector<T>>(std::move(v));
    }
  }
  std::shared_ptr<std::vector<T>> p_;  // null = empty
};

}  // namespace qairt
