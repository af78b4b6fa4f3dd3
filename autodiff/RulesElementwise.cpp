// autodiff/RulesElementwise.cpp — derivatives of the elementwise operations.
//
// Conventions at the points where a derivative is not defined (docs/language.md §5):
// relu'(0) = 0, abs'(0) = 0, and maximum/minimum split a tie evenly between the two
// operands. Rules whose factor can be infinite or NaN at a finite point (division, log,
// sqrt, rsqrt, pow, exp) multiply the cotangent with mulNoNan, so where a `where` gave a
// zero cotangent their result is exactly zero: the branch `where` did not select leaks
// no NaN or infinity through them. (A product with a value that is itself NaN there, as
// in (* x (sqrt x)) at x < 0, still gives 0 * NaN: guard such a branch's input.)
#include "autodiff/Rules.h"

#include <cmath>

namespace tsl::autodiff {

namespace {

using namespace shorthand;
V one(Emit& e, V like) { return e.scalar(1, dt(like)); }

// ---- binary ----

Vs addVjp(Emit&, const Primal&, V ct) { return {ct, ct}; }
V addJvp(Emit& e, const Primal&, const Vs& d) { return e.addMaybe(d[0], d[1]); }

Vs subVjp(Emit& e, const Primal&, V ct) { return {ct, e.neg(ct)}; }
V subJvp(Emit& e, const Primal&, const Vs& d) {
  if (!d[1]) return d[0];
  return d[0] ? e.sub(d[0], d[1]) : e.neg(d[1]);
}

Vs mulVjp(Emit& e, const Primal& p, V ct) { return {e.mul(ct, p.x[1]), e.mul(ct, p.x[0])}; }
V mulJvp(Emit& e, const Primal& p, const Vs& d) {
  return e.addMaybe(d[0] ? e.mul(d[0], p.x[1]) : nullptr, d[1] ? e.mul(p.x[0], d[1]) : nullptr);
}

// y = a / b: dy/da = 1/b, dy/db = -y/b.
Vs divVjp(Emit& e, const Primal& p, V ct) {
  return {e.divNoNan(ct, p.x[1]), e.mulNoNan(ct, e.neg(e.div(p.y, p.x[1])))};
}
V divJvp(Emit& e, const Primal& p, const Vs& d) {
  V num = e.addMaybe(d[0], d[1] ? e.neg(e.mul(p.y, d[1])) : nullptr);
  return e.div(num, p.x[1]);
}

// mod(a, b) = a - b * floor(a / b): d/da = 1, d/db = -floor(a / b).
Vs modVjp(Emit& e, const Primal& p, V ct) {
  return {ct, e.mul(ct, e.neg(e.op(OpKind::FloorDiv, {p.x[0], p.x[1]})))};
}
V modJvp(Emit& e, const Primal& p, const Vs& d) {
  return e.addMaybe(d[0], d[1] ? e.neg(e.mul(d[1], e.op(OpKind::FloorDiv, {p.x[0], p.x[1]}))) : nullptr);
}

// y = a^b: dy/da = b a^(b-1); dy/db = y log a, taken as 0 where a = 0 (the limit for b > 0).
V powDa(Emit& e, const Primal& p) {
  V b = p.x[1];
  V slope = e.mul(b, e.op(OpKind::Pow, {p.x[0], e.sub(b, one(e, b))}));
  // a^0 is 1 everywhere: its derivative is 0, also at a = 0 (where 0 * 0^-1 is NaN).
  return e.where(e.op(OpKind::Equal, {b, e.scalar(0, dt(b))}), e.scalar(0, dt(slope)), slope);
}
V powDb(Emit& e, const Primal& p) {
  V a = p.x[0];
  V zero = e.scalar(0, dt(p.y));
  V isZero = e.op(OpKind::Equal, {a, e.scalar(0, dt(a))});
  V safeA = e.where(isZero, one(e, a), a);
  return e.where(isZero, zero, e.mul(p.y, e.op(OpKind::Log, {safeA})));
}
Vs powVjp(Emit& e, const Primal& p, V ct) {
  const bool floatB = isFloat(dt(p.x[1]));
  return {e.mulNoNan(ct, powDa(e, p)), floatB ? e.mulNoNan(ct, powDb(e, p)) : nullptr};
}
V powJvp(Emit& e, const Primal& p, const Vs& d) {
  return e.addMaybe(d[0] ? e.mul(d[0], powDa(e, p)) : nullptr, d[1] ? e.mul(d[1], powDb(e, p)) : nullptr);
}

// y = atan2(a, b), the angle of (b, a): dy/da = b / r², dy/db = -a / r², r² = a² + b².
// Each slope is taken as 0 where its numerator is, so both are 0 at the origin.
Vs atan2Slopes(Emit& e, const Primal& p) {
  V a = p.x[0], b = p.x[1];
  V r2 = e.add(e.mul(a, a), e.mul(b, b));
  return {e.divNoNan(b, r2), e.divNoNan(e.neg(a), r2)};
}
Vs atan2Vjp(Emit& e, const Primal& p, V ct) {
  Vs s = atan2Slopes(e, p);
  return {e.mul(ct, s[0]), e.mul(ct, s[1])};
}
V atan2Jvp(Emit& e, const Primal& p, const Vs& d) {
  Vs s = atan2Slopes(e, p);
  return e.addMaybe(d[0] ? e.mul(d[0], s[0]) : nullptr, d[1] ? e.mul(d[1], s[1]) : nullptr);
}

/// The share of maximum's (minimum's) cotangent that goes to a: 1 where a wins, 1/2 on a
/// tie, 0 where b wins.
V extremumShare(Emit& e, const Primal& p, OpKind wins) {
  const DType d = dt(p.y);
  V aWins = e.cast(e.op(wins, {p.x[0], p.x[1]}), d);
  V tie = e.cast(e.op(OpKind::Equal, {p.x[0], p.x[1]}), d);
  return e.add(aWins, e.scale(tie, 0.5));
}
template <OpKind wins>
Vs extremumVjp(Emit& e, const Primal& p, V ct) {
  V share = extremumShare(e, p, wins);
  return {e.mul(ct, share), e.mul(ct, e.sub(one(e, share), share))};
}
template <OpKind wins>
V extremumJvp(Emit& e, const Primal& p, const Vs& d) {
  V share = extremumShare(e, p, wins);
  return e.addMaybe(d[0] ? e.mul(d[0], share) : nullptr, d[1] ? e.mul(d[1], e.sub(one(e, share), share)) : nullptr);
}

// ---- unary: y = f(x), ct_x = ct * f'(x) ----

/// f'(x) for each unary operation, from x and y.
using Slope = V (*)(Emit& e, V x, V y);

V absSlope(Emit& e, V x, V) { return e.op(OpKind::Sign, {x}); }
V expSlope(Emit&, V, V y) { return y; }
V logSlope(Emit& e, V x, V) { return e.div(one(e, x), x); }
V log1pSlope(Emit& e, V x, V) { return e.div(one(e, x), e.add(one(e, x), x)); }
V expm1Slope(Emit& e, V, V y) { return e.add(y, one(e, y)); } // e^x = expm1(x) + 1
// erf'(x) = 2/√π e^{-x²}.
V erfSlope(Emit& e, V x, V) { return e.mul(e.scalar(2 / std::sqrt(M_PI), dt(x)), e.op(OpKind::Exp, {e.neg(e.mul(x, x))})); }
V sqrtSlope(Emit& e, V, V y) { return e.div(e.scalar(0.5, dt(y)), y); }
V rsqrtSlope(Emit& e, V, V y) { return e.mul(e.scalar(-0.5, dt(y)), e.mul(y, e.mul(y, y))); }
V squareSlope(Emit& e, V x, V) { return e.scale(x, 2); }
V sinSlope(Emit& e, V x, V) { return e.op(OpKind::Cos, {x}); }
V cosSlope(Emit& e, V x, V) { return e.neg(e.op(OpKind::Sin, {x})); }
V tanhSlope(Emit& e, V, V y) { return e.sub(one(e, y), e.mul(y, y)); }
V sigmoidSlope(Emit& e, V, V y) { return e.mul(y, e.sub(one(e, y), y)); }
// relu'(0) = 0.
V reluSlope(Emit& e, V x, V y) { return e.cast(e.op(OpKind::Greater, {x, e.scalar(0, dt(x))}), dt(y)); }
// gelu(x) = x Φ(x): gelu' = Φ(x) + x φ(x), with Φ(x) = gelu(x) / x (1/2 at 0).
V geluSlope(Emit& e, V x, V y) {
  V isZero = e.op(OpKind::Equal, {x, e.scalar(0, dt(x))});
  V safeX = e.where(isZero, one(e, x), x);
  V cdf = e.where(isZero, e.scalar(0.5, dt(y)), e.div(y, safeX));
  V pdf = e.mul(e.scalar(1 / std::sqrt(2 * M_PI), dt(x)), e.op(OpKind::Exp, {e.scale(e.mul(x, x), -0.5)}));
  return e.add(cdf, e.mul(x, pdf));
}
// gelu-tanh(x) = x/2 (1 + tanh u), u = c (x + k x³): derivative
// (1 + t)/2 + x/2 (1 - t²) c (1 + 3 k x²).
V geluTanhSlope(Emit& e, V x, V) {
  const double c = std::sqrt(2 / M_PI), k = 0.044715;
  const DType d = dt(x);
  V x2 = e.mul(x, x);
  V u = e.mul(e.scalar(c, d), e.add(x, e.mul(e.scalar(k, d), e.mul(x2, x))));
  V t = e.op(OpKind::Tanh, {u});
  V first = e.scale(e.add(one(e, t), t), 0.5);
  V du = e.mul(e.scalar(c, d), e.add(one(e, x), e.mul(e.scalar(3 * k, d), x2)));
  V second = e.mul(e.scale(x, 0.5), e.mul(e.sub(one(e, t), e.mul(t, t)), du));
  return e.add(first, second);
}

/// Slopes that can be infinite at a finite x use mulNoNan.
template <Slope slope, bool guarded>
Vs unaryVjp(Emit& e, const Primal& p, V ct) {
  V s = slope(e, p.x[0], p.y);
  return {guarded ? e.mulNoNan(ct, s) : e.mul(ct, s)};
}
template <Slope slope>
V unaryJvp(Emit& e, const Primal& p, const Vs& d) {
  return e.mul(d[0], slope(e, p.x[0], p.y));
}

Vs negVjp(Emit& e, const Primal&, V ct) { return {e.neg(ct)}; }
V negJvp(Emit& e, const Primal&, const Vs& d) { return e.neg(d[0]); }

// ---- where, clip, cast, stop-gradient ----

Vs whereVjp(Emit& e, const Primal& p, V ct) {
  V zero = e.scalar(0, dt(ct));
  return {nullptr, e.where(p.x[0], ct, zero), e.where(p.x[0], zero, ct)};
}
V whereJvp(Emit& e, const Primal& p, const Vs& d) {
  V a = d[1] ? d[1] : e.scalar(0, dt(p.y));
  V b = d[2] ? d[2] : e.scalar(0, dt(p.y));
  return e.where(p.x[0], a, b);
}

// clip(x, lo, hi): the derivative goes to x inside [lo, hi], to lo below, to hi above.
Vs clipVjp(Emit& e, const Primal& p, V ct) {
  V zero = e.scalar(0, dt(ct));
  V below = e.op(OpKind::Less, {p.x[0], p.x[1]});
  V above = e.op(OpKind::Greater, {p.x[0], p.x[2]});
  V inside = e.op(OpKind::LogicalNot, {e.op(OpKind::LogicalOr, {below, above})});
  return {e.where(inside, ct, zero), e.where(below, ct, zero), e.where(above, ct, zero)};
}
V clipJvp(Emit& e, const Primal& p, const Vs& d) {
  V zero = e.scalar(0, dt(p.y));
  V below = e.op(OpKind::Less, {p.x[0], p.x[1]});
  V above = e.op(OpKind::Greater, {p.x[0], p.x[2]});
  V out = e.where(below, d[1] ? d[1] : zero, e.where(above, d[2] ? d[2] : zero, d[0] ? d[0] : zero));
  return out;
}

Vs castVjp(Emit&, const Primal&, V ct) { return {ct}; }
V castJvp(Emit& e, const Primal& p, const Vs& d) { return e.cast(d[0], dt(p.y)); }

DiffRule rules(VjpRule vjp, JvpRule jvp) { return {Differentiability::Rules, vjp, jvp, ""}; }
DiffRule constant() { return {Differentiability::Constant, nullptr, nullptr, ""}; }

} // namespace

void addElementwiseRules(RuleTable& t) {
  auto at = [&](OpKind k) -> DiffRule& { return t[static_cast<size_t>(k)]; };
  at(OpKind::Add) = rules(addVjp, addJvp);
  at(OpKind::Sub) = rules(subVjp, subJvp);
  at(OpKind::Mul) = rules(mulVjp, mulJvp);
  at(OpKind::Div) = rules(divVjp, divJvp);
  at(OpKind::Mod) = rules(modVjp, modJvp);
  at(OpKind::Pow) = rules(powVjp, powJvp);
  at(OpKind::Atan2) = rules(atan2Vjp, atan2Jvp);
  at(OpKind::Maximum) = rules(extremumVjp<OpKind::Greater>, extremumJvp<OpKind::Greater>);
  at(OpKind::Minimum) = rules(extremumVjp<OpKind::Less>, extremumJvp<OpKind::Less>);
  for (OpKind k : {OpKind::FloorDiv, OpKind::Less, OpKind::LessEqual, OpKind::Greater, OpKind::GreaterEqual,
                   OpKind::Equal, OpKind::NotEqual, OpKind::LogicalAnd, OpKind::LogicalOr, OpKind::LogicalNot,
                   OpKind::Sign, OpKind::StopGradient, OpKind::Floor, OpKind::Ceil, OpKind::Round, OpKind::Trunc,
                   OpKind::IsNan, OpKind::IsInf, OpKind::IsFinite})
    at(k) = constant();

  at(OpKind::Neg) = rules(negVjp, negJvp);
  at(OpKind::Abs) = rules(unaryVjp<absSlope, false>, unaryJvp<absSlope>);
  at(OpKind::Exp) = rules(unaryVjp<expSlope, true>, unaryJvp<expSlope>);
  at(OpKind::Log) = rules(unaryVjp<logSlope, true>, unaryJvp<logSlope>);
  at(OpKind::Log1p) = rules(unaryVjp<log1pSlope, true>, unaryJvp<log1pSlope>);
  at(OpKind::Expm1) = rules(unaryVjp<expm1Slope, false>, unaryJvp<expm1Slope>);
  at(OpKind::Erf) = rules(unaryVjp<erfSlope, false>, unaryJvp<erfSlope>);
  at(OpKind::Sqrt) = rules(unaryVjp<sqrtSlope, true>, unaryJvp<sqrtSlope>);
  at(OpKind::Rsqrt) = rules(unaryVjp<rsqrtSlope, true>, unaryJvp<rsqrtSlope>);
  at(OpKind::Square) = rules(unaryVjp<squareSlope, false>, unaryJvp<squareSlope>);
  at(OpKind::Sin) = rules(unaryVjp<sinSlope, false>, unaryJvp<sinSlope>);
  at(OpKind::Cos) = rules(unaryVjp<cosSlope, false>, unaryJvp<cosSlope>);
  at(OpKind::Tanh) = rules(unaryVjp<tanhSlope, false>, unaryJvp<tanhSlope>);
  at(OpKind::Sigmoid) = rules(unaryVjp<sigmoidSlope, false>, unaryJvp<sigmoidSlope>);
  at(OpKind::Relu) = rules(unaryVjp<reluSlope, false>, unaryJvp<reluSlope>);
  at(OpKind::Gelu) = rules(unaryVjp<geluSlope, false>, unaryJvp<geluSlope>);
  at(OpKind::GeluTanh) = rules(unaryVjp<geluTanhSlope, false>, unaryJvp<geluTanhSlope>);

  at(OpKind::Where) = rules(whereVjp, whereJvp);
  at(OpKind::Clip) = rules(clipVjp, clipJvp);
  at(OpKind::Cast) = rules(castVjp, castJvp);
}

} // namespace tsl::autodiff
