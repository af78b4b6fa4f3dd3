// autodiff/RulesNeural.cpp — derivatives of contractions and the neural-network operations.
//
// matmul and dot follow NumPy's shapes (vectors promoted and the added axis dropped, batch
// axes broadcast); einsum's derivative is the einsum that puts each operand's letters on
// the output. conv2d and pooling transpose onto the adjoint operations of
// runtime/Gradients.h, whose own derivatives close the set (grad of grad). log-softmax,
// cross-entropy and logsumexp differentiate through softmax computed from x - max(x)
// (the kernel's, or exp(x - max) normalised), so large logits give accurate, finite
// gradients.
#include "autodiff/Rules.h"

#include <algorithm>
#include <map>
#include <set>

namespace tsl::autodiff {

namespace {

using namespace shorthand;

/// The last two axes swapped (a rank >= 2 value).
V swapLast(Emit& e, V v) {
  const int rank = v->type().rank();
  std::vector<int64_t> perm;
  for (int i = 0; i < rank; ++i) perm.push_back(i);
  std::swap(perm[static_cast<size_t>(rank - 1)], perm[static_cast<size_t>(rank - 2)]);
  return e.op(OpKind::Transpose, PermAttrs{perm}, {v});
}

V expandAt(Emit& e, V v, int64_t axis) { return e.op(OpKind::ExpandDims, AxisAttrs{axis}, {v}); }

// matmul: a [.., m, k] @ b [.., k, n]; a vector a is [1, k] with that axis dropped, a vector
// b is [k, 1] likewise. ct_a = ct @ bᵀ, ct_b = aᵀ @ ct, summed over broadcast batch axes.
Vs matmulVjp(Emit& e, const Primal& p, V ct) {
  V a = p.x[0], b = p.x[1];
  const bool vecA = a->type().rank() == 1, vecB = b->type().rank() == 1;
  V a2 = vecA ? expandAt(e, a, 0) : a;
  V b2 = vecB ? expandAt(e, b, 1) : b;
  V c2 = ct;
  if (vecA) c2 = expandAt(e, c2, c2->type().rank() - (vecB ? 0 : 1));
  if (vecB) c2 = expandAt(e, c2, c2->type().rank());
  V ga = e.op(OpKind::MatMul, {c2, swapLast(e, b2)});
  V gb = e.op(OpKind::MatMul, {swapLast(e, a2), c2});
  ir::Type ta = a2->type(), tb = b2->type();
  ta.dtype = dt(ga);
  tb.dtype = dt(gb);
  ga = e.sumTo(ga, ta);
  gb = e.sumTo(gb, tb);
  ir::Type fa = a->type(), fb = b->type();
  fa.dtype = dt(ga);
  fb.dtype = dt(gb);
  return {e.reshape(ga, fa), e.reshape(gb, fb)};
}
V contractionJvp(Emit& e, const Primal& p, const Vs& d) {
  const OpKind k = p.op.code().kind;
  return e.addMaybe(d[0] ? e.op(k, p.op.attrs(), {d[0], p.x[1]}) : nullptr,
                    d[1] ? e.op(k, p.op.attrs(), {p.x[0], d[1]}) : nullptr);
}

// ---- einsum ----

struct EinsumSpec {
  std::vector<std::string> inputs;
  std::string output;
};

EinsumSpec parseSpec(const std::string& spec, size_t operands) {
  std::string text;
  for (char c : spec)
    if (c != ' ') text += c;
  if (text.find("...") != std::string::npos)
    fail(ErrorKind::Type, "autodiff: the derivative of an einsum with '...' is not supported (write the axes out)");
  EinsumSpec s;
  const size_t arrow = text.find("->");
  const std::string lhs = arrow == std::string::npos ? text : text.substr(0, arrow);
  size_t start = 0;
  while (true) {
    const size_t comma = lhs.find(',', start);
    s.inputs.push_back(lhs.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (arrow != std::string::npos) {
    s.output = text.substr(arrow + 2);
  } else { // implicit output: the letters used once, in order
    std::map<char, int> count;
    for (const std::string& in : s.inputs)
      for (char c : in) ++count[c];
    for (const auto& [c, n] : count)
      if (n == 1) s.output += c;
  }
  if (s.inputs.size() != operands) fail(ErrorKind::Internal, "autodiff: einsum spec and operands disagree");
  for (const std::string& in : s.inputs)
    if (std::set<char>(in.begin(), in.end()).size() != in.size())
      fail(ErrorKind::Type, "autodiff: the derivative of an einsum with a repeated letter in one operand (\"", in,
           "\", a diagonal) is not supported");
  return s;
}

// d/d operand k: the einsum of ct and the other operands onto operand k's letters; letters
// only operand k has (summed away in the forward einsum) come back by broadcasting.
Vs einsumVjp(Emit& e, const Primal& p, V ct) {
  const EinsumSpec s = parseSpec(attrs<EinsumAttrs>(p).spec, p.x.size());
  Vs out;
  for (size_t k = 0; k < p.x.size(); ++k) {
    std::string available = s.output;
    for (size_t j = 0; j < p.x.size(); ++j)
      if (j != k) available += s.inputs[j];
    std::string target;
    for (char c : s.inputs[k])
      if (available.find(c) != std::string::npos) target += c;
    std::string spec = s.output;
    Vs operands{ct};
    for (size_t j = 0; j < p.x.size(); ++j)
      if (j != k) {
        spec += "," + s.inputs[j];
        operands.push_back(p.x[j]);
      }
    V g = e.op(OpKind::Einsum, EinsumAttrs{spec + "->" + target}, operands);
    if (target != s.inputs[k]) {
      for (size_t i = 0; i < s.inputs[k].size(); ++i)
        if (target.find(s.inputs[k][i]) == std::string::npos) g = expandAt(e, g, static_cast<int64_t>(i));
      ir::Type full = p.x[k]->type();
      full.dtype = dt(g);
      g = e.broadcastTo(g, full);
    }
    out.push_back(g);
  }
  return out;
}
V einsumJvp(Emit& e, const Primal& p, const Vs& d) {
  V sum = nullptr;
  for (size_t k = 0; k < p.x.size(); ++k) {
    if (!d[k]) continue;
    Vs operands = p.x;
    operands[k] = d[k];
    sum = e.addMaybe(sum, e.op(OpKind::Einsum, p.op.attrs(), operands));
  }
  return sum;
}

// dot: a matmul for ranks up to 2 (a product for a scalar operand, a matmul with a vector
// b); otherwise the contraction of a's last axis with b's second-to-last, an einsum.
std::string dotSpec(int ra, int rb) {
  std::string a, b, out;
  char next = 'a';
  for (int i = 0; i + 1 < ra; ++i) a += next++;
  const char k = next++;
  a += k;
  for (int i = 0; i < rb; ++i) {
    if (i == rb - 2) {
      b += k;
      continue;
    }
    b += next++;
  }
  out = a.substr(0, a.size() - 1);
  for (char c : b)
    if (c != k) out += c;
  return a + "," + b + "->" + out;
}
bool dotIsEinsum(const Primal& p) {
  const int ra = p.x[0]->type().rank(), rb = p.x[1]->type().rank();
  return !(ra == 0 || rb == 0) && !(ra <= 2 && rb <= 2) && rb != 1;
}
Vs dotVjp(Emit& e, const Primal& p, V ct) {
  const int ra = p.x[0]->type().rank(), rb = p.x[1]->type().rank();
  if (ra == 0 || rb == 0) return {e.mul(ct, p.x[1]), e.mul(ct, p.x[0])};
  if (!dotIsEinsum(p)) return matmulVjp(e, p, ct);
  const ir::Operation& op = p.op;
  ir::Operation einsum(ir::OpCode::of(OpKind::Einsum), op.span());
  einsum.setAttrs(EinsumAttrs{dotSpec(ra, rb)});
  return einsumVjp(e, Primal{einsum, p.x, p.y}, ct);
}

// ---- convolution and pooling ----

Conv2dGradAttrs gradAttrs(const Primal& p, V shaped) {
  const Conv2dAttrs& a = attrs<Conv2dAttrs>(p);
  return {a.stride, a.padding, concreteDims(shaped->type(), "conv2d")};
}
Vs conv2dVjp(Emit& e, const Primal& p, V ct) {
  // The adjoints take one dtype: the result's (the operands may differ, as the forward
  // promotes them); the transform casts each cotangent back to its operand's dtype.
  const DType d = dt(p.y);
  V c = e.cast(ct, d), x = e.cast(p.x[0], d), w = e.cast(p.x[1], d);
  return {e.op(OpKind::Conv2dGradInput, gradAttrs(p, p.x[0]), {c, w}),
          e.op(OpKind::Conv2dGradWeight, gradAttrs(p, p.x[1]), {x, c})};
}

Conv2dAttrs convOf(const Primal& p) {
  const Conv2dGradAttrs& g = attrs<Conv2dGradAttrs>(p);
  return {g.stride, g.padding};
}
// grad_input(ct, w) is linear in each: d/dct = conv2d(g, w), d/dw = grad_weight(g, ct).
Vs gradInputVjp(Emit& e, const Primal& p, V g) {
  Conv2dGradAttrs w = attrs<Conv2dGradAttrs>(p);
  w.shape = concreteDims(p.x[1]->type(), "conv2d");
  return {e.op(OpKind::Conv2d, convOf(p), {g, p.x[1]}), e.op(OpKind::Conv2dGradWeight, w, {g, p.x[0]})};
}
// grad_weight(x, ct): d/dx = grad_input(ct, g), d/dct = conv2d(x, g).
Vs gradWeightVjp(Emit& e, const Primal& p, V g) {
  Conv2dGradAttrs x = attrs<Conv2dGradAttrs>(p);
  x.shape = concreteDims(p.x[0]->type(), "conv2d");
  return {e.op(OpKind::Conv2dGradInput, x, {p.x[1], g}), e.op(OpKind::Conv2d, convOf(p), {p.x[0], g})};
}

Vs maxPoolVjp(Emit& e, const Primal& p, V ct) {
  return {e.op(OpKind::MaxPool2dGrad, p.op.attrs(), {p.x[0], e.cast(ct, dt(p.x[0]))})};
}
Vs avgPoolVjp(Emit& e, const Primal& p, V ct) {
  const Pool2dAttrs& a = attrs<Pool2dAttrs>(p);
  return {e.op(OpKind::AvgPool2dGrad, Pool2dGradAttrs{a.kernel, a.stride, a.padding, concreteDims(p.x[0]->type(), "avg-pool2d")},
               {ct})};
}
Vs avgPoolGradVjp(Emit& e, const Primal& p, V g) {
  const Pool2dGradAttrs& a = attrs<Pool2dGradAttrs>(p);
  return {e.op(OpKind::AvgPool2d, Pool2dAttrs{a.kernel, a.stride, a.padding}, {g})};
}
V sameOnTangent(Emit& e, const Primal& p, const Vs& d) { return e.op(p.op.code().kind, p.op.attrs(), {d[0]}); }
V avgPoolGradJvp(Emit& e, const Primal& p, const Vs& d) { return e.op(OpKind::AvgPool2dGrad, p.op.attrs(), {d[0]}); }

// ---- softmax family ----

int64_t axisOf(const Primal& p) { return std::get<AxisAttrs>(p.op.attrs()).axis; }
V sumAxis(Emit& e, V v, int64_t axis) { return e.sum(v, {axis}, true); }

// y = softmax(x): ct_x = y (ct - sum(ct y)).
Vs softmaxVjp(Emit& e, const Primal& p, V ct) {
  return {e.mul(p.y, e.sub(ct, sumAxis(e, e.mul(ct, p.y), axisOf(p))))};
}
V softmaxJvp(Emit& e, const Primal& p, const Vs& d) {
  return e.mul(p.y, e.sub(d[0], sumAxis(e, e.mul(d[0], p.y), axisOf(p))));
}
// y = log_softmax(x): ct_x = ct - softmax(x) sum(ct), softmax from the kernel (exact for
// large logits, where exp(y) would carry y's rounding).
Vs logSoftmaxVjp(Emit& e, const Primal& p, V ct) {
  V probs = e.op(OpKind::Softmax, AxisAttrs{axisOf(p)}, {p.x[0]});
  return {e.sub(ct, e.mul(probs, sumAxis(e, ct, axisOf(p))))};
}
V logSoftmaxJvp(Emit& e, const Primal& p, const Vs& d) {
  V probs = e.op(OpKind::Softmax, AxisAttrs{axisOf(p)}, {p.x[0]});
  return e.sub(d[0], sumAxis(e, e.mul(probs, d[0]), axisOf(p)));
}

// y = (x - mean) r with r = 1/sqrt(var + eps): ct_x = r (ct - mean(ct) - y mean(ct y)).
V layerNormScale(Emit& e, const Primal& p) {
  const NormAttrs& a = attrs<NormAttrs>(p);
  V x = p.x[0];
  V centred = e.sub(x, e.mean(x, {a.axis}, true));
  V var = e.mean(e.mul(centred, centred), {a.axis}, true);
  return e.op(OpKind::Rsqrt, {e.add(var, e.scalar(a.eps, dt(var)))});
}
V layerNormApply(Emit& e, const Primal& p, V g) {
  const int64_t axis = attrs<NormAttrs>(p).axis;
  V inner = e.sub(e.sub(g, e.mean(g, {axis}, true)), e.mul(p.y, e.mean(e.mul(g, p.y), {axis}, true)));
  return e.mul(layerNormScale(e, p), inner);
}
Vs layerNormVjp(Emit& e, const Primal& p, V ct) { return {layerNormApply(e, p, ct)}; }
V layerNormJvp(Emit& e, const Primal& p, const Vs& d) { return layerNormApply(e, p, d[0]); }

// cross_entropy(logits, labels) = mean over rows of -log_softmax(logits)[label]:
// d/dlogits = (softmax(logits) - one_hot(labels)) / rows.
V crossEntropySlope(Emit& e, const Primal& p) {
  V logits = p.x[0];
  const std::vector<int64_t> dims = concreteDims(logits->type(), "cross-entropy");
  const int64_t classes = dims.back(), rows = dims.size() == 2 ? dims[0] : 1;
  V probs = e.op(OpKind::Softmax, AxisAttrs{-1}, {logits});
  V target = e.cast(e.op(OpKind::OneHot, CountAttrs{classes}, {p.x[1]}), dt(probs));
  return e.div(e.sub(probs, target), e.scalar(static_cast<double>(rows), dt(probs)));
}
Vs crossEntropyVjp(Emit& e, const Primal& p, V ct) { return {e.mul(ct, crossEntropySlope(e, p)), nullptr}; }
V crossEntropyJvp(Emit& e, const Primal& p, const Vs& d) {
  if (!d[0]) return nullptr;
  return e.sum(e.mul(e.cast(d[0], dt(p.y)), crossEntropySlope(e, p)), {}, false);
}

// mse(a, b) = mean((a - b)^2): d/da = 2 (a - b) / n, d/db = -that.
Vs mseVjp(Emit& e, const Primal& p, V ct) {
  V diff = e.sub(p.x[0], p.x[1]);
  const std::vector<int64_t> dims = concreteDims(diff->type(), "mse");
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  V g = e.mul(e.mul(ct, e.scalar(2.0 / static_cast<double>(std::max<int64_t>(n, 1)), dt(p.y))), e.cast(diff, dt(p.y)));
  return {g, e.neg(g)};
}
V mseJvp(Emit& e, const Primal& p, const Vs& d) {
  V dd = !d[1] ? d[0] : !d[0] ? e.neg(d[1]) : e.sub(d[0], d[1]);
  V diff = e.cast(e.sub(p.x[0], p.x[1]), dt(p.y));
  return e.scale(e.mean(e.mul(diff, e.cast(dd, dt(p.y))), {}, false), 2.0);
}

// dropout(key, x) = x * mask / (1 - rate), the mask a function of the key alone.
Vs dropoutVjp(Emit& e, const Primal& p, V ct) { return {nullptr, e.op(OpKind::Dropout, p.op.attrs(), {p.x[0], ct})}; }
V dropoutJvp(Emit& e, const Primal& p, const Vs& d) {
  return d[1] ? e.op(OpKind::Dropout, p.op.attrs(), {p.x[0], d[1]}) : nullptr;
}

// shuffle(key, x) = take(x, permutation(key, n), 0): linear in x, its adjoint scatters back.
Vs shuffleVjp(Emit& e, const Primal& p, V ct) {
  const ir::Dim& rows = p.x[1]->type().dims[0];
  if (rows.symbolic()) fail(ErrorKind::Type, "autodiff: shuffle along a symbolic axis");
  V perm = e.op(OpKind::Permutation, CountAttrs{rows.size}, {p.x[0]});
  return {nullptr, e.op(OpKind::TakeGrad, TakeGradAttrs{0, rows.size}, {ct, perm})};
}
V shuffleJvp(Emit& e, const Primal& p, const Vs& d) { return d[1] ? e.op(OpKind::Shuffle, NoAttrs{}, {p.x[0], d[1]}) : nullptr; }

DiffRule rules(VjpRule vjp, JvpRule jvp) { return {Differentiability::Rules, vjp, jvp, ""}; }
DiffRule constant() { return {Differentiability::Constant, nullptr, nullptr, ""}; }

} // namespace

void addNeuralRules(RuleTable& t) {
  auto at = [&](OpKind k) -> DiffRule& { return t[static_cast<size_t>(k)]; };
  at(OpKind::MatMul) = rules(matmulVjp, contractionJvp);
  at(OpKind::Dot) = rules(dotVjp, contractionJvp);
  at(OpKind::Einsum) = rules(einsumVjp, einsumJvp);
  at(OpKind::Conv2d) = rules(conv2dVjp, contractionJvp);
  at(OpKind::Conv2dGradInput) = rules(gradInputVjp, contractionJvp);
  at(OpKind::Conv2dGradWeight) = rules(gradWeightVjp, contractionJvp);
  // The forward derivative of max-pool2d would gather each window's tangent at its
  // maximum, which no operation of the table does yet; reverse mode is complete.
  at(OpKind::MaxPool2d) = {Differentiability::Rules, maxPoolVjp, nullptr,
                           "forward mode (jvp, hessian) through max-pool2d is not supported; use reverse mode"};
  at(OpKind::MaxPool2dGrad) = {Differentiability::Unsupported, nullptr, nullptr,
                               "second derivatives through max-pool2d are not supported"};
  at(OpKind::AvgPool2d) = rules(avgPoolVjp, sameOnTangent);
  at(OpKind::AvgPool2dGrad) = rules(avgPoolGradVjp, avgPoolGradJvp);
  at(OpKind::Softmax) = rules(softmaxVjp, softmaxJvp);
  at(OpKind::LogSoftmax) = rules(logSoftmaxVjp, logSoftmaxJvp);
  at(OpKind::LayerNorm) = rules(layerNormVjp, layerNormJvp);
  at(OpKind::CrossEntropy) = rules(crossEntropyVjp, crossEntropyJvp);
  at(OpKind::Mse) = rules(mseVjp, mseJvp);
  at(OpKind::Dropout) = rules(dropoutVjp, dropoutJvp);
  at(OpKind::Shuffle) = rules(shuffleVjp, shuffleJvp);
  for (OpKind k : {OpKind::Full, OpKind::Arange, OpKind::Linspace, OpKind::Eye, OpKind::RngKey, OpKind::RngSplit,
                   OpKind::RandUniform, OpKind::RandNormal, OpKind::RandInt, OpKind::Categorical, OpKind::Permutation,
                   OpKind::Bernoulli})
    at(k) = constant();
}

} // namespace tsl::autodiff
