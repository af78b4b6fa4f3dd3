// compiler/cpu/Contractions.cpp — matmul and conv2d on the packed GEMM.
//
// f32 and f64 run kernels/PackedGemm.h with the micro-kernel Gemm.h generates for the
// target; i32 and i64 run the plain register-blocked loop of kernels/Kernels.h. Operands
// are read through their accesses (base, offset, strides), so a transpose or a slice of a
// matrix that the fuse pass moved into a matmul's group costs no copy: the packing reads
// it where it is.
#include "compiler/cpu/Contractions.h"

#include "compiler/cpu/Gemm.h"

namespace tsl::compiler::cpu {

namespace {

using ir::Operation;

/// One operand of a (batched) matrix product, as the kernels read it: element (i, j) of
/// batch element b at base + Σ batch[d]·b_d + i·rows + j·cols.
struct Matrix {
  llvm::Value* base;
  int64_t rows, cols;
  std::vector<int64_t> batch; ///< over the product's batch axes; 0 where broadcast
};

/// `v`'s access as a matrix operand: a vector is a row (left) or a column (right).
Matrix matrixOf(FunctionCodegen& g, const ir::Value* v, bool left, const std::vector<int64_t>& batchShape) {
  const Access a = g.access(v);
  llvm::Type* t = g.storageType(v->type().dtype);
  llvm::Value* base = a.offset ? g.builder().CreateConstInBoundsGEP1_64(t, a.base, static_cast<uint64_t>(a.offset))
                               : a.base;
  const std::vector<int64_t> dims = dimsOf(v->type());
  const size_t rank = dims.size();
  Matrix m{base, 0, 0, std::vector<int64_t>(batchShape.size(), 0)};
  if (rank == 1) {
    (left ? m.cols : m.rows) = a.strides[0];
    return m;
  }
  m.rows = a.strides[rank - 2];
  m.cols = a.strides[rank - 1];
  const size_t own = rank - 2; // this operand's batch axes, right-aligned with the product's
  for (size_t d = 0; d < batchShape.size(); ++d) {
    const ptrdiff_t od = static_cast<ptrdiff_t>(d) - static_cast<ptrdiff_t>(batchShape.size() - own);
    if (od >= 0 && dims[static_cast<size_t>(od)] != 1) m.batch[d] = a.strides[static_cast<size_t>(od)];
  }
  return m;
}

/// The element offsets of batch element `i` (a flat index over `batch`) in A and in B.
std::pair<llvm::Value*, llvm::Value*> batchOffsets(llvm::IRBuilder<>& ib, llvm::Value* i, const std::vector<int64_t>& batch,
                                                   const Matrix& a, const Matrix& b) {
  llvm::Value* offA = ib.getInt64(0);
  llvm::Value* offB = ib.getInt64(0);
  llvm::Value* rest = i;
  for (size_t d = batch.size(); d-- > 0;) {
    llvm::Value* size = ib.getInt64(static_cast<uint64_t>(batch[d]));
    llvm::Value* at = ib.CreateURem(rest, size);
    rest = ib.CreateUDiv(rest, size);
    offA = ib.CreateAdd(offA, ib.CreateMul(at, ib.getInt64(static_cast<uint64_t>(a.batch[d]))));
    offB = ib.CreateAdd(offB, ib.CreateMul(at, ib.getInt64(static_cast<uint64_t>(b.batch[d]))));
  }
  return {offA, offB};
}

/// f32 and f64 on the packed GEMM. One matrix: chunks of whole register tiles of columns
/// run in parallel (each packs its own block of B once, and all of A) — or of rows, when
/// the product is taller than wide (all of B, the smaller, packed by each) — or, for a
/// long product, tiles of rows × columns (GemmTiling), polling the interrupt flag between
/// them; a batch: its matrices run in parallel.
void packedMatmul(FunctionCodegen& g, const Operation& op, llvm::Value* out, int64_t m, int64_t k, int64_t n,
                  const std::vector<int64_t>& batch, const Matrix& a, const Matrix& b, const GemmEpilogue& epilogue) {
  const DType dtype = op.result()->type().dtype;
  const GemmPlan plan = gemmPlanFor(dtype, g.moduleCodegen().options.cpuFeatures, m, n);
  llvm::Function* kernel = g.library().get(cat("tsl_k_packedgemm_", kernelTag(dtype)));
  // Only the variant A's packing takes (PackedGemm.h's rowPanels: A's rows contiguous),
  // in both of the kernel's slots: each micro-kernel costs the module compile time.
  llvm::Function* micro = gemmMicroKernel(g.moduleCodegen().out, dtype, plan, a.cols == 1);
  llvm::Function* microRows = micro;
  llvm::Type* t = g.storageType(dtype);
  llvm::Value* bias = epilogue.bias ? epilogue.bias : llvm::ConstantPointerNull::get(g.builder().getPtrTy());
  llvm::Value* alpha = epilogue.alpha ? epilogue.alpha : llvm::ConstantFP::get(t, 1.0);
  auto callRows = [&](llvm::IRBuilder<>& ib, llvm::Value* pa, llvm::Value* pb, llvm::Value* pc, llvm::Value* rows,
                      llvm::Value* colBegin, llvm::Value* colEnd, llvm::Value* biasAt, llvm::Value* alphaAt) {
    auto i64 = [&](int64_t v) { return ib.getInt64(static_cast<uint64_t>(v)); };
    ib.CreateCall(kernel, {pa, i64(a.rows), i64(a.cols), pb, i64(b.rows), i64(b.cols), pc, rows, i64(k), i64(n),
                           colBegin, colEnd, micro, microRows, i64(plan.mr), i64(plan.nr), i64(plan.kc), i64(plan.mc),
                           i64(plan.nc), biasAt, ib.getInt32(epilogue.biasAxis), ib.getInt32(epilogue.activation),
                           alphaAt, ib.getInt32(epilogue.accumulator ? 1 : 0)});
  };
  const int64_t batches = product(batch);
  if (batches == 1 && m * k * n >= (int64_t(1) << 34)) {
    const GemmTiling tiling = gemmTiling(m, k, n, plan, 1);
    g.parallel(tiling.chunks(), 1, {a.base, b.base, out, g.interruptFlag(), bias, alpha},
               [&](llvm::IRBuilder<>& ib, llvm::Value* begin, llvm::Value* end, const std::vector<llvm::Value*>& got) {
                 outerLoop(ib, begin, end, [&](llvm::IRBuilder<>& lb, llvm::Value* tile) {
                   // Each tile first polls the interrupt flag (skipping its work once set);
                   // the caller polls it after the loop.
                   llvm::Function* fn = lb.GetInsertBlock()->getParent();
                   llvm::BasicBlock* work = llvm::BasicBlock::Create(fn->getContext(), "tile.work", fn);
                   llvm::BasicBlock* next = llvm::BasicBlock::Create(fn->getContext(), "tile.next", fn);
                   lb.CreateCondBr(interruptSet(lb, got[3]), next, work);
                   lb.SetInsertPoint(work);
                   auto i64 = [&](int64_t v) { return lb.getInt64(static_cast<uint64_t>(v)); };
                   auto min = [&](llvm::Value* x, llvm::Value* y) { return lb.CreateSelect(lb.CreateICmpSLT(x, y), x, y); };
                   llvm::Value* row = lb.CreateMul(lb.CreateUDiv(tile, i64(tiling.colChunks)), i64(tiling.rowBlock));
                   llvm::Value* col = lb.CreateMul(lb.CreateURem(tile, i64(tiling.colChunks)), i64(tiling.colBlock));
                   llvm::Value* rows = min(i64(tiling.rowBlock), lb.CreateSub(i64(m), row));
                   llvm::Value* colEnd = min(i64(n), lb.CreateAdd(col, i64(tiling.colBlock)));
                   // A row bias starts at the tile's first row.
                   llvm::Value* biasAt = epilogue.bias && epilogue.biasAxis == 0 ? lb.CreateInBoundsGEP(t, got[4], row)
                                                                                  : got[4];
                   callRows(lb, lb.CreateInBoundsGEP(t, got[0], lb.CreateMul(row, i64(a.rows))), got[1],
                            lb.CreateInBoundsGEP(t, got[2], lb.CreateMul(row, i64(n))), rows, col, colEnd, biasAt,
                            got[5]);
                   lb.CreateBr(next);
                   lb.SetInsertPoint(next);
                 });
               });
    g.pollInterrupt();
    return;
  }
  if (batches == 1 && m > n) {
    // Taller than wide: one block of rows per thread, each packing all of B — the smaller
    // operand to pack twice (GemmTiling's rule) — of at least 2^22 multiply-adds.
    const int64_t tiles = (m + plan.mr - 1) / plan.mr;
    const int64_t grain = std::max<int64_t>(1, (int64_t(1) << 22) / std::max<int64_t>(1, n * k * plan.mr));
    g.parallel(tiles, grain, {a.base, b.base, out, bias, alpha},
               [&](llvm::IRBuilder<>& ib, llvm::Value* begin, llvm::Value* end, const std::vector<llvm::Value*>& got) {
                 auto i64 = [&](int64_t v) { return ib.getInt64(static_cast<uint64_t>(v)); };
                 llvm::Value* row = ib.CreateMul(begin, i64(plan.mr));
                 llvm::Value* last = ib.CreateMul(end, i64(plan.mr));
                 llvm::Value* rowEnd = ib.CreateSelect(ib.CreateICmpSLT(last, i64(m)), last, i64(m));
                 llvm::Value* biasAt = epilogue.bias && epilogue.biasAxis == 0 ? ib.CreateInBoundsGEP(t, got[3], row) : got[3];
                 callRows(ib, ib.CreateInBoundsGEP(t, got[0], ib.CreateMul(row, i64(a.rows))), got[1],
                          ib.CreateInBoundsGEP(t, got[2], ib.CreateMul(row, i64(n))), ib.CreateSub(rowEnd, row), i64(0),
                          i64(n), biasAt, got[4]);
               },
               /*perThread=*/true);
    return;
  }
  if (batches == 1) {
    const int64_t tiles = (n + plan.nr - 1) / plan.nr;
    // One chunk per thread (each packs all of A), of at least 2^22 multiply-adds.
    const int64_t grain = std::max<int64_t>(1, (int64_t(1) << 22) / std::max<int64_t>(1, m * k * plan.nr));
    g.parallel(tiles, grain, {a.base, b.base, out, bias, alpha},
               [&](llvm::IRBuilder<>& ib, llvm::Value* begin, llvm::Value* end, const std::vector<llvm::Value*>& got) {
                 llvm::Value* nr = ib.getInt64(static_cast<uint64_t>(plan.nr));
                 llvm::Value* last = ib.CreateMul(end, nr);
                 llvm::Value* colEnd = ib.CreateSelect(ib.CreateICmpSLT(last, ib.getInt64(static_cast<uint64_t>(n))), last,
                                                       ib.getInt64(static_cast<uint64_t>(n)));
                 callRows(ib, got[0], got[1], got[2], ib.getInt64(static_cast<uint64_t>(m)), ib.CreateMul(begin, nr),
                          colEnd, got[3], got[4]);
               },
               /*perThread=*/true);
    return;
  }
  const int64_t grain = std::max<int64_t>(1, (int64_t(1) << 22) / std::max<int64_t>(1, m * n * k));
  g.parallel(batches, grain, {a.base, b.base, out, bias, alpha},
             [&](llvm::IRBuilder<>& ib, llvm::Value* begin, llvm::Value* end, const std::vector<llvm::Value*>& got) {
               outerLoop(ib, begin, end, [&](llvm::IRBuilder<>& lb, llvm::Value* i) {
                 auto [offA, offB] = batchOffsets(lb, i, batch, a, b);
                 llvm::Value* offC = lb.CreateMul(i, lb.getInt64(static_cast<uint64_t>(m * n)));
                 callRows(lb, lb.CreateInBoundsGEP(t, got[0], offA), lb.CreateInBoundsGEP(t, got[1], offB),
                          lb.CreateInBoundsGEP(t, got[2], offC), lb.getInt64(static_cast<uint64_t>(m)), lb.getInt64(0),
                          lb.getInt64(static_cast<uint64_t>(n)), got[3], got[4]);
               });
             });
}

/// i32 and i64: the plain register-blocked loop (integers wrap), rows in parallel.
void integerMatmul(FunctionCodegen& g, const Operation& op, llvm::Value* out, int64_t m, int64_t k, int64_t n,
                   const std::vector<int64_t>& batch, const Matrix& a, const Matrix& b) {
  const DType dtype = op.result()->type().dtype;
  llvm::Function* gemm = g.library().get(cat("tsl_k_gemm_", kernelTag(dtype)));
  llvm::Type* t = g.storageType(dtype);
  const int64_t grain = std::max<int64_t>(1, 65536 / std::max<int64_t>(n * std::max<int64_t>(k, 1), 1));
  auto call = [&](llvm::IRBuilder<>& ib, llvm::Value* pa, llvm::Value* pb, llvm::Value* pc, llvm::Value* begin,
                  llvm::Value* end) {
    auto i64 = [&](int64_t v) { return ib.getInt64(static_cast<uint64_t>(v)); };
    ib.CreateCall(gemm, {pa, i64(a.rows), i64(a.cols), pb, i64(b.rows), i64(b.cols), pc, i64(n), i64(k), i64(n),
                         begin, end});
  };
  if (product(batch) == 1) {
    g.parallel(m, grain, {a.base, b.base, out},
               [&](llvm::IRBuilder<>& ib, llvm::Value* begin, llvm::Value* end, const std::vector<llvm::Value*>& got) {
                 call(ib, got[0], got[1], got[2], begin, end);
               });
    return;
  }
  g.parallel(product(batch), std::max<int64_t>(1, grain / std::max<int64_t>(m, 1)), {a.base, b.base, out},
             [&](llvm::IRBuilder<>& ib, llvm::Value* begin, llvm::Value* end, const std::vector<llvm::Value*>& got) {
               outerLoop(ib, begin, end, [&](llvm::IRBuilder<>& lb, llvm::Value* i) {
                 auto [offA, offB] = batchOffsets(lb, i, batch, a, b);
                 llvm::Value* offC = lb.CreateMul(i, lb.getInt64(static_cast<uint64_t>(m * n)));
                 call(lb, lb.CreateInBoundsGEP(t, got[0], offA), lb.CreateInBoundsGEP(t, got[1], offB),
                      lb.CreateInBoundsGEP(t, got[2], offC), lb.getInt64(0), lb.getInt64(static_cast<uint64_t>(m)));
               });
             });
}

} // namespace

bool emitMatmul(FunctionCodegen& g, const Operation& op, llvm::Value* out) {
  return emitMatmulWithEpilogue(g, op, out, GemmEpilogue{});
}

bool emitMatmulWithEpilogue(FunctionCodegen& g, const Operation& op, llvm::Value* out, const GemmEpilogue& epilogue) {
  if (!op.code().is(OpKind::MatMul) && !op.code().is(OpKind::Dot)) return false;
  const ir::Type& ta = op.operand(0)->type();
  const ir::Type& tb = op.operand(1)->type();
  const DType dtype = op.result()->type().dtype;
  if (!kernelTag(dtype) || ta.dtype != dtype || tb.dtype != dtype || ta.rank() == 0 || tb.rank() == 0) return false;
  // dot is matmul when b has at most two axes, or a has one; otherwise it pairs every
  // row of a with every matrix of b.
  if (op.code().is(OpKind::Dot) && tb.rank() > 2 && ta.rank() != 1) return false;
  const bool packed = dtype == DType::F32 || dtype == DType::F64;
  if ((epilogue.bias || epilogue.activation || epilogue.accumulator || epilogue.alpha) && !packed) return false;
  std::vector<int64_t> a = dimsOf(ta), b = dimsOf(tb);
  if (a.size() == 1) a.insert(a.begin(), 1);
  if (b.size() == 1) b.push_back(1);
  const int64_t m = a[a.size() - 2], k = a.back(), n = b.back();
  // Batch axes, right-aligned and broadcast.
  const size_t batchRank = std::max(a.size(), b.size()) - 2;
  std::vector<int64_t> batch(batchRank, 1);
  for (size_t d = 0; d < batchRank; ++d) {
    const ptrdiff_t da = static_cast<ptrdiff_t>(d) - static_cast<ptrdiff_t>(batchRank - (a.size() - 2));
    const ptrdiff_t db = static_cast<ptrdiff_t>(d) - static_cast<ptrdiff_t>(batchRank - (b.size() - 2));
    // Broadcasting: a size 1 takes the other's size, 0 included (max would make [0] and
    // [1] a batch of one, written into a result of no elements).
    const int64_t x = da >= 0 ? a[static_cast<size_t>(da)] : 1, y = db >= 0 ? b[static_cast<size_t>(db)] : 1;
    batch[d] = x == 1 ? y : x;
  }
  if (product(batch) * m * n == 0) return true;
  const Matrix ma = matrixOf(g, op.operand(0), true, batch), mb = matrixOf(g, op.operand(1), false, batch);
  if (epilogue.accumulator) { // C starts as the accumulator: copied, unless it is C's memory already
    llvm::IRBuilder<>& b = g.builder();
    llvm::Function* fn = b.GetInsertBlock()->getParent();
    llvm::BasicBlock* copy = llvm::BasicBlock::Create(fn->getContext(), "accumulator.copy", fn);
    llvm::BasicBlock* done = llvm::BasicBlock::Create(fn->getContext(), "accumulator.done", fn);
    b.CreateCondBr(b.CreateICmpEQ(out, epilogue.accumulator), done, copy);
    b.SetInsertPoint(copy);
    g.copyBytes(out, epilogue.accumulator, product(batch) * m * n * static_cast<int64_t>(dtypeSize(dtype)));
    b.CreateBr(done);
    b.SetInsertPoint(done);
  }
  if (packed) packedMatmul(g, op, out, m, k, n, batch, ma, mb, epilogue);
  else integerMatmul(g, op, out, m, k, n, batch, ma, mb);
  return true;
}

namespace {

/// `s` as the constant array the convolution kernels take (ConvSizes' order).
llvm::Value* sizesArray(FunctionCodegen& g, const ConvSizes& s) {
  std::vector<llvm::Value*> sizes;
  for (int64_t v : {s.n, s.c, s.h, s.w, s.o, s.kh, s.kw, s.sh, s.sw, s.ph, s.pw, s.ho, s.wo}) sizes.push_back(g.i64(v));
  return g.array(sizes, g.builder().getInt64Ty());
}

/// The packed convolution of sizes `s` over x and w (w flipped: PackedGemm.h's
/// packConvWeights), tasks of output positions in parallel (ConvTiling, fixed at compile
/// time for up to 16 threads).
void packedConv(FunctionCodegen& g, DType dtype, llvm::Value* x, llvm::Value* w, llvm::Value* out, const ConvSizes& s,
                bool flipped) {
  const GemmPlan plan = gemmPlan(dtype, g.moduleCodegen().options.cpuFeatures);
  llvm::Function* kernel = g.library().get(cat("tsl_k_conv2d_", kernelTag(dtype)));
  llvm::Function* micro = gemmMicroKernel(g.moduleCodegen().out, dtype, plan, true); // weights in row panels
  const ConvTiling tiling = convTiling(s, plan, 16);
  llvm::Value* sizeArray = sizesArray(g, s);
  g.parallel(tiling.tasks, tiling.grain, {x, w, out, sizeArray},
             [&](llvm::IRBuilder<>& ib, llvm::Value* begin, llvm::Value* end, const std::vector<llvm::Value*>& got) {
               auto i64 = [&](int64_t v) { return ib.getInt64(static_cast<uint64_t>(v)); };
               ib.CreateCall(kernel, {got[0], got[1], got[2], got[3], i64(tiling.chunk), begin, end, micro,
                                      i64(plan.mr), i64(plan.nr), i64(plan.kc), ib.getInt32(flipped ? 1 : 0)});
             });
}

/// The sizes of conv2d of x by w giving y, with these strides and paddings.
ConvSizes convSizes(const ir::Type& x, const ir::Type& w, const ir::Type& y, const std::array<int64_t, 2>& stride,
                    const std::array<int64_t, 2>& padding) {
  const std::vector<int64_t> xs = dimsOf(x), ws = dimsOf(w), ys = dimsOf(y);
  return {xs[0], xs[1], xs[2], xs[3], ws[0], ws[2], ws[3], stride[0], stride[1], padding[0], padding[1], ys[2], ys[3]};
}

bool packedConvTypes(const Operation& op) {
  const DType d = op.result()->type().dtype;
  return (d == DType::F32 || d == DType::F64) && op.operand(0)->type().dtype == d && op.operand(1)->type().dtype == d;
}

} // namespace

bool emitConv2d(FunctionCodegen& g, const Operation& op, llvm::Value* out) {
  if (!packedConvTypes(op)) return false;
  const ir::Type& y = op.result()->type();
  if (product(dimsOf(y)) == 0) return true;
  const auto& attrs = std::get<Conv2dAttrs>(op.attrs());
  const ConvSizes s = convSizes(op.operand(0)->type(), op.operand(1)->type(), y, attrs.stride, attrs.padding);
  packedConv(g, y.dtype, g.pointer(op.operand(0)), g.pointer(op.operand(1)), out, s, false);
  return true;
}

bool emitConv2dGradInput(FunctionCodegen& g, const Operation& op, llvm::Value* out) {
  // (ct [n,o,ho,wo], w [o,c,kh,kw]) -> dx [n,c,h,w]
  if (!packedConvTypes(op)) return false;
  const ir::Type& dx = op.result()->type();
  const auto& attrs = std::get<Conv2dGradAttrs>(op.attrs());
  const ConvSizes s = convSizes(dx, op.operand(1)->type(), op.operand(0)->type(), attrs.stride, attrs.padding);
  ConvSizes t;
  if (!gradInputAsConv(s, t)) return false; // strided: the runtime's kernel
  if (product(dimsOf(dx)) == 0) return true;
  packedConv(g, dx.dtype, g.pointer(op.operand(0)), g.pointer(op.operand(1)), out, t, true);
  return true;
}

bool emitConv2dGradWeight(FunctionCodegen& g, const Operation& op, llvm::Value* out) {
  // (x [n,c,h,w], ct [n,o,ho,wo]) -> dw [o,c,kh,kw]
  if (!packedConvTypes(op)) return false;
  const ir::Type& dw = op.result()->type();
  const auto& attrs = std::get<Conv2dGradAttrs>(op.attrs());
  const ConvSizes s = convSizes(op.operand(0)->type(), dw, op.operand(1)->type(), attrs.stride, attrs.padding);
  if (product(dimsOf(dw)) == 0) return true;
  const GemmPlan plan = gemmPlan(dw.dtype, g.moduleCodegen().options.cpuFeatures);
  llvm::Function* kernel = g.library().get(cat("tsl_k_conv2dgradweight_", kernelTag(dw.dtype)));
  // dy's rows are A, contiguous: the row-panel variant, in both slots.
  llvm::Function* micro = gemmMicroKernel(g.moduleCodegen().out, dw.dtype, plan, true);
  llvm::Function* microRows = micro;
  llvm::Value* sizeArray = sizesArray(g, s);
  // Tiles of nr columns of dw, each over every image.
  g.parallel((s.depth() + plan.nr - 1) / plan.nr, 1,
             {g.pointer(op.operand(0)), g.pointer(op.operand(1)), out, sizeArray},
             [&](llvm::IRBuilder<>& ib, llvm::Value* begin, llvm::Value* end, const std::vector<llvm::Value*>& got) {
               auto i64 = [&](int64_t v) { return ib.getInt64(static_cast<uint64_t>(v)); };
               ib.CreateCall(kernel, {got[0], got[1], got[2], got[3], begin, end, micro, microRows, i64(plan.mr),
                                      i64(plan.nr), i64(plan.kc), i64(plan.mc), i64(plan.nc)});
             },
             /*perThread=*/true);
  return true;
}

} // namespace tsl::compiler::cpu
