// tests/unit/compiler/CpuBackendTest.cpp — the :cpu backend against :interp and float64.
//
// Random programs (elementwise chains with broadcasts, views, reductions, matmul, where,
// casts; integer and float) run on :interp — the eager kernels — and on :cpu: integer
// results agree bit for bit, float results within a few ulp. The polynomials the
// generated code computes exp, log, tanh, sigmoid and gelu with are swept densely
// and compared with float64 at their documented bounds, and with runtime/FastMath.h bit
// for bit. The lowering table covers every operation.
#include "compiler/Backend.h"
#include "compiler/Compiler.h"
#include "compiler/interp/IrRunner.h"
#include "ir/Parser.h"
#include "runtime/FastMath.h"
#include "runtime/NeuralNet.h"
#include "runtime/Random.h"
#include "runtime/Softmax.h"
#include "runtime/Views.h"

#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <random>

using namespace tsl;

namespace {

/// A random program over `t`[4,6] values (t is f32 or i64): elementwise operations (some
/// with a broadcast [6] operand), transposed round trips, comparisons feeding where,
/// reductions over an axis and a matmul; several values returned.
std::string randomProgram(std::mt19937& random, int ops, bool integer) {
  const std::string t = integer ? "i64" : "f32";
  const std::string m = t + "[4,6]", row = t + "[6]";
  std::string body;
  std::vector<std::string> values{"%x", "%y"};
  int next = 0;
  auto fresh = [&] { return "%" + std::to_string(next++); };
  auto pick = [&] { return values[random() % values.size()]; };
  std::vector<const char*> unary{"neg", "abs", "square", "relu"};
  if (!integer) unary.insert(unary.end(), {"exp", "tanh", "sigmoid", "log1p", "gelu"});
  std::vector<const char*> binary{"add", "mul", "sub", "maximum", "minimum"};
  if (integer) binary.insert(binary.end(), {"floordiv", "mod"});
  std::vector<std::string> extra, extraTypes;
  for (int i = 0; i < ops; ++i) {
    const std::string a = pick(), v = fresh();
    switch (random() % 9) {
    case 0:
    case 1: {
      const char* f = unary[random() % unary.size()];
      // log1p and exp of a tanh, so that they stay finite
      if (std::string(f) == "log1p" || std::string(f) == "exp") {
        const std::string s = fresh();
        body += "  " + s + " = tanh " + a + " : " + m + "\n";
        body += "  " + v + " = " + f + " " + s + " : " + m + "\n";
      } else {
        body += "  " + v + " = " + f + " " + a + " : " + m + "\n";
      }
      break;
    }
    case 2:
    case 3: {
      const std::string b = random() % 3 == 0 ? std::string("%b") : pick();
      body += "  " + v + " = " + binary[random() % binary.size()] + " " + a + ", " + b + " : " + m + "\n";
      break;
    }
    case 4: {
      const std::string tr = fresh();
      body += "  " + tr + " = transpose " + a + " {perm = [1, 0]} : " + t + "[6,4]\n";
      body += "  " + v + " = transpose " + tr + " {perm = [1, 0]} : " + m + "\n";
      break;
    }
    case 5: {
      const std::string c = fresh();
      body += "  " + c + " = greater " + a + ", " + pick() + " : bool[4,6]\n";
      body += "  " + v + " = where " + c + ", " + a + ", " + pick() + " : " + m + "\n";
      break;
    }
    case 6: {
      const char* reductions[] = {"sum", "max", "min", "argmax"};
      const std::string r = reductions[random() % 4];
      const int axis = static_cast<int>(random() % 2);
      const std::string type = (r == "argmax" ? std::string("i64") : t) + (axis ? "[4]" : "[6]");
      const std::string s = fresh();
      body += "  " + s + " = mul " + a + ", " + pick() + " : " + m + "\n";
      body += "  " + v + " = " + r + " " + s + " {axes = [" + std::to_string(axis) + "]} : " + type + "\n";
      extra.push_back(v);
      extraTypes.push_back(type);
      continue;
    }
    case 7: {
      const std::string tr = fresh();
      body += "  " + tr + " = transpose " + pick() + " {perm = [1, 0]} : " + t + "[6,4]\n";
      body += "  " + v + " = matmul " + a + ", " + tr + " : " + t + "[4,4]\n";
      extra.push_back(v);
      extraTypes.push_back(t + "[4,4]");
      continue;
    }
    default: {
      const std::string other = integer ? "f32" : "i32";
      const std::string c = fresh();
      body += "  " + c + " = astype " + a + " {dtype = " + other + "} : " + other + "[4,6]\n";
      body += "  " + v + " = astype " + c + " {dtype = " + t + "} : " + m + "\n";
      break;
    }
    }
    values.push_back(v);
  }
  std::string ret = values.back() + ", " + values[values.size() / 2];
  std::string types = m + ", " + m;
  for (size_t i = 0; i < extra.size() && i < 3; ++i) {
    ret += ", " + extra[extra.size() - 1 - i];
    types += ", " + extraTypes[extra.size() - 1 - i];
  }
  return "func @f(%x: " + m + ", %y: " + m + ", %b: " + row + ") -> (" + types + ") {\n" + body + "  return " + ret +
         "\n}\n";
}

/// A random straight-line program of `ops` f32 scalars (scalars are never fused, so each is
/// an operation of the function), each step reading the one before and one picked from
/// anywhere earlier, so that every value is live; tanh keeps them finite. It returns the
/// last value, the middle one and a tensor made from an early one.
std::string randomScalarProgram(std::mt19937& random, int ops) {
  std::string body;
  std::vector<std::string> values{"%x", "%y"};
  const char* binary[] = {"add", "mul", "sub", "maximum", "minimum"};
  const char* unary[] = {"tanh", "neg", "sin", "abs"};
  for (int i = 0; i < ops; ++i) {
    const std::string v = "%" + std::to_string(i), prev = values.back(), other = values[random() % values.size()];
    if (random() % 2) body += "  " + v + " = " + binary[random() % 5] + " " + prev + ", " + other + " : f32\n";
    else body += "  " + v + " = " + unary[random() % 4] + " " + prev + " : f32\n";
    if (i % 7 == 6) { // tanh every few steps keeps products bounded
      body += "  %t" + std::to_string(i) + " = tanh " + v + " : f32\n";
      values.push_back("%t" + std::to_string(i));
    } else {
      values.push_back(v);
    }
  }
  body += "  %early = broadcast_to " + values[3] + " {dims = [3]} : f32[3]\n";
  return "func @f(%x: f32, %y: f32) -> (f32, f32, f32[3]) {\n" + body + "  return " + values.back() + ", " +
         values[values.size() / 2] + ", %early\n}\n";
}

std::vector<Tensor> inputs(uint64_t seed, bool integer) {
  const auto s = static_cast<int64_t>(seed);
  std::vector<Tensor> out = {randNormal(rngKey(s), Shape{4, 6}, DType::F32),
                             randNormal(rngKey(s + 1000), Shape{4, 6}, DType::F32),
                             randNormal(rngKey(s + 1), Shape{6}, DType::F32)};
  if (integer)
    for (Tensor& t : out) t = astype(applyBinary(BinaryOp::Mul, t, Tensor::ofFloat(5.0)), DType::I64);
  return out;
}

/// Runs `text`'s @f on `target`, through the target's whole pipeline.
std::vector<Tensor> run(compiler::Compiler& compiler, const std::string& text, const std::string& target,
                        const std::vector<Tensor>& args) {
  return compiler.compile(ir::parseModule(text), "f", target, {})->run(args);
}

/// Integers equal; floats within `ulps` units in the last place of the larger magnitude
/// (or of the largest element, for elements that cancelled).
void checkClose(const Tensor& expected, const Tensor& actual, double ulps) {
  REQUIRE(TensorType::of(expected) == TensorType::of(actual));
  const Tensor a = contiguous(astype(expected, DType::F64)), b = contiguous(astype(actual, DType::F64));
  const auto* p = reinterpret_cast<const double*>(a.data());
  const auto* q = reinterpret_cast<const double*>(b.data());
  double scale = 0;
  for (int64_t i = 0; i < a.numel(); ++i) scale = std::max(scale, std::abs(p[i]));
  for (int64_t i = 0; i < a.numel(); ++i) {
    CAPTURE(i);
    if (!isFloat(expected.dtype())) {
      CHECK(p[i] == q[i]);
      continue;
    }
    if (std::isnan(p[i])) {
      CHECK(std::isnan(q[i]));
      continue;
    }
    CHECK(std::abs(p[i] - q[i]) <= ulps * 1.2e-7 * (std::max(std::abs(p[i]), std::abs(q[i])) + scale));
  }
}

float fromBits(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

double ulpError(float got, double want) {
  if (std::isnan(want)) return std::isnan(got) ? 0 : 1e30;
  const float rounded = static_cast<float>(want);
  if (std::isinf(rounded)) return got == rounded ? 0 : 1e30;
  double ulp = std::ldexp(1.0, -149);
  if (std::fabs(rounded) >= 1.17549435e-38f) {
    int exponent = 0;
    std::frexp(rounded, &exponent);
    ulp = std::ldexp(1.0, exponent - 24);
  }
  return std::fabs(static_cast<double>(got) - want) / ulp;
}

} // namespace

TEST_CASE("every operation has a :cpu lowering: generated, or its eager kernel named as such") {
  auto cpu = compiler::makeBackend("cpu");
  int native = 0, fallbacks = 0;
  for (const OpInfo& info : allOps()) {
    CAPTURE(info.name);
    compiler::Lowering lowering = compiler::Lowering::Native;
    REQUIRE_NOTHROW(lowering = cpu->lowering(info.kind));
    (lowering == compiler::Lowering::Native ? native : fallbacks) += 1;
  }
  CHECK(cpu->lowering(OpKind::MatMul) == compiler::Lowering::Native);
  CHECK(cpu->lowering(OpKind::Softmax) == compiler::Lowering::Native);
  CHECK(cpu->lowering(OpKind::Transpose) == compiler::Lowering::Native);
  CHECK(cpu->lowering(OpKind::Conv2d) == compiler::Lowering::Native);
  CHECK(cpu->lowering(OpKind::Mse) == compiler::Lowering::GenericKernel);
  CHECK(native + fallbacks == static_cast<int>(allOps().size()));
  CHECK(native > 2 * fallbacks);
}

TEST_CASE("random programs give :interp's results on :cpu (integers exactly)") {
  compiler::Compiler compiler;
  std::mt19937 random(23);
  for (int trial = 0; trial < 80; ++trial) {
    const bool integer = trial % 2 == 1;
    const std::string text = randomProgram(random, 3 + trial % 14, integer);
    CAPTURE(text);
    const std::vector<Tensor> args = inputs(static_cast<uint64_t>(trial), integer);
    const auto expected = run(compiler, text, "interp", args);
    const auto actual = run(compiler, text, "cpu", args);
    REQUIRE(expected.size() == actual.size());
    for (size_t i = 0; i < expected.size(); ++i) checkClose(expected[i], actual[i], 64);
  }
}

TEST_CASE("random programs long enough to be generated in pieces give :interp's results") {
  // Over 256 operations: the function is split into LLVM functions of about 256, the
  // scalars one computes and later ones read passed through a spill array, tensors found
  // again through the memory plan (values are picked from anywhere before).
  compiler::Compiler compiler;
  std::mt19937 random(41);
  for (int trial = 0; trial < 4; ++trial) {
    const std::string text = randomScalarProgram(random, 600 + 300 * trial);
    const std::vector<Tensor> args = {astype(Tensor::ofFloat(0.3 + 0.1 * trial), DType::F32),
                                      astype(Tensor::ofFloat(-0.7), DType::F32)};
    const auto expected = run(compiler, text, "interp", args);
    const auto executable = compiler.compile(ir::parseModule(text), "f", "cpu", {});
    CHECK(executable->inspect("llvm").find(".piece") != std::string::npos);
    const auto actual = executable->run(args);
    REQUIRE(expected.size() == actual.size());
    for (size_t i = 0; i < expected.size(); ++i) checkClose(expected[i], actual[i], 64);
  }
}

TEST_CASE("compiled exp, log, tanh, sigmoid and gelu are FastMath's polynomials, within their bounds") {
  compiler::Compiler compiler;
  // Every 1024th float bit pattern: 4 million values over every exponent, NaNs dropped.
  std::vector<float> xs;
  for (uint64_t bits = 0; bits < (uint64_t(1) << 32); bits += 1024)
    if (float x = fromBits(static_cast<uint32_t>(bits)); !std::isnan(x)) xs.push_back(x);
  for (float x : {0.0f, -0.0f, INFINITY, -INFINITY, NAN, 9.0f, -9.0f, 88.8f, -104.0f}) xs.push_back(x);
  const auto n = static_cast<int64_t>(xs.size());
  const Tensor input = Tensor::wrap(xs.data(), DType::F32, Shape{n});
  struct Case {
    const char* op;
    float (*expected)(float);
    double (*reference)(double);
    double bound;
  };
  const Case cases[] = {
      {"exp", fastmath::fastExp, [](double x) { return std::exp(x); }, 1.5},
      {"log", fastmath::fastLog, [](double x) { return std::log(x); }, 1.0},
      {"tanh", fastmath::fastTanh, [](double x) { return std::tanh(x); }, 1.5},
      {"sigmoid", fastmath::fastSigmoid, [](double x) { return 1.0 / (1.0 + std::exp(-x)); }, 3.0},
      // gelu: x Φ(x) from the normal tail, within 8 ulp on both sides (no 1 + erf to cancel).
      {"gelu", fastmath::fastGelu,
       [](double x) { return 0.5 * x * std::erfc(-x / std::sqrt(2.0)); }, 8.0},
  };
  for (const Case& c : cases) {
    CAPTURE(c.op);
    const std::string text = cat("func @f(%x: f32[", n, "]) -> (f32[", n, "]) {\n  %0 = ", c.op, " %x : f32[", n,
                                 "]\n  return %0\n}\n");
    const Tensor out = run(compiler, text, "cpu", {input})[0];
    const auto* y = reinterpret_cast<const float*>(out.data());
    double worst = 0;
    int64_t differ = 0;
    for (int64_t i = 0; i < n; ++i) {
      const float want = c.expected(xs[static_cast<size_t>(i)]);
      if (!(std::memcmp(&want, &y[i], sizeof want) == 0 || (std::isnan(want) && std::isnan(y[i])))) ++differ;
      const float x = xs[static_cast<size_t>(i)];
      const double reference = c.reference(static_cast<double>(x));
      worst = std::max(worst, ulpError(y[i], reference));
    }
    CHECK(differ == 0);
    CHECK(worst <= c.bound);
  }
}

TEST_CASE("compiled code reports a failed check as the eager error at the operation's span") {
  compiler::Compiler compiler;
  const std::string text = R"(func @f(%x: f32[5], %i: i64[3]) -> (f32[3]) {
  %0 = take %x, %i {axis = 0} : f32[3] loc("model.tsl":7:3-7:12)
  return %0
})";
  std::vector<float> elements{1, 2, 3, 4, 5};
  const Tensor x = Tensor::wrap(elements.data(), DType::F32, Shape{5});
  std::vector<int64_t> good{4, -1, 0}, bad{0, 5, 1};
  const Tensor ok = compiler.compile(ir::parseModule(text), "f", "cpu", {})->run(
      std::vector<Tensor>{contiguous(x), Tensor::wrap(good.data(), DType::I64, Shape{3})})[0];
  CHECK(reinterpret_cast<const float*>(ok.data())[0] == 5.0f);
  CHECK(reinterpret_cast<const float*>(ok.data())[1] == 5.0f);
  try {
    compiler.compile(ir::parseModule(text), "f", "cpu", {})->run(
        std::vector<Tensor>{contiguous(x), Tensor::wrap(bad.data(), DType::I64, Shape{3})});
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::Value);
    CHECK(e.message() == "take: index 5 is out of range for axis 0 of size 5");
    CHECK(e.span().line == 7);
    CHECK(e.span().col == 3);
  }
}

