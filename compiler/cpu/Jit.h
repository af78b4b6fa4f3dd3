// compiler/cpu/Jit.h — an engine's ORC LLJIT (internal to compiler/cpu).
//
// One JIT per engine (the :cpu backend owns it), for this machine's CPU. Each compiled
// function is added under a resource tracker of its own, so its code is freed when the
// function is dropped. The host functions of tsl_abi.h are defined in the JIT as
// absolute symbols; the C library's (memcpy, expf...) come from the process.
//
// Modules are compiled to machine code here, not by the JIT's own compile layer, so that
// the code generator's effort can follow a module's size: LLVM's instruction scheduling
// is quadratic in the length of a basic block, and a traced program can be one block of
// thousands of scalar operations. Such a module is compiled without scheduling
// (CodeGenOptLevel::None, hasHugeBlock); every other at the highest level.
#pragma once

#include "compiler/cpu/Target.h"

#include <llvm/ExecutionEngine/Orc/LLJIT.h>

#include <memory>
#include <mutex>

namespace tsl::compiler::cpu {

using EntryFn = int32_t (*)(void* const*, void*);

class Jit {
public:
  Jit();
  ~Jit();
  /// This machine's CPU and features.
  const CpuTarget& target() const { return target_; }
  /// The target machine that optimises modules and compiles ordinary ones.
  llvm::TargetMachine& machine() { return *machine_; }

  /// Code in the JIT; freed when this goes.
  class Code {
  public:
    Code(std::shared_ptr<Jit> jit, llvm::orc::ResourceTrackerSP tracker, EntryFn entry)
        : jit_(std::move(jit)), tracker_(std::move(tracker)), entry_(entry) {}
    ~Code();
    Code(const Code&) = delete;
    Code& operator=(const Code&) = delete;
    EntryFn entry() const { return entry_; }

  private:
    std::shared_ptr<Jit> jit_;
    llvm::orc::ResourceTrackerSP tracker_;
    EntryFn entry_;
  };

  /// Adds an optimised module and compiles it (`fast`: without scheduling, as -O0 asks);
  /// returns the code of function `entry`. `codegenSeconds` receives the time machine
  /// code generation took.
  static std::unique_ptr<Code> add(const std::shared_ptr<Jit>& jit, std::unique_ptr<llvm::Module> module,
                                   std::unique_ptr<llvm::LLVMContext> context, const std::string& entry, bool fast,
                                   double* codegenSeconds);

private:
  CpuTarget target_;
  std::unique_ptr<llvm::TargetMachine> machine_;
  std::unique_ptr<llvm::TargetMachine> fastMachine_; ///< for large modules
  std::mutex mutex_;                                 ///< guards the target machines
  std::unique_ptr<llvm::orc::LLJIT> jit_;
};

} // namespace tsl::compiler::cpu
