// compiler/cpu/Codegen.cpp — the module, the function skeleton, control flow and calls.
#include "compiler/cpu/FunctionCodegen.h"

#include "ir/Printer.h"
#include "runtime/Interrupt.h"
#include "runtime/Layout.h"

#include <llvm/IR/MDBuilder.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Support/raw_ostream.h>

namespace tsl::compiler::cpu {

namespace {

using ir::Home;
using ir::Operation;
using ir::Structural;

int64_t bytesOf(const ir::Type& t) { return t.bytes(); }

/// The context's layout (tsl_abi.h): interrupt, site, pad, detail[2], host.
llvm::StructType* contextType(llvm::LLVMContext& c) {
  llvm::Type* ptr = llvm::PointerType::getUnqual(c);
  llvm::Type* i32 = llvm::Type::getInt32Ty(c);
  return llvm::StructType::get(c, {ptr, i32, i32, llvm::ArrayType::get(llvm::Type::getInt64Ty(c), 2), ptr});
}

/// Every shape a function handles must be known: the arena is laid out at compile time.
void requireConcrete(const ir::Function& f) {
  const auto check = [&](const ir::Value* v, const Span& span) {
    if (!v->type().concrete())
      throw Error(ErrorKind::Value,
                  cat("cpu: ", v->type().str(),
                      " has a symbolic size; native code is compiled for concrete shapes (give sizes in the signature)"),
                  span);
  };
  for (const auto& arg : f.body().arguments()) check(arg.get(), f.span());
  ir::walk(f.body(), [&](Operation& op) {
    for (size_t i = 0; i < op.resultCount(); ++i) check(op.result(i), op.span());
  });
}

} // namespace

// ---- The module ----

ModuleCodegen::ModuleCodegen(const ir::Module& module, llvm::Module& out, const CodegenOptions& options)
    : ir(module), out(out), options(options), library(out, options.aot) {}

llvm::Function* ModuleCodegen::function(const ir::Function& f) {
  if (auto it = functions_.find(&f); it != functions_.end()) return it->second;
  TSL_ASSERT(f.plan(), "cpu: @", f.name(), " has no memory plan");
  requireConcrete(f);
  llvm::LLVMContext& c = out.getContext();
  llvm::Type* ptr = llvm::PointerType::getUnqual(c);
  auto* type = llvm::FunctionType::get(llvm::Type::getInt32Ty(c), {ptr, ptr}, false);
  const bool entry = functions_.empty();
  const std::string name = entry ? options.symbol : cat(options.symbol, ".", f.name());
  llvm::Function* fn = llvm::Function::Create(
      type, entry ? llvm::Function::ExternalLinkage : llvm::Function::InternalLinkage, name, out);
  fn->addFnAttr("tsl-generated");
  fn->addFnAttr(llvm::Attribute::NoUnwind);
  fn->getArg(0)->setName("buffers");
  fn->getArg(1)->setName("context");
  // The array of buffer pointers is only read, and nothing else points at it.
  fn->addParamAttr(0, llvm::Attribute::NoAlias);
  fn->addParamAttr(0, llvm::Attribute::ReadOnly);
  fn->addParamAttr(0, llvm::Attribute::NoCapture);
  fn->addParamAttr(1, llvm::Attribute::NoCapture);
  functions_[&f] = fn;
  FunctionCodegen(*this, f, fn).run();
  return fn;
}

llvm::Function* ModuleCodegen::abi(const char* name) {
  if (llvm::Function* declared = out.getFunction(name)) return declared;
  llvm::LLVMContext& c = out.getContext();
  llvm::Type* ptr = llvm::PointerType::getUnqual(c);
  llvm::Type* i32 = llvm::Type::getInt32Ty(c);
  llvm::Type* i64 = llvm::Type::getInt64Ty(c);
  const std::string n = name;
  llvm::FunctionType* type = nullptr;
  if (n == "tsl_parallel_for") type = llvm::FunctionType::get(i32, {ptr, i64, i64, ptr, ptr}, false);
  else if (n == "tsl_thread_count") type = llvm::FunctionType::get(i32, {ptr}, false);
  else if (n == "tsl_run_kernel") type = llvm::FunctionType::get(i32, {ptr, i32, ptr, ptr}, false);
  else if (n == "tsl_tape_new") type = llvm::FunctionType::get(i32, {ptr, ptr}, false);
  else if (n == "tsl_tape_push" || n == "tsl_tape_pop") type = llvm::FunctionType::get(i32, {ptr, i64, i32, ptr, ptr}, false);
  TSL_ASSERT(type, "cpu: no host function ", n);
  llvm::Function* fn = llvm::Function::Create(type, llvm::Function::ExternalLinkage, n, out);
  fn->addFnAttr(llvm::Attribute::NoUnwind);
  return fn;
}

llvm::Constant* ModuleCodegen::constantData(const Tensor& t, Layout layout) {
  llvm::LLVMContext& c = out.getContext();
  // Row-major elements, or the physical buffer of another layout, padding included: code
  // reading a value of a blocked type reads that buffer (a constant's logical elements
  // there would be read at the wrong offsets).
  const bool rowMajor = layout == Layout::RowMajor;
  const Tensor data = rowMajor ? contiguous(t) : denseInLayout(t, layout);
  llvm::Type* element = nullptr;
  switch (dtypeSize(t.dtype())) {
  case 1: element = llvm::Type::getInt8Ty(c); break;
  case 2: element = llvm::Type::getInt16Ty(c); break;
  case 4: element = t.dtype() == DType::F32 ? llvm::Type::getFloatTy(c) : llvm::Type::getInt32Ty(c); break;
  default: element = t.dtype() == DType::F64 ? llvm::Type::getDoubleTy(c) : llvm::Type::getInt64Ty(c); break;
  }
  const size_t bytes = rowMajor ? static_cast<size_t>(data.numel()) * data.elementSize()
                                : static_cast<size_t>(physicalBytes(layout, t.shape(), t.dtype()));
  const char* start = rowMajor ? data.data() : data.physicalData();
  llvm::Constant* init =
      bytes == 0 ? llvm::ConstantAggregateZero::get(llvm::ArrayType::get(element, 0))
                 : llvm::ConstantDataArray::getRaw(llvm::StringRef(start, bytes), bytes / data.elementSize(), element);
  auto* global = new llvm::GlobalVariable(out, init->getType(), true, llvm::GlobalValue::PrivateLinkage, init,
                                          cat(options.symbol, ".constant"));
  global->setUnnamedAddr(llvm::GlobalValue::UnnamedAddr::Global);
  global->setAlignment(llvm::Align(ir::kArenaAlignment));
  return global;
}

int64_t ModuleCodegen::frameBytes(const ir::Function& f) {
  if (auto it = frames_.find(&f); it != frames_.end()) return it->second;
  if (!sizing_.insert(&f).second)
    throw Error(ErrorKind::Value,
                cat("cpu: @", f.name(), " calls itself; recursive IR functions cannot be compiled for :cpu (use :interp)"),
                f.span());
  TSL_ASSERT(f.plan(), "cpu: @", f.name(), " has no memory plan");
  const int64_t own = f.plan()->arenaBytes;
  int64_t callees = 0;
  ir::walk(f.body(), [&](Operation& op) {
    if (!op.code().is(Structural::Call)) return;
    const ir::Function* callee = ir.find(op.callee());
    TSL_ASSERT(callee, "cpu: call of the unknown function @", op.callee());
    callees = std::max(callees, frameBytes(*callee));
  });
  sizing_.erase(&f);
  return frames_[&f] = own + callees;
}

Program generate(const ir::Module& module, const ir::Function& entry, llvm::Module& out, const CodegenOptions& options) {
  ModuleCodegen m(module, out, options);
  m.program.entry = options.symbol;
  m.program.frameBytes = m.frameBytes(entry);
  m.function(entry);
  m.library.link();
  std::string problems;
  llvm::raw_string_ostream stream(problems);
  // Function by function, polling for Ctrl-C between them: a traced program of 300,000
  // operations is over a thousand functions, and verifying them at once took a good part
  // of a second without a poll. The whole module (which checks every function again, and
  // then its globals) only when it is small.
  size_t functions = 0;
  for (const llvm::Function& f : out) {
    if (f.isDeclaration()) continue;
    if ((++functions & 15) == 0) checkInterrupt();
    if (llvm::verifyFunction(f, &stream)) fail(ErrorKind::Internal, "cpu: generated invalid LLVM IR: ", stream.str());
  }
  if (functions <= 64 && llvm::verifyModule(out, &stream))
    fail(ErrorKind::Internal, "cpu: generated invalid LLVM IR: ", stream.str());
  return std::move(m.program);
}

// ---- One function ----

FunctionCodegen::FunctionCodegen(ModuleCodegen& module, const ir::Function& f, llvm::Function* fn)
    : m_(module), f_(f), plan_(*f.plan()), fn_(fn), b_(fn->getContext()) {}

llvm::AllocaInst* FunctionCodegen::slot(llvm::Type* type, const char* name) {
  llvm::IRBuilder<> at(entry_, entry_->begin());
  return at.CreateAlloca(type, nullptr, name);
}

namespace {

/// A function body longer than this (operations, counting those in regions but not in
/// fused groups, which are functions of their own) is emitted in pieces of about this
/// size. LLVM's optimiser and code generator are superlinear in a function's (and a
/// block's) length: a traced program of 300,000 scalar operations is one block.
constexpr size_t kPieceOps = 256;

size_t weight(const Operation& op) {
  size_t w = 1;
  if (!op.code().is(Structural::Fused))
    for (const auto& region : op.regions())
      for (const auto& inner : region->block().ops()) w += weight(*inner);
  return w;
}

} // namespace

void FunctionCodegen::run() {
  llvm::LLVMContext& c = context();
  entry_ = llvm::BasicBlock::Create(c, "entry", fn_);
  b_.SetInsertPoint(entry_);
  buffers_ = fn_->getArg(0);
  context_ = fn_->getArg(1);
  const ir::Operation* ret = f_.body().terminator();
  TSL_ASSERT(ret && ret->code().is(Structural::Return), "cpu: @", f_.name(), " does not end in return");
  const auto& params = f_.body().arguments();
  const size_t inputs = params.size(), results = ret->operands().size();
  for (size_t i = 0; i < inputs; ++i) {
    const ir::Value* p = params[i].get();
    llvm::Value* at = buffer(i);
    values_[p] = p->type().rank() == 0 ? b_.CreateLoad(storageType(p->type().dtype), at, p->name()) : at;
  }
  firstOutput_ = inputs;
  arena_ = buffer(inputs + results);
  arena_->setName("arena");
  for (size_t r = results; r-- > 0;) {
    const ir::Placement* p = plan_.find(ret->operand(r));
    if (p && p->home == Home::Result) outputIndex_[ret->operand(r)] = r; // the first return of it
  }
  std::vector<std::vector<const Operation*>> pieces(1);
  size_t last = 0;
  for (const auto& op : f_.body().ops()) {
    if (op.get() == ret) break;
    const size_t w = weight(*op);
    if (last > 0 && last + w > kPieceOps) {
      pieces.emplace_back();
      last = 0;
    }
    pieces.back().push_back(op.get());
    last += w;
  }
  if (pieces.size() > 1) {
    for (size_t i = 0; i < inputs; ++i) paramIndex_[params[i].get()] = i;
    return emitPieces(pieces, *ret);
  }
  block(f_.body());
  returnOp(*ret);
}

// ---- Pieces ----
//
// A long body becomes functions `i32 piece(buffers, context, spill)` that the function
// calls in order, returning as soon as one fails. Tensors need nothing passed: each piece
// finds their memory through the memory plan, as the function itself does. Scalars that
// one piece computes and a later one (or the return) reads go through the function's
// spill array, one 8-byte slot each; constants are LLVM constants, valid everywhere.

void FunctionCodegen::emitPieces(const std::vector<std::vector<const Operation*>>& pieces, const Operation& ret) {
  std::unordered_map<const ir::Value*, size_t> pieceOf; // top-level results: the piece computing them
  for (size_t p = 0; p < pieces.size(); ++p)
    for (const Operation* op : pieces[p])
      if (!op->code().is(Structural::Constant))
        for (size_t i = 0; i < op->resultCount(); ++i) pieceOf[op->result(i)] = p;
  auto read = [&](const ir::Value* v, size_t by) {
    auto it = pieceOf.find(v);
    if (it != pieceOf.end() && it->second < by && v->type().rank() == 0 && !spilled_.count(v))
      spilled_.emplace(v, Spilled{spilled_.size()});
  };
  for (size_t p = 0; p < pieces.size(); ++p)
    for (const Operation* op : pieces[p]) {
      for (const ir::Value* v : op->operands()) read(v, p);
      for (const auto& region : op->regions())
        ir::walk(region->block(), [&](Operation& inner) {
          for (const ir::Value* v : inner.operands()) read(v, p);
        });
    }
  for (const ir::Value* v : ret.operands()) read(v, pieces.size());

  llvm::LLVMContext& c = context();
  llvm::Type* ptr = llvm::PointerType::getUnqual(c);
  llvm::AllocaInst* spill = slot(llvm::ArrayType::get(b_.getInt64Ty(), std::max<size_t>(spilled_.size(), 1)), "spilled");
  auto* type = llvm::FunctionType::get(b_.getInt32Ty(), {ptr, ptr, ptr}, false);
  llvm::Function* const whole = fn_;
  llvm::BasicBlock* const wholeEntry = entry_;
  llvm::Value* const wholeBuffers = buffers_;
  llvm::Value* const wholeContext = context_;
  llvm::Value* const wholeArena = arena_;
  // Values of another function are not valid here: keep constants, find the rest again.
  // What a piece put in values_ are its operations' results (values inside their regions
  // are never read outside them) and what it recovered: only those are looked at.
  const std::vector<const Operation*>* done = nullptr;
  auto forget = [&] {
    auto drop = [&](const ir::Value* v) {
      if (auto it = values_.find(v); it != values_.end() && !llvm::isa<llvm::Constant>(it->second)) values_.erase(it);
    };
    if (done)
      for (const Operation* op : *done)
        for (size_t i = 0; i < op->resultCount(); ++i) drop(op->result(i));
    for (const ir::Value* v : recovered_) drop(v);
    recovered_.clear();
    slots_.clear();
    views_.clear();
  };
  // Before the first piece: the parameters' values (the rest is constants).
  for (const auto& [v, i] : paramIndex_) values_.erase(v);
  inPieces_ = true;
  for (const auto& piece : pieces) {
    checkInterrupt(); // Ctrl-C stops a long compile
    llvm::Function* fn = llvm::Function::Create(type, llvm::Function::InternalLinkage, cat(whole->getName().str(), ".piece"), m_.out);
    fn->addFnAttr("tsl-generated");
    fn->addFnAttr(llvm::Attribute::NoUnwind);
    fn->addFnAttr(llvm::Attribute::NoInline); // bounded pieces are the point
    for (unsigned i = 0; i < 3; ++i) fn->addParamAttr(i, llvm::Attribute::NoCapture);
    propagate(b_.CreateCall(fn, {wholeBuffers, wholeContext, spill}));
    llvm::BasicBlock* resume = b_.GetInsertBlock();

    fn_ = fn;
    entry_ = llvm::BasicBlock::Create(c, "entry", fn);
    b_.SetInsertPoint(entry_);
    buffers_ = fn->getArg(0);
    context_ = fn->getArg(1);
    spill_ = fn->getArg(2);
    recoverAt_ = entry_;
    arena_ = buffer(firstOutput_ + ret.operands().size());
    forget();
    for (const Operation* op : piece) {
      checkInterrupt();
      operation(*op);
    }
    for (const Operation* op : piece) // what later pieces read of this one
      for (size_t i = 0; i < op->resultCount(); ++i)
        if (auto it = spilled_.find(op->result(i)); it != spilled_.end()) {
          llvm::Value* x = scalar(op->result(i));
          it->second.type = x->getType();
          b_.CreateStore(x, b_.CreateConstInBoundsGEP1_64(b_.getInt64Ty(), spill_, it->second.index));
        }
    b_.CreateRet(i32(0));
    done = &piece;

    fn_ = whole;
    entry_ = wholeEntry;
    buffers_ = wholeBuffers;
    context_ = wholeContext;
    arena_ = wholeArena;
    b_.SetInsertPoint(resume);
  }
  spill_ = spill;
  recoverAt_ = nullptr;
  forget();
  returnOp(ret);
}

llvm::Value* FunctionCodegen::recover(const ir::Value* v) {
  if (!inPieces_) return nullptr;
  recovered_.push_back(v);
  // In a piece: made in its entry block, which dominates every use (the first may be
  // inside an if). After the pieces, the return reads them where it is, after the calls.
  llvm::IRBuilderBase::InsertPointGuard guard(b_);
  if (recoverAt_) {
    if (llvm::Instruction* end = recoverAt_->getTerminator()) b_.SetInsertPoint(end);
    else b_.SetInsertPoint(recoverAt_);
  }
  if (auto param = paramIndex_.find(v); param != paramIndex_.end()) {
    llvm::Value* at = buffer(param->second);
    return values_[v] = v->type().rank() == 0 ? b_.CreateLoad(storageType(v->type().dtype), at) : at;
  }
  if (v->type().rank() == 0) {
    auto it = spilled_.find(v);
    if (it == spilled_.end() || !it->second.type) return nullptr;
    return values_[v] = b_.CreateLoad(it->second.type,
                                      b_.CreateConstInBoundsGEP1_64(b_.getInt64Ty(), spill_, it->second.index));
  }
  const ir::Placement* p = plan_.find(v);
  if (!p || (p->home != Home::Arena && p->home != Home::Result && p->home != Home::Shared)) return nullptr;
  return destination(v);
}

void FunctionCodegen::block(const ir::Block& block) {
  for (const auto& op : block.ops()) {
    checkInterrupt(); // Ctrl-C stops a long compile
    if (!op->code().isTerminator()) operation(*op);
  }
}

void FunctionCodegen::operation(const Operation& op) {
  const ir::OpCode code = op.code();
  if (code.primitive) return primitive(op);
  switch (code.structural) {
  case Structural::Constant:
    values_[op.result()] = op.result()->type().rank() == 0 ? static_cast<llvm::Value*>(constantScalar(op.constant()))
                                                           : m_.constantData(op.constant(), op.result()->type().layout);
    return;
  case Structural::If: return ifOp(op);
  case Structural::While: return whileOp(op);
  case Structural::Call: return callOp(op);
  case Structural::TapeNew:
  case Structural::TapePush:
  case Structural::TapePop: return tapeOp(op);
  case Structural::Fused: return fused(op);
  case Structural::Raise: return raiseOp(op);
  default: fail(ErrorKind::Internal, "cpu: unexpected ", code.name());
  }
}

// ---- Values ----

llvm::Value* FunctionCodegen::scalar(const ir::Value* v) {
  auto it = values_.find(v);
  if (it != values_.end()) return it->second;
  llvm::Value* again = recover(v);
  TSL_ASSERT(again, "cpu: a scalar used before it is computed");
  return again;
}

llvm::Value* FunctionCodegen::pointer(const ir::Value* v) {
  if (v->type().rank() == 0) {
    llvm::Value* x = scalar(v);
    llvm::AllocaInst* spill = slot(x->getType(), "spill");
    b_.CreateStore(x, spill);
    return spill;
  }
  auto it = values_.find(v);
  if (it != values_.end()) return it->second;
  llvm::Value* again = recover(v);
  TSL_ASSERT(again, "cpu: a tensor used before it is computed");
  return again;
}

llvm::Value* FunctionCodegen::destination(const ir::Value* v) {
  if (v->type().rank() == 0) {
    llvm::AllocaInst* out = slot(storageType(v->type().dtype), "scalar");
    slots_[v] = out;
    return out;
  }
  if (auto it = values_.find(v); it != values_.end()) return it->second; // region arguments, if/while results
  const ir::Placement* p = plan_.find(v);
  TSL_ASSERT(p, "cpu: a value without a place in the memory plan");
  llvm::Value* at = nullptr;
  switch (p->home) {
  case Home::Arena: at = b_.CreateConstInBoundsGEP1_64(b_.getInt8Ty(), arena_, static_cast<uint64_t>(p->offset)); break;
  case Home::Result: at = buffer(firstOutput_ + outputIndex_.at(v)); break;
  case Home::Shared: at = pointer(p->shares); break;
  default: fail(ErrorKind::Internal, "cpu: a computed value placed as ", ir::homeName(p->home));
  }
  values_[v] = at;
  return at;
}

void FunctionCodegen::finishScalar(const ir::Value* v) {
  llvm::AllocaInst* at = slots_.at(v);
  values_[v] = b_.CreateLoad(at->getAllocatedType(), at);
}

llvm::AllocaInst* FunctionCodegen::scalarSlot(const ir::Value* v) {
  if (auto it = slots_.find(v); it != slots_.end()) return it->second;
  return slots_[v] = slot(storageType(v->type().dtype), "carried");
}

Access FunctionCodegen::access(const ir::Value* v) {
  if (auto view = views_.find(v); view != views_.end()) return view->second;
  Access a;
  a.dtype = v->type().dtype;
  if (v->type().rank() == 0) {
    a.base = scalar(v);
    a.scalar = true;
    return a;
  }
  a.base = pointer(v);
  const Shape shape = v->type().shape();
  a.strides.resize(static_cast<size_t>(shape.rank()));
  int64_t step = 1;
  for (int d = shape.rank(); d-- > 0;) {
    a.strides[static_cast<size_t>(d)] = step;
    step *= shape[d];
  }
  return a;
}

// ---- Errors, interrupts, memory ----

int FunctionCodegen::checkSite(ErrorKind kind, std::string message, const Span& span) {
  m_.program.checks.push_back({kind, std::move(message), span});
  return static_cast<int>(m_.program.checks.size() - 1);
}

void FunctionCodegen::check(llvm::Value* failed, int site, llvm::Value* detail0, llvm::Value* detail1) {
  llvm::LLVMContext& c = context();
  llvm::BasicBlock* bad = llvm::BasicBlock::Create(c, "check.failed", fn_);
  llvm::BasicBlock* good = llvm::BasicBlock::Create(c, "check.ok", fn_);
  b_.CreateCondBr(failed, bad, good, llvm::MDBuilder(c).createBranchWeights(1, 1 << 20));
  b_.SetInsertPoint(bad);
  llvm::StructType* ctx = contextType(c);
  b_.CreateStore(i32(site), b_.CreateStructGEP(ctx, context_, 1));
  llvm::Value* details = b_.CreateStructGEP(ctx, context_, 3);
  b_.CreateStore(b_.CreateSExtOrTrunc(detail0, b_.getInt64Ty()), b_.CreateConstInBoundsGEP2_32(ctx->getElementType(3), details, 0, 0));
  b_.CreateStore(b_.CreateSExtOrTrunc(detail1, b_.getInt64Ty()), b_.CreateConstInBoundsGEP2_32(ctx->getElementType(3), details, 0, 1));
  b_.CreateRet(i32(1)); // TSL_ERROR_CHECK
  b_.SetInsertPoint(good);
}

void FunctionCodegen::propagate(llvm::Value* code) {
  llvm::LLVMContext& c = context();
  llvm::BasicBlock* bad = llvm::BasicBlock::Create(c, "failed", fn_);
  llvm::BasicBlock* good = llvm::BasicBlock::Create(c, "ok", fn_);
  b_.CreateCondBr(b_.CreateICmpNE(code, i32(0)), bad, good, llvm::MDBuilder(c).createBranchWeights(1, 1 << 20));
  b_.SetInsertPoint(bad);
  b_.CreateRet(code);
  b_.SetInsertPoint(good);
}

llvm::Value* FunctionCodegen::interruptFlag() {
  llvm::Type* ptr = llvm::PointerType::getUnqual(context());
  return b_.CreateLoad(ptr, b_.CreateStructGEP(contextType(context()), context_, 0), "interrupt");
}

void FunctionCodegen::pollInterrupt() {
  llvm::BasicBlock* stop = llvm::BasicBlock::Create(context(), "interrupted", fn_);
  llvm::BasicBlock* go = llvm::BasicBlock::Create(context(), "interrupt.clear", fn_);
  b_.CreateCondBr(interruptSet(b_, interruptFlag()), stop, go,
                  llvm::MDBuilder(context()).createBranchWeights(1, 1 << 20));
  b_.SetInsertPoint(stop);
  b_.CreateRet(i32(2)); // TSL_ERROR_INTERRUPTED
  b_.SetInsertPoint(go);
}

llvm::Value* interruptSet(llvm::IRBuilder<>& b, llvm::Value* flag) {
  llvm::Function* fn = b.GetInsertBlock()->getParent();
  llvm::LLVMContext& c = fn->getContext();
  llvm::BasicBlock* before = b.GetInsertBlock();
  llvm::BasicBlock* read = llvm::BasicBlock::Create(c, "interrupt.read", fn);
  llvm::BasicBlock* checked = llvm::BasicBlock::Create(c, "interrupt.checked", fn);
  b.CreateCondBr(b.CreateIsNull(flag), checked, read);
  b.SetInsertPoint(read);
  llvm::LoadInst* value = b.CreateLoad(b.getInt8Ty(), flag);
  value->setAtomic(llvm::AtomicOrdering::Monotonic);
  value->setVolatile(true);
  llvm::Value* set = b.CreateICmpNE(value, b.getInt8(0));
  b.CreateBr(checked);
  b.SetInsertPoint(checked);
  llvm::PHINode* result = b.CreatePHI(b.getInt1Ty(), 2);
  result->addIncoming(b.getFalse(), before);
  result->addIncoming(set, read);
  return result;
}

void FunctionCodegen::copyBytes(llvm::Value* dst, llvm::Value* src, int64_t bytes) {
  if (dst == src || bytes == 0) return;
  b_.CreateMemMove(dst, llvm::MaybeAlign(1), src, llvm::MaybeAlign(1), static_cast<uint64_t>(bytes));
}

llvm::Value* FunctionCodegen::array(const std::vector<llvm::Value*>& values, llvm::Type* type) {
  llvm::ArrayType* at = llvm::ArrayType::get(type, std::max<size_t>(values.size(), 1));
  llvm::AllocaInst* out = slot(at, "args");
  for (size_t i = 0; i < values.size(); ++i) b_.CreateStore(values[i], b_.CreateConstInBoundsGEP2_32(at, out, 0, static_cast<unsigned>(i)));
  return out;
}

// ---- Control flow ----

void FunctionCodegen::assign(const std::vector<const ir::Value*>& targets, const std::vector<const ir::Value*>& sources) {
  TSL_ASSERT(targets.size() == sources.size(), "cpu: a terminator hands on ", sources.size(), " values to ",
             targets.size());
  // Read every scalar before writing any (a swap of two carried values).
  std::vector<llvm::Value*> scalars(sources.size(), nullptr);
  for (size_t i = 0; i < sources.size(); ++i)
    if (targets[i]->type().rank() == 0) scalars[i] = scalar(sources[i]);
  for (size_t i = 0; i < sources.size(); ++i) {
    if (scalars[i]) b_.CreateStore(scalars[i], scalarSlot(targets[i]));
    else copyBytes(destination(targets[i]), pointer(sources[i]), bytesOf(targets[i]->type()));
  }
}

void FunctionCodegen::ifOp(const Operation& op) {
  llvm::LLVMContext& c = context();
  llvm::Value* condition = toCompute(b_, scalar(op.operand(0)), op.operand(0)->type().dtype);
  std::vector<const ir::Value*> results;
  for (size_t i = 0; i < op.resultCount(); ++i) {
    results.push_back(op.result(i));
    if (op.result(i)->type().rank() == 0) scalarSlot(op.result(i));
    else destination(op.result(i));
  }
  llvm::BasicBlock* thenBlock = llvm::BasicBlock::Create(c, "then", fn_);
  llvm::BasicBlock* elseBlock = llvm::BasicBlock::Create(c, "else", fn_);
  llvm::BasicBlock* merge = llvm::BasicBlock::Create(c, "endif", fn_);
  b_.CreateCondBr(condition, thenBlock, elseBlock);
  for (int side = 0; side < 2; ++side) {
    b_.SetInsertPoint(side == 0 ? thenBlock : elseBlock);
    const ir::Block& region = op.region(static_cast<size_t>(side)).block();
    block(region);
    const Operation* yield = region.terminator();
    assign(results, {yield->operands().begin(), yield->operands().end()});
    b_.CreateBr(merge);
  }
  b_.SetInsertPoint(merge);
  for (const ir::Value* r : results)
    if (r->type().rank() == 0) values_[r] = b_.CreateLoad(slots_.at(r)->getAllocatedType(), slots_.at(r));
}

void FunctionCodegen::whileOp(const Operation& op) {
  llvm::LLVMContext& c = context();
  const ir::Block& before = op.region(0).block();
  const ir::Block& after = op.region(1).block();
  auto values = [](const std::vector<std::unique_ptr<ir::Value>>& owned) {
    std::vector<const ir::Value*> out;
    for (const auto& v : owned) out.push_back(v.get());
    return out;
  };
  const std::vector<const ir::Value*> beforeArgs = values(before.arguments()), afterArgs = values(after.arguments());
  std::vector<const ir::Value*> results;
  for (size_t i = 0; i < op.resultCount(); ++i) results.push_back(op.result(i));
  // Homes of everything carried: scalars in stack slots, tensors in the arena.
  for (const std::vector<const ir::Value*>* list :
       std::initializer_list<const std::vector<const ir::Value*>*>{&beforeArgs, &afterArgs, &results})
    for (const ir::Value* v : *list) {
      if (v->type().rank() == 0) scalarSlot(v);
      else destination(v);
    }
  assign(beforeArgs, {op.operands().begin(), op.operands().end()});
  llvm::BasicBlock* header = llvm::BasicBlock::Create(c, "while.before", fn_);
  llvm::BasicBlock* body = llvm::BasicBlock::Create(c, "while.after", fn_);
  llvm::BasicBlock* leaving = llvm::BasicBlock::Create(c, "while.leave", fn_);
  llvm::BasicBlock* exit = llvm::BasicBlock::Create(c, "while.end", fn_);
  b_.CreateBr(header);

  b_.SetInsertPoint(header);
  auto loadScalars = [&](const std::vector<const ir::Value*>& args) {
    for (const ir::Value* v : args)
      if (v->type().rank() == 0) values_[v] = b_.CreateLoad(slots_.at(v)->getAllocatedType(), slots_.at(v));
  };
  loadScalars(beforeArgs);
  block(before);
  const Operation* condition = before.terminator();
  llvm::Value* more = toCompute(b_, scalar(condition->operand(0)), condition->operand(0)->type().dtype);
  const std::vector<const ir::Value*> forwarded(condition->operands().begin() + 1, condition->operands().end());
  b_.CreateCondBr(more, body, leaving);

  b_.SetInsertPoint(body);
  assign(afterArgs, forwarded);
  loadScalars(afterArgs);
  block(after);
  const Operation* yield = after.terminator();
  assign(beforeArgs, {yield->operands().begin(), yield->operands().end()});
  pollInterrupt(); // a long loop stops on Ctrl-C
  b_.CreateBr(header);

  b_.SetInsertPoint(leaving);
  assign(results, forwarded);
  b_.CreateBr(exit);
  b_.SetInsertPoint(exit);
  loadScalars(results);
}

void FunctionCodegen::callOp(const Operation& op) {
  const ir::Function* callee = m_.ir.find(op.callee());
  TSL_ASSERT(callee, "cpu: call of the unknown function @", op.callee());
  llvm::Function* fn = m_.function(*callee);
  llvm::Type* ptr = llvm::PointerType::getUnqual(context());
  std::vector<llvm::Value*> buffers;
  for (const ir::Value* v : op.operands()) buffers.push_back(pointer(v));
  for (size_t i = 0; i < op.resultCount(); ++i) buffers.push_back(destination(op.result(i)));
  // The callee's frame follows this function's own arena.
  buffers.push_back(b_.CreateConstInBoundsGEP1_64(b_.getInt8Ty(), arena_, static_cast<uint64_t>(plan_.arenaBytes)));
  propagate(b_.CreateCall(fn, {array(buffers, ptr), context_}));
  for (size_t i = 0; i < op.resultCount(); ++i)
    if (op.result(i)->type().rank() == 0) finishScalar(op.result(i));
}

void FunctionCodegen::tapeOp(const Operation& op) {
  llvm::Type* ptr = llvm::PointerType::getUnqual(context());
  if (op.code().is(Structural::TapeNew)) {
    llvm::AllocaInst* handle = slot(b_.getInt64Ty(), "tape");
    propagate(b_.CreateCall(m_.abi("tsl_tape_new"), {context_, handle}));
    values_[op.result()] = b_.CreateLoad(b_.getInt64Ty(), handle);
    return;
  }
  llvm::Value* tape = scalar(op.operand(0));
  std::vector<llvm::Value*> data, bytes;
  if (op.code().is(Structural::TapePush)) {
    for (size_t i = 1; i < op.operands().size(); ++i) {
      data.push_back(pointer(op.operand(i)));
      bytes.push_back(i64(bytesOf(op.operand(i)->type())));
    }
  } else {
    for (size_t i = 1; i < op.resultCount(); ++i) {
      data.push_back(destination(op.result(i)));
      bytes.push_back(i64(bytesOf(op.result(i)->type())));
    }
  }
  const char* host = op.code().is(Structural::TapePush) ? "tsl_tape_push" : "tsl_tape_pop";
  propagate(b_.CreateCall(m_.abi(host), {context_, tape, i32(static_cast<int32_t>(data.size())), array(data, ptr),
                                         array(bytes, b_.getInt64Ty())}));
  values_[op.result(0)] = tape;
  if (op.code().is(Structural::TapePop))
    for (size_t i = 1; i < op.resultCount(); ++i)
      if (op.result(i)->type().rank() == 0) finishScalar(op.result(i));
}

void FunctionCodegen::raiseOp(const Operation& op) {
  const int site = checkSite(op.raiseKind(), op.message(), op.span());
  m_.program.checks[static_cast<size_t>(site)].literal = true;
  check(b_.getTrue(), site, i64(0), i64(0));
}

llvm::Value* FunctionCodegen::buffer(size_t i) {
  // Loads of the buffer pointers never change: marked invariant, they stay out of the
  // code generator's chains of memory operations. Output pointers are loaded where they
  // are used, so that a function of many results does not keep them all live at once.
  llvm::Type* ptr = llvm::PointerType::getUnqual(context());
  llvm::LoadInst* load = b_.CreateLoad(ptr, b_.CreateConstInBoundsGEP1_64(ptr, buffers_, i), cat("buffer", i));
  load->setMetadata(llvm::LLVMContext::MD_invariant_load, llvm::MDNode::get(context(), {}));
  return load;
}

void FunctionCodegen::returnOp(const Operation& ret) {
  for (size_t r = 0; r < ret.operands().size(); ++r) {
    const ir::Value* v = ret.operand(r);
    if (auto home = outputIndex_.find(v); home != outputIndex_.end() && home->second == r) continue; // there already
    if (v->type().rank() == 0) b_.CreateStore(scalar(v), buffer(firstOutput_ + r));
    else copyBytes(buffer(firstOutput_ + r), pointer(v), bytesOf(v->type()));
  }
  b_.CreateRet(i32(0));
}

} // namespace tsl::compiler::cpu
