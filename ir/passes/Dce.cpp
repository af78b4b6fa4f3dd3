// ir/passes/Dce.cpp — dce: removes operations whose results nobody uses.
//
// Expects: verified IR. Guarantees: every remaining pure operation (primitives, constants,
// calls, and ifs and whiles whose regions are pure) has a used result; terminators and
// side-effecting operations stay. Sweeps each block backwards, forgetting the uses of what
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
      if (!used && isPure(op, module)) {
        forgetUses(op, uses);
        it = block.ops().erase(it);
        changed = true;
        continue;
      }
      for (auto& region : op.regions()) changed |= sweep(module, region->block(), uses);
    }
    return changed;
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
