// eval/Value.h — the values a TSL program computes with.
//
// A Value is a tagged union of 24 bytes: nil, a Tensor (every number and boolean is a
// rank-0 tensor, held inline), or a reference to a heap object — string, keyword, symbol,
// list, vector, map or function. Values are immutable. Heap objects are counted with a
// plain (non-atomic) count: a Value belongs to one engine, which runs on one thread.
//
// Lists are persistent cons cells (cons and rest are O(1)). Vectors are persistent
// vectors (eval/PersistentVector.h): `conj`, `assoc` and `nth` cost O(log32 n) and share
// structure; `rest` is a view. Maps keep insertion order: their entries sit in a persistent
// vector, found through a hash trie (eval/HashIndex.h) once a map has more than a few.
// Lists, vectors, maps and symbols read from source remember their span, so code that
// passes through a macro still points at the user's text; those converted from syntax
// also remember the syntax node, so a macro that returns its argument forms untouched
// costs nothing to convert back (eval/Convert.h).
#pragma once

#include "eval/HashIndex.h"
#include "eval/PersistentVector.h"
#include "parser/Syntax.h"
#include "runtime/Tensor.h"
#include "tsl/Value.h"
#include "tsl/Error.h"

#include <cstring>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace tsl {

// ---- Heap objects ----

class StringObj final : public Object {
public:
  explicit StringObj(std::string text) : Object(ValueKind::String), text_(std::move(text)) {}
  const std::string& text() const { return text_; }

private:
  std::string text_;
};

/// Interned: one object per name for the life of the process, compared by address.
class KeywordObj final : public Object {
public:
  static const KeywordObj* intern(std::string_view name);
  const std::string& name() const { return name_; }

private:
  explicit KeywordObj(std::string name) : Object(ValueKind::Keyword), name_(std::move(name)) {}
  std::string name_;
};

/// A symbol: an interned name plus, when read from source, the span it was read at.
/// Two symbols are equal when their names are.
class SymbolObj final : public Object {
public:
  SymbolObj(const std::string* name, Span span) : Object(ValueKind::Symbol), name_(name), span_(span) {}
  /// The interned name object shared by all symbols of that name.
  static const std::string* internName(std::string_view name);
  const std::string& name() const { return *name_; }
  const std::string* internedName() const { return name_; }
  const Span& span() const { return span_; }

private:
  const std::string* name_;
  Span span_;
};

/// The syntax node a collection was converted from (eval/Convert.h). Weak: a syntax
/// node may cache its value, which must not keep the node alive in turn.
using SyntaxOrigin = std::weak_ptr<const Syntax>;

class ListObj final : public Object {
public:
  /// A cell holding `head` before `tail` (a list value: nil-free, possibly empty).
  ListObj(Value head, Value tail, Span span = {});
  const Value& first() const { return head_; }
  /// The rest of the list; nullptr when this is the last cell.
  const ListObj* next() const { return tail_.list(); }
  const Value& rest() const { return tail_; }
  int64_t count() const { return count_; }
  const Span& span() const { return span_; }
  const SyntaxOrigin& origin() const { return origin_; }
  void setOrigin(SyntaxOrigin origin) { origin_ = std::move(origin); }

private:
  Value head_;
  Value tail_;
  int64_t count_;
  Span span_;
  SyntaxOrigin origin_;
};

/// Watches a vector being walked (a progress bar, eval/Progress.cpp): told how many
/// elements of the original are behind each `rest` taken of it, and by the sequence
/// functions (map, filter, reduce) as they go.
class SequenceObserver {
public:
  virtual ~SequenceObserver() = default;
  /// `done` elements of the observed vector have been walked past.
  virtual void reached(size_t done) = 0;
};

class VectorObj final : public Object {
public:
  using Items = PersistentVector<Value>;

  /// The elements [start, items.size()) of `items`.
  explicit VectorObj(Items items, size_t start = 0, Span span = {})
      : Object(ValueKind::Vector), items_(std::move(items)), start_(start), span_(span) {}
  explicit VectorObj(std::vector<Value> items, Span span = {});

  size_t count() const { return items_.size() - start_; }
  /// Element i (i < count()): O(log32 n).
  const Value& operator[](size_t i) const { return items_[start_ + i]; }

