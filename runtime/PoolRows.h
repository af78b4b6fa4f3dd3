// runtime/PoolRows.h — max and average pooling of one H×W plane, over raw pointers.
//
// One definition, shared by the eager kernels (runtime/NeuralNet.cpp) and the :cpu
// backend's kernel library (compiler/cpu/kernels), so that both compute the same bits.
// An output row accumulates one window row at a time: for each window row inside the
// image and each kernel column, the input row segment those outputs read is combined
// into the accumulators — stride 1 is a contiguous loop the compiler vectorises, and
// padding, skipped, is -inf for max and 0 for the average, as if read. No allocation and
// no dependencies beyond <cmath>: the caller gives the accumulators (a row of Wo), and
// `load`/`store` convert between the stored type T and the compute type C (halves
// compute in float).
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <type_traits>

namespace tsl::pool {

enum class Kind { Max, Average };

/// The sizes of one pooling (or convolution) plane: input h×w, window kh×kw, strides,
/// padding, output ho×wo.
struct Plane {
  int64_t h, w, kh, kw, sh, sw, ph, pw, ho, wo;
};

/// Ceiling of a / b for b > 0 and any sign of a.
inline int64_t ceilDiv(int64_t a, int64_t b) { return a >= 0 ? (a + b - 1) / b : -((-a) / b); }

/// The output columns [begin, end) whose input column j * sw - pw + kj lies inside
/// [0, w): outside them the window reads padding.
inline std::pair<int64_t, int64_t> validColumns(const Plane& g, int64_t kj) {
  const int64_t begin = std::clamp<int64_t>(ceilDiv(g.pw - kj, g.sw), 0, g.wo);
  const int64_t end = std::clamp<int64_t>(ceilDiv(g.w + g.pw - kj, g.sw), begin, g.wo);
  return {begin, end};
}

/// Adds one window row to the accumulators of an output row: acc[j] combines with
/// src[(j - begin) * stride] for j in [begin, end).
template <Kind kind, typename C, typename T, typename Load>
void accumulateRow(C* acc, const T* src, int64_t begin, int64_t end, int64_t stride, Load load) {
  const auto combine = [](C& a, C v) {
    if constexpr (kind == Kind::Max)
      // NaN wins and stays (as in PyTorch): once a is NaN, v > a is false. A select, not
      // a branch, so the loop vectorises and random data costs no mispredictions.
      a = ((v > a) | (v != v)) ? v : a;
    else
      a += v;
  };
  // Stride 1, the common case, gets a loop over contiguous input of its own.
  if (stride == 1)
    for (int64_t j = begin; j < end; ++j) combine(acc[j], load(src[j - begin]));
  else
    for (int64_t j = begin; j < end; ++j) combine(acc[j], load(src[(j - begin) * stride]));
}

/// Pools one plane `in` into `out` (ho×wo), an output row at a time through `rowAcc` (wo
/// accumulators), or, when it is null (T is C), in the output row itself.
template <Kind kind, typename C, typename T, typename Load, typename Store>
void poolPlane(const T* in, T* out, const Plane& g, C* rowAcc, Load load, Store store) {
  const C start = kind == Kind::Max ? -std::numeric_limits<C>::infinity() : C(0);
  const C area = static_cast<C>(g.kh * g.kw); // count_include_pad: always the full window
  for (int64_t i = 0; i < g.ho; ++i, out += g.wo) {
    C* acc = rowAcc;
    if constexpr (std::is_same_v<C, T>)
      if (!acc) acc = out;
    for (int64_t j = 0; j < g.wo; ++j) acc[j] = start;
    for (int64_t ki = 0; ki < g.kh; ++ki) {
      const int64_t ih = i * g.sh - g.ph + ki;
      if (ih < 0 || ih >= g.h) continue;
      for (int64_t kj = 0; kj < g.kw; ++kj) {
        const auto [jBegin, jEnd] = validColumns(g, kj);
        if (jBegin == jEnd) continue;
        const T* src = in + ih * g.w + (jBegin * g.sw - g.pw + kj);
        accumulateRow<kind>(acc, src, jBegin, jEnd, g.sw, load);
      }
    }
    for (int64_t j = 0; j < g.wo; ++j) out[j] = store(kind == Kind::Max ? acc[j] : acc[j] / area);
  }
}

} // namespace tsl::pool
