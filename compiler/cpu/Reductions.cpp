// compiler/cpu/Reductions.cpp — loop reductions: sum, mean, prod, max, min, argmax, argmin.
//
// The reduced operand is a loop nest (a fused group's value, read through views), never
// materialised. Its reduced index space is walked in blocks of sums::kSumBlock elements
// (runtime/Summation.h), which gives two guarantees the eager kernels give too:
//  - accuracy: a float sum or mean adds each block in the vectoriser's lanes and pushes
//    the block's sum into a Cascade — the runtime's own pairwise combination, through the
//    kernel library's tsl_cascade_* — so its error grows with log n, not n (a running f32
//    sum of 27 million ones stops at 2^24);
//  - interruption: after each block the interrupt flag is read, and a set flag ends the
//    reduction at once (the caller then returns TSL_ERROR_INTERRUPTED), so a reduction of
//    a fused product of 10^12 elements stops on Ctrl-C.
// Two shapes of loop nest:
//  - each output element reduces its own slice, the innermost loop along the last reduced
//    axis: a block is a chunk of one such row, or several short rows;
//  - the last axis is kept and the accumulator is the result's own storage: each output
//    row accumulates a reduced step at a time, the innermost loop along the row; float
//    sums over more than a block do so in tiles of columns with a Cascade per column.
#include "compiler/cpu/LoopNests.h"

#include "runtime/Summation.h"

namespace tsl::compiler::cpu {

namespace {

constexpr int64_t kBlock = sums::kSumBlock;
/// Stack a column reduction's partial sums and cascade levels may take per thread.
constexpr int64_t kTileBytes = 131072;

/// The axes of a reduction over `space`: kept and reduced, their sizes. Reduced axes of
/// size 1 are left out (their index is always 0).
struct Axes {
  std::vector<int64_t> keptSizes, reducedSizes, space;
  std::vector<int> keptAxes, reducedAxes;
  int64_t n = 1, outCount = 1; ///< elements per output (size-1 axes included), outputs
  bool lastKept = false;

  Axes(const std::vector<int64_t>& s, const ReduceAttrs& attrs) : space(s) {
    const int rank = static_cast<int>(space.size());
    std::vector<bool> reduced(space.size(), !attrs.noAxes && attrs.axes.empty());
    if (!attrs.noAxes)
      for (int64_t axis : attrs.axes) reduced[static_cast<size_t>(normalizeAxis(axis, rank))] = true;
    for (int d = 0; d < rank; ++d) {
      const int64_t size = space[static_cast<size_t>(d)];
      if (reduced[static_cast<size_t>(d)]) {
        n *= size;
        if (size == 1) continue;
        reducedSizes.push_back(size);
        reducedAxes.push_back(d);
      } else {
        outCount *= size;
        keptSizes.push_back(size);
        keptAxes.push_back(d);
      }
    }
    lastKept = rank > 0 && !reduced[static_cast<size_t>(rank - 1)];
  }

  /// The full index of the space: kept axes, reduced axes, everything else 0.
  std::vector<llvm::Value*> index(llvm::IRBuilder<>& b, const std::vector<llvm::Value*>& kept,
                                  const std::vector<llvm::Value*>& reducedIndex) const {
    std::vector<llvm::Value*> at(space.size(), b.getInt64(0));
    for (size_t k = 0; k < keptAxes.size() && k < kept.size(); ++k) at[static_cast<size_t>(keptAxes[k])] = kept[k];
    for (size_t k = 0; k < reducedAxes.size(); ++k) at[static_cast<size_t>(reducedAxes[k])] = reducedIndex[k];
    return at;
  }
};

/// What a reduction computes, and the arithmetic of its accumulator (the runtime's:
/// integers in i64, f64 in double, the rest in float; a maximum or minimum in the
/// element's own compute type).
struct Reducer {
  FunctionCodegen& g;
  OpKind kind;
  DType in, result;
  int64_t n;
  bool arg, extremum, maximum, integral;
  llvm::Type* acc;

