// runtime/Attention.cpp — scaled dot-product attention and its derivatives, eagerly.
//
// Each row checks its shapes (attentionShape), converts q, k, v and the other float
// operands to the compute type (f32, or f64) as contiguous tensors, reads the mask through
// its strides broadcast to [..., Lq, Lk] (a broadcast mask is never expanded), and runs
// the work items of runtime/FlashAttention.h in parallel, each chunk with scratch of its
// own. Compiled with -ffp-contract=off (runtime/CMakeLists.txt), as the :cpu backend's
// kernel library is, so the two copies of the kernels compute the same bits.
#include "runtime/Attention.h"

#include "runtime/Dispatch.h"
#include "runtime/Elementwise.h"
#include "runtime/FlashAttention.h"
#include "runtime/Softmax.h"
#include "runtime/ThreadPool.h"
#include "runtime/Views.h"

#include <algorithm>
#include <vector>

namespace tsl {

namespace {

const AttentionAttrs& attrsOf(const OpAttrs& a) {
  const AttentionAttrs* attrs = std::get_if<AttentionAttrs>(&a);
  TSL_ASSERT(attrs, "attention given the wrong kind of attributes");
  return *attrs;
}

/// The leading axes of a shape of rank >= 2.
Shape leading(const Shape& s) { return Shape(s.dims().subspan(0, static_cast<size_t>(s.rank() - 2))); }

Shape withTail(const Shape& batch, std::initializer_list<int64_t> tail) {
  Shape out = batch;
  for (int64_t d : tail) out.push(d);
  return out;
}

/// What the operands compute in: their promoted float type, half types in f32.
DType computeType(DType result) { return result == DType::F64 ? DType::F64 : DType::F32; }

DType resultDType(std::span<const TensorType> in) {
  TypeKey t = {in[0].dtype, in[0].weak};
  for (size_t i = 1; i < 3; ++i) t = promoteTypes(t, {in[i].dtype, in[i].weak});
  return floatComputeType(concreteDType(t));
}

void checkMask(const TensorType* mask, const char* who) {
  if (mask && mask->dtype != DType::Bool)
    fail(ErrorKind::Type, who, ": :mask must be a boolean tensor (true where a query may attend a key), got ",
         mask->str());
}

/// A float operand as a contiguous tensor of the compute type.
Tensor prepared(const Tensor& x, DType compute) { return contiguous(astype(x.blocked() ? plain(x) : x, compute)); }

/// Runs `mode` over q, k, v, the three extra operands (none for the forward modes) and
/// the mask, into a new tensor of `shape` and `result` dtype.
Tensor runAttention(flash::Mode mode, bool causal, std::span<const Tensor> in, size_t primaries, DType result,
                    const Shape& shape) {
  std::vector<TensorType> types;
  for (const Tensor& t : in) types.push_back(TensorType::of(t));
  const bool masked = in.size() > primaries;
  const AttentionShape s = attentionShape(types[0], types[1], types[2], masked ? &types.back() : nullptr, "attention");
  const DType compute = computeType(result);
  std::vector<Tensor> ops;
  for (size_t i = 0; i < primaries; ++i) ops.push_back(prepared(in[i], compute));
  Tensor mask;
  if (masked) mask = broadcastTo(in.back().blocked() ? plain(in.back()) : in.back(), withTail(s.batch, {s.lq, s.lk}));
  const flash::Geometry g =
      attentionGeometry(s, causal, {&ops[0].shape(), &ops[1].shape(), &ops[2].shape()},
                        {ops[0].strides(), ops[1].strides(), ops[2].strides()}, masked ? mask.strides() : nullptr);
  Tensor out = Tensor::empty(compute, shape);
  const int64_t items = g.items(mode);
  if (out.numel() > 0 && items > 0) {
    const int64_t work = flash::kTile * std::max<int64_t>(1, (mode == flash::kGradK || mode == flash::kGradV ? g.lq : g.lk) * (g.d + g.dv));
    dispatchDType(compute, [&](auto tag) {
      using T = decltype(tag);
      if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
        flash::Operands<T> operands;
        operands.q = reinterpret_cast<const T*>(ops[0].data());
        operands.k = reinterpret_cast<const T*>(ops[1].data());
        operands.v = reinterpret_cast<const T*>(ops[2].data());
        for (size_t i = 3; i < primaries; ++i) operands.extra[i - 3] = reinterpret_cast<const T*>(ops[i].data());
        if (masked) operands.mask = reinterpret_cast<const uint8_t*>(mask.data());
        T* dst = reinterpret_cast<T*>(out.mutableData());
        parallelFor(items, std::max<int64_t>(1, (int64_t(1) << 18) / work), [&](int64_t begin, int64_t end) {
          std::vector<T> scratch(static_cast<size_t>(flash::scratchElements(g)));
          flash::run<T>(mode, g, operands, dst, begin, end, scratch.data());
        });
      }
    });
  }
  return result == compute ? out : astype(out, result);
}

} // namespace

