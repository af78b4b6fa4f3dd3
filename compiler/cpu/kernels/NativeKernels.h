// compiler/cpu/kernels/NativeKernels.h — the addresses of the kernels compiled into the
// compiler (NativeKernels.cpp), by name, for the JIT to define.
#pragma once

#include <utility>
#include <vector>

namespace tsl::compiler::cpu {

/// Every tsl_k_ kernel of Kernels.h: its name and its address in this process.
const std::vector<std::pair<const char*, void*>>& kernelSymbols();

} // namespace tsl::compiler::cpu
