// tests/unit/compiler/GemmTest.cpp — every micro-kernel shape of compiler/cpu/Gemm.h
// against a float64 reference, on awkward sizes.
//
// The plan follows the CPU's widest vectors; compiling for a named CPU ("x86-64-v3",
// "x86-64") picks that CPU's shape while the code still runs here, so the AVX-512, AVX2
// and SSE micro-kernels are all exercised on an AVX-512 machine (on a smaller one, those
// it cannot run are skipped, and said so). Sizes 1, 7, 33 and 257 in each dimension cover
// partial tiles, a single step of k and several k blocks; transposed operands are read in
// place by the packing (the fuse pass puts the transposes in the matmul's group). The
// packed convolution and the epilogues the GEMM applies as it stores C are checked the
// same way.
#include "compiler/Backend.h"
#include "compiler/Compiler.h"
#include "compiler/cpu/Gemm.h"
#include "ir/Parser.h"
#include "runtime/Gradients.h"
#include "runtime/NeuralNet.h"
#include "runtime/Random.h"
#include "runtime/Views.h"

#include <doctest/doctest.h>

#include <cmath>

using namespace tsl;

namespace {

/// C = op(A) · op(B) in float64, A [m,k] (or [k,m] when transposed), B [k,n] (or [n,k]).
std::vector<double> reference(const Tensor& a, const Tensor& b, bool ta, bool tb, int64_t m, int64_t k, int64_t n) {
  const Tensor a64 = contiguous(astype(a, DType::F64)), b64 = contiguous(astype(b, DType::F64));
  const auto* pa = reinterpret_cast<const double*>(a64.data());
  const auto* pb = reinterpret_cast<const double*>(b64.data());
  std::vector<double> c(static_cast<size_t>(m * n), 0.0);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double s = 0;
      for (int64_t p = 0; p < k; ++p) s += (ta ? pa[p * m + i] : pa[i * k + p]) * (tb ? pb[j * k + p] : pb[p * n + j]);
      c[static_cast<size_t>(i * n + j)] = s;
    }
  return c;
}

std::string type(DType d, int64_t r, int64_t c) { return cat(dtypeName(d), "[", r, ",", c, "]"); }

void check(compiler::Compiler& compiler, const std::string& cpu, DType dtype, int64_t m, int64_t k, int64_t n, bool ta,
           bool tb, uint64_t seed) {
  CAPTURE(cpu);
  CAPTURE(dtypeName(dtype));
  CAPTURE(m);
  CAPTURE(k);
  CAPTURE(n);
  CAPTURE(ta);
  CAPTURE(tb);
  const std::string at = ta ? type(dtype, k, m) : type(dtype, m, k), bt = tb ? type(dtype, n, k) : type(dtype, k, n);
  std::string body;
  std::string x = "%a", y = "%b";
  if (ta) body += "  %at = transpose %a : " + type(dtype, m, k) + "\n", x = "%at";
  if (tb) body += "  %bt = transpose %b : " + type(dtype, k, n) + "\n", y = "%bt";
  const std::string text = "func @f(%a: " + at + ", %b: " + bt + ") -> (" + type(dtype, m, n) + ") {\n" + body +
                           "  %c = matmul " + x + ", " + y + " : " + type(dtype, m, n) + "\n  return %c\n}\n";
  const auto s = static_cast<int64_t>(seed);
  const Tensor a = astype(randNormal(rngKey(s), ta ? Shape{k, m} : Shape{m, k}, DType::F32), dtype);
  const Tensor b = astype(randNormal(rngKey(s + 1), tb ? Shape{n, k} : Shape{k, n}, DType::F32), dtype);
  compiler::CompileOptions options;
  options.cpu = cpu;
  const Tensor c = compiler.compile(ir::parseModule(text), "f", "cpu", options)->run(std::vector<Tensor>{a, b})[0];
  const std::vector<double> expected = reference(a, b, ta, tb, m, k, n);
  const Tensor c64 = contiguous(astype(c, DType::F64));
  const auto* got = reinterpret_cast<const double*>(c64.data());
  // A sum of k products of N(0,1) values: the error grows like sqrt(k) ulps of the terms.
  const double eps = dtype == DType::F64 ? 0x1p-52 : 0x1p-23;
  const double bound = 4.0 * eps * (static_cast<double>(k) + 1.0) * 4.0;
  double worst = 0;
  for (size_t i = 0; i < expected.size(); ++i) worst = std::max(worst, std::abs(got[i] - expected[i]));
  CHECK(worst <= bound);
}

