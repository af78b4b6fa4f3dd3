// autodiff/Reverse.cpp — reverse mode: f(x...) -> (y...) becomes f_vjp(x..., ct_y...).
//
// The derivative function first runs the primal (forward), then sweeps back over its
// operations (backward), accumulating one cotangent per primal value (keyed by the primal
// value in the source function). The scheme for structured control flow is in
// autodiff/Autodiff.h.
#include "autodiff/Autodiff.h"

#include "autodiff/Rules.h"
#include "autodiff/ScopedMap.h"
#include "tsl/StackGuard.h"

#include <unordered_map>
#include <unordered_set>

namespace tsl::autodiff {

namespace {

using ir::Block;
using ir::Operation;
using ir::Structural;
using V = ir::Value*;
using Map = std::unordered_map<const ir::Value*, ir::Value*>;

/// Where each source value is in the function being built; nested regions chain to the
/// scope they sit in. Also the tape and iteration count of each while cloned here.
class Scope {
public:
  explicit Scope(const Scope* parent = nullptr)
      : map_(parent ? &parent->map_ : nullptr), tapes_(parent ? &parent->tapes_ : nullptr) {}
  V get(const ir::Value* v) const {
    if (const V* found = map_.find(v)) return *found;
    fail(ErrorKind::Internal, "autodiff: a value used before the derivative defines it");
  }
  void set(const ir::Value* from, V to) { map_.set(from, to); }
  struct Tape {
    V tape, count;
  };
  void setTape(const Operation* op, Tape tape) { tapes_.set(op, tape); }
  const Tape& tapeOf(const Operation* op) const {
    if (const Tape* found = tapes_.find(op)) return *found;
    fail(ErrorKind::Internal, "autodiff: a while without its tape");
  }

private:
  ScopedMap<const ir::Value*, V> map_;
  ScopedMap<const Operation*, Tape> tapes_;
};

/// Values an operation's regions use that are defined outside it, in order of first use.
std::vector<const ir::Value*> freeValues(const Operation& op) {
  std::unordered_set<const ir::Value*> inside;
  std::vector<const ir::Value*> out;
  std::unordered_set<const ir::Value*> seen;
  for (const auto& region : op.regions()) {
    for (const auto& arg : region->block().arguments()) inside.insert(arg.get());
    ir::walk(region->block(), [&](Operation& inner) {
      for (size_t i = 0; i < inner.resultCount(); ++i) inside.insert(inner.result(i));
      for (const auto& r : inner.regions())
        for (const auto& arg : r->block().arguments()) inside.insert(arg.get());
    });
  }
  for (const auto& region : op.regions())
    ir::walk(region->block(), [&](Operation& inner) {
      for (const ir::Value* v : inner.operands())
        if (!inside.count(v) && seen.insert(v).second) out.push_back(v);
    });
  return out;
}

class Reverse {
public:
  explicit Reverse(ir::Module& module) : module_(module) {}

  ir::Function& function(const ir::Function& f) {
    const std::string name = f.name() + "_vjp";
    if (ir::Function* done = module_.find(name)) return *done;
    ir::Function& g = module_.addFunction(name, f.span());
    Scope scope;
    for (const auto& p : f.body().arguments()) scope.set(p.get(), g.body().addArgument(p->type(), p->name()));
    const Operation* ret = f.body().terminator();
    std::vector<V> cts;
    for (size_t i = 0; i < ret->operands().size(); ++i)
      cts.push_back(g.body().addArgument(ret->operand(i)->type(), ret->operands().size() == 1 ? "ct" : cat("ct", i)));
    ir::Builder b(g.body());
    forward(b, f.body(), scope);
    Map adj;
    Emit e(b, f.span());
    for (size_t i = 0; i < cts.size(); ++i) accumulate(e, adj, ret->operand(i), cts[i]);
    backward(b, f.body(), scope, adj);
    std::vector<V> outputs;
    for (const ir::Value* v : ret->operands()) outputs.push_back(scope.get(v));
    for (const auto& p : f.body().arguments()) outputs.push_back(cotangent(e, adj, p.get(), scope));
    b.terminate(Structural::Return, outputs, f.span());
    return g;
  }

private:
  /// ct added to the cotangent of `of` (cast to its dtype and summed to its shape).
  static void accumulate(Emit& e, Map& adj, const ir::Value* of, V ct) {
    if (!ct || !differentiable(of)) return;
    ct = e.cast(ct, of->type().dtype);
    if (!(ct->type().dims == of->type().dims)) {
      if (ct->type().rank() >= of->type().rank()) ct = e.sumTo(ct, of->type());
      if (!(ct->type().dims == of->type().dims)) ct = e.broadcastTo(ct, of->type());
    }
    auto [it, inserted] = adj.emplace(of, ct);
    if (!inserted) it->second = e.add(it->second, ct);
  }

