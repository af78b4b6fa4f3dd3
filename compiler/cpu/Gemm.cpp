// compiler/cpu/Gemm.cpp — the GEMM micro-kernel as LLVM IR, and its blocking table.
#include "compiler/cpu/Gemm.h"

#include "tsl/Error.h"

#include <cmath>

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/Module.h>

namespace tsl::compiler::cpu {

namespace {

bool has(const std::string& features, const char* feature) {
  const std::string wanted = std::string("+") + feature;
  size_t at = 0;
  while ((at = features.find(wanted, at)) != std::string::npos) {
    const size_t end = at + wanted.size();
    if (end == features.size() || features[end] == ',') return true;
    at = end;
  }
  return false;
}

} // namespace

GemmPlan gemmPlan(DType dtype, const std::string& features) {
  const bool f64 = dtype == DType::F64;
  // Registers: AVX-512 has 32 vector registers, AVX2 16. The tile's accumulators, the
  // row of B and a broadcast must fit: 8×3 + 3 + 1 = 28 of 32; 6×2 + 2 + 1 = 15 of 16.
  // Caches (BLIS's loop order): B's kc×nr micro-panel stays in L1 while the mr-row
  // panels of A's mc×kc block stream from L2; B's kc×nc block sits in L3.
  if (has(features, "avx512f")) {
    const int64_t lanes = f64 ? 8 : 16;
    return {lanes, 8, 3 * lanes, 128, 384, 3072};
  }
  if (has(features, "avx2") && has(features, "fma")) {
    const int64_t lanes = f64 ? 4 : 8;
    return {lanes, 6, 2 * lanes, 256, 192, f64 ? 1536 : 3072};
  }
  const int64_t lanes = f64 ? 2 : 4; // SSE2, the x86-64 baseline
  return {lanes, 4, 2 * lanes, 256, 128, 2048};
}

GemmPlan gemmPlanFor(DType dtype, const std::string& features, int64_t m, int64_t n) {
  const GemmPlan base = gemmPlan(dtype, features);
  if (!has(features, "avx512f")) return base;
  // 6×4 vectors: 24 accumulators as 8×3 has, for products whose n a tile of 48 cuts
  // badly (256 = 5·48 + 16); kc shrinks so that B's micro-panel still fits L1.
  const GemmPlan wide{base.lanes, 6, 4 * base.lanes, 96, base.mc, base.nc};
  auto padded = [&](const GemmPlan& p) {
    return static_cast<double>((m + p.mr - 1) / p.mr * p.mr) * static_cast<double>((n + p.nr - 1) / p.nr * p.nr);
  };
  return padded(wide) < 0.95 * padded(base) ? wide : base;
}

GemmTiling gemmTiling(int64_t m, int64_t k, int64_t n, const GemmPlan& plan, int threads) {
  const int64_t tiles = (n + plan.nr - 1) / plan.nr;
  if (m * k * n < (int64_t(1) << 34)) {
    if (m > n) { // taller than wide: one block of rows per thread (each packs all of B)
      const int64_t rowTiles = (m + plan.mr - 1) / plan.mr;
      const int64_t perThread = (rowTiles + std::max(1, threads) - 1) / std::max(1, threads);
      const int64_t rows = perThread * plan.mr;
      return {rows, n, (m + rows - 1) / rows, 1, 1, m, n};
    }
    // one block of columns per thread (each packs all of A)
    const int64_t perThread = std::max<int64_t>(1, tiles / std::max(1, threads));
    const int64_t colChunks = (tiles + perThread - 1) / perThread;
    return {m, perThread * plan.nr, 1, colChunks, 1, m, n};
  }
  const auto side = static_cast<int64_t>(std::sqrt(double(int64_t(1) << 29) / double(std::max<int64_t>(k, 1))));
  const int64_t rows = std::max<int64_t>(256, side) / plan.mr * plan.mr;
  const int64_t cols = std::max<int64_t>(256, side) / plan.nr * plan.nr;
  return {rows, cols, (m + rows - 1) / rows, (n + cols - 1) / cols, 1, m, n};
}

ConvTiling convTiling(const ConvSizes& s, const GemmPlan& plan, int threads) {
  constexpr int64_t kMinTask = int64_t(1) << 21, kMaxTask = int64_t(1) << 29;
  const int64_t mpp = std::max<int64_t>(1, s.o * s.depth()); // multiply-adds per position
  const int64_t positions = std::max<int64_t>(1, s.positions());
  const int64_t unit = convOnPaddedRows(s) ? std::max<int64_t>(1, s.wo) : plan.nr;
  // Pieces per image: enough for two tasks per thread, none smaller than kMinTask.
  int64_t pieces = std::max<int64_t>(1, (2 * std::max(1, threads) + s.n - 1) / std::max<int64_t>(1, s.n));
  pieces = std::min(pieces, std::max<int64_t>(1, positions * mpp / kMinTask));
  int64_t chunk = (positions + pieces - 1) / pieces;
  chunk = std::min(chunk, std::max<int64_t>(1, kMaxTask / mpp)); // long tasks are cut
  chunk = std::max(unit, (chunk + unit - 1) / unit * unit);
  if (chunk >= positions) chunk = positions;
  const int64_t tasks = std::max<int64_t>(0, s.n) * ((positions + chunk - 1) / chunk);
  return {chunk, tasks, std::max<int64_t>(1, kMinTask / (chunk * mpp))};
}

llvm::Function* gemmMicroKernel(llvm::Module& module, DType dtype, const GemmPlan& plan, bool rowPanels) {
  TSL_ASSERT(dtype == DType::F32 || dtype == DType::F64, "gemm: no micro-kernel for ", dtypeName(dtype));
  const std::string name = cat("tsl_ukr_", dtypeName(dtype), "_", plan.mr, "x", plan.nr, rowPanels ? "_rows" : "");
  if (llvm::Function* f = module.getFunction(name)) return f;
  llvm::LLVMContext& c = module.getContext();
  llvm::Type* t = dtype == DType::F64 ? llvm::Type::getDoubleTy(c) : llvm::Type::getFloatTy(c);
  llvm::Type* i64 = llvm::Type::getInt64Ty(c);
  llvm::Type* ptr = llvm::PointerType::getUnqual(c);
  auto* vec = llvm::FixedVectorType::get(t, static_cast<unsigned>(plan.lanes));
  auto* type = llvm::FunctionType::get(llvm::Type::getVoidTy(c), {i64, ptr, ptr, ptr, i64, llvm::Type::getInt32Ty(c)}, false);
  llvm::Function* f = llvm::Function::Create(type, llvm::Function::InternalLinkage, name, module);
  f->addFnAttr(llvm::Attribute::NoInline); // called through a pointer from the packed loops
  f->addFnAttr(llvm::Attribute::NoUnwind);
  f->addFnAttr("tsl-generated");
  llvm::Value* kc = f->getArg(0);
  llvm::Value* ap = f->getArg(1);
  llvm::Value* bp = f->getArg(2);
  llvm::Value* cp = f->getArg(3);
  llvm::Value* ldc = f->getArg(4);
  llvm::Value* accumulate = f->getArg(5);
  for (unsigned i : {1u, 2u, 3u}) f->addParamAttr(i, llvm::Attribute::NoAlias);

  const int64_t vectors = plan.nr / plan.lanes;
  const size_t count = static_cast<size_t>(plan.mr * vectors);
  llvm::BasicBlock* entry = llvm::BasicBlock::Create(c, "entry", f);
  llvm::BasicBlock* loop = llvm::BasicBlock::Create(c, "k", f);
  llvm::BasicBlock* store = llvm::BasicBlock::Create(c, "store", f);
  llvm::IRBuilder<> b(entry);
  llvm::Value* zero = llvm::Constant::getNullValue(vec);
  // The tile of C is written at the end: its lines are fetched while the FMAs run.
  llvm::Function* prefetch = llvm::Intrinsic::getDeclaration(&module, llvm::Intrinsic::prefetch, {ptr});
  const int64_t rowBytes = plan.nr * static_cast<int64_t>(dtypeSize(dtype));
  for (int64_t i = 0; i < plan.mr; ++i) {
    llvm::Value* cRow = b.CreateInBoundsGEP(t, cp, b.CreateMul(ldc, b.getInt64(static_cast<uint64_t>(i))));
    for (int64_t at = 0; at < rowBytes; at += 64)
      b.CreateCall(prefetch, {b.CreateConstInBoundsGEP1_64(b.getInt8Ty(), cRow, static_cast<uint64_t>(at)), b.getInt32(1),
                              b.getInt32(3), b.getInt32(1)});
  }
  b.CreateCondBr(b.CreateICmpSGT(kc, b.getInt64(0)), loop, store);

  // The k loop: accumulators as phis, one step per iteration.
  b.SetInsertPoint(loop);
  llvm::PHINode* p = b.CreatePHI(i64, 2, "p");
  p->addIncoming(b.getInt64(0), entry);
  std::vector<llvm::PHINode*> acc(count);
  for (size_t i = 0; i < count; ++i) {
    acc[i] = b.CreatePHI(vec, 2);
    acc[i]->addIncoming(zero, entry);
  }
  llvm::Function* fma = llvm::Intrinsic::getDeclaration(&module, llvm::Intrinsic::fmuladd, {vec});
  const llvm::Align elementAlign(dtypeSize(dtype));
  std::vector<llvm::Value*> row(static_cast<size_t>(vectors));
  llvm::Value* bRow = b.CreateInBoundsGEP(t, bp, b.CreateMul(p, b.getInt64(static_cast<uint64_t>(plan.nr))));
  for (int64_t v = 0; v < vectors; ++v)
    row[static_cast<size_t>(v)] = b.CreateAlignedLoad(
        vec, b.CreateConstInBoundsGEP1_64(t, bRow, static_cast<uint64_t>(v * plan.lanes)), elementAlign);
  llvm::Value* aCol = b.CreateInBoundsGEP(t, ap, b.CreateMul(p, b.getInt64(static_cast<uint64_t>(plan.mr))));
  std::vector<llvm::Value*> next(count);
  for (int64_t i = 0; i < plan.mr; ++i) {
    // A (i, p): at p·mr + i in a k-major panel, at i·kc + p in a row-major one.
    llvm::Value* aAt = rowPanels ? b.CreateInBoundsGEP(t, ap, b.CreateAdd(b.CreateMul(kc, b.getInt64(static_cast<uint64_t>(i))), p))
                                 : b.CreateConstInBoundsGEP1_64(t, aCol, static_cast<uint64_t>(i));
    llvm::Value* a = b.CreateAlignedLoad(t, aAt, elementAlign);
    llvm::Value* splat = b.CreateVectorSplat(static_cast<unsigned>(plan.lanes), a);
    for (int64_t v = 0; v < vectors; ++v) {
      const size_t at = static_cast<size_t>(i * vectors + v);
      next[at] = b.CreateCall(fma, {splat, row[static_cast<size_t>(v)], acc[at]});
    }
  }
  llvm::Value* p1 = b.CreateAdd(p, b.getInt64(1));
  p->addIncoming(p1, loop);
  for (size_t i = 0; i < count; ++i) acc[i]->addIncoming(next[i], loop);
  b.CreateCondBr(b.CreateICmpSLT(p1, kc), loop, store);

  // The tile: C = acc, or C += acc.
  b.SetInsertPoint(store);
  std::vector<llvm::PHINode*> result(count);
  for (size_t i = 0; i < count; ++i) {
    result[i] = b.CreatePHI(vec, 2);
    result[i]->addIncoming(zero, entry);
    result[i]->addIncoming(next[i], loop);
  }
  llvm::Value* add = b.CreateICmpNE(accumulate, b.getInt32(0));
  for (int64_t i = 0; i < plan.mr; ++i) {
    llvm::Value* cRow = b.CreateInBoundsGEP(t, cp, b.CreateMul(ldc, b.getInt64(static_cast<uint64_t>(i))));
    for (int64_t v = 0; v < vectors; ++v) {
      llvm::Value* at = b.CreateConstInBoundsGEP1_64(t, cRow, static_cast<uint64_t>(v * plan.lanes));
      llvm::Value* value = result[static_cast<size_t>(i * vectors + v)];
      llvm::Value* old = b.CreateAlignedLoad(vec, at, elementAlign);
      b.CreateAlignedStore(b.CreateSelect(add, b.CreateFAdd(old, value), value), at, elementAlign);
    }
  }
  b.CreateRetVoid();
  return f;
}

} // namespace tsl::compiler::cpu
