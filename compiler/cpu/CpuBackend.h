// compiler/cpu/CpuBackend.h — the :cpu target: LLVM native code, by JIT and ahead of time.
//
// Its pipeline is the optimisation passes, then fuse and plan-memory. compile() generates
// LLVM IR (compiler/cpu/Codegen.h), optimises it for this machine and adds it to the
// engine's JIT; emit() makes the same code as LLVM IR text, assembly, an object file, a
// shared library or the library's C header (compiler/cpu/Aot.h).
#pragma once

#include "compiler/Backend.h"

namespace tsl::compiler {

std::unique_ptr<Backend> makeCpuBackend();
/// The :cpu target: how to make it and what it adds.
BackendInfo cpuBackendInfo();

} // namespace tsl::compiler
