// compiler/tc/TcBackend.h — the :tc target: programs run on the emulated tensor core.
//
// The :tc backend runs the optimised IR (after the layout passes with the tensor core's
// preferences: NC1HWC0 data, FRACTAL_Z weights, FRACTAL_NZ matrices) operation by
// operation, as :interp does, except that every contraction the cube can run (its row in
// the cube lowering table, Contract.h) becomes a tensor-core program executed by the
// emulator: inputs rounded to f16 (or bf16: `jit :tc-dtype :bf16`), f32 accumulation,
// cycles and bytes from the instructions. Every other operation runs on its eager kernel
// in the program's own dtype. A Session per engine keeps the statistics of the last call
// and of all calls, and (when asked) a trace.
#pragma once

#include "compiler/Backend.h"
#include "compiler/tc/Device.h"
#include "compiler/tc/Emulator.h"

#include <memory>
#include <mutex>

namespace tsl::compiler::tc {

struct Session {
  std::mutex mutex;
  TcStats last;                    ///< the last call on :tc
  TcStats total;                   ///< every call since the engine started (or reset)
  bool tracing = false;
  std::vector<TraceEvent> trace;   ///< every call's instructions since tracing started
  std::vector<TraceEvent> lastTrace; ///< the last call's instructions, from cycle 0 (tc-trace)
  int64_t clock = 0;               ///< where the next program starts on the trace
};

/// The device a compilation names: a preset name, a device file, or (empty) `a2`.
Device deviceFor(const std::string& nameOrFile);

std::unique_ptr<Backend> makeTcBackend();
/// The :tc target (TcTarget.cpp): its options, builtins, flags and `tsl tc-run`.
BackendInfo tcBackendInfo();
/// A TcStats as the statistics (tc-stats) shows.
Stat statisticsOf(const TcStats& stats);
/// `events` as a timeline: a lane per pipe that ran an instruction (in pipe order), a box
/// per instruction named by its mnemonic, the whole instruction as its detail.
Timeline timelineOf(const std::vector<TraceEvent>& events);
/// What --tc-trace=FILE writes: an SVG timeline if FILE ends in .svg, else Chrome
/// trace-event JSON.
std::string traceFile(const std::string& file, const std::vector<TraceEvent>& events);
/// --tc-trace starts tracing; --tc-stats and --tc-trace write what the run did.
void beforeRun(Session& session, const FlagValues& flags);
std::vector<Output> afterRun(Session& session, const FlagValues& flags);
/// The session of a backend made by makeTcBackend (an internal error for another).
Session& sessionOf(Backend& tcBackend);

} // namespace tsl::compiler::tc
