// compiler/cpu/Scalars.cpp — one element: storage and compute types, conversions, and
// the arithmetic of every elementwise operation.
//
// Elements are kept in their storage types (bool as i8, f16 and bf16 as their 16 bits)
// and computed in their compute types (halves in float, bool as i1), exactly as the
// runtime's kernels do: operands are converted to the operation's operand type (the
// runtime's own rule, operandType), computed with the operation's functor (the kernel
// library's tsl_bin_/tsl_un_ functions, compiled from the same source), and rounded once
// into the result's storage type.
#include "compiler/cpu/FunctionCodegen.h"

#include "runtime/Dispatch.h"

namespace tsl::compiler::cpu {

namespace {

/// The kernel library's name of a compute type.
const char* computeTag(DType dtype) {
  switch (dtype) {
  case DType::Bool: return "b8";
  case DType::I32: return "i32";
  case DType::I64: return "i64";
  case DType::F16:
  case DType::BF16:
  case DType::F32: return "f32";
  case DType::F64: return "f64";
  }
  return "?";
}

/// The kernel library's name of a storage type.
const char* storageTag(DType dtype) {
  switch (dtype) {
  case DType::Bool: return "b8";
  case DType::I32: return "i32";
  case DType::I64: return "i64";
  case DType::F16: return "f16";
  case DType::BF16: return "bf16";
  case DType::F32: return "f32";
  case DType::F64: return "f64";
  }
  return "?";
}

/// Calls a library function, passing bool (i8 here) as the i1 it takes and returning
/// what it returns as is.
llvm::Value* callLibrary(llvm::IRBuilder<>& b, llvm::Function* fn, std::vector<llvm::Value*> args) {
  llvm::FunctionType* type = fn->getFunctionType();
  for (size_t i = 0; i < args.size(); ++i) {
    llvm::Type* want = type->getParamType(static_cast<unsigned>(i));
    if (want->isIntegerTy(1) && !args[i]->getType()->isIntegerTy(1))
      args[i] = b.CreateICmpNE(args[i], llvm::ConstantInt::get(args[i]->getType(), 0));
  }
  return b.CreateCall(fn, args);
}

} // namespace

llvm::Type* FunctionCodegen::storageType(DType dtype) {
  llvm::LLVMContext& c = context();
  switch (dtype) {
  case DType::Bool: return llvm::Type::getInt8Ty(c);
  case DType::I32: return llvm::Type::getInt32Ty(c);
  case DType::I64: return llvm::Type::getInt64Ty(c);
  case DType::F16:
  case DType::BF16: return llvm::Type::getInt16Ty(c);
  case DType::F32: return llvm::Type::getFloatTy(c);
  case DType::F64: return llvm::Type::getDoubleTy(c);
  }
  return nullptr;
}

llvm::Type* FunctionCodegen::computeType(DType dtype) {
  llvm::LLVMContext& c = context();
  switch (dtype) {
  case DType::Bool: return llvm::Type::getInt1Ty(c);
  case DType::F16:
  case DType::BF16: return llvm::Type::getFloatTy(c);
  default: return storageType(dtype);
  }
}

llvm::Value* FunctionCodegen::toCompute(llvm::IRBuilder<>& b, llvm::Value* v, DType dtype) {
  switch (dtype) {
  case DType::Bool: return v->getType()->isIntegerTy(1) ? v : b.CreateICmpNE(v, llvm::ConstantInt::get(v->getType(), 0));
  case DType::F16: return b.CreateFPExt(b.CreateBitCast(v, b.getHalfTy()), b.getFloatTy());
  case DType::BF16: return callLibrary(b, library().get("tsl_cvt_bf16_f32"), {v});
  default: return v;
  }
}

llvm::Value* FunctionCodegen::fromCompute(llvm::IRBuilder<>& b, llvm::Value* v, DType dtype) {
  switch (dtype) {
  case DType::Bool: return v->getType()->isIntegerTy(1) ? b.CreateZExt(v, b.getInt8Ty()) : v;
  case DType::F16: return b.CreateBitCast(b.CreateFPTrunc(v, b.getHalfTy()), b.getInt16Ty());
  case DType::BF16: return callLibrary(b, library().get("tsl_cvt_f32_bf16"), {v});
  default: return v;
  }
}

llvm::Value* FunctionCodegen::convert(llvm::IRBuilder<>& b, llvm::Value* v, DType from, DType to) {
  if (from == to) return v;
  // f16 <-> f32 are exact (widening) or rounded to nearest even, as the runtime rounds.
  if (from == DType::F16 && to == DType::F32) return toCompute(b, v, from);
  if (from == DType::F32 && to == DType::F16) return fromCompute(b, v, to);
  llvm::Value* out = callLibrary(b, library().get(cat("tsl_cvt_", storageTag(from), "_", storageTag(to))), {v});
  return to == DType::Bool ? b.CreateZExt(out, b.getInt8Ty()) : out;
}

llvm::Constant* FunctionCodegen::constantScalar(const Tensor& value) {
  const Tensor t = value.weak() ? value.strengthened() : value;
  llvm::Type* type = storageType(t.dtype());
  switch (t.dtype()) {
  case DType::F32: return llvm::ConstantFP::get(type, static_cast<double>(t.scalarValue<float>()));
  case DType::F64: return llvm::ConstantFP::get(type, t.scalarValue<double>());
  case DType::F16:
  case DType::BF16: return llvm::ConstantInt::get(type, t.scalarValue<uint16_t>());
  case DType::Bool: return llvm::ConstantInt::get(type, t.scalarValue<bool>() ? 1 : 0);
  case DType::I32: return llvm::ConstantInt::get(type, static_cast<uint64_t>(static_cast<int64_t>(t.scalarValue<int32_t>())), true);
  case DType::I64: return llvm::ConstantInt::get(type, static_cast<uint64_t>(t.scalarValue<int64_t>()), true);
  }
  return nullptr;
}

llvm::Value* FunctionCodegen::elementwise(llvm::IRBuilder<>& b, const ir::Operation& op,
                                          const std::vector<llvm::Value*>& operands) {
  const OpKind kind = op.code().kind;
  const DType result = op.result()->type().dtype;
  auto dtypeOf = [&](size_t i) { return op.operand(i)->type().dtype; };
  if (const auto binary = binaryOpOf(kind)) {
    const DType s = operandType(*binary, {dtypeOf(0), false}, {dtypeOf(1), false}).dtype;
    llvm::Value* x = toCompute(b, convert(b, operands[0], dtypeOf(0), s), s);
    llvm::Value* y = toCompute(b, convert(b, operands[1], dtypeOf(1), s), s);
    llvm::Value* r = callLibrary(b, library().get(cat("tsl_bin_", opIdentifier(kind), "_", computeTag(s))), {x, y});
    if (opInfo(kind).has(kBoolResult)) return b.CreateZExt(r, b.getInt8Ty());
    return convert(b, fromCompute(b, r, s), s, result);
  }
  if (const auto unary = unaryOpOf(kind)) {
    const DType s = operandType(*unary, {dtypeOf(0), false}).dtype;
    llvm::Value* x = toCompute(b, convert(b, operands[0], dtypeOf(0), s), s);
    llvm::Value* r = callLibrary(b, library().get(cat("tsl_un_", opIdentifier(kind), "_", computeTag(s))), {x});
    if (opInfo(kind).has(kBoolResult)) return b.CreateZExt(r, b.getInt8Ty());
    return convert(b, fromCompute(b, r, s), s, result);
  }
  switch (kind) {
  case OpKind::Where: {
    llvm::Value* c = toCompute(b, convert(b, operands[0], dtypeOf(0), DType::Bool), DType::Bool);
    return b.CreateSelect(c, convert(b, operands[1], dtypeOf(1), result), convert(b, operands[2], dtypeOf(2), result));
  }
  case OpKind::Clip: {
    // As the runtime: operands in the result's type, maximum then minimum in its compute type.
    llvm::Value* x = toCompute(b, convert(b, operands[0], dtypeOf(0), result), result);
    llvm::Value* lo = toCompute(b, convert(b, operands[1], dtypeOf(1), result), result);
    llvm::Value* hi = toCompute(b, convert(b, operands[2], dtypeOf(2), result), result);
    const char* tag = computeTag(result);
    llvm::Value* raised = callLibrary(b, library().get(cat("tsl_bin_Maximum_", tag)), {x, lo});
    return fromCompute(b, callLibrary(b, library().get(cat("tsl_bin_Minimum_", tag)), {raised, hi}), result);
  }
  case OpKind::Cast: return convert(b, operands[0], dtypeOf(0), result);
  case OpKind::StopGradient: return operands[0];
  default: fail(ErrorKind::Internal, "cpu: ", opInfo(kind).name, " is not an elementwise operation");
  }
}

} // namespace tsl::compiler::cpu
