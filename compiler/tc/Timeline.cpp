// compiler/tc/Timeline.cpp — per-pipe timelines of a tensor-core program.
#include "compiler/tc/Timeline.h"

#include "tsl/Error.h"

#include <algorithm>

namespace tsl::compiler::tc {

const char* pipeName(Pipe p) {
  switch (p) {
  case Pipe::Mte2: return "MTE2";
  case Pipe::Mte1: return "MTE1";
  case Pipe::Cube: return "CUBE";
  case Pipe::Fixpipe: return "FIXPIPE";
  case Pipe::Mte3: return "MTE3";
  case Pipe::Vector: return "VECTOR";
  }
  return "?";
}

void Deps::push_back(size_t step) {
  TSL_ASSERT(n_ < at_.size(), "tc: a step waits for more than ", at_.size(), " others");
  at_[n_++] = step;
}

int64_t moveCycles(const Device& d, Path path, int64_t bytes) {
  int64_t bandwidth = 1;
  switch (path) {
  case Path::GmToL1: bandwidth = d.gmToL1; break;
  case Path::GmToUb: bandwidth = d.gmToUb; break;
  case Path::L1ToL0a: bandwidth = d.l1ToL0a; break;
  case Path::L1ToL0b: bandwidth = d.l1ToL0b; break;
  case Path::L0cToGm: bandwidth = d.l0cToGm; break;
  case Path::L0cToUb: bandwidth = d.l0cToUb; break;
  case Path::UbToGm: bandwidth = d.ubToGm; break;
  }
  return d.latency + (std::max<int64_t>(bytes, 0) + bandwidth - 1) / bandwidth;
}

int64_t mmadCycles(const Device& d, int64_t fractals) { return d.latency + std::max<int64_t>(fractals, 0) * d.mmadCyclesPerFractal; }

Schedule schedule(std::span<const Step> steps, int64_t queueDepth) {
  Schedule s;
  s.start.resize(steps.size());
  s.end.resize(steps.size());
  std::array<int64_t, kPipes> free{}; // when each pipe finishes what it has
  std::array<std::vector<size_t>, kPipes> onPipe; // each pipe's steps so far
  int64_t issue = 0;                               // when the last step was issued
  for (size_t i = 0; i < steps.size(); ++i) {
    const Step& step = steps[i];
    const auto pipe = static_cast<size_t>(step.pipe);
    auto& queue = onPipe[pipe];
    // A full queue: this step issues when the step queueDepth places ahead starts.
    if (queueDepth > 0 && queue.size() >= static_cast<size_t>(queueDepth))
      issue = std::max(issue, s.start[queue[queue.size() - static_cast<size_t>(queueDepth)]]);
    queue.push_back(i);
    const int64_t ready = std::max(free[pipe], issue);
    int64_t start = ready;
    for (size_t j : step.after) {
      TSL_ASSERT(j < i, "tc: step ", i, " waits for step ", j, ", which comes later");
      start = std::max(start, s.end[j]);
    }
    s.stall[pipe] += start - ready;
    s.start[i] = start;
    s.end[i] = start + step.cycles;
    free[pipe] = s.end[i];
    s.busy[pipe] += step.cycles;
    s.serial += step.cycles;
    s.total = std::max(s.total, s.end[i]);
  }
  return s;
}

} // namespace tsl::compiler::tc
