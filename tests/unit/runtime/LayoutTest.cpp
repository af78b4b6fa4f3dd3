// tests/unit/runtime/LayoutTest.cpp — physical layouts against the known answers of
// docs/layouts.md, "Known answers" (groups L and M, and the eager halves of P3 and P5). The
// int8 rows use :bool, TSL's one 1-byte dtype: C0 depends only on the element size.
#include "Reference.h"
#include "runtime/Format.h"
#include "runtime/Layout.h"
#include "runtime/Ops.h"
#include "runtime/Reduce.h"

#include <cmath>
#include <cstring>

using namespace tsl;
using namespace tsl::test;

namespace {

int64_t at(Layout layout, const Shape& shape, DType dtype, std::initializer_list<int64_t> index) {
  return physicalOffset(layout, shape, dtype, std::data(index));
}

/// Counts the nonzero bytes-wide elements of a tensor's physical buffer.
int64_t nonzeroPhysical(const Tensor& t) {
  const size_t size = dtypeSize(t.dtype());
  const int64_t n = t.physicalShape().numel();
  const char* p = t.physicalData();
  int64_t count = 0;
  for (int64_t i = 0; i < n; ++i) {
    bool zero = true;
    for (size_t b = 0; b < size; ++b) zero &= p[static_cast<size_t>(i) * size + b] == 0;
    count += zero ? 0 : 1;
  }
  return count;
}

/// Values 1..n (never 0, so padding is told apart) in `shape`.
Tensor counting(const Shape& shape, DType dtype) {
  std::vector<double> v(static_cast<size_t>(shape.numel()));
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<double>(i % 100 + 1);
  return tensorOf(v, shape, dtype);
}

bool samePhysicalBytes(const Tensor& a, const Tensor& b) {
  const int64_t bytes = a.physicalShape().numel() * static_cast<int64_t>(dtypeSize(a.dtype()));
  return bytes == b.physicalShape().numel() * static_cast<int64_t>(dtypeSize(b.dtype())) &&
         std::memcmp(a.physicalData(), b.physicalData(), static_cast<size_t>(bytes)) == 0;
}

Tensor op(OpKind kind, const OpAttrs& attrs, std::vector<Tensor> inputs) { return runOp(kind, attrs, inputs); }

} // namespace

TEST_CASE("L1 FRACTAL_Z of OIHW weights: shape, padding, bytes") {
  const Shape w{20, 19, 3, 3};
  CHECK(physicalShape(Layout::FractalZ, w, DType::F16) == Shape{18, 2, 16, 16});
  CHECK(physicalBytes(Layout::FractalZ, w, DType::F16) == 18432);
  CHECK(physicalShape(Layout::FractalZ, w, DType::Bool) == Shape{9, 2, 16, 32});
  const Tensor z = toLayout(counting(w, DType::F16), Layout::FractalZ);
  CHECK(z.layout() == Layout::FractalZ);
  CHECK(nonzeroPhysical(z) == 3420);
  CHECK(z.physicalShape().numel() == 9216);
}

TEST_CASE("L2 FRACTAL_Z offsets") {
  const Shape w{20, 19, 3, 3};
  const DType h = DType::F16;
  CHECK(at(Layout::FractalZ, w, h, {1, 0, 0, 0}) == 16);
  CHECK(at(Layout::FractalZ, w, h, {0, 1, 0, 0}) == 1);
  CHECK(at(Layout::FractalZ, w, h, {0, 0, 0, 1}) == 512);
  CHECK(at(Layout::FractalZ, w, h, {16, 0, 0, 0}) == 256);
  CHECK(at(Layout::FractalZ, w, h, {0, 16, 0, 0}) == 4608);
  CHECK(at(Layout::FractalZ, w, h, {19, 18, 2, 2}) == 9010);
}

