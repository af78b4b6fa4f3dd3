// tests/unit/ir/IrRunnerTest.cpp — compiler::interpret runs IR text; results are
// checked against values computed here with plain loops or known answers.
#include "IrTestSupport.h"

#include "compiler/interp/IrRunner.h"

#include <cmath>

using namespace tsl;
using namespace tsl::ir;
using namespace tsl::ir::test;

namespace {

/// Parses and verifies `text`, then runs its function `name` on `args`.
std::vector<Tensor> run(const std::string& text, const std::string& name, const std::vector<Tensor>& args,
                        const compiler::RunOptions& options = {}) {
  std::unique_ptr<Module> m = parseModule(text, "interp.ir");
  verify(*m, ErrorKind::Syntax);
  const Function* f = m->find(name);
  REQUIRE(f);
  return compiler::runIr(*m, *f, args, options);
}

Error runError(const std::string& text, const std::string& name, const std::vector<Tensor>& args,
               const compiler::RunOptions& options = {}) {
  const auto e = errorFrom([&] { run(text, name, args, options); });
  REQUIRE_MESSAGE(e, "the function ran");
  return *e;
}

Tensor f32(const std::vector<double>& values) { return tensorOf(values, Shape{static_cast<int64_t>(values.size())}, DType::F32); }

const char* kFactorial = R"(func @fact(%n: i64) -> (i64) {
  %one = constant 1 : i64
  %r:2 = while (%i = %one, %acc = %one) : (i64, i64) -> (i64, i64) {
    %more = less_equal %i, %n : bool
    condition %more, %i, %acc
  } do (%j, %a) {
    %a1 = mul %a, %j : i64
    %j1 = add %j, %one : i64
    yield %j1, %a1
  }
  return %r#1
}
)";

} // namespace

TEST_CASE("interpret computes elementwise arithmetic as plain float loops do") {
  const char* text = R"(func @f(%x: f32[5], %y: f32[5]) -> (f32[5]) {
  %0 = mul %x, %y : f32[5]
  %1 = add %0, %x : f32[5]
  %two = constant 2.0 : f32
  %2 = sub %1, %two : f32[5]
  return %2
}
)";
  const std::vector<double> x = {1.5, -2, 0.25, 3, 100}, y = {2, 0.5, -4, 3, 0.01};
  const std::vector<Tensor> out = run(text, "f", {f32(x), f32(y)});
  REQUIRE(out.size() == 1);
  CHECK(out[0].dtype() == DType::F32);
  CHECK(out[0].shape() == Shape{5});
  const std::vector<double> got = valuesOf(out[0]);
  for (size_t i = 0; i < x.size(); ++i) {
    const float fx = static_cast<float>(x[i]), fy = static_cast<float>(y[i]);
    const float expected = (fx * fy + fx) - 2.0f;
    CHECK(got[i] == doctest::Approx(expected).epsilon(1e-6));
  }
}

TEST_CASE("interpret runs matmul and reductions like naive loops") {
  const char* text = R"(func @f(%a: f64[2,3], %b: f64[3,2]) -> (f64[2,2], f64[2]) {
  %0 = matmul %a, %b : f64[2,2]
  %1 = sum %0 {axes = [1]} : f64[2]
  return %0, %1
}
)";
  const std::vector<double> a = {1, 2, 3, 4, 5, 6}, b = {7, 8, 9, 10, 11, 12};
  const std::vector<Tensor> out = run(text, "f", {tensorOf(a, Shape{2, 3}), tensorOf(b, Shape{3, 2})});
  std::vector<double> product(4, 0.0), rows(2, 0.0);
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 2; ++j) {
      for (int k = 0; k < 3; ++k) product[i * 2 + j] += a[i * 3 + k] * b[k * 2 + j];
      rows[i] += product[i * 2 + j];
    }
  CHECK(valuesOf(out[0]) == product); // small integers: exact
  CHECK(valuesOf(out[1]) == rows);
  CHECK(product == std::vector<double>{58, 64, 139, 154});
}