  /// The cotangent of `of`, or zeros of its type.
  static V cotangent(Emit& e, const Map& adj, const ir::Value* of, const Scope& scope) {
    auto it = adj.find(of);
    return it != adj.end() ? it->second : e.zerosLike(scope.get(of));
  }

  // ---- Forward: the primal, with every while directly in `src` recording a tape ----

  void forward(ir::Builder& b, const Block& src, Scope& scope) {
    checkStack();
    for (const auto& op : src.ops()) {
      if (op->code().isTerminator()) break;
      if (op->code().is(Structural::While)) instrumentedWhile(b, *op, scope);
      else clone(b, *op, scope);
    }
  }

  /// A plain copy of `op` (its regions too) with operands mapped through `scope`.
  void clone(ir::Builder& b, const Operation& op, Scope& scope) {
    checkStack();
    std::vector<V> operands;
    for (const ir::Value* v : op.operands()) operands.push_back(scope.get(v));
    std::vector<ir::Type> types;
    for (size_t i = 0; i < op.resultCount(); ++i) types.push_back(op.result(i)->type());
    Operation* copy = b.create(op.code(), operands, types, op.span());
    copy->copyPayload(op);
    for (size_t i = 0; i < op.resultCount(); ++i) scope.set(op.result(i), copy->result(i));
    for (const auto& region : op.regions()) {
      ir::Block& block = copy->addRegion().block();
      Scope inner(&scope);
      for (const auto& arg : region->block().arguments())
        inner.set(arg.get(), block.addArgument(arg->type(), arg->name()));
      ir::Builder rb(block);
      for (const auto& innerOp : region->block().ops()) clone(rb, *innerOp, inner);
    }
  }