TEST_CASE("L3 FRACTAL_NZ shape and bytes") {
  const Shape m{8, 100, 30};
  CHECK(physicalShape(Layout::FractalNZ, m, DType::F16) == Shape{8, 2, 7, 16, 16});
  CHECK(physicalBytes(Layout::FractalNZ, m, DType::F16) == 57344);
  CHECK(m.numel() * 2 == 48000);
  CHECK(physicalShape(Layout::FractalNZ, m, DType::Bool) == Shape{8, 1, 7, 16, 32});
}

TEST_CASE("L4 FRACTAL_NZ offsets") {
  const Shape m{8, 100, 30};
  const DType h = DType::F16;
  CHECK(at(Layout::FractalNZ, m, h, {0, 0, 1}) == 1);
  CHECK(at(Layout::FractalNZ, m, h, {0, 1, 0}) == 16);
  CHECK(at(Layout::FractalNZ, m, h, {0, 16, 0}) == 256);
  CHECK(at(Layout::FractalNZ, m, h, {0, 0, 16}) == 1792);
  CHECK(at(Layout::FractalNZ, m, h, {1, 0, 0}) == 3584);
  CHECK(at(Layout::FractalNZ, m, h, {7, 99, 29}) == 28477);
}

TEST_CASE("L5 round trips are exact and every padding element is zero") {
  struct Case {
    Layout layout;
    Shape shape;
    DType dtype;
  };
  const Case cases[] = {
      {Layout::FractalNZ, {8, 100, 30}, DType::F16}, {Layout::FractalNZ, {5, 7}, DType::F32},
      {Layout::NC1HWC0, {2, 33, 5, 7}, DType::Bool},   {Layout::NC1HWC0, {1, 19, 3, 3}, DType::F32},
      {Layout::FractalZ, {20, 19, 3, 3}, DType::F16}, {Layout::FractalZ, {3, 40, 1, 2}, DType::Bool},
      {Layout::NHWC, {2, 3, 4, 5}, DType::I32},
  };
  for (const Case& c : cases) {
    CAPTURE(layoutName(c.layout));
    CAPTURE(c.shape.str());
    const Tensor x = counting(c.shape, c.dtype);
    const Tensor laid = toLayout(x, c.layout);
    CHECK(laid.layout() == c.layout);
    CHECK(laid.shape() == c.shape);
    // Every logical element is nonzero, so the nonzero count says the padding is zero.
    CHECK(nonzeroPhysical(laid) == c.shape.numel());
    const Tensor back = toLayout(laid, Layout::RowMajor);
    CHECK(back.layout() == Layout::RowMajor);
    CHECK(valuesOf(back) == valuesOf(x));
  }
  CHECK(physicalShape(Layout::NC1HWC0, {2, 33, 5, 7}, DType::Bool) == Shape{2, 2, 5, 7, 32});
}

TEST_CASE("L6 NC1HWC0 with N = 1 and H·W a multiple of 16 is byte-identical to FRACTAL_NZ of (H·W × C)") {
  for (auto [h, w, c, bytes] : {std::array<int64_t, 4>{4, 4, 19, 1024}, std::array<int64_t, 4>{8, 2, 40, 1536}}) {
    CAPTURE(c);
    const Tensor x = counting({1, c, h, w}, DType::F16);
    const int64_t toNhwc[] = {0, 2, 3, 1};
    const Tensor matrix = reshape(contiguous(transpose(x, toNhwc)), Shape{h * w, c});
    const Tensor a = toLayout(x, Layout::NC1HWC0), b = toLayout(matrix, Layout::FractalNZ);
    CHECK(physicalBytes(Layout::NC1HWC0, x.shape(), DType::F16) == bytes);
    CHECK(samePhysicalBytes(a, b));
  }
}

TEST_CASE("L7 H·W not a multiple of 16 needs a conversion") {
  CHECK(physicalBytes(Layout::NC1HWC0, {1, 19, 3, 3}, DType::F16) == 576);
  CHECK(physicalBytes(Layout::FractalNZ, {9, 19}, DType::F16) == 1024);
}

