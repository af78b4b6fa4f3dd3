// compiler/tc/Timeline.h — when each instruction of a tensor-core program runs.
//
// Every instruction runs on one pipe (MTE2, MTE1, CUBE, FIXPIPE, MTE3, VECTOR) and costs a
// fixed latency plus its bytes over its path's bandwidth, or its fractals for `mmad`
// (docs/tensor-core.md, "Timelines"). A pipe runs its instructions in program
// order; an instruction also waits for the ones it depends on (what set_flag / wait_flag
// pairs and barriers order). The schedule gives each instruction's start and end, each
// pipe's busy cycles, and the total against the serial sum; any schedule satisfies
// max(pipe busy) ≤ total ≤ serial.
#pragma once

#include "compiler/tc/Device.h"

#include <array>
#include <cstdint>
#include <span>
#include <vector>

namespace tsl::compiler::tc {

enum class Pipe : uint8_t { Mte2, Mte1, Cube, Fixpipe, Mte3, Vector };
constexpr size_t kPipes = 6;
const char* pipeName(Pipe p);

/// The data paths instructions move bytes along, each with its bandwidth on a device.
enum class Path : uint8_t { GmToL1, GmToUb, L1ToL0a, L1ToL0b, L0cToGm, L0cToUb, UbToGm };
/// Cycles to move `bytes` along `path`: the device's latency plus ⌈bytes / bandwidth⌉.
int64_t moveCycles(const Device& d, Path path, int64_t bytes);
/// Cycles of an `mmad` over `fractals` 16×16×16 fractals.
int64_t mmadCycles(const Device& d, int64_t fractals);

/// The earlier steps one step waits for: a wait_flag's set_flag, a barrier's pipes and
/// the last barrier — at most kPipes + 1, kept inline (a program has many steps).
class Deps {
public:
  Deps() = default;
  Deps(std::initializer_list<size_t> steps) {
    for (size_t s : steps) push_back(s);
  }
  void push_back(size_t step);
  const size_t* begin() const { return at_.data(); }
  const size_t* end() const { return at_.data() + n_; }
  size_t size() const { return n_; }

private:
  std::array<size_t, kPipes + 2> at_{};
  size_t n_ = 0;
};

/// One instruction as the timeline sees it.
struct Step {
  Pipe pipe;
  int64_t cycles;
  Deps after; ///< indices of earlier steps it waits for
};

struct Schedule {
  std::vector<int64_t> start, end; ///< per step
  std::array<int64_t, kPipes> busy{};
  std::array<int64_t, kPipes> stall{}; ///< cycles a pipe held an issued step that waited for
                                       ///< a dependency
  int64_t total = 0;  ///< cycles until the last step ends
  int64_t serial = 0; ///< Σ cycles: every step one after another
};

/// Schedules `steps` (each pipe in program order, each step after its dependencies).
/// Steps are issued in program order into per-pipe queues of `queueDepth` (0: unbounded):
/// a step cannot issue while its pipe has that many steps issued and not started, which
/// holds back every later step. A dependency on a later step is an internal error
/// (program order is the only order).
Schedule schedule(std::span<const Step> steps, int64_t queueDepth = 0);

} // namespace tsl::compiler::tc
