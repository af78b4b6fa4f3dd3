// runtime/Order.cpp — sort, argsort and top-k.
//
// The axis is moved last and made contiguous, so each row is n adjacent elements, and the
// rows run in parallel. sort sorts each row's values stably; argsort and top-k sort its
// positions by (value, position) — a total order, so an unstable sort gives the stable
// result — top-k only the k first of them (a partial sort).
#include "runtime/Order.h"

#include "runtime/Dispatch.h"
#include "runtime/ThreadPool.h"
#include "runtime/Views.h"

#include <algorithm>
#include <numeric>
#include <vector>

namespace tsl {

namespace {

/// a before b in ascending order, NaN after every number: a strict weak order.
template <typename T>
bool ascending(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    return a < b || (a == a && b != b);
  } else if constexpr (kIsFloatElement<T>) {
    return ascending(static_cast<float>(a), static_cast<float>(b));
  } else {
    return a < b;
  }
}

/// x with `axis` last, contiguous: `count` rows of n elements; `back` undoes the move.
struct LastAxis {
  Tensor rows;
  std::vector<int64_t> back;
  int64_t count = 0, n = 0;
  LastAxis(const Tensor& x, int64_t axis) {
    const int rank = x.rank(), a = normalizeAxis(axis, rank);
    std::vector<int64_t> perm;
    for (int d = 0; d < rank; ++d)
      if (d != a) perm.push_back(d);
    perm.push_back(a);
    back.resize(perm.size());
    for (size_t i = 0; i < perm.size(); ++i) back[static_cast<size_t>(perm[i])] = static_cast<int64_t>(i);
    rows = contiguous(transpose(x, perm));
    n = x.shape()[a];
    count = n == 0 ? 0 : rows.numel() / n;
  }
  /// A result computed in the moved layout, its axes put back.
  Tensor restore(const Tensor& moved) const { return contiguous(transpose(moved, back)); }
};

/// The first `keep` positions of each row's order under `before` (ties by position), row
/// after row: keep per row.
template <typename T, typename Before>
std::vector<int64_t> orders(const T* data, int64_t count, int64_t n, int64_t keep, Before before) {
  std::vector<int64_t> out(static_cast<size_t>(count * keep));
  parallelFor(count, std::max<int64_t>(1, 16384 / std::max<int64_t>(n, 1)), [&](int64_t begin, int64_t end) {
    std::vector<int64_t> order(static_cast<size_t>(n));
    for (int64_t r = begin; r < end; ++r) {
      const T* row = data + r * n;
      std::iota(order.begin(), order.end(), int64_t(0));
      const auto less = [&](int64_t i, int64_t j) {
        if (before(row[i], row[j])) return true;
        if (before(row[j], row[i])) return false;
        return i < j;
      };
      if (keep < n) std::partial_sort(order.begin(), order.begin() + keep, order.end(), less);
      else std::sort(order.begin(), order.end(), less);
      std::copy(order.begin(), order.begin() + keep, out.begin() + r * keep);
    }
  });
  return out;
}

/// The rows' values at `order` (keep per row of n) as a tensor of `shape`.
template <typename T>
Tensor pick(const T* data, const std::vector<int64_t>& order, int64_t n, int64_t keep, const Shape& shape) {
  Tensor out = Tensor::empty(dtypeOf<T>(), shape);
  T* o = reinterpret_cast<T*>(out.mutableData());
  for (size_t i = 0; i < order.size(); ++i) o[i] = data[(static_cast<int64_t>(i) / keep) * n + order[i]];
  return out;
}

Tensor indicesTensor(const std::vector<int64_t>& order, const Shape& shape) {
  Tensor out = Tensor::empty(DType::I64, shape);
  std::copy(order.begin(), order.end(), reinterpret_cast<int64_t*>(out.mutableData()));
  return out;
}

/// Each row sorted in place, stably (equal elements, -0.0 and 0.0, keep their order).
template <typename T>
void sortRows(T* data, int64_t count, int64_t n) {
  parallelFor(count, std::max<int64_t>(1, 16384 / std::max<int64_t>(n, 1)), [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) std::stable_sort(data + r * n, data + (r + 1) * n, ascending<T>);
  });
}

