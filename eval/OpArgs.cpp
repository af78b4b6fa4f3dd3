// eval/OpArgs.cpp — reading a primitive call's arguments: one reader per kind of argument,
// none per operation.
//
// Each row of the operation table names its call form (runtime/CallForms.h): its arguments
// in order, each a tensor operand or an attribute of some kind, positional or a keyword
// option, with its default. readOpCall() applies a form to a call's arguments: splits off
// the keyword options, checks the positional count against the form, reads each attribute
// with the reader of its kind (or its default, read the same way) and lets the row's
// builder make the attributes. Attribute values are read leniently where the language
// invites it: a shape may be an integer, a vector of integers, or an integer tensor
// literal such as [2 3].
#include "eval/OpArgs.h"
#include "eval/Tracer.h"
#include "runtime/CallForms.h"

#include <cstdlib>
#include <variant>

namespace tsl::builtins {

namespace {

std::string shortPrint(const Value& v) {
  std::string text = printValue(v, true);
  return text.size() > 40 ? text.substr(0, 37) + "..." : text;
}

[[noreturn]] void badAttr(const CallContext& cx, std::string_view what, std::string_view expected, const Value& got) {
  if (isTraced(got))
    fail(ErrorKind::Type, "jit: ", cx.self.name(), ": ", what, " must be known when compiling, but it is a ",
         describeKind(got), " (pass it as a static value instead)");
  fail(ErrorKind::Type, cx.self.name(), ": ", what, " must be ", expected, ", got ", describeKind(got),
       got.isNil() ? "" : " " + shortPrint(got));
}



/// Elements of a vector or list argument (e.g. the tensors of concat).
std::vector<const Value*> elements(const CallContext& cx, const Value& v, std::string_view what) {
  std::vector<const Value*> out;
  if (v.isVector()) {
    for (const Value& item : v.vector().items()) out.push_back(&item);
  } else if (v.isList()) {
    for (const ListObj* cell = v.list(); cell; cell = cell->next()) out.push_back(&cell->first());
  } else {
    badAttr(cx, what, "a vector", v);
  }
  return out;
}

/// A pair of integers from an integer or a vector of two (stride, padding, kernel).
std::array<int64_t, 2> readPair(const CallContext& cx, const Value& v, std::string_view what) {
  const std::vector<int64_t> values = readInts(cx, v, what);
  if (values.size() == 1) return {values[0], values[0]};
  if (values.size() == 2) return {values[0], values[1]};
  badAttr(cx, what, "an integer or a pair [h w]", v);
}


/// The dtype a fill value suggests: bool, i64 for integers, f32 for floats, or a strong
/// scalar's own dtype.
DType dtypeOfValue(const Value& v) {
  if (isTraced(v)) {
    const DType d = tracedType(v).dtype;
    return traced(v).tracer()->isWeak(traced(v).value()) ? concreteDType({d, true}) : d;
  }
  const Tensor& t = v.tensor();
  return t.weak() ? concreteDType(t.typeKey()) : t.dtype();
}

std::optional<int64_t> readOptionalInt(const CallContext& cx, const Value& v, std::string_view what) {
  if (v.isNil()) return std::nullopt;
  return readInt(cx, v, what);
}

/// One slice range: nil (whole axis), or [start stop] / [start stop step] with nils open.
SliceRange readRange(const CallContext& cx, const Value& v) {
  if (v.isNil()) return {};
  std::vector<Value> parts;
  if (v.isTensor() && v.tensor().rank() == 1) parts = sequenceItems(v);
  else if (v.isVector() || v.isList()) parts = sequenceItems(v);
  else badAttr(cx, "a slice range", "[start stop] or [start stop step]", v);
  if (parts.size() < 2 || parts.size() > 3) badAttr(cx, "a slice range", "[start stop] or [start stop step]", v);
  SliceRange range;
  range.start = readOptionalInt(cx, parts[0], "a slice start");
  range.stop = readOptionalInt(cx, parts[1], "a slice stop");
  if (parts.size() == 3) range.step = readInt(cx, parts[2], "a slice step");
  return range;
}

/// How errors name an argument: ":axis" for a keyword option, "the shape" for a
/// positional one.
std::string nameOf(const ArgSpec& a) {
  return a.use == ArgUse::Keyword || a.use == ArgUse::RequiredKeyword ? cat(":", a.name) : cat("the ", a.name);
}

/// A layout keyword (:nhwc).
Layout readLayout(const CallContext& cx, const Value& v, const ArgSpec& a) {
  if (!v.isKeyword()) badAttr(cx, nameOf(a), "a keyword such as :nhwc", v);
  const std::optional<Layout> layout = layoutFromKeyword(v.keyword().name());
  if (!layout)
    fail(ErrorKind::Value, cx.self.name(), ": unknown layout :", v.keyword().name(),
         " (layouts: :row-major :nchw :nhwc :nc1hwc0 :fractal-z :fractal-nz)");
  return *layout;
}

/// One of the keywords a Choice lists.
std::string readChoice(const CallContext& cx, const Value& v, const ArgSpec& a) {
  std::string expected;
  for (std::string_view rest = a.choices; !rest.empty();) {
    const size_t space = rest.find(' ');
    expected += cat(expected.empty() ? "" : " or ", ":", rest.substr(0, space));
    if (v.isKeyword() && v.keyword().name() == rest.substr(0, space)) return v.keyword().name();
    rest = space == std::string_view::npos ? std::string_view() : rest.substr(space + 1);
  }
  if (v.isNil()) return std::string(a.choices).substr(0, std::string_view(a.choices).find(' ')); // the first
  if (v.isKeyword()) fail(ErrorKind::Value, cx.self.name(), ": ", nameOf(a), " must be ", expected, ", got :", v.keyword().name());
  badAttr(cx, nameOf(a), expected, v);
}

/// Pad widths: [before after] for every axis, or one pair per axis.
std::vector<std::array<int64_t, 2>> readWidths(const CallContext& cx, const Value& v, const ArgSpec& a) {
  std::vector<std::array<int64_t, 2>> widths;
  const std::vector<Value> rows = sequenceItems(v);
  const bool flatPair = rows.size() == 2 && rows[0].isTensor() && rows[0].tensor().isScalar();
  if (flatPair) {
    const std::vector<int64_t> pair = readInts(cx, v, "a pad width");
    widths.push_back({pair[0], pair[1]});
    return widths;
  }
  for (const Value& row : rows) {
    const std::vector<int64_t> pair = readInts(cx, row, "a pad width");
    if (pair.size() != 2) badAttr(cx, nameOf(a), "[before after] per axis", row);
    widths.push_back({pair[0], pair[1]});
  }
  return widths;
}

/// Slice ranges: one per axis, from a vector (or an integer tensor of rank 2).
std::vector<SliceRange> readRanges(const CallContext& cx, const Value& v, const ArgSpec& a) {
  std::vector<SliceRange> ranges;
  if (v.isTensor() && v.tensor().rank() == 2) {
    for (const Value& row : sequenceItems(v)) ranges.push_back(readRange(cx, row));
  } else {
    for (const Value* item : elements(cx, v, nameOf(a))) ranges.push_back(readRange(cx, *item));
  }
  return ranges;
}

/// The shape (and, in `source`, the dtype) of a tensor whose shape is what is read.
std::vector<int64_t> readShapeOf(const CallContext& cx, const Value& v, DType& source) {
  if (!isTensorLike(v)) badArgument(cx, 0, "a tensor", v);
  if (isTraced(v) && !tracedType(v).concrete())
    fail(ErrorKind::Type, "jit: ", cx.self.name(), " of a tensor of symbolic shape ", tracedType(v).str());
  const Shape shape = isTraced(v) ? tracedType(v).shape() : v.tensor().shape();
  source = dtypeOfValue(v);
  return {shape.begin(), shape.end()};
}

/// An attribute argument of `a`'s kind, read from v (nil where the argument may be absent
/// is absence).
ArgValue readValue(const CallContext& cx, const ArgSpec& a, const Value& v, DType& source) {
  // nil leaves out an argument whose default is nil or the builder's choice.
  const bool mayBeNil = (a.use == ArgUse::Optional || a.use == ArgUse::Keyword) &&
                        (!a.fallback || std::string_view(a.fallback) == "nil");
  if (v.isNil() && mayBeNil && a.kind != ArgKind::Bool && a.kind != ArgKind::Choice) return std::monostate{};
  switch (a.kind) {
  case ArgKind::Int: return readInt(cx, v, nameOf(a));
  case ArgKind::Ints: return readInts(cx, v, nameOf(a));
  case ArgKind::Pair: return readPair(cx, v, nameOf(a));
  case ArgKind::Number:
    if (v.isTensor()) source = dtypeOfValue(v);
    return readNumber(cx, v, nameOf(a));
  case ArgKind::Bool: return readBool(cx, v, nameOf(a));
  case ArgKind::DType: return readDType(cx, v);
  case ArgKind::Layout: return readLayout(cx, v, a);
  case ArgKind::Choice: return readChoice(cx, v, a);
  case ArgKind::String:
    if (!v.isString()) badAttr(cx, nameOf(a), "a string", v);
    return v.string().text();
  case ArgKind::Ranges: return readRanges(cx, v, a);
  case ArgKind::Widths: return readWidths(cx, v, a);
  case ArgKind::ShapeOf: return readShapeOf(cx, v, source);
  case ArgKind::Tensor:
  case ArgKind::Tensors:
  case ArgKind::MoreTensors:
  case ArgKind::Indices: break; // read by readOpCall itself
  }
  fail(ErrorKind::Internal, cx.self.name(), ": no reader for argument ", a.name);
}

/// A default as a call form writes it ("-1", "1e-5", "false", ":f32", "nil"), read as
/// the value it writes.
ArgValue readFallback(const ArgSpec& a) {
  const std::string_view text = a.fallback;
  if (text == "nil") return std::monostate{};
  const std::string owned(text);
  switch (a.kind) {
  case ArgKind::Int: return static_cast<int64_t>(std::strtoll(owned.c_str(), nullptr, 10));
  case ArgKind::Ints: return std::vector<int64_t>{std::strtoll(owned.c_str(), nullptr, 10)};
  case ArgKind::Pair: {
    const int64_t k = std::strtoll(owned.c_str(), nullptr, 10);
    return std::array<int64_t, 2>{k, k};
  }
  case ArgKind::Number:
    if (text.find_first_of(".eE") == std::string_view::npos) return Number{true, std::strtoll(owned.c_str(), nullptr, 10), 0};
    return Number{false, 0, std::strtod(owned.c_str(), nullptr)};
  case ArgKind::Bool: return text == "true";
  case ArgKind::DType: return *dtypeFromName(text.substr(1));
  case ArgKind::Layout: return *layoutFromKeyword(text.substr(1));
  case ArgKind::Choice: return std::string(text.substr(1));
  default: break;
  }
  fail(ErrorKind::Internal, "a call form's default \"", text, "\" for ", a.name, " cannot be read");
}

} // namespace

OpCall readOpCall(const CallContext& cx, OpKind self, const CallForm& form, Args args) {
  TSL_ASSERT(form.build, "readOpCall: ", opInfo(self).name, " is not called from TSL");
  const std::span<const ArgSpec> specs = form.args;
  size_t required = 0, optional = 0;
  bool rest = false; // the last positional argument takes every remaining one
  std::vector<std::string_view> keywords;
  for (const ArgSpec& a : specs) {
    if (a.use == ArgUse::Required) ++required;
    if (a.use == ArgUse::Optional) ++optional;
    if (a.use != ArgUse::Required) keywords.push_back(a.name);
    rest |= a.kind == ArgKind::MoreTensors || a.kind == ArgKind::Indices;
  }
  const std::string_view name = cx.self.name();
  KeywordArgs kw(cx, args, required, keywords);
  const Args positional = kw.positional();
  if (positional.size() < required || (!rest && positional.size() > required + optional)) {
    const std::string count = optional ? cat(required, " to ", required + optional)
                              : rest   ? cat("at least ", required)
                                       : cat(required);
    fail(ErrorKind::Type, "wrong number of arguments to ", name, ": expected ", count, " before the options, got ",
         positional.size(), " (usage: ", usageOf(name, form), ")");
  }
  OpCall call{self, {}, NoAttrs{}, {}};
  std::vector<ArgValue> values(specs.size());
  DType source = DType::F32;
  size_t next = 0; // the next positional argument
  for (size_t i = 0; i < specs.size(); ++i) {
    const ArgSpec& a = specs[i];
    const bool isPositional = a.use == ArgUse::Required || (a.use == ArgUse::Optional && next < positional.size());
    const Value* v = isPositional ? &positional[next++] : kw.find(a.name);
    switch (a.kind) {
    case ArgKind::Tensor:
      if (!isPositional) { // a keyword option (attention's :mask): an operand when given
        if (!v || v->isNil()) continue;
        if (!isTensorLike(*v)) badAttr(cx, nameOf(a), "a tensor", *v);
        call.operands.push_back(v);
        continue;
      }
      if (!isTensorLike(*v)) badArgument(cx, next - 1, "a tensor", *v);
      call.operands.push_back(v);
      continue;
    case ArgKind::Tensors:
      if (v->isNonScalarTensor()) {
        // A tensor is the sequence of its slices along the first axis (docs/language.md).
        call.owned = sequenceItems(*v);
        for (const Value& slice : call.owned) call.operands.push_back(&slice);
      } else {
        call.operands = elements(cx, *v, nameOf(a));
      }
      if (call.operands.empty()) fail(ErrorKind::Value, name, " needs at least one tensor");
      for (const Value* t : call.operands)
        if (!isTensorLike(*t)) badAttr(cx, "every element", "a tensor", *t);
      continue;
    case ArgKind::MoreTensors:
      for (--next; next < positional.size(); ++next) {
        if (!isTensorLike(positional[next])) badArgument(cx, next, "a tensor", positional[next]);
        call.operands.push_back(&positional[next]);
      }
      if (call.operands.empty()) fail(ErrorKind::Type, name, " needs at least one tensor (usage: ", usageOf(name, form), ")");
      continue;
    case ArgKind::Indices: {
      std::vector<std::optional<int64_t>> indices;
      for (--next; next < positional.size(); ++next) {
        if (isTraced(positional[next]) && a.traced) {
          call.traced = true;
          indices.push_back(0);
          continue;
        }
        indices.push_back(readOptionalInt(cx, positional[next], "an index"));
      }
      values[i] = std::move(indices);
      continue;
    }
    default: break;
    }
    if (!v) {
      if (a.use == ArgUse::RequiredKeyword)
        fail(ErrorKind::Type, name, " needs :", a.name, " (usage: ", usageOf(name, form), ")");
      if (a.fallback) values[i] = readFallback(a);
      continue;
    }
    if (isTraced(*v) && a.kind != ArgKind::ShapeOf) {
      if (!a.traced) badAttr(cx, nameOf(a), "", *v); // must be known when compiling
      call.traced = true; // the row's traced form reads this call (eval/BuiltinsTensor.cpp)
      continue;
    }
    values[i] = readValue(cx, a, *v, source);
  }
  if (call.traced) return call;
  BuiltCall built = [&] {
    try {
      return form.build(self, ArgValues(std::move(values), source));
    } catch (const std::bad_variant_access&) { // a builder asked for a value of another kind
      fail(ErrorKind::Internal, name, ": its call form's builder read an argument of another kind");
    }
  }();
  call.kind = built.kind;
  call.attrs = std::move(built.attrs);
  return call;
}

std::optional<OpCall> parseOpCall(const CallContext& cx, std::string_view name, Args args) {
  for (const CallName& n : callNames())
    if (name == n.name) return readOpCall(cx, n.kind, *n.form, args);
  return std::nullopt;
}

int64_t readInt(const CallContext& cx, const Value& v, std::string_view what) {
  if (!v.isTensor() || !v.tensor().isScalar() || isFloat(v.tensor().dtype())) badAttr(cx, what, "an integer", v);
  return v.tensor().toInt();
}

Number readNumber(const CallContext& cx, const Value& v, std::string_view what) {
  if (!v.isTensor() || !v.tensor().isScalar()) badAttr(cx, what, "a number", v);
  const Tensor& t = v.tensor();
  if (isFloat(t.dtype())) return Number{false, 0, t.toDouble()};
  return Number{true, t.toInt(), 0};
}

std::vector<int64_t> readInts(const CallContext& cx, const Value& v, std::string_view what) {
  if (v.isTensor()) {
    const Tensor& t = v.tensor();
    if (isFloat(t.dtype()) || t.rank() > 1) badAttr(cx, what, "integers", v);
    if (t.isScalar()) return {t.toInt()};
    std::vector<int64_t> out;
    for (const Value& item : sequenceItems(v)) out.push_back(item.tensor().toInt());
    return out;
  }
  if (v.isVector() || v.isList()) {
    std::vector<int64_t> out;
    for (const Value& item : sequenceItems(v)) out.push_back(readInt(cx, item, what));
    return out;
  }
  badAttr(cx, what, "an integer or a vector of integers", v);
}

DType readDType(const CallContext& cx, const Value& v) {
  if (!v.isKeyword()) badAttr(cx, "the dtype", "a keyword such as :f32", v);
  const auto dtype = dtypeFromName(v.keyword().name());
  if (!dtype)
    fail(ErrorKind::Value, cx.self.name(), ": unknown dtype :", v.keyword().name(),
         " (dtypes: :bool :i32 :i64 :f16 :bf16 :f32 :f64)");
  return *dtype;
}

bool readBool(const CallContext& cx, const Value& v, std::string_view what) {
  if (v.isNil()) return false;
  if (!v.isTensor() || !v.tensor().isScalar() || !isBool(v.tensor().dtype())) badAttr(cx, what, "true or false", v);
  return v.tensor().isNonZero();
}

} // namespace tsl::builtins
