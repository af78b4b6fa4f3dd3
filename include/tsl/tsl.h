// tsl/tsl.h — embedding TSL in a C++ program.
//
//   tsl::Engine engine;
//   engine.evalFile("model.tsl");
//   tsl::Value y = engine.call("predict", {params, x});
//
// Engines are independent (no global state is shared between them) and each is used from
// one thread at a time; several engines may run on several threads at once. Every
// failure reaches the host as a tsl::Error with its kind, message and span — bad input
// from the host and exceptions thrown by its native functions included — never as a
// crash. This header and the tsl/ headers it includes are the whole public API
// (docs/embedding.md): Value (tsl/Value.h), Tensor (tsl/Tensor.h), Error and Span
// (tsl/Error.h), CompileDebug.
#pragma once

#include "tsl/CompileDebug.h"
#include "tsl/Display.h"
#include "tsl/Error.h"
#include "tsl/Tensor.h"
#include "tsl/Value.h"

#include <cstdint>
#include <functional>
#include <iosfwd>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace tsl {

class Evaluator;
struct EngineOptions;

class Engine {
public:
  /// maxDepth: nested calls allowed before `stack depth exceeded`; out: where print goes
  /// (nullptr: standard output).
  explicit Engine(int maxDepth = 10000, std::ostream* out = nullptr);
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  /// Runs every form of `source` in the user namespace; returns the last value.
  Value eval(std::string_view source, std::string_view fileName = "<string>");
  /// Runs every form of `source`, going on after a form that fails: each error is given
  /// to `onError` (`tsl run --keep-going`). Returns how many forms failed.
  size_t evalKeepGoing(std::string_view source, std::string_view fileName,
                       const std::function<void(const Error&)>& onError);
  /// Runs a file.
  Value evalFile(const std::string& path);
  /// Reads and expands `source` and reports every error found, without running it.
  std::vector<Error> check(std::string_view source, std::string_view fileName);

  /// Calls the global function `name` (or any callable value).
  Value call(std::string_view name, std::vector<Value> args);
  Value call(const Value& function, std::vector<Value> args);

  /// Defines a global in the user namespace (a value error for a special form's name).
  void define(std::string_view name, Value value);
  /// Defines a global function implemented in C++, taking `minArgs` to `maxArgs`
  /// arguments (`maxArgs` < 0: variadic; an impossible range is a value error). It may
  /// call back into this engine; each of its calls is a level of the call-depth limit.
  void defineNative(std::string_view name, std::function<Value(Args)> fn, int minArgs = 0,
                    int maxArgs = -1);
  /// Binds *args* to the given strings.
  void setArgs(const std::vector<std::string>& args);

  /// Runs only the definitions of `source`: top-level `import` forms and forms whose head
  /// starts with `def` (def, defn, defmacro...). What `tsl compile` loads, so compiling a
  /// training script does not train.
  void loadDefinitions(std::string_view source, std::string_view fileName);

  /// What emit() produces: "ir" (TSL IR, optimised or as lowered), "graph" (Graphviz DOT),
  /// or a kind a target makes (emitKinds(): native code, an object file...).
  struct EmitKind {
    std::string name;
    std::string target; ///< the target that makes it
    bool binary = false; ///< bytes for a file rather than text
    std::string help;    ///< what it is
  };
  static std::vector<EmitKind> emitKinds();
  struct EmitOptions {
    bool raw = false;      ///< IR: as lowered, before the target's passes
    bool locations = true; ///< IR: with loc(...) source positions
    std::string target;    ///< IR, DOT: whose pipeline (empty: the default target)
    std::string cpu;       ///< native code: the CPU it is for (empty: portable x86-64-v3;
                           ///< "native": this machine)
    std::vector<std::string> passes; ///< run these passes (names) instead of the
                                     ///< target's pipeline
  };
  /// The global function `entry` lowered for the parameters of `signature`, written
  /// "x:f32[128,64],y:i64[128]" (names optional; symbolic dimensions such as f32[n,64]
  /// allowed for IR), as `kind` ("ir", "graph" or one of emitKinds()): text, or the bytes
  /// of an object file or library. Native code is ahead-of-time code (self-contained).
  /// An unknown kind is a value error.
  std::string emit(std::string_view entry, std::string_view signature, std::string_view kind, const EmitOptions& options);

