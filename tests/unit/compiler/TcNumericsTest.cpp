// tests/unit/compiler/TcNumericsTest.cpp — group N of docs/tensor-core.md's known answers:
// fp16 and bf16 rounding, block_fma against ieee_seq, int8 accumulation with wrap counting.
#include "compiler/tc/Numerics.h"

#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <vector>

using namespace tsl::compiler::tc;

namespace {

uint16_t f16(double x) {
  NumericsCounters c;
  return toF16(x, preset("a2"), c);
}
uint16_t bf16(uint32_t bits) {
  NumericsCounters c;
  return toBf16(bits, preset("a2"), c);
}
double p2(int e) { return std::ldexp(1.0, e); }

} // namespace

TEST_CASE("fp16 rounds exact values to nearest even (group N)") {
  CHECK(f16(65504) == 0x7BFF);
  CHECK(f16(65519) == 0x7BFF);
  CHECK(f16(65519.99) == 0x7BFF);
  CHECK(f16(65520) == 0x7C00);
  CHECK(f16(65536) == 0x7C00);
  CHECK(f16(-65520) == 0xFC00);
  CHECK(f16(1 + p2(-11)) == 0x3C00);
  CHECK(f16(1 + 3 * p2(-11)) == 0x3C02);
  CHECK(f16(2049) == 0x6800);
  CHECK(f16(2051) == 0x6802);
  CHECK(f16(p2(-24)) == 0x0001);
  CHECK(f16(p2(-25)) == 0x0000);
  CHECK(f16(p2(-25) + p2(-40)) == 0x0001);
  CHECK(f16(3 * p2(-25)) == 0x0002);
  CHECK(f16(1023 * p2(-24)) == 0x03FF);
  CHECK(f16(p2(-14) - p2(-25)) == 0x0400);
  CHECK(f16(0.1) == 0x2E66);
  CHECK(f16(-0.0) == 0x8000);
  CHECK(f16(std::numeric_limits<double>::quiet_NaN()) == 0x7E00);
  // the double-rounding trap: directly, not through f32
  CHECK(f16(1 + p2(-11) + p2(-40)) == 0x3C01);
  CHECK(f16(static_cast<float>(1 + p2(-11) + p2(-40))) == 0x3C00);
  // values read back
  for (uint16_t bits : {0x0001, 0x03FF, 0x0400, 0x3C00, 0x7BFF, 0x8000, 0xFC00})
    CHECK(f16(fromF16(bits)) == bits);
}

TEST_CASE("bf16 rounds f32 bits to nearest even, NaN kept a quiet NaN (group N)") {
  CHECK(bf16(0x3F808000) == 0x3F80);
  CHECK(bf16(0x3F818000) == 0x3F82);
  CHECK(bf16(0x7F7F7FFF) == 0x7F7F);
  CHECK(bf16(0x7F7F8000) == 0x7F80);
  CHECK(bf16(0x00018000) == 0x0002);
  CHECK(bf16(0x00000001) == 0x0000);
  CHECK(std::isnan(fromBf16(bf16(0x7F800001))));
  CHECK(bf16(0x7FFFFFFF) == 0x7FC0);
  CHECK(bf16(0xFFFFFFFF) == 0xFFC0);
}

TEST_CASE("counters, and the 910a preset's saturation and NaN to zero") {
  NumericsCounters c;
  const Device a2 = preset("a2"), old = preset("910a");
  toF16(1e6, a2, c);
  toF16(p2(-30), a2, c);
  toF16(std::nan(""), a2, c);
  toBf16(0x7F7F8000, a2, c);
  CHECK(c == NumericsCounters{2, 1, 1, 0});
  NumericsCounters d;
  CHECK(toF16(1e6, old, d) == 0x7BFF);
  CHECK(toF16(-1e6, old, d) == 0xFBFF);
  CHECK(toF16(std::nan(""), old, d) == 0x0000);
  CHECK(toBf16(0x7F7F8000, old, d) == 0x7F7F);
  CHECK(d.overflow == 3);
}

TEST_CASE("block_fma against ieee_seq on the known answers' cases (group N)") {
  const BlockFma mode{4, 0, true};
  struct Case {
    std::vector<double> b;
    double c, blockFma, ieeeSeq;
  };
  const Case cases[] = {
      {{2, p2(-23) + p2(-24), 0, 0}, 0, 2, 2 + p2(-22)},
      {{-2, -(p2(-23) + p2(-24)), 0, 0}, 0, -2, -(2 + p2(-22))},
      {{p2(-24), p2(-24), p2(-24), p2(-24)}, 1 - p2(-24), 1 + p2(-23), 1},
      {{p2(-24), p2(-24), p2(-24), p2(-24)}, 1, 1, 1},
      {{1, 1, 1, 1}, 1 + p2(-22) + p2(-23), 5, 5 + p2(-21)},
      {{1, 1.5, 1.75, 1.875}, 1.875, 8, 8},
  };
  for (const Case& k : cases) {
    CAPTURE(k.c);
    // a = ones: the products are b
    CHECK(static_cast<double>(accumulateBlockFma(static_cast<float>(k.c), k.b, mode)) == k.blockFma);
    CHECK(static_cast<double>(accumulateIeeeSeq(static_cast<float>(k.c), k.b)) == k.ieeeSeq);
  }
}

TEST_CASE("roundSum rounds the exact sum once, also where f64 would round first") {
  // 1 + 2^-24 is a tie in f32 (to 1); a tiny extra term decides it upward — which a
  // sum in f64 loses when the term is below f64's precision at 1.
  CHECK(roundSum(1 + p2(-24), p2(-80)) == 1 + p2(-23));
  CHECK(roundSum(1 + p2(-24), -p2(-80)) == 1.0f);
  CHECK(roundSum(1, p2(-24)) == 1.0f);
  CHECK(roundSum(p2(-140), p2(-140)) == static_cast<float>(p2(-139)));
}

TEST_CASE("int8 products accumulate in int32, wrapping and counted (group N)") {
  NumericsCounters c;
  CHECK(accumulateInt32(0, std::vector<int64_t>(32, 127 * 127), c) == 516128);
  CHECK(accumulateInt32(0, std::vector<int64_t>(32, 128 * 128), c) == 524288);
  CHECK(c.wraps == 0);
  CHECK(accumulateInt32(INT32_MAX, std::vector<int64_t>{1}, c) == INT32_MIN);
  CHECK(c.wraps == 1);
  CHECK(accumulateInt32(INT32_MIN, std::vector<int64_t>{-128 * 127}, c) == 2147467392);
  CHECK(c.wraps == 2);
  CHECK(accumulateInt32(0, std::vector<int64_t>(131072, 128 * 128), c) == INT32_MIN);
  CHECK(c.wraps == 3);
}
