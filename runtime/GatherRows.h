// runtime/GatherRows.h — gather and scatter-add along one axis, over raw pointers.
//
// One definition shared by the eager kernels (runtime/GatherScatter.cpp) and the :cpu
// backend's kernel library (compiler/cpu/kernels/Kernels.h), so both compute the same bits.
// No allocation, no exceptions: indices are checked before these run (badIndex).
//
// The operands are contiguous and seen as [outer, axis, inner]: x (or the result of a
// scatter) has n elements along the axis, the indices (and a gather's result, a scatter's
// source) m. Negative indices count from the end.
//
// scatter-add adds the source elements into each result element in the order of their
// positions (k increasing), each sum computed in f64 and rounded once to the element type
// (a correctly rounded addition for every float type); integers add wrapping in i64.
#pragma once

#include "runtime/Dispatch.h"

#include <cstdint>
#include <type_traits>

namespace tsl::rows {

/// The first index outside [-size, size), as its position; -1 if all are valid.
template <typename I>
int64_t badIndex(const I* idx, int64_t count, int64_t size) {
  for (int64_t k = 0; k < count; ++k)
    if (idx[k] < -size || idx[k] >= size) return k;
  return -1;
}

/// out[o, k, i] = x[o, idx[o, k, i], i] for the slices o in [begin, end).
template <typename E, typename I>
void gather(const E* x, const I* idx, E* out, int64_t n, int64_t m, int64_t inner, int64_t begin, int64_t end) {
  for (int64_t o = begin; o < end; ++o)
    for (int64_t k = 0; k < m; ++k) {
      const I* ik = idx + (o * m + k) * inner;
      E* dst = out + (o * m + k) * inner;
      const E* src = x + o * n * inner;
      for (int64_t i = 0; i < inner; ++i) {
        const int64_t at = ik[i] < 0 ? ik[i] + n : ik[i];
        dst[i] = src[at * inner + i];
      }
    }
}

/// a + b, rounded once to T (wrapping for integers; no bool: a scatter-add of bools gives i64).
template <typename T>
T addElement(T a, T b) {
  if constexpr (std::is_integral_v<T>)
    return static_cast<T>(static_cast<uint64_t>(static_cast<int64_t>(a)) + static_cast<uint64_t>(static_cast<int64_t>(b)));
  else
    return convertElement<T>(toDouble(a) + toDouble(b));
}

/// out[o, idx[o, k, i], i] += src[o, k, i] for the slices o in [begin, end), k increasing.
template <typename T, typename I>
void scatterAdd(const I* idx, const T* src, T* out, int64_t n, int64_t m, int64_t inner, int64_t begin, int64_t end) {
  for (int64_t o = begin; o < end; ++o)
    for (int64_t k = 0; k < m; ++k) {
      const I* ik = idx + (o * m + k) * inner;
      const T* sk = src + (o * m + k) * inner;
      T* dst = out + o * n * inner;
      for (int64_t i = 0; i < inner; ++i) {
        const int64_t at = ik[i] < 0 ? ik[i] + n : ik[i];
        dst[at * inner + i] = addElement(dst[at * inner + i], sk[i]);
      }
    }
}

} // namespace tsl::rows
