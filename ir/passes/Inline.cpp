// ir/passes/Inline.cpp — inline: replaces calls with the callee's body.
//
// Expects: verified IR. Guarantees: every call of a function of the module is replaced by
// a copy of that function's body (its operations keep their own spans), except calls
// that would recurse: a call inside the body being inlined into its own callee chain
// beyond kMaxDepth is left as a call. Functions stay in the module.
#include "ir/Pass.h"

#include <unordered_map>

namespace tsl::ir {

namespace {

constexpr int kMaxDepth = 64;

class Inline final : public Pass {
public:
  const char* name() const override { return "inline"; }

  bool run(Module& module, PassContext&) override {
    bool changed = false;
    for (auto& f : module.functions()) {
      int inlined = 0;
      while (inlineOne(module, *f, f->body()) && ++inlined < 10000) changed = true;
    }
    return changed;
  }

private:
  /// Inlines the first inlinable call in `block` (searching nested regions); false if none.
  static bool inlineOne(Module& module, Function& caller, Block& block) {
    for (auto it = block.ops().begin(); it != block.ops().end(); ++it) {
      Operation& op = **it;
      for (auto& region : op.regions())
        if (inlineOne(module, caller, region->block())) return true;
      if (!op.code().is(Structural::Call)) continue;
      Function* callee = module.find(op.callee());
      if (!callee || callee == &caller || reaches(module, *callee, caller.name(), 0)) continue;
      std::unordered_map<const Value*, Value*> mapping;
      for (size_t i = 0; i < op.operands().size(); ++i) mapping[callee->body().argument(i)] = op.operand(i);
      Operation* ret = callee->body().terminator();
      for (const auto& inner : callee->body().ops()) {
        if (inner.get() == ret) break;
        block.insertBefore(it, cloneOp(*inner, mapping));
      }
      for (size_t i = 0; i < op.resultCount(); ++i) {
        auto found = mapping.find(ret->operand(i));
        replaceAllUses(caller.body(), op.result(i), found == mapping.end() ? ret->operand(i) : found->second);
      }
      block.ops().erase(it);
      return true;
    }
    return false;
  }

  /// Whether `from` calls (directly or not) the function named `target`.
  static bool reaches(Module& module, Function& from, const std::string& target, int depth) {
    if (depth > kMaxDepth) return true;
    bool found = false;
    walk(from.body(), [&](Operation& op) {
      if (found || !op.code().is(Structural::Call)) return;
      if (op.callee() == target) found = true;
      else if (Function* next = module.find(op.callee())) found = reaches(module, *next, target, depth + 1);
    });
    return found;
  }
};

} // namespace

std::unique_ptr<Pass> createInlinePass() { return std::make_unique<Inline>(); }

} // namespace tsl::ir
