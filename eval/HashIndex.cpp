// eval/HashIndex.cpp — the HAMT behind TSL maps.
//
// A node is one allocation: a header, its inline entries (hash and position), then its
// children. `datamap` has a bit for each 5-bit hash fragment held inline, `nodemap` one
// for each fragment that continues in a child; an entry's index among the inline entries
// (or a child's among the children) is the number of lower bits set. Below the last
// level (shift >= 64) a node is a collision node: `count` inline entries, no bitmaps.
#include "eval/HashIndex.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cstring>
#include <new>

namespace tsl {

namespace {

constexpr unsigned kBits = 5;
constexpr uint32_t kMask = 31;

struct Entry {
  uint64_t hash;
  uint32_t position;
};

} // namespace

struct alignas(8) HashIndex::Node {
  uint32_t refs;
  uint32_t datamap;
  uint32_t nodemap;
  uint32_t count;    ///< collision nodes only: the number of entries
  uint32_t capacity; ///< bytes for entries and children after the header
  bool collision;

  uint32_t entryCount() const { return collision ? count : static_cast<uint32_t>(std::popcount(datamap)); }
  uint32_t childCount() const { return collision ? 0 : static_cast<uint32_t>(std::popcount(nodemap)); }
  Entry* entries() { return reinterpret_cast<Entry*>(this + 1); }
  const Entry* entries() const { return reinterpret_cast<const Entry*>(this + 1); }
  Node** children() { return reinterpret_cast<Node**>(entries() + entryCount()); }
  Node* const* children() const { return reinterpret_cast<Node* const*>(entries() + entryCount()); }
};

namespace {

using Node = HashIndex::Node;

static_assert(sizeof(Node) % alignof(Entry) == 0 && sizeof(Entry) % alignof(Node*) == 0);

uint32_t fragment(uint64_t hash, unsigned shift) { return static_cast<uint32_t>(hash >> shift) & kMask; }
uint32_t below(uint32_t map, uint32_t bit) { return static_cast<uint32_t>(std::popcount(map & (bit - 1))); }

uint32_t payload(uint32_t entries, uint32_t children) {
  return entries * static_cast<uint32_t>(sizeof(Entry)) + children * static_cast<uint32_t>(sizeof(Node*));
}

/// A node with room for `entries` inline entries and `children` children, one reference.
/// With `spare`, room to grow: nodes edited in place (eval/HashIndex.h) then grow by
/// doubling rather than by one reallocation per insert.
Node* allocate(uint32_t entries, uint32_t children, bool collision, bool spare = false) {
  uint32_t bytes = payload(entries, children);
  if (spare) bytes = std::min<uint32_t>(std::bit_ceil(std::max<uint32_t>(bytes, 64)), std::max(bytes, 512u));
  void* memory = ::operator new(sizeof(Node) + bytes);
  auto* node = static_cast<Node*>(memory);
  node->refs = 1;
  node->datamap = node->nodemap = 0;
  node->count = collision ? entries : 0;
  node->capacity = bytes;
  node->collision = collision;
  return node;
}

void retain(Node* node) {
  if (node) ++node->refs;
}

void release(Node* node) {
  if (!node || --node->refs != 0) return;
  for (uint32_t i = 0; i < node->childCount(); ++i) release(node->children()[i]);
  ::operator delete(node);
}

/// A node of two entries whose hashes first differ at or below `shift`.
Node* pair(const Entry& a, const Entry& b, unsigned shift) {
  if (shift >= 64) {
    Node* node = allocate(2, 0, true);
    node->entries()[0] = a;
    node->entries()[1] = b;
    return node;
  }
  const uint32_t fa = fragment(a.hash, shift), fb = fragment(b.hash, shift);
  if (fa == fb) {
    Node* child = pair(a, b, shift + kBits);
    Node* node = allocate(0, 1, false);
    node->nodemap = 1u << fa;
    node->children()[0] = child;
    return node;
  }
  Node* node = allocate(2, 0, false);
  node->datamap = (1u << fa) | (1u << fb);
  node->entries()[0] = fa < fb ? a : b;
  node->entries()[1] = fa < fb ? b : a;
  return node;
}

/// A change to one node, each part optional (an index of -1): drop the inline entry at
/// `dropEntry`, insert `entry` before `insertEntry`, insert `child` before `insertChild`,
/// replace the child at `replaceChild` by `replacement` — the one way every edit below
/// describes its new node.
struct Edit {
  int dropEntry = -1;
  int insertEntry = -1;
  Entry entry{};
  int insertChild = -1;
  Node* child = nullptr; ///< inserted as is (its reference moves into the copy)
  int replaceChild = -1;
  Node* replacement = nullptr;
};

/// Writes the entries and children of `edit` applied to (oldEntries, oldChildren) into
/// `dst`, whose maps and counts are already set; with `retainKept`, kept children get a
/// new reference.
void layout(Node* dst, const Entry* oldEntries, uint32_t entryCount, Node* const* oldChildren, uint32_t childCount,
            const Edit& edit, bool retainKept) {
  Entry* e = dst->entries();
  for (uint32_t i = 0; i <= entryCount; ++i) {
    if (static_cast<int>(i) == edit.insertEntry) *e++ = edit.entry;
    if (i < entryCount && static_cast<int>(i) != edit.dropEntry) *e++ = oldEntries[i];
  }
  Node** c = dst->children();
  for (uint32_t i = 0; i <= childCount; ++i) {
    if (static_cast<int>(i) == edit.insertChild) *c++ = edit.child;
    if (i < childCount) {
      const bool replaced = static_cast<int>(i) == edit.replaceChild;
      Node* kid = replaced ? edit.replacement : oldChildren[i];
      if (!replaced && retainKept) retain(kid);
      *c++ = kid;
    }
  }
}

/// A new node: `node` with `edit` applied; kept children get a new reference.
Node* rebuild(const Node* node, uint32_t datamap, uint32_t nodemap, const Edit& edit) {
  const uint32_t entries = node->entryCount() - (edit.dropEntry >= 0) + (edit.insertEntry >= 0);
  const uint32_t children = node->childCount() + (edit.insertChild >= 0);
  Node* copy = allocate(entries, children, node->collision);
  copy->datamap = datamap;
  copy->nodemap = nodemap;
  layout(copy, node->entries(), node->entryCount(), node->children(), node->childCount(), edit, true);
  return copy;
}

/// `node` (which only its parent references) with `edit` applied, in place when it has
/// room, else moved into a larger node (its children change owner, not count).
Node* editInPlace(Node* node, uint32_t datamap, uint32_t nodemap, const Edit& edit) {
  const uint32_t oldEntries = node->entryCount(), oldChildren = node->childCount();
  const uint32_t entries = oldEntries - (edit.dropEntry >= 0) + (edit.insertEntry >= 0);
  const uint32_t children = oldChildren + (edit.insertChild >= 0);
  if (!node->collision && payload(entries, children) <= node->capacity) {
    std::array<Entry, 32> savedEntries;
    std::array<Node*, 32> savedChildren;
    std::copy_n(node->entries(), oldEntries, savedEntries.begin());
    std::copy_n(node->children(), oldChildren, savedChildren.begin());
    node->datamap = datamap;
    node->nodemap = nodemap;
    layout(node, savedEntries.data(), oldEntries, savedChildren.data(), oldChildren, edit, false);
    return node;
  }
  Node* grown = allocate(entries, children, node->collision, /*spare=*/true);
  grown->datamap = datamap;
  grown->nodemap = nodemap;
  layout(grown, node->entries(), oldEntries, node->children(), oldChildren, edit, false);
  ::operator delete(node);
  return grown;
}

Node* insertAt(const Node* node, unsigned shift, const Entry& entry) {
  if (!node) {
    Node* leaf = allocate(1, 0, shift >= 64);
    if (shift < 64) leaf->datamap = 1u << fragment(entry.hash, shift);
    leaf->entries()[0] = entry;
    return leaf;
  }
  if (node->collision) {
    Edit edit;
    edit.insertEntry = static_cast<int>(node->count);
    edit.entry = entry;
    return rebuild(node, 0, 0, edit);
  }
  const uint32_t bit = 1u << fragment(entry.hash, shift);
  if (node->datamap & bit) {
    // The fragment is taken by an inline entry: both move down into a new child.
    const uint32_t index = below(node->datamap, bit);
    Node* child = pair(node->entries()[index], entry, shift + kBits);
    Edit edit;
    edit.dropEntry = static_cast<int>(index);
    edit.insertChild = static_cast<int>(below(node->nodemap, bit));
    edit.child = child;
    return rebuild(node, node->datamap & ~bit, node->nodemap | bit, edit);
  }
  if (node->nodemap & bit) {
    const uint32_t index = below(node->nodemap, bit);
    Edit edit;
    edit.replaceChild = static_cast<int>(index);
    edit.replacement = insertAt(node->children()[index], shift + kBits, entry);
    return rebuild(node, node->datamap, node->nodemap, edit);
  }
  Edit edit;
  edit.insertEntry = static_cast<int>(below(node->datamap, bit));
  edit.entry = entry;
  return rebuild(node, node->datamap | bit, node->nodemap, edit);
}

/// Inserts `entry` below `*slot` in place, copying only nodes another index shares —
/// unless an entry with its hash satisfies `matches`, whose position is then returned
/// with nothing inserted.
std::optional<uint32_t> insertInPlace(Node** slot, const Entry& entry,
                                      const std::function<bool(uint32_t)>* matches = nullptr) {
  for (unsigned shift = 0;; shift += kBits) {
    Node* node = *slot;
    if (!node) {
      *slot = insertAt(nullptr, shift, entry);
      return std::nullopt;
    }
    if (matches) {
      // Search this node first: an equal key sits in its inline entry or collision list.
      const uint32_t n = node->collision ? node->count : 0;
      for (uint32_t i = 0; i < n; ++i)
        if (node->entries()[i].hash == entry.hash && (*matches)(node->entries()[i].position))
          return node->entries()[i].position;
      if (!node->collision) {
        const uint32_t bit = 1u << fragment(entry.hash, shift);
        if (node->datamap & bit) {
          const Entry& e = node->entries()[below(node->datamap, bit)];
          if (e.hash == entry.hash && (*matches)(e.position)) return e.position;
        }
      }
    }
    if (node->refs > 1) {
      // Shared with another index (one an older map's insert copied): this index gets its own.
      Node* copy = rebuild(node, node->datamap, node->nodemap, Edit{});
      release(node);
      *slot = node = copy;
    }
    const uint32_t bit = node->collision ? 0 : 1u << fragment(entry.hash, shift);
    if (!node->collision && (node->nodemap & bit)) {
      slot = &node->children()[below(node->nodemap, bit)];
      continue;
    }
    Edit edit;
    uint32_t datamap = node->datamap, nodemap = node->nodemap;
    if (node->collision) {
      edit.insertEntry = static_cast<int>(node->count);
      edit.entry = entry;
    } else if (node->datamap & bit) {
      const uint32_t index = below(node->datamap, bit);
      edit.dropEntry = static_cast<int>(index);
      edit.insertChild = static_cast<int>(below(node->nodemap, bit));
      edit.child = pair(node->entries()[index], entry, shift + kBits);
      datamap &= ~bit;
      nodemap |= bit;
    } else {
      edit.insertEntry = static_cast<int>(below(node->datamap, bit));
      edit.entry = entry;
      datamap |= bit;
    }
    try {
      *slot = editInPlace(node, datamap, nodemap, edit);
    } catch (...) {
      release(edit.child);
      throw;
    }
    return std::nullopt;
  }
}

} // namespace

/// What a HashIndex points at: the tree and its frontier, shared by the maps that
/// share the index.
struct HashIndex::Root {
  uint32_t refs = 1;
  uint32_t frontier = 0; ///< one past the highest position ever inserted
  Node* tree = nullptr;
};

namespace {

void retainRoot(HashIndex::Root* root) {
  if (root) ++root->refs;
}

void releaseRoot(HashIndex::Root* root) {
  if (!root || --root->refs != 0) return;
  release(root->tree);
  delete root;
}

} // namespace

HashIndex::HashIndex(const HashIndex& other) noexcept : root_(other.root_) { retainRoot(root_); }

HashIndex::~HashIndex() { releaseRoot(root_); }

bool HashIndex::empty() const { return !root_ || !root_->tree; }

std::optional<uint32_t> HashIndex::find(uint64_t hash, const std::function<bool(uint32_t)>& matches) const {
  const Node* node = root_ ? root_->tree : nullptr;
  for (unsigned shift = 0; node; shift += kBits) {
    if (node->collision) {
      for (uint32_t i = 0; i < node->count; ++i)
        if (node->entries()[i].hash == hash && matches(node->entries()[i].position)) return node->entries()[i].position;
      return std::nullopt;
    }
    const uint32_t bit = 1u << fragment(hash, shift);
    if (node->datamap & bit) {
      const Entry& e = node->entries()[below(node->datamap, bit)];
      if (e.hash == hash && matches(e.position)) return e.position;
      return std::nullopt;
    }
    if (!(node->nodemap & bit)) return std::nullopt;
    node = node->children()[below(node->nodemap, bit)];
  }
  return std::nullopt;
}

HashIndex HashIndex::insert(uint64_t hash, uint32_t position) const {
  const Entry entry{hash, position};
  if (root_ && root_->frontier == position) {
    insertInPlace(&root_->tree, entry); // the newest map: no other map can see `position`
    root_->frontier = position + 1;
    return *this;
  }
  auto* root = new Root;
  HashIndex out(root);
  root->tree = insertAt(root_ ? root_->tree : nullptr, 0, entry);
  root->frontier = position + 1;
  return out;
}

std::optional<uint32_t> HashIndex::findOrInsert(uint64_t hash, uint32_t position,
                                                const std::function<bool(uint32_t)>& matches,
                                                HashIndex& inserted) const {
  if (root_ && root_->frontier == position) {
    if (auto found = insertInPlace(&root_->tree, Entry{hash, position}, &matches)) return found;
    root_->frontier = position + 1;
    inserted = *this;
    return std::nullopt;
  }
  if (auto found = find(hash, matches)) return found;
  inserted = insert(hash, position);
  return std::nullopt;
}

} // namespace tsl
