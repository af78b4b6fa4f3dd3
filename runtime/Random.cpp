// runtime/Random.cpp — Philox 4x32-10 and the distributions built on it.
#include "runtime/Random.h"

#include "runtime/Dispatch.h"
#include "runtime/Elementwise.h"
#include "runtime/ThreadPool.h"
#include "runtime/Views.h"

#include <cmath>

namespace tsl {

namespace {

constexpr uint32_t kMultiplier0 = 0xD2511F53, kMultiplier1 = 0xCD9E8D57;
constexpr uint32_t kWeyl0 = 0x9E3779B9, kWeyl1 = 0xBB67AE85;
/// Counter word 3 of key derivation, so split keys never coincide with data blocks.
constexpr uint32_t kSplitDomain = 0x53504C54; // "SPLT"

/// Word `i` of the stream of `key` (four words per Philox block).
struct Stream {
  std::array<uint32_t, 2> key;
  uint32_t word(uint64_t i) const {
    const uint64_t block = i / 4;
    return philox({static_cast<uint32_t>(block), static_cast<uint32_t>(block >> 32), 0, 0}, key)[i % 4];
  }
};

/// A uniform in [0, 1) from the top `bits` bits of a random word (bits <= 32).
double uniformFromBits(uint32_t word, int bits) { return std::ldexp(static_cast<double>(word >> (32 - bits)), -bits); }

template <typename T>
constexpr int significandBits() {
  if constexpr (std::is_same_v<T, double>) return 53;
  else if constexpr (std::is_same_v<T, float>) return 24;
  else if constexpr (std::is_same_v<T, f16>) return 11;
  else return 8; // bf16
}

/// Element i of a uniform tensor of type T: one word, two for f64.
template <typename T>
double uniformElement(const Stream& s, uint64_t i) {
  if constexpr (std::is_same_v<T, double>) {
    const uint64_t hi = s.word(2 * i) >> 5, lo = s.word(2 * i + 1) >> 6; // 27 + 26 bits
    return std::ldexp(static_cast<double>((hi << 26) | lo), -53);
  } else {
    return uniformFromBits(s.word(i), significandBits<T>());
  }
}

void checkFloat(DType dtype, const char* who) {
  if (!isFloat(dtype)) fail(ErrorKind::Type, who, ": dtype must be a float type, got ", dtypeName(dtype));
}

} // namespace

std::array<uint32_t, 4> philox(std::array<uint32_t, 4> c, std::array<uint32_t, 2> k) {
  for (int round = 0; round < 10; ++round) {
    const uint64_t p0 = uint64_t(kMultiplier0) * c[0], p1 = uint64_t(kMultiplier1) * c[2];
    c = {static_cast<uint32_t>(p1 >> 32) ^ c[1] ^ k[0], static_cast<uint32_t>(p1),
         static_cast<uint32_t>(p0 >> 32) ^ c[3] ^ k[1], static_cast<uint32_t>(p0)};
    k[0] += kWeyl0;
    k[1] += kWeyl1;
  }
  return c;
}

std::array<uint32_t, 2> keyWords(const Tensor& key, const char* who) {
  if (key.dtype() != DType::I64 || !(key.shape() == Shape{2}))
    fail(ErrorKind::Type, who, ": expects a key (an i64[2] from rng-key or rng-split), got ",
         dtypeName(key.dtype()), key.shape().str());
  const Tensor k = contiguous(key);
  const int64_t* words = reinterpret_cast<const int64_t*>(k.data());
  for (int i = 0; i < 2; ++i)
    if (words[i] < 0 || words[i] > 0xFFFFFFFFLL)
      fail(ErrorKind::Value, who, ": key word ", words[i], " is not a 32-bit value (keys come from rng-key)");
  return {static_cast<uint32_t>(words[0]), static_cast<uint32_t>(words[1])};
}

Tensor rngKey(int64_t seed) {
  Tensor key = Tensor::empty(DType::I64, Shape{2});
  int64_t* words = reinterpret_cast<int64_t*>(key.mutableData());
  const auto bits = static_cast<uint64_t>(seed);
  words[0] = static_cast<int64_t>(bits & 0xFFFFFFFFu);
  words[1] = static_cast<int64_t>(bits >> 32);
  return key;
}

Tensor rngSplit(const Tensor& key, int64_t n) {
  const auto words = keyWords(key, "rng-split");
  if (n < 0) fail(ErrorKind::Value, "rng-split: the number of keys must not be negative, got ", n);
  Tensor keys = Tensor::empty(DType::I64, Shape{n, 2});
  int64_t* out = reinterpret_cast<int64_t*>(keys.mutableData());
  for (int64_t j = 0; j < n; ++j) {
    const auto block = philox({static_cast<uint32_t>(j), static_cast<uint32_t>(uint64_t(j) >> 32), 0, kSplitDomain}, words);
    out[2 * j] = block[0];
    out[2 * j + 1] = block[1];
  }
  return keys;
}

Tensor randUniform(const Tensor& key, const Shape& shape, DType dtype) {
  checkFloat(dtype, "rand");
  const Stream stream{keyWords(key, "rand")};
  Tensor out = Tensor::empty(dtype, shape);
  dispatchDType(dtype, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (kIsFloatElement<T>) {
      T* o = reinterpret_cast<T*>(out.mutableData());
      parallelFor(out.numel(), int64_t(1) << 14, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) o[i] = convertElement<T>(uniformElement<T>(stream, static_cast<uint64_t>(i)));
      });
    }
  });
  return out;
}

