// compiler/passes/PlanMemory.cpp — plan-memory: where every value of a function lives.
//
// Expects: verified IR with concrete shapes (a symbolic size gets no arena offset: its
// buffer is made when the function runs). Guarantees: every function of the module has a
// MemoryPlan (ir/MemoryPlan.h); the IR itself is unchanged.
//
// Homes: rank-0 values are scalars; parameters and constants stay where they are; a value
// the function returns (once, computed at its top level) is written straight into the
// caller's result buffer; a reshape, squeeze, expand-dims or stop-gradient is a view of
// its operand's memory; an elementwise operation whose operand dies there, with the same
// shape and size, updates it in place; everything else gets an arena slot. Slots are
// assigned first-fit in program order, reusing the memory of values whose last use is
// before the new value's definition, aligned to kArenaAlignment. A matrix product whose
// epilogue adds it onto a value of its type (ir::affineEpilogue) may overwrite that value
// too. Under jit :donate, a result may be written over a donated parameter on the same
// terms (the caller passes the parameter's buffer for it).
#include "compiler/passes/Passes.h"

#include "ir/MemoryPlan.h"

#include <algorithm>
#include <iostream>
#include <map>
#include <set>

namespace tsl::compiler {

namespace {

using ir::Block;
using ir::Home;
using ir::Operation;
using ir::Placement;
using ir::Structural;

/// A view: the same elements in the same order (the kSameOrder trait), so no copy is needed.
/// Only between row-major values: a layout changes where the elements are.
bool isView(const Operation& op) {
  return op.code().primitive && opInfo(op.code().kind).has(kSameOrder) && !ir::touchesLayouts(op);
}

/// Whether output element i of `op` reads element i of operand `index` and nothing else:
/// then the result may overwrite that operand.
bool readsInPlace(const Operation& op, size_t index) {
  const ir::Value* operand = op.operand(index);
  if (operand->type().layout != op.result()->type().layout) return false;
  if (!(operand->type() == op.result()->type()) && !(operand->type().dims == op.result()->type().dims &&
                                                       dtypeSize(operand->type().dtype) == dtypeSize(op.result()->type().dtype)))
    return false;
  if (op.code().primitive) return opInfo(op.code().kind).fusion == FusionClass::Elementwise;
  // A matrix product that starts from this operand (its accumulator) instead of zero.
  if (const auto epilogue = ir::affineEpilogue(op)) return epilogue->accumulator == static_cast<int>(index);
  if (!op.code().is(Structural::Fused) || ir::fusionKind(op) != FusionClass::Elementwise) return false;
  // In a fused loop: the argument must only feed elementwise operations of the result's shape.
  const ir::Value* arg = op.region(0).block().argument(index);
  bool ok = true;
  ir::walk(op.region(0).block(), [&](Operation& inner) {
    for (const ir::Value* v : inner.operands())
      if (v == arg && !inner.code().is(Structural::Yield) &&
          (!inner.code().primitive || opInfo(inner.code().kind).fusion != FusionClass::Elementwise ||
           !(inner.result()->type().dims == op.result()->type().dims)))
        ok = false;
  });
  return ok;
}

int64_t bytesOf(const ir::Type& t) {
  if (!t.concrete()) return -1;
  return t.bytes();
}

int64_t aligned(int64_t bytes) { return (bytes + ir::kArenaAlignment - 1) / ir::kArenaAlignment * ir::kArenaAlignment; }

class Planner {
public:
  Planner(const ir::Function& f, std::vector<bool> donated)
      : f_(f), plan_(std::make_shared<ir::MemoryPlan>()), donated_(std::move(donated)) {}

  std::shared_ptr<ir::MemoryPlan> run() {
    // Parameters first, at point 0.
    for (const auto& arg : f_.body().arguments()) add(arg.get(), &f_.body(), 0, nullptr, false);
    number(f_.body(), false);
    lastUses();
    homes();
    if (!donated_.empty()) donations();
    arena();
    releases();
    return plan_;
  }

private:
  struct Info {
    const Block* block = nullptr;     ///< where it is defined
    const Operation* def = nullptr;   ///< its defining operation (null for a block argument)
    const Operation* lastOp = nullptr; ///< the operation of its block that uses it last
  };

