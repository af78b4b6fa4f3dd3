// eval/BuiltinsCheckpoint.cpp — trees of tensors to and from NumPy's .npz files.
//
// (save-tree path tree) names every leaf by its path from the root: map keys without
// their colon, vector positions as decimal numbers, joined with "/" ({:layers [{:w ..}]}
// gives "layers/0/w"); (load-tree path) splits the names again and rebuilds the tree: a
// level whose names are all numbers is a vector (they must be 0..n-1), any other a map
// with keyword keys in the file's order. So that this round trip is exact, save-tree
// refuses what the names could not tell apart: a key that is not a keyword, a key that is
// empty, holds "/" or is all digits, nil, and empty maps and vectors. (load-npz path)
// gives the entries as they are, a map from name strings to tensors. The archive side is
// runtime/Npz.h.
#include "eval/Builtins.h"
#include "eval/Evaluator.h"
#include "runtime/Npz.h"
#include "tsl/StackGuard.h"

#include <algorithm>
#include <map>
#include <memory>
#include <variant>

namespace tsl::builtins {

namespace {

bool allDigits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

std::string shown(const std::string& path) { return path.empty() ? "the root" : "'" + path + "'"; }

void flatten(const Value& v, const std::string& path, std::vector<NpzEntry>& out) {
  checkStack();
  auto child = [&](const std::string& part) { return path.empty() ? part : path + "/" + part; };
  if (v.isTensor()) {
    if (path.empty()) fail(ErrorKind::Type, "save-tree: the tree must be a map or vector of tensors, got a tensor");
    out.push_back({path, v.tensor()});
  } else if (v.isMap()) {
    if (v.map().count() == 0) fail(ErrorKind::Value, "save-tree: the empty map at ", shown(path), " cannot be saved (it has no entries to name)");
    for (const auto& [key, value] : v.map().entries()) {
      if (!key.isKeyword()) fail(ErrorKind::Type, "save-tree: map keys must be keywords, got ", describeKind(key), " at ", shown(path));
      const std::string& name = key.keyword().name();
      if (name.empty() || name.find('/') != std::string::npos || allDigits(name))
        fail(ErrorKind::Value, "save-tree: the key :", name, " at ", shown(path),
             " cannot name an entry (keys must be non-empty, without '/', and not all digits)");
      flatten(value, child(name), out);
    }
  } else if (v.isSequential()) {
    std::vector<Value> items;
    if (v.isVector()) {
      for (const Value& item : v.vector().items()) items.push_back(item);
    } else {
      for (const ListObj* cell = v.list(); cell; cell = cell->next()) items.push_back(cell->first());
    }
    if (items.empty()) fail(ErrorKind::Value, "save-tree: the empty sequence at ", shown(path), " cannot be saved (it has no entries to name)");
    for (size_t i = 0; i < items.size(); ++i) flatten(items[i], child(std::to_string(i)), out);
  } else {
    fail(ErrorKind::Type, "save-tree: leaves must be tensors or numbers, got ", describeKind(v), " at ", shown(path));
  }
}

/// A level of the tree load-tree rebuilds, its children in the file's order.
struct Level {
  struct Child {
    std::string name;
    std::variant<Tensor, std::unique_ptr<Level>> slot;
  };
  std::vector<Child> children;
  std::map<std::string, size_t, std::less<>> find;
};

[[noreturn]] void corruptTree(const std::string& path, const std::string& entry, std::string_view why) {
  fail(ErrorKind::Io, path, ": entry '", entry, "' does not name a tree leaf: ", why);
}

void insert(Level& root, const std::string& path, const NpzEntry& entry) {
  Level* level = &root;
  size_t start = 0;
  for (;;) {
    const size_t slash = entry.name.find('/', start);
    const std::string part = entry.name.substr(start, slash == std::string::npos ? std::string::npos : slash - start);
    if (part.empty()) corruptTree(path, entry.name, "an empty path component");
    const bool last = slash == std::string::npos;
    auto at = level->find.find(part);
    if (at == level->find.end()) {
      at = level->find.emplace(part, level->children.size()).first;
      if (last) level->children.push_back({part, entry.tensor});
      else level->children.push_back({part, std::make_unique<Level>()});
    } else if (last || std::holds_alternative<Tensor>(level->children[at->second].slot)) {
      corruptTree(path, entry.name, "it is both a leaf and a branch, or appears twice");
    }
    if (last) return;
    level = std::get<std::unique_ptr<Level>>(level->children[at->second].slot).get();
    start = slash + 1;
  }
}

Value rebuild(const Level& level, const std::string& path) {
  checkStack();
  auto value = [&](const Level::Child& c) {
    return std::holds_alternative<Tensor>(c.slot) ? Value(std::get<Tensor>(c.slot))
                                                  : rebuild(*std::get<std::unique_ptr<Level>>(c.slot), path);
  };
  const bool numbered = !level.children.empty() &&
                        std::all_of(level.children.begin(), level.children.end(), [](const Level::Child& c) { return allDigits(c.name); });
  if (!numbered) {
    std::vector<std::pair<Value, Value>> entries;
    for (const Level::Child& c : level.children) {
      if (allDigits(c.name)) corruptTree(path, c.name, "a position among named keys");
      entries.emplace_back(makeKeyword(c.name), value(c));
    }
    return makeMap(std::move(entries));
  }
  std::vector<Value> items(level.children.size());
  std::vector<bool> seen(level.children.size(), false);
  for (const Level::Child& c : level.children) {
    const bool canonical = c.name.size() == 1 || c.name[0] != '0';
    const size_t i = c.name.size() <= 18 ? std::stoull(c.name) : items.size();
    if (!canonical || i >= items.size() || seen[i])
      corruptTree(path, c.name, "vector positions must be 0.." + std::to_string(items.size() - 1) + ", each once");
    seen[i] = true;
    items[i] = value(c);
  }
  return makeVector(std::move(items));
}

} // namespace

void registerCheckpointBuiltins(Evaluator& evaluator) {
  evaluator.defineBuiltin("save-tree", 2, 2, [](CallContext& cx, Args args) {
    const std::string& path = stringArg(cx, args, 0);
    std::vector<NpzEntry> entries;
    flatten(args[1], "", entries);
    saveNpz(path, entries);
    return Value();
  });
  evaluator.defineBuiltin("load-tree", 1, 1, [](CallContext& cx, Args args) {
    const std::string& path = stringArg(cx, args, 0);
    Level root;
    for (const NpzEntry& e : loadNpz(path)) insert(root, path, e);
    return rebuild(root, path);
  });
  evaluator.defineBuiltin("load-npz", 1, 1, [](CallContext& cx, Args args) {
    std::vector<std::pair<Value, Value>> entries;
    for (NpzEntry& e : loadNpz(stringArg(cx, args, 0))) entries.emplace_back(makeString(std::move(e.name)), Value(std::move(e.tensor)));
    return makeMap(std::move(entries));
  });
  document(evaluator, "save-tree",
           "(save-tree path tree): writes a map or vector of tensors (nested) to path as a NumPy .npz, atomically;\n"
           "  entries are named by tree path (\"layers/0/w\"); numbers become 0-d arrays. Returns nil.\n"
           "  e.g. (save-tree \"model.npz\" {:w (zeros [2 2]) :layers [{:b [1 2]}]})");
  document(evaluator, "load-tree",
           "(load-tree path): the tree save-tree wrote (maps with keyword keys, vectors), from a .npz file.\n"
           "  e.g. (load-tree \"model.npz\")  ; {:w f32[2,2] ... :layers [{:b i64[2] [1 2]}]}");
  document(evaluator, "load-npz",
           "(load-npz path): every array of a NumPy .npz (stored or deflated) as a map from name strings to tensors.\n"
           "  e.g. (get (load-npz \"data.npz\") \"x\")");
}

} // namespace tsl::builtins
