// eval/Staging.cpp — the evaluator's one door to the tracer (see Staging.h).
#include "eval/Staging.h"

#include "eval/Evaluator.h"
#include "eval/Tracer.h"

#include <algorithm>

namespace tsl::staging {

std::optional<Value> primitiveStaged(const Evaluator& evaluator, OpKind kind, const OpAttrs& attrs,
                                     std::span<const Value* const> operands, const Span& span) {
  if (std::optional<Value> staged = primitiveOnTraced(kind, attrs, operands, span)) return staged;
  // A creation, and an operation with effects (a collective), runs where the compiled code
  // runs, even when no operand is traced.
  if (Tracer* tracer = evaluator.tracer(); tracer && (opInfo(kind).has(kCreation) || opInfo(kind).has(kSideEffecting)))
    return tracer->emit(kind, attrs, operands, span);
  return std::nullopt;
}

std::optional<Value> primitiveOnTraced(OpKind kind, const OpAttrs& attrs, std::span<const Value* const> operands,
                                       const Span& span) {
  for (const Value* v : operands)
    if (isTraced(*v)) return activeTracer(*v).emit(kind, attrs, operands, span);
  return std::nullopt;
}

std::optional<Value> branchStaged(const Value& cond, Frame& frame, const std::function<Value()>& ifTrue,
                                  const std::function<Value()>& ifFalse, const Span& span) {
  std::vector<Value> slots(frame.slots, frame.slots + frame.size);
  if (traced(cond).batched()) { // vmap: both branches, chosen per example
    const Value a = ifTrue();
    std::copy(slots.begin(), slots.end(), frame.slots);
    const Value b = ifFalse();
    return selectBatched(cond, a, b, span);
  }
  return activeTracer(cond).stageIf(cond, ifTrue,
                                    [&] {
                                      std::copy(slots.begin(), slots.end(), frame.slots);
                                      return ifFalse();
                                    },
                                    span);
}

std::optional<Value> loop(Evaluator& evaluator, Frame& frame, std::span<const Pattern* const> targets,
                          const std::vector<Value>& initial, const std::function<Value()>& body, const Span& span) {
  Tracer* tracer = evaluator.tracer();
  if (!tracer) return std::nullopt;
  bool traced = false;
  for (const Value& v : initial) traced |= Tracer::containsTraced(v);
  // Run it as written (unrolled) unless its trip count depends on traced values.
  if (std::optional<Value> result = tracer->runStaticLoop(body, span, Tracer::unrollLimit(traced))) return result;
  for (size_t i = 0; i < targets.size(); ++i) targets[i]->bind(initial[i], frame.slots);
  return tracer->stageLoop(frame, targets, initial, body, span);
}

bool recurStaged(const Evaluator& evaluator, std::span<const Value> values) {
  return evaluator.tracer()->noteRecur(values);
}

void tracerOnly(const Evaluator& evaluator, std::string_view message) {
  if (evaluator.replaying()) throw NoEagerMeaning{};
  fail(ErrorKind::Type, message);
}

std::optional<Value> row(const Value& coll, int64_t i) {
  if (!isTraced(coll)) return std::nullopt;
  if (i >= tracedLength(coll)) return Value();
  return tracedRow(coll, i);
}

void requireStatic(const Value& v, std::string_view what) {
  if (isTraced(v))
    fail(ErrorKind::Type, "jit: ", what, " must be known when the function is compiled, not computed from its tensors (",
         tracedTypeName(v), ")");
}

void refuseInternal(const Evaluator& evaluator, std::string_view function, std::span<const Value> args) {
  if (!evaluator.tracer()) return;
  for (size_t i = 0; i < args.size(); ++i)
    if (Tracer::containsTraced(args[i]))
      fail(ErrorKind::Type, "jit: native function ", function, " cannot take argument ", i + 1,
           ", a tensor of the function being compiled (", isTraced(args[i]) ? tracedTypeName(args[i]) : "in a collection",
           "): a host function runs when it is called, not in compiled code; call it outside jit");
}

} // namespace tsl::staging
