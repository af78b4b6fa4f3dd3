// eval/Staging.h — where evaluation meets staging: the one dispatch point.
//
// The evaluator runs a program; under `jit` the same evaluator lowers it (eval/Tracer.h),
// with values that stand for tensors of the compiled function. Every place where that
// changes what evaluation does asks here, and nowhere else:
//
//   - a primitive call: staging::primitive emits IR when an operand is traced (or when a
//     creation runs under a tracer) and otherwise leaves the call to run eagerly;
//   - control flow on a traced value: staging::branch (if, and, or), staging::loop (loop
//     and recurring fns), staging::recur;
//   - collections holding traced values: staging::row (a tensor's rows, for nth/first);
//   - host functions: staging::refuseInternal (a native function never sees a traced
//     value; include/tsl/Value.h's ValueKind::Internal).
//
// Each returns nullopt (or false) when nothing is being staged, so the evaluator core
// reads as an evaluator with one `if (auto staged = staging::...)` at each such place.
#pragma once

#include "eval/Evaluator.h"
#include "eval/Nodes.h"
#include "eval/Value.h"
#include "runtime/Ops.h"

#include <functional>
#include <optional>
#include <span>

namespace tsl {

class Evaluator;

namespace staging {

/// A primitive applied to `operands`: the IR value it stands for when one operand is
/// traced, or when a creation operation runs while a function is being lowered (so a
/// large (zeros [4096 4096]) is not baked into the program), or a side-effecting one (a
/// collective, which must run each time the compiled code does); nullopt: run it eagerly.
std::optional<Value> primitiveStaged(const Evaluator& evaluator, OpKind kind, const OpAttrs& attrs,
                                     std::span<const Value* const> operands, const Span& span);
inline std::optional<Value> primitive(const Evaluator& evaluator, OpKind kind, const OpAttrs& attrs,
                                      std::span<const Value* const> operands, const Span& span) {
  if (!evaluator.tracer()) [[likely]] {
    // Eager evaluation; a traced value here escaped its compilation (emit says so).
    for (const Value* v : operands)
      if (isTraced(*v)) [[unlikely]]
        return primitiveStaged(evaluator, kind, attrs, operands, span);
    return std::nullopt;
  }
  return primitiveStaged(evaluator, kind, attrs, operands, span);
}

/// The same for a call known to have a traced operand (a binary operation's fast path).
std::optional<Value> primitiveOnTraced(OpKind kind, const OpAttrs& attrs, std::span<const Value* const> operands,
                                       const Span& span);

/// A branch on `cond`: when it is traced, both branches are lowered into an `if`, each
/// seeing `frame`'s slots as the branch found them (a branch's last use moves a value out
/// of its slot, eval/LastUses.cpp); nullopt: decide by cond's truth.
std::optional<Value> branchStaged(const Value& cond, Frame& frame, const std::function<Value()>& ifTrue,
                                  const std::function<Value()>& ifFalse, const Span& span);
template <class T, class F>
std::optional<Value> branch(const Value& cond, Frame& frame, const T& ifTrue, const F& ifFalse, const Span& span) {
  if (!isTraced(cond)) [[likely]]
    return std::nullopt;
  return branchStaged(cond, frame, ifTrue, ifFalse, span);
}

/// A loop (or a fn that recurs) under a tracer: run as written (unrolled) while its trip
/// count depends on static values only, else lowered to a `while`. `targets` are the
/// bindings' patterns, bound to `initial` in `frame`; `body` evaluates one iteration.
/// nullopt when no function is being lowered: run it the ordinary way.
std::optional<Value> loop(Evaluator& evaluator, Frame& frame, std::span<const Pattern* const> targets,
                          const std::vector<Value>& initial, const std::function<Value()>& body, const Span& span);
/// Whether loops must go through staging::loop (a function is being lowered).
inline bool lowering(const Evaluator& evaluator) { return evaluator.tracer() != nullptr; }

/// A recur with `values`: true if a staged loop takes them (the bindings must not change).
bool recurStaged(const Evaluator& evaluator, std::span<const Value> values);
inline bool recur(const Evaluator& evaluator, std::span<const Value> values) {
  return evaluator.tracer() && recurStaged(evaluator, values);
}

/// Row i of a traced tensor (nth, first, destructuring), nil past its last row; nullopt
/// for any other value.
std::optional<Value> row(const Value& coll, int64_t i);

/// vmap (eval/Batching.cpp): when `args` hold values batched by an enclosing vmap, calls
/// `fn` once per example (each batched value replaced by its row) and stacks the results
/// into batched values; nullopt when none is batched. For calls that cannot batch their
/// operations themselves: derivatives, nested vmaps.
std::optional<Value> perExample(Evaluator& evaluator, std::span<const Value> args,
                                const std::function<Value(std::span<const Value>)>& fn, const Span& span);
/// Thrown by what has a meaning only under a tracer when a jit call is replayed eagerly
/// (Evaluator::replaying): the replay then reports the compile error instead.
struct NoEagerMeaning {};
/// Fails with a type error saying `message`, or throws NoEagerMeaning in a replay.
[[noreturn]] void tracerOnly(const Evaluator& evaluator, std::string_view message);

/// An if on a batched condition: both branches' results, selected per example by `where`.
Value selectBatched(const Value& cond, const Value& ifTrue, const Value& ifFalse, const Span& span);

/// A value that must be known while compiling (a vector index, a key): a type error
/// naming `what` when it is a traced value.
void requireStatic(const Value& v, std::string_view what);

/// A native (host) function's arguments: a type error naming the function and the
/// argument when one holds a value being traced, which a host cannot use.
void refuseInternal(const Evaluator& evaluator, std::string_view function, std::span<const Value> args);

} // namespace staging
} // namespace tsl
