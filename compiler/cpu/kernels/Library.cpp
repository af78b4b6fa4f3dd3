// compiler/cpu/kernels/Library.cpp — the code the :cpu backend links into every module.
//
// Compiled by clang to LLVM bitcode at build time (compiler/CMakeLists.txt) and embedded
// in the compiler; code generation links the functions a module calls (and only those),
// marks them always-inline, and optimises the result for the host. So these functions are
// not called at run time: they are inlined into loops over concrete shapes and vectorised
// there (the bitcode is built without vectorisation and with -ffp-contract=off).
//
// What is here, all extern "C":
//  - tsl_bin_<Op>_<c>, tsl_un_<Op>_<c>: every elementwise operation (by its OpKind's name)
//    on one element of compute type c (b8, i32, i64, f32, f64), from the very functors the eager
//    kernels use (runtime/ElementwiseFunctors.h) — one definition of each operation —
//    except float exp, log, tanh, sigmoid, gelu and gelu-tanh, which use the polynomials
//    of FastMath.h (libm's would keep the loop scalar);
//  - tsl_cvt_<from>_<to>: the runtime's element conversions (convertElement) between
//    storage types (f16 and bf16 as their 16 bits);
//  - kernels over whole tensors, each a template instantiated per element type, taking the
//    [begin, end) of its outermost loop so that generated code can run them in parallel:
//    softmax / log-softmax, logsumexp and layer-norm (the row functions of
//    runtime/RowKernels.h, which the eager kernels use too), cross-entropy, matmul, take
//    and one-hot.
// Kernels that can fail on data (an index out of range) return -1 on success, or the flat
// position of the offending element; the caller raises the error eager code raises.
// Copies, fills and every elementwise loop are generated directly (compiler/cpu/Loops.cpp).
#include "runtime/ElementwiseFunctors.h"
#include "runtime/FastMath.h"
#include "runtime/RowKernels.h"

#include <algorithm>
#include <cstdint>
#include <limits>

using namespace tsl;
using namespace tsl::detail;

namespace {

// ---- The elementary functions: polynomials for float ----

/// LibmMath's functions, with FastMath's polynomials for float (they vectorise; libm's
/// calls would keep a loop scalar). Double keeps libm.
struct PolynomialMath : LibmMath {
  using LibmMath::exp, LibmMath::log, LibmMath::tanh, LibmMath::erf, LibmMath::sigmoid;
  static float exp(float a) { return fastmath::fastExp(a); }
  static float log(float a) { return fastmath::fastLog(a); }
  static float tanh(float a) { return fastmath::fastTanh(a); }
  static float erf(float a) { return fastmath::fastErf(a); }
  static float sigmoid(float a) { return fastmath::fastSigmoid(a); }
};

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
#define TSL_BINARY(name, text, mnemonic, flags) TSL_COMPUTE_TYPES(TSL_BINARY_FOR, name)
TSL_BINARY_OPS(TSL_BINARY)

#define TSL_UNARY_FOR(tag, C, name)                                                                \
  extern "C" ResultOf<name##Fn, C> tsl_un_##name##_##tag(C a) noexcept {                           \
    return unaryOrZero<name##Fn, C>(a);                                                            \
  }
#define TSL_UNARY(name, text, mnemonic, flags) TSL_COMPUTE_TYPES(TSL_UNARY_FOR, name)
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

// ---- Softmax, log-softmax, logsumexp, layer-norm (along one axis) ----
//
// The axis has n elements at stride `inner` (the product of the later axes): element j of
// slice (o, i) is at o * n * inner + j * inner + i. Slices o in [begin, end), all i.

#define TSL_ROW_KERNELS(tag, T)                                                                    \
  extern "C" void tsl_k_softmax_##tag(const T* x, T* y, int64_t begin, int64_t end, int64_t n, int64_t inner, \
                                      int32_t log) noexcept {                                      \
    for (int64_t o = begin; o < end; ++o)                                                          \
      for (int64_t i = 0; i < inner; ++i) {                                                        \
        const int64_t at = o * n * inner + i;                                                      \
        if (log) tsl::rows::logSoftmax<T>(x + at, y + at, n, inner);                               \
        else tsl::rows::softmax<T>(x + at, y + at, n, inner);                                      \
      }                                                                                            \
  }                                                                                                \
  extern "C" void tsl_k_logsumexp_##tag(const T* x, T* y, int64_t begin, int64_t end, int64_t n,   \
                                        int64_t inner) noexcept {                                  \
    for (int64_t o = begin; o < end; ++o)                                                          \
      for (int64_t i = 0; i < inner; ++i) y[o * inner + i] = tsl::rows::logSumExp<T>(x + o * n * inner + i, n, inner); \
  }                                                                                                \
  extern "C" void tsl_k_layernorm_##tag(const T* x, T* y, int64_t begin, int64_t end, int64_t n, int64_t inner, \
                                        double eps) noexcept {                                     \
    for (int64_t o = begin; o < end; ++o)                                                          \
      for (int64_t i = 0; i < inner; ++i) {                                                        \
        const int64_t at = o * n * inner + i;                                                      \
        tsl::rows::layerNorm<T>(x + at, y + at, n, inner, eps);                                    \
      }                                                                                            \
  }
TSL_ROW_KERNELS(f32, float)
TSL_ROW_KERNELS(f64, double)

