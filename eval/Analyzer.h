// eval/Analyzer.h — core forms to executable nodes.
//
// The analyzer resolves every name once: a local becomes a frame slot, a variable of an
// enclosing function a capture (closures copy what they capture when created), anything
// else a global Var. It checks before anything runs that `recur` stands in tail position
// of a loop or fn and passes one value per binding. Its input is the output of the
// Expander; malformed core forms have already been reported there.
#pragma once

#include "eval/Nodes.h"

namespace tsl {

class Evaluator;

/// A compiled top-level form and the number of slots its frame needs.
struct TopLevelCode {
  NodePtr node;
  int frameSize = 0;
};

/// Compiles one expanded top-level form whose global names resolve in `ns`.
TopLevelCode analyzeTopLevel(Evaluator& evaluator, Namespace& ns, const SyntaxPtr& coreForm);

} // namespace tsl
