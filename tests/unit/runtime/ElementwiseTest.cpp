// tests/unit/runtime/ElementwiseTest.cpp — elementwise kernels: every dtype pair, every
// unary function, broadcasting edge cases, non-contiguous operands, where, clip, astype.
#include "Reference.h"
#include "runtime/Elementwise.h"

#include <cmath>

using namespace tsl;
using namespace tsl::test;

namespace {

const DType kAll[] = {DType::Bool, DType::I32, DType::I64, DType::F16, DType::BF16, DType::F32, DType::F64};

/// Tolerance for results stored in `dtype`.
double tolerance(DType dtype) {
  switch (dtype) {
  case DType::F16: return 1e-3;
  case DType::BF16: return 8e-3;
  case DType::F32: return 1e-6;
  default: return 1e-12;
  }
}

} // namespace

TEST_CASE("every dtype pair adds with the promoted dtype and the right values") {
  const std::vector<double> a = {0, 1, 2, 1}, b = {1, 1, 0, 3};
  for (DType da : kAll)
    for (DType db : kAll) {
      CAPTURE(dtypeName(da));
      CAPTURE(dtypeName(db));
      const Tensor x = tensorOf(a, Shape{4}, da), y = tensorOf(b, Shape{4}, db);
      const Tensor sum = applyBinary(BinaryOp::Add, x, y);
      TypeKey expected = promoteTypes({da}, {db});
      if (isBool(expected.dtype)) expected = {DType::I64}; // bool arithmetic counts in i64
      CHECK(sum.dtype() == expected.dtype);
      // Reference: the operands as stored (bools are 0/1), added in f64.
      std::vector<double> want;
      const auto va = valuesOf(x), vb = valuesOf(y);
      for (size_t i = 0; i < a.size(); ++i) want.push_back(va[i] + vb[i]);
      checkClose(valuesOf(sum), want, tolerance(sum.dtype()));
      CHECK(applyBinary(BinaryOp::Less, x, y).dtype() == DType::Bool);
    }
}

TEST_CASE("unary functions of float tensors agree with float64 references, contiguous or not") {
  const auto values = randomValues(6 * 7, 11, 0.1, 3.0);
  const Tensor base = tensorOf(values, Shape{6, 7}, DType::F32);
  const Tensor strided = transpose(base, {});
  struct Case {
    UnaryOp op;
    double (*reference)(double);
  };
  const Case cases[] = {
      {UnaryOp::Neg, [](double x) { return -x; }},
      {UnaryOp::Abs, [](double x) { return std::abs(x); }},
      {UnaryOp::Exp, [](double x) { return std::exp(x); }},
      {UnaryOp::Log, [](double x) { return std::log(x); }},
      {UnaryOp::Log1p, [](double x) { return std::log1p(x); }},
      {UnaryOp::Expm1, [](double x) { return std::expm1(x); }},
      {UnaryOp::Erf, [](double x) { return std::erf(x); }},
      {UnaryOp::Floor, [](double x) { return std::floor(x); }},
      {UnaryOp::Ceil, [](double x) { return std::ceil(x); }},
      {UnaryOp::Round, [](double x) { return std::nearbyint(x); }},
      {UnaryOp::Trunc, [](double x) { return std::trunc(x); }},
      {UnaryOp::Sqrt, [](double x) { return std::sqrt(x); }},
      {UnaryOp::Rsqrt, [](double x) { return 1 / std::sqrt(x); }},
      {UnaryOp::Square, [](double x) { return x * x; }},
      {UnaryOp::Sin, [](double x) { return std::sin(x); }},
      {UnaryOp::Cos, [](double x) { return std::cos(x); }},
      {UnaryOp::Tanh, [](double x) { return std::tanh(x); }},
      {UnaryOp::Sigmoid, [](double x) { return 1 / (1 + std::exp(-x)); }},
      {UnaryOp::Relu, [](double x) { return x > 0 ? x : 0.0; }},
      {UnaryOp::Gelu, [](double x) { return 0.5 * x * std::erfc(-x / std::sqrt(2.0)); }},
      {UnaryOp::GeluTanh,
       [](double x) { return 0.5 * x * (1 + std::tanh(std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x))); }},
  };
  for (const Case& c : cases) {
    CAPTURE(opName(c.op));
    for (const Tensor& x : {base, strided}) {
      std::vector<double> want;
      for (double v : valuesOf(x)) want.push_back(c.reference(v));
      const Tensor r = applyUnary(c.op, x);
      CHECK(r.dtype() == DType::F32);
      checkClose(valuesOf(r), want, 2e-6, 1e-7);
      checkClose(valuesOf(applyUnary(c.op, astype(x, DType::F64))), want, 1e-14, 1e-15);
    }
  }
}

