// tsl/Value.h — what TSL computes with, as a host sees it (part of the embedding API).
//
// A Value is a tagged union of 24 bytes: nil, a Tensor (every number and boolean is a
// rank-0 tensor, held inline), or a counted reference to a heap object — string, keyword,
// symbol, list, vector, map or function. Values are immutable and cheap to copy. Their
// reference counts are not atomic: a Value belongs to one engine, used from one thread at
// a time (tsl/tsl.h). Hosts make values with the constructors below (a Tensor converts
// implicitly), look at them with kind(), tensor() and sequenceItems(), and print them with
// Engine::print.
#pragma once

#include "tsl/Error.h"
#include "tsl/Tensor.h"

#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <utility>
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
  Recur,  ///< internal: the result of `recur`, consumed by the enclosing loop or fn; a
          ///< host that passes one to TSL gets a type error
  Internal, ///< the engine's own: a tensor inside a function being compiled, known only by
            ///< its type; never given to a host (a native function called with one while
            ///< jit compiles is a type error)
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
  /// Internal: what `recur` returns to its loop. An engine refuses one from its host
  /// (as a native function's result, an argument, a definition, an element).
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
  /// A tensor (or, inside the engine, a compiled one) of rank 1 or more: sequence functions
  /// walk its first axis.
  bool isNonScalarTensor() const;
  /// A list or vector (what sequence functions and destructuring walk, besides tensors).
  bool isSequential() const { return isList() || isVector(); }

  /// The value as each kind; a type error naming both kinds if it is another kind (the
  /// empty list is a List whose list() is nullptr).
  const Tensor& tensor() const {
    if (kind_ != ValueKind::Tensor) [[unlikely]]
      wrongKind(ValueKind::Tensor);
    return tensor_;
  }
  const StringObj& string() const;
  const KeywordObj& keyword() const;
  const SymbolObj& symbol() const;
  /// The list's first cell; nullptr for the empty list.
  const ListObj* list() const;
  const VectorObj& vector() const;
  const MapObj& map() const;
  const FunctionObj& function() const;
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
  [[noreturn]] void wrongKind(ValueKind wanted) const;
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

/// Arguments of a call, evaluated.
using Args = std::span<const Value>;

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
/// A hash consistent with valuesEqual: equal values hash equally (a tensor of rank >= 1
/// hashes by dtype and shape only).
uint64_t hashValue(const Value& v);

/// Number of elements a sequence function walks: list or vector length, map entries,
/// string characters, a tensor's first axis; nil is empty.
int64_t sequenceCount(const Value& v);
/// The sequence of `v` as values (the first axis of a tensor as views).
std::vector<Value> sequenceItems(const Value& v);

/// Name of the value's kind for messages ("vector", "f32[3] tensor", "string").
std::string describeKind(const Value& v);

} // namespace tsl
