// runtime/Views.h — operations that return views: new shape and strides, same storage.
//
// transpose, slice, broadcast-to, expand-dims, squeeze, get and a reshape of contiguous
// data never copy; a reshape that cannot be expressed with strides copies into a fresh
// contiguous tensor (as NumPy does). Every function checks its arguments and reports a
// shape or value error naming itself.
#pragma once

#include "runtime/Tensor.h"

#include <optional>
#include <vector>

namespace tsl {

/// The sub-tensor at `index` along `axis` (that axis removed); negative indices count
/// from the end. A value error when out of range. Rank 0 results are read out.
Tensor selectIndex(const Tensor& x, int axis, int64_t index);

/// Axes permuted (`perm` empty: reversed).
Tensor transpose(const Tensor& x, std::span<const int64_t> perm);
/// The permutation transpose uses (checked; `perm` empty: reversed).
std::vector<int64_t> resolvePermutation(int rank, std::span<const int64_t> perm);

/// One range per axis (missing trailing axes are whole). Python's slice rules: negative
/// bounds count from the end, bounds are clipped, nullopt means open, step may be
/// negative (its default is 1; 0 is a value error).
struct SliceRange {
  std::optional<int64_t> start, stop;
  int64_t step = 1;
  bool operator==(const SliceRange&) const = default;
};
Tensor slice(const Tensor& x, std::span<const SliceRange> ranges);
Shape sliceShape(const Shape& x, std::span<const SliceRange> ranges);

/// x viewed with NumPy broadcasting to `shape` (stride 0 on new or size-1 axes).
Tensor broadcastTo(const Tensor& x, const Shape& shape);
/// Checks that `from` broadcasts to `to`.
void checkBroadcastTo(const Shape& from, const Shape& to);

/// The shape `dims` with one -1 resolved against x's element count; a shape error if it
/// cannot hold exactly that many elements.
Shape resolveReshape(const Shape& from, std::span<const int64_t> dims);
/// A view when x is contiguous (or the strides allow it), else a contiguous copy.
Tensor reshape(const Tensor& x, const Shape& shape);

/// A new axis of size 1 at `axis` (negative counts from the end of the result).
Tensor expandDims(const Tensor& x, int64_t axis);
Shape expandDimsShape(const Shape& x, int64_t axis);
/// Removes the given size-1 axes (all size-1 axes when `axes` is empty).
Tensor squeeze(const Tensor& x, std::span<const int64_t> axes);
Shape squeezeShape(const Shape& x, std::span<const int64_t> axes);

/// x itself if contiguous, else a contiguous copy.
Tensor contiguous(const Tensor& x);

/// Whether two tensors of the same dtype and shape hold equal elements (NaN is unequal).
bool tensorElementsEqual(const Tensor& a, const Tensor& b);

} // namespace tsl
