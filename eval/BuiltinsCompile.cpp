// eval/BuiltinsCompile.cpp — jit, jit-explain, jit-memory, ir, graph, llvm-ir, asm
// (docs/language.md §6).
#include "eval/Builtins.h"
#include "eval/Compile.h"
#include "eval/Evaluator.h"
#include "compiler/Compiler.h"

#include <algorithm>
#include "ir/Graphviz.h"
#include "compiler/Backend.h"
#include "ir/Printer.h"

namespace tsl::builtins {

namespace {

/// The targets docs/language.md §6 names; a build may lack some.
bool knownTarget(const std::string& name) { return name == "cpu" || name == "tc" || name == "interp"; }

std::string targetList() {
  std::string out;
  for (const std::string& t : compiler::targetNames()) out += cat(out.empty() ? "" : ", ", ":", t);
  return out;
}

/// A :target option's value: a target this build has.
std::string targetOption(const CallContext& cx, const Value& value, const char* who) {
  if (!value.isKeyword()) badArgument(cx, 1, "a target keyword", value);
  const std::string& target = value.keyword().name();
  const auto& built = compiler::targetNames();
  if (std::find(built.begin(), built.end(), target) != built.end()) return target;
  if (knownTarget(target))
    fail(ErrorKind::Value, who, ": target :", target, " is not available in this build; targets: ", targetList());
  fail(ErrorKind::Value, who, ": unknown target :", target, "; targets: ", targetList());
}

/// :layouts :tc — the layout preferences the layout passes follow (:cpu, :tc, :none),
/// so a program can be seen as a target would lay it out.
std::string layoutsOption(const Value& value, const char* who) {
  const std::string name = value.isKeyword() ? value.keyword().name() : "";
  if (name != "cpu" && name != "tc" && name != "none")
    fail(ErrorKind::Value, who, " :layouts takes :cpu, :tc or :none, got ", printValue(value, true));
  return name;
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

JitState* jitState(const Value& fn) {
  if (!fn.isFunction() || fn.function().functionKind() != FunctionObj::Kind::Builtin) return nullptr;
  return dynamic_cast<JitState*>(static_cast<const BuiltinObj&>(fn.function()).state());
}

Value underlying(const Value& fn) {
  const JitState* state = jitState(fn);
  return state ? state->function() : fn;
}

void registerCompileBuiltins(Evaluator& evaluator) {
  evaluator.defineBuiltin("jit", 1, 13, [](CallContext& cx, Args args) -> Value {
    KeywordArgs kw(cx, args, 1, {"target", "static", "layouts", "donate", "tc-dtype", "max-versions"});
    const Value& fn = callableArg(cx, kw.positional(), 0);
    if (kw.positional().size() != 1)
      fail(ErrorKind::Type, "jit takes one function, then :target, :static, :layouts, :donate, :tc-dtype and :max-versions");
    // :static [i ...]: arguments (counted from 0) fixed by value, as attributes are.
    // :donate [i ...]: arguments whose memory the results may take (the caller does not
    // use them after the call).
    auto positions = [](const Value* v, const char* option) {
      std::vector<bool> marked;
      if (!v) return marked;
      if (!v->isSequential() && !v->isNonScalarTensor())
        fail(ErrorKind::Type, "jit ", option, " takes a vector of argument positions (from 0), got ", printValue(*v, true));
      for (const Value& item : sequenceItems(*v)) {
        if (!item.isTensor() || !item.tensor().isScalar() || !isInteger(item.tensor().dtype()) || item.tensor().toInt() < 0 ||
            item.tensor().toInt() > 255)
          fail(ErrorKind::Value, "jit ", option, " takes argument positions from 0, got ", printValue(item, true));
        const auto i = static_cast<size_t>(item.tensor().toInt());
        if (marked.size() <= i) marked.resize(i + 1);
        marked[i] = true;
      }
      return marked;
    };
    std::vector<bool> staticArgs = positions(kw.find("static"), ":static");
    std::vector<bool> donateArgs = positions(kw.find("donate"), ":donate");
    for (size_t i = 0; i < donateArgs.size() && i < staticArgs.size(); ++i)
      if (donateArgs[i] && staticArgs[i])
        fail(ErrorKind::Value, "jit: argument ", i, " is both :static (fixed by value) and :donate (its memory reused)");
    const std::string target = kw.find("target") ? targetOption(cx, *kw.find("target"), "jit") : defaultTarget();
    const Value inner = underlying(fn);
    const std::string layouts = kw.find("layouts") ? layoutsOption(*kw.find("layouts"), "jit") : "";
    // :tc-dtype :bf16: what :tc rounds contractions' inputs to (f16 by default).
    std::string tcDtype;
    if (const Value* v = kw.find("tc-dtype")) {
      tcDtype = v->isKeyword() ? v->keyword().name() : "";
      if (tcDtype != "f16" && tcDtype != "bf16")
        fail(ErrorKind::Value, "jit :tc-dtype takes :f16 or :bf16, got ", printValue(*v, true));
      if (target != "tc") fail(ErrorKind::Value, "jit :tc-dtype applies to :target :tc, not :", target);
    }
    // :max-versions n: compiled versions kept, the least recently used evicted beyond.
    size_t maxVersions = kDefaultMaxVersions;
    if (const Value* v = kw.find("max-versions")) {
      if (!v->isTensor() || !v->tensor().isScalar() || !isInteger(v->tensor().dtype()))
        fail(ErrorKind::Type, "jit :max-versions takes a positive integer, got ", printValue(*v, true));
      const int64_t n = v->tensor().toInt();
      if (n < 1 || n > 1000000) fail(ErrorKind::Value, "jit :max-versions takes an integer from 1 to 1000000, got ", n);
      maxVersions = static_cast<size_t>(n);
    }
    auto state = std::make_shared<JitState>(inner, target, std::move(staticArgs), layouts, std::move(donateArgs),
                                            std::move(tcDtype));
    state->setMaxVersions(maxVersions);
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

  // (jit-memory g): what the version compiled last uses per call besides its arguments.
  evaluator.defineBuiltin("jit-memory", 1, 1, [](CallContext& cx, Args args) -> Value {
    const JitState* state = jitState(args[0]);
    if (!state) badArgument(cx, 0, "a function made by jit", args[0]);
    const Lowered* last = state->lastVersion();
    if (!last || !last->executable) fail(ErrorKind::Value, "jit-memory: the function has not been compiled yet (call it first)");
    const compiler::MemoryUse use = last->executable->memory();
    auto bytes = [](int64_t n) { return Value(Tensor::scalarOf<int64_t>(n, DType::I64)); };
    return makeMap({{makeKeyword("arena-bytes"), bytes(use.arenaBytes)},
                    {makeKeyword("result-bytes"), bytes(use.resultBytes)},
                    {makeKeyword("donated-bytes"), bytes(use.donatedBytes)},
                    {makeKeyword("peak-bytes"), bytes(use.peakBytes())},
                    {makeKeyword("donations"), bytes(use.donations)},
                    {makeKeyword("donations-declined"), bytes(use.donationsDeclined)}});
  });

  evaluator.defineBuiltin("ir", 1, -1, [](CallContext& cx, Args args) -> Value {
    std::vector<std::pair<std::string, Value>> options;
    const Args examples = trailingOptions(args, {"stage", "locations", "target", "layouts"}, options);
    const Value fn = underlying(callableArg(cx, args, 0));
    LowerOptions lower;
    ir::PrintOptions print{false};
    for (const auto& [key, value] : options) {
      if (key == "stage") {
        const std::string stage = value.isKeyword() ? value.keyword().name() : "";
        if (stage != "raw" && stage != "optimized")
          fail(ErrorKind::Value, "ir :stage must be :raw (as lowered) or :optimized, got ", printValue(value, true));
        lower.optimize = stage == "optimized";
      } else if (key == "target") {
        lower.target = targetOption(cx, value, "ir");
      } else if (key == "layouts") {
        lower.layouts = layoutsOption(value, "ir");
      } else {
        print.locations = value.truthy();
      }
    }
    const Lowered lowered = lowerFunction(cx.evaluator, fn, examples, cx.span, lower);
    return makeString(ir::printModule(*lowered.module, print));
  });

  // (llvm-ir f x...) and (asm f x...): the native code :cpu runs for these arguments —
  // the optimised LLVM IR, or the assembly — as the JIT makes it for this machine.
  for (const auto& [name, artifact] : {std::pair{"llvm-ir", compiler::Artifact::Llvm}, std::pair{"asm", compiler::Artifact::Asm}}) {
    evaluator.defineBuiltin(name, 1, -1, [artifact](CallContext& cx, Args args) -> Value {
      const Value fn = underlying(callableArg(cx, args, 0));
      LowerOptions lower;
      lower.target = "cpu";
      const Lowered lowered = lowerFunction(cx.evaluator, fn, args.subspan(1), cx.span, lower);
      CompileSwitches switches(cx.evaluator);
      return makeString(cx.evaluator.compiler().emit(*lowered.module, lowered.function->name(), "cpu", artifact,
                                                     switches.options));
    });
  }

  evaluator.defineBuiltin("graph", 1, -1, [](CallContext& cx, Args args) -> Value {
    std::vector<std::pair<std::string, Value>> options;
    const Args examples = trailingOptions(args, {"stage", "target", "layouts"}, options);
    const Value fn = underlying(callableArg(cx, args, 0));
    LowerOptions lower;
    for (const auto& [key, value] : options) {
      if (key == "target") lower.target = targetOption(cx, value, "graph");
      else if (key == "layouts") lower.layouts = layoutsOption(value, "graph");
      else lower.optimize = !(value.isKeyword() && value.keyword().name() == "raw");
    }
    const Lowered lowered = lowerFunction(cx.evaluator, fn, examples, cx.span, lower);
    return makeString(ir::printDot(*lowered.function));
  });
}

} // namespace tsl::builtins
