// compiler/passes/LayoutAssign.cpp — layout-assign: the layout of each group of
// layout-agnostic operations, chosen to move the fewest bytes.
//
// Expects: verified IR (after layout-insert, which fixed the layouts of the demanding
// operations). Guarantees: the same results, with each component — elementwise,
// layout-agnostic operations of one shape joined through their operands, in one block —
// computing in one layout: the one that minimises the bytes of the conversions at its
// boundary, among row-major and the layouts its inputs and consumers have, where the
// target runs agnostic operations on it (Layouts.h) and where the padding stays what
// every consumer needs (Layouts.h: relu keeps zero padding, exp does not). An input that
// a `transdata` made is read from before that conversion when its source is already in
// the chosen layout; consumers that read the old layout get a conversion back. A
// user-written to_layout is never changed or looked through. Conversions this leaves
// back to back are for layout-eliminate.
#include "compiler/passes/Layouts.h"
#include "compiler/passes/Passes.h"

#include "ir/TypeRules.h"
#include "runtime/Interrupt.h"
#include "runtime/Layout.h"

#include <algorithm>
#include <map>
#include <unordered_set>

namespace tsl::compiler {

namespace {

using namespace layouts;
using OpIt = std::list<std::unique_ptr<ir::Operation>>::iterator;

bool isMember(const ir::Operation& op) {
  if (!op.code().primitive || op.resultCount() != 1) return false;
  const OpInfo& info = opInfo(op.code().kind);
  const ir::Type& t = op.result()->type();
  return info.layout == LayoutClass::Agnostic && info.fusion == FusionClass::Elementwise && t.rank() > 0 &&
         t.concrete();
}

bool isTransdata(const ir::Operation* op) { return op && op->code().is(OpKind::Transdata); }

/// Union-find over operations.
class Components {
public:
  const ir::Operation* find(const ir::Operation* op) {
    auto it = parent_.find(op);
    if (it == parent_.end() || it->second == op) return op;
    const ir::Operation* root = find(it->second);
    parent_[op] = root;
    return root;
  }
  void join(const ir::Operation* a, const ir::Operation* b) { parent_[find(a)] = find(b); }

private:
  std::unordered_map<const ir::Operation*, const ir::Operation*> parent_;
};

class LayoutAssign final : public ir::Pass {
public:
  const char* name() const override { return "layout-assign"; }

  bool run(ir::Module& module, ir::PassContext& context) override {
    const LayoutTarget& target = targetOf(context);
    bool changed = false;
    for (const auto& f : module.functions()) changed |= function(*f, target);
    return changed;
  }

private:
  struct State {
    const LayoutTarget& target;
    Uses uses;
    PaddingMap padding;
    Positions positions;
  };

  static bool function(ir::Function& f, const LayoutTarget& target) {
    State s{target, usesOf(f), paddingOf(f), positionsOf(f)};
    // Components, in program order of their first member.
    Components components;
    std::vector<ir::Operation*> members;
    ir::walk(f.body(), [&](ir::Operation& op) {
      checkInterrupt(); // Ctrl-C stops a long compile (ir/Pass.h)
      if (!isMember(op)) return;
      members.push_back(&op);
      for (const ir::Value* v : op.operands())
        if (v->def() && v->def()->parent() == op.parent() && isMember(*v->def()) &&
            v->type().dims == op.result()->type().dims)
          components.join(v->def(), &op);
    });
    std::map<const ir::Operation*, std::vector<ir::Operation*>> groups;
    std::vector<const ir::Operation*> order;
    for (ir::Operation* op : members) {
      auto& g = groups[components.find(op)];
      if (g.empty()) order.push_back(components.find(op));
      g.push_back(op);
    }
    bool changed = false;
    for (const ir::Operation* root : order) {
      checkInterrupt();
      changed |= component(groups[root], s);
    }
    return changed;
  }

