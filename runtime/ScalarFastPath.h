// runtime/ScalarFastPath.h — two scalars of one dtype, computed inline.
//
// Scalar loops (counters, accumulators) spend their time in `(+ i 1)` and `(< i n)` on
// two i64, f32 or f64 scalars of the same dtype. This header lets a caller that knows the
// operation at compile time compute that case inline, with the operation's one functor,
// and fall back to applyBinary for everything else. Results are identical to
// applyBinary's: same functor, same type rule (the result is weak only if both are).
#pragma once

#include "runtime/Elementwise.h"
#include "runtime/ElementwiseFunctors.h"

#include <optional>

namespace tsl::detail {

/// The functor of each binary operation, at compile time.
template <BinaryOp op> struct BinaryFunctor;
#define TSL_FUNCTOR(name, text, mnemonic, ...)                                                                    \
  template <> struct BinaryFunctor<BinaryOp::name> { using type = name##Fn; };
TSL_BINARY_OPS(TSL_FUNCTOR)
#undef TSL_FUNCTOR

template <typename Fn, typename T>
inline std::optional<Tensor> sameTypeScalar(const Tensor& a, const Tensor& b) {
  if constexpr (!applies<Fn, T>() || (std::is_same_v<Fn, DivFn> && !std::is_floating_point_v<T>)) {
    return std::nullopt;
  } else {
    const auto r = Fn{}(a.scalarValue<T>(), b.scalarValue<T>());
    if constexpr (std::is_same_v<decltype(r), const bool>) return Tensor::scalarOf(r, DType::Bool);
    else return Tensor::scalarOf<T>(r, a.dtype(), a.weak() && b.weak());
  }
}

/// Two scalars of the same dtype among i64, f32, f64; nullopt for anything else.
template <typename Fn>
inline std::optional<Tensor> sameTypeScalar(const Tensor& a, const Tensor& b) {
  if (!a.isScalar() || !b.isScalar() || a.dtype() != b.dtype()) return std::nullopt;
  switch (a.dtype()) {
  case DType::I64: return sameTypeScalar<Fn, int64_t>(a, b);
  case DType::F32: return sameTypeScalar<Fn, float>(a, b);
  case DType::F64: return sameTypeScalar<Fn, double>(a, b);
  default: return std::nullopt;
  }
}

} // namespace tsl::detail

namespace tsl {

/// applyBinary(op, a, b) with the scalar case inline.
template <BinaryOp op>
inline Tensor applyBinaryInline(const Tensor& a, const Tensor& b) {
  if (auto out = detail::sameTypeScalar<typename detail::BinaryFunctor<op>::type>(a, b))
    return std::move(*out);
  return applyBinary(op, a, b);
}

} // namespace tsl
