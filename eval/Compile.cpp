// eval/Compile.cpp — lowering functions for a signature, jit versions, running them.
#include "eval/Compile.h"

#include "eval/Differentiate.h"

#include "compiler/Compiler.h"
#include "runtime/Interrupt.h"
#include "eval/Evaluator.h"
#include "eval/Printer.h"
#include "eval/Staging.h"
#include "ir/Verifier.h"
#include "ir/Printer.h"
#include "parser/Syntax.h"
#include "tsl/StackGuard.h"

#include <algorithm>
#include <cctype>
#include <unordered_set>
#include <iostream>

namespace tsl {

namespace {

/// `s` without the spaces around it, for messages.
std::string_view trimmed(std::string_view s) {
  const size_t first = s.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) return {};
  return s.substr(first, s.find_last_not_of(" \t\r\n") - first + 1);
}

std::string functionName(const Value& fn) {
  if (fn.isFunction() && !fn.function().name().empty()) return ir::irName(fn.function().name());
  return "fn";
}

/// Prints an argument tree with its leaves as types ("{:w f32[3] :b f32}").
void describeTree(const TreeShape& shape, const Signature& sig, size_t& pos, std::string& out) {
  switch (shape.kind) {
  case TreeShape::Kind::Leaf:
    out += sig.weak[pos] ? cat("weak ", sig.leaves[pos].str()) : sig.leaves[pos].str();
    ++pos;
    break;
  case TreeShape::Kind::Static: out += printValue(shape.value, true).substr(0, 40); break;
  case TreeShape::Kind::Map:
    out += "{";
    for (size_t i = 0; i < shape.keys.size(); ++i) {
      out += cat(i ? " " : "", printValue(shape.keys[i], true), " ");
      describeTree(shape.children[i], sig, pos, out);
    }
    out += "}";
    break;
  case TreeShape::Kind::Vector:
  case TreeShape::Kind::List:
    out += shape.kind == TreeShape::Kind::List ? "(" : "[";
    for (size_t i = 0; i < shape.children.size(); ++i) {
      if (i) out += " ";
      describeTree(shape.children[i], sig, pos, out);
    }
    out += shape.kind == TreeShape::Kind::List ? ")" : "]";
    break;
  }
}

/// A weak literal passed to compiled code: a strong tensor of the dtype it is held in.
Tensor strongLeaf(const Tensor& t) {
  if (!t.weak()) return t;
  return isFloat(t.dtype()) ? Tensor::ofFloat(t.toDouble(), DType::F64) : Tensor::ofInt(t.toInt(), DType::I64);
}

/// The IR type a leaf is passed as.
ir::Type leafType(const Value& leaf) {
  if (isTraced(leaf)) return tracedType(leaf);
  return ir::Type::of(strongLeaf(leaf.tensor()));
}

/// A compiled function returns tensors and data; a function it made may hold traced
/// values that exist only while compiling.
void rejectFunctions(const TreeShape& shape, const Span& span) {
  if (shape.kind == TreeShape::Kind::Static && shape.value.isFunction())
    throw Error(ErrorKind::Type, "jit: a compiled function cannot return a function (return tensors and data)", span);
  for (const TreeShape& child : shape.children) rejectFunctions(child, span);
}

Lowered lowerImpl(Evaluator& evaluator, const Value& fn, Signature signature, const Span& span, const LowerOptions& options) {
  Lowered out;
  out.module = std::make_unique<ir::Module>();
  const bool closure = fn.isFunction() && fn.function().functionKind() == FunctionObj::Kind::Closure;
  const Span fnSpan = closure ? static_cast<const ClosureObj&>(fn.function()).lambda()->span : span;
  ir::Function& function = out.module->addFunction(functionName(fn), fnSpan);
  out.function = &function;
  {
    Tracer tracer(evaluator, *out.module, function);
    std::vector<Value> leaves;
    for (size_t i = 0; i < signature.leaves.size(); ++i) {
      ir::Value* param = function.body().addArgument(signature.leaves[i], ir::irName(signature.labels[i]));
      if (signature.weak[i]) tracer.markWeak(param);
      leaves.push_back(tracer.wrap(param));
    }
    std::vector<Value> args;
    size_t pos = 0;
    for (const TreeShape& shape : signature.args) args.push_back(shape.rebuild(leaves, pos));
    Value result;
    try {
      result = evaluator.apply(fn, args, span);
    } catch (const Tracer::AlwaysRaises& always) {
      // Every path fails (both branches of an if raise): the function raises, when called,
      // the error of the path its arguments take, and returns nothing.
      tracer.raiseHere(always.error, span);
    }
    if (result.isRecur()) throw Error(ErrorKind::Syntax, "recur outside of a loop or fn", span);

    std::vector<Value> resultLeaves;
    out.result = TreeShape::flatten(result, resultLeaves);
    rejectFunctions(out.result, span);
    std::vector<ir::Value*> returned;
    for (const Value& leaf : resultLeaves) {
      // A weak literal comes back weak, exactly as eager code gives it.
      const bool weak = isTraced(leaf) ? tracer.isWeak(traced(leaf).value()) : leaf.tensor().weak();
      std::optional<DType> as;
      if (weak) as = isTraced(leaf) ? tracedType(leaf).dtype : strongLeaf(leaf.tensor()).dtype();
      out.weakResult.push_back(weak);
      returned.push_back(tracer.materialize(leaf, as, span));
    }
    tracer.builder().terminate(ir::Structural::Return, returned, fnSpan);
    out.hidden = tracer.hiddenArgs();
    out.effect = tracer.effect();
  }
  out.signature = std::move(signature);
  ir::verify(*out.module);
  if (options.optimize) {
    const std::string target = options.target.empty() ? defaultTarget(evaluator) : options.target;
    CompileSwitches switches(evaluator);
    switches.options.layoutTarget = options.layouts;
    if (options.pipeline) evaluator.compiler().runPasses(*out.module, *options.pipeline, switches.options, function.name());
    else evaluator.compiler().optimize(*out.module, target, switches.options, function.name());
    ir::pruneUnreachable(*out.module, function);
  }
  return out;
}

} // namespace

