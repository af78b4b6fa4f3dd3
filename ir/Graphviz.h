// ir/Graphviz.h — an IR function as a Graphviz DOT graph (`(graph f x)`, `:graph`).
//
// Parameters are ellipses, operations boxes labelled with their mnemonic, attributes and
// result type, constants small notes; an edge runs from each value to each use, labelled
// with the operand position when an operation has several. The regions of `if` and
// `while` are clusters inside which their operations sit.
#pragma once

#include "ir/IR.h"

#include <string>

namespace tsl::ir {

std::string printDot(const Function& function);

} // namespace tsl::ir