AttentionShape attentionShape(const TensorType& q, const TensorType& k, const TensorType& v, const TensorType* mask,
                              const char* who) {
  const TensorType* named[] = {&q, &k, &v};
  const char* names[] = {"q [..., Lq, d]", "k [..., Lk, d]", "v [..., Lk, dv]"};
  for (int i = 0; i < 3; ++i)
    if (named[i]->shape.rank() < 2)
      fail(ErrorKind::Shape, who, ": ", names[i], " needs at least two axes, got ", named[i]->str());
  AttentionShape s;
  const Shape &qs = q.shape, &ks = k.shape, &vs = v.shape;
  s.lq = qs[qs.rank() - 2], s.d = qs[qs.rank() - 1], s.lk = ks[ks.rank() - 2], s.dv = vs[vs.rank() - 1];
  if (ks[ks.rank() - 1] != s.d)
    fail(ErrorKind::Shape, who, ": q ", q.str(), " and k ", k.str(), " must have the same last axis (d)");
  if (vs[vs.rank() - 2] != s.lk)
    fail(ErrorKind::Shape, who, ": k ", k.str(), " and v ", v.str(), " must have the same number of keys (Lk)");
  const Shape qb = leading(qs), kb = leading(ks), vb = leading(vs);
  const int rank = std::max({qb.rank(), kb.rank(), vb.rank()});
  std::vector<int64_t> batch(static_cast<size_t>(rank), 1);
  for (const Shape* b : {&qb, &kb, &vb})
    for (int a = 0; a < b->rank(); ++a) {
      int64_t& to = batch[static_cast<size_t>(rank - b->rank() + a)];
      const int64_t from = (*b)[a];
      if (from != 1 && to != 1 && from != to)
        fail(ErrorKind::Shape, who, ": the leading axes of q ", q.str(), ", k ", k.str(), " and v ", v.str(),
             " do not broadcast");
      if (from != 1) to = from;
    }
  s.batch = Shape(std::span<const int64_t>(batch));
  if (mask) {
    const Shape full = withTail(s.batch, {s.lq, s.lk});
    const Shape& m = mask->shape;
    bool fits = m.rank() <= full.rank();
    for (int a = 0; fits && a < m.rank(); ++a) fits = m[a] == 1 || m[a] == full[full.rank() - m.rank() + a];
    if (!fits)
      fail(ErrorKind::Shape, who, ": :mask ", mask->str(), " does not broadcast to the scores' shape ", full.str(),
           " ([..., Lq, Lk])");
  }
  return s;
}

flash::Geometry attentionGeometry(const AttentionShape& s, bool causal, const std::array<const Shape*, 3>& shapes,
                                  const std::array<const int64_t*, 3>& strides, const int64_t* maskStrides) {
  flash::Geometry g;
  g.lq = s.lq, g.lk = s.lk, g.d = s.d, g.dv = s.dv, g.causal = causal;
  g.rank = s.batch.rank();
  for (int a = 0; a < g.rank; ++a) g.batch[a] = s.batch[a];
  for (size_t o = 0; o < 3; ++o) {
    const Shape& shape = *shapes[o];
    const int offset = g.rank - (shape.rank() - 2);
    for (int a = offset; a < g.rank; ++a) g.strides[o][a] = shape[a - offset] == 1 ? 0 : strides[o][a - offset];
  }
  if (maskStrides) {
    g.masked = true;
    g.maskRow = maskStrides[g.rank];
    g.maskCol = maskStrides[g.rank + 1];
    for (int a = 0; a < g.rank; ++a) g.strides[3][a] = maskStrides[a];
  }
  return g;
}

std::vector<int64_t> broadcastStrides(const Shape& from, const Shape& full) {
  std::vector<int64_t> out(static_cast<size_t>(full.rank()), 0);
  int64_t stride = 1;
  for (int a = from.rank() - 1; a >= 0; --a) {
    const int at = full.rank() - from.rank() + a;
    if (from[a] != 1) out[static_cast<size_t>(at)] = stride;
    stride *= from[a];
  }
  return out;
}