// ---- Signatures ----

namespace {

/// Whether `fix` fixes this leaf by value.
bool fixes(FixLevel fix, const Value& leaf) {
  if (fix == FixLevel::None || !leaf.isTensor()) return false;
  const Tensor& t = leaf.tensor();
  if (t.weak()) return true;
  return fix == FixLevel::SmallInts && !isFloat(t.dtype()) && t.numel() <= 16;
}

/// Turns the leaves of `shape` that `fix` selects into static ones, keeping the others.
void fixLeaves(FixLevel fix, TreeShape& shape, const std::vector<Value>& leaves, size_t& pos, std::vector<Value>& kept) {
  if (shape.kind == TreeShape::Kind::Leaf) {
    const Value& leaf = leaves[pos++];
    if (fixes(fix, leaf)) {
      shape.kind = TreeShape::Kind::Static;
      shape.value = leaf;
    } else {
      kept.push_back(leaf);
    }
    return;
  }
  for (TreeShape& child : shape.children) fixLeaves(fix, child, leaves, pos, kept);
}

void collect(const TreeShape& shape, const Value& value, std::vector<Tensor>& out) {
  switch (shape.kind) {
  case TreeShape::Kind::Leaf: out.push_back(strongLeaf(value.tensor())); break;
  case TreeShape::Kind::Static: break;
  case TreeShape::Kind::Map:
    for (size_t i = 0; i < shape.keys.size(); ++i) collect(shape.children[i], *value.map().find(shape.keys[i]), out);
    break;
  case TreeShape::Kind::Vector:
  case TreeShape::Kind::List: {
    const std::vector<Value> items = sequenceItems(value);
    for (size_t i = 0; i < shape.children.size(); ++i) collect(shape.children[i], items[i], out);
    break;
  }
  }
}

/// For each tensor leaf of `value`, in collect's order: whether nothing but `value` (the
/// call's argument, held by the call alone when `alone`) reaches it — every container on
/// the way held once, its entry in no other version of a persistent vector or map, the
/// tensor and its storage held once (Tensor::heldAlone). jit :donate writes results over
/// such leaves only: a program literal, a global, a local read again later, a closure's
/// capture or a host's array each hold a reference of their own.
void collectHeldAlone(const TreeShape& shape, const Value& value, bool alone, std::vector<uint8_t>& out) {
  switch (shape.kind) {
  case TreeShape::Kind::Leaf: out.push_back(alone && value.isTensor() && value.tensor().heldAlone()); break;
  case TreeShape::Kind::Static: break;
  case TreeShape::Kind::Map: {
    const MapObj& map = value.map();
    alone = alone && map.unique();
    for (size_t i = 0; i < shape.keys.size(); ++i)
      collectHeldAlone(shape.children[i], *map.find(shape.keys[i]), alone && map.holdsAlone(shape.keys[i]), out);
    break;
  }
  case TreeShape::Kind::Vector: {
    const VectorObj& vector = value.vector();
    alone = alone && vector.unique();
    for (size_t i = 0; i < shape.children.size(); ++i)
      collectHeldAlone(shape.children[i], vector[i], alone && vector.holdsAlone(i), out);
    break;
  }
  case TreeShape::Kind::List: {
    const ListObj* cell = value.list();
    for (size_t i = 0; i < shape.children.size() && cell; ++i, cell = cell->next()) {
      alone = alone && cell->unique(); // a shorter list may share the rest of the cells
      collectHeldAlone(shape.children[i], cell->first(), alone, out);
    }
    break;
  }
  }
}

} // namespace

