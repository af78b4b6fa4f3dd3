// compiler/cpu/VectorRows.cpp — f32 softmax and layer-norm over contiguous rows,
// generated as LLVM IR with explicit vectors.
//
// Each computes what runtime/RowKernels.h computes — the same operations in the same
// order, so the same bits — written out here because neither compiler vectorises the
// C++ form of these loops well enough (GCC spills softmax's partial sums and the
// exponential's constants and keeps its maximum loop scalar; clang keeps layer-norm's
// passes scalar); LLVM given vectors keeps everything in registers.
// Their sums are runtime/Summation.h's: blocks of kSumBlock (256) elements, each in 16
// partial sums (lane k takes elements k, k + 16, ...; a short last step only the lanes it
// reaches), the 16 added pairwise (k + 8 into k, then 4, 2, 1), and the blocks' sums
// pushed through the library's own Cascade (tsl_cascade_push_f32 / _total_f32).
//  - softmax: the maximum; then e = fastExp(x - max) (FastMath.h's polynomial, operation
//    for operation) stored and summed; then the row scaled by 1 / sum. A row holding a
//    NaN or an infinity (found in the first pass: x - x is then NaN) is handed to the
//    library's kernel, which handles it.
//  - layer-norm: the mean from one sum, the variance from a sum of squared deviations,
//    then (x - mean) · 1 / sqrt(variance + eps).
#include "compiler/cpu/VectorRows.h"

#include "compiler/cpu/Gemm.h"
#include "runtime/RowKernels.h"
#include "runtime/Summation.h"

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/Module.h>

#include <limits>

