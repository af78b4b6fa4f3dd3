// compiler/tc/Numerics.cpp — fp16/bf16 rounding and the cube's accumulation modes.
#include "compiler/tc/Numerics.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

namespace tsl::compiler::tc {

uint16_t toF16(double x, const Device& d, NumericsCounters& counters) {
  if (std::isnan(x)) {
    ++counters.nan;
    return d.nan == NanMode::Zero ? 0 : 0x7E00;
  }
  const uint16_t sign = std::signbit(x) ? 0x8000 : 0;
  const double a = std::fabs(x);
  const uint16_t infinity = d.overflow == Overflow::Saturate ? 0x7BFF : 0x7C00;
  if (std::isinf(a)) return sign | 0x7C00; // an infinity stays one
  if (a == 0) return sign;
  // The spacing of fp16 values around a: 2^(e - 11) for a in [2^(e-1), 2^e), never
  // below the subnormal step 2^-24. a / q is exact, and nearbyint rounds it to even.
  int e = 0;
  std::frexp(a, &e);
  const double q = std::ldexp(1.0, std::max(e - 11, -24));
  const double v = std::nearbyint(a / q) * q;
  if (v > 65504.0) { // 65520, the tie, went to 65536: to even
    ++counters.overflow;
    return sign | infinity;
  }
  if (v == 0) {
    ++counters.underflow;
    return sign;
  }
  if (v < std::ldexp(1.0, -14)) return sign | static_cast<uint16_t>(v / std::ldexp(1.0, -24)); // subnormal
  int ve = 0;
  std::frexp(v, &ve); // v in [2^(ve-1), 2^ve)
  const auto exponent = static_cast<uint16_t>(ve - 1 + 15);
  const auto mantissa = static_cast<uint16_t>((v / std::ldexp(1.0, ve - 1) - 1.0) * 1024.0);
  return sign | static_cast<uint16_t>(exponent << 10) | mantissa;
}

uint16_t f32ToF16(uint32_t bits, const Device& d, NumericsCounters& counters) {
  const auto sign = static_cast<uint16_t>((bits >> 16) & 0x8000);
  const uint32_t a = bits & 0x7FFFFFFF;
  if (a > 0x7F800000) return toF16(std::numeric_limits<double>::quiet_NaN(), d, counters);
  if (a == 0x7F800000) return sign | 0x7C00;
  uint16_t h;
  if (a >= 0x477FF000) { // 65520 and up: the tie goes to even, 65536 — infinity
    ++counters.overflow;
    return sign | (d.overflow == Overflow::Saturate ? 0x7BFF : 0x7C00);
  } else if (a < 0x38800000) { // below 2^-14: subnormal; adding 0.5 rounds at 2^-24 to even
    float f;
    const uint32_t magic = 0x3F000000; // 0.5
    std::memcpy(&f, &a, 4);
    float m;
    std::memcpy(&m, &magic, 4);
    f += m;
    uint32_t r;
    std::memcpy(&r, &f, 4);
    h = static_cast<uint16_t>(r - magic);
    if (h == 0 && a != 0) ++counters.underflow;
  } else { // normal: rebias, round the 13 dropped bits to nearest even
    const uint32_t odd = (a >> 13) & 1;
    h = static_cast<uint16_t>((a + 0xC8000FFFu + odd) >> 13);
  }
  return sign | h;
}

uint16_t toBf16(uint32_t bits, const Device& d, NumericsCounters& counters) {
  const uint16_t sign = static_cast<uint16_t>((bits >> 16) & 0x8000);
  if ((bits & 0x7F800000) == 0x7F800000 && (bits & 0x007FFFFF) != 0) {
    ++counters.nan;
    return d.nan == NanMode::Zero ? 0 : static_cast<uint16_t>(sign | 0x7FC0);
  }
  if ((bits & 0x7FFFFFFF) == 0x7F800000) return static_cast<uint16_t>(bits >> 16); // ±inf
  const uint32_t lsb = (bits >> 16) & 1;
  const auto rounded = static_cast<uint16_t>((bits + 0x7FFF + lsb) >> 16);
  if ((rounded & 0x7FFF) == 0x7F80) {
    ++counters.overflow;
    return d.overflow == Overflow::Saturate ? static_cast<uint16_t>(sign | 0x7F7F) : rounded;
  }
  if ((rounded & 0x7FFF) == 0 && (bits & 0x7FFFFFFF) != 0) ++counters.underflow;
  return rounded;
}

double fromF16(uint16_t bits) {
  const double sign = bits & 0x8000 ? -1.0 : 1.0;
  const int exponent = (bits >> 10) & 0x1F, mantissa = bits & 0x3FF;
  if (exponent == 0) return sign * std::ldexp(mantissa, -24);
  if (exponent == 31) return mantissa ? std::numeric_limits<double>::quiet_NaN() : sign * HUGE_VAL;
  return sign * std::ldexp(1024 + mantissa, exponent - 25);
}

double fromBf16(uint16_t bits) {
  const uint32_t wide = static_cast<uint32_t>(bits) << 16;
  float f;
  std::memcpy(&f, &wide, sizeof f);
  return f;
}

float roundSum(double a, double b) {
  // TwoSum: s + err is a + b exactly. Rounding s to f32 is right unless s lies exactly
  // halfway between two floats and err pushes the true sum off the midpoint.
  const double s = a + b;
  const double bv = s - a, av = s - bv;
  const double err = (a - av) + (b - bv);
  const float f = static_cast<float>(s);
  if (err == 0 || !std::isfinite(s)) return f;
  const float other = std::nextafter(f, static_cast<float>(s > static_cast<double>(f) ? HUGE_VALF : -HUGE_VALF));
  const double mid = (static_cast<double>(f) + static_cast<double>(other)) / 2;
  if (s != mid) return f; // not a tie: the f32 nearest s is nearest s + err too
  // A tie broken the wrong way: the true sum lies on err's side of it.
  const bool towardOther = (err > 0) == (static_cast<double>(other) > static_cast<double>(f));
  return towardOther ? other : f;
}

float accumulateIeeeSeq(float c, std::span<const double> products) {
  float acc = c;
  for (double p : products) acc = roundSum(acc, p);
  return acc;
}

float accumulateBlockFma(float c, std::span<const double> products, const BlockFma& mode) {
  float acc = c;
  const size_t nb = static_cast<size_t>(std::max(1, mode.nb));
  for (size_t at = 0; at < products.size(); at += nb) {
    const size_t end = std::min(products.size(), at + nb);
    // The largest exponent among the accumulator and the block's products.
    int emax = std::numeric_limits<int>::min();
    auto consider = [&](double v) {
      if (v == 0 || !std::isfinite(v)) return;
      int e = 0;
      std::frexp(v, &e);
      emax = std::max(emax, e - 1); // v in [2^(e-1), 2^e)
    };
    consider(acc);
    for (size_t i = at; i < end; ++i) consider(products[i]);
    if (emax == std::numeric_limits<int>::min()) { // zeros, or non-finite values
      double plain = acc;
      for (size_t i = at; i < end; ++i) plain += products[i];
      acc = static_cast<float>(plain);
      continue;
    }
    // Each term truncated toward zero to a multiple of the quantum; the sum is exact.
    const double quantum = std::ldexp(1.0, emax - 23 - mode.extraBits);
    auto truncate = [&](double v) { return std::trunc(v / quantum) * quantum; };
    double sum = truncate(acc);
    for (size_t i = at; i < end; ++i) sum += truncate(products[i]);
    if (!mode.towardZero) {
      acc = static_cast<float>(sum);
      continue;
    }
    float f = static_cast<float>(sum);
    if (std::fabs(static_cast<double>(f)) > std::fabs(sum)) f = std::nextafter(f, 0.0f); // toward zero
    acc = f;
  }
  return acc;
}

int32_t accumulateInt32(int32_t c, std::span<const int64_t> products, NumericsCounters& counters) {
  int64_t acc = c;
  for (int64_t p : products) {
    const int64_t exact = acc + p;
    const auto wrapped = static_cast<int32_t>(static_cast<uint32_t>(static_cast<uint64_t>(exact)));
    if (wrapped != exact) ++counters.wraps;
    acc = wrapped;
  }
  return static_cast<int32_t>(acc);
}

} // namespace tsl::compiler::tc
