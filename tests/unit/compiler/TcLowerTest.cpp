// tests/unit/compiler/TcLowerTest.cpp — lowered matmul and conv2d programs on the emulator:
// the costs of group C executed (not computed beside the program), results against a
// float64 reference of the rounded inputs within the documented bounds on odd sizes,
// bitwise identity across tilings, double buffering, load3d's convolution (group M), and
// the device without FIXPIPE.
#include "compiler/tc/Emulator.h"
#include "compiler/tc/Lower.h"
#include "runtime/Layout.h"
#include "runtime/Tensor.h"

#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <tuple>

using namespace tsl;
using namespace tsl::compiler::tc;

namespace {

constexpr double kU32 = 1.0 / (1 << 24); ///< f32's unit roundoff, 2^-24
constexpr double kU16 = 1.0 / (1 << 11); ///< f16's

std::vector<float> randoms(int64_t n, uint32_t seed, float scale = 1.0f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-scale, scale);
  std::vector<float> v(static_cast<size_t>(n));
  for (float& x : v) x = dist(rng);
  return v;
}

double rounded(float x, Ty cube) {
  NumericsCounters c;
  if (cube == Ty::BF16) {
    uint32_t bits;
    std::memcpy(&bits, &x, 4);
    return fromBf16(toBf16(bits, preset("a2"), c));
  }
  return fromF16(toF16(x, preset("a2"), c));
}

struct Run {
  std::vector<float> out;
  TcStats stats;
};

/// Runs C = A·B (row-major f32 in and out) with `tiling` (or the searched one).
Run matmul(const std::vector<float>& a, const std::vector<float>& b, int64_t m, int64_t k, int64_t n,
           const Device& d, std::optional<Tiling> tiling = {}, Ty cube = Ty::F16, int64_t batches = 1) {
  MatmulSpec s;
  s.m = m, s.k = k, s.n = n, s.cube = cube;
  s.aBatch.clear(), s.bBatch.clear();
  for (int64_t i = 0; i < batches; ++i) s.aBatch.push_back(i), s.bBatch.push_back(i);
  s.aBatches = s.bBatches = batches;
  const Tiling t = tiling ? *tiling : chooseMatmulTiling(s, d);
  const Program p = lowerMatmul(s, t, d);
  Run r;
  r.out.assign(static_cast<size_t>(batches * m * n), std::nanf(""));
  std::vector<GmView> gm{{reinterpret_cast<uint8_t*>(const_cast<float*>(a.data())), batches * m * k},
                         {reinterpret_cast<uint8_t*>(const_cast<float*>(b.data())), batches * k * n},
                         {reinterpret_cast<uint8_t*>(r.out.data()), batches * m * n}};
  r.stats = Emulator(d).run(p, gm, {});
  return r;
}

/// Every element within γ_K·(|Ã||B̃|) of the f64 product of the rounded inputs (`bound`
/// gives the factor), and within the input-rounding term more of the unrounded product.
void checkBound(const Run& r, const std::vector<float>& a, const std::vector<float>& b, int64_t m, int64_t k, int64_t n,
                Ty cube, double factor, int64_t batches = 1) {
  const double uIn = cube == Ty::BF16 ? 1.0 / 256 : kU16;
  for (int64_t bt = 0; bt < batches; ++bt)
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double exactRounded = 0, absRounded = 0, exact = 0, absExact = 0;
        for (int64_t p = 0; p < k; ++p) {
          const float x = a[static_cast<size_t>((bt * m + i) * k + p)], y = b[static_cast<size_t>((bt * k + p) * n + j)];
          const double xr = rounded(x, cube), yr = rounded(y, cube);
          exactRounded += xr * yr, absRounded += std::fabs(xr * yr);
          exact += static_cast<double>(x) * y, absExact += std::fabs(static_cast<double>(x) * y);
        }
        const double got = r.out[static_cast<size_t>((bt * m + i) * n + j)];
        REQUIRE(std::fabs(got - exactRounded) <= factor * absRounded);
        REQUIRE(std::fabs(got - exact) <= factor * absRounded + (2 * uIn + uIn * uIn) * absExact);
      }
}

double gamma(int64_t k, double u) { return static_cast<double>(k) * u / (1 - static_cast<double>(k) * u); }

} // namespace

