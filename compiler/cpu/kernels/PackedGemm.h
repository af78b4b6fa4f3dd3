// compiler/cpu/kernels/PackedGemm.h — the packed GEMM and the convolution built on it.
//
// Both run BLIS's scheme around a register-blocked micro-kernel that generated code
// supplies (compiler/cpu/Gemm.h): operands are copied ("packed") into panels the
// micro-kernel streams — A into mr×kc panels (row-major or k-major), B into kc×nr
// panels — and C is computed an mr×nr tile at a time. What differs is where the panels come from:
//  - packedGemm reads A and B as matrices with any row and column strides (so a
//    transposed operand is read in place, never copied first), scales A as it packs
//    it, may start from C instead of zero, and applies an epilogue — a bias per row or
//    per column, then an activation (relu, gelu) — to each tile of C as its last block
//    of k is stored, while the tile is still in L1: C = act(C₀ + α·A·B + bias), an SGD
//    step or a layer;
//  - packedConv gathers B's panels straight from an NCHW image ("im2col" folded into the
//    packing: row (c, ki, kj) of a panel is the run of input pixels that output
//    positions multiply by w[., c, ki, kj], zeros where the window reads padding), so no
//    unrolled image is ever built; the weights, O×(C·Kh·Kw), are A.
// Packing memory comes from `workspace`: in the compiler (NativeKernels.cpp) one buffer
// per thread kept and grown as needed, so that a compiled step allocates nothing after
// its first call; in ahead-of-time libraries (no per-thread state that could outlive an
// unloaded library) a buffer per call.
#pragma once

#include "compiler/cpu/kernels/ConvSizes.h"
#include "runtime/ElementwiseFunctors.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#ifdef TSL_KERNEL_CACHED_WORKSPACE
#include <pthread.h>
#endif

