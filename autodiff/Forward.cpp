// autodiff/Forward.cpp — forward mode: f(x...) -> (y...) becomes f_jvp(x..., dx...).
//
// Every operation is copied with its tangent computed beside it (autodiff/Rules.h). An
// `if` and a `while` carry a tangent for each float value they give or carry, a `call`
// calls the callee's own jvp function, and a tape (from a reverse-mode derivative being
// differentiated again) records each float value's tangent with it, so the derivative of
// a derivative works through loops (forward over reverse: hessian).
#include "autodiff/Autodiff.h"

#include "autodiff/Rules.h"
#include "autodiff/ScopedMap.h"
#include "tsl/StackGuard.h"

#include <unordered_map>

namespace tsl::autodiff {

namespace {

using ir::Block;
using ir::Operation;
using ir::Structural;
using V = ir::Value*;

/// Primal values and tangents of the source values, by scope (regions chain).
class Scope {
public:
  explicit Scope(const Scope* parent = nullptr)
      : primal_(parent ? &parent->primal_ : nullptr), tangent_(parent ? &parent->tangent_ : nullptr) {}
  V get(const ir::Value* v) const {
    if (const V* found = primal_.find(v)) return *found;
    fail(ErrorKind::Internal, "autodiff: a value used before the derivative defines it");
  }
  /// The tangent, or nullptr for zero.
  V tangent(const ir::Value* v) const {
    const V* found = tangent_.find(v);
    return found ? *found : nullptr;
  }
  void set(const ir::Value* from, V to) { primal_.set(from, to); }
  void setTangent(const ir::Value* from, V t) {
    if (t) tangent_.set(from, t);
  }

private:
  ScopedMap<const ir::Value*, V> primal_, tangent_;
};

class Forward {
public:
  explicit Forward(ir::Module& module) : module_(module) {}

  ir::Function& function(const ir::Function& f) {
    const std::string name = f.name() + "_jvp";
    if (ir::Function* done = module_.find(name)) return *done;
    ir::Function& g = module_.addFunction(name, f.span());
    Scope scope;
    for (const auto& p : f.body().arguments()) scope.set(p.get(), g.body().addArgument(p->type(), p->name()));
    for (const auto& p : f.body().arguments()) {
      V d = g.body().addArgument(p->type(), p->name().empty() ? "" : "d" + p->name());
      if (differentiable(p.get())) scope.setTangent(p.get(), d);
    }
    ir::Builder b(g.body());
    block(b, f.body(), scope);
    const Operation* ret = f.body().terminator();
    Emit e(b, f.span());
    std::vector<V> outputs;
    for (const ir::Value* v : ret->operands()) outputs.push_back(scope.get(v));
    for (const ir::Value* v : ret->operands()) outputs.push_back(tangentOrZero(e, scope, v));
    b.terminate(Structural::Return, outputs, f.span());
    return g;
  }

private:
  static V tangentOrZero(Emit& e, const Scope& scope, const ir::Value* v) {
    V t = scope.tangent(v);
    return t ? t : e.zerosLike(scope.get(v));
  }

  /// Copies the operations of `src` (not its terminator) with their tangents.
  void block(ir::Builder& b, const Block& src, Scope& scope) {
    checkStack();
    for (const auto& op : src.ops()) {
      if (op->code().isTerminator()) break;
      operation(b, *op, scope);
    }
  }

  void operation(ir::Builder& b, const Operation& op, Scope& scope) {
    const ir::OpCode code = op.code();
    if (code.primitive) return primitive(b, op, scope);
    switch (code.structural) {
    case Structural::If: return ifOp(b, op, scope);
    case Structural::While: return whileOp(b, op, scope);
    case Structural::Call: return callOp(b, op, scope);
    case Structural::TapePush: return tapePush(b, op, scope);
    case Structural::TapePop: return tapePop(b, op, scope);
    default: break; // constant, tape_new: no tangent
    }
    std::vector<V> operands;
    for (const ir::Value* v : op.operands()) operands.push_back(scope.get(v));
    std::vector<ir::Type> types;
    for (size_t i = 0; i < op.resultCount(); ++i) types.push_back(op.result(i)->type());
    Operation* copy = b.create(code, operands, types, op.span());
    copy->copyPayload(op);
    for (size_t i = 0; i < op.resultCount(); ++i) scope.set(op.result(i), copy->result(i));
  }

