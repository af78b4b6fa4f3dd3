// eval/OpArgs.h — turning TSL call arguments into an operation's operands and attributes.
//
// Each row of the operation table has a call form (runtime/CallForms.h): which arguments
// are tensor operands and which are attributes (positional like the shape of `reshape`,
// or keywords like `:axis`). readOpCall() applies it, for eager calls and for calls being
// lowered to IR alike. Attribute values are read leniently where the language invites it:
// a shape may be an integer, a vector of integers, or an integer tensor literal.
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
  /// An attribute the row lets be traced was given a traced value: `attrs` is not filled
  /// in, and the call is the row's traced form's to lower (eval/BuiltinsTensor.cpp).
  bool traced = false;
};

/// Reads a call of row `self` written as `form` (the row's own call form or an alias's):
/// its operands and attributes. Type and value errors name the builtin and the argument.
OpCall readOpCall(const CallContext& cx, OpKind self, const CallForm& form, Args args);

/// Reads a call of the TSL name `name` (a row's or an alias's); nullopt if no operation
/// is called by that name.
std::optional<OpCall> parseOpCall(const CallContext& cx, std::string_view name, Args args);

/// How a row whose call form lets an attribute be traced (ArgSpec::traced) lowers a call
/// given a traced value there, with other primitives (eval/BuiltinsTensor.cpp); nullptr
/// for any other row. A test checks every such row has one.
using TracedForm = Value (*)(const CallContext& cx, Args args);
TracedForm tracedForm(OpKind kind);

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
