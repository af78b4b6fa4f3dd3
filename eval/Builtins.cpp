// eval/Builtins.cpp — argument helpers and the registry of every builtin family.
#include "eval/Builtins.h"
#include "eval/BuiltinDocs.h"

namespace tsl {

namespace builtins {

namespace {

std::string shortPrint(const Value& v) {
  std::string text = printValue(v, true);
  if (text.size() > 40) text = text.substr(0, 37) + "...";
  return text;
}

} // namespace

void badArgument(const CallContext& cx, size_t index, std::string_view expected, const Value& got) {
  if (isTraced(got))
    fail(ErrorKind::Type, "jit: ", cx.self.name(), " needs the value of argument ", index + 1, " (", describeKind(got),
         "), which is known only when the compiled code runs; pass it as a static value instead");
  fail(ErrorKind::Type, cx.self.name(), " expects ", expected, " as argument ", index + 1, ", got ",
       describeKind(got), got.isNil() ? "" : " " + shortPrint(got));
}

const Tensor& tensorArg(const CallContext& cx, Args args, size_t i) {
  if (!args[i].isTensor()) badArgument(cx, i, "a tensor", args[i]);
  return args[i].tensor();
}

int64_t intArg(const CallContext& cx, Args args, size_t i) {
  const Value& v = args[i];
  if (!v.isTensor() || !v.tensor().isScalar() || isFloat(v.tensor().dtype()))
    badArgument(cx, i, "an integer", v);
  return v.tensor().toInt();
}

double numberArg(const CallContext& cx, Args args, size_t i) {
  const Value& v = args[i];
  if (!v.isTensor() || !v.tensor().isScalar()) badArgument(cx, i, "a number", v);
  return v.tensor().toDouble();
}

const std::string& stringArg(const CallContext& cx, Args args, size_t i) {
  if (!args[i].isString()) badArgument(cx, i, "a string", args[i]);
  return args[i].string().text();
}

const KeywordObj& keywordArg(const CallContext& cx, Args args, size_t i) {
  if (!args[i].isKeyword()) badArgument(cx, i, "a keyword", args[i]);
  return args[i].keyword();
}

const Value& callableArg(const CallContext& cx, Args args, size_t i) {
  const Value& v = args[i];
  if (!v.isFunction() && !v.isKeyword() && !v.isMap() && !v.isVector())
    badArgument(cx, i, "a function", v);
  return v;
}

KeywordArgs::KeywordArgs(const CallContext& cx, Args args, size_t positionalMin,
                         std::span<const std::string_view> allowed) {
  size_t split = positionalMin;
  while (split < args.size() && !args[split].isKeyword()) ++split;
  positional_ = args.subspan(0, std::min(split, args.size()));
  for (size_t i = split; i < args.size(); i += 2) {
    if (!args[i].isKeyword()) badArgument(cx, i, "a keyword option (:name value)", args[i]);
    const std::string& key = args[i].keyword().name();
    bool known = false;
    for (std::string_view name : allowed) known |= name == key;
    if (!known) {
      std::string names;
      for (std::string_view name : allowed) names += cat(names.empty() ? "" : ", ", ":", name);
      fail(ErrorKind::Type, cx.self.name(), " has no option :", key,
           allowed.size() ? cat(" (options: ", names, ")") : std::string(" (it takes no options)"));
    }
    if (i + 1 >= args.size()) fail(ErrorKind::Type, cx.self.name(), ": option :", key, " needs a value");
    pairs_.emplace_back(args[i].keyword().name(), &args[i + 1]);
  }
}

const Value* KeywordArgs::find(std::string_view key) const {
  for (const auto& [name, value] : pairs_)
    if (name == key) return value;
  return nullptr;
}

} // namespace builtins

void builtins::document(Evaluator& evaluator, std::string_view name, std::string_view doc) {
  Var* var = evaluator.core().find(name);
  TSL_ASSERT(var && var->defined, "documenting a builtin that is not defined");
  var->doc = std::string(doc);
}

void registerBuiltins(Evaluator& evaluator) {
  builtins::registerNumericBuiltins(evaluator);
  builtins::registerCollectionBuiltins(evaluator);
  builtins::registerCoreBuiltins(evaluator);
  builtins::registerTensorBuiltins(evaluator); // after the others: it extends get and astype
  builtins::registerCompileBuiltins(evaluator);
  builtins::registerAutodiffBuiltins(evaluator);
  builtins::registerTargetBuiltins(evaluator);
  builtins::registerErrorBuiltins(evaluator);
  builtins::registerTextBuiltins(evaluator);
  builtins::registerOrderBuiltins(evaluator);
  builtins::registerBatchingBuiltins(evaluator);
  builtins::registerNeuralBuiltins(evaluator);
  builtins::registerCheckpointBuiltins(evaluator);
  builtins::registerLinalgBuiltins(evaluator);
  builtins::registerDistributedBuiltins(evaluator);
  builtins::registerPlotBuiltins(evaluator);
  builtins::registerProgressBuiltins(evaluator);
  builtins::registerDisplayBuiltins(evaluator);
  for (const char* name : {"print", "println", "prn", "exit", "now-ns", "save-npy", "layout-svg", "slurp", "slurp-lines", "spit", "load-csv", "load-npy", "save-tree", "load-tree", "load-npz", "save-plot",
                           "eval", "read-string", "gensym", "display", "load"}) {
    const Var* var = evaluator.core().find(name);
    TSL_ASSERT(var && var->value.isFunction(), "an effectful builtin is missing");
    const_cast<BuiltinObj&>(static_cast<const BuiltinObj&>(var->value.function())).setEffectful();
  }
  builtins::documentBuiltins(evaluator);
}

} // namespace tsl
