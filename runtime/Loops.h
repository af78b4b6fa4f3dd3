// runtime/Loops.h — the strided loops every elementwise kernel runs through.
//
// Outputs are fresh contiguous tensors; inputs may be any view (broadcast axes have stride
// 0, rank-0 tensors point at their inline value). Contiguous operands of the output's
// shape take a flat loop the compiler vectorises — or, for functors that offer one, an
// Eigen array expression (vectorised exp, tanh, ...); everything else walks the index
// space row by row. Large loops are split across the thread pool. Internal to runtime/.
#pragma once

#include "runtime/Tensor.h"
#include "runtime/ThreadPool.h"

#include <Eigen/Core>
#include <array>
#include <type_traits>

namespace tsl::detail {

/// Elements below which a loop is not worth splitting across threads.
constexpr int64_t kParallelGrain = int64_t(1) << 15;

using Strides = std::array<int64_t, Shape::kMaxRank>;

/// Strides of `t` seen through a broadcast to `shape` (0 on broadcast or missing axes).
inline Strides broadcastStrides(const Tensor& t, const Shape& shape) {
  Strides strides{};
  const int offset = shape.rank() - t.rank();
  for (int i = 0; i < t.rank(); ++i)
    strides[offset + i] = t.shape()[i] == 1 && shape[offset + i] != 1 ? 0 : t.strides()[i];
  return strides;
}

/// Whether `t` can be read as a flat array of `shape`'s elements.
inline bool isFlat(const Tensor& t, const Shape& shape) { return t.isContiguous() && t.shape() == shape; }

/// Calls body(outIndex, offsets) for rows [rowBegin, rowEnd) of `shape` (a row runs along
/// the last axis); offsets are the element offsets of the row's start in each input.
template <size_t N, typename Body>
void forEachRow(const Shape& shape, const std::array<Strides, N>& strides, int64_t rowBegin, int64_t rowEnd,
                Body&& body) {
  const int rank = shape.rank();
  const int64_t inner = rank == 0 ? 1 : shape[rank - 1];
  // Decompose rowBegin into a multi-index over the outer axes.
  std::array<int64_t, Shape::kMaxRank> index{};
  std::array<int64_t, N> offsets{};
  int64_t rest = rowBegin;
  for (int axis = rank - 2; axis >= 0; --axis) {
    index[axis] = rest % shape[axis];
    rest /= shape[axis];
    for (size_t k = 0; k < N; ++k) offsets[k] += index[axis] * strides[k][axis];
  }
  for (int64_t row = rowBegin; row < rowEnd; ++row) {
    body(row * inner, offsets);
    for (int axis = rank - 2; axis >= 0; --axis) {
      ++index[axis];
      for (size_t k = 0; k < N; ++k) offsets[k] += strides[k][axis];
      if (index[axis] < shape[axis]) break;
      for (size_t k = 0; k < N; ++k) offsets[k] -= strides[k][axis] * shape[axis];
      index[axis] = 0;
    }
  }
}

/// Number of rows (products of all axes but the last) of a shape.
inline int64_t rowCount(const Shape& shape) {
  int64_t rows = 1;
  for (int i = 0; i + 1 < shape.rank(); ++i) rows *= shape[i];
  return rows;
}

/// Runs body over rows, in parallel when the whole is large.
template <size_t N, typename Body>
void parallelRows(const Shape& shape, const std::array<Strides, N>& strides, Body body) {
  const int64_t rows = rowCount(shape);
  const int64_t inner = shape.rank() == 0 ? 1 : std::max<int64_t>(shape[shape.rank() - 1], 1);
  parallelFor(rows, std::max<int64_t>(1, kParallelGrain / inner), [&](int64_t begin, int64_t end) {
    forEachRow<N>(shape, strides, begin, end, body);
  });
}

template <typename F, typename S>
concept HasVectorForm = requires(const Eigen::Map<const Eigen::Array<S, Eigen::Dynamic, 1>>& x) { F::vec(x); };

/// out = fn(x) elementwise. `Fn` is the raw functor (for its vectorised form); `f` the
/// element function including conversions.
template <typename S, typename R, typename Fn, typename F>
void unaryLoop(const Tensor& x, Tensor& out, F f) {
  const Shape& shape = out.shape();
  const S* in = reinterpret_cast<const S*>(x.data());
  R* o = reinterpret_cast<R*>(out.mutableData());
  if (isFlat(x, shape)) {
    parallelFor(out.numel(), kParallelGrain, [&](int64_t begin, int64_t end) {
      if constexpr (std::is_same_v<S, R> && std::is_floating_point_v<S> && HasVectorForm<Fn, S>) {
        using Array = Eigen::Array<S, Eigen::Dynamic, 1>;
        Eigen::Map<Array>(o + begin, end - begin) = Fn::vec(Eigen::Map<const Array>(in + begin, end - begin));
      } else {
        for (int64_t i = begin; i < end; ++i) o[i] = f(in[i]);
      }
    });
    return;
  }
  const int rank = shape.rank();
  const std::array<Strides, 1> strides{broadcastStrides(x, shape)};
  const int64_t inner = shape[rank - 1], step = strides[0][rank - 1];
  parallelRows<1>(shape, strides, [&](int64_t start, const std::array<int64_t, 1>& offsets) {
    const S* row = in + offsets[0];
    for (int64_t j = 0; j < inner; ++j) o[start + j] = f(row[j * step]);
  });
}

/// out = f(a, b) elementwise with broadcasting.
template <typename S, typename R, typename F>
void binaryLoop(const Tensor& a, const Tensor& b, Tensor& out, F f) {
  const Shape& shape = out.shape();
  const S* pa = reinterpret_cast<const S*>(a.data());
  const S* pb = reinterpret_cast<const S*>(b.data());
  R* o = reinterpret_cast<R*>(out.mutableData());
  const int64_t n = out.numel();
  const bool flatA = isFlat(a, shape), flatB = isFlat(b, shape);
  if (flatA && flatB) {
    parallelFor(n, kParallelGrain, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) o[i] = f(pa[i], pb[i]);
    });
    return;
  }
  if (flatA && b.numel() == 1) {
    const S vb = pb[0];
    parallelFor(n, kParallelGrain, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) o[i] = f(pa[i], vb);
    });
    return;
  }
  if (flatB && a.numel() == 1) {
    const S va = pa[0];
    parallelFor(n, kParallelGrain, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) o[i] = f(va, pb[i]);
    });
    return;
  }
  const int rank = shape.rank();
  const std::array<Strides, 2> strides{broadcastStrides(a, shape), broadcastStrides(b, shape)};
  const int64_t inner = shape[rank - 1];
  const int64_t stepA = strides[0][rank - 1], stepB = strides[1][rank - 1];
  parallelRows<2>(shape, strides, [&](int64_t start, const std::array<int64_t, 2>& offsets) {
    const S* rowA = pa + offsets[0];
    const S* rowB = pb + offsets[1];
    if (stepA == 1 && stepB == 1) {
      for (int64_t j = 0; j < inner; ++j) o[start + j] = f(rowA[j], rowB[j]);
    } else if (stepA == 1 && stepB == 0) {
      const S vb = rowB[0];
      for (int64_t j = 0; j < inner; ++j) o[start + j] = f(rowA[j], vb);
    } else if (stepA == 0 && stepB == 1) {
      const S va = rowA[0];
      for (int64_t j = 0; j < inner; ++j) o[start + j] = f(va, rowB[j]);
    } else {
      for (int64_t j = 0; j < inner; ++j) o[start + j] = f(rowA[j * stepA], rowB[j * stepB]);
    }
  });
}

