// runtime/NeuralNet.cpp — conv2d as im2col + matrix product; max and average pooling.
//
// conv2d of f32 and f64 runs the provider a higher layer installs (the :cpu backend's
// packed convolution); otherwise, and for halves, it turns convolution into Eigen's
// matrix product: for one image, the weights are an O x (C*Kh*Kw) matrix and the input windows, unrolled into columns ("im2col"), a
// (C*Kh*Kw) x (Ho*Wo) matrix whose product is the image's output, already in NCHW order.
// The unrolled matrix is C*Kh*Kw times larger than the image, so it is built a block of
// output rows at a time, small enough to stay in cache, and never for the whole batch.
// Blocks of every image form one task list split across the thread pool (Eigen itself
// runs single-threaded here). Pooling is runtime/PoolRows.h's loop per (image, channel)
// plane, shared with the :cpu kernel library.
// Every kernel is one template over the element type; f16 and bf16 compute in float and
// round once when the result is stored.
#include "runtime/NeuralNet.h"

#include "runtime/Dispatch.h"
#include "runtime/PoolRows.h"
#include "runtime/ThreadPool.h"
#include "runtime/Views.h"

#include <Eigen/Core>
#include <algorithm>
#include <atomic>
#include <limits>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

namespace tsl {

namespace {

/// Compute type for elements stored as T: half types compute in float.
template <typename T>
using ComputeOf = std::conditional_t<std::is_same_v<T, f16> || std::is_same_v<T, bf16>, float, T>;

/// Elements of one im2col block (1 MiB of f32): large enough for the matrix product to run
/// at full speed, small enough that the block is still in cache when the product reads it.
constexpr int64_t kColumnBlockElements = int64_t(1) << 18;
/// Multiply-adds below which a task is not worth waking a worker for (a few microseconds).
constexpr int64_t kMinTaskWork = int64_t(1) << 17;
/// Largest padding accepted. Anything larger is surely a mistake, and the bound keeps
/// H + 2 * padding far from overflow.
constexpr int64_t kMaxPadding = Shape::kMaxElements;

std::string describe(const Tensor& t) {
  return cat(dtypeName(t.dtype()), t.shape().str());
}
std::string pairText(const std::array<int64_t, 2>& pair) {
  return cat("[", pair[0], ",", pair[1], "]");
}

using pool::ceilDiv;

void checkStrideAndPadding(const char* op, const std::array<int64_t, 2>& stride,
                           const std::array<int64_t, 2>& padding) {
  if (stride[0] <= 0 || stride[1] <= 0)
    fail(ErrorKind::Value, op, ": stride must be positive, got ", pairText(stride));
  if (padding[0] < 0 || padding[1] < 0)
    fail(ErrorKind::Value, op, ": padding must be non-negative, got ", pairText(padding));
  if (padding[0] > kMaxPadding || padding[1] > kMaxPadding)
    fail(ErrorKind::Value, op, ": padding ", pairText(padding), " is too large");
}

/// Window positions along one axis: floor((size + 2 * pad - kernel) / stride) + 1, or -1
/// when the window is larger than the padded axis. 128-bit arithmetic: `size` may be huge
/// in a tensor with another axis of length 0.
int64_t windowCount(int64_t size, int64_t kernel, int64_t stride, int64_t pad) {
  const __int128 padded = static_cast<__int128>(size) + 2 * static_cast<__int128>(pad);
  if (kernel > padded) return -1;
  const __int128 count = (padded - kernel) / stride + 1;
  if (count > std::numeric_limits<int64_t>::max()) fail(ErrorKind::Value, "window count overflows");
  return static_cast<int64_t>(count);
}

/// The spatial output size, or a shape error when the window does not fit the padded input.
std::array<int64_t, 2> windowCounts(const char* op, const Shape& x,
                                    const std::array<int64_t, 2>& kernel,
                                    const std::array<int64_t, 2>& stride,
                                    const std::array<int64_t, 2>& padding,
                                    const std::string& operands) {
  const int64_t ho = windowCount(x[2], kernel[0], stride[0], padding[0]);
  const int64_t wo = windowCount(x[3], kernel[1], stride[1], padding[1]);
  if (ho < 0 || wo < 0)
    fail(ErrorKind::Shape, op, ": the ", kernel[0], "x", kernel[1],
         " window is larger than the padded ", x[2] + 2 * padding[0], "x", x[3] + 2 * padding[1],
         " input (", operands, ", padding ", pairText(padding), ")");
  return {ho, wo};
}

/// The output shape of conv2d; `operands` describes x and w for messages.
Shape convOutputShape(const Shape& x, const Shape& w, const Conv2dAttrs& attrs,
                      const std::string& operands) {
  if (x.rank() != 4)
    fail(ErrorKind::Shape, "conv2d: the input must have rank 4 (N,C,H,W) but has rank ", x.rank(),
         " (", operands, ")");
  if (w.rank() != 4)
    fail(ErrorKind::Shape, "conv2d: the weights must have rank 4 (O,C,Kh,Kw) but have rank ",
         w.rank(), " (", operands, ")");
  if (x[1] != w[1])
    fail(ErrorKind::Shape, "conv2d: input has ", x[1], " channels but the weights expect ", w[1],
         " (", operands, ")");
  if (w[2] == 0 || w[3] == 0)
    fail(ErrorKind::Shape, "conv2d: the weights have an empty ", w[2], "x", w[3], " kernel (",
         operands, ")");
  checkStrideAndPadding("conv2d", attrs.stride, attrs.padding);
  const auto [ho, wo] =
      windowCounts("conv2d", x, {w[2], w[3]}, attrs.stride, attrs.padding, operands);
  return Shape{x[0], w[0], ho, wo};
}

/// The output shape of pooling named `op`; `operand` describes x for messages.
Shape poolOutputShape(const char* op, const Shape& x, const Pool2dAttrs& attrs,
                      const std::string& operand) {
  if (x.rank() != 4)
    fail(ErrorKind::Shape, op, ": the input must have rank 4 (N,C,H,W) but has rank ", x.rank(),
         " (", operand, ")");
  if (attrs.kernel[0] <= 0 || attrs.kernel[1] <= 0)
    fail(ErrorKind::Value, op, ": kernel must be positive, got ", pairText(attrs.kernel));
  checkStrideAndPadding(op, attrs.stride, attrs.padding);
  // PyTorch's rule: it makes every window overlap a non-empty input, so no max is -inf.
  if (attrs.padding[0] > attrs.kernel[0] / 2 || attrs.padding[1] > attrs.kernel[1] / 2)
    fail(ErrorKind::Value, op, ": padding ", pairText(attrs.padding),
         " is more than half the kernel ", pairText(attrs.kernel));
  const auto [ho, wo] = windowCounts(op, x, attrs.kernel, attrs.stride, attrs.padding, operand);
  return Shape{x[0], x[1], ho, wo};
}

using Geometry = ConvGeometry;

std::atomic<ConvProvider> installedConvProvider{nullptr};

Geometry geometry(const Shape& x, const Shape& out, const std::array<int64_t, 2>& kernel,
                  const std::array<int64_t, 2>& stride, const std::array<int64_t, 2>& padding) {
  return {x[0],      x[1],      x[2],       x[3],       out[1], kernel[0], kernel[1],
          stride[0], stride[1], padding[0], padding[1], out[2], out[3]};
}

/// The output columns [begin, end) of conv2d whose window column kj is inside the image.
std::pair<int64_t, int64_t> validColumns(const Geometry& g, int64_t kj) {
  return pool::validColumns({g.h, g.w, g.kh, g.kw, g.sh, g.sw, g.ph, g.pw, g.ho, g.wo}, kj);
}

/// Unrolls the windows of output rows [i0, i1) of one image (C*H*W contiguous elements)
/// into `col`, a row-major (C*Kh*Kw) x ((i1 - i0) * Wo) matrix: row (c, ki, kj) holds
/// the input element each output position multiplies by w[., c, ki, kj], 0 in padding.
template <typename T, typename C>
void im2col(const T* image, const Geometry& g, int64_t i0, int64_t i1, C* col) {
  const int64_t columns = (i1 - i0) * g.wo;
  for (int64_t c = 0; c < g.c; ++c)
    for (int64_t ki = 0; ki < g.kh; ++ki)
      for (int64_t kj = 0; kj < g.kw; ++kj) {
        C* dst = col + ((c * g.kh + ki) * g.kw + kj) * columns;
        const auto [jBegin, jEnd] = validColumns(g, kj);
        for (int64_t i = i0; i < i1; ++i, dst += g.wo) {
          const int64_t ih = i * g.sh - g.ph + ki;
          if (ih < 0 || ih >= g.h || jBegin == jEnd) {
            std::fill(dst, dst + g.wo, C(0));
            continue;
          }
          const T* src = image + (c * g.h + ih) * g.w + (jBegin * g.sw - g.pw + kj);
          std::fill(dst, dst + jBegin, C(0));
          // Stride 1 is a plain copy the compiler turns into memcpy or vector converts.
          if (g.sw == 1)
            for (int64_t j = jBegin; j < jEnd; ++j) dst[j] = convertElement<C>(src[j - jBegin]);
          else
            for (int64_t j = jBegin; j < jEnd; ++j)
              dst[j] = convertElement<C>(src[(j - jBegin) * g.sw]);
          std::fill(dst + jEnd, dst + g.wo, C(0));
        }
      }
}

template <typename T>
Tensor convolve(const Tensor& xView, const Tensor& wView, const Geometry& g,
                const Shape& outShape) {
  using C = ComputeOf<T>;
  using RowMajor = Eigen::Matrix<C, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  using StridedMap = Eigen::Map<RowMajor, Eigen::Unaligned, Eigen::OuterStride<>>;
  using ConstStridedMap = Eigen::Map<const RowMajor, Eigen::Unaligned, Eigen::OuterStride<>>;
  constexpr bool kComputesInPlace = std::is_same_v<T, C>;

  Tensor out = Tensor::empty(dtypeOf<T>(), outShape);
  if (out.numel() == 0) return out;
  T* outData = reinterpret_cast<T*>(out.mutableData());
  const int64_t depth = g.c * g.kh * g.kw, positions = g.ho * g.wo;
  if (depth == 0) { // no input channels: every sum is empty
    std::fill(outData, outData + out.numel(), T(0));
    return out;
  }
  const Tensor x = contiguous(xView), w = contiguous(wView);
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
    if (ConvProvider provider = convProvider();
        provider && provider(ConvPass::Forward, dtypeOf<T>(), x.data(), w.data(), outData, g))
      return out;
  }
  const T* xData = reinterpret_cast<const T*>(x.data());

