// runtime/Summation.h — blocked pairwise summation, the one way TSL adds many numbers.
//
// A sum of n floats added one after another has an error bound that grows with n (the
// sum of 10^8 copies of 0.1 in f32 comes out 3 % low; 27 million ones stop at 2^24).
// Every sum over a reduced axis here — sum, mean, logsumexp, softmax's normaliser,
// layer-norm's moments — is computed instead as NumPy computes its sums: blocks of
// kSumBlock elements, each added in kSumLanes independent partial sums (which also lets the
// loop vectorise without reassociating), then the block sums combined as a balanced binary
// tree (a Cascade). With u the unit roundoff of the accumulator (2^-24 for f32, 2^-53 for
// f64) the computed ŝ of s = Σ x_i satisfies, to first order in u,
//
//     |ŝ − s| ≤ (kSumBlock / kSumLanes + log2 kSumLanes + ⌈log2 ⌈n / kSumBlock⌉⌉) · u · Σ |x_i|
//
// — 39 u for 10^8 elements (16 + 4 + 19), against n·u for the running sum. The :cpu
// backend's generated reductions use the same blocks and the same cascade (its blocks are
// summed in the vectoriser's lanes; docs/numerics.md states the bound for every engine).
//
// Header-only, no allocation, no exceptions, <cmath> only: the eager kernels
// (runtime/Reduce.cpp, RowKernels.h) and the :cpu kernel library share it.
#pragma once

#include <cstdint>

namespace tsl::sums {

/// Elements per block, and independent partial sums within a block.
constexpr int64_t kSumBlock = 256;
constexpr int64_t kSumLanes = 16;

/// Pairwise combination of block sums, as a binary counter: after 2^k pushes the partial
/// at level k is the balanced-tree sum of those 2^k blocks. The total is the same tree for
/// any n (levels folded lowest first), so it depends only on the data, never on threads.
template <typename T>
struct Cascade {
  T level[64];
  uint64_t count = 0;

  void push(T v) {
    uint64_t c = count++;
    int k = 0;
    for (; c & 1; c >>= 1, ++k) v = level[k] + v;
    level[k] = v;
  }
  /// Multiplies every partial by `factor` (softmax's rescaling when its maximum rises).
  void scale(T factor) {
    for (int k = 0; k < 64; ++k)
      if ((count >> k) & 1) level[k] *= factor;
  }
  /// The sum of everything pushed (0 for nothing).
  T total() const {
    T t = 0;
    bool first = true;
    for (int k = 0; k < 64; ++k)
      if ((count >> k) & 1) {
        t = first ? level[k] : level[k] + t;
        first = false;
      }
    return t;
  }
};

/// `width` cascades that push together: the columns of a reduction that keeps its last
/// axis, whose block sums arrive a row of partial sums at a time. Level k of column j is
/// levels[k·width + j] (levels must hold ⌊log2 blocks⌋ + 1 rows of `width`); `count` is
/// the shared number of pushes. Each column gets exactly the tree a Cascade would give.
template <typename T>
void pushColumns(T* levels, int64_t width, uint64_t& count, T* v) {
  uint64_t c = count++;
  int64_t k = 0;
  for (; c & 1; c >>= 1, ++k)
    for (int64_t j = 0; j < width; ++j) v[j] = levels[k * width + j] + v[j];
  for (int64_t j = 0; j < width; ++j) levels[k * width + j] = v[j];
}

/// The totals of pushColumns' cascades (0 for nothing pushed), folded as Cascade::total.
template <typename T>
void totalColumns(const T* levels, int64_t width, uint64_t count, T* out) {
  bool first = true;
  for (int64_t k = 0; k < 64; ++k) {
    if (!((count >> k) & 1)) continue;
    for (int64_t j = 0; j < width; ++j) out[j] = first ? levels[k * width + j] : levels[k * width + j] + out[j];
    first = false;
  }
  if (first)
    for (int64_t j = 0; j < width; ++j) out[j] = 0;
}

/// The rows of levels pushColumns needs for `blocks` pushes.
constexpr int64_t cascadeLevels(int64_t blocks) {
  int64_t levels = 1;
  while ((int64_t(1) << levels) <= blocks) ++levels;
  return levels;
}

/// Σ term(i) for i in [begin, begin + n), n ≤ kSumBlock, in kSumLanes partial sums
/// combined pairwise.
template <typename T, typename F>
T blockSum(int64_t begin, int64_t n, F term) {
  T part[kSumLanes] = {};
  int64_t j = 0;
  for (; j + kSumLanes <= n; j += kSumLanes)
    for (int64_t k = 0; k < kSumLanes; ++k) part[k] += term(begin + j + k);
  for (int64_t k = 0; j + k < n; ++k) part[k] += term(begin + j + k);
  for (int64_t width = kSumLanes / 2; width > 0; width /= 2)
    for (int64_t k = 0; k < width; ++k) part[k] += part[k + width];
  return part[0];
}

/// Σ term(i) for i < n, blocked and pairwise (the bound above), in T.
template <typename T, typename F>
T sum(int64_t n, F term) {
  if (n <= kSumBlock) return blockSum<T>(0, n, term);
  Cascade<T> cascade;
  for (int64_t j = 0; j < n; j += kSumBlock) cascade.push(blockSum<T>(j, n - j < kSumBlock ? n - j : kSumBlock, term));
  return cascade.total();
}

/// Σ x[i·stride] for i < n, in T.
template <typename T, typename S>
T sum(const S* x, int64_t n, int64_t stride) {
  return sum<T>(n, [x, stride](int64_t i) { return static_cast<T>(x[i * stride]); });
}

} // namespace tsl::sums
