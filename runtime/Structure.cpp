// runtime/Structure.cpp — concat, stack, split, pad, take, one-hot, tril/triu, get.
#include "runtime/Layout.h"
#include "runtime/Structure.h"

#include "runtime/Dispatch.h"
#include "runtime/Elementwise.h"
#include "runtime/Loops.h"
#include "runtime/Views.h"

#include <algorithm>
#include <cstring>

namespace tsl {

void copyInto(const Tensor& src, Tensor& dst) { detail::copyStrided(plain(src), dst); }

Shape concatShape(std::span<const Shape> parts, int64_t axis) {
  if (parts.empty()) fail(ErrorKind::Value, "concat needs at least one tensor");
  const Shape& first = parts[0];
  if (first.rank() == 0) fail(ErrorKind::Shape, "concat: cannot join scalars (use stack)");
  const int a = normalizeAxis(axis, first.rank());
  Shape out = first;
  for (size_t i = 1; i < parts.size(); ++i) {
    const Shape& p = parts[i];
    if (p.rank() != first.rank())
      fail(ErrorKind::Shape, "concat: tensor ", i, " has rank ", p.rank(), ", tensor 0 has rank ", first.rank());
    for (int d = 0; d < first.rank(); ++d)
      if (d != a && p[d] != first[d])
        fail(ErrorKind::Shape, "concat: shapes ", first.str(), " and ", p.str(), " differ on axis ", d,
             " (only axis ", a, " may differ)");
    out[a] += p[a];
  }
  (void)out.numel(); // size check
  return out;
}

Tensor concat(std::span<const Tensor> parts, int64_t axis) {
  std::vector<Shape> shapes;
  TypeKey type = parts.empty() ? TypeKey{DType::F32} : parts[0].typeKey();
  for (const Tensor& t : parts) {
    shapes.push_back(t.shape());
    type = promoteTypes(type, t.typeKey());
  }
  const Shape shape = concatShape(shapes, axis);
  const int a = normalizeAxis(axis, shape.rank());
  const DType dtype = concreteDType(type);
  Tensor out = Tensor::empty(dtype, shape);
  int64_t at = 0;
  for (const Tensor& part : parts) {
    std::vector<SliceRange> ranges(static_cast<size_t>(a + 1));
    ranges[a] = {at, at + part.shape()[a], 1};
    Tensor region = slice(out, ranges);
    copyInto(part.dtype() == dtype ? part : astype(part, dtype), region);
    at += part.shape()[a];
  }
  return out;
}

Shape stackShape(std::span<const Shape> parts, int64_t axis) {
  if (parts.empty()) fail(ErrorKind::Value, "stack needs at least one tensor");
  for (size_t i = 1; i < parts.size(); ++i)
    if (!(parts[i] == parts[0]))
      fail(ErrorKind::Shape, "stack: tensor ", i, " has shape ", parts[i].str(), ", tensor 0 has shape ",
           parts[0].str());
  const int a = normalizeAxis(axis, parts[0].rank() + 1);
  Shape out;
  for (int d = 0, k = 0; d <= parts[0].rank(); ++d) out.push(d == a ? static_cast<int64_t>(parts.size()) : parts[0][k++]);
  (void)out.numel();
  return out;
}

Tensor stack(std::span<const Tensor> parts, int64_t axis) {
  std::vector<Shape> shapes;
  for (const Tensor& t : parts) shapes.push_back(t.shape());
  const Shape shape = stackShape(shapes, axis);
  const int a = normalizeAxis(axis, parts[0].rank() + 1);
  std::vector<Tensor> expanded;
  for (const Tensor& t : parts) expanded.push_back(expandDims(t.isScalar() ? t.strengthened() : t, a));
  Tensor out = concat(expanded, a);
  TSL_ASSERT(out.shape() == shape);
  return out;
}

std::vector<std::vector<SliceRange>> splitRanges(const Shape& x, int64_t n, int64_t axis) {
  if (x.rank() == 0) fail(ErrorKind::Shape, "split: cannot split a scalar");
  const int a = normalizeAxis(axis, x.rank());
  if (n <= 0) fail(ErrorKind::Value, "split: the number of parts must be positive, got ", n);
  const int64_t size = x[a];
  if (size % n != 0)
    fail(ErrorKind::Shape, "split: axis ", a, " of size ", size, " does not divide into ", n, " equal parts");
  if (n > Shape::kMaxElements) fail(ErrorKind::Value, "split: too many parts: ", n);
  std::vector<std::vector<SliceRange>> parts;
  const int64_t step = size / n;
  for (int64_t k = 0; k < n; ++k) {
    std::vector<SliceRange> ranges(static_cast<size_t>(a + 1));
    ranges[a] = {k * step, (k + 1) * step, 1};
    parts.push_back(std::move(ranges));
  }
  return parts;
}

std::vector<Tensor> split(const Tensor& x, int64_t n, int64_t axis) {
  std::vector<Tensor> parts;
  for (const auto& ranges : splitRanges(x.shape(), n, axis)) parts.push_back(slice(x, ranges));
  return parts;
}

std::vector<std::array<int64_t, 2>> padWidths(const Shape& x, std::span<const std::array<int64_t, 2>> widths) {
  if (widths.size() == 1) return std::vector<std::array<int64_t, 2>>(static_cast<size_t>(x.rank()), widths[0]);
  if (static_cast<int>(widths.size()) != x.rank())
    fail(ErrorKind::Shape, "pad: ", widths.size(), " pairs of widths for a tensor of rank ", x.rank(),
         " (give one pair for every axis, or one for all)");
  return {widths.begin(), widths.end()};
}

Shape padShape(const Shape& x, std::span<const std::array<int64_t, 2>> widths) {
  const auto all = padWidths(x, widths);
  Shape out = x;
  for (size_t d = 0; d < all.size(); ++d) {
    if (all[d][0] < 0 || all[d][1] < 0) fail(ErrorKind::Value, "pad: widths must not be negative (axis ", d, ")");
    out[static_cast<int>(d)] += all[d][0] + all[d][1];
  }
  (void)out.numel();
  return out;
}

Tensor pad(const Tensor& x, std::span<const std::array<int64_t, 2>> widths, double value) {
  const Shape shape = padShape(x.shape(), widths);
  Tensor out = Tensor::empty(x.dtype(), shape);
  dispatchDType(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T v = convertElement<T>(value);
    std::fill_n(reinterpret_cast<T*>(out.mutableData()), out.numel(), v);
  });
  std::vector<SliceRange> ranges;
  const auto all = padWidths(x.shape(), widths);
  for (size_t d = 0; d < all.size(); ++d) ranges.push_back({all[d][0], all[d][0] + x.shape()[static_cast<int>(d)], 1});
  Tensor center = slice(out, ranges);
  copyInto(x, center);
  return out;
}