TEST_CASE("C1: the 128³ fp16 matmul resident once, executed: 512 cube cycles, 2240 serial, 22.857 %") {
  MatmulSpec s;
  s.m = s.k = s.n = 128, s.aTy = s.bTy = s.outTy = Ty::F16;
  const Program p = lowerMatmul(s, Tiling{8, 8, 8, 1}, preset("a2"));
  const TcStats st = Emulator(preset("a2")).time(p);
  CHECK(st.cubeCycles == 512);
  CHECK(st.macs == 2097152);
  CHECK(st.bytes[static_cast<size_t>(Path::GmToL1)] == 65536);
  CHECK(st.bytes[static_cast<size_t>(Path::L1ToL0a)] == 32768);
  CHECK(st.bytes[static_cast<size_t>(Path::L1ToL0b)] == 32768);
  CHECK(st.bytes[static_cast<size_t>(Path::L0cToGm)] == 32768);
  CHECK(st.serialCycles == 1024 + 64 + 128 + 512 + 512);
  CHECK(st.cycles == 2240);
  CHECK(st.utilization() == doctest::Approx(0.22857).epsilon(1e-4));
}

TEST_CASE("C2: 128×128×512 in 4 K-steps, double-buffered: 5312 cycles; single-buffered 5888; L0 exactly full") {
  MatmulSpec s;
  s.m = s.n = 128, s.k = 512, s.aTy = s.bTy = s.outTy = Ty::F16;
  const Device d = preset("a2");
  const TcStats two = Emulator(d).time(lowerMatmul(s, Tiling{8, 8, 8, 2}, d));
  CHECK(two.busy[static_cast<size_t>(Pipe::Mte2)] == 4096);
  CHECK(two.busy[static_cast<size_t>(Pipe::Mte1)] == 768);
  CHECK(two.busy[static_cast<size_t>(Pipe::Cube)] == 2048);
  CHECK(two.busy[static_cast<size_t>(Pipe::Fixpipe)] == 512);
  CHECK(two.serialCycles == 7424);
  CHECK(two.cycles == 5312);
  CHECK(two.utilization() == doctest::Approx(0.3855).epsilon(1e-3));
  CHECK(two.peak[static_cast<size_t>(Buf::L0A)] == 65536);
  CHECK(two.peak[static_cast<size_t>(Buf::L0B)] == 65536);
  const TcStats one = Emulator(d).time(lowerMatmul(s, Tiling{8, 8, 8, 1}, d));
  CHECK(one.cycles == 5888);
}

TEST_CASE("C4: a 100×30×50 matmul executes 56 fractals: 229,376 padded vs 150,000 useful MACs") {
  MatmulSpec s;
  s.m = 100, s.k = 30, s.n = 50;
  const TcStats st = Emulator(preset("a2")).time(lowerMatmul(s, Tiling{7, 4, 2, 2}, preset("a2")));
  CHECK(st.cubeCycles == 56);
  CHECK(st.paddedMacs == 229376);
  CHECK(st.macs == 150000);
}

TEST_CASE("ieee_seq on odd sizes: within γ_K(2^-24)·|Ã||B̃| of float64, for f16 and bf16, batched") {
  const Device d = preset("a2");
  const int64_t sizes[] = {1, 15, 17, 33, 100};
  uint32_t seed = 1;
  for (int64_t m : sizes)
    for (int64_t k : sizes)
      for (int64_t n : sizes) {
        CAPTURE(m);
        CAPTURE(k);
        CAPTURE(n);
        const auto a = randoms(m * k, seed++), b = randoms(k * n, seed++);
        checkBound(matmul(a, b, m, k, n, d), a, b, m, k, n, Ty::F16, gamma(k, kU32));
      }
  const auto a = randoms(3 * 17 * 33, 99, 1e3f), b = randoms(3 * 33 * 15, 98, 1e-3f);
  checkBound(matmul(a, b, 17, 33, 15, d, {}, Ty::BF16, 3), a, b, 17, 33, 15, Ty::BF16, gamma(33, kU32), 3);
  checkBound(matmul(a, b, 17, 33, 15, d, {}, Ty::F16, 3), a, b, 17, 33, 15, Ty::F16, gamma(33, kU32), 3);
}

TEST_CASE("block_fma: within the first-order bound γ_{6·ceil(K/4)}(2^-23)·|Ã||B̃|") {
  Device d = preset("a2");
  d.accumulation = Accumulation::BlockFma;
  for (int64_t k : {1, 15, 17, 33, 100}) {
    CAPTURE(k);
    const auto a = randoms(17 * k, 5), b = randoms(k * 15, 6);
    checkBound(matmul(a, b, 17, k, 15, d), a, b, 17, k, 15, Ty::F16, gamma(6 * ((k + 3) / 4), 2 * kU32));
  }
}