struct ConvCase {
  int64_t n, c, h, w, o, kh, kw, sh, sw, ph, pw;
};

/// conv2d in float64 by its definition (cross-correlation, zero padding).
std::vector<double> convReference(const Tensor& x, const Tensor& w, const ConvCase& k, int64_t ho, int64_t wo) {
  const Tensor x64 = contiguous(astype(x, DType::F64)), w64 = contiguous(astype(w, DType::F64));
  const auto* px = reinterpret_cast<const double*>(x64.data());
  const auto* pw = reinterpret_cast<const double*>(w64.data());
  std::vector<double> out(static_cast<size_t>(k.n * k.o * ho * wo), 0.0);
  for (int64_t b = 0; b < k.n; ++b)
    for (int64_t o = 0; o < k.o; ++o)
      for (int64_t i = 0; i < ho; ++i)
        for (int64_t j = 0; j < wo; ++j) {
          double s = 0;
          for (int64_t c = 0; c < k.c; ++c)
            for (int64_t ki = 0; ki < k.kh; ++ki)
              for (int64_t kj = 0; kj < k.kw; ++kj) {
                const int64_t ih = i * k.sh - k.ph + ki, iw = j * k.sw - k.pw + kj;
                if (ih >= 0 && ih < k.h && iw >= 0 && iw < k.w)
                  s += px[((b * k.c + c) * k.h + ih) * k.w + iw] * pw[((o * k.c + c) * k.kh + ki) * k.kw + kj];
              }
          out[static_cast<size_t>(((b * k.o + o) * ho + i) * wo + j)] = s;
        }
  return out;
}

/// conv2d's cotangents in float64 by definition: the input's and the weights'.
std::pair<std::vector<double>, std::vector<double>> convGradReference(const Tensor& x, const Tensor& w, const Tensor& dy,
                                                                      const ConvCase& k, int64_t ho, int64_t wo) {
  const Tensor x64 = contiguous(astype(x, DType::F64)), w64 = contiguous(astype(w, DType::F64));
  const Tensor d64 = contiguous(astype(dy, DType::F64));
  const auto* px = reinterpret_cast<const double*>(x64.data());
  const auto* pw = reinterpret_cast<const double*>(w64.data());
  const auto* pd = reinterpret_cast<const double*>(d64.data());
  std::vector<double> dx(static_cast<size_t>(k.n * k.c * k.h * k.w), 0.0), dw(static_cast<size_t>(k.o * k.c * k.kh * k.kw), 0.0);
  for (int64_t b = 0; b < k.n; ++b)
    for (int64_t o = 0; o < k.o; ++o)
      for (int64_t i = 0; i < ho; ++i)
        for (int64_t j = 0; j < wo; ++j) {
          const double g = pd[((b * k.o + o) * ho + i) * wo + j];
          for (int64_t c = 0; c < k.c; ++c)
            for (int64_t ki = 0; ki < k.kh; ++ki)
              for (int64_t kj = 0; kj < k.kw; ++kj) {
                const int64_t ih = i * k.sh - k.ph + ki, iw = j * k.sw - k.pw + kj;
                if (ih < 0 || ih >= k.h || iw < 0 || iw >= k.w) continue;
                const size_t xi = static_cast<size_t>(((b * k.c + c) * k.h + ih) * k.w + iw);
                const size_t wi = static_cast<size_t>(((o * k.c + c) * k.kh + ki) * k.kw + kj);
                dx[xi] += g * pw[wi];
                dw[wi] += g * px[xi];
              }
        }
  return {dx, dw};
}

