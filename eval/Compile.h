// eval/Compile.h — from a TSL function and a signature to optimised IR, and running it.
//
// lowerFunction() stages a function (eval/Tracer.h) on traced stand-ins for its
// arguments: every tensor leaf of every argument becomes a parameter of the IR function,
// everything else (numbers used as attributes, keywords, tree structure) is part of the
// signature and fixed at compile time. The result tree is flattened to the function's
// returned values and rebuilt after each run.
//
// A Signature is what a compiled version depends on: the tree structure of the arguments,
// the static leaves by value, and the dtype and shape of every tensor leaf. `jit` keeps
// one compiled version per signature (JitState), at most kDefaultMaxVersions of them (or
// `:max-versions`), evicting the least recently used: a function called with ever new
// shapes holds bounded memory, and an evicted signature simply compiles again.
#pragma once

#include "compiler/Backend.h"
#include "eval/Tracer.h"
#include "ir/Pass.h"
#include "tsl/CompileDebug.h"

#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace tsl {

/// Which tensor leaves of the arguments are fixed by value rather than traced. Lowering
/// starts with None; when it fails for want of a value (a shape, an index, a count), it
/// tries again with Numbers, then with SmallInts.
enum class FixLevel : uint8_t {
  None,
  Numbers,   ///< bare numbers (weak literals: `3`, `0.5`)
  SmallInts, ///< those and integer tensors of at most 16 elements (`[4 8 3]`, a shape)
};

/// What a compiled version of a function depends on.
struct Signature {
  std::vector<TreeShape> args;     ///< one per argument
  std::vector<ir::Type> leaves;    ///< the type of every tensor leaf, in order
  std::vector<bool> weak;          ///< whether that leaf is a weak literal
  std::vector<std::string> labels; ///< the leaf's name for messages ("x", "p.w")

  /// Reads the signature of a call's arguments; `names` are the parameter names (may be
  /// shorter than args, for messages and IR value names). Arguments marked in `staticArgs`
  /// are fixed whole, by value; so are the leaves `fix` selects.
  static Signature of(Args args, const std::vector<std::string>& names, const std::vector<bool>& staticArgs = {},
                      FixLevel fix = FixLevel::None);
  /// The tensors a call passes for the leaves of this signature, in order.
  void collectLeaves(Args args, std::vector<Tensor>& out) const;
  bool operator==(const Signature& other) const;
  /// "(f32[2,3], {:w f32[3]}, 5)".
  std::string str() const;
  /// Why `other` needs another version than this one ("argument x: f32[4,3], not f32[2,3]").
  std::string difference(const Signature& other) const;
};

/// A function lowered for one signature.
struct Lowered {
  std::unique_ptr<ir::Module> module; ///< as lowered, or optimised (null once compiled)
  ir::Function* function = nullptr;   ///< the entry, in `module` or the executable's module
  Signature signature;
  std::vector<Tensor> hidden;  ///< large captured tensors, passed after the arguments
  TreeShape result;            ///< the result tree with its tensor leaves taken out
  std::vector<bool> weakResult; ///< result leaves that are weak literals in eager code
  std::string effect;           ///< an effectful builtin lowering called (it ran once), or empty
  std::shared_ptr<compiler::Executable> executable; ///< set by compileLowered

  /// Runs the compiled function on the tensor leaves of `args` (of `signature`).
  Value run(Evaluator& evaluator, Args args, const Span& span) const;
};

struct LowerOptions {
  bool optimize = true;                 ///< run the target's pipeline
  std::string target;                   ///< whose pipeline; empty: the default target
  const std::vector<std::string>* pipeline = nullptr; ///< instead of the target's one
  std::vector<bool> staticArgs;         ///< arguments fixed by value (jit :static)
  std::string layouts;                  ///< whose layout preferences (ir :layouts :NAME);
                                        ///< empty: the target's
  FixLevel fix = FixLevel::None;        ///< the level lowering starts at
};

/// The target `jit` and `ir` use when none is named: the engine's (CompileDebug::target,
/// `tsl --target=T`), else the registry's first.
std::string defaultTarget(const Evaluator& evaluator);

/// The options a compilation for `target` gets: the target's flags set on the engine
/// (CompileDebug::flags) that decide compilation, then `jitOptions` over them.
compiler::OptionValues targetOptions(const Evaluator& evaluator, const std::string& target,
                                     const compiler::OptionValues& jitOptions = {});

/// The names of a closure's parameters ("x", "p"), from its source; empty for builtins.
std::vector<std::string> parameterNames(const Value& fn);

/// Lowers `fn` applied to arguments of `args`'s signature (the tensors' values are not
/// used, only their types; static arguments' values are).
Lowered lowerFunction(Evaluator& evaluator, const Value& fn, Args args, const Span& span, const LowerOptions& options = {});

/// Lowers `fn` for parameters of the given types (symbolic dimensions allowed), as
/// `tsl compile --sig` asks.
Lowered lowerForTypes(Evaluator& evaluator, const Value& fn, const std::vector<ir::Type>& types,
                      const std::vector<std::string>& names, const Span& span, const LowerOptions& options = {},
                      const std::vector<TreeShape>& shapes = {});

