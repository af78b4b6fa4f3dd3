// runtime/Views.cpp — views over existing storage.
#include "runtime/Views.h"

#include "runtime/Elementwise.h"
#include "runtime/Dispatch.h"

namespace tsl {

Tensor selectIndex(const Tensor& x, int axis, int64_t index) {
  if (x.isScalar()) fail(ErrorKind::Value, "cannot index a scalar");
  const int64_t size = x.shape()[axis];
  if (index < -size || index >= size)
    fail(ErrorKind::Value, "index ", index, " is out of range for axis ", axis, " of size ", size);
  if (index < 0) index += size;
  std::array<int64_t, Shape::kMaxRank> dims{}, strides{};
  int rank = 0;
  for (int i = 0; i < x.rank(); ++i) {
    if (i == axis) continue;
    dims[rank] = x.shape()[i];
    strides[rank] = x.strides()[i];
    ++rank;
  }
  return Tensor::view(x.dtype(), Shape(std::span<const int64_t>(dims.data(), rank)),
                      std::span<const int64_t>(strides.data(), rank),
                      x.offset() + index * x.strides()[axis], *x.storage());
}

bool tensorElementsEqual(const Tensor& a, const Tensor& b) {
  TSL_ASSERT(a.dtype() == b.dtype() && a.shape() == b.shape());
  const Tensor equal = applyBinary(BinaryOp::Equal, a, b);
  if (equal.isScalar()) return equal.isNonZero();
  const bool* p = reinterpret_cast<const bool*>(equal.data());
  const int64_t n = equal.numel();
  for (int64_t i = 0; i < n; ++i)
    if (!p[i]) return false;
  return true;
}

} // namespace tsl
