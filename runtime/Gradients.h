// runtime/Gradients.h — the adjoint operations reverse-mode autodiff emits.
//
// Derivatives are ordinary IR (autodiff/), and most of them are built from the primitives
// of docs/language.md §4. These are the few that are not: each is the adjoint (transpose) of a
// primitive's linear part — scattering back what a slice, a take, a convolution or a
// pooling gathered. They are operations of the table like any other (so derivatives can
// be printed, optimised and differentiated again) but have no TSL name of their own.
#pragma once

#include "runtime/NeuralNet.h"
#include "runtime/Views.h"

namespace tsl {

/// slice_grad: a tensor of `shape` that is zero except on the slice `ranges`, which holds
/// `ct` (the cotangent of (slice x ranges) for x of `shape`).
Tensor sliceGrad(const Tensor& ct, std::span<const SliceRange> ranges, const Shape& shape);
Shape sliceGradShape(const Shape& ct, std::span<const SliceRange> ranges, const Shape& shape);

/// take_grad: the cotangent of (take x indices :axis axis) for x with `size` entries along
/// axis — ct's slices added at their indices (repeated indices accumulate).
Tensor takeGrad(const Tensor& ct, const Tensor& indices, int64_t axis, int64_t size);
Shape takeGradShape(const Shape& ct, const Shape& indices, int64_t axis, int64_t size);

/// The cotangent of conv2d's input x (of shape `x`) given ct [N,O,Ho,Wo] and weights w.
Tensor conv2dGradInput(const Tensor& ct, const Tensor& w, const Conv2dAttrs& attrs, const Shape& x);
/// The cotangent of conv2d's weights w (of shape `w`) given the input x and ct.
Tensor conv2dGradWeight(const Tensor& x, const Tensor& ct, const Conv2dAttrs& attrs, const Shape& w);
/// Checks the operands of either (ct must be conv2d's output shape for x and w).
void checkConv2dGrad(const Shape& x, const Shape& w, const Shape& ct, const Conv2dAttrs& attrs, const char* op);

/// The cotangent of max-pool2d's input: each window's ct goes to its maximum, split evenly
/// among tied maxima (the convention of docs/language.md §5 for max).
Tensor maxPool2dGrad(const Tensor& x, const Tensor& ct, const Pool2dAttrs& attrs);
/// The cotangent of avg-pool2d's input (of shape `x`): each window's ct spread evenly
/// over its kernel-size cells (padding included in the divisor, as the forward counts it).
Tensor avgPool2dGrad(const Tensor& ct, const Pool2dAttrs& attrs, const Shape& x);
/// Checks that ct has the pooled shape of x.
void checkPool2dGrad(const Shape& x, const Shape& ct, const Pool2dAttrs& attrs, const char* op);

} // namespace tsl