  // The weights as an O x depth matrix of the compute type (converted once for halves).
  std::vector<C> wConverted;
  const C* wData;
  if constexpr (kComputesInPlace) {
    wData = reinterpret_cast<const C*>(w.data());
  } else {
    const T* raw = reinterpret_cast<const T*>(w.data());
    wConverted.resize(static_cast<size_t>(w.numel()));
    for (size_t i = 0; i < wConverted.size(); ++i) wConverted[i] = convertElement<C>(raw[i]);
    wData = wConverted.data();
  }

  // A 1x1 kernel with stride 1 and no padding reads the image itself as its columns.
  const bool readsImage = kComputesInPlace && g.kh == 1 && g.kw == 1 && g.sh == 1 && g.sw == 1 &&
                          g.ph == 0 && g.pw == 0;
  int64_t rowsPerBlock = std::clamp<int64_t>(kColumnBlockElements / (depth * g.wo), 1, g.ho);
  // Fewer images than threads would leave threads idle: cut images into more blocks, as
  // long as each block stays worth a task.
  const int64_t blocksWanted = ceilDiv(threadCount(), g.n);
  if (blocksWanted > 1) {
    const int64_t rows = std::max<int64_t>(1, g.ho / blocksWanted);
    if (rows * g.wo * depth * g.o >= kMinTaskWork) rowsPerBlock = std::min(rowsPerBlock, rows);
  }
  const int64_t blocksPerImage = ceilDiv(g.ho, rowsPerBlock);
  const int64_t blockWork = rowsPerBlock * g.wo * depth * g.o;
  const int64_t grain = std::max<int64_t>(1, kMinTaskWork / blockWork);