  void add(const ir::Value* v, const Block* block, int point, const Operation* def, bool fused) {
    Placement p;
    p.value = v;
    p.defined = p.lastUse = point;
    p.bytes = bytesOf(v->type());
    p.home = fused ? Home::Fused : Home::Arena;
    plan_->index[v] = plan_->values.size();
    plan_->values.push_back(p);
    info_[v] = {block, def, nullptr};
  }

  /// Numbers operations in pre-order; an operation with regions also gets an end point.
  void number(const Block& b, bool fused) {
    for (const auto& owned : b.ops()) {
      const Operation& op = *owned;
      start_[&op] = next_++;
      const bool inner = fused || op.code().is(Structural::Fused);
      for (const auto& region : op.regions()) {
        for (const auto& arg : region->block().arguments()) add(arg.get(), &region->block(), start_[&op], &op, inner);
        number(region->block(), inner);
      }
      end_[&op] = op.regions().empty() ? start_[&op] : next_++;
      // Results are defined where the operation starts, so that they never share memory
      // with its operands (which it reads while it writes them, through views, in any
      // order) nor, for an if or while, with the values its regions hand them.
      for (size_t i = 0; i < op.resultCount(); ++i) add(op.result(i), &b, start_[&op], &op, fused);
      parentOp_[&b] = b.parent() ? b.parent()->parent() : nullptr;
    }
  }

  /// The operation of `block` that contains `op` (itself if `op` is in `block`).
  const Operation* ancestorIn(const Operation* op, const Block* block) const {
    while (op && op->parent() != block) {
      const Block* b = op->parent();
      op = b && b->parent() ? b->parent()->parent() : nullptr;
    }
    return op;
  }

  void lastUses() {
    // A while's region arguments are written at the end of every iteration: they live
    // until the while is done.
    ir::walk(const_cast<Block&>(f_.body()), [&](Operation& op) {
      if (!op.code().is(Structural::While)) return;
      for (const auto& region : op.regions())
        for (const auto& arg : region->block().arguments()) placement(arg.get()).lastUse = end_.at(&op);
    });
    ir::walk(const_cast<Block&>(f_.body()), [&](Operation& op) {
      for (const ir::Value* v : op.operands()) {
        Info& info = info_.at(v);
        const Operation* at = ancestorIn(&op, info.block);
        if (!at) continue;
        const int point = at == &op ? start_.at(at) : end_.at(at);
        Placement& p = placement(v);
        if (point >= p.lastUse) {
          p.lastUse = point;
          info.lastOp = at;
        }
      }
    });
  }

  Placement& placement(const ir::Value* v) { return plan_->values[plan_->index.at(v)]; }

  void homes() {
    const Operation* ret = f_.body().terminator();
    std::map<const ir::Value*, int> returned;
    if (ret)
      for (const ir::Value* v : ret->operands()) ++returned[v];
    for (Placement& p : plan_->values) {
      if (p.home == Home::Fused) continue;
      const Info& info = info_.at(p.value);
      if (p.value->type().rank() == 0) {
        p.home = Home::Scalar;
      } else if (!info.def && info.block == &f_.body()) {
        p.home = Home::Parameter;
      } else if (info.def && info.def->code().is(Structural::Constant)) {
        p.home = Home::Constant;
      } else if (info.block == &f_.body() && returned.count(p.value) && returned[p.value] == 1 && !isView(*info.def)) {
        p.home = Home::Result;
        plan_->resultBytes += std::max<int64_t>(p.bytes, 0);
      } else if (info.def && info.block == info.def->parent() && isView(*info.def) &&
                 info.def->operand(0)->type().rank() > 0) {
        p.home = Home::Shared;
        p.shares = info.def->operand(0);
      }
    }
    // Views keep what they view alive; updates in place take over memory that dies.
    for (Placement& p : plan_->values) {
      if (p.home == Home::Shared) extend(p.shares, p.lastUse);
      if (p.home != Home::Arena || p.bytes <= 0) continue;
      const Operation* def = info_.at(p.value).def;
      if (!def || def->resultCount() != 1 || info_.at(p.value).block != def->parent()) continue;
      for (size_t i = 0; i < def->operands().size(); ++i) {
        const ir::Value* root = plan_->root(def->operand(i));
        const Placement& r = placement(root);
        if (r.home != Home::Arena || r.bytes != p.bytes || r.lastUse != start_.at(def)) continue;
        if (!readsInPlace(*def, i)) continue;
        p.home = Home::Shared;
        p.shares = def->operand(i);
        p.inPlace = true;
        extend(p.shares, p.lastUse);
        break;
      }
    }
  }

