// runtime/FastMath.h — exp, log, tanh, sigmoid, erf and gelu as polynomials.
//
// LLVM maps no vector tanh (or exp, log, erf) on x86: a loop calling libm stays scalar.
// These are written without branches (both sides computed, then selected) and with
// explicit fma, so that once inlined into a loop the vectoriser turns them into vector
// code for the host, and so that every compiler computes the same bits from them (the
// kernel library is compiled with -ffp-contract=off). Range reduction and polynomials
// follow Cephes's single-precision functions. The eager kernels and the :cpu backend's
// kernel library (compiler/cpu/kernels) both use them, so eager and compiled code agree.
// Error bounds against float64, measured over every 7th float bit pattern
// (tests/unit/runtime/FastMathTest.cpp sweeps them densely and asserts the bound):
//
//   fastExp      ≤ 1.5 ulp   (measured 1.02; x < -103.97 gives 0, x > 88.72 gives +inf)
//   fastLog      ≤ 1 ulp     (measured 0.80; x < 0 gives NaN, 0 gives -inf; subnormals)
//   fastTanh     ≤ 1.5 ulp   (measured 1.33; |x| ≥ 9 gives ±1)
//   fastSigmoid  ≤ 3 ulp     (measured 2.72; both tails without cancellation)
//   fastErf      ≤ 8 ulp     (measured 7.42, near ±3.9 where erf is within 1e-7 of ±1;
//                             |x| ≥ 4 gives ±1)
//
//   fastGelu     ≤ 8 ulp     (x Φ(x) from the normal tail Φ(-|x|), never 1 + erf(x/√2),
//                             which cancels for x < 0; see the function)
//
// The :cpu backend's tests sweep the compiled code the same way
// (tests/unit/compiler/CpuBackendTest.cpp) and check it computes these bits exactly.
//
// NaN propagates through all of them; ±0 and ±inf give the exact results.
// Only float is approximated here: double calls libm (std::exp...), correctly rounded
// or nearly, and rarely in hot loops.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

