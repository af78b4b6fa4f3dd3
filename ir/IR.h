// ir/IR.h — the dataflow IR: modules of functions of operations on SSA values.
//
// An Operation is either a primitive of the operation table (runtime/Ops.h; its mnemonic,
// typed attributes, type rule and traits come from there) or one of the structural
// operations below. Control flow is structured: `if` and `while` own regions, each a
// single block ending in a terminator (`yield`, `condition`), so every value is defined
// before its uses and dominance is lexical. Every operation keeps the span of the source
// it came from; passes that replace an operation give the replacement that span.
//
//   constant                    a tensor literal
//   if %c {then} else {else}    results: the values each region yields
//   while (%x = %init, ...) {before} do (%y, ...) {after}
//                               `before` ends with `condition %flag, %v...`: while the
//                               flag is true the values go to `after`, which yields the
//                               next carried values; when false they are the results
//   call @f(%a, ...)            calls another function of the module
//   yield, condition, return    terminators
//   fused KIND (%a = %x, ...) {region}
//                               one loop nest (or reduction, or contraction with its
//                               epilogue) made by the fuse pass: its region sees only its
//                               own arguments (bound to the operands) and yields the results;
//                               KIND is derived from what the region holds (fusionKind)
//   raise KIND "message"        raises a user error of KIND (assert, value...) where it is
//                               reached: a failed `assert` in compiled code. An effect:
//                               never removed, merged or reordered
//   tape_new, tape_push %t, %v..., tape_pop %t
//                               a stack of tensor tuples, handled by an i64 scalar: reverse-
//                               mode autodiff records each iteration of a while on one and
//                               replays it backwards. Side effects: never removed, merged
//                               or reordered.
#pragma once

#include "ir/Type.h"
#include "tsl/Error.h"

#include <functional>
#include <list>
#include <optional>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

namespace tsl::ir {

enum class Structural : uint8_t { Constant, If, While, Call, Yield, Condition, Return, TapeNew, TapePush, TapePop, Fused, Raise };

/// What an operation does: a structural operation or a primitive of the op table.
struct OpCode {
  bool primitive = false;
  Structural structural = Structural::Constant;
  OpKind kind = OpKind::Add;

  static OpCode of(OpKind kind) { return {true, Structural::Constant, kind}; }
  static OpCode of(Structural s) { return {false, s, OpKind::Add}; }
  bool is(Structural s) const { return !primitive && structural == s; }
  bool is(OpKind k) const { return primitive && kind == k; }
  bool operator==(const OpCode& other) const {
    return primitive == other.primitive && (primitive ? kind == other.kind : structural == other.structural);
  }
  /// The mnemonic ("add", "if", "log_softmax").
  const char* name() const;
  bool isTerminator() const {
    return is(Structural::Yield) || is(Structural::Condition) || is(Structural::Return);
  }
  bool isTape() const { return is(Structural::TapeNew) || is(Structural::TapePush) || is(Structural::TapePop); }
  /// Structural operations with an effect (tapes, raise): never removed, merged or moved.
  bool hasEffect() const { return isTape() || is(Structural::Raise); }
};

class Operation;
class Block;
class Region;
class Function;

/// An SSA value: an operation's result or a block's argument.
class Value {
public:
  Value(Type type, Operation* def, Block* owner, int index) : type_(std::move(type)), def_(def), owner_(owner), index_(index) {}
  const Type& type() const { return type_; }
  void setType(Type type) { type_ = std::move(type); }
  /// The defining operation; nullptr for a block argument.
  Operation* def() const { return def_; }
  /// The block whose argument this is; nullptr for a result.
  Block* argumentOf() const { return owner_; }
  int index() const { return index_; }
  /// A preferred printed name ("x" prints as %x when unique in its function).
  const std::string& name() const { return name_; }
  void setName(std::string name) { name_ = std::move(name); }

private:
  Type type_;
  Operation* def_;
  Block* owner_;
  int index_;
  std::string name_;
};

class Operation {
public:
  Operation(OpCode code, Span span) : code_(code), span_(span) {}

  OpCode code() const { return code_; }
  const Span& span() const { return span_; }
  void setSpan(const Span& span) { span_ = span; }

  std::vector<Value*>& operands() { return operands_; }
  const std::vector<Value*>& operands() const { return operands_; }
  Value* operand(size_t i) const { return operands_[i]; }

  size_t resultCount() const { return results_.size(); }
  Value* result(size_t i = 0) const { return results_[i].get(); }
  Value* addResult(Type type);

  std::vector<std::unique_ptr<Region>>& regions() { return regions_; }
  const std::vector<std::unique_ptr<Region>>& regions() const { return regions_; }
  Region& addRegion();
  Region& region(size_t i) const { return *regions_[i]; }

