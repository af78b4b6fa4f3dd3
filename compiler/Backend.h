// compiler/Backend.h — the seam between the compiler and its targets.
//
// A Backend is a target (`:interp`, `:cpu`; `:tc` later): it has a name, the pipeline of
// passes it runs on a module, a lowering table saying how it runs each operation, and it
// compiles an optimised module into an Executable that runs and can be inspected. The
// evaluator never sees a backend directly: it hands modules to compiler::Compiler
// (compiler/Compiler.h), which owns an engine's backends and their compiled code.
#pragma once

#include "ir/IR.h"
#include "ir/Pass.h"

#include <iosfwd>
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

/// What a compilation is asked for beyond the module.
struct CompileOptions {
  int optLevel = 2;         ///< 0 to 3: LLVM's optimisation level on :cpu
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
  std::string tcDevice;               ///< :tc: a device preset or description file (empty: a2)
  std::string tcDtype;                ///< :tc: what contractions round their inputs to
                                      ///< ("f16", the default, or "bf16": jit :tc-dtype)
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
};

/// Makes the backend named `name` (one per engine: a backend may own a JIT); nullptr for
/// a name this build has no backend for.
std::unique_ptr<Backend> makeBackend(std::string_view name);
/// The targets this build has, in order of preference ("cpu", "interp", "tc").
const std::vector<std::string>& targetNames();

/// Adds compiler/'s passes (fuse, plan-memory, ...) to ir/'s registry; idempotent.
/// Everything that lists or creates passes by name calls it first.
void registerPasses();
/// Every registered pass name, compiler/'s included.
std::vector<std::string> passNames();

} // namespace tsl::compiler