  static const std::vector<std::pair<ir::Operation*, size_t>>& usesOfValue(const State& s, const ir::Value* v) {
    static const std::vector<std::pair<ir::Operation*, size_t>> none;
    auto it = s.uses.find(v);
    return it == s.uses.end() ? none : it->second;
  }

  /// The padding of a value now (conversions made by this pass write zero padding).
  static Padding paddingNow(const ir::Value* v, const State& s) {
    auto it = s.padding.find(v);
    if (it != s.padding.end()) return it->second;
    return v->def() && isConversion(*v->def()) ? Padding::Zero : Padding::Any;
  }

  /// The value an input `u` can be read as in `layout`, if there is one without a new
  /// conversion: `u` itself, or the source of the transdata that made it.
  static ir::Value* availableIn(ir::Value* u, Layout layout) {
    if (u->type().layout == layout) return u;
    ir::Operation* def = u->def();
    if (isTransdata(def) && def->operand(0)->type().dims == u->type().dims &&
        def->operand(0)->type().dtype == u->type().dtype && def->operand(0)->type().layout == layout)
      return def->operand(0);
    return nullptr;
  }

  static bool component(const std::vector<ir::Operation*>& ops, State& s) {
    const std::unordered_set<const ir::Operation*> in(ops.begin(), ops.end());
    const ir::Type& shape = ops.front()->result()->type();
    auto sameShape = [&](const ir::Value* v) { return v->type().dims == shape.dims; };
    // Candidates: row-major, and every layout an input or a consumer has.
    std::vector<Layout> candidates{Layout::RowMajor};
    auto offer = [&](Layout l) {
      if (std::find(candidates.begin(), candidates.end(), l) == candidates.end()) candidates.push_back(l);
    };
    // Each member must have an operand of its shape to adopt a layout from, and keep the
    // element size (a cast from 1 to 2 bytes changes C0: it is a conversion of its own).
    bool everyOpLaysOut = true;
    for (ir::Operation* op : ops) {
      checkInterrupt(); // one component may hold every operation of a long program
      offer(op->result()->type().layout);
      bool adopts = false;
      for (ir::Value* u : op->operands()) {
        if (!sameShape(u)) continue;
        adopts = true;
        everyOpLaysOut &= dtypeSize(u->type().dtype) == dtypeSize(op->result()->type().dtype);
        if (in.count(u->def())) continue;
        offer(u->type().layout);
        if (isTransdata(u->def())) offer(u->def()->operand(0)->type().layout);
      }
      everyOpLaysOut &= adopts;
      for (const auto& [user, index] : usesOfValue(s, op->result()))
        if (!in.count(user) && isConversion(*user)) offer(std::get<LayoutAttrs>(user->attrs()).layout);
    }
    std::optional<Layout> best;
    int64_t bestCost = 0;
    for (Layout l : candidates) {
      if (l != Layout::RowMajor && (!s.target.agnosticOnBlocked || !everyOpLaysOut || !layoutFitsRank(l, shape.rank())))
        continue;
      const std::optional<int64_t> c = cost(ops, in, l, s);
      if (!c) continue;
      const bool current = l == ops.front()->result()->type().layout;
      if (!best || *c < bestCost || (*c == bestCost && current)) {
        best = l;
        bestCost = *c;
      }
    }
    if (!best) best = Layout::RowMajor; // always feasible: row-major has no padding
    return rewrite(ops, in, *best, s);
  }

