// compiler/cpu/Codegen.h — IR functions to LLVM IR (internal to compiler/cpu).
//
// Every IR function becomes an LLVM function with the calling convention of
// compiler/cpu/abi/tsl_abi.h:
//
//   i32 @name(ptr %buffers, ptr %context)   ; buffers: inputs, outputs, arena
//
// Values live where the function's memory plan says (ir/MemoryPlan.h): rank-0 values are
// LLVM registers in their storage type (bool i8, f16 and bf16 as i16), tensors are
// pointers into the caller's buffers, the arena or constant data. Elementwise work —
// single operations and fused loop nests — is generated as loops over the concrete
// shapes, outlined into functions that tsl_parallel_for runs over chunks of the
// outermost loop; reductions the same way. Softmax, layer-norm, matmul and the like call
// functions of the kernel library (compiler/cpu/kernels/Library.cpp), which is linked
// into the module and inlined there, so they too are specialised to the shapes. An
// operation without a native lowering calls its eager kernel through tsl_run_kernel
// (listed by --print-fallbacks; JIT only).
#pragma once

#include "compiler/Backend.h"
#include "ir/IR.h"
#include "ir/MemoryPlan.h"

#include <llvm/IR/Module.h>

#include <string>
#include <vector>

namespace tsl::compiler::cpu {

/// A check compiled into the program (an index in range, a label in range, an assert):
/// what to report when it fails. `message` may name the check's two details as {0}, {1}.
struct CheckSite {
  ErrorKind kind;
  std::string message;
  Span span;
  bool literal = false; ///< the message has no {0}/{1} to fill (a raise's own text)
};

/// An operation run on its eager kernel through tsl_run_kernel.
struct KernelSite {
  OpKind kind;
  OpAttrs attrs;
  std::vector<ir::Type> inputs;
  ir::Type output;
  Span span;
};

/// What the generated code needs from its host beyond the LLVM module.
struct Program {
  std::string entry;                  ///< the entry function's symbol
  std::vector<CheckSite> checks;      ///< indexed by tsl_context::site
  std::vector<KernelSite> kernels;    ///< indexed by tsl_run_kernel's `index`
  int64_t frameBytes = 0;             ///< the arena the entry (and what it calls) needs
  std::vector<std::string> fallbacks; ///< "file:line:col: op types (why)", for --print-fallbacks
};

struct CodegenOptions {
  std::string symbol;     ///< the entry function's symbol (others are named after it)
  bool aot = false;       ///< ahead of time: an operation without a native lowering is an error
  std::string cpuFeatures; ///< the target's LLVM features ("+avx2,+fma,..."): kernels' shapes
};

/// How :cpu runs operation `kind` (the backend's lowering table; a test checks it has an
/// entry for every operation).
Lowering cpuLowering(OpKind kind);

/// Generates `entry` (and the functions it calls) of `module` into `out`, with the kernel
/// library linked in. Every function of the module must have a memory plan, and every
/// shape must be concrete (a value error otherwise).
Program generate(const ir::Module& module, const ir::Function& entry, llvm::Module& out, const CodegenOptions& options);

} // namespace tsl::compiler::cpu
