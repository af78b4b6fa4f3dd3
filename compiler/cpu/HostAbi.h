// compiler/cpu/HostAbi.h — the engine's side of compiler/cpu/abi/tsl_abi.h, for the JIT.
//
// JIT-compiled code calls the host functions of tsl_abi.h; here they are the engine's:
// tsl_parallel_for runs chunks on the runtime's thread pool (so compiled and eager work
// share one pool and never oversubscribe the cores), tsl_run_kernel runs an operation's
// eager kernel, tapes are vectors. They are registered with the JIT as absolute symbols
// under their ABI names (hostSymbols), never looked up in the process. Each call of a
// compiled function gets a HostState through tsl_context::host.
#pragma once

#include "compiler/cpu/Codegen.h"
#include "compiler/cpu/abi/tsl_abi.h"

#include <optional>
#include <vector>

namespace tsl::compiler::cpu {

/// What one call of a compiled function keeps on the host's side.
struct HostState {
  const Program* program = nullptr;
  std::optional<Error> error;                           ///< a kernel's error (TSL_ERROR_KERNEL)
  std::vector<std::vector<std::vector<char>>> tapes;    ///< tape_new's stacks, by handle
};

/// Marks a function that calls JIT-compiled code through a pointer: UBSan's function-type
/// check reads a signature from the bytes before the callee's entry, which generated code
/// does not have.
#if defined(__clang__)
#define TSL_CALLS_GENERATED_CODE __attribute__((no_sanitize("function")))
#else
#define TSL_CALLS_GENERATED_CODE
#endif

/// Calls a generated function (compiler/cpu/abi/tsl_abi.h's convention).
TSL_CALLS_GENERATED_CODE inline int32_t callGenerated(int32_t (*entry)(void* const*, void*), void* const* buffers,
                                                      tsl_context* context) {
  return entry(buffers, context);
}

/// The host functions, by their ABI names.
const std::vector<std::pair<const char*, void*>>& hostSymbols();

/// The error a compiled function's status stands for (never returns for TSL_OK): the
/// check's message with its details at the check's span, the kernel's own error,
/// `runtime error: interrupted`, or out of memory.
[[noreturn]] void raiseStatus(int32_t status, const tsl_context& context, HostState& host, const Program& program);

/// A check's message with its details filled in.
std::string checkMessage(const CheckSite& site, const int64_t* detail);

} // namespace tsl::compiler::cpu