Signature Signature::of(Args args, const std::vector<std::string>& names, const std::vector<bool>& staticArgs,
                        FixLevel fix) {
  Signature sig;
  for (size_t i = 0; i < args.size(); ++i) {
    if (i < staticArgs.size() && staticArgs[i]) {
      TreeShape whole;
      whole.kind = TreeShape::Kind::Static;
      whole.value = args[i];
      sig.args.push_back(std::move(whole));
      continue;
    }
    std::vector<Value> leaves;
    sig.args.push_back(TreeShape::flatten(args[i], leaves));
    if (fix != FixLevel::None) {
      std::vector<Value> kept;
      size_t pos = 0;
      fixLeaves(fix, sig.args.back(), leaves, pos, kept);
      leaves = std::move(kept);
    }
    sig.args.back().label(i < names.size() ? names[i] : cat("arg", i), sig.labels);
    for (const Value& leaf : leaves) {
      sig.leaves.push_back(leafType(leaf));
      sig.weak.push_back(leaf.isTensor() && leaf.tensor().weak());
    }
  }
  return sig;
}

void Signature::collectLeaves(Args call, std::vector<Tensor>& out) const {
  for (size_t i = 0; i < args.size(); ++i) collect(args[i], call[i], out);
}

bool Signature::operator==(const Signature& other) const {
  if (args.size() != other.args.size() || leaves != other.leaves || weak != other.weak) return false;
  for (size_t i = 0; i < args.size(); ++i)
    if (!args[i].sameAs(other.args[i])) return false;
  return true;
}

std::string Signature::str() const {
  std::string out = "(";
  size_t pos = 0;
  for (size_t i = 0; i < args.size(); ++i) {
    if (i) out += ", ";
    describeTree(args[i], *this, pos, out);
  }
  return out + ")";
}

