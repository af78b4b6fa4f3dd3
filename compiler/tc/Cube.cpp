// compiler/tc/Cube.cpp — mmad: the vectorised ieee_seq loop and the exact scalar modes.
#include "compiler/tc/Cube.h"

#include "runtime/ThreadPool.h"

#include <bit>
#include <cmath>
#include <cstring>
#include <vector>

namespace tsl::compiler::tc {

namespace {

constexpr int64_t kRows = 16; ///< a fractal's rows (m or n)

const std::vector<float>& f16Table() {
  static const std::vector<float> table = [] {
    std::vector<float> t(65536);
    for (uint32_t i = 0; i < 65536; ++i) t[i] = static_cast<float>(fromF16(static_cast<uint16_t>(i)));
    return t;
  }();
  return table;
}

/// The f32 value of a cube input element (f16, bf16 or int8 as exact floats).
inline float inputValue(const uint8_t* base, int64_t i, Ty ty) {
  if (ty == Ty::I8) return static_cast<float>(static_cast<int8_t>(base[i]));
  uint16_t bits;
  std::memcpy(&bits, base + 2 * i, 2);
  if (ty == Ty::F16) return f16ToFloat(bits);
  return std::bit_cast<float>(static_cast<uint32_t>(bits) << 16);
}

/// A as rows × (kt·K0) and B as (kt·K0) × columns, row-major floats.
void unpack(const uint8_t* a, const uint8_t* b, const MmadShape& s, int64_t k0, std::vector<float>& af,
            std::vector<float>& bf) {
  const int64_t kp = s.kt * k0, cols = s.nt * kRows;
  af.assign(static_cast<size_t>(s.mt * kRows * kp), 0.0f);
  bf.assign(static_cast<size_t>(kp * cols), 0.0f);
  const int64_t per = kRows * k0; // elements per fractal
  for (int64_t mb = 0; mb < s.mt; ++mb)
    for (int64_t kb = 0; kb < s.kt; ++kb)
      for (int64_t r = 0; r < kRows; ++r)
        for (int64_t c = 0; c < k0; ++c)
          af[static_cast<size_t>((mb * kRows + r) * kp + kb * k0 + c)] =
              inputValue(a, (mb * s.kt + kb) * per + r * k0 + c, s.ty);
  for (int64_t kb = 0; kb < s.kt; ++kb)
    for (int64_t nb = 0; nb < s.nt; ++nb)
      for (int64_t n = 0; n < kRows; ++n)
        for (int64_t k = 0; k < k0; ++k)
          bf[static_cast<size_t>((kb * k0 + k) * cols + nb * kRows + n)] =
              inputValue(b, (kb * s.nt + nb) * per + n * k0 + k, s.ty);
}

/// One output fractal under ieee_seq: acc = fma(a, b, acc) for k ascending.
void fractalIeeeSeq(const float* af, const float* bf, float* c, int64_t kp, int64_t cols, bool init) {
  for (int64_t r = 0; r < kRows; ++r) {
    float acc[kRows];
    for (int64_t j = 0; j < kRows; ++j) acc[j] = init ? 0.0f : c[r * kRows + j];
    const float* arow = af + r * kp;
    for (int64_t k = 0; k < kp; ++k) {
      const float x = arow[k];
      const float* brow = bf + k * cols;
#pragma GCC unroll 16
      for (int64_t j = 0; j < kRows; ++j) acc[j] = std::fma(x, brow[j], acc[j]);
    }
    for (int64_t j = 0; j < kRows; ++j) c[r * kRows + j] = acc[j];
  }
}

} // namespace

float f16ToFloat(uint16_t bits) { return f16Table()[bits]; }

void mmad(const uint8_t* a, const uint8_t* b, uint8_t* c, const MmadShape& s, const Device& d,
          NumericsCounters& counters) {
  const int64_t k0 = fractalCols(s.ty), kp = s.kt * k0, cols = s.nt * kRows;
  thread_local std::vector<float> af, bf;
  unpack(a, b, s, k0, af, bf);
  const int64_t fractals = s.mt * s.nt;
  if (s.ty == Ty::I8) {
    std::vector<int64_t> products(static_cast<size_t>(kp));
    auto* out = reinterpret_cast<int32_t*>(c);
    for (int64_t nb = 0; nb < s.nt; ++nb)
      for (int64_t mb = 0; mb < s.mt; ++mb)
        for (int64_t r = 0; r < kRows; ++r)
          for (int64_t j = 0; j < kRows; ++j) {
            for (int64_t k = 0; k < kp; ++k)
              products[static_cast<size_t>(k)] = static_cast<int64_t>(af[static_cast<size_t>((mb * kRows + r) * kp + k)]) *
                                                 static_cast<int64_t>(bf[static_cast<size_t>(k * cols + nb * kRows + j)]);
            int32_t& acc = out[(nb * s.mt + mb) * kRows * kRows + r * kRows + j];
            acc = accumulateInt32(s.init ? 0 : acc, products, counters);
          }
    return;
  }
  auto* out = reinterpret_cast<float*>(c);
  if (d.accumulation == Accumulation::BlockFma) {
    std::vector<double> products(static_cast<size_t>(kp));
    for (int64_t nb = 0; nb < s.nt; ++nb)
      for (int64_t mb = 0; mb < s.mt; ++mb)
        for (int64_t r = 0; r < kRows; ++r)
          for (int64_t j = 0; j < kRows; ++j) {
            for (int64_t k = 0; k < kp; ++k)
              products[static_cast<size_t>(k)] = static_cast<double>(af[static_cast<size_t>((mb * kRows + r) * kp + k)]) *
                                                 static_cast<double>(bf[static_cast<size_t>(k * cols + nb * kRows + j)]);
            float& acc = out[(nb * s.mt + mb) * kRows * kRows + r * kRows + j];
            acc = accumulateBlockFma(s.init ? 0.0f : acc, products, d.blockFma);
          }
    return;
  }
  // ieee_seq: output fractals are independent; large mmads split across threads.
  const float* A = af.data();
  const float* B = bf.data();
  parallelFor(fractals, std::max<int64_t>(1, 512 / std::max<int64_t>(kp, 1)), [&](int64_t lo, int64_t hi) {
    for (int64_t f = lo; f < hi; ++f) {
      const int64_t nb = f / s.mt, mb = f % s.mt;
      fractalIeeeSeq(A + mb * kRows * kp, B + nb * kRows, out + f * kRows * kRows, kp, cols, s.init);
    }
  });
}

} // namespace tsl::compiler::tc
