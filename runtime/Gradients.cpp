// runtime/Gradients.cpp — adjoints of slice, take, conv2d and pooling.
//
// slice_grad writes ct into a strided view of a zero tensor. take_grad adds ct's blocks
// at their indices. The convolution adjoints reuse conv2d's layout: per image, the input
// cotangent is Wᵀ·ct (a (C·Kh·Kw) × (Ho·Wo) matrix product on Eigen) folded back onto the
// image ("col2im"), the weight cotangent is ct·colsᵀ summed over images, with cols the
// unrolled input windows. Pooling adjoints loop over windows. Every kernel is one template
// over the float element type; f16 and bf16 accumulate in float.
#include "runtime/Gradients.h"

#include "runtime/Dispatch.h"
#include "runtime/Layout.h"
#include "runtime/Elementwise.h"
#include "runtime/Structure.h"

#include <Eigen/Core>
#include <cstring>
#include <optional>
#include <type_traits>
#include <vector>

namespace tsl {

namespace {

template <typename T>
using ComputeOf = std::conditional_t<std::is_same_v<T, f16> || std::is_same_v<T, bf16>, float, T>;

template <typename C>
using Matrix = Eigen::Matrix<C, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

/// The elements of a float tensor in compute precision, row-major.
template <typename T>
std::vector<ComputeOf<T>> load(const Tensor& t) {
  const Tensor c = contiguous(t);
  const T* p = reinterpret_cast<const T*>(c.data());
  std::vector<ComputeOf<T>> out(static_cast<size_t>(c.numel()));
  for (size_t i = 0; i < out.size(); ++i) out[i] = static_cast<ComputeOf<T>>(p[i]);
  return out;
}

template <typename T>
Tensor store(const std::vector<ComputeOf<T>>& values, const Shape& shape) {
  Tensor out = Tensor::empty(dtypeOf<T>(), shape);
  T* p = reinterpret_cast<T*>(out.mutableData());
  for (size_t i = 0; i < values.size(); ++i) p[i] = convertElement<T>(values[i]);
  return out;
}

void requireFloat(const Tensor& t, const char* op) {
  if (!isFloat(t.dtype())) fail(ErrorKind::Type, op, ": expects a float tensor, got ", dtypeName(t.dtype()));
}

void requireSameDType(const Tensor& a, const Tensor& b, const char* op) {
  if (a.dtype() != b.dtype())
    fail(ErrorKind::Type, op, ": operands must have one dtype, got ", dtypeName(a.dtype()), " and ", dtypeName(b.dtype()));
}

/// Calls fn(T{}) for the float element type of `dtype`.
template <typename Fn>
Tensor withFloat(DType dtype, Fn&& fn) {
  return dispatchDType(dtype, [&](auto tag) -> Tensor {
    using T = decltype(tag);
    if constexpr (kIsFloatElement<T>) return fn(tag);
    else fail(ErrorKind::Internal, "a float kernel given ", dtypeName(dtype));
  });
}

} // namespace

// ---- slice_grad ----

Shape sliceGradShape(const Shape& ct, std::span<const SliceRange> ranges, const Shape& shape) {
  (void)shape.numel();
  const Shape sliced = sliceShape(shape, ranges);
  if (sliced != ct)
    fail(ErrorKind::Shape, "slice_grad: the cotangent ", ct.str(), " is not the shape ", sliced.str(), " the slice of ",
         shape.str(), " has");
  return shape;
}

Tensor sliceGrad(const Tensor& ct, std::span<const SliceRange> ranges, const Shape& shape) {
  sliceGradShape(ct.shape(), ranges, shape);
  Tensor out = Tensor::zeros(ct.dtype(), shape);
  if (ct.numel() == 0) return out;
  if (shape.rank() == 0) return ct.isScalar() ? ct.strengthened() : ct;
  Tensor region = slice(out, ranges);
  copyInto(ct, region);
  return out;
}

// ---- take_grad ----

Shape takeGradShape(const Shape& ct, const Shape& indices, int64_t axis, int64_t size) {
  if (size < 0) fail(ErrorKind::Value, "take_grad: size must not be negative, got ", size);
  const int rank = ct.rank() - indices.rank() + 1; // rank of take's input
  if (rank < 1) fail(ErrorKind::Shape, "take_grad: the cotangent ", ct.str(), " has fewer axes than the indices ", indices.str());
  const int a = normalizeAxis(axis, rank);
  Shape out;
  for (int d = 0; d < a; ++d) out.push(ct[d]);
  out.push(size);
  for (int d = 0; d < indices.rank(); ++d)
    if (ct[a + d] != indices[d])
      fail(ErrorKind::Shape, "take_grad: the cotangent ", ct.str(), " does not hold the indices' shape ", indices.str(),
           " at axis ", a);
  for (int d = a + indices.rank(); d < ct.rank(); ++d) out.push(ct[d]);
  (void)out.numel();
  return out;
}

Tensor takeGrad(const Tensor& ct, const Tensor& indices, int64_t axis, int64_t size) {
  requireFloat(ct, "take_grad");
  if (!isInteger(indices.dtype())) fail(ErrorKind::Type, "take_grad: indices must be integers");
  const Shape shape = takeGradShape(ct.shape(), indices.shape(), axis, size);
  const int a = normalizeAxis(axis, shape.rank());
  const Tensor idx = contiguous(astype(indices, DType::I64));
  const int64_t* ip = reinterpret_cast<const int64_t*>(idx.data());
  const int64_t count = idx.numel();
  int64_t outer = 1, inner = 1;
  for (int d = 0; d < a; ++d) outer *= shape[d];
  for (int d = a + 1; d < shape.rank(); ++d) inner *= shape[d];
  for (int64_t k = 0; k < count; ++k)
    if (ip[k] < -size || ip[k] >= size)
      fail(ErrorKind::Value, "take_grad: index ", ip[k], " is out of range for axis ", a, " of size ", size);
  return withFloat(ct.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const auto g = load<T>(ct);
    std::vector<ComputeOf<T>> out(static_cast<size_t>(shape.numel()), ComputeOf<T>(0));
    for (int64_t i = 0; i < outer; ++i)
      for (int64_t k = 0; k < count; ++k) {
        const int64_t at = ip[k] < 0 ? ip[k] + size : ip[k];
        const auto* from = g.data() + (i * count + k) * inner;
        auto* to = out.data() + (i * size + at) * inner;
        for (int64_t j = 0; j < inner; ++j) to[j] += from[j];
      }
    return store<T>(out, shape);
  });
}

