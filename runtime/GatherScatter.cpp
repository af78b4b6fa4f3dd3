// runtime/GatherScatter.cpp — gather (take_along_axis) and scatter-add along one axis.
//
// Both bring their operands to the [outer, axis, inner] form of runtime/GatherRows.h:
// gather broadcasts idx to the result's shape, and reads an x that broadcasts through
// strides instead;
// scatter-add works on the block of the result that idx covers (the whole result when idx
// spans x off the axis), with src cut to idx's extent. The indices are checked before any
// element moves, so an error leaves nothing half done.
#include "runtime/GatherScatter.h"

#include "runtime/Dispatch.h"
#include "runtime/Elementwise.h"
#include "runtime/GatherRows.h"
#include "runtime/Structure.h"
#include "runtime/ThreadPool.h"
#include "runtime/Views.h"

#include <algorithm>

namespace tsl {

namespace {

/// [outer, n, inner] around axis `a` of `shape`.
struct Around {
  int64_t outer = 1, inner = 1;
  Around(const Shape& shape, int a) {
    for (int d = 0; d < a; ++d) outer *= shape[d];
    for (int d = a + 1; d < shape.rank(); ++d) inner *= shape[d];
  }
};

void requireIndices(DType dtype, const char* who) {
  if (!isInteger(dtype)) fail(ErrorKind::Type, who, ": indices must be integers, got ", dtypeName(dtype));
}

/// idx as contiguous i64, every element checked against an axis of `size`.
Tensor checkedIndices(const Tensor& idx, int a, int64_t size, const char* who) {
  const Tensor out = contiguous(astype(idx, DType::I64));
  const int64_t* ip = reinterpret_cast<const int64_t*>(out.data());
  const int64_t bad = rows::badIndex(ip, out.numel(), size);
  if (bad >= 0) fail(ErrorKind::Value, who, ": index ", ip[bad], " is out of range for axis ", a, " of size ", size);
  return out;
}

int64_t grain(int64_t work) { return std::max<int64_t>(1, 16384 / std::max<int64_t>(work, 1)); }

} // namespace

Shape gatherShape(const Shape& x, const Shape& idx, int64_t axis) {
  if (x.rank() == 0) fail(ErrorKind::Shape, "gather: x must have at least one axis, got a scalar");
  if (idx.rank() != x.rank())
    fail(ErrorKind::Shape, "gather: idx ", idx.str(), " must have the rank of x ", x.str(), " (", x.rank(), ")");
  const int a = normalizeAxis(axis, x.rank());
  Shape out = x;
  for (int d = 0; d < x.rank(); ++d) {
    if (d == a || x[d] == 1) out[d] = idx[d];
    else if (idx[d] != x[d] && idx[d] != 1)
      fail(ErrorKind::Shape, "gather: x ", x.str(), " and idx ", idx.str(), " do not broadcast along axis ", d);
  }
  (void)out.numel();
  return out;
}

Tensor gather(const Tensor& x, const Tensor& idx, int64_t axis) {
  requireIndices(idx.dtype(), "gather");
  const Shape shape = gatherShape(x.shape(), idx.shape(), axis);
  const int a = normalizeAxis(axis, x.rank());
  const int64_t n = x.shape()[a], m = shape[a];
  const Tensor indices = checkedIndices(broadcastTo(idx, shape), a, n, "gather");
  Tensor out = Tensor::empty(x.dtype(), shape);
  if (out.numel() == 0) return out;
  const Tensor source = contiguous(x);
  const int64_t* ip = reinterpret_cast<const int64_t*>(indices.data());
  bool broadcast = false;
  for (int d = 0; d < shape.rank(); ++d) broadcast |= d != a && x.shape()[d] != shape[d];
  dispatchDType(x.dtype(), [&](auto tag) {
    using E = decltype(tag);
    const E* xp = reinterpret_cast<const E*>(source.data());
    E* op = reinterpret_cast<E*>(out.mutableData());
    if (!broadcast) {
      const Around around(shape, a);
      parallelFor(around.outer, grain(m * around.inner), [&](int64_t begin, int64_t end) {
        rows::gather(xp, ip, op, n, m, around.inner, begin, end);
      });
      return;
    }
    // x broadcast off the axis: read it through strides (0 along its broadcast axes)
    // rather than materialise it, which may be far larger than the result.
    std::vector<int64_t> stride(static_cast<size_t>(shape.rank())), at(static_cast<size_t>(shape.rank()), 0);
    int64_t step = 1;
    for (int d = shape.rank() - 1; d >= 0; --d) {
      stride[static_cast<size_t>(d)] = x.shape()[d] == 1 && d != a ? 0 : step;
      step *= x.shape()[d];
    }
    const int64_t count = out.numel();
    for (int64_t p = 0; p < count; ++p) {
      int64_t from = (ip[p] < 0 ? ip[p] + n : ip[p]) * stride[static_cast<size_t>(a)];
      for (int d = 0; d < shape.rank(); ++d)
        if (d != a) from += at[static_cast<size_t>(d)] * stride[static_cast<size_t>(d)];
      op[p] = xp[from];
      for (int d = shape.rank() - 1; d >= 0 && ++at[static_cast<size_t>(d)] == shape[d]; --d) at[static_cast<size_t>(d)] = 0;
    }
  });
  return out;
}

DType scatterAddDType(TypeKey x, TypeKey src) {
  const DType d = concreteDType(promoteTypes(x, src));
  return isBool(d) ? DType::I64 : d;
}

Shape scatterAddShape(const Shape& x, const Shape& idx, const Shape& src, int64_t axis) {
  if (x.rank() == 0) fail(ErrorKind::Shape, "scatter-add: x must have at least one axis, got a scalar");
  if (idx.rank() != x.rank() || src.rank() != x.rank())
    fail(ErrorKind::Shape, "scatter-add: idx ", idx.str(), " and src ", src.str(), " must have the rank of x ", x.str(),
         " (", x.rank(), ")");
  const int a = normalizeAxis(axis, x.rank());
  for (int d = 0; d < x.rank(); ++d) {
    if (idx[d] > src[d])
      fail(ErrorKind::Shape, "scatter-add: idx ", idx.str(), " is larger than src ", src.str(), " along axis ", d);
    if (d != a && idx[d] > x[d])
      fail(ErrorKind::Shape, "scatter-add: idx ", idx.str(), " is larger than x ", x.str(), " along axis ", d);
  }
  return x;
}

Tensor scatterAdd(const Tensor& x, const Tensor& idx, const Tensor& src, int64_t axis) {
  requireIndices(idx.dtype(), "scatter-add");
  const Shape shape = scatterAddShape(x.shape(), idx.shape(), src.shape(), axis);
  const int a = normalizeAxis(axis, x.rank());
  const DType dtype = scatterAddDType(x.typeKey(), src.typeKey());
  const Tensor indices = checkedIndices(idx, a, shape[a], "scatter-add");
  Tensor out = Tensor::empty(dtype, shape);
  if (out.numel() == 0) return out;
  copyInto(astype(x, dtype), out);
  if (indices.numel() == 0) return out;
  // The block idx covers: idx's extent off the axis, all of the axis.
  std::vector<SliceRange> covered;
  bool whole = true;
  for (int d = 0; d < shape.rank(); ++d) {
    covered.push_back(d == a ? SliceRange{} : SliceRange{0, idx.shape()[d], 1});
    whole &= d == a || idx.shape()[d] == shape[d];
  }
  std::vector<SliceRange> used;
  for (int d = 0; d < shape.rank(); ++d) used.push_back(SliceRange{0, idx.shape()[d], 1});
  const Tensor values = contiguous(astype(slice(src, used), dtype));
  Tensor region = slice(out, covered);
  Tensor block = whole ? out : Tensor::empty(dtype, region.shape());
  if (!whole) copyInto(region, block);
  const Around around(idx.shape(), a);
  const int64_t n = shape[a], m = idx.shape()[a];
  dispatchDType(dtype, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (!std::is_same_v<T, bool>) {
      const int64_t* ip = reinterpret_cast<const int64_t*>(indices.data());
      const T* sp = reinterpret_cast<const T*>(values.data());
      T* bp = reinterpret_cast<T*>(block.mutableData());
      parallelFor(around.outer, grain(m * around.inner), [&](int64_t begin, int64_t end) {
        rows::scatterAdd(ip, sp, bp, n, m, around.inner, begin, end);
      });
    }
  });
  if (!whole) copyInto(block, region);
  return out;
}

// ---- The rows' type rules and kernel adapters ----

TensorType gatherType(const OpAttrs& a, std::span<const TensorType> in) {
  requireIndices(in[1].dtype, "gather");
  const DType dtype = in[0].weak ? concreteDType({in[0].dtype, true}) : in[0].dtype;
  return {dtype, false, gatherShape(in[0].shape, in[1].shape, std::get<AxisAttrs>(a).axis)};
}
Tensor gatherKernel(const OpAttrs& a, std::span<const Tensor> in) { return gather(in[0], in[1], std::get<AxisAttrs>(a).axis); }

TensorType scatterAddType(const OpAttrs& a, std::span<const TensorType> in) {
  requireIndices(in[1].dtype, "scatter-add");
  return {scatterAddDType({in[0].dtype, in[0].weak}, {in[2].dtype, in[2].weak}), false,
          scatterAddShape(in[0].shape, in[1].shape, in[2].shape, std::get<AxisAttrs>(a).axis)};
}
Tensor scatterAddKernel(const OpAttrs& a, std::span<const Tensor> in) {
  return scatterAdd(in[0], in[1], in[2], std::get<AxisAttrs>(a).axis);
}

} // namespace tsl
