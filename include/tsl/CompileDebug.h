// tsl/CompileDebug.h — switches that make compilation show its work.
//
// The `tsl` command sets them from --print-ir-after=NAME, --print-ir-after-all,
// --verify-each, --time-passes, --explain-recompile, --print-memory-plan,
// --print-fallbacks and -O0..-O3; an embedding host sets them with
// Engine::compileDebug(). Every compilation of the engine (jit, ir, graph, compile) obeys.
#pragma once

#include <iosfwd>
#include <set>
#include <string>

namespace tsl {

struct CompileDebug {
  bool verifyEach = false;          ///< verify the IR after every pass
  bool printAfterAll = false;       ///< print the IR after every pass
  std::set<std::string> printAfter; ///< print it after the passes named here
  bool timePasses = false;          ///< report how long each pass took
  bool explainRecompile = false;    ///< say why a jit function compiles another version
  bool printMemoryPlan = false;     ///< print each function's memory plan when it is made
  bool printFallbacks = false;      ///< list the operations :cpu code runs on eager kernels
  int optLevel = 2;                 ///< LLVM's optimisation level for :cpu, 0 to 3
  std::string tcDevice;             ///< :tc's device: a preset (a2, 910a) or a device file
  std::ostream* out = nullptr;      ///< where all of this goes (standard error if null)
};

} // namespace tsl
