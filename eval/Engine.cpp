// eval/Engine.cpp — the public embedding API over Evaluator.
#include "tsl/tsl.h"

#include "eval/Compile.h"
#include "eval/Evaluator.h"
#include "eval/Expander.h"
#include "eval/Suggest.h"
#include "compiler/Compiler.h"
#include "eval/Printer.h"
#include "eval/Staging.h"
#include "ir/Graphviz.h"
#include "ir/Printer.h"
#include "parser/Reader.h"
#include "runtime/Interrupt.h"
#include "runtime/Io.h"
#include "runtime/CallForms.h"
#include "tsl/StackGuard.h"

#include <algorithm>
#include <csignal>
#include <pthread.h>

#include <fstream>
#include <sstream>

namespace tsl {

namespace {

/// The recur marker is how `recur` signals its loop; from a host it would be taken for a
/// recur that rebound nothing (a loop spinning forever), so the engine refuses it.
void rejectRecurMarker(const Value& v, std::string_view what) {
  if (v.isRecur())
    fail(ErrorKind::Type, what, " is the internal recur marker (Value::recurMarker()), which only recur makes");
}

/// A host entering the engine: from the top, or again from inside a native function
/// (which then counts as a call level, see defineNative). Only an entry from the top
/// forgets an interrupt requested earlier; a nested one must not swallow its caller's.
void enterFromHost(Evaluator& evaluator) {
  checkStack();
  if (evaluator.depth() == 0) {
    evaluator.clearInterrupt();
    evaluator.resetSteps();
  }
}

} // namespace

Engine::Engine(int maxDepth, std::ostream* out) {
  EngineOptions options;
  options.maxDepth = maxDepth;
  options.out = out;
  impl_ = std::make_unique<Evaluator>(options);
}

Engine::~Engine() = default;

Value Engine::eval(std::string_view source, std::string_view fileName) {
  enterFromHost(*impl_);
  return impl_->evalSource(source, fileName, impl_->user());
}

size_t Engine::evalKeepGoing(std::string_view source, std::string_view fileName,
                             const std::function<void(const Error&)>& onError) {
  enterFromHost(*impl_);
  return impl_->evalSourceKeepGoing(source, fileName, impl_->user(), onError);
}

Value Engine::evalFile(const std::string& path) { return eval(readSource(path), path); }

std::string readSource(const std::string& path) {
  if (path == "-") return readTextStream(stdin, "<stdin>", kMaxSourceBytes);
  return readTextFile(path, kMaxSourceBytes);
}

World joinedWorld() { return World{worldRank(), worldSize()}; }

std::vector<Error> Engine::check(std::string_view source, std::string_view fileName) {
  return impl_->check(source, fileName);
}

Value Engine::call(std::string_view name, std::vector<Value> args) {
  Var* var = impl_->user().resolve(name, false, {});
  if (!var || !var->defined)
    throw Error(ErrorKind::Name, cat("unbound symbol '", name, "'", suggestNames(impl_->user(), name)));
  return call(var->value, std::move(args));
}

Value Engine::call(const Value& function, std::vector<Value> args) {
  enterFromHost(*impl_);
  rejectRecurMarker(function, "the function called");
  for (size_t i = 0; i < args.size(); ++i) rejectRecurMarker(args[i], cat("argument ", i + 1));
  InterruptScope interruptible(&impl_->interruptFlag());
  return impl_->apply(function, args, {});
}

void Engine::define(std::string_view name, Value value) {
  // `if` or `fn` defined as a global would never be called: the form wins. Say so now.
  if (isSpecialForm(name)) fail(ErrorKind::Value, "cannot redefine the special form '", name, "'");
  if (name.empty()) fail(ErrorKind::Value, "define: the name is empty");
  rejectRecurMarker(value, cat("the value defined as '", name, "'"));
  impl_->define(impl_->user(), name, std::move(value));
}

void Engine::defineNative(std::string_view name, std::function<Value(Args)> fn, int minArgs, int maxArgs) {
  if (minArgs < 0 || (maxArgs >= 0 && maxArgs < minArgs))
    fail(ErrorKind::Value, "defineNative ", name, ": the arity ", minArgs, " to ", maxArgs,
         " is impossible (minArgs >= 0; maxArgs >= minArgs, or < 0 for variadic)");
  if (!fn) fail(ErrorKind::Value, "defineNative ", name, ": the function is empty");
  // Whatever the host's function throws reaches the host again as a tsl::Error at the
  // call's position: its own tsl::Errors as they are, anything else as a runtime error.
  // The function may call back into the engine (Engine::call, Engine::eval), and so
  // itself: each call of it is a level of the call-depth limit and checks the native
  // stack, as a closure's call does.
  BuiltinFn adapter = [fn = std::move(fn), name = std::string(name)](CallContext& cx, Args args) -> Value {
    const Evaluator::CallLevel level(cx.evaluator, cx.span);
    if (nativeStackLow()) fail(ErrorKind::Runtime, "stack depth exceeded (the native stack is nearly full)");
    staging::refuseInternal(cx.evaluator, name, args);
    try {
      Value result = fn(args);
      rejectRecurMarker(result, cat("the result of native function ", name));
      return result;
    } catch (const Error&) {
      throw;
    } catch (const ExitRequest&) {
      throw;
    } catch (const std::bad_alloc&) {
      fail(ErrorKind::Runtime, "out of memory in native function ", name);
    } catch (const std::exception& e) {
      fail(ErrorKind::Runtime, "native function ", name, " failed: ", e.what());
    } catch (...) {
      fail(ErrorKind::Runtime, "native function ", name, " threw something that is not an exception");
    }
  };
  define(name, Value(new BuiltinObj(std::string(name), minArgs, maxArgs, std::move(adapter))));
}

void Engine::setArgs(const std::vector<std::string>& args) {
  std::vector<Value> values;
  for (const std::string& arg : args) values.push_back(makeString(arg));
  define("*args*", makeVector(std::move(values)));
}

void Engine::loadDefinitions(std::string_view source, std::string_view fileName) {
  enterFromHost(*impl_);
  impl_->sources().add(std::string(fileName), std::string(source));
  for (const SyntaxPtr& form : readAll(source, fileName)) {
    const std::string head(form->isList() ? form->headName() : std::string_view());
    if (head == "import" || head.starts_with("def")) impl_->evalForm(form, impl_->user());
  }
}

namespace {

/// The global function `name` of the user's namespace (what emit and compile lower).
const Value& globalFunction(Evaluator& evaluator, std::string_view name) {
  Var* var = evaluator.user().resolve(name, false, {});
  if (!var || !var->defined) throw Error(ErrorKind::Name, cat("no function named '", name, "' is defined"));
  if (!var->value.isFunction())
    throw Error(ErrorKind::Type, cat("'", name, "' is ", describeKind(var->value), ", not a function"));
  return var->value;
}

} // namespace

std::string Engine::emit(std::string_view entry, std::string_view signature, std::string_view kind,
                         const EmitOptions& emit) {
  const compiler::BackendEmit* made = nullptr;
  std::string target;
  for (const compiler::BackendInfo* info : compiler::backendInfos())
    for (const compiler::BackendEmit& e : info->emits)
      if (!made && e.name == kind) {
        made = &e;
        target = info->name;
      }
  if (!made && kind != "ir" && kind != "graph") fail(ErrorKind::Value, "emit: no output kind '", kind, "'");
  const Value& fn = globalFunction(*impl_, entry);
  std::vector<std::string> names;
  std::vector<ir::Type> types;
  std::vector<TreeShape> shapes;
  parseSignature(signature, names, types, &shapes);
  if (made && made->inspect) { // an inspection of the compiled function, from the types
    LowerOptions options;
    options.optimize = false; // compiling runs the target's pipeline
    Lowered lowered = lowerForTypes(*impl_, fn, types, names, {}, options, shapes);
    compileLowered(*impl_, lowered, target);
    const std::string text = lowered.executable->inspect(made->name);
    return text.empty() ? made->empty : text;
  }
  LowerOptions options;
  options.optimize = made || !emit.raw;
  options.target = made ? target : emit.target;
  if (!emit.passes.empty()) options.pipeline = &emit.passes;
  const Lowered lowered = lowerForTypes(*impl_, fn, types, names, {}, options, shapes);
  if (kind == "graph") return ir::printDot(*lowered.function);
  if (!made) return ir::printModule(*lowered.module, {emit.locations});
  CompileSwitches switches(*impl_);
  switches.options.aot = true;
  switches.options.cpu = emit.cpu;
  switches.options.backend = targetOptions(*impl_, target);
  return impl_->compiler().emit(*lowered.module, lowered.function->name(), target, made->artifact, switches.options);
}

CompileDebug& Engine::compileDebug() { return impl_->compileDebug(); }

std::string Engine::describe(const Error& error) const { return impl_->sources().render(error); }

std::string Engine::print(const Value& value) const { return printValue(value, true); }

void Engine::evalEach(std::string_view source, std::string_view fileName, const std::function<void(const Value&)>& each) {
  const uint32_t firstLine = impl_->sources().append(std::string(fileName), std::string(source));
  const std::vector<SyntaxPtr> forms = readAll(source, fileName, firstLine);
  for (const SyntaxPtr& form : forms) {
    enterFromHost(*impl_);
    InterruptScope interruptible(&impl_->interruptFlag());
    each(impl_->evalForm(form, impl_->user()));
  }
}

std::string Engine::inspect(std::string_view call, std::string_view inspector) {
  const uint32_t firstLine = impl_->sources().append("<repl>", std::string(call));
  const std::vector<SyntaxPtr> forms = readAll(call, "<repl>", firstLine);
  if (forms.size() != 1 || !forms[0]->isList() || forms[0]->items().empty())
    fail(ErrorKind::Syntax, "expected one call (f arg...), got '", call, "'");
  const Var* builtin = impl_->core().find(inspector);
  if (!builtin || !builtin->value.isFunction()) fail(ErrorKind::Name, "no inspector '", inspector, "'");
  enterFromHost(*impl_);
  InterruptScope interruptible(&impl_->interruptFlag());
  std::vector<Value> args;
  for (const SyntaxPtr& item : forms[0]->items()) args.push_back(impl_->evalForm(item, impl_->user()));
  const Value text = impl_->apply(builtin->value, args, forms[0]->span());
  if (!text.isString()) fail(ErrorKind::Internal, "inspector ", inspector, " returned no text");
  return text.string().text();
}

struct Engine::Function::State {
  Evaluator* evaluator;
  std::string name;
  Lowered lowered;
  std::weak_ptr<const bool> engineAlive;
};

Engine::Function Engine::compile(std::string_view name, std::string_view signature, std::string_view target) {
  const Value& fn = globalFunction(*impl_, name);
  std::vector<std::string> names;
  std::vector<ir::Type> types;
  std::vector<TreeShape> shapes;
  parseSignature(signature, names, types, &shapes);
  for (const ir::Type& t : types)
    if (!t.concrete()) fail(ErrorKind::Value, "compile: the signature's sizes must be numbers, got ", t.str());
  LowerOptions options;
  options.optimize = false; // compiling runs the target's pipeline
  const std::string chosen = target.empty() ? defaultTarget(*impl_) : std::string(target);
  const auto targets = compiler::targetNames();
  if (std::find(targets.begin(), targets.end(), chosen) == targets.end()) {
    std::string known;
    for (const std::string& t : targets) known += cat(known.empty() ? "" : ", ", t);
    fail(ErrorKind::Value, "compile: no target '", chosen, "' (", known, ")");
  }
  Function f;
  f.state_ = std::make_shared<Function::State>(
      Function::State{impl_.get(), std::string(name), lowerForTypes(*impl_, fn, types, names, {}, options, shapes),
                      alive_});
  compileLowered(*impl_, f.state_->lowered, chosen);
  return f;
}

std::vector<Tensor> Engine::Function::operator()(const std::vector<Tensor>& args) const {
  if (!state_) fail(ErrorKind::Value, "calling an empty tsl::Function");
  if (state_->engineAlive.expired())
    fail(ErrorKind::Value, "compiled function ", state_->name, " outlived its engine");
  const Lowered& l = state_->lowered;
  std::vector<Tensor> inputs = args;
  inputs.insert(inputs.end(), l.hidden.begin(), l.hidden.end());
  const auto& params = l.executable->entry().body().arguments();
  if (args.size() + l.hidden.size() != params.size())
    fail(ErrorKind::Type, state_->name, " takes ", params.size() - l.hidden.size(), " tensors, got ", args.size());
  for (size_t i = 0; i < args.size(); ++i) {
    const ir::Type& t = params[i]->type();
    bool ok = args[i].dtype() == t.dtype && args[i].rank() == t.rank();
    for (int d = 0; ok && d < t.rank(); ++d) ok = args[i].shape()[d] == t.dims[static_cast<size_t>(d)].size;
    if (!ok)
      fail(ErrorKind::Type, state_->name, " expects ", t.str(), " for argument ", i + 1, ", got ",
           TensorType::of(args[i]).str());
  }
  enterFromHost(*state_->evaluator);
  InterruptScope interruptible(&state_->evaluator->interruptFlag());
  return l.executable->run(inputs);
}

const std::string& Engine::Function::name() const {
  static const std::string none;
  return state_ ? state_->name : none;
}

std::vector<std::string> Engine::passNames() { return compiler::passNames(); }

namespace {

const Value& argAt(Args args, size_t index, std::string_view fn) {
  if (index >= args.size()) fail(ErrorKind::Type, fn, " expects at least ", index + 1, " arguments, got ", args.size());
  return args[index];
}

} // namespace

const Tensor& tensorArg(Args args, size_t index, std::string_view fn) {
  const Value& v = argAt(args, index, fn);
  if (!v.isTensor()) fail(ErrorKind::Type, fn, " expects a tensor as argument ", index + 1, ", got ", describeKind(v));
  return v.tensor();
}

double numberArg(Args args, size_t index, std::string_view fn) {
  const Tensor& t = tensorArg(args, index, fn);
  if (!t.isScalar()) fail(ErrorKind::Type, fn, " expects a number as argument ", index + 1, ", got ", TensorType::of(t).str());
  return t.toDouble();
}

int64_t intArg(Args args, size_t index, std::string_view fn) {
  const Tensor& t = tensorArg(args, index, fn);
  if (!t.isScalar() || !isInteger(t.dtype()))
    fail(ErrorKind::Type, fn, " expects an integer as argument ", index + 1, ", got ", TensorType::of(t).str());
  return t.toInt();
}

std::string stringArg(Args args, size_t index, std::string_view fn) {
  const Value& v = argAt(args, index, fn);
  if (!v.isString()) fail(ErrorKind::Type, fn, " expects a string as argument ", index + 1, ", got ", describeKind(v));
  return v.string().text();
}

std::string Engine::doc(std::string_view name) const {
  const Var* var = impl_->user().resolve(name, false, {});
  const bool user = var && var->defined && var->ns == &impl_->user();
  // A user's definition first: its parameters and docstring.
  if (user) {
    std::string out = std::string(name);
    if (var->value.isFunction()) {
      out = "(" + out;
      for (const std::string& p : parameterNames(var->value)) out += " " + p;
      out += ")";
    }
    return out + "\n  " + (var->doc.empty() ? "(no docstring)" : var->doc) + "\n";
  }
  // A primitive: its row (or alias) in the operation table.
  for (const CallName& n : callNames())
    if (name == n.name)
      return cat(usageOf(n.name, *n.form), "\n  ", n.doc, *n.example ? cat("\n  e.g. ", n.example) : "", "\n");
  if (var && var->defined) {
    if (!var->doc.empty()) return cat(name, "\n  ", var->doc, "\n");
    if (var->value.isFunction())
      return cat(name, "\n  ", var->value.function().isMacro() ? "a macro" : "a builtin function",
                 " of the core library (docs/language.md describes it)\n");
    return cat(name, "\n  ", printValue(var->value, true), "\n");
  }
  throw Error(ErrorKind::Name, cat("unbound symbol '", name, "'", suggestNames(impl_->user(), name)));
}

std::vector<std::string> Engine::completions(std::string_view prefix) const {
  std::vector<std::string> out;
  auto add = [&](const Namespace& ns, const std::string& qualifier) {
    for (const auto& [name, var] : ns.vars()) {
      const std::string full = qualifier + name;
      // Internal helpers (%try, %concat: what macros expand to) only when asked for.
      if (name.starts_with('%') && !prefix.starts_with('%')) continue;
      if (var->defined && full.compare(0, prefix.size(), prefix) == 0) out.push_back(full);
    }
  };
  add(impl_->user(), "");
  add(impl_->core(), "");
  for (const auto& [alias, ns] : impl_->user().aliases())
    if (alias != "core") add(*ns, alias + "/");
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

void Engine::interrupt() noexcept { impl_->interrupt(); }

void Engine::setStepLimit(uint64_t steps) { impl_->setStepLimit(steps); }

int runOnLargeStack(const std::function<int()>& body, size_t bytes) {
#ifdef TSL_SANITIZE
  // AddressSanitizer stops cleaning stack shadow on stacks over 64 MiB (exceptions then
  // trip false reports), so sanitizer builds stay just under it.
  bytes = std::min(bytes, size_t(60) << 20);
#endif
  struct Job {
    const std::function<int()>& body;
    int result = 1;
    std::exception_ptr error;
  } job{body, 1, nullptr};
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, bytes);
  pthread_t thread;
  // SIGINT must reach the thread running TSL (where the REPL waits for input and the
  // engine polls for interrupts), not this one, which only waits: block it here (the
  // new thread inherits the mask) and unblock it there.
  sigset_t interrupt, saved;
  sigemptyset(&interrupt);
  sigaddset(&interrupt, SIGINT);
  pthread_sigmask(SIG_BLOCK, &interrupt, &saved);
  auto entry = [](void* arg) -> void* {
    sigset_t unblock;
    sigemptyset(&unblock);
    sigaddset(&unblock, SIGINT);
    pthread_sigmask(SIG_UNBLOCK, &unblock, nullptr);
    auto* j = static_cast<Job*>(arg);
    try {
      j->result = j->body();
    } catch (...) {
      j->error = std::current_exception();
    }
    return nullptr;
  };
  const bool started = pthread_create(&thread, &attr, entry, &job) == 0;
  pthread_attr_destroy(&attr);
  if (!started) {
    pthread_sigmask(SIG_SETMASK, &saved, nullptr);
    return body(); // this thread's stack; the stack guard still protects it
  }
  pthread_join(thread, nullptr);
  pthread_sigmask(SIG_SETMASK, &saved, nullptr);
  if (job.error) std::rethrow_exception(job.error);
  return job.result;
}

} // namespace tsl
