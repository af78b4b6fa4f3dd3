// runtime/Collectives.h — collectives on tensors across the ranks of the world.
//
// The rows are runtime/CollectiveRows.h's; this header declares their type rules and
// kernel adapters (runtime/OpTable.cpp builds the table from them) and the collectives
// themselves. In a world of one rank each is the identity. In a larger world each first
// checks that every rank calls the same collective on the same dtype and shape (one small
// all-reduce of a fingerprint): a rank that calls another one, or has ended, makes every
// rank fail with a runtime error instead of hanging or exchanging garbage. Then it runs
// one MPI collective on the contiguous elements (runtime/Transport.h).
#pragma once

#include "runtime/Ops.h"

namespace tsl {

/// x combined across ranks; :mean divides the sum by the number of ranks (integers and
/// booleans in f64, then f32), booleans sum as i64, :max and :min of booleans are or/and.
Tensor allReduce(const Tensor& x, CollectiveOp op);
/// Rank root's x on every rank.
Tensor broadcast(const Tensor& x, int64_t root);
/// Every rank's x concatenated along axis, in rank order (x of rank >= 1).
Tensor allGather(const Tensor& x, int64_t axis);
/// Block `rank` (of `ranks` equal blocks along axis) of the sum over ranks of x.
Tensor reduceScatter(const Tensor& x, int64_t axis);
/// The sum over ranks of x on rank root, zeros elsewhere.
Tensor reduceToRoot(const Tensor& x, int64_t root);
/// Returns once every rank has called it.
void barrier();

/// Starts one non-blocking all-reduce of `xs` (of one dtype) packed into one buffer, and
/// returns its handle (0 in a world of one rank, where nothing needs to move). The
/// buffer belongs to the runtime until every part has been taken by allReduceWait.
int64_t allReduceStart(std::span<const Tensor> xs, CollectiveOp op);
/// Part `part` (whose operand was x) of the all-reduce `handle`, reduced as allReduce(x,
/// op) reduces it, bit for bit: waits for the all-reduce first if no part was taken yet.
Tensor allReduceWait(int64_t handle, int64_t part, const Tensor& x, CollectiveOp op);

/// The collective `kind` of x written straight into `out` (contiguous, of the type the
/// row's rule gives: compiled code's buffer), when no conversion stands in the way;
/// false (nothing done, nothing communicated) when the caller must run the kernel instead.
bool collectiveInto(OpKind kind, const OpAttrs& attrs, const Tensor& x, Tensor& out);

// ---- The rows' type rules and kernel adapters ----

TensorType allReduceType(const OpAttrs&, std::span<const TensorType> in);
Tensor allReduceKernel(const OpAttrs&, std::span<const Tensor> in);
TensorType broadcastType(const OpAttrs&, std::span<const TensorType> in);
Tensor broadcastKernel(const OpAttrs&, std::span<const Tensor> in);
TensorType allGatherType(const OpAttrs&, std::span<const TensorType> in);
Tensor allGatherKernel(const OpAttrs&, std::span<const Tensor> in);
TensorType reduceScatterType(const OpAttrs&, std::span<const TensorType> in);
Tensor reduceScatterKernel(const OpAttrs&, std::span<const Tensor> in);
TensorType reduceToRootType(const OpAttrs&, std::span<const TensorType> in);
Tensor reduceToRootKernel(const OpAttrs&, std::span<const Tensor> in);
TensorType allReduceStartType(const OpAttrs&, std::span<const TensorType> in);
Tensor allReduceStartKernel(const OpAttrs&, std::span<const Tensor> in);
TensorType allReduceWaitType(const OpAttrs&, std::span<const TensorType> in);
Tensor allReduceWaitKernel(const OpAttrs&, std::span<const Tensor> in);
TensorType barrierType(const OpAttrs&, std::span<const TensorType> in);
Tensor barrierKernel(const OpAttrs&, std::span<const Tensor> in);

} // namespace tsl