  /// The switches every compilation obeys (printing IR after passes, timing them...).
  CompileDebug& compileDebug();

  /// The targets of this build (and those registered by the host), in order of
  /// preference: the first is the default.
  static std::vector<std::string> targets();
  /// A target's statistics as a JSON object — of every call since the engine started (or,
  /// `total` false, of the last call); "{}" for a target that keeps none.
  std::string statistics(std::string_view target, bool total = true);

  /// Flags targets add to the command line (`--NAME=value`): set them in
  /// compileDebug().flags after checkTargetFlag.
  struct TargetFlag {
    std::string name;           ///< without "--"
    bool valueOptional = false; ///< may be given as --NAME alone
    std::string command;        ///< the command it belongs to, or empty for all
    std::string usage, help;    ///< for a help text
  };
  static std::vector<TargetFlag> targetFlags();
  /// The value to keep for flag `name` given `value`, or a tsl::Error in the target's words.
  static std::string checkTargetFlag(std::string_view name, const std::string& value);
  /// Before and after running a program (`tsl run`): the targets whose flags are set
  /// prepare (tracing) and then write what their flags ask for (statistics, traces) —
  /// files atomically, the rest to standard error. An io error if a write fails.
  void startRun();
  void finishRun();

  /// Commands targets add to `tsl` (`tsl NAME ARGS...`).
  struct TargetCommand {
    std::string name, usage, help;
  };
  static std::vector<TargetCommand> targetCommands();
  /// Runs command `name` with its arguments (the flags come from compileDebug().flags);
  /// its exit status. Errors are tsl::Errors (describe() shows them).
  int runTargetCommand(std::string_view name, const std::vector<std::string>& args);

  /// The REPL commands targets add: one shows statistics (a builtin taking no argument,
  /// its map a key a line), one followed by `(f x ...)` applies an inspector (inspect()).
  struct ReplCommand {
    std::string command, builtin, help;
    bool takesCall = false; ///< the command is followed by a call (f x ...)
  };
  static std::vector<ReplCommand> replCommands();

  /// `file:line:col: kind error: message`, the source line and a caret.
  std::string describe(const Error& error) const;
  /// How the REPL shows a value (strings quoted).
  std::string print(const Value& value) const;
  /// Every representation of a value: text/plain (print's text) first, then those the
  /// registered representers add (tsl/Display.h).
  MimeBundle represent(const Value& value) const;
  /// Where `display` and progress bars go (nullptr: as text where print goes).
  void setDisplaySink(std::shared_ptr<DisplaySink> sink);
  /// The documentation of a name, as the REPL's `:doc` prints it: a user definition's
  /// call form and docstring, a primitive's call form and description (from the operation
  /// table), or what kind of builtin it is. A name error for an unknown name.
  std::string doc(std::string_view name) const;
  /// Defined global names starting with `prefix` (for completion).
  std::vector<std::string> completions(std::string_view prefix) const;
  /// Stops the running evaluation with `runtime error: interrupted`. Async-signal-safe.
  void interrupt() noexcept;
  /// Bounds each entry from the host (eval, call, a compiled Function's call...) to
  /// `steps` function calls and loop iterations; past it the evaluation stops with
  /// `runtime error: step limit exceeded`. 0 (the default) sets no limit. For running
  /// untrusted programs, with the call-depth limit of the constructor.
  void setStepLimit(uint64_t steps);

