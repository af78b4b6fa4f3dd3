// runtime/RowKernels.h — softmax, log-softmax, logsumexp, layer-norm and cross-entropy
// on one row, over raw pointers.
//
// One definition of each, shared by the eager kernels (runtime/Softmax.cpp,
// runtime/Reduce.cpp) and the :cpu backend's kernel library (compiler/cpu/kernels), which
// is compiled to bitcode and inlined into generated loops — so both compute the same
// bits. No allocation, no exceptions, no dependencies beyond <cmath>. A row has n
// elements at `stride` apart; T is float or double (half types compute in float).
//
// Log-softmax and logsumexp read their row twice: one pass finds the maximum and the sum
// of exponentials together (online: when a block of the row raises the maximum, the sums
// so far are rescaled), the second writes the normalised values. Softmax of a contiguous
// row finds the maximum, then stores and sums exp(x - max), then scales the row in cache:
// one exponential per element instead of two. Every sum is blocked and pairwise
// (runtime/Summation.h: kSumLanes partial sums per block, so the loops vectorise without
// reassociating, and a cascade over blocks, so the error grows with log n, not n).
// A NaN anywhere makes every result NaN; a maximum of ±inf shifts by 0 instead (inf - inf
// would be NaN), as a direct evaluation of the formulas does.
#pragma once

#include "runtime/FastMath.h"
#include "runtime/Summation.h"

#include <cmath>
#include <cstdint>
#include <limits>

/// Marks a loop over rows: compiled by clang (the :cpu kernel library), it stays scalar,
/// so that the vectoriser works along each row instead of gathering across rows.
#if defined(__clang__)
#define TSL_ROW_LOOP _Pragma("clang loop vectorize(disable) interleave(disable)")
#else
#define TSL_ROW_LOOP
#endif

