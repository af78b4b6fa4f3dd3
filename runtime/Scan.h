// runtime/Scan.h — scans: cumulative sums and products, and linear recurrences, along an axis.
//
// A scan's result has its operand's shape; element k along the axis combines elements
// 0..k (runtime/ScanRows.h computes one row, for the eager kernels and :cpu alike).
#pragma once

#include "runtime/Tensor.h"

namespace tsl {

/// The dtype a cumulative sum gives: integers and booleans i64 (as sum), floats their own.
TypeKey cumsumResultType(TypeKey input);

/// (cumsum x :axis a): prefix sums along `axis` (negative from the end). A rank-0 x is its
/// own cumulative sum.
Tensor cumsum(const Tensor& x, int64_t axis);

/// (cumprod x :axis a): prefix products along `axis`, of cumsum's dtype.
Tensor cumprod(const Tensor& x, int64_t axis);

/// The recurrence h_k = a_k·h_(k-1) + b_k along `axis` (h_(-1) = 0), or with `reverse`
/// h_k = a_(k+1)·h_(k+1) + b_k from the end: a and b of one shape, floats (the result of
/// their promoted float dtype). The reverse recurrence is the adjoint of the forward one
/// in b, which makes the derivatives of cumprod without dividing by x.
Tensor linearScan(const Tensor& a, const Tensor& b, int64_t axis, bool reverse);
/// linearScan's result type (a shape error for operands of different shapes).
TypeKey linearScanResultType(TypeKey a, TypeKey b);

} // namespace tsl
