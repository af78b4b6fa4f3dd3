// eval/Differentiate.cpp — derivative functions: lowering, differentiating, emitting.
#include "eval/Differentiate.h"

#include "autodiff/Autodiff.h"
#include "eval/Evaluator.h"
#include "eval/Printer.h"
#include "eval/Staging.h"
#include "ir/Printer.h"

namespace tsl {

namespace {

const char* kindName(DiffState::Kind kind) {
  switch (kind) {
  case DiffState::Kind::Grad: return "grad";
  case DiffState::Kind::ValueAndGrad: return "value-and-grad";
  case DiffState::Kind::Pullback: return "vjp";
  case DiffState::Kind::Jvp: return "jvp";
  }
  return "grad";
}

/// A function name not yet in the module ("loss", "loss.1", ...).
std::string freshName(ir::Module& module, const Value& fn) {
  const std::string base =
      ir::irName(fn.isFunction() && !fn.function().name().empty() ? fn.function().name() : std::string("fn"));
  return module.freshName(base);
}

/// One argument's leaves: the tensors the derivative function takes for it.
struct Leaf {
  Value value;    ///< the argument's leaf (a tensor or a traced value of the caller)
  ir::Type type;  ///< the parameter's type
  bool weak;      ///< a bare number (traced weak, at i64 or f64)
};

/// A bare number is differentiated at its concrete dtype (f32 for 3.0, as (dtype 3.0)
/// says), so its gradient is an f32 like the tensors it meets.
Leaf leafOf(const Value& v) {
  if (isTraced(v)) {
    const ir::Type& t = tracedType(v);
    if (weakTraced(v)) return {v, ir::Type{concreteDType({t.dtype, true}), {}, ir::Layout::RowMajor}, false};
    return {v, t, false};
  }
  const Tensor& t = v.tensor();
  if (t.weak()) return {v, ir::Type{concreteDType(t.typeKey()), {}, ir::Layout::RowMajor}, false};
  return {v, ir::Type::of(t), false};
}

/// A value of the caller's function for a leaf, typed as the parameter it feeds.
ir::Value* argument(Tracer& outer, const Leaf& leaf, const Span& span) {
  return outer.materialize(leaf.value, leaf.type.dtype, span);
}

} // namespace

/// Functions whose derivatives' compiled versions are kept.
constexpr size_t kMaxCachedDerivatives = 256;

Value DiffState::call(Evaluator& evaluator, Args args, const Span& span) {
  if (evaluator.tracer()) {
    // Under vmap, a derivative of batched values is taken once per example.
    if (std::optional<Value> batched = staging::perExample(
            evaluator, args, [&](std::span<const Value> example) { return trace(evaluator, example, span); }, span))
      return *batched;
    return trace(evaluator, args, span);
  }
  TSL_ASSERT(self_, "a derivative function without its builtin");
  // The compiled versions are kept per function, kind and :argnums, not per builtin.
  std::string key = cat(static_cast<const void*>(fn_.object()), "/", static_cast<int>(kind_), vector_ ? "v" : "s");
  for (size_t a : argnums_) key += cat(",", a);
  auto& versions = evaluator.derivativeVersions();
  if (!versions.count(key)) {
    // An entry whose function only the cache still holds can never be asked for again
    // (the key is the function's identity): drop those before adding one.
    std::erase_if(versions, [](const auto& entry) {
      const Object* fn = entry.second.first.object();
      return fn && fn->kind() != ValueKind::Keyword && fn->unique();
    });
    if (versions.size() >= kMaxCachedDerivatives) versions.clear(); // forget them all, rarely
  }
  auto& entry = versions[key];
  if (!entry.second) entry = {fn_, std::make_shared<JitState>(evaluator)};
  return static_cast<JitState&>(*entry.second).callWith(evaluator, Value(self_), args, span);
}

Value DiffState::trace(Evaluator& evaluator, Args args, const Span& span) {
  const char* what = kindName(kind_);
  Tracer& outer = *evaluator.tracer();
  ir::Module& module = outer.module();

  size_t primalCount = args.size();
  if (kind_ == Kind::Pullback) primalCount = args.size() - 1;
  if (kind_ == Kind::Jvp) {
    if (args.size() % 2 != 0) fail(ErrorKind::Type, "jvp: one tangent is needed for each argument");
    primalCount = args.size() / 2;
  }
  for (size_t a : argnums_)
    if (a >= primalCount)
      fail(ErrorKind::Type, what, ": :argnums names argument ", a, " (counted from 0) but the call passes ", primalCount,
           primalCount == 1 ? " argument" : " arguments");

  // Lower fn for these arguments into a function of the caller's module.
  const bool closure = fn_.isFunction() && fn_.function().functionKind() == FunctionObj::Kind::Closure;
  const Span fnSpan = closure ? static_cast<const ClosureObj&>(fn_.function()).lambda()->span : span;
  ir::Function& f = module.addFunction(freshName(module, fn_), fnSpan);
  const std::vector<std::string> names = parameterNames(fn_);
  std::vector<TreeShape> shapes;
  std::vector<std::vector<Leaf>> leaves(primalCount);
  TreeShape resultShape;
  std::vector<ir::Type> resultTypes;
  std::vector<bool> resultWeak;
  std::vector<std::pair<ir::Value*, ir::Value*>> lifted;
  {
    Tracer inner(evaluator, module, f);
    std::vector<Value> tracedArgs;
    for (size_t a = 0; a < primalCount; ++a) {
      std::vector<Value> argLeaves;
      shapes.push_back(TreeShape::flatten(args[a], argLeaves));
      std::vector<std::string> labels;
      shapes.back().label(a < names.size() ? names[a] : cat("arg", a), labels);
      std::vector<Value> innerLeaves;
      for (size_t i = 0; i < argLeaves.size(); ++i) {
        leaves[a].push_back(leafOf(argLeaves[i]));
        ir::Value* param = f.body().addArgument(leaves[a].back().type, ir::irName(labels[i]));
        if (leaves[a].back().weak) inner.markWeak(param);
        innerLeaves.push_back(inner.wrap(param));
      }
      size_t pos = 0;
      tracedArgs.push_back(shapes.back().rebuild(innerLeaves, pos));
    }
    const Value result = evaluator.apply(fn_, tracedArgs, span);
    std::vector<Value> out;
    resultShape = TreeShape::flatten(result, out);
    std::vector<ir::Value*> returned;
    for (const Value& leaf : out) {
      const Leaf l = leafOf(leaf);
      returned.push_back(inner.materialize(leaf, l.type.dtype, span));
      resultTypes.push_back(returned.back()->type());
      resultWeak.push_back(l.weak);
    }
    inner.builder().terminate(ir::Structural::Return, returned, fnSpan);
    lifted = inner.lifted();
  }
  if (kind_ == Kind::Grad || kind_ == Kind::ValueAndGrad) {
    const bool scalar = resultTypes.size() == 1 && resultShape.kind == TreeShape::Kind::Leaf &&
                        resultTypes[0].rank() == 0 && isFloat(resultTypes[0].dtype);
    if (!scalar)
      fail(ErrorKind::Type, what, ": the function must return a float scalar, got ",
           resultTypes.size() == 1 && resultShape.kind == TreeShape::Kind::Leaf ? resultTypes[0].str()
                                                                                : std::string("a tree of values"));
    for (size_t a : argnums_) {
      bool anyFloat = false;
      for (const Leaf& l : leaves[a]) anyFloat |= isFloat(l.type.dtype);
      if (!anyFloat)
        fail(ErrorKind::Type, what, ": argument ", a, " (counted from 0) has no float tensor to differentiate with respect to");
    }
  }

  // The caller passes the leaves, then what the function lifted from it.
  std::vector<ir::Value*> operands;
  for (const auto& argLeaves : leaves)
    for (const Leaf& l : argLeaves) operands.push_back(argument(outer, l, span));
  for (const auto& [from, param] : lifted) operands.push_back(from);
  ir::Builder& b = outer.builder();

  if (kind_ == Kind::Jvp) {
    ir::Function& g = autodiff::jvp(module, f);
    size_t p = 0;
    for (size_t a = 0; a < primalCount; ++a) {
      std::vector<Value> tangents;
      if (!shapes[a].flattenLike(args[primalCount + a], tangents) || tangents.size() != leaves[a].size())
        fail(ErrorKind::Type, "jvp: the tangent of argument ", a, " must have the argument's structure");
      for (size_t i = 0; i < tangents.size(); ++i, ++p) {
        ir::Value* v = outer.materialize(tangents[i], leaves[a][i].type.dtype, span);
        if (!(v->type() == leaves[a][i].type))
          fail(ErrorKind::Shape, "jvp: the tangent of argument ", a, " is ", v->type().str(), " where the argument is ",
               leaves[a][i].type.str());
        operands.push_back(v);
      }
    }
    for (const auto& [from, param] : lifted) {
      const ir::Type& t = param->type();
      if (!t.concrete()) fail(ErrorKind::Type, "jvp: a captured value of symbolic type ", t.str());
      std::vector<int64_t> dims;
      for (const ir::Dim& d : t.dims) dims.push_back(d.size);
      operands.push_back(b.primitive(OpKind::Full, FullAttrs{dims, Number{}, t.dtype}, {}, span));
    }
    std::vector<ir::Type> types = resultTypes;
    types.insert(types.end(), resultTypes.begin(), resultTypes.end());
    ir::Operation* call = b.create(ir::OpCode::of(ir::Structural::Call), operands, types, span);
    call->setCallee(g.name());
    std::vector<Value> ys, dys;
    for (size_t i = 0; i < resultTypes.size(); ++i) {
      ys.push_back(outer.wrap(call->result(i)));
      dys.push_back(outer.wrap(call->result(resultTypes.size() + i)));
    }
    size_t pos = 0, dpos = 0;
    return makeVector({resultShape.rebuild(ys, pos), resultShape.rebuild(dys, dpos)});
  }

  // Reverse mode: call f's vjp with the cotangent of its result.
  ir::Function& g = autodiff::vjp(module, f);
  if (kind_ == Kind::Pullback) {
    std::vector<Value> cts;
    if (!resultShape.flattenLike(args.back(), cts) || cts.size() != resultTypes.size())
      fail(ErrorKind::Type, "vjp: the cotangent must have the structure of the function's result");
    for (size_t i = 0; i < cts.size(); ++i) {
      ir::Value* v = outer.materialize(cts[i], resultTypes[i].dtype, span);
      if (!(v->type() == resultTypes[i]))
        fail(ErrorKind::Shape, "vjp: the cotangent is ", v->type().str(), " where the result is ", resultTypes[i].str());
      operands.push_back(v);
    }
  } else {
    operands.push_back(b.constant(Tensor::ofFloat(1.0, resultTypes[0].dtype), span));
  }
  ir::Operation* call = b.create(ir::OpCode::of(ir::Structural::Call), operands, g.resultTypes(), span);
  call->setCallee(g.name());

  // One gradient tree per argument, from the cotangents of its leaves.
  std::vector<Value> grads;
  size_t at = resultTypes.size();
  for (size_t a = 0; a < primalCount; ++a) {
    std::vector<Value> cts;
    for (size_t i = 0; i < leaves[a].size(); ++i) cts.push_back(outer.wrap(call->result(at++)));
    size_t pos = 0;
    grads.push_back(shapes[a].rebuild(cts, pos));
  }
  if (kind_ == Kind::Pullback) return makeVector(std::move(grads));
  Value gradient;
  if (vector_) {
    std::vector<Value> chosen;
    for (size_t a : argnums_) chosen.push_back(grads[a]);
    gradient = makeVector(std::move(chosen));
  } else {
    gradient = grads[argnums_.empty() ? 0 : argnums_[0]];
  }
  if (kind_ == Kind::Grad) return gradient;
  std::vector<Value> values{outer.wrap(call->result(0))};
  if (resultWeak[0]) outer.markWeak(call->result(0));
  size_t pos = 0;
  return makeVector({resultShape.rebuild(values, pos), gradient});
}

} // namespace tsl