  void primitive(ir::Builder& b, const Operation& op, Scope& scope) {
    std::vector<V> operands;
    for (const ir::Value* v : op.operands()) operands.push_back(scope.get(v));
    V y = b.primitive(op.code().kind, op.attrs(), operands, op.span());
    scope.set(op.result(), y);
    std::vector<V> dx;
    bool any = false;
    for (const ir::Value* v : op.operands()) {
      dx.push_back(scope.tangent(v));
      any |= dx.back() != nullptr;
    }
    const DiffRule& rule = diffRule(op.code().kind);
    if (!any || !differentiable(op.result()) || rule.kind == Differentiability::Constant) return;
    if (rule.kind == Differentiability::Unsupported || !rule.jvp)
      throw Error(ErrorKind::Type, cat("autodiff: ", rule.why[0] ? rule.why : "no forward rule for this operation"),
                  op.span());
    Emit e(b, op.span());
    V dy = rule.jvp(e, Primal{op, operands, y}, dx);
    if (!dy) return;
    dy = e.cast(dy, y->type().dtype);
    if (!(dy->type().dims == y->type().dims)) dy = e.broadcastTo(dy, y->type());
    scope.setTangent(op.result(), dy);
  }

  /// The yielded or forwarded values with a tangent for each float one (zeros if none).
  static std::vector<V> withTangents(Emit& e, const Scope& scope, const std::vector<ir::Value*>& values) {
    std::vector<V> out;
    for (const ir::Value* v : values) out.push_back(scope.get(v));
    for (const ir::Value* v : values)
      if (differentiable(v)) out.push_back(tangentOrZero(e, scope, v));
    return out;
  }
  static std::vector<ir::Type> typesWithTangents(const std::vector<ir::Type>& types) {
    std::vector<ir::Type> out = types;
    for (const ir::Type& t : types)
      if (isFloat(t.dtype)) out.push_back(t);
    return out;
  }
  /// Sets the primal values and tangents of `values` from `from` laid out as withTangents.
  static void bind(Scope& scope, const std::vector<const ir::Value*>& values, const std::vector<V>& from) {
    size_t t = values.size();
    for (size_t i = 0; i < values.size(); ++i) {
      scope.set(values[i], from[i]);
      if (differentiable(values[i])) scope.setTangent(values[i], from[t++]);
    }
  }

  void ifOp(ir::Builder& b, const Operation& op, Scope& scope) {
    std::vector<ir::Type> types;
    for (size_t i = 0; i < op.resultCount(); ++i) types.push_back(op.result(i)->type());
    Operation* g = b.create(ir::OpCode::of(Structural::If), {scope.get(op.operand(0))}, typesWithTangents(types),
                            op.span());
    for (size_t r = 0; r < 2; ++r) {
      const Block& branch = op.region(r).block();
      ir::Block& nb = g->addRegion().block();
      ir::Builder rb(nb);
      Scope inner(&scope);
      block(rb, branch, inner);
      Emit e(rb, op.span());
      rb.terminate(Structural::Yield, withTangents(e, inner, branch.terminator()->operands()), branch.terminator()->span());
    }
    std::vector<const ir::Value*> results;
    std::vector<V> out;
    for (size_t i = 0; i < op.resultCount(); ++i) results.push_back(op.result(i));
    for (size_t i = 0; i < g->resultCount(); ++i) out.push_back(g->result(i));
    bind(scope, results, out);
  }