/// The engine's debugging switches as a compilation's options; reports pass timings when
/// it goes, if asked to.
class CompileSwitches {
public:
  explicit CompileSwitches(Evaluator& evaluator);
  ~CompileSwitches();
  CompileSwitches(const CompileSwitches&) = delete;
  CompileSwitches& operator=(const CompileSwitches&) = delete;
  ir::PassContext context;
  compiler::CompileOptions options;

private:
  const CompileDebug& debug_;
};

/// Runs `target`'s pipeline on the lowered (unoptimised) module and compiles its entry;
/// the executable then holds the module.
/// `layouts` names other layout preferences than the target's (jit :layouts :NAME).
/// `donated` marks the entry's parameters whose memory results may take (jit :donate).
/// `jitOptions` are the target's own options given to jit (`jit :NAME value`).
/// `bucketBytes` is bucket-all-reduce's bucket size (jit :bucket-bytes); negative: the
/// engine's (CompileDebug::bucketBytes, `tsl --bucket-bytes`).
void compileLowered(Evaluator& evaluator, Lowered& lowered, const std::string& target, const std::string& layouts = {},
                    const std::vector<bool>& donated = {}, const compiler::OptionValues& jitOptions = {},
                    int64_t bucketBytes = -1);

/// Parses "x:f32[128,64],y:i64[128]" (names optional: "f32[2],i64") into names and types.
/// Spaces may surround the punctuation ("x: f32[2, 3]") but not split a name, dtype or
/// size; a malformed item is a value error naming it.
///
/// With `shapes`, an item may be a tree of types — `p:{:w f32[784,10] :b f32[10]}`, a map
/// of keyword keys, or `[f32[2] f32[3]]`, a vector, nested as needed — and `shapes` gets
/// one TreeShape per argument (a leaf for a plain tensor); `names` one name per argument
/// and `types` every leaf's type, flattened in the order written (the order of the
/// compiled function's parameters: "p.w", "p.b", then "x"). Without it a tree is a value
/// error.
void parseSignature(std::string_view text, std::vector<std::string>& names, std::vector<ir::Type>& types,
                    std::vector<TreeShape>* shapes = nullptr);

/// How many compiled versions a jit function keeps unless `:max-versions` says otherwise.
constexpr size_t kDefaultMaxVersions = 64;

/// The compiled versions of one `jit` function.
class JitState final : public BuiltinState {
public:
  JitState(Value fn, std::string target, std::vector<bool> staticArgs, std::string layouts = {},
           std::vector<bool> donateArgs = {}, compiler::OptionValues options = {})
      : fn_(std::move(fn)), target_(std::move(target)), staticArgs_(std::move(staticArgs)), layouts_(std::move(layouts)),
        donateArgs_(std::move(donateArgs)), options_(std::move(options)) {}
  /// Versions of functions given at each call (callWith): a derivative function's compiled
  /// versions, shared by every derivative builtin made for the same function.
  explicit JitState(const Evaluator& evaluator) : target_(defaultTarget(evaluator)) {}
  const Value& function() const { return fn_; }
  const std::string& target() const { return target_; }
  /// Finds or compiles the version for `args` and runs it.
  Value call(Evaluator& evaluator, Args args, const Span& span) { return callWith(evaluator, fn_, args, span); }
  /// The same, lowering `fn` when a version must be compiled.
  Value callWith(Evaluator& evaluator, const Value& fn, Args args, const Span& span);
  /// The version of `fn` for `args`, compiling it if needed.
  const Lowered& version(Evaluator& evaluator, const Value& fn, Args args, const Span& span);
  /// What the last compilation was for, and why it was needed.
  std::string explain() const;
  /// The versions held now (at most maxVersions()), and how many were compiled and evicted.
  size_t versions() const { return versions_.size(); }
  size_t compiled() const { return compiled_; }
  size_t evicted() const { return evicted_; }
  size_t maxVersions() const { return maxVersions_; }
  void setMaxVersions(size_t n) { maxVersions_ = std::max<size_t>(n, 1); }
  /// jit :bucket-bytes: bucket-all-reduce's bucket size (negative: the engine's).
  void setBucketBytes(int64_t bytes) { bucketBytes_ = bytes; }
  /// The version compiled last, or null before the first call.
  const Lowered* lastVersion() const { return last_.get(); }

private:
  Value fn_;
  std::string target_;
  std::vector<bool> staticArgs_;
  std::string layouts_; ///< jit :layouts: whose layout preferences (empty: the target's)
  std::vector<bool> donateArgs_; ///< jit :donate: arguments whose memory results may take
  compiler::OptionValues options_; ///< the target's own options (jit :NAME value ...)
  FixLevel fix_ = FixLevel::None; ///< raised once lowering needed the value of a leaf
  /// The versions, least recently used first. Shared so that a version runs to its end
  /// even if a call it makes evicts it.
  std::vector<std::shared_ptr<Lowered>> versions_;
  std::shared_ptr<Lowered> last_; ///< compiled last (jit-memory reports it)
  size_t maxVersions_ = kDefaultMaxVersions;
  int64_t bucketBytes_ = -1;
  size_t compiled_ = 0;
  size_t evicted_ = 0;
  std::string lastReason_;

  /// The version for `args`, compiled if no version held matches; the most recently used.
  std::shared_ptr<Lowered> find(Evaluator& evaluator, const Value& fn, Args args, const Span& span);
};

} // namespace tsl
