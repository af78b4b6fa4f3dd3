// tests/unit/runtime/RandomTest.cpp — Philox known answers, reproducibility, distributions.
#include "Reference.h"
#include "runtime/Random.h"

#include <cmath>

using namespace tsl;
using namespace tsl::test;

TEST_CASE("Philox 4x32-10 reproduces the Random123 known-answer vectors") {
  using Block = std::array<uint32_t, 4>;
  CHECK(philox({0, 0, 0, 0}, {0, 0}) == Block{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8});
  CHECK(philox({0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff}, {0xffffffff, 0xffffffff}) ==
        Block{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd});
  CHECK(philox({0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}, {0xa4093822, 0x299f31d0}) ==
        Block{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1});
}

TEST_CASE("the same key gives the same bits; different keys differ") {
  const Tensor k = rngKey(42);
  CHECK(valuesOf(randUniform(k, Shape{100}, DType::F32)) == valuesOf(randUniform(k, Shape{100}, DType::F32)));
  // A prefix of a larger draw: element i depends only on i and the key.
  const auto small = valuesOf(randUniform(k, Shape{10}, DType::F32));
  const auto large = valuesOf(randUniform(k, Shape{1000}, DType::F32));
  CHECK(std::equal(small.begin(), small.end(), large.begin()));
  CHECK(valuesOf(randUniform(rngKey(43), Shape{10}, DType::F32)) != small);
  const Tensor keys = rngSplit(k, 3);
  CHECK(keys.shape() == Shape{3, 2});
  CHECK(valuesOf(keys) == valuesOf(rngSplit(k, 3)));
  const auto k0 = valuesOf(selectIndex(keys, 0, 0)), k1 = valuesOf(selectIndex(keys, 0, 1));
  CHECK(k0 != k1);
  CHECK(valuesOf(randUniform(selectIndex(keys, 0, 0), Shape{5}, DType::F32)) !=
        valuesOf(randUniform(selectIndex(keys, 0, 1), Shape{5}, DType::F32)));
}

TEST_CASE("uniform values lie in [0, 1) with the right moments for every float dtype") {
  for (DType dtype : {DType::F16, DType::BF16, DType::F32, DType::F64}) {
    CAPTURE(dtypeName(dtype));
    const auto v = valuesOf(randUniform(rngKey(7), Shape{200000}, dtype));
    double mean = 0, var = 0;
    for (double x : v) {
      CHECK_MESSAGE((x >= 0 && x < 1), x);
      mean += x;
    }
    mean /= static_cast<double>(v.size());
    for (double x : v) var += (x - mean) * (x - mean);
    var /= static_cast<double>(v.size());
    CHECK(mean == doctest::Approx(0.5).epsilon(0.01));
    CHECK(var == doctest::Approx(1.0 / 12).epsilon(0.02));
  }
}

TEST_CASE("normal values have mean 0 and variance 1") {
  const auto v = valuesOf(randNormal(rngKey(3), Shape{200001}, DType::F32));
  double mean = 0, var = 0, within1 = 0;
  for (double x : v) mean += x;
  mean /= static_cast<double>(v.size());
  for (double x : v) {
    var += (x - mean) * (x - mean);
    within1 += std::abs(x) < 1;
  }
  var /= static_cast<double>(v.size());
  CHECK(std::abs(mean) < 0.01);
  CHECK(var == doctest::Approx(1.0).epsilon(0.01));
  CHECK(within1 / static_cast<double>(v.size()) == doctest::Approx(0.6827).epsilon(0.01));
}

TEST_CASE("dropout keeps about 1 - rate of the elements, scaled by 1 / (1 - rate)") {
  const Tensor x = Tensor::ofFloat(2.0, DType::F32);
  const auto v = valuesOf(dropout(rngKey(1), applyBinary(BinaryOp::Add, Tensor::zeros(DType::F32, Shape{100000}), x), 0.25));
  double kept = 0;
  for (double e : v) {
    CHECK_MESSAGE((e == 0 || e == doctest::Approx(2.0 / 0.75)), e);
    kept += e != 0;
  }
  CHECK(kept / 100000 == doctest::Approx(0.75).epsilon(0.01));
  CHECK(valuesOf(dropout(rngKey(1), Tensor::zeros(DType::F32, Shape{4}), 1.0)) == std::vector<double>{0, 0, 0, 0});
  CHECK_THROWS_AS(dropout(rngKey(1), x, 1.5), Error);
}

TEST_CASE("keys are checked") {
  CHECK_THROWS_WITH_AS(randUniform(Tensor::zeros(DType::F32, Shape{2}), Shape{3}, DType::F32),
                       doctest::Contains("expects a key"), Error);
  CHECK_THROWS_AS(randUniform(rngKey(0), Shape{3}, DType::I32), Error);
}