Shape takeShape(const Shape& x, const Shape& indices, int64_t axis) {
  if (x.rank() == 0) fail(ErrorKind::Shape, "take: cannot take from a scalar");
  const int a = normalizeAxis(axis, x.rank());
  Shape out;
  for (int d = 0; d < a; ++d) out.push(x[d]);
  for (int d = 0; d < indices.rank(); ++d) out.push(indices[d]);
  for (int d = a + 1; d < x.rank(); ++d) out.push(x[d]);
  (void)out.numel();
  return out;
}

Tensor take(const Tensor& x, const Tensor& indices, int64_t axis) {
  if (!isInteger(indices.dtype())) fail(ErrorKind::Type, "take: indices must be integers, got ", dtypeName(indices.dtype()));
  const Shape shape = takeShape(x.shape(), indices.shape(), axis);
  const int a = normalizeAxis(axis, x.rank());
  const Tensor idx = contiguous(astype(indices, DType::I64));
  const int64_t* ip = reinterpret_cast<const int64_t*>(idx.data());
  const int64_t count = idx.numel(), size = x.shape()[a];
  for (int64_t k = 0; k < count; ++k)
    if (ip[k] < -size || ip[k] >= size)
      fail(ErrorKind::Value, "take: index ", ip[k], " is out of range for axis ", a, " of size ", size);
  // outer [..a), the taken axis, inner (a..]: copy one inner block per (outer, index).
  const Tensor src = contiguous(x);
  int64_t outer = 1, inner = 1;
  for (int d = 0; d < a; ++d) outer *= x.shape()[d];
  for (int d = a + 1; d < x.rank(); ++d) inner *= x.shape()[d];
  Tensor out = Tensor::empty(x.dtype(), shape);
  const size_t bytes = static_cast<size_t>(inner) * x.elementSize();
  const char* in = src.data();
  char* o = out.mutableData();
  for (int64_t i = 0; i < outer; ++i)
    for (int64_t k = 0; k < count; ++k) {
      const int64_t at = ip[k] < 0 ? ip[k] + size : ip[k];
      std::memcpy(o + (i * count + k) * bytes, in + (i * size + at) * bytes, bytes);
    }
  return out;
}

