// autodiff/RulesCollective.cpp — derivatives of the collectives (runtime/CollectiveRows.h).
//
// A program running on R ranks computes, on each rank r, y_r from every rank's x; the
// derivative each rank gets is that of the sum over ranks of what every rank computes from
// its y_r (so a loss each rank computes, all-reduced or not, has the gradient the ranks'
// losses summed would have). With that convention the collectives are linear maps whose
// transposes are collectives again, as JAX's psum:
//
//   all-reduce :sum   y_r = Σ_q x_q           vjp: all-reduce :sum of ct
//   all-reduce :mean  y_r = Σ_q x_q / R       vjp: all-reduce :mean of ct
//   all-gather        y_r = concat_q x_q      vjp: reduce-scatter of ct (along the axis)
//   reduce-scatter    y_r = Σ_q block_r(x_q)  vjp: all-gather of ct
//   broadcast         y_r = x_root            vjp: reduce-to-root of ct (zeros off the root)
//   reduce-to-root    y_root = Σ_q x_q        vjp: broadcast of ct from the root
//
// Their tangents are the same collective applied to the tangent. all-reduce :max and
// :min pass the summed cotangent to the ranks holding the extremum, shared evenly among
// ties (as max and min do within a tensor). barrier has no operands.
#include "autodiff/Rules.h"

namespace tsl::autodiff {

namespace {

using namespace shorthand;

V collective(Emit& e, OpKind kind, CollectiveAttrs a, V v) { return e.op(kind, std::move(a), {v}); }

CollectiveAttrs summing(const Primal& p) {
  CollectiveAttrs a = attrs<CollectiveAttrs>(p);
  a.op = CollectiveOp::Sum;
  return a;
}

/// Where x holds the extremum across ranks, as 0/1 of `dtype`, and how many ranks hold it.
std::pair<V, V> extremumMask(Emit& e, const Primal& p, DType dtype) {
  const V mask = e.cast(e.op(OpKind::Equal, {p.x[0], p.y}), dtype);
  return {mask, collective(e, OpKind::AllReduce, summing(p), mask)};
}

Vs allReduceVjp(Emit& e, const Primal& p, V ct) {
  const CollectiveAttrs& a = attrs<CollectiveAttrs>(p);
  if (a.op == CollectiveOp::Sum || a.op == CollectiveOp::Mean) return {collective(e, OpKind::AllReduce, a, ct)};
  const auto [mask, count] = extremumMask(e, p, dt(ct));
  return {e.mul(collective(e, OpKind::AllReduce, summing(p), ct), e.divNoNan(mask, count))};
}

V allReduceJvp(Emit& e, const Primal& p, const Vs& d) {
  if (!d[0]) return nullptr;
  const CollectiveAttrs& a = attrs<CollectiveAttrs>(p);
  if (a.op == CollectiveOp::Sum || a.op == CollectiveOp::Mean) return collective(e, OpKind::AllReduce, a, d[0]);
  const V t = e.cast(d[0], dt(p.y));
  const auto [mask, count] = extremumMask(e, p, dt(p.y));
  return e.divNoNan(collective(e, OpKind::AllReduce, summing(p), e.mul(t, mask)), count);
}

/// The collective `kind` (with the primal's attributes) applied to the cotangent.
template <OpKind kind>
Vs transposedBy(Emit& e, const Primal& p, V ct) {
  return {collective(e, kind, attrs<CollectiveAttrs>(p), ct)};
}

/// The primal's own collective applied to the tangent.
V sameOnTangent(Emit& e, const Primal& p, const Vs& d) {
  return d[0] ? collective(e, p.op.code().kind, attrs<CollectiveAttrs>(p), d[0]) : nullptr;
}

DiffRule rules(VjpRule vjp, JvpRule jvp) { return {Differentiability::Rules, vjp, jvp, ""}; }

} // namespace

void addCollectiveRules(RuleTable& t) {
  auto at = [&](OpKind k) -> DiffRule& { return t[static_cast<size_t>(k)]; };
  at(OpKind::AllReduce) = rules(allReduceVjp, allReduceJvp);
  at(OpKind::AllGather) = rules(transposedBy<OpKind::ReduceScatter>, sameOnTangent);
  at(OpKind::ReduceScatter) = rules(transposedBy<OpKind::AllGather>, sameOnTangent);
  at(OpKind::Broadcast) = rules(transposedBy<OpKind::ReduceToRoot>, sameOnTangent);
  at(OpKind::ReduceToRoot) = rules(transposedBy<OpKind::Broadcast>, sameOnTangent);
  at(OpKind::Barrier) = {Differentiability::Constant, nullptr, nullptr, ""};
  // The bucket-all-reduce pass makes these after differentiation; nothing differentiates them.
  at(OpKind::AllReduceStart) = {Differentiability::Unsupported, nullptr, nullptr,
                                "all-reduce-start is made by a pass after differentiation"};
  at(OpKind::AllReduceWait) = {Differentiability::Unsupported, nullptr, nullptr,
                               "all-reduce-wait is made by a pass after differentiation"};
}

} // namespace tsl::autodiff