namespace {

using tsl::compiler::cpu::ConvSizes;
using tsl::compiler::cpu::convOnPaddedRows;
using tsl::compiler::cpu::gradInputAsConv;

/// The register-blocked micro-kernel a generated module supplies (compiler/cpu/Gemm.h):
/// C[mr×nr] (row stride ldc) = (accumulate ? C : 0) + Ap·Bp over kc steps, Ap packed
/// k-major (mr values of A's column per k), Bp packed k-major (nr values of B's row).
template <typename T>
using MicroKernel = void (*)(int64_t kc, const T* ap, const T* bp, T* c, int64_t ldc, int32_t accumulate);

/// Blocking of the packed GEMM: the micro-kernel's tile, and the blocks of k, of m (A's
/// packed block) and of n (B's packed block, which stays in L2).
struct GemmBlocking {
  int64_t mr, nr, kc, mc, nc;
};

/// A matrix operand: element (i, j) at data[i * rows + j * cols] (a row-major matrix has
/// cols == 1; its transpose, read in place, rows == 1).
template <typename T>
struct Strided {
  const T* data;
  int64_t rows, cols;
  T at(int64_t i, int64_t j) const { return data[i * rows + j * cols]; }
};

/// The activations an epilogue applies: the table's operations, with the polynomials
/// compiled code uses (runtime/ElementwiseFunctors.h).
enum GemmActivation : int32_t { kNoActivation = 0, kRelu = 1, kGelu = 2, kGeluTanh = 3 };

template <typename T>
inline T activate(int32_t activation, T v) {
  switch (activation) {
  case kRelu: return tsl::detail::ReluFn{}(v);
  case kGelu: return tsl::detail::GeluFn{}.operator()<T, tsl::detail::PolynomialMath>(v);
  case kGeluTanh: return tsl::detail::GeluTanhFn{}.operator()<T, tsl::detail::PolynomialMath>(v);
  default: return v;
  }
}

/// What packedGemm computes besides A·B: C = (accumulate ? C : 0) + alpha·A·B, then
/// + bias (indexed by the row when biasAxis is 0, by the column when 1; none when null),
/// then the activation (GemmActivation).
template <typename T>
struct Epilogue {
  const T* bias = nullptr;
  int32_t biasAxis = 1;
  int32_t activation = 0; ///< a GemmActivation
  T alpha = T(1);
  int32_t accumulate = 0;
  bool any() const { return bias || activation; }
  /// Applies it to the rows × cols tile at c (row stride ldc), whose top-left element is
  /// C[row, col].
  void apply(T* c, int64_t ldc, int64_t row, int64_t col, int64_t rows, int64_t cols) const {
    for (int64_t i = 0; i < rows; ++i) {
      T* r = c + i * ldc;
      if (bias && biasAxis == 0)
        for (int64_t j = 0; j < cols; ++j) r[j] += bias[row + i];
      else if (bias)
        for (int64_t j = 0; j < cols; ++j) r[j] += bias[col + j];
      if (activation == kRelu)
        for (int64_t j = 0; j < cols; ++j) r[j] = tsl::detail::ReluFn{}(r[j]);
      else if (activation)
        for (int64_t j = 0; j < cols; ++j) r[j] = activate(activation, r[j]);
    }
  }
};

#ifdef TSL_KERNEL_CACHED_WORKSPACE
/// Per thread: two buffers (packing, and a kernel's own scratch such as an unrolled
/// image), each kept and grown as needed.
struct Workspace {
  char* data[2];
  size_t bytes[2];
};
pthread_key_t workspaceKey;
pthread_once_t workspaceOnce = PTHREAD_ONCE_INIT;
void freeWorkspace(void* p) {
  for (char* d : static_cast<Workspace*>(p)->data) std::free(d);
  std::free(p);
}
void makeWorkspaceKey() { pthread_key_create(&workspaceKey, freeWorkspace); }

/// This thread's buffer `slot` (0 or 1) of at least `bytes` (64-byte aligned), or null
/// without memory. Kept until the thread ends; releaseWorkspace does nothing.
char* workspace(size_t bytes, int slot = 0) {
  pthread_once(&workspaceOnce, makeWorkspaceKey);
  auto* w = static_cast<Workspace*>(pthread_getspecific(workspaceKey));
  if (!w) {
    w = static_cast<Workspace*>(std::calloc(1, sizeof(Workspace)));
    if (!w || pthread_setspecific(workspaceKey, w) != 0) {
      std::free(w);
      return nullptr;
    }
  }
  if (w->bytes[slot] < bytes) {
    const size_t rounded = (bytes + 4095) / 4096 * 4096;
    char* grown = static_cast<char*>(std::aligned_alloc(64, rounded));
    if (!grown) return nullptr;
    std::free(w->data[slot]);
    w->data[slot] = grown;
    w->bytes[slot] = rounded;
  }
  return w->data[slot];
}
void releaseWorkspace(char*) {}
#else
char* workspace(size_t bytes, int = 0) { return static_cast<char*>(std::aligned_alloc(64, (bytes + 63) / 64 * 64)); }
void releaseWorkspace(char* p) { std::free(p); }
#endif

template <typename T>
size_t alignedBytes(int64_t elements) {
  return static_cast<size_t>((elements * static_cast<int64_t>(sizeof(T)) + 63) / 64 * 64);
}

/// Whether A's panels are row-major (A (i, p) at i·kc + p): for an A whose rows are
/// contiguous, so that packing copies whole rows; otherwise k-major (at p·mr + i), so that
/// a transposed A's contiguous columns are copied whole. The micro-kernel is generated
/// for each (compiler/cpu/Gemm.h).
template <typename T>
bool rowPanels(Strided<T> a) {
  return a.cols == 1;
}

/// Packs A's rows [row, row + rows) and k in [pc, pc + kc) into mr×kc panels (rowPanels
/// says which layout), zero past `rows`, each element times alpha.
template <typename T>
void packA(Strided<T> a, int64_t row, int64_t rows, int64_t pc, int64_t kc, int64_t mr, T* ap, T alpha = T(1)) {
  const bool byRows = rowPanels(a);
  for (int64_t ir = 0; ir < rows; ir += mr) {
    T* panel = ap + ir * kc;
    const int64_t live = std::min(mr, rows - ir);
    if (byRows) {
      for (int64_t i = 0; i < mr; ++i) {
        T* to = panel + i * kc;
        if (i >= live) {
          for (int64_t p = 0; p < kc; ++p) to[p] = T(0);
          continue;
        }
        const T* from = a.data + (row + ir + i) * a.rows + pc;
        for (int64_t p = 0; p < kc; ++p) to[p] = from[p];
      }
      continue;
    }
    for (int64_t p = 0; p < kc; ++p) { // k-major: A's column segment at each step of k
      const T* from = a.data + (pc + p) * a.cols + (row + ir) * a.rows;
      T* to = panel + p * mr;
      if (a.rows == 1)
        for (int64_t i = 0; i < live; ++i) to[i] = from[i];
      else
        for (int64_t i = 0; i < live; ++i) to[i] = from[i * a.rows];
      for (int64_t i = live; i < mr; ++i) to[i] = T(0);
    }
  }
  if (alpha != T(1)) // the product's scale, applied once per element of A
    for (int64_t e = 0, count = (rows + mr - 1) / mr * mr * kc; e < count; ++e) ap[e] *= alpha;
}

/// Packs B's k in [pc, pc + kc) and columns [col, col + cols) into kc×nr panels.
template <typename T>
void packB(Strided<T> b, int64_t pc, int64_t kc, int64_t col, int64_t cols, int64_t nr, T* bp) {
  for (int64_t jr = 0; jr < cols; jr += nr) {
    T* panel = bp + jr * kc;
    const int64_t live = std::min(nr, cols - jr);
    if (b.cols == 1) {
      for (int64_t p = 0; p < kc; ++p) {
        const T* from = b.data + (pc + p) * b.rows + col + jr;
        T* to = panel + p * nr;
        for (int64_t j = 0; j < live; ++j) to[j] = from[j];
        for (int64_t j = live; j < nr; ++j) to[j] = T(0);
      }
      continue;
    }
    for (int64_t j = 0; j < nr; ++j) { // a transposed operand: B's row runs across memory
      if (j >= live) {
        for (int64_t p = 0; p < kc; ++p) panel[p * nr + j] = T(0);
        continue;
      }
      const T* from = b.data + pc * b.rows + (col + jr + j) * b.cols;
      for (int64_t p = 0; p < kc; ++p) panel[p * nr + j] = from[p * b.rows];
    }
  }
}

/// Runs the micro-kernel on one tile: in place when it is whole, else through `tile` (an
/// mr×nr scratch) for its live rows × cols.
template <typename T>
#if defined(__clang__) // calls generated code, which has no UBSan function signature
__attribute__((no_sanitize("function")))
#endif
inline void runTile(MicroKernel<T> kernel, int64_t kc, const T* ap, const T* bp, T* c, int64_t ldc, bool accumulate,
                    int64_t rows, int64_t cols, const GemmBlocking& g, T* tile) {
  if (rows == g.mr && cols == g.nr) {
    kernel(kc, ap, bp, c, ldc, accumulate);
    return;
  }
  kernel(kc, ap, bp, tile, g.nr, 0);
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) c[i * ldc + j] = (accumulate ? c[i * ldc + j] : T(0)) + tile[i * g.nr + j];
}

