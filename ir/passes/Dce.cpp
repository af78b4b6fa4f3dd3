// ir/passes/Dce.cpp — dce: removes operations whose results nobody uses.
//
// Expects: verified IR. Guarantees: every remaining pure operation (primitives, constants,
// calls, and ifs and whiles whose regions are pure) has a used result; terminators and
// side-effecting operations stay. Iterates to a fixpoint, since removing one use can
// make its operands dead too; nested regions are cleaned the same way.
#include "ir/Pass.h"

namespace tsl::ir {

namespace {

class Dce final : public Pass {
public:
  const char* name() const override { return "dce"; }

  bool run(Module& module, PassContext&) override {
    bool changed = false;
    for (auto& f : module.functions()) {
      for (bool again = true; again;) {
        const auto uses = countUses(f->body());
        again = sweep(module, f->body(), uses);
        changed |= again;
      }
    }
    return changed;
  }

private:
  static bool sweep(const Module& module, Block& block, const std::unordered_map<const Value*, int>& uses) {
    bool changed = false;
    for (auto it = block.ops().begin(); it != block.ops().end();) {
      Operation& op = **it;
      for (auto& region : op.regions()) changed |= sweep(module, region->block(), uses);
      bool used = false;
      for (size_t i = 0; i < op.resultCount(); ++i) used |= uses.count(op.result(i)) > 0;
      if (!used && isPure(op, module)) {
        it = block.ops().erase(it);
        changed = true;
      } else {
        ++it;
      }
    }
    return changed;
  }
};

} // namespace

std::unique_ptr<Pass> createDcePass() { return std::make_unique<Dce>(); }

} // namespace tsl::ir
