// runtime/ElementwiseFunctors.h — the arithmetic of every elementwise operation, once.
//
// Each functor maps elements of the compute type T to a result. Integer arithmetic wraps
// (two's complement, as NumPy) and never divides by zero: floordiv and mod by 0 give 0,
// the minimum integer divided by -1 wraps. Float floordiv and mod follow NumPy's divmod.
// Internal to runtime/: include only from kernel sources.
#pragma once

#include "runtime/Dispatch.h"
#include "runtime/Elementwise.h"
#include "runtime/FastMath.h"

#include <cmath>
#include <type_traits>

namespace tsl::detail {

/// Wrapping integer arithmetic (signed overflow is undefined in C++, not in TSL).
template <typename T>
inline T wrapAdd(T a, T b) {
  using U = std::make_unsigned_t<T>;
  return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
}
template <typename T>
inline T wrapSub(T a, T b) {
  using U = std::make_unsigned_t<T>;
  return static_cast<T>(static_cast<U>(a) - static_cast<U>(b));
}
template <typename T>
inline T wrapMul(T a, T b) {
  using U = std::make_unsigned_t<T>;
  return static_cast<T>(static_cast<U>(a) * static_cast<U>(b));
}

/// NumPy's float divmod: the quotient rounded toward -inf and a remainder with b's sign.
template <typename T>
inline void floatDivmod(T a, T b, T& quotient, T& remainder) {
  T mod = std::fmod(a, b);
  if (b == T(0)) {
    quotient = a / b;
    remainder = mod;
    return;
  }
  T div = (a - mod) / b;
  if (mod != T(0)) {
    if ((b < T(0)) != (mod < T(0))) {
      mod += b;
      div -= T(1);
    }
  } else {
    mod = std::copysign(T(0), b);
  }
  T floordiv;
  if (div != T(0)) {
    floordiv = std::floor(div);
    if (div - floordiv > T(0.5)) floordiv += T(1);
  } else {
    floordiv = std::copysign(T(0), a / b);
  }
  quotient = floordiv;
  remainder = mod;
}

// ---- Binary ----

struct AddFn {
  template <typename T> T operator()(T a, T b) const {
    if constexpr (std::is_integral_v<T>) return wrapAdd(a, b);
    else return a + b;
  }
};
struct SubFn {
  template <typename T> T operator()(T a, T b) const {
    if constexpr (std::is_integral_v<T>) return wrapSub(a, b);
    else return a - b;
  }
};
struct MulFn {
  template <typename T> T operator()(T a, T b) const {
    if constexpr (std::is_integral_v<T>) return wrapMul(a, b);
    else return a * b;
  }
};
struct DivFn {
  template <typename T> T operator()(T a, T b) const { return a / b; } // floats only
};
struct FloorDivFn {
  template <typename T> T operator()(T a, T b) const {
    if constexpr (std::is_integral_v<T>) {
      if (b == 0) return 0;
      if (b == -1) return wrapSub(T(0), a);
      T q = a / b;
      if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
      return q;
    } else {
      T q, r;
      floatDivmod(a, b, q, r);
      return q;
    }
  }
};
struct ModFn {
  template <typename T> T operator()(T a, T b) const {
    if constexpr (std::is_integral_v<T>) {
      if (b == 0 || b == -1) return 0;
      T r = a % b;
      if (r != 0 && ((r < 0) != (b < 0))) r += b;
      return r;
    } else {
      T q, r;
      floatDivmod(a, b, q, r);
      return r;
    }
  }
};
struct PowFn {
  template <typename T> T operator()(T a, T b) const {
    if constexpr (std::is_integral_v<T>) {
      // Integer power by squaring; a negative exponent gives the truncated reciprocal
      // (1 for a = 1, ±1 for a = -1, 0 otherwise) instead of an error mid-kernel.
      if (b < 0) return a == 1 ? 1 : a == -1 ? ((b & 1) ? -1 : 1) : 0;
      T result = 1, base = a;
      while (b > 0) {
        if (b & 1) result = wrapMul(result, base);
        base = wrapMul(base, base);
        b >>= 1;
      }
      return result;
    } else {
      return std::pow(a, b);
    }
  }
};
struct Atan2Fn {
  template <typename T> T operator()(T y, T x) const { return std::atan2(y, x); }
};
struct MaximumFn {
  template <typename T> T operator()(T a, T b) const {
    if constexpr (!std::is_integral_v<T>)
      if (a != a || b != b) return a + b; // NaN propagates
    return a > b ? a : b;
  }
};
struct MinimumFn {
  template <typename T> T operator()(T a, T b) const {
    if constexpr (!std::is_integral_v<T>)
      if (a != a || b != b) return a + b;
    return a < b ? a : b;
  }
};
struct LessFn { template <typename T> bool operator()(T a, T b) const { return a < b; } };
struct LessEqualFn { template <typename T> bool operator()(T a, T b) const { return a <= b; } };
struct GreaterFn { template <typename T> bool operator()(T a, T b) const { return a > b; } };
struct GreaterEqualFn { template <typename T> bool operator()(T a, T b) const { return a >= b; } };
struct EqualFn { template <typename T> bool operator()(T a, T b) const { return a == b; } };
struct NotEqualFn { template <typename T> bool operator()(T a, T b) const { return a != b; } };
struct LogicalAndFn {
  template <typename T> bool operator()(T a, T b) const { return a != T(0) && b != T(0); }
};
struct LogicalOrFn {
  template <typename T> bool operator()(T a, T b) const { return a != T(0) || b != T(0); }
};

// ---- Unary ----

/// The elementary functions the transcendental functors compute with: the C library's.
/// The :cpu backend's kernel library (compiler/cpu/kernels) instantiates the same functors
/// with the polynomials of runtime/FastMath.h instead, which vectorise.
struct LibmMath {
  template <typename T> static T exp(T a) { return std::exp(a); }
  template <typename T> static T log(T a) { return std::log(a); }
  template <typename T> static T tanh(T a) { return std::tanh(a); }
  template <typename T> static T erf(T a) { return std::erf(a); }
  /// gelu x = x Φ(x) = 0.5 x erfc(-x/√2): erfc has no cancellation where 1 + erf would
  /// (x < 0). A float is computed in double, whose rounding of x/√2 costs the tail nothing.
  template <typename T> static T gelu(T a) {
    using W = std::conditional_t<std::is_same_v<T, float>, double, T>;
    const W w = static_cast<W>(a);
    return static_cast<T>(W(0.5) * w * std::erfc(-w * W(0.70710678118654752440)));
  }
  /// Stable on both tails: never exp of a large positive number.
  template <typename T> static T sigmoid(T a) {
    if (a >= T(0)) return T(1) / (T(1) + std::exp(-a));
    const T e = std::exp(a);
    return e / (T(1) + e);
  }
};

/// LibmMath's functions, with FastMath's polynomials for float (they vectorise; libm's
/// calls would keep a loop scalar). Double keeps libm. What compiled code computes with
/// (the :cpu kernel library and the GEMM's epilogue).
struct PolynomialMath : LibmMath {
  using LibmMath::exp, LibmMath::log, LibmMath::tanh, LibmMath::erf, LibmMath::sigmoid, LibmMath::gelu;
  static float exp(float a) { return fastmath::fastExp(a); }
  static float log(float a) { return fastmath::fastLog(a); }
  static float tanh(float a) { return fastmath::fastTanh(a); }
  static float erf(float a) { return fastmath::fastErf(a); }
  static float sigmoid(float a) { return fastmath::fastSigmoid(a); }
  static float gelu(float a) { return fastmath::fastGelu(a); }
};

struct NegFn {
  template <typename T> T operator()(T a) const {
    if constexpr (std::is_integral_v<T>) return wrapSub(T(0), a);
    else return -a;
  }
};
struct AbsFn {
  template <typename T> T operator()(T a) const {
    if constexpr (std::is_integral_v<T>) return a < 0 ? wrapSub(T(0), a) : a;
    else return std::abs(a);
  }
};
struct SignFn {
  template <typename T> T operator()(T a) const {
    if constexpr (!std::is_integral_v<T>)
      if (a != a) return a;
    return a > T(0) ? T(1) : a < T(0) ? T(-1) : T(0);
  }
};
struct ExpFn {
  template <typename T, typename M = LibmMath> T operator()(T a) const { return M::exp(a); }
  template <typename A> static auto vec(const A& a) { return a.exp(); }
};
struct LogFn {
  template <typename T, typename M = LibmMath> T operator()(T a) const { return M::log(a); }
  template <typename A> static auto vec(const A& a) { return a.log(); }
};
struct Expm1Fn {
  template <typename T> T operator()(T a) const { return std::expm1(a); }
};
struct Log1pFn {
  template <typename T> T operator()(T a) const { return std::log1p(a); }
  template <typename A> static auto vec(const A& a) { return a.log1p(); }
};
// sqrt is an IEEE operation, correctly rounded on every engine: no vectorised form here,
// because Eigen's (under its default EIGEN_FAST_MATH) is an rsqrt estimate refined by one
// Newton step, 1 ulp off on ~40 % of floats. The plain loop vectorises to the hardware's
// correctly rounded square root (runtime/ is built with -fno-math-errno). rsqrt is the
// correctly rounded 1 / sqrt(x), as :cpu computes it.
struct SqrtFn {
  template <typename T> T operator()(T a) const { return std::sqrt(a); }
};
struct RsqrtFn {
  template <typename T> T operator()(T a) const { return T(1) / std::sqrt(a); }
};
struct SquareFn {
  template <typename T> T operator()(T a) const {
    if constexpr (std::is_integral_v<T>) return wrapMul(a, a);
    else return a * a;
  }
  template <typename A> static auto vec(const A& a) { return a.square(); }
};
// The rounding functions are identities on integers; on floats they are IEEE operations,
// exact on every engine. round is rint in the default rounding mode: ties to even.
struct FloorFn {
  template <typename T> T operator()(T a) const {
    if constexpr (std::is_integral_v<T>) return a;
    else return std::floor(a);
  }
};
struct CeilFn {
  template <typename T> T operator()(T a) const {
    if constexpr (std::is_integral_v<T>) return a;
    else return std::ceil(a);
  }
};
struct RoundFn {
  template <typename T> T operator()(T a) const {
    if constexpr (std::is_integral_v<T>) return a;
    else return std::nearbyint(a);
  }
};
struct TruncFn {
  template <typename T> T operator()(T a) const {
    if constexpr (std::is_integral_v<T>) return a;
    else return std::trunc(a);
  }
};
struct IsNanFn {
  template <typename T> bool operator()(T a) const {
    if constexpr (std::is_floating_point_v<T>) return std::isnan(a);
    else return false;
  }
};
struct IsInfFn {
  template <typename T> bool operator()(T a) const {
    if constexpr (std::is_floating_point_v<T>) return std::isinf(a);
    else return false;
  }
};
struct IsFiniteFn {
  template <typename T> bool operator()(T a) const {
    if constexpr (std::is_floating_point_v<T>) return std::isfinite(a);
    else return true;
  }
};
struct SinFn {
  template <typename T> T operator()(T a) const { return std::sin(a); }
  template <typename A> static auto vec(const A& a) { return a.sin(); }
};
struct CosFn {
  template <typename T> T operator()(T a) const { return std::cos(a); }
  template <typename A> static auto vec(const A& a) { return a.cos(); }
};
struct TanhFn {
  template <typename T, typename M = LibmMath> T operator()(T a) const { return M::tanh(a); }
  template <typename A> static auto vec(const A& a) { return a.tanh(); }
};
struct ErfFn {
  template <typename T, typename M = LibmMath> T operator()(T a) const { return M::erf(a); }
};
struct SigmoidFn {
  template <typename T, typename M = LibmMath> T operator()(T a) const { return M::sigmoid(a); }
  template <typename A> static auto vec(const A& a) { return a.logistic(); }
};
// max(x, 0) with NaN propagating, as maximum's: written `!(a <= 0)` so that a NaN (for
// which every comparison is false) is returned; Eigen's cwiseMax may drop it.
struct ReluFn {
  template <typename T> T operator()(T a) const { return !(a <= T(0)) ? a : T(0); }
  template <typename A> static auto vec(const A& a) {
    using S = typename A::Scalar;
    return (a <= S(0)).select(S(0), a);
  }
};
struct GeluFn {
  template <typename T, typename M = LibmMath> T operator()(T a) const { return M::gelu(a); }
};
/// 0.5 x (1 + tanh u) written as x sigmoid(2u), which has no cancellation for x < 0.
struct GeluTanhFn {
  template <typename T, typename M = LibmMath> T operator()(T a) const {
    const T c = T(1.5957691216057307118); // 2 sqrt(2/pi)
    return a * M::sigmoid(c * (a + T(0.044715) * a * a * a));
  }
};
struct LogicalNotFn { template <typename T> bool operator()(T a) const { return a == T(0); } };

/// The flags of the operation a functor computes (its row in runtime/Elementwise.h).
template <typename F>
inline constexpr uint32_t functorFlags = 0;
#define TSL_FUNCTOR_FLAGS(name, text, mnemonic, flags, ...) template <> inline constexpr uint32_t functorFlags<name##Fn> = flags;
TSL_BINARY_OPS(TSL_FUNCTOR_FLAGS)
TSL_UNARY_OPS(TSL_FUNCTOR_FLAGS)
#undef TSL_FUNCTOR_FLAGS

/// Whether a functor may be instantiated for compute type C: predicates for any type;
/// float-only arithmetic for floats; other arithmetic for everything but bool.
template <typename F, typename C>
constexpr bool applies() {
  if constexpr ((functorFlags<F> & kBoolResult) != 0) return true;
  if constexpr (std::is_same_v<C, bool>) return false;
  if constexpr ((functorFlags<F> & kFloatOnly) != 0) return std::is_floating_point_v<C>;
  return true;
}

} // namespace tsl::detail
