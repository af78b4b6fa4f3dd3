// compiler/cpu/Contractions.h — the :cpu emitters of matmul (and dot) and conv2d, on the
// packed GEMM and convolution of kernels/PackedGemm.h with a micro-kernel generated for
// the target (Gemm.h).
#pragma once

#include "compiler/cpu/FunctionCodegen.h"

namespace tsl::compiler::cpu {

/// matmul, and dot where it is matmul: [..., m, k] @ [..., k, n] with broadcast batch
/// axes. Operands are read through their accesses, so a transpose or slice the fuse pass
/// put in the group is read in place; a fused epilogue of bias and activation is applied as
/// each tile of C is stored. False declines (other dtypes, dot that is not matmul).
bool emitMatmul(FunctionCodegen& g, const ir::Operation& op, llvm::Value* out);

/// What the GEMM computes besides the product (ir::AffineEpilogue, lowered): C starts
/// from the accumulator instead of zero (copied into C first unless it is C's memory),
/// the product is scaled by alpha, and each tile of C gets + bias (a vector indexed by
/// C's row when biasAxis is 0, by its column when 1), then the activation, as it is
/// stored.
struct GemmEpilogue {
  llvm::Value* bias = nullptr;        ///< pointer to the bias's first element, or null
  int biasAxis = 1;
  int activation = 0;                 ///< kernels/PackedGemm.h's GemmActivation: 0 none, 1 relu,
                                      ///< 2 gelu, 3 gelu-tanh
  llvm::Value* accumulator = nullptr; ///< pointer to C's starting values, or null
  llvm::Value* alpha = nullptr;       ///< the scale (of the storage type), or null for 1
};
/// emitMatmul with an epilogue (f32 and f64 only; false declines).
bool emitMatmulWithEpilogue(FunctionCodegen& g, const ir::Operation& op, llvm::Value* out,
                            const GemmEpilogue& epilogue);
/// f32 and f64 conv2d of NCHW images by OIHW weights, and its cotangents: the input's
/// as a convolution of the output's cotangent by the flipped weights (stride 1; other
/// strides decline), the weights' as GEMMs over unrolled blocks of the input.
bool emitConv2d(FunctionCodegen& g, const ir::Operation& op, llvm::Value* out);
bool emitConv2dGradInput(FunctionCodegen& g, const ir::Operation& op, llvm::Value* out);
bool emitConv2dGradWeight(FunctionCodegen& g, const ir::Operation& op, llvm::Value* out);

} // namespace tsl::compiler::cpu
