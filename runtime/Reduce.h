// runtime/Reduce.h — reductions over axes: sum mean prod max min argmax argmin logsumexp,
// and the moments var and std.
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

/// var and std: a reduction's axes, and the delta degrees of freedom (the divisor is
/// n - ddof, as NumPy's; 0 when that is negative).
struct MomentAttrs {
  std::vector<int64_t> axes; ///< empty: all axes (unless noAxes)
  bool keepDims = false;
  bool noAxes = false;
  int64_t ddof = 0;
  bool operator==(const MomentAttrs&) const = default;
  ReduceAttrs reduction() const { return {axes, keepDims, noAxes}; }
};

const char* reduceName(ReduceOp op);

/// The result dtype (weak only for a weak scalar input) and shape; errors for bad axes
/// (out of range, repeated, or more than one for argmax/argmin).
TypeKey reduceResultType(ReduceOp op, TypeKey input);
Shape reduceShape(ReduceOp op, const Shape& input, const ReduceAttrs& attrs);

Tensor reduce(ReduceOp op, const Tensor& x, const ReduceAttrs& attrs);

/// The number of elements each result of a reduction over `attrs`' axes combines.
int64_t reducedCount(const Shape& input, const ReduceAttrs& attrs);

/// (var x) or, with root, (std x): Σ (x - mean)² / (n - ddof) over the axes, in two passes
/// (the mean, then the squared deviations), so no digits cancel. Integers give f32 (as
/// mean); half types compute in f32 and round once.
Tensor moment(bool root, const Tensor& x, const MomentAttrs& attrs);

} // namespace tsl
