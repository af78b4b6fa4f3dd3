// runtime/Reduce.h — reductions over axes: sum mean prod max min argmax argmin logsumexp.
//
// `axes` empty means every axis. Result dtypes follow NumPy, except as docs/language.md §3
// fixes: sum and prod of bool or integers give i64; mean of bool or integers gives f32;
// argmax and argmin give i64; logsumexp of integers gives f32. Float sums accumulate in the
// element type with Eigen's vectorised tree (half types accumulate in f32). NaN propagates
// through max and min; argmax and argmin return the first NaN, as NumPy does.
#pragma once

#include "runtime/Tensor.h"

#include <vector>

namespace tsl {

enum class ReduceOp : uint8_t { Sum, Mean, Prod, Max, Min, ArgMax, ArgMin, LogSumExp };

struct ReduceAttrs {
  std::vector<int64_t> axes; ///< empty: all axes (unless noAxes)
  bool keepDims = false;
  bool noAxes = false; ///< an explicit empty list (:axis []): reduce nothing, as NumPy's axis=()
  bool operator==(const ReduceAttrs&) const = default;
};

const char* reduceName(ReduceOp op);

/// The result dtype (weak only for a weak scalar input) and shape; errors for bad axes
/// (out of range, repeated, or more than one for argmax/argmin).
TypeKey reduceResultType(ReduceOp op, TypeKey input);
Shape reduceShape(ReduceOp op, const Shape& input, const ReduceAttrs& attrs);

Tensor reduce(ReduceOp op, const Tensor& x, const ReduceAttrs& attrs);

} // namespace tsl
