// autodiff/Emit.h — building derivative IR.
//
// A thin layer over ir::Builder for the derivative rules: every operation it creates
// carries the span of the primal operation the derivative comes from (so an error in a
// derivative points at the user's expression), and it spells the common patterns —
// arithmetic, zeros, casts, undoing a broadcast — once.
#pragma once

#include "ir/Builder.h"

namespace tsl::autodiff {

class Emit {
public:
  Emit(ir::Builder& builder, Span span) : b_(builder), span_(span) {}
  ir::Builder& builder() { return b_; }
  const Span& span() const { return span_; }

  ir::Value* op(OpKind kind, OpAttrs attrs, std::vector<ir::Value*> operands);
  ir::Value* op(OpKind kind, std::vector<ir::Value*> operands) { return op(kind, NoAttrs{}, std::move(operands)); }
  /// A scalar constant of `dtype`.
  ir::Value* scalar(double value, DType dtype);

  ir::Value* add(ir::Value* a, ir::Value* b) { return op(OpKind::Add, {a, b}); }
  ir::Value* sub(ir::Value* a, ir::Value* b) { return op(OpKind::Sub, {a, b}); }
  ir::Value* mul(ir::Value* a, ir::Value* b) { return op(OpKind::Mul, {a, b}); }
  ir::Value* div(ir::Value* a, ir::Value* b) { return op(OpKind::Div, {a, b}); }
  ir::Value* neg(ir::Value* a) { return op(OpKind::Neg, {a}); }
  /// a + b where either may be null (a missing tangent or cotangent is zero).
  ir::Value* addMaybe(ir::Value* a, ir::Value* b) { return !a ? b : !b ? a : add(a, b); }
  /// a * s for a scalar s of a's dtype.
  ir::Value* scale(ir::Value* a, double s) { return mul(a, scalar(s, a->type().dtype)); }
  /// where(ct == 0, 0, ct * d): a cotangent that is zero stays zero even where d is
  /// infinite or NaN (what keeps `where` from leaking the branch it did not take).
  ir::Value* mulNoNan(ir::Value* ct, ir::Value* d);
  /// where(ct == 0, 0, ct / d), for the same reason.
  ir::Value* divNoNan(ir::Value* ct, ir::Value* d);
  ir::Value* where(ir::Value* cond, ir::Value* a, ir::Value* b) { return op(OpKind::Where, {cond, a, b}); }
  /// A 0/1 (or 0.5 for ties) mask as numbers of `dtype`.
  ir::Value* cast(ir::Value* v, DType dtype);

  /// Zeros of v's type (a `full` op; for symbolic shapes a `where` on v itself).
  ir::Value* zerosLike(ir::Value* v);
  /// Zeros of `type`; `like` is any value of that type (needed when its shape is symbolic).
  ir::Value* zeros(const ir::Type& type, ir::Value* like);
  /// Sums v over the axes a broadcast to v's shape added or stretched, so it has
  /// `target`'s shape (the cotangent of a broadcast operand).
  ir::Value* sumTo(ir::Value* v, const ir::Type& target);
  /// v broadcast to `target`'s shape; `like` (a value of that shape) makes symbolic
  /// shapes possible.
  ir::Value* broadcastTo(ir::Value* v, const ir::Type& target, ir::Value* like = nullptr);
  ir::Value* reshape(ir::Value* v, const ir::Type& target);
  ir::Value* sum(ir::Value* v, std::vector<int64_t> axes, bool keepDims);
  ir::Value* mean(ir::Value* v, std::vector<int64_t> axes, bool keepDims);

private:
  ir::Builder& b_;
  Span span_;
};

/// The concrete dimensions of a type (an error naming the op for symbolic ones).
std::vector<int64_t> concreteDims(const ir::Type& type, const char* what);

} // namespace tsl::autodiff
