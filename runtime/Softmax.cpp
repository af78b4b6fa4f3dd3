// runtime/Softmax.cpp — row-wise stable softmax, log-softmax, layer-norm; losses.
//
// Each operation moves its axis last (a view, copied only if not contiguous), works on
// contiguous rows in parallel, and moves the axis back.
#include "runtime/Softmax.h"

#include "runtime/Dispatch.h"
#include "runtime/Loops.h"
#include "runtime/Elementwise.h"
#include "runtime/Reduce.h"
#include "runtime/RowKernels.h"
#include "runtime/ThreadPool.h"
#include "runtime/Views.h"

#include <cmath>
#include <limits>
#include <numeric>

namespace tsl {

namespace {

/// Applies rowFn(in, out, n) to every row along `axis` of x (converted to a float type);
/// the result has x's shape.
template <typename RowFn>
Tensor alongAxis(const Tensor& x, int64_t axis, const char* name, RowFn rowFn) {
  if (x.isScalar()) fail(ErrorKind::Shape, name, ": needs a tensor with at least one axis, got a scalar");
  const int a = normalizeAxis(axis, x.rank());
  const DType dtype = floatComputeType(x.dtype());
  std::vector<int64_t> perm(static_cast<size_t>(x.rank()));
  std::iota(perm.begin(), perm.end(), 0);
  std::swap(perm[a], perm.back());
  const Tensor rows = contiguous(transpose(x.dtype() == dtype ? x : astype(x, dtype), perm));
  Tensor out = Tensor::empty(dtype, rows.shape());
  const int64_t n = x.shape()[a], outer = n == 0 ? 0 : rows.numel() / n;
  dispatchDType(dtype, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (kIsFloatElement<T>) {
      using C = std::conditional_t<std::is_same_v<T, double>, double, float>;
      const T* in = reinterpret_cast<const T*>(rows.data());
      T* o = reinterpret_cast<T*>(out.mutableData());
      parallelFor(outer, std::max<int64_t>(1, (int64_t(1) << 14) / std::max<int64_t>(n, 1)),
                  [&](int64_t begin, int64_t end) {
                    if constexpr (std::is_same_v<T, C>) {
                      for (int64_t r = begin; r < end; ++r) rowFn(in + r * n, o + r * n, n);
                    } else { // half types: through float rows, rounded once
                      std::vector<C> row(static_cast<size_t>(n)), result(static_cast<size_t>(n));
                      for (int64_t r = begin; r < end; ++r) {
                        for (int64_t j = 0; j < n; ++j) row[j] = static_cast<C>(in[r * n + j]);
                        rowFn(row.data(), result.data(), n);
                        for (int64_t j = 0; j < n; ++j) o[r * n + j] = convertElement<T>(result[j]);
                      }
                    }
                  });
    }
  });
  return contiguous(transpose(out, perm)); // the swap is its own inverse
}

} // namespace

DType floatComputeType(DType input) { return isFloat(input) ? input : DType::F32; }

Tensor softmax(const Tensor& x, int64_t axis) {
  return alongAxis(x, axis, "softmax", [](const auto* row, auto* out, int64_t n) { rows::softmax(row, out, n, 1); });
}

Tensor logSoftmax(const Tensor& x, int64_t axis) {
  return alongAxis(x, axis, "log-softmax",
                   [](const auto* row, auto* out, int64_t n) { rows::logSoftmax(row, out, n, 1); });
}

Tensor layerNorm(const Tensor& x, int64_t axis, double eps) {
  if (!(eps >= 0)) fail(ErrorKind::Value, "layer-norm: eps must be non-negative, got ", eps);
  return alongAxis(x, axis, "layer-norm",
                   [eps](const auto* row, auto* out, int64_t n) { rows::layerNorm(row, out, n, 1, eps); });
}

Shape crossEntropyShape(const Shape& logits, const Shape& labels) {
  const bool batched = logits.rank() == 2 && labels.rank() == 1;
  const bool single = logits.rank() == 1 && labels.rank() == 0;
  if (!batched && !single)
    fail(ErrorKind::Shape, "cross-entropy expects logits [N, C] with labels [N] (or [C] with a scalar label), got ",
         logits.str(), " and ", labels.str());
  if (batched && logits[0] != labels[0])
    fail(ErrorKind::Shape, "cross-entropy: ", logits[0], " rows of logits but ", labels[0], " labels");
  if (logits[logits.rank() - 1] == 0) fail(ErrorKind::Shape, "cross-entropy: logits have no classes");
  return Shape{};
}

Tensor crossEntropy(const Tensor& logits, const Tensor& labels) {
  crossEntropyShape(logits.shape(), labels.shape());
  if (!isInteger(labels.dtype()))
    fail(ErrorKind::Type, "cross-entropy: labels must be integers, got ", dtypeName(labels.dtype()));
  const DType dtype = floatComputeType(logits.dtype());
  const DType compute = dtype == DType::F64 ? DType::F64 : DType::F32; // halves in float
  const Tensor rows = contiguous(astype(logits, compute));
  const Tensor idx = contiguous(astype(labels, DType::I64));
  const int64_t n = labels.isScalar() ? 1 : labels.shape()[0], c = logits.shape()[logits.rank() - 1];
  const int64_t* ip = reinterpret_cast<const int64_t*>(idx.data());
  if (const int64_t bad = rows::badLabel(ip, n, c); bad >= 0)
    fail(ErrorKind::Value, "cross-entropy: label ", ip[bad], " is outside [0, ", c, ")");
  double loss = 0;
  dispatchDType(compute, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>)
      loss = static_cast<double>(rows::crossEntropy(reinterpret_cast<const T*>(rows.data()), ip, n, c));
  });
  return Tensor::ofFloat(loss, dtype);
}

Tensor mse(const Tensor& a, const Tensor& b) {
  const Tensor diff = applyBinary(BinaryOp::Sub, a, b);
  const Tensor squared = applyUnary(UnaryOp::Square, isFloat(diff.dtype()) ? diff : astype(diff, DType::F32));
  return reduce(ReduceOp::Mean, squared, {});
}

} // namespace tsl