TEST_CASE("C5: changing the M/N tiling leaves every bit of the result, and max(busy) ≤ cycles ≤ serial") {
  const Device d = preset("a2");
  const auto a = randoms(100 * 100, 11), b = randoms(100 * 100, 12);
  const Run base = matmul(a, b, 100, 100, 100, d, Tiling{1, 1, 7, 2});
  for (const Tiling& t : {Tiling{2, 4, 7, 2}, Tiling{7, 7, 7, 1}, Tiling{4, 1, 7, 2}}) {
    const Run other = matmul(a, b, 100, 100, 100, d, t);
    CHECK(std::memcmp(base.out.data(), other.out.data(), base.out.size() * 4) == 0);
    for (const TcStats* s : {&base.stats, &other.stats}) {
      CHECK(*std::max_element(s->busy.begin(), s->busy.end()) <= s->cycles);
      CHECK(s->cycles <= s->serialCycles);
    }
  }
}

TEST_CASE("double buffering a large matmul: below the single-buffered schedule, within the bounds") {
  MatmulSpec s;
  s.m = s.n = s.k = 512;
  const Device d = preset("a2");
  std::string report;
  const Tiling best = chooseMatmulTiling(s, d, &report);
  CHECK(best.buffers == 2);
  CHECK(report.find("tiles") != std::string::npos);
  const TcStats two = Emulator(d).time(lowerMatmul(s, best, d));
  Tiling single = best;
  single.buffers = 1;
  const TcStats one = Emulator(d).time(lowerMatmul(s, single, d));
  CHECK(two.cycles < one.cycles);
  CHECK(*std::max_element(two.busy.begin(), two.busy.end()) <= two.cycles);
  CHECK(two.cycles <= two.serialCycles);
}

TEST_CASE("M: load3d's convolution — 25×288 by 288×32, 72 cube cycles, 29 % useful; equals a direct convolution") {
  const Device d = preset("a2");
  for (int64_t stride : {1, 2}) {
    CAPTURE(stride);
    ConvSpec s;
    s.batch = 1, s.c = 19, s.h = s.w = 5, s.o = 20, s.kh = s.kw = 3, s.padH = s.padW = 1;
    s.strideH = s.strideW = stride;
    const int64_t oh = s.oh(), ow = s.ow();
    CHECK(oh == (stride == 1 ? 5 : 3));
    std::vector<float> xs = randoms(19 * 25, 21), ws = randoms(20 * 19 * 9, 22);
    const Tensor x = toLayout(Tensor::wrap(xs.data(), DType::F32, Shape{1, 19, 5, 5}), Layout::NC1HWC0);
    const Tensor w = toLayout(Tensor::wrap(ws.data(), DType::F32, Shape{20, 19, 3, 3}), Layout::FractalZ);
    Tensor out = emptyInLayout(DType::F32, Shape{1, 20, oh, ow}, Layout::NC1HWC0);
    const Program p = lowerConv(s, Tiling{2, 2, 18, 2}, d);
    std::vector<GmView> gm{{reinterpret_cast<uint8_t*>(const_cast<char*>(x.physicalData())), x.physicalShape().numel()},
                           {reinterpret_cast<uint8_t*>(const_cast<char*>(w.physicalData())), w.physicalShape().numel()},
                           {reinterpret_cast<uint8_t*>(const_cast<char*>(out.physicalData())), out.physicalShape().numel()}};
    const TcStats st = Emulator(d).run(p, gm, {});
    if (stride == 1) {
      CHECK(st.cubeCycles == 72);
      CHECK(st.paddedMacs == 294912);
      CHECK(st.macs == 85500);
    }
    const Tensor got = toLayout(out, Layout::RowMajor);
    for (int64_t o = 0; o < 20; ++o)
      for (int64_t y = 0; y < oh; ++y)
        for (int64_t xq = 0; xq < ow; ++xq) {
          double ref = 0, mag = 0;
          for (int64_t c = 0; c < 19; ++c)
            for (int64_t ky = 0; ky < 3; ++ky)
              for (int64_t kx = 0; kx < 3; ++kx) {
                const int64_t iy = y * stride - 1 + ky, ix = xq * stride - 1 + kx;
                if (iy < 0 || iy >= 5 || ix < 0 || ix >= 5) continue;
                const double p = rounded(xs[static_cast<size_t>((c * 5 + iy) * 5 + ix)], Ty::F16) *
                                 rounded(ws[static_cast<size_t>(((o * 19 + c) * 3 + ky) * 3 + kx)], Ty::F16);
                ref += p, mag += std::fabs(p);
              }
          const float v = reinterpret_cast<const float*>(got.data())[(o * oh + y) * ow + xq];
          REQUIRE(std::fabs(v - ref) <= gamma(288, kU32) * mag);
        }
  }
}

