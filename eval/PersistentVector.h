// eval/PersistentVector.h — an immutable vector with structural sharing.
//
// The layout is Clojure's PersistentVector (after Bagwell's ideal hash trees): elements
// sit in leaves of 32, under branch nodes of 32 children, so indexing, `set` and
// `push_back` touch O(log32 n) nodes — at most 7 for any vector that fits in memory — and
// copy only that path. The last, partly filled leaf (the *tail*) is kept outside the tree,
// so a push usually touches only the tail.
//
// One more trick keeps building a vector in a loop cheap: a tail knows how many of its
// slots are filled, and a push onto the vector that filled them last writes the next slot
// in place, sharing the tail with the older vector (which never looks past its own count).
// A push onto any other vector copies the tail first. Nothing a vector can see ever
// changes.
//
// Reference counts are plain integers: a vector, like every TSL value, belongs to one
// engine, which runs on one thread. No TSL library in Debian offers this (or a persistent
// hash map), so it is written here; eval/PersistentMap.h builds on it.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <new>
#include <utility>
#include <vector>

namespace tsl {

template <class T>
class PersistentVector {
  static constexpr unsigned kBits = 5;
  static constexpr size_t kWidth = size_t(1) << kBits;
  static constexpr size_t kMask = kWidth - 1;

  struct Node {
    explicit Node(bool isLeaf) : leaf(isLeaf) {}
    uint32_t refs = 1;
    bool leaf;
  };
  /// Up to 32 elements; `used` of them are meaningful (all 32 once inside the tree).
  struct Leaf : Node {
    Leaf() : Node(true) {}
    uint32_t used = 0;
    std::array<T, kWidth> items{};
  };
  struct Branch : Node {
    Branch() : Node(false) {}
    std::array<Node*, kWidth> kids{};
  };

public:
  PersistentVector() = default;
  PersistentVector(const PersistentVector& other) noexcept
      : count_(other.count_), shift_(other.shift_), root_(other.root_), tail_(other.tail_) {
    retain(root_);
    retain(tail_);
  }
  PersistentVector(PersistentVector&& other) noexcept
      : count_(other.count_), shift_(other.shift_), root_(other.root_), tail_(other.tail_) {
    other.count_ = 0;
    other.shift_ = kBits;
    other.root_ = nullptr;
    other.tail_ = nullptr;
  }
  PersistentVector& operator=(PersistentVector other) noexcept {
    swap(other);
    return *this;
  }
  ~PersistentVector() {
    release(root_);
    release(tail_);
  }
  void swap(PersistentVector& other) noexcept {
    std::swap(count_, other.count_);
    std::swap(shift_, other.shift_);
    std::swap(root_, other.root_);
    std::swap(tail_, other.tail_);
  }

  /// A vector of `items`, built bottom-up in O(n).
  static PersistentVector fromVector(std::vector<T> items) {
    PersistentVector v;
    const size_t n = items.size();
    if (n == 0) return v;
    const size_t tailStart = tailOffsetOf(n);
    std::vector<Node*> level;
    try {
      level.reserve(tailStart / kWidth);
      for (size_t i = 0; i < tailStart; i += kWidth) {
        Leaf* leaf = new Leaf;
        std::move(items.begin() + static_cast<std::ptrdiff_t>(i),
                  items.begin() + static_cast<std::ptrdiff_t>(i + kWidth), leaf->items.begin());
        leaf->used = kWidth;
        level.push_back(leaf);
      }
      v.tail_ = new Leaf;
      std::move(items.begin() + static_cast<std::ptrdiff_t>(tailStart), items.end(), v.tail_->items.begin());
      v.tail_->used = static_cast<uint32_t>(n - tailStart);
      // Group 32 nodes under one branch until a single node is left: the root.
      while (!level.empty()) {
        std::vector<Node*> up;
        up.reserve((level.size() + kMask) / kWidth);
        for (size_t i = 0; i < level.size(); i += kWidth) {
          Branch* branch = new Branch;
          for (size_t j = i; j < std::min(level.size(), i + kWidth); ++j) {
            branch->kids[j - i] = level[j];
            level[j] = nullptr;
          }
          up.push_back(branch);
        }
        level = std::move(up);
        if (level.size() == 1) {
          v.root_ = static_cast<Branch*>(level[0]);
          break;
        }
        v.shift_ += kBits;
      }
    } catch (...) {
      for (Node* node : level) release(node);
      throw; // v's destructor releases what it already holds
    }
    v.count_ = n;
    return v;
  }

