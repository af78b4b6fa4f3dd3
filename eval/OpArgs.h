// eval/OpArgs.h — turning TSL call arguments into an operation's operands and attributes.
//
// Each primitive of the op table has a calling convention in TSL: which arguments are
// tensor operands and which are attributes (positional like the shape of `reshape`, or
// keywords like `:axis`). parseOpCall() applies that convention once, for eager calls
// now and for anything else that needs to read a primitive call (the IR lowering).
// Attribute values are read leniently where the language invites it: a shape may be an
// integer, a vector of integers, or an integer tensor literal such as [2 3].
#pragma once

#include "eval/Builtins.h"
#include "runtime/Ops.h"

#include <optional>
#include <string>
#include <vector>

namespace tsl::builtins {

/// An operation call read from TSL arguments: the operation, the arguments that are its
/// tensor operands (in order) and its attributes.
struct OpCall {
  OpKind kind;
  std::vector<const Value*> operands;
  OpAttrs attrs;
  /// Operands the parser made (a tensor's slices, for concat and stack); `operands` may
  /// point into it (a vector keeps its elements' addresses when the call is moved).
  std::vector<Value> owned{};
};

/// Reads a call of the builtin `name` (an op-table primitive or an alias such as
/// `zeros`, `ones-like`, `@`, `flatten`) with `args`. Type and value errors name the
/// builtin and the argument. nullopt if `name` is not a primitive call.
std::optional<OpCall> parseOpCall(const CallContext& cx, std::string_view name, Args args);

/// The names parseOpCall understands (the builtins registered from it).
const std::vector<std::string>& opCallNames();

// ---- Attribute readers, shared with other builtins ----

/// An integer from a rank-0 integer tensor.
int64_t readInt(const CallContext& cx, const Value& v, std::string_view what);
/// A number (int or float), as Number.
Number readNumber(const CallContext& cx, const Value& v, std::string_view what);
/// Integers from an integer, a vector of integers or an integer tensor of rank <= 1.
std::vector<int64_t> readInts(const CallContext& cx, const Value& v, std::string_view what);
/// A dtype keyword (:f32).
DType readDType(const CallContext& cx, const Value& v);
/// A boolean (true/false/nil).
bool readBool(const CallContext& cx, const Value& v, std::string_view what);

} // namespace tsl::builtins