/// C[:, colBegin..colEnd) = epilogue(A · B) for A [m, k] and B [k, n] of any strides and
/// row-major C, BLIS-style: for each block of nc columns and kc steps of k, B's block is
/// packed into kc×nr panels; for each block of mc rows A's block is packed into mr×kc
/// panels; then for each panel of B (held in L1) and each panel of A (streamed from L2)
/// the micro-kernel computes an mr×nr tile of C, accumulating over the k blocks.
/// Panels are zero-padded, so edge tiles run the same micro-kernel into a scratch tile.
/// Without memory to pack into, a plain loop computes the product: never a wrong answer.
template <typename T>
#if defined(__clang__) // calls generated code, which has no UBSan function signature
__attribute__((no_sanitize("function")))
#endif
void packedGemm(Strided<T> a, Strided<T> b, T* c, int64_t m, int64_t k, int64_t ldc, int64_t colBegin,
                int64_t colEnd, MicroKernel<T> kMajorKernel, MicroKernel<T> rowsKernel, GemmBlocking g,
                Epilogue<T> epilogue) {
  const MicroKernel<T> kernel = rowPanels(a) ? rowsKernel : kMajorKernel;
  if (m <= 0 || colEnd <= colBegin) return;
  if (k <= 0) {
    if (!epilogue.accumulate)
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = colBegin; j < colEnd; ++j) c[i * ldc + j] = T(0);
    epilogue.apply(c + colBegin, ldc, 0, colBegin, m, colEnd - colBegin);
    return;
  }
  const int64_t kcMax = std::min(g.kc, k);
  const int64_t mcMax = (std::min(g.mc, m) + g.mr - 1) / g.mr * g.mr;
  const int64_t ncMax = (std::min(g.nc, colEnd - colBegin) + g.nr - 1) / g.nr * g.nr;
  const size_t need = alignedBytes<T>(mcMax * kcMax) + alignedBytes<T>(ncMax * kcMax) + alignedBytes<T>(g.mr * g.nr);
  // Small products pack into the stack (even a cached buffer's look-up would show).
  alignas(64) char local[16384];
  char* memory = need <= sizeof local ? local : workspace(need);
  if (!memory) {
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = colBegin; j < colEnd; ++j) {
        T sum = T(0);
        for (int64_t p = 0; p < k; ++p) sum += a.at(i, p) * b.at(p, j);
        c[i * ldc + j] = (epilogue.accumulate ? c[i * ldc + j] : T(0)) + epilogue.alpha * sum;
      }
    epilogue.apply(c + colBegin, ldc, 0, colBegin, m, colEnd - colBegin);
    return;
  }
  T* ap = reinterpret_cast<T*>(memory);
  T* bp = reinterpret_cast<T*>(memory + alignedBytes<T>(mcMax * kcMax));
  T* tile = reinterpret_cast<T*>(memory + alignedBytes<T>(mcMax * kcMax) + alignedBytes<T>(ncMax * kcMax));
  for (int64_t jc = colBegin; jc < colEnd; jc += g.nc) {
    const int64_t nc = std::min(g.nc, colEnd - jc);
    for (int64_t pc = 0; pc < k; pc += g.kc) {
      const int64_t kc = std::min(g.kc, k - pc);
      const bool last = pc + kc >= k;
      packB(b, pc, kc, jc, nc, g.nr, bp);
      for (int64_t ic = 0; ic < m; ic += g.mc) {
        const int64_t mc = std::min(g.mc, m - ic);
        packA(a, ic, mc, pc, kc, g.mr, ap, epilogue.alpha);
        for (int64_t jr = 0; jr < nc; jr += g.nr) {
          const int64_t cols = std::min(g.nr, nc - jr);
          for (int64_t ir = 0; ir < mc; ir += g.mr) {
            const int64_t rows = std::min(g.mr, mc - ir);
            T* to = c + (ic + ir) * ldc + jc + jr;
            runTile(kernel, kc, ap + ir * kc, bp + jr * kc, to, ldc, pc > 0 || epilogue.accumulate, rows, cols, g, tile);
            if (last && epilogue.any()) epilogue.apply(to, ldc, ic + ir, jc + jr, rows, cols);
          }
        }
      }
    }
  }
  if (memory != local) releaseWorkspace(memory);
}