double worstError(const Tensor& got, const std::vector<double>& expected) {
  const Tensor g64 = contiguous(astype(got, DType::F64));
  const auto* g = reinterpret_cast<const double*>(g64.data());
  double worst = 0;
  for (size_t i = 0; i < expected.size(); ++i) worst = std::max(worst, std::abs(g[i] - expected[i]));
  return worst;
}

} // namespace

TEST_CASE("each micro-kernel shape matches float64 on awkward sizes and transposed operands") {
  // The CPUs whose plans are tested: this machine's, AVX2's and the baseline's.
  std::vector<std::string> cpus{"native", "x86-64"};
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) cpus.push_back("x86-64-v3");
  else MESSAGE("this machine has no AVX2: the AVX2 micro-kernel is not tested here");
  compiler::Compiler compiler;
  const int64_t sizes[] = {1, 7, 33, 257};
  uint64_t seed = 1;
  for (const std::string& cpu : cpus)
    for (DType dtype : {DType::F32, DType::F64})
      for (int64_t m : sizes)
        for (int64_t k : sizes)
          for (int64_t n : sizes) check(compiler, cpu, dtype, m, k, n, false, false, seed++);
  for (const std::string& cpu : cpus)
    for (DType dtype : {DType::F32, DType::F64})
      for (auto [ta, tb] : {std::pair{true, false}, std::pair{false, true}, std::pair{true, true}})
        check(compiler, cpu, dtype, 33, 257, 7, ta, tb, seed++);
  // Shapes for which AVX-512 takes the 6×64 tile (gemmPlanFor), and their edges.
  for (const std::string& cpu : cpus)
    for (DType dtype : {DType::F32, DType::F64})
      for (auto [m, k, n] : {std::tuple<int64_t, int64_t, int64_t>{128, 70, 256}, {13, 33, 64}, {7, 300, 128}})
        check(compiler, cpu, dtype, m, k, n, false, m == 13, seed++);
}

TEST_CASE("the plans fit the registers and the caches they are for") {
  using compiler::cpu::gemmPlan;
  for (const char* features : {"+avx512f,+avx2,+fma", "+avx2,+fma", "+sse2"})
    for (DType dtype : {DType::F32, DType::F64}) {
      CAPTURE(std::string(features));
      const auto plan = gemmPlan(dtype, features);
      const int64_t registers = std::string(features).find("avx512f") != std::string::npos ? 32 : 16;
      CHECK(plan.nr % plan.lanes == 0);
      CHECK(plan.nr <= 64); // the convolution's gather handles panels of at most 64 positions
      CHECK(plan.mr * plan.nr / plan.lanes + plan.nr / plan.lanes + 1 <= registers);
      CHECK(plan.lanes * static_cast<int64_t>(dtypeSize(dtype)) ==
            (registers == 32 ? 64 : std::string(features).find("avx2") != std::string::npos ? 32 : 16));
      const auto size = static_cast<int64_t>(dtypeSize(dtype));
      CHECK(plan.kc * plan.nr * size <= 24 * 1024);   // B's micro-panel in a 32 KiB L1, beside A's
      CHECK(plan.mc * plan.kc * size <= 512 * 1024);  // A's block in L2
      CHECK(plan.kc * plan.nc * size <= 4096 * 1024); // B's block in L3
      // The tile chosen for an f32 product 128 × 256 fits as well, and is the wide one on
      // AVX-512 (8×48 would compute 288 columns; f64's 8×24 wastes 3 %, and stays).
      const auto wide = compiler::cpu::gemmPlanFor(dtype, features, 128, 256);
      CHECK(wide.mr * wide.nr / wide.lanes + wide.nr / wide.lanes + 1 <= registers);
      CHECK(wide.kc * wide.nr * size <= 24 * 1024);
      if (dtype == DType::F32) {
        CHECK((wide.nr != plan.nr) == (registers == 32));
        if (registers == 32) CHECK(256 % wide.nr == 0);
      }
    }
}

