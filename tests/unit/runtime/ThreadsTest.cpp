// tests/unit/runtime/ThreadsTest.cpp — what every worker of the pool computes alike.
//
// Subnormal floats are neither flushed to zero nor treated as zero on input, on the
// calling thread or in any worker (TSL never sets FTZ/DAZ), and each chunk runs under
// the caller's rounding and denormal modes (docs/cpu-backend.md, "Threads"), so a
// kernel's result does not depend on which thread ran which chunk.
#include "Reference.h"
#include "runtime/ThreadPool.h"

#include <cmath>
#include <limits>
#include <xmmintrin.h>

using namespace tsl;
using namespace tsl::test;

TEST_CASE("subnormals survive in every worker of the pool, as on the calling thread") {
  // Large enough that parallelFor splits it over every thread.
  const int64_t n = int64_t(1) << 20;
  const float tiny = std::numeric_limits<float>::denorm_min() * 3.0f; // a subnormal
  Tensor x = Tensor::empty(DType::F32, {n});
  auto* px = reinterpret_cast<float*>(x.mutableData());
  for (int64_t i = 0; i < n; ++i) px[i] = tiny * static_cast<float>(1 + i % 7);
  // Elementwise: subnormal × 2 and subnormal + subnormal stay exact subnormals.
  const Tensor doubled = applyBinary(BinaryOp::Mul, x, Tensor::ofFloat(2.0, DType::F32));
  const Tensor summed = applyBinary(BinaryOp::Add, x, x);
  const auto* pd = reinterpret_cast<const float*>(doubled.data());
  const auto* ps = reinterpret_cast<const float*>(summed.data());
  int64_t wrong = 0;
  for (int64_t i = 0; i < n; ++i) {
    const float expected = tiny * static_cast<float>(2 * (1 + i % 7));
    wrong += pd[i] != expected || ps[i] != expected || !(std::fpclassify(pd[i]) == FP_SUBNORMAL);
  }
  CHECK(wrong == 0);
  // And inside parallelFor's chunks themselves, whichever thread runs them.
  std::vector<float> out(static_cast<size_t>(n));
  volatile float scale = 0.5f;
  parallelFor(n, 1024, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) out[static_cast<size_t>(i)] = px[i] * 4.0f * scale; // ×2, exactly
  });
  wrong = 0;
  for (int64_t i = 0; i < n; ++i) wrong += out[static_cast<size_t>(i)] != pd[i];
  CHECK(wrong == 0);
  CHECK(threadCount() >= 1);
  // A caller that flushes subnormals (FTZ and DAZ set, as some hosts do) has its chunks
  // flushed too, in every worker: the mode travels with the work.
  const unsigned saved = _mm_getcsr();
  _mm_setcsr(saved | 0x8040u); // FTZ | DAZ
  parallelFor(n, 1024, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) out[static_cast<size_t>(i)] = px[i] * 4.0f * scale;
  });
  _mm_setcsr(saved);
  wrong = 0;
  for (int64_t i = 0; i < n; ++i) wrong += out[static_cast<size_t>(i)] != 0.0f;
  CHECK(wrong == 0);
  CHECK((_mm_getcsr() & 0x8040u) == (saved & 0x8040u));
}
