// eval/Batching.cpp — vmap: batching a function as it is lowered.
//
// (vmap f) lowers f once for the whole batch. Its batched arguments are traced values
// marked *batched*: the IR value holds one example per row of its first axis, while the
// program sees a single example (tracedType gives the example's type, so `shape`, `rank`
// and every type rule see what the unbatched function would). Each primitive applied to
// a batched value takes its operation's batching rule, chosen by the row's class:
//
//   elementwise    once on the whole batch; batched operands of lower rank get unit axes
//                  after the batch axis so broadcasting lines examples up;
//   reduction      once, its axes moved past the batch axis (all axes: every example axis);
//   matmul         once when broadcasting over leading axes already means "per example"
//                  (both operands of rank >= 2, or a batched vector times a matrix);
//   attention      once: its leading axes broadcast, so batched operands line up as an
//                  elementwise operation's do;
//   anything else  once per example (a row of each batched operand), stacked: always
//                  right, and the IR grows with the batch.
//
// An `if` on a batched condition evaluates both branches and selects per example with
// `where`; derivatives and nested vmaps of batched values run once per example. Values
// that reach anything else (a loop whose trip count depends on a batched value, a
// derivative's own lowering) are refused with a `vmap:` type error, never mis-batched.
#include "eval/Builtins.h"
#include "eval/Evaluator.h"
#include "eval/Printer.h"
#include "eval/Staging.h"
#include "eval/Tracer.h"
#include "runtime/Reduce.h"

#include <algorithm>

