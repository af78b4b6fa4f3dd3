// runtime/Views.h — operations that return views: new shape and strides, same storage.
#pragma once

#include "runtime/Tensor.h"

namespace tsl {

/// The sub-tensor at `index` along `axis` (that axis removed); negative indices count
/// from the end. A value error when out of range. Rank 0 results are read out.
Tensor selectIndex(const Tensor& x, int axis, int64_t index);

/// Whether two tensors of the same dtype and shape hold equal elements (NaN is unequal).
bool tensorElementsEqual(const Tensor& a, const Tensor& b);

} // namespace tsl