TEST_CASE("interpret takes the branch of an if its condition selects") {
  const char* text = R"(func @pick(%c: bool, %x: f32[3]) -> (f32[3], i64) {
  %0:2 = if %c : f32[3], i64 {
    %n = neg %x : f32[3]
    %t = constant 1 : i64
    yield %n, %t
  } else {
    %s = mul %x, %x : f32[3]
    %e = constant 2 : i64
    yield %s, %e
  }
  return %0#0, %0#1
}
)";
  const std::vector<double> x = {1, -2, 3};
  const auto yes = run(text, "pick", {Tensor::ofBool(true), f32(x)});
  CHECK(valuesOf(yes[0]) == std::vector<double>{-1, 2, -3});
  CHECK(yes[1].toInt() == 1);
  const auto no = run(text, "pick", {Tensor::ofBool(false), f32(x)});
  CHECK(valuesOf(no[0]) == std::vector<double>{1, 4, 9});
  CHECK(no[1].toInt() == 2);
}

TEST_CASE("a while loop computes factorials") {
  int64_t expected = 1;
  for (int64_t n = 0; n <= 20; ++n) {
    if (n > 0) expected *= n;
    CAPTURE(n);
    const auto out = run(kFactorial, "fact", {Tensor::ofInt(n, DType::I64)});
    REQUIRE(out.size() == 1);
    CHECK(out[0].dtype() == DType::I64);
    CHECK(out[0].toInt() == expected);
  }
  CHECK(expected == 2432902008176640000); // 20!
}

TEST_CASE("a while loop with a data-dependent trip count uses outer values every iteration") {
  // %step and %limit live in the function's block and are used inside the loop on every
  // iteration: the interpreter must not release them after the first.
  const char* text = R"(func @steps(%limit: f64, %step: f64) -> (f64, i64) {
  %zero = constant 0.0 : f64
  %izero = constant 0 : i64
  %r:2 = while (%acc = %zero, %k = %izero) : (f64, i64) -> (f64, i64) {
    %more = less %acc, %limit : bool
    condition %more, %acc, %k
  } do (%a, %c) {
    %a1 = add %a, %step : f64
    %one = constant 1 : i64
    %c1 = add %c, %one : i64
    yield %a1, %c1
  }
  %again = add %r#0, %step : f64
  return %again, %r#1
}
)";
  for (const auto& [limit, step] : std::vector<std::pair<double, double>>{{10, 0.7}, {0, 1}, {-1, 1}, {1, 0.1}, {250, 3.3}}) {
    CAPTURE(limit);
    CAPTURE(step);
    double acc = 0;
    int64_t k = 0;
    while (acc < limit) {
      acc += step;
      ++k;
    }
    const auto out = run(text, "steps", {Tensor::ofFloat(limit, DType::F64), Tensor::ofFloat(step, DType::F64)});
    CHECK(out[0].toDouble() == acc + step);
    CHECK(out[1].toInt() == k);
  }
}

TEST_CASE("an if inside a while: the Collatz step count") {
  const char* text = R"(func @collatz(%n: i64) -> (i64) {
  %zero = constant 0 : i64
  %one = constant 1 : i64
  %two = constant 2 : i64
  %three = constant 3 : i64
  %r:2 = while (%x = %n, %steps = %zero) : (i64, i64) -> (i64, i64) {
    %more = greater %x, %one : bool
    condition %more, %x, %steps
  } do (%y, %s) {
    %parity = mod %y, %two : i64
    %even = equal %parity, %zero : bool
    %next = if %even : i64 {
      %half = floordiv %y, %two : i64
      yield %half
    } else {
      %t = mul %y, %three : i64
      %u = add %t, %one : i64
      yield %u
    }
    %s1 = add %s, %one : i64
    yield %next, %s1
  }
  return %r#1
}
)";
  for (int64_t n : {1, 2, 6, 7, 27, 97, 871}) {
    CAPTURE(n);
    int64_t x = n, steps = 0;
    while (x > 1) {
      x = x % 2 == 0 ? x / 2 : 3 * x + 1;
      ++steps;
    }
    CHECK(run(text, "collatz", {Tensor::ofInt(n, DType::I64)})[0].toInt() == steps);
  }
  CHECK(run(text, "collatz", {Tensor::ofInt(27, DType::I64)})[0].toInt() == 111); // a known answer
}

