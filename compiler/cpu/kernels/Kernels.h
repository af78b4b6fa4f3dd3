// compiler/cpu/kernels/Kernels.h — the :cpu backend's kernels over whole tensors.
//
// Each kernel is a template instantiated per element type as an extern "C" function
// tsl_k_<name>_<type>, taking the [begin, end) of its outermost loop so that generated code
// can run it in parallel chunks: softmax / log-softmax, logsumexp and layer-norm (the row
// functions of runtime/RowKernels.h, which the eager kernels use too), cumsum
// and cumprod and the linear scans of its derivatives (runtime/ScanRows.h), cross-entropy,
// matmul and conv2d (the packed GEMM and convolution of PackedGemm.h), max and average
// pooling (runtime/PoolRows.h), take, one-hot, gather and scatter-add (runtime/GatherRows.h),
// scaled dot-product attention and its derivatives (runtime/FlashAttention.h).
// Kernels that can fail on data (an index out of range) return
// -1 on success, or the flat position of the offending element; the caller raises the
// error eager code raises.
//
// Included by two translation units: compiler/cpu/kernels/Library.cpp, compiled to the
// bitcode that ahead-of-time code links and inlines, and NativeKernels.cpp, compiled into
// the compiler for this machine, whose functions JIT-compiled code calls (so that the
// kernels are compiled once, not once per compiled function). TSL_KERNEL_EXPORT(name)
// registers a kernel where that TU defines it so.
#pragma once

#include "compiler/cpu/kernels/PackedGemm.h"
#include "runtime/FlashAttention.h"
#include "runtime/GatherRows.h"
#include "runtime/PoolRows.h"
#include "runtime/RowKernels.h"
#include "runtime/ScanRows.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>

#ifndef TSL_KERNEL_EXPORT
#define TSL_KERNEL_EXPORT(name)
#endif

// ---- Softmax, log-softmax, logsumexp, layer-norm (along one axis) ----
//
// The axis has n elements at stride `inner` (the product of the later axes): element j of
// slice (o, i) is at o * n * inner + j * inner + i. Slices o in [begin, end), all i. The
// loops over slices stay scalar (TSL_ROW_LOOP): the vectoriser should work along a row,
// not gather across rows.

