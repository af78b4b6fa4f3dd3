// eval/BuiltinsCompile.cpp — jit, jit-explain, jit-memory, ir, graph (docs/language.md §6).
// The builtins targets add are eval/BuiltinsTargets.cpp's.
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

std::string targetList() {
  std::string out;
  for (const std::string& t : compiler::targetNames()) out += cat(out.empty() ? "" : ", ", ":", t);
  return out;
}

/// A :target option's value: a target this build has.
std::string targetOption(const CallContext& cx, const Value& value, const char* who) {
  if (!value.isKeyword()) badArgument(cx, 1, "a target keyword", value);
  const std::string& target = value.keyword().name();
  const auto built = compiler::targetNames();
  if (std::find(built.begin(), built.end(), target) != built.end()) return target;
  fail(ErrorKind::Value, who, ": unknown target :", target, "; targets: ", targetList());
}

/// "a, b or c", each with a colon.
std::string alternatives(const std::vector<std::string>& names) {
  std::string out;
  for (size_t i = 0; i < names.size(); ++i)
    out += cat(i == 0 ? "" : i + 1 == names.size() ? " or " : ", ", ":", names[i]);
  return out;
}

/// :layouts :NAME — the layout preferences the layout passes follow (those the targets
/// give, or :none), so a program can be seen as a target would lay it out.
std::string layoutsOption(const Value& value, const char* who) {
  const std::string name = value.isKeyword() ? value.keyword().name() : "";
  const std::vector<std::string> names = compiler::layoutNames();
  if (std::find(names.begin(), names.end(), name) == names.end())
    fail(ErrorKind::Value, who, " :layouts takes ", alternatives(names), ", got ", printValue(value, true));
  return name;
}

/// The jit keywords targets declare, with their targets, in the order of the registry.
std::vector<std::pair<const compiler::BackendOption*, std::string>> targetKeywords() {
  std::vector<std::pair<const compiler::BackendOption*, std::string>> out;
  for (const compiler::BackendInfo* info : compiler::backendInfos())
    for (const compiler::BackendOption& option : info->options)
      if (option.jitKeyword) out.emplace_back(&option, info->name);
  return out;
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
  evaluator.defineBuiltin("jit", 1, 15, [](CallContext& cx, Args args) -> Value {
    const auto extra = targetKeywords();
    std::vector<std::string_view> keywords = {"target", "static", "layouts", "donate"};
    for (const auto& [option, owner] : extra) keywords.push_back(option->name);
    keywords.push_back("max-versions");
    keywords.push_back("bucket-bytes");
    KeywordArgs kw(cx, args, 1, keywords);
    const Value& fn = callableArg(cx, kw.positional(), 0);
    if (kw.positional().size() != 1) {
      std::string list;
      for (size_t i = 0; i < keywords.size(); ++i)
        list += cat(i == 0 ? "" : i + 1 == keywords.size() ? " and " : ", ", ":", keywords[i]);
      fail(ErrorKind::Type, "jit takes one function, then ", list);
    }
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
    const std::string target =
        kw.find("target") ? targetOption(cx, *kw.find("target"), "jit") : defaultTarget(cx.evaluator);
    const Value inner = underlying(fn);
    const std::string layouts = kw.find("layouts") ? layoutsOption(*kw.find("layouts"), "jit") : "";
    // A target's own options, parsed and checked by the target.
    compiler::OptionValues targetOptions;
    for (const auto& [option, owner] : extra) {
      const Value* v = kw.find(option->name);
      if (!v) continue;
      compiler::OptionInput input;
      input.isKeyword = v->isKeyword();
      if (input.isKeyword) input.keyword = v->keyword().name();
      else if (v->isString()) input.text = v->string().text();
      else input.text = printValue(*v, true);
      input.printed = printValue(*v, true);
      const std::string parsed = option->parse ? option->parse(input, "jit") : input.isKeyword ? input.keyword : input.text;
      if (target != owner) fail(ErrorKind::Value, "jit :", option->name, " applies to :target :", owner, ", not :", target);
      targetOptions[option->name] = parsed;
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
                                            std::move(targetOptions));
    state->setMaxVersions(maxVersions);
    // :bucket-bytes n: the bucket size of the pass that overlaps all-reduces (0: none).
    if (const Value* v = kw.find("bucket-bytes")) {
      if (!v->isTensor() || !v->tensor().isScalar() || !isInteger(v->tensor().dtype()))
        fail(ErrorKind::Type, "jit :bucket-bytes takes a number of bytes, got ", printValue(*v, true));
      const int64_t n = v->tensor().toInt();
      if (n < 0) fail(ErrorKind::Value, "jit :bucket-bytes takes a number of bytes from 0 (no buckets), got ", n);
      state->setBucketBytes(n);
    }
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
