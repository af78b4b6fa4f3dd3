// repl/Repl.h — the interactive session of `tsl`.
#pragma once

#include "tsl/tsl.h"

namespace tsl {

/// Runs the REPL until :quit, (exit) or end of input; returns the exit status.
int runRepl(Engine& engine);

} // namespace tsl
