// runtime/Views.cpp — views over existing storage, and the copy that makes one contiguous.
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

Tensor transpose(const Tensor& x, std::span<const int64_t> perm) {
  const int rank = x.rank();
  Dims order{};
  if (perm.empty()) {
    for (int i = 0; i < rank; ++i) order[i] = rank - 1 - i;
  } else {
    if (static_cast<int>(perm.size()) != rank)
      fail(ErrorKind::Shape, "transpose: permutation of ", perm.size(), " axes for a tensor of rank ", rank);
    std::array<bool, Shape::kMaxRank> seen{};
    for (int i = 0; i < rank; ++i) {
      const int axis = normalizeAxis(perm[i], rank);
      if (seen[axis]) fail(ErrorKind::Value, "transpose: axis ", perm[i], " appears twice in the permutation");
      seen[axis] = true;
      order[i] = axis;
    }
  }
  if (rank == 0) return x;
  Dims dims{}, strides{};
  for (int i = 0; i < rank; ++i) {
    dims[i] = x.shape()[static_cast<int>(order[i])];
    strides[i] = x.strides()[order[i]];
  }
  return makeView(x, Shape(std::span<const int64_t>(dims.data(), rank)), strides, x.offset());
}

Tensor slice(const Tensor& x, std::span<const SliceRange> ranges) {
  const int rank = x.rank();
  if (static_cast<int>(ranges.size()) > rank)
    fail(ErrorKind::Shape, "slice: ", ranges.size(), " ranges for a tensor of rank ", rank);
  if (rank == 0) return x;
  Dims dims{}, strides{};
  int64_t offset = x.offset();
  for (int i = 0; i < rank; ++i) {
    const int64_t size = x.shape()[i];
    const SliceRange range = i < static_cast<int>(ranges.size()) ? ranges[i] : SliceRange{};
    const int64_t step = range.step;
    if (step == 0) fail(ErrorKind::Value, "slice: step 0 on axis ", i);
    // Python's rules: negative bounds count from the end, then clip.
    auto clip = [&](std::optional<int64_t> bound, int64_t open) {
      if (!bound) return open;
      int64_t b = *bound < 0 ? *bound + size : *bound;
      if (step > 0) return std::clamp<int64_t>(b, 0, size);
      return std::clamp<int64_t>(b, -1, size - 1);
    };
    const int64_t start = clip(range.start, step > 0 ? 0 : size - 1);
    const int64_t stop = clip(range.stop, step > 0 ? size : -1);
    const int64_t count = step > 0 ? std::max<int64_t>(0, (stop - start + step - 1) / step)
                                   : std::max<int64_t>(0, (start - stop - step - 1) / -step);
    dims[i] = count;
    strides[i] = x.strides()[i] * step;
    if (count > 0) offset += start * x.strides()[i];
  }
  return makeView(x, Shape(std::span<const int64_t>(dims.data(), rank)), strides, offset);
}

Tensor broadcastTo(const Tensor& x, const Shape& shape) {
  const int rank = shape.rank(), offset = rank - x.rank();
  if (offset < 0)
    fail(ErrorKind::Shape, "broadcast-to: cannot broadcast ", x.shape().str(), " to the lower rank ", shape.str());
  Dims strides{};
  for (int i = 0; i < x.rank(); ++i) {
    const int64_t from = x.shape()[i], to = shape[offset + i];
    if (from != to && from != 1)
      fail(ErrorKind::Shape, "broadcast-to: cannot broadcast ", x.shape().str(), " to ", shape.str(),
           " (axis ", i, ": ", from, " vs ", to, ")");
    strides[offset + i] = from == to ? x.strides()[i] : 0;
  }
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
  if (unknown >= 0) {
    if (known == 0 || total % known != 0)
      fail(ErrorKind::Shape, "reshape: cannot reshape ", from.str(), " (", total, " elements) with a -1 into ",
           Shape(std::span<const int64_t>(out)).str());
    out[unknown] = total / known;
  } else if (known != total) {
    fail(ErrorKind::Shape, "reshape: cannot reshape ", from.str(), " (", total, " elements) into ",
         Shape(std::span<const int64_t>(out)).str(), " (", known, " elements)");
  }
  return Shape(std::span<const int64_t>(out));
}

Tensor reshape(const Tensor& x, const Shape& shape) {
  if (shape.numel() != x.numel())
    fail(ErrorKind::Shape, "reshape: cannot reshape ", x.shape().str(), " into ", shape.str());
  if (shape.rank() == 0) return Tensor::scalarFromBytes(x.dtype(), x.data());
  if (x.isScalar() || !x.isContiguous()) {
    const Tensor c = contiguous(x.isScalar() ? broadcastTo(x, Shape{1}) : x);
    return reshape(c, shape);
  }
  return makeView(x, shape, contiguousStrides(shape), x.offset());
}

Tensor expandDims(const Tensor& x, int64_t axis) {
  const int rank = x.rank() + 1;
  const int at = normalizeAxis(axis, rank);
  Dims dims{}, strides{};
  for (int i = 0, j = 0; i < rank; ++i) {
    if (i == at) {
      dims[i] = 1;
      strides[i] = 0;
    } else {
      dims[i] = x.shape()[j];
      strides[i] = x.strides()[j];
      ++j;
    }
  }
  return makeView(x, Shape(std::span<const int64_t>(dims.data(), rank)), strides, x.offset());
}

Tensor squeeze(const Tensor& x, std::span<const int64_t> axes) {
  std::array<bool, Shape::kMaxRank> drop{};
  for (int64_t axis : axes) {
    const int a = normalizeAxis(axis, x.rank());
    if (x.shape()[a] != 1)
      fail(ErrorKind::Shape, "squeeze: axis ", axis, " has size ", x.shape()[a], ", not 1");
    drop[a] = true;
  }
  Dims dims{}, strides{};
  int rank = 0;
  for (int i = 0; i < x.rank(); ++i) {
    if (axes.empty() ? x.shape()[i] == 1 : drop[i]) continue;
    dims[rank] = x.shape()[i];
    strides[rank] = x.strides()[i];
    ++rank;
  }
  if (rank == 0) return Tensor::scalarFromBytes(x.dtype(), x.data());
  return makeView(x, Shape(std::span<const int64_t>(dims.data(), rank)), strides, x.offset());
}

Tensor contiguous(const Tensor& x) {
  if (x.isContiguous()) return x;
  Tensor out = Tensor::empty(x.dtype(), x.shape());
  detail::copyElements(x, out);
  return out;
}

bool tensorElementsEqual(const Tensor& a, const Tensor& b) {
  TSL_ASSERT(a.dtype() == b.dtype() && a.shape() == b.shape());
  const Tensor equal = applyBinary(BinaryOp::Equal, a, b);
  if (equal.isScalar()) return equal.isNonZero();
  const bool* p = reinterpret_cast<const bool*>(equal.data());
  return std::all_of(p, p + equal.numel(), [](bool v) { return v; });
}

} // namespace tsl