  size_t size() const { return count_; }
  bool empty() const { return count_ == 0; }

  /// Element i (i < size()).
  const T& operator[](size_t i) const { return leafFor(i)->items[i & kMask]; }

  /// Whether element i (i < size()) is reachable through this vector alone: every node on
  /// its way (root to leaf, or the tail) is held once. A node shared with another version
  /// of the vector lets that version reach the element too.
  bool holdsAlone(size_t i) const {
    if (i >= tailOffset()) return tail_->refs == 1;
    const Node* node = root_;
    for (unsigned level = shift_;; level -= kBits) {
      if (node->refs != 1) return false;
      if (level == 0) return true;
      node = static_cast<const Branch*>(node)->kids[(i >> level) & kMask];
    }
  }

  /// This vector with `value` appended.
  PersistentVector push_back(T value) const {
    PersistentVector out;
    const size_t tailLength = count_ - tailOffset();
    if (count_ == 0 || tailLength < kWidth) {
      Leaf* tail;
      if (tail_ && tail_->used == tailLength) {
        tail = tail_; // this vector filled the tail last: write the next slot in place
        retain(tail);
      } else {
        tail = copyLeaf(tail_, tailLength);
      }
      tail->items[tailLength] = std::move(value);
      tail->used = static_cast<uint32_t>(tailLength + 1);
      out.tail_ = tail;
      out.root_ = root_;
      retain(root_);
      out.shift_ = shift_;
      out.count_ = count_ + 1;
      return out;
    }
    // The tail is full: it becomes a leaf of the tree (shared as is: a full leaf never
    // changes) and a new tail starts.
    Leaf* fresh = new Leaf;
    fresh->items[0] = std::move(value);
    fresh->used = 1;
    out.tail_ = fresh;
    if ((count_ >> kBits) > (size_t(1) << shift_)) { // the root is full: grow a level
      Branch* root = new Branch;
      root->kids[0] = root_;
      retain(root_);
      out.root_ = root;
      root->kids[1] = newPath(shift_, tail_); // takes its own reference to the old tail
      out.shift_ = shift_ + kBits;
    } else {
      out.root_ = pushTail(shift_, root_, tail_);
      out.shift_ = shift_;
    }
    out.count_ = count_ + 1;
    return out;
  }

  /// This vector with element i (i < size()) replaced by `value`.
  PersistentVector set(size_t i, T value) const {
    PersistentVector out(*this);
    if (i >= tailOffset()) {
      Leaf* tail = copyLeaf(tail_, count_ - tailOffset());
      tail->items[i & kMask] = std::move(value);
      release(out.tail_);
      out.tail_ = tail;
      return out;
    }
    Branch* root = assocPath(shift_, root_, i, std::move(value));
    release(out.root_);
    out.root_ = root;
    return out;
  }

  /// Calls f(element) for elements [from, size()), a leaf at a time.
  template <class F>
  void forEach(size_t from, F&& f) const {
    for (size_t i = from; i < count_;) {
      const Leaf* leaf = leafFor(i);
      const size_t end = std::min(count_, (i | kMask) + 1);
      for (; i < end; ++i) f(leaf->items[i & kMask]);
    }
  }

  /// A forward iterator that fetches each leaf once.
  class const_iterator {
  public:
    using iterator_category = std::forward_iterator_tag;
    using value_type = T;
    using difference_type = std::ptrdiff_t;
    using pointer = const T*;
    using reference = const T&;

    const_iterator() = default;
    const_iterator(const PersistentVector* v, size_t i) : v_(v), i_(i) {}
    reference operator*() const {
      if (!leaf_ || (i_ & ~kMask) != base_) {
        leaf_ = v_->leafFor(i_);
        base_ = i_ & ~kMask;
      }
      return leaf_->items[i_ & kMask];
    }
    pointer operator->() const { return &**this; }
    const_iterator& operator++() {
      ++i_;
      return *this;
    }
    const_iterator operator++(int) {
      const_iterator old = *this;
      ++i_;
      return old;
    }
    bool operator==(const const_iterator& other) const { return i_ == other.i_; }
    bool operator!=(const const_iterator& other) const { return i_ != other.i_; }
    size_t index() const { return i_; }