namespace tsl::compiler::cpu {

namespace {

/// FastMath.h's fastExp on a vector of floats, operation for operation.
llvm::Value* fastExp(llvm::IRBuilder<>& b, llvm::Module& m, llvm::Value* x) {
  llvm::Type* v = x->getType();
  auto* vi = llvm::VectorType::getInteger(llvm::cast<llvm::VectorType>(v));
  auto c = [&](float f) { return llvm::ConstantFP::get(v, f); };
  auto ci = [&](int32_t i) { return llvm::ConstantInt::get(vi, static_cast<uint64_t>(static_cast<int64_t>(i)), true); };
  llvm::Function* fma = llvm::Intrinsic::getDeclaration(&m, llvm::Intrinsic::fma, {v});
  llvm::Function* nearbyint = llvm::Intrinsic::getDeclaration(&m, llvm::Intrinsic::nearbyint, {v});
  auto f = [&](llvm::Value* a, llvm::Value* p, llvm::Value* q) { return b.CreateCall(fma, {a, p, q}); };
  // atMost(atLeast(x, -104), 89): x > lo ? x : lo, then x < hi ? x : hi.
  llvm::Value* lo = b.CreateSelect(b.CreateFCmpOGT(x, c(-104.0f)), x, c(-104.0f));
  llvm::Value* clamped = b.CreateSelect(b.CreateFCmpOLT(lo, c(89.0f)), lo, c(89.0f));
  llvm::Value* n = b.CreateCall(nearbyint, {b.CreateFMul(clamped, c(1.44269504088896341f))});
  llvm::Value* r = f(n, c(-0.693359375f), clamped);
  r = f(n, c(2.12194440e-4f), r);
  llvm::Value* p = c(1.9875691500e-4f);
  for (float k : {1.3981999507e-3f, 8.3334519073e-3f, 4.1665795894e-2f, 1.6666665459e-1f, 5.0000001201e-1f})
    p = f(p, r, c(k));
  llvm::Value* e = b.CreateFAdd(f(b.CreateFMul(p, r), r, r), c(1.0f));
  llvm::Value* k = b.CreateFPToSI(n, vi);
  llvm::Value* half = b.CreateSDiv(k, ci(2));
  auto pow2 = [&](llvm::Value* e2) { return b.CreateBitCast(b.CreateShl(b.CreateAdd(e2, ci(127)), ci(23)), v); };
  llvm::Value* scaled = b.CreateFMul(b.CreateFMul(e, pow2(half)), pow2(b.CreateSub(k, half)));
  llvm::Value* result = b.CreateSelect(b.CreateFCmpOGT(x, c(88.7228393f)), c(std::numeric_limits<float>::infinity()), scaled);
  result = b.CreateSelect(b.CreateFCmpOLT(x, c(-103.972076f)), c(0.0f), result);
  return b.CreateSelect(b.CreateFCmpUNE(x, x), x, result);
}

/// A counted loop `for (i = from; i + step <= to; i += step)` around body(i); returns
/// the first index it did not cover. `carried` values are threaded through the loop
/// (body returns their next values); their final values replace them.
llvm::Value* countedLoop(llvm::IRBuilder<>& b, llvm::Value* from, llvm::Value* to, int64_t step,
                         std::vector<llvm::Value*>& carried,
                         const std::function<std::vector<llvm::Value*>(llvm::Value*, const std::vector<llvm::Value*>&)>& body,
                         const char* name) {
  llvm::Function* fn = b.GetInsertBlock()->getParent();
  llvm::LLVMContext& ctx = fn->getContext();
  llvm::BasicBlock* before = b.GetInsertBlock();
  llvm::BasicBlock* loop = llvm::BasicBlock::Create(ctx, name, fn);
  llvm::BasicBlock* after = llvm::BasicBlock::Create(ctx, std::string(name) + ".done", fn);
  llvm::Value* stepV = b.getInt64(static_cast<uint64_t>(step));
  b.CreateCondBr(b.CreateICmpSLE(b.CreateAdd(from, stepV), to), loop, after);
  b.SetInsertPoint(loop);
  llvm::PHINode* i = b.CreatePHI(b.getInt64Ty(), 2);
  i->addIncoming(from, before);
  std::vector<llvm::PHINode*> phis;
  std::vector<llvm::Value*> current;
  for (llvm::Value* v : carried) {
    phis.push_back(b.CreatePHI(v->getType(), 2));
    phis.back()->addIncoming(v, before);
    current.push_back(phis.back());
  }
  const std::vector<llvm::Value*> next = body(i, current);
  llvm::Value* i1 = b.CreateAdd(i, stepV);
  llvm::BasicBlock* latch = b.GetInsertBlock();
  i->addIncoming(i1, latch);
  for (size_t k = 0; k < phis.size(); ++k) phis[k]->addIncoming(next[k], latch);
  b.CreateCondBr(b.CreateICmpSLE(b.CreateAdd(i1, stepV), to), loop, after);
  b.SetInsertPoint(after);
  llvm::PHINode* end = b.CreatePHI(b.getInt64Ty(), 2);
  end->addIncoming(from, before);
  end->addIncoming(i1, latch);
  for (size_t k = 0; k < carried.size(); ++k) {
    llvm::PHINode* out = b.CreatePHI(carried[k]->getType(), 2);
    out->addIncoming(carried[k], before);
    out->addIncoming(next[k], latch);
    carried[k] = out;
  }
  return end;
}

/// Σ term(x[i]) for i < n as sums::sum adds it (the file's comment), in f32 vectors of
/// `lanes`. `term` maps a vector of elements to a vector of terms; `store`, if set, keeps
/// each term at y[i] (softmax's exponentials) — masked in a block's short last step.
llvm::Value* blockedSum(llvm::IRBuilder<>& b, llvm::Module& m, const CascadeCalls& cascade, int64_t lanes,
                        llvm::Value* xr, llvm::Value* yr, llvm::Value* n,
                        const std::function<llvm::Value*(llvm::Value*)>& term) {
  llvm::LLVMContext& c = m.getContext();
  llvm::Type* t = llvm::Type::getFloatTy(c);
  auto* vec = llvm::FixedVectorType::get(t, static_cast<unsigned>(lanes));
  const int64_t groups = sums::kSumLanes / lanes;
  const llvm::Align align(4);
  llvm::Function* fn = b.GetInsertBlock()->getParent();
  llvm::IRBuilder<> entry(&fn->getEntryBlock(), fn->getEntryBlock().begin());
  llvm::StructType* cascadeType = llvm::StructType::get(c, {llvm::ArrayType::get(t, 64), b.getInt64Ty()});
  llvm::AllocaInst* state = entry.CreateAlloca(cascadeType);
  b.CreateStore(b.getInt64(0), b.CreateStructGEP(cascadeType, state, 1));
  llvm::Value* blockSize = b.getInt64(static_cast<uint64_t>(sums::kSumBlock));
  // Block starts b0 = 0, 256, ... below n: n rounded up to a whole block, stepped by one.
  llvm::Value* rounded = b.CreateMul(b.CreateUDiv(b.CreateAdd(n, b.getInt64(static_cast<uint64_t>(sums::kSumBlock - 1))), blockSize),
                                     blockSize);
  std::vector<llvm::Value*> none;
  countedLoop(b, b.getInt64(0), rounded, sums::kSumBlock, none, [&](llvm::Value* b0, const std::vector<llvm::Value*>&) {
    llvm::Value* b1 = b.CreateAdd(b0, blockSize);
    b1 = b.CreateSelect(b.CreateICmpSLT(b1, n), b1, n);
    std::vector<llvm::Value*> parts;
    for (int64_t g = 0; g < groups; ++g) parts.push_back(llvm::ConstantFP::get(vec, 0.0));
    llvm::Value* j = countedLoop(b, b0, b1, sums::kSumLanes, parts, [&](llvm::Value* i, const std::vector<llvm::Value*>& cur) {
      std::vector<llvm::Value*> next(cur.size());
      for (int64_t g = 0; g < groups; ++g) {
        llvm::Value* at = b.CreateAdd(i, b.getInt64(static_cast<uint64_t>(g * lanes)));
        llvm::Value* v = term(b.CreateAlignedLoad(vec, b.CreateInBoundsGEP(t, xr, at), align));
        if (yr) b.CreateAlignedStore(v, b.CreateInBoundsGEP(t, yr, at), align);
        next[static_cast<size_t>(g)] = b.CreateFAdd(cur[static_cast<size_t>(g)], v);
      }
      return next;
    }, "sum");
    // The block's short last step (fewer than 16 elements, maybe none): lane k of group g
    // takes element j + g·lanes + k if it is below b1.
    llvm::Value* rest = b.CreateSub(b1, j);
    for (int64_t g = 0; g < groups; ++g) {
      std::vector<llvm::Constant*> lane;
      for (int64_t k = 0; k < lanes; ++k) lane.push_back(b.getInt64(static_cast<uint64_t>(g * lanes + k)));
      llvm::Value* live = b.CreateICmpSLT(llvm::ConstantVector::get(lane), b.CreateVectorSplat(static_cast<unsigned>(lanes), rest));
      llvm::Value* at = b.CreateInBoundsGEP(t, xr, b.CreateAdd(j, b.getInt64(static_cast<uint64_t>(g * lanes))));
      llvm::Value* v = term(b.CreateMaskedLoad(vec, at, align, live, llvm::ConstantFP::get(vec, 0.0)));
      if (yr) b.CreateMaskedStore(v, b.CreateInBoundsGEP(t, yr, b.CreateAdd(j, b.getInt64(static_cast<uint64_t>(g * lanes)))), align, live);
      parts[static_cast<size_t>(g)] = b.CreateSelect(live, b.CreateFAdd(parts[static_cast<size_t>(g)], v), parts[static_cast<size_t>(g)]);
    }
    // The 16 partial sums pairwise, then the block's sum into the cascade.
    std::vector<llvm::Value*> s(static_cast<size_t>(sums::kSumLanes));
    for (int64_t k = 0; k < sums::kSumLanes; ++k)
      s[static_cast<size_t>(k)] = b.CreateExtractElement(parts[static_cast<size_t>(k / lanes)], static_cast<uint64_t>(k % lanes));
    for (int64_t width = sums::kSumLanes / 2; width > 0; width /= 2)
      for (int64_t k = 0; k < width; ++k)
        s[static_cast<size_t>(k)] = b.CreateFAdd(s[static_cast<size_t>(k)], s[static_cast<size_t>(k + width)]);
    b.CreateCall(cascade.push, {state, s[0]});
    return std::vector<llvm::Value*>{};
  }, "block");
  return b.CreateCall(cascade.total, {state});
}

} // namespace

llvm::Function* softmaxRowsF32(llvm::Module& module, const std::string& features, llvm::Function* general,
                               const CascadeCalls& cascade) {
  const std::string name = "tsl_softmax_rows_f32";
  if (llvm::Function* f = module.getFunction(name)) return f;
  llvm::LLVMContext& c = module.getContext();
  const int64_t lanes = std::min<int64_t>(gemmPlan(DType::F32, features).lanes, rows::kLanes);
  const int64_t groups = rows::kLanes / lanes; // vectors holding the 16 partial sums
  llvm::Type* t = llvm::Type::getFloatTy(c);
  llvm::Type* i64 = llvm::Type::getInt64Ty(c);
  llvm::Type* ptr = llvm::PointerType::getUnqual(c);
  auto* vec = llvm::FixedVectorType::get(t, static_cast<unsigned>(lanes));
  auto* type = llvm::FunctionType::get(llvm::Type::getVoidTy(c), {ptr, ptr, i64, i64, i64}, false);
  llvm::Function* f = llvm::Function::Create(type, llvm::Function::InternalLinkage, name, module);
  f->addFnAttr(llvm::Attribute::NoUnwind);
  f->addFnAttr("tsl-generated");
  llvm::Value* x = f->getArg(0);
  llvm::Value* y = f->getArg(1);
  llvm::Value* begin = f->getArg(2);
  llvm::Value* end = f->getArg(3);
  llvm::Value* n = f->getArg(4);
  const llvm::Align align(4);
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(c, "entry", f));
  auto splat = [&](llvm::Value* s) { return b.CreateVectorSplat(static_cast<unsigned>(lanes), s); };
  auto load = [&](llvm::Value* base, llvm::Value* at) { return b.CreateAlignedLoad(vec, b.CreateInBoundsGEP(t, base, at), align); };
  auto store = [&](llvm::Value* v, llvm::Value* base, llvm::Value* at) {
    b.CreateAlignedStore(v, b.CreateInBoundsGEP(t, base, at), align);
  };
  auto maxOf = [&](llvm::Value* v, llvm::Value* acc) { return b.CreateSelect(b.CreateFCmpOGT(v, acc), v, acc); };
  llvm::Value* zero = llvm::ConstantFP::get(t, 0.0);
  const int64_t block = rows::kLanes; // elements per step of the vector loops