#define TSL_ROW_KERNELS(tag, T)                                                                    \
  extern "C" void tsl_k_softmax_##tag(const T* x, T* y, int64_t begin, int64_t end, int64_t n, int64_t inner, \
                                      int32_t log) noexcept {                                      \
    if (inner == 1) { /* rows along the last axis: a unit stride the vectoriser can see */     \
      TSL_ROW_LOOP for (int64_t o = begin; o < end; ++o) {                                         \
        if (log) tsl::rows::logSoftmax<T>(x + o * n, y + o * n, n, 1);                             \
        else tsl::rows::softmax<T>(x + o * n, y + o * n, n, 1);                                    \
      }                                                                                            \
      return;                                                                                      \
    }                                                                                              \
    TSL_ROW_LOOP for (int64_t o = begin; o < end; ++o)                                                 \
      TSL_ROW_LOOP for (int64_t i = 0; i < inner; ++i) {                                               \
        const int64_t at = o * n * inner + i;                                                      \
        if (log) tsl::rows::logSoftmax<T>(x + at, y + at, n, inner);                               \
        else tsl::rows::softmax<T>(x + at, y + at, n, inner);                                      \
      }                                                                                            \
  }                                                                                                \
  TSL_KERNEL_EXPORT(tsl_k_softmax_##tag)                                                           \
  extern "C" void tsl_k_logsumexp_##tag(const T* x, T* y, int64_t begin, int64_t end, int64_t n,   \
                                        int64_t inner) noexcept {                                  \
    if (inner == 1) {                                                                              \
      TSL_ROW_LOOP for (int64_t o = begin; o < end; ++o) y[o] = tsl::rows::logSumExp<T>(x + o * n, n, 1); \
      return;                                                                                      \
    }                                                                                              \
    TSL_ROW_LOOP for (int64_t o = begin; o < end; ++o)                                                 \
      TSL_ROW_LOOP for (int64_t i = 0; i < inner; ++i) y[o * inner + i] = tsl::rows::logSumExp<T>(x + o * n * inner + i, n, inner); \
  }                                                                                                \
  TSL_KERNEL_EXPORT(tsl_k_logsumexp_##tag)                                                         \
  extern "C" void tsl_k_layernorm_##tag(const T* x, T* y, int64_t begin, int64_t end, int64_t n, int64_t inner, \
                                        double eps) noexcept {                                     \
    if (inner == 1) {                                                                              \
      TSL_ROW_LOOP for (int64_t o = begin; o < end; ++o) tsl::rows::layerNorm<T>(x + o * n, y + o * n, n, 1, eps); \
      return;                                                                                      \
    }                                                                                              \
    TSL_ROW_LOOP for (int64_t o = begin; o < end; ++o)                                                 \
      TSL_ROW_LOOP for (int64_t i = 0; i < inner; ++i) {                                               \
        const int64_t at = o * n * inner + i;                                                      \
        tsl::rows::layerNorm<T>(x + at, y + at, n, inner, eps);                                    \
      }                                                                                            \
  }                                                                                                \
  TSL_KERNEL_EXPORT(tsl_k_layernorm_##tag)
TSL_ROW_KERNELS(f32, float)
TSL_ROW_KERNELS(f64, double)

// ---- Cumulative sums (runtime/ScanRows.h), along one axis as the row kernels above ----

#define TSL_CUMSUM_KERNEL(tag, S, otag, O)                                                         \
  extern "C" void tsl_k_cumsum_##tag##_##otag(const S* x, O* y, int64_t begin, int64_t end, int64_t n, \
                                              int64_t inner) noexcept {                            \
    TSL_ROW_LOOP for (int64_t o = begin; o < end; ++o)                                                 \
      TSL_ROW_LOOP for (int64_t i = 0; i < inner; ++i)                                                 \
        tsl::rows::cumsum(x + o * n * inner + i, y + o * n * inner + i, n, inner);                 \
  }                                                                                                \
  TSL_KERNEL_EXPORT(tsl_k_cumsum_##tag##_##otag)
TSL_CUMSUM_KERNEL(f32, float, f32, float)
TSL_CUMSUM_KERNEL(f64, double, f64, double)
TSL_CUMSUM_KERNEL(i32, int32_t, i64, int64_t)
TSL_CUMSUM_KERNEL(i64, int64_t, i64, int64_t)

#define TSL_CUMPROD_KERNEL(tag, S, otag, O)                                                        \
  extern "C" void tsl_k_cumprod_##tag##_##otag(const S* x, O* y, int64_t begin, int64_t end, int64_t n, \
                                               int64_t inner) noexcept {                           \
    TSL_ROW_LOOP for (int64_t o = begin; o < end; ++o)                                                 \
      TSL_ROW_LOOP for (int64_t i = 0; i < inner; ++i)                                                 \
        tsl::rows::cumprod(x + o * n * inner + i, y + o * n * inner + i, n, inner);                \
  }                                                                                                \
  TSL_KERNEL_EXPORT(tsl_k_cumprod_##tag##_##otag)
TSL_CUMPROD_KERNEL(f32, float, f32, float)
TSL_CUMPROD_KERNEL(f64, double, f64, double)
TSL_CUMPROD_KERNEL(i32, int32_t, i64, int64_t)
TSL_CUMPROD_KERNEL(i64, int64_t, i64, int64_t)

// The linear recurrences of cumprod's derivatives (runtime/ScanRows.h), a and b to h.
#define TSL_LINEAR_SCAN_KERNEL(tag, T)                                                             \
  extern "C" void tsl_k_linearscan_##tag(const T* a, const T* b, T* h, int64_t begin, int64_t end, int64_t n, \
                                         int64_t inner, int32_t reverse) noexcept {                \
    TSL_ROW_LOOP for (int64_t o = begin; o < end; ++o)                                                 \
      TSL_ROW_LOOP for (int64_t i = 0; i < inner; ++i) {                                               \
        const int64_t at = o * n * inner + i;                                                      \
        tsl::rows::linearScan(a + at, b + at, h + at, n, inner, reverse != 0);                     \
      }                                                                                            \
  }                                                                                                \
  TSL_KERNEL_EXPORT(tsl_k_linearscan_##tag)
TSL_LINEAR_SCAN_KERNEL(f32, float)
TSL_LINEAR_SCAN_KERNEL(f64, double)

// cross-entropy of logits T with labels L: -1 (and the loss at *out), or the position of
// the first label outside [0, classes).
#define TSL_CROSS_ENTROPY(tag, T, ltag, L)                                                         \
  extern "C" int64_t tsl_k_crossentropy_##tag##_##ltag(const T* x, const L* l, T* out, int64_t rows, \
                                                       int64_t classes) noexcept {                 \
    const int64_t bad = tsl::rows::badLabel(l, rows, classes);                                     \
    if (bad < 0) *out = tsl::rows::crossEntropy<T>(x, l, rows, classes);                           \
    return bad;                                                                                    \
  }                                                                                                \
  TSL_KERNEL_EXPORT(tsl_k_crossentropy_##tag##_##ltag)
TSL_CROSS_ENTROPY(f32, float, i32, int32_t)
TSL_CROSS_ENTROPY(f32, float, i64, int64_t)
TSL_CROSS_ENTROPY(f64, double, i32, int32_t)
TSL_CROSS_ENTROPY(f64, double, i64, int64_t)

// ---- Matmul ----

namespace {

/// C[rows begin..end) = A · B, A (i, p) at a[i * ars + p * acs], B (p, j) at
/// b[p * brs + j * bcs], C row-major (row stride ldc). A tile of kRows rows by kColumns
/// columns of C is accumulated in registers over the whole of k, reading a row segment of
/// B and broadcasting one element of A per row for each step of k; edge tiles take the
/// same loops with smaller bounds. Integer matmul runs it (integers wrap: the library is
/// built with -fwrapv).
template <typename T>
void gemm(const T* a, int64_t ars, int64_t acs, const T* b, int64_t brs, int64_t bcs, T* c, int64_t n, int64_t k,
          int64_t ldc, int64_t begin, int64_t end) {
  constexpr int64_t kRows = 4, kColumns = 128 / sizeof(T);
  for (int64_t i0 = begin; i0 < end; i0 += kRows) {
    const int64_t rows = std::min(kRows, end - i0);
    for (int64_t j0 = 0; j0 < n; j0 += kColumns) {
      const int64_t columns = std::min(kColumns, n - j0);
      T tile[kRows][kColumns] = {};
      for (int64_t p = 0; p < k; ++p) {
        const T* brow = b + p * brs + j0 * bcs;
        for (int64_t r = 0; r < rows; ++r) {
          const T av = a[(i0 + r) * ars + p * acs];
          if (bcs == 1)
            for (int64_t j = 0; j < columns; ++j) tile[r][j] += av * brow[j];
          else
            for (int64_t j = 0; j < columns; ++j) tile[r][j] += av * brow[j * bcs];
        }
      }
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t j = 0; j < columns; ++j) c[(i0 + r) * ldc + j0 + j] = tile[r][j];
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

template <typename L>
void oneHot(const L* labels, float* out, int64_t count, int64_t n) {
  for (int64_t k = 0; k < count; ++k)
    for (int64_t j = 0; j < n; ++j) out[k * n + j] = static_cast<int64_t>(labels[k]) == j ? 1.0f : 0.0f;
}

} // namespace

#define TSL_GEMM(tag, T)                                                                           \
  extern "C" void tsl_k_gemm_##tag(const T* a, int64_t ars, int64_t acs, const T* b, int64_t brs, int64_t bcs, T* c, \
                                   int64_t n, int64_t k, int64_t ldc, int64_t begin, int64_t end) noexcept { \
    gemm<T>(a, ars, acs, b, brs, bcs, c, n, k, ldc, begin, end);                                   \
  }                                                                                                \
  TSL_KERNEL_EXPORT(tsl_k_gemm_##tag)
TSL_GEMM(f32, float)
TSL_GEMM(f64, double)
TSL_GEMM(i32, int32_t)
TSL_GEMM(i64, int64_t)

// The packed GEMM over columns [colBegin, colEnd), with the module's micro-kernels (for
// k-major and row-major A panels; conv2d takes the row-major one); conv2d (flipped: the
// convolution giving its input cotangent, PackedGemm.h's gradInputAsConv) over tasks of
// positions; conv2d's weight cotangent over tiles [begin, end) of nr of its columns.
// A (i, p) at a[i * ars + p * acs], B (p, j) at b[p * brs + j * bcs], row-major C:
// C = (accumulate ? C : 0) + alpha·A·B, then + bias (per row when biasAxis is 0, per
// column when 1; none when null), then the activation (PackedGemm.h's GemmActivation).
#define TSL_PACKED_GEMM(tag, T)                                                                    \
  extern "C" void tsl_k_packedgemm_##tag(const T* a, int64_t ars, int64_t acs, const T* b, int64_t brs, int64_t bcs, \
                                         T* c, int64_t m, int64_t k, int64_t ldc, int64_t colBegin, int64_t colEnd, \
                                         MicroKernel<T> kernel, MicroKernel<T> rowsKernel, int64_t mr, int64_t nr, \
                                         int64_t kc, int64_t mc,                                   \
                                         int64_t nc, const T* bias, int32_t biasAxis, int32_t activation, T alpha, \
                                         int32_t accumulate) noexcept {                            \
    packedGemm<T>(Strided<T>{a, ars, acs}, Strided<T>{b, brs, bcs}, c, m, k, ldc, colBegin, colEnd, kernel,     \
                  rowsKernel, GemmBlocking{mr, nr, kc, mc, nc}, Epilogue<T>{bias, biasAxis, activation, alpha, accumulate}); \
  }                                                                                                \
  TSL_KERNEL_EXPORT(tsl_k_packedgemm_##tag)                                                        \
  extern "C" void tsl_k_conv2d_##tag(const T* x, const T* w, T* out, const int64_t* sizes, int64_t chunk,     \
                                     int64_t begin, int64_t end, MicroKernel<T> kernel, int64_t mr, int64_t nr, \
                                     int64_t kc, int32_t flipped) noexcept {                       \
    const tsl::compiler::cpu::ConvSizes s{sizes[0], sizes[1], sizes[2], sizes[3], sizes[4],  sizes[5], sizes[6], \
                                          sizes[7], sizes[8], sizes[9], sizes[10], sizes[11], sizes[12]}; \
    packedConv<T>(x, w, out, s, chunk, begin, end, kernel, GemmBlocking{mr, nr, kc, 0, 0}, flipped != 0); \
  }                                                                                                \
  TSL_KERNEL_EXPORT(tsl_k_conv2d_##tag)                                                            \
  extern "C" void tsl_k_conv2dgradweight_##tag(const T* x, const T* dy, T* dw, const int64_t* sizes,      \
                                               int64_t begin, int64_t end, MicroKernel<T> kernel,          \
                                               MicroKernel<T> rowsKernel, int64_t mr, int64_t nr, int64_t kc, \
                                               int64_t mc, int64_t nc) noexcept {                  \
    const tsl::compiler::cpu::ConvSizes s{sizes[0], sizes[1], sizes[2], sizes[3], sizes[4],  sizes[5], sizes[6], \
                                          sizes[7], sizes[8], sizes[9], sizes[10], sizes[11], sizes[12]}; \
    convGradWeight<T>(x, dy, dw, s, begin * nr, std::min(s.depth(), end * nr), kernel, rowsKernel,        \
                      GemmBlocking{mr, nr, kc, mc, nc});                                           \
  }                                                                                                \
  TSL_KERNEL_EXPORT(tsl_k_conv2dgradweight_##tag)
TSL_PACKED_GEMM(f32, float)
TSL_PACKED_GEMM(f64, double)

// ---- Pooling: planes [begin, end) of runtime/PoolRows.h (sizes: h, w, kh, kw, sh, sw, ph,
// pw, ho, wo), accumulating in the output rows ----
#define TSL_POOL(name, kind, tag, T)                                                              \
  extern "C" void tsl_k_##name##_##tag(const T* x, T* out, const int64_t* sizes, int64_t begin, int64_t end) noexcept { \
    const tsl::pool::Plane g{sizes[0], sizes[1], sizes[2], sizes[3], sizes[4],                     \
                             sizes[5], sizes[6], sizes[7], sizes[8], sizes[9]};                    \
    for (int64_t p = begin; p < end; ++p)                                                          \
      tsl::pool::poolPlane<tsl::pool::Kind::kind, T>(x + p * g.h * g.w, out + p * g.ho * g.wo, g, nullptr, \
                                                     [](T v) { return v; }, [](T v) { return v; }); \
  }                                                                                                \
  TSL_KERNEL_EXPORT(tsl_k_##name##_##tag)
TSL_POOL(maxpool, Max, f32, float)
TSL_POOL(maxpool, Max, f64, double)
TSL_POOL(avgpool, Average, f32, float)
TSL_POOL(avgpool, Average, f64, double)

#define TSL_INDEX_KERNELS(itag, I)                                                                 \
  extern "C" int64_t tsl_k_badindex_##itag(const I* idx, int64_t count, int64_t size) noexcept {   \
    return tsl::rows::badIndex<I>(idx, count, size);                                                          \
  }                                                                                                \
  TSL_KERNEL_EXPORT(tsl_k_badindex_##itag)                                                         \
  extern "C" int64_t tsl_k_badlabel_##itag(const I* labels, int64_t count, int64_t classes) noexcept { \
    return tsl::rows::badLabel<I>(labels, count, classes);                                         \
  }                                                                                                \
  TSL_KERNEL_EXPORT(tsl_k_badlabel_##itag)                                                         \
  extern "C" void tsl_k_onehot_##itag(const I* labels, float* out, int64_t count, int64_t n) noexcept { \
    oneHot<I>(labels, out, count, n);                                                              \
  }                                                                                                \
  TSL_KERNEL_EXPORT(tsl_k_onehot_##itag)
TSL_INDEX_KERNELS(i32, int32_t)
TSL_INDEX_KERNELS(i64, int64_t)

// take moves elements by their width: tsl_k_take_<bytes>_<index type>.
#define TSL_TAKE(width, E, itag, I)                                                                \
  extern "C" void tsl_k_take_##width##_##itag(const E* x, const I* idx, E* out, int64_t count, int64_t size, \
                                              int64_t inner, int64_t b, int64_t e) noexcept {      \
    take<E, I>(x, idx, out, count, size, inner, b, e);                                             \
  }                                                                                                \
  TSL_KERNEL_EXPORT(tsl_k_take_##width##_##itag)
#define TSL_TAKE_WIDTHS(itag, I)                                                                   \
  TSL_TAKE(1, uint8_t, itag, I) TSL_TAKE(2, uint16_t, itag, I) TSL_TAKE(4, uint32_t, itag, I)      \
  TSL_TAKE(8, uint64_t, itag, I)
TSL_TAKE_WIDTHS(i32, int32_t)
TSL_TAKE_WIDTHS(i64, int64_t)

// gather (runtime/GatherRows.h) moves elements by their width: tsl_k_gather_<bytes>_<index type>.
#define TSL_GATHER(width, E, itag, I)                                                              \
  extern "C" void tsl_k_gather_##width##_##itag(const E* x, const I* idx, E* out, int64_t n, int64_t m, \
                                                int64_t inner, int64_t b, int64_t e) noexcept {    \
    tsl::rows::gather<E, I>(x, idx, out, n, m, inner, b, e);                                       \
  }                                                                                                \
  TSL_KERNEL_EXPORT(tsl_k_gather_##width##_##itag)
#define TSL_GATHER_WIDTHS(itag, I)                                                                 \
  TSL_GATHER(1, uint8_t, itag, I) TSL_GATHER(2, uint16_t, itag, I) TSL_GATHER(4, uint32_t, itag, I) \
  TSL_GATHER(8, uint64_t, itag, I)
TSL_GATHER_WIDTHS(i32, int32_t)
TSL_GATHER_WIDTHS(i64, int64_t)

// scatter-add (runtime/GatherRows.h): tsl_k_scatteradd_<type>_<index type>.
#define TSL_SCATTER_ADD(tag, T, itag, I)                                                           \
  extern "C" void tsl_k_scatteradd_##tag##_##itag(const I* idx, const T* src, T* out, int64_t n, int64_t m, \
                                                  int64_t inner, int64_t b, int64_t e) noexcept {  \
    tsl::rows::scatterAdd<T, I>(idx, src, out, n, m, inner, b, e);                                 \
  }                                                                                                \
  TSL_KERNEL_EXPORT(tsl_k_scatteradd_##tag##_##itag)
#define TSL_SCATTER_ADD_TYPES(itag, I)                                                             \
  TSL_SCATTER_ADD(f32, float, itag, I) TSL_SCATTER_ADD(f64, double, itag, I)                       \
  TSL_SCATTER_ADD(i32, int32_t, itag, I) TSL_SCATTER_ADD(i64, int64_t, itag, I)
TSL_SCATTER_ADD_TYPES(i32, int32_t)
TSL_SCATTER_ADD_TYPES(i64, int64_t)

// ---- Attention (runtime/FlashAttention.h): the work items [begin, end) of a mode ----
// `in` holds the operands in the IR's order (q, k, v; then the cotangent, logsumexp and δ,
// or the tangents; then the mask), `geometry` flash::pack's words. Scratch comes from the
// workspace; without it, *failed is set and nothing is written.
#define TSL_ATTENTION_KERNEL(tag, T)                                                               \
  extern "C" void tsl_k_attention_##tag(const void* const* in, T* out, const int64_t* geometry, int32_t mode, \
                                        int64_t begin, int64_t end, int32_t* failed) noexcept {   \
    const tsl::flash::Geometry g = tsl::flash::unpack(geometry);                                   \
    tsl::flash::Operands<T> ops;                                                                   \
    ops.q = static_cast<const T*>(in[0]);                                                          \
    ops.k = static_cast<const T*>(in[1]);                                                          \
    ops.v = static_cast<const T*>(in[2]);                                                          \
    const int extras = mode >= tsl::flash::kGradQ ? 3 : 0;                                         \
    for (int i = 0; i < extras; ++i) ops.extra[i] = static_cast<const T*>(in[3 + i]);              \
    if (g.masked) ops.mask = static_cast<const uint8_t*>(in[3 + extras]);                          \
    char* memory = workspace(alignedBytes<T>(tsl::flash::scratchElements(g)));                     \
    if (!memory) {                                                                                 \
      *failed = 1;                                                                                 \
      return;                                                                                      \
    }                                                                                              \
    tsl::flash::run<T>(static_cast<tsl::flash::Mode>(mode), g, ops, out, begin, end, reinterpret_cast<T*>(memory)); \
    releaseWorkspace(memory);                                                                      \
  }                                                                                                \
  TSL_KERNEL_EXPORT(tsl_k_attention_##tag)
TSL_ATTENTION_KERNEL(f32, float)
TSL_ATTENTION_KERNEL(f64, double)