  parallelFor(g.n * blocksPerImage, grain, [&](int64_t begin, int64_t end) {
    const int64_t blockColumns = rowsPerBlock * g.wo;
    std::unique_ptr<C[]> col(readsImage ? nullptr : new C[depth * blockColumns]);
    // Halves: the product lands in float and is rounded once when stored.
    std::unique_ptr<C[]> product(kComputesInPlace ? nullptr : new C[g.o * blockColumns]);
    const Eigen::Map<const RowMajor> weights(wData, g.o, depth);
    for (int64_t task = begin; task < end; ++task) {
      const int64_t image = task / blocksPerImage;
      const int64_t i0 = task % blocksPerImage * rowsPerBlock,
                    i1 = std::min(g.ho, i0 + rowsPerBlock);
      const int64_t p0 = i0 * g.wo, columns = (i1 - i0) * g.wo;
      const T* imageData = xData + image * g.c * g.h * g.w;
      T* outBlock = outData + image * g.o * positions + p0;

      const C* colData = col.get();
      int64_t colStride = columns;
      if constexpr (kComputesInPlace) {
        if (readsImage) {
          colData = imageData + p0;
          colStride = positions;
        }
      }
      if (!readsImage) im2col(imageData, g, i0, i1, col.get());
      const ConstStridedMap windows(colData, depth, columns, Eigen::OuterStride<>(colStride));

      if constexpr (kComputesInPlace) {
        // Row o of the product is channel o of the output, so it is written in place.
        StridedMap(outBlock, g.o, columns, Eigen::OuterStride<>(positions)).noalias() =
            weights * windows;
      } else {
        Eigen::Map<RowMajor> result(product.get(), g.o, columns);
        result.noalias() = weights * windows;
        for (int64_t o = 0; o < g.o; ++o)
          for (int64_t p = 0; p < columns; ++p)
            outBlock[o * positions + p] = convertElement<T>(result(o, p));
      }
    }
  });
  return out;
}

using PoolKind = pool::Kind;

template <PoolKind kind, typename T>
Tensor pool(const Tensor& xView, const Geometry& g, const Shape& outShape) {
  using C = ComputeOf<T>;
  Tensor out = Tensor::empty(dtypeOf<T>(), outShape);
  if (out.numel() == 0) return out;
  const Tensor x = contiguous(xView);
  const T* xData = reinterpret_cast<const T*>(x.data());
  T* outData = reinterpret_cast<T*>(out.mutableData());
  const pool::Plane plane{g.h, g.w, g.kh, g.kw, g.sh, g.sw, g.ph, g.pw, g.ho, g.wo};
  const int64_t planeWork = std::max<int64_t>(1, g.ho * g.wo * g.kh * g.kw);
  const int64_t grain = std::max<int64_t>(1, kMinTaskWork / planeWork);
  parallelFor(g.n * g.c, grain, [&](int64_t begin, int64_t end) {
    std::vector<C> acc(static_cast<size_t>(g.wo));
    for (int64_t p = begin; p < end; ++p)
      pool::poolPlane<kind>(xData + p * g.h * g.w, outData + p * g.ho * g.wo, plane, acc.data(),
                            [](T v) { return convertElement<C>(v); }, [](C v) { return convertElement<T>(v); });
  });
  return out;
}

template <PoolKind kind>
Tensor poolTensor(const char* op, const Tensor& x, const Pool2dAttrs& attrs) {
  const std::string operand = cat("x ", describe(x));
  if (!isFloat(x.dtype()))
    fail(ErrorKind::Type, op, ": expects a floating-point tensor (", operand, ")");
  const Shape outShape = poolOutputShape(op, x.shape(), attrs, operand);
  const Geometry g = geometry(x.shape(), outShape, attrs.kernel, attrs.stride, attrs.padding);
  return dispatchDType(x.dtype(), [&](auto tag) -> Tensor {
    using T = decltype(tag);
    if constexpr (kIsFloatElement<T>)
      return pool<kind, T>(x, g, outShape);
    else
      fail(ErrorKind::Internal, op, ": non-float dtype reached the kernel");
  });
}

} // namespace