  /// The elements as a range (begin, end, size, operator[]); iterating is O(n).
  struct Range {
    const Items* items;
    size_t start;
    Items::const_iterator begin() const { return items->iteratorAt(start); }
    Items::const_iterator end() const { return items->end(); }
    size_t size() const { return items->size() - start; }
    bool empty() const { return size() == 0; }
    const Value& operator[](size_t i) const { return (*items)[start + i]; }
  };
  Range items() const { return {&items_, start_}; }
  std::vector<Value> toStdVector() const;
  const Span& span() const { return span_; }
  const SyntaxOrigin& origin() const { return origin_; }
  void setOrigin(SyntaxOrigin origin) { origin_ = std::move(origin); }

  /// Whether element i (i < count()) is reachable through this vector object alone (no
  /// other version shares the nodes holding it).
  bool holdsAlone(size_t i) const { return items_.holdsAlone(start_ + i); }

  /// This vector with `value` appended.
  Value conj(Value value) const;
  /// This vector with element i (i < count()) replaced.
  Value assoc(size_t i, Value value) const;
  /// Elements [from, count) as a view; an observed vector's view keeps the observer and
  /// tells it how far the walk has come.
  Value drop(size_t from) const;

  /// The observer of a walk over this vector (set once, on a fresh vector), or nullptr.
  SequenceObserver* observer() const { return observer_.get(); }
  /// The index in the observed vector of this vector's element 0.
  size_t observedStart() const { return start_ - observedBase_; }
  void observe(std::shared_ptr<SequenceObserver> observer) {
    observer_ = std::move(observer);
    observedBase_ = start_;
  }

private:
  Items items_;
  size_t start_;
  std::shared_ptr<SequenceObserver> observer_;
  size_t observedBase_ = 0;
  Span span_;
  SyntaxOrigin origin_;
};

/// One entry of a map. A removed entry keeps its slot (so later ones keep their
/// positions) with the internal recur marker as its key, until the map is compacted.
struct MapEntry {
  Value first;
  Value second;
  bool removed() const { return first.isRecur(); }
};

class MapObj final : public Object {
public:
  using Entries = PersistentVector<MapEntry>;

  MapObj() : Object(ValueKind::Map) {}
  /// A map of `entries` in order; a repeated key keeps its first position and last value.
  explicit MapObj(std::vector<std::pair<Value, Value>> entries, Span span = {});

  /// The live entries in insertion order (begin, end, size); entries are `[key, value]`
  /// structs, so `for (const auto& [k, v] : map.entries())` works.
  struct Range {
    class iterator {
    public:
      using iterator_category = std::forward_iterator_tag;
      using value_type = MapEntry;
      using difference_type = std::ptrdiff_t;
      using pointer = const MapEntry*;
      using reference = const MapEntry&;
      iterator(Entries::const_iterator at, Entries::const_iterator end) : at_(at), end_(end) { skip(); }
      reference operator*() const { return *at_; }
      pointer operator->() const { return &*at_; }
      iterator& operator++() {
        ++at_;
        skip();
        return *this;
      }
      bool operator==(const iterator& other) const { return at_ == other.at_; }
      bool operator!=(const iterator& other) const { return at_ != other.at_; }

    private:
      void skip() {
        while (at_ != end_ && at_->removed()) ++at_;
      }
      Entries::const_iterator at_, end_;
    };
    const MapObj* map;
    iterator begin() const { return iterator(map->entries_.begin(), map->entries_.end()); }
    iterator end() const { return iterator(map->entries_.end(), map->entries_.end()); }
    size_t size() const { return map->live_; }
  };
  Range entries() const { return {this}; }
  size_t count() const { return live_; }
  /// The value at `key`, or nullptr: O(1) for small maps, O(log32 n) through the index.
  const Value* find(const Value& key) const;
  /// Whether the value at `key` (present) is reachable through this map object alone.
  bool holdsAlone(const Value& key) const;
  /// A new map with `key` set (keeping its position if present, else appended).
  Value assoc(const Value& key, Value value) const;
  Value dissoc(const Value& key) const;
  const Span& span() const { return span_; }
  const SyntaxOrigin& origin() const { return origin_; }
  void setOrigin(SyntaxOrigin origin) { origin_ = std::move(origin); }

  /// Maps up to this size are searched linearly and have no index.
  static constexpr size_t kLinearLimit = 8;

private:
  /// The position of `key` among the entries (removed ones included).
  std::optional<size_t> position(const Value& key, uint64_t hash) const;
  /// Makes this (fresh) map's index cover every entry, or none while it is small.
  void reindex();

  Entries entries_;
  HashIndex index_; ///< empty while live_ <= kLinearLimit
  size_t live_ = 0;
  Span span_;
  SyntaxOrigin origin_;
};

namespace ir {
class Value;
}
class Tracer;

