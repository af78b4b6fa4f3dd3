// compiler/interp/InterpBackend.h — the :interp target.
//
// Runs the optimised IR operation by operation on the runtime's eager kernels (the
// reference every other backend agrees with). Its pipeline is the generic optimisation
// and the memory plan, whose lifetimes it follows; it does not fuse.
#pragma once

#include "compiler/Backend.h"

namespace tsl::compiler {

std::unique_ptr<Backend> makeInterpBackend();
/// The :interp target: how to make it and what it adds.
BackendInfo interpBackendInfo();

} // namespace tsl::compiler
