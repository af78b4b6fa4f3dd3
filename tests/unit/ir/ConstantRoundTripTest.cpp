// tests/unit/ir/ConstantRoundTripTest.cpp — constants of every dtype and shape print as
// text that parses back to the same bytes: scalars, small dense literals, hex for more
// than 16 elements, empty tensors, NaN and infinities.
#include "IrTestSupport.h"

#include <bit>
#include <cmath>
#include <limits>

using namespace tsl;
using namespace tsl::ir;
using namespace tsl::ir::test;

namespace {

constexpr DType kAllDTypes[] = {DType::Bool, DType::I32, DType::I64, DType::F16, DType::BF16, DType::F32, DType::F64};

/// A module whose function returns each of `values` as a constant.
std::unique_ptr<Module> constantsModule(const std::vector<Tensor>& values) {
  auto m = std::make_unique<Module>();
  Function& f = m->addFunction("constants", spanAt("c.tsl", 1, 1, 1, 2));
  Builder b(f.body());
  std::vector<Value*> results;
  uint32_t line = 2;
  for (const Tensor& t : values) {
    results.push_back(b.constant(t, spanAt("c.tsl", line, 7, line, 20)));
    ++line;
  }
  b.terminate(Structural::Return, results, spanAt("c.tsl", line, 3, line, 9));
  return m;
}

/// Checks the round trip and that every parsed constant has the bytes of `values`.
void checkConstants(const std::vector<Tensor>& values) {
  std::unique_ptr<Module> m = constantsModule(values);
  REQUIRE_NOTHROW(verify(*m));
  std::unique_ptr<Module> parsed = checkRoundTrip(*m);
  if (!parsed) return; // checkRoundTrip has reported why
  CHECK_NOTHROW(verify(*parsed));
  size_t i = 0;
  for (const auto& op : parsed->functions()[0]->body().ops()) {
    if (!op->code().is(Structural::Constant)) continue;
    REQUIRE(i < values.size());
    CAPTURE(i);
    CAPTURE(printConstant(values[i]));
    CHECK(op->constant().dtype() == values[i].dtype());
    CHECK(op->constant().shape() == values[i].shape());
    CHECK(bytesOf(op->constant()) == bytesOf(values[i]));
    ++i;
  }
  CHECK(i == values.size());
}

/// A float scalar of `dtype` with exactly these bits.
Tensor floatBits(DType dtype, uint64_t bits) {
  switch (dtype) {
  case DType::F16:
  case DType::BF16: return Tensor::scalarOf(static_cast<uint16_t>(bits), dtype);
  case DType::F32: return Tensor::scalarOf(static_cast<uint32_t>(bits), dtype);
  default: return Tensor::scalarOf(bits, dtype);
  }
}

} // namespace

TEST_CASE("scalar constants of every dtype round-trip bit for bit") {
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<Tensor> values = {
      Tensor::ofBool(true),
      Tensor::ofBool(false),
      Tensor::ofInt(-7, DType::I32),
      Tensor::ofInt(std::numeric_limits<int32_t>::min(), DType::I32),
      Tensor::ofInt(std::numeric_limits<int64_t>::min(), DType::I64),
      Tensor::ofInt(std::numeric_limits<int64_t>::max(), DType::I64),
  };
  for (DType d : {DType::F16, DType::BF16, DType::F32, DType::F64})
    for (double v : {0.1, -2.5, 1.0 / 3.0, 65504.0, 6.1e-5, -0.0, 0.0, 1e-7, inf, -inf, std::nan("")})
      values.push_back(Tensor::ofFloat(v, d));
  values.push_back(Tensor::ofFloat(1e300, DType::F64));
  values.push_back(Tensor::ofFloat(4.9e-324, DType::F64));                 // smallest subnormal
  values.push_back(Tensor::ofFloat(std::numeric_limits<float>::denorm_min(), DType::F32));
  values.push_back(Tensor::ofFloat(std::numeric_limits<float>::max(), DType::F32));
  values.push_back(floatBits(DType::F16, 0x0001));  // f16 subnormal
  values.push_back(floatBits(DType::BF16, 0x7f7f)); // largest bf16
  checkConstants(values);
  // Scalars print as plain literals, floats always with a dot or exponent.
  CHECK(printConstant(Tensor::ofBool(true)) == "true");
  CHECK(printConstant(Tensor::ofInt(-7, DType::I32)) == "-7");
  CHECK(printConstant(Tensor::ofFloat(2.0, DType::F64)) == "2.0");
  CHECK(printConstant(Tensor::ofFloat(-inf, DType::F32)) == "-inf");
}