Tensor oneHot(const Tensor& labels, int64_t n) {
  if (!isInteger(labels.dtype()) && !isBool(labels.dtype()))
    fail(ErrorKind::Type, "one-hot: labels must be integers, got ", dtypeName(labels.dtype()));
  if (n <= 0) fail(ErrorKind::Value, "one-hot: the number of classes must be positive, got ", n);
  Shape shape = labels.shape();
  shape.push(n);
  Tensor out = Tensor::zeros(DType::F32, shape);
  const Tensor idx = contiguous(astype(labels, DType::I64));
  const int64_t* ip = reinterpret_cast<const int64_t*>(idx.data());
  float* o = reinterpret_cast<float*>(out.mutableData());
  for (int64_t k = 0; k < idx.numel(); ++k) {
    if (ip[k] < 0 || ip[k] >= n)
      fail(ErrorKind::Value, "one-hot: label ", ip[k], " is outside [0, ", n, ")");
    o[k * n + ip[k]] = 1.0f;
  }
  return out;
}

Tensor triangle(const Tensor& x, int64_t k, bool lower) {
  const char* name = lower ? "tril" : "triu";
  if (x.rank() < 2) fail(ErrorKind::Shape, name, ": x must have at least two axes, got shape ", x.shape().str());
  const Tensor in = contiguous(x.blocked() ? plain(x) : x);
  Tensor out = Tensor::empty(in.dtype(), in.shape());
  const int64_t rows = in.shape()[in.rank() - 2], cols = in.shape()[in.rank() - 1];
  if (out.numel() == 0) return out;
  const size_t width = static_cast<size_t>(dtypeSize(in.dtype()));
  const auto* src = static_cast<const unsigned char*>(static_cast<const void*>(in.data()));
  auto* dst = static_cast<unsigned char*>(static_cast<void*>(out.mutableData()));
  // Each row keeps one run of columns [begin, end) and is zero elsewhere (all-zero bits
  // are 0 in every dtype).
  for (int64_t r = 0; r < out.numel() / cols; ++r) {
    const int64_t i = r % rows;
    const int64_t edge = std::clamp<int64_t>(i + k + (lower ? 1 : 0), 0, cols);
    const int64_t begin = lower ? 0 : edge, end = lower ? edge : cols;
    unsigned char* row = dst + static_cast<size_t>(r * cols) * width;
    std::memset(row, 0, static_cast<size_t>(cols) * width);
    std::memcpy(row + static_cast<size_t>(begin) * width, src + static_cast<size_t>(r * cols + begin) * width,
                static_cast<size_t>(end - begin) * width);
  }
  return out;
}

Shape indexShape(const Shape& x, std::span<const std::optional<int64_t>> indices) {
  if (static_cast<int>(indices.size()) > x.rank())
    fail(ErrorKind::Value, "get: ", indices.size(), " indices for a tensor of rank ", x.rank());
  Shape out;
  for (int d = 0; d < x.rank(); ++d) {
    if (d < static_cast<int>(indices.size()) && indices[d]) {
      const int64_t i = *indices[d];
      if (i < -x[d] || i >= x[d])
        fail(ErrorKind::Value, "get: index ", i, " is out of range for axis ", d, " of size ", x[d]);
      continue;
    }
    out.push(x[d]);
  }
  return out;
}

Tensor index(const Tensor& x, std::span<const std::optional<int64_t>> indices) {
  (void)indexShape(x.shape(), indices); // checks
  Tensor result = x;
  int axis = 0; // the axis of `result` the next index applies to
  for (const std::optional<int64_t>& i : indices) {
    if (i) result = selectIndex(result, axis, *i);
    else ++axis;
  }
  return result;
}

} // namespace tsl
