// tests/unit/runtime/FastMathTest.cpp — the polynomials of runtime/FastMath.h against
// float64, at the error bounds its header documents.
//
// The sweep takes every 241st float bit pattern (17.8 million values across every
// exponent), plus every float of the intervals where a function changes formula or its
// error peaks; the reference is the C library's double-precision function. A result's
// error is measured in units of the last place of the correctly rounded float result.
#include "runtime/FastMath.h"

#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>

using namespace tsl::fastmath;

namespace {

float fromBits(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

/// |got - want| in ulps of the float nearest `want` (subnormal ulps below the normals).
double ulpError(float got, double want) {
  if (std::isnan(want)) return std::isnan(got) ? 0 : std::numeric_limits<double>::infinity();
  const float rounded = static_cast<float>(want);
  if (std::isinf(rounded)) return got == rounded ? 0 : std::numeric_limits<double>::infinity();
  double ulp = std::ldexp(1.0, -149);
  if (std::fabs(rounded) >= std::numeric_limits<float>::min()) {
    int exponent = 0;
    std::frexp(rounded, &exponent);
    ulp = std::ldexp(1.0, exponent - 24);
  }
  return std::fabs(static_cast<double>(got) - want) / ulp;
}

struct Worst {
  double ulps = 0;
  float at = 0;
};

/// The largest error of f against reference over the sweep and the intervals.
Worst sweep(const std::function<float(float)>& f, const std::function<double(double)>& reference,
            std::initializer_list<std::pair<float, float>> intervals) {
  Worst worst;
  auto measure = [&](float x) {
    if (std::isnan(x)) return;
    const double e = ulpError(f(x), reference(static_cast<double>(x)));
    if (e > worst.ulps) worst = {e, x};
  };
  for (uint64_t bits = 0; bits < (uint64_t(1) << 32); bits += 241) measure(fromBits(static_cast<uint32_t>(bits)));
  for (const auto& [from, to] : intervals)
    for (float x = from; x <= to; x = std::nextafter(x, to + 1.0f)) {
      measure(x);
      measure(-x);
    }
  return worst;
}

double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

} // namespace

TEST_CASE("fastExp is within 1.5 ulp, overflows to inf and underflows through the subnormals") {
  const Worst w = sweep(fastExp, [](double x) { return std::exp(x); }, {{0.3f, 0.4f}, {86.0f, 89.0f}, {102.0f, 104.0f}});
  CAPTURE(w.at);
  CHECK(w.ulps <= 1.5);
  CHECK(fastExp(0.0f) == 1.0f);
  CHECK(fastExp(-0.0f) == 1.0f);
  CHECK(fastExp(std::numeric_limits<float>::infinity()) == std::numeric_limits<float>::infinity());
  CHECK(fastExp(-std::numeric_limits<float>::infinity()) == 0.0f);
  CHECK(fastExp(89.0f) == std::numeric_limits<float>::infinity());
  CHECK(fastExp(-104.0f) == 0.0f);
  CHECK(std::isnan(fastExp(std::numeric_limits<float>::quiet_NaN())));
}

TEST_CASE("fastLog is within 1 ulp, with log 0 = -inf, NaN below 0 and subnormals handled") {
  const Worst w = sweep(fastLog, [](double x) { return std::log(x); }, {{0.70f, 0.72f}, {1.38f, 1.42f}});
  CAPTURE(w.at);
  CHECK(w.ulps <= 1.0);
  CHECK(fastLog(1.0f) == 0.0f);
  CHECK(fastLog(0.0f) == -std::numeric_limits<float>::infinity());
  CHECK(fastLog(-0.0f) == -std::numeric_limits<float>::infinity());
  CHECK(std::isnan(fastLog(-1.0f)));
  CHECK(fastLog(std::numeric_limits<float>::infinity()) == std::numeric_limits<float>::infinity());
  CHECK(std::isnan(fastLog(std::numeric_limits<float>::quiet_NaN())));
  CHECK(ulpError(fastLog(std::numeric_limits<float>::denorm_min()), std::log(std::ldexp(1.0, -149))) <= 1.0);
}

TEST_CASE("fastTanh is within 1.5 ulp, odd, and saturates to exactly ±1") {
  const Worst w = sweep(fastTanh, [](double x) { return std::tanh(x); }, {{0.6f, 0.65f}, {8.9f, 9.1f}});
  CAPTURE(w.at);
  CHECK(w.ulps <= 1.5);
  for (float x : {9.0f, 10.0f, 100.0f, 1e30f, std::numeric_limits<float>::infinity()}) {
    CHECK(fastTanh(x) == 1.0f);
    CHECK(fastTanh(-x) == -1.0f);
  }
  CHECK(std::signbit(fastTanh(-0.0f)));
  CHECK(fastTanh(0.0f) == 0.0f);
  CHECK(std::isnan(fastTanh(std::numeric_limits<float>::quiet_NaN())));
  for (float x : {0.001f, 0.3f, 0.7f, 2.5f}) CHECK(fastTanh(-x) == -fastTanh(x));
}

TEST_CASE("fastSigmoid is within 3 ulp on both tails") {
  const Worst w = sweep(fastSigmoid, sigmoid, {{1.9f, 2.1f}, {15.0f, 17.0f}});
  CAPTURE(w.at);
  CHECK(w.ulps <= 3.0);
  CHECK(fastSigmoid(0.0f) == 0.5f);
  CHECK(fastSigmoid(std::numeric_limits<float>::infinity()) == 1.0f);
  CHECK(fastSigmoid(-std::numeric_limits<float>::infinity()) == 0.0f);
  CHECK(fastSigmoid(-100.0f) > 0.0f); // the lower tail keeps its small values
  CHECK(std::isnan(fastSigmoid(std::numeric_limits<float>::quiet_NaN())));
}

TEST_CASE("fastErf is within 8 ulp and reaches ±1 exactly beyond 4") {
  const Worst w = sweep(fastErf, [](double x) { return std::erf(x); }, {{3.8f, 4.0f}, {1e-11f, 1.001e-11f}});
  CAPTURE(w.at);
  CHECK(w.ulps <= 8.0);
  for (float x : {4.0f, 5.0f, 1e10f, std::numeric_limits<float>::infinity()}) {
    CHECK(fastErf(x) == 1.0f);
    CHECK(fastErf(-x) == -1.0f);
  }
  CHECK(fastErf(0.0f) == 0.0f);
  CHECK(std::signbit(fastErf(-0.0f)));
  CHECK(std::isnan(fastErf(std::numeric_limits<float>::quiet_NaN())));
}

TEST_CASE("fastGelu is within 8 ulp on both sides, its negative tail included") {
  // gelu x = 0.5 x erfc(-x/√2) in double: its rounding of x/√2, amplified by x² in the
  // tail, stays near 1e-14, far below a float's ulp.
  const auto gelu = [](double x) { return 0.5 * x * std::erfc(-x / std::sqrt(2.0)); };
  const Worst w = sweep(fastGelu, gelu, {{0.014f, 0.016f}, {0.31f, 0.34f}, {3.9f, 4.1f}, {13.0f, 14.6f}});
  CAPTURE(w.at);
  CHECK(w.ulps <= 8.0);
  // 1 + erf(-5/√2) cancelled to within 10 % of the true -1.4332579e-06.
  CHECK(ulpError(fastGelu(-5.0f), gelu(-5.0)) <= 8.0);
  CHECK(fastGelu(0.0f) == 0.0f);
  CHECK(std::signbit(fastGelu(-0.0f)));
  CHECK(fastGelu(std::numeric_limits<float>::infinity()) == std::numeric_limits<float>::infinity());
  CHECK(fastGelu(-20.0f) == 0.0f); // underflows, as the true -5.5e-88 does
  CHECK(fastGelu(100.0f) == 100.0f);
  CHECK(std::isnan(fastGelu(std::numeric_limits<float>::quiet_NaN())));
}
