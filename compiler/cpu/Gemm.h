// compiler/cpu/Gemm.h — the GEMM micro-kernel, generated as LLVM IR for the target CPU.
//
// matmul on f32 and f64 runs the packed GEMM of compiler/cpu/kernels/Kernels.h
// (packedGemm: BLIS's loops and packing) with a micro-kernel generated here: an mr×nr
// tile of C held in mr·nr/lanes vector registers, each step of k loading nr/lanes vectors
// of B's packed row and broadcasting mr elements of A's packed column into vector FMAs.
// The tile and the blocks come from a small table keyed by the widest vector the CPU has
// (AVX-512, AVX2, SSE) and the element type.
#pragma once

#include "compiler/cpu/kernels/ConvSizes.h"
#include "runtime/DType.h"

#include <algorithm>
#include <cstdint>
#include <string>

namespace llvm {
class Function;
class Module;
} // namespace llvm

namespace tsl::compiler::cpu {


struct GemmPlan {
  int64_t lanes; ///< elements per vector register
  int64_t mr;    ///< rows of the register tile
  int64_t nr;    ///< columns of the register tile (a multiple of lanes)
  int64_t kc;    ///< steps of k per packed block (B's kc×nr micro-panel fits L1)
  int64_t mc;    ///< rows of A per packed block (mc×kc fits L2)
  int64_t nc;    ///< columns of B per packed block (kc×nc fits L3)
};

/// How a product C[m,n] = A[m,k]·B[k,n] is cut into chunks for threads: one block of
/// columns per thread (each chunk packs A once) — of rows when m > n (each packs B
/// once: the smaller operand is the one packed twice) — unless the product is long (2^34
/// multiply-adds or more, a third of a second on a core): then tiles of rows × columns of
/// about 2^29 multiply-adds, so
/// that an interrupt, checked between chunks, is seen within a fraction of a second and
/// no chunk packs all of a huge A.
struct GemmTiling {
  int64_t rowBlock; ///< rows per chunk (m unless the product is long)
  int64_t colBlock; ///< columns per chunk (a multiple of nr, or n)
  int64_t rowChunks, colChunks;
  int64_t grain; ///< chunks per parallel task
  int64_t m, n;
  int64_t chunks() const { return rowChunks * colChunks; }
  struct Chunk {
    int64_t row, rows, colBegin, colEnd;
  };
  Chunk chunk(int64_t t) const {
    const int64_t r = t / colChunks, c = t % colChunks;
    const int64_t row = r * rowBlock, col = c * colBlock;
    return {row, std::min(rowBlock, m - row), col, std::min(n, col + colBlock)};
  }
};
GemmTiling gemmTiling(int64_t m, int64_t k, int64_t n, const GemmPlan& plan, int threads);

/// How a convolution is cut into tasks: task t computes `chunk` output positions (a
/// multiple of `unit`, or all of them) of image t / (tasks / n), for every output
/// channel; the unit is a row of the output where the convolution runs on padded rows
/// (kernels/PackedGemm.h's convOnPaddedRows), else a register tile's nr positions.
/// Enough tasks to keep every thread busy, each worth waking a thread for and short
/// enough (about 2^29 multiply-adds at most) for an interrupt to be seen between them.
struct ConvTiling {
  int64_t chunk, tasks, grain;
};
ConvTiling convTiling(const ConvSizes& sizes, const GemmPlan& plan, int threads);

/// The plan for `dtype` (f32 or f64) on a CPU with these LLVM features ("+avx512f,...").
GemmPlan gemmPlan(DType dtype, const std::string& features);

/// The plan for a product with m rows and n columns: gemmPlan's, or on AVX-512 a 6×64
/// (f32; 6×32 f64) tile when that pads the product at least 5 % less (n = 256: 8×48
/// computes 288 columns). Eager and compiled matmul choose alike.
GemmPlan gemmPlanFor(DType dtype, const std::string& features, int64_t m, int64_t n);

/// The micro-kernel `void(i64 kc, T* ap, T* bp, T* c, i64 ldc, i32 accumulate)` for the
/// plan, defined in `module` once (internal, named after its shape). A's mr×kc panel is
/// k-major (A (i, p) at p·mr + i), or row-major with `rowPanels` (at i·kc + p): the
/// packing copies row-major A's rows whole into the latter, a transposed A's columns
/// into the former, so neither transposes element by element.
llvm::Function* gemmMicroKernel(llvm::Module& module, DType dtype, const GemmPlan& plan, bool rowPanels);

} // namespace tsl::compiler::cpu