namespace tsl::fastmath {

inline float bitsToFloat(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}
inline uint32_t floatToBits(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  return bits;
}
inline float select(bool c, float a, float b) { return c ? a : b; }
/// max(x, lo) and min(x, hi) as std::fmax and std::fmin give them for a constant bound (a
/// NaN x gives the bound), written as comparisons: GCC calls libm for std::fmin and
/// std::fmax, which keeps every loop around them scalar.
inline float atLeast(float x, float lo) { return x > lo ? x : lo; }
inline float atMost(float x, float hi) { return x < hi ? x : hi; }

/// 2^n for an integer n in [-126, 127] (no overflow or subnormal checks: callers scale).
inline float pow2(int32_t n) { return bitsToFloat(static_cast<uint32_t>(n + 127) << 23); }

/// e^x. Cody-Waite reduction by ln 2 in two parts, a degree-6 polynomial on
/// [-ln2/2, ln2/2], and scaling by 2^n in two steps (so that subnormal results come out
/// rounded once, not flushed).
inline float fastExp(float x) {
  const float clamped = atMost(atLeast(x, -104.0f), 89.0f);
  const float n = std::nearbyint(clamped * 1.44269504088896341f); // x / ln 2
  float r = std::fma(n, -0.693359375f, clamped);                     // ln 2, high part (exact)
  r = std::fma(n, 2.12194440e-4f, r);                                // ln 2, low part
  float p = 1.9875691500e-4f;
  p = std::fma(p, r, 1.3981999507e-3f);
  p = std::fma(p, r, 8.3334519073e-3f);
  p = std::fma(p, r, 4.1665795894e-2f);
  p = std::fma(p, r, 1.6666665459e-1f);
  p = std::fma(p, r, 5.0000001201e-1f);
  const float e = std::fma(p * r, r, r) + 1.0f; // 1 + r + r² p
  // 2^n as 2^half · 2^(n - half): each factor is a normal float for n in [-150, 128].
  const auto k = static_cast<int32_t>(n);
  const int32_t half = k / 2;
  const float scaled = e * pow2(half) * pow2(k - half);
  float result = select(x > 88.7228393f, INFINITY, scaled);
  result = select(x < -103.972076f, 0.0f, result);
  return select(x != x, x, result);
}

/// ln x. x = m · 2^e with m in [√½, √2), then log(1 + f) = f - f²/2 + f³ P(f) for f = m - 1.
inline float fastLog(float x) {
  // Subnormals: scale up by 2^23 first, and subtract 23 from the exponent.
  const bool subnormal = x < 1.17549435e-38f;
  const float normal = select(subnormal, x * 8388608.0f, x);
  const uint32_t bits = floatToBits(normal);
  int32_t e = static_cast<int32_t>((bits >> 23) & 0xff) - 126;
  float m = bitsToFloat((bits & 0x807fffffu) | 0x3f000000u); // in [0.5, 1)
  const bool small = m < 0.707106781186547524f;
  e = small ? e - 1 : e;
  m = select(small, m + m, m);
  const float f = m - 1.0f;
  const float z = f * f;
  float p = 7.0376836292e-2f;
  p = std::fma(p, f, -1.1514610310e-1f);
  p = std::fma(p, f, 1.1676998740e-1f);
  p = std::fma(p, f, -1.2420140846e-1f);
  p = std::fma(p, f, 1.4249322787e-1f);
  p = std::fma(p, f, -1.6668057665e-1f);
  p = std::fma(p, f, 2.0000714765e-1f);
  p = std::fma(p, f, -2.4999993993e-1f);
  p = std::fma(p, f, 3.3333331174e-1f);
  const float ef = static_cast<float>(subnormal ? e - 23 : e);
  float y = p * f * z;
  y = std::fma(ef, -2.12194440e-4f, y);
  y = std::fma(z, -0.5f, y);
  float result = f + y;
  result = std::fma(ef, 0.693359375f, result);
  result = select(x == INFINITY, INFINITY, result);
  result = select(x == 0.0f, -INFINITY, result);
  result = select(x < 0.0f, NAN, result);
  return select(x != x, x, result);
}

/// tanh x: an odd polynomial for |x| < 0.625, else 1 - 2 / (e^{2|x|} + 1) with x's sign.
inline float fastTanh(float x) {
  const float a = std::fabs(x);
  const float z = x * x;
  float p = -5.70498872745e-3f;
  p = std::fma(p, z, 2.06390887954e-2f);
  p = std::fma(p, z, -5.37397155531e-2f);
  p = std::fma(p, z, 1.33314422036e-1f);
  p = std::fma(p, z, -3.33332819422e-1f);
  const float nearZero = std::fma(p * z, x, x);
  const float e = fastExp(atMost(a + a, 18.0f));
  const float far = std::copysign(1.0f - 2.0f / (e + 1.0f), x);
  float result = select(a < 0.625f, nearZero, far);
  result = select(a >= 9.0f, std::copysign(1.0f, x), result);
  return select(x != x || a == 0.0f, x, result); // NaN, and ±0 keeps its sign
}

/// 1 / (1 + e^-x), from e^-|x| on either side so that neither tail cancels.
inline float fastSigmoid(float x) {
  const float e = fastExp(-std::fabs(x));
  const float r = 1.0f / (1.0f + e);
  const float result = select(x >= 0.0f, r, e * r);
  return select(x != x, x, result);
}

/// erf x: an odd rational function x P(x²) / Q(x²) on [-4, 4] (a minimax fit of degree
/// 13 over 8), ±1 beyond.
inline float fastErf(float x) {
  const float c = atMost(atLeast(x, -4.0f), 4.0f);
  const float z = c * c;
  float p = -2.72614225801306e-10f;
  p = std::fma(p, z, 2.77068142495902e-08f);
  p = std::fma(p, z, -2.10102402082508e-06f);
  p = std::fma(p, z, -5.69250639462346e-05f);
  p = std::fma(p, z, -7.34990630326855e-04f);
  p = std::fma(p, z, -2.95459980854025e-03f);
  p = std::fma(p, z, -1.60960333262415e-02f);
  p = p * c;
  float q = -1.45660718464996e-05f;
  q = std::fma(q, z, -2.13374055278905e-04f);
  q = std::fma(q, z, -1.68282697438203e-03f);
  q = std::fma(q, z, -7.37332916720468e-03f);
  q = std::fma(q, z, -1.42647390514189e-02f);
  float result = p / q;
  // Tiny x: erf x = 2x/√π to within x³/3, and the rational form would lose bits to
  // underflow in its products.
  result = select(std::fabs(x) < 1e-10f, x * 1.12837916709551257f, result);
  return select(x != x, x, result);
}

/// gelu x = x Φ(x), Φ the standard normal distribution function. Written with the tail
/// q = Φ(-|x|) = φ(t) R(t), t = |x|, φ the normal density and R Mills' ratio, so that no
/// step cancels: x q for x < 0 (where 0.5 x (1 + erf(x/√2)) loses all its bits to 1 + erf
/// near -1, 10 % at x = -5), x - x q for x > 0. R(t) (t + 2) is a polynomial of degree 10
/// in s = (t - 4) / (t + 4), a weighted least-squares fit on t in [0, 14.5] within 4.5e-10
/// relative; φ(t) √(2π) = e^{-t²/2} is split so that exp's argument, as large as 105,
/// keeps its low bits. Beyond t = 14.5, q underflows to 0. Products are ordered so that
/// the only subnormal intermediate is the result's own last factor.
inline float fastGelu(float x) {
  const float t = atMost(std::fabs(x), 14.5f);
  // One division for both quotients: s = (t - 4) / (t + 4) and R = p(s) / (t + 2).
  const float inverse = 1.0f / ((t + 4.0f) * (t + 2.0f));
  const float s = (t - 4.0f) * (t + 2.0f) * inverse;
  float p = -1.6408093794e-4f;
  p = std::fma(p, s, -2.9804386131e-4f);
  p = std::fma(p, s, 1.2993181107e-3f);
  p = std::fma(p, s, 8.6864787018e-4f);
  p = std::fma(p, s, -1.1276964185e-2f);
  p = std::fma(p, s, 2.3675025400e-2f);
  p = std::fma(p, s, -3.3399419209e-3f);
  p = std::fma(p, s, -1.0805349552e-1f);
  p = std::fma(p, s, 3.4686436476e-1f);
  p = std::fma(p, s, -6.6952341355e-1f);
  p = std::fma(p, s, 1.4199142981e+0f);
  const float mills = p * (t + 4.0f) * inverse;
  // e^{-t²/2} = e^{-h²/2} e^{y}, y = -(t - h)(t + h)/2: h is t cut to 12 bits, so h² and
  // the first argument are exact; |y| < 0.06 (t - h < 2^-8 for t < 16), where 1 + y + ... +
  // y⁴/24 is within 5e-9.
  const float h = bitsToFloat(floatToBits(t) & 0xfffff000u);
  const float y = -0.5f * (t - h) * (t + h);
  float near = 4.1666666667e-2f;
  near = std::fma(near, y, 1.6666666667e-1f);
  near = std::fma(near, y, 0.5f);
  near = std::fma(near, y, 1.0f);
  near = std::fma(near, y, 1.0f);
  const float far = fastExp(-0.5f * h * h);
  const float xq = x * (mills * 0.398942280401432678f) * near * far; // x Φ(-t); 1/√(2π)
  float result = select(x > 0.0f, x - xq, xq); // -0 gives -0
  result = select(x == INFINITY, x, result);   // inf - inf · 0 would be NaN
  return result;                              // NaN and -inf (-inf · 0) give NaN
}

} // namespace tsl::fastmath