TEST_CASE("packed convolution and its cotangents match float64 under :cpu and eagerly, over strides, paddings and edges") {
  std::vector<std::string> cpus{"native", "x86-64"};
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) cpus.push_back("x86-64-v3");
  compiler::Compiler compiler; // installs the packed GEMM and convolution for eager code too
  // Partial register tiles in channels (1, 7, 9, 17) and positions (1, 3, 50 x 1), windows
  // that leave the image on every side, strides 2 and 3, a long k (c 40 x 3 x 3 = 360,
  // three blocks), a 1 x 1 kernel, rows shorter and longer than a register tile, and an
  // image cut into tasks of a few rows. Stride 1 on long rows runs on padded rows; the
  // rest gathers.
  const ConvCase cases[] = {
      {1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0},  {2, 3, 9, 11, 5, 3, 3, 2, 2, 1, 1}, {1, 4, 7, 50, 17, 3, 3, 1, 1, 1, 1},
      {3, 2, 5, 5, 9, 5, 3, 1, 3, 2, 1},  {1, 40, 6, 6, 7, 3, 3, 1, 1, 1, 1}, {2, 16, 4, 13, 33, 1, 1, 1, 1, 0, 0},
      {1, 5, 50, 1, 8, 3, 1, 1, 1, 1, 0}, {1, 3, 3, 3, 1, 3, 3, 1, 1, 2, 2}, {1, 64, 32, 32, 64, 3, 3, 1, 1, 1, 1}, {2, 3, 20, 30, 5, 3, 3, 1, 1, 0, 0},
  };
  uint64_t seed = 100;
  for (const std::string& cpu : cpus)
    for (DType dtype : {DType::F32, DType::F64})
      for (const ConvCase& k : cases) {
        CAPTURE(cpu);
        CAPTURE(dtypeName(dtype));
        CAPTURE(k.c);
        CAPTURE(k.o);
        CAPTURE(k.h);
        CAPTURE(k.w);
        const int64_t ho = (k.h + 2 * k.ph - k.kh) / k.sh + 1, wo = (k.w + 2 * k.pw - k.kw) / k.sw + 1;
        const auto s = static_cast<int64_t>(seed);
        seed += 2;
        const Tensor x = astype(randNormal(rngKey(s), Shape{k.n, k.c, k.h, k.w}, DType::F32), dtype);
        const Tensor w = astype(randNormal(rngKey(s + 1), Shape{k.o, k.c, k.kh, k.kw}, DType::F32), dtype);
        const std::string d = dtypeName(dtype);
        const std::string text =
            cat("func @f(%x: ", d, "[", k.n, ",", k.c, ",", k.h, ",", k.w, "], %w: ", d, "[", k.o, ",", k.c, ",", k.kh,
                ",", k.kw, "]) -> (", d, "[", k.n, ",", k.o, ",", ho, ",", wo, "]) {\n  %y = conv2d %x, %w {stride = [",
                k.sh, ", ", k.sw, "], padding = [", k.ph, ", ", k.pw, "]} : ", d, "[", k.n, ",", k.o, ",", ho, ",", wo,
                "]\n  return %y\n}\n");
        compiler::CompileOptions options;
        options.cpu = cpu;
        const Tensor y = compiler.compile(ir::parseModule(text), "f", "cpu", options)->run(std::vector<Tensor>{x, w})[0];
        const std::vector<double> expected = convReference(x, w, k, ho, wo);
        const double eps = dtype == DType::F64 ? 0x1p-52 : 0x1p-23;
        const double bound = 16.0 * eps * static_cast<double>(k.c * k.kh * k.kw + 1);
        CHECK(worstError(y, expected) <= bound);
        if (cpu == "native") { // eager conv2d runs the same kernel
          const Tensor e = conv2d(x, w, Conv2dAttrs{{k.sh, k.sw}, {k.ph, k.pw}});
          CHECK(worstError(e, expected) <= bound);
        }
        // The cotangents, compiled and eager, for a random output cotangent.
        const Tensor dy = astype(randNormal(rngKey(s + 7), Shape{k.n, k.o, ho, wo}, DType::F32), dtype);
        const auto [dxRef, dwRef] = convGradReference(x, w, dy, k, ho, wo);
        const std::string xt = cat(d, "[", k.n, ",", k.c, ",", k.h, ",", k.w, "]");
        const std::string wt = cat(d, "[", k.o, ",", k.c, ",", k.kh, ",", k.kw, "]");
        const std::string yt = cat(d, "[", k.n, ",", k.o, ",", ho, ",", wo, "]");
        const std::string attrs = cat("stride = [", k.sh, ", ", k.sw, "], padding = [", k.ph, ", ", k.pw, "]");
        const std::string grads = "func @g(%x: " + xt + ", %w: " + wt + ", %dy: " + yt + ") -> (" + xt + ", " + wt +
                                  ") {\n  %dx = conv2d_grad_input %dy, %w {" + attrs + cat(", shape = [", k.n, ", ", k.c,
                                  ", ", k.h, ", ", k.w, "]} : ") + xt + "\n  %dw = conv2d_grad_weight %x, %dy {" + attrs +
                                  cat(", shape = [", k.o, ", ", k.c, ", ", k.kh, ", ", k.kw, "]} : ") + wt +
                                  "\n  return %dx, %dw\n}\n";
        const auto got = compiler.compile(ir::parseModule(grads), "g", "cpu", options)->run(std::vector<Tensor>{x, w, dy});
        const double gradBound = 16.0 * eps * static_cast<double>(k.o * k.kh * k.kw + k.n * ho * wo + 1);
        CHECK(worstError(got[0], dxRef) <= gradBound);
        CHECK(worstError(got[1], dwRef) <= gradBound);
        if (cpu == "native") {
          const Conv2dAttrs a{{k.sh, k.sw}, {k.ph, k.pw}};
          CHECK(worstError(conv2dGradInput(dy, w, a, x.shape()), dxRef) <= gradBound);
          CHECK(worstError(conv2dGradWeight(x, dy, a, w.shape()), dwRef) <= gradBound);
        }
      }
}

