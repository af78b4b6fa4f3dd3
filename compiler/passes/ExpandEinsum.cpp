// compiler/passes/ExpandEinsum.cpp — expand-einsum: einsum as the matmuls it is.
//
// Expects: verified IR. Guarantees: every einsum whose operands have concrete shapes, no
// letter repeated within an operand (a diagonal, which the IR has no view for) and
// row-major layouts is replaced by the operations of its plan (runtime/EinsumPlan.h, the
// plan the eager kernel runs): sums over the letters nothing later needs, then for each
// pair of operands transposes, reshapes and one batched matmul; the value is the same.
// The matmuls then run on the backend's GEMM (the transposes in place, once fused), and
// their derivatives are matmuls too. Any other einsum is left as it is.
#include "compiler/passes/Passes.h"

#include "ir/Builder.h"
#include "runtime/EinsumPlan.h"


namespace tsl::compiler {

namespace {

using ir::Operation;

/// einsum's plan on IR values, built into `block` (a scratch block).
struct IrOps {
  using Value = ir::Value*;
  ir::Builder& b;
  Span span;
  bool ok = true; ///< false once the plan needed something the IR cannot express

  Value diagonal(Value v, const std::string& letters, std::string& unique) {
    unique.clear();
    for (char c : letters) {
      if (unique.find(c) != std::string::npos) ok = false; // a diagonal: not expanded
      unique += c;
    }
    return v;
  }
  Value sum(Value v, const std::vector<int64_t>& axes) {
    ReduceAttrs attrs;
    attrs.axes = axes;
    return b.primitive(OpKind::Sum, attrs, {v}, span);
  }
  Value transpose(Value v, const std::vector<int64_t>& perm) { return b.primitive(OpKind::Transpose, PermAttrs{perm}, {v}, span); }
  Value reshape(Value v, const std::vector<int64_t>& dims) { return b.primitive(OpKind::Reshape, ShapeAttrs{dims}, {v}, span); }
  Value matmul(Value x, Value y) { return b.primitive(OpKind::MatMul, NoAttrs{}, {x, y}, span); }
  int64_t size(Value v, int axis) { return v->type().dims[static_cast<size_t>(axis)].size; }
  int rank(Value v) { return v->type().rank(); }
};

/// Whether `op` is an einsum the plan can expand here.
bool expandable(const Operation& op) {
  if (!op.code().is(OpKind::Einsum) || op.resultCount() != 1 || ir::touchesLayouts(op)) return false;
  for (const ir::Value* v : op.operands())
    if (!v->type().concrete()) return false;
  return op.result()->type().concrete();
}

bool expandBlock(ir::Block& block) {
  bool changed = false;
  for (auto it = block.ops().begin(); it != block.ops().end();) {
    Operation& op = **it;
    for (auto& region : op.regions()) changed |= expandBlock(region->block());
    if (!expandable(op)) {
      ++it;
      continue;
    }
    ir::Block scratch;
    ir::Builder builder(scratch);
    IrOps ops{builder, op.span()};
    ir::Value* result = nullptr;
    try {
      const auto spec = einsumplan::parse(std::get<EinsumAttrs>(op.attrs()).spec, op.operands().size());
      std::vector<ir::Value*> operands(op.operands().begin(), op.operands().end());
      result = einsumplan::Plan<IrOps>{ops}.run(spec, operands);
    } catch (const Error&) {
      ops.ok = false; // the verifier reports a bad einsum; it is left for it
    }
    if (!ops.ok || !result || !(result->type() == op.result()->type()) || scratch.ops().empty()) {
      ++it;
      continue;
    }
    while (!scratch.ops().empty()) { // the plan's operations, in order, before the einsum
      std::unique_ptr<Operation> moved = std::move(scratch.ops().front());
      scratch.ops().pop_front();
      block.insertBefore(it, std::move(moved));
    }
    // Its uses take the result now, while the einsum's value still exists (a value made
    // later may reuse its address).
    const ir::Value* old = op.result();
    ir::walk(block, [&](Operation& user) {
      for (ir::Value*& v : user.operands())
        if (v == old) v = result;
    });
    it = block.ops().erase(it);
    changed = true;
  }
  return changed;
}

class ExpandEinsum final : public ir::Pass {
public:
  const char* name() const override { return "expand-einsum"; }
  bool run(ir::Module& module, ir::PassContext&) override {
    bool changed = false;
    for (const auto& f : module.functions()) changed |= expandBlock(f->body());
    return changed;
  }
};

} // namespace

std::unique_ptr<ir::Pass> createExpandEinsumPass() { return std::make_unique<ExpandEinsum>(); }

} // namespace tsl::compiler
