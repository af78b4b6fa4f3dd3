// ir/IR.cpp — IR construction, walking and cloning.
#include "ir/IR.h"

#include <unordered_set>

#include <unordered_map>

namespace tsl::ir {

const char* OpCode::name() const {
  if (primitive) return opInfo(kind).mnemonic;
  switch (structural) {
  case Structural::Constant: return "constant";
  case Structural::If: return "if";
  case Structural::While: return "while";
  case Structural::Call: return "call";
  case Structural::Yield: return "yield";
  case Structural::Condition: return "condition";
  case Structural::Return: return "return";
  case Structural::TapeNew: return "tape_new";
  case Structural::TapePush: return "tape_push";
  case Structural::TapePop: return "tape_pop";
  case Structural::Fused: return "fused";
  case Structural::Raise: return "raise";
  }
  return "?";
}

Value* Operation::addResult(Type type) {
  results_.push_back(std::make_unique<Value>(std::move(type), this, nullptr, static_cast<int>(results_.size())));
  return results_.back().get();
}

Region& Operation::addRegion() {
  regions_.push_back(std::make_unique<Region>(this));
  return *regions_.back();
}

bool Operation::isPure() const {
  if (code_.isTerminator() || code_.hasEffect()) return false;
  if (code_.primitive) return !opInfo(code_.kind).has(kSideEffecting);
  // Structural operations are pure when everything inside them is.
  for (const auto& region : regions_)
    for (const auto& op : region->block().ops())
      if (!op->code().isTerminator() && !op->isPure()) return false;
  return true; // constant, call (functions have no effects), if, while
}

namespace {

/// Whether a function has no effects (1: being visited, assumed pure; 2: pure; 3: not).
bool functionIsPure(const Function& f, const Module& module, std::unordered_map<const Function*, int>& state) {
  auto [it, inserted] = state.emplace(&f, 1);
  if (!inserted) return it->second != 3;
  bool pure = true;
  walk(f.body(), [&](Operation& op) {
    if (!pure) return;
    if (op.code().hasEffect() || (op.code().primitive && opInfo(op.code().kind).has(kSideEffecting))) pure = false;
    else if (op.code().is(Structural::Call))
      if (const Function* g = module.find(op.callee()); g && !functionIsPure(*g, module, state)) pure = false;
  });
  state[&f] = pure ? 2 : 3;
  return pure;
}

} // namespace

bool mayFail(const Operation& op, const Module& module) {
  std::unordered_set<const Function*> visited; // each callee once (recursion, shared callees)
  bool fails = false;
  // Called on every operation inside op's regions and its callees' bodies (walk recurses).
  std::function<void(Operation&)> check = [&](Operation& o) {
    if (fails) return;
    if (o.code().primitive) {
      fails = opInfo(o.code().kind).has(kMayFail);
    } else if (o.code().is(Structural::Call)) {
      if (const Function* g = module.find(o.callee()); g && visited.insert(g).second) walk(g->body(), check);
    }
  };
  check(const_cast<Operation&>(op));
  for (const auto& region : op.regions()) walk(region->block(), check);
  return fails;
}

bool isPure(const Operation& op, const Module& module) {
  if (!op.isPure()) return false;
  std::unordered_map<const Function*, int> state;
  bool pure = true;
  auto check = [&](Operation& o) {
    if (pure && o.code().is(Structural::Call))
      if (const Function* g = module.find(o.callee()); g && !functionIsPure(*g, module, state)) pure = false;
  };
  check(const_cast<Operation&>(op));
  for (const auto& region : op.regions()) walk(region->block(), check);
  return pure;
}


Value* Block::addArgument(Type type, std::string name) {
  args_.push_back(std::make_unique<Value>(std::move(type), nullptr, this, static_cast<int>(args_.size())));
  if (!name.empty()) args_.back()->setName(std::move(name));
  return args_.back().get();
}

Operation* Block::append(std::unique_ptr<Operation> op) {
  op->setParent(this);
  ops_.push_back(std::move(op));
  return ops_.back().get();
}

Operation* Block::insertBefore(std::list<std::unique_ptr<Operation>>::iterator at, std::unique_ptr<Operation> op) {
  op->setParent(this);
  return ops_.insert(at, std::move(op))->get();
}

Operation* Block::terminator() const {
  if (ops_.empty() || !ops_.back()->code().isTerminator()) return nullptr;
  return ops_.back().get();
}

std::vector<Type> Function::resultTypes() const {
  std::vector<Type> types;
  if (const Operation* ret = body_->terminator())
    for (const Value* v : ret->operands()) types.push_back(v->type());
  return types;
}

Function& Module::addFunction(std::string name, Span span) {
  functions_.push_back(std::make_unique<Function>(std::move(name), span));
  Function& f = *functions_.back();
  byName_.emplace(f.name(), &f); // a repeated name keeps finding the first, as before
  return f;
}

Function* Module::find(std::string_view name) const {
  auto it = byName_.find(std::string(name));
  return it == byName_.end() ? nullptr : it->second;
}

std::string Module::freshName(const std::string& base) {
  if (!find(base)) return base;
  int& k = nextSuffix_[base];
  std::string name;
  do name = cat(base, ".", ++k);
  while (find(name));
  return name;
}

void Module::removeFunctionsIf(const std::function<bool(const Function&)>& drop) {
  std::erase_if(functions_, [&](const std::unique_ptr<Function>& f) { return drop(*f); });
  byName_.clear();
  for (auto it = functions_.rbegin(); it != functions_.rend(); ++it) byName_[(*it)->name()] = it->get();
}

void walk(Block& block, const std::function<void(Operation&)>& fn) {
  for (auto& op : block.ops()) {
    fn(*op);
    for (auto& region : op->regions()) walk(region->block(), fn);
  }
}

void replaceAllUses(Block& block, Value* from, Value* to) {
  walk(block, [&](Operation& op) {
    for (Value*& operand : op.operands())
      if (operand == from) operand = to;
  });
}

std::unordered_map<const Value*, int> countUses(const Block& block) {
  std::unordered_map<const Value*, int> uses;
  walk(const_cast<Block&>(block), [&](Operation& op) {
    for (const Value* operand : op.operands()) ++uses[operand];
  });
  return uses;
}

void pruneUnreachable(Module& module, const Function& entry) {
  std::unordered_set<const Function*> reached{&entry};
  std::vector<const Function*> work{&entry};
  while (!work.empty()) {
    const Function* f = work.back();
    work.pop_back();
    walk(f->body(), [&](Operation& op) {
      if (!op.code().is(Structural::Call)) return;
      if (const Function* g = module.find(op.callee()); g && reached.insert(g).second) work.push_back(g);
    });
  }
  module.removeFunctionsIf([&](const Function& f) { return !reached.count(&f); });
}

bool touchesLayouts(const Operation& op) {
  for (const Value* v : op.operands())
    if (v->type().layout != Layout::RowMajor) return true;
  for (size_t i = 0; i < op.resultCount(); ++i)
    if (op.result(i)->type().layout != Layout::RowMajor) return true;
  return false;
}

FusionClass fusionKind(const Operation& fused) {
  FusionClass kind = FusionClass::Elementwise;
  for (const auto& region : fused.regions())
    for (const auto& op : region->block().ops()) {
      if (!op->code().primitive) continue;
      const FusionClass c = opInfo(op->code().kind).fusion;
      if (c == FusionClass::Contraction) return c;
      if (c == FusionClass::Reduction) kind = c;
    }
  return kind;
}

std::optional<AffineEpilogue> affineEpilogue(const Operation& fused) {
  if (!fused.code().is(Structural::Fused) || fused.regions().size() != 1 || fused.resultCount() != 1) return {};
  const Block& block = fused.region(0).block();
  const Type& type = fused.result()->type();
  if (type.rank() != 2) return {};
  // Each region argument's uses in the region: the accumulator may be read only where it
  // is added (the GEMM overwrites its memory as it goes).
  std::unordered_map<const Value*, int> uses;
  for (const auto& op : block.ops())
    for (const Value* v : op->operands()) ++uses[v];
  auto argumentIndex = [&](const Value* v) { return v->argumentOf() == &block ? v->index() : -1; };
  auto isScalar = [](const Value* v) { return v->type().rank() == 0; };
  AffineEpilogue e;
  const Value* current = nullptr;
  bool added = false;
  for (const auto& owned : block.ops()) {
    const Operation& op = *owned;
    if (op.code().is(Structural::Yield)) {
      if (!current || op.operands().size() != 1 || op.operand(0) != current) return {};
      return e;
    }
    if (op.code().is(Structural::Constant) && isScalar(op.result())) continue;
    if (!op.code().primitive) return {};
    const OpInfo& info = opInfo(op.code().kind);
    if (!current) { // views the product reads, then the product
      if (info.has(kView)) continue;
      if (info.fusion != FusionClass::Contraction || !info.has(kReadsViews) || !(op.result()->type() == type)) return {};
      if (type.dtype != DType::F32 && type.dtype != DType::F64) return {};
      for (const Value* v : op.operands())
        if (v->type().dtype != type.dtype || v->type().rank() == 0) return {};
      current = op.result();
      continue;
    }
    if (e.activated() || op.resultCount() != 1) return {}; // the activation comes last
    const bool first = op.operands().size() > 0 && op.operand(0) == current;
    const Value* other = op.operands().size() == 2 ? op.operand(first ? 1 : 0) : nullptr;
    if (!first && !(other && op.operand(1) == current)) return {};
    if (op.code().is(OpKind::Relu) || op.code().is(OpKind::Gelu) || op.code().is(OpKind::GeluTanh)) {
      e.activation = op.code().kind;
    } else if (op.code().is(OpKind::Neg) && !added) {
      e.alpha = -e.alpha;
    } else if (op.code().is(OpKind::Mul) && !added && isScalar(other)) {
      if (const Tensor* c = constantValue(other)) e.alpha *= c->toDouble();
      else if (argumentIndex(other) >= 0 && e.alphaOperand < 0) e.alphaOperand = argumentIndex(other);
      else return {};
    } else if ((op.code().is(OpKind::Add) || (op.code().is(OpKind::Sub) && !first)) && argumentIndex(other) >= 0 &&
               other->type().dtype == type.dtype) {
      const int index = argumentIndex(other);
      const Type& t = other->type();
      if (t == type && e.accumulator < 0 && uses[other] == 1) {
        if (op.code().is(OpKind::Sub)) {
          if (e.bias >= 0) return {}; // x - (αP + b) would negate the bias too
          e.alpha = -e.alpha;
        }
        e.accumulator = index;
      } else if (op.code().is(OpKind::Add) && e.bias < 0 && t.layout == type.layout && t.concrete()) {
        const int64_t m = type.dims[0].size, n = type.dims[1].size;
        if (t.rank() == 1 && t.dims[0].size == n) e.biasAxis = 1;
        else if (t.rank() == 2 && t.dims[0].size == 1 && t.dims[1].size == n) e.biasAxis = 1;
        else if (t.rank() == 2 && t.dims[0].size == m && t.dims[1].size == 1) e.biasAxis = 0;
        else return {};
        e.bias = index;
      } else {
        return {};
      }
      added = true;
    } else {
      return {};
    }
    current = op.result();
  }
  return {};
}

const Tensor* constantValue(const Value* v) {
  const Operation* def = v->def();
  return def && def->code().is(Structural::Constant) ? &def->constant() : nullptr;
}

std::unique_ptr<Operation> cloneOp(const Operation& op, std::unordered_map<const Value*, Value*>& mapping) {
  auto copy = std::make_unique<Operation>(op.code(), op.span());
  for (Value* operand : op.operands()) {
    auto it = mapping.find(operand);
    copy->operands().push_back(it == mapping.end() ? operand : it->second);
  }
  copy->copyPayload(op);
  for (size_t i = 0; i < op.resultCount(); ++i) {
    Value* r = copy->addResult(op.result(i)->type());
    r->setName(op.result(i)->name());
    mapping[op.result(i)] = r;
  }
  for (const auto& region : op.regions()) {
    Region& target = copy->addRegion();
    for (const auto& arg : region->block().arguments())
      mapping[arg.get()] = target.block().addArgument(arg->type(), arg->name());
    for (const auto& inner : region->block().ops()) target.block().append(cloneOp(*inner, mapping));
  }
  return copy;
}

} // namespace tsl::ir
