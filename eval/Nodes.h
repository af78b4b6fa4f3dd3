// eval/Nodes.h — the executable form of core TSL: a tree of nodes with resolved names.
//
// The analyzer turns each core form into a node once; running a program is then a walk
// over nodes, with no name lookups: locals live in numbered slots of the frame of the
// function that binds them, captured variables in the closure, globals in their Var.
// `recur` stores its values into the slots of its loop (or fn) and returns the Recur
// marker, which the loop consumes; because recur is only allowed in tail position
// (checked by the analyzer), every node between them simply returns it.
#pragma once

#include "eval/Namespace.h"
#include "eval/Value.h"
#include "parser/Syntax.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace tsl {

class Evaluator;

/// The slots of one function invocation (or top-level form) and the closure running.
struct Frame {
  Value* slots;
  const ClosureObj* closure; ///< nullptr at top level
  int size;                  ///< the number of slots
};

struct Pattern;

/// The liveness of a frame's slots, walked backwards through a body (eval/LastUses.cpp):
/// which slots something evaluated later may read. A read of a slot that nothing reads
/// afterwards on any path is a *last use*: it moves the value out of the slot instead of
/// copying it, so that what it is passed to holds the only reference (jit :donate writes
/// a result over an argument only then).
struct LastUses {
  explicit LastUses(int frameSize) : live(static_cast<size_t>(frameSize), false) {}
  std::vector<bool> live;
  /// The slots live where each enclosing loop (or the fn) starts an iteration: what a
  /// recur to it leaves live. The innermost is last.
  std::vector<std::vector<bool>> heads;

  void everything() { live.assign(live.size(), true); }
  void read(int slot) {
    if (slot >= 0 && static_cast<size_t>(slot) < live.size()) live[static_cast<size_t>(slot)] = true;
  }
  bool isLive(int slot) const {
    return slot < 0 || static_cast<size_t>(slot) >= live.size() || live[static_cast<size_t>(slot)];
  }
  /// The slots `pattern` binds are dead before it binds them.
  void kill(const Pattern& pattern);
  void join(const std::vector<bool>& other) {
    for (size_t i = 0; i < live.size() && i < other.size(); ++i) live[i] = live[i] || other[i];
  }
};

class Node;

/// Marks the last uses in `body`, a function body (whose recur binds `params`) or a
/// top-level form (no params) over a frame of `frameSize` slots.
void markLastUses(const Node& body, int frameSize, const std::vector<const Pattern*>& params);

class Node {
public:
  explicit Node(Span span) : span_(span) {}
  virtual ~Node() = default;
  virtual Value eval(Evaluator& evaluator, Frame& frame) const = 0;
  /// Updates `uses` from the slots live after this node to those live before it, marking
  /// last uses on the way. The default, for a node that does not say what it reads: it
  /// may read every slot, so nothing before it moves.
  virtual void lastUses(LastUses& uses) const { uses.everything(); }
  /// For nodes that only read a value (a local, a capture, a constant): where it is,
  /// so a caller can use it without copying. nullptr for everything else.
  virtual const Value* peek(const Frame&) const { return nullptr; }
  /// Whether peek() gives a value (without evaluating anything, never moving).
  virtual bool peekable() const { return false; }
  const Span& span() const { return span_; }

private:
  Span span_;
};
using NodePtr = std::unique_ptr<Node>;

/// A binding target: a slot, or a vector pattern destructuring a sequence.
struct Pattern {
  enum class Kind : uint8_t { Slot, Sequence };
  Kind kind = Kind::Slot;
  int slot = -1;                 ///< Slot: where the value goes
  std::vector<Pattern> items;    ///< Sequence: element patterns
  std::unique_ptr<Pattern> rest; ///< Sequence: `& rest`
  int asSlot = -1;               ///< Sequence: `:as whole`
  std::string name;              ///< Slot: the bound symbol (names IR values when lowering)
  Span span;

  /// Binds `value` into the frame's slots.
  void bind(const Value& value, Value* slots) const;
  /// Binds a value that is no longer needed elsewhere (a plain slot takes it over).
  void bindMoved(Value&& value, Value* slots) const {
    if (kind == Kind::Slot) slots[slot] = std::move(value);
    else bind(value, slots);
  }
};

/// Where a closure's captured value comes from when the closure is created: a slot of
/// the creating frame, a capture of the creating closure, or that closure itself.
struct CaptureSource {
  enum class Kind : uint8_t { Slot, Capture, Self };
  Kind kind;
  int index;
};

