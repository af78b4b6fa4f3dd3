// runtime/ScanRows.h — a cumulative sum along one row, over raw pointers.
//
// One definition shared by the eager kernel (runtime/Scan.cpp) and the :cpu backend's
// kernel library (compiler/cpu/kernels/Kernels.h), so both compute the same bits. No
// allocation, no exceptions.
//
// A prefix sum is sequential: y_k = x_0 + ... + x_k. Floats accumulate in f64 and each
// prefix is rounded once to the result's dtype, so for f32, f16 and bf16 every y_k is within
// (1 + k·2^-29)·u of the exact prefix (about one ulp for rows up to 2^29 elements); f64
// rows accumulate in f64, with NumPy's bound k·u·Σ|x_i|. Integers and booleans accumulate
// in i64, wrapping as NumPy does.
#pragma once

#include "runtime/Dispatch.h"

#include <cstdint>
#include <type_traits>

namespace tsl::rows {

/// What a cumulative sum of elements S accumulates in.
template <typename S>
using ScanAccumulator = std::conditional_t<std::is_integral_v<S>, int64_t, double>;

/// y[k·stride] = Σ_{i ≤ k} x[i·stride] for k < n.
template <typename S, typename O>
void cumsum(const S* x, O* y, int64_t n, int64_t stride) {
  using Acc = ScanAccumulator<S>;
  Acc acc = 0;
  for (int64_t k = 0; k < n; ++k) {
    if constexpr (std::is_integral_v<Acc>)
      acc = static_cast<Acc>(static_cast<uint64_t>(acc) + static_cast<uint64_t>(static_cast<Acc>(x[k * stride])));
    else
      acc += toDouble(x[k * stride]);
    y[k * stride] = convertElement<O>(acc);
  }
}

} // namespace tsl::rows