// ---- Convolution ----

/// Packs weights [o, depth] as A: for each block of kc steps of k, ceil(o / mr) panels of
/// mr×kc (row-major: the micro-kernel is the rowPanels one), zero rows past o. The block
/// at k-offset pc starts at oPad · pc.
template <typename T>
void packConvWeights(const T* w, T* ap, const ConvSizes& s, int64_t mr, int64_t kc, bool flipped) {
  const int64_t o = s.o, depth = s.depth(), oPad = (o + mr - 1) / mr * mr;
  if (!flipped) {
    for (int64_t pc = 0; pc < depth; pc += kc)
      packA(Strided<T>{w, depth, 1}, 0, o, pc, std::min(kc, depth - pc), mr, ap + oPad * pc);
    return;
  }
  // The weights of the convolution whose output is conv2d's input cotangent: w is the
  // forward's [s.c, s.o, kh, kw]; this one's (co, (ci, i, j)) is w[ci, co, kh-1-i, kw-1-j].
  const int64_t window = s.kh * s.kw;
  for (int64_t pc = 0; pc < depth; pc += kc) {
    const int64_t kcb = std::min(kc, depth - pc);
    T* block = ap + oPad * pc;
    for (int64_t row = 0; row < oPad; ++row)
      for (int64_t p = 0; p < kcb; ++p) {
        const int64_t k = pc + p, ci = k / window, i = k % window / s.kw, j = k % s.kw;
        block[(row / mr) * mr * kcb + (row % mr) * kcb + p] =
            row < o ? w[((ci * o + row) * s.kh + (s.kh - 1 - i)) * s.kw + (s.kw - 1 - j)] : T(0);
      }
  }
}