namespace {

/// One epilogue form: the IR of @f(x [m,k] or its transpose, w [k,n], acc [m,n], b, s)
/// and how to compute it in float64.
struct EpilogueCase {
  const char* name;
  bool transposeX;
  const char* body; ///< ops after %p = matmul %xx, %w (%xx: x or its transpose)
  int activation;   ///< 0 none, 1 relu, 2 gelu
  double alpha;     ///< times s when useS
  bool useS, useAcc;
  int biasAxis;     ///< -1: none; 0: b [m,1]; 1: b [n]
};

} // namespace

TEST_CASE("matmul epilogues run in the GEMM's store and match float64: bias, relu, gelu, scale, accumulator") {
  const EpilogueCase cases[] = {
      {"bias+relu", false, "  %q = add %p, %b : T[M,N]\n  %r = relu %q : T[M,N]\n", 1, 1, false, false, 1},
      {"row bias", true, "  %r = add %b, %p : T[M,N]\n", 0, 1, false, false, 0},
      {"sgd", true, "  %h = constant 0.25 : T\n  %q = mul %h, %p : T[M,N]\n  %r = sub %acc, %q : T[M,N]\n", 0,
       -0.25, false, true, -1},
      {"scaled by a parameter", false, "  %q = mul %p, %s : T[M,N]\n  %r = add %acc, %q : T[M,N]\n", 0, 1, true,
       true, -1},
      {"negated, then bias", false, "  %q = neg %p : T[M,N]\n  %r = add %q, %b : T[M,N]\n", 0, -1, false, false, 1},
      {"bias+gelu", true, "  %q = add %p, %b : T[M,N]\n  %r = gelu %q : T[M,N]\n", 2, 1, false, false, 1},
  };
  compiler::Compiler compiler;
  uint64_t seed = 500;
  for (DType dtype : {DType::F32, DType::F64})
    for (const EpilogueCase& e : cases)
      for (auto [m, k, n] : {std::tuple<int64_t, int64_t, int64_t>{33, 257, 7}, {9, 1, 50}, {130, 70, 97}}) {
        const std::string caseName = e.name, dtypeText = dtypeName(dtype);
        CAPTURE(caseName);
        CAPTURE(dtypeText);
        CAPTURE(m);
        CAPTURE(k);
        CAPTURE(n);
        const std::string d = dtypeName(dtype);
        auto typeText = [&](std::string t) {
          for (auto [from, to] : {std::pair<std::string, std::string>{"T", d}, {"M", std::to_string(m)},
                                  {"N", std::to_string(n)}, {"K", std::to_string(k)}})
            for (size_t at; (at = t.find(from)) != std::string::npos;) t.replace(at, 1, to);
          return t;
        };
        const Shape bShape = e.biasAxis == 0 ? Shape{m, 1} : Shape{n};
        const std::string bType = e.biasAxis == 0 ? "T[M,1]" : "T[N]";
        std::string text = typeText("func @f(%x: " + std::string(e.transposeX ? "T[K,M]" : "T[M,K]") +
                                    ", %w: T[K,N], %acc: T[M,N], %b: " + bType + ", %s: T) -> (T[M,N]) {\n");
        text += e.transposeX ? typeText("  %xx = transpose %x {perm = [1, 0]} : T[M,K]\n  %p = matmul %xx, %w : T[M,N]\n")
                             : typeText("  %p = matmul %x, %w : T[M,N]\n");
        text += typeText(e.body) + "  return %r\n}\n";
        const auto s0 = static_cast<int64_t>(seed);
        seed += 4;
        const Tensor x = astype(randNormal(rngKey(s0), e.transposeX ? Shape{k, m} : Shape{m, k}, DType::F32), dtype);
        const Tensor w = astype(randNormal(rngKey(s0 + 1), Shape{k, n}, DType::F32), dtype);
        const Tensor acc = astype(randNormal(rngKey(s0 + 2), Shape{m, n}, DType::F32), dtype);
        const Tensor b = astype(randNormal(rngKey(s0 + 3), bShape, DType::F32), dtype);
        const Tensor s = dtype == DType::F32 ? Tensor::scalarOf(1.5f, dtype) : Tensor::scalarOf(1.5, dtype);
        const Tensor got = compiler.compile(ir::parseModule(text), "f", "cpu", {})->run(std::vector<Tensor>{x, w, acc, b, s})[0];
        // float64 by definition.
        const std::vector<double> product = reference(x, w, e.transposeX, false, m, k, n);
        const Tensor acc64 = contiguous(astype(acc, DType::F64)), b64 = contiguous(astype(b, DType::F64));
        const auto* pacc = reinterpret_cast<const double*>(acc64.data());
        const auto* pb = reinterpret_cast<const double*>(b64.data());
        std::vector<double> expected(product.size());
        const double alpha = e.alpha * (e.useS ? 1.5 : 1.0);
        for (int64_t i = 0; i < m; ++i)
          for (int64_t j = 0; j < n; ++j) {
            const auto at = static_cast<size_t>(i * n + j);
            double v = alpha * product[at] + (e.useAcc ? pacc[at] : 0.0);
            if (e.biasAxis >= 0) v += pb[e.biasAxis == 0 ? i : j];
            expected[at] = e.activation == 1 ? std::max(v, 0.0)
                           : e.activation == 2 ? 0.5 * v * (1.0 + std::erf(v / std::sqrt(2.0)))
                                               : v;
          }
        const double eps = dtype == DType::F64 ? 0x1p-52 : 0x1p-23;
        // The sum's rounding, and for gelu its polynomial's (8 ulp, docs/cpu-backend.md).
        double largest = 0;
        for (double v : expected) largest = std::max(largest, std::abs(v));
        const double bound = 16.0 * eps * static_cast<double>(k + 2) + (e.activation == 2 ? 16.0 * eps * largest : 0.0);
        CHECK(worstError(got, expected) <= bound);
        // The epilogue was the GEMM's: no loop over the result remains in the plan's
        // fused operation (its region is exactly the affine form).
        auto module = ir::parseModule(text);
        compiler.optimize(*module, "cpu", {}, "f");
        bool affine = false;
        for (const auto& op : module->find("f")->body().ops()) affine |= ir::affineEpilogue(*op).has_value();
        CHECK(affine);
      }
}