// ---- conv2d ----

void checkConv2dGrad(const Shape& x, const Shape& w, const Shape& ct, const Conv2dAttrs& attrs, const char* op) {
  const Shape expected = conv2dShape(x, w, attrs);
  if (ct != expected)
    fail(ErrorKind::Shape, op, ": the cotangent ", ct.str(), " is not conv2d's output shape ", expected.str(), " for ",
         x.str(), " and ", w.str());
}

namespace {

/// Geometry of one convolution: input [n,c,h,w], weights [o,c,kh,kw], output [n,o,ho,wo].
struct Conv {
  int64_t n, c, h, w, o, kh, kw, ho, wo, sh, sw, ph, pw;
  Conv(const Shape& x, const Shape& wt, const Shape& out, const Conv2dAttrs& a)
      : n(x[0]), c(x[1]), h(x[2]), w(x[3]), o(wt[0]), kh(wt[2]), kw(wt[3]), ho(out[2]), wo(out[3]),
        sh(a.stride[0]), sw(a.stride[1]), ph(a.padding[0]), pw(a.padding[1]) {}
  int64_t rows() const { return c * kh * kw; }
  int64_t cols() const { return ho * wo; }
};

/// The cotangent of `shape` the installed ConvProvider computes from a and b (f32, f64),
/// or nothing when there is none or it declines.
std::optional<Tensor> provided(ConvPass pass, const Tensor& a, const Tensor& b, const Shape& shape, const Conv& c) {
  const ConvProvider provider = convProvider();
  if (!provider || (a.dtype() != DType::F32 && a.dtype() != DType::F64) || b.dtype() != a.dtype()) return std::nullopt;
  const Tensor ac = contiguous(plain(a)), bc = contiguous(plain(b));
  Tensor out = Tensor::empty(a.dtype(), shape);
  const ConvGeometry g{c.n, c.c, c.h, c.w, c.o, c.kh, c.kw, c.sh, c.sw, c.ph, c.pw, c.ho, c.wo};
  if (!provider(pass, a.dtype(), ac.data(), bc.data(), out.mutableData(), g)) return std::nullopt;
  return out;
}

/// Unrolls image `img` (c×h×w) into cols (rows × cols), zero where a window is padding.
template <typename C>
void im2col(const Conv& g, const C* img, C* cols) {
  for (int64_t ci = 0; ci < g.c; ++ci)
    for (int64_t i = 0; i < g.kh; ++i)
      for (int64_t j = 0; j < g.kw; ++j) {
        C* row = cols + ((ci * g.kh + i) * g.kw + j) * g.cols();
        for (int64_t y = 0; y < g.ho; ++y) {
          const int64_t iy = y * g.sh - g.ph + i;
          for (int64_t x = 0; x < g.wo; ++x) {
            const int64_t ix = x * g.sw - g.pw + j;
            row[y * g.wo + x] = iy >= 0 && iy < g.h && ix >= 0 && ix < g.w ? img[(ci * g.h + iy) * g.w + ix] : C(0);
          }
        }
      }
}

/// Adds the columns back onto image `img` (the adjoint of im2col).
template <typename C>
void col2im(const Conv& g, const C* cols, C* img) {
  for (int64_t ci = 0; ci < g.c; ++ci)
    for (int64_t i = 0; i < g.kh; ++i)
      for (int64_t j = 0; j < g.kw; ++j) {
        const C* row = cols + ((ci * g.kh + i) * g.kw + j) * g.cols();
        for (int64_t y = 0; y < g.ho; ++y) {
          const int64_t iy = y * g.sh - g.ph + i;
          if (iy < 0 || iy >= g.h) continue;
          for (int64_t x = 0; x < g.wo; ++x) {
            const int64_t ix = x * g.sw - g.pw + j;
            if (ix >= 0 && ix < g.w) img[(ci * g.h + iy) * g.w + ix] += row[y * g.wo + x];
          }
        }
      }
}

} // namespace

