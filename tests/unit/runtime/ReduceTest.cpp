// tests/unit/runtime/ReduceTest.cpp — reductions against float64 loops, every axis subset.
#include "Reference.h"
#include "runtime/Reduce.h"

#include <cmath>
#include <limits>

using namespace tsl;
using namespace tsl::test;

namespace {

/// The reference: reduces `values` of `shape` over `axes` with plain loops.
std::vector<double> naiveReduce(ReduceOp op, const std::vector<double>& values, const Shape& shape,
                                const std::vector<int64_t>& axes) {
  const int rank = shape.rank();
  std::vector<bool> reduced(static_cast<size_t>(rank), axes.empty());
  for (int64_t a : axes) reduced[static_cast<size_t>(a < 0 ? a + rank : a)] = true;
  Shape out;
  for (int i = 0; i < rank; ++i)
    if (!reduced[i]) out.push(shape[i]);
  const int64_t outN = out.numel();
  std::vector<std::vector<double>> groups(static_cast<size_t>(outN));
  const auto strides = stridesOf(shape);
  const auto outStrides = stridesOf(out);
  for (int64_t flat = 0; flat < static_cast<int64_t>(values.size()); ++flat) {
    int64_t o = 0, k = 0;
    for (int i = 0; i < rank; ++i) {
      const int64_t index = (flat / strides[i]) % shape[i];
      if (!reduced[i]) o += index * outStrides[k++];
    }
    groups[o].push_back(values[flat]);
  }
  std::vector<double> result;
  for (const auto& g : groups) {
    double r = 0;
    switch (op) {
    case ReduceOp::Sum: for (double v : g) r += v; break;
    case ReduceOp::Mean: for (double v : g) r += v; r /= static_cast<double>(g.size()); break;
    case ReduceOp::Prod: r = 1; for (double v : g) r *= v; break;
    case ReduceOp::Max: r = -INFINITY; for (double v : g) r = std::max(r, v); break;
    case ReduceOp::Min: r = INFINITY; for (double v : g) r = std::min(r, v); break;
    case ReduceOp::ArgMax: for (size_t i = 0; i < g.size(); ++i) if (g[i] > g[static_cast<size_t>(r)]) r = static_cast<double>(i); break;
    case ReduceOp::ArgMin: for (size_t i = 0; i < g.size(); ++i) if (g[i] < g[static_cast<size_t>(r)]) r = static_cast<double>(i); break;
    case ReduceOp::LogSumExp: {
      double s = 0;
      for (double v : g) s += std::exp(v);
      r = std::log(s);
      break;
    }
    }
    result.push_back(r);
  }
  return result;
}

} // namespace

TEST_CASE("every reduction over every subset of axes matches a float64 loop") {
  const Shape shape{3, 4, 5};
  const auto values = randomValues(shape.numel(), 7, 0.5, 1.5);
  const std::vector<std::vector<int64_t>> subsets = {{}, {0}, {1}, {2}, {-1}, {0, 1}, {0, 2}, {1, 2}, {0, 1, 2}};
  for (ReduceOp op : {ReduceOp::Sum, ReduceOp::Mean, ReduceOp::Prod, ReduceOp::Max, ReduceOp::Min,
                      ReduceOp::LogSumExp}) {
    for (const auto& axes : subsets) {
      CAPTURE(reduceName(op));
      CAPTURE(axes.size());
      const Tensor x = tensorOf(values, shape, DType::F64);
      checkClose(valuesOf(reduce(op, x, {axes, false})), naiveReduce(op, values, shape, axes), 1e-12);
      // f32 within its precision
      checkClose(valuesOf(reduce(op, tensorOf(values, shape, DType::F32), {axes, false})),
                 naiveReduce(op, valuesOf(tensorOf(values, shape, DType::F32)), shape, axes), 2e-6);
    }
  }
  for (ReduceOp op : {ReduceOp::ArgMax, ReduceOp::ArgMin})
    for (const std::vector<int64_t>& axes : std::vector<std::vector<int64_t>>{{0}, {1}, {2}}) {
      const Tensor r = reduce(op, tensorOf(values, shape), {axes, false});
      CHECK(r.dtype() == DType::I64);
      checkClose(valuesOf(r), naiveReduce(op, values, shape, axes), 0);
    }
}

TEST_CASE("keepdims keeps reduced axes as size 1; reductions of views read the view") {
  const Tensor x = tensorOf(randomValues(24, 3), Shape{2, 3, 4});
  CHECK(reduce(ReduceOp::Sum, x, {{1}, true}).shape() == Shape{2, 1, 4});
  CHECK(reduce(ReduceOp::Sum, x, {{}, true}).shape() == Shape{1, 1, 1});
  const Tensor t = transpose(x, std::vector<int64_t>{2, 0, 1}); // a strided view
  checkClose(valuesOf(reduce(ReduceOp::Sum, t, {{0}, false})), valuesOf(reduce(ReduceOp::Sum, x, {{2}, false})),
             1e-12);
}

