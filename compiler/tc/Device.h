// compiler/tc/Device.h — the emulated tensor core's device, as data.
//
// Everything the `:tc` backend knows about the machine it emulates is in a Device: its
// on-chip buffers (size, alignment), the bandwidth and latency of each data path, the
// cube's rate, the pipes' queue depth and event ids, whether FIXPIPE exists, and the
// numerics defaults (docs/tensor-core.md, "The device"). Two presets —
// `a2` (the default) and `910a` — and a description file a user can write
// (docs/tensor-core.md, "Device files"): `key = value` lines over a preset, validated
// with errors naming the line.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tsl::compiler::tc {

/// An on-chip buffer: its capacity and the alignment every address in it must have.
struct Buffer {
  int64_t bytes = 0;
  int64_t align = 1;
  bool operator==(const Buffer&) const = default;
};

/// How float results that overflow the output type come out of the device.
enum class Overflow : uint8_t { Infinity, Saturate };
/// What a NaN becomes at the device's outputs.
enum class NanMode : uint8_t { Keep, Zero };
/// The order and rounding of the cube's accumulation (docs/tensor-core.md, "Numerics").
enum class Accumulation : uint8_t { IeeeSeq, BlockFma };

struct BlockFma {
  int nb = 4;             ///< products summed per block, with the accumulator
  int extraBits = 0;      ///< bits kept beyond f32's when aligning
  bool towardZero = true; ///< round the block's sum toward zero
  bool operator==(const BlockFma&) const = default;
};

struct Device {
  std::string name;
  Buffer l1, l0a, l0b, l0c, ub; ///< GM is unbounded
  // Bandwidths, bytes per cycle, per data path.
  int64_t gmToL1 = 64, gmToUb = 64, l1ToL0a = 512, l1ToL0b = 256, l0cToGm = 64, ubToGm = 64, l0cToUb = 64;
  int64_t vectorBytes = 256;        ///< bytes of UB the vector unit reads per cycle
  int64_t mmadCyclesPerFractal = 1; ///< per 16×16×16 (fp16) fractal
  int64_t latency = 0;              ///< fixed cycles added to every instruction
  int64_t queueDepth = 32;          ///< instructions a pipe may have waiting
  int events = 8;                   ///< event ids per (src, dst) pipe pair
  bool fixpipe = true;              ///< without it L0C drains to UB, then out through MTE3
  Overflow overflow = Overflow::Infinity;
  NanMode nan = NanMode::Keep;
  Accumulation accumulation = Accumulation::IeeeSeq;
  BlockFma blockFma;
  bool operator==(const Device&) const = default;
};

// The ranges a device's values must lie in (docs/tensor-core.md, "Device files"), chosen
// so that no timing sum can overflow: an instruction moves at most a buffer (16 MiB) and
// an mmad covers at most 2^22 fractals (what 16 MiB L0A, L0B and L0C hold), so one
// instruction costs at most latency + 2^22 · 4096 < 2^35 cycles, and a run would need
// 2^28 such instructions — each emulating 2^34 multiply-adds — to reach 2^63.
constexpr int64_t kMaxBufferBytes = int64_t{16} << 20; ///< any on-chip buffer
constexpr int64_t kMaxBandwidth = int64_t{1} << 20;    ///< bytes per cycle, any path
constexpr int64_t kMaxCyclesPerFractal = 4096;         ///< the cube still does ≥ 1 MAC a cycle
constexpr int64_t kMaxLatency = int64_t{1} << 20;      ///< cycles added to every instruction
constexpr int64_t kMaxQueueDepth = 65536;
/// A device file larger than this is refused before it is read.
constexpr size_t kMaxDeviceFileBytes = size_t{1} << 20;

/// The presets' names, the default first.
const std::vector<std::string>& presetNames();
/// A preset by name; a value error listing the presets for any other name.
Device preset(std::string_view name);
/// A device description (`key = value` lines, `#` comments; a `preset = NAME` line
/// first, else a2's values are the base). Errors are io errors at `file`:line:col:
/// unknown keys (listing the known ones), malformed values, and a value outside its
/// range (pointing at the line that set it).
Device parseDevice(std::string_view text, std::string_view file = "<device>");
/// Reads and parses a device file. It is opened as source files are (runtime/Io.h's
/// readTextFile): a device, FIFO or socket is an io error at once, never waited on.
Device loadDevice(const std::string& path);
/// The description of `d` in parseDevice's format (parses back to `d`).
std::string describe(const Device& d);
/// Checks a device: buffers from a fractal to 16 MiB and a multiple of their alignment,
/// alignments powers of two, every rate, latency and count within the limits above.
/// Value errors (prefixed by `where`) otherwise.
void validate(const Device& d, std::string_view where = "device");

} // namespace tsl::compiler::tc
