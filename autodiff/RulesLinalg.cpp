// autodiff/RulesLinalg.cpp — derivatives of solve, inv, det, slogdet, cholesky, qr, svd,
// eigh, trace and diag (runtime/LinalgRows.h), on the last two axes, batched.
//
// The rules are the standard matrix-calculus ones (forward: dX of each result; reverse:
// their transposes), written with the IR builder over matmul, inv, solve and the
// decompositions themselves. A decomposition's row gives one part (PartAttrs), so each
// part has its own rule and reads the other parts by emitting their operations again
// (common-subexpression elimination merges them with the primal's).
//
// Operands read through their lower triangle (cholesky, eigh) are functions of that
// triangle alone: a tangent dA acts through the symmetric E = (dA∘M) + (dA∘M)ᵀ, where M is
// the lower triangle with ½ on the diagonal, and a symmetric gradient G comes back as
// (G + Gᵀ)∘M, zero above the diagonal. eigh and svd divide by differences of eigenvalues
// (squared singular values), so their derivatives need them distinct; qr's need the first
// min(m, n) columns independent and m >= n (a wide qr's derivative is a value error).
#include "autodiff/Rules.h"

#include "runtime/Elementwise.h"

namespace tsl::autodiff {

namespace {

using namespace shorthand;

int rankOf(V v) { return v->type().rank(); }
int64_t dimAt(V v, int fromEnd) {
  return concreteDims(v->type(), "a linear-algebra derivative")[static_cast<size_t>(rankOf(v) - fromEnd)];
}

/// The last two axes swapped.
V mT(Emit& e, V v) {
  const int rank = rankOf(v);
  std::vector<int64_t> perm;
  for (int i = 0; i < rank; ++i) perm.push_back(i);
  std::swap(perm[static_cast<size_t>(rank - 1)], perm[static_cast<size_t>(rank - 2)]);
  return e.op(OpKind::Transpose, PermAttrs{perm}, {v});
}
V mm(Emit& e, V a, V b) { return e.op(OpKind::MatMul, {a, b}); }
/// v [..., n] as a column [..., n, 1] and as a row [..., 1, n].
V column(Emit& e, V v) { return e.op(OpKind::ExpandDims, AxisAttrs{rankOf(v)}, {v}); }
V row(Emit& e, V v) { return e.op(OpKind::ExpandDims, AxisAttrs{rankOf(v) - 1}, {v}); }
/// v [...] as [..., 1, 1].
V asMatrix(Emit& e, V v) { return column(e, column(e, v)); }
V identity(Emit& e, int64_t n, DType dtype) { return e.op(OpKind::Eye, EyeAttrs{n, n, dtype}, {}); }
/// A vector [..., k] as the diagonal matrices [..., k, k].
V diagonalMatrix(Emit& e, V v) { return e.mul(row(e, v), identity(e, dimAt(v, 1), dt(v))); }
V sumLastTwo(Emit& e, V v) { return e.sum(v, {rankOf(v) - 2, rankOf(v) - 1}, false); }

enum class Mask { LowerHalfDiagonal, StrictlyLower };
/// The n×n mask: the lower triangle with ½ on the diagonal, or the strictly lower triangle.
V mask(Emit& e, int64_t n, DType dtype, Mask kind) {
  Tensor m = Tensor::zeros(DType::F64, Shape{n, n});
  double* d = reinterpret_cast<double*>(m.mutableData());
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j <= i; ++j) d[i * n + j] = i == j ? (kind == Mask::LowerHalfDiagonal ? 0.5 : 0.0) : 1.0;
  return e.builder().constant(astype(m, dtype), e.span());
}
/// The symmetric tangent a lower-triangle reader sees: (dA∘M) + (dA∘M)ᵀ.
V symmetricTangent(Emit& e, V d) {
  V lower = e.mul(d, mask(e, dimAt(d, 1), dt(d), Mask::LowerHalfDiagonal));
  return e.add(lower, mT(e, lower));
}
/// A gradient G with respect to the symmetric matrix, as one with respect to its lower triangle.
V lowerGradient(Emit& e, V g) { return e.mul(e.add(g, mT(e, g)), mask(e, dimAt(g, 1), dt(g), Mask::LowerHalfDiagonal)); }

V part(Emit& e, const Primal& p, int64_t which) {
  if (attrs<PartAttrs>(p).part == which) return p.y;
  return e.op(p.op.code().kind, PartAttrs{which}, {p.x[0]});
}

// ---- inv, det, slogdet ----

// Y = A⁻¹: dY = -Y dA Y; Ā = -Yᵀ Ȳ Yᵀ.
Vs invVjp(Emit& e, const Primal& p, V ct) {
  V yt = mT(e, p.y);
  return {e.neg(mm(e, mm(e, yt, ct), yt))};
}
V invJvp(Emit& e, const Primal& p, const Vs& d) { return e.neg(mm(e, mm(e, p.y, d[0]), p.y)); }

// d(log|det A|) = tr(A⁻¹ dA): the gradient is A⁻ᵀ.
V inverseTransposed(Emit& e, const Primal& p) { return mT(e, e.op(OpKind::Inv, {p.x[0]})); }
Vs detVjp(Emit& e, const Primal& p, V ct) { return {e.mul(asMatrix(e, e.mul(ct, p.y)), inverseTransposed(e, p))}; }
V detJvp(Emit& e, const Primal& p, const Vs& d) { return e.mul(p.y, sumLastTwo(e, e.mul(inverseTransposed(e, p), d[0]))); }
// The sign is piecewise constant; log |det| is det's rule divided by det.
Vs slogdetVjp(Emit& e, const Primal& p, V ct) {
  if (attrs<PartAttrs>(p).part == 0) return {nullptr};
  return {e.mul(asMatrix(e, ct), inverseTransposed(e, p))};
}
V slogdetJvp(Emit& e, const Primal& p, const Vs& d) {
  if (attrs<PartAttrs>(p).part == 0) return nullptr;
  return sumLastTwo(e, e.mul(inverseTransposed(e, p), d[0]));
}

// ---- solve ----

// X = A⁻¹B: B̄ = A⁻ᵀ X̄, Ā = -B̄ Xᵀ; dX = A⁻¹(dB - dA X). A vector b is a column.
Vs solveVjp(Emit& e, const Primal& p, V ct) {
  V a = p.x[0];
  if (rankOf(p.x[1]) == 1) {
    V gb = e.op(OpKind::Solve, {mT(e, a), column(e, ct)}); // [..., n, 1]
    V ga = e.neg(mm(e, gb, row(e, p.y)));
    ir::Type t = p.y->type();
    t.dtype = dt(gb);
    return {ga, e.reshape(gb, t)};
  }
  V gb = e.op(OpKind::Solve, {mT(e, a), ct});
  return {e.neg(mm(e, gb, mT(e, p.y))), gb};
}
V solveJvp(Emit& e, const Primal& p, const Vs& d) {
  const bool vector = rankOf(p.x[1]) == 1;
  V x = vector ? column(e, p.y) : p.y;
  V rhs = d[1] ? (vector ? column(e, d[1]) : d[1]) : nullptr;
  if (d[0]) rhs = rhs ? e.sub(rhs, mm(e, d[0], x)) : e.neg(mm(e, d[0], x));
  V dx = e.op(OpKind::Solve, {p.x[0], rhs});
  if (!vector) return dx;
  ir::Type t = p.y->type();
  t.dtype = dt(dx);
  return e.reshape(dx, t);
}

// ---- cholesky ----

// A = L Lᵀ: dL = L Φ(L⁻¹ E L⁻ᵀ), Φ(X) = X∘M; Ā from S = L⁻ᵀ Φ(Lᵀ L̄) L⁻¹ (symmetric part).
Vs choleskyVjp(Emit& e, const Primal& p, V ct) {
  V l = p.y, linv = e.op(OpKind::Inv, {l});
  V phi = e.mul(mm(e, mT(e, l), ct), mask(e, dimAt(l, 1), dt(l), Mask::LowerHalfDiagonal));
  V s = mm(e, mm(e, mT(e, linv), phi), linv);
  return {lowerGradient(e, s)};
}
V choleskyJvp(Emit& e, const Primal& p, const Vs& d) {
  V l = p.y, linv = e.op(OpKind::Inv, {l});
  V inner = mm(e, mm(e, linv, symmetricTangent(e, d[0])), mT(e, linv));
  return mm(e, l, e.mul(inner, mask(e, dimAt(l, 1), dt(l), Mask::LowerHalfDiagonal)));
}

// ---- eigh ----

/// F_ij = 1/(w_j - w_i) off the diagonal, 0 on it.
V eigenGaps(Emit& e, V w) {
  V eye = identity(e, dimAt(w, 1), dt(w));
  V gaps = e.add(e.sub(row(e, w), column(e, w)), eye);
  return e.sub(e.div(e.scalar(1, dt(w)), gaps), eye);
}
// A = V diag(w) Vᵀ: dw = diag(Vᵀ E V), dV = V (F∘(Vᵀ E V)); the gradients transpose them.
Vs eighVjp(Emit& e, const Primal& p, V ct) {
  V w = part(e, p, 0), v = part(e, p, 1);
  V inner = attrs<PartAttrs>(p).part == 0 ? diagonalMatrix(e, ct) : e.mul(eigenGaps(e, w), mm(e, mT(e, v), ct));
  return {lowerGradient(e, mm(e, mm(e, v, inner), mT(e, v)))};
}
V eighJvp(Emit& e, const Primal& p, const Vs& d) {
  V w = part(e, p, 0), v = part(e, p, 1);
  V pv = mm(e, mm(e, mT(e, v), symmetricTangent(e, d[0])), v);
  if (attrs<PartAttrs>(p).part == 0) return e.op(OpKind::Diag, {pv});
  return mm(e, v, e.mul(eigenGaps(e, w), pv));
}

// ---- svd ----

/// 1/(s_j² - s_i²) off the diagonal, 0 on it.
V singularGaps(Emit& e, V s) {
  V sq = e.mul(s, s);
  return eigenGaps(e, sq);
}
V skew(Emit& e, V x) { return e.sub(x, mT(e, x)); }

// The reduced SVD's reverse rule for cotangents gU, gS, gVh (any may be null).
Vs svdVjp(Emit& e, const Primal& p, V ct) {
  const int64_t which = attrs<PartAttrs>(p).part;
  V a = p.x[0], u = part(e, p, 0), s = part(e, p, 1), vh = part(e, p, 2);
  const int64_t m = dimAt(a, 2), n = dimAt(a, 1), k = std::min(m, n);
  V f = singularGaps(e, s);
  V inner;
  if (which == 0) inner = e.mul(e.mul(skew(e, mm(e, mT(e, u), ct)), f), row(e, s));
  else if (which == 1) inner = diagonalMatrix(e, ct);
  else inner = e.mul(column(e, s), e.mul(skew(e, mm(e, vh, mT(e, ct))), f));
  if (which == 0 && m > k) {
    V gus = e.div(ct, row(e, s));
    return {mm(e, e.add(mm(e, u, inner), e.sub(gus, mm(e, u, mm(e, mT(e, u), gus)))), vh)};
  }
  if (which == 2 && n > k) {
    V sgv = e.div(ct, column(e, s));
    return {mm(e, u, e.add(mm(e, inner, vh), e.sub(sgv, mm(e, mm(e, sgv, mT(e, vh)), vh))))};
  }
  return {mm(e, mm(e, u, inner), vh)};
}
V svdJvp(Emit& e, const Primal& p, const Vs& d) {
  const int64_t which = attrs<PartAttrs>(p).part;
  V a = p.x[0], u = part(e, p, 0), s = part(e, p, 1), vh = part(e, p, 2), v = mT(e, vh);
  const int64_t m = dimAt(a, 2), n = dimAt(a, 1);
  V ds = mm(e, mm(e, mT(e, u), d[0]), v); // k×k
  if (which == 1) return e.op(OpKind::Diag, {ds});
  V f = singularGaps(e, s);
  if (which == 0) {
    V dss = e.mul(ds, row(e, s));
    V du = mm(e, u, e.mul(f, e.add(dss, mT(e, dss))));
    if (m > n) {
      V dav = mm(e, d[0], v);
      du = e.add(du, e.div(e.sub(dav, mm(e, u, mm(e, mT(e, u), dav))), row(e, s)));
    }
    return du;
  }
  V sds = e.mul(column(e, s), ds);
  V dv = mm(e, v, e.mul(f, e.add(sds, mT(e, sds))));
  if (n > m) {
    V dau = mm(e, mT(e, d[0]), u);
    dv = e.add(dv, e.div(e.sub(dau, mm(e, v, mm(e, vh, dau))), row(e, s)));
  }
  return mT(e, dv);
}

// ---- qr ----

void requireTall(const Primal& p) {
  const auto dims = concreteDims(p.x[0]->type(), "qr's derivative");
  if (dims[dims.size() - 2] < dims.back())
    fail(ErrorKind::Value, "qr: the derivative needs m >= n (a tall or square matrix), got ", p.x[0]->type().str());
}
// A = QR (m >= n): Ā = [Q̄ + Q copyltu(M)] R⁻ᵀ, M = R R̄ᵀ - Q̄ᵀ Q, copyltu(M) = (M∘Mh) + (M∘Mh)ᵀ.
Vs qrVjp(Emit& e, const Primal& p, V ct) {
  requireTall(p);
  V q = part(e, p, 0), r = part(e, p, 1);
  const bool isQ = attrs<PartAttrs>(p).part == 0;
  V mmat = isQ ? e.neg(mm(e, mT(e, ct), q)) : mm(e, r, mT(e, ct));
  V half = e.mul(mmat, mask(e, dimAt(r, 1), dt(r), Mask::LowerHalfDiagonal));
  V b = mm(e, q, e.add(half, mT(e, half)));
  if (isQ) b = e.add(b, ct);
  return {mm(e, b, mT(e, e.op(OpKind::Inv, {r})))};
}
V qrJvp(Emit& e, const Primal& p, const Vs& d) {
  requireTall(p);
  V q = part(e, p, 0), r = part(e, p, 1);
  V dxr = mm(e, d[0], e.op(OpKind::Inv, {r}));
  V qt = mm(e, mT(e, q), dxr);
  V low = e.mul(qt, mask(e, dimAt(r, 1), dt(r), Mask::StrictlyLower));
  V omega = e.sub(low, mT(e, low));
  if (attrs<PartAttrs>(p).part == 0) return e.add(mm(e, q, e.sub(omega, qt)), dxr);
  return mm(e, e.sub(qt, omega), r);
}

// ---- trace and diag ----

// trace: Ā = t̄ I (n×m); diag of a matrix: the cotangent on the diagonal; of a vector: the
// matrix cotangent's diagonal.
Vs traceVjp(Emit& e, const Primal& p, V ct) {
  V a = p.x[0];
  return {e.mul(asMatrix(e, ct), e.op(OpKind::Eye, EyeAttrs{dimAt(a, 2), dimAt(a, 1), dt(ct)}, {}))};
}
V traceJvp(Emit& e, const Primal&, const Vs& d) { return e.op(OpKind::Trace, {d[0]}); }

Vs diagVjp(Emit& e, const Primal& p, V ct) {
  V a = p.x[0];
  if (rankOf(a) == 1) return {e.op(OpKind::Diag, {ct})};
  const int64_t m = dimAt(a, 2), n = dimAt(a, 1), k = std::min(m, n);
  V spread = ct;
  if (n > k) {
    std::vector<std::array<int64_t, 2>> widths(static_cast<size_t>(rankOf(ct)), std::array<int64_t, 2>{0, 0});
    widths.back()[1] = n - k;
    spread = e.op(OpKind::Pad, PadAttrs{widths, 0.0}, {ct});
  }
  return {e.mul(row(e, spread), e.op(OpKind::Eye, EyeAttrs{m, n, dt(ct)}, {}))};
}
V diagJvp(Emit& e, const Primal&, const Vs& d) { return e.op(OpKind::Diag, {d[0]}); }

DiffRule rules(VjpRule vjp, JvpRule jvp) { return {Differentiability::Rules, vjp, jvp, ""}; }

} // namespace

void addLinalgRules(RuleTable& t) {
  auto at = [&](OpKind k) -> DiffRule& { return t[static_cast<size_t>(k)]; };
  at(OpKind::Solve) = rules(solveVjp, solveJvp);
  at(OpKind::Inv) = rules(invVjp, invJvp);
  at(OpKind::Det) = rules(detVjp, detJvp);
  at(OpKind::Slogdet) = rules(slogdetVjp, slogdetJvp);
  at(OpKind::Cholesky) = rules(choleskyVjp, choleskyJvp);
  at(OpKind::Qr) = rules(qrVjp, qrJvp);
  at(OpKind::Svd) = rules(svdVjp, svdJvp);
  at(OpKind::Eigh) = rules(eighVjp, eighJvp);
  at(OpKind::Trace) = rules(traceVjp, traceJvp);
  at(OpKind::Diag) = rules(diagVjp, diagJvp);
}

} // namespace tsl::autodiff
