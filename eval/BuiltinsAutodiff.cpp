// eval/BuiltinsAutodiff.cpp — grad, value-and-grad, vjp, jvp (docs/language.md §5).
//
// jacobian and hessian are written in TSL on top of these (stdlib/core.tsl); stop-gradient
// is a primitive of the operation table.
#include "eval/Builtins.h"
#include "eval/Differentiate.h"

namespace tsl::builtins {

namespace {

/// A derivative builtin named after its function ("grad-loss").
Value derivative(const Value& fn, DiffState::Kind kind, std::vector<size_t> argnums, bool vectorOfGrads,
                 const std::string& prefix) {
  const std::string name = prefix + "-" + (fn.isFunction() && !fn.function().name().empty() ? fn.function().name() : "fn");
  auto state = std::make_shared<DiffState>(fn, kind, std::move(argnums), vectorOfGrads);
  auto* builtin = new BuiltinObj(name, 0, -1, [raw = state.get()](CallContext& cx, Args args) {
    return raw->call(cx.evaluator, args, cx.span);
  });
  state->bind(*builtin);
  builtin->setState(state);
  return Value(builtin);
}

/// :argnums — an index or a vector of indices (from 0); the default is [0] given as 0.
std::vector<size_t> argnums(const CallContext& cx, const Value* v, bool& vectorOfGrads) {
  vectorOfGrads = false;
  if (!v) return {0};
  std::vector<Value> items;
  if (v->isTensor() && v->tensor().isScalar()) {
    items.push_back(*v);
  } else if (v->isSequential() || v->isNonScalarTensor()) {
    items = sequenceItems(*v);
    vectorOfGrads = true;
  } else {
    fail(ErrorKind::Type, cx.self.name(), " :argnums takes an argument position or a vector of them, got ",
         printValue(*v, true));
  }
  std::vector<size_t> out;
  for (const Value& item : items) {
    if (!item.isTensor() || !item.tensor().isScalar() || !isInteger(item.tensor().dtype()) || item.tensor().toInt() < 0 ||
        item.tensor().toInt() > 255)
      fail(ErrorKind::Value, cx.self.name(), " :argnums takes positions counted from 0, got ", printValue(item, true));
    out.push_back(static_cast<size_t>(item.tensor().toInt()));
  }
  if (out.empty()) fail(ErrorKind::Value, cx.self.name(), " :argnums is empty");
  return out;
}

void defineGrad(Evaluator& evaluator, const char* name, DiffState::Kind kind) {
  evaluator.defineBuiltin(name, 1, 3, [kind, name](CallContext& cx, Args args) {
    KeywordArgs kw(cx, args, 1, {"argnums"});
    if (kw.positional().size() != 1) fail(ErrorKind::Type, name, " takes one function, then :argnums");
    const Value& fn = callableArg(cx, kw.positional(), 0);
    bool vectorOfGrads = false;
    std::vector<size_t> positions = argnums(cx, kw.find("argnums"), vectorOfGrads);
    return derivative(fn, kind, std::move(positions), vectorOfGrads, kind == DiffState::Kind::Grad ? "grad" : "value-and-grad");
  });
}

} // namespace

void registerAutodiffBuiltins(Evaluator& evaluator) {
  defineGrad(evaluator, "grad", DiffState::Kind::Grad);
  defineGrad(evaluator, "value-and-grad", DiffState::Kind::ValueAndGrad);

  // (vjp f x...) -> [y pullback]; (pullback ct) -> [ct_x ...]
  evaluator.defineBuiltin("vjp", 1, -1, [](CallContext& cx, Args args) -> Value {
    const Value& fn = callableArg(cx, args, 0);
    const std::vector<Value> xs(args.begin() + 1, args.end());
    const Value y = cx.evaluator.apply(fn, xs, cx.span);
    const Value pull = derivative(fn, DiffState::Kind::Pullback, {}, false, "pullback");
    auto* pullback = new BuiltinObj("pullback", 1, 1, [pull, xs](CallContext& inner, Args ct) {
      std::vector<Value> all = xs;
      all.push_back(ct[0]);
      return inner.evaluator.apply(pull, all, inner.span);
    });
    return makeVector({y, Value(pullback)});
  });

  // (jvp f [x...] [v...]) -> [y tangent]
  evaluator.defineBuiltin("jvp", 3, 3, [](CallContext& cx, Args args) -> Value {
    const Value& fn = callableArg(cx, args, 0);
    // [3.0] reads as a tensor; its rows are the arguments then.
    auto list = [](const Value& v) { return v.isSequential() || v.isNonScalarTensor(); };
    if (!list(args[1]) || !list(args[2]))
      fail(ErrorKind::Type, "jvp takes the arguments and their tangents as two vectors: (jvp f [x ...] [v ...])");
    std::vector<Value> all = sequenceItems(args[1]);
    const std::vector<Value> tangents = sequenceItems(args[2]);
    if (tangents.size() != all.size())
      fail(ErrorKind::Type, "jvp: ", all.size(), " arguments but ", tangents.size(), " tangents");
    all.insert(all.end(), tangents.begin(), tangents.end());
    const Value push = derivative(fn, DiffState::Kind::Jvp, {}, false, "jvp");
    return cx.evaluator.apply(push, all, cx.span);
  });
}

} // namespace tsl::builtins
