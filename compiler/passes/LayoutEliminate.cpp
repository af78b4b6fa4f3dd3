// compiler/passes/LayoutEliminate.cpp — layout-eliminate: every conversion that can go.
//
// Expects: verified IR. Guarantees: the same results, with, to a fixpoint (at most
// kRounds rounds), no `transdata`
//   - to the layout its operand already has (an identity);
//   - of a conversion's result back to that conversion's source layout: plain→blocked→
//     plain always cancels; blocked→plain→blocked only while the source's padding is
//     what every reader of the result needs (Layouts.h);
//   - of another transdata's result (the chain is one conversion from the first source);
//   - equal to an earlier one of the same value into the same layout (format and dtype,
//     hence C0) where that one dominates;
//   - of a constant (the constant is stored converted: weights convert at compile time);
//   - whose result nothing reads.
// A user-written to_layout is never removed here (dce drops one nothing reads).
#include "compiler/passes/Layouts.h"
#include "compiler/passes/Passes.h"

#include "runtime/Interrupt.h"
#include "runtime/Layout.h"

namespace tsl::compiler {

namespace {

using namespace layouts;

constexpr int kRounds = 8;

class LayoutEliminate final : public ir::Pass {
public:
  const char* name() const override { return "layout-eliminate"; }

  bool run(ir::Module& module, ir::PassContext&) override {
    bool changed = false;
    for (const auto& f : module.functions())
      for (int round = 0; round < kRounds; ++round) {
        Round r{usesOf(*f), paddingOf(*f), {}, {}};
        bool any = block(f->body(), r);
        any |= dropUnused(*f);
        changed |= any;
        if (!any) break;
      }
    return changed;
  }

private:
  struct Round {
    Uses uses;
    PaddingMap padding;
    ir::Replacements replacements;
    std::vector<std::unordered_map<std::string, ir::Value*>> scopes;
  };

  /// The strictest padding the readers of `v` need.
  static Padding neededBy(const ir::Value* v, const Round& r) {
    Padding need = Padding::Any;
    auto it = r.uses.find(v);
    if (it != r.uses.end())
      for (const auto& [user, index] : it->second) need = std::min(need, paddingNeeded(*user));
    return need;
  }

  static bool block(ir::Block& b, Round& r) {
    bool changed = false;
    r.scopes.emplace_back();
    for (auto it = b.ops().begin(); it != b.ops().end();) {
      checkInterrupt(); // Ctrl-C stops a long compile (ir/Pass.h)
      ir::Operation& op = **it;
      r.replacements.apply(op);
      for (auto& region : op.regions()) changed |= block(region->block(), r);
      if (!op.code().is(OpKind::Transdata)) {
        ++it;
        continue;
      }
      const Layout to = std::get<LayoutAttrs>(op.attrs()).layout;
      ir::Value* x = op.operand(0);
      ir::Operation* def = x->def();
      ir::Value* same = nullptr; // a value equal to the result, stored as it is
      if (x->type().layout == to) {
        same = x; // an identity
      } else if (def && isConversion(*def) && def->operand(0)->type().dims == x->type().dims) {
        ir::Value* source = def->operand(0);
        if (source->type().layout == to) {
          const auto p = r.padding.find(source);
          const Padding have = p == r.padding.end() ? Padding::Any : p->second;
          if (!isBlocked(to) || serves(have, neededBy(op.result(), r))) same = source; // cancels
        } else if (def->code().is(OpKind::Transdata)) {
          op.operands()[0] = x = source; // one conversion from the first source
          changed = true;
        }
      }
      if (!same && x->def() && x->def()->code().is(ir::Structural::Constant)) {
        auto folded = std::make_unique<ir::Operation>(ir::OpCode::of(ir::Structural::Constant), op.span());
        folded->setConstant(toLayout(x->def()->constant(), to));
        same = folded->addResult(op.result()->type());
        b.insertBefore(it, std::move(folded));
      }
      if (!same) {
        const std::string key = cat(static_cast<const void*>(x), "|", layoutName(to));
        for (auto scope = r.scopes.rbegin(); scope != r.scopes.rend() && !same; ++scope)
          if (auto found = scope->find(key); found != scope->end()) same = found->second;
        if (!same) r.scopes.back()[key] = op.result();
      }
      if (!same) {
        ++it;
        continue;
      }
      r.replacements.replace(op.result(), same);
      it = r.replacements.erase(b.ops(), it);
      changed = true;
    }
    r.scopes.pop_back();
    return changed;
  }

  /// Removes conversions nothing reads (and the chains of them that only fed those).
  static bool dropUnused(ir::Function& f) {
    bool changed = false;
    for (bool again = true; again;) {
      again = false;
      std::unordered_map<const ir::Value*, int> count = ir::countUses(f.body());
      std::function<void(ir::Block&)> sweep = [&](ir::Block& b) {
        for (auto it = b.ops().begin(); it != b.ops().end();) {
          for (auto& region : (*it)->regions()) sweep(region->block());
          if ((*it)->code().is(OpKind::Transdata) && count[(*it)->result()] == 0) {
            it = b.ops().erase(it);
            again = changed = true;
          } else {
            ++it;
          }
        }
      };
      sweep(f.body());
    }
    return changed;
  }
};

} // namespace

std::unique_ptr<ir::Pass> createLayoutEliminatePass() { return std::make_unique<LayoutEliminate>(); }

} // namespace tsl::compiler
