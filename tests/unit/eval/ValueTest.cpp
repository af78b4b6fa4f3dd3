// tests/unit/eval/ValueTest.cpp — values: sharing, persistence, equality, lifetime.
#include "eval/Printer.h"
#include "eval/Value.h"

#include <cmath>
#include <doctest/doctest.h>

using namespace tsl;

namespace {
Value num(int64_t i) { return Value(Tensor::weakInt(i)); }
} // namespace

TEST_CASE("conj onto the newest vector appends in place; older vectors never change") {
  Value v0 = makeVector({});
  Value v1 = v0.vector().conj(num(1));
  Value v2 = v1.vector().conj(num(2));
  Value v3 = v2.vector().conj(num(3));
  // A branch from an older vector must not see, or clobber, the newer elements.
  Value branch = v1.vector().conj(num(99));
  CHECK(printValue(v0, true) == "[]");
  CHECK(printValue(v1, true) == "[1]");
  CHECK(printValue(v3, true) == "[1 2 3]");
  CHECK(printValue(branch, true) == "[1 99]");
  CHECK(printValue(v3.vector().drop(1), true) == "[2 3]");
}

TEST_CASE("lists are persistent cons cells with O(1) count") {
  const Value items[] = {num(1), num(2), num(3)};
  Value list = makeList(items);
  CHECK(list.list()->count() == 3);
  Value longer(new ListObj(num(0), list));
  CHECK(printValue(longer, true) == "(0 1 2 3)");
  CHECK(printValue(list, true) == "(1 2 3)");
  CHECK(printValue(Value::emptyList(), true) == "()");
}

TEST_CASE("maps keep insertion order and assoc leaves the original alone") {
  Value m = makeMap({{makeKeyword("b"), num(2)}, {makeKeyword("a"), num(1)}});
  Value m2 = m.map().assoc(makeKeyword("c"), num(3));
  Value m3 = m2.map().assoc(makeKeyword("b"), num(20));
  CHECK(printValue(m, true) == "{:b 2, :a 1}");
  CHECK(printValue(m3, true) == "{:b 20, :a 1, :c 3}");
  CHECK(printValue(m3.map().dissoc(makeKeyword("a")), true) == "{:b 20, :c 3}");
  CHECK(m3.map().find(makeKeyword("zz")) == nullptr);
}

TEST_CASE("= is value equality across lists and vectors, ignoring map order") {
  const Value xs[] = {num(1), num(2)};
  CHECK(valuesEqual(makeList(xs), makeVector({num(1), num(2)})));
  CHECK(valuesEqual(makeMap({{makeKeyword("a"), num(1)}, {makeKeyword("b"), num(2)}}),
                    makeMap({{makeKeyword("b"), num(2)}, {makeKeyword("a"), num(1)}})));
  CHECK_FALSE(valuesEqual(num(1), Value(Tensor::weakFloat(1.0)))); // i64 vs f32
  CHECK(valuesEqual(num(1), Value(Tensor::ofInt(1))));             // weak i64 is an i64
  CHECK_FALSE(valuesEqual(Value(Tensor::weakFloat(NAN)), Value(Tensor::weakFloat(NAN))));
  CHECK(valuesEqual(makeString("a"), makeString("a")));
  CHECK(valuesEqual(makeSymbol("x"), makeSymbol("x", Span{nullptr, 3, 4, 3, 4})));
}

TEST_CASE("freeing a million-cell list or a deeply nested vector does not recurse") {
  Value list = Value::emptyList();
  for (int i = 0; i < 1000000; ++i) list = Value(new ListObj(num(i), list));
  CHECK(list.list()->count() == 1000000);
  list = Value(); // must not overflow the native stack
  Value nested = makeVector({});
  for (int i = 0; i < 1000000; ++i) nested = makeVector({nested});
  nested = Value();
  CHECK(nested.isNil());
}

TEST_CASE("truth: only nil and false are false; a ranked tensor condition is a type error") {
  CHECK_FALSE(Value().truthy());
  CHECK_FALSE(Value::boolean(false).truthy());
  CHECK(Value::boolean(true).truthy());
  CHECK(num(0).truthy());
  CHECK(makeVector({}).truthy());
  CHECK_THROWS_AS(Value(Tensor::zeros(DType::Bool, Shape{2})).truthy(), Error);
}
