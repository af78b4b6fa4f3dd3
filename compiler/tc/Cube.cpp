// compiler/tc/Cube.cpp — mmad: the vectorised ieee_seq loop and the exact scalar modes.
#include "compiler/tc/Cube.h"

#include "runtime/ThreadPool.h"

#include <atomic>
#include <chrono>
#include <bit>
#include <condition_variable>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <utility>
#if defined(__F16C__) || defined(__AVX512F__)
#include <immintrin.h>
#endif
#include <cmath>
#include <cstring>
#include <span>
#include <type_traits>
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

/// n f16 values as floats (8 at a time where the CPU converts them).
void halves(const uint8_t* src, float* dst, int64_t n) {
  int64_t i = 0;
#if defined(__F16C__)
  for (; i + 8 <= n; i += 8)
    _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(src + 2 * i))));
#endif
  for (; i < n; ++i) {
    uint16_t bits;
    std::memcpy(&bits, src + 2 * i, 2);
    dst[i] = f16ToFloat(bits);
  }
}

/// A as rows × (kt·K0) and B as (kt·K0) × columns, row-major floats.
void unpack(const uint8_t* a, const uint8_t* b, const MmadShape& s, int64_t k0, std::vector<float>& af,
            std::vector<float>& bf) {
  const int64_t kp = s.kt * k0, cols = s.nt * kRows;
  af.assign(static_cast<size_t>(s.mt * kRows * kp), 0.0f);
  bf.assign(static_cast<size_t>(kp * cols), 0.0f);
  const int64_t per = kRows * k0; // elements per fractal
  if (s.ty == Ty::F16) { // whole fractals at a time: A's rows in place, B's transposed
    float tile[256];
    if (s.kt == 1) { // A's fractals one under another: row-major already
      halves(a, af.data(), s.mt * per);
    } else {
      for (int64_t mb = 0; mb < s.mt; ++mb)
        for (int64_t kb = 0; kb < s.kt; ++kb)
          for (int64_t r = 0; r < kRows; ++r)
            halves(a + 2 * ((mb * s.kt + kb) * per + r * k0), &af[static_cast<size_t>((mb * kRows + r) * kp + kb * k0)],
                   k0);
    }
    for (int64_t kb = 0; kb < s.kt; ++kb)
      for (int64_t nb = 0; nb < s.nt; ++nb) {
        halves(b + 2 * (kb * s.nt + nb) * per, tile, per);
        for (int64_t n = 0; n < kRows; ++n)
          for (int64_t k = 0; k < k0; ++k) bf[static_cast<size_t>((kb * k0 + k) * cols + nb * kRows + n)] = tile[n * k0 + k];
      }
    return;
  }
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
#if defined(__AVX512F__)
  // Eight rows at a time, each a vector of 16 accumulators: one load of B's row k feeds
  // eight fused multiply-adds.
  for (int64_t r0 = 0; r0 < kRows; r0 += 8) {
    __m512 acc[8];
    for (int i = 0; i < 8; ++i) acc[i] = init ? _mm512_setzero_ps() : _mm512_loadu_ps(c + (r0 + i) * kRows);
    const float* arow = af + r0 * kp;
    for (int64_t k = 0; k < kp; ++k) {
      const __m512 b = _mm512_loadu_ps(bf + k * cols);
      for (int i = 0; i < 8; ++i) acc[i] = _mm512_fmadd_ps(_mm512_set1_ps(arow[i * kp + k]), b, acc[i]);
    }
    for (int i = 0; i < 8; ++i) _mm512_storeu_ps(c + (r0 + i) * kRows, acc[i]);
  }
  return;
#endif
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
          NumericsCounters& counters, bool parallel) {
  const int64_t k0 = fractalCols(s.ty), kp = s.kt * k0, cols = s.nt * kRows;
  thread_local std::vector<float> af, bf;
  unpack(a, b, s, k0, af, bf);
  const int64_t fractals = s.mt * s.nt;
  // The exact scalar modes: each output element's products (int64 for int8, f64 for
  // block_fma: exact either way), accumulated in k order by Numerics.h.
  auto scalar = [&](auto zero, auto* out, const auto& accumulate) {
    using P = decltype(zero);
    std::vector<P> products(static_cast<size_t>(kp));
    for (int64_t nb = 0; nb < s.nt; ++nb)
      for (int64_t mb = 0; mb < s.mt; ++mb)
        for (int64_t r = 0; r < kRows; ++r)
          for (int64_t j = 0; j < kRows; ++j) {
            for (int64_t k = 0; k < kp; ++k)
              products[static_cast<size_t>(k)] = static_cast<P>(af[static_cast<size_t>((mb * kRows + r) * kp + k)]) *
                                                 static_cast<P>(bf[static_cast<size_t>(k * cols + nb * kRows + j)]);
            auto& acc = out[(nb * s.mt + mb) * kRows * kRows + r * kRows + j];
            acc = accumulate(s.init ? std::remove_reference_t<decltype(acc)>{} : acc, products);
          }
  };
  if (s.ty == Ty::I8) {
    scalar(int64_t{}, reinterpret_cast<int32_t*>(c),
           [&](int32_t acc, std::span<const int64_t> p) { return accumulateInt32(acc, p, counters); });
    return;
  }
  auto* out = reinterpret_cast<float*>(c);
  if (d.accumulation == Accumulation::BlockFma) {
    scalar(double{}, out, [&](float acc, std::span<const double> p) { return accumulateBlockFma(acc, p, d.blockFma); });
    return;
  }
  // ieee_seq: output fractals are independent; large mmads split across threads.
  const float* A = af.data();
  const float* B = bf.data();
  auto chunk = [&](int64_t lo, int64_t hi) {
    for (int64_t f = lo; f < hi; ++f) {
      const int64_t nb = f / s.mt, mb = f % s.mt;
      fractalIeeeSeq(A + mb * kRows * kp, B + nb * kRows, out + f * kRows * kRows, kp, cols, s.init);
    }
  };
  if (parallel) parallelFor(fractals, std::max<int64_t>(1, 512 / std::max<int64_t>(kp, 1)), chunk);
  else chunk(0, fractals);
}

