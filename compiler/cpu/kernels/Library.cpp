// compiler/cpu/kernels/Library.cpp — the code the :cpu backend links into every module.
//
// Compiled by clang to LLVM bitcode at build time (compiler/CMakeLists.txt) and embedded
// in the compiler; code generation links the functions a module calls (and only those)
// and optimises the result for the host. The scalar functions are always inlined, into
// loops over concrete shapes, and vectorised there (the bitcode is built without
// vectorisation and with -ffp-contract=off); the kernels over whole tensors stay
// functions, called from generated loops: ahead-of-time code links them from here,
// JIT-compiled code calls the same source compiled into the compiler (NativeKernels.cpp).
//
// What is here, all extern "C":
//  - tsl_bin_<Op>_<c>, tsl_un_<Op>_<c>: every elementwise operation (by its OpKind's name)
//    on one element of compute type c (b8, i32, i64, f32, f64), from the very functors the eager
//    kernels use (runtime/ElementwiseFunctors.h) — one definition of each operation —
//    except float exp, log, tanh, sigmoid, gelu and gelu-tanh, which use the polynomials
//    of FastMath.h (libm's would keep the loop scalar);
//  - tsl_cvt_<from>_<to>: the runtime's element conversions (convertElement) between
//    storage types (f16 and bf16 as their 16 bits);
//  - tsl_cascade_push_<t>, tsl_cascade_total_<t> and their _columns_ forms: the pairwise
//    combination of block sums (runtime/Summation.h) that generated float sums use, as the
//    eager kernels do;
//  - the kernels over whole tensors of compiler/cpu/kernels/Kernels.h, tsl_k_<name>_<type>.
// Copies, fills and every elementwise loop are generated directly (compiler/cpu/Loops.cpp).
#include "compiler/cpu/kernels/Kernels.h"
#include "runtime/ElementwiseFunctors.h"
#include "runtime/FastMath.h"
#include "runtime/Summation.h"

#include <algorithm>
#include <cstdint>
#include <limits>

using namespace tsl;
using namespace tsl::detail;

namespace {

// ---- The elementary functions: polynomials for float ----

// PolynomialMath (runtime/ElementwiseFunctors.h): LibmMath with FastMath's polynomials
// for float.

/// A unary functor on C, with the polynomials where it uses elementary functions.
template <typename F, typename C>
auto unaryOp(C a) {
  if constexpr (requires { F{}.template operator()<C, PolynomialMath>(a); })
    return F{}.template operator()<C, PolynomialMath>(a);
  else
    return F{}(a);
}

} // namespace

// ---- Elementwise scalars ----

/// What an operation on compute type C gives: bool for predicates, else C.
template <typename F, typename C>
using ResultOf = std::conditional_t<(functorFlags<F> & kBoolResult) != 0, bool, C>;

/// The operation, where it applies to C (elsewhere never called: a zero).
template <typename F, typename C>
ResultOf<F, C> binaryOp(C a, C b) {
  if constexpr (applies<F, C>()) return F{}(a, b);
  else return {};
}
template <typename F, typename C>
ResultOf<F, C> unaryOrZero(C a) {
  if constexpr (applies<F, C>()) return unaryOp<F, C>(a);
  else return {};
}

#define TSL_COMPUTE_TYPES(X, ...)                                                                  \
  X(b8, bool, __VA_ARGS__) X(i32, int32_t, __VA_ARGS__) X(i64, int64_t, __VA_ARGS__)               \
  X(f32, float, __VA_ARGS__) X(f64, double, __VA_ARGS__)

#define TSL_BINARY_FOR(tag, C, name)                                                               \
  extern "C" ResultOf<name##Fn, C> tsl_bin_##name##_##tag(C a, C b) noexcept {                     \
    return binaryOp<name##Fn, C>(a, b);                                                            \
  }
#define TSL_BINARY(name, ...) TSL_COMPUTE_TYPES(TSL_BINARY_FOR, name)
TSL_BINARY_OPS(TSL_BINARY)

#define TSL_UNARY_FOR(tag, C, name)                                                                \
  extern "C" ResultOf<name##Fn, C> tsl_un_##name##_##tag(C a) noexcept {                           \
    return unaryOrZero<name##Fn, C>(a);                                                            \
  }
#define TSL_UNARY(name, ...) TSL_COMPUTE_TYPES(TSL_UNARY_FOR, name)
TSL_UNARY_OPS(TSL_UNARY)

// ---- Conversions between storage types ----

namespace {

template <typename T>
struct StorageOf {
  using type = T;
  static T load(T v) { return v; }
  static T store(T v) { return v; }
};
template <>
struct StorageOf<f16> {
  using type = uint16_t;
  static f16 load(uint16_t bits) { return Eigen::numext::bit_cast<f16>(bits); }
  static uint16_t store(f16 v) { return Eigen::numext::bit_cast<uint16_t>(v); }
};
template <>
struct StorageOf<bf16> {
  using type = uint16_t;
  static bf16 load(uint16_t bits) { return Eigen::numext::bit_cast<bf16>(bits); }
  static uint16_t store(bf16 v) { return Eigen::numext::bit_cast<uint16_t>(v); }
};

} // namespace

// Two copies of the type list: a macro cannot expand inside its own expansion.
#define TSL_STORAGE_TYPES(X, ...)                                                                  \
  X(b8, bool, __VA_ARGS__) X(i32, int32_t, __VA_ARGS__) X(i64, int64_t, __VA_ARGS__)               \
  X(f16, f16, __VA_ARGS__) X(bf16, bf16, __VA_ARGS__) X(f32, float, __VA_ARGS__)                   \
  X(f64, double, __VA_ARGS__)
#define TSL_STORAGE_TYPES_TO(X, ...)                                                               \
  X(b8, bool, __VA_ARGS__) X(i32, int32_t, __VA_ARGS__) X(i64, int64_t, __VA_ARGS__)               \
  X(f16, f16, __VA_ARGS__) X(bf16, bf16, __VA_ARGS__) X(f32, float, __VA_ARGS__)                   \
  X(f64, double, __VA_ARGS__)
#define TSL_CVT_TO(toTag, To, fromTag, From)                                                       \
  extern "C" StorageOf<To>::type tsl_cvt_##fromTag##_##toTag(StorageOf<From>::type v) noexcept {       \
    return StorageOf<To>::store(convertElement<To>(StorageOf<From>::load(v)));                         \
  }
#define TSL_CVT_FROM(fromTag, From, ...) TSL_STORAGE_TYPES_TO(TSL_CVT_TO, fromTag, From)
TSL_STORAGE_TYPES(TSL_CVT_FROM)


// ---- Blocked pairwise summation (compiler/cpu/Reductions.cpp) ----

#define TSL_CASCADE(tag, T)                                                                        \
  extern "C" void tsl_cascade_push_##tag(tsl::sums::Cascade<T>* c, T v) noexcept { c->push(v); } \
  extern "C" T tsl_cascade_total_##tag(const tsl::sums::Cascade<T>* c) noexcept { return c->total(); } \
  extern "C" void tsl_cascade_columns_push_##tag(T* levels, int64_t width, uint64_t* count, T* v) noexcept { \
    tsl::sums::pushColumns(levels, width, *count, v);                                              \
  }                                                                                                \
  extern "C" void tsl_cascade_columns_total_##tag(const T* levels, int64_t width, uint64_t count, T* out) noexcept { \
    tsl::sums::totalColumns(levels, width, count, out);                                            \
  }
TSL_CASCADE(f32, float)
TSL_CASCADE(f64, double)
#undef TSL_CASCADE