std::string Signature::difference(const Signature& other) const {
  if (args.size() != other.args.size())
    return cat("it is called with ", other.args.size(), " arguments, not ", args.size());
  std::vector<std::string> reasons;
  size_t posA = 0, posB = 0;
  for (size_t i = 0; i < args.size(); ++i) {
    const size_t leavesA = args[i].leafCount(), leavesB = other.args[i].leafCount();
    if (!args[i].sameAs(other.args[i])) {
      std::string was, now;
      size_t a = posA, b = posB;
      describeTree(args[i], *this, a, was);
      describeTree(other.args[i], other, b, now);
      // Counted from 0, as :static and :argnums count them.
      reasons.push_back(cat("argument ", i, " has another structure or static value: ", now, ", was ", was));
    } else {
      for (size_t k = 0; k < leavesA; ++k) {
        const ir::Type& was = leaves[posA + k];
        const ir::Type& now = other.leaves[posB + k];
        const std::string& label = other.labels[posB + k];
        if (was.dtype != now.dtype)
          reasons.push_back(cat("argument ", label, ": dtype ", dtypeName(now.dtype), ", was ", dtypeName(was.dtype)));
        else if (!(was == now))
          reasons.push_back(cat("argument ", label, ": shape ", now.str(), ", was ", was.str()));
        else if (weak[posA + k] != other.weak[posB + k])
          reasons.push_back(cat("argument ", label, other.weak[posB + k] ? ": a bare number, was a tensor" : ": a tensor, was a bare number"));
      }
    }
    posA += leavesA;
    posB += leavesB;
  }
  if (reasons.empty()) return "the signature is the same";
  std::string out;
  for (const std::string& r : reasons) out += cat(out.empty() ? "" : "; ", r);
  return out;
}

// ---- Lowering ----

std::vector<std::string> parameterNames(const Value& fn) {
  std::vector<std::string> names;
  // A derivative function takes its function's arguments (and names them alike).
  if (fn.isFunction() && fn.function().functionKind() == FunctionObj::Kind::Builtin)
    if (const auto* diff = dynamic_cast<const DiffState*>(static_cast<const BuiltinObj&>(fn.function()).state()))
      return parameterNames(diff->function());
  if (!fn.isFunction() || fn.function().functionKind() != FunctionObj::Kind::Closure) return names;
  const Lambda& lambda = *static_cast<const ClosureObj&>(fn.function()).lambda();
  if (!lambda.source || !lambda.source->isList()) return names;
  const auto& items = lambda.source->items();
  const size_t at = items.size() > 1 && items[1]->isSymbol() ? 2 : 1;
  if (at >= items.size() || !items[at]->isVector()) return names;
  for (const SyntaxPtr& p : items[at]->items()) {
    if (p->isSymbol("&")) continue;
    names.push_back(p->isSymbol() ? p->text() : cat("arg", names.size()));
  }
  return names;
}

Lowered lowerFunction(Evaluator& evaluator, const Value& fn, Args args, const Span& span, const LowerOptions& options) {
  const std::vector<std::string> names = parameterNames(fn);
  Signature sig = Signature::of(args, names, options.staticArgs, options.fix);
  for (FixLevel fix = options.fix;;) {
    try {
      return lowerImpl(evaluator, fn, std::move(sig), span, options);
    } catch (const Error& e) {
      // A leaf used where a value is needed (a shape, an index, a count): fix more leaves
      // by value and try again, as long as that changes the signature.
      if (!e.message().starts_with("jit: ") || fix == FixLevel::SmallInts) throw;
      const Signature before = Signature::of(args, names, options.staticArgs, fix);
      for (;;) {
        fix = static_cast<FixLevel>(static_cast<int>(fix) + 1);
        sig = Signature::of(args, names, options.staticArgs, fix);
        if (!(sig == before)) break;
        if (fix == FixLevel::SmallInts) throw;
      }
    }
  }
}

