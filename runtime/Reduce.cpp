// runtime/Reduce.cpp — reductions: move the reduced axes last, then reduce rows.
//
// The input is viewed with the kept axes first and the reduced axes last (a transpose
// view, made contiguous only when it is not already), so every output element is the
// reduction of one contiguous row. Rows are reduced in parallel; each row by one function
// template per element type.
#include "runtime/Layout.h"
#include "runtime/Reduce.h"

#include "runtime/Dispatch.h"
#include "runtime/Elementwise.h"
#include "runtime/RowKernels.h"
#include "runtime/ThreadPool.h"
#include "runtime/Views.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace tsl {

namespace {

struct Plan {
  std::vector<int64_t> kept, reduced; ///< axes, in order
  Shape out;                          ///< the result's shape
  int64_t outer = 1, inner = 1;       ///< rows and row length
};

Plan makePlan(ReduceOp op, const Shape& shape, const ReduceAttrs& attrs) {
  const int rank = shape.rank();
  std::array<bool, Shape::kMaxRank> isReduced{};
  if (attrs.noAxes) {
    if (op == ReduceOp::ArgMax || op == ReduceOp::ArgMin)
      fail(ErrorKind::Value, reduceName(op), " takes one axis, got none");
  } else if (attrs.axes.empty()) {
    isReduced.fill(true);
  } else {
    if ((op == ReduceOp::ArgMax || op == ReduceOp::ArgMin) && attrs.axes.size() > 1)
      fail(ErrorKind::Value, reduceName(op), " takes one axis, got ", attrs.axes.size());
    for (int64_t axis : attrs.axes) {
      if (rank == 0) fail(ErrorKind::Value, reduceName(op), ": axis ", axis, " is out of range for a scalar");
      const int a = normalizeAxis(axis, rank);
      if (isReduced[a]) fail(ErrorKind::Value, reduceName(op), ": axis ", axis, " is repeated");
      isReduced[a] = true;
    }
  }
  Plan plan;
  for (int i = 0; i < rank; ++i) {
    if (isReduced[i]) {
      plan.reduced.push_back(i);
      plan.inner *= shape[i];
      if (attrs.keepDims) plan.out.push(1);
    } else {
      plan.kept.push_back(i);
      plan.outer *= shape[i];
      plan.out.push(shape[i]);
    }
  }
  if (plan.inner == 0 && (op == ReduceOp::Max || op == ReduceOp::Min || op == ReduceOp::ArgMax ||
                          op == ReduceOp::ArgMin))
    fail(ErrorKind::Value, reduceName(op), " of an empty axis has no result (shape ", shape.str(), ")");
  return plan;
}

/// Element type computations accumulate in: wider for integers and halves.
template <typename S>
using AccumulatorOf =
    std::conditional_t<std::is_integral_v<S>, int64_t,
                       std::conditional_t<std::is_same_v<S, double>, double, float>>;

template <typename S>
bool isNan(S v) {
  if constexpr (std::is_integral_v<S>) return false;
  else return v != v;
}

/// Reduces one contiguous row of n elements; the result converted to R.
template <typename S, typename R>
R reduceRow(ReduceOp op, const S* row, int64_t n) {
  using Acc = AccumulatorOf<S>;
  switch (op) {
  case ReduceOp::Sum:
  case ReduceOp::Mean: {
    Acc sum = 0;
    if constexpr (std::is_floating_point_v<S>) {
      sum = Eigen::Map<const Eigen::Array<S, Eigen::Dynamic, 1>>(row, n).sum();
    } else if constexpr (std::is_integral_v<S>) {
      using U = std::make_unsigned_t<Acc>; // wrapping, as NumPy's integer sums
      U total = 0;
      for (int64_t i = 0; i < n; ++i) total += static_cast<U>(static_cast<Acc>(row[i]));
      sum = static_cast<Acc>(total);
    } else {
      for (int64_t i = 0; i < n; ++i) sum += static_cast<float>(row[i]);
    }
    if (op == ReduceOp::Sum) return convertElement<R>(sum);
    return convertElement<R>(static_cast<double>(sum) / static_cast<double>(n));
  }
  case ReduceOp::Prod: {
    Acc product = 1;
    for (int64_t i = 0; i < n; ++i) {
      if constexpr (std::is_integral_v<Acc>)
        product = static_cast<Acc>(static_cast<uint64_t>(product) * static_cast<uint64_t>(static_cast<Acc>(row[i])));
      else
        product *= static_cast<Acc>(row[i]);
    }
    return convertElement<R>(product);
  }
  case ReduceOp::Max:
  case ReduceOp::Min: {
    S best = row[0];
    for (int64_t i = 0; i < n; ++i) {
      if (isNan(row[i])) return convertElement<R>(row[i]);
      if (op == ReduceOp::Max ? row[i] > best : row[i] < best) best = row[i];
    }
    return convertElement<R>(best);
  }
  case ReduceOp::ArgMax:
  case ReduceOp::ArgMin: {
    int64_t at = 0;
    for (int64_t i = 0; i < n; ++i) {
      if (isNan(row[i])) return convertElement<R>(i);
      if (op == ReduceOp::ArgMax ? row[i] > row[at] : row[i] < row[at]) at = i;
    }
    return convertElement<R>(at);
  }
  case ReduceOp::LogSumExp: {
    if constexpr (std::is_floating_point_v<S>) {
      return convertElement<R>(rows::logSumExp<S>(row, n, 1));
    } else if constexpr (kIsFloatElement<S>) { // f16, bf16: in float
      return convertElement<R>(rows::logSumExp<float>(row, n, 1));
    } else {
      fail(ErrorKind::Internal, "logsumexp of a non-float row");
    }
  }
  }
  fail(ErrorKind::Internal, "bad reduction");
}

} // namespace