  /// Attributes of a primitive.
  const OpAttrs& attrs() const { return attrs_; }
  void setAttrs(OpAttrs attrs) { attrs_ = std::move(attrs); }
  /// The value of a constant.
  const Tensor& constant() const { return constant_; }
  void setConstant(Tensor t) { constant_ = std::move(t); }
  /// The function a call calls.
  const std::string& callee() const { return callee_; }
  void setCallee(std::string name) { callee_ = std::move(name); }
  /// The error a raise raises.
  ErrorKind raiseKind() const { return raiseKind_; }
  const std::string& message() const { return message_; }
  void setRaise(ErrorKind kind, std::string message) {
    raiseKind_ = kind;
    message_ = std::move(message);
  }
  /// Copies what an operation carries beyond operands and results (attributes, constant,
  /// callee, the error of a raise) from `other`.
  void copyPayload(const Operation& other) {
    attrs_ = other.attrs_;
    constant_ = other.constant_;
    callee_ = other.callee_;
    raiseKind_ = other.raiseKind_;
    message_ = other.message_;
  }

  Block* parent() const { return parent_; }
  void setParent(Block* block) { parent_ = block; }

  /// Whether removing this operation when its results are unused changes nothing. A call
  /// counts as pure here; isPure(op, module) looks into the callee.
  bool isPure() const;

private:
  OpCode code_;
  Span span_;
  std::vector<Value*> operands_;
  std::vector<std::unique_ptr<Value>> results_;
  std::vector<std::unique_ptr<Region>> regions_;
  OpAttrs attrs_;
  Tensor constant_;
  std::string callee_;
  ErrorKind raiseKind_ = ErrorKind::Assert;
  std::string message_;
  Block* parent_ = nullptr;
};

class Block {
public:
  explicit Block(Region* parent = nullptr) : parent_(parent) {}
  std::vector<std::unique_ptr<Value>>& arguments() { return args_; }
  const std::vector<std::unique_ptr<Value>>& arguments() const { return args_; }
  Value* argument(size_t i) const { return args_[i].get(); }
  Value* addArgument(Type type, std::string name = "");

  std::list<std::unique_ptr<Operation>>& ops() { return ops_; }
  const std::list<std::unique_ptr<Operation>>& ops() const { return ops_; }
  /// Appends (or inserts before `at`) and takes ownership.
  Operation* append(std::unique_ptr<Operation> op);
  Operation* insertBefore(std::list<std::unique_ptr<Operation>>::iterator at, std::unique_ptr<Operation> op);
  /// The terminator, or nullptr if the block does not end in one.
  Operation* terminator() const;

  Region* parent() const { return parent_; }

private:
  Region* parent_;
  std::vector<std::unique_ptr<Value>> args_;
  std::list<std::unique_ptr<Operation>> ops_;
};

class Region {
public:
  explicit Region(Operation* parent) : parent_(parent), block_(std::make_unique<Block>(this)) {}
  Block& block() const { return *block_; }
  Operation* parent() const { return parent_; }

private:
  Operation* parent_;
  std::unique_ptr<Block> block_;
};

struct MemoryPlan;

class Function {
public:
  Function(std::string name, Span span) : name_(std::move(name)), span_(span), body_(std::make_unique<Block>()) {}
  const std::string& name() const { return name_; }
  const Span& span() const { return span_; }
  void setSpan(const Span& span) { span_ = span; }
  Block& body() const { return *body_; }
  /// Result types (the operands of the final return).
  std::vector<Type> resultTypes() const;