// cross-entropy of logits T with labels L: -1 (and the loss at *out), or the position of
// the first label outside [0, classes).
#define TSL_CROSS_ENTROPY(tag, T, ltag, L)                                                         \
  extern "C" int64_t tsl_k_crossentropy_##tag##_##ltag(const T* x, const L* l, T* out, int64_t rows, \
                                                       int64_t classes) noexcept {                 \
    const int64_t bad = tsl::rows::badLabel(l, rows, classes);                                     \
    if (bad < 0) *out = tsl::rows::crossEntropy<T>(x, l, rows, classes);                           \
    return bad;                                                                                    \
  }
TSL_CROSS_ENTROPY(f32, float, i32, int32_t)
TSL_CROSS_ENTROPY(f32, float, i64, int64_t)
TSL_CROSS_ENTROPY(f64, double, i32, int32_t)
TSL_CROSS_ENTROPY(f64, double, i64, int64_t)

// ---- Matmul ----

namespace {

/// C[rows begin..end) = A · B: row-major with unit column strides. Blocked over k so a
/// panel of B stays in cache; the innermost loop runs along a row of B and C, which the
/// optimiser vectorises for the host. (Integers wrap: the library is built with -fwrapv.)
template <typename T>
void gemm(const T* a, const T* b, T* c, int64_t n, int64_t k, int64_t lda, int64_t ldb, int64_t ldc, int64_t begin,
          int64_t end) {
  constexpr int64_t kBlock = 256;
  for (int64_t i = begin; i < end; ++i)
    for (int64_t j = 0; j < n; ++j) c[i * ldc + j] = T(0);
  for (int64_t k0 = 0; k0 < k; k0 += kBlock) {
    const int64_t k1 = std::min(k, k0 + kBlock);
    for (int64_t i = begin; i < end; ++i) {
      T* crow = c + i * ldc;
      for (int64_t p = k0; p < k1; ++p) {
        const T av = a[i * lda + p];
        const T* brow = b + p * ldb;
        for (int64_t j = 0; j < n; ++j) crow[j] += av * brow[j];
      }
    }
  }
}

/// take along an axis: out[o, k, i] = x[o, idx[k], i] (negative indices from the end).
template <typename E, typename I>
void take(const E* x, const I* idx, E* out, int64_t count, int64_t size, int64_t inner, int64_t begin, int64_t end) {
  for (int64_t o = begin; o < end; ++o)
    for (int64_t k = 0; k < count; ++k) {
      const int64_t at = idx[k] < 0 ? idx[k] + size : idx[k];
      const E* src = x + (o * size + at) * inner;
      E* dst = out + (o * count + k) * inner;
      for (int64_t i = 0; i < inner; ++i) dst[i] = src[i];
    }
}

/// The first index outside [-size, size), as its position; -1 if all are valid.
template <typename I>
int64_t badIndex(const I* idx, int64_t count, int64_t size) {
  for (int64_t k = 0; k < count; ++k)
    if (idx[k] < -size || idx[k] >= size) return k;
  return -1;
}

template <typename L>
void oneHot(const L* labels, float* out, int64_t count, int64_t n) {
  for (int64_t k = 0; k < count; ++k)
    for (int64_t j = 0; j < n; ++j) out[k * n + j] = static_cast<int64_t>(labels[k]) == j ? 1.0f : 0.0f;
}

} // namespace

#define TSL_GEMM(tag, T)                                                                           \
  extern "C" void tsl_k_gemm_##tag(const T* a, const T* b, T* c, int64_t n, int64_t k, int64_t lda, int64_t ldb, \
                                   int64_t ldc, int64_t begin, int64_t end) noexcept {             \
    gemm<T>(a, b, c, n, k, lda, ldb, ldc, begin, end);                                             \
  }
TSL_GEMM(f32, float)
TSL_GEMM(f64, double)
TSL_GEMM(i32, int32_t)
TSL_GEMM(i64, int64_t)

#define TSL_INDEX_KERNELS(itag, I)                                                                 \
  extern "C" int64_t tsl_k_badindex_##itag(const I* idx, int64_t count, int64_t size) noexcept {   \
    return badIndex<I>(idx, count, size);                                                          \
  }                                                                                                \
  extern "C" int64_t tsl_k_badlabel_##itag(const I* labels, int64_t count, int64_t classes) noexcept { \
    return tsl::rows::badLabel<I>(labels, count, classes);                                         \
  }                                                                                                \
  extern "C" void tsl_k_onehot_##itag(const I* labels, float* out, int64_t count, int64_t n) noexcept { \
    oneHot<I>(labels, out, count, n);                                                              \
  }
TSL_INDEX_KERNELS(i32, int32_t)
TSL_INDEX_KERNELS(i64, int64_t)

// take moves elements by their width: tsl_k_take_<bytes>_<index type>.
#define TSL_TAKE(width, E, itag, I)                                                                \
  extern "C" void tsl_k_take_##width##_##itag(const E* x, const I* idx, E* out, int64_t count, int64_t size, \
                                              int64_t inner, int64_t b, int64_t e) noexcept {      \
    take<E, I>(x, idx, out, count, size, inner, b, e);                                             \
  }
#define TSL_TAKE_WIDTHS(itag, I)                                                                   \
  TSL_TAKE(1, uint8_t, itag, I) TSL_TAKE(2, uint16_t, itag, I) TSL_TAKE(4, uint32_t, itag, I)      \
  TSL_TAKE(8, uint64_t, itag, I)
TSL_TAKE_WIDTHS(i32, int32_t)
TSL_TAKE_WIDTHS(i64, int64_t)
