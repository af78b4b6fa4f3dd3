// ir/passes/Inline.cpp — inline: replaces calls with the callee's body.
//
// Expects: verified IR. Guarantees: every call of a function of the module is replaced by
// a copy of that function's body (its operations keep their own spans), except calls of
// functions that can reach themselves (recursion stays a call) and calls whose copy would
// grow the caller past its budget — twice its own size, and at least kMinBudget operations
// (a call graph that doubles at every level would otherwise grow exponentially).
// Functions stay in the module.
//
// Callees are inlined into before their callers (a post-order walk of the call graph), so
// each call is replaced once by a body that has nothing left to inline: the pass is
// linear in the size of what it produces.
#include "ir/Pass.h"
#include "runtime/Interrupt.h"
#include "tsl/StackGuard.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

namespace tsl::ir {

namespace {

/// Operations any function may grow to by inlining, whatever its own size.
constexpr size_t kMinBudget = 20000;

size_t countOps(Block& block) {
  size_t n = 0;
  walk(block, [&](Operation&) { ++n; });
  return n;
}

class Inline final : public Pass {
public:
  const char* name() const override { return "inline"; }

  bool run(Module& module, PassContext&) override {
    graph(module);
    bool changed = false;
    std::unordered_set<const Function*> done;
    for (auto& f : module.functions()) changed |= visit(module, *f, done);
    return changed;
  }

private:
  /// Inlines f's callees first, then the calls in f.
  bool visit(Module& module, Function& f, std::unordered_set<const Function*>& done) {
    checkStack();
    if (!done.insert(&f).second) return false;
    bool changed = false;
    for (Function* g : calls_[&f])
      if (!recursive_.count(g)) changed |= visit(module, *g, done);
    if (recursive_.count(&f)) return changed;
    size_t size = countOps(f.body());
    budget_ = std::max(kMinBudget, 2 * size);
    std::unordered_map<const Value*, Value*> replaced; // call results -> inlined values
    // The inlined calls stay alive until their uses are rewired: a value allocated later
    // must not take the address of a result `replaced` still names.
    std::vector<std::unique_ptr<Operation>> inlined;
    changed |= inlineIn(module, f.body(), size, replaced, inlined);
    if (!replaced.empty()) {
      auto resolve = [&](Value* v) {
        for (auto it = replaced.find(v); it != replaced.end(); it = replaced.find(v)) v = it->second;
        return v;
      };
      walk(f.body(), [&](Operation& op) {
        for (Value*& v : op.operands()) v = resolve(v);
      });
    }
    return changed;
  }

  bool inlineIn(Module& module, Block& block, size_t& size, std::unordered_map<const Value*, Value*>& replaced,
                std::vector<std::unique_ptr<Operation>>& inlined) {
    bool changed = false;
    for (auto it = block.ops().begin(); it != block.ops().end();) {
      checkInterrupt(); // Ctrl-C stops a long compile (ir/Pass.h)
      Operation& op = **it;
      for (auto& region : op.regions()) changed |= inlineIn(module, region->block(), size, replaced, inlined);
      Function* callee = op.code().is(Structural::Call) ? module.find(op.callee()) : nullptr;
      if (!callee || recursive_.count(callee)) {
        ++it;
        continue;
      }
      const size_t added = countOps(callee->body());
      if (size + added > budget_) {
        ++it;
        continue;
      }
      size += added;
      std::unordered_map<const Value*, Value*> mapping;
      for (size_t i = 0; i < op.operands().size(); ++i) mapping[callee->body().argument(i)] = op.operand(i);
      Operation* ret = callee->body().terminator();
      for (const auto& inner : callee->body().ops()) {
        if (inner.get() == ret) break;
        block.insertBefore(it, cloneOp(*inner, mapping));
      }
      for (size_t i = 0; i < op.resultCount(); ++i) {
        auto found = mapping.find(ret->operand(i));
        replaced[op.result(i)] = found == mapping.end() ? ret->operand(i) : found->second;
      }
      inlined.push_back(std::move(*it));
      it = block.ops().erase(it);
      changed = true;
    }
    return changed;
  }

  /// The call graph and its functions that can reach themselves.
  void graph(Module& module) {
    calls_.clear();
    recursive_.clear();
    for (auto& f : module.functions()) {
      auto& out = calls_[f.get()];
      walk(f->body(), [&](Operation& op) {
        if (op.code().is(Structural::Call))
          if (Function* g = module.find(op.callee())) out.push_back(g);
      });
    }
    for (auto& f : module.functions()) {
      std::unordered_set<const Function*> seen;
      std::vector<const Function*> stack(calls_[f.get()].begin(), calls_[f.get()].end());
      while (!stack.empty()) {
        const Function* g = stack.back();
        stack.pop_back();
        if (g == f.get()) {
          recursive_.insert(g);
          break;
        }
        if (!seen.insert(g).second) continue;
        for (const Function* h : calls_[g]) stack.push_back(h);
      }
    }
  }

  size_t budget_ = kMinBudget;
  std::unordered_map<const Function*, std::vector<Function*>> calls_;
  std::unordered_set<const Function*> recursive_;
};

} // namespace

std::unique_ptr<Pass> createInlinePass() { return std::make_unique<Inline>(); }

} // namespace tsl::ir