namespace tsl {

namespace {

bool isBatched(const Value& v) { return isTraced(v) && traced(v).batched(); }

/// The whole batch of a batched value, as an ordinary traced value.
Value physical(const Value& v) { return traced(v).tracer()->wrap(traced(v).value()); }

int64_t batchSize(const Value& v) { return traced(v).value()->type().dims[0].size; }

int rankOf(const Value& v) {
  if (isTraced(v)) return tracedType(v).rank();
  return v.isTensor() ? v.tensor().rank() : 0;
}

Value emitOne(Tracer& tracer, OpKind kind, const OpAttrs& attrs, const std::vector<Value>& operands, const Span& span) {
  std::vector<const Value*> ptrs;
  for (const Value& v : operands) ptrs.push_back(&v);
  return tracer.emit(kind, attrs, ptrs, span);
}

Value rebatch(Tracer& tracer, const Value& whole) { return tracer.wrapBatched(traced(whole).value()); }

/// Row i of every batched value in `tree`; other leaves as they are.
Value rowOf(Tracer& tracer, const Value& tree, int64_t i, const Span& span) {
  std::vector<Value> leaves;
  const TreeShape shape = TreeShape::flatten(tree, leaves);
  for (Value& leaf : leaves)
    if (isBatched(leaf)) leaf = emitOne(tracer, OpKind::Index, IndexAttrs{{i}}, {physical(leaf)}, span);
  size_t pos = 0;
  return shape.rebuild(leaves, pos);
}

/// Results of one call per example, joined leaf by leaf into batched values.
Value stackExamples(Tracer& tracer, const std::vector<Value>& results, const Span& span) {
  std::vector<std::vector<Value>> leaves(results.size());
  std::vector<TreeShape> shapes;
  for (size_t i = 0; i < results.size(); ++i) shapes.push_back(TreeShape::flatten(results[i], leaves[i]));
  for (size_t i = 1; i < shapes.size(); ++i)
    if (!shapes[i].sameAs(shapes[0]))
      fail(ErrorKind::Type, "vmap: the function gives results of different structures for different examples");
  std::vector<Value> joined;
  for (size_t j = 0; j < leaves[0].size(); ++j) {
    std::vector<Value> column;
    for (auto& example : leaves) column.push_back(example[j]);
    joined.push_back(rebatch(tracer, emitOne(tracer, OpKind::Stack, AxisAttrs{0}, column, span)));
  }
  size_t pos = 0;
  return shapes[0].rebuild(joined, pos);
}

/// The rule for elementwise operations: one operation on the whole batch.
Value batchElementwise(Tracer& tracer, OpKind kind, const OpAttrs& attrs, std::span<const Value* const> operands,
                       int64_t batch, const Span& span) {
  int rank = 0;
  for (const Value* v : operands) rank = std::max(rank, rankOf(*v));
  std::vector<Value> whole;
  for (const Value* v : operands) {
    if (!isBatched(*v)) {
      whole.push_back(*v);
      continue;
    }
    Value p = physical(*v);
    if (const int r = rankOf(*v); r < rank) { // [B, s...] -> [B, 1..., s...]
      std::vector<int64_t> dims{batch};
      dims.insert(dims.end(), static_cast<size_t>(rank - r), 1);
      for (const ir::Dim& d : tracedType(*v).dims) dims.push_back(d.size);
      p = emitOne(tracer, OpKind::Reshape, ShapeAttrs{dims}, {p}, span);
    }
    whole.push_back(std::move(p));
  }
  return rebatch(tracer, emitOne(tracer, kind, attrs, whole, span));
}

} // namespace

Value Tracer::emitBatched(OpKind kind, const OpAttrs& attrs, std::span<const Value* const> operands, const Span& span) {
  Tracer& tracer = active();
  int64_t batch = -1;
  for (const Value* v : operands)
    if (isBatched(*v)) batch = batchSize(*v);
  const OpInfo& info = opInfo(kind);
  if (info.fusion == FusionClass::Elementwise || kind == OpKind::Attention)
    return batchElementwise(tracer, kind, attrs, operands, batch, span);
  if (const auto* reduce = std::get_if<ReduceAttrs>(&attrs); reduce && operands.size() == 1) {
    const int rank = rankOf(*operands[0]);
    ReduceAttrs moved = *reduce;
    bool inRange = true;
    if (moved.axes.empty() && !moved.noAxes) {
      for (int a = 1; a <= rank; ++a) moved.axes.push_back(a);
      if (rank == 0) moved.noAxes = true;
    } else {
      for (int64_t& a : moved.axes) {
        const int64_t axis = a < 0 ? a + rank : a;
        inRange &= axis >= 0 && axis < rank;
        a = axis + 1;
      }
    }
    if (inRange) return rebatch(tracer, emitOne(tracer, kind, moved, {physical(*operands[0])}, span));
  }
  if (kind == OpKind::MatMul) {
    const Value& a = *operands[0];
    const Value& b = *operands[1];
    const int ra = rankOf(a), rb = rankOf(b);
    if (ra >= 2 && rb >= 2) { // broadcasting over leading axes: batched ones get unit axes to line up
      const int rank = std::max(ra, rb);
      std::vector<Value> whole;
      for (const Value* v : operands) {
        if (!isBatched(*v)) {
          whole.push_back(*v);
          continue;
        }
        std::vector<int64_t> dims{batch};
        dims.insert(dims.end(), static_cast<size_t>(rank - rankOf(*v)), 1);
        for (const ir::Dim& d : tracedType(*v).dims) dims.push_back(d.size);
        whole.push_back(emitOne(tracer, OpKind::Reshape, ShapeAttrs{dims}, {physical(*v)}, span));
      }
      return rebatch(tracer, emitOne(tracer, kind, attrs, whole, span));
    }
    if (ra == 1 && rb == 2 && isBatched(a) && !isBatched(b)) // rows of vectors times one matrix
      return rebatch(tracer, emitOne(tracer, kind, attrs, {physical(a), b}, span));
  }
  // Any other operation: once per example.
  std::vector<Value> rows;
  for (int64_t i = 0; i < batch; ++i) {
    std::vector<Value> example;
    for (const Value* v : operands)
      example.push_back(isBatched(*v) ? emitOne(tracer, OpKind::Index, IndexAttrs{{i}}, {physical(*v)}, span) : *v);
    rows.push_back(emitOne(tracer, kind, attrs, example, span));
  }
  return rebatch(tracer, emitOne(tracer, OpKind::Stack, AxisAttrs{0}, rows, span));
}

namespace staging {

bool holdsBatched(const Value& v) {
  std::vector<Value> leaves;
  TreeShape::flatten(v, leaves);
  return std::any_of(leaves.begin(), leaves.end(), isBatched);
}

std::optional<Value> perExample(Evaluator& evaluator, std::span<const Value> args,
                                const std::function<Value(std::span<const Value>)>& fn, const Span& span) {
  if (!evaluator.tracer()) return std::nullopt;
  int64_t batch = -1;
  for (const Value& arg : args) {
    std::vector<Value> leaves;
    TreeShape::flatten(arg, leaves);
    for (const Value& leaf : leaves)
      if (isBatched(leaf)) batch = batchSize(leaf);
  }
  if (batch < 0) return std::nullopt;
  Tracer& tracer = evaluator.tracer()->active();
  std::vector<Value> results;
  for (int64_t i = 0; i < batch; ++i) {
    std::vector<Value> example;
    for (const Value& arg : args) example.push_back(rowOf(tracer, arg, i, span));
    results.push_back(fn(example));
  }
  return stackExamples(tracer, results, span);
}

Value selectBatched(const Value& cond, const Value& ifTrue, const Value& ifFalse, const Span& span) {
  if (ifTrue.isRecur() || ifFalse.isRecur())
    fail(ErrorKind::Type, "vmap: a loop whose trip count depends on a batched value cannot be batched");
  std::vector<Value> a, b;
  const TreeShape shapeA = TreeShape::flatten(ifTrue, a);
  const TreeShape shapeB = TreeShape::flatten(ifFalse, b);
  if (!shapeA.sameAs(shapeB))
    fail(ErrorKind::Type, "vmap: the branches of an if on a batched value give results of different structures");
  Tracer& tracer = activeTracer(cond);
  std::vector<Value> chosen;
  for (size_t i = 0; i < a.size(); ++i) chosen.push_back(emitOne(tracer, OpKind::Where, NoAttrs{}, {cond, a[i], b[i]}, span));
  size_t pos = 0;
  return shapeA.rebuild(chosen, pos);
}

} // namespace staging

namespace builtins {

namespace {

std::optional<int64_t> axisOf(const CallContext& cx, const Value& v, const char* what) {
  if (v.isNil()) return std::nullopt;
  if (!v.isTensor() || !v.tensor().isScalar() || !isInteger(v.tensor().dtype()))
    fail(ErrorKind::Type, "vmap: ", what, " must be an integer or nil, got ", describeKind(v));
  (void)cx;
  return v.tensor().toInt();
}

/// (%vmap f in-axes out-axes args): f applied to the batch, under a tracer (the jit that
/// (vmap f) makes).
Value vmapCall(CallContext& cx, const Value& f, const Value& inAxes, const Value& outAxes, std::span<const Value> args) {
  Tracer* current = cx.evaluator.tracer();
  if (!current) staging::tracerOnly(cx.evaluator, "%vmap is vmap's own: call (vmap f) instead");
  Tracer& tracer = current->active();
  // Values batched by an enclosing vmap: this vmap runs once per example of that one.
  if (std::optional<Value> outer = staging::perExample(
          cx.evaluator, args, [&](std::span<const Value> example) { return vmapCall(cx, f, inAxes, outAxes, example); },
          cx.span))
    return *outer;
  std::vector<std::optional<int64_t>> axes(args.size());
  if (inAxes.isTensor() && inAxes.tensor().rank() == 1) { // [0 1]: a literal of integers is a tensor
    const Tensor& t = inAxes.tensor();
    if (t.shape()[0] != static_cast<int64_t>(args.size()))
      fail(ErrorKind::Type, "vmap: :in-axes has ", t.shape()[0], " entries for ", args.size(), " arguments");
    if (!isInteger(t.dtype())) fail(ErrorKind::Type, "vmap: :in-axes must hold integers or nil");
    for (size_t i = 0; i < args.size(); ++i) axes[i] = static_cast<int64_t>(t.at({static_cast<int64_t>(i)}));
  } else if (inAxes.isVector()) {
    if (inAxes.vector().count() != args.size())
      fail(ErrorKind::Type, "vmap: :in-axes has ", inAxes.vector().count(), " entries for ", args.size(), " arguments");
    for (size_t i = 0; i < args.size(); ++i) axes[i] = axisOf(cx, inAxes.vector()[i], ":in-axes");
  } else {
    const std::optional<int64_t> all = axisOf(cx, inAxes, ":in-axes");
    std::fill(axes.begin(), axes.end(), all);
  }
  const std::optional<int64_t> outAxis = axisOf(cx, outAxes, ":out-axes");
  int64_t batch = -1;
  std::vector<Value> batchedArgs;
  for (size_t i = 0; i < args.size(); ++i) {
    if (!axes[i]) {
      batchedArgs.push_back(args[i]);
      continue;
    }
    std::vector<Value> leaves;
    const TreeShape shape = TreeShape::flatten(args[i], leaves);
    for (Value& leaf : leaves) {
      if (!isTensorLike(leaf)) continue;
      const int rank = rankOf(leaf);
      const int64_t axis = *axes[i] < 0 ? *axes[i] + rank : *axes[i];
      if (axis < 0 || axis >= rank)
        fail(ErrorKind::Value, "vmap: argument ", i + 1, " has rank ", rank, ", so it has no axis ", *axes[i],
             " to batch along");
      const int64_t size = isTraced(leaf) ? tracedType(leaf).dims[static_cast<size_t>(axis)].size
                                          : leaf.tensor().shape()[static_cast<size_t>(axis)];
      if (size < 0)
        fail(ErrorKind::Value, "vmap: argument ", i + 1, "'s batch axis has no known size (a named size in a signature)");
      if (batch >= 0 && size != batch)
        fail(ErrorKind::Value, "vmap: the batch axes differ in size: ", batch, " and ", size, " (argument ", i + 1, ")");
      batch = size;
      if (axis != 0) {
        std::vector<int64_t> perm{axis};
        for (int64_t a = 0; a < rank; ++a)
          if (a != axis) perm.push_back(a);
        leaf = emitOne(tracer, OpKind::Transpose, PermAttrs{perm}, {leaf}, cx.span);
      }
      leaf = tracer.wrapBatched(tracer.materialize(leaf, std::nullopt, cx.span));
    }
    size_t pos = 0;
    batchedArgs.push_back(shape.rebuild(leaves, pos));
  }
  if (batch < 0) fail(ErrorKind::Value, "vmap: :in-axes batches no tensor of the arguments");
  const Value result = cx.evaluator.apply(f, batchedArgs, cx.span);
  std::vector<Value> leaves;
  const TreeShape shape = TreeShape::flatten(result, leaves);
  for (Value& leaf : leaves) {
    if (!isTensorLike(leaf)) continue;
    if (!outAxis) {
      if (isBatched(leaf)) fail(ErrorKind::Value, "vmap: :out-axes nil, but a result differs across the batch");
      continue;
    }
    Value whole;
    if (isBatched(leaf)) {
      whole = physical(leaf);
    } else { // the same for every example
      std::vector<int64_t> dims{batch};
      for (const ir::Dim& d : (isTraced(leaf) ? tracedType(leaf).dims : ir::Type::of(leaf.tensor()).dims))
        dims.push_back(d.size);
      whole = emitOne(tracer, OpKind::BroadcastTo, ShapeAttrs{dims}, {leaf}, cx.span);
    }
    const int rank = tracedType(whole).rank();
    const int64_t axis = *outAxis < 0 ? *outAxis + rank : *outAxis;
    if (axis < 0 || axis >= rank)
      fail(ErrorKind::Value, "vmap: :out-axes ", *outAxis, " is out of range for a result of rank ", rank);
    if (axis != 0) {
      std::vector<int64_t> perm;
      for (int64_t a = 1; a < rank; ++a) {
        if (static_cast<int64_t>(perm.size()) == axis) perm.push_back(0);
        perm.push_back(a);
      }
      if (static_cast<int64_t>(perm.size()) == axis) perm.push_back(0);
      whole = emitOne(tracer, OpKind::Transpose, PermAttrs{perm}, {whole}, cx.span);
    }
    leaf = whole;
  }
  size_t pos = 0;
  return shape.rebuild(leaves, pos);
}

} // namespace

void registerBatchingBuiltins(Evaluator& evaluator) {
  evaluator.defineBuiltin("%vmap-option-error", 1, 1, [](CallContext&, Args args) -> Value {
    fail(ErrorKind::Type, "vmap: unknown option ", printValue(args[0], true), " (options: :in-axes :out-axes)");
  });
  evaluator.defineBuiltin("%vmap", 4, 4, [](CallContext& cx, Args args) {
    const Value& f = callableArg(cx, args, 0);
    if (!args[3].isVector() && !args[3].isNil() && !args[3].isList()) badArgument(cx, 3, "the arguments", args[3]);
    const std::vector<Value> callArgs = sequenceItems(args[3]);
    return vmapCall(cx, f, args[1], args[2], callArgs);
  });
}

} // namespace builtins
} // namespace tsl
