// ir/Pass.h — passes over IR modules and the manager that runs pipelines of them.
//
// A pass has a kebab-case name and one entry point, run(Module&, PassContext&), which
// reports whether it changed anything. Pipelines are explicit ordered lists of names. The
// context carries the debugging switches of the command line: --print-ir-after=NAME,
// --print-ir-after-all, --verify-each and --time-passes.
//
// Ctrl-C stops a compile: the manager polls the thread's interrupt flag
// (runtime/Interrupt.h) between passes, and passes whose work grows with the program
// poll it once per operation of their main loops (`runtime error: interrupted`). The
// module is then left half-transformed, which is why every caller compiles a module it
// owns and drops it on an error.
#pragma once

#include "ir/IR.h"

#include <iosfwd>
#include <memory>
#include <set>
#include <string>
#include <vector>

namespace tsl::ir {

/// The bucket size of bucket-all-reduce unless asked otherwise: PyTorch DDP's 25 MiB.
constexpr int64_t kDefaultBucketBytes = int64_t(25) << 20;

struct PassContext {
  bool verifyEach = false;           ///< verify the module after every pass
  bool printAfterAll = false;        ///< print the module after every pass
  std::set<std::string> printAfter;  ///< print it after these passes
  bool timePasses = false;           ///< record how long each pass took
  bool printMemoryPlan = false;      ///< plan-memory prints the plans it makes
  std::string layoutTarget;          ///< whose layout preferences the layout passes follow
                                     ///< ("cpu", "tc"; empty: none)
  std::vector<bool> donated;         ///< the entry's parameters the caller donates: their
                                     ///< memory may hold results (jit :donate)
  int64_t bucketBytes = kDefaultBucketBytes; ///< bucket-all-reduce's bucket size (0: off)
  std::string entry;                 ///< the function being compiled, if known: after each
                                     ///< pass the functions it no longer calls are dropped
  std::ostream* out = nullptr;       ///< where printing and timings go (stderr if null)
  std::vector<std::pair<std::string, double>> timings; ///< pass name, seconds
};

class Pass {
public:
  virtual ~Pass() = default;
  virtual const char* name() const = 0;
  /// Transforms the module; returns whether anything changed.
  virtual bool run(Module& module, PassContext& context) = 0;
};

/// Makes a fresh pass.
using PassFactory = std::unique_ptr<Pass> (*)();

/// Adds a pass to the registry, under its name. The generic passes of ir/ are there
/// from the start; other layers (compiler/: fusion, memory planning, layouts) add theirs
/// (compiler::registerPasses()), so every pass can be named by --print-ir-after, --pass
/// and tsl-opt. Registering a name twice is an internal error.
void registerPass(const std::string& name, PassFactory factory);
/// A pass by name; nullptr for an unknown name.
std::unique_ptr<Pass> createPass(std::string_view name);
/// Every registered pass name, in registration order, for help texts and errors.
std::vector<std::string> passNames();

/// The target-independent clean-up every backend's pipeline starts with: inline calls,
/// simplify algebra, fold constants, remove common subexpressions and dead code, check
/// types. Backends (compiler/) own their pipelines; this is their common prefix.
const std::vector<std::string>& optimizationPasses();

class PassManager {
public:
  /// A value error naming the unknown pass if `pipeline` has one.
  explicit PassManager(const std::vector<std::string>& pipeline);
  /// Runs the pipeline; returns whether any pass changed the module.
  bool run(Module& module, PassContext& context);
  /// Prints the timings collected in `context` ("--time-passes").
  static void reportTimings(const PassContext& context);

private:
  std::vector<std::unique_ptr<Pass>> passes_;
};

// One factory per pass (ir/passes/*.cpp).
std::unique_ptr<Pass> createInferTypesPass();
std::unique_ptr<Pass> createInlinePass();
std::unique_ptr<Pass> createFoldConstantsPass();
std::unique_ptr<Pass> createSimplifyPass();
std::unique_ptr<Pass> createCsePass();
std::unique_ptr<Pass> createDcePass();

} // namespace tsl::ir
