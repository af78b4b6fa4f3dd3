// runtime/Decompositions.cpp — solve, inv, det, slogdet, cholesky, qr, svd, eigh, trace
// and diag on Eigen, batched over the leading axes.
//
// An operand is made row-major, contiguous and of its compute type (f64 for f64, f32
// for every other dtype), then each matrix of the batch is decomposed by Eigen and its
// result written in place; a half-type result is rounded once at the end. Eigen's
// conventions are LAPACK's as NumPy reports them: PartialPivLU (singular exactly when a
// pivot is zero, as getrf), HouseholderQR, BDCSVD (s descending), LLT and
// SelfAdjointEigenSolver (both read the lower triangle; eigenvalues ascending).
#include "runtime/Decompositions.h"

#include "runtime/Layout.h"
#include "runtime/Reduce.h"
#include "runtime/Views.h"

#include <Eigen/Cholesky>
#include <Eigen/Dense>
#include <Eigen/SVD>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

namespace tsl {

namespace {

template <typename W>
using RowMat = Eigen::Matrix<W, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
template <typename W>
using ColMat = Eigen::Matrix<W, Eigen::Dynamic, Eigen::Dynamic>;
template <typename W>
using In = Eigen::Map<const RowMat<W>>;
template <typename W>
using Out = Eigen::Map<RowMat<W>>;

template <typename A>
const A& get(const OpAttrs& attrs) {
  const A* a = std::get_if<A>(&attrs);
  TSL_ASSERT(a, "operation given the wrong kind of attributes");
  return *a;
}

/// The dtype a linear-algebra result has: floats their own, integers and booleans f32.
DType resultDType(DType input) { return isFloat(input) ? input : DType::F32; }
/// What the kernel computes in.
DType computeDType(DType result) { return result == DType::F64 ? DType::F64 : DType::F32; }

/// The axes before the last two.
Shape batchOf(const Shape& s) { return Shape(s.dims().subspan(0, static_cast<size_t>(s.rank() - 2))); }
Shape withDims(const Shape& batch, std::initializer_list<int64_t> tail) {
  std::vector<int64_t> dims(batch.begin(), batch.end());
  dims.insert(dims.end(), tail);
  return Shape(std::span<const int64_t>(dims));
}

void requireMatrices(const char* who, const TensorType& t) {
  if (t.shape.rank() < 2)
    fail(ErrorKind::Shape, who, ": expects matrices [..., m, n] (rank 2 or more), got ", t.str());
}
void requireSquare(const char* who, const TensorType& t) {
  requireMatrices(who, t);
  const int r = t.shape.rank();
  if (t.shape[r - 1] != t.shape[r - 2])
    fail(ErrorKind::Shape, who, ": expects square matrices [..., n, n], got ", t.str());
}
void requirePart(const char* who, int64_t part, int64_t parts) {
  if (part < 0 || part >= parts) fail(ErrorKind::Value, who, ": part ", part, " is not in [0, ", parts, ")");
}

/// x as the kernels read it: row-major, contiguous, of dtype w.
Tensor prepared(const Tensor& x, DType w) {
  Tensor t = x.blocked() ? plain(x) : x;
  if (t.dtype() != w) t = astype(t, w);
  return contiguous(t);
}

/// Runs body<W>() with W the compute type of `result`, then rounds its tensors to `result`.
template <typename Body>
Tensor computeAs(DType result, Body&& body) {
  Tensor out = computeDType(result) == DType::F64 ? body(double{}) : body(float{});
  return out.dtype() == result ? out : astype(out, result);
}

template <typename W>
const W* at(const Tensor& t) { return reinterpret_cast<const W*>(t.data()); }
template <typename W>
W* at(Tensor& t) { return reinterpret_cast<W*>(t.mutableData()); }

/// LU with partial pivoting of each matrix, handed to use(index, lu); none for 0×0
/// matrices (Eigen's LU reads an element of its matrix), whose callers fill their results.
template <typename W, typename Use>
void eachLu(const Tensor& a, Use&& use) {
  const int64_t n = a.shape()[a.rank() - 1], count = batchOf(a.shape()).numel();
  for (int64_t i = 0; i < count && n > 0; ++i) {
    Eigen::PartialPivLU<RowMat<W>> lu(In<W>(at<W>(a) + i * n * n, n, n));
    use(i, lu);
  }
}

template <typename W>
bool singular(const Eigen::PartialPivLU<RowMat<W>>& lu) {
  return (lu.matrixLU().diagonal().array() == W(0)).any();
}

} // namespace

// ---- Kernels ----

Tensor solve(const Tensor& a, const Tensor& b) {
  const TensorType t = solveType(NoAttrs{}, std::array{TensorType::of(a), TensorType::of(b)});
  const int64_t n = a.shape()[a.rank() - 1];
  const bool vector = b.rank() == 1;
  const Shape batch = vector ? batchOf(a.shape()) : broadcastShapes(batchOf(a.shape()), batchOf(b.shape()), "solve");
  const int64_t k = vector ? 1 : b.shape()[b.rank() - 1];
  return computeAs(t.dtype, [&](auto w) {
    using W = decltype(w);
    const DType wd = computeDType(t.dtype);
    const Tensor am = prepared(broadcastTo(a, withDims(batch, {n, n})), wd);
    const Tensor bm = prepared(broadcastTo(vector ? reshape(b, Shape{n, 1}) : b, withDims(batch, {n, k})), wd);
    Tensor x = Tensor::empty(wd, withDims(batch, {n, k}));
    eachLu<W>(am, [&](int64_t i, const Eigen::PartialPivLU<RowMat<W>>& lu) {
      if (singular(lu)) fail(ErrorKind::Value, "solve: the matrix is singular");
      if (k > 0) Out<W>(at<W>(x) + i * n * k, n, k) = lu.solve(In<W>(at<W>(bm) + i * n * k, n, k));
    });
    return vector ? reshape(x, t.shape) : x;
  });
}

Tensor inv(const Tensor& a) {
  requireSquare("inv", TensorType::of(a));
  const int64_t n = a.shape()[a.rank() - 1];
  return computeAs(resultDType(a.dtype()), [&](auto w) {
    using W = decltype(w);
    const Tensor am = prepared(a, computeDType(resultDType(a.dtype())));
    Tensor x = Tensor::empty(am.dtype(), am.shape());
    eachLu<W>(am, [&](int64_t i, const Eigen::PartialPivLU<RowMat<W>>& lu) {
      if (singular(lu)) fail(ErrorKind::Value, "inv: the matrix is singular");
      Out<W>(at<W>(x) + i * n * n, n, n) = lu.inverse();
    });
    return x;
  });
}

Tensor det(const Tensor& a) {
  requireSquare("det", TensorType::of(a));
  return computeAs(resultDType(a.dtype()), [&](auto w) {
    using W = decltype(w);
    const Tensor am = prepared(a, computeDType(resultDType(a.dtype())));
    Tensor d = Tensor::empty(am.dtype(), batchOf(am.shape()));
    std::fill_n(at<W>(d), d.numel(), W(1)); // the determinant of a 0×0 matrix
    eachLu<W>(am, [&](int64_t i, const Eigen::PartialPivLU<RowMat<W>>& lu) { at<W>(d)[i] = lu.determinant(); });
    return d;
  });
}

Tensor slogdet(const Tensor& a, int64_t part) {
  requireSquare("slogdet", TensorType::of(a));
  requirePart("slogdet", part, 2);
  const int64_t n = a.shape()[a.rank() - 1];
  return computeAs(resultDType(a.dtype()), [&](auto w) {
    using W = decltype(w);
    const Tensor am = prepared(a, computeDType(resultDType(a.dtype())));
    Tensor d = Tensor::empty(am.dtype(), batchOf(am.shape()));
    std::fill_n(at<W>(d), d.numel(), part == 0 ? W(1) : W(0)); // a 0×0 matrix's
    eachLu<W>(am, [&](int64_t i, const Eigen::PartialPivLU<RowMat<W>>& lu) {
      W sign = static_cast<W>(lu.permutationP().determinant()), logAbs = 0;
      for (int64_t j = 0; j < n; ++j) {
        const W u = lu.matrixLU()(j, j);
        sign *= u > 0 ? W(1) : u < 0 ? W(-1) : W(0);
        logAbs += std::log(std::abs(u));
      }
      at<W>(d)[i] = part == 0 ? sign : logAbs;
    });
    return d;
  });
}

Tensor cholesky(const Tensor& a) {
  requireSquare("cholesky", TensorType::of(a));
  const int64_t n = a.shape()[a.rank() - 1], count = batchOf(a.shape()).numel();
  return computeAs(resultDType(a.dtype()), [&](auto w) {
    using W = decltype(w);
    const Tensor am = prepared(a, computeDType(resultDType(a.dtype())));
    Tensor l = Tensor::zeros(am.dtype(), am.shape());
    for (int64_t i = 0; i < count && n > 0; ++i) {
      Eigen::LLT<RowMat<W>, Eigen::Lower> llt(In<W>(at<W>(am) + i * n * n, n, n));
      if (llt.info() != Eigen::Success)
        fail(ErrorKind::Value, "cholesky: the matrix is not positive definite");
      Out<W>(at<W>(l) + i * n * n, n, n).template triangularView<Eigen::Lower>() = llt.matrixL();
    }
    return l;
  });
}

/// A decomposition's result of type `t`, matrix by matrix: `each(w, x, out, i)` gets the
/// working dtype's tag, matrix i of a (m × n, column-major) and the result tensor.
template <class Each>
Tensor eachMatrix(const Tensor& a, const TensorType& t, Each each) {
  const int64_t m = a.shape()[a.rank() - 2], n = a.shape()[a.rank() - 1];
  const int64_t count = batchOf(a.shape()).numel();
  return computeAs(t.dtype, [&](auto w) {
    using W = decltype(w);
    const Tensor am = prepared(a, computeDType(t.dtype));
    Tensor out = Tensor::zeros(am.dtype(), t.shape);
    for (int64_t i = 0; i < count && m > 0 && n > 0; ++i) each(w, ColMat<W>(In<W>(at<W>(am) + i * m * n, m, n)), out, i);
    return out;
  });
}

Tensor qr(const Tensor& a, int64_t part) {
  const TensorType t = qrType(PartAttrs{part}, std::array{TensorType::of(a)});
  const int64_t m = a.shape()[a.rank() - 2], n = a.shape()[a.rank() - 1], k = std::min(m, n);
  return eachMatrix(a, t, [&](auto w, const auto& x, Tensor& out, int64_t i) {
    using W = decltype(w);
    Eigen::HouseholderQR<ColMat<W>> qr(x);
    if (part == 0)
      Out<W>(at<W>(out) + i * m * k, m, k) = qr.householderQ() * ColMat<W>::Identity(m, k);
    else
      Out<W>(at<W>(out) + i * k * n, k, n) = qr.matrixQR().topRows(k).template triangularView<Eigen::Upper>();
  });
}

Tensor svd(const Tensor& a, int64_t part) {
  const TensorType t = svdType(PartAttrs{part}, std::array{TensorType::of(a)});
  const int64_t m = a.shape()[a.rank() - 2], n = a.shape()[a.rank() - 1], k = std::min(m, n);
  return eachMatrix(a, t, [&](auto w, const auto& x, Tensor& out, int64_t i) {
    using W = decltype(w);
    if (!x.allFinite()) fail(ErrorKind::Value, "svd: the matrix has a NaN or infinite element");
    Eigen::BDCSVD<ColMat<W>> s(x, part == 1 ? 0 : Eigen::ComputeThinU | Eigen::ComputeThinV);
    if (part == 0) Out<W>(at<W>(out) + i * m * k, m, k) = s.matrixU();
    else if (part == 1) Eigen::Map<Eigen::Matrix<W, Eigen::Dynamic, 1>>(at<W>(out) + i * k, k) = s.singularValues();
    else Out<W>(at<W>(out) + i * k * n, k, n) = s.matrixV().transpose();
  });
}

Tensor eigh(const Tensor& a, int64_t part) {
  const TensorType t = eighType(PartAttrs{part}, std::array{TensorType::of(a)});
  const int64_t n = a.shape()[a.rank() - 1];
  return eachMatrix(a, t, [&](auto w, const auto& x, Tensor& out, int64_t i) {
    using W = decltype(w);
    Eigen::SelfAdjointEigenSolver<ColMat<W>> es(x, part == 0 ? Eigen::EigenvaluesOnly : Eigen::ComputeEigenvectors);
    if (es.info() != Eigen::Success) fail(ErrorKind::Value, "eigh: the eigenvalue iteration did not converge");
    if (part == 0) Eigen::Map<Eigen::Matrix<W, Eigen::Dynamic, 1>>(at<W>(out) + i * n, n) = es.eigenvalues();
    else Out<W>(at<W>(out) + i * n * n, n, n) = es.eigenvectors();
  });
}

Tensor diag(const Tensor& a) {
  const TensorType t = diagType(NoAttrs{}, std::array{TensorType::of(a)});
  const Tensor x = contiguous(a.blocked() ? plain(a) : a);
  Tensor out = Tensor::zeros(t.dtype, t.shape);
  const size_t size = x.elementSize();
  const char* src = x.data();
  char* dst = out.mutableData();
  if (x.rank() == 1) {
    const int64_t n = x.shape()[0];
    for (int64_t i = 0; i < n; ++i) std::memcpy(dst + (i * n + i) * size, src + i * size, size);
    return out;
  }
  const int64_t m = x.shape()[x.rank() - 2], n = x.shape()[x.rank() - 1], k = std::min(m, n);
  const int64_t count = batchOf(x.shape()).numel();
  for (int64_t b = 0; b < count; ++b)
    for (int64_t i = 0; i < k; ++i) std::memcpy(dst + (b * k + i) * size, src + (b * m * n + i * n + i) * size, size);
  return out;
}

Tensor trace(const Tensor& a) {
  requireMatrices("trace", TensorType::of(a));
  return reduce(ReduceOp::Sum, diag(a), ReduceAttrs{{-1}, false, false});
}

// ---- Type rules and adapters ----

TensorType solveType(const OpAttrs&, std::span<const TensorType> in) {
  requireSquare("solve", in[0]);
  const int ra = in[0].shape.rank(), rb = in[1].shape.rank();
  const int64_t n = in[0].shape[ra - 1];
  const DType dtype = resultDType(promoteTypes({in[0].dtype, in[0].weak}, {in[1].dtype, in[1].weak}).dtype);
  if (rb == 1) {
    if (in[1].shape[0] != n)
      fail(ErrorKind::Shape, "solve: a ", in[0].str(), " cannot solve for b ", in[1].str(), " (", in[1].shape[0], " != ", n, ")");
    return {dtype, false, withDims(batchOf(in[0].shape), {n})};
  }
  if (rb < 1) fail(ErrorKind::Shape, "solve: b must be a vector [n] or matrices [..., n, k], got ", in[1].str());
  if (in[1].shape[rb - 2] != n)
    fail(ErrorKind::Shape, "solve: a ", in[0].str(), " cannot solve for b ", in[1].str(), " (", in[1].shape[rb - 2], " != ", n, ")");
  const Shape batch = broadcastShapes(batchOf(in[0].shape), batchOf(in[1].shape), "solve");
  return {dtype, false, withDims(batch, {n, in[1].shape[rb - 1]})};
}
Tensor solveKernel(const OpAttrs&, std::span<const Tensor> in) { return solve(in[0], in[1]); }

namespace {
TensorType squareSameType(const char* who, const TensorType& in) {
  requireSquare(who, in);
  return {resultDType(in.dtype), false, in.shape};
}
TensorType squareBatchType(const char* who, const TensorType& in) {
  requireSquare(who, in);
  return {resultDType(in.dtype), false, batchOf(in.shape)};
}
} // namespace

TensorType invType(const OpAttrs&, std::span<const TensorType> in) { return squareSameType("inv", in[0]); }
TensorType choleskyType(const OpAttrs&, std::span<const TensorType> in) { return squareSameType("cholesky", in[0]); }
TensorType detType(const OpAttrs&, std::span<const TensorType> in) { return squareBatchType("det", in[0]); }
TensorType slogdetType(const OpAttrs& a, std::span<const TensorType> in) {
  requirePart("slogdet", get<PartAttrs>(a).part, 2);
  return squareBatchType("slogdet", in[0]);
}
Tensor invKernel(const OpAttrs&, std::span<const Tensor> in) { return inv(in[0]); }
Tensor detKernel(const OpAttrs&, std::span<const Tensor> in) { return det(in[0]); }
Tensor slogdetKernel(const OpAttrs& a, std::span<const Tensor> in) { return slogdet(in[0], get<PartAttrs>(a).part); }
Tensor choleskyKernel(const OpAttrs&, std::span<const Tensor> in) { return cholesky(in[0]); }

TensorType qrType(const OpAttrs& a, std::span<const TensorType> in) {
  requireMatrices("qr", in[0]);
  const int64_t part = get<PartAttrs>(a).part;
  requirePart("qr", part, 2);
  const int r = in[0].shape.rank();
  const int64_t m = in[0].shape[r - 2], n = in[0].shape[r - 1], k = std::min(m, n);
  const Shape batch = batchOf(in[0].shape);
  return {resultDType(in[0].dtype), false, part == 0 ? withDims(batch, {m, k}) : withDims(batch, {k, n})};
}
Tensor qrKernel(const OpAttrs& a, std::span<const Tensor> in) { return qr(in[0], get<PartAttrs>(a).part); }

TensorType svdType(const OpAttrs& a, std::span<const TensorType> in) {
  requireMatrices("svd", in[0]);
  const int64_t part = get<PartAttrs>(a).part;
  requirePart("svd", part, 3);
  const int r = in[0].shape.rank();
  const int64_t m = in[0].shape[r - 2], n = in[0].shape[r - 1], k = std::min(m, n);
  const Shape batch = batchOf(in[0].shape);
  return {resultDType(in[0].dtype), false,
          part == 0 ? withDims(batch, {m, k}) : part == 1 ? withDims(batch, {k}) : withDims(batch, {k, n})};
}
Tensor svdKernel(const OpAttrs& a, std::span<const Tensor> in) { return svd(in[0], get<PartAttrs>(a).part); }

TensorType eighType(const OpAttrs& a, std::span<const TensorType> in) {
  requireSquare("eigh", in[0]);
  const int64_t part = get<PartAttrs>(a).part;
  requirePart("eigh", part, 2);
  const int64_t n = in[0].shape[in[0].shape.rank() - 1];
  const Shape batch = batchOf(in[0].shape);
  return {resultDType(in[0].dtype), false, part == 0 ? withDims(batch, {n}) : withDims(batch, {n, n})};
}
Tensor eighKernel(const OpAttrs& a, std::span<const Tensor> in) { return eigh(in[0], get<PartAttrs>(a).part); }

TensorType traceType(const OpAttrs&, std::span<const TensorType> in) {
  requireMatrices("trace", in[0]);
  const TypeKey t = reduceResultType(ReduceOp::Sum, {in[0].dtype, false});
  return {t.dtype, false, batchOf(in[0].shape)};
}
Tensor traceKernel(const OpAttrs&, std::span<const Tensor> in) { return trace(in[0]); }

TensorType diagType(const OpAttrs&, std::span<const TensorType> in) {
  const Shape& s = in[0].shape;
  if (s.rank() == 0) fail(ErrorKind::Shape, "diag: expects a vector or matrices, got the scalar ", in[0].str());
  if (s.rank() == 1) return {in[0].dtype, false, Shape{s[0], s[0]}};
  return {in[0].dtype, false, withDims(batchOf(s), {std::min(s[s.rank() - 2], s[s.rank() - 1])})};
}
Tensor diagKernel(const OpAttrs&, std::span<const Tensor> in) { return diag(in[0]); }

} // namespace tsl
