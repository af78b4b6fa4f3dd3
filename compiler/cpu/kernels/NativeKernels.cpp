// compiler/cpu/kernels/NativeKernels.cpp — the kernels of Kernels.h compiled into the
// compiler, for JIT-compiled code to call.
//
// Compiled with the flags of the bitcode library that matter for results (no FP
// contraction, wrapping integers) and at -O3 for this machine (compiler/CMakeLists.txt),
// so a kernel computes the same bits whether an ahead-of-time library inlines it from
// the bitcode or JIT code calls it here. Each kernel registers its address under its name
// (kernelSymbols), which the JIT defines as absolute symbols.
#include "compiler/cpu/kernels/NativeKernels.h"

#include <vector>

namespace tsl::compiler::cpu {

namespace {

std::vector<std::pair<const char*, void*>>& registry() {
  static std::vector<std::pair<const char*, void*>> symbols;
  return symbols;
}

struct Registration {
  Registration(const char* name, void* address) { registry().emplace_back(name, address); }
};

} // namespace

const std::vector<std::pair<const char*, void*>>& kernelSymbols() { return registry(); }

} // namespace tsl::compiler::cpu

#define TSL_KERNEL_EXPORT(name)                                                                    \
  static const tsl::compiler::cpu::Registration name##_registered{#name, reinterpret_cast<void*>(&name)};
#include "compiler/cpu/kernels/Kernels.h"
