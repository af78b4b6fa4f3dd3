// compiler/Backend.h — the seam between the compiler and its targets.
//
// A Backend is a target (`:interp`, `:cpu`, `:tc`, or one a host or a test adds): it has
// a name, the pipeline of passes it runs on a module, a lowering table saying how it runs
// each operation, and it compiles an optimised module into an Executable that runs and
// can be inspected. Each target registers a BackendInfo (registerBackend): how to make its
// backend and what it adds to the language and the command line — its options (jit
// keywords, command-line flags, parsed and checked by the target), its statistics, its
// builtins and REPL commands, its `tsl` commands. Everything above compiler/ (eval/,
// repl/, the public API) reads these declarations and names no target. The evaluator
// never sees a backend directly: it hands modules to compiler::Compiler
// (compiler/Compiler.h), which owns an engine's backends and their compiled code.
#pragma once

#include "ir/IR.h"
#include "ir/Pass.h"
#include "runtime/TimelineSvg.h"

#include <functional>
#include <iosfwd>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace tsl::compiler {

/// How a backend runs one operation (its lowering table's entry for the operation).
enum class Lowering : uint8_t {
  Native,        ///< generated code (or, on :interp, the operation's eager kernel)
  RuntimeKernel, ///< a call of a typed runtime function through the C ABI
  GenericKernel, ///< the operation's eager kernel called through the generic C ABI
                 ///< (--print-fallbacks lists these; ahead-of-time libraries cannot use them)
};
const char* loweringName(Lowering lowering);

/// The values of a target's options (BackendOption), by option name, as the option's
/// parse function returned them.
using OptionValues = std::map<std::string, std::string, std::less<>>;

/// What a compilation is asked for beyond the module.
struct CompileOptions {
  int optLevel = 2;         ///< 0 to 3: the optimisation level of generated code
  std::string cpu;          ///< the CPU to generate code for; empty: this machine's
  bool aot = false;         ///< ahead of time: position-independent, self-contained code
                            ///< (an operation without generated code is an error)
  ir::PassContext* context = nullptr; ///< printing, verification and timings (may be null)
  std::string layoutTarget;           ///< whose layout preferences the layout passes
                                      ///< follow (compiler/passes/Layouts.h); empty: the
                                      ///< compiling backend's
  std::vector<bool> donated;          ///< the entry's parameters (in order) the caller
                                      ///< donates: results may be written over them
                                      ///< (jit :donate; docs/cpu-backend.md, "Memory")
  std::ostream* fallbacks = nullptr;  ///< if set, each compilation lists there the
                                      ///< operations it runs on an eager kernel
  std::vector<Tensor> constants;      ///< the values of the entry's last parameters, fixed
                                      ///< for this compilation (captured tensors passed as
                                      ///< hidden parameters): :tc converts their layouts once
  int64_t bucketBytes = ir::kDefaultBucketBytes; ///< bucket-all-reduce's bucket size in
                                      ///< bytes, 0 for none (jit :bucket-bytes, --bucket-bytes)
  OptionValues backend;               ///< the compiling target's options (jit keywords and
                                      ///< command-line flags it declares), by name
};

/// What Backend::emit produces.
enum class Artifact : uint8_t {
  Llvm,    ///< the optimised LLVM IR, as text
  Asm,     ///< assembly text
  Object,  ///< an ELF object file
  Library, ///< a shared library: each entry a C function over buffers (compiler/cpu/Aot.h)
  Header,  ///< the library's C header
};
const char* artifactName(Artifact artifact);

/// What a call of an executable uses besides its arguments: its scratch memory (the
/// arena, reused by every call after the first) and its results (allocated per call,
/// except what is written over donated arguments).
struct MemoryUse {
  int64_t arenaBytes = 0;
  int64_t resultBytes = 0;
  int64_t donatedBytes = 0; ///< of resultBytes, written over donated arguments
  /// Over the calls so far: results written over a donated argument, and donated
  /// arguments still reachable elsewhere (a literal, a global, a local read later), so
  /// not written over.
  int64_t donations = 0, donationsDeclined = 0;
  /// The most a call holds at once beyond its arguments.
  int64_t peakBytes() const { return arenaBytes + resultBytes - donatedBytes; }
};

