// ir/passes/Simplify.cpp — simplify: algebraic identities, as a table of rewrite rules.
//
// Expects: verified IR. Guarantees: each rule below replaces a pattern by a cheaper
// equivalent with exactly the same result type and elements (no rule relies on float
// identities that NaN or infinity would break, such as x * 0 = 0 or log(exp x) = x).
// Rules are grouped by the operation at the root of their pattern; a rule whose
// replacement would change the type (x * 1 where 1 promotes or broadcasts x) does not
// fire. Runs to a fixpoint.
//
//   x + 0 -> x        0 + x -> x        x - 0 -> x   (for floats: x + (-0.0), x - (+0.0),
//                                                      as x + 0.0 is +0.0 for x = -0.0)
//   x * 1 -> x        1 * x -> x        x / 1 -> x        x ^ 1 -> x
//   neg (neg x) -> x
//   transpose (transpose x p) q -> transpose x (p then q), or x if that is the identity
//   transpose x identity -> x
//   reshape (reshape x) s -> reshape x s        reshape x (shape of x) -> x
//   broadcast_to x (shape of x) -> x            astype x (dtype of x) -> x
//   squeeze (expand_dims x a) a -> x            a reduction over no axes -> x
#include "ir/Pass.h"
#include "runtime/Interrupt.h"

#include <cmath>
#include <optional>

namespace tsl::ir {

namespace {

/// The value of every element of `v` when they are all equal and known at compile time:
/// a constant, or a splat seen through broadcast_to, reshape, expand_dims, full and a
/// where on a constant condition.
std::optional<double> splat(const Value* v) {
  const Operation* def = v->def();
  if (!def) return std::nullopt;
  if (def->code().is(Structural::Constant)) {
    const Tensor c = def->constant().isScalar() ? def->constant() : contiguous(astype(def->constant(), DType::F64));
    if (c.isScalar()) return c.toDouble();
    const double* p = reinterpret_cast<const double*>(c.data());
    for (int64_t i = 1; i < c.numel(); ++i)
      if (!(p[i] == p[0])) return std::nullopt;
    if (c.numel() == 0) return std::nullopt;
    return p[0];
  }
  if (def->code().is(OpKind::Full)) return std::get<FullAttrs>(def->attrs()).value.asDouble();
  if (def->code().is(OpKind::Where)) { // where with a constant condition picks one side
    const auto cond = splat(def->operand(0));
    if (!cond) return std::nullopt;
    return splat(def->operand(*cond != 0 ? 1 : 2));
  }
  if (def->code().is(OpKind::BroadcastTo) || def->code().is(OpKind::Reshape) || def->code().is(OpKind::ExpandDims))
    return splat(def->operand(0));
  return std::nullopt;
}

bool isSplat(const Value* v, double value) {
  const auto s = splat(v);
  return s && *s == value;
}

/// A zero that adding (added: true) or subtracting (false) leaves every x of a `result`
/// typed operation unchanged: for a float result only a float -0.0 added or +0.0
/// subtracted keeps x = -0.0 as it is (an integer or false zero becomes +0.0).
bool isNeutralZero(const Value* v, bool added, const Value* result) {
  const auto s = splat(v);
  if (!s || *s != 0) return false;
  if (!isFloat(result->type().dtype)) return true;
  return isFloat(v->type().dtype) && std::signbit(*s) == added;
}

/// `candidate` may replace `op`'s result only if it has exactly the result's type.
Value* ifSameType(Operation& op, Value* candidate) {
  return candidate && candidate->type() == op.result()->type() ? candidate : nullptr;
}

Operation* producer(const Value* v, OpKind kind) {
  Operation* def = v->def();
  return def && def->code().is(kind) ? def : nullptr;
}

// ---- The rules, by root ----

/// A rule returns the value that replaces the root's result, or nullptr if it does not
/// apply. A rule may instead rewrite the root in place and return the root's own result.
using Rule = Value* (*)(Operation& op);

struct RuleSet {
  OpKind root;
  std::vector<Rule> rules;
};

Value* identityRight(Operation& op, double identity) {
  return isSplat(op.operand(1), identity) ? ifSameType(op, op.operand(0)) : nullptr;
}
Value* identityEither(Operation& op, double identity) {
  if (Value* v = identityRight(op, identity)) return v;
  return isSplat(op.operand(0), identity) ? ifSameType(op, op.operand(1)) : nullptr;
}

Value* addZero(Operation& op) {
  if (isNeutralZero(op.operand(1), true, op.result())) return ifSameType(op, op.operand(0));
  return isNeutralZero(op.operand(0), true, op.result()) ? ifSameType(op, op.operand(1)) : nullptr;
}
Value* subZero(Operation& op) {
  return isNeutralZero(op.operand(1), false, op.result()) ? ifSameType(op, op.operand(0)) : nullptr;
}

Value* composeTransposes(Operation& op) {
  Operation* inner = producer(op.operand(0), OpKind::Transpose);
  const int rank = op.result()->type().rank();
  const auto outer = resolvePermutation(rank, std::get<PermAttrs>(op.attrs()).perm);
  if (!inner) {
    for (int i = 0; i < rank; ++i)
      if (outer[i] != i) return nullptr;
    return ifSameType(op, op.operand(0));
  }
  const auto first = resolvePermutation(rank, std::get<PermAttrs>(inner->attrs()).perm);
  std::vector<int64_t> combined(static_cast<size_t>(rank));
  for (int i = 0; i < rank; ++i) combined[i] = first[outer[i]];
  bool identity = true;
  for (int i = 0; i < rank; ++i) identity &= combined[i] == i;
  if (identity) return ifSameType(op, inner->operand(0));
  op.operands()[0] = inner->operand(0);
  op.setAttrs(PermAttrs{combined});
  return op.result();
}

Value* foldReshapes(Operation& op) {
  if (Value* v = ifSameType(op, op.operand(0))) return v;
  if (Operation* inner = producer(op.operand(0), OpKind::Reshape)) {
    op.operands()[0] = inner->operand(0); // the outer reshape alone decides the shape
    return op.result();
  }
  return nullptr;
}

Value* squeezeOfExpand(Operation& op) {
  Operation* inner = producer(op.operand(0), OpKind::ExpandDims);
  const auto& axes = std::get<AxesAttrs>(op.attrs());
  if (!inner || axes.axes.size() != 1) return nullptr;
  const int rank = op.operand(0)->type().rank();
  const int64_t a = std::get<AxisAttrs>(inner->attrs()).axis, b = axes.axes[0];
  if ((a < 0 ? a + rank : a) != (b < 0 ? b + rank : b)) return nullptr;
  return ifSameType(op, inner->operand(0));
}

Value* reductionOverNothing(Operation& op) {
  return std::get<ReduceAttrs>(op.attrs()).noAxes ? ifSameType(op, op.operand(0)) : nullptr;
}

Value* sameTypeIsIdentity(Operation& op) { return ifSameType(op, op.operand(0)); }

const std::vector<RuleSet>& ruleSets() {
  static const std::vector<RuleSet> sets = {
      {OpKind::Add, {addZero}},
      {OpKind::Sub, {subZero}},
      {OpKind::Mul, {[](Operation& op) { return identityEither(op, 1); }}},
      {OpKind::Div, {[](Operation& op) { return identityRight(op, 1); }}},
      {OpKind::Pow, {[](Operation& op) { return identityRight(op, 1); }}},
      {OpKind::Neg,
       {[](Operation& op) -> Value* {
         Operation* inner = producer(op.operand(0), OpKind::Neg);
         return inner ? ifSameType(op, inner->operand(0)) : nullptr;
       }}},
      {OpKind::Transpose, {composeTransposes}},
      {OpKind::Reshape, {foldReshapes}},
      {OpKind::BroadcastTo, {sameTypeIsIdentity}},
      {OpKind::Cast, {sameTypeIsIdentity}},
      {OpKind::Squeeze, {squeezeOfExpand}},
      {OpKind::Sum, {reductionOverNothing}},
      {OpKind::Mean, {reductionOverNothing}},
      {OpKind::Prod, {reductionOverNothing}},
      {OpKind::Max, {reductionOverNothing}},
      {OpKind::Min, {reductionOverNothing}},
  };
  return sets;
}

class Simplify final : public Pass {
public:
  const char* name() const override { return "simplify"; }

