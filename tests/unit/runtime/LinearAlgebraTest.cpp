// tests/unit/runtime/LinearAlgebraTest.cpp — matmul, dot and einsum against naive loops.
#include "Reference.h"
#include "runtime/LinearAlgebra.h"

using namespace tsl;
using namespace tsl::test;

namespace {

/// C[b, i, j] = sum_k A[b, i, k] B[b, k, j] in f64 over flat batches of equal count.
std::vector<double> naiveMatmul(const std::vector<double>& a, const std::vector<double>& b, int64_t batches,
                                int64_t m, int64_t k, int64_t n) {
  std::vector<double> c(static_cast<size_t>(batches * m * n), 0.0);
  for (int64_t t = 0; t < batches; ++t)
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double s = 0;
        for (int64_t p = 0; p < k; ++p) s += a[(t * m + i) * k + p] * b[(t * k + p) * n + j];
        c[(t * m + i) * n + j] = s;
      }
  return c;
}

} // namespace

TEST_CASE("matmul of matrices of many sizes matches the naive product in f32 and f64") {
  for (auto [m, k, n] : {std::array<int64_t, 3>{1, 1, 1}, {3, 5, 2}, {17, 31, 9}, {64, 64, 64}, {130, 70, 250}}) {
    CAPTURE(m);
    CAPTURE(k);
    CAPTURE(n);
    const auto a = randomValues(m * k, 1), b = randomValues(k * n, 2);
    const auto want = naiveMatmul(a, b, 1, m, k, n);
    checkClose(valuesOf(matmul(tensorOf(a, Shape{m, k}), tensorOf(b, Shape{k, n}))), want, 1e-12, 1e-12);
    checkClose(valuesOf(matmul(tensorOf(a, Shape{m, k}, DType::F32), tensorOf(b, Shape{k, n}, DType::F32))), want,
               1e-4, 1e-4);
  }
}

TEST_CASE("matmul reads transposed views in place and broadcasts batches") {
  const auto a = randomValues(4 * 3, 3), b = randomValues(3 * 5, 4);
  // (a^T)^T: a transposed view of a transposed copy holds the same matrix.
  const Tensor at = contiguous(transpose(tensorOf(a, Shape{4, 3}), {}));
  const Tensor viewA = transpose(at, {});
  checkClose(valuesOf(matmul(viewA, tensorOf(b, Shape{3, 5}))), naiveMatmul(a, b, 1, 4, 3, 5), 1e-12);
  // [2, 1, 4, 3] @ [3, 3, 5] broadcasts to [2, 3, 4, 5].
  const auto batchA = randomValues(2 * 4 * 3, 5), batchB = randomValues(3 * 3 * 5, 6);
  const Tensor c = matmul(tensorOf(batchA, Shape{2, 1, 4, 3}), tensorOf(batchB, Shape{3, 3, 5}));
  CHECK(c.shape() == Shape{2, 3, 4, 5});
  const auto got = valuesOf(c);
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j) {
      std::vector<double> ai(batchA.begin() + i * 12, batchA.begin() + (i + 1) * 12);
      std::vector<double> bj(batchB.begin() + j * 15, batchB.begin() + (j + 1) * 15);
      const auto want = naiveMatmul(ai, bj, 1, 4, 3, 5);
      for (int e = 0; e < 20; ++e) CHECK(got[(i * 3 + j) * 20 + e] == doctest::Approx(want[e]).epsilon(1e-12));
    }
}

TEST_CASE("matmul with vectors drops their axis, as NumPy") {
  const Tensor m = tensorOf({1, 2, 3, 4, 5, 6}, Shape{2, 3});
  const Tensor v = tensorOf({1, 0, -1}, Shape{3});
  CHECK(matmul(m, v).shape() == Shape{2});
  CHECK(valuesOf(matmul(m, v)) == std::vector<double>{-2, -2});
  CHECK(valuesOf(matmul(tensorOf({1, 1}, Shape{2}), m)) == std::vector<double>{5, 7, 9});
  CHECK(matmul(v, v).isScalar());
  CHECK(matmul(v, v).toDouble() == 2);
  CHECK_THROWS_WITH_AS(matmul(tensorOf(randomValues(12, 1), Shape{4, 3}), tensorOf(randomValues(8, 1), Shape{4, 2})),
                       "shape error: matmul cannot contract [4,3] with [4,2] (3 != 4)", Error);
}