  void instrumentedWhile(ir::Builder& b, const Operation& op, Scope& scope) {
    const Span& span = op.span();
    const ir::Type i64{DType::I64, {}, ir::Layout::RowMajor};
    V tape0 = b.create(ir::OpCode::of(Structural::TapeNew), {}, {i64}, span)->result();
    V count0 = b.constant(Tensor::ofInt(0), span);
    std::vector<V> inits;
    for (const ir::Value* v : op.operands()) inits.push_back(scope.get(v));
    inits.push_back(tape0);
    inits.push_back(count0);
    std::vector<ir::Type> results;
    for (size_t i = 0; i < op.resultCount(); ++i) results.push_back(op.result(i)->type());
    results.push_back(i64);
    results.push_back(i64);
    Operation* loop = b.create(ir::OpCode::of(Structural::While), inits, results, span);
    const Block& before = op.region(0).block();
    const Block& after = op.region(1).block();

    // before: record this iteration's carried values, then run the body.
    ir::Block& nb = loop->addRegion().block();
    Scope inBefore(&scope);
    std::vector<V> carried;
    for (const auto& arg : before.arguments()) {
      V a = nb.addArgument(arg->type(), arg->name());
      inBefore.set(arg.get(), a);
      carried.push_back(a);
    }
    V tapeArg = nb.addArgument(i64), countArg = nb.addArgument(i64);
    ir::Builder bb(nb);
    std::vector<V> pushed{tapeArg};
    pushed.insert(pushed.end(), carried.begin(), carried.end());
    V tape1 = bb.create(ir::OpCode::of(Structural::TapePush), pushed, {i64}, span)->result();
    for (const auto& inner : before.ops()) {
      if (inner->code().isTerminator()) break;
      clone(bb, *inner, inBefore);
    }
    std::vector<V> forwarded;
    for (const ir::Value* v : before.terminator()->operands()) forwarded.push_back(inBefore.get(v));
    forwarded.push_back(tape1);
    forwarded.push_back(countArg);
    bb.terminate(Structural::Condition, forwarded, before.terminator()->span());

    // after: the next carried values, and one more iteration counted.
    ir::Block& na = loop->addRegion().block();
    Scope inAfter(&scope);
    for (const auto& arg : after.arguments()) inAfter.set(arg.get(), na.addArgument(arg->type(), arg->name()));
    V tapeA = na.addArgument(i64), countA = na.addArgument(i64);
    ir::Builder ab(na);
    for (const auto& inner : after.ops()) {
      if (inner->code().isTerminator()) break;
      clone(ab, *inner, inAfter);
    }
    std::vector<V> next;
    for (const ir::Value* v : after.terminator()->operands()) next.push_back(inAfter.get(v));
    next.push_back(tapeA);
    next.push_back(ab.primitive(OpKind::Add, NoAttrs{}, {countA, ab.constant(Tensor::ofInt(1), span)}, span));
    ab.terminate(Structural::Yield, next, after.terminator()->span());

    for (size_t i = 0; i < op.resultCount(); ++i) scope.set(op.result(i), loop->result(i));
    scope.setTape(&op, {loop->result(op.resultCount()), loop->result(op.resultCount() + 1)});
  }

  // ---- Backward: the operations of `src` in reverse ----

  void backward(ir::Builder& b, const Block& src, Scope& scope, Map& adj) {
    checkStack();
    std::vector<const Operation*> ops;
    for (const auto& op : src.ops())
      if (!op->code().isTerminator()) ops.push_back(op.get());
    for (auto it = ops.rbegin(); it != ops.rend(); ++it) {
      const Operation& op = **it;
      const ir::OpCode code = op.code();
      if (code.is(Structural::Constant)) continue;
      if (code.isTape())
        throw Error(ErrorKind::Type,
                    "autodiff: differentiating a derivative in reverse mode through a while (a loop with a "
                    "data-dependent trip count) is not supported; use forward mode over it (jvp, hessian)",
                    op.span());
      bool any = false;
      for (size_t i = 0; i < op.resultCount(); ++i) any |= adj.count(op.result(i)) > 0;
      if (!any) continue;
      if (code.primitive) primitive(b, op, scope, adj);
      else if (code.is(Structural::If)) ifOp(b, op, scope, adj);
      else if (code.is(Structural::While)) whileOp(b, op, scope, adj);
      else if (code.is(Structural::Call)) callOp(b, op, scope, adj);
    }
  }

  void primitive(ir::Builder& b, const Operation& op, Scope& scope, Map& adj) {
    const DiffRule& rule = diffRule(op.code().kind);
    if (rule.kind == Differentiability::Constant || !differentiable(op.result())) return;
    if (rule.kind == Differentiability::Unsupported)
      throw Error(ErrorKind::Type, cat("autodiff: ", rule.why), op.span());
    Emit e(b, op.span());
    Primal p{op, {}, scope.get(op.result())};
    for (const ir::Value* v : op.operands()) p.x.push_back(scope.get(v));
    const std::vector<V> grads = rule.vjp(e, p, adj.at(op.result()));
    for (size_t i = 0; i < grads.size() && i < op.operands().size(); ++i) accumulate(e, adj, op.operand(i), grads[i]);
  }

