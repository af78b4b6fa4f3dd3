// runtime/OrderRows.h — the operation table's rows that order and select by index.
//
// Rows in the format of TSL_OTHER_OPS (runtime/Ops.h), kept in their own block: sorting
// (sort, argsort, top-k; runtime/Order.cpp) and moving elements by an index tensor along
// one axis (gather, scatter-add; runtime/GatherScatter.cpp), whose type rules and kernels
// those files declare. top-k has two results, the values and their indices: like the
// decompositions of runtime/LinalgRows.h it is one row whose TopKAttrs::part selects the
// result, and its call form (kTopKCall) says it has two parts, so the builtin applies the
// row once per part and returns the vector of both.
#pragma once

#define TSL_ORDER_OPS(X)                                                                                                    \
  X(Sort, "sort", "sort", 1, 1, AxisAttrs, Opaque, AxisSensitive, kBitExact, sortType, sortKernel, kSortCall,          \
    "x sorted ascending along an axis (the last by default), NaN last; on a collection (a vector or list that is no "   \
    "tensor) the elements in ascending order, as a vector (Clojure's sort).",                                           \
    "(sort [[3 1 2] [9 7 8]]) ; i64[2,3] [[1 2 3] [7 8 9]]")                                                           \
  X(ArgSort, "argsort", "argsort", 1, 1, AxisAttrs, Opaque, AxisSensitive, kBitExact, argsortType, argsortKernel, kArgsortCall, \
    "The indices (i64) that sort x ascending along an axis (the last by default); stable: equal elements keep their "  \
    "order; NaN last.",                                                                                                \
    "(argsort [3 1 2 1]) ; i64[4] [1 3 2 0]")                                                                          \
  X(TopK, "top-k", "top_k", 1, 1, TopKAttrs, Opaque, AxisSensitive, kBitExact, topKType, topKKernel, kTopKCall,       \
    "[values indices]: the k largest elements along the last axis, descending, and their indices (i64); ties give "    \
    "the lower index first; NaN counts as the largest.",                                                               \
    "(top-k [1 3 2 3] 2) ; [i64[2] [3 3] i64[2] [1 3]]")                                                              \
  X(Gather, "gather", "gather", 2, 2, AxisAttrs, Injective, AxisSensitive, kBitExact, gatherType, gatherKernel, kGatherCall, \
    "The elements of x at idx along an axis (the last by default), NumPy's take_along_axis: idx has x's rank, the "    \
    "other axes broadcast; negative indices count from the end.",                                                      \
    "(gather [[10 20 30] [40 50 60]] [[2 0] [1 1]]) ; i64[2,2] [[30 10] [50 50]]")                                     \
  X(ScatterAdd, "scatter-add", "scatter_add", 3, 3, AxisAttrs, Opaque, AxisSensitive, kBitExact, scatterAddType, scatterAddKernel, kScatterAddCall, \
    "A copy of x with src added at idx along an axis (the last by default), PyTorch's scatter_add: for every position " \
    "p of idx, out[p with the axis at idx[p]] += src[p]; idx no larger than src, nor than x off the axis.",            \
    "(scatter-add (zeros [3]) [0 2 0] [1.0 2.0 3.0]) ; f32[3] [4 0 2]")