Tensor conv2dGradInput(const Tensor& ct, const Tensor& w, const Conv2dAttrs& attrs, const Shape& x) {
  requireFloat(ct, "conv2d_grad_input");
  requireSameDType(ct, w, "conv2d_grad_input");
  checkConv2dGrad(x, w.shape(), ct.shape(), attrs, "conv2d_grad_input");
  const Conv g(x, w.shape(), ct.shape(), attrs);
  if (std::optional<Tensor> out = provided(ConvPass::GradInput, ct, w, x, g)) return *out;
  return withFloat(ct.dtype(), [&](auto tag) {
    using T = decltype(tag);
    using C = ComputeOf<T>;
    const auto gv = load<T>(ct), wv = load<T>(w);
    std::vector<C> out(static_cast<size_t>(x.numel()), C(0));
    const Eigen::Map<const Matrix<C>> wm(wv.data(), g.o, g.rows());
    Matrix<C> cols(g.rows(), g.cols());
    for (int64_t b = 0; b < g.n; ++b) {
      const Eigen::Map<const Matrix<C>> gm(gv.data() + b * g.o * g.cols(), g.o, g.cols());
      cols.noalias() = wm.transpose() * gm;
      col2im(g, cols.data(), out.data() + b * g.c * g.h * g.w);
    }
    return store<T>(out, x);
  });
}

Tensor conv2dGradWeight(const Tensor& x, const Tensor& ct, const Conv2dAttrs& attrs, const Shape& w) {
  requireFloat(ct, "conv2d_grad_weight");
  requireSameDType(x, ct, "conv2d_grad_weight");
  checkConv2dGrad(x.shape(), w, ct.shape(), attrs, "conv2d_grad_weight");
  const Conv g(x.shape(), w, ct.shape(), attrs);
  if (std::optional<Tensor> out = provided(ConvPass::GradWeight, x, ct, w, g)) return *out;
  return withFloat(ct.dtype(), [&](auto tag) {
    using T = decltype(tag);
    using C = ComputeOf<T>;
    const auto xv = load<T>(x), gv = load<T>(ct);
    Matrix<C> dw = Matrix<C>::Zero(g.o, g.rows());
    Matrix<C> cols(g.rows(), g.cols());
    for (int64_t b = 0; b < g.n; ++b) {
      im2col(g, xv.data() + b * g.c * g.h * g.w, cols.data());
      const Eigen::Map<const Matrix<C>> gm(gv.data() + b * g.o * g.cols(), g.o, g.cols());
      dw.noalias() += gm * cols.transpose();
    }
    return store<T>(std::vector<C>(dw.data(), dw.data() + dw.size()), w);
  });
}

