// runtime/LinearAlgebra.h — matmul (and @), dot, einsum.
//
// Contractions run on Eigen's GEMM, one row block per thread; half types compute in f32
// and round once; booleans count as i64. Shapes follow NumPy.
#pragma once

#include "runtime/Tensor.h"

#include <string>

namespace tsl {

/// NumPy's matmul: [..., m, k] @ [..., k, n] -> [..., m, n] with the leading axes
/// broadcast; a 1-D left operand is a row and a 1-D right operand a column (that axis is
/// removed from the result). A shape error names both shapes when k differs.
Shape matmulShape(const Shape& a, const Shape& b);
Tensor matmul(const Tensor& a, const Tensor& b);
/// A GEMM a higher layer may provide for f32 and f64 (compiler/ installs the :cpu
/// backend's packed GEMM and its generated micro-kernel, so eager matmul runs the code
/// compiled matmul runs): C[m,n] = A[m,k]·B[k,n], row-major with row strides lda, ldb,
/// ldc. Returns false when it cannot run (Eigen's GEMM then does).
using GemmProvider = bool (*)(DType dtype, const void* a, int64_t lda, const void* b, int64_t ldb, void* c, int64_t ldc,
                              int64_t m, int64_t k, int64_t n);
void setGemmProvider(GemmProvider provider);

/// The dtype a contraction of these operands produces.
TypeKey contractionType(TypeKey a, TypeKey b);

/// NumPy's dot: matmul for operands of rank <= 2 or a 1-D right operand; otherwise the
/// sum over a's last axis and b's second-to-last.
Shape dotShape(const Shape& a, const Shape& b);
Tensor dot(const Tensor& a, const Tensor& b);

/// Einstein summation over letters a-z and A-Z, "ij,jk->ik" (without "->" the output is
/// the letters used once, in order). Repeated letters in one operand take its diagonal.
Shape einsumShape(const std::string& spec, std::span<const Shape> operands);
Tensor einsum(const std::string& spec, std::span<const Tensor> operands);

} // namespace tsl