Lowered lowerForTypes(Evaluator& evaluator, const Value& fn, const std::vector<ir::Type>& types,
                      const std::vector<std::string>& names, const Span& span, const LowerOptions& options,
                      const std::vector<TreeShape>& shapes) {
  Signature sig;
  const std::vector<std::string> params = parameterNames(fn);
  if (!shapes.empty()) { // trees: each argument's leaves, labelled by path ("p.w")
    size_t leaf = 0;
    for (size_t i = 0; i < shapes.size(); ++i) {
      sig.args.push_back(shapes[i]);
      const std::string label = i < names.size() && !names[i].empty() ? names[i] : i < params.size() ? params[i] : cat("arg", i);
      shapes[i].label(label, sig.labels);
      for (size_t k = shapes[i].leafCount(); k-- > 0; ++leaf) {
        sig.leaves.push_back(types.at(leaf));
        sig.weak.push_back(false);
      }
    }
    return lowerImpl(evaluator, fn, std::move(sig), span, options);
  }
  for (size_t i = 0; i < types.size(); ++i) {
    sig.args.push_back(TreeShape{});
    sig.leaves.push_back(types[i]);
    sig.weak.push_back(false);
    sig.labels.push_back(i < names.size() && !names[i].empty() ? names[i]
                         : i < params.size()                   ? params[i]
                                                               : cat("arg", i));
  }
  return lowerImpl(evaluator, fn, std::move(sig), span, options);
}

std::string defaultTarget(const Evaluator& evaluator) {
  const std::string& chosen = const_cast<Evaluator&>(evaluator).compileDebug().target;
  return chosen.empty() ? compiler::targetNames().front() : chosen;
}

compiler::OptionValues targetOptions(const Evaluator& evaluator, const std::string& target,
                                     const compiler::OptionValues& jitOptions) {
  compiler::OptionValues values;
  if (const compiler::BackendInfo* info = compiler::findBackendInfo(target))
    for (const auto& [flag, value] : const_cast<Evaluator&>(evaluator).compileDebug().flags)
      for (const compiler::BackendOption& option : info->options)
        if (option.flag && option.compiles && option.name == flag) values[flag] = value;
  for (const auto& [name, value] : jitOptions) values[name] = value;
  return values;
}

CompileSwitches::CompileSwitches(Evaluator& evaluator) : debug_(evaluator.compileDebug()) {
  context.verifyEach = debug_.verifyEach;
  context.printAfterAll = debug_.printAfterAll;
  context.printAfter = debug_.printAfter;
  context.timePasses = debug_.timePasses;
  context.printMemoryPlan = debug_.printMemoryPlan;
  context.out = debug_.out;
  options.context = &context;
  options.optLevel = debug_.optLevel;
  options.bucketBytes = debug_.bucketBytes;
  if (debug_.printFallbacks) options.fallbacks = debug_.out ? debug_.out : &std::cerr;
}

CompileSwitches::~CompileSwitches() {
  if (debug_.timePasses && !context.timings.empty()) ir::PassManager::reportTimings(context);
}

void compileLowered(Evaluator& evaluator, Lowered& lowered, const std::string& target, const std::string& layouts,
                    const std::vector<bool>& donated, const compiler::OptionValues& jitOptions, int64_t bucketBytes) {
  CompileSwitches switches(evaluator);
  if (bucketBytes >= 0) switches.options.bucketBytes = bucketBytes;
  switches.options.layoutTarget = layouts;
  switches.options.donated = donated;
  switches.options.backend = targetOptions(evaluator, target, jitOptions);
  switches.options.constants = lowered.hidden;
  const std::string entry = lowered.function->name();
  lowered.executable = evaluator.compiler().compile(std::move(lowered.module), entry, target, switches.options);
  lowered.function = const_cast<ir::Function*>(&lowered.executable->entry());
}

