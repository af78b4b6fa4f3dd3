// compiler/tc/Device.h — the emulated tensor core's device, as data.
//
// Everything the `:tc` backend knows about the machine it emulates is in a Device: its
// on-chip buffers (size, alignment), the bandwidth and latency of each data path, the
// cube's rate, the pipes' queue depth and event ids, whether FIXPIPE exists, and the
// numerics defaults (../shared/spec/TENSOR_CORE.md, "Device model"). Two presets —
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
/// The order and rounding of the cube's accumulation (TENSOR_CORE.md, "Numerics").
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

/// The presets' names, the default first.
const std::vector<std::string>& presetNames();
/// A preset by name; a value error listing the presets for any other name.
Device preset(std::string_view name);
/// A device description (`key = value` lines, `#` comments; a `preset = NAME` line
/// first, else a2's values are the base). Errors are value errors naming `file` and the
/// line: unknown keys (listing the known ones), malformed values, and a device that
/// does not validate.
Device parseDevice(std::string_view text, std::string_view file = "<device>");
/// Reads and parses a device file (an I/O error names the file).
Device loadDevice(const std::string& path);
/// The description of `d` in parseDevice's format (parses back to `d`).
std::string describe(const Device& d);
/// Checks a device: buffers at least a fractal and a multiple of their alignment,
/// alignments powers of two, rates positive, 1–64 event ids. Value errors otherwise.
void validate(const Device& d, std::string_view where = "device");

} // namespace tsl::compiler::tc
