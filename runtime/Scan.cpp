// runtime/Scan.cpp — cumulative sums and products, and linear recurrences, along an axis.
//
// The operand, made contiguous, is a set of rows along the axis: n elements at stride
// `inner` (the product of the later axes) for each of outer × inner slices. Rows run in
// parallel, each by runtime/ScanRows.h.
#include "runtime/Scan.h"

#include "runtime/Dispatch.h"
#include "runtime/Elementwise.h"
#include "runtime/Layout.h"
#include "runtime/ScanRows.h"
#include "runtime/Softmax.h"
#include "runtime/ThreadPool.h"
#include "runtime/Views.h"

#include <algorithm>

namespace tsl {

TypeKey cumsumResultType(TypeKey input) {
  return isFloat(input.dtype) ? input : TypeKey{DType::I64, input.weak};
}

namespace {

/// The rows along `axis` of a contiguous tensor of `shape`: n elements at stride `inner`,
/// outer × inner of them.
struct Rows {
  int64_t outer = 1, n = 1, inner = 1;
  Rows(const Shape& shape, int64_t axis) {
    const int a = normalizeAxis(axis, shape.rank());
    for (int d = 0; d < a; ++d) outer *= shape[d];
    for (int d = a + 1; d < shape.rank(); ++d) inner *= shape[d];
    n = shape[a];
  }
  /// Calls row(offset) for every row, in parallel.
  template <typename Fn>
  void forEach(Fn&& row) const {
    parallelFor(outer * inner, std::max<int64_t>(1, (int64_t(1) << 15) / std::max<int64_t>(n, 1)),
                [&](int64_t begin, int64_t end) {
                  for (int64_t r = begin; r < end; ++r) row((r / inner) * n * inner + r % inner);
                });
  }
};

/// cumsum and cumprod: `row` (rows::cumsum or rows::cumprod) along the axis.
template <bool product>
Tensor prefixScan(const Tensor& x, int64_t axis, const char* name) {
  const TypeKey result = cumsumResultType(x.typeKey());
  if (x.isScalar()) return x.weak() ? x : astype(x, result.dtype);
  const Tensor in = contiguous(x.blocked() ? plain(x) : x);
  const Rows rows(in.shape(), axis);
  Tensor out = Tensor::empty(result.dtype, in.shape());
  if (out.numel() == 0) return out;
  dispatchDType(in.dtype(), [&](auto tag) {
    using S = decltype(tag);
    dispatchDType(result.dtype, [&](auto resultTag) {
      using R = decltype(resultTag);
      if constexpr (std::is_same_v<R, S> || std::is_same_v<R, int64_t>) {
        const S* src = reinterpret_cast<const S*>(in.data());
        R* dst = reinterpret_cast<R*>(out.mutableData());
        rows.forEach([&](int64_t at) {
          if constexpr (product) rows::cumprod(src + at, dst + at, rows.n, rows.inner);
          else rows::cumsum(src + at, dst + at, rows.n, rows.inner);
        });
      } else {
        fail(ErrorKind::Internal, name, ": no kernel from ", dtypeName(in.dtype()), " to ", dtypeName(result.dtype));
      }
    });
  });
  return out;
}

} // namespace

Tensor cumsum(const Tensor& x, int64_t axis) { return prefixScan<false>(x, axis, "cumsum"); }
Tensor cumprod(const Tensor& x, int64_t axis) { return prefixScan<true>(x, axis, "cumprod"); }

TypeKey linearScanResultType(TypeKey a, TypeKey b) {
  const TypeKey t = promoteTypes(a, b);
  return {floatComputeType(concreteDType(t)), false};
}

Tensor linearScan(const Tensor& a, const Tensor& b, int64_t axis, bool reverse) {
  if (a.shape() != b.shape())
    fail(ErrorKind::Shape, "linear_scan: a ", a.shape().str(), " and b ", b.shape().str(), " must have one shape");
  const DType dtype = linearScanResultType(a.typeKey(), b.typeKey()).dtype;
  if (a.isScalar()) return astype(b, dtype); // one element: h_0 = b_0
  const Tensor ca = contiguous(astype(a.blocked() ? plain(a) : a, dtype));
  const Tensor cb = contiguous(astype(b.blocked() ? plain(b) : b, dtype));
  const Rows rows(ca.shape(), axis);
  Tensor out = Tensor::empty(dtype, ca.shape());
  if (out.numel() == 0) return out;
  dispatchDType(dtype, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (kIsFloatElement<T>) {
      const T* pa = reinterpret_cast<const T*>(ca.data());
      const T* pb = reinterpret_cast<const T*>(cb.data());
      T* ph = reinterpret_cast<T*>(out.mutableData());
      rows.forEach([&](int64_t at) { rows::linearScan(pa + at, pb + at, ph + at, rows.n, rows.inner, reverse); });
    }
  });
  return out;
}

} // namespace tsl