TEST_CASE("generated softmax rows compute the library kernel's bits, special values and tails included") {
  // The generated kernel (compiler/cpu/VectorRows.cpp) repeats runtime/RowKernels.h's
  // operations; eager softmax runs the latter. Rows of every length up to two vector
  // blocks and beyond, for each vector width, with NaN, ±inf, huge and tiny values.
  std::vector<std::string> cpus{"native", "x86-64"};
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) cpus.push_back("x86-64-v3");
  compiler::Compiler compiler;
  std::mt19937 random(7);
  std::normal_distribution<float> normal(0.0f, 30.0f);
  for (const std::string& cpu : cpus)
    for (int64_t n : {1, 3, 15, 16, 17, 31, 32, 33, 100, 1000}) {
      CAPTURE(cpu);
      CAPTURE(n);
      const int64_t rows = 6;
      std::vector<float> values(static_cast<size_t>(rows * n));
      for (float& v : values) v = normal(random);
      const auto at = [&](int64_t r, int64_t j) -> float& { return values[static_cast<size_t>(r * n + j % n)]; };
      at(1, n / 2) = std::numeric_limits<float>::quiet_NaN();
      at(2, n - 1) = std::numeric_limits<float>::infinity();
      at(3, 0) = -std::numeric_limits<float>::infinity();
      at(4, n / 3) = 1e30f; // every other exponential underflows, some to subnormals
      Tensor x = Tensor::empty(DType::F32, Shape{rows, n});
      std::memcpy(x.mutableData(), values.data(), values.size() * sizeof(float));
      const std::string type = cat("f32[", rows, ",", n, "]");
      compiler::CompileOptions options;
      options.cpu = cpu;
      const Tensor got =
          compiler
              .compile(ir::parseModule("func @f(%x: " + type + ") -> (" + type + ") {\n  %y = softmax %x {axis = -1} : " +
                                       type + "\n  return %y\n}\n"),
                       "f", "cpu", options)
              ->run(std::vector<Tensor>{x})[0];
      const Tensor expected = contiguous(softmax(x, -1));
      CHECK(std::memcmp(got.data(), expected.data(), static_cast<size_t>(rows * n) * sizeof(float)) == 0);
    }
}

