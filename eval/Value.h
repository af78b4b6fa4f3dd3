// eval/Value.h — the values a TSL program computes with.
//
// A Value is a tagged union of 24 bytes: nil, a Tensor (every number and boolean is a
// rank-0 tensor, held inline), or a reference to a heap object — string, keyword, symbol,
// list, vector, map or function. Values are immutable. Heap objects are counted with a
// plain (non-atomic) count: a Value belongs to one engine, which runs on one thread.
//
// Lists are persistent cons cells (cons and rest are O(1)). Vectors share a growable
// buffer: `conj` onto the newest vector of a buffer appends in place, so building a
// vector in a loop is linear; `rest` is a view. Maps keep insertion order. Lists, vectors,
// maps and symbols read from source remember their span, so code that passes through a
// macro still points at the user's text.
#pragma once

#include "runtime/Tensor.h"
#include "tsl/Error.h"

#include <cstring>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace tsl {

enum class ValueKind : uint8_t {
  Nil = 0,
  Tensor,
  String,
  Keyword,
  Symbol,
  List,
  Vector,
  Map,
  Function,
  Recur,  ///< internal: the result of `recur`, consumed by the enclosing loop or fn
  Traced, ///< a tensor being lowered to IR: known only by its type until the code runs
};

/// Base of every heap object a Value can point at.
class Object {
public:
  explicit Object(ValueKind kind) : kind_(kind) {}
  virtual ~Object() = default;
  Object(const Object&) = delete;
  Object& operator=(const Object&) = delete;

  ValueKind kind() const { return kind_; }
  void retain() const { ++refs_; }
  void release() const {
    if (--refs_ == 0) destroy(this);
  }
  bool unique() const { return refs_ == 1; }

private:
  /// Deletes iteratively: objects freed while another is being freed wait in a queue, so
  /// a million-cell list or a deeply nested vector never recurses on the native stack.
  static void destroy(const Object* object);

  ValueKind kind_;
  mutable uint32_t refs_ = 0;
};

class StringObj;
class KeywordObj;
class SymbolObj;
class ListObj;
class VectorObj;
class MapObj;
class FunctionObj;
class TracedObj;

class Value {
public:
  Value() noexcept : kind_(ValueKind::Nil), object_(nullptr) {}
  Value(Tensor t) noexcept : kind_(ValueKind::Tensor) { new (&tensor_) Tensor(std::move(t)); } // NOLINT
  /// Takes a reference to `object` (which may be fresh, with no references yet).
  explicit Value(const Object* object) noexcept : kind_(object->kind()), object_(object) {
    if (!immortal()) object_->retain();
  }
  Value(const Value& other) noexcept : kind_(other.kind_) {
    if (kind_ == ValueKind::Tensor) {
      new (&tensor_) Tensor(other.tensor_);
    } else {
      object_ = other.object_;
      if (object_ && !immortal()) object_->retain();
    }
  }
  /// Moves by relocating the bytes (a Tensor holds a plain pointer or an inline number,
  /// so it may be moved that way); the source is left nil.
  Value(Value&& other) noexcept {
    std::memcpy(static_cast<void*>(this), static_cast<const void*>(&other), sizeof(Value));
    other.kind_ = ValueKind::Nil;
    other.object_ = nullptr;
  }
  Value& operator=(const Value& other) noexcept {
    if (this != &other) {
      Value copy(other);
      *this = std::move(copy);
    }
    return *this;
  }
  Value& operator=(Value&& other) noexcept {
    if (this != &other) {
      reset();
      new (this) Value(std::move(other));
    }
    return *this;
  }
  ~Value() { reset(); }

  static Value nil() { return Value(); }
  static Value boolean(bool b) { return Value(Tensor::ofBool(b)); }
  /// The empty list: a List value without a cell.
  static Value emptyList() {
    Value v;
    v.kind_ = ValueKind::List;
    return v;
  }
  static Value recurMarker() {
    Value v;
    v.kind_ = ValueKind::Recur;
    return v;
  }

  ValueKind kind() const { return kind_; }
  bool isNil() const { return kind_ == ValueKind::Nil; }
  bool isTensor() const { return kind_ == ValueKind::Tensor; }
  bool isString() const { return kind_ == ValueKind::String; }
  bool isKeyword() const { return kind_ == ValueKind::Keyword; }
  bool isSymbol() const { return kind_ == ValueKind::Symbol; }
  bool isList() const { return kind_ == ValueKind::List; }
  bool isVector() const { return kind_ == ValueKind::Vector; }
  bool isMap() const { return kind_ == ValueKind::Map; }
  bool isFunction() const { return kind_ == ValueKind::Function; }
  bool isRecur() const { return kind_ == ValueKind::Recur; }
  bool isTraced() const { return kind_ == ValueKind::Traced; }
  /// A tensor now (isTensor) or when the code being lowered runs (isTraced).
  bool isTensorLike() const { return isTensor() || isTraced(); }
  /// A tensor (or traced tensor) of rank 1 or more: sequence functions walk its first axis.
  bool isNonScalarTensor() const;
  /// A list or vector (what sequence functions and destructuring walk, besides tensors).
  bool isSequential() const { return isList() || isVector(); }