/// A tensor inside a function being lowered to IR (eval/Tracer.h): an IR value.
class TracedObj final : public Object {
public:
  TracedObj(ir::Value* value, Tracer* tracer, std::shared_ptr<const bool> alive, bool batched = false)
      : Object(ValueKind::Internal), value_(value), tracer_(tracer), alive_(std::move(alive)), batched_(batched) {}
  /// Batched by vmap (eval/Batching.cpp): the IR value holds one example per row of its
  /// first axis; the program sees one example (tracedType gives its type).
  bool batched() const { return batched_; }
  /// Whether the compilation it belongs to is still going on.
  bool alive() const { return *alive_; }
  /// Both throw a type error once the compilation is over (a traced value that escaped).
  ir::Value* value() const {
    checkAlive();
    return value_;
  }
  Tracer* tracer() const {
    checkAlive();
    return tracer_;
  }

private:
  void checkAlive() const {
    if (!*alive_)
      fail(ErrorKind::Type, "jit: a traced value escaped the function being compiled (was it stored in a "
                            "global or an atom while compiling?)");
  }
  ir::Value* value_;
  Tracer* tracer_;
  std::shared_ptr<const bool> alive_;
  bool batched_;
};

/// Whether `v` is a tensor inside a function being compiled (a TracedObj: the embedding
/// API's ValueKind::Internal, which no host is ever given).
inline bool isTraced(const Value& v) { return v.kind() == ValueKind::Internal; }
/// A tensor now, or a tensor being compiled (known when the compiled code runs).
inline bool isTensorLike(const Value& v) { return v.isTensor() || isTraced(v); }
/// The traced tensor `v` is (an internal error for anything else).
const TracedObj& traced(const Value& v);

class Evaluator;
struct Lambda;

/// What a builtin needs to know about the call it serves.
struct CallContext {
  Evaluator& evaluator;
  const Span& span;       ///< the call form
  const FunctionObj& self; ///< the builtin being called (for messages)
};

using BuiltinFn = std::function<Value(CallContext&, Args)>;

class FunctionObj : public Object {
public:
  enum class Kind : uint8_t { Builtin, Closure };
  Kind functionKind() const { return functionKind_; }
  bool isMacro() const { return macro_; }
  const std::string& name() const { return name_; }

protected:
  FunctionObj(Kind kind, std::string name, bool macro)
      : Object(ValueKind::Function), functionKind_(kind), macro_(macro), name_(std::move(name)) {}

private:
  Kind functionKind_;
  bool macro_;
  std::string name_;
};

/// What a builtin made at run time keeps (a jit function's compiled versions).
class BuiltinState {
public:
  virtual ~BuiltinState() = default;
};

class BuiltinObj final : public FunctionObj {
public:
  /// The same meaning as a two-argument call, as a plain function: the analyzer calls it
  /// directly for (op a b), skipping argument packing (it matters for scalar loops).
  using BinaryFn = Value (*)(const Value&, const Value&, const Span&);

  /// `maxArgs` < 0 means variadic.
  BuiltinObj(std::string name, int minArgs, int maxArgs, BuiltinFn fn, bool macro = false)
      : FunctionObj(Kind::Builtin, std::move(name), macro), minArgs_(minArgs), maxArgs_(maxArgs),
        fn_(std::move(fn)) {}
  int minArgs() const { return minArgs_; }
  int maxArgs() const { return maxArgs_; }
  const BuiltinFn& fn() const { return fn_; }
  BinaryFn binaryFn() const { return binaryFn_; }
  void setBinaryFn(BinaryFn fn) { binaryFn_ = fn; }
  /// Whether calling it does more than compute a value (printing, files, the clock): a
  /// function that does is not pure, and compiling it runs those effects once.
  bool effectful() const { return effectful_; }
  void setEffectful() { effectful_ = true; }
  BuiltinState* state() const { return state_.get(); }
  void setState(std::shared_ptr<BuiltinState> state) { state_ = std::move(state); }

private:
  int minArgs_;
  int maxArgs_;
  BuiltinFn fn_;
  BinaryFn binaryFn_ = nullptr;
  bool effectful_ = false;
  std::shared_ptr<BuiltinState> state_;
};

class ClosureObj final : public FunctionObj {
public:
  ClosureObj(std::shared_ptr<const Lambda> lambda, std::vector<Value> captures, bool macro);
  const std::shared_ptr<const Lambda>& lambda() const { return lambda_; }
  const std::vector<Value>& captures() const { return captures_; }

private:
  std::shared_ptr<const Lambda> lambda_;
  std::vector<Value> captures_;
};

} // namespace tsl
