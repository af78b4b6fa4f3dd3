// tests/unit/runtime/StructureTest.cpp — concat, stack, split, pad, take, one-hot.
#include "Reference.h"
#include "runtime/Structure.h"

using namespace tsl;
using namespace tsl::test;

TEST_CASE("concat and stack join along an axis, promoting dtypes") {
  const Tensor a = tensorOf({1, 2, 3, 4}, Shape{2, 2}), b = tensorOf({5, 6}, Shape{2, 1}, DType::I32);
  const Tensor c = concat(std::vector<Tensor>{a, b}, 1);
  CHECK(c.shape() == Shape{2, 3});
  CHECK(c.dtype() == DType::F64);
  CHECK(valuesOf(c) == std::vector<double>{1, 2, 5, 3, 4, 6});
  const Tensor s = stack(std::vector<Tensor>{tensorOf({1, 2}, Shape{2}), tensorOf({3, 4}, Shape{2})}, 1);
  CHECK(s.shape() == Shape{2, 2});
  CHECK(valuesOf(s) == std::vector<double>{1, 3, 2, 4});
  CHECK_THROWS_WITH_AS(concat(std::vector<Tensor>{a, tensorOf({1, 2, 3}, Shape{3, 1})}, 1),
                       doctest::Contains("differ on axis 0"), Error);
  CHECK_THROWS_WITH_AS(stack(std::vector<Tensor>{a, b}, 0), doctest::Contains("tensor 1 has shape [2,1]"), Error);
}

TEST_CASE("split gives equal views and refuses uneven parts") {
  const Tensor x = tensorOf({0, 1, 2, 3, 4, 5}, Shape{6});
  const auto parts = split(x, 3, 0);
  REQUIRE(parts.size() == 3);
  CHECK(valuesOf(parts[2]) == std::vector<double>{4, 5});
  CHECK(parts[1].sharesStorageWith(x));
  CHECK_THROWS_WITH_AS(split(x, 4, 0), doctest::Contains("does not divide into 4"), Error);
}

TEST_CASE("pad adds constant borders") {
  const Tensor x = tensorOf({1, 2, 3, 4}, Shape{2, 2});
  const Tensor p = pad(x, std::vector<std::array<int64_t, 2>>{{1, 0}, {0, 2}}, -1);
  CHECK(p.shape() == Shape{3, 4});
  CHECK(valuesOf(p) == std::vector<double>{-1, -1, -1, -1, 1, 2, -1, -1, 3, 4, -1, -1});
}

TEST_CASE("take gathers along an axis with negative indices") {
  const Tensor x = tensorOf({0, 1, 2, 3, 4, 5}, Shape{2, 3});
  const Tensor idx = tensorOf({2, -3, 2}, Shape{3}, DType::I64);
  CHECK(valuesOf(take(x, idx, 1)) == std::vector<double>{2, 0, 2, 5, 3, 5});
  CHECK(take(x, tensorOf({1, 0, 1, 1}, Shape{2, 2}, DType::I32), 0).shape() == Shape{2, 2, 3});
  CHECK_THROWS_WITH_AS(take(x, tensorOf({3}, Shape{1}, DType::I64), 1), doctest::Contains("out of range"), Error);
}

TEST_CASE("one-hot makes f32 rows and rejects labels outside the classes") {
  const Tensor h = oneHot(tensorOf({2, 0}, Shape{2}, DType::I64), 3);
  CHECK(h.dtype() == DType::F32);
  CHECK(valuesOf(h) == std::vector<double>{0, 0, 1, 1, 0, 0});
  CHECK_THROWS_WITH_AS(oneHot(tensorOf({3}, Shape{1}, DType::I64), 3), doctest::Contains("outside [0, 3)"), Error);
}
