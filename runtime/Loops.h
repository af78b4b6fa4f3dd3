// runtime/Loops.h — the strided loops every elementwise kernel runs through.
//
// Outputs are fresh contiguous tensors; inputs may be any view (broadcast axes have stride
// 0, rank-0 tensors point at their inline value). Contiguous operands of the output's
// shape take a flat loop the compiler vectorises; everything else walks the index space
// row by row. Internal to runtime/.
#pragma once

#include "runtime/Tensor.h"

#include <array>

namespace tsl::detail {

/// Strides of `t` seen through a broadcast to `shape` (0 on broadcast or missing axes).
inline std::array<int64_t, Shape::kMaxRank> broadcastStrides(const Tensor& t, const Shape& shape) {
  std::array<int64_t, Shape::kMaxRank> strides{};
  const int offset = shape.rank() - t.rank();
  for (int i = 0; i < t.rank(); ++i)
    strides[offset + i] = t.shape()[i] == 1 && shape[offset + i] != 1 ? 0 : t.strides()[i];
  return strides;
}

/// Whether `t` can be read as a flat array of `shape`'s elements.
inline bool isFlat(const Tensor& t, const Shape& shape) {
  return t.isContiguous() && t.shape() == shape;
}

/// Calls body(outIndex, offsets...) for every row of `shape` (all axes but the last);
/// each offset is the element offset of that row's start in one input.
template <size_t N, typename Body>
void forEachRow(const Shape& shape, const std::array<std::array<int64_t, Shape::kMaxRank>, N>& strides,
                Body&& body) {
  const int rank = shape.rank();
  const int64_t inner = rank == 0 ? 1 : shape[rank - 1];
  int64_t rows = 1;
  for (int i = 0; i + 1 < rank; ++i) rows *= shape[i];
  std::array<int64_t, Shape::kMaxRank> index{};
  std::array<int64_t, N> offsets{};
  for (int64_t row = 0; row < rows; ++row) {
    body(row * inner, offsets);
    // Advance the multi-index over the outer axes, updating offsets incrementally.
    for (int axis = rank - 2; axis >= 0; --axis) {
      ++index[axis];
      for (size_t k = 0; k < N; ++k) offsets[k] += strides[k][axis];
      if (index[axis] < shape[axis]) break;
      for (size_t k = 0; k < N; ++k) offsets[k] -= strides[k][axis] * shape[axis];
      index[axis] = 0;
    }
  }
}

template <typename S, typename R, typename F>
void unaryLoop(const Tensor& x, Tensor& out, F f) {
  const Shape& shape = out.shape();
  const S* in = reinterpret_cast<const S*>(x.data());
  R* o = reinterpret_cast<R*>(out.mutableData());
  const int64_t n = out.numel();
  if (isFlat(x, shape)) {
    for (int64_t i = 0; i < n; ++i) o[i] = f(in[i]);
    return;
  }
  const int rank = shape.rank();
  const std::array<std::array<int64_t, Shape::kMaxRank>, 1> strides{broadcastStrides(x, shape)};
  const int64_t inner = shape[rank - 1], step = strides[0][rank - 1];
  forEachRow<1>(shape, strides, [&](int64_t start, const std::array<int64_t, 1>& offsets) {
    const S* row = in + offsets[0];
    for (int64_t j = 0; j < inner; ++j) o[start + j] = f(row[j * step]);
  });
}

template <typename S, typename R, typename F>
void binaryLoop(const Tensor& a, const Tensor& b, Tensor& out, F f) {
  const Shape& shape = out.shape();
  const S* pa = reinterpret_cast<const S*>(a.data());
  const S* pb = reinterpret_cast<const S*>(b.data());
  R* o = reinterpret_cast<R*>(out.mutableData());
  const int64_t n = out.numel();
  const bool flatA = isFlat(a, shape), flatB = isFlat(b, shape);
  if (flatA && flatB) {
    for (int64_t i = 0; i < n; ++i) o[i] = f(pa[i], pb[i]);
    return;
  }
  if (flatA && b.numel() == 1) {
    const S vb = pb[0];
    for (int64_t i = 0; i < n; ++i) o[i] = f(pa[i], vb);
    return;
  }
  if (flatB && a.numel() == 1) {
    const S va = pa[0];
    for (int64_t i = 0; i < n; ++i) o[i] = f(va, pb[i]);
    return;
  }
  const int rank = shape.rank();
  const std::array<std::array<int64_t, Shape::kMaxRank>, 2> strides{broadcastStrides(a, shape),
                                                                     broadcastStrides(b, shape)};
  const int64_t inner = shape[rank - 1];
  const int64_t stepA = strides[0][rank - 1], stepB = strides[1][rank - 1];
  forEachRow<2>(shape, strides, [&](int64_t start, const std::array<int64_t, 2>& offsets) {
    const S* rowA = pa + offsets[0];
    const S* rowB = pb + offsets[1];
    for (int64_t j = 0; j < inner; ++j) o[start + j] = f(rowA[j * stepA], rowB[j * stepB]);
  });
}

} // namespace tsl::detail
