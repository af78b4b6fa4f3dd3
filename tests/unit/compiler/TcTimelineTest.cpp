// tests/unit/compiler/TcTimelineTest.cpp — group C of docs/tensor-core.md's known answers:
// the costs of instructions on the a2 device and the per-pipe timelines of schedules built
// from them.
#include "compiler/tc/Timeline.h"

#include <doctest/doctest.h>

#include <algorithm>

using namespace tsl::compiler::tc;

namespace {

/// The K-stepped 128×128×K fp16 matmul of C2: per step A and B tiles (32 KiB each) in
/// over MTE2, into L0A/L0B over MTE1, one mmad of 8·8·8 fractals; one fixpipe of the fp16
/// result at the end. With `buffers` copies of L1 and L0, step s's loads wait for the
/// step `buffers` back to have consumed its buffers.
std::vector<Step> kSteps(const Device& d, int steps, int buffers) {
  std::vector<Step> out;
  std::vector<size_t> mte2, mte1, cube;
  for (int s = 0; s < steps; ++s) {
    Step load{Pipe::Mte2, moveCycles(d, Path::GmToL1, 2 * 128 * 128 * 2), {}};
    if (s >= buffers) load.after.push_back(mte1[static_cast<size_t>(s - buffers)]); // L1 free again
    mte2.push_back(out.size());
    out.push_back(load);
    Step toL0{Pipe::Mte1,
              moveCycles(d, Path::L1ToL0a, 128 * 128 * 2) + moveCycles(d, Path::L1ToL0b, 128 * 128 * 2),
              {mte2.back()}};
    if (s >= buffers) toL0.after.push_back(cube[static_cast<size_t>(s - buffers)]); // L0A/L0B free again
    mte1.push_back(out.size());
    out.push_back(toL0);
    cube.push_back(out.size());
    out.push_back({Pipe::Cube, mmadCycles(d, 8 * 8 * 8), {mte1.back()}});
  }
  out.push_back({Pipe::Fixpipe, moveCycles(d, Path::L0cToGm, 128 * 128 * 2), {cube.back()}});
  return out;
}

} // namespace

TEST_CASE("C1: a 128³ fp16 matmul resident once costs what docs/tensor-core.md computes") {
  const Device d = preset("a2");
  const std::vector<Step> steps = kSteps(d, 1, 1);
  CHECK(steps[0].cycles == 1024); // 65,536 B GM→L1 at 64 B/cycle
  CHECK(steps[1].cycles == 64 + 128);
  CHECK(steps[2].cycles == 512); // 512 fractals, 2,097,152 MACs
  CHECK(steps[3].cycles == 512); // 32,768 B of fp16 out at 64 B/cycle
  const Schedule s = schedule(steps);
  CHECK(s.serial == 2240);
  CHECK(s.total == 2240); // every step waits for the one before
  CHECK(static_cast<double>(s.busy[static_cast<size_t>(Pipe::Cube)]) / static_cast<double>(s.total) ==
        doctest::Approx(0.22857).epsilon(1e-4));
}

TEST_CASE("C2: double buffering over four K-steps overlaps the pipes") {
  const Device d = preset("a2");
  const Schedule two = schedule(kSteps(d, 4, 2));
  CHECK(two.busy[static_cast<size_t>(Pipe::Mte2)] == 4096);
  CHECK(two.busy[static_cast<size_t>(Pipe::Mte1)] == 768);
  CHECK(two.busy[static_cast<size_t>(Pipe::Cube)] == 2048);
  CHECK(two.busy[static_cast<size_t>(Pipe::Fixpipe)] == 512);
  CHECK(two.serial == 7424);
  CHECK(two.total == 5312); // 4096 + 192 + 512 + 512
  const Schedule one = schedule(kSteps(d, 4, 1));
  CHECK(one.total == 5888);
  // C5: max(pipe busy) ≤ total ≤ serial, for both.
  for (const Schedule& s : {one, two}) {
    CHECK(*std::max_element(s.busy.begin(), s.busy.end()) <= s.total);
    CHECK(s.total <= s.serial);
  }
}

TEST_CASE("C3: ten tiles through four stages with two buffers take 14 + 9·5 cycles") {
  const int64_t cost[] = {3, 5, 2, 4};
  const Pipe pipes[] = {Pipe::Mte2, Pipe::Mte1, Pipe::Cube, Pipe::Fixpipe};
  std::vector<Step> steps;
  std::vector<std::array<size_t, 4>> at;
  for (int t = 0; t < 10; ++t) {
    at.push_back({});
    for (int j = 0; j < 4; ++j) {
      Step step{pipes[j], cost[j], {}};
      if (j > 0) step.after.push_back(at.back()[static_cast<size_t>(j - 1)]);
      // The buffer stage j fills is the one stage j + 1 emptied two tiles ago.
      if (j < 3 && t >= 2) step.after.push_back(at[static_cast<size_t>(t - 2)][static_cast<size_t>(j + 1)]);
      at.back()[static_cast<size_t>(j)] = steps.size();
      steps.push_back(step);
    }
  }
  CHECK(schedule(steps).total == 59);
}

TEST_CASE("costs follow the device: latency and bandwidth are data") {
  Device d = preset("a2");
  CHECK(moveCycles(d, Path::GmToL1, 65) == 2); // a partial beat costs a cycle
  CHECK(moveCycles(d, Path::L1ToL0b, 0) == 0);
  d.latency = 10;
  d.gmToL1 = 32;
  CHECK(moveCycles(d, Path::GmToL1, 64) == 12);
  CHECK(mmadCycles(d, 3) == 13);
  CHECK(std::string(pipeName(Pipe::Fixpipe)) == "FIXPIPE");
}
