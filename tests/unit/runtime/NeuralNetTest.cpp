// tests/unit/runtime/NeuralNetTest.cpp — conv2d and pooling against naive float64 loops.
//
// The references below are the definitions written as plain loops in double, reading the
// inputs through their strides (not through contiguous(), which the kernels use). Random
// cases cover batch and channel counts, kernels from 1x1 to 5x5 and non-square, strides,
// paddings, rectangular images and images larger than one im2col block, in every float
// dtype. The tolerance of a result is derived from how it was computed: the sum of the
// absolute values of its terms bounds the accumulation error, and f16/bf16 results may be
// off by the one final rounding and no more. Known answers, errors and views follow.
#include "runtime/NeuralNet.h"

#include "runtime/Dispatch.h"
#include "runtime/Views.h"

#include <cmath>
#include <doctest/doctest.h>
#include <limits>
#include <random>
#include <string>
#include <vector>

using namespace tsl;

namespace {

/// A tensor of `dtype` with uniform values in [-1, 1), rounded to the dtype.
Tensor randomTensor(DType dtype, const Shape& shape, std::mt19937_64& rng) {
  Tensor t = Tensor::empty(dtype, shape);
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  dispatchDType(dtype, [&](auto tag) {
    using T = decltype(tag);
    T* data = reinterpret_cast<T*>(t.mutableData());
    for (int64_t i = 0; i < t.numel(); ++i) data[i] = convertElement<T>(uniform(rng));
  });
  return t;
}

/// A contiguous tensor holding `data` in row-major order.
Tensor tensorOf(DType dtype, const Shape& shape, const std::vector<double>& data) {
  REQUIRE(static_cast<int64_t>(data.size()) == shape.numel());
  Tensor t = Tensor::empty(dtype, shape);
  dispatchDType(dtype, [&](auto tag) {
    using T = decltype(tag);
    T* out = reinterpret_cast<T*>(t.mutableData());
    for (size_t i = 0; i < data.size(); ++i) out[i] = convertElement<T>(data[i]);
  });
  return t;
}

/// The elements of a rank-4 tensor as doubles in logical order, read through its strides.
std::vector<double> values(const Tensor& t) {
  REQUIRE(t.rank() == 4);
  const Shape& s = t.shape();
  const int64_t* st = t.strides();
  std::vector<double> out;
  dispatchDType(t.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* base = reinterpret_cast<const T*>(t.data());
    for (int64_t a = 0; a < s[0]; ++a)
      for (int64_t b = 0; b < s[1]; ++b)
        for (int64_t c = 0; c < s[2]; ++c)
          for (int64_t d = 0; d < s[3]; ++d)
            out.push_back(toDouble(base[a * st[0] + b * st[1] + c * st[2] + d * st[3]]));
  });
  return out;
}

/// Reference results, and for each the sum of the absolute values of its terms (0 where
/// the result is exact, as a max is).
struct Reference {
  Shape shape;
  std::vector<double> value, magnitude;
};

int64_t outputSize(int64_t size, int64_t kernel, int64_t stride, int64_t pad) {
  return (size + 2 * pad - kernel) / stride + 1;
}

Reference referenceConv(const Tensor& x, const Tensor& w, const Conv2dAttrs& a) {
  const std::vector<double> xv = values(x), wv = values(w);
  const Shape &xs = x.shape(), &ws = w.shape();
  const int64_t n = xs[0], c = xs[1], h = xs[2], wd = xs[3], o = ws[0], kh = ws[2], kw = ws[3];
  const int64_t ho = outputSize(h, kh, a.stride[0], a.padding[0]);
  const int64_t wo = outputSize(wd, kw, a.stride[1], a.padding[1]);
  Reference r{Shape{n, o, ho, wo}, {}, {}};
  for (int64_t in = 0; in < n; ++in)
    for (int64_t io = 0; io < o; ++io)
      for (int64_t i = 0; i < ho; ++i)
        for (int64_t j = 0; j < wo; ++j) {
          double sum = 0, magnitude = 0;
          for (int64_t ic = 0; ic < c; ++ic)
            for (int64_t ki = 0; ki < kh; ++ki)
              for (int64_t kj = 0; kj < kw; ++kj) {
                const int64_t y = i * a.stride[0] - a.padding[0] + ki,
                              z = j * a.stride[1] - a.padding[1] + kj;
                if (y < 0 || y >= h || z < 0 || z >= wd) continue; // zero padding
                const double term =
                    xv[((in * c + ic) * h + y) * wd + z] * wv[((io * c + ic) * kh + ki) * kw + kj];
                sum += term;
                magnitude += std::abs(term);
              }
          r.value.push_back(sum);
          r.magnitude.push_back(magnitude);
        }
  return r;
}

