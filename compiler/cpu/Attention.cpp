// compiler/cpu/Attention.cpp — attention on :cpu: the kernel library's blocked kernels.
//
// The geometry (sizes, causality, the batch strides of q, k, v and the mask) is known when
// compiling: it is passed to tsl_k_attention_<type> as an array of constants, with the
// operands' buffers (contiguous, row-major) and the mode the operation and its part name.
// Work items — tiles of queries, or of keys for dk and dv — run in parallel chunks; each
// chunk takes scratch linear in d and dv from the workspace, and a chunk that gets none
// sets a flag that raises a runtime error once the loop is done.
#include "compiler/cpu/Attention.h"

#include "runtime/Attention.h"

namespace tsl::compiler::cpu {

namespace {

Shape shapeOf(const ir::Type& t) {
  const std::vector<int64_t> dims = dimsOf(t);
  return Shape(std::span<const int64_t>(dims));
}

flash::Mode modeOf(const ir::Operation& op) {
  const int64_t part = std::get<AttentionAttrs>(op.attrs()).part;
  switch (op.code().kind) {
  case OpKind::Attention: return part == 0 ? flash::kForward : flash::kLse;
  case OpKind::AttentionGrad: return part == 0 ? flash::kGradQ : part == 1 ? flash::kGradK : flash::kGradV;
  default: return flash::kJvp;
  }
}

} // namespace

bool emitAttention(FunctionCodegen& g, const ir::Operation& op, llvm::Value* out) {
  const DType dtype = op.result()->type().dtype;
  if (dtype != DType::F32 && dtype != DType::F64) return false;
  const size_t primaries = op.code().is(OpKind::Attention) ? 3 : 6;
  for (size_t i = 0; i < primaries; ++i)
    if (op.operand(i)->type().dtype != dtype) return false;
  const bool masked = op.operands().size() > primaries;
  std::vector<TensorType> types;
  std::vector<Shape> shapes;
  for (const ir::Value* v : op.operands()) {
    shapes.push_back(shapeOf(v->type()));
    types.push_back({v->type().dtype, false, shapes.back()});
  }
  const AttentionShape s = attentionShape(types[0], types[1], types[2], masked ? &types.back() : nullptr, "attention");
  std::vector<int64_t> strides[3];
  for (size_t i = 0; i < 3; ++i) strides[i] = contiguousStrides(dimsOf(op.operand(i)->type()));
  std::vector<int64_t> maskStrides;
  if (masked) {
    Shape full = s.batch;
    full.push(s.lq);
    full.push(s.lk);
    maskStrides = broadcastStrides(shapes.back(), full);
  }
  const flash::Geometry geometry =
      attentionGeometry(s, std::get<AttentionAttrs>(op.attrs()).causal, {&shapes[0], &shapes[1], &shapes[2]},
                        {strides[0].data(), strides[1].data(), strides[2].data()}, masked ? maskStrides.data() : nullptr);
  const flash::Mode mode = modeOf(op);
  const int64_t items = geometry.items(mode);
  if (items == 0 || product(dimsOf(op.result()->type())) == 0) return true;

  llvm::IRBuilder<>& b = g.builder();
  int64_t words[flash::kGeometryWords];
  flash::pack(geometry, words);
  std::vector<llvm::Value*> constants;
  for (int64_t w : words) constants.push_back(g.i64(w));
  llvm::Value* geometryArray = g.array(constants, b.getInt64Ty());
  std::vector<llvm::Value*> pointers;
  for (const ir::Value* v : op.operands()) pointers.push_back(g.pointer(v));
  llvm::Value* inputs = g.array(pointers, llvm::PointerType::getUnqual(g.context()));
  llvm::AllocaInst* failed = g.slot(b.getInt32Ty(), "attention.failed");
  b.CreateStore(b.getInt32(0), failed);

  llvm::Function* kernel = g.library().get(cat("tsl_k_attention_", kernelTag(dtype)));
  const bool byKeys = mode == flash::kGradK || mode == flash::kGradV;
  const int64_t work = flash::kTile * std::max<int64_t>(1, (byKeys ? geometry.lq : geometry.lk) * (geometry.d + geometry.dv));
  g.parallel(items, std::max<int64_t>(1, (int64_t(1) << 18) / work), {inputs, out, geometryArray, failed},
             [&](llvm::IRBuilder<>& ib, llvm::Value* begin, llvm::Value* end, const std::vector<llvm::Value*>& got) {
               ib.CreateCall(kernel, {got[0], got[1], got[2], ib.getInt32(mode), begin, end, got[3]});
             });
  llvm::Value* bad = b.CreateICmpNE(b.CreateLoad(b.getInt32Ty(), failed), b.getInt32(0));
  g.check(bad, g.checkSite(ErrorKind::Runtime, "attention: no memory for the kernel's scratch", op.span()), g.i64(0),
          g.i64(0));
  return true;
}

} // namespace tsl::compiler::cpu
