// compiler/passes/Passes.h — the passes compiler/ adds to the registry (registerPasses()).
#pragma once

#include "ir/Pass.h"

#include <memory>
#include <string>
#include <vector>

namespace tsl::compiler {

std::unique_ptr<ir::Pass> createFusePass();       ///< fuse: loops, reductions, epilogues
std::unique_ptr<ir::Pass> createExpandEinsumPass(); ///< expand-einsum: einsum as matmuls
std::unique_ptr<ir::Pass> createPlanMemoryPass(); ///< plan-memory: buffers and lifetimes
std::unique_ptr<ir::Pass> createLayoutInsertPass();    ///< layout-insert: demanded layouts
std::unique_ptr<ir::Pass> createLayoutAssignPass();    ///< layout-assign: agnostic groups
std::unique_ptr<ir::Pass> createLayoutEliminatePass(); ///< layout-eliminate: conversions
std::unique_ptr<ir::Pass> createBucketAllReducePass(); ///< bucket-all-reduce: overlapped gradient all-reduces

/// ir::optimizationPasses() with bucket-all-reduce after inlining: what every backend's
/// pipeline begins with.
const std::vector<std::string>& optimizationPasses();

/// The layout passes, in pipeline order.
const std::vector<std::string>& layoutPasses();

} // namespace tsl::compiler
