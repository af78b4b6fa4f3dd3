// eval/LastUses.cpp — which reads of a local are its last: liveness over analysed nodes.
//
// Walked backwards through a function body (or a top-level form), each node turns the
// slots live after it into those live before it: a read makes its slot live, a binding
// kills the slots it binds, an `if` joins its branches, `and`/`or` join stopping with going
// on. A read of a slot that is not live after it is a last use, and LocalNode then moves
// the value out of the slot instead of copying it. Loops repeat: a recur goes back to its
// loop's head, where every slot but the loop's own bindings counts as live (a read of an
// outer local inside a loop is never a last use; a read of a loop binding in its recur is).
// Closures copy what they capture when created: a read at that point. Lowering runs both
// branches of a traced if, each from the slots the if found (IfNode::eval restores them).
//
// Expects: nodes from the analyzer, whose recur targets are the innermost enclosing loop
// or fn. Guarantees: a moved slot is never read again before it is bound again, on any
// path of the evaluator (or of the tracer, which runs the same nodes).
#include "eval/Nodes.h"

#include "tsl/StackGuard.h"

namespace tsl {

void LastUses::kill(const Pattern& pattern) {
  if (pattern.kind == Pattern::Kind::Slot) {
    if (pattern.slot >= 0 && static_cast<size_t>(pattern.slot) < live.size()) live[static_cast<size_t>(pattern.slot)] = false;
    return;
  }
  for (const Pattern& item : pattern.items) kill(item);
  if (pattern.rest) kill(*pattern.rest);
  if (pattern.asSlot >= 0 && static_cast<size_t>(pattern.asSlot) < live.size()) live[static_cast<size_t>(pattern.asSlot)] = false;
}

namespace {

/// Every slot but those `patterns` bind: what is live at the head of a loop (or fn)
/// binding them.
std::vector<bool> headOf(size_t frameSize, const std::vector<const Pattern*>& patterns) {
  LastUses head(static_cast<int>(frameSize));
  head.everything();
  for (const Pattern* p : patterns) head.kill(*p);
  return head.live;
}

} // namespace

void ConstNode::lastUses(LastUses&) const {}
void CaptureNode::lastUses(LastUses&) const {}
void SelfNode::lastUses(LastUses&) const {}
void GlobalNode::lastUses(LastUses&) const {}

void LocalNode::lastUses(LastUses& uses) const {
  if (!uses.isLive(slot_)) moves_ = true;
  uses.read(slot_);
}

void DefNode::lastUses(LastUses& uses) const { value_->lastUses(uses); }

void IfNode::lastUses(LastUses& uses) const {
  checkStack();
  // One branch runs (lowering a traced condition runs both, but gives each the slots as
  // the if found them: IfNode::eval).
  LastUses otherwise = uses;
  else_->lastUses(otherwise);
  then_->lastUses(uses);
  uses.join(otherwise.live);
  cond_->lastUses(uses);
}

void DoNode::lastUses(LastUses& uses) const {
  checkStack();
  for (size_t i = body_.size(); i-- > 0;) body_[i]->lastUses(uses);
}

void LogicNode::lastUses(LastUses& uses) const {
  checkStack();
  // After operand i the form either stops (what is live after it) or goes on to i + 1.
  const std::vector<bool> after = uses.live;
  for (size_t i = operands_.size(); i-- > 0;) {
    if (i + 1 < operands_.size()) uses.join(after);
    operands_[i]->lastUses(uses);
  }
}

void LetNode::lastUses(LastUses& uses) const {
  checkStack();
  body_->lastUses(uses);
  for (size_t i = bindings_.size(); i-- > 0;) {
    uses.kill(bindings_[i].pattern);
    bindings_[i].init->lastUses(uses);
  }
}

void LoopNode::lastUses(LastUses& uses) const {
  checkStack();
  std::vector<const Pattern*> own;
  for (const Binding& b : bindings_) own.push_back(&b.pattern);
  uses.heads.push_back(headOf(uses.live.size(), own));
  body_->lastUses(uses); // exits lead to what follows the loop, recurs to the head
  uses.heads.pop_back();
  for (size_t i = bindings_.size(); i-- > 0;) {
    uses.kill(bindings_[i].pattern);
    bindings_[i].init->lastUses(uses);
  }
}

void RecurNode::lastUses(LastUses& uses) const {
  checkStack();
  // A recur binds its targets and goes back to the head: live there is every slot but
  // the targets (headOf). (Lowered, a staged recur binds nothing; the loop binds its
  // targets afresh for each staging, and the other branch of a staged if gets its slots
  // back.)
  if (uses.heads.empty()) uses.everything();
  else uses.live = uses.heads.back();
  for (size_t i = operands_.size(); i-- > 0;) operands_[i]->lastUses(uses);
}

void FnNode::lastUses(LastUses& uses) const {
  for (const CaptureSource& source : lambda_->captureSources)
    if (source.kind == CaptureSource::Kind::Slot) uses.read(source.index);
}

void VectorNode::lastUses(LastUses& uses) const {
  checkStack();
  for (size_t i = items_.size(); i-- > 0;) items_[i]->lastUses(uses);
}

void MapNode::lastUses(LastUses& uses) const {
  checkStack();
  for (size_t i = items_.size(); i-- > 0;) items_[i]->lastUses(uses);
}

void CallNode::lastUses(LastUses& uses) const {
  checkStack();
  for (size_t i = operands_.size(); i-- > 0;) operands_[i]->lastUses(uses);
  callee_->lastUses(uses);
}

void BinaryCallNode::lastUses(LastUses& uses) const {
  checkStack();
  // An operand that is a plain read is peeked at when the call is made, after the other
  // operand is evaluated; the left one is otherwise evaluated first.
  if (lhs_->peekable()) {
    lhs_->lastUses(uses);
    rhs_->lastUses(uses);
  } else {
    rhs_->lastUses(uses);
    lhs_->lastUses(uses);
  }
}

void markLastUses(const Node& body, int frameSize, const std::vector<const Pattern*>& params) {
  LastUses uses(frameSize);
  uses.heads.push_back(headOf(static_cast<size_t>(frameSize), params)); // a recur to the fn
  body.lastUses(uses);
}

} // namespace tsl
