// eval/BuiltinsCompile.cpp — jit, jit-explain, ir, graph (LANGUAGE.md §6).
#include "eval/Builtins.h"
#include "eval/Compile.h"
#include "ir/Graphviz.h"
#include "ir/Printer.h"

namespace tsl::builtins {

namespace {

/// The targets `jit` knows, and those this build can run.
constexpr const char* kTargets = ":interp (:cpu and :tc are planned)";

/// A jit function's state, or nullptr if `fn` is not one.
JitState* jitState(const Value& fn) {
  if (!fn.isFunction() || fn.function().functionKind() != FunctionObj::Kind::Builtin) return nullptr;
  return dynamic_cast<JitState*>(static_cast<const BuiltinObj&>(fn.function()).state());
}

/// What `ir` and `graph` lower: a jit function's own function.
Value underlying(const Value& fn) {
  const JitState* state = jitState(fn);
  return state ? state->function() : fn;
}

/// Splits trailing `:key value` options named in `known` off the example arguments.
Args trailingOptions(Args args, std::initializer_list<std::string_view> known,
                     std::vector<std::pair<std::string, Value>>& options) {
  size_t end = args.size();
  while (end >= 3 && args[end - 2].isKeyword()) {
    const std::string& key = args[end - 2].keyword().name();
    bool isKnown = false;
    for (std::string_view k : known) isKnown |= key == k;
    if (!isKnown) break;
    options.emplace_back(key, args[end - 1]);
    end -= 2;
  }
  return args.subspan(1, end - 1);
}

} // namespace

void registerCompileBuiltins(Evaluator& evaluator) {
  evaluator.defineBuiltin("jit", 1, 5, [](CallContext& cx, Args args) -> Value {
    KeywordArgs kw(cx, args, 1, {"target", "static"});
    const Value& fn = callableArg(cx, kw.positional(), 0);
    if (kw.positional().size() != 1) fail(ErrorKind::Type, "jit takes one function, then :target and :static");
    // :static [i ...]: arguments (counted from 0) fixed by value, as attributes are.
    std::vector<bool> staticArgs;
    if (const Value* st = kw.find("static")) {
      if (!st->isSequential() && !st->isNonScalarTensor())
        fail(ErrorKind::Type, "jit :static takes a vector of argument positions (from 0), got ", printValue(*st, true));
      for (const Value& item : sequenceItems(*st)) {
        if (!item.isTensor() || !item.tensor().isScalar() || !isInteger(item.tensor().dtype()) || item.tensor().toInt() < 0 ||
            item.tensor().toInt() > 255)
          fail(ErrorKind::Value, "jit :static takes argument positions from 0, got ", printValue(item, true));
        const auto i = static_cast<size_t>(item.tensor().toInt());
        if (staticArgs.size() <= i) staticArgs.resize(i + 1);
        staticArgs[i] = true;
      }
    }
    std::string target = "interp";
    if (const Value* t = kw.find("target")) {
      if (!t->isKeyword()) badArgument(cx, 1, "a target keyword", *t);
      target = t->keyword().name();
    }
    if (target == "cpu" || target == "tc")
      fail(ErrorKind::Value, "jit: target :", target, " is not available in this build; targets: ", kTargets);
    if (target != "interp") fail(ErrorKind::Value, "jit: unknown target :", target, "; targets: ", kTargets);
    const Value inner = underlying(fn);
    auto state = std::make_shared<JitState>(inner, target, std::move(staticArgs));
    const std::string name = inner.isFunction() && !inner.function().name().empty() ? inner.function().name() : "fn";
    auto* builtin = new BuiltinObj(name, 0, -1, [state](CallContext& call, Args callArgs) {
      return state->call(call.evaluator, callArgs, call.span);
    });
    builtin->setState(state);
    return Value(builtin);
  });

  evaluator.defineBuiltin("jit-explain", 1, 1, [](CallContext& cx, Args args) -> Value {
    const JitState* state = jitState(args[0]);
    if (!state) badArgument(cx, 0, "a function made by jit", args[0]);
    return makeString(state->explain());
  });

  evaluator.defineBuiltin("ir", 1, -1, [](CallContext& cx, Args args) -> Value {
    std::vector<std::pair<std::string, Value>> options;
    const Args examples = trailingOptions(args, {"stage", "locations"}, options);
    const Value fn = underlying(callableArg(cx, args, 0));
    LowerOptions lower;
    ir::PrintOptions print{false};
    for (const auto& [key, value] : options) {
      if (key == "stage") {
        const std::string stage = value.isKeyword() ? value.keyword().name() : "";
        if (stage != "raw" && stage != "optimized")
          fail(ErrorKind::Value, "ir :stage must be :raw (as lowered) or :optimized, got ", printValue(value, true));
        lower.optimize = stage == "optimized";
      } else {
        print.locations = value.truthy();
      }
    }
    const Lowered lowered = lowerFunction(cx.evaluator, fn, examples, cx.span, lower);
    return makeString(ir::printModule(*lowered.module, print));
  });

  evaluator.defineBuiltin("graph", 1, -1, [](CallContext& cx, Args args) -> Value {
    std::vector<std::pair<std::string, Value>> options;
    const Args examples = trailingOptions(args, {"stage"}, options);
    const Value fn = underlying(callableArg(cx, args, 0));
    LowerOptions lower;
    for (const auto& [key, value] : options)
      lower.optimize = !(value.isKeyword() && value.keyword().name() == "raw");
    const Lowered lowered = lowerFunction(cx.evaluator, fn, examples, cx.span, lower);
    return makeString(ir::printDot(*lowered.function));
  });
}

} // namespace tsl::builtins