/// Compiled code for one function of a module.
class Executable {
public:
  virtual ~Executable() = default;
  /// The optimised module it was compiled from, and the function it runs.
  virtual const ir::Module& module() const = 0;
  virtual const ir::Function& entry() const = 0;
  /// Runs the function on `inputs` (one per parameter, of the parameter types) and
  /// returns one tensor per result. An error raised by the program is a tsl::Error at
  /// the span of the operation that raised it; Ctrl-C (the calling thread's interrupt
  /// flag, runtime/Interrupt.h) stops a long run with `runtime error: interrupted`.
  /// `heldAlone` (empty, or one per input) marks inputs nothing but this call can reach
  /// (Tensor::heldAlone, and no container or variable of the caller's): a result may be
  /// written over such an input's memory when the entry donates its parameter (jit
  /// :donate). Without it nothing is written over an input.
  virtual std::vector<Tensor> run(std::span<const Tensor> inputs, std::span<const uint8_t> heldAlone) = 0;
  std::vector<Tensor> run(std::span<const Tensor> inputs) { return run(inputs, {}); }
  /// A text form of the compiled code for people: "llvm" (the optimised LLVM IR), "asm",
  /// "fallbacks" (the operations run through a runtime kernel), "tc" (the tensor-core
  /// programs it has run). Empty when the backend has no such form.
  virtual std::string inspect(std::string_view what) const;
  /// Its memory, from the entry's memory plan.
  virtual MemoryUse memory() const;
};

/// A statistic a backend reports: a number, a text, a list or a map of statistics
/// (`(tc-stats)` is a map of them; TSL sees maps with keyword keys).
struct Stat {
  enum class Kind : uint8_t { Int, Real, Text, List, Map };
  Kind kind = Kind::Int;
  int64_t integer = 0;
  double real = 0;
  std::string text;
  std::vector<Stat> items;
  std::vector<std::string> keys; ///< Map: the keys, in kebab-case, with their values in `values`
  std::vector<Stat> values;      ///< (two vectors: a pair holding Stat cannot be a member of Stat)
  static Stat of(int64_t n) { Stat s; s.integer = n; return s; }
  static Stat ofReal(double x) { Stat s; s.kind = Kind::Real; s.real = x; return s; }
  static Stat ofText(std::string t) { Stat s; s.kind = Kind::Text; s.text = std::move(t); return s; }
  static Stat list(std::vector<Stat> items) { Stat s; s.kind = Kind::List; s.items = std::move(items); return s; }
  static Stat map(std::vector<std::pair<std::string, Stat>> entries);
  /// As JSON (keys in snake_case).
  std::string json() const;
};

inline Stat Stat::map(std::vector<std::pair<std::string, Stat>> entries) {
  Stat s;
  s.kind = Kind::Map;
  for (auto& [key, value] : entries) {
    s.keys.push_back(std::move(key));
    s.values.push_back(std::move(value));
  }
  return s;
}

/// A file a backend writes, or text for standard error (empty path), when asked by a flag.
struct Output {
  std::string path;
  std::string text;
};

/// The flags of the command line a target declared, in the order given (a flag may be
/// given more than once), without the leading "--".
using FlagValues = std::vector<std::pair<std::string, std::string>>;

class Backend {
public:
  virtual ~Backend() = default;
  /// The target's name, as `jit`'s :target keyword spells it ("interp", "cpu").
  virtual const char* name() const = 0;
  /// The passes run on a module before it is compiled, in order.
  virtual const std::vector<std::string>& pipeline() const = 0;
  /// The layout preferences its pipeline's layout passes follow (Layouts.h: "cpu", "tc",
  /// "none").
  virtual const char* layoutTarget() const { return "none"; }
  /// How it runs operation `kind` (the lowering table; a test checks it covers all).
  virtual Lowering lowering(OpKind kind) const = 0;
  /// Compiles `entry` of `module`, which has been through pipeline().
  virtual std::unique_ptr<Executable> compile(std::shared_ptr<const ir::Module> module, const ir::Function& entry,
                                              const CompileOptions& options) = 0;
  /// The code of `entry` as `artifact` (text, or the bytes of a file); a value error if
  /// this target makes no such thing.
  virtual std::string emit(const ir::Module& module, const ir::Function& entry, Artifact artifact,
                           const CompileOptions& options);
  /// What of `options` decides its code beyond the module, the entry and its options
  /// (CompileOptions::backend, which the cache key holds already): :cpu's CPU and level.
  virtual std::string cacheKey(const CompileOptions& options) const;
  /// Its statistics: of the last call (`total` false) or of every call so far; an empty
  /// map when it keeps none.
  virtual Stat statistics(bool total);
  /// The same as JSON, for files and programs (`tsl run --tc-stats`).
  virtual std::string statisticsJson(bool total);
  /// What its last call ran where and when, as a timeline (lanes: the units that did
  /// work); an empty timeline when it keeps none.
  virtual Timeline trace();
  /// Called before a `tsl run` with the flags of this target given on the command line,
  /// and after it (also when the program failed): what to write where.
  virtual void beforeRun(const FlagValues& flags);
  virtual std::vector<Output> afterRun(const FlagValues& flags);
};

/// A value given to an option: a keyword's name (`keyword`), else the text of a string
/// or of a flag's value (`text`); `printed` is how the user wrote it, for messages.
struct OptionInput {
  bool isKeyword = false;
  std::string keyword;
  std::string text;
  std::string printed;
};

