// repl/Repl.h — the interactive session of `tsl`.
#pragma once

#include "repl/Pictures.h"
#include "tsl/tsl.h"

namespace tsl {

/// Runs the REPL until :quit, (exit) or end of input; returns the exit status. With
/// `pictures` (tsl --pictures DIR), each value printed that has a picture is written too.
int runRepl(Engine& engine, cli::Pictures* pictures = nullptr);

} // namespace tsl
