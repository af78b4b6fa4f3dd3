// compiler/tc/Emulator.h — runs tensor-core programs: their results, their cycles, their faults.
//
// The emulator executes a Program (compiler/tc/Isa.h) functionally, in program order, on
// a device's buffers and the GM tensors it is given, and computes its timing on per-pipe
// timelines (compiler/tc/Timeline.h) from the instructions alone. It checks what the
// hardware would silently get wrong: an access past a buffer or misaligned, a flag set
// twice, waited for unset or left set, and a race — an access to data another pipe
// wrote (or is still reading) with no flag or barrier ordering the two. Each fault is a
// runtime error naming the instruction (and its line, for a parsed program).
//
// Statistics (`(tc-stats)`, `tsl run --tc-stats`) and trace events (`--tc-trace`) come
// out of a run; TcStats::add sums the programs of one call, run one after another.
#pragma once

#include "compiler/tc/Device.h"
#include "compiler/tc/Isa.h"
#include "compiler/tc/Numerics.h"

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace tsl::compiler::tc {

/// Paths bytes are counted on (Timeline.h's Path, in its order), as stats name them.
constexpr size_t kPaths = 7;
const char* pathKey(size_t path); ///< "gm-l1", "gm-ub", "l1-l0a", ...

struct TcStats {
  int64_t programs = 0;     ///< programs run (one per contraction executed)
  int64_t instructions = 0;
  int64_t cycles = 0;       ///< overlapped total, programs one after another
  int64_t serialCycles = 0; ///< Σ instruction cycles
  int64_t cubeCycles = 0;
  int64_t macs = 0;         ///< useful multiply-adds
  int64_t paddedMacs = 0;   ///< executed, padding included
  int64_t macsPerCycle = 4096; ///< the cube's rate (16·16·16 per fractal-cycle)
  std::array<int64_t, kPaths> bytes{};
  std::array<int64_t, kPipes> busy{}, stall{};
  std::array<int64_t, 5> peak{}; ///< high-water mark per on-chip buffer (Buf order)
  int64_t transdata = 0, transdataBytes = 0; ///< layout conversions run beside the programs
  NumericsCounters numerics;
  int64_t races = 0; ///< counted instead of raised (Emulator::Options::countRaces)
  std::vector<std::string> tilings; ///< what each lowered contraction chose

  /// useful MACs ÷ (cycles × MACs per cube cycle)
  double utilization() const;
  /// Adds `o` as run after this.
  void add(const TcStats& o);
  /// One JSON object (keys as `(tc-stats)` names them, with '-' as '_').
  std::string json() const;
};

/// One instruction's box on its pipe, for a trace.
struct TraceEvent {
  Pipe pipe;
  int64_t start, end;
  Instr instr; ///< the instruction (a copy: printed only when the trace is written)
};

/// A GM tensor's memory, as the program's .gm line declares it.
struct GmView {
  uint8_t* data = nullptr;
  int64_t elements = 0;
};

class Emulator {
public:
  struct Options {
    bool functional = true;  ///< compute results (else only checks and timing)
    bool countRaces = false; ///< count races in the stats instead of raising them
    std::vector<TraceEvent>* trace = nullptr; ///< appended to, times offset by traceOffset
    int64_t traceOffset = 0;
    std::array<std::vector<uint8_t>, 5>* buffers = nullptr; ///< receives the on-chip buffers'
                                                            ///< final contents (Buf order)
  };
  explicit Emulator(Device device);
  const Device& device() const { return device_; }
  /// Runs `p` on `gm` (one view per .gm line, of its declared size).
  TcStats run(const Program& p, std::span<const GmView> gm, const Options& options);
  /// Only checks and times `p`: what the tile search asks.
  TcStats time(const Program& p);

private:
  Device device_;
};

/// Writes `events` as Chrome trace-event JSON (one thread per pipe; Perfetto opens it).
std::string traceJson(const std::vector<TraceEvent>& events);

} // namespace tsl::compiler::tc
