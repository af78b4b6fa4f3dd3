// autodiff/RulesAttention.cpp — derivatives of scaled dot-product attention.
//
// Reverse mode saves the logsumexp of each query's scores (attention's part 1) and
// δ = Σ g·out per query, and runs attention-grad once per operand (dq by tiles of queries,
// dk and dv by tiles of keys), each recomputing the scores block by block: memory stays
// linear in the sequence lengths, as in the forward pass (runtime/FlashAttention.h). The
// cotangents come in the broadcast batch shape; the transform sums them back to each
// operand's. Forward mode is attention-jvp, the forward pass carrying the tangents of the
// scores. Half-precision operands differentiate in f32, so the saved logsumexp is not
// rounded to 11 bits. The derivative rows themselves have no rules: second derivatives
// through attention are refused with a type error that says so.
#include "autodiff/Rules.h"

namespace tsl::autodiff {

namespace {

using namespace shorthand;

constexpr const char* kSecondOrder =
    "second derivatives through attention are not supported (its derivatives are fused rows without rules of "
    "their own); differentiate attention once";

/// Part 1 (the logsumexp) is only in derivative programs: differentiating it is a second
/// derivative.
void requireOutput(Emit& e, const Primal& p) {
  if (attrs<AttentionAttrs>(p).part != 0) throw Error(ErrorKind::Type, cat("autodiff: ", kSecondOrder), e.span());
}

/// The attributes of part `part` of the same call.
AttentionAttrs partOf(const Primal& p, int64_t part) { return AttentionAttrs{attrs<AttentionAttrs>(p).causal, part}; }

/// q, k and v in the dtype the derivatives compute in (f32 for half types), then the mask.
Vs operandsIn(Emit& e, const Primal& p, DType dtype) {
  Vs out;
  for (size_t i = 0; i < p.x.size(); ++i) out.push_back(i < 3 ? e.cast(p.x[i], dtype) : p.x[i]);
  return out;
}

DType derivativeType(const Primal& p) {
  const DType d = dt(p.y);
  return d == DType::F16 || d == DType::BF16 ? DType::F32 : d;
}

Vs attentionVjp(Emit& e, const Primal& p, V ct) {
  requireOutput(e, p);
  const DType dtype = derivativeType(p);
  Vs x = operandsIn(e, p, dtype);
  V g = e.cast(ct, dtype);
  V out = e.cast(p.y, dtype);
  V lse = e.op(OpKind::Attention, partOf(p, 1), x);
  V delta = e.sum(e.mul(g, out), {-1}, false);
  Vs grads;
  for (int64_t part = 0; part < 3; ++part) {
    Vs operands{x[0], x[1], x[2], g, lse, delta};
    if (x.size() > 3) operands.push_back(x[3]);
    grads.push_back(e.op(OpKind::AttentionGrad, partOf(p, part), operands));
  }
  if (x.size() > 3) grads.push_back(nullptr); // the mask: boolean
  return grads;
}

V attentionJvp(Emit& e, const Primal& p, const Vs& d) {
  requireOutput(e, p);
  const DType dtype = derivativeType(p);
  Vs x = operandsIn(e, p, dtype);
  Vs operands{x[0], x[1], x[2]};
  for (size_t i = 0; i < 3; ++i) operands.push_back(d[i] ? e.cast(d[i], dtype) : e.zerosLike(x[i]));
  if (x.size() > 3) operands.push_back(x[3]);
  return e.op(OpKind::AttentionJvp, partOf(p, 0), operands);
}

} // namespace

void addAttentionRules(RuleTable& t) {
  auto at = [&](OpKind k) -> DiffRule& { return t[static_cast<size_t>(k)]; };
  at(OpKind::Attention) = {Differentiability::Rules, attentionVjp, attentionJvp, ""};
  at(OpKind::AttentionGrad) = {Differentiability::Unsupported, nullptr, nullptr, kSecondOrder};
  at(OpKind::AttentionJvp) = {Differentiability::Unsupported, nullptr, nullptr, kSecondOrder};
}

} // namespace tsl::autodiff