Tensor randNormal(const Tensor& key, const Shape& shape, DType dtype) {
  checkFloat(dtype, "randn");
  const Stream stream{keyWords(key, "randn")};
  Tensor out = Tensor::empty(dtype, shape);
  const int64_t n = out.numel();
  dispatchDType(dtype, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (kIsFloatElement<T>) {
      T* o = reinterpret_cast<T*>(out.mutableData());
      // Pair p gives elements 2p and 2p+1 from words 2p and 2p+1 (Box–Muller).
      parallelFor((n + 1) / 2, int64_t(1) << 13, [&](int64_t begin, int64_t end) {
        for (int64_t p = begin; p < end; ++p) {
          const double u1 = std::ldexp(static_cast<double>(stream.word(2 * p)) + 1.0, -32); // (0, 1]
          const double u2 = std::ldexp(static_cast<double>(stream.word(2 * p + 1)), -32);   // [0, 1)
          const double radius = std::sqrt(-2.0 * std::log(u1)), angle = 2.0 * M_PI * u2;
          o[2 * p] = convertElement<T>(radius * std::cos(angle));
          if (2 * p + 1 < n) o[2 * p + 1] = convertElement<T>(radius * std::sin(angle));
        }
      });
    }
  });
  return out;
}

Tensor dropout(const Tensor& key, const Tensor& x, double rate) {
  if (!(rate >= 0.0 && rate <= 1.0)) fail(ErrorKind::Value, "dropout: rate must be in [0, 1], got ", rate);
  // A bare number is made strong first (f32 for a weak float), as the type rule says.
  const Tensor input = x.weak() ? astype(x.strengthened(), DType::F32) : isFloat(x.dtype()) ? x : astype(x, DType::F32);
  if (rate == 0.0) return input.isScalar() ? input.strengthened() : contiguous(input);
  const Tensor keep = randUniform(key, input.shape(), DType::F64);
  const Tensor mask = applyBinary(BinaryOp::GreaterEqual, keep, Tensor::weakFloat(rate));
  const Tensor zero = Tensor::zeros(input.dtype(), input.shape());
  const Tensor scaled = rate >= 1.0 ? zero : applyBinary(BinaryOp::Mul, input, Tensor::weakFloat(1.0 / (1.0 - rate)));
  return where(mask, scaled, zero);
}

} // namespace tsl
