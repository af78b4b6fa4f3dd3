// compiler/tc/Contract.h — the cube lowering table: contractions run as tensor-core programs.
//
// One row per operation the cube runs (matmul, dot, conv2d; einsum's contractions reach
// it as matmuls through the expand-einsum pass): how its tensors become a MatmulSpec or
// ConvSpec and GM buffers. Programs are made once per shape and tiling and cached by the
// caller's ProgramCache.
#pragma once

#include "compiler/tc/Emulator.h"
#include "compiler/tc/Lower.h"
#include "ir/IR.h"

#include <map>
#include <memory>
#include <optional>

namespace tsl::compiler::tc {

/// Programs already made, and tilings already chosen, by what determines them.
struct ProgramCache {
  std::map<std::string, std::shared_ptr<const Program>> programs;
  std::map<std::string, std::pair<Tiling, std::string>> tilings; ///< with the search's report
};

struct CubeContext {
  const Device& device;
  Ty cube;                  ///< f16 or bf16
  ProgramCache& cache;
  TcStats& stats;           ///< what the programs (and conversions) add up to
  std::vector<TraceEvent>* trace = nullptr;     ///< their instructions, if traced
  int64_t* clock = nullptr;                     ///< the trace's current time
  std::vector<const Program*>* used = nullptr;  ///< the programs run, in order, if wanted
  /// What the drain applies beyond the contraction (the operations after it that the
  /// program absorbed): bias (the tensor), ReLU, and the layout it writes.
  Epilogue epilogue{};
  const Tensor* bias = nullptr;
  std::optional<Layout> layout; ///< instead of the operation's result layout
};

/// Whether the cube runs operations of `kind` (a row of the table).
bool runsOnCube(OpKind kind);

/// Runs `op` on the cube if its operands allow (floating point); nullopt to leave it to
/// the eager kernel.
std::optional<Tensor> runOnCube(const ir::Operation& op, std::span<const Tensor> inputs, const CubeContext& cx);

} // namespace tsl::compiler::tc