  std::vector<llvm::Value*> none;
  countedLoop(b, begin, end, 1, none, [&](llvm::Value* row, const std::vector<llvm::Value*>&) {
    llvm::Value* at = b.CreateMul(row, n);
    llvm::Value* xr = b.CreateInBoundsGEP(t, x, at);
    llvm::Value* yr = b.CreateInBoundsGEP(t, y, at);
    llvm::Value* first = b.CreateAlignedLoad(t, xr, align);
    // Pass 1: per-lane maxima and x - x sums, 16 lanes per step; then the tail.
    std::vector<llvm::Value*> acc;
    for (int64_t g = 0; g < groups; ++g) acc.push_back(splat(first));
    for (int64_t g = 0; g < groups; ++g) acc.push_back(llvm::ConstantFP::get(vec, 0.0));
    llvm::Value* j = countedLoop(b, b.getInt64(0), n, block, acc, [&](llvm::Value* i, const std::vector<llvm::Value*>& cur) {
      std::vector<llvm::Value*> next(cur.size());
      for (int64_t g = 0; g < groups; ++g) {
        llvm::Value* v = load(xr, b.CreateAdd(i, b.getInt64(static_cast<uint64_t>(g * lanes))));
        next[static_cast<size_t>(g)] = maxOf(v, cur[static_cast<size_t>(g)]);
        next[static_cast<size_t>(groups + g)] = b.CreateFAdd(cur[static_cast<size_t>(groups + g)], b.CreateFSub(v, v));
      }
      return next;
    }, "max");
    std::vector<llvm::Value*> scalars{first, zero};
    countedLoop(b, j, n, 1, scalars, [&](llvm::Value* i, const std::vector<llvm::Value*>& cur) {
      llvm::Value* v = b.CreateAlignedLoad(t, b.CreateInBoundsGEP(t, xr, i), align);
      return std::vector<llvm::Value*>{maxOf(v, cur[0]), b.CreateFAdd(cur[1], b.CreateFSub(v, v))};
    }, "max.tail");
    llvm::Value* top = scalars[0];
    llvm::Value* check = scalars[1];
    for (int64_t k = 0; k < rows::kLanes; ++k) { // lane order, as the C++ adds them
      const auto g = static_cast<size_t>(k / lanes);
      const auto lane = static_cast<uint64_t>(k % lanes);
      check = b.CreateFAdd(check, b.CreateExtractElement(acc[static_cast<size_t>(groups) + g], lane));
      llvm::Value* m = b.CreateExtractElement(acc[g], lane);
      top = maxOf(m, top);
    }
    llvm::Function* fn = b.GetInsertBlock()->getParent();
    llvm::BasicBlock* fast = llvm::BasicBlock::Create(c, "finite", fn);
    llvm::BasicBlock* slow = llvm::BasicBlock::Create(c, "general", fn);
    llvm::BasicBlock* next = llvm::BasicBlock::Create(c, "row.done", fn);
    b.CreateCondBr(b.CreateFCmpOEQ(check, zero), fast, slow);
    b.SetInsertPoint(slow); // a NaN or an infinity: the library's kernel, for this row
    b.CreateCall(general, {x, y, row, b.CreateAdd(row, b.getInt64(1)), n, b.getInt64(1), b.getInt32(0)});
    b.CreateBr(next);
    b.SetInsertPoint(fast);
    // Pass 2: e = exp(x - top) stored and summed.
    llvm::Value* topV = splat(top);
    llvm::Value* total = blockedSum(b, module, cascade, lanes, xr, yr, n,
                                    [&](llvm::Value* v) { return fastExp(b, module, b.CreateFSub(v, topV)); });
    // Pass 3: the row, in cache, times 1 / sum.
    llvm::Value* scale = b.CreateFDiv(llvm::ConstantFP::get(t, 1.0), total);
    llvm::Value* scaleV = splat(scale);
    std::vector<llvm::Value*> nothing;
    llvm::Value* s = countedLoop(b, b.getInt64(0), n, lanes, nothing, [&](llvm::Value* i, const std::vector<llvm::Value*>&) {
      store(b.CreateFMul(load(yr, i), scaleV), yr, i);
      return std::vector<llvm::Value*>{};
    }, "scale");
    countedLoop(b, s, n, 1, nothing, [&](llvm::Value* i, const std::vector<llvm::Value*>&) {
      llvm::Value* p = b.CreateInBoundsGEP(t, yr, i);
      b.CreateAlignedStore(b.CreateFMul(b.CreateAlignedLoad(t, p, align), scale), p, align);
      return std::vector<llvm::Value*>{};
    }, "scale.tail");
    b.CreateBr(next);
    b.SetInsertPoint(next);
    return std::vector<llvm::Value*>{};
  }, "row");
  b.CreateRetVoid();
  return f;
}

