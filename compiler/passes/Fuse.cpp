// compiler/passes/Fuse.cpp — fuse: groups operations into loop nests.
//
// Expects: verified, optimised IR. Guarantees: every group the rules below find is one
// `fused` operation whose region holds the group, isolated (its inputs are its region's
// arguments), yielding the group's one result; the program computes the same values.
// Rules, asked of the operation table's fusion classes, never of names:
//  - a chain of elementwise operations of one shape becomes one loop nest (one read of
//    each input, one write of the result);
//  - an input the chain reads through a view (transpose, broadcast-to, slice, reshape...:
//    the kView trait) of a value computed elsewhere reads it in place through that view;
//  - a reduction absorbs the elementwise producers of its input (one pass over memory);
//  - a contraction takes the elementwise chain that consumes it as its epilogue, when
//    the chain's result has the contraction's type (the epilogue updates it in place);
//  - a contraction that reads its operands through views (the kReadsViews trait: matmul)
//    takes the transposes and slices of matrices it alone reads, so that no copy of them
//    is made (a matmul with such a view is a group even without an epilogue);
//  - a producer joins only if the group is its only user (anything else would compute it
//    twice or store it anyway), and rank-0 chains stay as they are (scalars live in
//    registers already). Scalar constants are copied into the region;
//  - a group takes at most kMaxGroup operations. The pass is linear in the program.
// softmax, log-softmax and logsumexp are single operations that :cpu runs in two passes
// over memory (online maximum and sum, then the normalisation); they need no group.
#include "compiler/passes/Passes.h"
#include "runtime/Interrupt.h"

#include <algorithm>
#include <list>
#include <unordered_map>
#include <unordered_set>

namespace tsl::compiler {

namespace {

using ir::Block;
using ir::Operation;
using ir::Structural;

FusionClass classOf(const Operation& op) {
  return op.code().primitive ? opInfo(op.code().kind).fusion : FusionClass::Opaque;
}

/// Operations that are a strided view of their operand (the kView trait), so a loop can
/// read through them: each output element is the operand element at an affine index.
bool isAffineView(const Operation& op) { return op.code().primitive && opInfo(op.code().kind).has(kView); }

/// Reductions a fused loop can accumulate (the kLoopReduction trait).
bool isLoopReduction(const Operation& op) { return op.code().primitive && opInfo(op.code().kind).has(kLoopReduction); }

bool isScalarConstant(const Operation& op) {
  return op.code().is(Structural::Constant) && op.result()->type().rank() == 0;
}

/// The most operations one group takes; the producers beyond it start groups of their
/// own. A loop body of 64 operations already reads each input once per 64 operations;
/// LLVM's work on one loop body grows faster than its length (a traced `(reduce + (map
/// ...))` of 300,000 operations is one chain), and a vectorised body of 256 sines took
/// its code generator 12 s for 10,000 operations where bodies of 64 take 0.1 s.
constexpr size_t kMaxGroup = 64;

class Fuser {
public:
  explicit Fuser(Block& block, const std::unordered_map<const ir::Value*, int>& uses) : block_(block), uses_(uses) {}