  /// Results written over donated parameters: a result whose operation is the last to
  /// read the parameter, reading it in place (element i of the result from element i of
  /// the parameter, or as the product's accumulator), and reads it through no other
  /// operand. The caller passes the parameter's buffer as the result's.
  void donations() {
    std::set<const ir::Value*> taken;
    for (Placement& p : plan_->values) {
      if (p.home != Home::Result || p.bytes <= 0) continue;
      const Operation* def = info_.at(p.value).def;
      if (!def || def->resultCount() != 1) continue;
      for (size_t i = 0; i < def->operands().size(); ++i) {
        const ir::Value* root = plan_->root(def->operand(i));
        const Placement& r = placement(root);
        if (r.home != Home::Parameter || taken.count(root) || r.bytes != p.bytes || r.lastUse != start_.at(def)) continue;
        const size_t param = static_cast<size_t>(root->index());
        if (root->argumentOf() != &f_.body() || param >= donated_.size() || !donated_[param]) continue;
        if (!readsInPlace(*def, i)) continue;
        bool alone = true; // no other operand reads the same memory
        for (size_t j = 0; j < def->operands().size(); ++j)
          if (j != i && plan_->root(def->operand(j)) == root) alone = false;
        if (!alone) continue;
        p.donor = root;
        plan_->donatedBytes += p.bytes;
        taken.insert(root);
        break;
      }
    }
  }

  /// Makes the memory of `v` (and what it shares) live until `point`.
  void extend(const ir::Value* v, int point) {
    for (int guard = 0; v && guard < 1 << 20; ++guard) {
      Placement& p = placement(v);
      p.lastUse = std::max(p.lastUse, point);
      if (p.home != Home::Shared) return;
      v = p.shares;
    }
  }

  void arena() {
    struct Live {
      int64_t offset, bytes;
      int lastUse;
    };
    std::vector<Live> live; // sorted by offset
    std::vector<Placement*> order;
    for (Placement& p : plan_->values)
      if (p.home == Home::Arena && p.bytes >= 0) order.push_back(&p);
    std::stable_sort(order.begin(), order.end(), [](const Placement* a, const Placement* b) { return a->defined < b->defined; });
    for (Placement* p : order) {
      std::erase_if(live, [&](const Live& l) { return l.lastUse < p->defined; });
      const int64_t size = aligned(std::max<int64_t>(p->bytes, 1));
      int64_t offset = 0;
      for (const Live& l : live) { // first fit between the live blocks, in offset order
        if (l.offset - offset >= size) break;
        offset = std::max(offset, l.offset + aligned(std::max<int64_t>(l.bytes, 1)));
      }
      p->offset = offset;
      live.push_back({offset, p->bytes, p->lastUse});
      std::sort(live.begin(), live.end(), [](const Live& a, const Live& b) { return a.offset < b.offset; });
      plan_->arenaBytes = std::max(plan_->arenaBytes, offset + size);
    }
  }

  void releases() {
    for (const Placement& p : plan_->values) {
      const Info& info = info_.at(p.value);
      const Operation* at = info.lastOp ? info.lastOp : info.def;
      if (at && !at->code().isTerminator()) plan_->releasedAfter[at].push_back(p.value);
    }
  }

  const ir::Function& f_;
  std::shared_ptr<ir::MemoryPlan> plan_;
  std::vector<bool> donated_; ///< of the function's parameters (the entry's, under jit :donate)
  std::unordered_map<const ir::Value*, Info> info_;
  std::unordered_map<const Operation*, int> start_, end_;
  std::unordered_map<const Block*, const Operation*> parentOp_;
  int next_ = 1;
};

class PlanMemory final : public ir::Pass {
public:
  const char* name() const override { return "plan-memory"; }
  bool run(ir::Module& module, ir::PassContext& context) override {
    for (const auto& f : module.functions()) {
      f->setPlan(Planner(*f, f->name() == context.entry ? context.donated : std::vector<bool>{}).run());
      if (context.printMemoryPlan) (context.out ? *context.out : std::cerr) << f->plan()->str(*f);
    }
    return false; // the IR is unchanged
  }
};

} // namespace

std::unique_ptr<ir::Pass> createPlanMemoryPass() { return std::make_unique<PlanMemory>(); }

} // namespace tsl::compiler