  void ifOp(ir::Builder& b, const Operation& op, Scope& scope, Map& adj) {
    std::vector<const ir::Value*> free;
    for (const ir::Value* v : freeValues(op))
      if (differentiable(v)) free.push_back(v);
    if (free.empty()) return;
    std::vector<ir::Type> types;
    for (const ir::Value* v : free) types.push_back(v->type());
    Operation* g = b.create(ir::OpCode::of(Structural::If), {scope.get(op.operand(0))}, types, op.span());
    for (size_t r = 0; r < 2; ++r) {
      const Block& branch = op.region(r).block();
      ir::Block& block = g->addRegion().block();
      ir::Builder rb(block);
      Scope inner(&scope);
      forward(rb, branch, inner); // recompute the branch
      Map local;
      Emit e(rb, op.span());
      const Operation* yield = branch.terminator();
      for (size_t j = 0; j < op.resultCount(); ++j)
        if (auto it = adj.find(op.result(j)); it != adj.end()) accumulate(e, local, yield->operand(j), it->second);
      backward(rb, branch, inner, local);
      std::vector<V> out;
      for (const ir::Value* v : free) out.push_back(cotangent(e, local, v, inner));
      rb.terminate(Structural::Yield, out, op.span());
    }
    Emit e(b, op.span());
    for (size_t i = 0; i < free.size(); ++i) accumulate(e, adj, free[i], g->result(i));
  }