TEST_CASE("a NaN with its sign bit set keeps it through the text form") {
  // BUG: printConstant prints every NaN as "nan" and the parser reads back the positive
  // quiet NaN, so a negative NaN (what x86 computes for 0.0/0.0, and so what
  // fold-constants can produce) does not parse back to the same bytes. Inline scalars and
  // dense literals of up to 16 elements are affected; hex constants are not.
  const std::vector<Tensor> values = {floatBits(DType::F32, 0xffc00000u), floatBits(DType::F64, 0xfff8000000000000ull)};
  checkConstants(values);
  const Tensor zero = Tensor::ofFloat(0.0, DType::F32);
  const Tensor quotient = applyBinary(BinaryOp::Div, zero, zero);
  CHECK(std::isnan(quotient.toDouble()));
  checkConstants({quotient});
}

TEST_CASE("small dense constants of every dtype print their elements and round-trip") {
  const std::vector<double> six = {1, -2, 3.5, 0, 1e-3, 70000};
  std::vector<Tensor> values;
  for (DType d : kAllDTypes) {
    CAPTURE(std::string(dtypeName(d)));
    const Tensor t = tensorOf(six, Shape{2, 3}, d);
    const std::string text = printConstant(t);
    CHECK(text.rfind("dense<[[", 0) == 0);
    CHECK(text.find("0x") == std::string::npos);
    values.push_back(t);
    values.push_back(tensorOf({4}, Shape{1}, d));
    values.push_back(tensorOf({1, 0, 1, 1, 0, 1, 1, 0}, Shape{2, 2, 2}, d));
  }
  CHECK(printConstant(tensorOf({1, 2, 3, 4, 5, 6}, Shape{2, 3}, DType::I64)) == "dense<[[1, 2, 3], [4, 5, 6]]>");
  CHECK(printConstant(tensorOf({1, 0}, Shape{2}, DType::Bool)) == "dense<[true, false]>");
  CHECK(printConstant(tensorOf({0.5, -1}, Shape{1, 2}, DType::F32)) == "dense<[[0.5, -1.0]]>");
  checkConstants(values);
}

TEST_CASE("a view constant (transposed, sliced) prints its elements in logical order") {
  const Tensor base = tensorOf({1, 2, 3, 4, 5, 6}, Shape{2, 3}, DType::I32);
  const Tensor t = transpose(base, {});
  CHECK(printConstant(t) == "dense<[[1, 4], [2, 5], [3, 6]]>");
  checkConstants({t});
}

TEST_CASE("constants with more than 16 elements print as hex bytes and round-trip exactly") {
  std::vector<double> many;
  for (int i = 0; i < 24; ++i) many.push_back(std::sin(i * 1.7) * std::pow(10.0, i % 7 - 3));
  std::vector<Tensor> values;
  for (DType d : kAllDTypes) {
    CAPTURE(std::string(dtypeName(d)));
    const Tensor t = tensorOf(many, Shape{4, 6}, d);
    const std::string text = printConstant(t);
    CHECK(text.rfind("dense<\"0x", 0) == 0);
    CHECK(text.size() == std::string("dense<\"0x\">").size() + 2 * 24 * dtypeSize(d));
    values.push_back(t);
  }
  // The boundary: 16 elements inline, 17 in hex.
  CHECK(printConstant(tensorOf(std::vector<double>(16, 1.0), Shape{16}, DType::F32)).find("0x") == std::string::npos);
  CHECK(printConstant(tensorOf(std::vector<double>(17, 1.0), Shape{17}, DType::F32)).find("0x") != std::string::npos);
  // A known encoding: i32 1..17, little-endian.
  std::vector<double> ints;
  for (int i = 1; i <= 17; ++i) ints.push_back(i);
  const std::string hex = printConstant(tensorOf(ints, Shape{17}, DType::I32));
  CHECK(hex.rfind("dense<\"0x01000000020000000300000004000000", 0) == 0);
  CHECK(hex.size() == 11 + 17 * 8);
  values.push_back(tensorOf(std::vector<double>(17, 1.0), Shape{17}, DType::F32));
  // NaN and negative zero inside hex constants keep their bits.
  std::vector<double> special(20, -0.0);
  special[3] = std::nan("");
  special[7] = -std::numeric_limits<double>::infinity();
  values.push_back(tensorOf(special, Shape{20}, DType::F64));
  checkConstants(values);
}

