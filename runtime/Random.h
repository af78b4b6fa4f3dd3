// runtime/Random.h — counter-based random numbers (Philox 4x32-10).
//
// A key is an i64[2] tensor holding two 32-bit words. Every random tensor is a pure
// function of its key and shape: element i takes the words of Philox(counter = i / 4,
// key), so the same key gives the same bits on every run, machine and thread count, and
// programs that thread keys through `rng-split` are reproducible under jit too.
//
// Uniform floats use as many random bits as the dtype's significand holds (24 for f32,
// 53 for f64, 11 for f16, 8 for bf16) and lie in [0, 1). Normal values use Box–Muller in
// f64 (std::log, std::cos, std::sin), rounded once to the dtype.
#pragma once

#include "runtime/Tensor.h"

#include <array>
#include <cstdint>

namespace tsl {

/// One Philox 4x32-10 block.
std::array<uint32_t, 4> philox(std::array<uint32_t, 4> counter, std::array<uint32_t, 2> key);

/// The key for a seed (its low and high 32-bit words).
Tensor rngKey(int64_t seed);
/// n independent keys, i64[n, 2].
Tensor rngSplit(const Tensor& key, int64_t n);

Tensor randUniform(const Tensor& key, const Shape& shape, DType dtype);
Tensor randNormal(const Tensor& key, const Shape& shape, DType dtype);

/// Inverted dropout: each element kept with probability 1 - rate and scaled by
/// 1 / (1 - rate), else 0. rate must be in [0, 1]; rate 1 drops everything.
Tensor dropout(const Tensor& key, const Tensor& x, double rate);

/// Uniform integers in [lo, hi), i64: element i is lo + ⌊w·(hi - lo) / 2^64⌋ for the
/// 64-bit word w made of stream words 2i and 2i+1 (a bias below (hi - lo) / 2^64).
/// hi must exceed lo.
Tensor randInt(const Tensor& key, const Shape& shape, int64_t lo, int64_t hi);

/// One index per row of `logits` (over the last axis; rank 0 is refused), drawn with
/// probabilities softmax(logits) by the Gumbel-max rule: the argmax over j of
/// logits[j] - log(-log u_j), u_j the f64 uniform of element (row·n + j). A logit of
/// -inf is never drawn; a row of -inf (or with NaN) is a value error.
Tensor categorical(const Tensor& key, const Tensor& logits);

/// A uniformly random permutation of 0..n-1, i64[n]: Fisher–Yates from the top, step
/// i (n-1 down to 1) swapping position i with ⌊w_i·(i+1) / 2^64⌋ for 64-bit word w_i.
Tensor permutation(const Tensor& key, int64_t n);

/// The rows of x (axis 0) reordered by permutation(key, rows): take(x, perm, 0).
Tensor shuffle(const Tensor& key, const Tensor& x);

/// A :bool tensor of `shape`, element i true when the f64 uniform u_i < p_i (p
/// broadcast to shape): true with probability p, never for p <= 0, always for p >= 1.
Tensor bernoulli(const Tensor& key, const Tensor& p, const Shape& shape);

/// The two words of a key tensor; a type or shape error if it is not an i64[2] of words.
std::array<uint32_t, 2> keyWords(const Tensor& key, const char* who);

} // namespace tsl
