// autodiff/RulesStructure.cpp — derivatives of reductions and of the operations that move
// elements (reshape, transpose, broadcast, slices, indexing, joins, pad, take), and of the
// scans (cumsum, cumprod and the linear scans cumprod's derivatives are made of).
//
// A reduction's cotangent is spread back over the axes it reduced. max and min split it
// evenly among tied maxima (docs/language.md §5). prod's derivative is the product of the other
// elements, also where an element is zero. Movement operations are linear: their
// cotangent is the inverse movement — slice_grad and take_grad (runtime/Gradients.h)
// scatter back what slice and take gathered.
#include "autodiff/Rules.h"

#include <algorithm>

namespace tsl::autodiff {

namespace {

using namespace shorthand;

/// The axes a reduction reduces, normalised and sorted.
std::vector<int64_t> reducedAxes(const ReduceAttrs& a, int rank) {
  std::vector<int64_t> axes;
  if (a.noAxes) return axes;
  if (a.axes.empty()) {
    for (int i = 0; i < rank; ++i) axes.push_back(i);
    return axes;
  }
  for (int64_t axis : a.axes) axes.push_back(normalizeAxis(axis, rank));
  std::sort(axes.begin(), axes.end());
  return axes;
}

/// The reduced result (or its cotangent) with the reduced axes back as size 1.
V keepDims(Emit& e, V v, const ir::Type& input, const ReduceAttrs& a) {
  if (a.keepDims) return v;
  // expand_dims at each reduced axis, in increasing order (no sizes needed).
  for (int64_t axis : reducedAxes(a, input.rank())) v = e.op(OpKind::ExpandDims, AxisAttrs{axis}, {v});
  return v;
}

/// ct spread over x's shape.
V spread(Emit& e, const Primal& p, V ct) {
  ir::Type target = p.x[0]->type();
  target.dtype = dt(ct);
  return e.broadcastTo(keepDims(e, ct, p.x[0]->type(), attrs<ReduceAttrs>(p)), target, p.x[0]);
}

int64_t reducedCount(const Primal& p) {
  int64_t n = 1;
  const std::vector<int64_t> dims = concreteDims(p.x[0]->type(), "a mean");
  for (int64_t axis : reducedAxes(attrs<ReduceAttrs>(p), p.x[0]->type().rank())) n *= dims[static_cast<size_t>(axis)];
  return n;
}

/// A reduction as sum(dx * weight) over its axes, weight being dy/dx.
V weightedJvp(Emit& e, const Primal& p, V dx, V weight) {
  const ReduceAttrs& a = attrs<ReduceAttrs>(p);
  return e.sum(e.mul(dx, weight), reducedAxes(a, p.x[0]->type().rank()), a.keepDims);
}

Vs sumVjp(Emit& e, const Primal& p, V ct) { return {spread(e, p, ct)}; }
V sumJvp(Emit& e, const Primal& p, const Vs& d) { return e.op(OpKind::Sum, p.op.attrs(), {d[0]}); }

Vs meanVjp(Emit& e, const Primal& p, V ct) {
  return {spread(e, p, e.div(ct, e.scalar(static_cast<double>(reducedCount(p)), dt(ct))))};
}
V meanJvp(Emit& e, const Primal& p, const Vs& d) { return e.op(OpKind::Mean, p.op.attrs(), {d[0]}); }

/// d prod / d x_i: the product of the other elements — y / x_i where x_i != 0; where x_i
/// is the only zero of its slice, the product of the nonzero ones; 0 for more zeros.
V prodWeight(Emit& e, const Primal& p) {
  V x = p.x[0];
  const ReduceAttrs keep{reducedAxes(attrs<ReduceAttrs>(p), x->type().rank()), true, false};
  V zero = e.scalar(0, dt(x));
  V isZero = e.op(OpKind::Equal, {x, zero});
  V zeros = e.op(OpKind::Sum, keep, {e.cast(isZero, DType::I64)});
  V nonzeroProduct = e.op(OpKind::Prod, keep, {e.where(isZero, e.scalar(1, dt(x)), x)});
  V y = keepDims(e, p.y, x->type(), attrs<ReduceAttrs>(p));
  V safeX = e.where(isZero, e.scalar(1, dt(x)), x);
  V onlyZero = e.op(OpKind::Equal, {zeros, e.scalar(1, DType::I64)});
  return e.where(isZero, e.where(onlyZero, nonzeroProduct, e.scalar(0, dt(y))), e.div(y, safeX));
}
Vs prodVjp(Emit& e, const Primal& p, V ct) { return {e.mul(spread(e, p, ct), prodWeight(e, p))}; }
V prodJvp(Emit& e, const Primal& p, const Vs& d) { return weightedJvp(e, p, d[0], prodWeight(e, p)); }

/// max/min: 1/k on each of the k elements equal to the extremum.
V extremumWeight(Emit& e, const Primal& p) {
  V x = p.x[0];
  const ReduceAttrs keep{reducedAxes(attrs<ReduceAttrs>(p), x->type().rank()), true, false};
  V hit = e.cast(e.op(OpKind::Equal, {x, keepDims(e, p.y, x->type(), attrs<ReduceAttrs>(p))}), dt(p.y));
  return e.div(hit, e.op(OpKind::Sum, keep, {hit}));
}
Vs extremumVjp(Emit& e, const Primal& p, V ct) { return {e.mul(spread(e, p, ct), extremumWeight(e, p))}; }
V extremumJvp(Emit& e, const Primal& p, const Vs& d) { return weightedJvp(e, p, d[0], extremumWeight(e, p)); }

/// logsumexp: the softmax of x over the axes, computed from x - max(x) (x - logsumexp(x)
/// would cancel catastrophically for large x).
V lseWeight(Emit& e, const Primal& p) {
  V x = p.x[0];
  const ReduceAttrs keep{reducedAxes(attrs<ReduceAttrs>(p), x->type().rank()), true, false};
  V shifted = e.op(OpKind::Exp, {e.sub(x, e.op(OpKind::Max, keep, {x}))});
  return e.div(shifted, e.op(OpKind::Sum, keep, {shifted}));
}
Vs lseVjp(Emit& e, const Primal& p, V ct) { return {e.mul(spread(e, p, ct), lseWeight(e, p))}; }
V lseJvp(Emit& e, const Primal& p, const Vs& d) { return weightedJvp(e, p, d[0], lseWeight(e, p)); }

// ---- movement ----

/// ct (or a tangent) with the operand's shape: reshape back.
Vs reshapeBack(Emit& e, const Primal& p, V ct) { return {e.reshape(ct, p.x[0]->type())}; }
/// The same operation applied to the tangent.
V sameOnTangent(Emit& e, const Primal& p, const Vs& d) { return e.op(p.op.code().kind, p.op.attrs(), {d[0]}); }

Vs transposeVjp(Emit& e, const Primal& p, V ct) {
  const std::vector<int64_t> perm = resolvePermutation(p.x[0]->type().rank(), attrs<PermAttrs>(p).perm);
  std::vector<int64_t> inverse(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) inverse[static_cast<size_t>(perm[i])] = static_cast<int64_t>(i);
  return {e.op(OpKind::Transpose, PermAttrs{inverse}, {ct})};
}

Vs broadcastVjp(Emit& e, const Primal& p, V ct) {
  ir::Type target = p.x[0]->type();
  target.dtype = dt(ct);
  return {e.sumTo(ct, target)};
}

Vs sliceVjp(Emit& e, const Primal& p, V ct) {
  return {e.op(OpKind::SliceGrad, SliceGradAttrs{attrs<SliceAttrs>(p).ranges, concreteDims(p.x[0]->type(), "a slice")},
               {ct})};
}

Vs sliceGradVjp(Emit& e, const Primal& p, V ct) { return {e.op(OpKind::Slice, SliceAttrs{attrs<SliceGradAttrs>(p).ranges}, {ct})}; }

// get: the indexed axes become ranges of one element, then slice_grad.
Vs indexVjp(Emit& e, const Primal& p, V ct) {
  const std::vector<int64_t> shape = concreteDims(p.x[0]->type(), "get");
  const auto& indices = attrs<IndexAttrs>(p).indices;
  std::vector<SliceRange> ranges;
  ir::Type kept = p.x[0]->type();
  kept.dtype = dt(ct);
  for (size_t d = 0; d < shape.size(); ++d) {
    if (d < indices.size() && indices[d]) {
      int64_t i = *indices[d];
      if (i < 0) i += shape[d];
      ranges.push_back({i, i + 1, 1});
      kept.dims[d] = ir::Dim{1, {}};
    } else {
      ranges.push_back({});
    }
  }
  return {e.op(OpKind::SliceGrad, SliceGradAttrs{ranges, shape}, {e.reshape(ct, kept)})};
}

// concat: each operand's part of ct along the axis.
Vs concatVjp(Emit& e, const Primal& p, V ct) {
  const int rank = p.y->type().rank();
  const int axis = normalizeAxis(attrs<AxisAttrs>(p).axis, rank);
  Vs out;
  int64_t offset = 0;
  for (V x : p.x) {
    const ir::Dim& size = x->type().dims[static_cast<size_t>(axis)];
    if (size.symbolic()) fail(ErrorKind::Type, "autodiff: concat along a symbolic axis");
    std::vector<SliceRange> ranges(static_cast<size_t>(axis + 1));
    ranges[static_cast<size_t>(axis)] = {offset, offset + size.size, 1};
    out.push_back(e.op(OpKind::Slice, SliceAttrs{ranges}, {ct}));
    offset += size.size;
  }
  return out;
}
V joinJvp(Emit& e, const Primal& p, const Vs& d) {
  Vs parts;
  for (size_t i = 0; i < p.x.size(); ++i) {
    if (d[i]) {
      parts.push_back(e.cast(d[i], dt(p.y)));
      continue;
    }
    ir::Type t = p.x[i]->type();
    t.dtype = dt(p.y);
    parts.push_back(e.zeros(t, p.x[i]));
  }
  return e.op(p.op.code().kind, p.op.attrs(), parts);
}

// stack: ct indexed along the new axis.
Vs stackVjp(Emit& e, const Primal& p, V ct) {
  const int rank = p.y->type().rank();
  const int axis = normalizeAxis(attrs<AxisAttrs>(p).axis, rank);
  Vs out;
  for (size_t i = 0; i < p.x.size(); ++i) {
    std::vector<std::optional<int64_t>> indices(static_cast<size_t>(axis + 1));
    indices[static_cast<size_t>(axis)] = static_cast<int64_t>(i);
    out.push_back(e.op(OpKind::Index, IndexAttrs{indices}, {ct}));
  }
  return out;
}

// pad: the centre of ct.
Vs padVjp(Emit& e, const Primal& p, V ct) {
  const std::vector<int64_t> shape = concreteDims(p.x[0]->type(), "pad");
  const auto& widths = attrs<PadAttrs>(p).widths;
  std::vector<SliceRange> ranges;
  for (size_t d = 0; d < shape.size(); ++d) {
    const int64_t before = widths.size() == 1 ? widths[0][0] : widths[d][0];
    ranges.push_back({before, before + shape[d], 1});
  }
  return {e.op(OpKind::Slice, SliceAttrs{ranges}, {ct})};
}
V padJvp(Emit& e, const Primal& p, const Vs& d) {
  PadAttrs a = attrs<PadAttrs>(p);
  a.value = 0; // the padding is constant
  return e.op(OpKind::Pad, a, {d[0]});
}

Vs takeVjp(Emit& e, const Primal& p, V ct) {
  const int rank = p.x[0]->type().rank();
  const int axis = normalizeAxis(attrs<AxisAttrs>(p).axis, rank);
  const ir::Dim& size = p.x[0]->type().dims[static_cast<size_t>(axis)];
  if (size.symbolic()) fail(ErrorKind::Type, "autodiff: take along a symbolic axis");
  return {e.op(OpKind::TakeGrad, TakeGradAttrs{axis, size.size}, {ct, p.x[1]}), nullptr};
}
V takeJvp(Emit& e, const Primal& p, const Vs& d) { return e.op(OpKind::Take, p.op.attrs(), {d[0], p.x[1]}); }

Vs takeGradVjp(Emit& e, const Primal& p, V ct) {
  return {e.op(OpKind::Take, AxisAttrs{attrs<TakeGradAttrs>(p).axis}, {ct, p.x[1]}), nullptr};
}
V takeGradJvp(Emit& e, const Primal& p, const Vs& d) { return e.op(OpKind::TakeGrad, p.op.attrs(), {d[0], p.x[1]}); }

/// A layout changes no value: the cotangent goes back in the operand's layout, the
/// tangent forward in the result's.
Vs layoutVjp(Emit& e, const Primal& p, V ct) { return {e.op(OpKind::Transdata, LayoutAttrs{p.x[0]->type().layout}, {ct})}; }

// ---- triangles ----

// tril and triu are linear: the cotangent keeps the same triangle.
Vs maskedVjp(Emit& e, const Primal& p, V ct) { return {e.op(p.op.code().kind, p.op.attrs(), {ct})}; }

// ---- moments ----

/// d var / d x = 2 (x - mean) / (n - ddof), in x's shape (x counted in var's dtype).
V varWeight(Emit& e, const Primal& p) {
  const MomentAttrs& a = attrs<MomentAttrs>(p);
  V x = e.cast(p.x[0], dt(p.y));
  ReduceAttrs keep = a.reduction();
  keep.keepDims = true;
  const std::vector<int64_t> dims = concreteDims(p.x[0]->type(), "var");
  const int64_t divisor = std::max<int64_t>(tsl::reducedCount(Shape(std::span<const int64_t>(dims)), a.reduction()) - a.ddof, 0);
  V deviation = e.sub(x, e.op(OpKind::Mean, keep, {x}));
  return e.div(e.scale(deviation, 2), e.scalar(static_cast<double>(divisor), dt(p.y)));
}
/// d std / d x = d var / d x / (2 std): infinite where std is 0 (a constant slice).
V stdWeight(Emit& e, const Primal& p) {
  const ReduceAttrs r = attrs<MomentAttrs>(p).reduction();
  return e.div(varWeight(e, p), e.scale(keepDims(e, p.y, p.x[0]->type(), r), 2));
}
template <V (*weight)(Emit&, const Primal&)>
Vs momentVjp(Emit& e, const Primal& p, V ct) {
  const ReduceAttrs r = attrs<MomentAttrs>(p).reduction();
  ir::Type target = p.x[0]->type();
  target.dtype = dt(ct);
  return {e.mul(e.broadcastTo(keepDims(e, ct, p.x[0]->type(), r), target, p.x[0]), weight(e, p))};
}
template <V (*weight)(Emit&, const Primal&)>
V momentJvp(Emit& e, const Primal& p, const Vs& d) {
  const ReduceAttrs r = attrs<MomentAttrs>(p).reduction();
  return e.sum(e.mul(e.cast(d[0], dt(p.y)), weight(e, p)), reducedAxes(r, p.x[0]->type().rank()), r.keepDims);
}

// ---- scans ----

/// x reversed along `axis` (a slice with step -1).
V reversed(Emit& e, V x, int64_t axis) {
  const int rank = x->type().rank();
  std::vector<SliceRange> ranges(static_cast<size_t>(normalizeAxis(axis, rank)) + 1);
  ranges.back().step = -1;
  return e.op(OpKind::Slice, SliceAttrs{ranges}, {x});
}

// y_k = Σ_{i ≤ k} x_i: the cotangent of x_i is Σ_{k ≥ i} ct_k, a cumulative sum from the end.
Vs cumsumVjp(Emit& e, const Primal& p, V ct) {
  const int64_t axis = attrs<AxisAttrs>(p).axis;
  if (ct->type().rank() == 0) return {ct};
  return {reversed(e, e.op(OpKind::CumSum, AxisAttrs{axis}, {reversed(e, ct, axis)}), axis)};
}

/// v moved one place along `axis`, the place it leaves filled with `fill`: toward the end
/// (element k gets v_(k-1)) or toward the start (element k gets v_(k+1)).
V shifted(Emit& e, V v, int64_t axis, bool towardEnd, double fill) {
  const int rank = v->type().rank();
  const size_t a = static_cast<size_t>(normalizeAxis(axis, rank));
  const int64_t n = concreteDims(v->type(), "a scan")[a];
  if (n == 0) return v;
  std::vector<SliceRange> ranges(a + 1);
  ranges[a] = towardEnd ? SliceRange{0, n - 1, 1} : SliceRange{1, n, 1};
  std::vector<std::array<int64_t, 2>> widths(static_cast<size_t>(rank), std::array<int64_t, 2>{0, 0});
  widths[a] = towardEnd ? std::array<int64_t, 2>{1, 0} : std::array<int64_t, 2>{0, 1};
  return e.op(OpKind::Pad, PadAttrs{widths, fill}, {e.op(OpKind::Slice, SliceAttrs{ranges}, {v})});
}

V linearScan(Emit& e, V a, V b, int64_t axis, bool reverse) {
  return e.op(OpKind::LinearScan, ScanAttrs{axis, reverse}, {a, b});
}

// y_k = x_0 ⋯ x_k. With L_k = y_(k-1) (L_0 = 1), the tangent obeys dy_k = x_k·dy_(k-1) +
// L_k·dx_k: a forward linear scan of L·dx, and the cotangent is its adjoint, L times the
// reverse scan of ct. Nothing divides by x, so zeros in x are no special case.
Vs cumprodVjp(Emit& e, const Primal& p, V ct) {
  if (ct->type().rank() == 0) return {ct};
  const int64_t axis = attrs<AxisAttrs>(p).axis;
  return {e.mul(shifted(e, p.y, axis, true, 1), linearScan(e, p.x[0], ct, axis, true))};
}
V cumprodJvp(Emit& e, const Primal& p, const Vs& d) {
  if (d[0]->type().rank() == 0) return d[0];
  const int64_t axis = attrs<AxisAttrs>(p).axis;
  return linearScan(e, p.x[0], e.mul(shifted(e, p.y, axis, true, 1), d[0]), axis, false);
}

// h = scan(a, b), forward: h_k = a_k·h_(k-1) + b_k. The adjoint state is the reverse scan
// λ = scan_rev(a, ct); then b̄ = λ and ā_k = λ_k·h_(k-1). Reverse: h_k = a_(k+1)·h_(k+1) + b_k,
// λ = scan(a, ct), b̄ = λ and ā_k = λ_(k-1)·h_k. Tangents scan the perturbation of each step.
Vs linearScanVjp(Emit& e, const Primal& p, V ct) {
  const ScanAttrs& s = attrs<ScanAttrs>(p);
  if (ct->type().rank() == 0) return {nullptr, ct};
  V lambda = linearScan(e, p.x[0], ct, s.axis, !s.reverse);
  V da = s.reverse ? e.mul(shifted(e, lambda, s.axis, true, 0), p.y) : e.mul(lambda, shifted(e, p.y, s.axis, true, 0));
  return {da, lambda};
}
V linearScanJvp(Emit& e, const Primal& p, const Vs& d) {
  const ScanAttrs& s = attrs<ScanAttrs>(p);
  if (p.y->type().rank() == 0) return d[1];
  V step = d[1];
  if (d[0]) {
    V moved = s.reverse ? shifted(e, e.mul(d[0], p.y), s.axis, false, 0) : e.mul(d[0], shifted(e, p.y, s.axis, true, 0));
    step = e.addMaybe(moved, step);
  }
  return linearScan(e, p.x[0], step, s.axis, s.reverse);
}

DiffRule rules(VjpRule vjp, JvpRule jvp) { return {Differentiability::Rules, vjp, jvp, ""}; }

} // namespace

void addStructureRules(RuleTable& t) {
  auto at = [&](OpKind k) -> DiffRule& { return t[static_cast<size_t>(k)]; };
  at(OpKind::Sum) = rules(sumVjp, sumJvp);
  at(OpKind::Mean) = rules(meanVjp, meanJvp);
  at(OpKind::Prod) = rules(prodVjp, prodJvp);
  at(OpKind::Max) = rules(extremumVjp, extremumJvp);
  at(OpKind::Min) = rules(extremumVjp, extremumJvp);
  at(OpKind::LogSumExp) = rules(lseVjp, lseJvp);
  at(OpKind::CumSum) = rules(cumsumVjp, sameOnTangent);
  at(OpKind::CumProd) = rules(cumprodVjp, cumprodJvp);
  at(OpKind::LinearScan) = rules(linearScanVjp, linearScanJvp);
  at(OpKind::Tril) = rules(maskedVjp, sameOnTangent);
  at(OpKind::Triu) = rules(maskedVjp, sameOnTangent);
  at(OpKind::Var) = rules(momentVjp<varWeight>, momentJvp<varWeight>);
  at(OpKind::Std) = rules(momentVjp<stdWeight>, momentJvp<stdWeight>);
  at(OpKind::ArgMax) = at(OpKind::ArgMin) = {Differentiability::Constant, nullptr, nullptr, ""};

  at(OpKind::Reshape) = rules(reshapeBack, sameOnTangent);
  at(OpKind::ExpandDims) = rules(reshapeBack, sameOnTangent);
  at(OpKind::Squeeze) = rules(reshapeBack, sameOnTangent);
  at(OpKind::Transpose) = rules(transposeVjp, sameOnTangent);
  at(OpKind::BroadcastTo) = rules(broadcastVjp, sameOnTangent);
  at(OpKind::Slice) = rules(sliceVjp, sameOnTangent);
  at(OpKind::SliceGrad) = rules(sliceGradVjp, sameOnTangent);
  at(OpKind::Index) = rules(indexVjp, sameOnTangent);
  at(OpKind::Concat) = rules(concatVjp, joinJvp);
  at(OpKind::Stack) = rules(stackVjp, joinJvp);
  at(OpKind::Pad) = rules(padVjp, padJvp);
  at(OpKind::Take) = rules(takeVjp, takeJvp);
  at(OpKind::TakeGrad) = rules(takeGradVjp, takeGradJvp);
  at(OpKind::OneHot) = {Differentiability::Constant, nullptr, nullptr, ""};
  at(OpKind::Transdata) = rules(layoutVjp, sameOnTangent);
}

} // namespace tsl::autodiff