/// B's kc×nr panel for output positions [p0, p0 + cols) and k in [pc, pc + kc): row p,
/// for k = (ci, ki, kj), holds the input element each position multiplies by
/// w[., ci, ki, kj], 0 where that is padding; columns past `cols` are 0.
template <typename T>
void gatherPanel(const T* image, const ConvSizes& s, int64_t p0, int64_t cols, int64_t pc, int64_t kc, int64_t nr,
                 T* panel) {
  // The positions as runs along output rows: panel column `at`, output row, first column.
  struct Run {
    int64_t at, row, col, len;
  };
  constexpr int64_t kMaxRuns = 66; // nr ≤ 64 positions cross at most 65 rows
  Run runs[kMaxRuns];
  int64_t count = 0;
  for (int64_t at = 0; at < cols && count < kMaxRuns;) {
    const int64_t p = p0 + at, row = p / s.wo, col = p % s.wo;
    const int64_t len = std::min(cols - at, s.wo - col);
    runs[count++] = {at, row, col, len};
    at += len;
  }
  const int64_t window = s.kh * s.kw;
  int64_t ci = pc / window, ki = pc % window / s.kw, kj = pc % s.kw;
  for (int64_t p = 0; p < kc; ++p) {
    T* to = panel + p * nr;
    const T* plane = image + ci * s.h * s.w;
    for (int64_t r = 0; r < count; ++r) {
      const Run& run = runs[r];
      T* d = to + run.at;
      const int64_t ih = run.row * s.sh - s.ph + ki;
      if (ih < 0 || ih >= s.h) {
        for (int64_t j = 0; j < run.len; ++j) d[j] = T(0);
        continue;
      }
      const T* src = plane + ih * s.w;
      const int64_t iw = run.col * s.sw - s.pw + kj;
      if (s.sw == 1) { // a contiguous run of the input row, zeros where it leaves the row
        const int64_t jb = std::clamp<int64_t>(-iw, 0, run.len);
        const int64_t je = std::clamp<int64_t>(s.w - iw, jb, run.len);
        for (int64_t j = 0; j < jb; ++j) d[j] = T(0);
        for (int64_t j = jb; j < je; ++j) d[j] = src[iw + j];
        for (int64_t j = je; j < run.len; ++j) d[j] = T(0);
      } else {
        for (int64_t j = 0; j < run.len; ++j) {
          const int64_t x = iw + j * s.sw;
          d[j] = x >= 0 && x < s.w ? src[x] : T(0);
        }
      }
    }
    for (int64_t j = cols; j < nr; ++j) to[j] = T(0);
    if (++kj == s.kw) {
      kj = 0;
      if (++ki == s.kh) ki = 0, ++ci;
    }
  }
}

