// tests/unit/compiler/TcDeviceTest.cpp — the tensor core's device as data: the presets
// match docs/tensor-core.md's table, descriptions round-trip, and bad ones name their line.
#include "compiler/tc/Device.h"
#include "compiler/tc/Timeline.h"
#include "tsl/Error.h"

#include <doctest/doctest.h>

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <sys/stat.h>

using namespace tsl;
using namespace tsl::compiler::tc;

namespace {

/// The error `fn` raises as "file:line:col: kind: message" ("" if none; no position if
/// it has none).
template <typename F>
std::string errorOf(F fn) {
  try {
    fn();
  } catch (const Error& e) {
    const Span& s = e.span();
    const std::string at = s.known() ? cat(s.fileName(), ":", s.line, ":", s.col, ": ") : "";
    return at + errorKindName(e.kind()) + ": " + e.message();
  }
  return "";
}

} // namespace

TEST_CASE("the presets are docs/tensor-core.md's devices") {
  const Device a2 = preset("a2");
  CHECK(presetNames().front() == "a2");
  CHECK(a2.l1 == Buffer{512 * 1024, 32});
  CHECK(a2.l0a == Buffer{64 * 1024, 512});
  CHECK(a2.l0b == Buffer{64 * 1024, 512});
  CHECK(a2.l0c == Buffer{128 * 1024, 64});
  CHECK(a2.ub == Buffer{192 * 1024, 32});
  CHECK(a2.gmToL1 == 64);
  CHECK(a2.l1ToL0a == 512);
  CHECK(a2.l1ToL0b == 256);
  CHECK(a2.l0cToGm == 64);
  CHECK(a2.ubToGm == 64);
  CHECK(a2.mmadCyclesPerFractal == 1);
  CHECK(a2.latency == 0);
  CHECK(a2.queueDepth == 32);
  CHECK(a2.events == 8);
  CHECK(a2.fixpipe);
  CHECK(a2.overflow == Overflow::Infinity);
  CHECK(a2.nan == NanMode::Keep);
  CHECK(a2.accumulation == Accumulation::IeeeSeq);

  const Device old = preset("910a");
  CHECK(old.l1.bytes == 1024 * 1024);
  CHECK(old.l0c.bytes == 256 * 1024);
  CHECK(old.ub.bytes == 256 * 1024);
  CHECK(!old.fixpipe);
  CHECK(old.overflow == Overflow::Saturate);
  CHECK(old.nan == NanMode::Zero);
  CHECK(old.events == 4);
  CHECK(old.l0a == a2.l0a); // what the table does not change is a2's

  CHECK(errorOf([] { preset("h100"); }) == "value: unknown tensor-core device preset 'h100' (presets: a2, 910a)");
  for (const std::string& name : presetNames()) CHECK_NOTHROW(validate(preset(name)));
}

TEST_CASE("a device description parses over a preset and prints back") {
  const Device d = parseDevice("# a bigger UB\npreset = 910a\nub.bytes = 524288  # 512 KiB\n\nevents = 6\n"
                               "accumulation = block_fma\nblock_fma.extra_bits = 3\n",
                               "big.device");
  CHECK(d.name == "big.device");
  CHECK(d.ub.bytes == 512 * 1024);
  CHECK(d.events == 6);
  CHECK(d.l1.bytes == 1024 * 1024); // from 910a
  CHECK(!d.fixpipe);
  CHECK(d.accumulation == Accumulation::BlockFma);
  CHECK(d.blockFma.extraBits == 3);
  CHECK(d.blockFma.nb == 4);
  // describe() writes every key; parsing it gives the same device.
  for (const Device& x : {d, preset("a2"), preset("910a")}) {
    Device back = parseDevice(describe(x), x.name);
    CHECK(back == x);
  }
  CHECK(parseDevice("", "empty") == [] {
    Device a2 = preset("a2");
    a2.name = "empty";
    return a2;
  }());
}

