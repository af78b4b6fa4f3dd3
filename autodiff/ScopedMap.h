// autodiff/ScopedMap.h — what the derivative transforms know per region.
//
// Forward and reverse mode both copy a function region by region; a region sees its own
// entries and, through its parent, those of the regions it sits in.
#pragma once

#include "ir/IR.h"

#include <unordered_map>

namespace tsl::autodiff {

/// A map that falls back to its parent's.
template <typename Key, typename T>
class ScopedMap {
public:
  explicit ScopedMap(const ScopedMap* parent = nullptr) : parent_(parent) {}
  /// The entry here or in an enclosing scope; nullptr if none has it.
  const T* find(const Key& key) const {
    for (const ScopedMap* s = this; s; s = s->parent_)
      if (auto it = s->map_.find(key); it != s->map_.end()) return &it->second;
    return nullptr;
  }
  void set(const Key& key, T value) { map_[key] = std::move(value); }

private:
  const ScopedMap* parent_;
  std::unordered_map<Key, T> map_;
};

/// Only floating-point values carry derivatives.
inline bool differentiable(const ir::Value* v) { return isFloat(v->type().dtype); }

} // namespace tsl::autodiff
