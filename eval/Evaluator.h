// eval/Evaluator.h — the engine's internals: namespaces, modules, calls, limits.
//
// One Evaluator is one independent TSL world (the public tsl::Engine owns one). It reads
// source into Syntax, expands macros into core forms (Expander), compiles those into
// nodes (Analyzer) and runs them. It also enforces the limits of docs/language.md §8: the call
// depth (10 000 by default), the native stack, and interruption (Ctrl-C).
#pragma once

#include "eval/Namespace.h"
#include "eval/Nodes.h"
#include "parser/Diagnostics.h"
#include "tsl/Display.h"

#include <atomic>
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace tsl {

class Tracer;
struct CompileDebug;
namespace compiler {
class Compiler;
}

/// The largest source file (or module, or standard input) TSL reads: 64 MiB.
constexpr size_t kMaxSourceBytes = size_t(64) << 20;
/// The largest file `slurp` reads: 1 GiB.
constexpr size_t kMaxSlurpBytes = size_t(1) << 30;

struct EngineOptions {
  /// Deepest nesting of function calls before `runtime error: stack depth exceeded`.
  int maxDepth = 10000;
  /// Where print and println write; nullptr means standard output.
  std::ostream* out = nullptr;
  /// Load stdlib/core (the core macros) at start.
  bool loadCore = true;
};

class Evaluator {
public:
  explicit Evaluator(EngineOptions options);
  ~Evaluator();
  Evaluator(const Evaluator&) = delete;
  Evaluator& operator=(const Evaluator&) = delete;

  // ---- Running code ----

  /// Reads, expands, analyses and runs every form of `text` in namespace `ns`; returns
  /// the value of the last form. Remembers the text for error rendering.
  Value evalSource(std::string_view text, std::string_view file, Namespace& ns);
  /// As evalSource, but a form that fails is given to `onError` and the next form runs
  /// (`tsl run --keep-going`); a reader error still stops before anything runs. Returns
  /// how many forms failed.
  size_t evalSourceKeepGoing(std::string_view text, std::string_view file, Namespace& ns,
                             const std::function<void(const Error&)>& onError);
  /// Reads a file's text and gives `each` its forms in order, with the file current.
  void evalEachForm(std::string_view text, std::string_view file, const std::function<void(const SyntaxPtr&)>& each);
  /// Runs forms already read (the REPL reads its own input) in `ns`; returns the last value.
  Value evalForms(const std::vector<SyntaxPtr>& forms, Namespace& ns);
  /// Expands, analyses and runs one form.
  Value evalForm(const SyntaxPtr& form, Namespace& ns);
  /// Reads, expands and analyses every form without running anything but macro
  /// definitions and imports; returns every error found.
  std::vector<Error> check(std::string_view text, std::string_view file);

  /// Calls anything callable: functions, keywords and maps (lookup), vectors (index).
  Value apply(const Value& callee, Args args, const Span& span);
  Value callClosure(const ClosureObj& closure, Args args, const Span& span);

  // ---- Namespaces and modules ----

  Namespace& core() { return *core_; }
  Namespace& user() { return *user_; }
  /// Loads a module once ("stdlib/nn" from the embedded library, anything else as a
  /// file relative to `fromFile`'s folder) and returns its namespace.
  Namespace& importModule(std::string_view path, std::string_view fromFile, const Span& span);
  /// Defines a builtin in core.
  BuiltinObj& defineBuiltin(std::string name, int minArgs, int maxArgs, BuiltinFn fn);
  /// Defines `name` in `ns` to `value`.
  void define(Namespace& ns, std::string_view name, Value value);

  // ---- Limits ----

  /// Counts one call level; throws at the depth limit, when the native stack runs low,
  /// or when an interrupt was requested.
  void enterCall(const Span& span) {
    if (++depth_ > options_.maxDepth || interrupted_.load(std::memory_order_relaxed) || --stepsLeft_ < 0) {
      --depth_;
      callLimitHit(span);
    }
  }
  void leaveCall() { --depth_; }
  /// One call level for as long as it lives (a closure's or a native function's call).
  class CallLevel {
  public:
    CallLevel(Evaluator& evaluator, const Span& span) : evaluator_(evaluator) { evaluator.enterCall(span); }
    ~CallLevel() { evaluator_.leaveCall(); }
    CallLevel(const CallLevel&) = delete;
    CallLevel& operator=(const CallLevel&) = delete;

  private:
    Evaluator& evaluator_;
  };
  /// Throws `runtime error: interrupted` if Ctrl-C was pressed, and counts a step of the
  /// step limit. Cheap; called by loops.
  void poll(const Span& span) {
    if (interrupted_.load(std::memory_order_relaxed) || --stepsLeft_ < 0) callLimitHit(span);
  }
  /// Calls and loop iterations allowed from the host's next entry (0: no limit); past it,
  /// `runtime error: step limit exceeded`. The count restarts at every entry from the host.
  void setStepLimit(uint64_t steps) {
    maxSteps_ = steps == 0 || steps > uint64_t(INT64_MAX) ? 0 : static_cast<int64_t>(steps);
    resetSteps();
  }
  void resetSteps() { stepsLeft_ = maxSteps_ == 0 ? INT64_MAX : maxSteps_; }
  /// Requests an interrupt; async-signal-safe.
  void interrupt() noexcept { interrupted_.store(true, std::memory_order_relaxed); }
  void clearInterrupt() { interrupted_.store(false, std::memory_order_relaxed); }
  /// The flag interrupt() sets, for kernels to poll (runtime/Interrupt.h).
  const std::atomic<bool>& interruptFlag() const { return interrupted_; }
  int depth() const { return depth_; }
  void setMaxDepth(int depth) { options_.maxDepth = depth; }
  int maxDepth() const { return options_.maxDepth; }

  // ---- Services for builtins ----

  std::ostream& out();
  /// Where explicit rich output goes (tsl/Display.h); nullptr: as text to out().
  DisplaySink* displaySink() const { return displaySink_.get(); }
  const std::shared_ptr<DisplaySink>& sharedDisplaySink() const { return displaySink_; }
  void setDisplaySink(std::shared_ptr<DisplaySink> sink) { displaySink_ = std::move(sink); }
  /// Shows `value` through the display sink, or prints its text to out() without one.
  void show(const Value& value, const std::string& id = {}, bool update = false);
  SourceManager& sources() { return sources_; }
  /// A fresh symbol name for macros ("x__12").
  std::string gensym(std::string_view prefix);
  /// The file whose top-level forms are running (for relative imports and paths).
  const std::string& currentFile() const { return currentFile_; }
  Namespace& currentNamespace() { return *currentNs_; }

  /// Called after every call of a closure made from top level returns (the differential
  /// test of jit compares each with its compiled version).
  using CallObserver = std::function<void(const Value& fn, Args args, const Value& result, const Span& span)>;
  void setCallObserver(CallObserver observer) { callObserver_ = std::move(observer); }

  /// Compiled versions of derivative functions, by function, kind and :argnums (the
  /// function is held so the key's address stays its own) (eval/Differentiate.cpp).
  using DerivativeVersions = std::map<std::string, std::pair<Value, std::shared_ptr<BuiltinState>>>;
  DerivativeVersions& derivativeVersions() { return derivativeVersions_; }

  /// The debugging switches every compilation obeys (eval/Compile.h).
  CompileDebug& compileDebug() { return *compileDebug_; }
  /// The engine's compiler: its backends and compiled code (compiler/Compiler.h).
  compiler::Compiler& compiler() { return *compiler_; }

  /// The tracer lowering the function being compiled, if any (eval/Tracer.h).
  Tracer* tracer() const { return tracer_; }
  void setTracer(Tracer* tracer) { tracer_ = tracer; }
  /// Whether a jit call is being run eagerly to find the error eager code raises
  /// (JitState::callWith): what has a meaning only under a tracer then gives up quietly.
  bool replaying() const { return replaying_; }
  void setReplaying(bool on) { replaying_ = on; }

  /// The macro calls being expanded, innermost last (for `syntax-error` to point at the
  /// user's form).
  std::vector<SyntaxPtr>& macroCalls() { return macroCalls_; }
  /// The macro calls whose expansions are being expanded in turn, outermost first: a
  /// macro whose expansion calls it again nests one level deeper each time.
  std::vector<SyntaxPtr>& expansions() { return expansions_; }

  /// Expands a form completely (for `macroexpand` and `tsl check`).
  SyntaxPtr expand(const SyntaxPtr& form, Namespace& ns);
  /// Expands the head macro of a form once; `expanded` tells whether anything happened.
  SyntaxPtr expandOnce(const SyntaxPtr& form, Namespace& ns, bool& expanded);

private:
  [[noreturn]] void callLimitHit(const Span& span);
  Value run(const NodePtr& node, int frameSize);

  EngineOptions options_;
  std::unique_ptr<Namespace> core_;
  std::unique_ptr<Namespace> user_;
  std::map<std::string, std::unique_ptr<Namespace>> modules_;
  std::vector<std::string> loading_; ///< modules being loaded, to report cycles
  std::vector<SyntaxPtr> macroCalls_;
  std::vector<SyntaxPtr> expansions_;
  Tracer* tracer_ = nullptr;
  bool replaying_ = false;
  std::unique_ptr<CompileDebug> compileDebug_;
  std::unique_ptr<compiler::Compiler> compiler_;
  CallObserver callObserver_;
  DerivativeVersions derivativeVersions_;
  SourceManager sources_;
  std::shared_ptr<DisplaySink> displaySink_;
  std::atomic<bool> interrupted_{false};
  int depth_ = 0;
  int64_t maxSteps_ = 0;           ///< 0: no step limit
  int64_t stepsLeft_ = INT64_MAX;  ///< counts down from maxSteps_ (or never reaches 0)
  int64_t gensymCounter_ = 0;
  std::string currentFile_ = "<repl>";
  Namespace* currentNs_ = nullptr;
};

/// Registers every builtin (numbers, collections, strings, control) in `evaluator`'s core.
void registerBuiltins(Evaluator& evaluator);

} // namespace tsl