TEST_CASE("910a: no FIXPIPE, so L0C drains through UB with the epilogue on the vector unit") {
  const Device d = preset("910a");
  MatmulSpec s;
  s.m = 33, s.k = 17, s.n = 40;
  s.epilogue.bias = true, s.epilogue.relu = true;
  const auto a = randoms(33 * 17, 31), b = randoms(17 * 40, 32), bias = randoms(40, 33);
  const Program p = lowerMatmul(s, chooseMatmulTiling(s, d), d);
  std::vector<float> out(33 * 40);
  std::vector<GmView> gm{{reinterpret_cast<uint8_t*>(const_cast<float*>(a.data())), 33 * 17},
                         {reinterpret_cast<uint8_t*>(const_cast<float*>(b.data())), 17 * 40},
                         {reinterpret_cast<uint8_t*>(out.data()), 33 * 40},
                         {reinterpret_cast<uint8_t*>(const_cast<float*>(bias.data())), 40}};
  const TcStats st = Emulator(d).run(p, gm, {});
  CHECK(st.bytes[static_cast<size_t>(Path::L0cToGm)] == 0);
  CHECK(st.bytes[static_cast<size_t>(Path::L0cToUb)] == 33 * 40 * 4);
  CHECK(st.busy[static_cast<size_t>(Pipe::Vector)] > 0);
  for (int64_t i = 0; i < 33; ++i)
    for (int64_t j = 0; j < 40; ++j) {
      double ref = 0, mag = 0;
      for (int64_t p2 = 0; p2 < 17; ++p2) {
        const double t = rounded(a[static_cast<size_t>(i * 17 + p2)], Ty::F16) * rounded(b[static_cast<size_t>(p2 * 40 + j)], Ty::F16);
        ref += t, mag += std::fabs(t);
      }
      ref = std::max(0.0, ref + bias[static_cast<size_t>(j)]);
      REQUIRE(std::fabs(out[static_cast<size_t>(i * 40 + j)] - ref) <= gamma(18, kU32) * (mag + std::fabs(bias[static_cast<size_t>(j)])));
    }
}

TEST_CASE("a trace has one box per instruction on its pipe, as trace-event JSON") {
  MatmulSpec s;
  s.m = s.k = s.n = 32;
  const Device d = preset("a2");
  std::vector<float> a(32 * 32, 1.0f), out(32 * 32);
  std::vector<GmView> gm{{reinterpret_cast<uint8_t*>(a.data()), 1024},
                         {reinterpret_cast<uint8_t*>(a.data()), 1024},
                         {reinterpret_cast<uint8_t*>(out.data()), 1024}};
  std::vector<TraceEvent> trace;
  Emulator::Options o;
  o.trace = &trace;
  const Program p = lowerMatmul(s, Tiling{2, 2, 2, 2}, d);
  Emulator(d).run(p, gm, o);
  CHECK(trace.size() == p.code.size());
  const std::string json = traceJson(trace);
  CHECK(json.find("\"ph\": \"X\"") != std::string::npos);
  CHECK(json.find("\"name\": \"mmad\"") != std::string::npos);
  CHECK(json.find("\"thread_name\"") != std::string::npos);
  CHECK(out[0] == 32.0f);
}