  /// Evaluates `source` form by form, calling `each` with every top-level form's value
  /// (the REPL prints them). Source named like earlier source continues its lines, so a
  /// session's errors point at the line of the session they came from.
  void evalEach(std::string_view source, std::string_view fileName, const std::function<void(const Value&)>& each);
  /// Evaluates the call `(f x ...)` given as text, then applies the builtin `inspector`
  /// (ir, graph, or one a target adds) to f and the arguments: the REPL's :ir and friends.
  std::string inspect(std::string_view call, std::string_view inspector);

  /// The global function `name` compiled for `target` (one of targets(); empty: the
  /// default) and the parameter types of `signature` ("x:f32[128,64],y:i64[128]"):
  /// a callable that takes and returns tensors. It runs while the engine lives; called
  /// after, it is a value error.
  class Function {
  public:
    /// Runs the compiled code; tensors of the signature's dtypes and shapes (a type error
    /// otherwise). The results are the function's tensor leaves, in order.
    std::vector<Tensor> operator()(const std::vector<Tensor>& args) const;
    const std::string& name() const;

  private:
    friend class Engine;
    struct State;
    std::shared_ptr<State> state_;
  };
  Function compile(std::string_view name, std::string_view signature, std::string_view target = {});

  /// The names of the IR passes `tsl compile --pass` accepts.
  static std::vector<std::string> passNames();

private:
  friend struct EngineAccess; // TSL's own test runners (eval/EngineAccess.h)
  std::unique_ptr<Evaluator> impl_;
  std::shared_ptr<const bool> alive_ = std::make_shared<const bool>(true); ///< Functions check it
};

/// A compiled function of an engine (Engine::compile).
using Function = Engine::Function;

/// Typed arguments of a native function (Engine::defineNative): argument `index` as a
/// tensor, a number or a string, or a type error naming `fn` and the position.
const Tensor& tensorArg(Args args, size_t index, std::string_view fn);
double numberArg(Args args, size_t index, std::string_view fn);
int64_t intArg(Args args, size_t index, std::string_view fn);
std::string stringArg(Args args, size_t index, std::string_view fn);

/// Whether `text` ends inside an unfinished form (an open bracket or string): a REPL
/// reads another line before evaluating.
bool isIncomplete(std::string_view text);

/// `kind error: message` for an error with no source to show (Engine::describe renders
/// the line and a caret too).
std::string renderHeadline(const Error& error);

/// Writes a file atomically (a temporary in its folder, synced, renamed over it): an io
/// error, never a half-written file. removePendingTemporaries() deletes the temporaries of
/// writes in progress — for a signal handler about to end the process.
void writeFileAtomically(const std::string& path, std::string_view contents);
void removePendingTemporaries() noexcept;

/// The text of a source file, "-" meaning standard input: at most 64 MiB, from a regular
/// file (a device or FIFO could be endless). An io error (tsl::Error) otherwise.
std::string readSource(const std::string& path);

/// The world of processes a program runs in (docs/distributed.md): this process's rank
/// and how many ranks there are. A process a launcher (mpirun, srun) started joins the
/// others through MPI; any other is a world of one rank, where collectives are identities.
struct World {
  int rank = 0;
  int size = 1;
};
/// Joins the world (initialising MPI under a launcher; joining again changes nothing) and
/// returns it. A runtime error (tsl::Error) when a launcher started this process as one of
/// several ranks but the build has no MPI.
World joinedWorld();
/// Whether a launcher started this process as a rank of a world (without joining it).
bool worldLaunched();
/// Whether this build can run programs as many ranks (it was built with MPI).
bool worldHasMpi();
/// Flushes standard output and error, then ends every rank of the world with `status`
/// (MPI_Abort), or this process alone in a world of one rank.
[[noreturn]] void abortWorld(int status);

/// Runs `body` on a new thread whose stack holds `bytes` (1 GiB by default, reserved
/// not committed) and returns its result: hosts call the engine through this when deep
/// recursion should meet the call-depth limit rather than a small native stack.
int runOnLargeStack(const std::function<int()>& body, size_t bytes = size_t(1) << 30);

} // namespace tsl