// ---- pooling ----

void checkPool2dGrad(const Shape& x, const Shape& ct, const Pool2dAttrs& attrs, const char* op) {
  const Shape expected = pool2dShape(x, attrs);
  if (ct != expected)
    fail(ErrorKind::Shape, op, ": the cotangent ", ct.str(), " is not the pooled shape ", expected.str(), " of ", x.str());
}

namespace {

/// Calls fn(plane, y, x, cell) for each valid input cell of each output window.
struct Windows {
  int64_t planes, h, w, ho, wo, kh, kw, sh, sw, ph, pw;
  Windows(const Shape& x, const Shape& out, const Pool2dAttrs& a)
      : planes(x[0] * x[1]), h(x[2]), w(x[3]), ho(out[2]), wo(out[3]), kh(a.kernel[0]), kw(a.kernel[1]),
        sh(a.stride[0]), sw(a.stride[1]), ph(a.padding[0]), pw(a.padding[1]) {}
};

} // namespace

Tensor maxPool2dGrad(const Tensor& x, const Tensor& ct, const Pool2dAttrs& attrs) {
  requireFloat(x, "max_pool2d_grad");
  requireSameDType(x, ct, "max_pool2d_grad");
  checkPool2dGrad(x.shape(), ct.shape(), attrs, "max_pool2d_grad");
  const Windows g(x.shape(), ct.shape(), attrs);
  return withFloat(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    using C = ComputeOf<T>;
    const auto xv = load<T>(x), gv = load<T>(ct);
    std::vector<C> out(xv.size(), C(0));
    std::vector<int64_t> tied;
    for (int64_t p = 0; p < g.planes; ++p)
      for (int64_t y = 0; y < g.ho; ++y)
        for (int64_t xo = 0; xo < g.wo; ++xo) {
          tied.clear();
          C best = C(0);
          for (int64_t i = 0; i < g.kh; ++i)
            for (int64_t j = 0; j < g.kw; ++j) {
              const int64_t iy = y * g.sh - g.ph + i, ix = xo * g.sw - g.pw + j;
              if (iy < 0 || iy >= g.h || ix < 0 || ix >= g.w) continue;
              const int64_t at = (p * g.h + iy) * g.w + ix;
              if (tied.empty() || xv[at] > best) {
                best = xv[at];
                tied.assign(1, at);
              } else if (xv[at] == best) {
                tied.push_back(at);
              }
            }
          const C share = gv[(p * g.ho + y) * g.wo + xo] / static_cast<C>(tied.size());
          for (int64_t at : tied) out[at] += share;
        }
    return store<T>(out, x.shape());
  });
}

Tensor avgPool2dGrad(const Tensor& ct, const Pool2dAttrs& attrs, const Shape& x) {
  requireFloat(ct, "avg_pool2d_grad");
  checkPool2dGrad(x, ct.shape(), attrs, "avg_pool2d_grad");
  const Windows g(x, ct.shape(), attrs);
  return withFloat(ct.dtype(), [&](auto tag) {
    using T = decltype(tag);
    using C = ComputeOf<T>;
    const auto gv = load<T>(ct);
    std::vector<C> out(static_cast<size_t>(x.numel()), C(0));
    const C scale = C(1) / static_cast<C>(g.kh * g.kw);
    for (int64_t p = 0; p < g.planes; ++p)
      for (int64_t y = 0; y < g.ho; ++y)
        for (int64_t xo = 0; xo < g.wo; ++xo) {
          const C share = gv[(p * g.ho + y) * g.wo + xo] * scale;
          for (int64_t i = 0; i < g.kh; ++i)
            for (int64_t j = 0; j < g.kw; ++j) {
              const int64_t iy = y * g.sh - g.ph + i, ix = xo * g.sw - g.pw + j;
              if (iy >= 0 && iy < g.h && ix >= 0 && ix < g.w) out[(p * g.h + iy) * g.w + ix] += share;
            }
        }
    return store<T>(out, x);
  });
}

} // namespace tsl