template <bool values>
Tensor sorted(const Tensor& x, int64_t axis) {
  const LastAxis last(x, axis);
  const Shape& shape = last.rows.shape();
  return dispatchDType(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* data = reinterpret_cast<const T*>(last.rows.data());
    if constexpr (values) {
      Tensor out = Tensor::empty(x.dtype(), shape);
      T* o = reinterpret_cast<T*>(out.mutableData());
      std::copy(data, data + last.count * last.n, o);
      sortRows(o, last.count, last.n);
      return last.restore(out);
    } else {
      return last.restore(indicesTensor(orders(data, last.count, last.n, last.n, ascending<T>), shape));
    }
  });
}

void checkTopK(const Shape& x, int64_t k, int64_t part) {
  if (x.rank() == 0) fail(ErrorKind::Shape, "top-k: x must have at least one axis, got a scalar");
  if (part != 0 && part != 1) fail(ErrorKind::Value, "top-k: part ", part, " is not 0 (values) or 1 (indices)");
  const int64_t n = x[x.rank() - 1];
  if (k < 0) fail(ErrorKind::Value, "top-k: k must not be negative, got ", k);
  if (k > n) fail(ErrorKind::Value, "top-k: k ", k, " exceeds the size ", n, " of the last axis");
}

Shape topKShape(Shape x, int64_t k) {
  x[x.rank() - 1] = k;
  return x;
}

DType movedDType(const TensorType& t) { return t.weak ? concreteDType({t.dtype, true}) : t.dtype; }

} // namespace

Tensor sort(const Tensor& x, int64_t axis) {
  if (x.isScalar()) return x;
  return sorted<true>(x, axis);
}

Tensor argsort(const Tensor& x, int64_t axis) {
  if (x.isScalar()) return Tensor::ofInt(0);
  return sorted<false>(x, axis);
}

Tensor topK(const Tensor& x, int64_t k, int64_t part) {
  checkTopK(x.shape(), k, part);
  const LastAxis last(x, -1);
  const Shape shape = topKShape(x.shape(), k);
  return dispatchDType(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* data = reinterpret_cast<const T*>(last.rows.data());
    const std::vector<int64_t> order =
        orders(data, last.count, last.n, k, [](T a, T b) { return ascending<T>(b, a); });
    return part == 0 ? pick(data, order, last.n, k, shape) : indicesTensor(order, shape);
  });
}

// ---- The rows' type rules and kernel adapters ----

TensorType sortType(const OpAttrs& a, std::span<const TensorType> in) {
  if (in[0].shape.rank() == 0) return in[0];
  (void)normalizeAxis(std::get<AxisAttrs>(a).axis, in[0].shape.rank());
  return {movedDType(in[0]), false, in[0].shape};
}
Tensor sortKernel(const OpAttrs& a, std::span<const Tensor> in) { return sort(in[0], std::get<AxisAttrs>(a).axis); }

TensorType argsortType(const OpAttrs& a, std::span<const TensorType> in) {
  if (in[0].shape.rank() > 0) (void)normalizeAxis(std::get<AxisAttrs>(a).axis, in[0].shape.rank());
  return {DType::I64, false, in[0].shape};
}
Tensor argsortKernel(const OpAttrs& a, std::span<const Tensor> in) { return argsort(in[0], std::get<AxisAttrs>(a).axis); }

TensorType topKType(const OpAttrs& a, std::span<const TensorType> in) {
  const TopKAttrs& t = std::get<TopKAttrs>(a);
  checkTopK(in[0].shape, t.k, t.part);
  return {t.part == 0 ? movedDType(in[0]) : DType::I64, false, topKShape(in[0].shape, t.k)};
}
Tensor topKKernel(const OpAttrs& a, std::span<const Tensor> in) {
  const TopKAttrs& t = std::get<TopKAttrs>(a);
  return topK(in[0], t.k, t.part);
}

} // namespace tsl