llvm::Function* layerNormRowsF32(llvm::Module& module, const std::string& features, const CascadeCalls& cascade) {
  const std::string name = "tsl_layernorm_rows_f32";
  if (llvm::Function* f = module.getFunction(name)) return f;
  llvm::LLVMContext& c = module.getContext();
  const int64_t lanes = std::min<int64_t>(gemmPlan(DType::F32, features).lanes, rows::kLanes);
  llvm::Type* t = llvm::Type::getFloatTy(c);
  llvm::Type* i64 = llvm::Type::getInt64Ty(c);
  llvm::Type* ptr = llvm::PointerType::getUnqual(c);
  auto* vec = llvm::FixedVectorType::get(t, static_cast<unsigned>(lanes));
  auto* type = llvm::FunctionType::get(llvm::Type::getVoidTy(c), {ptr, ptr, i64, i64, i64, t}, false);
  llvm::Function* f = llvm::Function::Create(type, llvm::Function::InternalLinkage, name, module);
  f->addFnAttr(llvm::Attribute::NoUnwind);
  f->addFnAttr("tsl-generated");
  llvm::Value* x = f->getArg(0);
  llvm::Value* y = f->getArg(1);
  llvm::Value* n = f->getArg(4);
  llvm::Value* eps = f->getArg(5);
  const llvm::Align align(4);
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(c, "entry", f));
  auto splat = [&](llvm::Value* s) { return b.CreateVectorSplat(static_cast<unsigned>(lanes), s); };
  auto load = [&](llvm::Value* base, llvm::Value* at) { return b.CreateAlignedLoad(vec, b.CreateInBoundsGEP(t, base, at), align); };
  auto loadScalar = [&](llvm::Value* base, llvm::Value* at) {
    return b.CreateAlignedLoad(t, b.CreateInBoundsGEP(t, base, at), align);
  };
  llvm::Value* count = b.CreateSIToFP(n, t);
  llvm::Function* sqrt = llvm::Intrinsic::getDeclaration(&module, llvm::Intrinsic::sqrt, {t});
  auto rowSum = [&](llvm::Value* xr, const std::function<llvm::Value*(llvm::Value*)>& term) {
    return blockedSum(b, module, cascade, lanes, xr, nullptr, n, term);
  };
  std::vector<llvm::Value*> none;
  countedLoop(b, f->getArg(2), f->getArg(3), 1, none, [&](llvm::Value* row, const std::vector<llvm::Value*>&) {
    llvm::Value* at = b.CreateMul(row, n);
    llvm::Value* xr = b.CreateInBoundsGEP(t, x, at);
    llvm::Value* yr = b.CreateInBoundsGEP(t, y, at);
    llvm::Value* mean = b.CreateFDiv(rowSum(xr, [](llvm::Value* v) { return v; }), count);
    llvm::Value* meanV = splat(mean);
    llvm::Value* squares = rowSum(xr, [&](llvm::Value* v) {
      llvm::Value* d = b.CreateFSub(v, meanV);
      return b.CreateFMul(d, d);
    });
    llvm::Value* scale =
        b.CreateFDiv(llvm::ConstantFP::get(t, 1.0), b.CreateCall(sqrt, {b.CreateFAdd(b.CreateFDiv(squares, count), eps)}));
    llvm::Value* scaleV = splat(scale);
    std::vector<llvm::Value*> nothing;
    llvm::Value* s = countedLoop(b, b.getInt64(0), n, lanes, nothing, [&](llvm::Value* i, const std::vector<llvm::Value*>&) {
      b.CreateAlignedStore(b.CreateFMul(b.CreateFSub(load(xr, i), meanV), scaleV), b.CreateInBoundsGEP(t, yr, i), align);
      return std::vector<llvm::Value*>{};
    }, "normalize");
    countedLoop(b, s, n, 1, nothing, [&](llvm::Value* i, const std::vector<llvm::Value*>&) {
      b.CreateAlignedStore(b.CreateFMul(b.CreateFSub(loadScalar(xr, i), mean), scale), b.CreateInBoundsGEP(t, yr, i), align);
      return std::vector<llvm::Value*>{};
    }, "normalize.tail");
    return std::vector<llvm::Value*>{};
  }, "row");
  b.CreateRetVoid();
  return f;
}

} // namespace tsl::compiler::cpu