  const Tensor& tensor() const { return tensor_; }
  const StringObj& string() const;
  const KeywordObj& keyword() const;
  const SymbolObj& symbol() const;
  /// The list's first cell; nullptr for the empty list.
  const ListObj* list() const;
  const VectorObj& vector() const;
  const MapObj& map() const;
  const FunctionObj& function() const;
  const TracedObj& traced() const;
  const Object* object() const { return object_; }

  /// Truth as in §3: nil and false (a rank-0 bool holding false) are false; everything
  /// else is true. A tensor condition of rank >= 1 is a type error.
  bool truthy() const {
    if (kind_ == ValueKind::Tensor && tensor_.isScalar() && tensor_.dtype() == DType::Bool)
      return tensor_.scalarValue<bool>();
    return truthySlow();
  }

private:
  bool truthySlow() const;
  /// Keywords are interned for the life of the process and never counted.
  bool immortal() const { return kind_ == ValueKind::Keyword; }
  void reset() noexcept {
    if (kind_ == ValueKind::Tensor) {
      tensor_.~Tensor();
    } else if (object_ && !immortal()) {
      object_->release();
    }
    kind_ = ValueKind::Nil;
    object_ = nullptr;
  }

  ValueKind kind_;
  union {
    Tensor tensor_;
    const Object* object_;
  };
};

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

private:
  Value head_;
  Value tail_;
  int64_t count_;
  Span span_;
};

/// Storage shared by vectors that are prefixes or windows of each other.
struct VectorBuffer {
  std::vector<Value> items;
};

class VectorObj final : public Object {
public:
  VectorObj(std::shared_ptr<VectorBuffer> buffer, size_t start, size_t count, Span span = {})
      : Object(ValueKind::Vector), buffer_(std::move(buffer)), start_(start), count_(count), span_(span) {}
  explicit VectorObj(std::vector<Value> items, Span span = {});

  size_t count() const { return count_; }
  const Value& operator[](size_t i) const { return buffer_->items[start_ + i]; }
  std::span<const Value> items() const { return {buffer_->items.data() + start_, count_}; }
  const Span& span() const { return span_; }

  /// This vector with `value` appended (in place in the shared buffer when this vector
  /// ends where the buffer does).
  Value conj(Value value) const;
  /// Elements [from, count) as a view.
  Value drop(size_t from) const;

private:
  std::shared_ptr<VectorBuffer> buffer_;
  size_t start_;
  size_t count_;
  Span span_;
};

class MapObj final : public Object {
public:
  explicit MapObj(std::vector<std::pair<Value, Value>> entries = {}, Span span = {})
      : Object(ValueKind::Map), entries_(std::move(entries)), span_(span) {}
  const std::vector<std::pair<Value, Value>>& entries() const { return entries_; }
  size_t count() const { return entries_.size(); }
  /// The value at `key`, or nullptr.
  const Value* find(const Value& key) const;
  /// A new map with `key` set (keeping its position if present, else appended).
  Value assoc(const Value& key, Value value) const;
  Value dissoc(const Value& key) const;
  const Span& span() const { return span_; }

private:
  std::vector<std::pair<Value, Value>> entries_;
  Span span_;
};

namespace ir {
class Value;
}
class Tracer;

/// A tensor inside a function being lowered to IR (eval/Tracer.h): an IR value.
class TracedObj final : public Object {
public:
  TracedObj(ir::Value* value, Tracer* tracer, std::shared_ptr<const bool> alive)
      : Object(ValueKind::Traced), value_(value), tracer_(tracer), alive_(std::move(alive)) {}
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
};

class Interp;
struct Lambda;

/// Arguments of a call, evaluated.
using Args = std::span<const Value>;

/// What a builtin needs to know about the call it serves.
struct CallContext {
  Interp& interp;
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

// ---- Constructors and helpers ----

Value makeString(std::string text);
Value makeKeyword(std::string_view name);
Value makeSymbol(std::string_view name, Span span = {});
/// A list of `items` (empty: the empty list).
Value makeList(std::span<const Value> items, Span span = {});
Value makeVector(std::vector<Value> items, Span span = {});
Value makeMap(std::vector<std::pair<Value, Value>> entries, Span span = {});

/// `=`: value equality (tensors equal in dtype, shape and elements; lists equal vectors
/// with the same elements; maps equal regardless of order).
bool valuesEqual(const Value& a, const Value& b);

/// Number of elements a sequence function walks: list or vector length, map entries,
/// string characters, a tensor's first axis; nil is empty.
int64_t sequenceCount(const Value& v);
/// The sequence of `v` as values (the first axis of a tensor as views).
std::vector<Value> sequenceItems(const Value& v);

/// Name of the value's kind for messages ("vector", "f32[3] tensor", "string").
std::string describeKind(const Value& v);

} // namespace tsl
