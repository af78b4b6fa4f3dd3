// runtime/Layout.cpp — layout names, physical shapes and offsets, conversions.
#include "runtime/Layout.h"

#include "runtime/Loops.h"
#include "runtime/ThreadPool.h"
#include "runtime/Views.h"

#include <cstring>

namespace tsl {

namespace {

constexpr std::pair<Layout, const char*> kNames[] = {
    {Layout::RowMajor, "row-major"}, {Layout::NHWC, "nhwc"},           {Layout::NC1HWC0, "nc1hwc0"},
    {Layout::FractalZ, "fractal-z"}, {Layout::FractalNZ, "fractal-nz"},
};

int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

/// Copies one element of `bytes` bytes.
inline void copyElement(char* to, const char* from, size_t bytes) {
  switch (bytes) {
  case 1: *to = *from; return;
  case 2: std::memcpy(to, from, 2); return;
  case 4: std::memcpy(to, from, 4); return;
  default: std::memcpy(to, from, 8); return;
  }
}

/// Calls fn(index, flat) for every logical index of `shape` whose first coordinate is
/// in [begin, end), in row-major order; `flat` counts from begin's first element.
template <typename Fn>
void forEachIndex(const Shape& shape, int64_t begin, int64_t end, Fn&& fn) {
  const int rank = shape.rank();
  std::array<int64_t, Shape::kMaxRank> index{};
  index[0] = begin;
  int64_t flat = 0;
  if (begin >= end) return;
  for (int d = 1; d < rank; ++d)
    if (shape[d] == 0) return;
  for (;;) {
    fn(index.data(), flat++);
    int d = rank - 1;
    for (; d >= 0; --d) {
      if (++index[d] < (d == 0 ? end : shape[d])) break;
      if (d == 0) return;
      index[d] = 0;
    }
  }
}

/// Copies the logical elements of plain tensor `src` into the physical buffer `out` of
/// `layout` (zeroed beforehand), or, with `gather`, the other way round into a row-major
/// `src`-shaped buffer. Along the last axis the physical offset is affine — over the
/// whole axis, or (FRACTAL_NZ, whose last axis is blocked) over each run of C0 — so the
/// offset is computed once per run and the run copied with its stride.
void scatter(const Tensor& rowMajor, char* physical, Layout layout, bool gather) {
  const Shape& shape = rowMajor.shape();
  const DType dtype = rowMajor.dtype();
  const size_t bytes = dtypeSize(dtype);
  char* plainData = const_cast<char*>(rowMajor.data());
  const int rank = shape.rank();
  const int64_t length = shape[rank - 1];
  if (length == 0) return;
  const int64_t run = layout == Layout::FractalNZ ? (bytes == 1 ? 32 : 16) : length;
  Shape outer; // the axes before the last
  for (int d = 0; d + 1 < rank; ++d) outer.push(shape[d]);
  if (outer.rank() == 0) outer.push(1);
  const int64_t rows = outer[0];
  const int64_t rowsPer = outer.numel() / std::max<int64_t>(rows, 1); // rows of the last axis per outer[0]
  parallelFor(rows, std::max<int64_t>(1, (int64_t(1) << 16) / std::max<int64_t>(rowsPer * length, 1)),
              [&](int64_t begin, int64_t end) {
                std::array<int64_t, Shape::kMaxRank> index{};
                forEachIndex(outer, begin, end, [&](const int64_t* prefix, int64_t flat) {
                  for (int d = 0; d + 1 < rank; ++d) index[static_cast<size_t>(d)] = prefix[d];
                  char* row = plainData + static_cast<size_t>((begin * rowsPer + flat) * length) * bytes;
                  for (int64_t j = 0; j < length; j += run) {
                    index[static_cast<size_t>(rank - 1)] = j;
                    const int64_t at = physicalOffset(layout, shape, dtype, index.data());
                    int64_t step = 1;
                    if (j + 1 < length && run > 1) {
                      index[static_cast<size_t>(rank - 1)] = j + 1;
                      step = physicalOffset(layout, shape, dtype, index.data()) - at;
                    }
                    const int64_t n = std::min(run, length - j);
                    char* p = physical + static_cast<size_t>(at) * bytes;
                    char* q = row + static_cast<size_t>(j) * bytes;
                    if (step == 1) {
                      if (gather) std::memcpy(q, p, static_cast<size_t>(n) * bytes);
                      else std::memcpy(p, q, static_cast<size_t>(n) * bytes);
                      continue;
                    }
                    for (int64_t i = 0; i < n; ++i) {
                      char* pi = p + static_cast<size_t>(i * step) * bytes;
                      char* qi = q + static_cast<size_t>(i) * bytes;
                      if (gather) copyElement(qi, pi, bytes);
                      else copyElement(pi, qi, bytes);
                    }
                  }
                });
              });
}

/// A tensor of `logical` shape in `layout` over the dense physical buffer `storage`.
Tensor over(Ref<Storage> storage, DType dtype, const Shape& logical, Layout layout) {
  const Shape physical = physicalShape(layout, logical, dtype);
  if (layout == Layout::RowMajor) {
    const auto strides = contiguousStrides(logical);
    return Tensor::view(dtype, logical, std::span<const int64_t>(strides.data(), logical.rank()), 0, storage);
  }
  if (layout == Layout::NHWC) { // a strided view of the [N,H,W,C] buffer
    const int64_t c = logical[1], h = logical[2], w = logical[3];
    const int64_t strides[] = {h * w * c, 1, w * c, c};
    return Tensor::withLayout(dtype, logical, layout, physical, strides, storage);
  }
  const auto strides = contiguousStrides(physical);
  return Tensor::withLayout(dtype, logical, layout, physical, std::span<const int64_t>(strides.data(), physical.rank()),
                            storage);
}

} // namespace

const char* layoutKeyword(Layout layout, int rank) {
  if (layout == Layout::RowMajor) return rank == 4 ? "nchw" : "row-major";
  return layoutName(layout);
}

const char* layoutName(Layout layout) {
  for (const auto& [l, name] : kNames)
    if (l == layout) return name;
  return "?";
}

std::optional<Layout> layoutFromKeyword(std::string_view name) {
  if (name == "nchw") return Layout::RowMajor;
  for (const auto& [l, n] : kNames)
    if (name == n) return l;
  return std::nullopt;
}

void checkLayout(Layout layout, const Shape& shape, const char* who) {
  switch (layout) {
  case Layout::RowMajor: return;
  case Layout::NHWC:
  case Layout::NC1HWC0:
    if (shape.rank() != 4)
      fail(ErrorKind::Shape, who, ": :", layoutName(layout), " is a layout of rank-4 data (N,C,H,W), not of ", shape.str());
    return;
  case Layout::FractalZ:
    if (shape.rank() != 4)
      fail(ErrorKind::Shape, who, ": :fractal-z is a layout of rank-4 weights (O,I,Kh,Kw), not of ", shape.str());
    return;
  case Layout::FractalNZ:
    if (shape.rank() < 2)
      fail(ErrorKind::Shape, who, ": :fractal-nz is a layout of matrices [..., M, K], not of ", shape.str());
    if (shape.rank() > kMaxFractalNzRank)
      fail(ErrorKind::Shape, who, ": :fractal-nz adds two axes, so it holds tensors of rank ", kMaxFractalNzRank,
           " at most, not ", shape.str());
    return;
  }
}

Shape physicalShape(Layout layout, const Shape& s, DType dtype) {
  const int64_t c0 = blockC0(dtype);
  switch (layout) {
  case Layout::RowMajor: return s;
  case Layout::NHWC: return Shape{s[0], s[2], s[3], s[1]};
  case Layout::NC1HWC0: return Shape{s[0], ceilDiv(s[1], c0), s[2], s[3], c0};
  case Layout::FractalZ: return Shape{ceilDiv(s[1], c0) * s[2] * s[3], ceilDiv(s[0], 16), 16, c0};
  case Layout::FractalNZ: {
    Shape out;
    for (int d = 0; d + 2 < s.rank(); ++d) out.push(s[d]);
    out.push(ceilDiv(s[s.rank() - 1], c0));
    out.push(ceilDiv(s[s.rank() - 2], 16));
    out.push(16);
    out.push(c0);
    return out;
  }
  }
  return s;
}

int64_t physicalBytes(Layout layout, const Shape& logical, DType dtype) {
  return physicalShape(layout, logical, dtype).numel() * static_cast<int64_t>(dtypeSize(dtype));
}

int64_t fractalOffset(int64_t row, int64_t col, int64_t rows, int64_t cols, int64_t fractalRows,
                      int64_t fractalCols, FractalOrder order) {
  const int64_t fractal = order.fractalsByColumn
                              ? (col / fractalCols) * ceilDiv(rows, fractalRows) + row / fractalRows
                              : (row / fractalRows) * ceilDiv(cols, fractalCols) + col / fractalCols;
  const int64_t inside = order.columnsInside ? (col % fractalCols) * fractalRows + row % fractalRows
                                             : (row % fractalRows) * fractalCols + col % fractalCols;
  return fractal * fractalRows * fractalCols + inside;
}

int64_t physicalOffset(Layout layout, const Shape& s, DType dtype, const int64_t* i) {
  const int64_t c0 = blockC0(dtype);
  switch (layout) {
  case Layout::RowMajor: {
    int64_t at = 0;
    for (int d = 0; d < s.rank(); ++d) at = at * s[d] + i[d];
    return at;
  }
  case Layout::NHWC: return ((i[0] * s[2] + i[2]) * s[3] + i[3]) * s[1] + i[1];
  case Layout::NC1HWC0: { // (((n·C1 + c/C0)·H + h)·W + w)·C0 + c%C0
    const int64_t c1 = ceilDiv(s[1], c0);
    return (((i[0] * c1 + i[1] / c0) * s[2] + i[2]) * s[3] + i[3]) * c0 + i[1] % c0;
  }
  case Layout::FractalZ: { // B[K = C1·Kh·Kw·C0, N] in the L0B order
    const int64_t k = ((i[1] / c0 * s[2] + i[2]) * s[3] + i[3]) * c0 + i[1] % c0;
    return fractalOffset(k, i[0], ceilDiv(s[1], c0) * c0 * s[2] * s[3], s[0], c0, 16, kOrderL0B);
  }
  case Layout::FractalNZ: { // each matrix [M, K] in the L0C order, one after another
    const int r = s.rank();
    int64_t b = 0;
    for (int d = 0; d + 2 < r; ++d) b = b * s[d] + i[d];
    const int64_t matrix = ceilDiv(s[r - 2], 16) * 16 * ceilDiv(s[r - 1], c0) * c0;
    return b * matrix + fractalOffset(i[r - 2], i[r - 1], s[r - 2], s[r - 1], 16, c0, kOrderL0C);
  }
  }
  return 0;
}

Tensor plain(const Tensor& x) {
  if (!x.blocked()) return x;
  Tensor out = Tensor::empty(x.dtype(), x.shape());
  if (out.numel() > 0) scatter(out, const_cast<char*>(x.physicalData()), x.layout(), true);
  return out;
}

Tensor untagged(const Tensor& x) {
  if (x.blocked()) return plain(x);
  if (x.layout() == Layout::RowMajor) return x;
  return Tensor::view(x.dtype(), x.shape(), std::span<const int64_t>(x.strides(), x.rank()), x.offset(), *x.storage());
}

Tensor toLayout(const Tensor& x, Layout layout) {
  if (x.isScalar()) {
    if (layout != Layout::RowMajor) checkLayout(layout, x.shape(), "to-layout");
    return x;
  }
  checkLayout(layout, x.shape(), "to-layout");
  if (x.layout() == layout) return x;
  const Tensor source = plain(x);
  const DType dtype = x.dtype();
  const Shape& shape = x.shape();
  if (layout == Layout::RowMajor) {
    Tensor out = Tensor::empty(dtype, shape);
    detail::copyElements(source, out);
    return out;
  }
  Tensor out = emptyInLayout(dtype, shape, layout);
  if (layout == Layout::NHWC) { // copy into the [N,H,W,C] buffer
    const Shape physical = out.physicalShape();
    const auto dense = contiguousStrides(physical);
    Tensor memory = Tensor::view(dtype, physical, std::span<const int64_t>(dense.data(), 4), 0, *out.storage());
    const int64_t toNhwc[] = {0, 2, 3, 1};
    detail::copyElements(transpose(source, toNhwc), memory);
  } else if (shape.numel() > 0) {
    scatter(contiguous(source), const_cast<char*>(out.physicalData()), layout, false);
  }
  return out;
}

Tensor emptyInLayout(DType dtype, const Shape& shape, Layout layout) {
  if (layout == Layout::RowMajor) return Tensor::empty(dtype, shape);
  checkLayout(layout, shape, "layout");
  return over(Storage::allocate(static_cast<size_t>(physicalBytes(layout, shape, dtype)), isBlocked(layout)), dtype,
              shape, layout);
}

Tensor denseInLayout(const Tensor& x, Layout layout) {
  const Tensor laid = toLayout(x, layout);
  if (layout == Layout::RowMajor) return laid.isContiguous() ? laid : contiguous(laid);
  return laid; // toLayout's buffers are dense, and so are wrapPhysical's
}

Tensor overStorage(Ref<Storage> storage, DType dtype, const Shape& shape, Layout layout) {
  if (layout != Layout::RowMajor) checkLayout(layout, shape, "layout");
  TSL_ASSERT(storage && storage->bytes() >= static_cast<size_t>(physicalBytes(layout, shape, dtype)),
             "overStorage: the storage is smaller than the tensor");
  return over(std::move(storage), dtype, shape, layout);
}

Tensor wrapPhysical(void* data, DType dtype, const Shape& logical, Layout layout, std::function<void(void*)> release) {
  checkLayout(layout, logical, "wrap");
  const int64_t bytes = physicalBytes(layout, logical, dtype);
  return over(Storage::wrap(data, static_cast<size_t>(bytes), std::move(release)), dtype, logical, layout);
}

} // namespace tsl
