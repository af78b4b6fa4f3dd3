// tests/unit/runtime/SoftmaxTest.cpp — softmax family and losses against float64 formulas.
#include "Reference.h"
#include "runtime/Softmax.h"

#include <cmath>

using namespace tsl;
using namespace tsl::test;

TEST_CASE("softmax and log-softmax over any axis match the float64 definition") {
  const Shape shape{3, 4, 5};
  const auto values = randomValues(shape.numel(), 4, -3, 3);
  for (int64_t axis : {0, 1, 2, -1}) {
    CAPTURE(axis);
    const int a = static_cast<int>(axis < 0 ? axis + 3 : axis);
    const auto strides = stridesOf(shape);
    std::vector<double> soft(values.size()), logSoft(values.size());
    for (size_t flat = 0; flat < values.size(); ++flat) {
      const int64_t i = (static_cast<int64_t>(flat) / strides[a]) % shape[a];
      const int64_t base = static_cast<int64_t>(flat) - i * strides[a];
      double sum = 0;
      for (int64_t j = 0; j < shape[a]; ++j) sum += std::exp(values[base + j * strides[a]]);
      soft[flat] = std::exp(values[flat]) / sum;
      logSoft[flat] = values[flat] - std::log(sum);
    }
    checkClose(valuesOf(softmax(tensorOf(values, shape), axis)), soft, 1e-13);
    checkClose(valuesOf(logSoftmax(tensorOf(values, shape), axis)), logSoft, 1e-13);
    checkClose(valuesOf(softmax(tensorOf(values, shape, DType::F32), axis)), soft, 1e-6, 1e-7);
  }
}

TEST_CASE("large logits neither overflow nor lose the answer") {
  const Tensor big = tensorOf({1000, 1001, 1002}, Shape{3}, DType::F32);
  const auto s = valuesOf(softmax(big, -1));
  const double z = 1 + std::exp(-1.0) + std::exp(-2.0);
  CHECK(s[2] == doctest::Approx(1 / z).epsilon(1e-6));
  const auto l = valuesOf(logSoftmax(tensorOf({-1000, 0, 1000}, Shape{3}, DType::F32), 0));
  CHECK(l[2] == doctest::Approx(0.0));
  CHECK(l[0] == doctest::Approx(-2000.0));
}

TEST_CASE("cross-entropy is the mean negative log-likelihood of the labels") {
  const std::vector<double> logits = {2, 1, 0.1, 0.5, 2.5, -1};
  const Tensor ce = crossEntropy(tensorOf(logits, Shape{2, 3}, DType::F32), tensorOf({0, 1}, Shape{2}, DType::I64));
  auto nll = [&](int row, int label) {
    double s = 0;
    for (int j = 0; j < 3; ++j) s += std::exp(logits[row * 3 + j]);
    return -(logits[row * 3 + label] - std::log(s));
  };
  CHECK(ce.isScalar());
  CHECK(ce.dtype() == DType::F32);
  CHECK(ce.toDouble() == doctest::Approx((nll(0, 0) + nll(1, 1)) / 2).epsilon(1e-6));
  CHECK_THROWS_WITH_AS(crossEntropy(tensorOf(logits, Shape{2, 3}), tensorOf({0, 3}, Shape{2}, DType::I64)),
                       doctest::Contains("label 3 is outside [0, 3)"), Error);
  CHECK_THROWS_AS(crossEntropy(tensorOf(logits, Shape{2, 3}), tensorOf({0, 1}, Shape{2})), Error); // float labels
}

TEST_CASE("mse and layer-norm follow their formulas") {
  CHECK(mse(tensorOf({1, 2, 3}, Shape{3}), tensorOf({1, 4, 0}, Shape{3})).toDouble() == doctest::Approx(13.0 / 3));
  const auto values = randomValues(2 * 6, 9);
  const auto got = valuesOf(layerNorm(tensorOf(values, Shape{2, 6}), -1, 1e-5));
  for (int r = 0; r < 2; ++r) {
    double mean = 0, var = 0;
    for (int j = 0; j < 6; ++j) mean += values[r * 6 + j] / 6;
    for (int j = 0; j < 6; ++j) var += (values[r * 6 + j] - mean) * (values[r * 6 + j] - mean) / 6;
    for (int j = 0; j < 6; ++j)
      CHECK(got[r * 6 + j] == doctest::Approx((values[r * 6 + j] - mean) / std::sqrt(var + 1e-5)).epsilon(1e-12));
  }
}