Reference referencePool(bool isMax, const Tensor& x, const Pool2dAttrs& a) {
  const std::vector<double> xv = values(x);
  const Shape& xs = x.shape();
  const int64_t planes = xs[0] * xs[1], h = xs[2], wd = xs[3];
  const int64_t ho = outputSize(h, a.kernel[0], a.stride[0], a.padding[0]);
  const int64_t wo = outputSize(wd, a.kernel[1], a.stride[1], a.padding[1]);
  const double area = static_cast<double>(a.kernel[0] * a.kernel[1]);
  Reference r{Shape{xs[0], xs[1], ho, wo}, {}, {}};
  for (int64_t p = 0; p < planes; ++p)
    for (int64_t i = 0; i < ho; ++i)
      for (int64_t j = 0; j < wo; ++j) {
        double best = -INFINITY, sum = 0, magnitude = 0;
        for (int64_t ki = 0; ki < a.kernel[0]; ++ki)
          for (int64_t kj = 0; kj < a.kernel[1]; ++kj) {
            const int64_t y = i * a.stride[0] - a.padding[0] + ki,
                          z = j * a.stride[1] - a.padding[1] + kj;
            if (y < 0 || y >= h || z < 0 || z >= wd) continue; // -inf / 0 padding
            const double v = xv[(p * h + y) * wd + z];
            best = std::max(best, v);
            sum += v;
            magnitude += std::abs(v);
          }
        r.value.push_back(isMax ? best : sum / area);
        r.magnitude.push_back(isMax ? 0.0 : magnitude / area);
      }
  return r;
}

/// Allowed error: rounding * |reference| + accumulation * magnitude + absolute.
struct Tolerance {
  double rounding, accumulation, absolute;
};

Tolerance toleranceFor(DType dtype) {
  switch (dtype) {
  case DType::F64:
    return {0, 1e-12, 0};
  case DType::F32:
    return {0, 1e-5, 0};
  // Float accumulation, then one rounding to nearest: half an ulp, 2^-11 resp. 2^-8 of
  // the value, or half the smallest f16 subnormal spacing near zero.
  case DType::F16:
    return {std::ldexp(1.0, -11), 1e-5, std::ldexp(1.0, -25)};
  case DType::BF16:
    return {std::ldexp(1.0, -8), 1e-5, 0};
  default:
    FAIL("not a float dtype");
    return {};
  }
}

/// Checks `got` against the reference, with no tolerance at all when `exact`.
void checkAgainst(const Tensor& got, DType dtype, const Reference& ref, bool exact = false) {
  REQUIRE(got.dtype() == dtype);
  REQUIRE(got.shape() == ref.shape);
  CHECK(got.isContiguous());
  const std::vector<double> gv = values(got);
  const Tolerance tol = exact ? Tolerance{0, 0, 0} : toleranceFor(dtype);
  int reported = 0;
  for (size_t i = 0; i < gv.size(); ++i) {
    const double allowed =
        tol.rounding * std::abs(ref.value[i]) + tol.accumulation * ref.magnitude[i] + tol.absolute;
    if (std::abs(gv[i] - ref.value[i]) <= allowed) continue;
    if (reported++ < 5) { // a few concrete mismatches, not thousands
      CAPTURE(i);
      CHECK(gv[i] == doctest::Approx(ref.value[i]));
    }
  }
  CHECK(reported == 0);
}

const DType kFloatDTypes[] = {DType::F32, DType::F64, DType::F16, DType::BF16};

struct ConvCase {
  Shape x, w;
  std::array<int64_t, 2> stride, padding;
};

