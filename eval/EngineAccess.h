// eval/EngineAccess.h — the evaluator behind a tsl::Engine, for TSL's own test runners
// (tests/lang): they attach expectations to individual forms, which the public API has
// no reason to offer. Nothing outside tests/ includes this.
#pragma once

#include "eval/Evaluator.h"
#include "tsl/tsl.h"

namespace tsl {

struct EngineAccess {
  static Evaluator& of(Engine& engine) { return *engine.impl_; }
};

} // namespace tsl
