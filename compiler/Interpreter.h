// compiler/Interpreter.h — the :interp backend: runs IR on the runtime's kernels.
//
// Every primitive runs through runOp, the same eager kernel the evaluator calls, so
// `jit :interp` computes exactly what eager execution computes. Memory plan: a value's
// tensor is released right after its last use in its block (a value used inside a
// nested region lives until that region's operation is done), so temporaries of a long
// function do not accumulate.
#pragma once

#include "ir/IR.h"

#include <functional>
#include <vector>

namespace tsl::compiler {

struct InterpretOptions {
  /// Called once per while iteration; may throw to stop a long computation.
  std::function<void()> poll;
};

/// Runs `function` of `module` on `args` (one per parameter, checked against the
/// parameter types: dtypes equal, dimensions equal or bound consistently to symbols).
std::vector<Tensor> interpret(const ir::Module& module, const ir::Function& function, std::span<const Tensor> args,
                              const InterpretOptions& options = {});

} // namespace tsl::compiler
