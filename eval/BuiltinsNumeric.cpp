// eval/BuiltinsNumeric.cpp — arithmetic, comparison and elementwise functions.
//
// Every elementwise row of the operation table becomes a builtin here, by its call form
// (folding + and *, chaining comparisons, pairs), with a two-operand fast path: a thin
// adapter from TSL arguments to runtime/Elementwise, where the promotion, broadcasting and
// arithmetic live, once.
#include "eval/Builtins.h"
#include "runtime/CallForms.h"
#include "runtime/Elementwise.h"
#include "runtime/ScalarFastPath.h"
#include "eval/Staging.h"
#include "eval/Tracer.h"
#include "eval/Trees.h"

namespace tsl::builtins {

namespace {

[[noreturn]] void notTensor(BinaryOp op, size_t index, const Value& got) {
  fail(ErrorKind::Type, opName(op), " expects a number or tensor as argument ", index + 1, ", got ",
       describeKind(got));
}

/// A unary elementwise operation, eager or (on a traced operand) emitted.
Value unaryCall(UnaryOp op, const CallContext& cx, const Value& x) {
  const Value* operands[] = {&x};
  if (std::optional<Value> staged = staging::primitive(cx.evaluator, opKind(op), NoAttrs{}, operands, cx.span))
    return std::move(*staged);
  if (!x.isTensor()) badArgument(cx, 0, "a tensor", x);
  return Value(applyUnary(op, x.tensor()));
}

/// + - * / also work leaf by leaf on trees (maps and vectors of tensors) of one
/// structure, and between a tensor and every leaf of a tree.
constexpr bool worksOnTrees(BinaryOp op) {
  return op == BinaryOp::Add || op == BinaryOp::Sub || op == BinaryOp::Mul || op == BinaryOp::Div;
}

template <BinaryOp op>
Value binaryCall(const Value& a, const Value& b, const Span& span);

template <BinaryOp op>
Value treeCall(const Value& a, const Value& b, const Span& span) {
  return treeBinary(a, b, [&](const Value& x, const Value& y) { return binaryCall<op>(x, y, span); });
}

/// Under jit: the operation on a traced operand becomes IR.
Value emitTraced(OpKind kind, const Value& a, const Value& b, const Span& span) {
  const Value* operands[] = {&a, &b};
  return *staging::primitiveOnTraced(kind, NoAttrs{}, operands, span);
}

/// (op a b) for two operands: the builtin's two-argument meaning and its fast path.
template <BinaryOp op>
Value binaryCall(const Value& a, const Value& b, const Span& span) {
  if (a.isTensor() && b.isTensor()) [[likely]]
    return Value(applyBinaryInline<op>(a.tensor(), b.tensor()));
  if ((isTraced(a) && isTensorLike(b)) || (isTraced(b) && isTensorLike(a)))
    return emitTraced(opKind(op), a, b, span);
  if constexpr (worksOnTrees(op))
    if ((isTreeNode(a) || isTensorLike(a)) && (isTreeNode(b) || isTensorLike(b))) return treeCall<op>(a, b, span);
  if (!isTensorLike(a)) notTensor(op, 0, a);
  notTensor(op, 1, b);
}

/// (+ a b c) folds left; (+) and (*) are their identities; (- x) negates (keeping the
/// sign of zero), (/ x) inverts.
template <BinaryOp op>
void defineFold(Evaluator& evaluator, const char* name, int64_t identity, bool unaryInverse) {
  auto& builtin = evaluator.defineBuiltin(name, unaryInverse ? 1 : 0, -1, [identity, unaryInverse](CallContext& cx, Args args) -> Value {
    if (args.empty()) return Value(Tensor::weakInt(identity));
    if (args.size() == 1) {
      if (!args[0].isTensor()) {
        if (isTraced(args[0])) {
          if (op == BinaryOp::Sub) return unaryCall(UnaryOp::Neg, cx, args[0]);
          if (unaryInverse) return binaryCall<op>(Value(Tensor::weakInt(identity)), args[0], cx.span);
          return args[0];
        }
        if constexpr (worksOnTrees(op))
          if (isTreeNode(args[0]) && op == BinaryOp::Sub)
            return treeCall<BinaryOp::Mul>(Value(Tensor::weakInt(-1)), args[0], cx.span);
        notTensor(op, 0, args[0]);
      }
      if (op == BinaryOp::Sub) return Value(applyUnary(UnaryOp::Neg, args[0].tensor()));
      if (unaryInverse) return Value(applyBinary(op, Tensor::weakInt(identity), args[0].tensor()));
      return args[0];
    }
    Value acc = binaryCall<op>(args[0], args[1], cx.span);
    for (size_t i = 2; i < args.size(); ++i) acc = binaryCall<op>(acc, args[i], cx.span);
    return acc;
  });
  builtin.setBinaryFn(binaryCall<op>);
}

/// (< a b c): elementwise for two operands; for more, scalars compared pairwise.
template <BinaryOp op>
void defineComparison(Evaluator& evaluator, const char* name) {
  auto& builtin = evaluator.defineBuiltin(name, 2, -1, [](CallContext& cx, Args args) -> Value {
    if (args.size() == 2) return binaryCall<op>(args[0], args[1], cx.span);
    // Under jit the truth of a traced pair is known only when the code runs: the pairs
    // from the first traced one on are joined by logical-and (none is skipped).
    Value staged;
    for (size_t i = 0; i + 1 < args.size(); ++i) {
      const Value result = binaryCall<op>(args[i], args[i + 1], cx.span);
      const bool traced = isTraced(result);
      if (traced ? tracedType(result).rank() != 0 : !result.tensor().isScalar())
        fail(ErrorKind::Type, cx.self.name(), " with more than two operands compares scalars only");
      if (!traced && !result.tensor().isNonZero()) return boolean(false);
      if (traced) staged = staged.isNil() ? result : binaryCall<BinaryOp::LogicalAnd>(staged, result, cx.span);
    }
    return staged.isNil() ? boolean(true) : staged;
  });
  builtin.setBinaryFn(binaryCall<op>);
}

template <BinaryOp op>
void defineBinary(Evaluator& evaluator, const char* name) {
  auto& builtin = evaluator.defineBuiltin(name, 2, 2, [](CallContext& cx, Args args) {
    return binaryCall<op>(args[0], args[1], cx.span);
  });
  builtin.setBinaryFn(binaryCall<op>);
}

void defineUnary(Evaluator& evaluator, const char* name, UnaryOp op) {
  evaluator.defineBuiltin(name, 1, 1, [op](CallContext& cx, Args args) { return unaryCall(op, cx, args[0]); });
}

/// The builtin of a binary row, by how its call form combines more operands.
template <BinaryOp op>
void defineBinaryRow(Evaluator& evaluator, const char* name, const CallForm& form) {
  switch (form.variadic) {
  case Variadic::Fold: defineFold<op>(evaluator, name, form.identity, false); break;
  case Variadic::FoldInverse: defineFold<op>(evaluator, name, form.identity, true); break;
  case Variadic::Chain: defineComparison<op>(evaluator, name); break;
  case Variadic::None: defineBinary<op>(evaluator, name); break;
  }
}

} // namespace

void registerNumericBuiltins(Evaluator& evaluator) {
  // The elementwise rows of runtime/Elementwise.h, with their fast paths; a unary row
  // with a call form of its own (gelu's :approximate) is read by its form like any other
  // primitive (eval/BuiltinsTensor.cpp), as are internal rows (gelu-tanh).
#define TSL_DEFINE_BINARY(name, text, mnemonic, flags, call, ...) defineBinaryRow<BinaryOp::name>(evaluator, text, call);
  TSL_BINARY_OPS(TSL_DEFINE_BINARY)
#undef TSL_DEFINE_BINARY
#define TSL_DEFINE_UNARY(name, text, mnemonic, flags, call, ...)                                   \
  if (&call == &kUnaryCall) defineUnary(evaluator, text, UnaryOp::name);
  TSL_UNARY_OPS(TSL_DEFINE_UNARY)
#undef TSL_DEFINE_UNARY

  evaluator.defineBuiltin("inc", 1, 1, [](CallContext& cx, Args args) {
    return binaryCall<BinaryOp::Add>(args[0], Value(Tensor::weakInt(1)), cx.span);
  });
  evaluator.defineBuiltin("dec", 1, 1, [](CallContext& cx, Args args) {
    return binaryCall<BinaryOp::Sub>(args[0], Value(Tensor::weakInt(1)), cx.span);
  });

  evaluator.defineBuiltin("=", 1, -1, [](CallContext&, Args args) {
    for (size_t i = 0; i + 1 < args.size(); ++i)
      if (!valuesEqual(args[i], args[i + 1])) return boolean(false);
    return boolean(true);
  });
  evaluator.defineBuiltin("not=", 1, -1, [](CallContext&, Args args) {
    for (size_t i = 0; i + 1 < args.size(); ++i)
      if (!valuesEqual(args[i], args[i + 1])) return boolean(true);
    return boolean(false);
  });
  evaluator.defineBuiltin("not", 1, 1, [](CallContext& cx, Args args) {
    // Under jit, the negation of a traced boolean is known only when the code runs.
    if (isTraced(args[0]) && tracedType(args[0]).dtype == DType::Bool && tracedType(args[0]).rank() == 0)
      return unaryCall(UnaryOp::LogicalNot, cx, args[0]);
    return boolean(!args[0].truthy());
  });

  // (layout x): how x's elements sit in memory (docs/language.md §7); of a value being traced,
  // the layout its type gives.
  evaluator.defineBuiltin("layout", 1, 1, [](CallContext& cx, Args args) {
    if (isTraced(args[0])) {
      const ir::Type& type = tracedType(args[0]);
      return makeKeyword(layoutKeyword(type.layout, type.rank()));
    }
    const Tensor& t = tensorArg(cx, args, 0);
    return makeKeyword(layoutKeyword(t.layout(), t.rank()));
  });
  evaluator.defineBuiltin("dtype", 1, 1, [](CallContext& cx, Args args) {
    if (isTraced(args[0])) {
      const DType d = tracedType(args[0]).dtype;
      const bool weak = traced(args[0]).tracer()->isWeak(traced(args[0]).value());
      return makeKeyword(dtypeName(weak ? concreteDType({d, true}) : d));
    }
    return makeKeyword(dtypeName(concreteDType(tensorArg(cx, args, 0).typeKey())));
  });

}

} // namespace tsl::builtins