TEST_CASE("result dtypes: integer sums are i64, integer means are f32, arg* are i64") {
  const Tensor ints = astype(tensorOf({1, 2, 3, 4}, Shape{4}), DType::I32);
  CHECK(reduce(ReduceOp::Sum, ints, {}).dtype() == DType::I64);
  CHECK(reduce(ReduceOp::Sum, ints, {}).toInt() == 10);
  CHECK(reduce(ReduceOp::Mean, ints, {}).dtype() == DType::F32);
  CHECK(reduce(ReduceOp::Mean, ints, {}).toDouble() == 2.5);
  CHECK(reduce(ReduceOp::Max, ints, {}).dtype() == DType::I32);
  const Tensor bools = astype(tensorOf({1, 0, 1}, Shape{3}), DType::Bool);
  CHECK(reduce(ReduceOp::Sum, bools, {}).toInt() == 2);
  CHECK(reduce(ReduceOp::Mean, bools, {}).dtype() == DType::F32);
  const Tensor halves = astype(tensorOf(randomValues(100, 2), Shape{100}), DType::F16);
  CHECK(reduce(ReduceOp::Sum, halves, {}).dtype() == DType::F16);
  CHECK(reduce(ReduceOp::LogSumExp, ints, {}).dtype() == DType::F32);
}

TEST_CASE("NaN propagates through max and min; argmax finds the first NaN") {
  const Tensor x = tensorOf({1, NAN, 3, NAN}, Shape{4});
  CHECK(std::isnan(reduce(ReduceOp::Max, x, {}).toDouble()));
  CHECK(std::isnan(reduce(ReduceOp::Min, x, {}).toDouble()));
  CHECK(reduce(ReduceOp::ArgMax, x, {}).toInt() == 1);
  CHECK(reduce(ReduceOp::ArgMax, tensorOf({1, 5, 5, 2}, Shape{4}), {}).toInt() == 1); // first of ties
}

TEST_CASE("logsumexp is stable for large inputs and exact for -inf") {
  const Tensor big = tensorOf({1000, 1000}, Shape{2}, DType::F32);
  CHECK(reduce(ReduceOp::LogSumExp, big, {}).toDouble() == doctest::Approx(1000 + std::log(2.0)));
  CHECK(reduce(ReduceOp::LogSumExp, tensorOf({-INFINITY, -INFINITY}, Shape{2}), {}).toDouble() == -INFINITY);
}

TEST_CASE("empty reductions: sum 0, prod 1, mean nan, max an error") {
  const Tensor empty = Tensor::zeros(DType::F32, Shape{0, 3});
  CHECK(valuesOf(reduce(ReduceOp::Sum, empty, {{0}, false})) == std::vector<double>{0, 0, 0});
  CHECK(valuesOf(reduce(ReduceOp::Prod, empty, {{0}, false})) == std::vector<double>{1, 1, 1});
  CHECK(std::isnan(reduce(ReduceOp::Mean, empty, {}).toDouble()));
  CHECK_THROWS_WITH_AS(reduce(ReduceOp::Max, empty, {}), doctest::Contains("empty axis"), Error);
}

TEST_CASE("bad axes are value errors") {
  const Tensor x = Tensor::zeros(DType::F32, Shape{2, 3});
  CHECK_THROWS_WITH_AS(reduce(ReduceOp::Sum, x, {{2}, false}), "value error: axis 2 is out of range for rank 2", Error);
  CHECK_THROWS_WITH_AS(reduce(ReduceOp::Sum, x, {{0, -2}, false}), doctest::Contains("repeated"), Error);
  CHECK_THROWS_WITH_AS(reduce(ReduceOp::ArgMax, x, {{0, 1}, false}), doctest::Contains("one axis"), Error);
}

TEST_CASE("a large sum is split across threads and still exact for integers") {
  const int64_t n = int64_t(1) << 21;
  std::vector<double> values(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) values[static_cast<size_t>(i)] = static_cast<double>(i % 1000);
  const Tensor x = astype(tensorOf(values, Shape{n / 64, 64}), DType::I64);
  int64_t expected = 0;
  for (double v : values) expected += static_cast<int64_t>(v);
  CHECK(reduce(ReduceOp::Sum, x, {}).toInt() == expected);
  CHECK(reduce(ReduceOp::Sum, reduce(ReduceOp::Sum, x, {{1}, false}), {}).toInt() == expected);
}