  private:
    const PersistentVector* v_ = nullptr;
    size_t i_ = 0;
    mutable const Leaf* leaf_ = nullptr;
    mutable size_t base_ = 0;
  };

  const_iterator begin() const { return const_iterator(this, 0); }
  const_iterator end() const { return const_iterator(this, count_); }
  const_iterator iteratorAt(size_t i) const { return const_iterator(this, i); }

private:
  static size_t tailOffsetOf(size_t count) { return count < kWidth ? 0 : ((count - 1) >> kBits) << kBits; }
  size_t tailOffset() const { return tailOffsetOf(count_); }

  static void retain(Node* node) {
    if (node) ++node->refs;
  }
  /// Frees a node whose last reference goes; recursion is bounded by the tree's height.
  static void release(Node* node) {
    if (!node || --node->refs != 0) return;
    if (node->leaf) {
      delete static_cast<Leaf*>(node);
      return;
    }
    auto* branch = static_cast<Branch*>(node);
    for (Node* kid : branch->kids) release(kid);
    delete branch;
  }

  const Leaf* leafFor(size_t i) const {
    if (i >= tailOffset()) return tail_;
    const Node* node = root_;
    for (unsigned level = shift_; level > 0; level -= kBits)
      node = static_cast<const Branch*>(node)->kids[(i >> level) & kMask];
    return static_cast<const Leaf*>(node);
  }

  /// A new leaf holding the first `used` elements of `from` (which may be null if 0).
  static Leaf* copyLeaf(const Leaf* from, size_t used) {
    Leaf* leaf = new Leaf;
    if (from) std::copy(from->items.begin(), from->items.begin() + static_cast<std::ptrdiff_t>(used), leaf->items.begin());
    leaf->used = static_cast<uint32_t>(used);
    return leaf;
  }

  static Branch* copyBranch(const Branch* from) {
    Branch* branch = new Branch;
    if (from) {
      branch->kids = from->kids;
      for (Node* kid : branch->kids) retain(kid);
    }
    return branch;
  }

  /// A chain of branches from `level` down to `node` (which the chain takes a reference to).
  static Node* newPath(unsigned level, Node* node) {
    if (level == 0) {
      retain(node);
      return node;
    }
    Branch* branch = new Branch;
    try {
      branch->kids[0] = newPath(level - kBits, node);
    } catch (...) {
      delete branch;
      throw;
    }
    return branch;
  }

  /// A copy of `parent` (null: empty) with the full tail `leaf` added as the next leaf.
  Branch* pushTail(unsigned level, const Branch* parent, Leaf* leaf) const {
    const size_t index = ((count_ - 1) >> level) & kMask;
    Branch* copy = copyBranch(parent);
    try {
      Node* insert;
      if (level == kBits) {
        retain(leaf);
        insert = leaf;
      } else {
        const auto* child = parent ? static_cast<const Branch*>(parent->kids[index]) : nullptr;
        insert = child ? pushTail(level - kBits, child, leaf) : newPath(level - kBits, leaf);
      }
      release(copy->kids[index]);
      copy->kids[index] = insert;
    } catch (...) {
      release(copy);
      throw;
    }
    return copy;
  }

  static Branch* assocPath(unsigned level, const Branch* node, size_t i, T value) {
    Branch* copy = copyBranch(node);
    const size_t index = (i >> level) & kMask;
    try {
      Node* replaced;
      if (level == kBits) {
        Leaf* leaf = copyLeaf(static_cast<const Leaf*>(node->kids[index]), kWidth);
        leaf->items[i & kMask] = std::move(value);
        replaced = leaf;
      } else {
        replaced = assocPath(level - kBits, static_cast<const Branch*>(node->kids[index]), i, std::move(value));
      }
      release(copy->kids[index]);
      copy->kids[index] = replaced;
    } catch (...) {
      release(copy);
      throw;
    }
    return copy;
  }

  size_t count_ = 0;
  unsigned shift_ = kBits; ///< bits below the root's level: 5 when the root's children are leaves
  Branch* root_ = nullptr; ///< null while every element fits in the tail
  Leaf* tail_ = nullptr;
};

} // namespace tsl
