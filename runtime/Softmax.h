// runtime/Softmax.h — softmax, log-softmax, layer-norm and the losses built on them.
//
// All are computed stably: the maximum of each row is subtracted before exp, so large
// logits never overflow. Integer inputs compute in f32.
#pragma once

#include "runtime/Tensor.h"

namespace tsl {

Tensor softmax(const Tensor& x, int64_t axis);
Tensor logSoftmax(const Tensor& x, int64_t axis);

/// (x - mean) / sqrt(var + eps) over `axis` (biased variance, no affine parameters).
Tensor layerNorm(const Tensor& x, int64_t axis, double eps);

/// Mean over the batch of -log softmax(logits)[label]: logits [N, C] with integer labels
/// [N] in [0, C) (or logits [C] with a scalar label). A scalar of the logits' dtype.
Tensor crossEntropy(const Tensor& logits, const Tensor& labels);
Shape crossEntropyShape(const Shape& logits, const Shape& labels);

/// Mean of (a - b)^2 over all elements (broadcasting); a float scalar.
Tensor mse(const Tensor& a, const Tensor& b);

/// The float type a float-only operation computes in for this input type (ints: f32).
DType floatComputeType(DType input);

} // namespace tsl