/// A compiled function body, shared by every closure made from the same `fn` form.
struct Lambda {
  std::string name;
  std::vector<Pattern> params; ///< fixed parameters
  std::optional<Pattern> rest; ///< `& rest`
  int frameSize = 0;
  bool recurs = false; ///< whether its body recurs to the fn itself (lowered as a while)
  NodePtr body;
  std::vector<CaptureSource> captureSources;
  std::vector<std::string> captureNames; ///< name of each capture, for lowering to IR
  SyntaxPtr source;                      ///< the core `fn` form, for lowering to IR
  Namespace* ns = nullptr;               ///< where its global names resolve
  Span span;

  int minArgs() const { return static_cast<int>(params.size()); }
  bool variadic() const { return rest.has_value(); }
};

// ---- Node kinds ----

class ConstNode final : public Node {
public:
  ConstNode(Value value, Span span) : Node(span), value_(std::move(value)) {}
  Value eval(Evaluator&, Frame&) const override { return value_; }
  const Value* peek(const Frame&) const override { return &value_; }
  bool peekable() const override { return true; }
  const Value& value() const { return value_; }

  void lastUses(LastUses& uses) const override;
private:
  Value value_;
};

class LocalNode final : public Node {
public:
  LocalNode(int slot, Span span) : Node(span), slot_(slot) {}
  /// A last use moves the value out (the slot is never read again before it is bound).
  Value eval(Evaluator&, Frame& frame) const override {
    return moves_ ? std::move(frame.slots[slot_]) : frame.slots[slot_];
  }
  const Value* peek(const Frame& frame) const override { return &frame.slots[slot_]; }
  bool peekable() const override { return true; }
  void lastUses(LastUses& uses) const override;
  bool moves() const { return moves_; }

private:
  int slot_;
  mutable bool moves_ = false; ///< set once, by the analyzer's liveness walk
};

class CaptureNode final : public Node {
public:
  CaptureNode(int index, Span span) : Node(span), index_(index) {}
  Value eval(Evaluator&, Frame& frame) const override { return frame.closure->captures()[index_]; }
  const Value* peek(const Frame& frame) const override { return &frame.closure->captures()[index_]; }
  bool peekable() const override { return true; }

  void lastUses(LastUses& uses) const override;
private:
  int index_;
};

/// The running closure itself (the name of a named `fn`).
class SelfNode final : public Node {
public:
  explicit SelfNode(Span span) : Node(span) {}
  Value eval(Evaluator&, Frame& frame) const override { return Value(frame.closure); }
  void lastUses(LastUses& uses) const override;
};

class GlobalNode final : public Node {
public:
  GlobalNode(Var* var, Span span) : Node(span), var_(var) {}
  Value eval(Evaluator& evaluator, Frame& frame) const override;
  Var* var() const { return var_; }

  void lastUses(LastUses& uses) const override;
private:
  Var* var_;
};

class DefNode final : public Node {
public:
  DefNode(Var* var, NodePtr value, std::string doc, Span span)
      : Node(span), var_(var), value_(std::move(value)), doc_(std::move(doc)) {}
  Value eval(Evaluator& evaluator, Frame& frame) const override;

  void lastUses(LastUses& uses) const override;
private:
  Var* var_;
  NodePtr value_;
  std::string doc_;
};

class IfNode final : public Node {
public:
  IfNode(NodePtr cond, NodePtr then, NodePtr otherwise, Span span)
      : Node(span), cond_(std::move(cond)), then_(std::move(then)), else_(std::move(otherwise)) {}
  Value eval(Evaluator& evaluator, Frame& frame) const override;

  void lastUses(LastUses& uses) const override;
private:
  NodePtr cond_, then_, else_;
};

class DoNode final : public Node {
public:
  DoNode(std::vector<NodePtr> body, Span span) : Node(span), body_(std::move(body)) {}
  Value eval(Evaluator& evaluator, Frame& frame) const override;

  void lastUses(LastUses& uses) const override;
private:
  std::vector<NodePtr> body_;
};

/// `and` / `or`: short-circuit, returning the deciding value.
class LogicNode final : public Node {
public:
  LogicNode(bool isAnd, std::vector<NodePtr> operands, Span span)
      : Node(span), isAnd_(isAnd), operands_(std::move(operands)) {}
  Value eval(Evaluator& evaluator, Frame& frame) const override;

