// runtime/Scan.cpp — cumulative sums along an axis.
//
// The operand, made contiguous, is a set of rows along the axis: n elements at stride
// `inner` (the product of the later axes) for each of outer × inner slices. Rows run in
// parallel, each by runtime/ScanRows.h.
#include "runtime/Scan.h"

#include "runtime/Dispatch.h"
#include "runtime/Elementwise.h"
#include "runtime/Layout.h"
#include "runtime/ScanRows.h"
#include "runtime/ThreadPool.h"
#include "runtime/Views.h"

#include <algorithm>

namespace tsl {

TypeKey cumsumResultType(TypeKey input) {
  return isFloat(input.dtype) ? input : TypeKey{DType::I64, input.weak};
}

Tensor cumsum(const Tensor& x, int64_t axis) {
  const TypeKey result = cumsumResultType(x.typeKey());
  if (x.isScalar()) return x.weak() ? x : astype(x, result.dtype);
  const Tensor in = contiguous(x.blocked() ? plain(x) : x);
  const int a = normalizeAxis(axis, in.rank());
  int64_t outer = 1, inner = 1;
  for (int d = 0; d < a; ++d) outer *= in.shape()[d];
  for (int d = a + 1; d < in.rank(); ++d) inner *= in.shape()[d];
  const int64_t n = in.shape()[a];
  Tensor out = Tensor::empty(result.dtype, in.shape());
  if (out.numel() == 0) return out;
  dispatchDType(in.dtype(), [&](auto tag) {
    using S = decltype(tag);
    dispatchDType(result.dtype, [&](auto resultTag) {
      using R = decltype(resultTag);
      if constexpr (std::is_same_v<R, S> || std::is_same_v<R, int64_t>) {
        const S* src = reinterpret_cast<const S*>(in.data());
        R* dst = reinterpret_cast<R*>(out.mutableData());
        parallelFor(outer * inner, std::max<int64_t>(1, (int64_t(1) << 15) / std::max<int64_t>(n, 1)),
                    [&](int64_t begin, int64_t end) {
                      for (int64_t r = begin; r < end; ++r) {
                        const int64_t at = (r / inner) * n * inner + r % inner;
                        rows::cumsum(src + at, dst + at, n, inner);
                      }
                    });
      } else {
        fail(ErrorKind::Internal, "cumsum: no kernel from ", dtypeName(in.dtype()), " to ", dtypeName(result.dtype));
      }
    });
  });
  return out;
}

} // namespace tsl
