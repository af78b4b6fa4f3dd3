// eval/Convert.h — between code (Syntax) and data (Value).
//
// Quoting turns syntax into values; a macro's result turns back into syntax. Spans travel
// both ways: lists, vectors, maps and symbols remember where they were read, and a form a
// macro built from scratch takes the span of the macro call. Values that have no syntax
// (tensors of a fixed dtype, functions) ride along as Embedded nodes.
#pragma once

#include "eval/Value.h"
#include "parser/Syntax.h"

#include <optional>

namespace tsl {

/// The value a quoted form denotes. Numeric vector literals become tensors.
Value syntaxToValue(const SyntaxPtr& form);

/// The syntax of a value; nodes without a span of their own get `fallback`.
SyntaxPtr valueToSyntax(const Value& value, const Span& fallback);

/// If `form` is a tensor literal (a vector whose elements are all number literals, or
/// recursively such vectors, of one length), the tensor: i64 if every number is an
/// integer, else f32. nullopt if it is an ordinary vector. A value error at the offending
/// row if the nesting is ragged.
std::optional<Tensor> tensorLiteral(const Syntax& form);

/// A Value carried inside Syntax.
class EmbeddedValueHolder final : public EmbeddedValue {
public:
  explicit EmbeddedValueHolder(Value value) : value_(std::move(value)) {}
  const Value& value() const { return value_; }
  std::string print() const override;

private:
  Value value_;
};

} // namespace tsl