  void lastUses(LastUses& uses) const override;
private:
  Value evalFrom(Evaluator& evaluator, Frame& frame, size_t first) const;

  bool isAnd_;
  std::vector<NodePtr> operands_;
};

struct Binding {
  Pattern pattern;
  NodePtr init;
};

class LetNode final : public Node {
public:
  LetNode(std::vector<Binding> bindings, NodePtr body, int firstSlot, int endSlot, Span span)
      : Node(span), bindings_(std::move(bindings)), body_(std::move(body)), firstSlot_(firstSlot),
        endSlot_(endSlot) {}
  Value eval(Evaluator& evaluator, Frame& frame) const override;

  void lastUses(LastUses& uses) const override;
private:
  std::vector<Binding> bindings_;
  NodePtr body_;
  int firstSlot_, endSlot_; ///< slots released when the body is done
};

class LoopNode final : public Node {
public:
  LoopNode(std::vector<Binding> bindings, NodePtr body, int firstSlot, int endSlot, Span span)
      : Node(span), bindings_(std::move(bindings)), body_(std::move(body)), firstSlot_(firstSlot),
        endSlot_(endSlot) {}
  Value eval(Evaluator& evaluator, Frame& frame) const override;
  const std::vector<Binding>& bindings() const { return bindings_; }

  void lastUses(LastUses& uses) const override;
private:
  std::vector<Binding> bindings_;
  NodePtr body_;
  int firstSlot_, endSlot_;
};

/// `recur`: evaluates its operands, then binds them to the target's patterns.
class RecurNode final : public Node {
public:
  RecurNode(std::vector<NodePtr> operands, std::vector<const Pattern*> targets, Span span)
      : Node(span), operands_(std::move(operands)), targets_(std::move(targets)) {}
  Value eval(Evaluator& evaluator, Frame& frame) const override;

  void lastUses(LastUses& uses) const override;
private:
  std::vector<NodePtr> operands_;
  std::vector<const Pattern*> targets_;
};

class FnNode final : public Node {
public:
  FnNode(std::shared_ptr<const Lambda> lambda, bool macro, Span span)
      : Node(span), lambda_(std::move(lambda)), macro_(macro) {}
  Value eval(Evaluator& evaluator, Frame& frame) const override;
  const std::shared_ptr<const Lambda>& lambda() const { return lambda_; }

  void lastUses(LastUses& uses) const override;
private:
  std::shared_ptr<const Lambda> lambda_;
  bool macro_;
};

/// A vector expression whose elements are evaluated ([x (f y)]).
class VectorNode final : public Node {
public:
  VectorNode(std::vector<NodePtr> items, Span span) : Node(span), items_(std::move(items)) {}
  Value eval(Evaluator& evaluator, Frame& frame) const override;

  void lastUses(LastUses& uses) const override;
private:
  std::vector<NodePtr> items_;
};

/// A map expression whose keys and values are evaluated.
class MapNode final : public Node {
public:
  MapNode(std::vector<NodePtr> keysAndValues, Span span) : Node(span), items_(std::move(keysAndValues)) {}
  Value eval(Evaluator& evaluator, Frame& frame) const override;

  void lastUses(LastUses& uses) const override;
private:
  std::vector<NodePtr> items_;
};

class CallNode final : public Node {
public:
  CallNode(NodePtr callee, std::vector<NodePtr> operands, Span span)
      : Node(span), callee_(std::move(callee)), operands_(std::move(operands)) {}
  Value eval(Evaluator& evaluator, Frame& frame) const override;

  void lastUses(LastUses& uses) const override;
private:
  NodePtr callee_;
  std::vector<NodePtr> operands_;
};

/// (op a b) where op is a global bound, when analysed, to a builtin with a two-operand
/// fast path (+, <, ...). Runs that path directly while the global still holds that
/// builtin; if the program redefines it, behaves as an ordinary call.
class BinaryCallNode final : public Node {
public:
  BinaryCallNode(Var* var, const Object* builtin, BuiltinObj::BinaryFn fn, NodePtr lhs, NodePtr rhs,
                 Span span)
      : Node(span), var_(var), builtin_(builtin), fn_(fn), lhs_(std::move(lhs)), rhs_(std::move(rhs)) {}
  Value eval(Evaluator& evaluator, Frame& frame) const override;

  void lastUses(LastUses& uses) const override;
private:
  Var* var_;
  const Object* builtin_;
  BuiltinObj::BinaryFn fn_;
  NodePtr lhs_, rhs_;
};

} // namespace tsl
