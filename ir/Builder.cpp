// ir/Builder.cpp — building operations.
#include "ir/Builder.h"

#include "ir/TypeRules.h"

namespace tsl::ir {

Value* Builder::primitive(OpKind kind, OpAttrs attrs, std::vector<Value*> operands, const Span& span) {
  std::vector<Type> types;
  for (const Value* v : operands) types.push_back(v->type());
  Type result;
  try {
    result = inferPrimitiveType(kind, attrs, types);
  } catch (Error& e) {
    e.setSpanIfUnknown(span);
    throw;
  }
  auto op = std::make_unique<Operation>(OpCode::of(kind), span);
  op->operands() = std::move(operands);
  op->setAttrs(std::move(attrs));
  Value* out = op->addResult(std::move(result));
  block_->append(std::move(op));
  return out;
}

Value* Builder::constant(const Tensor& value, const Span& span) {
  auto op = std::make_unique<Operation>(OpCode::of(Structural::Constant), span);
  const Tensor strong = value.isScalar() ? value.strengthened() : value;
  op->setConstant(strong);
  Value* out = op->addResult(Type::of(strong));
  block_->append(std::move(op));
  return out;
}

Operation* Builder::create(OpCode code, std::vector<Value*> operands, const std::vector<Type>& resultTypes,
                           const Span& span) {
  auto op = std::make_unique<Operation>(code, span);
  op->operands() = std::move(operands);
  for (const Type& t : resultTypes) op->addResult(t);
  return block_->append(std::move(op));
}

Operation* Builder::terminate(Structural kind, std::vector<Value*> operands, const Span& span) {
  return create(OpCode::of(kind), std::move(operands), {}, span);
}

} // namespace tsl::ir
