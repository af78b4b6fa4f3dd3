// compiler/cpu/Attention.h — the :cpu emitter of scaled dot-product attention and its
// derivative rows.
#pragma once

#include "compiler/cpu/FunctionCodegen.h"

namespace tsl::compiler::cpu {

/// attention (either part), attention-grad (each part) and attention-jvp of f32 or f64
/// operands of the result's dtype: the kernel library's blocked kernels
/// (runtime/FlashAttention.h) over work items in parallel, in memory linear in the
/// sequence lengths. False declines (other dtypes: the eager kernel converts them).
bool emitAttention(FunctionCodegen& g, const ir::Operation& op, llvm::Value* out);

} // namespace tsl::compiler::cpu