TEST_CASE("matmul of integers is exact; of halves rounds once from f32") {
  const Tensor a = tensorOf({1, 2, 3, 4}, Shape{2, 2}, DType::I32);
  const Tensor r = matmul(a, a);
  CHECK(r.dtype() == DType::I32);
  CHECK(valuesOf(r) == std::vector<double>{7, 10, 15, 22});
  const Tensor h = matmul(tensorOf({0.5, 0.25}, Shape{1, 2}, DType::F16), tensorOf({2, 4}, Shape{2, 1}, DType::F16));
  CHECK(h.dtype() == DType::F16);
  CHECK(valuesOf(h)[0] == 2.0);
}

TEST_CASE("a large matmul split across threads equals the single product") {
  const int64_t m = 300, k = 200, n = 150;
  const auto a = randomValues(m * k, 8), b = randomValues(k * n, 9);
  checkClose(valuesOf(matmul(tensorOf(a, Shape{m, k}), tensorOf(b, Shape{k, n}))), naiveMatmul(a, b, 1, m, k, n),
             1e-11, 1e-11);
}

TEST_CASE("dot follows NumPy for vectors, matrices and higher ranks") {
  CHECK(dot(tensorOf({1, 2, 3}, Shape{3}), tensorOf({4, 5, 6}, Shape{3})).toDouble() == 32);
  const auto a = randomValues(2 * 3 * 4, 1), b = randomValues(5 * 4 * 2, 2);
  const Tensor r = dot(tensorOf(a, Shape{2, 3, 4}), tensorOf(b, Shape{5, 4, 2}));
  CHECK(r.shape() == Shape{2, 3, 5, 2});
  // r[i,j,p,q] = sum_k a[i,j,k] b[p,k,q]
  const auto got = valuesOf(r);
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      for (int p = 0; p < 5; ++p)
        for (int q = 0; q < 2; ++q) {
          double s = 0;
          for (int k = 0; k < 4; ++k) s += a[(i * 3 + j) * 4 + k] * b[(p * 4 + k) * 2 + q];
          CHECK(got[((i * 3 + j) * 5 + p) * 2 + q] == doctest::Approx(s).epsilon(1e-12));
        }
}

TEST_CASE("einsum: matmul, batch matmul, outer product, trace, diagonal, sums, permutations") {
  const auto a = randomValues(3 * 4, 1), b = randomValues(4 * 5, 2);
  const Tensor A = tensorOf(a, Shape{3, 4}), B = tensorOf(b, Shape{4, 5});
  checkClose(valuesOf(einsum("ij,jk->ik", std::vector<Tensor>{A, B})), naiveMatmul(a, b, 1, 3, 4, 5), 1e-12);
  checkClose(valuesOf(einsum("ij,jk", std::vector<Tensor>{A, B})), naiveMatmul(a, b, 1, 3, 4, 5), 1e-12); // implicit
  const auto ba = randomValues(2 * 3 * 4, 3), bb = randomValues(2 * 4 * 5, 4);
  checkClose(valuesOf(einsum("bij,bjk->bik", std::vector<Tensor>{tensorOf(ba, Shape{2, 3, 4}), tensorOf(bb, Shape{2, 4, 5})})),
             naiveMatmul(ba, bb, 2, 3, 4, 5), 1e-12);
  const Tensor outer = einsum("i,j->ij", std::vector<Tensor>{tensorOf({1, 2}, Shape{2}), tensorOf({3, 4, 5}, Shape{3})});
  CHECK(valuesOf(outer) == std::vector<double>{3, 4, 5, 6, 8, 10});
  const Tensor sq = tensorOf({1, 2, 3, 4}, Shape{2, 2});
  CHECK(einsum("ii", std::vector<Tensor>{sq}).toDouble() == 5);
  CHECK(valuesOf(einsum("ii->i", std::vector<Tensor>{sq})) == std::vector<double>{1, 4});
  CHECK(valuesOf(einsum("ij->ji", std::vector<Tensor>{sq})) == std::vector<double>{1, 3, 2, 4});
  CHECK(valuesOf(einsum("ij->j", std::vector<Tensor>{sq})) == std::vector<double>{4, 6});
  CHECK(einsum("ij->", std::vector<Tensor>{sq}).toDouble() == 10);
  // Three operands: sum_ijk x_i y_ij z_jk
  const Tensor x = tensorOf({1, 2}, Shape{2}), y = sq, z = tensorOf({1, 0, 0, 1}, Shape{2, 2});
  CHECK(valuesOf(einsum("i,ij,jk->k", std::vector<Tensor>{x, y, z})) == std::vector<double>{7, 10});
  CHECK_THROWS_WITH_AS(einsum("ij,jk->ik", std::vector<Tensor>{A, A}), doctest::Contains("letter 'j'"), Error);
  CHECK_THROWS_WITH_AS(einsum("ij->iz", std::vector<Tensor>{A}), doctest::Contains("'z' appears in no operand"), Error);
}
