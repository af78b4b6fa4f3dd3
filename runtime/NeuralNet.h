// runtime/NeuralNet.h — the neural-network primitives of docs/language.md §4.
//
// Shapes are logical: images are NCHW, convolution weights OIHW. Every function checks
// its operands and reports shape or value errors naming itself; the type and shape rules
// (the *Type functions) are the ones the kernels use, so eager execution and the IR agree.
#pragma once

#include "runtime/Tensor.h"

#include <array>

namespace tsl {

struct Conv2dAttrs {
  std::array<int64_t, 2> stride{1, 1};
  std::array<int64_t, 2> padding{0, 0}; ///< zeros added on each side of H and W
  bool operator==(const Conv2dAttrs&) const = default;
};

struct Pool2dAttrs {
  std::array<int64_t, 2> kernel{1, 1};
  std::array<int64_t, 2> stride{1, 1}; ///< defaults to the kernel (set by the caller)
  std::array<int64_t, 2> padding{0, 0};
  bool operator==(const Pool2dAttrs&) const = default;
};

/// Output shape of conv2d: x [N,C,H,W], w [O,C,Kh,Kw] -> [N,O,Ho,Wo] with
/// Ho = (H + 2*ph - Kh) / sh + 1. Shape errors for mismatched channels, ranks, or a
/// kernel larger than the padded input; value errors for non-positive strides.
Shape conv2dShape(const Shape& x, const Shape& w, const Conv2dAttrs& attrs);
/// 2-D convolution (cross-correlation, as in PyTorch) of float tensors of one dtype.
Tensor conv2d(const Tensor& x, const Tensor& w, const Conv2dAttrs& attrs);

/// Sizes of one convolution or pooling, all checked (for pooling, o == c).
struct ConvGeometry {
  int64_t n, c, h, w; ///< input
  int64_t o;          ///< output channels
  int64_t kh, kw, sh, sw, ph, pw;
  int64_t ho, wo; ///< output
};

/// Which convolution a ConvProvider computes, from contiguous operands of geometry g:
enum class ConvPass {
  Forward,    ///< out [n,o,ho,wo] from a = x [n,c,h,w] and b = w [o,c,kh,kw]
  GradInput,  ///< out = x's cotangent [n,c,h,w] from a = ct [n,o,ho,wo] and b = w
  GradWeight, ///< out = w's cotangent [o,c,kh,kw] from a = x and b = ct
};
/// Convolutions a higher layer may provide for f32 and f64 (compiler/ installs the :cpu
/// backend's packed convolution, so eager conv2d and its derivatives run the code
/// compiled ones run). Returns false when it cannot run (then im2col and Eigen's GEMM do).
using ConvProvider = bool (*)(ConvPass pass, DType dtype, const void* a, const void* b, void* out,
                              const ConvGeometry& g);
void setConvProvider(ConvProvider provider);
/// The installed provider, or null.
ConvProvider convProvider();

/// Output shape of pooling over [N,C,H,W].
Shape pool2dShape(const Shape& x, const Pool2dAttrs& attrs);
/// Max over each window; padding counts as -inf.
Tensor maxPool2d(const Tensor& x, const Pool2dAttrs& attrs);
/// Mean over each window; padding counts as 0 and is included in the divisor
/// (PyTorch's count_include_pad=True).
Tensor avgPool2d(const Tensor& x, const Pool2dAttrs& attrs);

} // namespace tsl