namespace {

/// Reads a tree of types at `at` in `text`: `{:key TYPE ...}` (a map, keys in order),
/// `[TYPE ...]` (a vector), or a tensor type (`f32[784,10]`, spaces allowed inside its
/// brackets). Separators are spaces and commas. Appends the leaf types in order.
TreeShape parseTreeType(std::string_view text, size_t& at, std::vector<ir::Type>& types, std::string_view item) {
  checkStack();
  auto bad = [&](std::string_view why) -> TreeShape {
    fail(ErrorKind::Value, "bad signature item '", trimmed(item), "': ", why);
  };
  auto skip = [&] {
    while (at < text.size() && (std::isspace(static_cast<unsigned char>(text[at])) || text[at] == ',')) ++at;
  };
  skip();
  if (at >= text.size()) return bad("a type is missing");
  TreeShape shape;
  if (text[at] == '{' || text[at] == '[') {
    const bool map = text[at] == '{';
    const char close = map ? '}' : ']';
    shape.kind = map ? TreeShape::Kind::Map : TreeShape::Kind::Vector;
    ++at;
    for (;;) {
      skip();
      if (at >= text.size()) return bad(map ? "'{' without '}'" : "'[' without ']'");
      if (text[at] == close) break;
      if (map) {
        if (text[at] != ':') return bad("map keys are keywords, as {:w f32[3] :b f32[]}");
        const size_t start = ++at;
        while (at < text.size() && !std::isspace(static_cast<unsigned char>(text[at])) && text[at] != ',' &&
               text[at] != '{' && text[at] != '[' && text[at] != '}')
          ++at;
        if (at == start) return bad("an empty map key");
        const Value key = makeKeyword(text.substr(start, at - start));
        for (const Value& k : shape.keys)
          if (k.keyword().name() == key.keyword().name()) return bad("a map key appears twice");
        shape.keys.push_back(key);
      }
      shape.children.push_back(parseTreeType(text, at, types, item));
    }
    ++at;
    if (shape.children.empty()) return bad("an empty map or vector has no tensors to pass");
    return shape;
  }
  std::string type;
  int depth = 0;
  for (; at < text.size(); ++at) {
    const char c = text[at];
    if (depth == 0 && (std::isspace(static_cast<unsigned char>(c)) || c == ',' || c == '}' || c == ']')) break;
    if (c == '[') ++depth;
    if (c == ']') --depth;
    if (!std::isspace(static_cast<unsigned char>(c))) type += c;
  }
  const std::optional<ir::Type> parsed = ir::parseType(type);
  if (!parsed) return bad("'" + type + "' is not a type such as f32[128,64]");
  types.push_back(*parsed);
  return shape; // a leaf
}

} // namespace

void parseSignature(std::string_view text, std::vector<std::string>& names, std::vector<ir::Type>& types,
                    std::vector<TreeShape>* shapes) {
  // Items are separated by the commas outside brackets and braces.
  std::vector<std::string_view> items;
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '[' || text[i] == '{') ++depth;
    if (text[i] == ']' || text[i] == '}') --depth;
    if (text[i] == ',' && depth == 0) {
      items.push_back(text.substr(start, i - start));
      start = i + 1;
    }
  }
  if (start < text.size() || !items.empty()) items.push_back(text.substr(start));
  auto isSpace = [](char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; };
  auto isWord = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '*'; };
  for (std::string_view raw : items) {
    // A tree: NAME:{...} or NAME:[...], its leaves flattened in the order written.
    const size_t colonAt = raw.find(':');
    size_t open = colonAt == std::string_view::npos ? 0 : colonAt + 1;
    while (open < raw.size() && std::isspace(static_cast<unsigned char>(raw[open]))) ++open;
    if (colonAt != std::string_view::npos && open < raw.size() && (raw[open] == '{' || raw[open] == '[')) {
      const std::string name(trimmed(raw.substr(0, colonAt)));
      if (name.empty()) fail(ErrorKind::Value, "bad signature item '", trimmed(raw), "': a tree needs a name, as p:{:w f32[3]}");
      if (!shapes) fail(ErrorKind::Value, "bad signature item '", trimmed(raw), "': trees are not accepted here");
      size_t at = open;
      TreeShape shape = parseTreeType(raw, at, types, raw);
      while (at < raw.size() && std::isspace(static_cast<unsigned char>(raw[at]))) ++at;
      if (at != raw.size()) fail(ErrorKind::Value, "bad signature item '", trimmed(raw), "': text after the tree");
      names.push_back(name);
      shapes->push_back(std::move(shape));
      continue;
    }
    // Spaces may surround the punctuation ("x: f32[2, 3]") but never split a word or a
    // number: "f32[2 3]" is not f32[23].
    std::string item;
    for (size_t i = 0; i < raw.size(); ++i) {
      if (!isSpace(raw[i])) {
        item += raw[i];
        continue;
      }
      size_t next = i;
      while (next < raw.size() && isSpace(raw[next])) ++next;
      if (!item.empty() && next < raw.size() && isWord(item.back()) && isWord(raw[next]))
        fail(ErrorKind::Value, "bad signature item '", trimmed(raw), "': a space inside a name, type or size");
      i = next - 1;
    }
    const size_t colon = item.find(':');
    const std::string name = colon == std::string::npos ? "" : item.substr(0, colon);
    const std::string typeText = colon == std::string::npos ? item : item.substr(colon + 1);
    const std::optional<ir::Type> type = ir::parseType(typeText);
    if (!type || (colon != std::string::npos && name.empty()))
      fail(ErrorKind::Value, "bad signature item '", trimmed(raw), "': expected NAME:TYPE such as x:f32[128,64] or n:i64");
    names.push_back(name);
    types.push_back(*type);
    if (shapes) shapes->push_back(TreeShape{});
  }
}