const ConvCase kConvCases[] = {
    {{1, 1, 5, 5}, {1, 1, 3, 3}, {1, 1}, {0, 0}},      // one image, one channel
    {{2, 3, 7, 9}, {4, 3, 3, 2}, {2, 1}, {1, 0}},      // non-square kernel and stride
    {{3, 4, 8, 6}, {5, 4, 5, 5}, {2, 2}, {2, 2}},      // 5x5, stride 2, padding 2
    {{2, 5, 6, 6}, {3, 5, 1, 1}, {1, 1}, {0, 0}},      // 1x1 reading the image directly
    {{1, 2, 5, 4}, {3, 2, 1, 1}, {2, 2}, {1, 1}},      // 1x1 with stride and padding
    {{2, 2, 4, 11}, {2, 2, 2, 3}, {1, 3}, {0, 2}},     // wide stride, padding beyond it
    {{1, 3, 3, 3}, {2, 3, 3, 3}, {1, 1}, {0, 0}},      // window exactly the image
    {{2, 1, 1, 1}, {2, 1, 3, 3}, {1, 1}, {1, 1}},      // one pixel, mostly padding
    {{2, 16, 50, 47}, {8, 16, 3, 3}, {1, 1}, {1, 1}},  // several im2col blocks per image
    {{1, 64, 8, 200}, {2, 64, 5, 5}, {1, 1}, {0, 0}},  // one output row is past the budget
    {{1, 64, 60, 100}, {4, 64, 1, 1}, {1, 1}, {0, 0}}, // 1x1 over an image of two blocks
    {{5, 3, 33, 17}, {6, 3, 3, 3}, {2, 2}, {1, 1}},    // odd sizes with stride 2
};

struct PoolCase {
  Shape x;
  std::array<int64_t, 2> kernel, stride, padding;
};

const PoolCase kPoolCases[] = {
    {{1, 1, 4, 4}, {2, 2}, {2, 2}, {0, 0}}, {{2, 3, 7, 9}, {3, 3}, {2, 2}, {1, 1}},
    {{2, 2, 6, 5}, {3, 2}, {1, 2}, {1, 1}}, {{1, 4, 5, 5}, {1, 1}, {1, 1}, {0, 0}},
    {{3, 2, 9, 8}, {5, 5}, {2, 3}, {2, 2}}, {{2, 3, 8, 8}, {2, 2}, {2, 1}, {1, 0}},
    {{1, 2, 3, 3}, {3, 3}, {1, 1}, {0, 0}}, {{4, 8, 33, 31}, {3, 3}, {2, 2}, {1, 1}},
};

std::string caseName(const Shape& x, const Shape& w, const std::array<int64_t, 2>& stride,
                     const std::array<int64_t, 2>& padding, DType dtype) {
  return cat(dtypeName(dtype), " x", x.str(), " w", w.str(), " stride ", stride[0], ",", stride[1],
             " padding ", padding[0], ",", padding[1]);
}

/// The kind of error `fn` throws ("shape", "value", ...), or "none".
template <typename Fn>
std::string errorKind(Fn&& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return errorKindName(e.kind());
  }
  return "none";
}

} // namespace

TEST_CASE("conv2d matches a float64 loop over shapes, strides and paddings in every float dtype") {
  std::mt19937_64 rng(12345);
  for (DType dtype : kFloatDTypes)
    for (const ConvCase& c : kConvCases) {
      CAPTURE(caseName(c.x, c.w, c.stride, c.padding, dtype));
      const Conv2dAttrs attrs{c.stride, c.padding};
      const Tensor x = randomTensor(dtype, c.x, rng), w = randomTensor(dtype, c.w, rng);
      const Reference ref = referenceConv(x, w, attrs);
      CHECK(conv2dShape(c.x, c.w, attrs) == ref.shape);
      checkAgainst(conv2d(x, w, attrs), dtype, ref);
    }
}

TEST_CASE("max and average pooling match a float64 loop in every float dtype") {
  std::mt19937_64 rng(777);
  for (DType dtype : kFloatDTypes)
    for (const PoolCase& c : kPoolCases) {
      CAPTURE(caseName(c.x, Shape{c.kernel[0], c.kernel[1]}, c.stride, c.padding, dtype));
      const Pool2dAttrs attrs{c.kernel, c.stride, c.padding};
      const Tensor x = randomTensor(dtype, c.x, rng);
      const Reference maxRef = referencePool(true, x, attrs),
                      avgRef = referencePool(false, x, attrs);
      CHECK(pool2dShape(c.x, attrs) == maxRef.shape);
      checkAgainst(maxPool2d(x, attrs), dtype, maxRef, /*exact=*/true); // the max is an input
      checkAgainst(avgPool2d(x, attrs), dtype, avgRef);
    }
}

