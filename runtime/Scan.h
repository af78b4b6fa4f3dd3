// runtime/Scan.h — scans: cumulative operations along an axis.
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

} // namespace tsl