// ---- Running ----

Value Lowered::run(Evaluator& evaluator, Args args, const Span& span) const {
  std::vector<Tensor> inputs;
  inputs.reserve(signature.leaves.size() + hidden.size());
  // Which leaves nothing else reaches, asked before `inputs` holds them too.
  std::vector<uint8_t> alone;
  alone.reserve(signature.leaves.size() + hidden.size());
  for (size_t i = 0; i < args.size() && i < signature.args.size(); ++i)
    collectHeldAlone(signature.args[i], args[i], args[i].isTensor() || (args[i].object() && args[i].object()->unique()),
                     alone);
  signature.collectLeaves(args, inputs);
  inputs.insert(inputs.end(), hidden.begin(), hidden.end());
  alone.resize(inputs.size(), 0); // hidden tensors belong to the function
  TSL_ASSERT(executable, "running a lowered function that was not compiled");
  std::vector<Tensor> outputs;
  try {
    InterruptScope interruptible(&evaluator.interruptFlag());
    outputs = executable->run(inputs, alone);
  } catch (Error& e) {
    e.setSpanIfUnknown(span);
    throw;
  }
  std::vector<Value> leaves;
  leaves.reserve(outputs.size());
  for (size_t i = 0; i < outputs.size(); ++i) {
    const Tensor& t = outputs[i];
    if (weakResult[i]) leaves.emplace_back(isFloat(t.dtype()) ? Tensor::weakFloat(t.toDouble()) : Tensor::weakInt(t.toInt()));
    else leaves.emplace_back(t);
  }
  size_t pos = 0;
  return result.rebuild(leaves, pos);
}

// ---- jit ----

const Lowered& JitState::version(Evaluator& evaluator, const Value& fn, Args args, const Span& span) {
  return *find(evaluator, fn, args, span);
}

