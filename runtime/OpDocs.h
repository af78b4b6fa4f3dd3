// runtime/OpDocs.h — the operation table's documentation column: each primitive's call
// form and what it computes, for people (the REPL's `:doc`, the generated reference of
// primitives). Kept beside the table, keyed by OpKind; a test checks every operation has
// its entry, so the reference cannot miss one.
#pragma once

#include "runtime/Ops.h"

namespace tsl {

struct OpDoc {
  const char* form; ///< "(sum x :axis a :keepdims k)"
  const char* text; ///< what it computes
};

/// The documentation of `kind`; nullptr for an operation without it (a test forbids that).
const OpDoc* opDoc(OpKind kind);

} // namespace tsl
