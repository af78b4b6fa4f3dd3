// tests/unit/runtime/ScalarTest.cpp — rank-0 tensors: inline storage, arithmetic, edges.
#include "runtime/Elementwise.h"
#include "runtime/Format.h"

#include <atomic>
#include <cmath>
#include <cstdlib>
#include <doctest/doctest.h>
#include <limits>
#include <new>

using namespace tsl;

// Counts heap allocations made by this test program, to show scalars make none.
// ThreadSanitizer's runtime defines operator new itself (it cannot be replaced there): the
// tsan build, which runs this program for its threads, leaves this check to the others.
#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define TSL_TEST_NO_NEW_REPLACEMENT 1
#endif
#endif
#ifndef TSL_TEST_NO_NEW_REPLACEMENT
static std::atomic<long> allocations{0};
void* operator new(std::size_t size) {
  ++allocations;
  if (void* p = std::malloc(size ? size : 1)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }

TEST_CASE("scalar arithmetic allocates nothing on the heap") {
  Tensor acc = Tensor::weakInt(0);
  const Tensor one = Tensor::weakInt(1);
  Tensor x = Tensor::ofFloat(1.5, DType::F32);
  const long before = allocations.load();
  for (int i = 0; i < 1000; ++i) {
    acc = applyBinary(BinaryOp::Add, acc, one);
    x = applyUnary(UnaryOp::Tanh, applyBinary(BinaryOp::Mul, x, Tensor::weakFloat(0.5)));
    (void)applyBinary(BinaryOp::Less, acc, Tensor::ofInt(7, DType::I32));
  }
  CHECK(allocations.load() == before);
  CHECK(acc.toInt() == 1000);
}
#endif

TEST_CASE("a scalar keeps its value in its own dtype") {
  CHECK(Tensor::ofFloat(0.1, DType::F32).toDouble() == static_cast<double>(0.1f));
  CHECK(Tensor::ofFloat(0.1, DType::F64).toDouble() == 0.1);
  CHECK(Tensor::ofFloat(65520.0, DType::F16).toDouble() == INFINITY); // past f16's largest
  CHECK(Tensor::ofFloat(1.0 / 3, DType::BF16).toDouble() == 0.333984375);
  CHECK(Tensor::ofInt(3000000000LL, DType::I32).toInt() == -1294967296); // wraps like NumPy
  CHECK(Tensor::ofFloat(1e30, DType::I64).toInt() == std::numeric_limits<int64_t>::max());
  CHECK(Tensor::ofFloat(NAN, DType::I32).toInt() == 0);
  CHECK(Tensor::ofBool(true).dtype() == DType::Bool);
}

TEST_CASE("double to half rounds once, not twice through float") {
  // 1 + 2^-11 + 2^-30 lies just above the midpoint between two f16 neighbours (1 and
  // 1 + 2^-10). Through float it rounds to the midpoint 1 + 2^-11 and then, ties to
  // even, down to 1; rounded directly it must go up.
  const double value = 1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -30);
  CHECK(Tensor::ofFloat(value, DType::F16).toDouble() == 1.0 + std::ldexp(1.0, -10));
}

TEST_CASE("binary operations follow promotion and keep weakness only between literals") {
  const Tensor r1 = applyBinary(BinaryOp::Add, Tensor::weakInt(2), Tensor::weakInt(3));
  CHECK(r1.weak());
  CHECK(r1.toInt() == 5);
  const Tensor r2 = applyBinary(BinaryOp::Mul, Tensor::ofFloat(1.5, DType::F16), Tensor::weakFloat(2.0));
  CHECK(r2.dtype() == DType::F16);
  CHECK_FALSE(r2.weak());
  CHECK(r2.toDouble() == 3.0);
  const Tensor r3 = applyBinary(BinaryOp::Add, Tensor::ofInt(1, DType::I32), Tensor::weakFloat(0.5));
  CHECK(r3.dtype() == DType::F32);
  const Tensor r4 = applyBinary(BinaryOp::Add, Tensor::ofFloat(1, DType::F16), Tensor::ofFloat(1, DType::BF16));
  CHECK(r4.dtype() == DType::F32);
  const Tensor r5 = applyBinary(BinaryOp::Less, Tensor::weakInt(1), Tensor::weakFloat(1.5));
  CHECK(r5.dtype() == DType::Bool);
  CHECK(r5.isNonZero());
}

