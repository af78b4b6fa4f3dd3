// tests/unit/runtime/ViewsTest.cpp — views share storage; shapes and values are NumPy's.
#include "Reference.h"
#include "runtime/Structure.h"

using namespace tsl;
using namespace tsl::test;

TEST_CASE("transposing a 1000x1000 tensor is a view: no copy, same storage") {
  const Tensor x = Tensor::zeros(DType::F32, Shape{1000, 1000});
  const Tensor t = transpose(x, {});
  CHECK(t.sharesStorageWith(x));
  CHECK(t.shape() == Shape{1000, 1000});
  CHECK(t.strides()[0] == 1);
  CHECK(t.strides()[1] == 1000);
  CHECK_FALSE(t.isContiguous());
}

TEST_CASE("slice, broadcast-to, expand-dims, squeeze, get and contiguous reshape share storage") {
  const Tensor x = tensorOf(randomValues(24, 1), Shape{2, 3, 4});
  CHECK(slice(x, std::vector<SliceRange>{{0, 1}, {1, std::nullopt}}).sharesStorageWith(x));
  CHECK(broadcastTo(x, Shape{5, 2, 3, 4}).sharesStorageWith(x));
  CHECK(expandDims(x, 1).sharesStorageWith(x));
  CHECK(squeeze(expandDims(x, 0), {}).sharesStorageWith(x));
  CHECK(index(x, std::vector<std::optional<int64_t>>{1}).sharesStorageWith(x));
  CHECK(reshape(x, Shape{6, 4}).sharesStorageWith(x));
  // A reshape of a non-contiguous view must copy.
  const Tensor t = transpose(x, {});
  CHECK_FALSE(reshape(t, Shape{24}).sharesStorageWith(x));
}

TEST_CASE("views read the right elements") {
  std::vector<double> v(24);
  for (int i = 0; i < 24; ++i) v[i] = i;
  const Tensor x = tensorOf(v, Shape{2, 3, 4});
  CHECK(valuesOf(transpose(x, std::vector<int64_t>{2, 0, 1})) ==
        std::vector<double>{0, 4, 8, 12, 16, 20, 1, 5, 9, 13, 17, 21, 2, 6, 10, 14, 18, 22, 3, 7, 11, 15, 19, 23});
  // x[1, 0:3:2, ::-1]
  CHECK(valuesOf(slice(x, std::vector<SliceRange>{{1, 2}, {0, 3, 2}, {std::nullopt, std::nullopt, -1}})) ==
        std::vector<double>{15, 14, 13, 12, 23, 22, 21, 20});
  // Python's clipping: x[:, -10:2, 5:]
  CHECK(sliceShape(x.shape(), std::vector<SliceRange>{{}, {-10, 2}, {5, std::nullopt}}) == Shape{2, 2, 0});
  CHECK(valuesOf(index(x, std::vector<std::optional<int64_t>>{std::nullopt, -1, 2})) == std::vector<double>{10, 22});
  CHECK(valuesOf(broadcastTo(tensorOf({1, 2}, Shape{2, 1}), Shape{2, 3})) == std::vector<double>{1, 1, 1, 2, 2, 2});
}

TEST_CASE("reshape resolves one -1 and rejects impossible shapes") {
  CHECK(resolveReshape(Shape{2, 3, 4}, std::vector<int64_t>{-1, 4}) == Shape{6, 4});
  CHECK(resolveReshape(Shape{0, 3}, std::vector<int64_t>{3, 0}) == Shape{3, 0});
  CHECK_THROWS_WITH_AS(resolveReshape(Shape{2, 3}, std::vector<int64_t>{4, -1}), doctest::Contains("cannot reshape [2,3]"), Error);
  CHECK_THROWS_WITH_AS(resolveReshape(Shape{2, 3}, std::vector<int64_t>{-1, -1}), doctest::Contains("only one"), Error);
  CHECK_THROWS_AS(resolveReshape(Shape{6}, std::vector<int64_t>{7}), Error);
}

TEST_CASE("shapes beyond the size limit are value errors before any allocation") {
  CHECK_THROWS_WITH_AS(Tensor::zeros(DType::F32, Shape{1000000, 1000000}), doctest::Contains("larger than this machine"), Error);
  CHECK_THROWS_WITH_AS(Tensor::zeros(DType::F32, Shape{int64_t(1) << 30, int64_t(1) << 20}), doctest::Contains("more than 2^40"), Error);
  try {
    Tensor::zeros(DType::F32, Shape{1000000, 1000000});
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::Value);
  }
  CHECK_THROWS_AS(Shape(std::vector<int64_t>(9, 1)), Error); // rank 9
  CHECK_THROWS_AS(Shape(std::vector<int64_t>{-1}), Error);
}

TEST_CASE("view errors name the operation and the shapes") {
  const Tensor x = Tensor::zeros(DType::F32, Shape{2, 3});
  CHECK_THROWS_WITH_AS(transpose(x, std::vector<int64_t>{0, 0}), doctest::Contains("appears twice"), Error);
  CHECK_THROWS_WITH_AS(broadcastTo(x, Shape{2, 4}), doctest::Contains("cannot broadcast [2,3] to [2,4]"), Error);
  CHECK_THROWS_WITH_AS(squeeze(x, std::vector<int64_t>{0}), doctest::Contains("has size 2"), Error);
  CHECK_THROWS_WITH_AS(slice(x, std::vector<SliceRange>{{0, 1, 0}}), doctest::Contains("step 0"), Error);
  CHECK_THROWS_WITH_AS(selectIndex(x, 0, 2), doctest::Contains("out of range"), Error);
}