TEST_CASE("L8 a batch is the batched NZ of [N, H·W, C], not NZ of the (N·H·W × C) matrix") {
  const Tensor x = counting({2, 19, 4, 4}, DType::F16);
  const int64_t toNhwc[] = {0, 2, 3, 1};
  const Tensor nhwc = contiguous(transpose(x, toNhwc));
  const Tensor a = toLayout(x, Layout::NC1HWC0);
  CHECK(samePhysicalBytes(a, toLayout(reshape(nhwc, Shape{2, 16, 19}), Layout::FractalNZ)));
  CHECK_FALSE(samePhysicalBytes(a, toLayout(reshape(nhwc, Shape{32, 19}), Layout::FractalNZ)));
}

TEST_CASE("L9 small channel counts in NC1HWC0 and NHWC") {
  for (int64_t c : {1, 3, 15, 17, 33}) {
    CAPTURE(c);
    const Tensor x = counting({2, c, 3, 2}, DType::F32);
    const Tensor blocked = toLayout(x, Layout::NC1HWC0);
    CHECK(blocked.physicalShape() == Shape{2, (c + 15) / 16, 3, 2, 16});
    CHECK(valuesOf(toLayout(blocked, Layout::RowMajor)) == valuesOf(x));
    const Tensor nhwc = toLayout(x, Layout::NHWC);
    CHECK(nhwc.physicalShape() == Shape{2, 3, 2, c});
    CHECK(std::vector<int64_t>(nhwc.strides(), nhwc.strides() + 4) == std::vector<int64_t>{3 * 2 * c, 1, 2 * c, c});
    CHECK(valuesOf(nhwc) == valuesOf(x));
    // Element (n, c, h, w) sits at ((n·H + h)·W + w)·C + c.
    const float* p = reinterpret_cast<const float*>(nhwc.physicalData());
    CHECK(p[((1 * 3 + 2) * 2 + 1) * c + (c - 1)] == static_cast<float>(valuesOf(x)[static_cast<size_t>(
                                                         ((1 * c + (c - 1)) * 3 + 2) * 2 + 1)]));
  }
}

TEST_CASE("L10 a cast that changes the element size changes C0") {
  // TSL's one 1-byte dtype is :bool (TSL has no int8 tensors): it stands for int8.

  const Tensor x = toLayout(counting({1, 33, 2, 2}, DType::Bool), Layout::NC1HWC0);
  CHECK(x.physicalShape() == Shape{1, 2, 2, 2, 32});
  const Tensor h = astype(x, DType::F16);
  CHECK(h.layout() == Layout::NC1HWC0);
  CHECK(h.physicalShape() == Shape{1, 3, 2, 2, 16});
  CHECK(valuesOf(h) == valuesOf(astype(counting({1, 33, 2, 2}, DType::Bool), DType::F16)));
}

TEST_CASE("M the cube's data orders on a 4×4 matrix of 2×2 fractals") {
  auto order = [](FractalOrder o) {
    std::vector<int64_t> out(16);
    for (int64_t r = 0; r < 4; ++r)
      for (int64_t c = 0; c < 4; ++c) out[static_cast<size_t>(fractalOffset(r, c, 4, 4, 2, 2, o))] = r * 4 + c;
    return out;
  };
  CHECK(order(kOrderL0A) == std::vector<int64_t>{0, 1, 4, 5, 2, 3, 6, 7, 8, 9, 12, 13, 10, 11, 14, 15});
  CHECK(order(kOrderL0B) == std::vector<int64_t>{0, 4, 1, 5, 2, 6, 3, 7, 8, 12, 9, 13, 10, 14, 11, 15});
  CHECK(order(kOrderL0C) == std::vector<int64_t>{0, 1, 4, 5, 8, 9, 12, 13, 2, 3, 6, 7, 10, 11, 14, 15});
  // FRACTAL_Z is the L0B order of B[K = C1·Kh·Kw·C0, N]: element (k, n) of a weight with
  // Kh = Kw = 1 is logical (n, k).
  const Shape w{20, 19, 1, 1};
  for (int64_t n : {0, 5, 16, 19})
    for (int64_t k : {0, 7, 15, 18})
      CHECK(at(Layout::FractalZ, w, DType::F16, {n, k, 0, 0}) == fractalOffset(k, n, 32, 20, 16, 16, kOrderL0B));
  // FRACTAL_NZ is the L0C order of each matrix.
  CHECK(at(Layout::FractalNZ, {100, 30}, DType::F16, {37, 21}) == fractalOffset(37, 21, 100, 30, 16, 16, kOrderL0C));
}

