// autodiff/RulesOrder.cpp — derivatives of the operations that order and select by index:
// sort, argsort, top-k, gather and scatter-add.
//
// sort and top-k's values move elements of x to new places, chosen by the order of the
// values (argsort, top-k's indices), which is constant where it is defined: the cotangent
// goes back to the places the elements came from (a scatter-add into zeros) and the tangent
// follows them (a gather). gather and scatter-add are linear in their tensors and each
// other's adjoint: gather's cotangent is scattered back into zeros of x's shape (broadcast
// axes then summed by the transform), scatter-add's source gets the cotangent gathered at
// the indices. Indices (argsort, top-k's second part, the idx operands) take none.
#include "autodiff/Rules.h"

namespace tsl::autodiff {

namespace {

using namespace shorthand;

/// Zeros of v's shape in `dtype`.
V zerosOf(Emit& e, V v, DType dtype) {
  ir::Type t = v->type();
  t.dtype = dtype;
  return e.zeros(t, v);
}

/// ct (of idx's shape) added into zeros shaped like x at idx along `axis`.
V scatterBack(Emit& e, V x, V idx, V ct, int64_t axis) {
  return e.op(OpKind::ScatterAdd, AxisAttrs{axis}, {zerosOf(e, x, dt(ct)), idx, ct});
}

// ---- sort and top-k ----

V sortOrder(Emit& e, const Primal& p) { return e.op(OpKind::ArgSort, p.op.attrs(), {p.x[0]}); }

Vs sortVjp(Emit& e, const Primal& p, V ct) {
  if (ct->type().rank() == 0) return {ct};
  return {scatterBack(e, p.x[0], sortOrder(e, p), ct, attrs<AxisAttrs>(p).axis)};
}
V sortJvp(Emit& e, const Primal& p, const Vs& d) {
  if (d[0]->type().rank() == 0) return d[0];
  return e.op(OpKind::Gather, p.op.attrs(), {d[0], sortOrder(e, p)});
}

/// The indices part of the top-k whose values part `p` is.
V topKIndices(Emit& e, const Primal& p) {
  return e.op(OpKind::TopK, TopKAttrs{attrs<TopKAttrs>(p).k, 1}, {p.x[0]});
}
Vs topKVjp(Emit& e, const Primal& p, V ct) {
  if (attrs<TopKAttrs>(p).part != 0) return {nullptr};
  return {scatterBack(e, p.x[0], topKIndices(e, p), ct, -1)};
}
V topKJvp(Emit& e, const Primal& p, const Vs& d) {
  if (attrs<TopKAttrs>(p).part != 0) return nullptr;
  return e.op(OpKind::Gather, AxisAttrs{-1}, {d[0], topKIndices(e, p)});
}

// ---- gather and scatter-add ----

// gather(x, idx) reads x at idx in the broadcast shape of both: the cotangent is added
// into zeros of that shape with x's own length along the axis, the indices broadcast too.
Vs gatherVjp(Emit& e, const Primal& p, V ct) {
  const int64_t axis = attrs<AxisAttrs>(p).axis;
  const size_t a = static_cast<size_t>(normalizeAxis(axis, ct->type().rank()));
  ir::Type target = ct->type();
  target.dims[a] = p.x[0]->type().dims[a];
  (void)concreteDims(target, "gather");
  V idx = e.broadcastTo(p.x[1], ct->type());
  return {e.op(OpKind::ScatterAdd, AxisAttrs{axis}, {e.zeros(target, nullptr), idx, ct}), nullptr};
}
V gatherJvp(Emit& e, const Primal& p, const Vs& d) { return e.op(OpKind::Gather, p.op.attrs(), {d[0], p.x[1]}); }

// scatter-add(x, idx, src): x's cotangent is ct; src's is ct at idx — ct cut to idx's
// extent off the axis, gathered, then placed in zeros of src's shape where idx is smaller.
Vs scatterAddVjp(Emit& e, const Primal& p, V ct) {
  const int64_t axis = attrs<AxisAttrs>(p).axis;
  const int rank = ct->type().rank();
  const size_t a = static_cast<size_t>(normalizeAxis(axis, rank));
  const std::vector<int64_t> x = concreteDims(p.x[0]->type(), "scatter-add");
  const std::vector<int64_t> idx = concreteDims(p.x[1]->type(), "scatter-add");
  const std::vector<int64_t> src = concreteDims(p.x[2]->type(), "scatter-add");
  std::vector<SliceRange> offAxis, all;
  bool cut = false, placed = false;
  for (size_t d = 0; d < idx.size(); ++d) {
    offAxis.push_back(d == a ? SliceRange{} : SliceRange{0, idx[d], 1});
    all.push_back(SliceRange{0, idx[d], 1});
    cut |= d != a && idx[d] < x[d];
    placed |= idx[d] < src[d];
  }
  V read = cut ? e.op(OpKind::Slice, SliceAttrs{offAxis}, {ct}) : ct;
  V gathered = e.op(OpKind::Gather, AxisAttrs{axis}, {read, p.x[1]});
  if (placed) gathered = e.op(OpKind::SliceGrad, SliceGradAttrs{all, src}, {gathered});
  return {ct, nullptr, gathered};
}
V scatterAddJvp(Emit& e, const Primal& p, const Vs& d) {
  V dx = d[0] ? d[0] : zerosOf(e, p.x[0], dt(p.y));
  V dsrc = d[2] ? d[2] : zerosOf(e, p.x[2], dt(p.y));
  return e.op(OpKind::ScatterAdd, p.op.attrs(), {dx, p.x[1], dsrc});
}

DiffRule rules(VjpRule vjp, JvpRule jvp) { return {Differentiability::Rules, vjp, jvp, ""}; }

} // namespace

void addOrderRules(RuleTable& t) {
  auto at = [&](OpKind k) -> DiffRule& { return t[static_cast<size_t>(k)]; };
  at(OpKind::Sort) = rules(sortVjp, sortJvp);
  at(OpKind::ArgSort) = {Differentiability::Constant, nullptr, nullptr, ""};
  at(OpKind::TopK) = rules(topKVjp, topKJvp);
  at(OpKind::Gather) = rules(gatherVjp, gatherJvp);
  at(OpKind::ScatterAdd) = rules(scatterAddVjp, scatterAddJvp);
}

} // namespace tsl::autodiff
