// runtime/Order.h — sorting along an axis: sort, argsort and top-k.
//
// The order is ascending with NaN after every number (NumPy's), -0.0 and 0.0 equal; it is
// made total by the elements' positions, so sorting is stable (equal elements keep their
// order) and every engine gives the same result. top-k takes the k first elements of the
// descending order along the last axis, in which NaN comes first and equal elements keep
// the lower index first. The rows' type rules and kernel adapters are declared here for
// runtime/OpTable.cpp.
#pragma once

#include "runtime/Ops.h"

namespace tsl {

/// x sorted ascending along `axis`; a rank-0 x is its own sort.
Tensor sort(const Tensor& x, int64_t axis);
/// The indices (i64) that sort x along `axis`; a rank-0 x gives 0.
Tensor argsort(const Tensor& x, int64_t axis);
/// Part 0: the k largest elements along the last axis, descending; part 1: their indices
/// (i64). k outside [0, n] is a value error.
Tensor topK(const Tensor& x, int64_t k, int64_t part);

// ---- The rows' type rules and kernel adapters ----

TensorType sortType(const OpAttrs&, std::span<const TensorType> in);
Tensor sortKernel(const OpAttrs&, std::span<const Tensor> in);
TensorType argsortType(const OpAttrs&, std::span<const TensorType> in);
Tensor argsortKernel(const OpAttrs&, std::span<const Tensor> in);
TensorType topKType(const OpAttrs&, std::span<const TensorType> in);
Tensor topKKernel(const OpAttrs&, std::span<const Tensor> in);

} // namespace tsl