/// out = f(a, b, c) elementwise with broadcasting (where, clip).
template <typename A, typename B, typename C, typename R, typename F>
void ternaryLoop(const Tensor& a, const Tensor& b, const Tensor& c, Tensor& out, F f) {
  const Shape& shape = out.shape();
  const A* pa = reinterpret_cast<const A*>(a.data());
  const B* pb = reinterpret_cast<const B*>(b.data());
  const C* pc = reinterpret_cast<const C*>(c.data());
  R* o = reinterpret_cast<R*>(out.mutableData());
  const int rank = shape.rank();
  if (rank == 0) {
    o[0] = f(pa[0], pb[0], pc[0]);
    return;
  }
  const std::array<Strides, 3> strides{broadcastStrides(a, shape), broadcastStrides(b, shape),
                                       broadcastStrides(c, shape)};
  const int64_t inner = shape[rank - 1];
  const int64_t sa = strides[0][rank - 1], sb = strides[1][rank - 1], sc = strides[2][rank - 1];
  parallelRows<3>(shape, strides, [&](int64_t start, const std::array<int64_t, 3>& offsets) {
    for (int64_t j = 0; j < inner; ++j)
      o[start + j] = f(pa[offsets[0] + j * sa], pb[offsets[1] + j * sb], pc[offsets[2] + j * sc]);
  });
}

/// Copies any view of `src` into the contiguous `dst` of the same shape (by element
/// size, so one instantiation serves every dtype of that size).
inline void copyElements(const Tensor& src, Tensor& dst) {
  auto copy = [&](auto tag) {
    using Bits = decltype(tag);
    unaryLoop<Bits, Bits, void>(src, dst, [](Bits v) { return v; });
  };
  switch (src.elementSize()) {
  case 1: copy(uint8_t{}); break;
  case 2: copy(uint16_t{}); break;
  case 4: copy(uint32_t{}); break;
  default: copy(uint64_t{}); break;
  }
}

/// Copies src into dst of the same shape where dst is any view (not only contiguous),
/// by element size.
inline void copyStrided(const Tensor& src, Tensor& dst) {
  const Shape& shape = dst.shape();
  if (shape.rank() == 0 || dst.numel() == 0) {
    if (dst.numel() == 1) std::memcpy(dst.mutableData(), src.data(), src.elementSize());
    return;
  }
  auto copy = [&](auto tag) {
    using Bits = decltype(tag);
    const Bits* in = reinterpret_cast<const Bits*>(src.data());
    Bits* out = reinterpret_cast<Bits*>(dst.mutableData());
    Strides dstStrides{};
    for (int i = 0; i < shape.rank(); ++i) dstStrides[i] = dst.strides()[i];
    const std::array<Strides, 2> strides{broadcastStrides(src, shape), dstStrides};
    const int64_t inner = shape[shape.rank() - 1];
    const int64_t si = strides[0][shape.rank() - 1], so = strides[1][shape.rank() - 1];
    parallelRows<2>(shape, strides, [&](int64_t, const std::array<int64_t, 2>& offsets) {
      for (int64_t j = 0; j < inner; ++j) out[offsets[1] + j * so] = in[offsets[0] + j * si];
    });
  };
  switch (src.elementSize()) {
  case 1: copy(uint8_t{}); break;
  case 2: copy(uint16_t{}); break;
  case 4: copy(uint32_t{}); break;
  default: copy(uint64_t{}); break;
  }
}

} // namespace tsl::detail
