// compiler/tc/Numerics.h — the tensor core's arithmetic, bit for bit.
//
// Inputs are rounded to fp16 or bf16 (round to nearest, ties to even, from the exact
// value: no double rounding through f32), products are exact, and the cube accumulates
// either in k order with one f32 rounding per addition (`ieee_seq`) or NVIDIA-style in
// blocks (`block_fma`); int8 products accumulate in int32, wrapping
// (docs/tensor-core.md, "Numerics"; known answers in its "Known answers", group
// N). Counters record what rounding did.
#pragma once

#include "compiler/tc/Device.h"

#include <cstdint>
#include <span>

namespace tsl::compiler::tc {

/// What rounding and accumulation did, summed over a program's run.
struct NumericsCounters {
  int64_t overflow = 0;  ///< finite inputs that became ±inf (or ±max, saturating)
  int64_t underflow = 0; ///< nonzero inputs that became zero
  int64_t nan = 0;       ///< NaN inputs (become 0 on a device whose `nan` is zero)
  int64_t wraps = 0;     ///< int32 accumulations that wrapped
  bool operator==(const NumericsCounters&) const = default;
};

/// fp16 bits of the exact value `x`, rounded to nearest even; overflow to ±inf (or to
/// ±65504 under Overflow::Saturate), NaN to 0x7E00 (or 0 under NanMode::Zero).
uint16_t toF16(double x, const Device& d, NumericsCounters& counters);
/// toF16 of an f32 (given by its bits), bit for bit and counter for counter, without
/// going through f64: the emulator's copies convert every input element with it.
uint16_t f32ToF16(uint32_t bits, const Device& d, NumericsCounters& counters);
/// bf16 bits of the f32 with `bits`, likewise (NaN to sign | 0x7FC0).
uint16_t toBf16(uint32_t bits, const Device& d, NumericsCounters& counters);
/// The value of fp16 / bf16 bits.
double fromF16(uint16_t bits);
double fromBf16(uint16_t bits);

/// f32 nearest to the exact sum a + b (one rounding, ties to even; exact for any two
/// doubles, so products of bf16 inputs formed in f64 are added without double rounding).
float roundSum(double a, double b);

/// c + Σ a_i·b_i over the products (exact, given in f64) in k order, as `ieee_seq`: one
/// f32 rounding per addition.
float accumulateIeeeSeq(float c, std::span<const double> products);
/// The same as `block_fma`: blocks of nb products with the accumulator, aligned to the
/// largest exponent, truncated to 24 + extraBits bits, summed exactly, then rounded to
/// f32 once (toward zero, or to nearest).
float accumulateBlockFma(float c, std::span<const double> products, const BlockFma& mode);
/// c + Σ products in int32, wrapping; counts the additions that wrapped.
int32_t accumulateInt32(int32_t c, std::span<const int64_t> products, NumericsCounters& counters);

} // namespace tsl::compiler::tc
