// compiler/tc/Cube.h — the cube's multiply-accumulate over fractal buffers.
//
// `mmad` reads A as mt × kt fractals in L0A's order (small-z big-Z), B as kt × nt
// fractals in L0B's (small-n big-Z) and accumulates into C, nt × mt fractals of 16×16 f32
// (int32 for int8 inputs) in L0C's order (small-z big-N). Every output element sums its
// products in ascending k, so no tiling of M or N changes a bit of it. Under `ieee_seq`
// fp16 and bf16 products are exact in an f32 fused multiply-add, which rounds once per
// addition exactly as the mode asks: that loop is vectorised (the emulator's speed);
// `block_fma` and int8 take the exact scalar paths of Numerics.h.
#pragma once

#include "compiler/tc/Device.h"
#include "compiler/tc/Isa.h"
#include "compiler/tc/Numerics.h"

#include <cstdint>

namespace tsl::compiler::tc {

struct MmadShape {
  int64_t mt, kt, nt; ///< fractals (k in fractals of C0 = 16, or 32 for int8)
  Ty ty;              ///< f16, bf16 or i8
  bool init;          ///< c = a·b (else c += a·b)
};

void mmad(const uint8_t* a, const uint8_t* b, uint8_t* c, const MmadShape& shape, const Device& d,
          NumericsCounters& counters, bool parallel = true);

/// Whether mmadAsync can run this mmad beside the emulator's thread: ieee_seq on f16 or
/// bf16 (which touches no counter), with more than one thread allowed.
bool mmadCanOverlap(const MmadShape& shape, const Device& d);
/// Starts the mmad on this thread's helper thread and returns; mmadJoin waits for it.
/// The emulator joins before any instruction touches L0A, L0B or L0C, so the copies and
/// flags that follow an mmad in the program run while the cube computes — as they would
/// on the device.
void mmadAsync(const uint8_t* a, const uint8_t* b, uint8_t* c, const MmadShape& shape, const Device& d);
void mmadJoin();

/// The f32 value of fp16 bits (exact; a table).
float f16ToFloat(uint16_t bits);

} // namespace tsl::compiler::tc
