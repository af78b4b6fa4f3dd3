// compiler/interp/IrRunner.h — runs IR operation by operation on the runtime's kernels.
//
// The :interp backend's engine. Every primitive runs through runOp, the same eager
// kernel the evaluator calls, so `jit :interp` computes exactly what eager execution
// computes: it is the reference the other backends are compared with. A `fused` region
// runs as the operations it holds. Memory follows the function's plan (ir/MemoryPlan.h)
// when it has one: each tensor is dropped right after its last use, so the temporaries
// of a long function do not accumulate (the kernels' own buffers come from the runtime's
// allocator, which reuses them).
#pragma once

#include "ir/IR.h"

#include <functional>
#include <vector>

namespace tsl::compiler {

struct RunOptions {
  /// Called once per while iteration; may throw to stop a long computation.
  std::function<void()> poll;
  /// Asked first for each primitive operation: returns true having set `result` if it ran
  /// the operation itself (the :tc backend runs contractions on the tensor core), false
  /// to leave it to the eager kernel.
  /// `valueOf` gives the tensor of any value computed so far.
  std::function<bool(const ir::Operation& op, std::span<const Tensor> inputs, Tensor& result,
                     const std::function<const Tensor&(const ir::Value*)>& valueOf)>
      primitive;
};

/// Runs `function` of `module` on `args` (one per parameter, checked against the
/// parameter types: dtypes equal, dimensions equal or bound consistently to symbols).
std::vector<Tensor> runIr(const ir::Module& module, const ir::Function& function, std::span<const Tensor> args,
                          const RunOptions& options = {});

} // namespace tsl::compiler
