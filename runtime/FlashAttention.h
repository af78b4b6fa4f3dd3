// runtime/FlashAttention.h — scaled dot-product attention in blocks, over raw pointers, in
// memory linear in the sequence lengths.
//
// One definition shared by the eager kernels (runtime/Attention.cpp) and the :cpu
// backend's kernel library (compiler/cpu/kernels/Kernels.h), so both compute the same
// bits. No allocation (the caller passes scratch of scratchElements(g)), no exceptions.
//
// For one batch slice, q [Lq, d], k [Lk, d], v [Lk, dv] (rows contiguous) and an optional
// boolean mask read through its strides, out_i = Σ_j p_ij v_j with p_ij = exp(s_ij - lse_i),
// s_ij = (q_i · k_j)·c, c = 1/√d, over the keys query i may attend: mask true, and j ≤ i
// when causal (the top-left aligned lower triangle of an Lq × Lk matrix, PyTorch's
// is_causal). lse_i = log Σ_j exp(s_ij) is -inf for a query that may attend no key; its
// output, and every derivative through it, is 0.
//
// The [Lq, Lk] matrix of scores never exists: a tile of kTile queries meets a block of
// kBlock keys at a time (flash attention). The forward pass keeps, per query, the running
// maximum m and sum l of exponentials, and accumulates the unnormalised output in the
// output rows, rescaling them by exp(m_old - m_new) when a block raises the maximum. The
// derivatives recompute the scores block by block from the logsumexp saved per query:
//   dq_i = c Σ_j ds_ij k_j,  dk_j = c Σ_i ds_ij q_i,  dv_j = Σ_i p_ij g_i,
//   ds_ij = p_ij (g_i · v_j - δ_i),  δ_i = g_i · out_i,
// dq by query tiles and dk, dv by key tiles, so that every work item writes rows of its
// own. The forward derivative (jvp) runs the forward pass with the tangent scores
// ṡ_ij = c (q̇_i · k_j + q_i · k̇_j) beside the scores: out̊_i = Σ_j p_ij (ṡ_ij v_j + v̇_j)
// - (Σ_j p_ij ṡ_ij) out_i.
//
// A score tile is a product x · yᵀ where y is packed transposed ([depth][kTile], zero past
// its live rows) so that the inner loop runs along kTile contiguous lanes with four rows
// of x in registers; accumulating rows (p · v) keeps four output rows × a run of columns
// in registers over the whole block. Every multiply-add is an explicit fma (as FastMath's
// polynomials are), so the compilers of the two copies cannot contract differently.
#pragma once

#include "runtime/RowKernels.h"

#include <cmath>
#include <cstdint>
#include <limits>

// The tiles' vector multiply-adds are fused: GCC compiles the functions below with FP
// contraction (its optimize pragma; the TU's own flags say off), clang by the pragma each
// such function starts with. Scalar multiply-adds are explicit fma. GCC also vectorises
// the loops along a tile's lanes (the exponentials, maxima, sums) at the full vector
// width, which its tuning for this CPU would halve.
#if defined(__clang__)
#define TSL_FP_CONTRACT _Pragma("clang fp contract(fast)")
#else
#define TSL_FP_CONTRACT
#pragma GCC push_options
#pragma GCC optimize("fp-contract=fast")
#pragma GCC target("prefer-vector-width=512")
#endif

namespace tsl::flash {

/// The vectorised side of a score tile: queries (forward, dq, jvp) or keys (dk, dv).
constexpr int64_t kTile = 32;
/// The other side: a block of keys (forward, dq, jvp) or of queries (dk, dv).
constexpr int64_t kBlock = 64;
constexpr int kMaxBatchRank = 8;

/// What a kernel call computes; the IR rows' parts map onto these (runtime/Attention.cpp).
enum Mode : int32_t {
  kForward = 0, ///< out [B, Lq, dv] from q, k, v
  kLse = 1,     ///< lse [B, Lq] from q, k, v
  kGradQ = 2,   ///< dq [B, Lq, d] from q, k, v, g, lse, δ
  kGradK = 3,   ///< dk [B, Lk, d] from the same
  kGradV = 4,   ///< dv [B, Lk, dv] from the same
  kJvp = 5,     ///< out's tangent [B, Lq, dv] from q, k, v and their tangents
};

/// The sizes of one call: the slices' lengths, the batch axes (the broadcast of q's, k's
/// and v's leading axes) and where each operand's slice of batch b starts.
struct Geometry {
  int64_t lq = 0, lk = 0, d = 0, dv = 0;
  bool causal = false;
  bool masked = false;
  int64_t maskRow = 0, maskCol = 0; ///< the mask's strides (elements) along queries and keys
  int rank = 0;                     ///< batch axes
  int64_t batch[kMaxBatchRank] = {};
  /// Element strides along the batch axes (0 where broadcast) of q, k, v and the mask.
  /// The other operands (g, lse, δ, the result) are contiguous over all batch axes; the
  /// tangents of jvp have their primals' strides.
  int64_t strides[4][kMaxBatchRank] = {};

