// runtime/Views.cpp — views over existing storage, and the copy that makes one contiguous.
#include "runtime/Layout.h"
#include "runtime/Views.h"

#include "runtime/Elementwise.h"
#include "runtime/Loops.h"

#include <algorithm>

namespace tsl {

namespace {

using Dims = std::array<int64_t, Shape::kMaxRank>;

Tensor makeView(const Tensor& x, const Shape& shape, const Dims& strides, int64_t offset) {
  if (x.isScalar()) {
    // Broadcasting or expanding a scalar: a view of a one-element buffer.
    Tensor base = Tensor::empty(x.dtype(), Shape{1});
    std::memcpy(base.mutableData(), x.data(), x.elementSize());
    return Tensor::view(x.dtype(), shape, std::span<const int64_t>(strides.data(), shape.rank()), offset,
                        *base.storage());
  }
  return Tensor::view(x.dtype(), shape, std::span<const int64_t>(strides.data(), shape.rank()), offset,
                      *x.storage());
}

} // namespace

Tensor selectIndex(const Tensor& x, int axis, int64_t index) {
  if (x.blocked()) return selectIndex(plain(x), axis, index);
  if (x.isScalar()) fail(ErrorKind::Value, "cannot index a scalar");
  const int64_t size = x.shape()[axis];
  if (index < -size || index >= size)
    fail(ErrorKind::Value, "index ", index, " is out of range for axis ", axis, " of size ", size);
  if (index < 0) index += size;
  Dims dims{}, strides{};
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

std::vector<int64_t> resolvePermutation(int rank, std::span<const int64_t> perm) {
  std::vector<int64_t> order(static_cast<size_t>(rank));
  if (perm.empty()) {
    for (int i = 0; i < rank; ++i) order[i] = rank - 1 - i;
    return order;
  }
  if (static_cast<int>(perm.size()) != rank)
    fail(ErrorKind::Shape, "transpose: permutation of ", perm.size(), " axes for a tensor of rank ", rank);
  std::array<bool, Shape::kMaxRank> seen{};
  for (int i = 0; i < rank; ++i) {
    const int axis = normalizeAxis(perm[i], rank);
    if (seen[axis]) fail(ErrorKind::Value, "transpose: axis ", perm[i], " appears twice in the permutation");
    seen[axis] = true;
    order[i] = axis;
  }
  return order;
}

Tensor transpose(const Tensor& x, std::span<const int64_t> perm) {
  if (x.blocked()) return transpose(plain(x), perm);
  const int rank = x.rank();
  const std::vector<int64_t> order = resolvePermutation(rank, perm);
  if (rank == 0) return x;
  Dims dims{}, strides{};
  for (int i = 0; i < rank; ++i) {
    dims[i] = x.shape()[static_cast<int>(order[i])];
    strides[i] = x.strides()[order[i]];
  }
  return makeView(x, Shape(std::span<const int64_t>(dims.data(), rank)), strides, x.offset());
}

namespace {

/// Start and count of a range over an axis of `size`, by Python's rules.
std::pair<int64_t, int64_t> resolveRange(const SliceRange& range, int64_t size, int axis) {
  const int64_t step = range.step;
  if (step == 0) fail(ErrorKind::Value, "slice: step 0 on axis ", axis);
  // Negative bounds count from the end, then clip.
  auto clip = [&](std::optional<int64_t> bound, int64_t open) {
    if (!bound) return open;
    const int64_t b = *bound < 0 ? *bound + size : *bound;
    if (step > 0) return std::clamp<int64_t>(b, 0, size);
    return std::clamp<int64_t>(b, -1, size - 1);
  };
  const int64_t start = clip(range.start, step > 0 ? 0 : size - 1);
  const int64_t stop = clip(range.stop, step > 0 ? size : -1);
  const int64_t count = step > 0 ? std::max<int64_t>(0, (stop - start + step - 1) / step)
                                 : std::max<int64_t>(0, (start - stop - step - 1) / -step);
  return {start, count};
}

} // namespace

Shape sliceShape(const Shape& x, std::span<const SliceRange> ranges) {
  if (static_cast<int>(ranges.size()) > x.rank())
    fail(ErrorKind::Shape, "slice: ", ranges.size(), " ranges for a tensor of rank ", x.rank());
  Shape out = x;
  for (size_t i = 0; i < ranges.size(); ++i) out[static_cast<int>(i)] = resolveRange(ranges[i], x[static_cast<int>(i)], static_cast<int>(i)).second;
  return out;
}

Tensor slice(const Tensor& x, std::span<const SliceRange> ranges) {
  if (x.blocked()) return slice(plain(x), ranges);
  const Shape shape = sliceShape(x.shape(), ranges);
  if (x.rank() == 0) return x;
  Dims strides{};
  int64_t offset = x.offset();
  for (int i = 0; i < x.rank(); ++i) {
    const SliceRange range = i < static_cast<int>(ranges.size()) ? ranges[i] : SliceRange{};
    const auto [start, count] = resolveRange(range, x.shape()[i], i);
    strides[i] = x.strides()[i] * range.step;
    if (count > 0) offset += start * x.strides()[i];
  }
  return makeView(x, shape, strides, offset);
}

void checkBroadcastTo(const Shape& from, const Shape& to) {
  const int offset = to.rank() - from.rank();
  if (offset < 0)
    fail(ErrorKind::Shape, "broadcast-to: cannot broadcast ", from.str(), " to the lower rank ", to.str());
  for (int i = 0; i < from.rank(); ++i)
    if (from[i] != to[offset + i] && from[i] != 1)
      fail(ErrorKind::Shape, "broadcast-to: cannot broadcast ", from.str(), " to ", to.str(), " (axis ", i, ": ",
           from[i], " vs ", to[offset + i], ")");
}

Tensor broadcastTo(const Tensor& x, const Shape& shape) {
  if (x.blocked()) return broadcastTo(plain(x), shape);
  checkBroadcastTo(x.shape(), shape);
  const int rank = shape.rank(), offset = rank - x.rank();
  Dims strides{};
  for (int i = 0; i < x.rank(); ++i) strides[offset + i] = x.shape()[i] == shape[offset + i] ? x.strides()[i] : 0;
  if (rank == 0) return x;
  return makeView(x, shape, strides, x.offset());
}

Shape resolveReshape(const Shape& from, std::span<const int64_t> dims) {
  const int64_t total = from.numel();
  int unknown = -1;
  int64_t known = 1;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] == -1) {
      if (unknown >= 0) fail(ErrorKind::Value, "reshape: only one dimension may be -1");
      unknown = static_cast<int>(i);
    } else if (dims[i] < 0) {
      fail(ErrorKind::Value, "reshape: negative dimension ", dims[i]);
    } else {
      known = dims[i] == 0 ? 0 : (known > Shape::kMaxElements / dims[i] ? Shape::kMaxElements + 1 : known * dims[i]);
    }
  }
  std::vector<int64_t> out(dims.begin(), dims.end());
  auto text = [&] {
    std::string s = "[";
    for (size_t i = 0; i < out.size(); ++i) s += cat(i ? "," : "", out[i]);
    return s + "]";
  };
  if (unknown >= 0) {
    if (known == 0 || total % known != 0)
      fail(ErrorKind::Shape, "reshape: cannot reshape ", from.str(), " (", total, " elements) into ", text());
    out[unknown] = total / known;
  } else if (known != total) {
    fail(ErrorKind::Shape, "reshape: cannot reshape ", from.str(), " (", total, " elements) into ", text(), " (",
         known, " elements)");
  }
  return Shape(std::span<const int64_t>(out));
}