  bool run() {
    // Consumers before producers: a group grows from its last operation backwards.
    std::vector<Operation*> order;
    for (auto& op : block_.ops()) {
      position_[op.get()] = order.size();
      order.push_back(op.get());
    }
    std::unordered_set<const Operation*> taken;
    for (auto it = order.rbegin(); it != order.rend(); ++it) {
      checkInterrupt(); // Ctrl-C stops a long compile (ir/Pass.h)
      Operation* root = *it;
      if (taken.count(root)) continue;
      std::vector<Operation*> group = grow(*root, taken);
      if (group.size() < 2) continue;
      for (Operation* op : group) taken.insert(op);
      build(group, *root);
    }
    if (members_.empty()) return false;
    // One sweep removes every grouped operation and redirects every use of a root.
    std::erase_if(block_.ops(), [&](const std::unique_ptr<Operation>& op) { return members_.count(op.get()) > 0; });
    ir::walk(block_, [&](Operation& op) {
      for (ir::Value*& v : op.operands())
        if (auto found = replaced_.find(v); found != replaced_.end()) v = found->second;
    });
    return true;
  }

private:
  /// The group rooted at `root` (in no particular order), or just the root.
  std::vector<Operation*> grow(Operation& root, const std::unordered_set<const Operation*>& taken) {
    const FusionClass rootClass = classOf(root);
    const bool reduction = isLoopReduction(root);
    if (rootClass == FusionClass::Contraction) { // a contraction alone, with the views it reads
      std::vector<Operation*> group{&root};
      std::unordered_set<const Operation*> in{&root};
      absorbViews(root, group, in, taken);
      return group;
    }
    if (rootClass != FusionClass::Elementwise && !reduction) return {&root};
    if (ir::touchesLayouts(root)) return {&root}; // loops index row-major elements
    if (root.resultCount() != 1) return {&root};
    // The iteration space: the result's shape, or the reduction's input shape.
    const ir::Type& space = reduction ? root.operand(0)->type() : root.result()->type();
    if (space.rank() == 0 || !space.concrete()) return {&root};
    std::vector<Operation*> group{&root};
    std::unordered_set<const Operation*> in{&root};
    bool contraction = false;
    std::vector<Operation*> work{&root};
    while (!work.empty() && group.size() < kMaxGroup) {
      Operation* op = work.back();
      work.pop_back();
      // Reductions read their operand over the whole space; so do elementwise operations,
      // whose operands may be of a smaller (broadcast) shape and then stay outside.
      if (classOf(*op) == FusionClass::Contraction) absorbViews(*op, group, in, taken);
      if (isAffineView(*op) || classOf(*op) == FusionClass::Contraction) continue; // leaves: operands stay outside
      for (ir::Value* operand : op->operands()) {
        Operation* producer = operand->def();
        if (!producer || producer->parent() != &block_ || in.count(producer) || taken.count(producer)) continue;
        if (producer->resultCount() != 1 || uses_.at(operand) != 1) continue; // used elsewhere too
        if (ir::touchesLayouts(*producer)) continue;
        const ir::Type& t = operand->type();
        const FusionClass c = classOf(*producer);
        const bool sameSpace = t.dims == space.dims;
        bool join = false;
        if (c == FusionClass::Elementwise && sameSpace) join = true;
        else if (isAffineView(*producer) && sameSpace && producer->operand(0)->type().rank() > 0) join = true;
        else if (c == FusionClass::Contraction && !reduction && !contraction && t == root.result()->type()) {
          join = true;
          contraction = true;
        }
        if (!join) continue;
        in.insert(producer);
        group.push_back(producer);
        work.push_back(producer);
      }
    }
    return group;
  }

  /// Adds to the group the views producing operands of `contraction` that it reads in
  /// place (the kReadsViews trait): matrices (rank 2) of a dtype it has kernels for, the
  /// result's, used by it alone.
  void absorbViews(Operation& contraction, std::vector<Operation*>& group, std::unordered_set<const Operation*>& in,
                   const std::unordered_set<const Operation*>& taken) {
    if (!contraction.code().primitive || !opInfo(contraction.code().kind).has(kReadsViews)) return;
    if (ir::touchesLayouts(contraction)) return;
    // Operands of another dtype than the result's are not read in place: the product runs
    // its eager kernel, which needs every operand computed (a view absorbed then was never
    // computed: "a tensor used before it is computed").
    for (const ir::Value* operand : contraction.operands())
      if (operand->type().dtype != contraction.result()->type().dtype) return;
    for (ir::Value* operand : contraction.operands()) {
      Operation* producer = operand->def();
      if (!producer || producer->parent() != &block_ || in.count(producer) || taken.count(producer)) continue;
      if (!isAffineView(*producer) || producer->resultCount() != 1 || uses_.at(operand) != 1) continue;
      if (ir::touchesLayouts(*producer) || producer->operand(0)->type().rank() == 0) continue;
      const ir::Type& t = operand->type();
      const DType d = t.dtype;
      if (t.rank() != 2 || !t.concrete() || !(d == DType::F32 || d == DType::F64 || d == DType::I32 || d == DType::I64))
        continue;
      in.insert(producer);
      group.push_back(producer);
    }
  }

