// autodiff/Rules.h — one derivative rule per operation, reverse and forward.
//
// The table is keyed by OpKind like the operation table (runtime/Ops.h) and completes it:
// every primitive is differentiable (it has a vjp and a jvp rule, both written with the IR
// builder so they emit ordinary IR), constant (its result does not change with its float
// operands where it is defined — comparisons, argmax, sign, integer results, random
// draws, creation — so no derivative flows through it), or has no derivative in this
// build (a rule that says why). Rules see the primal operation (its attributes and span),
// its operands and its result as they are where the derivative is being built.
//
// A vjp rule returns one cotangent per operand (nullptr for none); it may return it in
// the result's broadcast shape and dtype — the transform sums it back to the operand's
// shape and casts it to the operand's dtype, and drops cotangents of non-float operands.
// A jvp rule receives one tangent per operand (nullptr for zero) and returns the result's
// tangent (nullptr for zero); the transform broadcasts and casts it to the result's type.
#pragma once

#include "autodiff/Emit.h"

namespace tsl::autodiff {

struct Primal {
  const ir::Operation& op;     ///< the primal operation (attributes, span)
  std::vector<ir::Value*> x;   ///< its operands, where the derivative is built
  ir::Value* y;                ///< its result there
};

using VjpRule = std::vector<ir::Value*> (*)(Emit& e, const Primal& p, ir::Value* ct);
using JvpRule = ir::Value* (*)(Emit& e, const Primal& p, const std::vector<ir::Value*>& dx);

enum class Differentiability : uint8_t {
  Rules,       ///< differentiable: vjp and jvp below
  Constant,    ///< zero derivative wherever it is defined: nothing flows through
  Unsupported, ///< differentiable in principle, but this build has no rule (`why` says so)
};

struct DiffRule {
  Differentiability kind = Differentiability::Unsupported;
  VjpRule vjp = nullptr;
  JvpRule jvp = nullptr; ///< may be null for Rules: forward mode is then unsupported
  const char* why = "";
};

const DiffRule& diffRule(OpKind kind);

/// The table's parts, one per family of operations (autodiff/Rules*.cpp).
using RuleTable = std::vector<DiffRule>;
void addElementwiseRules(RuleTable& table);
void addStructureRules(RuleTable& table);
void addNeuralRules(RuleTable& table);
void addLinalgRules(RuleTable& table);
void addOrderRules(RuleTable& table);
void addCollectiveRules(RuleTable& table);
void addAttentionRules(RuleTable& table);

/// Shorthands the rule files share.
namespace shorthand {
using V = ir::Value*;
using Vs = std::vector<ir::Value*>;
inline DType dt(V v) { return v->type().dtype; }
template <typename A>
const A& attrs(const Primal& p) {
  return std::get<A>(p.op.attrs());
}
} // namespace shorthand

} // namespace tsl::autodiff
