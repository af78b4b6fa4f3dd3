// ir/passes/InferTypes.cpp — infer-types: every result type from the table's rules.
//
// Expects: IR whose operands are well formed (types of results may be stale after a
// rewrite). Guarantees: each primitive's result type is its rule's result for its
// operands; an if's results have its yields' types; a while's before region takes its
// initial values' types and its results its condition's forwarded types (swept until
// nothing changes, as types flow around the loop); a call's results are the callee's. A
// rule that rejects its operands is an error at the operation's span.
#include "ir/Pass.h"
#include "ir/TypeRules.h"
#include "runtime/Interrupt.h"

namespace tsl::ir {

namespace {

class InferTypes final : public Pass {
public:
  const char* name() const override { return "infer-types"; }

  bool run(Module& module, PassContext&) override {
    bool changed = false;
    // A while's carried types flow around its loop: sweep until nothing changes.
    for (auto& f : module.functions())
      for (int sweep = 0; sweep < 16 && block(module, f->body()); ++sweep) changed = true;
    return changed;
  }

private:
  static bool setType(Value* v, const Type& t) {
    if (v->type() == t) return false;
    v->setType(t);
    return true;
  }

  static bool block(Module& module, Block& b) {
    bool changed = false;
    for (auto& op : b.ops()) {
      checkInterrupt(); // Ctrl-C stops a long compile (ir/Pass.h)
      if (op->code().is(Structural::While)) // the before region starts from the initial values
        for (size_t i = 0; i < op->operands().size() && i < op->region(0).block().arguments().size(); ++i)
          changed |= setType(op->region(0).block().argument(i), op->operand(i)->type());
      for (auto& region : op->regions()) changed |= block(module, region->block());
      const OpCode code = op->code();
      if (code.primitive) {
        std::vector<Type> operands;
        for (const Value* v : op->operands()) operands.push_back(v->type());
        try {
          changed |= setType(op->result(), inferPrimitiveType(code.kind, op->attrs(), operands));
        } catch (Error& e) {
          e.setSpanIfUnknown(op->span());
          throw;
        }
      } else if (code.is(Structural::If)) {
        const Operation* yield = op->region(0).block().terminator();
        for (size_t i = 0; yield && i < op->resultCount() && i < yield->operands().size(); ++i)
          changed |= setType(op->result(i), yield->operand(i)->type());
      } else if (code.is(Structural::While)) {
        const Operation* condition = op->region(0).block().terminator();
        for (size_t i = 0; condition && i < op->resultCount() && i + 1 < condition->operands().size(); ++i) {
          changed |= setType(op->result(i), condition->operand(i + 1)->type());
          changed |= setType(op->region(1).block().argument(i), condition->operand(i + 1)->type());
        }
      } else if (code.is(Structural::Call)) {
        if (const Function* callee = module.find(op->callee())) {
          const std::vector<Type> results = callee->resultTypes();
          for (size_t i = 0; i < op->resultCount() && i < results.size(); ++i) changed |= setType(op->result(i), results[i]);
        }
      }
    }
    return changed;
  }
};

} // namespace

std::unique_ptr<Pass> createInferTypesPass() { return std::make_unique<InferTypes>(); }

} // namespace tsl::ir
