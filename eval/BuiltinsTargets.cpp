// eval/BuiltinsTargets.cpp — the builtins targets declare (compiler::BackendBuiltin):
// statistics as a map, a trace (eval/TraceValue.h), an inspection of compiled code and an artifact of a target.
// Nothing here names a target.
#include "eval/Builtins.h"
#include "eval/Compile.h"
#include "eval/Evaluator.h"
#include "eval/TraceValue.h"

#include "compiler/Compiler.h"

namespace tsl::builtins {

Value statValue(const compiler::Stat& s) {
  using Kind = compiler::Stat::Kind;
  switch (s.kind) {
  case Kind::Int: return Value(Tensor::scalarOf<int64_t>(s.integer, DType::I64));
  case Kind::Real: return Value(Tensor::scalarOf<double>(s.real, DType::F64));
  case Kind::Text: return makeString(s.text);
  case Kind::List: {
    std::vector<Value> items;
    for (const compiler::Stat& item : s.items) items.push_back(statValue(item));
    return makeVector(std::move(items));
  }
  case Kind::Map: {
    std::vector<std::pair<Value, Value>> entries;
    for (size_t i = 0; i < s.keys.size(); ++i) entries.emplace_back(makeKeyword(s.keys[i]), statValue(s.values[i]));
    return makeMap(std::move(entries));
  }
  }
  return Value();
}

void registerTargetBuiltins(Evaluator& evaluator) {
  using Kind = compiler::BackendBuiltin::Kind;
  for (const compiler::BackendInfo* info : compiler::backendInfos())
    for (const compiler::BackendBuiltin& b : info->builtins) {
      const std::string target = info->name;
      switch (b.kind) {
      case Kind::Statistics:
        // (NAME): of the last call on the target; (NAME :total): of every call.
        evaluator.defineBuiltin(b.name, 0, 1, [target](CallContext& cx, Args args) -> Value {
          bool total = false;
          if (!args.empty()) {
            if (!args[0].isKeyword() || (args[0].keyword().name() != "total" && args[0].keyword().name() != "last"))
              badArgument(cx, 0, ":last or :total", args[0]);
            total = args[0].keyword().name() == "total";
          }
          return statValue(cx.evaluator.compiler().backend(target).statistics(total));
        });
        break;
      case Kind::Inspect:
        // (NAME f x...): f compiled for the target at these arguments, inspected.
        evaluator.defineBuiltin(b.name, 1, -1, [target, what = b.what, empty = b.empty](CallContext& cx, Args args) -> Value {
          const Value fn = underlying(callableArg(cx, args, 0));
          LowerOptions lower;
          lower.optimize = false; // compiling runs the target's pipeline
          Lowered lowered = lowerFunction(cx.evaluator, fn, args.subspan(1), cx.span, lower);
          compileLowered(cx.evaluator, lowered, target);
          const std::string text = lowered.executable->inspect(what);
          return makeString(text.empty() ? empty : text);
        });
        break;
      case Kind::Trace:
        // (NAME): what the last call on the target ran where and when.
        evaluator.defineBuiltin(b.name, 0, 0, [target](CallContext& cx, Args) -> Value {
          return traceValue(cx.evaluator.compiler().backend(target).trace(), target);
        });
        break;
      case Kind::Emit:
        // (NAME f x...): the target's code for these arguments, as it makes it for this machine.
        evaluator.defineBuiltin(b.name, 1, -1, [target, artifact = b.artifact](CallContext& cx, Args args) -> Value {
          const Value fn = underlying(callableArg(cx, args, 0));
          LowerOptions lower;
          lower.target = target;
          const Lowered lowered = lowerFunction(cx.evaluator, fn, args.subspan(1), cx.span, lower);
          CompileSwitches switches(cx.evaluator);
          switches.options.backend = targetOptions(cx.evaluator, target);
          return makeString(cx.evaluator.compiler().emit(*lowered.module, lowered.function->name(), target, artifact,
                                                         switches.options));
        });
        break;
      }
      if (!b.doc.empty()) document(evaluator, b.name, b.doc);
    }
}

} // namespace tsl::builtins
