// eval/BuiltinsTensor.cpp — the tensor primitives, trees, files and tensor assertions.
//
// Every primitive of the operation table becomes a builtin that reads its arguments with
// parseOpCall (eval/OpArgs.h) and runs through runOp, which applies the table's type rule
// and kernel. Elementwise operations were registered earlier with their scalar fast path
// (BuiltinsNumeric.cpp) and are left alone here.
#include "eval/Builtins.h"
#include "eval/OpArgs.h"
#include "eval/Staging.h"
#include "eval/Tracer.h"
#include "eval/Trees.h"
#include "runtime/CallForms.h"
#include "runtime/Elementwise.h"
#include "runtime/Io.h"
#include "runtime/LayoutSvg.h"
#include "runtime/Structure.h"

#include <algorithm>
#include <cmath>

namespace tsl::builtins {

namespace {

Value runCall(const CallContext& cx, const OpCall& call) {
  if (std::optional<Value> staged = staging::primitive(cx.evaluator, call.kind, call.attrs, call.operands, cx.span))
    return std::move(*staged);
  std::vector<Tensor> operands;
  operands.reserve(call.operands.size());
  for (const Value* v : call.operands) operands.push_back(v->tensor());
  return Value(runOp(call.kind, call.attrs, operands));
}

/// (get x i j ...) with an index known only when the compiled code runs (docs/language.md §6:
/// jit compiles per signature, never per value; the result's shape does not depend on
/// the index): each index becomes a take of a rank-0 index along its axis, which drops
/// the axis as the view would. Checked as eager get checks (count, rank-0 integers);
/// out-of-range indices are the same value error, raised when the code runs.
Value getByTake(const CallContext& cx, Args args) {
  const ir::Type* xType = isTraced(args[0]) ? &tracedType(args[0]) : nullptr;
  const int rank = xType ? xType->rank() : args[0].tensor().rank();
  if (static_cast<int>(args.size()) - 1 > rank)
    fail(ErrorKind::Value, "get: ", args.size() - 1, " indices for a tensor of rank ", rank);
  Value x = args[0];
  int64_t axis = 0; // the axis of x the next index applies to
  for (size_t k = 1; k < args.size(); ++k) {
    const Value& index = args[k];
    if (index.isNil()) {
      ++axis;
      continue;
    }
    const bool integral = isTraced(index) ? tracedType(index).rank() == 0 && isInteger(tracedType(index).dtype)
                                           : index.isTensor() && index.tensor().isScalar() && isInteger(index.tensor().dtype());
    if (!integral) fail(ErrorKind::Type, "get: an index must be an integer or nil, got ", describeKind(index));
    const Value* operands[] = {&x, &index};
    x = runCall(cx, OpCall{OpKind::Take, {operands[0], operands[1]}, AxisAttrs{axis}});
  }
  return x;
}

Shape staticShape(const CallContext& cx, const Value& v);

/// A rank-0 traced (or concrete) value of the kind `what` names, else a type error.
const Value& scalarOperand(const CallContext& cx, const Value& v, std::string_view what) {
  const bool scalar = isTraced(v) ? tracedType(v).rank() == 0 : v.isTensor() && v.tensor().isScalar();
  if (!scalar) fail(ErrorKind::Type, cx.self.name(), ": ", what, " must be a number, got ", describeKind(v));
  return v;
}

Value call1(const CallContext& cx, OpKind kind, const Value& a, OpAttrs attrs) {
  return runCall(cx, OpCall{kind, {&a}, std::move(attrs)});
}
Value call2(const CallContext& cx, OpKind kind, const Value& a, const Value& b, OpAttrs attrs = NoAttrs{}) {
  return runCall(cx, OpCall{kind, {&a, &b}, std::move(attrs)});
}

/// (full shape v) with v known only when the code runs: v, cast, broadcast to the shape.
Value fullTraced(const CallContext& cx, Args args) {
  KeywordArgs kw(cx, args, 2, {"dtype"});
  const Value& v = scalarOperand(cx, args[1], "the value");
  const DType d = [&] {
    if (const Value* dt = kw.find("dtype")) return readDType(cx, *dt);
    const DType own = tracedType(v).dtype;
    return traced(v).tracer()->isWeak(traced(v).value()) ? concreteDType({own, true}) : own;
  }();
  return call1(cx, OpKind::BroadcastTo, call1(cx, OpKind::Cast, v, CastAttrs{d}), ShapeAttrs{readInts(cx, args[0], "the shape")});
}

/// (pad x widths :value v) with v known only when the code runs: x padded with zeros,
/// then v where a padded mask is true.
Value padTraced(const CallContext& cx, Args args) {
  KeywordArgs kw(cx, args, 2, {"value"});
  const Value& v = scalarOperand(cx, *kw.find("value"), ":value");
  std::vector<Value> plain(args.begin(), args.end());
  for (size_t i = 2; i + 1 < plain.size(); i += 2)
    if (plain[i].isKeyword() && plain[i].keyword().name() == "value") plain[i + 1] = Value(Tensor::weakInt(0));
  const Value padded = runCall(cx, readOpCall(cx, OpKind::Pad, *opInfo(OpKind::Pad).call, plain));
  const Shape shape = staticShape(cx, args[0]);
  const Value inside = runCall(cx, OpCall{OpKind::Full, {}, FullAttrs{std::vector<int64_t>(shape.begin(), shape.end()),
                                                                      Number{true, 0, 0}, DType::Bool}});
  plain[0] = inside;
  for (size_t i = 2; i + 1 < plain.size(); i += 2)
    if (plain[i].isKeyword() && plain[i].keyword().name() == "value") plain[i + 1] = Value(Tensor::weakInt(1));
  const Value border = runCall(cx, readOpCall(cx, OpKind::Pad, *opInfo(OpKind::Pad).call, plain));
  const DType d = isTraced(args[0]) ? tracedType(args[0]).dtype : args[0].tensor().dtype();
  const Value filler = call1(cx, OpKind::Cast, v, CastAttrs{d});
  const Value* operands[] = {&border, &filler, &padded};
  return runCall(cx, OpCall{OpKind::Where, {operands[0], operands[1], operands[2]}, NoAttrs{}});
}

/// (rng-key seed) with the seed known only when the code runs: runtime/Random.cpp's key,
/// [seed mod 2^32, (seed >> 32) mod 2^32], from integer operations.
Value rngKeyTraced(const CallContext& cx, Args args) {
  const Value& seed = scalarOperand(cx, args[0], "the seed");
  if (!isInteger(tracedType(seed).dtype))
    fail(ErrorKind::Type, "rng-key: the seed must be an integer, got ", describeKind(seed));
  const Value word(Tensor::weakInt(int64_t(1) << 32));
  const Value wide = call1(cx, OpKind::Cast, seed, CastAttrs{DType::I64});
  const Value lo = call2(cx, OpKind::Mod, wide, word);
  const Value hi = call2(cx, OpKind::Mod, call2(cx, OpKind::FloorDiv, wide, word), word);
  const Value* operands[] = {&lo, &hi};
  return runCall(cx, OpCall{OpKind::Stack, {operands[0], operands[1]}, AxisAttrs{0}});
}

} // namespace

TracedForm tracedForm(OpKind kind) {
  switch (kind) {
  case OpKind::Index: return getByTake;
  case OpKind::Full: return fullTraced;
  case OpKind::Pad: return padTraced;
  case OpKind::RngKey: return rngKeyTraced;
  default: return nullptr;
  }
}

namespace {

/// A call of a form with several results (CallForm::parts): the row once per part, the
/// results as a vector. Under jit each part is one operation.
Value runParts(const CallContext& cx, OpCall call, const CallForm& form) {
  const OpAttrs built = call.attrs;
  std::vector<Value> out;
  for (int64_t part = 0; part < form.parts; ++part) {
    call.attrs = form.withPart(built, part);
    out.push_back(runCall(cx, call));
  }
  return makeVector(std::move(out));
}

/// Runs a call read by its form: the traced form, the parts, or the operation.
Value runRead(const CallContext& cx, const OpCall& call, const CallForm& form, Args args) {
  if (call.traced) return tracedForm(call.kind)(cx, args);
  if (form.parts > 1) return runParts(cx, call, form);
  return runCall(cx, call);
}

/// Registers the builtin a row (or an alias) is called by: it reads the call by its form
/// and runs the operation, or lowers it by the row's traced form. A form that takes trees
/// applies the operation to each leaf of a tree given as its first operand, in the tree's
/// order; an operation run for its effect alone (barrier) returns nil.
void definePrimitive(Evaluator& evaluator, const CallName& n) {
  const bool effectOnly = opInfo(n.kind).has(kSideEffecting) && opInfo(n.kind).maxInputs == 0;
  evaluator.defineBuiltin(n.name, 0, -1, [&n, effectOnly](CallContext& cx, Args args) {
    if (n.form->trees && !args.empty() && isTreeNode(args[0])) {
      std::vector<Value> leafArgs(args.begin(), args.end());
      return treeMap(args.subspan(0, 1), [&](std::span<const Value> leaf) {
        leafArgs[0] = leaf[0];
        return runRead(cx, readOpCall(cx, n.kind, *n.form, leafArgs), *n.form, leafArgs);
      });
    }
    Value result = runRead(cx, readOpCall(cx, n.kind, *n.form, args), *n.form, args);
    return effectOnly ? Value() : result;
  });
}

/// The shape of a tensor, or of a traced tensor whose dimensions are all known.
Shape staticShape(const CallContext& cx, const Value& v) {
  if (!isTraced(v)) return tensorArg(cx, Args(&v, 1), 0).shape();
  const ir::Type& type = tracedType(v);
  if (!type.concrete()) fail(ErrorKind::Type, "jit: the shape ", type.str(), " has symbolic dimensions");
  return type.shape();
}

/// A Value of the vector of a shape's dimensions.
Value shapeValue(const Shape& shape) {
  std::vector<Value> dims;
  for (int64_t d : shape) dims.emplace_back(Tensor::ofInt(d));
  return makeVector(std::move(dims));
}

/// Elementwise closeness as NumPy's allclose: |a - b| <= atol + rtol * |b|.
void assertClose(const CallContext& cx, const Tensor& a, const Tensor& b, double rtol, double atol,
                 const std::string& where) {
  const Tensor x = astype(a, DType::F64), y = astype(b, DType::F64);
  const Shape shape = broadcastShapes(a.shape(), b.shape(), "assert-close");
  if (shape.numel() == 0) return; // no elements, none differ
  const Tensor diff = applyUnary(UnaryOp::Abs, applyBinary(BinaryOp::Sub, x, y));
  const Tensor bound = applyBinary(BinaryOp::Add, Tensor::ofFloat(atol, DType::F64),
                                   applyBinary(BinaryOp::Mul, Tensor::ofFloat(rtol, DType::F64),
                                               applyUnary(UnaryOp::Abs, y)));
  // Equal values pass outright, so equal infinities are close (as in NumPy).
  const Tensor ok = applyBinary(BinaryOp::LogicalOr, applyBinary(BinaryOp::Equal, x, y),
                                applyBinary(BinaryOp::LessEqual, diff, bound));
  const Tensor allOk = reduce(ReduceOp::Min, astype(ok, DType::I64), {});
  if (allOk.toInt() == 1) return;
  const Tensor worst = reduce(ReduceOp::Max, applyBinary(BinaryOp::Sub, diff, bound), {});
  const Tensor at = reduce(ReduceOp::ArgMax, reshape(applyBinary(BinaryOp::Sub, diff, bound), Shape{shape.numel()}), {});
  (void)cx;
  fail(ErrorKind::Assert, "assert-close: values differ", where, ": |a - b| exceeds atol + rtol * |b| by ",
       worst.toDouble(), " at flat index ", at.toInt(), " (rtol ", rtol, ", atol ", atol, ")");
}

} // namespace

void registerTensorBuiltins(Evaluator& evaluator) {
  // Every name a row or an alias is called by; the elementwise rows are already builtins
  // with their fast paths (eval/BuiltinsNumeric.cpp), and get and sort are shared with
  // collections (below).
  for (const CallName& n : callNames()) {
    const Var* existing = evaluator.core().find(n.name);
    if ((existing && existing->defined) || n.kind == OpKind::Index || n.kind == OpKind::Sort) continue;
    definePrimitive(evaluator, n);
  }

  // sort: a tensor sorts along an axis; a collection (a vector or list) as Clojure's sort.
  const Value sortCollection = evaluator.core().find("sort")->value;
  evaluator.defineBuiltin("sort", 1, 3, [sortCollection](CallContext& cx, Args args) {
    if (args[0].isTensor() || isTraced(args[0])) {
      const CallForm& form = *opInfo(OpKind::Sort).call;
      return runRead(cx, readOpCall(cx, OpKind::Sort, form, args), form, args);
    }
    if (args.size() > 1) fail(ErrorKind::Type, "wrong number of arguments to sort: expected 1 for a collection");
    return cx.evaluator.apply(sortCollection, args, cx.span);
  });

  // get: indexing on tensors, lookup on maps and vectors.
  const Value lookup = evaluator.core().find("get")->value;
  evaluator.defineBuiltin("get", 2, -1, [lookup](CallContext& cx, Args args) {
    const bool tracedScalar = isTraced(args[0]) && tracedType(args[0]).rank() == 0;
    if ((args[0].isTensor() && !args[0].tensor().isScalar()) || (isTraced(args[0]) && !tracedScalar)) {
      OpCall call = readOpCall(cx, OpKind::Index, *opInfo(OpKind::Index).call, args);
      if (call.traced) return getByTake(cx, args);
      return runCall(cx, call);
    }
    if (args.size() > 3) fail(ErrorKind::Type, "wrong number of arguments to get: expected 2 to 3 for a map or vector");
    if (tracedScalar) {
      // A number is neither a tensor get indexes nor a collection: the error eager code
      // gives (from lookup), without the value, which is known only when the code runs.
      const ir::Type& type = tracedType(args[0]);
      fail(ErrorKind::Type, "get expects a map or vector as argument 1, got ",
           weakTraced(args[0]) ? (isFloat(type.dtype) ? "float" : "integer") : dtypeName(type.dtype), " scalar");
    }
    return cx.evaluator.apply(lookup, args, cx.span);
  });

  // Shapes are static under jit too: a traced tensor's type has them.
  evaluator.defineBuiltin("shape", 1, 1, [](CallContext& cx, Args args) {
    return shapeValue(staticShape(cx, args[0]));
  });
  evaluator.defineBuiltin("rank", 1, 1, [](CallContext& cx, Args args) {
    if (isTraced(args[0])) return Value(Tensor::ofInt(tracedType(args[0]).rank()));
    return Value(Tensor::ofInt(tensorArg(cx, args, 0).rank()));
  });
  evaluator.defineBuiltin("size", 1, 1, [](CallContext& cx, Args args) {
    return Value(Tensor::ofInt(staticShape(cx, args[0]).numel()));
  });
  evaluator.defineBuiltin("split", 2, 4, [](CallContext& cx, Args args) {
    KeywordArgs kw(cx, args, 2, {"axis"});
    const Value* axis = kw.find("axis");
    const int64_t n = readInt(cx, args[1], "the number of parts"), along = axis ? readInt(cx, *axis, ":axis") : 0;
    std::vector<Value> parts;
    if (isTraced(args[0])) { // under jit: one slice operation per part
      const Value* x = &args[0];
      for (auto& ranges : splitRanges(staticShape(cx, args[0]), n, along))
        parts.push_back(*staging::primitive(cx.evaluator, OpKind::Slice, SliceAttrs{std::move(ranges)},
                                            std::span<const Value* const>(&x, 1), cx.span));
      return makeVector(std::move(parts));
    }
    for (Tensor& part : split(tensorArg(cx, args, 0), n, along)) parts.emplace_back(std::move(part));
    return makeVector(std::move(parts));
  });

  // ---- Trees ----
  evaluator.defineBuiltin("tree-map", 2, -1, [](CallContext& cx, Args args) {
    const Value& f = callableArg(cx, args, 0);
    return treeMap(args.subspan(1), [&](std::span<const Value> leaves) {
      cx.evaluator.poll(cx.span);
      return cx.evaluator.apply(f, leaves, cx.span);
    });
  });
  evaluator.defineBuiltin("tree-leaves", 1, 1, [](CallContext&, Args args) { return makeVector(treeLeaves(args[0])); });
  evaluator.defineBuiltin("tree-reduce", 3, 3, [](CallContext& cx, Args args) {
    const Value& f = callableArg(cx, args, 0);
    Value acc = args[1];
    for (const Value& leaf : treeLeaves(args[2])) {
      const Value pair[2] = {acc, leaf};
      acc = cx.evaluator.apply(f, Args(pair, 2), cx.span);
    }
    return acc;
  });

  // ---- Files ----
  evaluator.defineBuiltin("load-csv", 1, 5, [](CallContext& cx, Args args) {
    KeywordArgs kw(cx, args, 1, {"dtype", "skip-header"});
    CsvOptions options;
    if (const Value* dtype = kw.find("dtype")) options.dtype = readDType(cx, *dtype);
    if (const Value* skip = kw.find("skip-header")) options.skipHeader = readBool(cx, *skip, ":skip-header");
    return Value(loadCsv(stringArg(cx, args, 0), options));
  });
  evaluator.defineBuiltin("load-npy", 1, 1, [](CallContext& cx, Args args) { return Value(loadNpy(stringArg(cx, args, 0))); });
  // (layout-svg x) → the SVG text of x's physical layout; (layout-svg x "x.svg") writes it
  // (atomically, like every file TSL writes) and returns nil.
  evaluator.defineBuiltin("layout-svg", 1, 2, [](CallContext& cx, Args args) {
    const std::string svg = layoutSvg(tensorArg(cx, args, 0));
    if (args.size() == 1) return makeString(svg);
    writeFileAtomically(stringArg(cx, args, 1), svg);
    return Value();
  });
  evaluator.defineBuiltin("save-npy", 2, 2, [](CallContext& cx, Args args) {
    saveNpy(stringArg(cx, args, 0), tensorArg(cx, args, 1));
    return Value();
  });

  // ---- Checks ----
  evaluator.defineBuiltin("assert-close", 2, 6, [](CallContext& cx, Args args) {
    KeywordArgs kw(cx, args, 2, {"rtol", "atol"});
    const double rtol = kw.find("rtol") ? readNumber(cx, *kw.find("rtol"), ":rtol").asDouble() : 1e-5;
    const double atol = kw.find("atol") ? readNumber(cx, *kw.find("atol"), ":atol").asDouble() : 1e-8;
    const Value trees[] = {args[0], args[1]};
    size_t leaf = 0;
    treeMap(trees, [&](std::span<const Value> pair) {
      for (size_t i = 0; i < 2; ++i)
        if (!pair[i].isTensor()) badArgument(cx, i, "tensors (or trees of tensors)", pair[i]);
      assertClose(cx, pair[0].tensor(), pair[1].tensor(), rtol, atol, isTreeNode(args[0]) ? cat(" in leaf ", leaf) : "");
      ++leaf;
      return Value();
    });
    return Value();
  });
}

} // namespace tsl::builtins