TEST_CASE("an all-ones 3x3 kernel sums each neighbourhood, padding adding zeros") {
  std::vector<double> image(16);
  for (int i = 0; i < 16; ++i) image[i] = i + 1; // rows 1..4, 5..8, 9..12, 13..16
  for (DType dtype : kFloatDTypes) {
    CAPTURE(dtypeName(dtype));
    const Tensor x = tensorOf(dtype, Shape{1, 1, 4, 4}, image);
    const Tensor ones = tensorOf(dtype, Shape{1, 1, 3, 3}, std::vector<double>(9, 1.0));
    CHECK(values(conv2d(x, ones, {})) == std::vector<double>{54, 63, 90, 99});
    CHECK(values(conv2d(x, ones, {{1, 1}, {1, 1}})) ==
          std::vector<double>{14, 24, 30, 22, 33, 54, 63, 45, 57, 90, 99, 69, 46, 72, 78, 54});
    CHECK(values(conv2d(x, ones, {{2, 2}, {1, 1}})) == std::vector<double>{14, 30, 57, 99});
  }
}

TEST_CASE("conv2d is cross-correlation: the kernel is not flipped") {
  // Weight 1 right of the centre picks each pixel's right neighbour (a true convolution
  // would pick the left one); the last column reads padding.
  std::vector<double> image(16), pick(9, 0.0);
  for (int i = 0; i < 16; ++i) image[i] = i + 1;
  pick[5] = 1;
  const Tensor out = conv2d(tensorOf(DType::F32, Shape{1, 1, 4, 4}, image),
                            tensorOf(DType::F32, Shape{1, 1, 3, 3}, pick), {{1, 1}, {1, 1}});
  CHECK(values(out) == std::vector<double>{2, 3, 4, 0, 6, 7, 8, 0, 10, 11, 12, 0, 14, 15, 16, 0});
}

TEST_CASE("several input and output channels: each output sums its channels with its weights") {
  // x: channel 0 all 1, channel 1 all 10 (2x2). Output 0 weighs them 1 and 2 (1x1 kernel),
  // output 1 weighs them -1 and 0.5.
  const Tensor x = tensorOf(DType::F64, Shape{1, 2, 2, 2}, {1, 1, 1, 1, 10, 10, 10, 10});
  const Tensor w = tensorOf(DType::F64, Shape{2, 2, 1, 1}, {1, 2, -1, 0.5});
  CHECK(values(conv2d(x, w, {})) == std::vector<double>{21, 21, 21, 21, 4, 4, 4, 4});
}

TEST_CASE("a 1x1 convolution is a matrix product over the channels") {
  // out[o, p] = sum_c w[o, c] * x[c, p], with p running over the pixels: written here as
  // the plain matrix product, without any window arithmetic.
  std::mt19937_64 rng(99);
  const int64_t c = 7, o = 5, pixels = 9 * 6;
  const Tensor x = randomTensor(DType::F64, Shape{1, c, 9, 6}, rng);
  const Tensor w = randomTensor(DType::F64, Shape{o, c, 1, 1}, rng);
  const std::vector<double> xv = values(x), wv = values(w), got = values(conv2d(x, w, {}));
  REQUIRE(static_cast<int64_t>(got.size()) == o * pixels);
  for (int64_t i = 0; i < o; ++i)
    for (int64_t p = 0; p < pixels; ++p) {
      double expected = 0;
      for (int64_t k = 0; k < c; ++k) expected += wv[i * c + k] * xv[k * pixels + p];
      CHECK(got[i * pixels + p] == doctest::Approx(expected).epsilon(1e-12));
    }
}

TEST_CASE("pooling known answers: padding is -inf for max and 0 for the average") {
  std::vector<double> image(16), negated(16);
  for (int i = 0; i < 16; ++i) {
    image[i] = i + 1;
    negated[i] = -(i + 1);
  }
  const Tensor x = tensorOf(DType::F32, Shape{1, 1, 4, 4}, image);
  const Tensor neg = tensorOf(DType::F32, Shape{1, 1, 4, 4}, negated);
  CHECK(values(maxPool2d(x, {{2, 2}, {2, 2}, {0, 0}})) == std::vector<double>{6, 8, 14, 16});
  CHECK(values(avgPool2d(x, {{2, 2}, {2, 2}, {0, 0}})) ==
        std::vector<double>{3.5, 5.5, 11.5, 13.5});
  // All values negative: a zero-padded max would give 0 at the corners.
  CHECK(values(maxPool2d(neg, {{3, 3}, {2, 2}, {1, 1}})) == std::vector<double>{-1, -2, -5, -6});
  // count_include_pad: the corner window holds 1, 2, 5, 6 and five zeros, divided by 9.
  const std::vector<double> avg = values(avgPool2d(x, {{3, 3}, {3, 3}, {1, 1}}));
  REQUIRE(avg.size() == 4);
  CHECK(avg[0] == doctest::Approx(14.0 / 9).epsilon(1e-6));
  CHECK(avg[3] == doctest::Approx((11 + 12 + 15 + 16) / 9.0).epsilon(1e-6));
}

