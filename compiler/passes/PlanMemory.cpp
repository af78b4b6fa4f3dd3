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
#include "runtime/Interrupt.h"

#include <algorithm>
#include <iostream>
#include <map>
#include <queue>
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
    extendShared();
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
      checkInterrupt(); // Ctrl-C stops a long compile (ir/Pass.h)
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
    // An if's or while's results are written where its regions yield: they live at least
    // until it ends, used or not (an unused one, live at its start alone, shared memory
    // with a value of a region that was yielded after it was written).
    ir::walk(const_cast<Block&>(f_.body()), [&](Operation& op) {
      if (op.regions().empty() || op.code().is(Structural::Fused)) return;
      for (size_t i = 0; i < op.resultCount(); ++i) {
        Placement& p = placement(op.result(i));
        p.lastUse = std::max(p.lastUse, end_.at(&op));
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
        const ir::Value* root = rootOf(def->operand(i));
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
        const ir::Value* root = rootOf(def->operand(i));
        const Placement& r = placement(root);
        if (r.home != Home::Parameter || taken.count(root) || r.bytes != p.bytes || r.lastUse != start_.at(def)) continue;
        const size_t param = static_cast<size_t>(root->index());
        if (root->argumentOf() != &f_.body() || param >= donated_.size() || !donated_[param]) continue;
        if (!readsInPlace(*def, i)) continue;
        bool alone = true; // no other operand reads the same memory
        for (size_t j = 0; j < def->operands().size(); ++j)
          if (j != i && rootOf(def->operand(j)) == root) alone = false;
        if (!alone) continue;
        p.donor = root;
        plan_->donatedBytes += p.bytes;
        taken.insert(root);
        break;
      }
    }
  }

  /// Makes the memory of `v` live until `point`: its root's (what homes() decides on and
  /// the arena allocates). The values between are extended once, at the end
  /// (extendShared): a chain of 10^4 updates in place, each extending the chain before
  /// it, is not walked once per link.
  void extend(const ir::Value* v, int point) {
    Placement& root = placement(rootOf(v));
    root.lastUse = std::max(root.lastUse, point);
  }

  /// Each value whose memory another value shares lives as long as that one: in reverse
  /// order of definition, so that what shares a value is done before it.
  void extendShared() {
    for (auto it = plan_->values.rbegin(); it != plan_->values.rend(); ++it)
      if (it->home == Home::Shared && it->shares) {
        Placement& shared = placement(it->shares);
        shared.lastUse = std::max(shared.lastUse, it->lastUse);
      }
  }

  /// The value whose memory `v` is (MemoryPlan::root), remembered along the way: the
  /// homes of values already placed do not change, and chains of updates in place are long.
  const ir::Value* rootOf(const ir::Value* v) {
    std::vector<const ir::Value*> path;
    for (int guard = 0; guard < 1 << 20; ++guard) {
      if (auto known = roots_.find(v); known != roots_.end()) {
        v = known->second;
        break;
      }
      const Placement& p = placement(v);
      if (p.home != Home::Shared || !p.shares) break;
      path.push_back(v);
      v = p.shares;
    }
    for (const ir::Value* on : path) roots_[on] = v;
    return v;
  }

  /// First fit: each value, in order of definition, takes the lowest offset where it fits
  /// between the blocks still live. The live blocks are kept by offset, with a heap of
  /// their last uses (to retire them) and the lengths of the gaps between them: when no
  /// gap is long enough — the usual case, blocks packed end to end — the value goes after
  /// the last block without a scan, so a program of 10^5 values live at once is planned
  /// in n log n, not n².
  void arena() {
    struct Live {
      int64_t end; ///< offset + aligned size
      int lastUse;
    };
    std::map<int64_t, Live> live; // by offset
    std::priority_queue<std::pair<int, int64_t>, std::vector<std::pair<int, int64_t>>, std::greater<>> retire;
    std::multiset<int64_t> gaps; // between consecutive live blocks, and before the first
    auto gapBefore = [&](std::map<int64_t, Live>::iterator it) {
      return it->first - (it == live.begin() ? 0 : std::prev(it)->second.end);
    };
    auto addGap = [&](int64_t g) {
      if (g > 0) gaps.insert(g);
    };
    auto removeGap = [&](int64_t g) {
      if (g > 0) gaps.erase(gaps.find(g));
    };
    std::vector<Placement*> order;
    for (Placement& p : plan_->values)
      if (p.home == Home::Arena && p.bytes >= 0) order.push_back(&p);
    std::stable_sort(order.begin(), order.end(), [](const Placement* a, const Placement* b) { return a->defined < b->defined; });
    for (Placement* p : order) {
      checkInterrupt();
      while (!retire.empty() && retire.top().first < p->defined) {
        auto it = live.find(retire.top().second);
        retire.pop();
        removeGap(gapBefore(it));
        auto next = std::next(it);
        if (next != live.end()) removeGap(gapBefore(next));
        live.erase(it);
        if (next != live.end()) addGap(gapBefore(next));
      }
      const int64_t size = aligned(std::max<int64_t>(p->bytes, 1));
      int64_t offset = live.empty() ? 0 : std::prev(live.end())->second.end;
      if (!gaps.empty() && *gaps.rbegin() >= size) {
        offset = 0;
        for (const auto& [at, l] : live) { // the first gap long enough, in offset order
          if (at - offset >= size) break;
          offset = l.end;
        }
      }
      p->offset = offset;
      auto [it, inserted] = live.emplace(offset, Live{offset + size, p->lastUse});
      TSL_ASSERT(inserted, "plan-memory: two live blocks at offset ", offset);
      auto next = std::next(it);
      if (next != live.end()) removeGap(next->first - (it == live.begin() ? 0 : std::prev(it)->second.end));
      addGap(gapBefore(it));
      if (next != live.end()) addGap(gapBefore(next));
      retire.emplace(p->lastUse, offset);
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
  std::unordered_map<const ir::Value*, const ir::Value*> roots_; ///< rootOf's memory
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
