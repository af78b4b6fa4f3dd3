// eval/Value.cpp — value lifetime, heap objects, equality and sequences.
#include "eval/Value.h"

#include "eval/Nodes.h"
#include "eval/Tracer.h"
#include "runtime/Views.h"
#include "tsl/StackGuard.h"

#include <mutex>
#include <unordered_map>
#include <unordered_set>

namespace tsl {

// ---- Lifetime ----

void Object::destroy(const Object* object) {
  static thread_local std::vector<const Object*>* pending = nullptr;
  if (pending) {
    pending->push_back(object);
    return;
  }
  std::vector<const Object*> queue{object};
  pending = &queue;
  while (!queue.empty()) {
    const Object* next = queue.back();
    queue.pop_back();
    delete next; // may queue the objects it held
  }
  pending = nullptr;
}

const StringObj& Value::string() const { return *static_cast<const StringObj*>(object_); }
const KeywordObj& Value::keyword() const { return *static_cast<const KeywordObj*>(object_); }
const SymbolObj& Value::symbol() const { return *static_cast<const SymbolObj*>(object_); }
const ListObj* Value::list() const { return static_cast<const ListObj*>(object_); }
const VectorObj& Value::vector() const { return *static_cast<const VectorObj*>(object_); }
const MapObj& Value::map() const { return *static_cast<const MapObj*>(object_); }
const FunctionObj& Value::function() const { return *static_cast<const FunctionObj*>(object_); }
const TracedObj& Value::traced() const { return *static_cast<const TracedObj*>(object_); }

bool Value::isNonScalarTensor() const {
  if (isTensor()) return !tensor_.isScalar();
  return isTraced() && tracedType(*this).rank() > 0;
}

bool Value::truthySlow() const {
  if (kind_ == ValueKind::Nil) return false;
  if (kind_ == ValueKind::Traced) {
    const ir::Type& type = tracedType(*this);
    if (type.rank() != 0) fail(ErrorKind::Type, "a condition must be a scalar, got a traced tensor of type ", type.str());
    if (type.dtype != DType::Bool) return true; // a number is true, whatever its value (§3)
    fail(ErrorKind::Type, "jit: the truth of a traced boolean is known only when the code runs; "
                          "use it as the condition of if, when, cond, and, or, or use where");
  }
  if (kind_ != ValueKind::Tensor) return true;
  if (!tensor_.isScalar())
    fail(ErrorKind::Type, "a condition must be a scalar, got a tensor of type ", dtypeName(tensor_.dtype()),
         tensor_.shape().str());
  return !isBool(tensor_.dtype()) || tensor_.isNonZero();
}

// ---- Interned names ----

const KeywordObj* KeywordObj::intern(std::string_view name) {
  // Keywords live for the process; the table is never destroyed, so they stay reachable.
  static std::mutex mutex;
  static auto* table = new std::unordered_map<std::string, const KeywordObj*>();
  std::lock_guard<std::mutex> lock(mutex);
  auto it = table->find(std::string(name));
  if (it != table->end()) return it->second;
  auto* keyword = new KeywordObj(std::string(name));
  table->emplace(std::string(name), keyword);
  return keyword;
}

const std::string* SymbolObj::internName(std::string_view name) {
  static std::mutex mutex;
  static auto* names = new std::unordered_set<std::string>();
  std::lock_guard<std::mutex> lock(mutex);
  return &*names->emplace(name).first;
}

// ---- Lists, vectors, maps ----

ListObj::ListObj(Value head, Value tail, Span span)
    : Object(ValueKind::List), head_(std::move(head)), tail_(std::move(tail)), span_(span) {
  count_ = 1 + (tail_.list() ? tail_.list()->count() : 0);
}

VectorObj::VectorObj(std::vector<Value> items, Span span)
    : Object(ValueKind::Vector), buffer_(std::make_shared<VectorBuffer>()), start_(0),
      count_(items.size()), span_(span) {
  buffer_->items = std::move(items);
}

Value VectorObj::conj(Value value) const {
  if (start_ + count_ == buffer_->items.size()) {
    // This vector is the newest view of its buffer: append in place. Older, shorter
    // views never look past their own count, so they are unaffected.
    buffer_->items.push_back(std::move(value));
    return Value(new VectorObj(buffer_, start_, count_ + 1));
  }
  std::vector<Value> items(buffer_->items.begin() + start_, buffer_->items.begin() + start_ + count_);
  items.push_back(std::move(value));
  return Value(new VectorObj(std::move(items)));
}

Value VectorObj::drop(size_t from) const {
  if (from >= count_) return Value(new VectorObj(std::vector<Value>{}));
  return Value(new VectorObj(buffer_, start_ + from, count_ - from));
}

const Value* MapObj::find(const Value& key) const {
  for (const auto& [k, v] : entries_) {
    if (k.kind() == key.kind() && k.object() == key.object() && !key.isTensor()) return &v;
    if (valuesEqual(k, key)) return &v;
  }
  return nullptr;
}

Value MapObj::assoc(const Value& key, Value value) const {
  std::vector<std::pair<Value, Value>> entries = entries_;
  for (auto& [k, v] : entries) {
    if (valuesEqual(k, key)) {
      v = std::move(value);
      return Value(new MapObj(std::move(entries)));
    }
  }
  entries.emplace_back(key, std::move(value));
  return Value(new MapObj(std::move(entries)));
}

Value MapObj::dissoc(const Value& key) const {
  std::vector<std::pair<Value, Value>> entries;
  entries.reserve(entries_.size());
  for (const auto& entry : entries_)
    if (!valuesEqual(entry.first, key)) entries.push_back(entry);
  return Value(new MapObj(std::move(entries)));
}

ClosureObj::ClosureObj(std::shared_ptr<const Lambda> lambda, std::vector<Value> captures, bool macro)
    : FunctionObj(Kind::Closure, lambda->name, macro), lambda_(std::move(lambda)),
      captures_(std::move(captures)) {}

// ---- Constructors ----

Value makeString(std::string text) { return Value(new StringObj(std::move(text))); }
Value makeKeyword(std::string_view name) { return Value(KeywordObj::intern(name)); }
Value makeSymbol(std::string_view name, Span span) {
  return Value(new SymbolObj(SymbolObj::internName(name), span));
}

Value makeList(std::span<const Value> items, Span span) {
  Value result = Value::emptyList();
  for (size_t i = items.size(); i-- > 0;)
    result = Value(new ListObj(items[i], std::move(result), i == 0 ? span : Span{}));
  return result;
}

Value makeVector(std::vector<Value> items, Span span) { return Value(new VectorObj(std::move(items), span)); }

Value makeMap(std::vector<std::pair<Value, Value>> entries, Span span) {
  return Value(new MapObj(std::move(entries), span));
}

// ---- Equality and sequences ----

namespace {

/// Element-by-element equality of two tensors of equal dtype and shape.
bool tensorsEqual(const Tensor& a, const Tensor& b) {
  if (a.isScalar() && b.isScalar()) {
    const Tensor x = a.strengthened(), y = b.strengthened();
    if (x.dtype() != y.dtype()) return false;
    return tensorElementsEqual(x, y);
  }
  if (a.dtype() != b.dtype() || !(a.shape() == b.shape())) return false;
  return tensorElementsEqual(a, b);
}

} // namespace

bool valuesEqual(const Value& a, const Value& b) {
  checkStack();
  if (a.isTraced() || b.isTraced())
    fail(ErrorKind::Type, "jit: = compares values, and a traced tensor has none until the compiled code runs "
                          "(use == for an elementwise comparison)");
  if (a.kind() == b.kind() && !a.isTensor() && a.object() == b.object()) return true; // identical
  if (a.isSequential() && b.isSequential()) {
    if (sequenceCount(a) != sequenceCount(b)) return false;
    if (a.isVector() && b.isVector()) {
      for (size_t i = 0; i < a.vector().count(); ++i)
        if (!valuesEqual(a.vector()[i], b.vector()[i])) return false;
      return true;
    }
    const std::vector<Value> x = sequenceItems(a), y = sequenceItems(b);
    for (size_t i = 0; i < x.size(); ++i)
      if (!valuesEqual(x[i], y[i])) return false;
    return true;
  }
  if (a.kind() != b.kind()) return false;
  switch (a.kind()) {
  case ValueKind::Nil:
  case ValueKind::Recur: return true;
  case ValueKind::Tensor: return tensorsEqual(a.tensor(), b.tensor());
  case ValueKind::String: return a.string().text() == b.string().text();
  case ValueKind::Keyword: return a.object() == b.object();
  case ValueKind::Symbol: return a.symbol().internedName() == b.symbol().internedName();
  case ValueKind::Map: {
    if (a.map().count() != b.map().count()) return false;
    for (const auto& [key, value] : a.map().entries()) {
      const Value* other = b.map().find(key);
      if (!other || !valuesEqual(value, *other)) return false;
    }
    return true;
  }
  case ValueKind::Function: return a.object() == b.object();
  default: return false;
  }
}

int64_t sequenceCount(const Value& v) {
  switch (v.kind()) {
  case ValueKind::Traced: return tracedLength(v);
  case ValueKind::Nil: return 0;
  case ValueKind::List: return v.list() ? v.list()->count() : 0;
  case ValueKind::Vector: return static_cast<int64_t>(v.vector().count());
  case ValueKind::Map: return static_cast<int64_t>(v.map().count());
  case ValueKind::String: {
    int64_t n = 0; // code points
    for (char c : v.string().text()) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
    return n;
  }
  case ValueKind::Tensor:
    if (v.tensor().isScalar()) fail(ErrorKind::Type, "a scalar is not a sequence");
    return v.tensor().shape()[0];
  default: fail(ErrorKind::Type, describeKind(v), " is not a sequence");
  }
}

std::vector<Value> sequenceItems(const Value& v) {
  std::vector<Value> out;
  switch (v.kind()) {
  case ValueKind::Traced: return tracedRows(v);
  case ValueKind::Nil: break;
  case ValueKind::List:
    out.reserve(static_cast<size_t>(sequenceCount(v)));
    for (const ListObj* cell = v.list(); cell; cell = cell->next()) out.push_back(cell->first());
    break;
  case ValueKind::Vector: {
    auto items = v.vector().items();
    out.assign(items.begin(), items.end());
    break;
  }
  case ValueKind::Map:
    for (const auto& [key, value] : v.map().entries()) out.push_back(makeVector({key, value}));
    break;
  case ValueKind::String: {
    // One string per code point.
    const std::string& text = v.string().text();
    for (size_t i = 0; i < text.size();) {
      size_t end = i + 1;
      while (end < text.size() && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) ++end;
      out.push_back(makeString(text.substr(i, end - i)));
      i = end;
    }
    break;
  }
  case ValueKind::Tensor: {
    const int64_t n = sequenceCount(v);
    out.reserve(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) out.push_back(Value(selectIndex(v.tensor(), 0, i)));
    break;
  }
  default: fail(ErrorKind::Type, describeKind(v), " is not a sequence");
  }
  return out;
}

std::string describeKind(const Value& v) {
  switch (v.kind()) {
  case ValueKind::Nil: return "nil";
  case ValueKind::Tensor: {
    const Tensor& t = v.tensor();
    if (t.isScalar()) return cat(t.weak() ? (isFloat(t.dtype()) ? "float" : "integer") : dtypeName(t.dtype()), " scalar");
    return cat(dtypeName(t.dtype()), t.shape().str(), " tensor");
  }
  case ValueKind::String: return "string";
  case ValueKind::Keyword: return "keyword";
  case ValueKind::Symbol: return "symbol";
  case ValueKind::List: return "list";
  case ValueKind::Vector: return "vector";
  case ValueKind::Map: return "map";
  case ValueKind::Function: return v.function().isMacro() ? "macro" : "function";
  case ValueKind::Recur: return "recur";
  case ValueKind::Traced: return v.traced().alive() ? cat("traced ", tracedTypeName(v), " tensor") : "escaped traced tensor";
  }
  return "value";
}

} // namespace tsl