  Reducer(FunctionCodegen& codegen, const ir::Operation& reduce, DType input, int64_t count)
      : g(codegen), kind(reduce.code().kind), in(input), result(reduce.result()->type().dtype), n(count) {
    llvm::IRBuilder<>& b = g.builder();
    arg = kind == OpKind::ArgMax || kind == OpKind::ArgMin;
    extremum = kind == OpKind::Max || kind == OpKind::Min;
    maximum = kind == OpKind::Max || kind == OpKind::ArgMax;
    integral = isInteger(in) || isBool(in);
    acc = extremum || arg ? g.computeType(in) : integral ? b.getInt64Ty() : in == DType::F64 ? b.getDoubleTy() : b.getFloatTy();
    if ((extremum || arg) && isBool(in)) acc = b.getInt8Ty();
  }

  /// Float sums and means add block sums pairwise (a Cascade); everything else is exact
  /// in any order (integers wrap; extrema) or as accurate in one (products).
  bool cascades() const { return (kind == OpKind::Sum || kind == OpKind::Mean) && acc->isFloatingPointTy(); }
  const char* tag() const { return acc->isDoubleTy() ? "f64" : "f32"; }
  /// runtime/Summation.h's Cascade<T>: { T level[64]; uint64_t count; }.
  llvm::StructType* cascadeType() const {
    return llvm::StructType::get(g.context(), {llvm::ArrayType::get(acc, 64), g.builder().getInt64Ty()});
  }
  void resetCascade(llvm::IRBuilder<>& b, llvm::Value* cascade) const {
    b.CreateStore(b.getInt64(0), b.CreateStructGEP(cascadeType(), cascade, 1));
  }
  void push(llvm::IRBuilder<>& b, llvm::Value* cascade, llvm::Value* v) const {
    b.CreateCall(g.library().get(cat("tsl_cascade_push_", tag())), {cascade, v});
  }
  llvm::Value* total(llvm::IRBuilder<>& b, llvm::Value* cascade) const {
    return b.CreateCall(g.library().get(cat("tsl_cascade_total_", tag())), {cascade});
  }

