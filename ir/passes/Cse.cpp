// ir/passes/Cse.cpp — cse: one computation for equal pure expressions.
//
// Expects: verified IR. Guarantees: within a block, and from a block into the regions
// nested in it, no two pure operations without regions have the same operation,
// attributes, constant value and operands (in either order for a commutative operation);
// the later one's uses go to the earlier one. A call is merged only if its callee and
// everything it calls has no effects (tape operations).
// Operations in a region are never reused outside it (they do not dominate).
#include "ir/Attributes.h"
#include "ir/Pass.h"
#include "runtime/Interrupt.h"

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
      Replacements replacements;
      changed |= block(module, f->body(), replacements, scopes);
    }
    return changed;
  }

private:
  /// A text key that is equal exactly when two operations compute the same thing.
  static std::string key(const Operation& op) {
    std::string k = op.code().name();
    std::vector<const Value*> operands(op.operands().begin(), op.operands().end());
    // Operands of a commutative operation in a fixed order: add %x, %y is add %y, %x.
    if (op.code().primitive && opInfo(op.code().kind).has(kCommutative) && operands.size() == 2 && operands[1] < operands[0])
      std::swap(operands[0], operands[1]);
    for (const Value* v : operands) k += cat("|", static_cast<const void*>(v));
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

  static bool block(const Module& module, Block& b, Replacements& replacements,
                    std::vector<std::unordered_map<std::string, Value*>>& scopes) {
    bool changed = false;
    scopes.emplace_back();
    for (auto it = b.ops().begin(); it != b.ops().end();) {
      checkInterrupt(); // Ctrl-C stops a long compile (ir/Pass.h)
      Operation& op = **it;
      replacements.apply(op);
      for (auto& region : op.regions()) changed |= block(module, region->block(), replacements, scopes);
      if (!isPure(op, module) || !op.regions().empty() || op.resultCount() != 1) {
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
        replacements.replace(op.result(), earlier);
        it = replacements.erase(b.ops(), it);
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
