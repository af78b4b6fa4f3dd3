// runtime/ScanRows.h — cumulative sums and products, and linear recurrences, along one row,
// over raw pointers.
//
// One definition shared by the eager kernel (runtime/Scan.cpp) and the :cpu backend's
// kernel library (compiler/cpu/kernels/Kernels.h), so both compute the same bits. No
// allocation, no exceptions.
//
// A prefix sum is sequential: y_k = x_0 + ... + x_k. Floats accumulate in f64 and each
// prefix is rounded once to the result's dtype, so for f32, f16 and bf16 every y_k is within
// (1 + k·2^-29)·u of the exact prefix (about one ulp for rows up to 2^29 elements); f64
// rows accumulate in f64, with NumPy's bound k·u·Σ|x_i|. Integers and booleans accumulate
// in i64, wrapping as NumPy does. Prefix products are the same with products: each y_k is
// the f64 product of the first k + 1 elements (k + 1 roundings of f64) rounded once.
//
// A linear recurrence h_k = a_k·h_(k-1) + b_k (h_(-1) = 0), or from the end
// h_k = a_(k+1)·h_(k+1) + b_k (h_n = 0), is what the derivatives of cumprod are made of
// (autodiff/RulesStructure.cpp); it also runs in f64, each h_k rounded once to the result.
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

/// y[k·stride] = Π_{i ≤ k} x[i·stride] for k < n.
template <typename S, typename O>
void cumprod(const S* x, O* y, int64_t n, int64_t stride) {
  using Acc = ScanAccumulator<S>;
  Acc acc = 1;
  for (int64_t k = 0; k < n; ++k) {
    if constexpr (std::is_integral_v<Acc>)
      acc = static_cast<Acc>(static_cast<uint64_t>(acc) * static_cast<uint64_t>(static_cast<Acc>(x[k * stride])));
    else
      acc *= toDouble(x[k * stride]);
    y[k * stride] = convertElement<O>(acc);
  }
}

/// h[k·stride] = a_k·h_(k-1) + b_k for k < n (forward), or a_(k+1)·h_(k+1) + b_k from the
/// end (reverse), in f64: a and b of element type T, h of O.
template <typename T, typename O>
void linearScan(const T* a, const T* b, O* h, int64_t n, int64_t stride, bool reverse) {
  double acc = 0;
  if (!reverse) {
    for (int64_t k = 0; k < n; ++k) {
      const double scaled = k > 0 ? toDouble(a[k * stride]) * acc : 0.0; // h_(-1) is 0, even for a_0 = inf
      acc = scaled + toDouble(b[k * stride]);
      h[k * stride] = convertElement<O>(acc);
    }
    return;
  }
  for (int64_t k = n - 1; k >= 0; --k) {
    const double scaled = k + 1 < n ? toDouble(a[(k + 1) * stride]) * acc : 0.0;
    acc = scaled + toDouble(b[k * stride]);
    h[k * stride] = convertElement<O>(acc);
  }
}

} // namespace tsl::rows