  /// An element (storage of `in`) in the accumulator's type.
  llvm::Value* widen(llvm::IRBuilder<>& b, llvm::Value* x) const {
    if ((extremum || arg) && isBool(in)) return x;
    if (extremum || arg) return g.toCompute(b, x, in);
    if (integral) return isBool(in) ? b.CreateZExt(x, b.getInt64Ty()) : b.CreateSExt(x, b.getInt64Ty());
    if (in == DType::F64) return x;
    return g.toCompute(b, x, in);
  }
  static llvm::Value* isNan(llvm::IRBuilder<>& b, llvm::Value* x) {
    return x->getType()->isFloatingPointTy() ? b.CreateFCmpUNO(x, x) : b.getFalse();
  }
  llvm::Value* better(llvm::IRBuilder<>& b, llvm::Value* x, llvm::Value* than) const {
    if (x->getType()->isFloatingPointTy()) return maximum ? b.CreateFCmpOGT(x, than) : b.CreateFCmpOLT(x, than);
    if (isBool(in)) return maximum ? b.CreateICmpUGT(x, than) : b.CreateICmpULT(x, than);
    return maximum ? b.CreateICmpSGT(x, than) : b.CreateICmpSLT(x, than);
  }
  llvm::Value* combine(llvm::IRBuilder<>& b, llvm::Value* a, llvm::Value* x) const {
    switch (kind) {
    case OpKind::Sum:
    case OpKind::Mean:
      if (a->getType()->isFloatingPointTy()) {
        llvm::IRBuilderBase::FastMathFlagGuard keep(b);
        llvm::FastMathFlags flags;
        flags.setAllowReassoc(); // within a block the order is free: it vectorises
        b.setFastMathFlags(flags);
        return b.CreateFAdd(a, x);
      }
      return b.CreateAdd(a, x);
    case OpKind::Prod: return a->getType()->isFloatingPointTy() ? b.CreateFMul(a, x) : b.CreateMul(a, x);
    default: // max, min: the first NaN wins and stays
      return b.CreateSelect(b.CreateOr(isNan(b, a), b.CreateNot(b.CreateOr(isNan(b, x), better(b, x, a)))), a, x);
    }
  }
  llvm::Value* identity() const {
    switch (kind) {
    case OpKind::Sum:
    case OpKind::Mean: return llvm::Constant::getNullValue(acc);
    case OpKind::Prod: return acc->isFloatingPointTy() ? llvm::ConstantFP::get(acc, 1.0) : llvm::ConstantInt::get(acc, 1);
    default: {
      if (acc->isFloatingPointTy()) return llvm::ConstantFP::getInfinity(acc, maximum);
      if (isBool(in)) return llvm::ConstantInt::get(acc, maximum ? 0 : 1);
      const unsigned bits = acc->getIntegerBitWidth();
      return llvm::ConstantInt::get(acc, maximum ? llvm::APInt::getSignedMinValue(bits) : llvm::APInt::getSignedMaxValue(bits));
    }
    }
  }
  /// The accumulated value as the result's storage.
  llvm::Value* finish(llvm::IRBuilder<>& b, llvm::Value* a) const {
    if (kind == OpKind::Mean) {
      llvm::Value* wide = a->getType()->isIntegerTy() ? b.CreateSIToFP(a, b.getDoubleTy())
                          : a->getType()->isDoubleTy() ? a
                                                       : b.CreateFPExt(a, b.getDoubleTy());
      llvm::Value* mean = b.CreateFDiv(wide, llvm::ConstantFP::get(b.getDoubleTy(), static_cast<double>(n)));
      return g.convert(b, mean, DType::F64, result);
    }
    if (extremum) return isBool(in) ? a : g.fromCompute(b, a, in);
    if (integral) return g.convert(b, a, DType::I64, result);
    if (in == DType::F64) return g.convert(b, a, DType::F64, result);
    return g.convert(b, a, DType::F32, result); // float accumulator, rounded once
  }
};

/// for (t = 0; t < count; ++t) body(t), leaving early once the interrupt flag behind
/// `flag` is set (read after every iteration; one iteration needs no loop at all).
void blockLoop(llvm::IRBuilder<>& b, int64_t count, llvm::Value* flag,
               const std::function<void(llvm::IRBuilder<>&, llvm::Value*)>& body) {
  if (count <= 0) return;
  if (count == 1) {
    body(b, b.getInt64(0));
    return;
  }
  llvm::Function* fn = b.GetInsertBlock()->getParent();
  llvm::LLVMContext& c = fn->getContext();
  llvm::BasicBlock* before = b.GetInsertBlock();
  llvm::BasicBlock* loop = llvm::BasicBlock::Create(c, "block", fn);
  llvm::BasicBlock* exit = llvm::BasicBlock::Create(c, "block.end", fn);
  b.CreateBr(loop);
  b.SetInsertPoint(loop);
  llvm::PHINode* t = b.CreatePHI(b.getInt64Ty(), 2, "t");
  t->addIncoming(b.getInt64(0), before);
  body(b, t);
  llvm::Value* next = b.CreateAdd(t, b.getInt64(1), "", true, true);
  llvm::Value* stop = interruptSet(b, flag);
  t->addIncoming(next, b.GetInsertBlock());
  b.CreateCondBr(b.CreateAnd(b.CreateICmpSLT(next, b.getInt64(static_cast<uint64_t>(count))), b.CreateNot(stop)), loop,
                 exit);
  b.SetInsertPoint(exit);
}

/// Each output element reduces its own slice.
void rowReduction(FunctionCodegen& g, const LoopNest& nest, const Leaves& leaves, const Axes& axes, const Reducer& r,
                  llvm::Value* out) {
  // The reduced space as rows along its last axis (m elements; one "row" of one element
  // if nothing but size-1 axes is reduced).
  const int64_t m = axes.reducedSizes.empty() ? 1 : axes.reducedSizes.back();
  const std::vector<int64_t> rowSizes(axes.reducedSizes.begin(), axes.reducedSizes.end() - (axes.reducedSizes.empty() ? 0 : 1));
  const int64_t rows = product(rowSizes);
  // Blocks: a chunk of kBlock elements of one row, or `groupRows` whole short rows (none
  // for an empty reduced space: the result is the identity's, or NaN for a mean).
  const bool chunked = m >= kBlock;
  const int64_t perRow = chunked ? (m + kBlock - 1) / kBlock : 0;
  const int64_t groupRows = chunked || m == 0 ? 1 : std::max<int64_t>(1, kBlock / m);
  const int64_t blocks = axes.n == 0 ? 0 : chunked ? rows * perRow : (rows + groupRows - 1) / groupRows;
  std::vector<llvm::Value*> captures = leaves.captures(nest, out);
  captures.push_back(g.interruptFlag());
  llvm::Type* outT = g.storageType(r.result);
  g.parallel(
      axes.outCount, std::max<int64_t>(1, 8192 / std::max<int64_t>(axes.n, 1)), captures,
      [&](llvm::IRBuilder<>& b, llvm::Value* begin, llvm::Value* end, const std::vector<llvm::Value*>& got) {
        llvm::Function* fn = b.GetInsertBlock()->getParent();
        llvm::IRBuilder<> entry(&fn->getEntryBlock(), fn->getEntryBlock().begin());
        llvm::AllocaInst* slot = entry.CreateAlloca(r.acc);
        llvm::AllocaInst* bestAt = entry.CreateAlloca(b.getInt64Ty());
        llvm::AllocaInst* nanSeen = entry.CreateAlloca(b.getInt1Ty());
        llvm::AllocaInst* cascade = r.cascades() ? entry.CreateAlloca(r.cascadeType()) : nullptr;
        llvm::Value* flag = got.back();
        outerLoop(b, begin, end, [&](llvm::IRBuilder<>& ob, llvm::Value* o) {
          const std::vector<llvm::Value*> kept = delinearize(ob, o, axes.keptSizes);
          ob.CreateStore(r.identity(), slot);
          ob.CreateStore(ob.getInt64(0), bestAt);
          ob.CreateStore(ob.getFalse(), nanSeen);
          if (cascade) r.resetCascade(ob, cascade);
          // One element: row `row` (its index `rowIndex`), position j along it.
          auto element = [&](llvm::IRBuilder<>& ib, llvm::Value* row, const std::vector<llvm::Value*>& rowIndex,
                             llvm::Value* j) {
            std::vector<llvm::Value*> reducedIndex = rowIndex;
            if (!axes.reducedSizes.empty()) reducedIndex.push_back(j);
            llvm::Value* x = r.widen(ib, nestValue(g, ib, nest, leaves, axes.index(ib, kept, reducedIndex), got));
            llvm::Value* a = ib.CreateLoad(r.acc, slot);
            if (!r.arg) {
              ib.CreateStore(r.combine(ib, a, x), slot);
              return;
            }
            // argmax/argmin: the first NaN, else the first best.
            llvm::Value* flat = ib.CreateAdd(ib.CreateMul(row, ib.getInt64(static_cast<uint64_t>(m))), j);
            llvm::Value* seen = ib.CreateLoad(ib.getInt1Ty(), nanSeen);
            llvm::Value* first = ib.CreateICmpEQ(flat, ib.getInt64(0));
            llvm::Value* nan = Reducer::isNan(ib, x);
            llvm::Value* take = ib.CreateAnd(ib.CreateNot(seen), ib.CreateOr(first, ib.CreateOr(nan, r.better(ib, x, a))));
            ib.CreateStore(ib.CreateSelect(take, x, a), slot);
            ib.CreateStore(ib.CreateSelect(take, flat, ib.CreateLoad(ib.getInt64Ty(), bestAt)), bestAt);
            ib.CreateStore(ib.CreateOr(seen, nan), nanSeen);
          };
          auto wholeRow = [&](llvm::IRBuilder<>& rb, llvm::Value* row, const std::vector<llvm::Value*>& rowIndex) {
            forLoop(rb, rb.getInt64(0), rb.getInt64(static_cast<uint64_t>(m)),
                    [&](llvm::IRBuilder<>& ib, llvm::Value* j) { element(ib, row, rowIndex, j); });
          };
          blockLoop(ob, blocks, blocks > 1 ? flag : llvm::ConstantPointerNull::get(llvm::PointerType::getUnqual(g.context())),
                    [&](llvm::IRBuilder<>& bb, llvm::Value* t) {
                      if (cascade) bb.CreateStore(r.identity(), slot);
                      if (chunked) {
                        llvm::Value* row = bb.CreateUDiv(t, bb.getInt64(static_cast<uint64_t>(perRow)));
                        llvm::Value* from = bb.CreateMul(bb.CreateURem(t, bb.getInt64(static_cast<uint64_t>(perRow))),
                                                         bb.getInt64(static_cast<uint64_t>(kBlock)));
                        llvm::Value* to = bb.CreateAdd(from, bb.getInt64(static_cast<uint64_t>(kBlock)));
                        to = bb.CreateSelect(bb.CreateICmpSLT(to, bb.getInt64(static_cast<uint64_t>(m))), to,
                                             bb.getInt64(static_cast<uint64_t>(m)));
                        const std::vector<llvm::Value*> rowIndex = delinearize(bb, row, rowSizes);
                        forLoop(bb, from, to, [&](llvm::IRBuilder<>& ib, llvm::Value* j) { element(ib, row, rowIndex, j); });
                      } else if (blocks == 1 && !rowSizes.empty()) {
                        // Every row in one block: a nest over them, no divisions.
                        std::vector<int64_t> outer = rowSizes;
                        forNest(bb, outer, bb.getInt64(0), bb.getInt64(static_cast<uint64_t>(outer[0])),
                                [&](llvm::IRBuilder<>& rb, const std::vector<llvm::Value*>& rowIndex) {
                                  llvm::Value* row = rb.getInt64(0);
                                  for (size_t k = 0; k < rowIndex.size(); ++k)
                                    row = rb.CreateAdd(rb.CreateMul(row, rb.getInt64(static_cast<uint64_t>(outer[k]))),
                                                       rowIndex[k]);
                                  wholeRow(rb, row, rowIndex);
                                });
                      } else {
                        llvm::Value* r0 = bb.CreateMul(t, bb.getInt64(static_cast<uint64_t>(groupRows)));
                        llvm::Value* r1 = bb.CreateAdd(r0, bb.getInt64(static_cast<uint64_t>(groupRows)));
                        r1 = bb.CreateSelect(bb.CreateICmpSLT(r1, bb.getInt64(static_cast<uint64_t>(rows))), r1,
                                             bb.getInt64(static_cast<uint64_t>(rows)));
                        outerLoop(bb, r0, r1, [&](llvm::IRBuilder<>& rb, llvm::Value* row) {
                          wholeRow(rb, row, delinearize(rb, row, rowSizes));
                        });
                      }
                      if (cascade) r.push(bb, cascade, bb.CreateLoad(r.acc, slot));
                    });
          llvm::Value* value = r.arg       ? g.convert(ob, ob.CreateLoad(ob.getInt64Ty(), bestAt), DType::I64, r.result)
                               : cascade ? r.finish(ob, r.total(ob, cascade))
                                         : r.finish(ob, ob.CreateLoad(r.acc, slot));
          ob.CreateStore(value, ob.CreateInBoundsGEP(outT, got[0], o));
        });
      });
}

/// The last axis is kept and the accumulator is the result's storage: each output row
/// accumulates the reduced steps in place, the innermost loop along the row. A float sum
/// of more than a block of steps accumulates each block in a row of partial sums and
/// pushes it into per-column cascades (runtime/Summation.h's pushColumns), a tile of
/// columns at a time so that the partial row and the cascades' levels stay within 128 KiB of stack.
void columnReduction(FunctionCodegen& g, const LoopNest& nest, const Leaves& leaves, const Axes& axes,
                     const Reducer& r, llvm::Value* out) {
  const int rank = static_cast<int>(axes.space.size());
  const int64_t width = axes.space.back();
  const std::vector<int64_t> outerSizes(axes.keptSizes.begin(), axes.keptSizes.end() - 1);
  const int64_t outer = product(outerSizes);
  const int64_t steps = product(axes.reducedSizes);
  const int64_t blocks = (steps + kBlock - 1) / kBlock;
  const bool cascades = r.cascades() && blocks > 1;
  const int64_t levels = sums::cascadeLevels(blocks);
  const int64_t accBytes = r.acc->isDoubleTy() ? 8 : 4;
  // (Tiles of a row are not split further for threads: a tile of a row reads each input
  // row in part, at a long stride, which costs more than a second thread gains.)
  const int64_t tile =
      cascades ? std::min(width, std::max<int64_t>(16, kTileBytes / (accBytes * (levels + 1)) / 16 * 16)) : width;
  const int64_t tiles = (width + tile - 1) / tile;
  std::vector<llvm::Value*> captures = leaves.captures(nest, out);
  captures.push_back(g.interruptFlag());
  llvm::Type* outT = g.storageType(r.result);
  g.parallel(
      outer * tiles, std::max<int64_t>(1, 8192 / std::max<int64_t>(axes.n * tile, 1)), captures,
      [&](llvm::IRBuilder<>& b, llvm::Value* begin, llvm::Value* end, const std::vector<llvm::Value*>& got) {
        llvm::Function* fn = b.GetInsertBlock()->getParent();
        llvm::IRBuilder<> entry(&fn->getEntryBlock(), fn->getEntryBlock().begin());
        llvm::AllocaInst* partial = cascades ? entry.CreateAlloca(r.acc, entry.getInt64(static_cast<uint64_t>(tile))) : nullptr;
        llvm::AllocaInst* level = cascades ? entry.CreateAlloca(r.acc, entry.getInt64(static_cast<uint64_t>(tile * levels))) : nullptr;
        llvm::AllocaInst* pushed = cascades ? entry.CreateAlloca(entry.getInt64Ty()) : nullptr;
        llvm::Value* flag = got.back();
        // Work item w: tile w % tiles of output row w / tiles.
        outerLoop(b, begin, end, [&](llvm::IRBuilder<>& tb, llvm::Value* w) {
          llvm::Value* o = tb.CreateUDiv(w, tb.getInt64(static_cast<uint64_t>(tiles)));
          llvm::Value* t = tb.CreateURem(w, tb.getInt64(static_cast<uint64_t>(tiles)));
          const std::vector<llvm::Value*> kept = delinearize(tb, o, outerSizes);
          llvm::Value* outRow = tb.CreateInBoundsGEP(outT, got[0], tb.CreateMul(o, tb.getInt64(static_cast<uint64_t>(width))));
          {
            llvm::Value* c0 = tb.CreateMul(t, tb.getInt64(static_cast<uint64_t>(tile)));
            llvm::Value* c1 = tb.CreateAdd(c0, tb.getInt64(static_cast<uint64_t>(tile)));
            c1 = tb.CreateSelect(tb.CreateICmpSLT(c1, tb.getInt64(static_cast<uint64_t>(width))), c1,
                                 tb.getInt64(static_cast<uint64_t>(width)));
            llvm::Value* count = tb.CreateSub(c1, c0);
            if (cascades) {
              tb.CreateStore(tb.getInt64(0), pushed);
            } else {
              forLoop(tb, c0, c1, [&](llvm::IRBuilder<>& ib, llvm::Value* j) {
                ib.CreateStore(r.identity(), ib.CreateInBoundsGEP(outT, outRow, j));
              });
            }
            // The element of a reduced step at column j, combined into its accumulator.
            auto step = [&](llvm::IRBuilder<>& ib, const std::vector<llvm::Value*>& reducedIndex, llvm::Value* j) {
              std::vector<llvm::Value*> keptIndex = kept;
              keptIndex.push_back(j);
              std::vector<llvm::Value*> index = axes.index(ib, keptIndex, reducedIndex);
              index[static_cast<size_t>(rank - 1)] = j;
              llvm::Value* x = r.widen(ib, nestValue(g, ib, nest, leaves, index, got));
              llvm::Value* at = cascades ? ib.CreateInBoundsGEP(r.acc, partial, ib.CreateSub(j, c0))
                                         : ib.CreateInBoundsGEP(outT, outRow, j);
              ib.CreateStore(r.combine(ib, ib.CreateLoad(r.acc, at), x), at);
            };
            blockLoop(tb, blocks, flag, [&](llvm::IRBuilder<>& bb, llvm::Value* blk) {
              if (cascades)
                forLoop(bb, bb.getInt64(0), count, [&](llvm::IRBuilder<>& ib, llvm::Value* j) {
                  ib.CreateStore(r.identity(), ib.CreateInBoundsGEP(r.acc, partial, j));
                });
              if (blocks == 1) {
                const std::vector<int64_t>& sizes = axes.reducedSizes;
                if (sizes.empty()) {
                  forLoop(bb, c0, c1, [&](llvm::IRBuilder<>& ib, llvm::Value* j) { step(ib, {}, j); });
                } else {
                  forNest(bb, sizes, bb.getInt64(0), bb.getInt64(static_cast<uint64_t>(sizes[0])),
                          [&](llvm::IRBuilder<>& sb, const std::vector<llvm::Value*>& reducedIndex) {
                            forLoop(sb, c0, c1, [&](llvm::IRBuilder<>& ib, llvm::Value* j) { step(ib, reducedIndex, j); });
                          });
                }
              } else {
                llvm::Value* s0 = bb.CreateMul(blk, bb.getInt64(static_cast<uint64_t>(kBlock)));
                llvm::Value* s1 = bb.CreateAdd(s0, bb.getInt64(static_cast<uint64_t>(kBlock)));
                s1 = bb.CreateSelect(bb.CreateICmpSLT(s1, bb.getInt64(static_cast<uint64_t>(steps))), s1,
                                     bb.getInt64(static_cast<uint64_t>(steps)));
                outerLoop(bb, s0, s1, [&](llvm::IRBuilder<>& sb, llvm::Value* s) {
                  const std::vector<llvm::Value*> reducedIndex = delinearize(sb, s, axes.reducedSizes);
                  forLoop(sb, c0, c1, [&](llvm::IRBuilder<>& ib, llvm::Value* j) { step(ib, reducedIndex, j); });
                });
              }
              if (cascades)
                bb.CreateCall(g.library().get(cat("tsl_cascade_columns_push_", r.tag())), {level, count, pushed, partial});
            });
            if (cascades) {
              tb.CreateCall(g.library().get(cat("tsl_cascade_columns_total_", r.tag())),
                            {level, count, tb.CreateLoad(tb.getInt64Ty(), pushed), partial});
              forLoop(tb, tb.getInt64(0), count, [&](llvm::IRBuilder<>& ib, llvm::Value* j) {
                ib.CreateStore(r.finish(ib, ib.CreateLoad(r.acc, ib.CreateInBoundsGEP(r.acc, partial, j))),
                               ib.CreateInBoundsGEP(outT, outRow, ib.CreateAdd(c0, j)));
              });
            }
          }
        });
      });
}

} // namespace

void FunctionCodegen::emitReduction(const LoopNest& nest, const ir::Operation& reduce, llvm::Value* out) {
  const Axes axes(nest.space, std::get<ReduceAttrs>(reduce.attrs()));
  if (axes.outCount == 0) return;
  const Reducer r(*this, reduce, nest.result->type().dtype, axes.n);
  const Leaves leaves(nest, axes.space);
  // Accumulating into the output row by row (vectorised along the last axis) needs the
  // accumulator to be the result's own storage.
  const bool intoOutput = axes.lastKept && !r.arg && axes.n > 0 && r.acc == storageType(r.result) && r.kind != OpKind::Mean;
  if (intoOutput) columnReduction(*this, nest, leaves, axes, r, out);
  else rowReduction(*this, nest, leaves, axes, r, out);
  pollInterrupt(); // a reduction cut short by the flag is an interrupted call
}

} // namespace tsl::compiler::cpu