namespace {

/// A thread that runs one job at a time for the thread that owns it: it spins a while
/// for the next job (mmads come microseconds apart), then sleeps.
class Helper {
public:
  Helper() : thread_([this] { loop(); }) {}
  ~Helper() {
    {
      std::lock_guard lock(mutex_);
      quit_ = true;
    }
    pending_.store(true, std::memory_order_release);
    wake_.notify_one();
    thread_.join();
  }
  void submit(std::function<void()> job) {
    join();
    job_ = std::move(job);
    busy_.store(true, std::memory_order_relaxed);
    pending_.store(true, std::memory_order_release);
    std::lock_guard lock(mutex_);
    if (sleeping_) wake_.notify_one();
  }
  void join() {
    while (busy_.load(std::memory_order_acquire)) std::this_thread::yield();
    if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
  }

private:
  void loop() {
    for (;;) {
      // Spin (yielding the core to a busier thread) up to 50 µs, then sleep.
      const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(50);
      for (int spins = 0; !pending_.load(std::memory_order_acquire); ++spins) {
        if ((spins & 63) != 0 || std::chrono::steady_clock::now() < until) {
          std::this_thread::yield();
          continue;
        }
        std::unique_lock lock(mutex_);
        sleeping_ = true;
        wake_.wait(lock, [&] { return pending_.load(std::memory_order_acquire); });
        sleeping_ = false;
      }
      pending_.store(false, std::memory_order_relaxed);
      if (quit_) return;
      try {
        job_();
      } catch (...) {
        error_ = std::current_exception();
      }
      busy_.store(false, std::memory_order_release);
    }
  }

  std::mutex mutex_;
  std::condition_variable wake_;
  bool sleeping_ = false, quit_ = false;
  std::atomic<bool> pending_{false}, busy_{false};
  std::function<void()> job_;
  std::exception_ptr error_;
  std::thread thread_;
};

Helper& helper() {
  thread_local Helper h;
  return h;
}

} // namespace

bool mmadCanOverlap(const MmadShape& s, const Device& d) {
  // Worth a hand-over only for an mmad of some size (32 fractals: ~130 000 MACs).
  return threadCount() > 1 && d.accumulation == Accumulation::IeeeSeq && (s.ty == Ty::F16 || s.ty == Ty::BF16) &&
         s.mt * s.kt * s.nt >= 32;
}

void mmadAsync(const uint8_t* a, const uint8_t* b, uint8_t* c, const MmadShape& s, const Device& d) {
  helper().submit([=, &d] {
    NumericsCounters unused; // ieee_seq on f16 / bf16 counts nothing
    mmad(a, b, c, s, d, unused, false);
  });
}

void mmadJoin() { helper().join(); }

} // namespace tsl::compiler::tc
