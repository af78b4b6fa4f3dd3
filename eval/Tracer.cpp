// eval/Tracer.cpp — staged evaluation: primitives on traced values become IR.
#include "eval/Tracer.h"

#include "eval/Evaluator.h"
#include "eval/Printer.h"
#include "ir/Printer.h"
#include "tsl/StackGuard.h"

namespace tsl {

namespace {

/// Tensors with more elements than this become hidden parameters rather than constants,
/// so captured weights do not bloat the IR.
constexpr int64_t kMaxConstantElements = 64;

bool isLeaf(const Value& v) { return isTensorLike(v); }

/// The type a leaf has if it is traced or a strong tensor; nullopt for a weak scalar,
/// whose type depends on what it meets.
std::optional<ir::Type> strongType(const Value& v) {
  if (isTraced(v)) {
    if (weakTraced(v)) return std::nullopt;
    return tracedType(v);
  }
  const Tensor& t = v.tensor();
  if (t.weak()) return std::nullopt;
  return ir::Type::of(t);
}

/// The type of a weak leaf (a literal, or a traced bare-number parameter): i64 or f64.
TypeKey weakKey(const Value& v) {
  if (isTraced(v)) return {tracedType(v).dtype, true};
  return v.tensor().typeKey();
}

/// Whether two non-traced leaves are the same value of the same type.
bool sameStatic(const Value& a, const Value& b) {
  if (isTraced(a) || isTraced(b)) return false;
  if (a.isTensor() != b.isTensor()) return false;
  if (a.isTensor() && (a.tensor().dtype() != b.tensor().dtype() || a.tensor().weak() != b.tensor().weak())) return false;
  return valuesEqual(a, b);
}

} // namespace

// ---- Trees ----

TreeShape TreeShape::flatten(const Value& tree, std::vector<Value>& leaves) {
  checkStack();
  TreeShape shape;
  if (tree.isMap()) {
    shape.kind = Kind::Map;
    for (const auto& [key, value] : tree.map().entries()) {
      shape.keys.push_back(key);
      shape.children.push_back(flatten(value, leaves));
    }
  } else if (tree.isSequential()) {
    shape.kind = tree.isList() ? Kind::List : Kind::Vector;
    for (const Value& item : sequenceItems(tree)) shape.children.push_back(flatten(item, leaves));
  } else if (isLeaf(tree)) {
    shape.kind = Kind::Leaf;
    leaves.push_back(tree);
  } else {
    shape.kind = Kind::Static;
    shape.value = tree;
  }
  return shape;
}

Value TreeShape::rebuild(std::span<const Value> leaves, size_t& pos) const {
  switch (kind) {
  case Kind::Leaf: return leaves[pos++];
  case Kind::Static: return value;
  case Kind::Map: {
    std::vector<std::pair<Value, Value>> entries;
    for (size_t i = 0; i < keys.size(); ++i) entries.emplace_back(keys[i], children[i].rebuild(leaves, pos));
    return makeMap(std::move(entries));
  }
  case Kind::Vector:
  case Kind::List: {
    std::vector<Value> items;
    for (const TreeShape& child : children) items.push_back(child.rebuild(leaves, pos));
    return kind == Kind::List ? makeList(items) : makeVector(std::move(items));
  }
  }
  return Value();
}

bool TreeShape::sameAs(const TreeShape& other) const {
  if (kind != other.kind || children.size() != other.children.size()) return false;
  if (kind == Kind::Static) return sameStatic(value, other.value);
  for (size_t i = 0; i < keys.size(); ++i)
    if (!valuesEqual(keys[i], other.keys[i])) return false;
  for (size_t i = 0; i < children.size(); ++i)
    if (!children[i].sameAs(other.children[i])) return false;
  return true;
}

size_t TreeShape::leafCount() const {
  if (kind == Kind::Leaf) return 1;
  size_t n = 0;
  for (const TreeShape& child : children) n += child.leafCount();
  return n;
}

bool TreeShape::flattenLike(const Value& tree, std::vector<Value>& leaves) const {
  checkStack();
  switch (kind) {
  case Kind::Leaf:
    if (!isTensorLike(tree)) return false;
    leaves.push_back(tree);
    return true;
  case Kind::Static: return true;
  case Kind::Map:
    if (!tree.isMap() || tree.map().entries().size() != keys.size()) return false;
    for (size_t i = 0; i < keys.size(); ++i) {
      const Value* v = tree.map().find(keys[i]);
      if (!v || !children[i].flattenLike(*v, leaves)) return false;
    }
    return true;
  case Kind::Vector:
  case Kind::List: {
    if (!tree.isSequential()) return false;
    const std::vector<Value> items = sequenceItems(tree);
    if (items.size() != children.size()) return false;
    for (size_t i = 0; i < items.size(); ++i)
      if (!children[i].flattenLike(items[i], leaves)) return false;
    return true;
  }
  }
  return false;
}

void TreeShape::label(const std::string& prefix, std::vector<std::string>& out) const {
  switch (kind) {
  case Kind::Leaf: out.push_back(prefix); break;
  case Kind::Static: break;
  case Kind::Map:
    for (size_t i = 0; i < keys.size(); ++i)
      children[i].label(prefix + "." + (keys[i].isKeyword() ? keys[i].keyword().name() : printValue(keys[i], false)), out);
    break;
  case Kind::Vector:
  case Kind::List:
    for (size_t i = 0; i < children.size(); ++i) children[i].label(cat(prefix, ".", i), out);
    break;
  }
}

// ---- Traced values ----

const ir::Type& tracedType(const Value& v) {
  const TracedObj& t = traced(v);
  return t.batched() ? t.tracer()->exampleType(t.value()) : t.value()->type();
}

std::string tracedTypeName(const Value& v) { return tracedType(v).str(); }

int64_t tracedLength(const Value& v) {
  const ir::Type& type = tracedType(v);
  if (type.rank() == 0) fail(ErrorKind::Type, "a scalar is not a sequence");
  if (type.dims[0].symbolic())
    fail(ErrorKind::Type, "jit: the length of a traced tensor of type ", type.str(), " is not known when compiling");
  return type.dims[0].size;
}

Value tracedRow(const Value& v, int64_t i) {
  Tracer& tracer = activeTracer(v);
  const Value* operand = &v;
  return tracer.emit(OpKind::Index, IndexAttrs{{i}}, std::span<const Value* const>(&operand, 1), tracer.function().span());
}

std::vector<Value> tracedRows(const Value& v) {
  const int64_t n = tracedLength(v);
  std::vector<Value> rows;
  for (int64_t i = 0; i < n; ++i) rows.push_back(tracedRow(v, i));
  return rows;
}

// ---- The tracer ----

struct Tracer::Outcome {
  enum class Kind : uint8_t { Exit, Recur, Mixed, Raises };
  Kind kind = Kind::Exit;
  Value exit;               ///< Exit, Mixed: the loop's (or if's) result
  std::vector<Value> recur; ///< Recur, Mixed: one value per binding
  Value flag;               ///< Mixed: whether to go on (a traced bool)
  std::optional<Error> error; ///< Raises: what the branch raises when it is taken
};

struct Tracer::LoopContext {
  std::vector<Value> current; ///< the binding values at the start of an iteration
};

Tracer::Tracer(Evaluator& evaluator, ir::Module& module, ir::Function& function)
    : evaluator_(evaluator), module_(module), function_(function), builder_(function.body()), previous_(evaluator.tracer()) {
  evaluator_.setTracer(this);
}

Tracer::~Tracer() {
  *alive_ = false;
  evaluator_.setTracer(previous_);
}

Value Tracer::wrap(ir::Value* value) { return Value(new TracedObj(value, this, alive_)); }

Value Tracer::wrapBatched(ir::Value* value) {
  exampleType(value);
  return Value(new TracedObj(value, this, alive_, true));
}

const ir::Type& Tracer::exampleType(const ir::Value* value) {
  auto it = exampleTypes_.find(value);
  if (it == exampleTypes_.end()) {
    ir::Type t = value->type();
    TSL_ASSERT(t.rank() > 0, "a batched value has a batch axis");
    t.dims.erase(t.dims.begin());
    it = exampleTypes_.emplace(value, std::move(t)).first;
  }
  return it->second;
}

bool Tracer::containsTraced(const Value& v) {
  checkStack();
  if (isTraced(v)) return true;
  if (v.isMap()) {
    for (const auto& [key, value] : v.map().entries())
      if (containsTraced(value)) return true;
    return false;
  }
  if (v.isVector()) {
    for (const Value& item : v.vector().items())
      if (containsTraced(item)) return true;
    return false;
  }
  if (v.isList()) {
    for (const ListObj* cell = v.list(); cell; cell = cell->next())
      if (containsTraced(cell->first())) return true;
  }
  return false;
}

Tracer& Tracer::active() const { return *evaluator_.tracer(); }

Tracer& activeTracer(const Value& v) { return traced(v).tracer()->active(); }

bool weakTraced(const Value& v) { return traced(v).tracer()->isWeak(traced(v).value()); }

ir::Value* Tracer::lift(const Value& v) {
  ir::Value* value = traced(v).value();
  if (auto it = liftedIndex_.find(value); it != liftedIndex_.end()) return it->second;
  // The value in the enclosing function, lifted there first if it comes from further out.
  ir::Value* outer = traced(v).tracer() == previous_ ? value : previous_->lift(v);
  ir::Value* param = function_.body().addArgument(value->type(), value->name());
  if (weakTraced(v)) markWeak(param);
  lifted_.emplace_back(outer, param);
  liftedIndex_[value] = param;
  return param;
}

ir::Value* Tracer::materialize(const Value& v, std::optional<DType> weakAs, const Span& span) {
  if (isTraced(v)) {
    if (traced(v).batched())
      throw Error(ErrorKind::Type,
                  cat("vmap: a value batched by vmap (", tracedTypeName(v),
                      " per example) cannot be used here: batching covers primitives, if and calls of "
                      "functions; not loops whose trip count depends on it, nor compiled control flow"),
                  span);
    ir::Value* value = traced(v).value();
    if (traced(v).tracer() != this) {
      bool enclosing = false;
      for (const Tracer* t = this; t && t->nested(); t = t->previous_) enclosing |= t->previous_ == traced(v).tracer();
      if (!enclosing)
        fail(ErrorKind::Type, "jit: a traced value of another compilation was used here (did one escape a jit?)");
      value = lift(v);
    }
    if (isWeak(value)) {
      // A weak parameter (held as i64 or f64) becomes the dtype the literal would.
      const DType want = weakAs ? *weakAs : concreteDType(TypeKey{value->type().dtype, true});
      if (want != value->type().dtype) return builder_.primitive(OpKind::Cast, CastAttrs{want}, {value}, span);
    }
    return value;
  }
  if (!v.isTensor())
    throw Error(ErrorKind::Type, cat("jit: ", describeKind(v), " ", printValue(v, true).substr(0, 40),
                                     " cannot be a tensor operand"),
                span);
  Tensor t = v.tensor();
  if (t.isScalar()) t = weakAs && t.weak() ? t.castScalar(*weakAs) : t.strengthened();
  if (t.numel() <= kMaxConstantElements) return builder_.constant(t, span);
  // Large: a nested function receives it from the enclosing one; the outermost takes it as
  // a hidden parameter, one per distinct tensor.
  if (nested()) return lift(previous_->wrap(previous_->materialize(Value(t), std::nullopt, span)));
  const void* key = t.data();
  if (auto it = hiddenByData_.find(key); it != hiddenByData_.end() && it->second->type() == ir::Type::of(t))
    return it->second;
  ir::Value* param = function_.body().addArgument(ir::Type::of(t), cat("const", hidden_.size()));
  hidden_.push_back(t);
  hiddenByData_[key] = param;
  return param;
}

Value Tracer::emit(OpKind kind, const OpAttrs& attrs, std::span<const Value* const> operands, const Span& span) {
  for (const Value* v : operands)
    if (isTraced(*v) && traced(*v).batched()) return emitBatched(kind, attrs, operands, span);
  // A weak literal takes the dtype of the tensors it meets (§3): what promotion with the
  // other value operands gives it (a where's condition is not a value operand).
  std::optional<TypeKey> joined;
  const OpInfo& info = opInfo(kind);
  // Operations whose type rule promotes their operands together: elementwise ones and
  // contractions.
  if (info.fusion == FusionClass::Elementwise || info.fusion == FusionClass::Contraction) {
    for (size_t i = 0; i < operands.size(); ++i) {
      if (kind == OpKind::Where && i == 0) continue;
      const std::optional<ir::Type> t = strongType(*operands[i]);
      if (!t) continue;
      joined = joined ? promoteTypes(*joined, {t->dtype}) : TypeKey{t->dtype};
    }
  }
  // Only weak operands (a bare number passed to a jit function, and literals): the result
  // is weak too where eager execution makes it so, computed at i64 or f64 as there.
  std::optional<DType> allWeakAs;
  bool weakResult = false;
  if (!joined && info.fusion == FusionClass::Elementwise) {
    std::vector<TensorType> types;
    for (size_t i = 0; i < operands.size(); ++i) {
      const Value& v = *operands[i];
      const bool weak = isTraced(v) ? weakTraced(v) : v.tensor().weak();
      if (!weak && !(kind == OpKind::Where && i == 0)) {
        types.clear();
        break;
      }
      types.push_back(isTraced(v) ? TensorType{tracedType(v).dtype, weak, {}} : TensorType::of(v.tensor()));
    }
    if (!types.empty()) {
      const TensorType result = inferType(kind, attrs, types);
      std::optional<TypeKey> held;
      for (size_t i = 0; i < types.size(); ++i)
        if (types[i].weak) held = held ? promoteTypes(*held, {types[i].dtype, true}) : TypeKey{types[i].dtype, true};
      allWeakAs = result.weak && isFloat(result.dtype) ? DType::F64 : held->dtype;
      weakResult = result.weak;
    }
  }
  std::vector<ir::Value*> irOperands;
  for (const Value* operand : operands) {
    std::optional<DType> weakAs = allWeakAs;
    if (joined) {
      if (operand->isTensor() && operand->tensor().weak())
        weakAs = promoteTypes(operand->tensor().typeKey(), *joined).dtype;
      else if (isTraced(*operand) && weakTraced(*operand))
        weakAs = promoteTypes(TypeKey{tracedType(*operand).dtype, true}, *joined).dtype;
    }
    irOperands.push_back(materialize(*operand, weakAs, span));
  }
  if (weakResult) {
    ir::Value* result = builder_.primitive(kind, attrs, std::move(irOperands), span);
    markWeak(result);
    return wrap(result);
  }
  return wrap(builder_.primitive(kind, attrs, std::move(irOperands), span));
}

/// How many iterations of a loop over traced values are unrolled before it is staged as a
/// while instead (a loop over layers unrolls; a long one stays compact).
constexpr int64_t kMaxUnrolled = 256;

int64_t Tracer::unrollLimit(bool traced) { return traced ? kMaxUnrolled : INT64_MAX; }

// ---- if ----

bool Tracer::raisedWhenRun(const Error& e) {
  switch (e.kind()) {
  case ErrorKind::Name:
  case ErrorKind::Type:
  case ErrorKind::Shape:
  case ErrorKind::Value:
  case ErrorKind::Io:
  case ErrorKind::Assert:
  case ErrorKind::User: return !e.message().starts_with("jit:");
  default: return false;
  }
}

void Tracer::raiseHere(const Error& error, const Span& fallback) {
  ir::Operation* op = builder_.create(ir::OpCode::of(ir::Structural::Raise), {}, {},
                                      error.span().known() ? error.span() : fallback);
  op->setRaise(error.kind(), error.message());
}

Tracer::Outcome Tracer::branch(ir::Block& block, const std::function<Value()>& fn, bool conditional) {
  ir::Block& saved = builder_.block();
  builder_.setBlock(block);
  pending_.reset();
  Value result;
  std::optional<Error> raised;
  try {
    result = fn();
  } catch (const Error& e) {
    if (!conditional || !raisedWhenRun(e)) {
      builder_.setBlock(saved);
      throw;
    }
    raised = e;
  } catch (const AlwaysRaises& r) {
    if (!conditional) {
      builder_.setBlock(saved);
      throw;
    }
    raised = r.error;
  } catch (...) {
    builder_.setBlock(saved);
    throw;
  }
  Outcome outcome;
  if (raised) {
    // The branch fails when the compiled code takes it, as eager code fails only then,
    // after what it computed before the failure. (An if or loop left unfinished by the
    // error has removed itself; one whose paths all fail is complete and raises.)
    pending_.reset();
    builder_.setBlock(block);
    raiseHere(*raised, {});
    outcome.kind = Outcome::Kind::Raises;
    outcome.error = std::move(raised);
    builder_.setBlock(saved);
    return outcome;
  }
  builder_.setBlock(saved);
  if (result.isRecur()) {
    TSL_ASSERT(pending_, "recur without the values it passes");
    outcome = std::move(*pending_);
    pending_.reset();
  } else {
    outcome.exit = result;
  }
  return outcome;
}

void Tracer::eraseFrom(ir::Block& block, size_t mark) {
  while (block.ops().size() > mark) {
    ir::Operation& op = *block.ops().back();
    auto forget = [&](ir::Operation& o) {
      for (size_t i = 0; i < o.resultCount(); ++i) weak_.erase(o.result(i));
      for (auto& region : o.regions())
        for (auto& arg : region->block().arguments()) weak_.erase(arg.get());
    };
    forget(op);
    for (auto& region : op.regions()) ir::walk(region->block(), forget);
    block.ops().pop_back();
  }
}

bool Tracer::noteRecur(std::span<const Value> values) {
  if (targets_.empty()) return false;
  const RecurTarget& target = targets_.back();
  if (!target.staged) {
    // An ordinary loop whose recur sits under a traced condition: its trip count depends
    // on traced values, so it has to become a while after all.
    if (branchDepth_ > target.branchDepth) throw Restage{target.depth};
    return false;
  }
  pending_ = std::make_unique<Outcome>();
  pending_->kind = Outcome::Kind::Recur;
  pending_->recur.assign(values.begin(), values.end());
  return true;
}

std::optional<Value> Tracer::runStaticLoop(const std::function<Value()>& body, const Span& span,
                                           int64_t maxIterations) {
  const size_t depth = targets_.size();
  targets_.push_back({nullptr, branchDepth_, depth});
  ir::Block& block = builder_.block();
  const size_t mark = block.ops().size();
  try {
    for (int64_t iteration = 1;; ++iteration) {
      Value result = body();
      if (!result.isRecur()) {
        targets_.resize(depth);
        return result;
      }
      if (iteration >= maxIterations) throw Restage{depth};
      evaluator_.poll(span);
    }
  } catch (const Restage& restage) {
    targets_.resize(depth);
    if (restage.depth != depth) throw;
    // Undo what the attempt emitted (it may hold unfinished regions).
    eraseFrom(block, mark);
    builder_.setBlock(block);
    return std::nullopt;
  } catch (...) {
    targets_.resize(depth);
    throw;
  }
}

Value Tracer::stageIf(const Value& cond, const std::function<Value()>& thenBranch,
                      const std::function<Value()>& elseBranch, const Span& span) {
  const ir::Type& type = tracedType(cond);
  if (type.rank() != 0)
    throw Error(ErrorKind::Type, cat("a condition must be a scalar, got a traced tensor of type ", type.str()), span);
  if (type.dtype != DType::Bool) return thenBranch(); // a number is true, whatever its value (§3)
  ir::Value* flag = materialize(cond, DType::Bool, span);
  ir::Block& outer = builder_.block();
  const size_t mark = outer.ops().size();
  ir::Operation& op = *builder_.create(ir::OpCode::of(ir::Structural::If), {flag}, {}, span);
  ir::Block& thenBlock = op.addRegion().block();
  ir::Block& elseBlock = op.addRegion().block();
  struct Depth {
    int& depth;
    explicit Depth(int& d) : depth(d) { ++depth; }
    ~Depth() { --depth; }
  } inBranch(branchDepth_);
  try {
    Outcome a = branch(thenBlock, thenBranch, true);
    Outcome b = branch(elseBlock, elseBranch, true);
    return merge(op, std::move(a), std::move(b), span);
  } catch (const AlwaysRaises&) {
    throw; // the if is complete: both its branches raise
  } catch (...) {
    eraseFrom(outer, mark); // an unfinished if would not verify
    throw;
  }
}

ir::Value* Tracer::materializeAs(const Value& v, const ir::Type& type, const Span& span) {
  ir::Value* value = materialize(v, type.dtype, span);
  if (value->type().layout != type.layout && value->type().rank() > 0)
    value = builder_.primitive(OpKind::Transdata, LayoutAttrs{type.layout}, {value}, span);
  return value;
}

namespace {

/// Two types that differ only in their layouts meet at row-major: inside a function the
/// layouts are the compiler's business (docs/language.md §7), never a reason to refuse a program
/// eager code runs. Whether they then agree.
bool meetLayouts(ir::Type& a, ir::Type& b) {
  if (a.layout != b.layout && a.dtype == b.dtype && a.dims == b.dims) a.layout = b.layout = ir::Layout::RowMajor;
  return a == b;
}

} // namespace

std::vector<ir::Value*> Tracer::yieldLeaves(ir::Block& block, const std::vector<Value>& leaves,
                                            const std::vector<ir::Type>& types, const Span& span) {
  ir::Block& saved = builder_.block();
  builder_.setBlock(block);
  std::vector<ir::Value*> values;
  for (size_t i = 0; i < leaves.size(); ++i) values.push_back(materializeAs(leaves[i], types[i], span));
  builder_.terminate(ir::Structural::Yield, values, span);
  builder_.setBlock(saved);
  return values;
}

/// What a branch that raises gives in place of `other`'s values, so that its block can
/// yield something of their types (never seen: the raise comes first). Its data and
/// concrete tensors are `other`'s own; traced values become zeros of their types.
Tracer::Outcome Tracer::standIn(const Outcome& other, const Error& error) {
  auto mirror = [&](const Value& v) {
    std::vector<Value> leaves;
    const TreeShape shape = TreeShape::flatten(v, leaves);
    for (Value& leaf : leaves) {
      if (!isTraced(leaf)) continue;
      if (!strongType(leaf)) {
        leaf = Value(isFloat(weakKey(leaf).dtype) ? Tensor::weakFloat(0) : Tensor::weakInt(0));
        continue;
      }
      const ir::Type t = tracedType(leaf);
      if (!t.concrete()) throw error; // no stand-in of a symbolic size: fail as eager code would
      leaf = Value(Tensor::zeros(t.dtype, t.shape()));
    }
    size_t pos = 0;
    return shape.rebuild(leaves, pos);
  };
  Outcome out;
  out.kind = other.kind;
  out.exit = mirror(other.exit);
  for (const Value& v : other.recur) out.recur.push_back(mirror(v));
  out.flag = mirror(other.flag);
  return out;
}

Value Tracer::merge(ir::Operation& op, Outcome a, Outcome b, const Span& span) {
  using Kind = Outcome::Kind;
  if (a.kind == Kind::Raises && b.kind == Kind::Raises) {
    // Whichever branch is taken fails: the if has no results, and what follows it is
    // never reached.
    yieldLeaves(op.region(0).block(), {}, {}, span);
    yieldLeaves(op.region(1).block(), {}, {}, span);
    throw AlwaysRaises{*a.error};
  }
  if (a.kind == Kind::Raises) a = standIn(b, *a.error);
  if (b.kind == Kind::Raises) b = standIn(a, *b.error);
  const bool bothExit = a.kind == Kind::Exit && b.kind == Kind::Exit;
  const bool bothRecur = a.kind == Kind::Recur && b.kind == Kind::Recur;
  if (!bothExit && !bothRecur) {
    // A path that exits and a path that recurs: both become (continue?, next bindings,
    // result), the missing parts taken from the loop's current bindings or as zeros.
    TSL_ASSERT(!loops_.empty(), "recur outside a staged loop");
    const LoopContext& loop = *loops_.back();
    auto normalize = [&](Outcome& o, const Outcome& other) {
      if (o.kind == Kind::Exit) {
        o.flag = Value::boolean(false);
        o.recur = loop.current;
      } else if (o.kind == Kind::Recur) {
        o.flag = Value::boolean(true);
        std::vector<Value> leaves;
        const TreeShape shape = TreeShape::flatten(other.exit, leaves);
        for (Value& leaf : leaves) {
          if (!strongType(leaf)) { // a weak result stays weak
            leaf = Value(isFloat(weakKey(leaf).dtype) ? Tensor::weakFloat(0) : Tensor::weakInt(0));
            continue;
          }
          const ir::Type t = isTraced(leaf) ? tracedType(leaf) : ir::Type::of(leaf.tensor());
          if (!t.concrete())
            throw Error(ErrorKind::Type,
                        cat("jit: a loop whose result has the symbolic type ", t.str(),
                            " must exit on one path only (give the signature concrete sizes)"),
                        span);
          leaf = Value(Tensor::zeros(t.dtype, t.shape()));
        }
        size_t pos = 0;
        o.exit = shape.rebuild(leaves, pos);
      }
      o.kind = Kind::Mixed;
    };
    const Outcome exitSide = a.kind == Kind::Recur ? b : a; // the side that has a result
    normalize(a, exitSide);
    normalize(b, exitSide);
  }

  // Lay both sides out as one list of leaves.
  // `what` names each leaf for messages: a loop binding, or the result.
  std::vector<std::string> what;
  auto layout = [&](const Outcome& o, std::vector<Value>& leaves) {
    std::vector<TreeShape> shapes;
    auto name = [&](const std::string& label) { what.resize(leaves.size(), label); };
    if (o.kind == Kind::Exit) {
      shapes.push_back(TreeShape::flatten(o.exit, leaves));
      name("the value");
    } else {
      if (o.kind == Kind::Mixed) leaves.push_back(o.flag);
      name("whether the loop goes on");
      for (size_t i = 0; i < o.recur.size(); ++i) {
        shapes.push_back(TreeShape::flatten(o.recur[i], leaves));
        name(cat("loop binding ", i + 1));
      }
      if (o.kind == Kind::Mixed) shapes.push_back(TreeShape::flatten(o.exit, leaves));
      name("the loop's result");
    }
    return shapes;
  };
  std::vector<Value> leavesA, leavesB;
  const std::vector<TreeShape> shapesA = layout(a, leavesA);
  what.clear();
  const std::vector<TreeShape> shapesB = layout(b, leavesB);
  bool same = shapesA.size() == shapesB.size() && leavesA.size() == leavesB.size();
  for (size_t i = 0; same && i < shapesA.size(); ++i) same = shapesA[i].sameAs(shapesB[i]);
  if (!same)
    throw Error(ErrorKind::Type,
                "jit: the two branches of this if give values of different structure (different keys, lengths, "
                "or non-tensor values)",
                span);

  // Leaves equal on both sides stay static; the rest become results of the if.
  std::vector<Value> merged(leavesA.size());
  std::vector<size_t> dynamic;
  std::vector<ir::Type> types;
  std::vector<bool> weakMerged;
  for (size_t i = 0; i < leavesA.size(); ++i) {
    if (sameStatic(leavesA[i], leavesB[i])) {
      merged[i] = leavesA[i];
      continue;
    }
    if (!isTensorLike(leavesA[i]) || !isTensorLike(leavesB[i]))
      throw Error(ErrorKind::Type, "jit: the branches of this if give different values that are not tensors", span);
    std::optional<ir::Type> ta = strongType(leavesA[i]), tb = strongType(leavesB[i]);
    const bool bothWeak = !ta && !tb;
    if (bothWeak) // stays weak, held at i64 or f64 as eager code holds it
      ta = tb = ir::Type{promoteTypes(weakKey(leavesA[i]), weakKey(leavesB[i])).dtype, {}, ir::Layout::RowMajor};
    // A weak literal (always a scalar) takes the other side's dtype, if it is of its kind:
    // a bare integer becoming a float (or the reverse) would change what eager code gives.
    const std::string& subject = i < what.size() ? what[i] : what.back();
    auto takeOther = [&](const Value& weak, const ir::Type& other) {
      const DType held = weakKey(weak).dtype;
      if (isFloat(held) != isFloat(other.dtype) || isBool(other.dtype))
        throw Error(ErrorKind::Type,
                    cat("jit: for ", subject, ", one branch of this if gives a bare ", isFloat(held) ? "float" : "integer",
                        " and the other ", other.str(), "; compiled branches must agree (write the number as ",
                        isFloat(other.dtype) ? "a float" : "an integer", " or cast it)"),
                    span);
      return ir::Type{other.dtype, {}, ir::Layout::RowMajor};
    };
    if (!ta) ta = takeOther(leavesA[i], *tb);
    if (!tb) tb = takeOther(leavesB[i], *ta);
    if (!meetLayouts(*ta, *tb))
      throw Error(ErrorKind::Type,
                  subject.starts_with("loop binding")
                      ? cat("jit: ", subject, " is ", ta->str(), " on one path and ", tb->str(),
                            " on another (recur must pass each binding the same dtype and shape)")
                      : cat("jit: the branches of this if give ", ta->str(), " and ", tb->str(), " for ", subject,
                            "; compiled branches must agree in dtype and shape (broadcast or cast one of them)"),
                  span);
    dynamic.push_back(i);
    types.push_back(*ta);
    weakMerged.push_back(bothWeak);
  }
  std::vector<Value> yieldA, yieldB;
  for (size_t i : dynamic) {
    yieldA.push_back(leavesA[i]);
    yieldB.push_back(leavesB[i]);
  }
  yieldLeaves(op.region(0).block(), yieldA, types, span);
  yieldLeaves(op.region(1).block(), yieldB, types, span);
  for (size_t k = 0; k < dynamic.size(); ++k) {
    ir::Value* result = op.addResult(types[k]);
    if (weakMerged[k]) markWeak(result);
    merged[dynamic[k]] = wrap(result);
  }

  // Rebuild the outcome from the merged leaves.
  size_t pos = 0;
  if (bothExit) return shapesA[0].rebuild(merged, pos);
  auto outcome = std::make_unique<Outcome>();
  outcome->kind = bothRecur ? Outcome::Kind::Recur : Outcome::Kind::Mixed;
  if (!bothRecur) outcome->flag = merged[pos++];
  const size_t bindings = bothRecur ? shapesA.size() : shapesA.size() - 1;
  for (size_t i = 0; i < bindings; ++i) outcome->recur.push_back(shapesA[i].rebuild(merged, pos));
  if (!bothRecur) outcome->exit = shapesA.back().rebuild(merged, pos);
  pending_ = std::move(outcome);
  return Value::recurMarker();
}

// ---- loops ----

Value Tracer::stageLoop(Frame& frame, std::span<const Pattern* const> targets, const std::vector<Value>& initial,
                        const std::function<Value()>& body, const Span& span) {
  // Carried: every tensor leaf of every binding. A weak literal is carried weak, at i64 or
  // f64 as eager code holds it, until recur passes it something else: then the loop is
  // staged again with the binding at the dtype recur gives it.
  std::vector<Value> initLeaves;
  std::vector<TreeShape> shapes;
  for (const Value& v : initial) shapes.push_back(TreeShape::flatten(v, initLeaves));
  std::vector<ir::Type> carried;
  std::vector<bool> carriedWeak;
  for (const Value& leaf : initLeaves) {
    const bool weak = !strongType(leaf);
    carriedWeak.push_back(weak);
    carried.push_back(weak ? ir::Type{weakKey(leaf).dtype, {}, ir::Layout::RowMajor}
                           : isTraced(leaf) ? tracedType(leaf)
                                             : ir::Type::of(leaf.tensor()));
  }
  for (int attempt = 0;; ++attempt) {
    std::vector<ir::Value*> inits;
    for (size_t i = 0; i < initLeaves.size(); ++i) inits.push_back(materializeAs(initLeaves[i], carried[i], span));
    ir::Block& outer = builder_.block();
    const size_t mark = outer.ops().size();
    ir::Operation& op = *builder_.create(ir::OpCode::of(ir::Structural::While), inits, {}, span);
    ir::Block& before = op.addRegion().block();
    ir::Block& after = op.addRegion().block();
    std::vector<std::string> names;
    for (size_t i = 0; i < shapes.size(); ++i) shapes[i].label(targets[i]->name, names);
    std::vector<Value> args;
    for (size_t i = 0; i < carried.size(); ++i) {
      ir::Value* arg = before.addArgument(carried[i], names[i].empty() || names[i][0] == '.' ? "" : ir::irName(names[i]));
      if (carriedWeak[i]) markWeak(arg);
      args.push_back(wrap(arg));
    }
    LoopContext context;
    size_t pos = 0;
    for (size_t i = 0; i < shapes.size(); ++i) context.current.push_back(shapes[i].rebuild(args, pos));
    for (size_t i = 0; i < targets.size(); ++i) targets[i]->bind(context.current[i], frame.slots);

    const size_t depth = targets_.size();
    targets_.push_back({&context, branchDepth_, depth});
    loops_.push_back(&context);
    Outcome outcome;
    try {
      outcome = branch(before, body, false);
    } catch (...) {
      // An unfinished loop would not verify. (A body failing on every path fails when
      // the loop is reached: the enclosing branch, or the function, raises instead.)
      loops_.pop_back();
      targets_.resize(depth);
      eraseFrom(outer, mark);
      throw;
    }
    loops_.pop_back();
    targets_.resize(depth);
    if (outcome.kind == Outcome::Kind::Recur)
      throw Error(ErrorKind::Value, "jit: this loop never ends: every path through its body ends in recur", span);
    if (outcome.kind == Outcome::Kind::Exit) {
      outcome.flag = Value::boolean(false);
      outcome.recur = context.current;
    }

    // The next bindings must have the structure and types of the carried ones.
    std::vector<Value> nextLeaves;
    for (size_t i = 0; i < outcome.recur.size(); ++i)
      if (!TreeShape::flatten(outcome.recur[i], nextLeaves).sameAs(shapes[i]))
        throw Error(ErrorKind::Type,
                    cat("jit: recur changes the structure (or a non-tensor part) of loop binding ", i + 1), span);
    bool retry = false;
    for (size_t i = 0; i < nextLeaves.size(); ++i) {
      const std::optional<ir::Type> next = strongType(nextLeaves[i]);
      if (!next) {
        // Weak again: fine, unless it became a float where it was an integer.
        const DType held = weakKey(nextLeaves[i]).dtype;
        if (carriedWeak[i] && held != carried[i].dtype && isFloat(held) && attempt < 3) {
          carried[i].dtype = held;
          retry = true;
        }
        continue;
      }
      if (*next == carried[i] && !carriedWeak[i]) continue;
      if (ir::Type meet = *next; !carriedWeak[i] && carried[i].layout != ir::Layout::RowMajor && meetLayouts(meet, carried[i]) &&
                                 attempt < 3) {
        retry = true; // carried row-major from now on (the loop converts what arrives)
        continue;
      }
      if (!carriedWeak[i] && carried[i].layout == ir::Layout::RowMajor && next->layout != ir::Layout::RowMajor) {
        ir::Type plain = *next;
        plain.layout = ir::Layout::RowMajor;
        if (plain == carried[i]) continue; // converted as it is passed on
      }
      if (carriedWeak[i] && next->rank() == 0 && attempt < 3) {
        carried[i] = *next; // the literal becomes what the loop makes of it
        carriedWeak[i] = false;
        retry = true;
        continue;
      }
      throw Error(ErrorKind::Type,
                  cat("jit: loop binding value ", i + 1, " starts as ", carried[i].str(), " but recur passes ", next->str()),
                  span);
    }
    if (retry) {
      size_t at = 0;
      for (auto it = outer.ops().begin(); it != outer.ops().end() && it->get() != &op; ++it) ++at;
      eraseFrom(outer, at);
      continue;
    }

    // condition %continue, next bindings..., result leaves...
    std::vector<Value> exitLeaves;
    const TreeShape exitShape = TreeShape::flatten(outcome.exit, exitLeaves);
    builder_.setBlock(before);
    std::vector<ir::Value*> forwarded{materialize(outcome.flag, DType::Bool, span)};
    for (size_t i = 0; i < nextLeaves.size(); ++i) forwarded.push_back(materializeAs(nextLeaves[i], carried[i], span));
    std::vector<bool> forwardedWeak(carriedWeak);
    for (const Value& leaf : exitLeaves) {
      const bool weak = !strongType(leaf);
      forwardedWeak.push_back(weak);
      forwarded.push_back(materialize(leaf, weak ? std::optional<DType>(weakKey(leaf).dtype) : std::nullopt, span));
    }
    builder_.terminate(ir::Structural::Condition, forwarded, span);
    builder_.setBlock(outer);
    std::vector<Value> results;
    std::vector<ir::Value*> afterArgs;
    for (size_t i = 1; i < forwarded.size(); ++i) {
      ir::Value* result = op.addResult(forwarded[i]->type());
      if (forwardedWeak[i - 1]) markWeak(result);
      results.push_back(wrap(result));
      afterArgs.push_back(after.addArgument(forwarded[i]->type()));
    }
    builder_.setBlock(after);
    builder_.terminate(ir::Structural::Yield, std::vector<ir::Value*>(afterArgs.begin(), afterArgs.begin() + static_cast<std::ptrdiff_t>(carried.size())), span);
    builder_.setBlock(outer);
    std::vector<Value> exitResults(results.begin() + static_cast<std::ptrdiff_t>(carried.size()), results.end());
    pos = 0;
    return exitShape.rebuild(exitResults, pos);
  }
}

} // namespace tsl