TEST_CASE("compiled max and average pooling give the eager kernels' bits") {
  // Both run runtime/PoolRows.h; the compiled one accumulates in its output rows.
  compiler::Compiler compiler;
  struct Case {
    int64_t n, c, h, w, kh, kw, sh, sw, ph, pw;
  };
  const Case cases[] = {{2, 3, 9, 11, 3, 3, 2, 2, 1, 1}, {1, 2, 7, 40, 2, 2, 2, 2, 0, 0}, {1, 1, 5, 5, 5, 5, 1, 1, 2, 2},
                        {2, 4, 16, 16, 3, 1, 1, 3, 1, 0}, {1, 1, 1, 1, 1, 1, 1, 1, 0, 0}};
  uint64_t seed = 900;
  for (DType dtype : {DType::F32, DType::F64})
    for (const Case& k : cases)
      for (const char* op : {"max_pool2d", "avg_pool2d"}) {
        CAPTURE(std::string(op));
        CAPTURE(k.h);
        CAPTURE(k.w);
        Tensor x = astype(randNormal(rngKey(static_cast<int64_t>(seed++)), Shape{k.n, k.c, k.h, k.w}, DType::F32), dtype);
        if (k.h * k.w > 4) { // a NaN wins its windows
          x = contiguous(x);
          if (dtype == DType::F32) reinterpret_cast<float*>(x.mutableData())[3] = std::numeric_limits<float>::quiet_NaN();
          else reinterpret_cast<double*>(x.mutableData())[3] = std::numeric_limits<double>::quiet_NaN();
        }
        const Pool2dAttrs attrs{{k.kh, k.kw}, {k.sh, k.sw}, {k.ph, k.pw}};
        const Tensor expected =
            contiguous(std::string(op) == "max_pool2d" ? maxPool2d(x, attrs) : avgPool2d(x, attrs));
        const std::string d = dtypeName(dtype);
        const std::string xt = cat(d, "[", k.n, ",", k.c, ",", k.h, ",", k.w, "]");
        const std::string yt = cat(d, expected.shape().str());
        const std::string text = cat("func @f(%x: ", xt, ") -> (", yt, ") {\n  %y = ", op, " %x {kernel = [", k.kh, ", ",
                                     k.kw, "], stride = [", k.sh, ", ", k.sw, "], padding = [", k.ph, ", ", k.pw,
                                     "]} : ", yt, "\n  return %y\n}\n");
        const Tensor got = compiler.compile(ir::parseModule(text), "f", "cpu", {})->run(std::vector<Tensor>{x})[0];
        CHECK(std::memcmp(got.data(), expected.data(), static_cast<size_t>(expected.numel()) * dtypeSize(dtype)) == 0);
      }
}

