// eval/Trees.h — maps, vectors and lists of tensors as trees (docs/language.md §4, "Trees").
//
// A tree is a map, vector or list whose elements are trees; anything else is a leaf,
// except nil, which is an empty subtree (kept as is, never passed to a function). Two
// trees have the same structure when their maps have the same keys and their sequences
// the same lengths, recursively. Parameter trees are how models and optimiser states are
// written; the gradient of a function of a tree is a tree of the same structure.
#pragma once

#include "eval/Value.h"

#include <functional>
#include <vector>

namespace tsl {

class Evaluator;

bool isTreeNode(const Value& v);

/// The leaves in order (maps in insertion order, depth first).
std::vector<Value> treeLeaves(const Value& tree);

/// A tree of `trees[0]`'s structure whose leaves are fn(leaves of every tree at that
/// position). A type error naming the path when the structures differ.
Value treeMap(std::span<const Value> trees, const std::function<Value(std::span<const Value>)>& fn);

/// (op a b) leaf by leaf for two trees of the same structure, or a tensor with every
/// leaf of a tree.
Value treeBinary(const Value& a, const Value& b, const std::function<Value(const Value&, const Value&)>& op);

} // namespace tsl