TEST_CASE("max pooling propagates NaN as PyTorch does") {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (DType dtype : kFloatDTypes) {
    CAPTURE(dtypeName(dtype));
    // NaN first and last in its window: either order must give NaN.
    const Tensor x = tensorOf(dtype, Shape{1, 1, 2, 4}, {nan, 5, 1, 2, 3, 4, 7, nan});
    const std::vector<double> out = values(maxPool2d(x, {{2, 2}, {2, 2}, {0, 0}}));
    REQUIRE(out.size() == 2);
    CHECK(std::isnan(out[0]));
    CHECK(std::isnan(out[1]));
  }
}

TEST_CASE("strided and offset views give the same results as contiguous copies") {
  std::mt19937_64 rng(4242);
  const int64_t n = 2, c = 3, h = 7, wd = 6, o = 4;
  for (DType dtype : {DType::F32, DType::F16}) {
    CAPTURE(dtypeName(dtype));
    // NCHW logically, stored as NCWH (inner stride H).
    const int64_t swapLast[] = {0, 1, 3, 2};
    const Tensor xt = transpose(randomTensor(dtype, Shape{n, c, wd, h}, rng), swapLast);
    // Every other row, starting at row 1 and column 2: an offset and row stride 2 * width.
    const SliceRange ranges[] = {{}, {}, {1, std::nullopt, 2}, {2, 2 + wd, 1}};
    const Tensor xs = slice(randomTensor(dtype, Shape{n, c, 2 * h + 1, wd + 3}, rng), ranges);
    // Weights stored as IOWH: transposed twice into OIHW.
    const int64_t swapFirst[] = {1, 0, 2, 3};
    const Tensor w =
        transpose(transpose(randomTensor(dtype, Shape{c, o, 3, 3}, rng), swapFirst), swapLast);
    REQUIRE(xt.shape() == Shape{n, c, h, wd});
    REQUIRE(xs.shape() == Shape{n, c, h, wd});
    REQUIRE(w.shape() == Shape{o, c, 3, 3});
    CHECK_FALSE(xt.isContiguous());
    CHECK_FALSE(xs.isContiguous());
    CHECK_FALSE(w.isContiguous());
    const Conv2dAttrs conv{{2, 1}, {1, 1}};
    const Pool2dAttrs pool{{3, 3}, {2, 2}, {1, 1}};
    for (const Tensor& x : {xt, xs}) {
      checkAgainst(conv2d(x, w, conv), dtype, referenceConv(x, w, conv));
      checkAgainst(maxPool2d(x, pool), dtype, referencePool(true, x, pool), /*exact=*/true);
      checkAgainst(avgPool2d(x, pool), dtype, referencePool(false, x, pool));
      // The view is copied before the kernel runs, so the results are identical.
      CHECK(values(conv2d(x, w, conv)) == values(conv2d(contiguous(x), contiguous(w), conv)));
    }
  }
}

TEST_CASE("empty batches, channels and outputs") {
  const Tensor none = Tensor::zeros(DType::F32, Shape{0, 3, 5, 5});
  const Tensor w = Tensor::zeros(DType::F32, Shape{2, 3, 3, 3});
  CHECK(conv2d(none, w, {}).shape() == Shape{0, 2, 3, 3});
  CHECK(maxPool2d(none, {{2, 2}, {2, 2}, {0, 0}}).shape() == Shape{0, 3, 2, 2});
  CHECK(conv2d(Tensor::zeros(DType::F32, Shape{1, 3, 5, 5}),
               Tensor::zeros(DType::F32, Shape{0, 3, 3, 3}), {})
            .shape() == Shape{1, 0, 3, 3});
  // No input channels: every output is an empty sum.
  const Tensor noChannels = Tensor::zeros(DType::F64, Shape{2, 0, 4, 4});
  const Tensor out = conv2d(noChannels, Tensor::zeros(DType::F64, Shape{3, 0, 2, 2}), {});
  CHECK(out.shape() == Shape{2, 3, 3, 3});
  CHECK(values(out) == std::vector<double>(54, 0.0));
}

