// eval/Tracer.h — lowering TSL functions to IR by staged evaluation.
//
// A function is lowered by running it on *traced* tensors: values that stand for the
// function's arguments and are known only by their types. Everything that does not
// depend on them — numbers, keywords, trees, closures, `(range 3)`, attribute arguments —
// is computed now, by the ordinary evaluator; every primitive applied to a traced tensor
// emits an IR operation instead of running a kernel. So macros are already expanded,
// user functions are inlined as they are called, trees are flattened to their tensor
// leaves, and captured globals become constants (or, when large, hidden parameters).
//
// Control flow that depends on traced values becomes structured IR: an `if` on a traced
// boolean lowers both branches into the two regions of an `if` operation; a `loop` (or a
// fn that recurs) whose bindings hold traced tensors becomes a `while`. A loop body may
// end in `recur` on some paths and in a result on others; the tracer merges those paths
// into one `condition %continue, next-bindings..., result...`.
//
// Errors found while lowering (a shape mismatch, a traced value where a static one is
// needed) point at the user's span, before anything runs. Those that concern what can
// be lowered at all start with "jit: ".
#pragma once

#include "eval/Nodes.h"
#include "ir/Builder.h"

#include <cstdint>
#include <functional>
#include <optional>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace tsl {

class Evaluator;

/// The shape of a tree with its tensor leaves taken out (so a tree of traced values can be
/// rebuilt from IR values, and two trees compared for structure).
struct TreeShape {
  enum class Kind : uint8_t { Leaf, Static, Map, Vector, List };
  Kind kind = Kind::Leaf;
  Value value;                   ///< Static: the non-tensor leaf itself
  std::vector<Value> keys;       ///< Map: the keys, in order
  std::vector<TreeShape> children;

  /// Splits `tree` into its shape and its tensor (or traced) leaves, in order.
  static TreeShape flatten(const Value& tree, std::vector<Value>& leaves);
  /// Rebuilds a tree of this shape from leaves, starting at `leaves[pos]`.
  Value rebuild(std::span<const Value> leaves, size_t& pos) const;
  /// Same structure and equal static leaves.
  bool sameAs(const TreeShape& other) const;
  size_t leafCount() const;
  /// The tensor leaves of `tree` in this shape's order (a map's entries may come in any
  /// order); false if `tree` does not have this structure.
  bool flattenLike(const Value& tree, std::vector<Value>& leaves) const;
  /// A name for each leaf: `prefix` and the path of keys and indices to it ("p.l1.w").
  void label(const std::string& prefix, std::vector<std::string>& out) const;
};

class Tracer {
public:
  Tracer(Evaluator& evaluator, ir::Module& module, ir::Function& function);
  Tracer(const Tracer&) = delete;
  Tracer& operator=(const Tracer&) = delete;
  ~Tracer();

  ir::Function& function() const { return function_; }
  ir::Module& module() const { return module_; }
  ir::Builder& builder() { return builder_; }

  /// The tracer lowering now: this one, or one nested in it (a derivative's function
  /// being lowered inside the function that takes the derivative).
  Tracer& active() const;
  /// A nested tracer: lowers another function of the same module, called from this one's.
  bool nested() const { return previous_ && &previous_->module_ == &module_; }
  /// The values of enclosing functions this (nested) function received as parameters,
  /// with the enclosing function's value each stands for, in parameter order.
  const std::vector<std::pair<ir::Value*, ir::Value*>>& lifted() const { return lifted_; }

  /// A TSL value standing for an IR value.
  Value wrap(ir::Value* value);
  /// A value batched by vmap: `value` holds one example per row of its first axis.
  Value wrapBatched(ir::Value* value);
  /// The type one example of a batched IR value has (its type without the first axis).
  const ir::Type& exampleType(const ir::Value* value);
  /// Marks a parameter as a weak literal (a bare number passed to a jit function): like a
  /// literal, it takes the dtype of the tensors it meets (§3). Its type is i64 or f64.
  void markWeak(const ir::Value* value) { weak_.insert(value); }
  bool isWeak(const ir::Value* value) const { return weak_.count(value) > 0; }
  /// The IR value of an operand: a traced value itself; a tensor as a constant (a hidden
  /// parameter when large); a weak scalar converted to `weakAs` first.
  ir::Value* materialize(const Value& v, std::optional<DType> weakAs, const Span& span);
  /// Materialised with `type`'s dtype (for a weak value) and layout (a transdata when it
  /// is stored otherwise).
  ir::Value* materializeAs(const Value& v, const ir::Type& type, const Span& span);
  /// Emits a primitive applied to operands at least one of which is traced.
  Value emit(OpKind kind, const OpAttrs& attrs, std::span<const Value* const> operands, const Span& span);

  /// A primitive with an operand batched by vmap: the operation's batching rule, by its
  /// class (eval/Batching.cpp): elementwise and contractions run once on the whole batch,
  /// reductions with their axes moved past the batch axis, anything else once per example.
  Value emitBatched(OpKind kind, const OpAttrs& attrs, std::span<const Value* const> operands, const Span& span);