namespace {

struct ConvCase {
  int64_t n, c, h, w, o, kh, kw, strideH, strideW, padH, padW, dilH, dilW;
};

/// Runs `t` lowered with the searched tiling on the emulator (which faults on any access
/// outside a GM tensor) and checks every output element within γ_K(2^-24) of the float64
/// convolution of the f16-rounded inputs (zero padding), and the MAC count.
void checkConv(const ConvCase& t, uint32_t seed) {
  const Device d = preset("a2");
  ConvSpec s;
  s.batch = t.n, s.c = t.c, s.h = t.h, s.w = t.w, s.o = t.o, s.kh = t.kh, s.kw = t.kw;
  s.strideH = t.strideH, s.strideW = t.strideW, s.padH = t.padH, s.padW = t.padW, s.dilH = t.dilH, s.dilW = t.dilW;
  const int64_t oh = s.oh(), ow = s.ow();
  std::vector<float> xs = randoms(t.n * t.c * t.h * t.w, seed), ws = randoms(t.o * t.c * t.kh * t.kw, seed + 1);
  const Tensor x = toLayout(Tensor::wrap(xs.data(), DType::F32, Shape{t.n, t.c, t.h, t.w}), Layout::NC1HWC0);
  const Tensor w = toLayout(Tensor::wrap(ws.data(), DType::F32, Shape{t.o, t.c, t.kh, t.kw}), Layout::FractalZ);
  Tensor out = emptyInLayout(DType::F32, Shape{t.n, t.o, oh, ow}, Layout::NC1HWC0);
  const Program p = lowerConv(s, chooseConvTiling(s, d), d);
  std::vector<GmView> gm{{reinterpret_cast<uint8_t*>(const_cast<char*>(x.physicalData())), x.physicalShape().numel()},
                         {reinterpret_cast<uint8_t*>(const_cast<char*>(w.physicalData())), w.physicalShape().numel()},
                         {reinterpret_cast<uint8_t*>(const_cast<char*>(out.physicalData())), out.physicalShape().numel()}};
  const TcStats st = Emulator(d).run(p, gm, {});
  CHECK(st.macs == t.n * t.o * oh * ow * t.c * t.kh * t.kw);
  const Tensor got = toLayout(out, Layout::RowMajor);
  const int64_t kk = t.c * t.kh * t.kw;
  for (int64_t b = 0; b < t.n; ++b)
    for (int64_t o = 0; o < t.o; ++o)
      for (int64_t y = 0; y < oh; ++y)
        for (int64_t xq = 0; xq < ow; ++xq) {
          double ref = 0, mag = 0;
          for (int64_t c = 0; c < t.c; ++c)
            for (int64_t ky = 0; ky < t.kh; ++ky)
              for (int64_t kx = 0; kx < t.kw; ++kx) {
                const int64_t iy = y * t.strideH - t.padH + ky * t.dilH, ix = xq * t.strideW - t.padW + kx * t.dilW;
                if (iy < 0 || iy >= t.h || ix < 0 || ix >= t.w) continue;
                const double v = rounded(xs[static_cast<size_t>(((b * t.c + c) * t.h + iy) * t.w + ix)], Ty::F16) *
                                 rounded(ws[static_cast<size_t>(((o * t.c + c) * t.kh + ky) * t.kw + kx)], Ty::F16);
                ref += v, mag += std::fabs(v);
              }
          const float v = reinterpret_cast<const float*>(got.data())[((b * t.o + o) * oh + y) * ow + xq];
          REQUIRE(std::fabs(v - ref) <= gamma(kk, kU32) * mag);
        }
}

} // namespace

TEST_CASE("conv2d on odd sizes, batched, strided and dilated: within γ_K of float64") {
  struct Case {
    int64_t n, c, h, w, o, k, stride, pad, dil;
  };
  uint32_t seed = 100;
  for (const Case& t : {Case{1, 1, 1, 1, 1, 1, 1, 0, 1}, Case{2, 15, 17, 15, 17, 3, 1, 1, 1}, Case{1, 17, 15, 33, 33, 3, 2, 1, 1},
                        Case{2, 33, 9, 17, 15, 3, 1, 2, 2}, Case{1, 3, 100, 17, 1, 5, 3, 2, 1}, Case{1, 100, 7, 7, 100, 1, 1, 0, 1}}) {
    CAPTURE(t.c);
    CAPTURE(t.h);
    CAPTURE(t.o);
    checkConv({t.n, t.c, t.h, t.w, t.o, t.k, t.k, t.stride, t.stride, t.pad, t.pad, t.dil, t.dil}, seed);
    seed += 2;
  }
}