TEST_CASE("conv2d reports each kind of mistake") {
  const auto f32 = [](Shape s) { return Tensor::zeros(DType::F32, s); };
  const Tensor x = f32({2, 3, 8, 8}), w = f32({5, 3, 3, 3});
  CHECK(errorKind([&] { conv2d(f32({3, 8, 8}), w, {}); }) == "shape");
  CHECK(errorKind([&] { conv2d(x, f32({5, 3, 3}), {}); }) == "shape");
  CHECK(errorKind([&] { conv2d(Tensor::ofFloat(1.0), w, {}); }) == "shape");
  CHECK(errorKind([&] { conv2d(x, f32({5, 3, 0, 3}), {}); }) == "shape");
  CHECK(errorKind([&] { conv2d(x, w, {{0, 1}, {0, 0}}); }) == "value");
  CHECK(errorKind([&] { conv2d(x, w, {{1, -2}, {0, 0}}); }) == "value");
  CHECK(errorKind([&] { conv2d(x, w, {{1, 1}, {0, -1}}); }) == "value");
  CHECK(errorKind([&] { conv2d(f32({1, 3, 2, 8}), w, {}); }) == "shape");
  CHECK(errorKind([&] {
          conv2d(f32({1, 3, 2, 8}), w, {{1, 1}, {1, 0}});
        }) == "none"); // fits once padded
  CHECK(errorKind([&] {
          conv2d(Tensor::zeros(DType::I32, {2, 3, 8, 8}), Tensor::zeros(DType::I32, {5, 3, 3, 3}),
                 {});
        }) == "type");
  CHECK(errorKind([&] { conv2d(Tensor::zeros(DType::Bool, {2, 3, 8, 8}), w, {}); }) == "type");
  CHECK(errorKind([&] { conv2d(x, Tensor::zeros(DType::F64, {5, 3, 3, 3}), {}); }) == "type");
  // The shape rule alone reports the same shape and value errors.
  CHECK(errorKind([&] { conv2dShape({2, 3, 8, 8}, {5, 4, 3, 3}, {}); }) == "shape");
  CHECK(errorKind([&] { conv2dShape({2, 3, 8, 8}, {5, 3, 3, 3}, {{1, 0}, {0, 0}}); }) == "value");
  CHECK(errorKind([&] { conv2dShape({2, 3, 2, 2}, {5, 3, 3, 3}, {}); }) == "shape");

  try {
    conv2d(x, f32({5, 4, 3, 3}), {});
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(std::string(e.what()) == "shape error: conv2d: input has 3 channels but the weights "
                                   "expect 4 (x f32[2,3,8,8], w f32[5,4,3,3])");
  }
  try {
    conv2d(f32({1, 3, 2, 8}), w, {});
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(std::string(e.what()) ==
          "shape error: conv2d: the 3x3 window is larger than the padded 2x8 input "
          "(x f32[1,3,2,8], w f32[5,3,3,3], padding [0,0])");
  }
}

TEST_CASE("pooling reports each kind of mistake") {
  const Tensor x = Tensor::zeros(DType::F32, Shape{2, 3, 8, 8});
  for (auto pool : {&maxPool2d, &avgPool2d}) {
    CHECK(errorKind([&] {
            pool(Tensor::zeros(DType::F32, Shape{3, 8, 8}), {{2, 2}, {2, 2}, {0, 0}});
          }) == "shape");
    CHECK(errorKind([&] { pool(x, {{0, 2}, {1, 1}, {0, 0}}); }) == "value");
    CHECK(errorKind([&] { pool(x, {{2, 2}, {2, 0}, {0, 0}}); }) == "value");
    CHECK(errorKind([&] { pool(x, {{2, 2}, {2, 2}, {-1, 0}}); }) == "value");
    CHECK(errorKind([&] {
            pool(x, {{3, 3}, {1, 1}, {2, 1}});
          }) == "value"); // more than half the kernel
    CHECK(errorKind([&] { pool(x, {{9, 2}, {1, 1}, {0, 0}}); }) == "shape");
    CHECK(errorKind([&] {
            pool(Tensor::zeros(DType::I64, Shape{2, 3, 8, 8}), {{2, 2}, {2, 2}, {0, 0}});
          }) == "type");
  }
  CHECK(errorKind([&] { pool2dShape({2, 3, 8}, {{2, 2}, {2, 2}, {0, 0}}); }) == "shape");
  try {
    maxPool2d(x, {{9, 2}, {1, 1}, {0, 0}});
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(std::string(e.what()) == "shape error: max-pool2d: the 9x2 window is larger than the "
                                   "padded 8x8 input (x f32[2,3,8,8], padding [0,0])");
  }
}