extern "C" void tsl_k_layernorm_f32(const float* x, float* y, int64_t begin, int64_t end, int64_t n, int64_t inner,
                                    double eps) noexcept;

TEST_CASE("generated layer-norm rows compute the library kernel's bits") {
  // VectorRows.cpp repeats runtime/RowKernels.h's sums in their order, as the kernel
  // library compiles them (no contraction into FMAs; the eager build may contract the
  // tails, an ulp away). Every vector width, rows shorter and longer than 16 lanes.
  std::vector<std::string> cpus{"native", "x86-64"};
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) cpus.push_back("x86-64-v3");
  compiler::Compiler compiler;
  for (const std::string& cpu : cpus)
    for (int64_t n : {1, 5, 16, 17, 40, 1000}) {
      CAPTURE(cpu);
      CAPTURE(n);
      const Tensor x = randNormal(rngKey(n), Shape{5, n}, DType::F32);
      const std::string type = cat("f32[5,", n, "]");
      compiler::CompileOptions options;
      options.cpu = cpu;
      const Tensor got = compiler
                             .compile(ir::parseModule("func @f(%x: " + type + ") -> (" + type +
                                                      ") {\n  %y = layer_norm %x {axis = -1, eps = 0.001} : " + type +
                                                      "\n  return %y\n}\n"),
                                      "f", "cpu", options)
                             ->run(std::vector<Tensor>{x})[0];
      std::vector<float> expected(static_cast<size_t>(5 * n));
      tsl_k_layernorm_f32(reinterpret_cast<const float*>(contiguous(x).data()), expected.data(), 0, 5, n, 1, 0.001);
      CHECK(std::memcmp(got.data(), expected.data(), expected.size() * sizeof(float)) == 0);
      // and eager layer-norm within an ulp or two
      const Tensor eager = contiguous(layerNorm(x, -1, 0.001));
      for (int64_t i = 0; i < 5 * n; ++i)
        CHECK(std::abs(reinterpret_cast<const float*>(got.data())[i] - reinterpret_cast<const float*>(eager.data())[i]) <=
              4e-6f * (1.0f + std::abs(expected[static_cast<size_t>(i)])));
    }
}