TEST_CASE("a bad device description is an io error at its line and column") {
  auto error = [](const char* text) { return errorOf([&] { parseDevice(text, "d.device"); }); };
  CHECK(error("l1.bytes = 1024\nl2.bytes = 4\n").find("d.device:2:1: io: unknown key 'l2.bytes' (keys: preset, l1.bytes,") ==
        0);
  CHECK(error("ub.bytes = lots\n") == "d.device:1:12: io: 'ub.bytes' expects an integer, got 'lots'");
  CHECK(error("fixpipe = yes\n") == "d.device:1:11: io: 'fixpipe' expects true or false, got 'yes'");
  CHECK(error("nan = drop") == "d.device:1:7: io: 'nan' expects keep or zero, got 'drop'");
  CHECK(error("  just words\n") == "d.device:1:3: io: expected 'key = value', got 'just words'");
  CHECK(error("events = 2\npreset = a2\n") ==
        "d.device:2:1: io: 'preset' must come before the settings it is the base of");
  CHECK(error("# base\npreset = tpu\n") == "d.device:2:10: io: unknown tensor-core device preset 'tpu' (presets: a2, 910a)");
  CHECK(error("events = 99999999999\n") == "d.device:1:10: io: 'events' expects an integer, got '99999999999'");
  CHECK(error("latency = 9223372036854775808\n") ==
        "d.device:1:11: io: 'latency' expects an integer, got '9223372036854775808'");
  // Ranges, checked once the file is read, at the line that set the value.
  CHECK(error("l0a.bytes = 256\n") == "d.device:1:13: io: l0a.bytes must hold a fractal (512 bytes), got 256");
  CHECK(error("\nl0c.bytes = 512\n") == "d.device:2:13: io: l0c.bytes must hold a fractal (1024 bytes), got 512");
  CHECK(error("l1.align = 24\n") == "d.device:1:12: io: l1.align must be a power of two, got 24");
  CHECK(error("ub.bytes = 1000\n") == "d.device:1:12: io: ub.bytes (1000) must be a multiple of ub.align (32)");
  CHECK(error("ub.bytes = 1024\nub.align = 2048\n") ==
        "d.device:2:12: io: ub.bytes (1024) must be a multiple of ub.align (2048)"); // the later line
  CHECK(error("l1.bytes = 9223372036854775296\n") ==
        "d.device:1:12: io: l1.bytes must be at most 16777216 (16 MiB), got 9223372036854775296");
  CHECK(error("bandwidth.gm_l1 = 0\n") == "d.device:1:19: io: bandwidth.gm_l1 must be 1 to 1048576, got 0");
  CHECK(error("bandwidth.ub_gm = 4611686018427387904\n") ==
        "d.device:1:19: io: bandwidth.ub_gm must be 1 to 1048576, got 4611686018427387904");
  CHECK(error("events = 0\n") == "d.device:1:10: io: events must be 1 to 64, got 0");
  CHECK(error("latency = -1\n") == "d.device:1:11: io: latency must be 0 to 1048576, got -1");
  CHECK(error("latency = 9223372036854775807\n") == "d.device:1:11: io: latency must be 0 to 1048576, got 9223372036854775807");
  CHECK(error("mmad.cycles_per_fractal = 4097\n") ==
        "d.device:1:27: io: mmad.cycles_per_fractal must be 1 to 4096, got 4097");
  CHECK(error("queue_depth = 65537\n") == "d.device:1:15: io: queue_depth must be 1 to 65536, got 65537");
  CHECK(error("vector.bytes_per_cycle = 0\n") == "d.device:1:26: io: vector.bytes_per_cycle must be 1 to 1048576, got 0");
  CHECK(error("block_fma.nb = 0\n") == "d.device:1:16: io: block_fma.nb must be 1 to 64, got 0");
  // validate() itself, for devices built in code: value errors naming the device.
  Device d = preset("a2");
  d.latency = INT64_MAX;
  CHECK(errorOf([&] { validate(d, "dev"); }) == "value: dev: latency must be 0 to 1048576, got 9223372036854775807");
}

TEST_CASE("the largest device the ranges allow times without overflow") {
  // Every limit at once: the largest instruction costs < 2^35 cycles.
  Device d = preset("a2");
  for (Buffer* b : {&d.l1, &d.l0a, &d.l0b, &d.l0c, &d.ub}) b->bytes = kMaxBufferBytes;
  d.latency = kMaxLatency;
  d.mmadCyclesPerFractal = kMaxCyclesPerFractal;
  d.gmToL1 = 1;
  CHECK_NOTHROW(validate(d));
  CHECK(mmadCycles(d, int64_t{1} << 22) < int64_t{1} << 35);
  CHECK(moveCycles(d, Path::GmToL1, kMaxBufferBytes) < int64_t{1} << 35);
}

TEST_CASE("a device file is read from disk, and a missing one is an I/O error") {
  const std::string path = "tc-device-test.device";
  {
    std::ofstream out(path);
    out << "preset = a2\nl1.bytes = 262144\n";
  }
  const Device d = loadDevice(path);
  CHECK(d.l1.bytes == 256 * 1024);
  CHECK(d.name == path);
  std::remove(path.c_str());
  CHECK(errorOf([] { loadDevice("/nonexistent/dir/x.device"); }) ==
        "io: /nonexistent/dir/x.device: cannot open: no such file or directory");
  // Not a regular file: refused at once, as source files are (a FIFO is never waited on).
  CHECK(errorOf([] { loadDevice("/dev/zero"); }) == "io: /dev/zero: is a character device, not a regular file");
  const std::string fifo = "tc-device-test.fifo";
  std::remove(fifo.c_str());
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  CHECK(errorOf([&] { loadDevice(fifo); }) == "io: " + fifo + ": is a FIFO, not a regular file");
  std::remove(fifo.c_str());
}