TEST_CASE("integer division gives floats; floordiv and mod stay integer with Python's signs") {
  const Tensor q = applyBinary(BinaryOp::Div, Tensor::ofInt(7, DType::I64), Tensor::ofInt(2, DType::I64));
  CHECK(q.dtype() == DType::F32);
  CHECK(q.toDouble() == 3.5);
  struct Case {
    int64_t a, b, floordiv, mod;
  };
  // Known answers (Python: a // b, a % b).
  for (const Case& c : {Case{7, 2, 3, 1}, Case{-7, 2, -4, 1}, Case{7, -2, -4, -1}, Case{-7, -2, 3, -1},
                        Case{6, 3, 2, 0}, Case{-6, 3, -2, 0}}) {
    CAPTURE(c.a);
    CAPTURE(c.b);
    const Tensor a = Tensor::ofInt(c.a), b = Tensor::ofInt(c.b);
    CHECK(applyBinary(BinaryOp::FloorDiv, a, b).toInt() == c.floordiv);
    CHECK(applyBinary(BinaryOp::Mod, a, b).toInt() == c.mod);
  }
  // Never a crash: division by zero gives 0, the minimum divided by -1 wraps.
  CHECK(applyBinary(BinaryOp::FloorDiv, Tensor::ofInt(5), Tensor::ofInt(0)).toInt() == 0);
  CHECK(applyBinary(BinaryOp::Mod, Tensor::ofInt(5), Tensor::ofInt(0)).toInt() == 0);
  const int64_t min = std::numeric_limits<int64_t>::min();
  CHECK(applyBinary(BinaryOp::FloorDiv, Tensor::ofInt(min), Tensor::ofInt(-1)).toInt() == min);
  CHECK(applyBinary(BinaryOp::Mod, Tensor::ofInt(min), Tensor::ofInt(-1)).toInt() == 0);
  CHECK(applyBinary(BinaryOp::Add, Tensor::ofInt(std::numeric_limits<int64_t>::max()), Tensor::ofInt(1)).toInt() == min);
}

TEST_CASE("float floordiv and mod match Python's divmod") {
  struct Case {
    double a, b, floordiv, mod;
  };
  for (const Case& c : {Case{7.5, 2, 3, 1.5}, Case{-7.5, 2, -4, 0.5}, Case{7.5, -2, -4, -0.5}}) {
    CAPTURE(c.a);
    const Tensor a = Tensor::ofFloat(c.a, DType::F64), b = Tensor::ofFloat(c.b, DType::F64);
    CHECK(applyBinary(BinaryOp::FloorDiv, a, b).toDouble() == c.floordiv);
    CHECK(applyBinary(BinaryOp::Mod, a, b).toDouble() == c.mod);
  }
}

TEST_CASE("elementwise functions of scalars agree with float64 references") {
  const double xs[] = {-3.0, -0.5, 0.0, 0.25, 1.0, 2.5};
  for (double x : xs) {
    CAPTURE(x);
    const Tensor t = Tensor::ofFloat(x, DType::F64);
    CHECK(applyUnary(UnaryOp::Exp, t).toDouble() == doctest::Approx(std::exp(x)).epsilon(1e-15));
    CHECK(applyUnary(UnaryOp::Tanh, t).toDouble() == doctest::Approx(std::tanh(x)).epsilon(1e-15));
    CHECK(applyUnary(UnaryOp::Sigmoid, t).toDouble() == doctest::Approx(1 / (1 + std::exp(-x))).epsilon(1e-15));
    CHECK(applyUnary(UnaryOp::Relu, t).toDouble() == (x > 0 ? x : 0));
    CHECK(applyUnary(UnaryOp::Gelu, t).toDouble() ==
          doctest::Approx(0.5 * x * std::erfc(-x / std::sqrt(2.0))).epsilon(1e-14));
  }
  CHECK(applyUnary(UnaryOp::Sqrt, Tensor::weakInt(9)).toDouble() == 3.0);
  CHECK(applyUnary(UnaryOp::Sqrt, Tensor::ofInt(9, DType::I32)).dtype() == DType::F32);
  CHECK(std::isnan(applyUnary(UnaryOp::Log, Tensor::ofFloat(-1.0)).toDouble()));
  CHECK(applyUnary(UnaryOp::Sigmoid, Tensor::ofFloat(-1000.0)).toDouble() == 0.0); // no overflow
}

TEST_CASE("scalars print in the shortest form that reads back in their dtype") {
  CHECK(formatScalar(Tensor::weakInt(3)) == "3");
  CHECK(formatScalar(Tensor::weakFloat(0.1)) == "0.1");
  CHECK(formatScalar(Tensor::weakFloat(2.0)) == "2.0");
  CHECK(formatScalar(Tensor::weakFloat(-2.5e-8)) == "-2.5e-08");
  CHECK(formatScalar(Tensor::ofFloat(0.1, DType::F64)) == "0.1");
  CHECK(formatScalar(Tensor::ofFloat(1.0 / 3, DType::F32)) == "0.33333334");
  CHECK(formatScalar(Tensor::ofFloat(1.0 / 3, DType::F64)) == "0.3333333333333333");
  CHECK(formatScalar(Tensor::ofFloat(0.1, DType::F16)) == "0.1");
  CHECK(formatScalar(Tensor::ofFloat(2048, DType::F16)) == "2048.0");
  CHECK(formatScalar(Tensor::ofFloat(1.0 / 3, DType::BF16)) == "0.334");
  CHECK(formatScalar(Tensor::ofFloat(-NAN, DType::F32)) == "nan");
  CHECK(formatScalar(Tensor::ofFloat(INFINITY, DType::F32)) == "inf");
  CHECK(formatScalar(Tensor::ofFloat(-INFINITY, DType::F64)) == "-inf");
  CHECK(formatScalar(Tensor::ofBool(false)) == "false");
  CHECK(formatScalar(Tensor::ofFloat(1e20, DType::F32)) == "1e+20");
}
