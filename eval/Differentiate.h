// eval/Differentiate.h — grad, value-and-grad, vjp and jvp as functions of the language.
//
// A derivative function is a builtin whose body is IR. Called while a function is being
// lowered (inside jit, ir, or another derivative), it lowers the function it
// differentiates into a new function of the same module (a nested Tracer: values of the
// enclosing function it uses become parameters), takes that function's vjp or jvp
// (autodiff/), and emits a call of it: so (grad (grad f)) and (jit (grad f)) are programs
// like any other. Called from eager code, it lowers itself for the arguments' signature
// through the evaluator's versions of derivatives of that function (one JitState per
// function, kind and :argnums, so (grad f) written afresh inside a loop compiles once).
#pragma once

#include "eval/Compile.h"

namespace tsl {

class DiffState final : public BuiltinState {
public:
  enum class Kind : uint8_t {
    Grad,         ///< (g x...) -> the gradient (a tree like the argument), or a vector of them
    ValueAndGrad, ///< (g x...) -> [value gradient]
    Pullback,     ///< (g x... ct) -> a vector with one cotangent per argument
    Jvp,          ///< (g x... v...) -> [value tangent], as many v as x
  };

  DiffState(Value fn, Kind kind, std::vector<size_t> argnums, bool vectorOfGrads)
      : fn_(std::move(fn)), kind_(kind), argnums_(std::move(argnums)), vector_(vectorOfGrads) {}
  /// The builtin this state belongs to (eager calls compile it).
  void bind(const FunctionObj& self) { self_ = &self; }

  const Value& function() const { return fn_; }
  /// Runs the derivative: emitted into the lowering in progress if any argument is traced,
  /// compiled and run otherwise.
  Value call(Evaluator& evaluator, Args args, const Span& span);

private:
  Value trace(Evaluator& evaluator, Args args, const Span& span);

  Value fn_;
  Kind kind_;
  std::vector<size_t> argnums_;
  bool vector_; ///< :argnums was a vector: the gradients come as a vector
  const FunctionObj* self_ = nullptr;
};

} // namespace tsl