/// Output rows [r0, r1) of one image, stride 1, on padded rows: the input rows they read
/// are copied, zero-padded, into `padded` (c planes of rows × wp, wp = w + 2·pw; without
/// padding the image itself is read); on
/// that grid output position (r, col) is v = (r - r0)·wp + col and B's row k = (ci, ki,
/// kj) is the contiguous run at ci·rows·wp + ki·wp + kj + v — so packing B is a copy, not
/// a gather. Columns col ≥ wo of the grid are computed into `cTile` (o rows × nr) and
/// dropped when each panel's tile is copied out.
template <typename T>
#if defined(__clang__)
__attribute__((no_sanitize("function")))
#endif
void paddedConv(const T* in, const T* ap, T* result, const ConvSizes& s, int64_t r0, int64_t r1, MicroKernel<T> kernel,
                const GemmBlocking& g, T* padded, T* bp, T* cTile) {
  const int64_t wp = s.w + 2 * s.pw, rows = r1 - r0 + s.kh - 1, depth = s.depth(), window = s.kh * s.kw;
  const int64_t oPad = (s.o + g.mr - 1) / g.mr * g.mr, positions = s.positions();
  // Without padding the image's own rows are the grid (a 1×1 convolution is then a plain
  // GEMM over the image): nothing is copied.
  const bool direct = s.ph == 0 && s.pw == 0;
  const T* grid0 = direct ? in + r0 * s.w : padded;
  const int64_t plane = direct ? s.h * s.w : rows * wp;
  for (int64_t ci = 0; ci < s.c && !direct; ++ci)
    for (int64_t r = 0; r < rows; ++r) {
      T* to = padded + (ci * rows + r) * wp;
      const int64_t ih = r0 - s.ph + r;
      if (ih < 0 || ih >= s.h) {
        for (int64_t j = 0; j < wp; ++j) to[j] = T(0);
        continue;
      }
      const T* from = in + (ci * s.h + ih) * s.w;
      for (int64_t j = 0; j < s.pw; ++j) to[j] = T(0);
      for (int64_t j = 0; j < s.w; ++j) to[s.pw + j] = from[j];
      for (int64_t j = s.pw + s.w; j < wp; ++j) to[j] = T(0);
    }
  const int64_t grid = (r1 - r0 - 1) * wp + s.wo; // the last row ends at its last output
  for (int64_t v0 = 0; v0 < grid; v0 += g.nr) {
    const int64_t cols = std::min(g.nr, grid - v0);
    for (int64_t pc = 0; pc < depth; pc += g.kc) {
      const int64_t kc = std::min(g.kc, depth - pc);
      int64_t ci = pc / window, ki = pc % window / s.kw, kj = pc % s.kw;
      for (int64_t p = 0; p < kc; ++p) {
        const T* from = grid0 + ci * plane + ki * wp + kj + v0;
        T* to = bp + p * g.nr;
        for (int64_t j = 0; j < cols; ++j) to[j] = from[j];
        for (int64_t j = cols; j < g.nr; ++j) to[j] = T(0);
        if (++kj == s.kw) {
          kj = 0;
          if (++ki == s.kh) ki = 0, ++ci;
        }
      }
      for (int64_t ir = 0; ir < oPad; ir += g.mr) kernel(kc, ap + oPad * pc + ir * kc, bp, cTile + ir * g.nr, g.nr, pc > 0);
    }
    // The panel's grid columns as runs of output rows.
    for (int64_t at = 0; at < cols;) {
      const int64_t v = v0 + at, r = v / wp, col = v % wp;
      const int64_t len = std::min(cols - at, wp - col);
      if (col < s.wo) {
        const int64_t live = std::min(len, s.wo - col);
        T* to = result + (r0 + r) * s.wo + col;
        for (int64_t o = 0; o < s.o; ++o)
          for (int64_t j = 0; j < live; ++j) to[o * positions + j] = cTile[o * g.nr + at + j];
      }
      at += len;
    }
  }
}

/// Bytes of workspace packedConv needs for tasks of `chunk` positions: the packed
/// weights, one B panel, a scratch tile of o × nr (padded rows) or mr × nr, and the
/// padded input rows of a task.
template <typename T>
size_t convWorkspaceBytes(const ConvSizes& s, const GemmBlocking& g, int64_t chunk) {
  const int64_t oPad = (s.o + g.mr - 1) / g.mr * g.mr;
  const int64_t rows = (chunk + s.wo - 1) / s.wo + s.kh - 1;
  const int64_t padded = convOnPaddedRows(s) && (s.ph || s.pw) ? s.c * rows * (s.w + 2 * s.pw) : 0;
  return alignedBytes<T>(oPad * s.depth()) + alignedBytes<T>(g.kc * g.nr) + alignedBytes<T>(oPad * g.nr) +
         alignedBytes<T>(padded);
}

