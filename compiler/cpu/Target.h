// compiler/cpu/Target.h — the machine code is made for: target machines, the optimiser,
// and the text and object forms of a module (internal to compiler/cpu).
//
// The optimiser is LLVM's default pipeline for the level, built by the PassBuilder *with*
// the target machine and a TargetLibraryInfo registered before the function analyses:
// without the machine, LLVM's cost models assume baseline x86-64 and vectorise for SSE
// only. Every function is tagged with the CPU and its features for the same reason.
#pragma once

#include <llvm/IR/Module.h>
#include <llvm/Target/TargetMachine.h>

#include <memory>
#include <string>

namespace tsl::compiler::cpu {

/// Initialises LLVM's native target once per process.
void initializeLlvm();

/// The CPU `name` names ("znver4", "x86-64-v3"), or this machine's when empty, with its
/// features; a value error for a CPU LLVM does not know.
struct CpuTarget {
  std::string triple;
  std::string cpu;
  std::string features;
  static CpuTarget host();
  static CpuTarget named(const std::string& name);
};

/// A target machine for `target` at optimisation level 0..3; position-independent code
/// for ahead-of-time libraries.
std::unique_ptr<llvm::TargetMachine> makeTargetMachine(const CpuTarget& target, int optLevel, bool pic);

/// Gives the module the machine's data layout and triple, and every function its CPU and
/// features.
void prepareModule(llvm::Module& module, llvm::TargetMachine& machine);

/// Runs LLVM's optimisation pipeline for `optLevel` (0..3) on the module, or a light one
/// for a `huge` program (hasHugeBlock) at any level but 0. Ctrl-C (the
/// thread's interrupt flag, runtime/Interrupt.h) skips the passes left and raises
/// `runtime error: interrupted`; so does emitCode, with the functions left.
void optimizeModule(llvm::Module& module, llvm::TargetMachine& machine, int optLevel, bool huge = false);

/// The module as LLVM IR text.
std::string llvmText(const llvm::Module& module);

/// Whether the module has a basic block so long that LLVM's instruction schedulers,
/// quadratic in a block's length, would take seconds on it: a traced program unrolled into
/// thousands of operations. Such modules get a light pipeline (optimizeModule: no
/// vectoriser, no module-wide passes) and are compiled without scheduling.
bool hasHugeBlock(const llvm::Module& module);

/// The module compiled to assembly text (`object` false) or to an ELF object file.
std::string emitCode(llvm::Module& module, llvm::TargetMachine& machine, bool object);

} // namespace tsl::compiler::cpu