// Padding up to the kernel's extent and past it: output rows and columns that see only
// padding, tiles of output positions whose every input row lies above or below the image
// (the band copied into L1 once started past the input's end: "accesses elements [400,
// 480) of GM tensor %0, which has 400" for a 5×5 image, a 3×3 kernel and padding 3).
TEST_CASE("conv2d with every padding from 0 to past the kernel, strides and dilations: in bounds, within γ_K") {
  uint32_t seed = 300;
  int cases = 0;
  for (int64_t k : {1, 2, 3})
    for (int64_t pad = 0; pad <= k + 1; ++pad)
      for (int64_t stride : {1, 2, 3})
        for (int64_t dil : {1, 2}) {
          if (k == 1 && dil == 2) continue; // the same convolution
          const ConvCase t{1, 3, 5, 7, 2, k, k, stride, stride, pad, pad, dil, dil};
          CAPTURE(k);
          CAPTURE(pad);
          CAPTURE(stride);
          CAPTURE(dil);
          checkConv(t, seed);
          seed += 2;
          ++cases;
        }
  CHECK(cases == 63);
  // Asymmetric: padding, stride and dilation differing between the axes, a batch, more
  // channels than one block, images of one row or column, a kernel wider than it is tall.
  for (const ConvCase& t : {ConvCase{2, 17, 5, 5, 3, 3, 3, 1, 1, 3, 0, 1, 1}, ConvCase{1, 3, 5, 5, 2, 3, 3, 1, 2, 0, 4, 1, 1},
                            ConvCase{1, 3, 9, 4, 2, 3, 2, 2, 1, 5, 3, 2, 1}, ConvCase{2, 5, 1, 9, 4, 1, 3, 1, 2, 2, 3, 1, 2},
                            ConvCase{1, 2, 11, 1, 3, 3, 1, 3, 1, 4, 2, 1, 1}, ConvCase{1, 20, 3, 3, 17, 2, 3, 2, 3, 3, 4, 2, 1},
                            ConvCase{1, 1, 40, 3, 1, 3, 3, 1, 1, 4, 4, 1, 1}}) {
    CAPTURE(t.h);
    CAPTURE(t.padH);
    checkConv(t, seed);
    seed += 2;
  }
}

TEST_CASE("an empty axis has no tiling and no program: a shape error, never a division by zero") {
  // The cube lowering table makes such results without a program (jit-tc.tsl); asked
  // directly, the tiling search and the lowerings refuse them (the search once divided by
  // the zero fractals of an empty axis: SIGFPE).
  const Device d = preset("a2");
  auto shapeError = [](const auto& f) {
    try {
      f();
    } catch (const Error& e) {
      return e.kind() == ErrorKind::Shape && std::string(e.what()).find("empty") != std::string::npos;
    }
    return false;
  };
  for (const auto& [m, k, n] : {std::tuple{0, 5, 4}, {3, 0, 4}, {3, 5, 0}, {0, 0, 0}}) {
    CAPTURE(m);
    CAPTURE(k);
    CAPTURE(n);
    MatmulSpec s;
    s.m = m, s.k = k, s.n = n;
    CHECK(shapeError([&] { chooseMatmulTiling(s, d); }));
    CHECK(shapeError([&] { lowerMatmul(s, Tiling{1, 1, 1, 2}, d); }));
  }
  ConvSpec base;
  base.c = 2, base.h = 4, base.w = 4, base.o = 3, base.kh = 3, base.kw = 3, base.padH = base.padW = 1;
  for (int64_t ConvSpec::*axis : {&ConvSpec::c, &ConvSpec::h, &ConvSpec::w, &ConvSpec::o, &ConvSpec::kh, &ConvSpec::kw}) {
    ConvSpec s = base;
    s.*axis = 0;
    CHECK(shapeError([&] { chooseConvTiling(s, d); }));
    CHECK(shapeError([&] { lowerConv(s, Tiling{1, 1, 1, 2}, d); }));
  }
  ConvSpec noImages = base;
  noImages.batch = 0;
  CHECK(shapeError([&] { lowerConv(noImages, Tiling{1, 1, 1, 2}, d); }));
  // a tiling of no fractals along an axis would loop forever: refused too
  MatmulSpec s;
  s.m = s.k = s.n = 16;
  for (const Tiling& t : {Tiling{0, 1, 1, 2}, Tiling{1, 0, 1, 2}, Tiling{1, 1, 0, 2}, Tiling{1, 1, 1, 0}, Tiling{1, 1, 1, 3}}) {
    CAPTURE(t.str());
    CHECK_THROWS_AS(lowerMatmul(s, t, d), Error);
    CHECK_THROWS_AS(lowerConv(base, t, d), Error);
  }
  // the smallest non-empty problems still lower and run
  s.m = s.k = s.n = 1;
  const Run r = matmul({2.0f}, {3.0f}, 1, 1, 1, d);
  CHECK(r.out[0] == 6.0f);
}
