// A name -> id index over names that live elsewhere (a graph's tensors, a
// file's entries). Open addressing with linear probing; a slot holds a 32-bit
// hash and the id, so a lookup touches one slot line plus the one candidate
// name whose hash matches. Versus std::unordered_map<std::string, id>: no node
// or string copy per name (copying a graph copies one flat array), and ~1
// cache miss per lookup instead of 3-4 (bucket, the list's previous node, the
// node, the key) -- applying a 200k-entry encodings file is mostly lookups.
//
// Names are read through `name_of(id)`, so the owner must erase an id before
// it changes that id's name. Ids must be < kNoId.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string_view>
#include <vector>

namespace qairt {

class NameIndex {
 public:
  static constexpr uint32_t kNoId = UINT32_MAX;

  static uint32_t Hash(std::string_view name) {
    const uint64_t h = std::hash<std::string_view>{}(name);
    return static_cast<uint32_t>(h ^ (h >> 32));
  }

  size_t size() const { return size_; }
  void clear() {
    slots_.clear();
    size_ = 0;
  }
  // Room for n names without rehashing.
  void reserve(size_t n) {
    if (CapacityFor(n) > slots_.size()) Rehash(CapacityFor(n));
  }

  // The id stored for `name`, or kNoId.
  template <class NameOf>
  uint32_t Find(std::string_view name, const NameOf& name_of) const {
    return FindHashed(name, Hash(name), name_of);
  }
  template <class NameOf>
  uint32_t FindHashed(std::string_view name, uint32_t hash, const NameOf& name_of) const {
    if (slots_.empty()) return kNoId;
    const size_t mask = slots_.size() - 1;
    for (size_t i = hash & mask;; i = (i + 1) & mask) {
      const Slot& s = slots_[i];
      if (s.id == kNoId) return kNoId;
      if (s.hash == hash && std::string_view(name_of(s.id)) == name) return s.id;
    }
  }
  // Batched lookups hide the cache misses: Prefetch(hash) some names ahead,
  // then HomeId(hash) (the id in the name's home slot, usually the match, or
  // kNoId) to prefetch that id's name, then FindHashed.
  void Prefetch(uint32_t hash) const {
    if (!slots_.empty()) __builtin_prefetch(&slots_[hash & (slots_.size() - 1)]);
  }
  uint32_t HomeId(uint32_t hash) const {
    if (slots_.empty()) return kNoId;
    const Slot& s = slots_[hash & (slots_.size() - 1)];
    return s.hash == hash ? s.id : kNoId;
  }

  // Adds name -> id unless the name is present (the first one stays).
  // Returns the id now stored for the name.
  template <class NameOf>
  uint32_t Insert(std::string_view name, uint32_t id, const NameOf& name_of) {
    return InsertHashed(name, Hash(name), id, name_of);
  }
  template <class NameOf>
  uint32_t InsertHashed(std::string_view name, uint32_t hash, uint32_t id, const NameOf& name_of) {
    if (CapacityFor(size_ + 1) > slots_.size()) Rehash(CapacityFor(size_ + 1));
    const size_t mask = slots_.size() - 1;
    for (size_t i = hash & mask;; i = (i + 1) & mask) {
      Slot& s = slots_[i];
      if (s.id == kNoId) {
        s = {hash, id};
        ++size_;
        return id;
      }
      if (s.hash == hash && std::string_view(name_of(s.id)) == name) return s.id;
    }
  }

  // Removes `name` if it maps to `id` (backward-shift deletion: no
  // tombstones). Returns whether it did.
  template <class NameOf>
  bool Erase(std::string_view name, uint32_t id, const NameOf& name_of) {
    if (slots_.empty()) return false;
    const uint32_t hash = Hash(name);
    const size_t mask = slots_.size() - 1;
    size_t i = hash & mask;
    for (;; i = (i + 1) & mask) {
      const Slot& s = slots_[i];
      if (s.id == kNoId) return false;
      if (s.hash == hash && std::string_view(name_of(s.id)) == name) break;
    }
    if (slots_[i].id != id) return false;
    // Pull later members of the probe run back over the hole when their home
    // slot is not inside (hole, j].
    size_t hole = i;
    for (size_t j = (i + 1) & mask; slots_[j].id != kNoId; j = (j + 1) & mask) {
      const size_t home = slots_[j].hash & mask;
      const bool home_in_range = hole <= j ? (home > hole && home <= j) : (home > hole || home <= j);
      if (!home_in_range) {
        slots_[hole] = slots_[j];
        hole = j;
      }
    }
    slots_[hole] = {0, kNoId};
    --size_;
    return true;
  }

 private:
  struct Slot {
    uint32_t hash;
    uint32_t id;
  };
  // Load factor <= 1/2, power of two.
  static size_t CapacityFor(size_t n) {
    size_t c = 16;
    while (c < 2 * n) c *= 2;
    return c;
  }
  void Rehash(size_t capacity) {
    std::vector<Slot> old(capacity, Slot{0, kNoId});
    old.swap(slots_);
    const size_t mask = capacity - 1;
    for (const Slot& s : old) {
      if (s.id == kNoId) continue;
      size_t i = s.hash & mask;
      while (slots_[i].id != kNoId) i = (i + 1) & mask;
      slots_[i] = s;
    }
  }

  std::vector<Slot> slots_;
  size_t size_ = 0;
};

}  // namespace qairt