  void whileOp(ir::Builder& b, const Operation& op, Scope& scope, Map& adj) {
    const Span& span = op.span();
    const Block& before = op.region(0).block();
    const Block& after = op.region(1).block();
    const Operation* condition = before.terminator();
    const Operation* yield = after.terminator();
    const ir::Type i64{DType::I64, {}, ir::Layout::RowMajor};
    std::vector<const ir::Value*> free;
    for (const ir::Value* v : freeValues(op))
      if (differentiable(v)) free.push_back(v);
    std::vector<size_t> floats; // the loop variables that carry a cotangent
    for (size_t i = 0; i < before.arguments().size(); ++i)
      if (differentiable(before.argument(i))) floats.push_back(i);
    std::vector<ir::Type> carriedTypes;
    for (const auto& arg : before.arguments()) carriedTypes.push_back(arg->type());
    const Scope::Tape& tape = scope.tapeOf(&op);

    auto pop = [&](ir::Builder& at, V from, std::vector<V>& values) {
      std::vector<ir::Type> types{i64};
      types.insert(types.end(), carriedTypes.begin(), carriedTypes.end());
      Operation* p = at.create(ir::OpCode::of(Structural::TapePop), {from}, types, span);
      for (size_t i = 0; i < carriedTypes.size(); ++i) values.push_back(p->result(i + 1));
      return p->result(0);
    };

    // The last run of `before` (the one that exited), from its recorded values.
    std::vector<V> lastCarried;
    V rest = pop(b, tape.tape, lastCarried);
    Scope last(&scope);
    for (size_t i = 0; i < lastCarried.size(); ++i) last.set(before.argument(i), lastCarried[i]);
    forward(b, before, last);
    Map adj1;
    Emit e(b, span);
    for (size_t j = 0; j < op.resultCount(); ++j)
      if (auto it = adj.find(op.result(j)); it != adj.end()) accumulate(e, adj1, condition->operand(j + 1), it->second);
    backward(b, before, last, adj1);

    // The other iterations, last to first: pop, recompute, sweep back over after then before.
    std::vector<V> inits;
    for (size_t i : floats) inits.push_back(cotangent(e, adj1, before.argument(i), last));
    for (const ir::Value* v : free) inits.push_back(cotangent(e, adj1, v, scope));
    inits.push_back(rest);
    inits.push_back(tape.count);
    std::vector<ir::Type> types;
    for (V v : inits) types.push_back(v->type());
    Operation* loop = b.create(ir::OpCode::of(Structural::While), inits, types, span);
    {
      ir::Block& nb = loop->addRegion().block();
      std::vector<V> args;
      for (const ir::Type& t : types) args.push_back(nb.addArgument(t));
      ir::Builder bb(nb);
      V more = bb.primitive(OpKind::Greater, NoAttrs{}, {args.back(), bb.constant(Tensor::ofInt(0), span)}, span);
      std::vector<V> forwarded{more};
      forwarded.insert(forwarded.end(), args.begin(), args.end());
      bb.terminate(Structural::Condition, forwarded, span);
    }
    ir::Block& na = loop->addRegion().block();
    std::vector<V> args;
    for (const ir::Type& t : types) args.push_back(na.addArgument(t));
    ir::Builder ab(na);
    std::vector<V> carried;
    V tapeRest = pop(ab, args[args.size() - 2], carried);
    Scope s2(&scope);
    for (size_t i = 0; i < carried.size(); ++i) s2.set(before.argument(i), carried[i]);
    forward(ab, before, s2);
    Scope s3(&scope);
    for (size_t i = 0; i < after.arguments().size(); ++i) s3.set(after.argument(i), s2.get(condition->operand(i + 1)));
    forward(ab, after, s3);
    Map adj2;
    Emit ea(ab, span);
    for (size_t k = 0; k < floats.size(); ++k) accumulate(ea, adj2, yield->operand(floats[k]), args[k]);
    backward(ab, after, s3, adj2);
    for (size_t j = 0; j < after.arguments().size(); ++j)
      if (auto it = adj2.find(after.argument(j)); it != adj2.end()) {
        V ct = it->second;
        accumulate(ea, adj2, condition->operand(j + 1), ct);
      }
    backward(ab, before, s2, adj2);
    std::vector<V> next;
    for (size_t i : floats) next.push_back(cotangent(ea, adj2, before.argument(i), s2));
    for (size_t k = 0; k < free.size(); ++k) {
      V acc = args[floats.size() + k];
      auto it = adj2.find(free[k]);
      next.push_back(it == adj2.end() ? acc : ea.add(acc, it->second));
    }
    next.push_back(tapeRest);
    next.push_back(ab.primitive(OpKind::Sub, NoAttrs{}, {args.back(), ab.constant(Tensor::ofInt(1), span)}, span));
    ab.terminate(Structural::Yield, next, span);

    for (size_t k = 0; k < floats.size(); ++k) accumulate(e, adj, op.operand(floats[k]), loop->result(k));
    for (size_t k = 0; k < free.size(); ++k) accumulate(e, adj, free[k], loop->result(floats.size() + k));
  }

  void callOp(ir::Builder& b, const Operation& op, Scope& scope, Map& adj) {
    const ir::Function* callee = module_.find(op.callee());
    if (!callee) fail(ErrorKind::Internal, "autodiff: a call of the unknown @", op.callee());
    ir::Function& g = function(*callee);
    Emit e(b, op.span());
    std::vector<V> args;
    for (const ir::Value* v : op.operands()) args.push_back(scope.get(v));
    for (size_t j = 0; j < op.resultCount(); ++j) args.push_back(cotangent(e, adj, op.result(j), scope));
    // g returns the callee's results and then one cotangent per parameter (g may still be
    // under construction when the callee recurses, so its types come from the callee).
    std::vector<ir::Type> results = callee->resultTypes();
    for (const auto& p : callee->body().arguments()) results.push_back(p->type());
    Operation* call = b.create(ir::OpCode::of(Structural::Call), args, results, op.span());
    call->setCallee(g.name());
    for (size_t i = 0; i < op.operands().size(); ++i)
      accumulate(e, adj, op.operand(i), call->result(op.resultCount() + i));
  }

  ir::Module& module_;
};

} // namespace

ir::Function& vjp(ir::Module& module, const ir::Function& f) { return Reverse(module).function(f); }

} // namespace tsl::autodiff
