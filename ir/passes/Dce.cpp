// ir/passes/Dce.cpp — dce: removes operations whose results nobody uses.
//
// Expects: verified IR. Guarantees: every remaining pure operation (primitives, constants,
// calls, and ifs and whiles whose regions are pure) has a used result, except one that
// may fail on its operands' values (mayFail: cholesky, solve, take...), which stays so that
// compiled code raises the error eager code raises — of the parts of one decomposition
// (svd's u, s and vh: one kind on the same operands), which check the same thing, one is
// enough; terminators and side-effecting operations stay. Sweeps each block backwards, forgetting the uses of what
// it removes, so a chain of dead operations goes in one sweep; nested regions are cleaned
// the same way.
#include "ir/Pass.h"
#include "runtime/Interrupt.h"

namespace tsl::ir {

namespace {

class Dce final : public Pass {
public:
  const char* name() const override { return "dce"; }

  bool run(Module& module, PassContext&) override {
    bool changed = false;
    for (auto& f : module.functions()) {
      auto uses = countUses(f->body());
      for (bool again = true; again;) {
        again = sweep(module, f->body(), uses);
        changed |= again;
      }
    }
    return changed;
  }

private:
  /// Removes dead operations, last first: removing one forgets the uses it made, so the
  /// producers it alone used die in the same sweep (one sweep, not one per link of a chain).
  static bool sweep(const Module& module, Block& block, std::unordered_map<const Value*, int>& uses) {
    bool changed = false;
    for (auto it = block.ops().end(); it != block.ops().begin();) {
      --it;
      checkInterrupt(); // Ctrl-C stops a long compile (ir/Pass.h)
      Operation& op = **it;
      bool used = false;
      for (size_t i = 0; i < op.resultCount(); ++i) {
        auto found = uses.find(op.result(i));
        used |= found != uses.end() && found->second > 0;
      }
      if (!used && isPure(op, module) && (!mayFail(op, module) || checkedByAnotherPart(block, op, uses))) {
        forgetUses(op, uses);
        it = block.ops().erase(it);
        changed = true;
        continue;
      }
      for (auto& region : op.regions()) changed |= sweep(module, region->block(), uses);
    }
    return changed;
  }

  /// Whether `op`, an unused part of a decomposition that may fail, can go because another
  /// part of the same decomposition stays and makes the same check: one that is used, or
  /// (none being used) one before it. Some part always stays: removing one needs another.
  static bool checkedByAnotherPart(const Block& block, const Operation& op,
                                   const std::unordered_map<const Value*, int>& uses) {
    if (!op.code().primitive || !std::holds_alternative<PartAttrs>(op.attrs())) return false;
    bool before = true;
    for (const auto& other : block.ops()) {
      if (other.get() == &op) {
        before = false;
        continue;
      }
      if (!(other->code() == op.code()) || other->operands() != op.operands()) continue;
      if (before) return true;
      for (size_t i = 0; i < other->resultCount(); ++i)
        if (auto found = uses.find(other->result(i)); found != uses.end() && found->second > 0) return true;
    }
    return false;
  }

  static void forgetUses(Operation& op, std::unordered_map<const Value*, int>& uses) {
    auto forget = [&](Operation& o) {
      for (const Value* operand : o.operands()) --uses[operand];
    };
    forget(op);
    for (auto& region : op.regions()) walk(region->block(), forget);
  }
};

} // namespace

std::unique_ptr<Pass> createDcePass() { return std::make_unique<Dce>(); }

} // namespace tsl::ir
