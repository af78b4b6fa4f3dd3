// eval/HashIndex.h — a persistent hash array mapped trie from hashes to entry numbers.
//
// A TSL map keeps its entries in insertion order in a PersistentVector (docs/language.md §3
// asks maps to print in insertion order) and finds them through this index: a HAMT
// (Bagwell's ideal hash trees, with CHAMP's split of inline entries and children) keyed
// by a key's 64-bit hash and holding the entry's position in that vector. The index
// never sees keys: a lookup hands it a predicate that compares the key at a position, so
// its nodes are plain data and copying a path costs a few small memcpys.
//
// Each level uses 5 bits of the hash; keys whose 64-bit hashes are equal end in a
// collision node below the last level, searched linearly. Counts are plain integers (one
// engine, one thread).
//
// Positions only grow, which allows the trick PersistentVector plays with its tail: an
// index records its *frontier*, one past the highest position inserted, and a map whose
// entry count equals the frontier — the newest map built on this index — inserts in
// place, without copying a path (copying would touch every child of every node on it to
// count a reference). Older maps sharing the index may then meet entries past their own
// count, or positions holding other keys; their `matches` predicate (is the key at this
// position, in *my* entries, the one I look for?) rejects those, so entries added by
// another version are harmless. Any other map's insert copies the path into an index of
// its own. Nothing is ever erased: a map removes a key by marking its entry removed,
// which its predicate then rejects, and rebuilds the index when it compacts its entries.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <utility>

namespace tsl {

class HashIndex {
public:
  HashIndex() = default;
  HashIndex(const HashIndex& other) noexcept;
  HashIndex(HashIndex&& other) noexcept : root_(other.root_) { other.root_ = nullptr; }
  HashIndex& operator=(HashIndex other) noexcept {
    std::swap(root_, other.root_);
    return *this;
  }
  ~HashIndex();

  bool empty() const;

  /// A position stored under `hash` for which `matches(position)` is true.
  std::optional<uint32_t> find(uint64_t hash, const std::function<bool(uint32_t)>& matches) const;
  /// This index with `position` added under `hash`; the caller's map has `position`
  /// entries (the new one is the next) and knows its key is absent. In place when
  /// `position` is the frontier: the result then shares this index's nodes.
  HashIndex insert(uint64_t hash, uint32_t position) const;
  /// find(hash, matches) if it finds a position; otherwise sets `inserted` to
  /// insert(hash, position) and returns nothing — in one walk down the trie when the
  /// insert can be done in place.
  std::optional<uint32_t> findOrInsert(uint64_t hash, uint32_t position, const std::function<bool(uint32_t)>& matches,
                                       HashIndex& inserted) const;

  struct Node;
  struct Root;

private:
  explicit HashIndex(Root* root) : root_(root) {}
  Root* root_ = nullptr;
};

} // namespace tsl
