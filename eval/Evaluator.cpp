// eval/Evaluator.cpp — running forms, calling functions, loading modules.
#include "eval/Evaluator.h"

#include "compiler/Compiler.h"
#include "eval/Compile.h"

#include "eval/Analyzer.h"
#include "eval/Expander.h"
#include "eval/Printer.h"
#include "eval/Staging.h"
#include "eval/Suggest.h"
#include "parser/Reader.h"
#include "runtime/Interrupt.h"
#include "runtime/Io.h"
#include "stdlib/Embedded.h"
#include "tsl/StackGuard.h"

#include <algorithm>
#include <alloca.h>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <new>
#include <sstream>
#include <stdexcept>

namespace tsl {

namespace {

/// Call chains longer than this are cut in error notes.
constexpr size_t kMaxNotes = 6;

std::string arityText(int minArgs, int maxArgs) {
  if (maxArgs < 0) return cat("at least ", minArgs);
  if (minArgs == maxArgs) return cat(minArgs);
  return cat(minArgs, " to ", maxArgs);
}

[[noreturn]] void arityError(const std::string& name, int minArgs, int maxArgs, size_t got,
                             const Span& span) {
  throw Error(ErrorKind::Type,
              cat("wrong number of arguments to ", name.empty() ? "anonymous fn" : name,
                  ": expected ", arityText(minArgs, maxArgs), ", got ", got),
              span);
}

} // namespace

Evaluator::Evaluator(EngineOptions options)
    : options_(options), compileDebug_(std::make_unique<CompileDebug>()),
      compiler_(std::make_unique<compiler::Compiler>()) {
  core_ = std::make_unique<Namespace>("core", nullptr);
  user_ = std::make_unique<Namespace>("user", core_.get());
  core_->addAlias("core", core_.get());
  user_->addAlias("core", core_.get());
  currentNs_ = user_.get();
  registerBuiltins(*this);
  if (options_.loadCore) {
    for (const stdlib::EmbeddedFile& file : stdlib::embeddedFiles())
      if (file.name == "stdlib/core") evalSource(file.text, "stdlib/core.tsl", *core_);
  }
}

Evaluator::~Evaluator() = default;

std::ostream& Evaluator::out() { return options_.out ? *options_.out : std::cout; }

std::string Evaluator::gensym(std::string_view prefix) {
  return cat(prefix.empty() ? "G" : prefix, "__", ++gensymCounter_);
}

BuiltinObj& Evaluator::defineBuiltin(std::string name, int minArgs, int maxArgs, BuiltinFn fn) {
  Var* var = core_->intern(name);
  auto* builtin = new BuiltinObj(name, minArgs, maxArgs, std::move(fn));
  var->value = Value(builtin);
  var->defined = true;
  return *builtin;
}

void Evaluator::define(Namespace& ns, std::string_view name, Value value) {
  Var* var = ns.intern(name);
  var->value = std::move(value);
  var->defined = true;
}

// ---- Running code ----

Value Evaluator::run(const NodePtr& node, int frameSize) {
  std::vector<Value> slots(static_cast<size_t>(std::max(frameSize, 1)));
  Frame frame{slots.data(), nullptr, static_cast<int>(slots.size())};
  Value result = node->eval(*this, frame);
  TSL_ASSERT(!result.isRecur(), "recur escaped its loop");
  return result;
}

Value Evaluator::evalForm(const SyntaxPtr& form, Namespace& ns) {
  InterruptScope interruptible(&interrupted_); // kernels stop on this engine's Ctrl-C too
  Namespace* savedNs = currentNs_;
  currentNs_ = &ns;
  try {
    Expander expander(*this, ns);
    const SyntaxPtr coreForm = expander.expand(form);
    const TopLevelCode code = analyzeTopLevel(*this, ns, coreForm);
    Value result = run(code.node, code.frameSize);
    currentNs_ = savedNs;
    return result;
  } catch (const std::bad_alloc&) {
    // Memory ran out outside any builtin (building a closure, a vector literal...): the
    // unwinding has freed what the form held.
    currentNs_ = savedNs;
    throw Error(ErrorKind::Runtime, "out of memory", form->span());
  } catch (const std::length_error&) {
    currentNs_ = savedNs;
    throw Error(ErrorKind::Runtime, "out of memory", form->span());
  } catch (...) {
    currentNs_ = savedNs;
    throw;
  }
}

namespace {

/// The forms of a source file (a file too large to read is out of memory, at no form).
std::vector<SyntaxPtr> readSource(std::string_view text, std::string_view file) {
  try {
    return readAll(text, file);
  } catch (const std::bad_alloc&) {
    throw Error(ErrorKind::Runtime, cat("out of memory reading ", file));
  }
}

} // namespace

Value Evaluator::evalSource(std::string_view text, std::string_view file, Namespace& ns) {
  Value last;
  evalEachForm(text, file, [&](const SyntaxPtr& form) { last = evalForm(form, ns); });
  return last;
}

size_t Evaluator::evalSourceKeepGoing(std::string_view text, std::string_view file, Namespace& ns,
                                      const std::function<void(const Error&)>& onError) {
  size_t failed = 0;
  evalEachForm(text, file, [&](const SyntaxPtr& form) {
    try {
      evalForm(form, ns);
    } catch (const Error& e) {
      ++failed;
      onError(e);
    }
  });
  return failed;
}

void Evaluator::evalEachForm(std::string_view text, std::string_view file,
                             const std::function<void(const SyntaxPtr&)>& each) {
  sources_.add(file, std::string(text));
  const std::vector<SyntaxPtr> forms = readSource(text, file);
  const std::string savedFile = currentFile_;
  currentFile_ = std::string(file);
  try {
    for (const SyntaxPtr& form : forms) each(form);
  } catch (...) {
    currentFile_ = savedFile;
    throw;
  }
  currentFile_ = savedFile;
}

Value Evaluator::evalForms(const std::vector<SyntaxPtr>& forms, Namespace& ns) {
  Value last;
  for (const SyntaxPtr& form : forms) last = evalForm(form, ns);
  return last;
}

std::vector<Error> Evaluator::check(std::string_view text, std::string_view file) {
  sources_.add(file, std::string(text));
  std::vector<Error> errors;
  std::vector<SyntaxPtr> forms;
  try {
    forms = readAll(text, file);
  } catch (const Error& e) {
    errors.push_back(e);
    return errors;
  }
  // A namespace of its own, kept alive with the modules: macros defined while checking
  // may be referred to by closures.
  auto owned = std::make_unique<Namespace>(cat("<check ", file, ">"), core_.get());
  Namespace& ns = *owned;
  modules_[cat("<check ", file, " ", modules_.size(), ">")] = std::move(owned);
  ns.addAlias("core", core_.get());
  const std::string savedFile = currentFile_;
  currentFile_ = std::string(file);
  for (const SyntaxPtr& form : forms) {
    try {
      Expander expander(*this, ns);
      const SyntaxPtr coreForm = expander.expand(form);
      const TopLevelCode code = analyzeTopLevel(*this, ns, coreForm);
      // Macros must exist for the forms after them to expand; defining one runs nothing
      // of the user's program.
      if (coreForm->headName() == "defmacro") run(code.node, code.frameSize);
    } catch (const Error& e) {
      errors.push_back(e);
    }
  }
  currentFile_ = savedFile;
  for (const auto& [name, var] : ns.vars())
    if (!var->declared && !var->defined && var->firstUse.known())
      errors.emplace_back(ErrorKind::Name, cat("unbound symbol '", name, "'", suggestNames(ns, name)), var->firstUse);
  std::stable_sort(errors.begin(), errors.end(), [](const Error& a, const Error& b) {
    return std::pair(a.span().line, a.span().col) < std::pair(b.span().line, b.span().col);
  });
  return errors;
}

SyntaxPtr Evaluator::expand(const SyntaxPtr& form, Namespace& ns) {
  Expander expander(*this, ns);
  return expander.expand(form);
}

SyntaxPtr Evaluator::expandOnce(const SyntaxPtr& form, Namespace& ns, bool& expanded) {
  Expander expander(*this, ns);
  return expander.expandOnce(form, expanded);
}

// ---- Calls ----

/// Recursion whose depth depends on a traced value never ends while lowering: each level
/// stages both branches of the if that should have ended it.
constexpr const char* kTracedRecursion =
    "jit: compiling a recursion whose depth depends on a traced value (use loop/recur, or pass the value as a "
    "static argument): ";

namespace {

/// What a call-depth error says: the traced-recursion explanation only when the limit is
/// met inside a staged branch (a recursion static values decide is as deep as eager
/// code's and gets eager code's error).
const char* depthPrefix(const Tracer* tracer) {
  return tracer && tracer->inStagedBranch() ? kTracedRecursion : "";
}

} // namespace

void Evaluator::callLimitHit(const Span& span) {
  if (interrupted_.load(std::memory_order_relaxed)) {
    interrupted_.store(false, std::memory_order_relaxed);
    throw Error(ErrorKind::Runtime, "interrupted", span);
  }
  if (stepsLeft_ < 0) {
    stepsLeft_ = -1; // every later step fails too, until the host enters again
    throw Error(ErrorKind::Runtime, cat("step limit exceeded (more than ", maxSteps_, " calls and loop iterations)"), span);
  }
  throw Error(ErrorKind::Runtime,
              cat(depthPrefix(tracer_), "stack depth exceeded (more than ", options_.maxDepth, " nested calls)"),
              span);
}

Value Evaluator::apply(const Value& callee, Args args, const Span& span) {
  switch (callee.kind()) {
  case ValueKind::Function: {
    const FunctionObj& f = callee.function();
    if (f.functionKind() == FunctionObj::Kind::Closure) {
      if (callObserver_ && depth_ == 0 && !tracer_ && !f.isMacro()) [[unlikely]] {
        Value result = callClosure(static_cast<const ClosureObj&>(f), args, span);
        callObserver_(callee, args, result, span);
        return result;
      }
      return callClosure(static_cast<const ClosureObj&>(f), args, span);
    }
    const auto& builtin = static_cast<const BuiltinObj&>(f);
    const int n = static_cast<int>(args.size());
    if (n < builtin.minArgs() || (builtin.maxArgs() >= 0 && n > builtin.maxArgs()))
      arityError(builtin.name(), builtin.minArgs(), builtin.maxArgs(), args.size(), span);
    if (tracer_ && builtin.effectful()) tracer_->noteEffect(builtin.name());
    CallContext context{*this, span, f};
    try {
      return builtin.fn()(context, args);
    } catch (Error& e) {
      e.setSpanIfUnknown(span);
      throw;
    } catch (const std::bad_alloc&) {
      throw Error(ErrorKind::Runtime, "out of memory", span);
    } catch (const std::length_error&) { // a string or vector longer than it can be
      throw Error(ErrorKind::Runtime, "out of memory", span);
    }
  }
  case ValueKind::Keyword:
  case ValueKind::Map: {
    // (:key map default?) and (map key default?) look up.
    if (args.empty() || args.size() > 2)
      arityError(callee.isKeyword() ? ":" + callee.keyword().name() : "a map", 1, 2, args.size(), span);
    const Value& map = callee.isKeyword() ? args[0] : callee;
    const Value& key = callee.isKeyword() ? callee : args[0];
    if (map.isMap())
      if (const Value* found = map.map().find(key)) return *found;
    return args.size() == 2 ? args[1] : Value();
  }
  case ValueKind::Vector: {
    if (args.size() != 1) arityError("a vector", 1, 1, args.size(), span);
    if (!args[0].isTensor() || !args[0].tensor().isScalar() || !isInteger(args[0].tensor().dtype()))
      throw Error(ErrorKind::Type, "a vector called as a function takes an integer index", span);
    const int64_t i = args[0].tensor().toInt();
    const int64_t n = static_cast<int64_t>(callee.vector().count());
    if (i < 0 || i >= n)
      throw Error(ErrorKind::Value, cat("index ", i, " is out of range for a vector of ", n), span);
    return callee.vector()[static_cast<size_t>(i)];
  }
  default: {
    std::string shown = printValue(callee, true);
    if (shown.size() > 40) shown = shown.substr(0, 37) + "...";
    throw Error(ErrorKind::Type, cat(shown, " is not a function (it is ", describeKind(callee), ")"),
                span);
  }
  }
}

Value Evaluator::callClosure(const ClosureObj& closure, Args args, const Span& span) {
  const Lambda& lambda = *closure.lambda();
  const size_t fixed = lambda.params.size();
  if (args.size() < fixed || (!lambda.variadic() && args.size() > fixed))
    arityError(lambda.name, static_cast<int>(fixed), lambda.variadic() ? -1 : static_cast<int>(fixed),
               args.size(), span);
  const CallLevel level(*this, span);
  if (nativeStackLow())
    throw Error(ErrorKind::Runtime,
                cat(depthPrefix(tracer_), "stack depth exceeded (the native stack is nearly full)"), span);

  // The frame lives on the native stack; checkStack() above keeps that safe.
  const int size = std::max(lambda.frameSize, 1);
  auto* slots = static_cast<Value*>(alloca(sizeof(Value) * static_cast<size_t>(size)));
  std::uninitialized_default_construct_n(slots, size);
  struct Destroy {
    Value* slots;
    int size;
    ~Destroy() { std::destroy_n(slots, size); }
  } destroy{slots, size};

  Frame frame{slots, &closure, size};
  try {
    for (size_t i = 0; i < fixed; ++i) lambda.params[i].bind(args[i], slots);
    if (lambda.rest) {
      Value rest;
      if (args.size() > fixed)
        rest = makeVector(std::vector<Value>(args.begin() + static_cast<std::ptrdiff_t>(fixed), args.end()));
      lambda.rest->bind(rest, slots);
    }
    if (lambda.recurs && staging::lowering(*this)) {
      // Under jit, a fn that recurs with traced values becomes a while.
      std::vector<Value> initial;
      std::vector<const Pattern*> targets;
      for (size_t i = 0; i < fixed; ++i) {
        initial.push_back(args[i]);
        targets.push_back(&lambda.params[i]);
      }
      if (lambda.rest) {
        initial.push_back(args.size() > fixed ? makeVector(std::vector<Value>(args.begin() + static_cast<std::ptrdiff_t>(fixed), args.end())) : Value());
        targets.push_back(&*lambda.rest);
      }
      return *staging::loop(*this, frame, targets, initial, [&] { return lambda.body->eval(*this, frame); }, lambda.span);
    }
    for (;;) {
      Value result = lambda.body->eval(*this, frame);
      if (!result.isRecur()) return result;
      poll(span);
    }
  } catch (Error& e) {
    if (span.known()) {
      const std::string note = cat("note: in ", lambda.name.empty() ? "anonymous fn" : lambda.name,
                                   " called at ", span.fileName(), ":", span.line, ":", span.col);
      // Repeats of the last note are counted; the chain stops after a few distinct ones.
      e.addNote(note, kMaxNotes);
    }
    throw;
  }
}

// ---- Modules ----

Namespace& Evaluator::importModule(std::string_view path, std::string_view fromFile, const Span& span) {
  std::string key;
  std::string text;
  std::string fileName;
  if (path.starts_with("stdlib/")) {
    std::string name(path);
    if (name.ends_with(".tsl")) name.resize(name.size() - 4);
    const auto& files = stdlib::embeddedFiles();
    auto it = std::find_if(files.begin(), files.end(), [&](const auto& f) { return f.name == name; });
    if (it == files.end())
      throw Error(ErrorKind::Io, cat("no standard library module '", name, "'"), span);
    key = name;
    text = std::string(it->text);
    fileName = name + ".tsl";
  } else {
    namespace fs = std::filesystem;
    fs::path relative(path);
    if (relative.extension() != ".tsl") relative += ".tsl";
    fs::path candidate = relative;
    if (relative.is_relative()) {
      const fs::path base = fs::path(fromFile).parent_path();
      std::error_code ec;
      if (!base.empty() && fs::exists(base / relative, ec)) candidate = base / relative;
    }
    std::error_code exists;
    if (!fs::exists(candidate, exists))
      throw Error(ErrorKind::Io, cat("cannot open module '", path, "' (looked for ", candidate.string(), ")"),
                  span);
    text = readTextFile(candidate.string(), kMaxSourceBytes);
    std::error_code ec;
    const fs::path canonical = fs::weakly_canonical(candidate, ec);
    key = ec ? candidate.string() : canonical.string();
    fileName = candidate.string();
  }
  if (std::find(loading_.begin(), loading_.end(), key) != loading_.end())
    throw Error(ErrorKind::Syntax, cat("import cycle: '", key, "' imports itself"), span);
  if (auto it = modules_.find(key); it != modules_.end()) return *it->second;

  auto ns = std::make_unique<Namespace>(key, core_.get());
  ns->addAlias("core", core_.get());
  Namespace& module = *ns;
  modules_[key] = std::move(ns);
  loading_.push_back(key);
  try {
    evalSource(text, fileName, module);
  } catch (...) {
    loading_.pop_back();
    modules_.erase(key); // a failed load can be retried after fixing the file
    throw;
  }
  loading_.pop_back();
  return module;
}

} // namespace tsl
