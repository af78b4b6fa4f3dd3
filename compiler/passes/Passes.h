// compiler/passes/Passes.h — the passes compiler/ adds to the registry (registerPasses()).
#pragma once

#include "ir/Pass.h"

#include <memory>

namespace tsl::compiler {

std::unique_ptr<ir::Pass> createFusePass();       ///< fuse: loops, reductions, epilogues
std::unique_ptr<ir::Pass> createPlanMemoryPass(); ///< plan-memory: buffers and lifetimes

} // namespace tsl::compiler
