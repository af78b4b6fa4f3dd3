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
#include "runtime/Summation.h"
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

/// Elements per segment of a long row summed in parallel: a power of two of blocks, so
/// that the segments' sums combined by a Cascade make exactly the tree a serial Cascade
/// over the row's blocks makes — the result never depends on the number of threads.
constexpr int64_t kSegment = sums::kSumBlock << 10;

/// Σ row[i] for a float element type S (halves read as float), in its accumulator type:
/// blocked and pairwise; a row of several segments is summed by the pool, segment by
/// segment (reductions of few long rows, a full sum above all, would run on one thread).
template <typename S>
AccumulatorOf<S> floatSum(const S* row, int64_t n) {
  using Acc = AccumulatorOf<S>;
  if (n < 2 * kSegment) return sums::sum<Acc>(row, n, 1);
  const int64_t segments = (n + kSegment - 1) / kSegment;
  std::vector<Acc> partial(static_cast<size_t>(segments));
  parallelFor(segments, 1, [&](int64_t begin, int64_t end) {
    for (int64_t g = begin; g < end; ++g)
      partial[static_cast<size_t>(g)] = sums::sum<Acc>(row + g * kSegment, std::min(kSegment, n - g * kSegment), 1);
  });
  sums::Cascade<Acc> cascade;
  for (Acc p : partial) cascade.push(p);
  return cascade.total();
}