TEST_CASE("a large elementwise chain runs split across threads with the same result") {
  const int64_t n = int64_t(1) << 20;
  const auto values = randomValues(n, 5);
  const Tensor x = tensorOf(values, Shape{n}, DType::F32);
  const Tensor r = applyUnary(UnaryOp::Tanh, applyBinary(BinaryOp::Add, applyBinary(BinaryOp::Mul, x, x), x));
  const auto got = valuesOf(r);
  const auto xs = valuesOf(x);
  for (int64_t i = 0; i < n; i += 9973) CHECK(got[i] == doctest::Approx(std::tanh(xs[i] * xs[i] + xs[i])).epsilon(1e-5));
}

TEST_CASE("broadcasting follows NumPy: size-1 axes, missing axes and rank-0 operands") {
  const Tensor col = tensorOf({1, 2, 3}, Shape{3, 1});
  const Tensor row = tensorOf({10, 20}, Shape{2});
  const Tensor out = applyBinary(BinaryOp::Add, col, row);
  CHECK(out.shape() == Shape{3, 2});
  CHECK(valuesOf(out) == std::vector<double>{11, 21, 12, 22, 13, 23});
  const Tensor scalar = Tensor::ofFloat(5, DType::F64);
  CHECK(valuesOf(applyBinary(BinaryOp::Mul, scalar, col)) == std::vector<double>{5, 10, 15});
  CHECK(applyBinary(BinaryOp::Mul, Tensor::zeros(DType::F32, Shape{1, 1}), Tensor::zeros(DType::F32, Shape{4})).shape() ==
        Shape{1, 4});
  CHECK(applyBinary(BinaryOp::Add, Tensor::zeros(DType::F32, Shape{0, 3}), Tensor::zeros(DType::F32, Shape{1, 3})).shape() ==
        Shape{0, 3});
  CHECK_THROWS_WITH_AS(applyBinary(BinaryOp::Add, Tensor::zeros(DType::F32, Shape{3}), Tensor::zeros(DType::F32, Shape{4})),
                       doctest::Contains("cannot broadcast shapes [3] and [4]"), Error);
  CHECK(broadcastShapes(Shape{8, 1, 6, 1}, Shape{7, 1, 5}, "+") == Shape{8, 7, 6, 5});
}

TEST_CASE("weak literals keep a tensor's dtype of their kind") {
  const Tensor h = tensorOf({1, 2}, Shape{2}, DType::F16);
  CHECK(applyBinary(BinaryOp::Mul, h, Tensor::weakFloat(2.0)).dtype() == DType::F16);
  const Tensor i = tensorOf({1, 2}, Shape{2}, DType::I32);
  CHECK(applyBinary(BinaryOp::Mul, i, Tensor::weakInt(3)).dtype() == DType::I32);
  CHECK(applyBinary(BinaryOp::Mul, i, Tensor::weakFloat(0.5)).dtype() == DType::F32);
  const Tensor b = tensorOf({1, 0}, Shape{2}, DType::Bool);
  CHECK(applyBinary(BinaryOp::Add, b, Tensor::weakInt(1)).dtype() == DType::I64);
}

TEST_CASE("where picks elementwise and promotes its branches") {
  const Tensor cond = tensorOf({1, 0, 1}, Shape{3}, DType::Bool);
  const Tensor r = where(cond, tensorOf({1, 2, 3}, Shape{3}, DType::I32), Tensor::weakFloat(-1.5));
  CHECK(r.dtype() == DType::F32);
  CHECK(valuesOf(r) == std::vector<double>{1, -1.5, 3});
  const Tensor grid = where(tensorOf({1, 0}, Shape{2, 1}, DType::Bool), tensorOf({7, 8, 9}, Shape{3}), Tensor::weakFloat(0));
  CHECK(grid.shape() == Shape{2, 3});
  CHECK(valuesOf(grid) == std::vector<double>{7, 8, 9, 0, 0, 0});
}

TEST_CASE("clip limits, keeps NaN, and a weak bound keeps the dtype") {
  const Tensor x = tensorOf({-2, 0.5, 3, NAN}, Shape{4}, DType::F32);
  const Tensor r = clip(x, Tensor::weakFloat(0), Tensor::weakFloat(1));
  CHECK(r.dtype() == DType::F32);
  const auto v = valuesOf(r);
  CHECK(v[0] == 0);
  CHECK(v[1] == 0.5);
  CHECK(v[2] == 1);
  CHECK(std::isnan(v[3]));
}

TEST_CASE("astype converts every dtype to every dtype like NumPy") {
  const std::vector<double> values = {-2.7, -0.5, 0, 1.5, 300.25};
  for (DType from : kAll)
    for (DType to : kAll) {
      CAPTURE(dtypeName(from));
      CAPTURE(dtypeName(to));
      const Tensor x = tensorOf(values, Shape{5}, from);
      const Tensor y = astype(x, to);
      CHECK(y.dtype() == to);
      // Reference: from the stored values, truncate to integer, nonzero to bool.
      std::vector<double> want;
      for (double v : valuesOf(x)) {
        if (to == DType::Bool) want.push_back(v != 0);
        else if (to == DType::I32 || to == DType::I64) want.push_back(std::trunc(v));
        else want.push_back(v);
      }
      checkClose(valuesOf(y), want, tolerance(to));
    }
}