  void whileOp(ir::Builder& b, const Operation& op, Scope& scope) {
    const Block& before = op.region(0).block();
    const Block& after = op.region(1).block();
    Emit e(b, op.span());
    std::vector<ir::Type> carried, results;
    for (const auto& arg : before.arguments()) carried.push_back(arg->type());
    for (size_t i = 0; i < op.resultCount(); ++i) results.push_back(op.result(i)->type());
    Operation* loop = b.create(ir::OpCode::of(Structural::While), withTangents(e, scope, op.operands()),
                               typesWithTangents(results), op.span());
    auto region = [&](const Block& src, const std::vector<ir::Type>& argTypes, Structural end) {
      ir::Block& nb = loop->addRegion().block();
      std::vector<V> args;
      for (const ir::Type& t : typesWithTangents(argTypes)) args.push_back(nb.addArgument(t));
      Scope inner(&scope);
      std::vector<const ir::Value*> srcArgs;
      for (const auto& a : src.arguments()) srcArgs.push_back(a.get());
      bind(inner, srcArgs, args);
      ir::Builder rb(nb);
      block(rb, src, inner);
      Emit er(rb, op.span());
      const Operation* term = src.terminator();
      std::vector<ir::Value*> values = term->operands();
      std::vector<V> out;
      if (end == Structural::Condition) { // the flag, then the forwarded values with tangents
        out.push_back(inner.get(values[0]));
        values.erase(values.begin());
      }
      for (V v : withTangents(er, inner, values)) out.push_back(v);
      rb.terminate(end, out, term->span());
    };
    region(before, carried, Structural::Condition);
    region(after, results, Structural::Yield);
    std::vector<const ir::Value*> srcResults;
    std::vector<V> out;
    for (size_t i = 0; i < op.resultCount(); ++i) srcResults.push_back(op.result(i));
    for (size_t i = 0; i < loop->resultCount(); ++i) out.push_back(loop->result(i));
    bind(scope, srcResults, out);
  }

  void callOp(ir::Builder& b, const Operation& op, Scope& scope) {
    const ir::Function* callee = module_.find(op.callee());
    if (!callee) fail(ErrorKind::Internal, "autodiff: a call of the unknown @", op.callee());
    ir::Function& g = function(*callee);
    Emit e(b, op.span());
    std::vector<V> args;
    for (const ir::Value* v : op.operands()) args.push_back(scope.get(v));
    for (const ir::Value* v : op.operands()) args.push_back(tangentOrZero(e, scope, v));
    std::vector<ir::Type> types = callee->resultTypes();
    const size_t n = types.size();
    for (size_t i = 0; i < n; ++i) types.push_back(types[i]);
    Operation* call = b.create(ir::OpCode::of(Structural::Call), args, types, op.span());
    call->setCallee(g.name());
    for (size_t i = 0; i < n; ++i) {
      scope.set(op.result(i), call->result(i));
      if (differentiable(op.result(i))) scope.setTangent(op.result(i), call->result(n + i));
    }
  }

  // A tape records each float value's tangent after the values (every push of a tape and
  // every pop from it are transformed alike, so the layouts agree).
  void tapePush(ir::Builder& b, const Operation& op, Scope& scope) {
    Emit e(b, op.span());
    std::vector<ir::Value*> values(op.operands().begin() + 1, op.operands().end());
    std::vector<V> operands{scope.get(op.operand(0))};
    for (V v : withTangents(e, scope, values)) operands.push_back(v);
    Operation* push = b.create(op.code(), operands, {op.result()->type()}, op.span());
    scope.set(op.result(), push->result());
  }
  void tapePop(ir::Builder& b, const Operation& op, Scope& scope) {
    std::vector<ir::Type> types;
    for (size_t i = 1; i < op.resultCount(); ++i) types.push_back(op.result(i)->type());
    std::vector<ir::Type> all{op.result(0)->type()};
    for (const ir::Type& t : typesWithTangents(types)) all.push_back(t);
    Operation* pop = b.create(op.code(), {scope.get(op.operand(0))}, all, op.span());
    scope.set(op.result(0), pop->result(0));
    std::vector<const ir::Value*> values;
    std::vector<V> out;
    for (size_t i = 1; i < op.resultCount(); ++i) values.push_back(op.result(i));
    for (size_t i = 1; i < pop->resultCount(); ++i) out.push_back(pop->result(i));
    bind(scope, values, out);
  }

  ir::Module& module_;
};

} // namespace

ir::Function& jvp(ir::Module& module, const ir::Function& f) { return Forward(module).function(f); }

} // namespace tsl::autodiff