Tensor reshape(const Tensor& x, const Shape& shape) {
  if (x.blocked()) return reshape(plain(x), shape);
  if (shape.numel() != x.numel())
    fail(ErrorKind::Shape, "reshape: cannot reshape ", x.shape().str(), " into ", shape.str());
  if (shape.rank() == 0) return Tensor::scalarFromBytes(x.dtype(), x.data());
  if (x.isScalar() || !x.isContiguous()) {
    const Tensor c = contiguous(x.isScalar() ? broadcastTo(x, Shape{1}) : x);
    return reshape(c, shape);
  }
  return makeView(x, shape, contiguousStrides(shape), x.offset());
}

Shape expandDimsShape(const Shape& x, int64_t axis) {
  const int at = normalizeAxis(axis, x.rank() + 1);
  Shape out;
  for (int i = 0, j = 0; i <= x.rank(); ++i) out.push(i == at ? 1 : x[j++]);
  return out;
}

Tensor expandDims(const Tensor& x, int64_t axis) {
  if (x.blocked()) return expandDims(plain(x), axis);
  const Shape shape = expandDimsShape(x.shape(), axis);
  const int at = normalizeAxis(axis, x.rank() + 1);
  Dims strides{};
  for (int i = 0, j = 0; i < shape.rank(); ++i) strides[i] = i == at ? 0 : x.strides()[j++];
  return makeView(x, shape, strides, x.offset());
}

namespace {

/// Which axes squeeze removes.
std::array<bool, Shape::kMaxRank> squeezedAxes(const Shape& x, std::span<const int64_t> axes) {
  std::array<bool, Shape::kMaxRank> drop{};
  for (int64_t axis : axes) {
    const int a = normalizeAxis(axis, x.rank());
    if (x[a] != 1) fail(ErrorKind::Shape, "squeeze: axis ", axis, " has size ", x[a], ", not 1");
    drop[a] = true;
  }
  if (axes.empty())
    for (int i = 0; i < x.rank(); ++i) drop[i] = x[i] == 1;
  return drop;
}

} // namespace

Shape squeezeShape(const Shape& x, std::span<const int64_t> axes) {
  const auto drop = squeezedAxes(x, axes);
  Shape out;
  for (int i = 0; i < x.rank(); ++i)
    if (!drop[i]) out.push(x[i]);
  return out;
}

Tensor squeeze(const Tensor& x, std::span<const int64_t> axes) {
  if (x.blocked()) return squeeze(plain(x), axes);
  const auto drop = squeezedAxes(x.shape(), axes);
  const Shape shape = squeezeShape(x.shape(), axes);
  if (shape.rank() == 0) return Tensor::scalarFromBytes(x.dtype(), x.data());
  Dims strides{};
  for (int i = 0, j = 0; i < x.rank(); ++i)
    if (!drop[i]) strides[j++] = x.strides()[i];
  return makeView(x, shape, strides, x.offset());
}

Tensor contiguous(const Tensor& x) {
  if (x.blocked()) return plain(x);
  if (x.isContiguous()) return x;
  Tensor out = Tensor::empty(x.dtype(), x.shape());
  detail::copyElements(x, out);
  return out;
}

bool tensorElementsEqual(const Tensor& a, const Tensor& b) {
  if (b.blocked()) return tensorElementsEqual(a, plain(b));
  if (a.blocked()) return tensorElementsEqual(plain(a), b);
  TSL_ASSERT(a.dtype() == b.dtype() && a.shape() == b.shape());
  const Tensor equal = applyBinary(BinaryOp::Equal, a, b);
  if (equal.isScalar()) return equal.isNonZero();
  const bool* p = reinterpret_cast<const bool*>(equal.data());
  return std::all_of(p, p + equal.numel(), [](bool v) { return v; });
}

} // namespace tsl