void setConvProvider(ConvProvider provider) { installedConvProvider.store(provider, std::memory_order_release); }
ConvProvider convProvider() { return installedConvProvider.load(std::memory_order_acquire); }

Shape conv2dShape(const Shape& x, const Shape& w, const Conv2dAttrs& attrs) {
  return convOutputShape(x, w, attrs, cat("x ", x.str(), ", w ", w.str()));
}

Tensor conv2d(const Tensor& x, const Tensor& w, const Conv2dAttrs& attrs) {
  const std::string operands = cat("x ", describe(x), ", w ", describe(w));
  if (!isFloat(x.dtype()) || !isFloat(w.dtype()))
    fail(ErrorKind::Type, "conv2d: expects floating-point tensors (", operands, ")");
  if (x.dtype() != w.dtype())
    fail(ErrorKind::Type, "conv2d: the input and the weights have different dtypes (", operands,
         ")");
  const Shape outShape = convOutputShape(x.shape(), w.shape(), attrs, operands);
  const Geometry g =
      geometry(x.shape(), outShape, {w.shape()[2], w.shape()[3]}, attrs.stride, attrs.padding);
  return dispatchDType(x.dtype(), [&](auto tag) -> Tensor {
    using T = decltype(tag);
    if constexpr (kIsFloatElement<T>)
      return convolve<T>(x, w, g, outShape);
    else
      fail(ErrorKind::Internal, "conv2d: non-float dtype reached the kernel");
  });
}

Shape pool2dShape(const Shape& x, const Pool2dAttrs& attrs) {
  return poolOutputShape("pool2d", x, attrs, cat("x ", x.str()));
}

Tensor maxPool2d(const Tensor& x, const Pool2dAttrs& attrs) {
  return poolTensor<PoolKind::Max>("max-pool2d", x, attrs);
}

Tensor avgPool2d(const Tensor& x, const Pool2dAttrs& attrs) {
  return poolTensor<PoolKind::Average>("avg-pool2d", x, attrs);
}

} // namespace tsl