const char* reduceName(ReduceOp op) {
  static const char* const names[] = {"sum", "mean", "prod", "max", "min", "argmax", "argmin", "logsumexp"};
  return names[static_cast<int>(op)];
}

TypeKey reduceResultType(ReduceOp op, TypeKey input) {
  const bool integral = !isFloat(input.dtype);
  switch (op) {
  case ReduceOp::Sum:
  case ReduceOp::Prod: return integral ? TypeKey{DType::I64, input.weak} : input;
  case ReduceOp::Mean:
  case ReduceOp::LogSumExp: return integral ? floatResultType(input) : input;
  case ReduceOp::Max:
  case ReduceOp::Min: return input;
  case ReduceOp::ArgMax:
  case ReduceOp::ArgMin: return {DType::I64, false};
  }
  return input;
}

Shape reduceShape(ReduceOp op, const Shape& input, const ReduceAttrs& attrs) {
  return makePlan(op, input, attrs).out;
}

Tensor reduce(ReduceOp op, const Tensor& x, const ReduceAttrs& attrs) {
  if (x.blocked()) return reduce(op, plain(x), attrs);
  const Plan plan = makePlan(op, x.shape(), attrs);
  const TypeKey result = reduceResultType(op, x.typeKey());
  // logsumexp computes in the float type it returns.
  const Tensor source = op == ReduceOp::LogSumExp && !isFloat(x.dtype()) ? astype(x, result.dtype) : x;
  // Kept axes first, reduced axes last, contiguous: each output element is one row.
  std::vector<int64_t> perm = plan.kept;
  perm.insert(perm.end(), plan.reduced.begin(), plan.reduced.end());
  const Tensor rows = source.isScalar() ? source : contiguous(transpose(source, perm));
  Tensor out = Tensor::empty(result.dtype, plan.out);
  dispatchDType(rows.dtype(), [&](auto tag) {
    using S = decltype(tag);
    dispatchDType(result.dtype, [&](auto resultTag) {
      using R = decltype(resultTag);
      // Results are the element type itself, i64 (sums, arg*), or a float (means).
      if constexpr (std::is_same_v<R, S> || std::is_same_v<R, int64_t> || std::is_same_v<R, float> ||
                    std::is_same_v<R, double>) {
        const S* in = reinterpret_cast<const S*>(rows.data());
        R* o = reinterpret_cast<R*>(out.mutableData());
        const int64_t grain = std::max<int64_t>(1, (int64_t(1) << 15) / std::max<int64_t>(plan.inner, 1));
        parallelFor(plan.outer, grain, [&](int64_t begin, int64_t end) {
          for (int64_t r = begin; r < end; ++r) o[r] = reduceRow<S, R>(op, in + r * plan.inner, plan.inner);
        });
      } else {
        fail(ErrorKind::Internal, reduceName(op), ": no kernel from ", dtypeName(rows.dtype()), " to ",
             dtypeName(result.dtype));
      }
    });
  });
  if (result.weak && out.isScalar()) {
    // A reduction of a weak scalar stays weak (it is the scalar itself, or its mean).
    return isFloat(result.dtype) ? Tensor::weakFloat(out.toDouble()) : Tensor::weakInt(out.toInt());
  }
  return out;
}

} // namespace tsl
