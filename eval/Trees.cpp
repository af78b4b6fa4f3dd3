// eval/Trees.cpp — walking and rebuilding trees.
#include "eval/Trees.h"

#include "eval/Printer.h"
#include "tsl/StackGuard.h"

namespace tsl {

namespace {

void collectLeaves(const Value& tree, std::vector<Value>& out) {
  checkStack();
  if (tree.isNil()) return;
  if (tree.isMap()) {
    for (const auto& entry : tree.map().entries()) collectLeaves(entry.second, out);
  } else if (tree.isSequential()) {
    for (const Value& item : sequenceItems(tree)) collectLeaves(item, out);
  } else {
    out.push_back(tree);
  }
}

/// The keys and indices from the root to the subtree being walked; rendered ("/:w/0")
/// only for an error message, so walking a deep tree stays linear.
struct TreePath {
  std::vector<Value> steps;
  std::string str() const {
    if (steps.empty()) return "the root";
    std::string out;
    for (const Value& step : steps) out += "/" + printValue(step, true);
    return out;
  }
};

Value mapAt(std::span<const Value> trees, const std::function<Value(std::span<const Value>)>& fn, TreePath& path) {
  checkStack();
  const Value& first = trees[0];
  for (size_t i = 1; i < trees.size(); ++i) {
    const Value& other = trees[i];
    const bool sameKind = (first.isMap() && other.isMap()) || (first.isSequential() && other.isSequential()) ||
                          (first.isNil() && other.isNil()) || (!isTreeNode(first) && !first.isNil() &&
                                                               !isTreeNode(other) && !other.isNil());
    if (!sameKind)
      fail(ErrorKind::Type, "tree structures differ at ", path.str(), ": ", describeKind(first), " vs ",
           describeKind(other));
  }
  if (first.isNil()) return first;
  if (first.isMap()) {
    for (size_t i = 1; i < trees.size(); ++i)
      if (trees[i].map().count() != first.map().count())
        fail(ErrorKind::Type, "tree structures differ at ", path.str(), ": tree ", i + 1, " has ",
             trees[i].map().count(), " keys, tree 1 has ", first.map().count());
    std::vector<std::pair<Value, Value>> entries;
    for (const auto& [key, value] : first.map().entries()) {
      std::vector<Value> children{value};
      for (size_t i = 1; i < trees.size(); ++i) {
        const Value* found = trees[i].map().find(key);
        if (!found)
          fail(ErrorKind::Type, "tree structures differ at ", path.str(), ": key ", printValue(key, true),
               " is missing from tree ", i + 1);
        children.push_back(*found);
      }
      path.steps.push_back(key);
      entries.emplace_back(key, mapAt(children, fn, path));
      path.steps.pop_back();
    }
    return makeMap(std::move(entries));
  }
  if (first.isSequential()) {
    std::vector<std::vector<Value>> items;
    for (const Value& tree : trees) items.push_back(sequenceItems(tree));
    for (size_t i = 1; i < items.size(); ++i)
      if (items[i].size() != items[0].size())
        fail(ErrorKind::Type, "tree structures differ at ", path.str(), ": tree ", i + 1, " has ",
             items[i].size(), " elements, tree 1 has ", items[0].size());
    std::vector<Value> out;
    out.reserve(items[0].size());
    for (size_t k = 0; k < items[0].size(); ++k) {
      std::vector<Value> children;
      for (const auto& list : items) children.push_back(list[k]);
      path.steps.emplace_back(Tensor::ofInt(static_cast<int64_t>(k)));
      out.push_back(mapAt(children, fn, path));
      path.steps.pop_back();
    }
    return first.isList() ? makeList(out) : makeVector(std::move(out));
  }
  return fn(trees);
}

} // namespace

bool isTreeNode(const Value& v) { return v.isMap() || v.isSequential(); }

std::vector<Value> treeLeaves(const Value& tree) {
  std::vector<Value> out;
  collectLeaves(tree, out);
  return out;
}

Value treeMap(std::span<const Value> trees, const std::function<Value(std::span<const Value>)>& fn) {
  TreePath path;
  return mapAt(trees, fn, path);
}

Value treeBinary(const Value& a, const Value& b, const std::function<Value(const Value&, const Value&)>& op) {
  // A tensor meets every leaf of a tree (a learning rate times a gradient tree).
  if (!isTreeNode(a) && isTreeNode(b)) {
    const Value trees[] = {b};
    return treeMap(trees, [&](std::span<const Value> leaf) { return op(a, leaf[0]); });
  }
  if (isTreeNode(a) && !isTreeNode(b)) {
    const Value trees[] = {a};
    return treeMap(trees, [&](std::span<const Value> leaf) { return op(leaf[0], b); });
  }
  const Value trees[] = {a, b};
  return treeMap(trees, [&](std::span<const Value> leaves) { return op(leaves[0], leaves[1]); });
}

} // namespace tsl
