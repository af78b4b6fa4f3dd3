// tests/unit/runtime/Reference.h — helpers for checking kernels against float64 references.
//
// Tensors are made from and read back into std::vector<double> in row-major order, so a
// test can compute the expected result with plain loops over doubles (never with the
// kernels under test).
#pragma once

#include "runtime/Elementwise.h"
#include "runtime/Views.h"

#include <doctest/doctest.h>
#include <random>
#include <vector>

namespace tsl::test {

/// A tensor of `dtype` holding `values` (row-major) in `shape`.
inline Tensor tensorOf(const std::vector<double>& values, const Shape& shape, DType dtype = DType::F64) {
  Tensor t = Tensor::empty(DType::F64, shape);
  REQUIRE(static_cast<int64_t>(values.size()) == t.numel());
  std::copy(values.begin(), values.end(), reinterpret_cast<double*>(t.mutableData()));
  return dtype == DType::F64 ? t : astype(t, dtype);
}

/// The elements of any tensor (any view, any dtype) as doubles in row-major order.
inline std::vector<double> valuesOf(const Tensor& t) {
  const Tensor c = contiguous(astype(t, DType::F64));
  const double* p = reinterpret_cast<const double*>(c.data());
  return std::vector<double>(p, p + c.numel());
}

/// `n` uniform values in [lo, hi) from a fixed seed.
inline std::vector<double> randomValues(int64_t n, unsigned seed, double lo = -2.0, double hi = 2.0) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> dist(lo, hi);
  std::vector<double> out(static_cast<size_t>(n));
  for (double& v : out) v = dist(gen);
  return out;
}

/// Checks two value lists agree within a relative tolerance (and an absolute floor).
inline void checkClose(const std::vector<double>& actual, const std::vector<double>& expected, double rtol,
                       double atol = 1e-12) {
  REQUIRE(actual.size() == expected.size());
  for (size_t i = 0; i < actual.size(); ++i) {
    CAPTURE(i);
    if (std::isnan(expected[i])) {
      CHECK(std::isnan(actual[i]));
      continue;
    }
    CHECK(std::abs(actual[i] - expected[i]) <= atol + rtol * std::abs(expected[i]));
  }
}

/// Row-major strides of a shape, for naive index arithmetic.
inline std::vector<int64_t> stridesOf(const Shape& shape) {
  std::vector<int64_t> s(static_cast<size_t>(shape.rank()), 1);
  for (int i = shape.rank() - 2; i >= 0; --i) s[i] = s[i + 1] * shape[i + 1];
  return s;
}

} // namespace tsl::test
