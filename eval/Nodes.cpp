// eval/Nodes.cpp — how each node runs.
#include "eval/Nodes.h"

#include "eval/Evaluator.h"
#include "eval/Printer.h"
#include "eval/Staging.h"
#include "eval/Suggest.h"
#include "runtime/Views.h"
#include "tsl/StackGuard.h"

namespace tsl {

namespace {

/// Values evaluated one after another into uninitialised storage: up to N on the stack
/// (only as many as used are ever constructed), more on the heap.
template <size_t N>
class ValueBuffer {
public:
  explicit ValueBuffer(size_t count) : count_(count) {
    if (count > N) {
      heap_.resize(count);
      data_ = heap_.data();
    } else {
      data_ = reinterpret_cast<Value*>(storage_);
    }
  }
  ~ValueBuffer() {
    if (count_ <= N) std::destroy_n(data_, constructed_);
  }
  ValueBuffer(const ValueBuffer&) = delete;
  ValueBuffer& operator=(const ValueBuffer&) = delete;

  /// Sets element i; elements must be set in order 0, 1, 2, ...
  void push(size_t i, Value value) {
    if (count_ <= N) {
      new (&data_[i]) Value(std::move(value));
      constructed_ = i + 1;
    } else {
      data_[i] = std::move(value);
    }
  }
  Value* data() { return data_; }

private:
  alignas(Value) unsigned char storage_[N * sizeof(Value)];
  std::vector<Value> heap_;
  Value* data_;
  size_t count_;
  size_t constructed_ = 0;
};

/// Clears slots [first, end) so values bound by a finished let or loop are freed now
/// rather than when the function returns (a training loop's temporaries can be large).
void releaseSlots(Value* slots, int first, int end) {
  for (int i = first; i < end; ++i) slots[i] = Value();
}

/// Element `i` of a sequence for destructuring (nil past the end).
Value nth(const Value& value, size_t i) {
  switch (value.kind()) {
  case ValueKind::Vector: return i < value.vector().count() ? value.vector()[i] : Value();
  case ValueKind::List: {
    const ListObj* cell = value.list();
    for (size_t k = 0; cell && k < i; ++k) cell = cell->next();
    return cell ? cell->first() : Value();
  }
  case ValueKind::Tensor: {
    const Tensor& t = value.tensor();
    if (static_cast<int64_t>(i) >= t.shape()[0]) return Value();
    return Value(selectIndex(t, 0, static_cast<int64_t>(i)));
  }
  case ValueKind::Internal: return *staging::row(value, static_cast<int64_t>(i));
  default: {
    const std::vector<Value> items = sequenceItems(value);
    return i < items.size() ? items[i] : Value();
  }
  }
}

/// The elements from `from` on, for `& rest`: a vector, as `rest` gives (nil when none
/// remain, as in Clojure).
Value restFrom(const Value& value, size_t from) {
  if (static_cast<size_t>(sequenceCount(value)) <= from) return Value();
  if (value.isVector()) return value.vector().drop(from);
  std::vector<Value> items = sequenceItems(value);
  items.erase(items.begin(), items.begin() + static_cast<std::ptrdiff_t>(from));
  return makeVector(std::move(items));
}

} // namespace

void Pattern::bind(const Value& value, Value* slots) const {
  if (kind == Kind::Slot) {
    slots[slot] = value;
    return;
  }
  checkStack();
  if (asSlot >= 0) slots[asSlot] = value;
  const bool sequence = value.isNil() || value.isSequential() || value.isMap() || value.isString() ||
                        value.isNonScalarTensor();
  if (!sequence)
    throw Error(ErrorKind::Type, cat("cannot destructure ", describeKind(value), " ",
                                     printValue(value, true).substr(0, 40), " as a sequence"),
                span);
  for (size_t i = 0; i < items.size(); ++i) items[i].bind(nth(value, i), slots);
  if (rest) rest->bind(restFrom(value, items.size()), slots);
}

Value GlobalNode::eval(Evaluator&, Frame&) const {
  if (!var_->defined) {
    if (var_->ns && var_->ns->name() != "user" && var_->ns->name() != "core")
      throw Error(ErrorKind::Name,
                  cat("unbound symbol '", var_->name, "' (in ", var_->ns->name(), ")", suggestNames(*var_->ns, var_->name)),
                  span());
    throw Error(ErrorKind::Name, cat("unbound symbol '", var_->name, "'", suggestNames(*var_->ns, var_->name)), span());
  }
  return var_->value;
}

Value DefNode::eval(Evaluator& evaluator, Frame& frame) const {
  Value value = value_->eval(evaluator, frame);
  var_->value = std::move(value);
  var_->defined = true;
  var_->doc = doc_;
  var_->defSpan = span();
  return makeSymbol(var_->name);
}

Value IfNode::eval(Evaluator& evaluator, Frame& frame) const {
  const Value cond = cond_->eval(evaluator, frame);
  if (std::optional<Value> staged = staging::branch(
          cond, frame, [&] { return then_->eval(evaluator, frame); }, [&] { return else_->eval(evaluator, frame); },
          span()))
    return std::move(*staged);
  bool truth;
  try {
    truth = cond.truthy();
  } catch (Error& e) {
    e.setSpanIfUnknown(cond_->span());
    throw;
  }
  return truth ? then_->eval(evaluator, frame) : else_->eval(evaluator, frame);
}

Value DoNode::eval(Evaluator& evaluator, Frame& frame) const {
  const size_t last = body_.size() - 1;
  for (size_t i = 0; i < last; ++i) body_[i]->eval(evaluator, frame);
  return body_[last]->eval(evaluator, frame);
}

Value LogicNode::eval(Evaluator& evaluator, Frame& frame) const {
  if (operands_.empty()) return isAnd_ ? Value::boolean(true) : Value();
  return evalFrom(evaluator, frame, 0);
}

Value LogicNode::evalFrom(Evaluator& evaluator, Frame& frame, size_t first) const {
  for (size_t i = first;; ++i) {
    Value value = operands_[i]->eval(evaluator, frame);
    if (i + 1 == operands_.size()) return value;
    // (and a b): b if a is true, else a; (or a b): a if true, else b.
    auto rest = [&] { return evalFrom(evaluator, frame, i + 1); };
    auto self = [&] { return value; };
    if (std::optional<Value> staged = isAnd_ ? staging::branch(value, frame, rest, self, span())
                                             : staging::branch(value, frame, self, rest, span()))
      return std::move(*staged);
    bool truth;
    try {
      truth = value.truthy();
    } catch (Error& e) {
      e.setSpanIfUnknown(operands_[i]->span());
      throw;
    }
    if (truth != isAnd_) return value;
  }
}

Value LetNode::eval(Evaluator& evaluator, Frame& frame) const {
  for (const Binding& binding : bindings_)
    binding.pattern.bindMoved(binding.init->eval(evaluator, frame), frame.slots);
  Value result = body_->eval(evaluator, frame);
  releaseSlots(frame.slots, firstSlot_, endSlot_);
  return result;
}

Value LoopNode::eval(Evaluator& evaluator, Frame& frame) const {
  if (staging::lowering(evaluator)) {
    // Under jit, a loop whose trip count depends on traced values becomes a while.
    std::vector<Value> initial;
    std::vector<const Pattern*> targets;
    for (const Binding& binding : bindings_) {
      initial.push_back(binding.init->eval(evaluator, frame));
      binding.pattern.bind(initial.back(), frame.slots);
      targets.push_back(&binding.pattern);
    }
    Value result = *staging::loop(evaluator, frame, targets, initial, [&] { return body_->eval(evaluator, frame); }, span());
    releaseSlots(frame.slots, firstSlot_, endSlot_);
    return result;
  }
  for (const Binding& binding : bindings_)
    binding.pattern.bindMoved(binding.init->eval(evaluator, frame), frame.slots);
  for (;;) {
    Value result = body_->eval(evaluator, frame);
    if (!result.isRecur()) {
      releaseSlots(frame.slots, firstSlot_, endSlot_);
      return result;
    }
    evaluator.poll(span());
  }
}

Value RecurNode::eval(Evaluator& evaluator, Frame& frame) const {
  // All operands are evaluated before any binding changes: (recur b a) swaps.
  const size_t n = operands_.size();
  ValueBuffer<8> values(n);
  for (size_t i = 0; i < n; ++i) values.push(i, operands_[i]->eval(evaluator, frame));
  if (staging::recur(evaluator, std::span<const Value>(values.data(), n)))
    return Value::recurMarker(); // a staged loop takes the values; the bindings stay
  for (size_t i = 0; i < n; ++i) targets_[i]->bindMoved(std::move(values.data()[i]), frame.slots);
  return Value::recurMarker();
}

Value FnNode::eval(Evaluator&, Frame& frame) const {
  std::vector<Value> captures;
  captures.reserve(lambda_->captureSources.size());
  for (const CaptureSource& source : lambda_->captureSources) {
    switch (source.kind) {
    case CaptureSource::Kind::Slot: captures.push_back(frame.slots[source.index]); break;
    case CaptureSource::Kind::Capture: captures.push_back(frame.closure->captures()[source.index]); break;
    case CaptureSource::Kind::Self: captures.push_back(Value(frame.closure)); break;
    }
  }
  return Value(new ClosureObj(lambda_, std::move(captures), macro_));
}

Value VectorNode::eval(Evaluator& evaluator, Frame& frame) const {
  std::vector<Value> items;
  items.reserve(items_.size());
  for (const NodePtr& item : items_) items.push_back(item->eval(evaluator, frame));
  return makeVector(std::move(items), span());
}

Value MapNode::eval(Evaluator& evaluator, Frame& frame) const {
  std::vector<std::pair<Value, Value>> entries;
  entries.reserve(items_.size() / 2);
  for (size_t i = 0; i < items_.size(); i += 2) {
    Value key = items_[i]->eval(evaluator, frame);
    Value value = items_[i + 1]->eval(evaluator, frame);
    bool replaced = false;
    for (auto& entry : entries)
      if (valuesEqual(entry.first, key)) {
        entry.second = std::move(value);
        replaced = true;
        break;
      }
    if (!replaced) entries.emplace_back(std::move(key), std::move(value));
  }
  return makeMap(std::move(entries), span());
}

Value CallNode::eval(Evaluator& evaluator, Frame& frame) const {
  const Value callee = callee_->eval(evaluator, frame);
  const size_t n = operands_.size();
  ValueBuffer<6> args(n);
  for (size_t i = 0; i < n; ++i) args.push(i, operands_[i]->eval(evaluator, frame));
  return evaluator.apply(callee, Args(args.data(), n), span());
}

Value BinaryCallNode::eval(Evaluator& evaluator, Frame& frame) const {
  // Operands that are plain reads are used in place, without copying.
  Value lhsValue, rhsValue;
  const Value* lhs = lhs_->peek(frame);
  if (!lhs) {
    lhsValue = lhs_->eval(evaluator, frame);
    lhs = &lhsValue;
  }
  const Value* rhs = rhs_->peek(frame);
  if (!rhs) {
    rhsValue = rhs_->eval(evaluator, frame);
    rhs = &rhsValue;
  }
  if (var_->value.object() != builtin_) {
    // Redefined since analysis: an ordinary call of whatever the name holds now.
    if (!var_->defined) throw Error(ErrorKind::Name, cat("unbound symbol '", var_->name, "'"), span());
    const Value args[2] = {*lhs, *rhs};
    return evaluator.apply(var_->value, Args(args, 2), span());
  }
  try {
    return fn_(*lhs, *rhs, span());
  } catch (Error& e) {
    e.setSpanIfUnknown(span());
    throw;
  }
}

} // namespace tsl
