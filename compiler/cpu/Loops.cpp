// compiler/cpu/Loops.cpp — loop nests: elementwise work, copies, fused groups.
//
// A loop nest walks an iteration space (a concrete shape) row-major. Axes that every
// operand walks contiguously together are merged first, so that the innermost loop is
// as long as possible and reads memory at unit stride: that is the loop LLVM vectorises.
// The outermost loop is split into chunks run by tsl_parallel_for when the nest is large
// (the body is outlined into a function taking the chunk's [begin, end)).
//
// Views inside a fused group (transpose, broadcast-to, reshape, squeeze, expand-dims of
// an input) are not copied: they change how the input is read, and the strides they read
// with come from the runtime's own view functions applied to a probe tensor, so there is
// one definition of every view's index arithmetic.
#include "compiler/cpu/LoopNests.h"

#include "runtime/Views.h"

#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/Verifier.h>

namespace tsl::compiler::cpu {

namespace {

/// A tensor with this shape, strides and offset over storage nobody reads: the runtime's
/// view functions compute the view's strides and offset from it.
Tensor probe(DType dtype, const std::vector<int64_t>& shape, const std::vector<int64_t>& strides, int64_t offset) {
  static char nothing = 0;
  return Tensor::view(dtype, Shape(std::span<const int64_t>(shape)), strides, offset, Storage::wrap(&nothing, 0, {}));
}

/// The access's strides over `space` (right-aligned, NumPy broadcasting: 0 on new axes
/// and on size-1 axes of a longer space axis).
std::vector<int64_t> broadcastStrides(const Access& a, const std::vector<int64_t>& own, const std::vector<int64_t>& space) {
  std::vector<int64_t> out(space.size(), 0);
  const size_t shift = space.size() - own.size();
  for (size_t d = 0; d < own.size(); ++d)
    if (!(own[d] == 1 && space[d + shift] != 1)) out[d + shift] = a.strides[d];
  return out;
}

/// Marks the loop whose back edge is `back` as not to be vectorised.
void keepScalar(llvm::BranchInst* back) {
  llvm::LLVMContext& c = back->getContext();
  llvm::MDNode* off = llvm::MDNode::get(c, {llvm::MDString::get(c, "llvm.loop.vectorize.enable"),
                                            llvm::ConstantAsMetadata::get(llvm::ConstantInt::getFalse(c))});
  llvm::MDNode* id = llvm::MDNode::getDistinct(c, {nullptr, off});
  id->replaceOperandWith(0, id);
  back->setMetadata(llvm::LLVMContext::MD_loop, id);
}

/// The innermost loops' back edges made while an outlined body is generated (parallel()).
thread_local std::vector<llvm::BranchInst*>* innermostLoops = nullptr;

/// Merges axes d and d+1 wherever every stride list walks them as one.
void collapse(std::vector<int64_t>& sizes, std::vector<std::vector<int64_t>*> strideLists) {
  for (size_t d = sizes.size(); d-- > 1;) {
    bool merge = true;
    for (const auto* s : strideLists) merge &= (*s)[d - 1] == (*s)[d] * sizes[d];
    if (!merge) continue;
    sizes[d - 1] *= sizes[d];
    sizes.erase(sizes.begin() + static_cast<std::ptrdiff_t>(d));
    for (auto* s : strideLists) {
      (*s)[d - 1] = (*s)[d];
      s->erase(s->begin() + static_cast<std::ptrdiff_t>(d));
    }
  }
}

} // namespace

void forLoop(llvm::IRBuilder<>& b, llvm::Value* from, llvm::Value* to,
             const std::function<void(llvm::IRBuilder<>&, llvm::Value*)>& body, bool innermost) {
  llvm::Function* fn = b.GetInsertBlock()->getParent();
  llvm::LLVMContext& c = fn->getContext();
  llvm::BasicBlock* before = b.GetInsertBlock();
  llvm::BasicBlock* loop = llvm::BasicBlock::Create(c, "loop", fn);
  llvm::BasicBlock* exit = llvm::BasicBlock::Create(c, "loop.end", fn);
  b.CreateCondBr(b.CreateICmpSLT(from, to), loop, exit);
  b.SetInsertPoint(loop);
  llvm::PHINode* i = b.CreatePHI(b.getInt64Ty(), 2, "i");
  i->addIncoming(from, before);
  body(b, i);
  llvm::Value* next = b.CreateAdd(i, b.getInt64(1), "", true, true);
  i->addIncoming(next, b.GetInsertBlock());
  llvm::BranchInst* back = b.CreateCondBr(b.CreateICmpSLT(next, to), loop, exit);
  if (!innermost) keepScalar(back);
  else if (innermostLoops) innermostLoops->push_back(back);
  b.SetInsertPoint(exit);
}


void forNest(llvm::IRBuilder<>& b, const std::vector<int64_t>& sizes, llvm::Value* begin, llvm::Value* end,
             const std::function<void(llvm::IRBuilder<>&, const std::vector<llvm::Value*>&)>& body) {
  std::vector<llvm::Value*> index;
  std::function<void(size_t)> level = [&](size_t d) {
    if (d == sizes.size()) {
      body(b, index);
      return;
    }
    llvm::Value* from = d == 0 ? begin : b.getInt64(0);
    llvm::Value* to = d == 0 ? end : b.getInt64(static_cast<uint64_t>(sizes[d]));
    forLoop(
        b, from, to,
        [&](llvm::IRBuilder<>&, llvm::Value* i) {
          index.push_back(i);
          level(d + 1);
          index.pop_back();
        },
        d + 1 == sizes.size());
  };
  level(0);
}

llvm::Value* offsetOf(llvm::IRBuilder<>& b, const std::vector<llvm::Value*>& index, const std::vector<int64_t>& strides,
                      int64_t offset) {
  llvm::Value* at = b.getInt64(static_cast<uint64_t>(offset));
  for (size_t d = 0; d < index.size(); ++d)
    if (strides[d] != 0) at = b.CreateAdd(at, b.CreateMul(index[d], b.getInt64(static_cast<uint64_t>(strides[d]))));
  return at;
}

std::vector<llvm::Value*> delinearize(llvm::IRBuilder<>& b, llvm::Value* flat, const std::vector<int64_t>& sizes) {
  std::vector<llvm::Value*> index(sizes.size());
  llvm::Value* rest = flat;
  for (size_t k = sizes.size(); k-- > 0;) {
    if (k == 0) {
      index[k] = rest;
      break;
    }
    llvm::Value* size = b.getInt64(static_cast<uint64_t>(sizes[k]));
    index[k] = b.CreateURem(rest, size);
    rest = b.CreateUDiv(rest, size);
  }
  return index;
}

Access FunctionCodegen::viewAccess(const ir::Operation& view, const Access& operand) {
  const OpInfo& info = opInfo(view.code().kind);
  TSL_ASSERT(info.has(kView), "cpu: ", info.name, " is not a view");
  // A broadcast, reshape or expand-dims of a scalar reads that scalar everywhere.
  if (operand.scalar) return operand;
  const ir::Type& in = view.operand(0)->type();
  const ir::Type& out = view.result()->type();
  Access a = operand;
  if (out.rank() == 0) {
    // One element: where an index selects it, else the operand's only element.
    if (const auto* index = std::get_if<IndexAttrs>(&view.attrs()))
      for (size_t d = 0; d < index->indices.size(); ++d) {
        const int64_t size = in.dims[d].size, i = *index->indices[d];
        a.offset += (i < 0 ? i + size : i) * operand.strides[d];
      }
    a.strides.clear();
    return a;
  }
  // The operation's own eager kernel computes the view's strides and offset, applied to
  // a probe tensor laid out as the operand is read: one definition of its index arithmetic.
  const Tensor x = probe(in.dtype, dimsOf(in), operand.strides, operand.offset);
  const Tensor inputs[] = {x};
  const Tensor v = info.kernel(view.attrs(), std::span<const Tensor>(inputs, 1));
  TSL_ASSERT(v.rank() == out.rank() && v.sharesStorageWith(x), "cpu: ", info.name, " did not give a view");
  a.strides.assign(v.strides(), v.strides() + v.rank());
  a.offset = v.offset();
  return a;
}

void FunctionCodegen::parallel(int64_t n, int64_t grain, const std::vector<llvm::Value*>& captures,
                               const std::function<void(llvm::IRBuilder<>&, llvm::Value*, llvm::Value*,
                                                        const std::vector<llvm::Value*>&)>& body,
                               bool perThread) {
  llvm::LLVMContext& c = context();
  // The captured values travel in a struct on the caller's stack.
  std::vector<llvm::Type*> types;
  for (llvm::Value* v : captures) types.push_back(v->getType());
  llvm::StructType* frame = llvm::StructType::get(c, types);
  llvm::Type* ptr = llvm::PointerType::getUnqual(c);
  auto* bodyType = llvm::FunctionType::get(b_.getVoidTy(), {ptr, b_.getInt64Ty(), b_.getInt64Ty()}, false);
  llvm::Function* outlined = llvm::Function::Create(bodyType, llvm::Function::InternalLinkage,
                                                    cat(fn_->getName().str(), ".loop"), m_.out);
  outlined->addFnAttr("tsl-generated");
  outlined->addFnAttr(llvm::Attribute::NoUnwind);
  // Each loop nest stays a function of its own at every level (-O2's pipeline has no
  // inliner; -O1's and -O3's would merge them back): LLVM's optimiser and code generator
  // are superlinear in a function's size, and a traced program can hold thousands of nests.
  outlined->addFnAttr(llvm::Attribute::NoInline);
  outlined->addParamAttr(0, llvm::Attribute::NoAlias);
  {
    llvm::IRBuilder<> ob(llvm::BasicBlock::Create(c, "entry", outlined));
    std::vector<llvm::Value*> loaded;
    for (size_t i = 0; i < captures.size(); ++i)
      loaded.push_back(ob.CreateLoad(types[i], ob.CreateStructGEP(frame, outlined->getArg(0), static_cast<unsigned>(i))));
    std::vector<llvm::BranchInst*> loops;
    std::vector<llvm::BranchInst*>* outer = std::exchange(innermostLoops, &loops);
    body(ob, outlined->getArg(1), outlined->getArg(2), loaded);
    innermostLoops = outer;
    ob.CreateRetVoid();
    // A loop that computes a sine, a power or a libm function stays scalar: vectorised, it
    // calls the function lane by lane, no faster, in code 17 times longer (a program of
    // 1,000 such operations took the code generator a second).
    bool scalar = false;
    for (const llvm::BasicBlock& block : *outlined)
      for (const llvm::Instruction& instruction : block)
        if (const auto* call = llvm::dyn_cast<llvm::CallBase>(&instruction))
          if (const llvm::Function* callee = call->getCalledFunction(); callee && callee->isDeclaration())
            scalar = scalar || library().scalarMath(*callee);
    if (scalar)
      for (llvm::BranchInst* back : loops) keepScalar(back);
  }
  llvm::Value* data = llvm::ConstantPointerNull::get(llvm::PointerType::getUnqual(c));
  if (!captures.empty()) {
    llvm::IRBuilder<> entry(&fn_->getEntryBlock(), fn_->getEntryBlock().begin());
    data = entry.CreateAlloca(frame);
    for (size_t i = 0; i < captures.size(); ++i)
      b_.CreateStore(captures[i], b_.CreateStructGEP(frame, data, static_cast<unsigned>(i)));
  }
  grain = std::max<int64_t>(grain, 1);
  if (n < 2 * grain) {
    b_.CreateCall(outlined, {data, i64(0), i64(n)});
    return;
  }
  llvm::Value* chunk = i64(grain);
  if (perThread) { // one chunk per thread, of at least `grain`
    llvm::Value* threads = b_.CreateSExt(b_.CreateCall(m_.abi("tsl_thread_count"), {context_}), b_.getInt64Ty());
    threads = b_.CreateSelect(b_.CreateICmpSGT(threads, i64(0)), threads, i64(1));
    // n / threads, rounded down: the pool splits a range only if it holds two chunks.
    llvm::Value* share = b_.CreateUDiv(i64(n), threads);
    chunk = b_.CreateSelect(b_.CreateICmpSGT(share, chunk), share, chunk);
  }
  llvm::Function* run = m_.abi("tsl_parallel_for");
  propagate(b_.CreateCall(run, {context_, i64(n), chunk, outlined, data}));
}

Leaves::Leaves(const LoopNest& nest, const std::vector<int64_t>& space) {
  for (size_t i = 0; i < nest.leaves.size(); ++i) {
    const auto& [value, a] = nest.leaves[i];
    if (a.scalar) {
      (llvm::isa<llvm::Constant>(a.base) ? constants : scalars).push_back(i);
      continue;
    }
    memory.push_back(i);
    strides.push_back(broadcastStrides(a, dimsOf(value->type()), space));
  }
}

std::vector<llvm::Value*> Leaves::captures(const LoopNest& nest, llvm::Value* out) const {
  std::vector<llvm::Value*> all{out};
  for (size_t i : memory) all.push_back(nest.leaves[i].second.base);
  for (size_t i : scalars) all.push_back(nest.leaves[i].second.base);
  return all;
}

llvm::Value* nestValue(FunctionCodegen& g, llvm::IRBuilder<>& b, const LoopNest& nest, const Leaves& leaves,
                       const std::vector<llvm::Value*>& index, const std::vector<llvm::Value*>& got) {
  std::unordered_map<const ir::Value*, llvm::Value*> values;
  for (size_t k = 0; k < leaves.memory.size(); ++k) {
    const auto& [value, a] = nest.leaves[leaves.memory[k]];
    llvm::Type* t = g.storageType(a.dtype);
    llvm::Value* at = offsetOf(b, index, leaves.strides[k], a.offset);
    values[value] = b.CreateLoad(t, b.CreateInBoundsGEP(t, got[1 + k], at));
  }
  for (size_t k = 0; k < leaves.scalars.size(); ++k)
    values[nest.leaves[leaves.scalars[k]].first] = got[1 + leaves.memory.size() + k];
  for (size_t i : leaves.constants) values[nest.leaves[i].first] = nest.leaves[i].second.base;
  for (const ir::Operation* op : nest.ops) {
    std::vector<llvm::Value*> operands;
    for (const ir::Value* v : op->operands()) operands.push_back(values.at(v));
    values[op->result()] = g.elementwise(b, *op, operands);
  }
  return values.at(nest.result);
}

void FunctionCodegen::emitLoop(const LoopNest& nest, const Access& out) {
  const DType from = nest.result ? nest.result->type().dtype : out.dtype;
  if (nest.space.empty()) { // one element
    const Leaves leaves(nest, {});
    std::vector<llvm::Value*> got = leaves.captures(nest, out.base);
    llvm::Value* v = nest.result ? nestValue(*this, b_, nest, leaves, {}, got) : nest.fill;
    llvm::Type* t = storageType(out.dtype);
    b_.CreateStore(convert(b_, v, from, out.dtype), b_.CreateConstInBoundsGEP1_64(t, out.base, static_cast<uint64_t>(out.offset)));
    return;
  }
  std::vector<int64_t> sizes = nest.space;
  const Leaves leaves0(nest, sizes);
  // Merge axes that every operand (and the output) walks as one.
  std::vector<int64_t> outStrides = out.strides;
  std::vector<std::vector<int64_t>> strides = leaves0.strides;
  std::vector<std::vector<int64_t>*> lists{&outStrides};
  for (auto& s : strides) lists.push_back(&s);
  collapse(sizes, lists);
  Leaves leaves = leaves0;
  leaves.strides = strides;
  if (product(sizes) == 0) return;
  const int64_t inner = product(sizes, 1);
  const std::vector<llvm::Value*> captures = leaves.captures(nest, out.base);
  parallel(sizes[0], std::max<int64_t>(1, 16384 / std::max<int64_t>(inner, 1)), captures,
           [&](llvm::IRBuilder<>& b, llvm::Value* begin, llvm::Value* end, const std::vector<llvm::Value*>& got) {
             forNest(b, sizes, begin, end, [&](llvm::IRBuilder<>& ib, const std::vector<llvm::Value*>& index) {
               // A fill's constant is made here: constants need no capture.
               llvm::Value* v = nest.result ? nestValue(*this, ib, nest, leaves, index, got) : nest.fill;
               llvm::Type* t = storageType(out.dtype);
               llvm::Value* at = offsetOf(ib, index, outStrides, out.offset);
               ib.CreateStore(convert(ib, v, from, out.dtype), ib.CreateInBoundsGEP(t, got[0], at));
             });
           });
}

// ---- Nests from operations ----

LoopNest FunctionCodegen::nestFor(const ir::Operation& op) {
  LoopNest nest;
  const OpInfo& info = opInfo(op.code().kind);
  if (info.has(kView)) {
    nest.leaves.emplace_back(op.result(), viewAccess(op, access(op.operand(0))));
    nest.result = op.result();
    nest.space = dimsOf(op.result()->type());
    return nest;
  }
  for (const ir::Value* v : op.operands())
    if (std::none_of(nest.leaves.begin(), nest.leaves.end(), [&](const auto& l) { return l.first == v; }))
      nest.leaves.emplace_back(v, access(v));
  if (info.has(kLoopReduction)) {
    nest.result = op.operand(0);
    nest.space = dimsOf(op.operand(0)->type());
    return nest;
  }
  nest.ops.push_back(&op);
  nest.result = op.result();
  nest.space = dimsOf(op.result()->type());
  return nest;
}

LoopNest FunctionCodegen::nestForRegion(const ir::Operation& fusedOp, const ir::Operation*& special) {
  LoopNest nest;
  special = nullptr;
  const ir::Block& body = fusedOp.region(0).block();
  std::unordered_map<const ir::Value*, Access> leafAccess;
  for (size_t i = 0; i < body.arguments().size(); ++i) leafAccess[body.argument(i)] = access(fusedOp.operand(i));
  std::unordered_set<const ir::Value*> inNest; // the leaves in nest.leaves (a set: groups are long)
  auto addLeaf = [&](const ir::Value* v, Access a) {
    leafAccess[v] = a;
    inNest.insert(v);
    nest.leaves.emplace_back(v, std::move(a));
  };
  for (const auto& owned : body.ops()) {
    const ir::Operation& op = *owned;
    if (op.code().is(ir::Structural::Yield)) {
      nest.result = op.operand(0);
      break;
    }
    if (op.code().is(ir::Structural::Constant)) {
      TSL_ASSERT(op.result()->type().rank() == 0, "cpu: a tensor constant inside a fused region");
      Access a;
      a.base = constantScalar(op.constant());
      a.dtype = op.result()->type().dtype;
      a.scalar = true;
      addLeaf(op.result(), a);
      continue;
    }
    const OpInfo& info = opInfo(op.code().kind);
    if (info.has(kView) && leafAccess.count(op.operand(0))) {
      addLeaf(op.result(), viewAccess(op, leafAccess.at(op.operand(0))));
      views_[op.result()] = leafAccess.at(op.result());
      continue;
    }
    if (info.has(kLoopReduction) || info.fusion == FusionClass::Contraction) {
      special = &op;
      if (info.fusion == FusionClass::Contraction) { // its result, computed first, feeds the epilogue
        Access a = access(fusedOp.result()); // the fused result's memory (destination() set it)
        a.base = pointer(fusedOp.result());
        addLeaf(op.result(), a);
      }
      continue;
    }
    for (const ir::Value* v : op.operands())
      if (leafAccess.count(v) && inNest.insert(v).second) nest.leaves.emplace_back(v, leafAccess.at(v));
    nest.ops.push_back(&op);
  }
  if (special && opInfo(special->code().kind).has(kLoopReduction)) {
    nest.result = special->operand(0);
    if (std::none_of(nest.leaves.begin(), nest.leaves.end(), [&](const auto& l) { return l.first == nest.result; }) &&
        leafAccess.count(nest.result))
      nest.leaves.emplace_back(nest.result, leafAccess.at(nest.result));
    nest.space = dimsOf(special->operand(0)->type());
  } else {
    nest.space = dimsOf(fusedOp.result()->type());
  }
  // Leaves nothing reads (a view feeding only a reduction's operand is read; an argument
  // only a view reads is not) are dropped: they would be loaded for nothing.
  std::unordered_set<const ir::Value*> used{nest.result};
  for (const ir::Operation* op : nest.ops)
    for (const ir::Value* v : op->operands()) used.insert(v);
  std::erase_if(nest.leaves, [&](const auto& l) { return !used.count(l.first); });
  return nest;
}

void outerLoop(llvm::IRBuilder<>& b, llvm::Value* from, llvm::Value* to,
               const std::function<void(llvm::IRBuilder<>&, llvm::Value*)>& body) {
  forLoop(b, from, to, body, false);
}

} // namespace tsl::compiler::cpu