/// An option a target takes: `jit :NAME value` and/or `--NAME=value` on the command line.
/// Its value reaches compilation as CompileOptions::backend[NAME].
struct BackendOption {
  std::string name;          ///< kebab-case, without ':' or "--"
  bool jitKeyword = false;   ///< `jit` takes :NAME value (for this target only)
  bool flag = false;         ///< `tsl` takes --NAME=value (or --NAME value)
  bool valueOptional = false; ///< a flag given as --NAME alone (the value then empty)
  bool compiles = true;      ///< the value decides compilation (else only beforeRun/afterRun)
  std::string command;       ///< the `tsl` command it belongs to (listed under it), or empty
  std::string usage;         ///< the help line's left column, e.g. "--tc-device=D"
  std::string help;          ///< what it does, for `tsl --help` and the docs
  /// Its value from what the user gave, or a tsl::Error (kind value) in the target's
  /// words; `who` is "jit" or "tsl". Null: any text, as given.
  std::function<std::string(const OptionInput& input, const std::string& who)> parse;
};

/// A builtin a target adds to the language, of one of the kinds the evaluator knows.
struct BackendBuiltin {
  enum class Kind : uint8_t {
    Statistics, ///< (NAME) / (NAME :last) / (NAME :total): statistics() as a map
    Inspect,    ///< (NAME f x...): f compiled for the target at x..., Executable::inspect(what)
    Emit,       ///< (NAME f x...): the target's emit(artifact) for f at x...
    Trace,      ///< (NAME): trace() of the last call, a trace value drawn as a timeline
  };
  std::string name;
  Kind kind = Kind::Statistics;
  std::string what;                  ///< Inspect: the kind of inspection
  Artifact artifact = Artifact::Llvm; ///< Emit: the artifact
  std::string empty;                 ///< Inspect: the text when inspect() gives none
  std::string doc;                   ///< its :doc
  std::string replCommand;           ///< the REPL's command for it (":tc-stats"), or empty
  std::string replHelp;              ///< the REPL's help line for it
};

/// What `tsl compile --emit=NAME` makes on this target: an artifact or an inspection.
struct BackendEmit {
  std::string name;
  bool inspect = false; ///< Executable::inspect(name) of the compiled function
  Artifact artifact = Artifact::Llvm;
  bool binary = false;  ///< bytes for a file (-o is needed)
  std::string empty;    ///< inspect: the text when inspect() gives none
  std::string help;     ///< what it is, for `tsl --help`
};

/// A command of `tsl` a target adds (`tsl tc-run FILE`).
struct BackendCommand {
  struct Context {
    std::vector<std::string> args;                ///< after the command's name
    FlagValues flags;                             ///< this target's flags
    std::ostream* out = nullptr;                  ///< standard output
    std::function<void(std::string_view name, std::string text)> addSource; ///< for error carets
    std::function<void(const std::string& path, std::string_view bytes)> writeFile; ///< atomically
    std::function<std::string(const std::string& path)> readSource; ///< a file, "-": standard input
  };
  std::string name;
  std::string usage; ///< "tsl tc-run FILE [...]"
  std::string help;  ///< for `tsl --help`
  /// Its exit status; errors as tsl::Error. A wrong number of arguments: usage, status 2.
  std::function<int(const Context&)> run;
};

/// A target: how to make its backend and what it adds.
struct BackendInfo {
  std::string name;     ///< the target's name (jit :target :NAME, tsl --target=NAME)
  int preference = 100; ///< targets are listed by it, lowest first: the first is the default
  std::function<std::unique_ptr<Backend>()> make;
  std::vector<BackendOption> options;
  std::vector<BackendBuiltin> builtins;
  std::vector<BackendEmit> emits;
  std::vector<BackendCommand> commands;
  std::string layouts; ///< the layout preferences it gives `jit :layouts :NAME`, or empty
};

/// Adds a target (a name already registered is replaced). The built-in targets register
/// themselves on first use of the registry; a test or a host may register one any time
/// before its first engine: a static object calling this is enough.
void registerBackend(BackendInfo info);
/// Registers an object's target at static initialisation.
struct BackendRegistration {
  explicit BackendRegistration(BackendInfo info) { registerBackend(std::move(info)); }
};
/// Every target, in order of preference.
std::vector<const BackendInfo*> backendInfos();
const BackendInfo* findBackendInfo(std::string_view name);
/// Makes the backend named `name` (one per engine: a backend may own a JIT); nullptr for
/// a name this build has no backend for.
std::unique_ptr<Backend> makeBackend(std::string_view name);
/// The targets this build has, in order of preference (":cpu" first in a full build).
std::vector<std::string> targetNames();
/// The layout preferences `jit :layouts` takes: those the targets give, and "none".
std::vector<std::string> layoutNames();

/// Adds compiler/'s passes (fuse, plan-memory, ...) to ir/'s registry; idempotent.
/// Everything that lists or creates passes by name calls it first.
void registerPasses();
/// Every registered pass name, compiler/'s included.
std::vector<std::string> passNames();

} // namespace tsl::compiler
