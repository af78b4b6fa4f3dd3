// runtime/AttentionRows.h — the operation table's rows of scaled dot-product attention.
//
// Rows in the format of TSL_OTHER_OPS (runtime/Ops.h), kept in their own block; the type
// rules and kernels are runtime/Attention.cpp's, computed in blocks by
// runtime/FlashAttention.h so that no [Lq, Lk] matrix of scores is ever made. The mask is
// an optional last operand (the keyword :mask of the call form). attention has two parts,
// like the decompositions of runtime/LinalgRows.h: part 0 is the output and part 1 the
// logsumexp of each query's scores, which reverse mode saves for the pullback; TSL calls
// part 0. attention-grad's parts 0, 1, 2 are the cotangents of q, k and v (each computed
// in its own pass, dq by tiles of queries and dk, dv by tiles of keys), and attention-jvp
// is the forward derivative.
#pragma once

#define TSL_ATTENTION_OPS(X)                                                                                                \
  X(Attention, "attention", "attention", 3, 4, AttentionAttrs, Opaque, LayoutDemanding, kFloatOnly, attentionType, attentionKernel, kAttentionCall, \
    "Scaled dot-product attention, softmax(q kᵀ/√d) v over the keys, for q [..., Lq, d], k [..., Lk, d], v [..., Lk, dv] " \
    "(leading axes broadcast): :mask (boolean, true where a query may attend a key) broadcasts to [..., Lq, Lk]; "     \
    ":causal true lets query i see keys j <= i (the top-left aligned triangle, PyTorch's is_causal) and combines "   \
    "with :mask by and; a query that may attend no key gives zeros (and zero gradients). Computed in blocks, in "    \
    "memory linear in Lq and Lk. Part 1 (compiled programs) is the logsumexp of each query's scores.",               \
    "(attention (ones [2 4]) (ones [3 4]) [[1.0] [2.0] [3.0]]) ; f32[2,1] [[2] [2]]")                                  \
  X(AttentionGrad, "attention-grad", "attention_grad", 6, 7, AttentionAttrs, Opaque, LayoutDemanding, kFloatOnly, attentionGradType, attentionGradKernel, kInternal, \
    "The cotangents of attention from q, k, v, the cotangent g of its output, the logsumexp and δ = Σ g·out per "   \
    "query (and the mask): part 0 of q, 1 of k, 2 of v, each in the broadcast batch shape (derivative programs).",   \
    "")                                                                                                                \
  X(AttentionJvp, "attention-jvp", "attention_jvp", 6, 7, AttentionAttrs, Opaque, LayoutDemanding, kFloatOnly, attentionJvpType, attentionJvpKernel, kInternal, \
    "The tangent of attention's output from q, k, v and their tangents (and the mask) (derivative programs).",      \
    "")