TEST_CASE("nested whiles: a triangular sum") {
  // sum over i < n of (sum over j < i of 1) = n(n-1)/2, with the inner loop bound by the
  // outer counter.
  const char* text = R"(func @tri(%n: i64) -> (i64) {
  %zero = constant 0 : i64
  %one = constant 1 : i64
  %r:2 = while (%i = %zero, %total = %zero) : (i64, i64) -> (i64, i64) {
    %more = less %i, %n : bool
    condition %more, %i, %total
  } do (%i2, %t2) {
    %inner:2 = while (%j = %zero, %acc = %t2) : (i64, i64) -> (i64, i64) {
      %go = less %j, %i2 : bool
      condition %go, %j, %acc
    } do (%j2, %a2) {
      %j3 = add %j2, %one : i64
      %a3 = add %a2, %one : i64
      yield %j3, %a3
    }
    %i3 = add %i2, %one : i64
    yield %i3, %inner#1
  }
  return %r#1
}
)";
  for (int64_t n : {0, 1, 2, 5, 13}) {
    CAPTURE(n);
    int64_t total = 0;
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < i; ++j) ++total;
    CHECK(run(text, "tri", {Tensor::ofInt(n, DType::I64)})[0].toInt() == total);
  }
}

TEST_CASE("calls: a callee twice, results through several values, and recursion") {
  const char* text = R"(func @sq(%a: f32[3]) -> (f32[3]) {
  %0 = mul %a, %a : f32[3]
  return %0
}

func @both(%a: f32[3], %b: f32[3]) -> (f32[3], f32[3]) {
  %s = add %a, %b : f32[3]
  %d = sub %a, %b : f32[3]
  return %s, %d
}

func @main(%x: f32[3], %y: f32[3]) -> (f32[3], f32[3]) {
  %0 = call @sq(%x) : f32[3]
  %1 = call @sq(%0) : f32[3]
  %2:2 = call @both(%1, %y) : f32[3], f32[3]
  return %2#0, %2#1
}

func @rfact(%n: i64) -> (i64) {
  %one = constant 1 : i64
  %base = less_equal %n, %one : bool
  %r = if %base : i64 {
    yield %one
  } else {
    %m = sub %n, %one : i64
    %f = call @rfact(%m) : i64
    %p = mul %n, %f : i64
    yield %p
  }
  return %r
}
)";
  const std::vector<double> x = {1, 2, -3}, y = {0.5, 1, 2};
  const auto out = run(text, "main", {f32(x), f32(y)});
  for (size_t i = 0; i < 3; ++i) {
    const double fourth = x[i] * x[i] * x[i] * x[i];
    CHECK(valuesOf(out[0])[i] == fourth + y[i]);
    CHECK(valuesOf(out[1])[i] == fourth - y[i]);
  }
  int64_t expected = 1;
  for (int64_t n = 1; n <= 15; ++n) {
    expected *= n;
    CHECK(run(text, "rfact", {Tensor::ofInt(n, DType::I64)})[0].toInt() == expected);
  }
}

TEST_CASE("arguments that do not match the parameters are type errors") {
  const char* text = "func @f(%x: f32[4], %k: i64) -> (f32[4]) {\n  return %x\n}\n";
  const Tensor good = f32({1, 2, 3, 4});
  CHECK(valuesOf(run(text, "f", {good, Tensor::ofInt(1, DType::I64)})[0]) == std::vector<double>{1, 2, 3, 4});
  const Error count = runError(text, "f", {good});
  CHECK(count.kind() == ErrorKind::Type);
  CHECK(count.message() == "@f takes 2 arguments, got 1");
  const Error dtype = runError(text, "f", {tensorOf({1, 2, 3, 4}, Shape{4}, DType::F64), Tensor::ofInt(1, DType::I64)});
  CHECK(dtype.kind() == ErrorKind::Type);
  CHECK(dtype.message() == "@f expects f32[4] for argument 1, got f64[4]");
  const Error shape = runError(text, "f", {f32({1, 2, 3}), Tensor::ofInt(1, DType::I64)});
  CHECK(shape.message() == "@f expects f32[4] for argument 1, got f32[3]");
  const Error rank = runError(text, "f", {tensorOf({1, 2, 3, 4}, Shape{2, 2}, DType::F32), Tensor::ofInt(1, DType::I64)});
  CHECK(rank.message() == "@f expects f32[4] for argument 1, got f32[2,2]");
  const Error scalar = runError(text, "f", {good, tensorOf({1}, Shape{1}, DType::I64)});
  CHECK(scalar.message() == "@f expects i64 for argument 2, got i64[1]");
}