  bool run(Module& module, PassContext&) override {
    bool changed = false;
    for (auto& f : module.functions()) {
      for (int round = 0; round < 100; ++round) {
        Replacements replacements;
        if (!block(f->body(), replacements)) break;
        changed = true;
      }
    }
    return changed;
  }

private:
  static bool block(Block& b, Replacements& replacements) {
    bool changed = false;
    for (auto it = b.ops().begin(); it != b.ops().end();) {
      checkInterrupt(); // Ctrl-C stops a long compile (ir/Pass.h)
      Operation& op = **it;
      replacements.apply(op);
      for (auto& region : op.regions()) changed |= block(region->block(), replacements);
      Value* replacement = op.code().primitive ? apply(op) : nullptr;
      if (replacement && replacement != op.result()) {
        replacements.replace(op.result(), replacement);
        it = replacements.erase(b.ops(), it);
        changed = true;
        continue;
      }
      changed |= replacement != nullptr; // rewritten in place
      ++it;
    }
    return changed;
  }

  static Value* apply(Operation& op) {
    for (const RuleSet& set : ruleSets()) {
      if (set.root != op.code().kind) continue;
      for (Rule rule : set.rules)
        if (Value* v = rule(op)) return v;
    }
    return nullptr;
  }
};

} // namespace

std::unique_ptr<Pass> createSimplifyPass() { return std::make_unique<Simplify>(); }

} // namespace tsl::ir