namespace tsl::rows {

constexpr int64_t kLanes = 16;

template <typename T>
inline T expOf(T x) {
  if constexpr (sizeof(T) == 4) return fastmath::fastExp(x);
  else return std::exp(x);
}
template <typename T>
inline T logOf(T x) {
  if constexpr (sizeof(T) == 4) return fastmath::fastLog(x);
  else return std::log(x);
}

/// What the second pass needs: exp(x - shift) / sum is the softmax.
template <typename T>
struct Stats {
  T top;    ///< the maximum
  T shift;  ///< the maximum, or 0 when it is ±inf
  T sum;    ///< Σ exp(x - shift)
  bool nan; ///< the row holds a NaN
};

/// The maximum and the sum of exponentials of a row, in one pass (n ≥ 1). Elements of
/// type S (a half type, say) are read as T. Blocks of sums::kSumBlock: each block's
/// maximum first; when it raises the row's, the block sums so far are rescaled.
template <typename T, typename S = T>
Stats<T> stats(const S* x, int64_t n, int64_t stride) {
  const T inf = std::numeric_limits<T>::infinity();
  sums::Cascade<T> cascade;
  T top = -inf;
  bool nan = false;
  for (int64_t j = 0; j < n; j += sums::kSumBlock) {
    const int64_t m = n - j < sums::kSumBlock ? n - j : sums::kSumBlock;
    const S* block = x + j * stride;
    T blockTop = -inf;
    bool blockNan = false;
    for (int64_t k = 0; k < m; ++k) {
      const T v = static_cast<T>(block[k * stride]);
      blockNan |= v != v;
      blockTop = v > blockTop ? v : blockTop;
    }
    nan |= blockNan;
    if (blockTop > top) {
      cascade.scale(expOf<T>(top - blockTop)); // 0 while top is -inf
      top = blockTop;
    }
    // Nothing but -inf so far: exp(-inf - -inf) would be NaN.
    cascade.push(top == -inf ? T(0) : sums::blockSum<T>(0, m, [&](int64_t k) {
      return expOf<T>(static_cast<T>(block[k * stride]) - top);
    }));
  }
  Stats<T> s{top, top, 0, nan};
  if (top == inf || top == -inf) {
    // Shift by nothing: the sum of plain exponentials (inf, or 0 for a row of -inf).
    s.shift = 0;
    s.sum = sums::sum<T>(n, [&](int64_t i) { return expOf<T>(static_cast<T>(x[i * stride])); });
    return s;
  }
  s.sum = cascade.total();
  return s;
}

template <typename T>
void softmax(const T* x, T* y, int64_t n, int64_t stride) {
  if (n == 0) return;
  if (stride == 1) {
    // A contiguous row: its maximum; then exp(x - max) stored and summed (one exponential
    // per element); then the row, in cache, scaled. An infinite maximum or a NaN takes
    // the general path below, which handles them.
    // Per-lane maxima, and per-lane sums of x - x: 0 while every element is finite, NaN
    // once one is NaN or infinite (those rows take the general path). Both vectorise.
    // (The tails use scalars of their own: indexing the lanes by a variable would keep
    // them in memory and the loops scalar.)
    T tops[kLanes], odd[kLanes] = {};
    for (int64_t k = 0; k < kLanes; ++k) tops[k] = x[0];
    int64_t i = 0;
    for (; i + kLanes <= n; i += kLanes)
      for (int64_t k = 0; k < kLanes; ++k) {
        odd[k] += x[i + k] - x[i + k];
        tops[k] = x[i + k] > tops[k] ? x[i + k] : tops[k];
      }
    T top = x[0], check = 0;
    for (; i < n; ++i) {
      check += x[i] - x[i];
      top = x[i] > top ? x[i] : top;
    }
    for (int64_t k = 0; k < kLanes; ++k) {
      check += odd[k];
      top = tops[k] > top ? tops[k] : top;
    }
    if (check == T(0)) { // every element finite
      const T sum = sums::sum<T>(n, [&](int64_t j) { return y[j] = expOf<T>(x[j] - top); });
      const T scale = T(1) / sum;
      for (int64_t r = 0; r < n; ++r) y[r] *= scale;
      return;
    }
  }
  const Stats<T> s = stats<T>(x, n, stride);
  const T scale = s.nan ? std::numeric_limits<T>::quiet_NaN() : T(1) / s.sum;
  for (int64_t j = 0; j < n; ++j) y[j * stride] = expOf<T>(x[j * stride] - s.shift) * scale;
}

/// (x - shift) - log Σ exp(x - shift): subtracting shift + log-sum in one step would round
/// their sum first and lose the small differences of large logits.
template <typename T>
void logSoftmax(const T* x, T* y, int64_t n, int64_t stride) {
  if (n == 0) return;
  const Stats<T> s = stats<T>(x, n, stride);
  const T logSum = s.nan ? std::numeric_limits<T>::quiet_NaN() : logOf<T>(s.sum);
  for (int64_t j = 0; j < n; ++j) y[j * stride] = (x[j * stride] - s.shift) - logSum;
}

/// log Σ exp(x): -inf for an empty row, NaN if it holds one, ±inf when the maximum is.
template <typename T, typename S = T>
T logSumExp(const S* x, int64_t n, int64_t stride) {
  if (n == 0) return -std::numeric_limits<T>::infinity();
  const Stats<T> s = stats<T>(x, n, stride);
  if (s.nan) return std::numeric_limits<T>::quiet_NaN();
  if (s.top == std::numeric_limits<T>::infinity() || s.top == -std::numeric_limits<T>::infinity()) return s.top;
  return s.shift + logOf<T>(s.sum);
}

/// (x - mean) / sqrt(variance + eps), without affine parameters: two passes, each sum
/// blocked and pairwise.
template <typename T>
void layerNorm(const T* x, T* y, int64_t n, int64_t stride, double eps) {
  if (n == 0) return;
  const T mean = sums::sum<T>(x, n, stride) / static_cast<T>(n);
  const T squares = sums::sum<T>(n, [&](int64_t j) {
    const T d = x[j * stride] - mean;
    return d * d;
  });
  const T scale = T(1) / std::sqrt(squares / static_cast<T>(n) + static_cast<T>(eps));
  for (int64_t j = 0; j < n; ++j) y[j * stride] = (x[j * stride] - mean) * scale;
}

/// The first label outside [0, classes), as its position; -1 if every label is valid.
template <typename L>
int64_t badLabel(const L* labels, int64_t count, int64_t classes) {
  for (int64_t r = 0; r < count; ++r)
    if (static_cast<int64_t>(labels[r]) < 0 || static_cast<int64_t>(labels[r]) >= classes) return r;
  return -1;
}

/// The mean over rows of -log softmax(row)[label], accumulated in double; labels must be
/// valid (badLabel). NaN for no rows.
template <typename T, typename L>
T crossEntropy(const T* logits, const L* labels, int64_t rows, int64_t classes) {
  double total = 0;
  TSL_ROW_LOOP for (int64_t r = 0; r < rows; ++r) {
    const T* row = logits + r * classes;
    const Stats<T> s = stats<T>(row, classes, 1);
    const T logSum = s.nan ? std::numeric_limits<T>::quiet_NaN() : logOf<T>(s.sum);
    total -= static_cast<double>((row[static_cast<int64_t>(labels[r])] - s.shift) - logSum);
  }
  return static_cast<T>(rows == 0 ? std::numeric_limits<double>::quiet_NaN() : total / static_cast<double>(rows));
}

} // namespace tsl::rows
