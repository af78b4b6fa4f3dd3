// compiler/cpu/LoopNests.h — the pieces loop nests are built from (internal to compiler/cpu).
//
// Loops.cpp (elementwise nests, copies, fused groups) and Reductions.cpp (loop
// reductions) generate their loops from these: counted loops, nests over a shape, the
// address of an element, and the leaves a nest reads.
#pragma once

#include "compiler/cpu/FunctionCodegen.h"

namespace tsl::compiler::cpu {

/// for (i = from; i < to; ++i) body(i), in the builder's current function. Only innermost
/// loops are left to the vectoriser (`innermost`): vectorising an outer loop would gather
/// across rows.
void forLoop(llvm::IRBuilder<>& b, llvm::Value* from, llvm::Value* to,
             const std::function<void(llvm::IRBuilder<>&, llvm::Value*)>& body, bool innermost = true);

/// Nested loops over `sizes`, the first from `begin` to `end`, the others whole.
void forNest(llvm::IRBuilder<>& b, const std::vector<int64_t>& sizes, llvm::Value* begin, llvm::Value* end,
             const std::function<void(llvm::IRBuilder<>&, const std::vector<llvm::Value*>&)>& body);

/// Σ index[d] · strides[d] + offset.
llvm::Value* offsetOf(llvm::IRBuilder<>& b, const std::vector<llvm::Value*>& index, const std::vector<int64_t>& strides,
                      int64_t offset);

/// The index along each of `sizes` of row-major position `flat`: divisions by constants.
std::vector<llvm::Value*> delinearize(llvm::IRBuilder<>& b, llvm::Value* flat, const std::vector<int64_t>& sizes);

/// How a nest's leaves are read inside its loops: those in memory (with their strides
/// over the iteration space) and the scalars, in the order the outlined body receives
/// them after the output pointer.
struct Leaves {
  std::vector<size_t> memory, scalars; ///< positions in nest.leaves
  /// Scalar leaves that are LLVM constants (a fused group's copies of scalar constants):
  /// used where they are, not captured — a group of hundreds of `(* x i)` would otherwise
  /// store and load hundreds of them per call.
  std::vector<size_t> constants;
  std::vector<std::vector<int64_t>> strides;

  Leaves(const LoopNest& nest, const std::vector<int64_t>& space);
  /// The values the outlined body needs: `out`, then the leaves' pointers and scalars.
  std::vector<llvm::Value*> captures(const LoopNest& nest, llvm::Value* out) const;
};

/// The nest's result at a full index of its space: loads of the leaves, then its
/// operations, in the outlined body (`got` holds the captures).
llvm::Value* nestValue(FunctionCodegen& g, llvm::IRBuilder<>& b, const LoopNest& nest, const Leaves& leaves,
                       const std::vector<llvm::Value*>& index, const std::vector<llvm::Value*>& got);

} // namespace tsl::compiler::cpu