  /// An `if` on a traced condition; each branch function evaluates one branch.
  Value stageIf(const Value& cond, const std::function<Value()>& thenBranch,
                const std::function<Value()>& elseBranch, const Span& span);
  /// A `while` for a loop (or recurring fn) whose initial binding values hold traced
  /// tensors: `targets` are the bindings' patterns, `body` evaluates the loop body with
  /// the bindings bound in `frame`.
  Value stageLoop(Frame& frame, std::span<const Pattern* const> targets, const std::vector<Value>& initial,
                  const std::function<Value()>& body, const Span& span);
  /// Runs a loop (or recurring fn) the ordinary way — unrolled, traced values flowing
  /// through its bindings — `body` evaluating one iteration. Returns nullopt, with what it
  /// emitted undone, if a recur turns out to depend on a traced condition (its trip count
  /// is data-dependent) or after `maxIterations`: then the loop must be staged as a while.
  std::optional<Value> runStaticLoop(const std::function<Value()>& body, const Span& span,
                                     int64_t maxIterations = INT64_MAX);
  /// The maxIterations for a loop whose bindings hold traced values (or not).
  static int64_t unrollLimit(bool traced);
  /// Called by every `recur` while tracing: true if it belongs to a staged loop (which
  /// takes its values; the bindings must not change), false if it rebinds as usual.
  bool noteRecur(std::span<const Value> values);

  /// Called when the function being lowered calls an effectful builtin (printing, files):
  /// the effect happens now, once, not each time the compiled code runs.
  void noteEffect(const std::string& name) {
    if (effect_.empty()) effect_ = name;
  }
  /// The first effectful builtin called while lowering, or empty.
  const std::string& effect() const { return effect_; }
  /// Whether staging is inside a branch of a traced if.
  bool inStagedBranch() const { return branchDepth_ > 0; }

  /// Thrown when every path from here on fails (both branches of a staged if raise): the
  /// code that follows is never reached. The enclosing branch, or the function, raises.
  struct AlwaysRaises {
    Error error;
  };
  /// Whether an error met while lowering is one eager code raises when it runs that code
  /// (an error of the program's values), rather than one about compiling it (`jit:`
  /// refusals, internal faults) or one that must reach the top (Ctrl-C, step limit, memory).
  static bool raisedWhenRun(const Error& e);
  /// Emits an IR raise of `error` at its span (or `fallback`) into the current block.
  void raiseHere(const Error& error, const Span& fallback);

  /// The tensors passed as hidden parameters (large constants), in parameter order after
  /// the function's own.
  const std::vector<Tensor>& hiddenArgs() const { return hidden_; }

  /// Whether a value or any leaf of it is traced.
  static bool containsTraced(const Value& v);

private:
  struct Outcome;
  struct LoopContext;

  /// Lowers `fn` into `block`. A `conditional` branch (of an if) that meets an error of the
  /// program's values raises it when taken instead (Outcome::Kind::Raises).
  Outcome branch(ir::Block& block, const std::function<Value()>& fn, bool conditional);
  Outcome standIn(const Outcome& other, const Error& error);
  /// Removes the operations of `block` from position `mark` on, forgetting what the
  /// tracer knew of their values (their addresses may be reused).
  void eraseFrom(ir::Block& block, size_t mark);
  Value merge(ir::Operation& ifOp, Outcome a, Outcome b, const Span& span);
  std::vector<ir::Value*> yieldLeaves(ir::Block& block, const std::vector<Value>& leaves, const std::vector<ir::Type>& types,
                                      const Span& span);

  Evaluator& evaluator_;
  ir::Module& module_;
  ir::Function& function_;
  ir::Builder builder_;
  Tracer* previous_;
  std::vector<Tensor> hidden_;
  std::unordered_map<const void*, ir::Value*> hiddenByData_;
  std::unordered_set<const ir::Value*> weak_;
  std::unordered_map<const ir::Value*, ir::Type> exampleTypes_;
  /// A value of an enclosing tracer's function as a parameter of this nested one.
  ir::Value* lift(const Value& v);
  std::vector<std::pair<ir::Value*, ir::Value*>> lifted_; ///< (outer value, parameter)
  std::unordered_map<const ir::Value*, ir::Value*> liftedIndex_;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true); ///< false once the tracer is gone
  /// The loops and recurring fns running, innermost last: the target of a recur.
  struct RecurTarget {
    LoopContext* staged; ///< nullptr for a loop run the ordinary way
    int branchDepth;     ///< staged if-branches open when it started
    size_t depth;        ///< its index, to match a restage request
  };
  struct Restage {
    size_t depth;
  };
  std::vector<RecurTarget> targets_;
  std::vector<LoopContext*> loops_;
  int branchDepth_ = 0;
  std::string effect_;
  std::unique_ptr<Outcome> pending_; ///< what the last recur under a staged loop produced
};

/// The tracer a traced value's operations must go to (the one lowering now).
Tracer& activeTracer(const Value& traced);
/// Whether a traced value is a weak (bare-number) one.
bool weakTraced(const Value& traced);

/// The type of a traced value ("f32[2,3]").
std::string tracedTypeName(const Value& v);
/// The IR type of a traced value.
const ir::Type& tracedType(const Value& v);
/// The length of a traced tensor's first axis (sequence functions walk it).
int64_t tracedLength(const Value& v);
/// The rows of a traced tensor along its first axis (emitted as `index` operations).
std::vector<Value> tracedRows(const Value& v);
/// Row i of a traced tensor (0 <= i < tracedLength).
Value tracedRow(const Value& v, int64_t i);

} // namespace tsl
