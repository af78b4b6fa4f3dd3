// repl/Options.h — the `tsl` command line: one table of options (the targets' flags
// among them, as the targets declare them), read into Options.
#pragma once

#include "tsl/tsl.h"

#include <optional>
#include <string>
#include <vector>

namespace tsl::cli {

struct Options {
  int maxDepth = 10000;
  CompileDebug debug;            ///< the switches every compilation obeys, target flags included
  std::vector<std::string> rest; ///< the command and its arguments
  // tsl run and the REPL
  std::string pictures; ///< --pictures DIR: pictures shown are written there as SVG files
  bool open = false;    ///< --open: and opened with xdg-open
  // tsl compile
  std::string entry, signature, output;
  std::string emit = "ir";
  Engine::EmitOptions emitOptions;
  // tsl run
  bool keepGoing = false; ///< --keep-going: a failing top-level form is reported, the next runs
  int ranks = 0;          ///< --ranks N: run as N ranks under mpirun on this machine
  /// The command line without --ranks: what each rank runs.
  std::vector<std::string> forwarded;
};

/// Reads the command line into `options`. Options may come before the command or between
/// it and its FILE; everything after the FILE of `run` belongs to the program. Returns an
/// exit status when the command is done already (--help, --version: 0) or wrong (2,
/// said on standard error), nothing when it should run.
std::optional<int> parseArguments(int argc, char** argv, Options& options);

/// The text of `tsl --help`.
std::string usage();
/// `tsl kernel [install [--user | --prefix DIR] | -f CONNECTION_FILE]` (repl/Kernel.cpp).
int kernelCommand(const std::vector<std::string>& args);

} // namespace tsl::cli
