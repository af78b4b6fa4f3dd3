// tests/unit/ir/TapeTest.cpp — the tape operations reverse-mode autodiff records loops
// with: they round-trip through the text form, verify, run as stacks (last in, first out),
// and, being side effects, survive dce and cse.
#include "IrTestSupport.h"

#include "compiler/interp/IrRunner.h"
#include "ir/Pass.h"

using namespace tsl;
using namespace tsl::ir;
using namespace tsl::ir::test;

namespace {

const char* kPushPop = R"(func @f(%x: f32[3], %y: i64) -> (f32[3], i64, f32[3]) {
  %t = tape_new : i64
  %t1 = tape_push %t, %x, %y : i64
  %sq = mul %x, %x : f32[3]
  %t2 = tape_push %t1, %sq : i64
  %0:2 = tape_pop %t2 : i64, f32[3]
  %1:3 = tape_pop %0#0 : i64, f32[3], i64
  return %0#1, %1#2, %1#1
}
)";

/// Pushes 1..n in one loop, pops them in another: acc = acc * 10 + popped.
const char* kReverse = R"(func @f(%n: i64) -> (i64) {
  %zero = constant 0 : i64
  %one = constant 1 : i64
  %ten = constant 10 : i64
  %t0 = tape_new : i64
  %0:2 = while (%i = %zero, %t = %t0) : (i64, i64) -> (i64, i64) {
    %more = less %i, %n : bool
    condition %more, %i, %t
  } do (%i2, %t2) {
    %v = add %i2, %one : i64
    %t3 = tape_push %t2, %v : i64
    yield %v, %t3
  }
  %1:3 = while (%k = %zero, %tb = %0#1, %acc = %zero) : (i64, i64, i64) -> (i64, i64, i64) {
    %go = less %k, %n : bool
    condition %go, %k, %tb, %acc
  } do (%k2, %tb2, %acc2) {
    %2:2 = tape_pop %tb2 : i64, i64
    %shifted = mul %acc2, %ten : i64
    %acc3 = add %shifted, %2#1 : i64
    %k3 = add %k2, %one : i64
    yield %k3, %2#0, %acc3
  }
  return %1#2
}
)";

std::vector<Tensor> runF(const Module& m, const std::vector<Tensor>& args) {
  return compiler::runIr(m, *m.find("f"), args);
}

} // namespace

TEST_CASE("tape operations round-trip and verify") {
  for (const char* text : {kPushPop, kReverse}) {
    std::unique_ptr<Module> m;
    REQUIRE_NOTHROW(m = parseModule(text));
    CHECK_NOTHROW(verify(*m));
    CHECK(printModule(*m) == text);
    checkRoundTrip(*m);
  }
  // Built through the API, with spans.
  Module m;
  Function& f = m.addFunction("g", spanAt("t.tsl", 1, 1, 5, 1));
  Value* x = f.body().addArgument(Type::of(DType::F32, Shape{2}), "x");
  Builder b(f.body());
  const Type handle = Type::of(DType::I64, Shape{});
  Value* t = b.create(OpCode::of(Structural::TapeNew), {}, {handle}, spanAt("t.tsl", 2, 3, 2, 9))->result();
  Value* t1 = b.create(OpCode::of(Structural::TapePush), {t, x}, {handle}, spanAt("t.tsl", 3, 3, 3, 9))->result();
  Operation* pop = b.create(OpCode::of(Structural::TapePop), {t1}, {handle, x->type()}, spanAt("t.tsl", 4, 3, 4, 9));
  b.terminate(Structural::Return, {pop->result(1)}, spanAt("t.tsl", 5, 3, 5, 9));
  REQUIRE_NOTHROW(verify(m));
  CHECK(printModule(m, {false}).find("%2:2 = tape_pop %1 : i64, f32[2]") != std::string::npos);
  checkRoundTrip(m);
}

TEST_CASE("the verifier checks tape handles") {
  std::unique_ptr<Module> m = parseModule(R"(func @f(%x: f32) -> () {
  %t = tape_push %x, %x : i64 loc("t.tsl":2:3-2:20)
  return
}
)");
  const auto e = errorFrom([&] { verify(*m); });
  REQUIRE(e);
  CHECK(e->message() == "verify: tape_push: takes the tape (i64) first");
  CHECK(e->span().line == 2);
  std::unique_ptr<Module> n = parseModule("func @f() -> () {\n  %t = tape_new : f32\n  return\n}\n");
  const auto e2 = errorFrom([&] { verify(*n); });
  REQUIRE(e2);
  CHECK(e2->message() == "verify: tape_new: gives the tape (i64) first");
}

TEST_CASE("a tape is a stack: the last tuple pushed is the first popped") {
  std::unique_ptr<Module> m = parseModule(kPushPop);
  const auto out = runF(*m, {tensorOf({1, -2, 3}, Shape{3}, DType::F32), Tensor::ofInt(7, DType::I64)});
  REQUIRE(out.size() == 3);
  CHECK(valuesOf(out[0]) == std::vector<double>{1, 4, 9});
  CHECK(out[1].toInt() == 7);
  CHECK(valuesOf(out[2]) == std::vector<double>{1, -2, 3});

  std::unique_ptr<Module> r = parseModule(kReverse);
  for (int64_t n : {0, 1, 3, 5, 9}) {
    CAPTURE(n);
    int64_t expected = 0;
    for (int64_t v = n; v >= 1; --v) expected = expected * 10 + v;
    CHECK(runF(*r, {Tensor::ofInt(n, DType::I64)})[0].toInt() == expected);
  }
}

TEST_CASE("dce keeps tape operations whose results are unused, and cse never merges them") {
  const char* text = R"(func @f(%x: f32[3]) -> (f32[3]) {
  %t = tape_new : i64
  %u = tape_new : i64
  %t1 = tape_push %t, %x : i64
  %t2 = tape_push %t, %x : i64
  return %x
}
)";
  std::unique_ptr<Module> m = parseModule(text);
  PassContext context;
  CHECK_FALSE(createDcePass()->run(*m, context));
  CHECK_FALSE(createCsePass()->run(*m, context));
  CHECK(printModule(*m, {false}) == text);
  // A loop that records on a tape is not pure either: the pipeline keeps the recording
  // and the replay gives the same answer.
  std::unique_ptr<Module> r = parseModule(kReverse);
  PassManager(optimizationPasses()).run(*r, context);
  REQUIRE_NOTHROW(verify(*r));
  CHECK(runF(*r, {Tensor::ofInt(4, DType::I64)})[0].toInt() == 4321);
}
