// ir/Attributes.cpp — the fields of every attribute struct, and their text.
//
// fields(struct, visitor) lists a struct's fields once; the printing visitor turns each
// into an AttrValue (skipping fields at their default), the reading visitor fills it from
// one. Adding an attribute struct means adding its fields() here; which operations take it
// is stated by their rows in runtime/Ops.h.
#include "ir/Attributes.h"

#include "parser/Syntax.h"
#include "tsl/FormatFloat.h"

#include <cmath>
#include <type_traits>

namespace tsl::ir {

namespace {

// ---- Field lists ----

template <typename V> void fields(V&, const NoAttrs*) {}
template <typename V> void fields(V& v, const AxisAttrs*) { v("axis", &AxisAttrs::axis); }
template <typename V> void fields(V& v, const ShapeAttrs*) { v("dims", &ShapeAttrs::dims); }
template <typename V> void fields(V& v, const PermAttrs*) { v("perm", &PermAttrs::perm); }
template <typename V> void fields(V& v, const AxesAttrs*) {
  v("axes", &AxesAttrs::axes);
  v("no_axes", &AxesAttrs::noAxes);
}
template <typename V> void fields(V& v, const SliceAttrs*) { v("ranges", &SliceAttrs::ranges); }
template <typename V> void fields(V& v, const IndexAttrs*) { v("indices", &IndexAttrs::indices); }
template <typename V> void fields(V& v, const PadAttrs*) {
  v("widths", &PadAttrs::widths);
  v("value", &PadAttrs::value);
}
template <typename V> void fields(V& v, const CountAttrs*) { v("count", &CountAttrs::count); }
template <typename V> void fields(V& v, const PartAttrs*) { v("part", &PartAttrs::part); }
template <typename V> void fields(V& v, const TopKAttrs*) {
  v("k", &TopKAttrs::k);
  v("part", &TopKAttrs::part);
}
template <typename V> void fields(V& v, const ScanAttrs*) {
  v("axis", &ScanAttrs::axis);
  v("reverse", &ScanAttrs::reverse);
}
template <typename V> void fields(V& v, const AttentionAttrs*) {
  v("causal", &AttentionAttrs::causal);
  v("part", &AttentionAttrs::part);
}
template <typename V> void fields(V& v, const CastAttrs*) { v("dtype", &CastAttrs::dtype); }
template <typename V> void fields(V& v, const FullAttrs*) {
  v("shape", &FullAttrs::shape);
  v("value", &FullAttrs::value);
  v("dtype", &FullAttrs::dtype);
}
template <typename V> void fields(V& v, const ArangeAttrs*) {
  v("start", &ArangeAttrs::start);
  v("stop", &ArangeAttrs::stop);
  v("step", &ArangeAttrs::step);
  v("dtype", &ArangeAttrs::dtype);
}
template <typename V> void fields(V& v, const LinspaceAttrs*) {
  v("start", &LinspaceAttrs::start);
  v("stop", &LinspaceAttrs::stop);
  v("num", &LinspaceAttrs::num);
  v("dtype", &LinspaceAttrs::dtype);
}
template <typename V> void fields(V& v, const EyeAttrs*) {
  v("n", &EyeAttrs::n);
  v("m", &EyeAttrs::m);
  v("dtype", &EyeAttrs::dtype);
}
template <typename V> void fields(V& v, const RandomAttrs*) {
  v("shape", &RandomAttrs::shape);
  v("dtype", &RandomAttrs::dtype);
}
template <typename V> void fields(V& v, const SeedAttrs*) { v("seed", &SeedAttrs::seed); }
template <typename V> void fields(V& v, const RandIntAttrs*) {
  v("shape", &RandIntAttrs::shape);
  v("lo", &RandIntAttrs::lo);
  v("hi", &RandIntAttrs::hi);
}
template <typename V> void fields(V& v, const RateAttrs*) { v("rate", &RateAttrs::rate); }
template <typename V> void fields(V& v, const NormAttrs*) {
  v("axis", &NormAttrs::axis);
  v("eps", &NormAttrs::eps);
}
template <typename V> void fields(V& v, const EinsumAttrs*) { v("spec", &EinsumAttrs::spec); }
template <typename V> void fields(V& v, const LayoutAttrs*) { v("layout", &LayoutAttrs::layout); }
template <typename V> void fields(V& v, const CollectiveAttrs*) {
  v("op", &CollectiveAttrs::op);
  v("axis", &CollectiveAttrs::axis);
  v("root", &CollectiveAttrs::root);
  v("ranks", &CollectiveAttrs::ranks);
  v("part", &CollectiveAttrs::part);
}
template <typename V> void fields(V& v, const ReduceAttrs*) {
  v("axes", &ReduceAttrs::axes);
  v("keepdims", &ReduceAttrs::keepDims);
  v("no_axes", &ReduceAttrs::noAxes);
}
template <typename V> void fields(V& v, const DiagonalAttrs*) { v("k", &DiagonalAttrs::k); }
template <typename V> void fields(V& v, const MomentAttrs*) {
  v("axes", &MomentAttrs::axes);
  v("keepdims", &MomentAttrs::keepDims);
  v("no_axes", &MomentAttrs::noAxes);
  v("ddof", &MomentAttrs::ddof);
}
template <typename V> void fields(V& v, const Conv2dAttrs*) {
  v("stride", &Conv2dAttrs::stride);
  v("padding", &Conv2dAttrs::padding);
}
template <typename V> void fields(V& v, const Pool2dAttrs*) {
  v("kernel", &Pool2dAttrs::kernel);
  v("stride", &Pool2dAttrs::stride);
  v("padding", &Pool2dAttrs::padding);
}

template <typename V> void fields(V& v, const SliceGradAttrs*) {
  v("ranges", &SliceGradAttrs::ranges);
  v("shape", &SliceGradAttrs::shape);
}
template <typename V> void fields(V& v, const TakeGradAttrs*) {
  v("axis", &TakeGradAttrs::axis);
  v("size", &TakeGradAttrs::size);
}
template <typename V> void fields(V& v, const Conv2dGradAttrs*) {
  v("stride", &Conv2dGradAttrs::stride);
  v("padding", &Conv2dGradAttrs::padding);
  v("shape", &Conv2dGradAttrs::shape);
}
template <typename V> void fields(V& v, const Pool2dGradAttrs*) {
  v("kernel", &Pool2dGradAttrs::kernel);
  v("stride", &Pool2dGradAttrs::stride);
  v("padding", &Pool2dGradAttrs::padding);
  v("shape", &Pool2dGradAttrs::shape);
}

/// The attribute struct each operation takes (its row in the operation table).
OpAttrs defaultAttrs(OpKind kind) { return opInfo(kind).defaultAttrs(); }

// ---- Values ----

AttrValue intValue(int64_t i) {
  AttrValue v;
  v.kind = AttrValue::Kind::Int;
  v.i = i;
  return v;
}
AttrValue floatValue(double f) {
  AttrValue v;
  v.kind = AttrValue::Kind::Float;
  v.f = f;
  return v;
}
AttrValue listValue(std::vector<AttrValue> items) {
  AttrValue v;
  v.kind = AttrValue::Kind::List;
  v.list = std::move(items);
  return v;
}
AttrValue noneValue() { return AttrValue{}; }

AttrValue toValue(int64_t x) { return intValue(x); }
AttrValue toValue(double x) { return floatValue(x); }
AttrValue toValue(bool x) {
  AttrValue v;
  v.kind = AttrValue::Kind::Bool;
  v.i = x;
  return v;
}
AttrValue toValue(DType x) {
  AttrValue v;
  v.kind = AttrValue::Kind::Ident;
  v.text = dtypeName(x);
  return v;
}
AttrValue toValue(Layout x) {
  AttrValue v;
  v.kind = AttrValue::Kind::Ident;
  v.text = layoutName(x);
  return v;
}
AttrValue toValue(CollectiveOp x) {
  AttrValue v;
  v.kind = AttrValue::Kind::Ident;
  v.text = collectiveOpName(x);
  return v;
}
AttrValue toValue(const std::string& x) {
  AttrValue v;
  v.kind = AttrValue::Kind::String;
  v.text = x;
  return v;
}
AttrValue toValue(const Number& x) { return x.isInt ? intValue(x.i) : floatValue(x.f); }
AttrValue toValue(const std::optional<int64_t>& x) { return x ? intValue(*x) : noneValue(); }
AttrValue toValue(const SliceRange& r) { return listValue({toValue(r.start), toValue(r.stop), intValue(r.step)}); }
template <typename T, size_t N>
AttrValue toValue(const std::array<T, N>& x) {
  std::vector<AttrValue> items;
  for (const T& e : x) items.push_back(toValue(e));
  return listValue(std::move(items));
}
template <typename T>
AttrValue toValue(const std::vector<T>& x) {
  std::vector<AttrValue> items;
  for (const T& e : x) items.push_back(toValue(e));
  return listValue(std::move(items));
}

[[noreturn]] void badField(const std::string& field, const char* expected) {
  fail(ErrorKind::Syntax, "attribute ", field, " must be ", expected);
}

void fromValue(const AttrValue& v, int64_t& out, const std::string& field) {
  if (v.kind != AttrValue::Kind::Int) badField(field, "an integer");
  out = v.i;
}
void fromValue(const AttrValue& v, double& out, const std::string& field) {
  if (v.kind == AttrValue::Kind::Int) out = static_cast<double>(v.i);
  else if (v.kind == AttrValue::Kind::Float) out = v.f;
  else badField(field, "a number");
}
void fromValue(const AttrValue& v, bool& out, const std::string& field) {
  if (v.kind != AttrValue::Kind::Bool) badField(field, "true or false");
  out = v.i != 0;
}
void fromValue(const AttrValue& v, DType& out, const std::string& field) {
  if (v.kind != AttrValue::Kind::Ident || !dtypeFromName(v.text)) badField(field, "a dtype");
  out = *dtypeFromName(v.text);
}
void fromValue(const AttrValue& v, Layout& out, const std::string& field) {
  const std::optional<Layout> layout = v.kind == AttrValue::Kind::Ident ? layoutFromKeyword(v.text) : std::nullopt;
  if (!layout) badField(field, "a layout (row-major, nhwc, nc1hwc0, fractal-z, fractal-nz)");
  out = *layout;
}
void fromValue(const AttrValue& v, CollectiveOp& out, const std::string& field) {
  const std::optional<CollectiveOp> op = v.kind == AttrValue::Kind::Ident ? collectiveOpFromName(v.text) : std::nullopt;
  if (!op) badField(field, "sum, mean, max or min");
  out = *op;
}
void fromValue(const AttrValue& v, std::string& out, const std::string& field) {
  if (v.kind != AttrValue::Kind::String) badField(field, "a string");
  out = v.text;
}
void fromValue(const AttrValue& v, Number& out, const std::string& field) {
  if (v.kind == AttrValue::Kind::Int) out = Number{true, v.i, 0};
  else if (v.kind == AttrValue::Kind::Float) out = Number{false, 0, v.f};
  else badField(field, "a number");
}
void fromValue(const AttrValue& v, std::optional<int64_t>& out, const std::string& field) {
  if (v.kind == AttrValue::Kind::None) out.reset();
  else if (v.kind == AttrValue::Kind::Int) out = v.i;
  else badField(field, "an integer or none");
}
void fromValue(const AttrValue& v, SliceRange& out, const std::string& field) {
  if (v.kind != AttrValue::Kind::List || v.list.size() != 3) badField(field, "a list of [start, stop, step]");
  fromValue(v.list[0], out.start, field);
  fromValue(v.list[1], out.stop, field);
  fromValue(v.list[2], out.step, field);
}
template <typename T, size_t N>
void fromValue(const AttrValue& v, std::array<T, N>& out, const std::string& field) {
  if (v.kind != AttrValue::Kind::List || v.list.size() != N) badField(field, "a list of the right length");
  for (size_t i = 0; i < N; ++i) fromValue(v.list[i], out[i], field);
}
template <typename T>
void fromValue(const AttrValue& v, std::vector<T>& out, const std::string& field) {
  if (v.kind != AttrValue::Kind::List) badField(field, "a list");
  out.clear();
  for (const AttrValue& item : v.list) {
    out.emplace_back();
    fromValue(item, out.back(), field);
  }
}

/// Equality that tells -0.0 from 0.0 (so a -0.0 attribute is printed, not taken for the
/// default).
template <typename T>
bool sameBits(const T& a, const T& b) {
  if constexpr (std::is_same_v<T, double>) return a == b && std::signbit(a) == std::signbit(b);
  else return a == b;
}

/// Collects the fields of `self` that differ from a default-constructed struct.
template <typename S>
struct Printing {
  const S& self;
  AttrDict dict;
  template <typename F>
  void operator()(const char* name, F S::*member) {
    static const S defaults{};
    if (!sameBits(self.*member, defaults.*member)) dict.emplace_back(name, toValue(self.*member));
  }
};

/// Fills the fields of `self` named in `dict`, counting those it used.
template <typename S>
struct Reading {
  S& self;
  const AttrDict& dict;
  size_t used = 0;
  template <typename F>
  void operator()(const char* name, F S::*member) {
    for (const auto& [key, value] : dict)
      if (key == name) {
        fromValue(value, self.*member, key);
        ++used;
        return;
      }
  }
};

/// Whether `S` has a field called `key`.
template <typename S>
struct Naming {
  const std::string& key;
  bool found = false;
  template <typename F>
  void operator()(const char* name, F S::*) { found |= key == name; }
};

std::string printNumber(const AttrValue& v) {
  return v.kind == AttrValue::Kind::Int ? std::to_string(v.i) : formatShortest(v.f, true);
}

} // namespace

std::string printAttrValue(const AttrValue& value) {
  switch (value.kind) {
  case AttrValue::Kind::Int:
  case AttrValue::Kind::Float: return printNumber(value);
  case AttrValue::Kind::Bool: return value.i ? "true" : "false";
  case AttrValue::Kind::String: return quoteString(value.text);
  case AttrValue::Kind::Ident: return value.text;
  case AttrValue::Kind::None: return "none";
  case AttrValue::Kind::List: {
    std::string out = "[";
    for (size_t i = 0; i < value.list.size(); ++i) out += cat(i ? ", " : "", printAttrValue(value.list[i]));
    return out + "]";
  }
  }
  return "";
}

AttrDict attrsToDict(const OpAttrs& attrs) {
  return std::visit(
      [](const auto& a) {
        using S = std::decay_t<decltype(a)>;
        Printing<S> printer{a, {}};
        fields(printer, static_cast<const S*>(nullptr));
        return printer.dict;
      },
      attrs);
}

OpAttrs attrsFromDict(OpKind kind, const AttrDict& dict) {
  OpAttrs attrs = defaultAttrs(kind);
  std::visit(
      [&](auto& a) {
        using S = std::decay_t<decltype(a)>;
        Reading<S> reader{a, dict};
        fields(reader, static_cast<const S*>(nullptr));
        if (reader.used == dict.size()) return;
        for (const auto& [key, value] : dict) { // name the field nobody claimed
          Naming<S> naming{key};
          fields(naming, static_cast<const S*>(nullptr));
          if (!naming.found) fail(ErrorKind::Syntax, opInfo(kind).mnemonic, " has no attribute '", key, "'");
        }
        fail(ErrorKind::Syntax, opInfo(kind).mnemonic, ": an attribute is given twice");
      },
      attrs);
  return attrs;
}

std::string printAttrs(const OpAttrs& attrs) {
  const AttrDict dict = attrsToDict(attrs);
  if (dict.empty()) return "";
  std::string out = "{";
  for (size_t i = 0; i < dict.size(); ++i) out += cat(i ? ", " : "", dict[i].first, " = ", printAttrValue(dict[i].second));
  return out + "}";
}

} // namespace tsl::ir
