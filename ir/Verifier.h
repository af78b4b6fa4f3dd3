// ir/Verifier.h — checking that IR is well formed.
//
// Every value is defined before use in its block or an enclosing one; every block ends in
// the terminator its region calls for, with values of the right types; every primitive's
// result type is what the op table's rule gives for its operands; constants, calls, ifs
// and whiles agree with their types. A failure is an error naming the operation and
// pointing at its span: when IR comes from a TSL program, that is the user's source.
#pragma once

#include "ir/IR.h"

namespace tsl::ir {

/// Throws an Error (kind internal: broken IR is a compiler bug — or, for text read with
/// parseModule, a syntax error) at the first problem.
void verify(const Module& module, ErrorKind kind = ErrorKind::Internal);
void verify(const Function& function, const Module* module, ErrorKind kind = ErrorKind::Internal);

} // namespace tsl::ir