  /// Where its values live (ir/MemoryPlan.h), once the plan-memory pass has run; null
  /// before, and after any later change.
  const std::shared_ptr<const MemoryPlan>& plan() const { return plan_; }
  void setPlan(std::shared_ptr<const MemoryPlan> plan) { plan_ = std::move(plan); }

private:
  std::string name_;
  Span span_;
  std::unique_ptr<Block> body_;
  std::shared_ptr<const MemoryPlan> plan_;
};

class Module {
public:
  Function& addFunction(std::string name, Span span);
  /// Where the IR text a module was parsed from defines an operation (for messages about
  /// operations without a source span); nullptr if unknown.
  const Span* textPosition(const Operation* op) const {
    auto it = textPositions_.find(op);
    return it == textPositions_.end() ? nullptr : &it->second;
  }
  void setTextPosition(const Operation* op, Span at) { textPositions_[op] = at; }
  /// The function named `name`, or nullptr (a hash lookup).
  Function* find(std::string_view name) const;
  /// `base` if no function has that name, else the first free "base.1", "base.2", ...
  /// (amortised O(1): the next suffix to try is remembered per base).
  std::string freshName(const std::string& base);
  const std::vector<std::unique_ptr<Function>>& functions() const { return functions_; }
  /// Deletes the functions for which `drop` is true.
  void removeFunctionsIf(const std::function<bool(const Function&)>& drop);

private:
  std::vector<std::unique_ptr<Function>> functions_;
  std::unordered_map<std::string, Function*> byName_;
  std::unordered_map<std::string, int> nextSuffix_;
  std::unordered_map<const Operation*, Span> textPositions_;
};

// ---- Walking and rewriting ----

/// Calls fn on every operation of a block, pre-order, including those nested in regions.
void walk(Block& block, const std::function<void(Operation&)>& fn);
/// Replaces every use of `from` with `to` in the block and its nested regions (a walk of
/// the whole block: a pass replacing many values uses Replacements instead).
void replaceAllUses(Block& block, Value* from, Value* to);

/// Replacements of values, applied to operations as a pass reaches them. Within a
/// function a value is used only after its definition in pre-order (regions included),
/// so a pass that walks in that order can record a replacement when it finds one and
/// rewrite each later operation's operands when it gets there: linear in the function's
/// size, where replaceAllUses per replacement is quadratic.
class Replacements {
public:
  /// From now on, uses of `from` become uses of `to`.
  void replace(Value* from, Value* to) { map_[from] = to; }
  /// Removes the operation at `at` from `ops`, keeping it alive until this object goes:
  /// freeing it while replacements of its results are recorded would let a new value
  /// take its address and be replaced by mistake.
  template <class List>
  typename List::iterator erase(List& ops, typename List::iterator at) {
    retired_.push_back(std::move(*at));
    return ops.erase(at);
  }
  /// Rewrites `op`'s operands (not those inside its regions) through the replacements.
  void apply(Operation& op) const {
    if (map_.empty()) return;
    for (Value*& operand : op.operands())
      for (auto it = map_.find(operand); it != map_.end(); it = map_.find(operand)) operand = it->second;
  }

private:
  std::unordered_map<const Value*, Value*> map_;
  std::vector<std::unique_ptr<Operation>> retired_;
};
/// Counts the uses of every value in a function (operands of operations anywhere in it).
std::unordered_map<const Value*, int> countUses(const Block& block);
/// Drops the functions `entry` does not call, directly or through others (derivative
/// functions inlined into it).
void pruneUnreachable(Module& module, const Function& entry);
/// Whether `op` has no effects, looking into the functions it calls (tape operations are
/// the IR's only effects).
bool isPure(const Operation& op, const Module& module);
/// Whether `op` may raise an error that depends on the values it computes on: a primitive
/// of trait kMayFail (cholesky of a matrix that is not positive definite, take out of
/// range...), or an if, while or call with one inside. dce keeps such an operation though
/// nothing reads its results, so compiled code fails where eager code does.
bool mayFail(const Operation& op, const Module& module);

/// Whether an operand or a result of `op` is stored in a layout other than row-major
/// (code that indexes elements row-major must convert, or run the runtime's kernel).
bool touchesLayouts(const Operation& op);

/// What a `fused` operation's region holds: Contraction if it has a contraction, else
/// Reduction if it has a reduction, else Elementwise (a loop nest).
FusionClass fusionKind(const Operation& fused);

/// The epilogue of a fused matrix product that the GEMM applies as it stores C:
///   result = act?(accumulator + alpha · product + bias), act relu, gelu or gelu-tanh,
/// with every part optional: `accumulator` an operand of the fused operation of the
/// result's type, added whole (the GEMM starts from it instead of zero, so the result may
/// take over its memory: an SGD step w - lr·g updates w in place); alpha a constant times
/// at most one scalar operand; `bias` a vector operand added along C's rows (biasAxis 0:
/// [m,1]) or columns (1: [n] or [1,n]). Operand indices are -1 when absent.
struct AffineEpilogue {
  int accumulator = -1;
  double alpha = 1;
  int alphaOperand = -1;
  int bias = -1;
  int biasAxis = 1;
  OpKind activation = OpKind::Add; ///< Relu, Gelu or GeluTanh last; Add when there is none
  bool activated() const { return activation != OpKind::Add; }
};
/// The affine epilogue of `fused` — a fused contraction whose contraction has the
/// kReadsViews trait (matmul), operands and a rank-2 result of one dtype, f32 or f64 (the
/// packed GEMM's) — or nothing if its region holds anything else. Both the memory plan
/// (which lets the result overwrite the accumulator) and :cpu code generation (which then
/// must start the GEMM from the accumulator) ask it.
std::optional<AffineEpilogue> affineEpilogue(const Operation& fused);

/// The tensor a value holds when a constant defines it, else nullptr.
const Tensor* constantValue(const Value* v);

/// Deep-copies `op` (and its regions), mapping operands through `mapping` (values not in
/// it are kept) and recording the copies' results and block arguments in it.
std::unique_ptr<Operation> cloneOp(const Operation& op, std::unordered_map<const Value*, Value*>& mapping);

} // namespace tsl::ir
