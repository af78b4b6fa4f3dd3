// runtime/Dispatch.h — the single place where a dtype becomes a C++ type.
//
// Kernels are written once as templates over the element type and instantiated for every
// dtype through dispatchDType(); there is never an addF32 beside an addF64. Half types
// are Eigen's (Eigen::half, Eigen::bfloat16); bool elements are stored as one byte.
#pragma once

#include "runtime/DType.h"
#include "tsl/Error.h"

#include <Eigen/Core>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

namespace tsl {

using f16 = Eigen::half;
using bf16 = Eigen::bfloat16;

/// The C++ element type of each dtype.
template <DType D> struct ElementOf;
template <> struct ElementOf<DType::Bool> { using type = bool; };
template <> struct ElementOf<DType::I32> { using type = int32_t; };
template <> struct ElementOf<DType::I64> { using type = int64_t; };
template <> struct ElementOf<DType::F16> { using type = f16; };
template <> struct ElementOf<DType::BF16> { using type = bf16; };
template <> struct ElementOf<DType::F32> { using type = float; };
template <> struct ElementOf<DType::F64> { using type = double; };

/// The dtype of a C++ element type.
template <typename T> constexpr DType dtypeOf();
template <> constexpr DType dtypeOf<bool>() { return DType::Bool; }
template <> constexpr DType dtypeOf<int32_t>() { return DType::I32; }
template <> constexpr DType dtypeOf<int64_t>() { return DType::I64; }
template <> constexpr DType dtypeOf<f16>() { return DType::F16; }
template <> constexpr DType dtypeOf<bf16>() { return DType::BF16; }
template <> constexpr DType dtypeOf<float>() { return DType::F32; }
template <> constexpr DType dtypeOf<double>() { return DType::F64; }

template <typename T>
constexpr bool kIsFloatElement = std::is_floating_point_v<T> || std::is_same_v<T, f16> ||
                                 std::is_same_v<T, bf16>;

/// Calls `fn(T{})` with the element type of `dtype` (a value of that type, zero, standing
/// in as a tag) and returns its result.
template <typename Fn>
decltype(auto) dispatchDType(DType dtype, Fn&& fn) {
  switch (dtype) {
  case DType::Bool: return fn(bool{});
  case DType::I32: return fn(int32_t{});
  case DType::I64: return fn(int64_t{});
  case DType::F16: return fn(f16{});
  case DType::BF16: return fn(bf16{});
  case DType::F32: return fn(float{});
  case DType::F64: return fn(double{});
  }
  checkDType(dtype); // a host's cast of a byte that names no dtype: a value error
  fail(ErrorKind::Internal, "dispatchDType: bad dtype ", static_cast<int>(dtype));
}

/// Reads one element of type T from possibly unaligned memory.
template <typename T>
inline T loadElement(const void* p) {
  T value;
  std::memcpy(static_cast<void*>(&value), p, sizeof(T));
  return value;
}

/// Writes one element of type T to possibly unaligned memory.
template <typename T>
inline void storeElement(void* p, T value) {
  std::memcpy(p, static_cast<const void*>(&value), sizeof(T));
}

/// The value of any element type as a double (exact for every dtype but i64 beyond 2^53).
template <typename T>
inline double toDouble(T value) {
  if constexpr (std::is_same_v<T, f16> || std::is_same_v<T, bf16>)
    return static_cast<double>(static_cast<float>(value));
  else
    return static_cast<double>(value);
}

/// Rounds a double to float "to odd": truncate, then set the last bit if inexact. Rounding
/// that float to a narrower type (f16, bf16) then gives the correctly rounded result,
/// which rounding through an ordinary float would not (double rounding).
inline float roundToOddFloat(double value) {
  float f = static_cast<float>(value);
  if (static_cast<double>(f) == value || f != f) return f;
  if (std::abs(static_cast<double>(f)) > std::abs(value)) f = std::nextafter(f, 0.0f);
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  bits |= 1;
  std::memcpy(&f, &bits, sizeof bits);
  return f;
}

/// Converts between element types with NumPy's meaning, without undefined behaviour:
/// float to integer truncates toward zero and saturates (NaN gives 0); integer to narrower
/// integer wraps; to bool is "nonzero" (NaN is true); to f16/bf16 rounds once, to nearest
/// even.
template <typename To, typename From>
inline To convertElement(From value) {
  if constexpr (std::is_same_v<To, From>) {
    return value;
  } else if constexpr (std::is_same_v<To, bool>) {
    return toDouble(value) != 0.0;
  } else if constexpr (std::is_same_v<From, bool>) {
    return To(value ? 1.0f : 0.0f);
  } else if constexpr (std::is_integral_v<To> && kIsFloatElement<From>) {
    const double d = toDouble(value);
    if (d != d) return 0;
    if (d >= static_cast<double>(std::numeric_limits<To>::max())) return std::numeric_limits<To>::max();
    if (d <= static_cast<double>(std::numeric_limits<To>::min())) return std::numeric_limits<To>::min();
    return static_cast<To>(d);
  } else if constexpr (std::is_same_v<To, f16> || std::is_same_v<To, bf16>) {
    if constexpr (std::is_same_v<From, float>) return To(value);
    else if constexpr (std::is_same_v<From, f16> || std::is_same_v<From, bf16>) return To(static_cast<float>(value));
    else return To(roundToOddFloat(static_cast<double>(value)));
  } else if constexpr (std::is_same_v<From, f16> || std::is_same_v<From, bf16>) {
    return static_cast<To>(static_cast<float>(value));
  } else {
    return static_cast<To>(value);
  }
}

} // namespace tsl
