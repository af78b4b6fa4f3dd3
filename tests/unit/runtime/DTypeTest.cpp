// tests/unit/runtime/DTypeTest.cpp — the promotion rules of docs/language.md §3, entry by entry.
#include "runtime/DType.h"

#include <doctest/doctest.h>
#include <map>
#include <string>

using namespace tsl;

TEST_CASE("names and sizes round-trip for every dtype") {
  const std::map<std::string, size_t> expected = {{"bool", 1}, {"i32", 4}, {"i64", 8}, {"f16", 2},
                                                  {"bf16", 2}, {"f32", 4}, {"f64", 8}};
  for (const auto& [name, size] : expected) {
    const auto dtype = dtypeFromName(name);
    REQUIRE(dtype.has_value());
    CHECK(dtypeName(*dtype) == name);
    CHECK(dtypeSize(*dtype) == size);
  }
  CHECK_FALSE(dtypeFromName("f8").has_value());
}

TEST_CASE("strong dtypes promote along bool < i32 < i64 < f16, bf16 < f32 < f64") {
  // The full table, written out independently of the lattice in the implementation.
  const char* order[] = {"bool", "i32", "i64", "f16", "bf16", "f32", "f64"};
  const char* table[7][7] = {
      //        bool    i32    i64    f16    bf16   f32    f64
      /*bool*/ {"bool", "i32", "i64", "f16", "bf16", "f32", "f64"},
      /*i32 */ {"i32", "i32", "i64", "f16", "bf16", "f32", "f64"},
      /*i64 */ {"i64", "i64", "i64", "f16", "bf16", "f32", "f64"},
      /*f16 */ {"f16", "f16", "f16", "f16", "f32", "f32", "f64"},
      /*bf16*/ {"bf16", "bf16", "bf16", "f32", "bf16", "f32", "f64"},
      /*f32 */ {"f32", "f32", "f32", "f32", "f32", "f32", "f64"},
      /*f64 */ {"f64", "f64", "f64", "f64", "f64", "f64", "f64"},
  };
  for (int i = 0; i < 7; ++i)
    for (int j = 0; j < 7; ++j) {
      CAPTURE(order[i]);
      CAPTURE(order[j]);
      const TypeKey result = promoteTypes({*dtypeFromName(order[i])}, {*dtypeFromName(order[j])});
      CHECK(dtypeName(result.dtype) == std::string(table[i][j]));
      CHECK_FALSE(result.weak);
    }
}

TEST_CASE("weak literals take the dtype of a strong operand of their kind") {
  const TypeKey weakInt{DType::I64, true}, weakFloat{DType::F64, true};
  CHECK(promoteTypes(weakFloat, {DType::F16}) == TypeKey{DType::F16, false});
  CHECK(promoteTypes({DType::BF16}, weakFloat) == TypeKey{DType::BF16, false});
  CHECK(promoteTypes(weakInt, {DType::I32}) == TypeKey{DType::I32, false});
  CHECK(promoteTypes(weakInt, {DType::F16}) == TypeKey{DType::F16, false});
  // A float literal meeting an integer or bool tensor gives f32; an integer literal
  // meeting a bool tensor gives i64.
  CHECK(promoteTypes(weakFloat, {DType::I32}) == TypeKey{DType::F32, false});
  CHECK(promoteTypes(weakFloat, {DType::Bool}) == TypeKey{DType::F32, false});
  CHECK(promoteTypes(weakInt, {DType::Bool}) == TypeKey{DType::I64, false});
  // Weak with weak stays weak at i64 / f64 precision.
  CHECK(promoteTypes(weakInt, weakInt) == weakInt);
  CHECK(promoteTypes(weakInt, weakFloat) == weakFloat);
  // Used on their own they become i64 and f32.
  CHECK(concreteDType(weakInt) == DType::I64);
  CHECK(concreteDType(weakFloat) == DType::F32);
}