  int64_t batches() const {
    int64_t n = 1;
    for (int a = 0; a < rank; ++a) n *= batch[a];
    return n;
  }
  /// Where batch b's slice of q (0), k (1), v (2) or the mask (3) starts.
  int64_t offset(int operand, int64_t b) const {
    int64_t at = 0;
    for (int a = rank - 1; a >= 0; --a) {
      at += (b % batch[a]) * strides[operand][a];
      b /= batch[a];
    }
    return at;
  }
  /// The work items of a mode: tiles of queries, or of keys (dk, dv), in every batch.
  int64_t items(Mode mode) const {
    const int64_t n = mode == kGradK || mode == kGradV ? lk : lq;
    return batches() * ((n + kTile - 1) / kTile);
  }
};

/// The geometry as a flat array of integers (what generated code passes a kernel).
constexpr int kGeometryWords = 9 + 5 * kMaxBatchRank;
inline void pack(const Geometry& g, int64_t* w) {
  w[0] = g.lq, w[1] = g.lk, w[2] = g.d, w[3] = g.dv, w[4] = g.causal, w[5] = g.masked;
  w[6] = g.maskRow, w[7] = g.maskCol, w[8] = g.rank;
  for (int a = 0; a < kMaxBatchRank; ++a) {
    w[9 + a] = g.batch[a];
    for (int o = 0; o < 4; ++o) w[9 + (o + 1) * kMaxBatchRank + a] = g.strides[o][a];
  }
}
inline Geometry unpack(const int64_t* w) {
  Geometry g;
  g.lq = w[0], g.lk = w[1], g.d = w[2], g.dv = w[3], g.causal = w[4] != 0, g.masked = w[5] != 0;
  g.maskRow = w[6], g.maskCol = w[7], g.rank = static_cast<int>(w[8]);
  for (int a = 0; a < kMaxBatchRank; ++a) {
    g.batch[a] = w[9 + a];
    for (int o = 0; o < 4; ++o) g.strides[o][a] = w[9 + (o + 1) * kMaxBatchRank + a];
  }
  return g;
}

/// The scratch one thread needs for any mode, in elements: a few packed tiles, linear in
/// d and dv, independent of the sequence lengths.
inline int64_t scratchElements(const Geometry& g) { return (2 * g.d + 2 * g.dv + 3 * kBlock + 8) * kTile; }

namespace detail {

template <typename T>
inline T minusInf() {
  return -std::numeric_limits<T>::infinity();
}

/// yt[p·kTile + r] = y[(row + r)·depth + p] for r < live, 0 for live ≤ r < kTile.
template <typename T>
inline void packTransposed(const T* y, int64_t row, int64_t live, int64_t depth, T* yt) {
  for (int64_t p = 0; p < depth; ++p) {
    T* to = yt + p * kTile;
    for (int64_t r = 0; r < live; ++r) to[r] = y[(row + r) * depth + p];
    for (int64_t r = live; r < kTile; ++r) to[r] = T(0);
  }
}

/// The vector of T that the tiles compute in: 64 bytes (16 floats, 8 doubles), one
/// AVX-512 register (two AVX2 registers). Vectors are moved with memcpy and never passed
/// to functions, so no calling convention depends on the target.
template <typename T>
struct Simd;
template <>
struct Simd<float> {
  typedef float V __attribute__((vector_size(64)));
};
template <>
struct Simd<double> {
  typedef double V __attribute__((vector_size(64)));
};
#define TSL_VLOAD(v, p) __builtin_memcpy(&(v), (p), sizeof(v))
#define TSL_VSTORE(p, v) __builtin_memcpy((p), &(v), sizeof(v))
// A scalar in every lane is written x - V{}: x + V{} would add 0 (not a no-op for -0).

/// s[(a + r)·kTile + b] (+)= Σ_p x[(a + r)·depth + p] · yt[p·kTile + b] for r < R and
/// every b: R rows of x, their kTile lanes in registers over the whole depth.
template <typename T, int64_t R, bool accumulate>
inline void scoreRows(const T* x, int64_t a, const T* yt, int64_t depth, T* s) {
  TSL_FP_CONTRACT
  using V = typename Simd<T>::V;
  constexpr int64_t kVectors = kTile * static_cast<int64_t>(sizeof(T)) / 64;
  constexpr int64_t kLanes = 64 / static_cast<int64_t>(sizeof(T));
  V acc[R][kVectors];
  for (int64_t r = 0; r < R; ++r)
    for (int64_t n = 0; n < kVectors; ++n) {
      if (accumulate) TSL_VLOAD(acc[r][n], s + (a + r) * kTile + n * kLanes);
      else acc[r][n] = V{};
    }
  const T* x0 = x + a * depth;
  for (int64_t p = 0; p < depth; ++p) {
    V y[kVectors];
    for (int64_t n = 0; n < kVectors; ++n) TSL_VLOAD(y[n], yt + p * kTile + n * kLanes);
    for (int64_t r = 0; r < R; ++r) {
      const V e = x0[r * depth + p] - V{};
      for (int64_t n = 0; n < kVectors; ++n) acc[r][n] = e * y[n] + acc[r][n];
    }
  }
  for (int64_t r = 0; r < R; ++r)
    for (int64_t n = 0; n < kVectors; ++n) TSL_VSTORE(s + (a + r) * kTile + n * kLanes, acc[r][n]);
}

/// s[a·kTile + b] (+)= Σ_p x[a·depth + p] · yt[p·kTile + b] for a < rows and every b:
/// sixteen vector accumulators at a time (8 rows of floats, 4 of doubles), then 4, then 1.
template <typename T, bool accumulate>
inline void scoreTile(const T* x, int64_t rows, const T* yt, int64_t depth, T* s) {
  constexpr int64_t kRows = 16 / (kTile * static_cast<int64_t>(sizeof(T)) / 64);
  int64_t a = 0;
  for (; a + kRows <= rows; a += kRows) scoreRows<T, kRows, accumulate>(x, a, yt, depth, s);
  for (; a + 4 <= rows; a += 4) scoreRows<T, 4, accumulate>(x, a, yt, depth, s);
  for (; a < rows; ++a) scoreRows<T, 1, accumulate>(x, a, yt, depth, s);
}

/// acc[(a + r)·width + c + j] += Σ_b w[b·kTile + a + r] · z[b·width + c + j] for r < R and
/// j < two vectors: R output rows × two vectors of columns in registers over the block.
template <typename T, int64_t R>
inline void accumulateBlock(const T* w, int64_t count, const T* z, int64_t width, T* acc, int64_t a, int64_t c) {
  TSL_FP_CONTRACT
  using V = typename Simd<T>::V;
  constexpr int64_t kLanes = 64 / static_cast<int64_t>(sizeof(T));
  V t[R][2];
  for (int64_t r = 0; r < R; ++r)
    for (int64_t n = 0; n < 2; ++n) TSL_VLOAD(t[r][n], acc + (a + r) * width + c + n * kLanes);
  for (int64_t b = 0; b < count; ++b) {
    V zr[2];
    for (int64_t n = 0; n < 2; ++n) TSL_VLOAD(zr[n], z + b * width + c + n * kLanes);
    const T* wb = w + b * kTile + a;
    for (int64_t r = 0; r < R; ++r) {
      const V weight = wb[r] - V{};
      for (int64_t n = 0; n < 2; ++n) t[r][n] = weight * zr[n] + t[r][n];
    }
  }
  for (int64_t r = 0; r < R; ++r)
    for (int64_t n = 0; n < 2; ++n) TSL_VSTORE(acc + (a + r) * width + c + n * kLanes, t[r][n]);
}

/// acc[a·width + c] += Σ_b w[b·kTile + a] · z[b·width + c] for a < rows (≤ kTile),
/// b < count, c < width: rows of z weighted by a column of the tile w, in blocks of 8 (then
/// 4) rows × two vectors of columns; the columns past the last whole pair of vectors, and
/// the last rows, one row at a time.
template <typename T>
inline void accumulateRows(const T* w, int64_t count, const T* z, int64_t width, T* acc, int64_t rows) {
  constexpr int64_t kColumns = 2 * 64 / static_cast<int64_t>(sizeof(T));
  const int64_t whole = width / kColumns * kColumns;
  int64_t a = 0;
  for (; a + 8 <= rows; a += 8)
    for (int64_t c = 0; c < whole; c += kColumns) accumulateBlock<T, 8>(w, count, z, width, acc, a, c);
  for (; a + 4 <= rows; a += 4)
    for (int64_t c = 0; c < whole; c += kColumns) accumulateBlock<T, 4>(w, count, z, width, acc, a, c);
  const int64_t blocked = a;
  for (a = 0; a < rows; ++a) {
    T* out = acc + a * width;
    for (int64_t b = 0; b < count; ++b) {
      const T wt = w[b * kTile + a];
      const T* zr = z + b * width;
      for (int64_t j = a < blocked ? whole : 0; j < width; ++j) out[j] = std::fma(wt, zr[j], out[j]);
    }
  }
}

/// Scales the first `rows` tile rows (of kTile lanes) by c.
template <typename T>
inline void scaleTile(T* s, int64_t rows, T c) {
  for (int64_t e = 0; e < rows * kTile; ++e) s[e] *= c;
}

/// Sets to -inf the scores of pairs a query may not attend. keyRows: tile row a is key
/// j0 + a and lane b query i0 + b (forward, dq, jvp); otherwise row a is query i0 + a and
/// lane b key j0 + b. Lanes past the live ones are left alone (nothing reads them).
template <typename T>
inline void maskTile(const Geometry& g, const uint8_t* mask, int64_t i0, int64_t nq, int64_t j0, int64_t nk, bool keyRows,
                     T* s) {
  const bool causal = g.causal && j0 + nk - 1 > i0; // some key of the tile after some query
  if (!mask && !causal) return;
  const int64_t rows = keyRows ? nk : nq, lanes = keyRows ? nq : nk;
  for (int64_t a = 0; a < rows; ++a)
    for (int64_t b = 0; b < lanes; ++b) {
      const int64_t i = i0 + (keyRows ? b : a), j = j0 + (keyRows ? a : b);
      const bool allowed = (!causal || j <= i) && (!mask || mask[i * g.maskRow + j * g.maskCol] != 0);
      if (!allowed) s[a * kTile + b] = minusInf<T>();
    }
}

/// The running maximum over a block of score rows (keys) per lane (query), and exp of each
/// score against it: m is raised to the block's maximum, alpha[r] = exp(m_old - m_new) (1
/// when it did not move), the scores become p = exp(s - m) (0 for -inf, i.e. not attended).
template <typename T>
inline void onlineBlock(T* s, int64_t nk, T* m, T* alpha) {
  T top[kTile];
  for (int64_t r = 0; r < kTile; ++r) top[r] = m[r];
  for (int64_t a = 0; a < nk; ++a)
    for (int64_t r = 0; r < kTile; ++r) top[r] = s[a * kTile + r] > top[r] ? s[a * kTile + r] : top[r];
  for (int64_t r = 0; r < kTile; ++r) {
    alpha[r] = top[r] == m[r] ? T(1) : rows::expOf<T>(m[r] - top[r]);
    m[r] = top[r];
  }
  for (int64_t a = 0; a < nk; ++a)
    for (int64_t r = 0; r < kTile; ++r) {
      const T v = s[a * kTile + r];
      s[a * kTile + r] = v == minusInf<T>() ? T(0) : rows::expOf<T>(v - m[r]);
    }
}

/// p = exp(s - lse) per score (0 where not attended or for a query that attends nothing);
/// `lse(a, b)` gives the logsumexp of the tile element's query.
template <typename T, typename Lse>
inline void probabilities(T* s, int64_t rows, Lse lse) {
  for (int64_t a = 0; a < rows; ++a)
    for (int64_t b = 0; b < kTile; ++b) {
      const T v = s[a * kTile + b], top = lse(a, b);
      s[a * kTile + b] = v == minusInf<T>() || top == minusInf<T>() ? T(0) : rows::expOf<T>(v - top);
    }
}

template <typename T>
inline void scaleRow(T* row, int64_t width, T c) {
  for (int64_t j = 0; j < width; ++j) row[j] *= c;
}

template <typename T>
inline void zeroRows(T* rows, int64_t count) {
  for (int64_t e = 0; e < count; ++e) rows[e] = T(0);
}

/// The keys the query tile [i0, i0 + nq) may see: all, or those up to its last query.
inline int64_t keyEnd(const Geometry& g, int64_t i0, int64_t nq) {
  return g.causal ? (g.lk < i0 + nq ? g.lk : i0 + nq) : g.lk;
}

/// The forward pass of the query tile at i0: out's rows (null: lse only) and lse (or null).
template <typename T>
void forwardTile(const Geometry& g, const T* q, const T* k, const T* v, const uint8_t* mask, T* out, T* lse,
                 int64_t i0, T* scratch) {
  const int64_t nq = g.lq - i0 < kTile ? g.lq - i0 : kTile, d = g.d, dv = g.dv;
  const T c = T(1) / std::sqrt(static_cast<T>(d));
  T* qt = scratch;
  T* s = qt + d * kTile;
  T* m = s + kBlock * kTile;
  T* l = m + kTile;
  T* alpha = l + kTile;
  packTransposed(q, i0, nq, d, qt);
  for (int64_t r = 0; r < kTile; ++r) m[r] = minusInf<T>(), l[r] = T(0);
  if (out) zeroRows(out + i0 * dv, nq * dv);
  for (int64_t j0 = 0, end = keyEnd(g, i0, nq); j0 < end; j0 += kBlock) {
    const int64_t nk = end - j0 < kBlock ? end - j0 : kBlock;
    scoreTile<T, false>(k + j0 * d, nk, qt, d, s);
    scaleTile(s, nk, c);
    maskTile(g, mask, i0, nq, j0, nk, true, s);
    onlineBlock(s, nk, m, alpha);
    T sums[kTile] = {};
    for (int64_t a = 0; a < nk; ++a)
      for (int64_t r = 0; r < kTile; ++r) sums[r] += s[a * kTile + r];
    for (int64_t r = 0; r < kTile; ++r) l[r] = std::fma(l[r], alpha[r], sums[r]);
    if (!out) continue;
    for (int64_t r = 0; r < nq; ++r)
      if (alpha[r] != T(1)) scaleRow(out + (i0 + r) * dv, dv, alpha[r]);
    accumulateRows(s, nk, v + j0 * dv, dv, out + i0 * dv, nq);
  }
  for (int64_t r = 0; r < nq; ++r) {
    if (out) scaleRow(out + (i0 + r) * dv, dv, l[r] == T(0) ? T(0) : T(1) / l[r]);
    if (lse) lse[i0 + r] = l[r] == T(0) ? minusInf<T>() : m[r] + rows::logOf<T>(l[r]);
  }
}

/// dq's rows of the query tile at i0, from the cotangent ct [Lq, dv], lse and δ [Lq].
template <typename T>
void gradQTile(const Geometry& g, const T* q, const T* k, const T* v, const uint8_t* mask, const T* ct,
               const T* lse, const T* delta, T* dq, int64_t i0, T* scratch) {
  const int64_t nq = g.lq - i0 < kTile ? g.lq - i0 : kTile, d = g.d, dv = g.dv;
  const T c = T(1) / std::sqrt(static_cast<T>(d));
  T* qt = scratch;
  T* gt = qt + d * kTile;
  T* s = gt + dv * kTile;
  T* dp = s + kBlock * kTile;
  T* top = dp + kBlock * kTile;
  T* del = top + kTile;
  packTransposed(q, i0, nq, d, qt);
  packTransposed(ct, i0, nq, dv, gt);
  for (int64_t r = 0; r < kTile; ++r) {
    top[r] = r < nq ? lse[i0 + r] : minusInf<T>();
    del[r] = r < nq ? delta[i0 + r] : T(0);
  }
  zeroRows(dq + i0 * d, nq * d);
  for (int64_t j0 = 0, end = keyEnd(g, i0, nq); j0 < end; j0 += kBlock) {
    const int64_t nk = end - j0 < kBlock ? end - j0 : kBlock;
    scoreTile<T, false>(k + j0 * d, nk, qt, d, s);
    scaleTile(s, nk, c);
    maskTile(g, mask, i0, nq, j0, nk, true, s);
    probabilities(s, nk, [&](int64_t, int64_t b) { return top[b]; });
    scoreTile<T, false>(v + j0 * dv, nk, gt, dv, dp); // g_i · v_j
    for (int64_t a = 0; a < nk; ++a)
      for (int64_t r = 0; r < kTile; ++r) s[a * kTile + r] *= dp[a * kTile + r] - del[r];
    accumulateRows(s, nk, k + j0 * d, d, dq + i0 * d, nq);
  }
  for (int64_t r = 0; r < nq; ++r) scaleRow(dq + (i0 + r) * d, d, c);
}

/// dk's (forK) or dv's rows of the key tile at j0.
template <typename T>
void gradKVTile(const Geometry& g, const T* q, const T* k, const T* v, const uint8_t* mask, const T* ct,
                const T* lse, const T* delta, T* grad, int64_t j0, bool forK, T* scratch) {
  const int64_t nk = g.lk - j0 < kTile ? g.lk - j0 : kTile, d = g.d, dv = g.dv;
  const T c = T(1) / std::sqrt(static_cast<T>(d));
  T* kt = scratch;
  T* vt = kt + d * kTile;
  T* s = vt + dv * kTile;
  T* dp = s + kBlock * kTile;
  packTransposed(k, j0, nk, d, kt);
  if (forK) packTransposed(v, j0, nk, dv, vt);
  const int64_t width = forK ? d : dv;
  zeroRows(grad + j0 * width, nk * width);
  // Causal: queries before the tile's first key see none of it.
  for (int64_t i0 = g.causal ? j0 : 0; i0 < g.lq; i0 += kBlock) {
    const int64_t nq = g.lq - i0 < kBlock ? g.lq - i0 : kBlock;
    scoreTile<T, false>(q + i0 * d, nq, kt, d, s);
    scaleTile(s, nq, c);
    maskTile(g, mask, i0, nq, j0, nk, false, s);
    probabilities(s, nq, [&](int64_t a, int64_t) { return lse[i0 + a]; });
    if (!forK) {
      accumulateRows(s, nq, ct + i0 * dv, dv, grad + j0 * dv, nk);
      continue;
    }
    scoreTile<T, false>(ct + i0 * dv, nq, vt, dv, dp); // g_i · v_j
    for (int64_t a = 0; a < nq; ++a) {
      const T del = delta[i0 + a];
      for (int64_t b = 0; b < kTile; ++b) s[a * kTile + b] *= dp[a * kTile + b] - del;
    }
    accumulateRows(s, nq, q + i0 * d, d, grad + j0 * d, nk);
  }
  if (forK)
    for (int64_t b = 0; b < nk; ++b) scaleRow(grad + (j0 + b) * d, d, c);
}

/// The tangent of out's rows of the query tile at i0, from the tangents tq, tk, tv.
template <typename T>
void jvpTile(const Geometry& g, const T* q, const T* k, const T* v, const uint8_t* mask, const T* tq, const T* tk,
             const T* tv, T* dout, int64_t i0, T* scratch) {
  const int64_t nq = g.lq - i0 < kTile ? g.lq - i0 : kTile, d = g.d, dv = g.dv;
  const T c = T(1) / std::sqrt(static_cast<T>(d));
  T* qt = scratch;
  T* tqt = qt + d * kTile;
  T* s = tqt + d * kTile;
  T* ds = s + kBlock * kTile;
  T* o = ds + kBlock * kTile;
  T* m = o + kTile * dv;
  T* l = m + kTile;
  T* cs = l + kTile;
  T* alpha = cs + kTile;
  packTransposed(q, i0, nq, d, qt);
  packTransposed(tq, i0, nq, d, tqt);
  for (int64_t r = 0; r < kTile; ++r) m[r] = minusInf<T>(), l[r] = T(0), cs[r] = T(0);
  zeroRows(o, nq * dv);
  T* t = dout + i0 * dv;
  zeroRows(t, nq * dv);
  for (int64_t j0 = 0, end = keyEnd(g, i0, nq); j0 < end; j0 += kBlock) {
    const int64_t nk = end - j0 < kBlock ? end - j0 : kBlock;
    scoreTile<T, false>(k + j0 * d, nk, qt, d, s);
    scaleTile(s, nk, c);
    scoreTile<T, false>(k + j0 * d, nk, tqt, d, ds);
    scoreTile<T, true>(tk + j0 * d, nk, qt, d, ds);
    scaleTile(ds, nk, c);
    maskTile(g, mask, i0, nq, j0, nk, true, s);
    onlineBlock(s, nk, m, alpha);
    T sums[kTile] = {}, weighted[kTile] = {};
    for (int64_t a = 0; a < nk; ++a)
      for (int64_t r = 0; r < kTile; ++r) {
        const T p = s[a * kTile + r];
        ds[a * kTile + r] = p == T(0) ? T(0) : p * ds[a * kTile + r]; // p ṡ
        sums[r] += p;
        weighted[r] += ds[a * kTile + r];
      }
    for (int64_t r = 0; r < kTile; ++r) {
      l[r] = std::fma(l[r], alpha[r], sums[r]);
      cs[r] = std::fma(cs[r], alpha[r], weighted[r]);
    }
    for (int64_t r = 0; r < nq; ++r)
      if (alpha[r] != T(1)) {
        scaleRow(o + r * dv, dv, alpha[r]);
        scaleRow(t + r * dv, dv, alpha[r]);
      }
    accumulateRows(s, nk, v + j0 * dv, dv, o, nq);
    accumulateRows(ds, nk, v + j0 * dv, dv, t, nq);
    accumulateRows(s, nk, tv + j0 * dv, dv, t, nq);
  }
  for (int64_t r = 0; r < nq; ++r) {
    const T inv = l[r] == T(0) ? T(0) : T(1) / l[r];
    const T weight = cs[r] * inv;
    for (int64_t j = 0; j < dv; ++j) t[r * dv + j] = std::fma(-weight, o[r * dv + j], t[r * dv + j]) * inv;
  }
}

} // namespace detail

/// The operands of one call, in the IR's order: q, k, v, then (kGradQ, kGradK, kGradV) the
/// cotangent g, lse and δ, or (kJvp) the tangents of q, k and v; the mask (bytes) if any.
template <typename T>
struct Operands {
  const T* q = nullptr;
  const T* k = nullptr;
  const T* v = nullptr;
  const T* extra[3] = {nullptr, nullptr, nullptr};
  const uint8_t* mask = nullptr;
};

/// Runs the work items [begin, end) of `mode` (Geometry::items), writing `out`.
template <typename T>
void run(Mode mode, const Geometry& g, const Operands<T>& in, T* out, int64_t begin, int64_t end, T* scratch) {
  const bool byKeys = mode == kGradK || mode == kGradV;
  const int64_t tiles = ((byKeys ? g.lk : g.lq) + kTile - 1) / kTile;
  for (int64_t item = begin; item < end; ++item) {
    const int64_t b = item / tiles, at = item % tiles * kTile;
    const int64_t oq = g.offset(0, b), ok = g.offset(1, b), ov = g.offset(2, b);
    const T *q = in.q + oq, *k = in.k + ok, *v = in.v + ov;
    const uint8_t* mask = g.masked ? in.mask + g.offset(3, b) : nullptr;
    const int64_t rows = b * g.lq; // the start of batch b's rows of per-query operands
    switch (mode) {
    case kForward: detail::forwardTile<T>(g, q, k, v, mask, out + rows * g.dv, nullptr, at, scratch); break;
    case kLse: detail::forwardTile<T>(g, q, k, v, mask, nullptr, out + rows, at, scratch); break;
    case kGradQ:
      detail::gradQTile<T>(g, q, k, v, mask, in.extra[0] + rows * g.dv, in.extra[1] + rows, in.extra[2] + rows,
                           out + rows * g.d, at, scratch);
      break;
    case kGradK:
    case kGradV:
      detail::gradKVTile<T>(g, q, k, v, mask, in.extra[0] + rows * g.dv, in.extra[1] + rows, in.extra[2] + rows,
                            out + b * g.lk * (mode == kGradK ? g.d : g.dv), at, mode == kGradK, scratch);
      break;
    case kJvp:
      detail::jvpTile<T>(g, q, k, v, mask, in.extra[0] + oq, in.extra[1] + ok, in.extra[2] + ov, out + rows * g.dv, at,
                         scratch);
      break;
    }
  }
}

} // namespace tsl::flash

#if !defined(__clang__)
#pragma GCC pop_options
#endif