/// Tasks [begin, end) of a convolution: task t is output positions [c · chunk, (c + 1) ·
/// chunk) of image t / chunks, c = t % chunks, for every output channel. The weights are
/// packed once per call; then, for each panel of nr positions and block of k, the panel
/// is gathered into L1 and every mr-row panel of the weights runs the micro-kernel on it,
/// straight into the NCHW output. Without memory to pack into, a direct loop computes
/// the tasks: never a wrong answer.
template <typename T>
#if defined(__clang__)
__attribute__((no_sanitize("function")))
#endif
void packedConv(const T* x, const T* w, T* out, const ConvSizes& s, int64_t chunk, int64_t begin, int64_t end,
                MicroKernel<T> kernel, GemmBlocking g, bool flipped = false) {
  const int64_t depth = s.depth(), positions = s.positions();
  const int64_t chunks = (positions + chunk - 1) / chunk;
  if (depth == 0) { // no input channels: every sum is empty
    for (int64_t t = begin; t < end; ++t) {
      const int64_t image = t / chunks, p0 = t % chunks * chunk, p1 = std::min(positions, p0 + chunk);
      for (int64_t o = 0; o < s.o; ++o)
        for (int64_t p = p0; p < p1; ++p) out[(image * s.o + o) * positions + p] = T(0);
    }
    return;
  }
  // Padded rows need tasks of whole output rows; any other split gathers.
  const bool onRows = convOnPaddedRows(s) && (chunk % s.wo == 0 || chunk >= positions);
  char* memory = workspace(convWorkspaceBytes<T>(s, g, chunk));
  if (!memory) {
    for (int64_t t = begin; t < end; ++t) {
      const int64_t image = t / chunks, p0 = t % chunks * chunk, p1 = std::min(positions, p0 + chunk);
      for (int64_t o = 0; o < s.o; ++o)
        for (int64_t p = p0; p < p1; ++p) {
          const int64_t row = p / s.wo, col = p % s.wo;
          T sum = T(0);
          for (int64_t ci = 0; ci < s.c; ++ci)
            for (int64_t ki = 0; ki < s.kh; ++ki)
              for (int64_t kj = 0; kj < s.kw; ++kj) {
                const int64_t ih = row * s.sh - s.ph + ki, iw = col * s.sw - s.pw + kj;
                const T wv = flipped ? w[((ci * s.o + o) * s.kh + (s.kh - 1 - ki)) * s.kw + (s.kw - 1 - kj)]
                                     : w[((o * s.c + ci) * s.kh + ki) * s.kw + kj];
                if (ih >= 0 && ih < s.h && iw >= 0 && iw < s.w) sum += wv * x[((image * s.c + ci) * s.h + ih) * s.w + iw];
              }
          out[(image * s.o + o) * positions + p] = sum;
        }
    }
    return;
  }
  const int64_t oPad = (s.o + g.mr - 1) / g.mr * g.mr;
  T* ap = reinterpret_cast<T*>(memory);
  T* bp = reinterpret_cast<T*>(memory + alignedBytes<T>(oPad * depth));
  T* tile = reinterpret_cast<T*>(memory + alignedBytes<T>(oPad * depth) + alignedBytes<T>(g.kc * g.nr));
  T* padded = reinterpret_cast<T*>(memory + alignedBytes<T>(oPad * depth) + alignedBytes<T>(g.kc * g.nr) +
                                   alignedBytes<T>(oPad * g.nr));
  packConvWeights(w, ap, s, g.mr, g.kc, flipped);
  for (int64_t t = begin; t < end; ++t) {
    const int64_t image = t / chunks, p0 = t % chunks * chunk, p1 = std::min(positions, p0 + chunk);
    const T* in = x + image * s.c * s.h * s.w;
    T* result = out + image * s.o * positions;
    if (onRows) {
      paddedConv(in, ap, result, s, p0 / s.wo, (p1 + s.wo - 1) / s.wo, kernel, g, padded, bp, tile);
      continue;
    }
    for (int64_t jr = p0; jr < p1; jr += g.nr) {
      const int64_t cols = std::min(g.nr, p1 - jr);
      for (int64_t pc = 0; pc < depth; pc += g.kc) {
        const int64_t kc = std::min(g.kc, depth - pc);
        gatherPanel(in, s, jr, cols, pc, kc, g.nr, bp);
        for (int64_t ir = 0; ir < s.o; ir += g.mr)
          runTile(kernel, kc, ap + oPad * pc + ir * kc, bp, result + ir * positions + jr, positions, pc > 0,
                  std::min(g.mr, s.o - ir), cols, g, tile);
      }
    }
  }
  releaseWorkspace(memory);
}

