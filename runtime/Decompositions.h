// runtime/Decompositions.h — linear algebra on the last two axes: solve, inv, det,
// slogdet, cholesky, qr, svd, eigh, trace and diag.
//
// The rows are runtime/LinalgRows.h's; this header declares their type rules and kernel
// adapters (runtime/OpTable.cpp builds the table from them) and the kernels themselves.
// Every kernel is batched over the leading axes and runs on Eigen, one matrix at a time:
// f64 in f64, every other float (and integers, promoted to f32) in f32, half types rounded
// once to their dtype at the end. Decompositions follow LAPACK's conventions as NumPy
// reports them: reduced qr and svd, s descending, eigh's w ascending, cholesky and eigh
// reading only the lower triangle.
#pragma once

#include "runtime/Ops.h"

namespace tsl {

/// x with a·x = b: a [..., n, n]; b a vector [n] (x [..., n]) or [..., n, k] (x [..., n, k]),
/// the batch axes broadcast. A singular a (an exact zero pivot) is a value error.
Tensor solve(const Tensor& a, const Tensor& b);
Tensor inv(const Tensor& a);
Tensor det(const Tensor& a);
/// Part 0: the determinant's sign (0 when singular); part 1: log |det| (-inf when singular).
Tensor slogdet(const Tensor& a, int64_t part);
Tensor cholesky(const Tensor& a);
Tensor qr(const Tensor& a, int64_t part);
Tensor svd(const Tensor& a, int64_t part);
Tensor eigh(const Tensor& a, int64_t part);
Tensor trace(const Tensor& a);
Tensor diag(const Tensor& a);

// ---- The rows' type rules and kernel adapters ----

TensorType solveType(const OpAttrs&, std::span<const TensorType> in);
Tensor solveKernel(const OpAttrs&, std::span<const Tensor> in);
TensorType invType(const OpAttrs&, std::span<const TensorType> in);
TensorType choleskyType(const OpAttrs&, std::span<const TensorType> in);
TensorType detType(const OpAttrs&, std::span<const TensorType> in);
TensorType slogdetType(const OpAttrs&, std::span<const TensorType> in);
Tensor invKernel(const OpAttrs&, std::span<const Tensor> in);
Tensor detKernel(const OpAttrs&, std::span<const Tensor> in);
Tensor slogdetKernel(const OpAttrs&, std::span<const Tensor> in);
Tensor choleskyKernel(const OpAttrs&, std::span<const Tensor> in);
TensorType qrType(const OpAttrs&, std::span<const TensorType> in);
Tensor qrKernel(const OpAttrs&, std::span<const Tensor> in);
TensorType svdType(const OpAttrs&, std::span<const TensorType> in);
Tensor svdKernel(const OpAttrs&, std::span<const Tensor> in);
TensorType eighType(const OpAttrs&, std::span<const TensorType> in);
Tensor eighKernel(const OpAttrs&, std::span<const Tensor> in);
TensorType traceType(const OpAttrs&, std::span<const TensorType> in);
Tensor traceKernel(const OpAttrs&, std::span<const Tensor> in);
TensorType diagType(const OpAttrs&, std::span<const TensorType> in);
Tensor diagKernel(const OpAttrs&, std::span<const Tensor> in);

} // namespace tsl
