// runtime/CollectiveRows.h — the operation table's rows for collectives across ranks.
//
// Rows in the format of TSL_OTHER_OPS (runtime/Ops.h), kept in their own block; the type
// rules and kernels are runtime/Collectives.cpp's. In a world of one rank (a program not
// started by a launcher) each is the identity (all-reduce :mean of integers still gives
// f32). Every row is side-effecting: compiled code runs it where the program does, as
// often as the program does, in the same order on every rank (no pass removes, merges or
// folds one), and a traced function stages one even when no operand is traced. TSL
// calls them on a tree of tensors too (the call forms' `trees`): leaf by leaf, in the
// tree's order. reduce-to-root is internal: it is broadcast's transpose, which
// derivatives use. all-reduce-start and all-reduce-wait are internal too: the
// bucket-all-reduce pass (compiler/passes/BucketAllReduce.cpp) replaces the all-reduces of
// a compiled step by one start per bucket (a non-blocking all-reduce of its operands packed
// in one buffer, giving an i64 handle) and one wait per operand (its part of the reduced
// buffer); they are side-effecting and never appear in a program before that pass.
#pragma once

#define TSL_COLLECTIVE_OPS(X)                                                                                              \
  X(AllReduce, "all-reduce", "all_reduce", 1, 1, CollectiveAttrs, Opaque, LayoutDemanding, kSideEffecting | kBitExact,     \
    allReduceType, allReduceKernel, kAllReduceCall,                                                                    \
    "x combined elementwise across every rank (:sum :mean :max :min, default :sum), the same on every rank; :mean of " \
    "integers gives f32. A tree reduces every leaf.",                                                                  \
    "(all-reduce [1.0 2.0] :op :mean) ; f32[2] [1 2]")                                                                \
  X(Broadcast, "broadcast", "broadcast", 1, 1, CollectiveAttrs, Opaque, LayoutDemanding, kSideEffecting | kBitExact,       \
    broadcastType, broadcastKernel, kBroadcastRootCall,                                                                \
    "Rank root's x on every rank (each rank passes a tensor of the same dtype and shape). A tree broadcasts every leaf.", \
    "(broadcast [1 2] :root 0) ; i64[2] [1 2]")                                                                       \
  X(AllGather, "all-gather", "all_gather", 1, 1, CollectiveAttrs, Opaque, LayoutDemanding, kSideEffecting | kBitExact,     \
    allGatherType, allGatherKernel, kCollectiveAxisCall,                                                               \
    "Every rank's x concatenated along axis in rank order, on every rank: the axis grows by the number of ranks.",    \
    "(all-gather [[1 2]] :axis 0) ; i64[1,2] [[1 2]]")                                                                \
  X(ReduceScatter, "reduce-scatter", "reduce_scatter", 1, 1, CollectiveAttrs, Opaque, LayoutDemanding,                     \
    kSideEffecting | kBitExact, reduceScatterType, reduceScatterKernel, kCollectiveAxisCall,                           \
    "The sum over ranks of x, split along axis into one equal block per rank: rank r keeps block r (booleans sum as " \
    "i64).",                                                                                                           \
    "(reduce-scatter [1 2 3 4] :axis 0) ; i64[4] [1 2 3 4]")                                                          \
  X(ReduceToRoot, "reduce-to-root", "reduce_to_root", 1, 1, CollectiveAttrs, Opaque, LayoutDemanding,                      \
    kSideEffecting | kBitExact, reduceToRootType, reduceToRootKernel, kInternal,                                       \
    "The sum over ranks of x on rank root, zeros on the others: broadcast's transpose (derivative programs).",        \
    "")                                                                                                                \
  X(AllReduceStart, "all-reduce-start", "all_reduce_start", 1, -1, CollectiveAttrs, Opaque, LayoutDemanding,              \
    kSideEffecting | kBitExact, allReduceStartType, allReduceStartKernel, kInternal,                                   \
    "Starts one non-blocking all-reduce of its operands (of one dtype) packed into one buffer and gives its handle, "  \
    "an i64 that all-reduce-wait reads (a bucket of the bucket-all-reduce pass).",                                     \
    "")                                                                                                                \
  X(AllReduceWait, "all-reduce-wait", "all_reduce_wait", 2, 2, CollectiveAttrs, Opaque, LayoutDemanding,                  \
    kSideEffecting | kBitExact, allReduceWaitType, allReduceWaitKernel, kInternal,                                     \
    "Operand `part` x of the all-reduce started with handle h, reduced as all-reduce reduces x: waits for the "       \
    "all-reduce to complete (the first wait of a bucket does) and gives x's part of the buffer.",                     \
    "")                                                                                                                \
  X(Barrier, "barrier", "barrier", 0, 0, CollectiveAttrs, Opaque, Agnostic, kSideEffecting | kBitExact, barrierType,     \
    barrierKernel, kBarrierCall,                                                                                       \
    "Waits until every rank has reached it; returns nil (in the IR, an i64 0).",                                      \
    "(barrier) ; nil")