TEST_CASE("symbolic dimensions bind once per call and must agree") {
  const char* text = R"(func @f(%a: f32[n], %b: f32[n]) -> (f32[n]) {
  %0 = add %a, %b : f32[n]
  return %0
}

func @mm(%a: f32[n,k], %b: f32[k,m]) -> (f32[n,m]) {
  %0 = matmul %a, %b : f32[n,m]
  return %0
}
)";
  CHECK(valuesOf(run(text, "f", {f32({1, 2, 3}), f32({10, 20, 30})})[0]) == std::vector<double>{11, 22, 33});
  // Another call may bind n to another size.
  CHECK(valuesOf(run(text, "f", {f32({1, 2}), f32({5, 6})})[0]) == std::vector<double>{6, 8});
  const Error mismatch = runError(text, "f", {f32({1, 2, 3}), f32({1, 2, 3, 4})});
  CHECK(mismatch.kind() == ErrorKind::Type);
  CHECK(mismatch.message() == "@f expects f32[n] for argument 2, got f32[4]");
  const Tensor a = tensorOf({1, 2, 3, 4, 5, 6}, Shape{2, 3}, DType::F32);
  const Tensor b = tensorOf({1, 0, 0, 1, 1, 1}, Shape{3, 2}, DType::F32);
  const auto product = run(text, "mm", {a, b});
  CHECK(product[0].shape() == Shape{2, 2});
  CHECK(valuesOf(product[0]) == std::vector<double>{4, 5, 10, 11});
  const Error inner = runError(text, "mm", {a, tensorOf({1, 2, 3, 4, 5, 6, 7, 8}, Shape{4, 2}, DType::F32)});
  CHECK(inner.message() == "@mm expects f32[k,m] for argument 2, got f32[4,2]");
}

TEST_CASE("the poll hook runs in every iteration and can stop an endless loop") {
  int polls = 0;
  compiler::RunOptions counting;
  counting.poll = [&] { ++polls; };
  CHECK(run(kFactorial, "fact", {Tensor::ofInt(10, DType::I64)}, counting)[0].toInt() == 3628800);
  CHECK(polls >= 10);
  CHECK(polls <= 11);
  const char* endless = R"(func @spin(%x: i64) -> (i64) {
  %t = constant true : bool
  %r = while (%v = %x) : (i64) -> (i64) {
    condition %t, %v
  } do (%w) {
    yield %w
  }
  return %r
}
)";
  polls = 0;
  compiler::RunOptions stopping;
  stopping.poll = [&] {
    if (++polls == 1000) throw Error(ErrorKind::Runtime, "interrupted");
  };
  const Error e = runError(endless, "spin", {Tensor::ofInt(1, DType::I64)}, stopping);
  CHECK(e.message() == "interrupted");
  CHECK(polls == 1000);
}

TEST_CASE("an error raised by a kernel points at the operation's span") {
  const char* text = R"(func @f(%labels: i64[3]) -> (f32[3,4]) {
  %0 = one_hot %labels {count = 4} : f32[3,4] loc("model.tsl":12:7-12:30)
  return %0
}
)";
  CHECK(valuesOf(run(text, "f", {tensorOf({0, 3, 1}, Shape{3}, DType::I64)})[0]) ==
        std::vector<double>{1, 0, 0, 0, 0, 0, 0, 1, 0, 1, 0, 0});
  const Error e = runError(text, "f", {tensorOf({0, 4, 1}, Shape{3}, DType::I64)});
  CHECK(e.kind() == ErrorKind::Value);
  CHECK(e.span().fileName() == "model.tsl");
  CHECK(e.span().line == 12);
  CHECK(e.span().col == 7);
}