  /// Replaces the group by one `fused` operation at the root's place.
  void build(std::vector<Operation*> group, Operation& root) {
    // Block order: producers before consumers.
    std::sort(group.begin(), group.end(), [&](Operation* a, Operation* b) { return position_.at(a) < position_.at(b); });
    std::unordered_set<const Operation*> members(group.begin(), group.end());
    // Inputs: values the group uses that it does not compute (scalar constants are copied
    // in), each once, in order of first use. Sets, not searches of the lists: a group of
    // 300,000 operations reading 100,000 constants took minutes.
    std::vector<ir::Value*> inputs;
    std::vector<Operation*> constants;
    std::unordered_set<const ir::Value*> seen;
    std::unordered_map<const ir::Value*, int> inside; // a constant's uses within the group
    for (Operation* op : group)
      for (ir::Value* v : op->operands()) {
        if (v->def() && members.count(v->def())) continue;
        const bool constant = v->def() && isScalarConstant(*v->def());
        if (constant) ++inside[v];
        if (!seen.insert(v).second) continue;
        if (constant) constants.push_back(v->def());
        else inputs.push_back(v);
      }
    auto fused = std::make_unique<Operation>(ir::OpCode::of(Structural::Fused), root.span());
    fused->operands() = inputs;
    ir::Value* result = fused->addResult(root.result()->type());
    result->setName(root.result()->name());
    Block& body = fused->addRegion().block();
    std::unordered_map<const ir::Value*, ir::Value*> mapping;
    for (ir::Value* v : inputs) mapping[v] = body.addArgument(v->type(), v->name());
    for (Operation* c : constants) {
      mapping[c->result()] = body.append(ir::cloneOp(*c, mapping))->result();
      // The copy inside serves the group; the original goes if nothing else uses it.
      if (inside.at(c->result()) == uses_.at(c->result())) members.insert(c);
    }
    for (Operation* op : group) body.append(ir::cloneOp(*op, mapping));
    auto yield = std::make_unique<Operation>(ir::OpCode::of(Structural::Yield), root.span());
    yield->operands().push_back(mapping.at(root.result()));
    body.append(std::move(yield));

    block_.insertBefore(iteratorOf(root), std::move(fused));
    replaced_[root.result()] = result;
    members_.insert(members.begin(), members.end());
  }

  std::list<std::unique_ptr<Operation>>::iterator iteratorOf(const Operation& op) {
    if (iterators_.empty())
      for (auto it = block_.ops().begin(); it != block_.ops().end(); ++it) iterators_[it->get()] = it;
    return iterators_.at(&op);
  }

  Block& block_;
  std::unordered_map<const Operation*, size_t> position_;
  std::unordered_map<const Operation*, std::list<std::unique_ptr<Operation>>::iterator> iterators_;
  std::unordered_set<const Operation*> members_;
  std::unordered_map<const ir::Value*, ir::Value*> replaced_;
  const std::unordered_map<const ir::Value*, int>& uses_;
};

/// Fuses in `block` and in the regions nested in it (not inside fused regions).
bool fuseBlock(Block& block, const std::unordered_map<const ir::Value*, int>& uses) {
  bool changed = false;
  for (auto& op : block.ops())
    if (!op->code().is(Structural::Fused))
      for (auto& region : op->regions()) changed |= fuseBlock(region->block(), uses);
  changed |= Fuser(block, uses).run();
  return changed;
}

class Fuse final : public ir::Pass {
public:
  const char* name() const override { return "fuse"; }
  bool run(ir::Module& module, ir::PassContext&) override {
    bool changed = false;
    for (const auto& f : module.functions()) changed |= fuseBlock(f->body(), ir::countUses(f->body()));
    return changed;
  }
};

} // namespace

std::unique_ptr<ir::Pass> createFusePass() { return std::make_unique<Fuse>(); }

} // namespace tsl::compiler
