// compiler/cpu/Gemm.h — the GEMM micro-kernel, generated as LLVM IR for the target CPU.
//
// matmul on f32 and f64 runs the packed GEMM of compiler/cpu/kernels/Kernels.h
// (packedGemm: BLIS's loops and packing) with a micro-kernel generated here: an mr×nr
// tile of C held in mr·nr/lanes vector registers, each step of k loading nr/lanes vectors
// of B's packed row and broadcasting mr elements of A's packed column into vector FMAs.
// The tile and the blocks come from a small table keyed by the widest vector the CPU has
// (AVX-512, AVX2, SSE) and the element type.
#pragma once

#include "runtime/DType.h"

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

/// The plan for `dtype` (f32 or f64) on a CPU with these LLVM features ("+avx512f,...").
GemmPlan gemmPlan(DType dtype, const std::string& features);

/// The micro-kernel `void(i64 kc, T* ap, T* bp, T* c, i64 ldc, i32 accumulate)` for the
/// plan, defined in `module` once (internal, named after its shape).
llvm::Function* gemmMicroKernel(llvm::Module& module, DType dtype, const GemmPlan& plan);

} // namespace tsl::compiler::cpu