/// Positions per step of the weight gradient: the unrolled block (positions × its share
/// of c·kh·kw) stays about 4 MiB.
inline int64_t gradWeightChunk(int64_t columns) {
  return std::max<int64_t>(64, (int64_t(1) << 20) / std::max<int64_t>(1, columns));
}

/// Columns [k0, k1) of conv2d's weight cotangent dw [o, c·kh·kw] = Σ over images of
/// dy [o, positions] · unrolled xᵀ [positions, k]: for each image and block of
/// positions, the input windows those columns read are unrolled ("im2row") into
/// workspace, and the packed GEMM (A = dy's rows, row panels) adds the product into dw.
template <typename T>
#if defined(__clang__)
__attribute__((no_sanitize("function")))
#endif
void convGradWeight(const T* x, const T* dy, T* dw, const ConvSizes& s, int64_t k0, int64_t k1,
                    MicroKernel<T> kMajorKernel, MicroKernel<T> rowsKernel, GemmBlocking g) {
  const int64_t depth = s.depth(), positions = s.positions(), columns = k1 - k0;
  if (columns <= 0) return;
  if (s.n * positions == 0) {
    for (int64_t o = 0; o < s.o; ++o)
      for (int64_t k = k0; k < k1; ++k) dw[o * depth + k] = T(0);
    return;
  }
  const int64_t chunk = std::min(positions, gradWeightChunk(columns));
  T* rows = reinterpret_cast<T*>(workspace(alignedBytes<T>(chunk * columns), 1));
  const int64_t window = s.kh * s.kw;
  bool first = true;
  for (int64_t image = 0; image < s.n; ++image) {
    const T* in = x + image * s.c * s.h * s.w;
    const T* grad = dy + image * s.o * positions;
    for (int64_t p0 = 0; p0 < positions; p0 += chunk) {
      const int64_t p1 = std::min(positions, p0 + chunk);
      if (!rows) { // no memory to unroll into: the sums directly
        for (int64_t o = 0; o < s.o; ++o)
          for (int64_t k = k0; k < k1; ++k) {
            const int64_t ci = k / window, i = k % window / s.kw, j = k % s.kw;
            T sum = first ? T(0) : dw[o * depth + k];
            for (int64_t p = p0; p < p1; ++p) {
              const int64_t ih = p / s.wo * s.sh - s.ph + i, iw = p % s.wo * s.sw - s.pw + j;
              if (ih >= 0 && ih < s.h && iw >= 0 && iw < s.w) sum += grad[o * positions + p] * in[(ci * s.h + ih) * s.w + iw];
            }
            dw[o * depth + k] = sum;
          }
        first = false;
        continue;
      }
      for (int64_t k = k0; k < k1; ++k) { // im2row: position p's row holds its window
        const int64_t ci = k / window, i = k % window / s.kw, j = k % s.kw;
        const T* plane = in + ci * s.h * s.w;
        T* to = rows + (k - k0);
        // Along output rows: the columns whose window column is inside the image.
        const int64_t jb = std::clamp<int64_t>((s.pw - j + s.sw - 1) / s.sw, 0, s.wo);
        const int64_t je = std::clamp<int64_t>((s.w + s.pw - j + s.sw - 1) / s.sw, jb, s.wo);
        for (int64_t p = p0; p < p1;) {
          const int64_t row = p / s.wo, col = p % s.wo, last = std::min(p1, p + s.wo - col);
          const int64_t ih = row * s.sh - s.ph + i;
          T* d = to + (p - p0) * columns;
          if (ih < 0 || ih >= s.h) {
            for (int64_t q = p; q < last; ++q, d += columns) *d = T(0);
          } else {
            const T* src = plane + ih * s.w - s.pw + j;
            for (int64_t q = p, c = col; q < last; ++q, ++c, d += columns) *d = c >= jb && c < je ? src[c * s.sw] : T(0);
          }
          p = last;
        }
      }
      Epilogue<T> accumulate;
      accumulate.accumulate = first ? 0 : 1;
      packedGemm(Strided<T>{grad + p0, positions, 1}, Strided<T>{rows, columns, 1}, dw + k0, s.o, p1 - p0, depth, 0,
                 columns, kMajorKernel, rowsKernel, g, accumulate);
      first = false;
    }
  }
  if (rows) releaseWorkspace(reinterpret_cast<char*>(rows));
}

} // namespace
