// ir/passes/FoldConstants.cpp — fold-constants: computes at compile time what it can.
//
// Expects: verified IR. Guarantees: every pure primitive whose operands are all constants
// (or that has none, like arange) and whose result has at most kMaxFoldElements elements
// is replaced by a constant computed with the same eager kernel the program would run
// (so folding never changes a result); an `if` whose condition is a constant is replaced
// by the ops of the branch it takes. An operation whose kernel fails is left alone, so the
// error appears when (and if) the program runs it.
#include "ir/Builder.h"
#include "ir/Pass.h"
#include "runtime/Interrupt.h"

namespace tsl::ir {

namespace {

/// Larger results stay operations: folding them would bloat the IR.
constexpr int64_t kMaxFoldElements = 1024;

class FoldConstants final : public Pass {
public:
  const char* name() const override { return "fold-constants"; }

  bool run(Module& module, PassContext&) override {
    bool changed = false;
    for (auto& f : module.functions()) {
      Replacements replacements;
      changed |= block(f->body(), replacements);
    }
    return changed;
  }

private:
  static bool block(Block& b, Replacements& replacements) {
    bool changed = false;
    for (auto it = b.ops().begin(); it != b.ops().end();) {
      checkInterrupt(); // Ctrl-C stops a long compile (ir/Pass.h)
      Operation& op = **it;
      replacements.apply(op);
      for (auto& region : op.regions()) changed |= block(region->block(), replacements);
      if (op.code().is(Structural::If)) {
        if (const Tensor* cond = constantValue(op.operand(0))) {
          it = takeBranch(b, it, cond->isNonZero() ? 0 : 1, replacements);
          changed = true;
          continue;
        }
      }
      if (Value* folded = fold(b, it, op)) {
        replacements.replace(op.result(), folded);
        it = replacements.erase(b.ops(), it);
        changed = true;
        continue;
      }
      ++it;
    }
    return changed;
  }

  static Value* fold(Block& b, std::list<std::unique_ptr<Operation>>::iterator at, Operation& op) {
    if (!op.code().primitive || !op.isPure()) return nullptr;
    const Type& type = op.result()->type();
    if (!type.concrete() || type.shape().numel() > kMaxFoldElements) return nullptr;
    std::vector<Tensor> inputs;
    for (const Value* v : op.operands()) {
      const Tensor* c = constantValue(v);
      if (!c) return nullptr;
      inputs.push_back(*c);
    }
    Tensor value;
    try {
      value = runOp(op.code().kind, op.attrs(), inputs);
    } catch (const Error&) {
      return nullptr;
    }
    auto constant = std::make_unique<Operation>(OpCode::of(Structural::Constant), op.span());
    constant->setConstant(value.isScalar() ? value.strengthened() : value);
    Value* result = constant->addResult(type);
    result->setName(op.result()->name());
    b.insertBefore(at, std::move(constant));
    return result;
  }

  /// Moves the ops of region `which` of the `if` at `at` before it and drops the `if`.
  static std::list<std::unique_ptr<Operation>>::iterator takeBranch(Block& b,
                                                                   std::list<std::unique_ptr<Operation>>::iterator at,
                                                                   size_t which, Replacements& replacements) {
    Operation& op = **at;
    Block& branch = op.region(which).block();
    Operation* yield = branch.terminator();
    std::vector<Value*> yielded = yield->operands();
    branch.ops().pop_back(); // the yield
    while (!branch.ops().empty()) {
      std::unique_ptr<Operation> inner = std::move(branch.ops().front());
      branch.ops().pop_front();
      b.insertBefore(at, std::move(inner));
    }
    for (size_t i = 0; i < op.resultCount(); ++i) replacements.replace(op.result(i), yielded[i]);
    return replacements.erase(b.ops(), at);
  }
};

} // namespace

std::unique_ptr<Pass> createFoldConstantsPass() { return std::make_unique<FoldConstants>(); }

} // namespace tsl::ir
