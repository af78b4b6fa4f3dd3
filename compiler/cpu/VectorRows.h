// compiler/cpu/VectorRows.h — f32 softmax and layer-norm over contiguous rows as
// generated LLVM IR (VectorRows.cpp).
#pragma once

#include <string>

namespace llvm {
class Function;
class Module;
} // namespace llvm

namespace tsl::compiler::cpu {

/// The kernel library's tsl_cascade_push_f32 and tsl_cascade_total_f32 (runtime/Summation.h),
/// declared in the module: the rows' sums combine their blocks through them.
struct CascadeCalls {
  llvm::Function* push;
  llvm::Function* total;
};

/// `void(float* x, float* y, i64 begin, i64 end, i64 n)`: softmax of rows [begin, end)
/// of n contiguous elements, with the vectors of a CPU with `features`; the same bits as
/// runtime/RowKernels.h's softmax. Rows holding a NaN or an infinity call `general`
/// (the library's tsl_k_softmax_f32). Defined in `module` once.
llvm::Function* softmaxRowsF32(llvm::Module& module, const std::string& features, llvm::Function* general,
                               const CascadeCalls& cascade);

/// `void(float* x, float* y, i64 begin, i64 end, i64 n, float eps)`: layer-norm of rows
/// [begin, end) of n contiguous elements, the same bits as runtime/RowKernels.h's.
llvm::Function* layerNormRowsF32(llvm::Module& module, const std::string& features, const CascadeCalls& cascade);

} // namespace tsl::compiler::cpu