/// Reduces one contiguous row of n elements; the result converted to R.
template <typename S, typename R>
R reduceRow(ReduceOp op, const S* row, int64_t n) {
  using Acc = AccumulatorOf<S>;
  switch (op) {
  case ReduceOp::Sum:
  case ReduceOp::Mean: {
    Acc sum = 0;
    if constexpr (std::is_integral_v<S>) {
      using U = std::make_unsigned_t<Acc>; // wrapping, as NumPy's integer sums
      U total = 0;
      for (int64_t i = 0; i < n; ++i) total += static_cast<U>(static_cast<Acc>(row[i]));
      sum = static_cast<Acc>(total);
    } else {
      sum = floatSum<S>(row, n); // blocked and pairwise (runtime/Summation.h)
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

/// The reductions that keep their last axis run down columns (reduceColumns) instead of
/// along rows, so that the input is read in order rather than copied transposed first.
bool byColumns(ReduceOp op) { return op != ReduceOp::ArgMax && op != ReduceOp::ArgMin && op != ReduceOp::LogSumExp; }

/// Rows of partial sums and cascade levels a column reduction's task may hold.
constexpr int64_t kColumnBytes = int64_t(1) << 20;

/// out[o·width + j] = the reduction over s < steps of in[(o·steps + s)·width + j]: each
/// input row is read once, in order, into a row of accumulators. Float sums add blocks of
/// kSumBlock rows into a row of partial sums pushed into per-column cascades (the error
/// bound of runtime/Summation.h); everything else accumulates directly.
template <typename S, typename R>
void reduceColumns(ReduceOp op, const S* in, R* out, int64_t outer, int64_t steps, int64_t width) {
  using Acc = AccumulatorOf<S>;
  constexpr bool pairwise = !std::is_integral_v<S>;
  const bool sum = op == ReduceOp::Sum || op == ReduceOp::Mean;
  const int64_t blocks = (steps + sums::kSumBlock - 1) / sums::kSumBlock;
  const int64_t levels = sums::cascadeLevels(blocks);
  const int64_t tile = std::min(width, std::max<int64_t>(64, kColumnBytes / int64_t(sizeof(Acc)) / (levels + 2)));
  const int64_t tiles = (width + tile - 1) / tile;
  const int64_t grain = std::max<int64_t>(1, (int64_t(1) << 15) / std::max<int64_t>(steps * tile, 1));
  parallelFor(outer * tiles, grain, [&](int64_t begin, int64_t end) {
    std::vector<Acc> acc(static_cast<size_t>(tile)), partial, level;
    if (pairwise && sum) {
      partial.resize(static_cast<size_t>(tile));
      level.resize(static_cast<size_t>(tile * levels));
    }
    for (int64_t w = begin; w < end; ++w) {
      const int64_t o = w / tiles, c0 = (w % tiles) * tile, n = std::min(tile, width - c0);
      const S* base = in + o * steps * width + c0;
      Acc* a = acc.data();
      if (pairwise && sum) {
        uint64_t pushed = 0;
        for (int64_t s0 = 0; s0 < steps; s0 += sums::kSumBlock) {
          Acc* p = partial.data();
          std::fill(p, p + n, Acc(0));
          for (int64_t s = s0; s < std::min(steps, s0 + sums::kSumBlock); ++s) {
            const S* row = base + s * width;
            for (int64_t j = 0; j < n; ++j) p[j] += static_cast<Acc>(row[j]);
          }
          sums::pushColumns(level.data(), n, pushed, p);
        }
        sums::totalColumns(level.data(), n, pushed, a);
      } else {
        const Acc start = op == ReduceOp::Prod ? Acc(1) : Acc(0);
        if (op == ReduceOp::Max || op == ReduceOp::Min) {
          for (int64_t j = 0; j < n; ++j) a[j] = static_cast<Acc>(base[j]);
        } else {
          std::fill(a, a + n, start);
        }
        using U = std::make_unsigned_t<std::conditional_t<std::is_integral_v<Acc>, Acc, int64_t>>;
        for (int64_t s = 0; s < steps; ++s) {
          const S* row = base + s * width;
          for (int64_t j = 0; j < n; ++j) {
            const Acc x = static_cast<Acc>(row[j]);
            if (sum) { // integers, wrapping as NumPy's sums
              a[j] = static_cast<Acc>(static_cast<U>(a[j]) + static_cast<U>(x));
            } else if (op == ReduceOp::Prod) {
              if constexpr (std::is_integral_v<Acc>) a[j] = static_cast<Acc>(static_cast<U>(a[j]) * static_cast<U>(x));
              else a[j] *= x;
            } else { // max, min: the first NaN wins and stays, as along rows
              const bool better = op == ReduceOp::Max ? x > a[j] : x < a[j];
              if (!isNan(a[j]) && (isNan(x) || better)) a[j] = x;
            }
          }
        }
      }
      R* dst = out + o * width + c0;
      for (int64_t j = 0; j < n; ++j)
        dst[j] = op == ReduceOp::Mean ? convertElement<R>(static_cast<double>(a[j]) / static_cast<double>(steps))
                                     : convertElement<R>(a[j]);
    }
  });
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
  // When the last axis is kept (and there is something to reduce), the kept axes that
  // end the shape stay last: [other kept axes, reduced axes, trailing kept axes], each
  // output row the reduction of `steps` input rows — no copy when x is contiguous and
  // its reduced axes come after the other kept ones. Otherwise kept axes first, reduced
  // axes last, contiguous: each output element the reduction of one row.
  const int rank = source.rank();
  int trailing = 0;
  while (trailing < rank && std::find(plan.reduced.begin(), plan.reduced.end(), rank - 1 - trailing) == plan.reduced.end())
    ++trailing;
  const bool columns = byColumns(op) && trailing > 0 && !plan.reduced.empty() && x.numel() > 0;
  std::vector<int64_t> perm;
  int64_t width = 1;
  for (int64_t axis : plan.kept)
    if (!columns || axis < rank - trailing) perm.push_back(axis);
  perm.insert(perm.end(), plan.reduced.begin(), plan.reduced.end());
  if (columns)
    for (int axis = rank - trailing; axis < rank; ++axis) {
      perm.push_back(axis);
      width *= source.shape()[axis];
    }
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
        if (columns) {
          reduceColumns<S, R>(op, in, o, plan.outer / width, plan.inner, width);
          return;
        }
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

int64_t reducedCount(const Shape& input, const ReduceAttrs& attrs) {
  ReduceAttrs keep = attrs;
  keep.keepDims = true;
  const Shape kept = reduceShape(ReduceOp::Sum, input, keep);
  int64_t n = 1;
  for (int i = 0; i < input.rank(); ++i)
    if (kept[i] != input[i]) n *= input[i]; // a reduced axis (one of size 1 counts 1 either way)
  return n;
}

Tensor moment(bool root, const Tensor& x, const MomentAttrs& attrs) {
  const ReduceAttrs r = attrs.reduction();
  const TypeKey result = reduceResultType(ReduceOp::Mean, x.typeKey());
  const DType compute = result.dtype == DType::F16 || result.dtype == DType::BF16 ? DType::F32 : result.dtype;
  const Tensor xs = x.dtype() == compute ? x : astype(x, compute);
  ReduceAttrs keep = r;
  keep.keepDims = true;
  const Tensor deviation = applyBinary(BinaryOp::Sub, xs, reduce(ReduceOp::Mean, xs, keep));
  const Tensor squares = reduce(ReduceOp::Sum, applyUnary(UnaryOp::Square, deviation), r);
  const int64_t divisor = std::max<int64_t>(reducedCount(x.shape(), r) - attrs.ddof, 0);
  Tensor out = applyBinary(BinaryOp::Div, squares, Tensor::weakFloat(static_cast<double>(divisor)));
  if (root) out = applyUnary(UnaryOp::Sqrt, out);
  // The moment of a weak scalar stays weak (at f64 precision), as reduce's results do.
  if (result.weak && out.isScalar()) return Tensor::weakFloat(out.toDouble());
  return out.dtype() == result.dtype ? out : astype(out, result.dtype);
}

} // namespace tsl
