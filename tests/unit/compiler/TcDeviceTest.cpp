// tests/unit/compiler/TcDeviceTest.cpp — the tensor core's device as data: the presets
// match TENSOR_CORE.md's table, descriptions round-trip, and bad ones name their line.
#include "compiler/tc/Device.h"
#include "tsl/Error.h"

#include <doctest/doctest.h>

#include <cstdio>
#include <fstream>

using namespace tsl;
using namespace tsl::compiler::tc;

namespace {

/// The message of the value error `fn` raises ("" if none).
template <typename F>
std::string errorOf(F fn) {
  try {
    fn();
  } catch (const Error& e) {
    return std::string(errorKindName(e.kind())) + ": " + e.message();
  }
  return "";
}

} // namespace

TEST_CASE("the presets are TENSOR_CORE.md's devices") {
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

TEST_CASE("a bad device description is a value error naming its line") {
  auto error = [](const char* text) { return errorOf([&] { parseDevice(text, "d.device"); }); };
  CHECK(error("l1.bytes = 1024\nl2.bytes = 4\n").find("value: d.device:2: unknown key 'l2.bytes' (keys: preset, l1.bytes,") ==
        0);
  CHECK(error("ub.bytes = lots\n") == "value: d.device:1: 'ub.bytes' expects an integer, got 'lots'");
  CHECK(error("fixpipe = yes\n") == "value: d.device:1: 'fixpipe' expects true or false, got 'yes'");
  CHECK(error("nan = drop") == "value: d.device:1: 'nan' expects keep or zero, got 'drop'");
  CHECK(error("just words\n") == "value: d.device:1: expected 'key = value', got 'just words'");
  CHECK(error("events = 2\npreset = a2\n") ==
        "value: d.device:2: 'preset' must come before the settings it is the base of");
  CHECK(error("preset = tpu\n") == "value: unknown tensor-core device preset 'tpu' (presets: a2, 910a)");
  // validation, after the file is read
  CHECK(error("l0a.bytes = 256\n") == "value: d.device: l0a.bytes must hold a fractal (512 bytes), got 256");
  CHECK(error("l0c.bytes = 512\n") == "value: d.device: l0c.bytes must hold a fractal (1024 bytes), got 512");
  CHECK(error("l1.align = 24\n") == "value: d.device: l1.align must be a power of two, got 24");
  CHECK(error("ub.bytes = 1000\n") == "value: d.device: ub.bytes (1000) must be a multiple of ub.align (32)");
  CHECK(error("bandwidth.gm_l1 = 0\n") == "value: d.device: bandwidth.gm_l1 must be positive, got 0");
  CHECK(error("events = 0\n") == "value: d.device: events must be 1 to 64, got 0");
  CHECK(error("events = 99999999999\n") == "value: d.device:1: 'events' expects an integer, got '99999999999'");
  CHECK(error("latency = -1\n") == "value: d.device: latency must not be negative, got -1");
  CHECK(error("block_fma.nb = 0\n") == "value: d.device: block_fma.nb must be 1 to 64, got 0");
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
        "io: cannot read the device file '/nonexistent/dir/x.device'");
}
