// eval/Value.cpp — value lifetime, heap objects, equality and sequences.
#include "eval/Value.h"

#include "eval/Nodes.h"
#include "eval/Tracer.h"
#include "runtime/Views.h"
#include "tsl/StackGuard.h"

#include <algorithm>
#include <bit>
#include <mutex>
#include <unordered_map>
#include <unordered_set>

namespace tsl {

// ---- Lifetime ----

void Object::destroy(const Object* object) {
  static thread_local std::vector<const Object*>* pending = nullptr;
  if (pending) {
    try {
      pending->push_back(object);
    } catch (const std::bad_alloc&) {
      delete object; // no memory to queue it: free it now, recursing one level deeper
    }
    return;
  }
  std::vector<const Object*> queue; // allocates only if `object` holds others
  pending = &queue;
  delete object; // may queue the objects it held
  while (!queue.empty()) {
    const Object* next = queue.back();
    queue.pop_back();
    delete next; // may queue the objects it held
  }
  pending = nullptr;
}

// The accessors check the kind: a host asking a string for its tensor gets a type error,
// not another object's bytes.
namespace {

const char* kindName(ValueKind kind) {
  switch (kind) {
  case ValueKind::Nil: return "nil";
  case ValueKind::Tensor: return "tensor";
  case ValueKind::String: return "string";
  case ValueKind::Keyword: return "keyword";
  case ValueKind::Symbol: return "symbol";
  case ValueKind::List: return "list";
  case ValueKind::Vector: return "vector";
  case ValueKind::Map: return "map";
  case ValueKind::Function: return "function";
  case ValueKind::Recur: return "recur";
  case ValueKind::Internal: return "traced";
  }
  return "value";
}

} // namespace

void Value::wrongKind(ValueKind wanted) const {
  fail(ErrorKind::Type, "Value::", kindName(wanted), "(): the value is a ", describeKind(*this), ", not a ",
       kindName(wanted));
}

const StringObj& Value::string() const {
  if (kind_ != ValueKind::String) [[unlikely]] wrongKind(ValueKind::String);
  return *static_cast<const StringObj*>(object_);
}
const KeywordObj& Value::keyword() const {
  if (kind_ != ValueKind::Keyword) [[unlikely]] wrongKind(ValueKind::Keyword);
  return *static_cast<const KeywordObj*>(object_);
}
const SymbolObj& Value::symbol() const {
  if (kind_ != ValueKind::Symbol) [[unlikely]] wrongKind(ValueKind::Symbol);
  return *static_cast<const SymbolObj*>(object_);
}
const ListObj* Value::list() const {
  if (kind_ != ValueKind::List) [[unlikely]] wrongKind(ValueKind::List);
  return static_cast<const ListObj*>(object_);
}
const VectorObj& Value::vector() const {
  if (kind_ != ValueKind::Vector) [[unlikely]] wrongKind(ValueKind::Vector);
  return *static_cast<const VectorObj*>(object_);
}
const MapObj& Value::map() const {
  if (kind_ != ValueKind::Map) [[unlikely]] wrongKind(ValueKind::Map);
  return *static_cast<const MapObj*>(object_);
}
const FunctionObj& Value::function() const {
  if (kind_ != ValueKind::Function) [[unlikely]] wrongKind(ValueKind::Function);
  return *static_cast<const FunctionObj*>(object_);
}
const TracedObj& traced(const Value& v) {
  if (!isTraced(v)) [[unlikely]]
    fail(ErrorKind::Internal, "a ", describeKind(v), " where a value being compiled was expected");
  return *static_cast<const TracedObj*>(v.object());
}

bool Value::isNonScalarTensor() const {
  if (isTensor()) return !tensor_.isScalar();
  return isTraced(*this) && tracedType(*this).rank() > 0;
}

bool Value::truthySlow() const {
  if (kind_ == ValueKind::Nil) return false;
  if (kind_ == ValueKind::Internal) {
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
    : Object(ValueKind::Vector), items_(Items::fromVector(std::move(items))), start_(0), span_(span) {}

std::vector<Value> VectorObj::toStdVector() const {
  std::vector<Value> out;
  out.reserve(count());
  items_.forEach(start_, [&](const Value& v) { out.push_back(v); });
  return out;
}

Value VectorObj::conj(Value value) const { return Value(new VectorObj(items_.push_back(std::move(value)), start_)); }

Value VectorObj::assoc(size_t i, Value value) const {
  return Value(new VectorObj(items_.set(start_ + i, std::move(value)), start_));
}

Value VectorObj::drop(size_t from) const {
  const bool all = from >= count();
  auto* out = all ? new VectorObj(Items()) : new VectorObj(items_, start_ + from);
  if (observer_) {
    const size_t done = observedStart() + std::min(from, count());
    out->observer_ = observer_;
    out->observedBase_ = out->start_ - done;
    observer_->reached(done);
  }
  return Value(out);
}

MapObj::MapObj(std::vector<std::pair<Value, Value>> entries, Span span) : Object(ValueKind::Map), span_(span) {
  std::vector<MapEntry> unique;
  unique.reserve(entries.size());
  if (entries.size() <= kLinearLimit) {
    for (auto& [key, value] : entries) {
      auto same = std::find_if(unique.begin(), unique.end(), [&](const MapEntry& e) { return valuesEqual(e.first, key); });
      if (same != unique.end()) same->second = std::move(value);
      else unique.push_back({std::move(key), std::move(value)});
    }
    live_ = unique.size();
    entries_ = Entries::fromVector(std::move(unique));
    return;
  }
  for (auto& [key, value] : entries) {
    const uint64_t hash = hashValue(key);
    auto found = index_.find(hash, [&](uint32_t at) { return valuesEqual(unique[at].first, key); });
    if (found) {
      unique[*found].second = std::move(value);
      continue;
    }
    index_ = index_.insert(hash, static_cast<uint32_t>(unique.size()));
    unique.push_back({std::move(key), std::move(value)});
  }
  live_ = unique.size();
  entries_ = Entries::fromVector(std::move(unique));
  if (live_ <= kLinearLimit) index_ = HashIndex();
}

std::optional<size_t> MapObj::position(const Value& key, uint64_t hash) const {
  if (index_.empty()) {
    // Small: a linear scan, trying identity first (keywords are interned).
    size_t at = 0;
    std::optional<size_t> found;
    for (auto it = entries_.begin(); it != entries_.end(); ++it, ++at) {
      const MapEntry& e = *it;
      if (e.removed()) continue;
      if ((e.first.kind() == key.kind() && e.first.object() == key.object() && !key.isTensor()) ||
          valuesEqual(e.first, key)) {
        found = at;
        break;
      }
    }
    return found;
  }
  // The index may hold entries of other versions of this map (eval/HashIndex.h): only
  // a position whose entry here holds the key counts.
  auto found = index_.find(hash, [&](uint32_t at) {
    return at < entries_.size() && valuesEqual(entries_[at].first, key);
  });
  if (!found) return std::nullopt;
  return *found;
}

/// Keys of small maps are compared without hashing; hashValue is only computed when
/// an index exists (or is about to).
const Value* MapObj::find(const Value& key) const {
  const auto at = position(key, index_.empty() ? 0 : hashValue(key));
  return at ? &entries_[*at].second : nullptr;
}

bool MapObj::holdsAlone(const Value& key) const {
  const auto at = position(key, index_.empty() ? 0 : hashValue(key));
  return at && entries_.holdsAlone(*at);
}

void MapObj::reindex() {
  index_ = HashIndex();
  if (live_ <= kLinearLimit) return;
  uint32_t at = 0;
  for (auto it = entries_.begin(); it != entries_.end(); ++it, ++at)
    if (!it->removed()) index_ = index_.insert(hashValue(it->first), at);
}

Value MapObj::assoc(const Value& key, Value value) const {
  if (entries_.size() >= UINT32_MAX) fail(ErrorKind::Value, "a map cannot hold more than 2^32 entries");
  const bool indexed = !index_.empty();
  const uint64_t hash = indexed || live_ + 1 > kLinearLimit ? hashValue(key) : 0;
  auto* out = new MapObj();
  Value result(out);
  out->live_ = live_;
  std::optional<size_t> present;
  if (indexed) {
    // One walk finds the key or adds its position (eval/HashIndex.h).
    const auto found = index_.findOrInsert(hash, static_cast<uint32_t>(entries_.size()), [&](uint32_t at) {
      return at < entries_.size() && valuesEqual(entries_[at].first, key);
    }, out->index_);
    if (found) present = *found;
  } else {
    present = position(key, hash);
  }
  if (const auto at = present) {
    // Present: the key keeps its place (and its first spelling); the index is shared.
    out->entries_ = entries_.set(*at, MapEntry{entries_[*at].first, std::move(value)});
    out->index_ = index_;
    return result;
  }
  out->entries_ = entries_.push_back(MapEntry{key, std::move(value)});
  ++out->live_;
  if (!indexed && out->live_ > kLinearLimit) out->reindex();
  return result;
}

Value MapObj::dissoc(const Value& key) const {
  const bool indexed = !index_.empty();
  const uint64_t hash = indexed ? hashValue(key) : 0;
  const auto at = position(key, hash);
  if (!at) return Value(this);
  auto* out = new MapObj();
  Value result(out);
  out->live_ = live_ - 1;
  const size_t removed = entries_.size() - live_ + 1;
  if (!indexed || removed > out->live_ + 32) {
    // Small maps, and maps mostly made of removed slots, are rebuilt without them.
    std::vector<MapEntry> kept;
    kept.reserve(out->live_);
    size_t i = 0;
    for (auto it = entries_.begin(); it != entries_.end(); ++it, ++i)
      if (!it->removed() && i != *at) kept.push_back(*it);
    out->entries_ = Entries::fromVector(std::move(kept));
    out->reindex();
    return result;
  }
  // The index keeps pointing at the removed slot: the slot's key no longer matches any
  // key, so lookups skip it, and the next compaction rebuilds the index without it.
  out->entries_ = entries_.set(*at, MapEntry{Value::recurMarker(), Value()});
  out->index_ = index_;
  if (out->live_ <= kLinearLimit) out->reindex(); // small again: drop the index
  return result;
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

namespace {

/// The recur marker is the loop's private signal; inside a collection a host made, it
/// would reach a loop as a recur that rebound nothing.
void rejectRecurMarker(const Value& v, const char* who) {
  if (v.isRecur()) fail(ErrorKind::Type, who, ": an element is the internal recur marker, which only recur makes");
}

} // namespace

Value makeList(std::span<const Value> items, Span span) {
  for (const Value& item : items) rejectRecurMarker(item, "makeList");
  Value result = Value::emptyList();
  for (size_t i = items.size(); i-- > 0;)
    result = Value(new ListObj(items[i], std::move(result), i == 0 ? span : Span{}));
  return result;
}

Value makeVector(std::vector<Value> items, Span span) {
  for (const Value& item : items) rejectRecurMarker(item, "makeVector");
  return Value(new VectorObj(std::move(items), span));
}

Value makeMap(std::vector<std::pair<Value, Value>> entries, Span span) {
  for (const auto& [key, value] : entries) {
    rejectRecurMarker(key, "makeMap");
    rejectRecurMarker(value, "makeMap");
  }
  if (entries.empty() && !span.known()) return Value(new MapObj());
  return Value(new MapObj(std::move(entries), span));
}

// ---- Equality and sequences ----

namespace {

/// Element-by-element equality of two tensors of equal dtype and shape.
bool tensorsEqual(const Tensor& a, const Tensor& b) {
  if (a.isScalar() && b.isScalar()) {
    const Tensor x = a.strengthened(), y = b.strengthened();
    if (x.dtype() != y.dtype()) return false;
    // Exact in double (floats) or int64 (integers and bools), with == semantics.
    return isFloat(x.dtype()) ? x.toDouble() == y.toDouble() : x.toInt() == y.toInt();
  }
  if (a.dtype() != b.dtype() || !(a.shape() == b.shape())) return false;
  return tensorElementsEqual(a, b);
}

} // namespace

bool valuesEqual(const Value& a, const Value& b) {
  checkStack();
  if (isTraced(a) || isTraced(b))
    fail(ErrorKind::Type, "jit: = compares values, and a traced tensor has none until the compiled code runs "
                          "(use == for an elementwise comparison)");
  if (a.kind() == b.kind() && !a.isTensor() && a.object() == b.object()) return true; // identical
  if (a.isSequential() && b.isSequential()) {
    if (sequenceCount(a) != sequenceCount(b)) return false;
    if (a.isVector() && b.isVector()) {
      const auto x = a.vector().items(), y = b.vector().items();
      return std::equal(x.begin(), x.end(), y.begin(), [](const Value& p, const Value& q) { return valuesEqual(p, q); });
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

namespace {

/// Mixes a word into a hash (the finaliser of MurmurHash3, over the running sum).
uint64_t mix(uint64_t h, uint64_t x) {
  h ^= x + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdULL;
  h ^= h >> 33;
  return h;
}

uint64_t hashTensor(const Tensor& t) {
  if (!t.isScalar()) {
    // Dtype and shape only: equal tensors agree on them, and reading every element of a
    // large key would make each lookup cost its size.
    uint64_t h = mix(0x7e5, static_cast<uint64_t>(t.dtype()));
    for (int64_t d : t.shape().dims()) h = mix(h, static_cast<uint64_t>(d));
    return h;
  }
  const Tensor x = t.strengthened();
  uint64_t bits;
  if (isFloat(x.dtype())) {
    double d = x.toDouble();
    if (d == 0) d = 0; // -0.0 == 0.0
    bits = std::bit_cast<uint64_t>(d);
  } else {
    bits = static_cast<uint64_t>(x.toInt());
  }
  return mix(mix(0x5ca1a7, static_cast<uint64_t>(x.dtype())), bits);
}

} // namespace

uint64_t hashValue(const Value& v) {
  checkStack();
  switch (v.kind()) {
  case ValueKind::Nil: return 0x6e11;
  case ValueKind::Recur: return 0x7ec;
  case ValueKind::Tensor: return hashTensor(v.tensor());
  case ValueKind::String: return mix(0x57, std::hash<std::string_view>()(v.string().text()));
  case ValueKind::Keyword:
  case ValueKind::Function: return mix(static_cast<uint64_t>(v.kind()), reinterpret_cast<uintptr_t>(v.object()));
  case ValueKind::Symbol: return mix(0x5b, reinterpret_cast<uintptr_t>(v.symbol().internedName()));
  case ValueKind::List:
  case ValueKind::Vector: {
    // Lists and vectors with equal elements are equal, so they hash alike.
    uint64_t h = 0x5e9;
    if (v.isVector()) {
      for (const Value& item : v.vector().items()) h = mix(h, hashValue(item));
    } else {
      for (const ListObj* cell = v.list(); cell; cell = cell->next()) h = mix(h, hashValue(cell->first()));
    }
    return h;
  }
  case ValueKind::Map: {
    uint64_t h = 0x3a9; // a sum: independent of order, as map equality is
    for (const auto& [key, value] : v.map().entries()) h += mix(hashValue(key), hashValue(value));
    return mix(h, v.map().count());
  }
  case ValueKind::Internal:
    fail(ErrorKind::Type, "jit: a traced tensor cannot be a map key: it has no value until the compiled code runs");
  }
  return 0;
}

int64_t sequenceCount(const Value& v) {
  switch (v.kind()) {
  case ValueKind::Internal: return tracedLength(v);
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
  case ValueKind::Internal: return tracedRows(v);
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
  case ValueKind::Internal: return traced(v).alive() ? cat("traced ", tracedTypeName(v), " tensor") : "escaped traced tensor";
  }
  return "value";
}

} // namespace tsl