TEST_CASE("dense constants with NaN and infinities round-trip") {
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<Tensor> values;
  for (DType d : {DType::F16, DType::BF16, DType::F32, DType::F64}) {
    const Tensor t = tensorOf({std::nan(""), inf, -inf, -0.0}, Shape{4}, d);
    CHECK(printConstant(t) == "dense<[nan, inf, -inf, -0.0]>");
    values.push_back(t);
  }
  checkConstants(values);
}

TEST_CASE("empty constants round-trip") {
  CHECK(printConstant(Tensor::empty(DType::F32, Shape{0})) == "dense<[]>");
  checkConstants({Tensor::empty(DType::F32, Shape{0}), Tensor::empty(DType::I64, Shape{0})});
}

TEST_CASE("empty constants of rank 2 round-trip") {
  // BUG: printConstant writes one bracket per axis for any empty tensor ("dense<[[]]>" for
  // both f32[2,0] and f32[0,3]), but the parser reads a dense literal axis by axis: it
  // wants "dense<[[], []]>" for f32[2,0] and "dense<[]>" for f32[0,3]. The printed text
  // does not parse.
  checkConstants({Tensor::empty(DType::F32, Shape{2, 0})});
  checkConstants({Tensor::empty(DType::F32, Shape{0, 3})});
  checkConstants({Tensor::empty(DType::I32, Shape{2, 0, 3})});
}

TEST_CASE("constants written by hand parse to the values they spell") {
  const char* text = R"(func @f() -> (i64[2,2], f32, bool[3], f16[2], i32[17]) {
  %a = constant dense<[[1, -2], [3, 4]]> : i64[2,2]
  %b = constant -inf : f32
  %c = constant dense<[true, false, true]> : bool[3]
  %d = constant dense<[0.5, -inf]> : f16[2]
  %e = constant dense<"0x0100000002000000030000000400000005000000060000000700000008000000090000000a0000000b0000000c0000000d0000000e0000000f0000001000000011000000"> : i32[17]
  return %a, %b, %c, %d, %e
}
)";
  std::unique_ptr<Module> m;
  REQUIRE_NOTHROW(m = parseModule(text));
  REQUIRE_NOTHROW(verify(*m));
  std::vector<const Tensor*> c;
  for (const auto& op : m->functions()[0]->body().ops())
    if (op->code().is(Structural::Constant)) c.push_back(&op->constant());
  REQUIRE(c.size() == 5);
  CHECK(valuesOf(*c[0]) == std::vector<double>{1, -2, 3, 4});
  CHECK(std::isinf(c[1]->toDouble()));
  CHECK(c[1]->toDouble() < 0);
  CHECK(valuesOf(*c[2]) == std::vector<double>{1, 0, 1});
  CHECK(valuesOf(*c[3])[0] == 0.5);
  CHECK(valuesOf(*c[3])[1] == -std::numeric_limits<double>::infinity());
  std::vector<double> expected;
  for (int i = 1; i <= 17; ++i) expected.push_back(i);
  CHECK(valuesOf(*c[4]) == expected);
  checkRoundTrip(*m);
}
