// ir/Builder.h — creating IR operations with their types inferred.
//
// Primitives get their result type from the op table's rule (ir/TypeRules.h), so a shape
// or dtype error surfaces while building, at the span of the source that asked for it.
#pragma once

#include "ir/IR.h"

namespace tsl::ir {

class Builder {
public:
  /// Appends to the end of `block`.
  explicit Builder(Block& block) : block_(&block) {}

  Block& block() const { return *block_; }
  void setBlock(Block& block) { block_ = &block; }

  /// A primitive; its result type comes from the table's rule (errors get `span`).
  Value* primitive(OpKind kind, OpAttrs attrs, std::vector<Value*> operands, const Span& span);
  Value* constant(const Tensor& value, const Span& span);
  /// An operation with explicit result types (structural operations).
  Operation* create(OpCode code, std::vector<Value*> operands, const std::vector<Type>& resultTypes, const Span& span);
  /// A terminator (yield, condition, return).
  Operation* terminate(Structural kind, std::vector<Value*> operands, const Span& span);

private:
  Block* block_;
};

} // namespace tsl::ir
