// ir/TypeRules.h — the op table's type rules applied to IR types.
//
// The rule of every primitive is the runtime's (runtime/Ops.h): one definition for eager
// execution and the IR. IR types may have symbolic dimensions; the rule runs with each
// symbol standing for a distinct large prime size, and sizes in the result that are
// those primes (or multiples of one, after a reshape) are named again.
#pragma once

#include "ir/Type.h"

#include <span>

namespace tsl::ir {

/// The result type of a primitive applied to operands of these types; the rule's shape,
/// type or value error otherwise (with symbol names in its message).
Type inferPrimitiveType(OpKind kind, const OpAttrs& attrs, std::span<const Type> operands);

} // namespace tsl::ir
