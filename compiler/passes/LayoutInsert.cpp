// compiler/passes/LayoutInsert.cpp — layout-insert: each layout-demanding operation in
// the layouts its target's kernel wants.
//
// Expects: verified IR; PassContext::layoutTarget names the target (none: no change).
// Guarantees: every layout-demanding or axis-sensitive primitive reads the layouts its
// target demands (Layouts.h: conv2d on :tc wants NC1HWC0 data and FRACTAL_Z weights; a
// reduction wants row-major everywhere, its axes being logical), through a `transdata` placed
// before it where an operand is stored otherwise, and its result, in the layout it comes
// out in, is converted back (a `transdata` after it) to the layout its uses had, so every
// other operation sees the types it saw. The conversions this places around every such
// operation are what layout-assign and layout-eliminate then remove.
#include "compiler/passes/Layouts.h"
#include "compiler/passes/Passes.h"

#include "ir/TypeRules.h"
#include "runtime/Interrupt.h"

namespace tsl::compiler {

namespace {

using namespace layouts;

class LayoutInsert final : public ir::Pass {
public:
  const char* name() const override { return "layout-insert"; }

  bool run(ir::Module& module, ir::PassContext& context) override {
    const LayoutTarget& target = targetOf(context);
    bool changed = false;
    for (const auto& f : module.functions()) {
      ir::Replacements replacements;
      changed |= block(f->body(), target, replacements);
    }
    return changed;
  }

private:
  static bool block(ir::Block& b, const LayoutTarget& target, ir::Replacements& replacements) {
    bool changed = false;
    for (auto it = b.ops().begin(); it != b.ops().end(); ++it) {
      checkInterrupt(); // Ctrl-C stops a long compile (ir/Pass.h)
      ir::Operation& op = **it;
      replacements.apply(op);
      for (auto& region : op.regions()) changed |= block(region->block(), target, replacements);
      if (!op.code().primitive) continue;
      const LayoutClass c = opInfo(op.code().kind).layout;
      if (c == LayoutClass::Agnostic || c == LayoutClass::Converting) continue;
      const std::optional<Demand> want = target.demand(op);
      if (!want) continue;
      bool differs = false;
      for (size_t i = 0; i < op.operands().size(); ++i) differs |= op.operand(i)->type().layout != want->operands[i];
      if (!differs) continue;
      for (size_t i = 0; i < op.operands().size(); ++i)
        if (op.operand(i)->type().layout != want->operands[i])
          op.operands()[i] = insertTransdata(b, it, op.operand(i), want->operands[i], op.span());
      std::vector<ir::Type> types;
      for (const ir::Value* v : op.operands()) types.push_back(v->type());
      ir::Value* result = op.result();
      const ir::Type before = result->type();
      result->setType(ir::inferPrimitiveType(op.code().kind, op.attrs(), types));
      TSL_ASSERT(result->type().layout == want->result, "layout-insert: ", op.code().name(), " gives ",
                 result->type().str(), ", its target's demand says ", layoutName(want->result));
      if (result->type().layout != before.layout) {
        auto next = std::next(it);
        ir::Value* back = insertTransdata(b, next, result, before.layout, op.span());
        replacements.replace(result, back);
        ++it; // past the conversion back, whose operand must stay the result
      }
      changed = true;
    }
    return changed;
  }
};

} // namespace

std::unique_ptr<ir::Pass> createLayoutInsertPass() { return std::make_unique<LayoutInsert>(); }

} // namespace tsl::compiler