TEST_CASE("P3 padding never reaches a reduction over C (C = 19 in NC1HWC0)") {
  const Shape s{1, 19, 2, 2};
  const Tensor zeros = toLayout(Tensor::zeros(DType::F32, s), Layout::NC1HWC0);
  const Tensor e = op(OpKind::Exp, NoAttrs{}, {zeros});
  CHECK(e.layout() == Layout::NC1HWC0);
  CHECK(valuesOf(reduce(ReduceOp::Sum, e, ReduceAttrs{{1}})) == std::vector<double>(4, 19.0));
  for (double v : valuesOf(op(OpKind::Softmax, AxisAttrs{1}, {zeros}))) CHECK(v == doctest::Approx(1.0 / 19.0));
  const Tensor ones = op(OpKind::Exp, NoAttrs{}, {zeros});
  CHECK(valuesOf(reduce(ReduceOp::Mean, ones, ReduceAttrs{})) == std::vector<double>{1.0});
  const Tensor minusOnes = op(OpKind::Neg, NoAttrs{}, {ones});
  CHECK(minusOnes.layout() == Layout::NC1HWC0);
  CHECK(valuesOf(reduce(ReduceOp::Max, minusOnes, ReduceAttrs{{1}})) == std::vector<double>(4, -1.0));
}

TEST_CASE("P5 a bias added to NZ rows reaches only the logical rows") {
  const Tensor x = toLayout(Tensor::zeros(DType::F16, {100, 30}), Layout::FractalNZ);
  const Tensor biased = op(OpKind::Add, NoAttrs{}, {x, tensorOf(std::vector<double>(30, 1.0), {30}, DType::F16)});
  CHECK(biased.layout() == Layout::FractalNZ);
  CHECK(valuesOf(reduce(ReduceOp::Sum, biased, ReduceAttrs{{0}})) == std::vector<double>(30, 100.0));
}

TEST_CASE("a layout is invisible to equality, printing and results") {
  const Tensor x = counting({2, 19, 3, 3}, DType::F32);
  for (Layout l : {Layout::NHWC, Layout::NC1HWC0}) {
    const Tensor y = toLayout(x, l);
    CHECK(tensorElementsEqual(x, y));
    CHECK(formatTensor(x) == formatTensor(y));
    const Tensor r = op(OpKind::Relu, NoAttrs{}, {y});
    CHECK(r.layout() == l);
    CHECK(valuesOf(r) == valuesOf(x));
  }
  // conv2d stores its result as its data operand; matmul as its left operand.
  const Tensor w = counting({4, 19, 3, 3}, DType::F32);
  const Tensor conv = op(OpKind::Conv2d, Conv2dAttrs{{1, 1}, {1, 1}}, {toLayout(x, Layout::NC1HWC0), w});
  CHECK(conv.layout() == Layout::NC1HWC0);
  CHECK(valuesOf(conv) == valuesOf(op(OpKind::Conv2d, Conv2dAttrs{{1, 1}, {1, 1}}, {x, w})));
  const Tensor a = counting({5, 7}, DType::F32), b = counting({7, 3}, DType::F32);
  const Tensor mm = op(OpKind::MatMul, NoAttrs{}, {toLayout(a, Layout::FractalNZ), b});
  CHECK(mm.layout() == Layout::FractalNZ);
  CHECK(valuesOf(mm) == valuesOf(op(OpKind::MatMul, NoAttrs{}, {a, b})));
}
