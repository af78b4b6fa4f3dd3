// eval/OpArgs.cpp — the calling convention of every primitive, read once.
#include "eval/OpArgs.h"
#include "eval/Tracer.h"

#include <functional>
#include <map>

namespace tsl::builtins {

namespace {

using Parser = std::function<OpCall(const CallContext&, Args)>;

std::string shortPrint(const Value& v) {
  std::string text = printValue(v, true);
  return text.size() > 40 ? text.substr(0, 37) + "..." : text;
}

[[noreturn]] void badAttr(const CallContext& cx, std::string_view what, std::string_view expected, const Value& got) {
  if (got.isTraced())
    fail(ErrorKind::Type, "jit: ", cx.self.name(), ": ", what, " must be known when compiling, but it is a ",
         describeKind(got), " (pass it as a static value instead)");
  fail(ErrorKind::Type, cx.self.name(), ": ", what, " must be ", expected, ", got ", describeKind(got),
       got.isNil() ? "" : " " + shortPrint(got));
}

const Value* tensorOperand(const CallContext& cx, Args args, size_t i) {
  if (i >= args.size()) fail(ErrorKind::Type, cx.self.name(), ": missing tensor argument ", i + 1);
  if (!args[i].isTensorLike()) badArgument(cx, i, "a tensor", args[i]);
  return &args[i];
}

/// Exactly `n` positional arguments (the rest are keyword options).
void expectPositional(const CallContext& cx, const KeywordArgs& kw, size_t n, std::string_view usage) {
  if (kw.positional().size() != n)
    fail(ErrorKind::Type, "wrong number of arguments to ", cx.self.name(), ": expected ", n, " before the options, got ",
         kw.positional().size(), " (usage: ", usage, ")");
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

DType dtypeOption(const CallContext& cx, const KeywordArgs& kw, DType fallback) {
  const Value* v = kw.find("dtype");
  return v ? readDType(cx, *v) : fallback;
}

/// The dtype a fill value suggests: bool, i64 for integers, f32 for floats, or a strong
/// scalar's own dtype.
DType dtypeOfValue(const Value& v) {
  if (v.isTraced()) {
    const DType d = tracedType(v).dtype;
    return v.traced().tracer()->isWeak(v.traced().value()) ? concreteDType({d, true}) : d;
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

// ---- Conventions by family ----

Parser unary(OpKind kind) {
  return [kind](const CallContext& cx, Args args) {
    KeywordArgs kw(cx, args, 1, {});
    expectPositional(cx, kw, 1, "(op x)");
    return OpCall{kind, {tensorOperand(cx, args, 0)}, NoAttrs{}};
  };
}

Parser binary(OpKind kind) {
  return [kind](const CallContext& cx, Args args) {
    KeywordArgs kw(cx, args, 2, {});
    expectPositional(cx, kw, 2, "(op a b)");
    return OpCall{kind, {tensorOperand(cx, args, 0), tensorOperand(cx, args, 1)}, NoAttrs{}};
  };
}

Parser reduction(OpKind kind) {
  return [kind](const CallContext& cx, Args args) {
    KeywordArgs kw(cx, args, 1, {"axis", "keepdims"});
    expectPositional(cx, kw, 1, "(op x :axis a :keepdims b)");
    ReduceAttrs attrs;
    if (const Value* axis = kw.find("axis"); axis && !axis->isNil()) {
      attrs.axes = readInts(cx, *axis, ":axis");
      attrs.noAxes = attrs.axes.empty(); // :axis [] reduces nothing, as NumPy's axis=()
    }
    if (const Value* keep = kw.find("keepdims")) attrs.keepDims = readBool(cx, *keep, ":keepdims");
    return OpCall{kind, {tensorOperand(cx, args, 0)}, attrs};
  };
}

Parser axisOp(OpKind kind, int64_t defaultAxis) {
  return [kind, defaultAxis](const CallContext& cx, Args args) {
    KeywordArgs kw(cx, args, 1, {"axis"});
    expectPositional(cx, kw, 1, "(op x :axis a)");
    const Value* axis = kw.find("axis");
    return OpCall{kind, {tensorOperand(cx, args, 0)}, AxisAttrs{axis ? readInt(cx, *axis, ":axis") : defaultAxis}};
  };
}

Parser joining(OpKind kind) {
  return [kind](const CallContext& cx, Args args) {
    KeywordArgs kw(cx, args, 1, {"axis"});
    expectPositional(cx, kw, 1, "(op [a b ...] :axis 0)");
    OpCall call{kind, {}, NoAttrs{}, {}};
    if (args[0].isNonScalarTensor()) {
      // A tensor is the sequence of its slices along the first axis (docs/language.md §4).
      call.owned = sequenceItems(args[0]);
      for (const Value& slice : call.owned) call.operands.push_back(&slice);
    } else {
      call.operands = elements(cx, args[0], "the tensors to join");
    }
    if (call.operands.empty()) fail(ErrorKind::Value, cx.self.name(), " needs at least one tensor");
    for (const Value* v : call.operands)
      if (!v->isTensorLike()) badAttr(cx, "every element", "a tensor", *v);
    const Value* axis = kw.find("axis");
    call.attrs = AxisAttrs{axis ? readInt(cx, *axis, ":axis") : 0};
    return call;
  };
}

Parser pooling(OpKind kind) {
  return [kind](const CallContext& cx, Args args) {
    KeywordArgs kw(cx, args, 1, {"kernel", "stride", "padding"});
    expectPositional(cx, kw, 1, "(op x :kernel k :stride s :padding p)");
    const Value* kernel = kw.find("kernel");
    if (!kernel) fail(ErrorKind::Type, cx.self.name(), " needs :kernel (an integer or [kh kw])");
    Pool2dAttrs attrs;
    attrs.kernel = readPair(cx, *kernel, ":kernel");
    attrs.stride = attrs.kernel; // PyTorch's default: the window does not overlap
    if (const Value* stride = kw.find("stride")) attrs.stride = readPair(cx, *stride, ":stride");
    if (const Value* padding = kw.find("padding")) attrs.padding = readPair(cx, *padding, ":padding");
    return OpCall{kind, {tensorOperand(cx, args, 0)}, attrs};
  };
}

Parser filled(Number value) {
  return [value](const CallContext& cx, Args args) {
    KeywordArgs kw(cx, args, 1, {"dtype"});
    expectPositional(cx, kw, 1, "(op shape :dtype d)");
    return OpCall{OpKind::Full, {}, FullAttrs{readInts(cx, args[0], "the shape"), value, dtypeOption(cx, kw, DType::F32)}};
  };
}

Parser filledLike(Number value) {
  return [value](const CallContext& cx, Args args) {
    KeywordArgs kw(cx, args, 1, {"dtype"});
    expectPositional(cx, kw, 1, "(op x :dtype d)");
    const Value& v = *tensorOperand(cx, args, 0);
    if (v.isTraced() && !tracedType(v).concrete())
      fail(ErrorKind::Type, "jit: ", cx.self.name(), " of a tensor of symbolic shape ", tracedType(v).str());
    const Shape xs = v.isTraced() ? tracedType(v).shape() : v.tensor().shape();
    std::vector<int64_t> shape(xs.begin(), xs.end());
    return OpCall{OpKind::Full, {}, FullAttrs{shape, value, dtypeOption(cx, kw, dtypeOfValue(args[0]))}};
  };
}

std::map<std::string, Parser, std::less<>> buildParsers() {
  std::map<std::string, Parser, std::less<>> p;
#define TSL_BINARY_PARSER(name, text, mnemonic, ...) p[text] = binary(OpKind::name);
  TSL_BINARY_OPS(TSL_BINARY_PARSER)
#undef TSL_BINARY_PARSER
#define TSL_UNARY_PARSER(name, text, mnemonic, ...) p[text] = unary(OpKind::name);
  TSL_UNARY_OPS(TSL_UNARY_PARSER)
#undef TSL_UNARY_PARSER
  p.erase("gelu-tanh"); // reached as (gelu x :approximate :tanh)
  p["gelu"] = [](const CallContext& cx, Args args) {
    KeywordArgs kw(cx, args, 1, {"approximate"});
    expectPositional(cx, kw, 1, "(gelu x :approximate :tanh)");
    OpKind kind = OpKind::Gelu;
    if (const Value* approx = kw.find("approximate"); approx && !approx->isNil()) {
      if (!approx->isKeyword() || (approx->keyword().name() != "tanh" && approx->keyword().name() != "none"))
        badAttr(cx, ":approximate", ":tanh or :none", *approx);
      if (approx->keyword().name() == "tanh") kind = OpKind::GeluTanh;
    }
    return OpCall{kind, {tensorOperand(cx, args, 0)}, NoAttrs{}};
  };
  p["where"] = [](const CallContext& cx, Args args) {
    KeywordArgs kw(cx, args, 3, {});
    expectPositional(cx, kw, 3, "(where cond a b)");
    return OpCall{OpKind::Where, {tensorOperand(cx, args, 0), tensorOperand(cx, args, 1), tensorOperand(cx, args, 2)}, NoAttrs{}};
  };
  p["clip"] = [](const CallContext& cx, Args args) {
    KeywordArgs kw(cx, args, 3, {});
    expectPositional(cx, kw, 3, "(clip x lo hi)");
    return OpCall{OpKind::Clip, {tensorOperand(cx, args, 0), tensorOperand(cx, args, 1), tensorOperand(cx, args, 2)}, NoAttrs{}};
  };
  p["astype"] = [](const CallContext& cx, Args args) {
    KeywordArgs kw(cx, args, 2, {});
    expectPositional(cx, kw, 2, "(astype x :f16)");
    return OpCall{OpKind::Cast, {tensorOperand(cx, args, 0)}, CastAttrs{readDType(cx, args[1])}};
  };
  p["to-layout"] = [](const CallContext& cx, Args args) {
    KeywordArgs kw(cx, args, 2, {});
    expectPositional(cx, kw, 2, "(to-layout x :nhwc)");
    if (!args[1].isKeyword()) badAttr(cx, "the layout", "a keyword such as :nhwc", args[1]);
    const std::optional<Layout> layout = layoutFromKeyword(args[1].keyword().name());
    if (!layout)
      fail(ErrorKind::Value, "to-layout: unknown layout :", args[1].keyword().name(),
           " (layouts: :row-major :nchw :nhwc :nc1hwc0 :fractal-z :fractal-nz)");
    return OpCall{OpKind::Transdata, {tensorOperand(cx, args, 0)}, LayoutAttrs{*layout}};
  };
  p["sum"] = reduction(OpKind::Sum);
  p["mean"] = reduction(OpKind::Mean);
  p["prod"] = reduction(OpKind::Prod);
  p["max"] = reduction(OpKind::Max);
  p["min"] = reduction(OpKind::Min);
  p["argmax"] = reduction(OpKind::ArgMax);
  p["argmin"] = reduction(OpKind::ArgMin);
  p["logsumexp"] = reduction(OpKind::LogSumExp);
  p["reshape"] = [](const CallContext& cx, Args args) {
    KeywordArgs kw(cx, args, 2, {});
    expectPositional(cx, kw, 2, "(reshape x shape)");
    return OpCall{OpKind::Reshape, {tensorOperand(cx, args, 0)}, ShapeAttrs{readInts(cx, args[1], "the shape")}};
  };
  p["flatten"] = [](const CallContext& cx, Args args) {
    KeywordArgs kw(cx, args, 1, {});
    expectPositional(cx, kw, 1, "(flatten x)");
    return OpCall{OpKind::Reshape, {tensorOperand(cx, args, 0)}, ShapeAttrs{{-1}}};
  };
  p["transpose"] = [](const CallContext& cx, Args args) {
    KeywordArgs kw(cx, args, 1, {});
    if (kw.positional().size() > 2) expectPositional(cx, kw, 2, "(transpose x) or (transpose x [1 0 2])");
    PermAttrs attrs;
    if (kw.positional().size() == 2) attrs.perm = readInts(cx, args[1], "the permutation");
    return OpCall{OpKind::Transpose, {tensorOperand(cx, args, 0)}, attrs};
  };
  p["broadcast-to"] = [](const CallContext& cx, Args args) {
    KeywordArgs kw(cx, args, 2, {});
    expectPositional(cx, kw, 2, "(broadcast-to x shape)");
    return OpCall{OpKind::BroadcastTo, {tensorOperand(cx, args, 0)}, ShapeAttrs{readInts(cx, args[1], "the shape")}};
  };
  p["expand-dims"] = [](const CallContext& cx, Args args) {
    KeywordArgs kw(cx, args, 2, {});
    expectPositional(cx, kw, 2, "(expand-dims x axis)");
    return OpCall{OpKind::ExpandDims, {tensorOperand(cx, args, 0)}, AxisAttrs{readInt(cx, args[1], "the axis")}};
  };
  p["squeeze"] = [](const CallContext& cx, Args args) {
    KeywordArgs kw(cx, args, 1, {"axis"});
    if (kw.positional().size() > 2) expectPositional(cx, kw, 2, "(squeeze x) or (squeeze x axis)");
    AxesAttrs attrs;
    const Value* axes = kw.positional().size() == 2 ? &args[1] : kw.find("axis");
    if (axes) {
      attrs.axes = readInts(cx, *axes, "the axes");
      attrs.noAxes = attrs.axes.empty();
    }
    return OpCall{OpKind::Squeeze, {tensorOperand(cx, args, 0)}, attrs};
  };
  p["slice"] = [](const CallContext& cx, Args args) {
    KeywordArgs kw(cx, args, 2, {});
    expectPositional(cx, kw, 2, "(slice x [[start stop] ...])");
    SliceAttrs attrs;
    const Value& ranges = args[1];
    if (ranges.isTensor() && ranges.tensor().rank() == 2) {
      for (const Value& row : sequenceItems(ranges)) attrs.ranges.push_back(readRange(cx, row));
    } else {
      for (const Value* item : elements(cx, ranges, "the ranges")) attrs.ranges.push_back(readRange(cx, *item));
    }
    return OpCall{OpKind::Slice, {tensorOperand(cx, args, 0)}, attrs};
  };
  p["get"] = [](const CallContext& cx, Args args) {
    IndexAttrs attrs;
    for (size_t i = 1; i < args.size(); ++i) attrs.indices.push_back(readOptionalInt(cx, args[i], "an index"));
    return OpCall{OpKind::Index, {tensorOperand(cx, args, 0)}, attrs};
  };
  p["concat"] = joining(OpKind::Concat);
  p["stack"] = joining(OpKind::Stack);
  p["pad"] = [](const CallContext& cx, Args args) {
    KeywordArgs kw(cx, args, 2, {"value"});
    expectPositional(cx, kw, 2, "(pad x [[before after] ...] :value 0)");
    PadAttrs attrs;
    const std::vector<Value> rows = sequenceItems(args[1]);
    const bool flatPair = rows.size() == 2 && rows[0].isTensor() && rows[0].tensor().isScalar();
    if (flatPair) { // [before after]: one pair for every axis
      const std::vector<int64_t> pair = readInts(cx, args[1], "a pad width");
      attrs.widths.push_back({pair[0], pair[1]});
    }
    for (const Value& row : flatPair ? std::vector<Value>{} : rows) {
      const std::vector<int64_t> pair = readInts(cx, row, "a pad width");
      if (pair.size() != 2) badAttr(cx, "a pad width", "[before after]", row);
      attrs.widths.push_back({pair[0], pair[1]});
    }
    if (const Value* value = kw.find("value")) attrs.value = readNumber(cx, *value, ":value").asDouble();
    return OpCall{OpKind::Pad, {tensorOperand(cx, args, 0)}, attrs};
  };
  p["take"] = [](const CallContext& cx, Args args) {
    KeywordArgs kw(cx, args, 2, {"axis"});
    expectPositional(cx, kw, 2, "(take x indices :axis 0)");
    const Value* axis = kw.find("axis");
    return OpCall{OpKind::Take, {tensorOperand(cx, args, 0), tensorOperand(cx, args, 1)},
                  AxisAttrs{axis ? readInt(cx, *axis, ":axis") : 0}};
  };
  p["one-hot"] = [](const CallContext& cx, Args args) {
    KeywordArgs kw(cx, args, 2, {});
    expectPositional(cx, kw, 2, "(one-hot labels n)");
    return OpCall{OpKind::OneHot, {tensorOperand(cx, args, 0)}, CountAttrs{readInt(cx, args[1], "the number of classes")}};
  };
  p["matmul"] = binary(OpKind::MatMul);
  p["@"] = binary(OpKind::MatMul);
  p["dot"] = binary(OpKind::Dot);
  p["einsum"] = [](const CallContext& cx, Args args) {
    if (args.empty() || !args[0].isString()) fail(ErrorKind::Type, "einsum expects a spec string first: (einsum \"ij,jk->ik\" a b)");
    OpCall call{OpKind::Einsum, {}, EinsumAttrs{args[0].string().text()}};
    for (size_t i = 1; i < args.size(); ++i) call.operands.push_back(tensorOperand(cx, args, i));
    if (call.operands.empty()) fail(ErrorKind::Type, "einsum needs at least one tensor");
    return call;
  };
  p["conv2d"] = [](const CallContext& cx, Args args) {
    KeywordArgs kw(cx, args, 2, {"stride", "padding"});
    expectPositional(cx, kw, 2, "(conv2d x w :stride s :padding p)");
    Conv2dAttrs attrs;
    if (const Value* stride = kw.find("stride")) attrs.stride = readPair(cx, *stride, ":stride");
    if (const Value* padding = kw.find("padding")) attrs.padding = readPair(cx, *padding, ":padding");
    return OpCall{OpKind::Conv2d, {tensorOperand(cx, args, 0), tensorOperand(cx, args, 1)}, attrs};
  };
  p["max-pool2d"] = pooling(OpKind::MaxPool2d);
  p["avg-pool2d"] = pooling(OpKind::AvgPool2d);
  p["softmax"] = axisOp(OpKind::Softmax, -1);
  p["log-softmax"] = axisOp(OpKind::LogSoftmax, -1);
  p["layer-norm"] = [](const CallContext& cx, Args args) {
    KeywordArgs kw(cx, args, 1, {"axis", "eps"});
    expectPositional(cx, kw, 1, "(layer-norm x :axis -1 :eps 1e-5)");
    NormAttrs attrs;
    if (const Value* axis = kw.find("axis")) attrs.axis = readInt(cx, *axis, ":axis");
    if (const Value* eps = kw.find("eps")) attrs.eps = readNumber(cx, *eps, ":eps").asDouble();
    return OpCall{OpKind::LayerNorm, {tensorOperand(cx, args, 0)}, attrs};
  };
  p["cross-entropy"] = binary(OpKind::CrossEntropy);
  p["mse"] = binary(OpKind::Mse);
  p["zeros"] = filled(Number{true, 0, 0});
  p["ones"] = filled(Number{true, 1, 0});
  p["zeros-like"] = filledLike(Number{true, 0, 0});
  p["ones-like"] = filledLike(Number{true, 1, 0});
  p["full"] = [](const CallContext& cx, Args args) {
    KeywordArgs kw(cx, args, 2, {"dtype"});
    expectPositional(cx, kw, 2, "(full shape value :dtype d)");
    if (!args[1].isTensor() || !args[1].tensor().isScalar()) badAttr(cx, "the value", "a number", args[1]);
    return OpCall{OpKind::Full, {},
                  FullAttrs{readInts(cx, args[0], "the shape"), readNumber(cx, args[1], "the value"),
                            dtypeOption(cx, kw, dtypeOfValue(args[1]))}};
  };
  p["arange"] = [](const CallContext& cx, Args args) {
    KeywordArgs kw(cx, args, 1, {"dtype"});
    const size_t n = kw.positional().size();
    if (n < 1 || n > 3) expectPositional(cx, kw, 1, "(arange n), (arange start stop) or (arange start stop step)");
    ArangeAttrs attrs;
    attrs.start = n > 1 ? readNumber(cx, args[0], "start") : Number{true, 0, 0};
    attrs.stop = readNumber(cx, args[n > 1 ? 1 : 0], "stop");
    attrs.step = n > 2 ? readNumber(cx, args[2], "step") : Number{true, 1, 0};
    const bool integral = attrs.start.isInt && attrs.stop.isInt && attrs.step.isInt;
    attrs.dtype = dtypeOption(cx, kw, integral ? DType::I64 : DType::F32);
    return OpCall{OpKind::Arange, {}, attrs};
  };
  p["linspace"] = [](const CallContext& cx, Args args) {
    KeywordArgs kw(cx, args, 3, {"dtype"});
    expectPositional(cx, kw, 3, "(linspace start stop num)");
    return OpCall{OpKind::Linspace, {},
                  LinspaceAttrs{readNumber(cx, args[0], "start").asDouble(), readNumber(cx, args[1], "stop").asDouble(),
                                readInt(cx, args[2], "num"), dtypeOption(cx, kw, DType::F32)}};
  };
  p["eye"] = [](const CallContext& cx, Args args) {
    KeywordArgs kw(cx, args, 1, {"dtype"});
    const size_t n = kw.positional().size();
    if (n < 1 || n > 2) expectPositional(cx, kw, 1, "(eye n) or (eye n m)");
    const int64_t rows = readInt(cx, args[0], "n");
    return OpCall{OpKind::Eye, {}, EyeAttrs{rows, n == 2 ? readInt(cx, args[1], "m") : rows, dtypeOption(cx, kw, DType::F32)}};
  };
  p["rng-key"] = [](const CallContext& cx, Args args) {
    KeywordArgs kw(cx, args, 1, {});
    expectPositional(cx, kw, 1, "(rng-key seed)");
    return OpCall{OpKind::RngKey, {}, SeedAttrs{readInt(cx, args[0], "the seed")}};
  };
  p["rng-split"] = [](const CallContext& cx, Args args) {
    KeywordArgs kw(cx, args, 2, {});
    expectPositional(cx, kw, 2, "(rng-split key n)");
    return OpCall{OpKind::RngSplit, {tensorOperand(cx, args, 0)}, CountAttrs{readInt(cx, args[1], "the number of keys")}};
  };
  for (const auto& [name, kind] : {std::pair{"rand", OpKind::RandUniform}, std::pair{"randn", OpKind::RandNormal}}) {
    p[name] = [kind](const CallContext& cx, Args args) {
      KeywordArgs kw(cx, args, 2, {"dtype"});
      expectPositional(cx, kw, 2, "(rand key shape :dtype d)");
      return OpCall{kind, {tensorOperand(cx, args, 0)},
                    RandomAttrs{readInts(cx, args[1], "the shape"), dtypeOption(cx, kw, DType::F32)}};
    };
  }
  p["dropout"] = [](const CallContext& cx, Args args) {
    KeywordArgs kw(cx, args, 3, {});
    expectPositional(cx, kw, 3, "(dropout key x rate)");
    return OpCall{OpKind::Dropout, {tensorOperand(cx, args, 0), tensorOperand(cx, args, 1)},
                  RateAttrs{readNumber(cx, args[2], "the rate").asDouble()}};
  };
  // (stop-gradient x): x, through which no derivative flows (docs/language.md §5).
  p["stop-gradient"] = unary(OpKind::StopGradient);
  return p;
}

const std::map<std::string, Parser, std::less<>>& parsers() {
  static const auto instance = buildParsers();
  return instance;
}

} // namespace

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

std::optional<OpCall> parseOpCall(const CallContext& cx, std::string_view name, Args args) {
  const auto& table = parsers();
  auto it = table.find(name);
  if (it == table.end()) return std::nullopt;
  return it->second(cx, args);
}

const std::vector<std::string>& opCallNames() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const auto& [name, parser] : parsers()) out.push_back(name);
    return out;
  }();
  return names;
}

} // namespace tsl::builtins