std::shared_ptr<Lowered> JitState::find(Evaluator& evaluator, const Value& fn, Args args, const Span& span) {
  if (!staticArgs_.empty() && args.size() < staticArgs_.size())
    fail(ErrorKind::Type, "jit: :static names position ", staticArgs_.size() - 1, " (counted from 0) but the call passes ",
         args.size(), args.size() == 1 ? " argument" : " arguments");
  const std::vector<std::string> names = parameterNames(fn);
  Signature sig = Signature::of(args, names, staticArgs_, fix_);
  for (auto it = versions_.begin(); it != versions_.end(); ++it)
    if ((*it)->signature == sig) {
      std::rotate(it, it + 1, versions_.end()); // now the most recently used
      return versions_.back();
    }
  // Any callable may be jit's function (a keyword or a map looks up, a builtin applies):
  // only a function has a name.
  const std::string name = fn.isFunction() && !fn.function().name().empty() ? fn.function().name() : "fn";
  LowerOptions options;
  options.staticArgs = staticArgs_;
  options.fix = fix_;
  options.optimize = false; // the compiler runs the target's pipeline
  auto lowered = std::make_shared<Lowered>(lowerFunction(evaluator, fn, args, span, options));
  // jit :donate: the tensor leaves of the donated arguments, in parameter order.
  std::vector<bool> donated;
  if (!donateArgs_.empty()) {
    if (args.size() < donateArgs_.size())
      fail(ErrorKind::Type, "jit: :donate names position ", donateArgs_.size() - 1, " (counted from 0) but the call passes ",
           args.size(), args.size() == 1 ? " argument" : " arguments");
    for (size_t i = 0; i < lowered->signature.args.size() && i < args.size(); ++i) {
      std::vector<Tensor> leaves;
      collect(lowered->signature.args[i], args[i], leaves);
      donated.insert(donated.end(), leaves.size(), i < donateArgs_.size() && donateArgs_[i]);
    }
  }
  compileLowered(evaluator, *lowered, target_, layouts_, donated, options_, bucketBytes_);
  std::string fixed;
  if (!(lowered->signature == sig)) {
    // Lowering had to fix leaves by value: from now on they are part of every signature.
    for (FixLevel level : {FixLevel::Numbers, FixLevel::SmallInts})
      if (Signature::of(args, names, staticArgs_, level) == lowered->signature) {
        fix_ = level;
        break;
      }
    fixed = fix_ == FixLevel::Numbers ? " (bare numbers are fixed by value: the function needs their values)"
                                      : " (bare numbers and small integer tensors are fixed by value: the function "
                                        "needs their values)";
  }
  const Signature& now = lowered->signature;
  lastReason_ = versions_.empty() ? cat("first call, for ", now.str(), fixed)
                                  : cat("a new signature ", now.str(), ": ", versions_.back()->signature.difference(now), fixed);
  const CompileDebug& debug = evaluator.compileDebug();
  if (debug.explainRecompile && compiled_ > 0)
    (debug.out ? *debug.out : std::cerr) << "jit: " << name << " compiles version " << compiled_ + 1 << ": "
                                         << lastReason_ << "\n";
  // Full: the least recently used version goes (its code is freed once the compiler's
  // cache lets go of it too).
  while (versions_.size() >= maxVersions_) {
    versions_.erase(versions_.begin());
    ++evicted_;
  }
  ++compiled_;
  versions_.push_back(lowered);
  last_ = std::move(lowered);
  return versions_.back();
}

Value JitState::callWith(Evaluator& evaluator, const Value& fn, Args args, const Span& span) {
  // Inside a function being compiled, a jit function is just its function: its body
  // becomes part of the caller's IR.
  // (Anything being lowered counts: the function may close over traced values.)
  if (evaluator.tracer()) return evaluator.apply(fn, args, span);
  for (const Value& arg : args)
    if (Tracer::containsTraced(arg)) return evaluator.apply(fn, args, span);
  std::shared_ptr<Lowered> held;
  try {
    held = find(evaluator, fn, args, span);
  } catch (const Error& e) {
    // An error of the program's values found while compiling. Eager code, which the
    // compiled code must agree with, may fail earlier on the data (a matrix that is not
    // positive definite, a branch that fails when taken): the call runs eagerly so that
    // it raises what eager code raises, and this error if eager code gets past it.
    // (A derivative, which exists only compiled, replays into this same error: once.)
    if (!Tracer::raisedWhenRun(e) || evaluator.replaying()) throw;
    evaluator.setReplaying(true);
    try {
      evaluator.apply(fn, args, span);
    } catch (const staging::NoEagerMeaning&) {
      evaluator.setReplaying(false);
      throw e;
    } catch (...) {
      evaluator.setReplaying(false);
      throw;
    }
    evaluator.setReplaying(false);
    throw;
  }
  return held->run(evaluator, args, span);
}

std::string JitState::explain() const {
  if (versions_.empty()) return "not compiled yet";
  const std::string evictions =
      evicted_ == 0 ? "" : cat(" (", evicted_, " evicted: at most ", maxVersions_, " are kept, the least recently used goes)");
  return cat(versions_.size(), versions_.size() == 1 ? " version" : " versions", evictions, "; the last compiled on ",
             lastReason_);
}

} // namespace tsl
