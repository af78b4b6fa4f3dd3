// tsl/CompileDebug.h — switches that make compilation show its work.
//
// The `tsl` command sets them from --print-ir-after=NAME, --print-ir-after-all,
// --verify-each, --time-passes, --explain-recompile, --print-memory-plan,
// --print-fallbacks, -O0..-O3, --bucket-bytes=N, --target=T and the flags targets declare
// (Engine::targetFlags()); an embedding host sets them with Engine::compileDebug(). Every
// compilation of the engine (jit, ir, graph, compile) obeys.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace tsl {

struct CompileDebug {
  bool verifyEach = false;          ///< verify the IR after every pass
  bool printAfterAll = false;       ///< print the IR after every pass
  std::set<std::string> printAfter; ///< print it after the passes named here
  bool timePasses = false;          ///< report how long each pass took
  bool explainRecompile = false;    ///< say why a jit function compiles another version
  bool printMemoryPlan = false;     ///< print each function's memory plan when it is made
  bool printFallbacks = false;      ///< list the operations compiled code runs on eager kernels
  int optLevel = 2;                 ///< the optimisation level of generated code, 0 to 3
  /// The bucket size of the pass that overlaps a compiled step's gradient all-reduces with
  /// its computation (bucket-all-reduce; docs/distributed.md), in bytes; 0 turns it off.
  int64_t bucketBytes = int64_t(25) << 20;
  std::string target;               ///< the target jit uses when none is named (empty: the
                                    ///< first of Engine::targets())
  /// Flags of targets (Engine::targetFlags()) by name without "--", with their values as
  /// checked by Engine::checkTargetFlag, in order (a flag may repeat).
  std::vector<std::pair<std::string, std::string>> flags;
  std::ostream* out = nullptr;      ///< where all of this goes (standard error if null)
};

} // namespace tsl
