// runtime/Attention.h — scaled dot-product attention and its derivatives, eagerly.
//
// The shapes: q [..., Lq, d], k [..., Lk, d], v [..., Lk, dv], whose leading (batch) axes
// broadcast; a mask, when given, is boolean and broadcasts to [..., Lq, Lk]. Operands
// compute in their promoted float type (integers in f32, f16 and bf16 in f32, rounded
// once at the end) by the blocked kernels of runtime/FlashAttention.h, so memory beyond
// the operands and the result is a few tiles per thread. The rows' type rules and kernel
// adapters are declared here for runtime/OpTable.cpp; the call form and the parts are
// those of runtime/AttentionRows.h.
#pragma once

#include "runtime/FlashAttention.h"
#include "runtime/Ops.h"

#include <array>
#include <vector>

namespace tsl {

/// The sizes of an attention call, checked: a shape error names the operands' types.
struct AttentionShape {
  Shape batch; ///< the broadcast leading axes of q, k and v
  int64_t lq = 0, lk = 0, d = 0, dv = 0;
};
AttentionShape attentionShape(const TensorType& q, const TensorType& k, const TensorType& v, const TensorType* mask,
                              const char* who);

/// The blocked kernels' geometry (runtime/FlashAttention.h): sizes and causality, the
/// batch strides of q, k and v, each stored with `strides` (elements) over its own shape,
/// and of the mask, whose `maskStrides` are over [..., Lq, Lk] (0 where it broadcasts;
/// null: no mask).
flash::Geometry attentionGeometry(const AttentionShape& s, bool causal, const std::array<const Shape*, 3>& shapes,
                                  const std::array<const int64_t*, 3>& strides, const int64_t* maskStrides);
/// The strides over `full` of a contiguous tensor of shape `from` broadcast to it.
std::vector<int64_t> broadcastStrides(const Shape& from, const Shape& full);

/// Part 0: the output [..., Lq, dv]; part 1: the logsumexp of each query's scores
/// [..., Lq] (-inf for a query that may attend no key).
Tensor attention(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor* mask, bool causal, int64_t part);

// ---- The rows' type rules and kernel adapters ----

TensorType attentionType(const OpAttrs&, std::span<const TensorType> in);
Tensor attentionKernel(const OpAttrs&, std::span<const Tensor> in);
TensorType attentionGradType(const OpAttrs&, std::span<const TensorType> in);
Tensor attentionGradKernel(const OpAttrs&, std::span<const Tensor> in);
TensorType attentionJvpType(const OpAttrs&, std::span<const TensorType> in);
Tensor attentionJvpKernel(const OpAttrs&, std::span<const Tensor> in);

} // namespace tsl