  /// The bytes of the conversions at the component's boundary if it computes in
  /// `layout`; nullopt if its padding would not serve a consumer.
  static std::optional<int64_t> cost(const std::vector<ir::Operation*>& ops,
                                     const std::unordered_set<const ir::Operation*>& in, Layout layout,
                                     const State& s) {
    int64_t bytes = 0;
    std::unordered_map<const ir::Value*, Padding> simulated;
    const bool blocked = isBlocked(layout);
    for (ir::Operation* op : ops) {
      checkInterrupt(); // one component may hold every operation of a long program
      for (ir::Value* u : op->operands()) {
        if (!(u->type().dims == op->result()->type().dims) || in.count(u->def())) continue;
        if (ir::Value* w = availableIn(u, layout)) simulated[u] = paddingNow(w, s);
        else {
          bytes += conversionBytes(u->type(), layout);
          simulated[u] = Padding::Zero;
        }
      }
      Padding p = Padding::Zero;
      if (blocked)
        p = elementwisePadding(*op, [&](const ir::Value* v) -> std::optional<Padding> {
          if (!(v->type().dims == op->result()->type().dims)) return std::nullopt;
          auto it = simulated.find(v);
          return it == simulated.end() ? Padding::Any : it->second;
        });
      simulated[op->result()] = p;
      for (const auto& [user, index] : usesOfValue(s, op->result())) {
        if (in.count(user)) continue;
        const Layout had = op->result()->type().layout;
        if (isConversion(*user)) {
          const Layout to = std::get<LayoutAttrs>(user->attrs()).layout;
          if (to != layout) {
            bytes += conversionBytes(op->result()->type(), to);
          } else if (blocked) { // the conversion goes: its users read this memory
            auto found = s.uses.find(user->result());
            if (found != s.uses.end())
              for (const auto& [next, i] : found->second)
                if (!serves(p, paddingNeeded(*next))) return std::nullopt;
          }
        } else if (had != layout) {
          bytes += conversionBytes(op->result()->type(), had);
        } else if (blocked && !serves(p, paddingNeeded(*user))) {
          return std::nullopt;
        }
      }
    }
    return bytes;
  }

  static bool rewrite(const std::vector<ir::Operation*>& ops, const std::unordered_set<const ir::Operation*>& in,
                      Layout layout, State& s) {
    bool changed = false;
    for (ir::Operation* op : ops) {
      checkInterrupt(); // one component may hold every operation of a long program
      ir::Block& block = *op->parent();
      const OpIt at = s.positions.at(op);
      for (ir::Value*& u : op->operands()) {
        if (!(u->type().dims == op->result()->type().dims) || in.count(u->def()) || u->type().layout == layout) continue;
        ir::Value* w = availableIn(u, layout);
        u = w ? w : insertTransdata(block, at, u, layout, op->span());
        changed = true;
      }
      ir::Value* r = op->result();
      const Layout had = r->type().layout;
      if (had == layout) continue;
      std::vector<ir::Type> types;
      for (const ir::Value* v : op->operands()) types.push_back(v->type());
      r->setType(ir::inferPrimitiveType(op->code().kind, op->attrs(), types));
      TSL_ASSERT(r->type().layout == layout, "layout-assign: ", op->code().name(), " came out ",
                 layoutName(r->type().layout), ", not ", layoutName(layout));
      changed = true;
      // Consumers outside the component that read the old layout get it back.
      for (const auto& [user, index] : usesOfValue(s, r)) {
        if (in.count(user) || isConversion(*user)) continue;
        user->operands()[index] = insertTransdata(*user->parent(), s.positions.at(user), r, had, user->span());
      }
    }
    // The padding of the rewritten values, for the components after this one.
    for (ir::Operation* op : ops) {
      checkInterrupt(); // one component may hold every operation of a long program
      ir::Value* r = op->result();
      s.padding[r] = !isBlocked(r->type().layout)
                         ? Padding::Zero
                         : elementwisePadding(*op, [&](const ir::Value* v) -> std::optional<Padding> {
                             if (!(v->type().dims == r->type().dims) || v->type().layout != r->type().layout)
                               return std::nullopt;
                             return paddingNow(v, s);
                           });
    }
    return changed;
  }
};

} // namespace

std::unique_ptr<ir::Pass> createLayoutAssignPass() { return std::make_unique<LayoutAssign>(); }

} // namespace tsl::compiler
