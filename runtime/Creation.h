// runtime/Creation.h — tensors made from nothing: full, arange, linspace, eye.
//
// Float creation defaults to f32 and integer creation to i64 (docs/language.md §3); the
// caller passes the dtype explicitly. Shapes are checked before anything is allocated.
#pragma once

#include "runtime/Tensor.h"

#include <vector>

namespace tsl {

/// A number that remembers whether it was written as an integer (so i64 values above
/// 2^53 survive) — the value of `full`, the bounds of `arange`.
struct Number {
  bool isInt = true;
  int64_t i = 0;
  double f = 0;
  double asDouble() const { return isInt ? static_cast<double>(i) : f; }
  bool operator==(const Number&) const = default;
};

/// A tensor of `shape` with every element `value` converted to `dtype`.
Tensor full(const Shape& shape, Number value, DType dtype);

/// Number of elements arange(start, stop, step) has; a value error for step 0 or too many.
int64_t arangeLength(Number start, Number stop, Number step);
/// start, start + step, ... below stop (above it for a negative step), NumPy's arange.
Tensor arange(Number start, Number stop, Number step, DType dtype);

/// `num` evenly spaced values from start to stop inclusive (computed in f64).
Tensor linspace(double start, double stop, int64_t num, DType dtype);

/// The n×m matrix with ones on the diagonal.
Tensor eye(int64_t n, int64_t m, DType dtype);

} // namespace tsl
