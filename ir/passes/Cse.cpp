// ir/passes/Cse.cpp — cse: one computation for equal pure expressions.
//
// Expects: verified IR. Guarantees: within a block, and from a block into the regions
// nested in it, no two pure operations without regions have the same operation,
// attributes, constant value and operands; the later one's uses go to the earlier one.
// Operations in a region are never reused outside it (they do not dominate).
#include "ir/Attributes.h"
#include "ir/Pass.h"

#include <unordered_map>

namespace tsl::ir {

namespace {

class Cse final : public Pass {
public:
  const char* name() const override { return "cse"; }

  bool run(Module& module, PassContext&) override {
    bool changed = false;
    for (auto& f : module.functions()) {
      std::vector<std::unordered_map<std::string, Value*>> scopes;
      changed |= block(f->body(), f->body(), scopes);
    }
    return changed;
  }

private:
  /// A text key that is equal exactly when two operations compute the same thing.
  static std::string key(const Operation& op) {
    std::string k = op.code().name();
    for (const Value* v : op.operands()) k += cat("|", static_cast<const void*>(v));
    if (op.code().primitive) k += "|" + printAttrs(op.attrs());
    if (op.code().is(Structural::Constant)) {
      const Tensor c = op.constant().isScalar() ? op.constant() : contiguous(op.constant());
      k += cat("|", dtypeName(c.dtype()), c.shape().str(), "|");
      k.append(c.data(), static_cast<size_t>(c.numel()) * c.elementSize());
    }
    if (op.code().is(Structural::Call)) k += "|@" + op.callee();
    for (size_t i = 0; i < op.resultCount(); ++i) k += "|" + op.result(i)->type().str();
    return k;
  }

  static bool block(Block& b, Block& function, std::vector<std::unordered_map<std::string, Value*>>& scopes) {
    bool changed = false;
    scopes.emplace_back();
    for (auto it = b.ops().begin(); it != b.ops().end();) {
      Operation& op = **it;
      for (auto& region : op.regions()) changed |= block(region->block(), function, scopes);
      if (!op.isPure() || !op.regions().empty() || op.resultCount() != 1) {
        ++it;
        continue;
      }
      const std::string k = key(op);
      Value* earlier = nullptr;
      for (auto scope = scopes.rbegin(); scope != scopes.rend() && !earlier; ++scope) {
        auto found = scope->find(k);
        if (found != scope->end()) earlier = found->second;
      }
      if (earlier) {
        replaceAllUses(function, op.result(), earlier);
        it = b.ops().erase(it);
        changed = true;
      } else {
        scopes.back()[k] = op.result();
        ++it;
      }
    }
    scopes.pop_back();
    return changed;
  }
};

} // namespace

std::unique_ptr<Pass> createCsePass() { return std::make_unique<Cse>(); }

} // namespace tsl::ir