Tensor attention(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor* mask, bool causal, int64_t part) {
  std::vector<Tensor> in{q, k, v};
  if (mask) in.push_back(*mask);
  return attentionKernel(AttentionAttrs{causal, part}, in);
}

TensorType attentionType(const OpAttrs& a, std::span<const TensorType> in) {
  const TensorType* mask = in.size() > 3 ? &in[3] : nullptr;
  checkMask(mask, "attention");
  const AttentionShape s = attentionShape(in[0], in[1], in[2], mask, "attention");
  const int64_t part = attrsOf(a).part;
  if (part != 0 && part != 1) fail(ErrorKind::Value, "attention: part must be 0 (the output) or 1 (the logsumexp), got ", part);
  return {resultDType(in), false, part == 0 ? withTail(s.batch, {s.lq, s.dv}) : withTail(s.batch, {s.lq})};
}

Tensor attentionKernel(const OpAttrs& a, std::span<const Tensor> in) {
  std::vector<TensorType> types;
  for (const Tensor& t : in) types.push_back(TensorType::of(t));
  const TensorType type = attentionType(a, types);
  const AttentionAttrs& attrs = attrsOf(a);
  return runAttention(attrs.part == 0 ? flash::kForward : flash::kLse, attrs.causal, in, 3, type.dtype,
                      type.shape);
}

TensorType attentionGradType(const OpAttrs& a, std::span<const TensorType> in) {
  const TensorType* mask = in.size() > 6 ? &in[6] : nullptr;
  checkMask(mask, "attention_grad");
  const AttentionShape s = attentionShape(in[0], in[1], in[2], mask, "attention_grad");
  const Shape perQuery = withTail(s.batch, {s.lq});
  if (in[3].shape != withTail(s.batch, {s.lq, s.dv}) || in[4].shape != perQuery || in[5].shape != perQuery)
    fail(ErrorKind::Shape, "attention_grad: the cotangent ", in[3].str(), ", logsumexp ", in[4].str(), " and δ ",
         in[5].str(), " do not fit the output ", withTail(s.batch, {s.lq, s.dv}).str());
  const int64_t part = attrsOf(a).part;
  const DType dtype = resultDType(in);
  switch (part) {
  case 0: return {dtype, false, withTail(s.batch, {s.lq, s.d})};
  case 1: return {dtype, false, withTail(s.batch, {s.lk, s.d})};
  case 2: return {dtype, false, withTail(s.batch, {s.lk, s.dv})};
  default: fail(ErrorKind::Value, "attention_grad: part must be 0 (q), 1 (k) or 2 (v), got ", part);
  }
}

Tensor attentionGradKernel(const OpAttrs& a, std::span<const Tensor> in) {
  std::vector<TensorType> types;
  for (const Tensor& t : in) types.push_back(TensorType::of(t));
  const TensorType type = attentionGradType(a, types);
  const AttentionAttrs& attrs = attrsOf(a);
  const flash::Mode mode = attrs.part == 0 ? flash::kGradQ : attrs.part == 1 ? flash::kGradK : flash::kGradV;
  return runAttention(mode, attrs.causal, in, 6, type.dtype, type.shape);
}

TensorType attentionJvpType(const OpAttrs&, std::span<const TensorType> in) {
  const TensorType* mask = in.size() > 6 ? &in[6] : nullptr;
  checkMask(mask, "attention_jvp");
  const AttentionShape s = attentionShape(in[0], in[1], in[2], mask, "attention_jvp");
  for (int i = 0; i < 3; ++i)
    if (in[3 + i].shape != in[i].shape)
      fail(ErrorKind::Shape, "attention_jvp: the tangent ", in[3 + i].str(), " does not have its primal's shape ",
           in[i].str());
  return {resultDType(in), false, withTail(s.batch, {s.lq, s.dv})};
}

Tensor attentionJvpKernel(const OpAttrs& a, std::span<const Tensor> in) {
  std::vector<TensorType> types;
  for (const Tensor& t : in) types.push_back(TensorType::of(t));
  const TensorType type = attentionJvpType(a, types);
  return runAttention(flash::kJvp, attrsOf(a).causal, in, 6, type.dtype, type.shape);
}

} // namespace tsl
