// eval/Builtins.h — helpers shared by the files that define builtins.
//
// Builtins receive evaluated arguments and report misuse as type or value errors that
// name themselves; the caller's span is attached by Evaluator::apply. Internal to eval/.
#pragma once

#include "eval/Evaluator.h"
#include "eval/Printer.h"

#include <optional>
#include <string>

namespace tsl { class JitState; }

namespace tsl::builtins {

/// "+ expects a tensor as argument 2, got a string" — a type error.
[[noreturn]] void badArgument(const CallContext& cx, size_t index, std::string_view expected,
                              const Value& got);

const Tensor& tensorArg(const CallContext& cx, Args args, size_t i);
/// A rank-0 integer (or bool) tensor as int64.
int64_t intArg(const CallContext& cx, Args args, size_t i);
/// A rank-0 number as double.
double numberArg(const CallContext& cx, Args args, size_t i);
const std::string& stringArg(const CallContext& cx, Args args, size_t i);
const KeywordObj& keywordArg(const CallContext& cx, Args args, size_t i);
/// A function, keyword, map or vector: anything Evaluator::apply accepts.
const Value& callableArg(const CallContext& cx, Args args, size_t i);

/// Positional arguments followed by `:key value` pairs, as NumPy-style calls use them:
/// (sum x :axis 1 :keepdims true). Unknown keys are a type error naming the allowed ones.
class KeywordArgs {
public:
  /// Splits `args` at the first keyword at or after index `positionalMin`.
  KeywordArgs(const CallContext& cx, Args args, size_t positionalMin, std::span<const std::string_view> allowed);
  KeywordArgs(const CallContext& cx, Args args, size_t positionalMin,
              std::initializer_list<std::string_view> allowed)
      : KeywordArgs(cx, args, positionalMin, std::span<const std::string_view>(allowed.begin(), allowed.size())) {}
  Args positional() const { return positional_; }
  /// The value given for `key`, or nullptr.
  const Value* find(std::string_view key) const;

private:
  Args positional_;
  std::vector<std::pair<std::string_view, const Value*>> pairs_;
};

/// Converts a truthy/falsy value to the TSL boolean.
inline Value boolean(bool b) { return Value::boolean(b); }

/// Registration of each family of builtins.
/// Gives the builtin `name` its :doc text: the call form, a sentence, an example.
void document(Evaluator& evaluator, std::string_view name, std::string_view doc);

void registerNumericBuiltins(Evaluator& evaluator);
void registerCollectionBuiltins(Evaluator& evaluator);
void registerCoreBuiltins(Evaluator& evaluator);
void registerDisplayBuiltins(Evaluator& evaluator);
void registerTensorBuiltins(Evaluator& evaluator);
void registerCompileBuiltins(Evaluator& evaluator);
void registerAutodiffBuiltins(Evaluator& evaluator);
void registerTargetBuiltins(Evaluator& evaluator); /// those targets declare (BuiltinsTargets.cpp)
void registerErrorBuiltins(Evaluator& evaluator);
void registerTextBuiltins(Evaluator& evaluator);
void registerOrderBuiltins(Evaluator& evaluator);
void registerBatchingBuiltins(Evaluator& evaluator);
void registerNeuralBuiltins(Evaluator& evaluator);
void registerCheckpointBuiltins(Evaluator& evaluator);
void registerLinalgBuiltins(Evaluator& evaluator);
void registerDistributedBuiltins(Evaluator& evaluator);
void registerPlotBuiltins(Evaluator& evaluator);     /// plots (BuiltinsPlot.cpp)
void registerProgressBuiltins(Evaluator& evaluator); /// progress bars (Progress.cpp)
/// Clears a progress bar's line on the terminal before print writes (Progress.cpp).
void clearProgressLine();

/// A jit function's state, or nullptr if `fn` is not one.
JitState* jitState(const Value& fn);
/// What `ir`, `graph` and the inspections targets add lower: a jit function's own function, else `fn`.
Value underlying(const Value& fn);

} // namespace tsl::builtins
