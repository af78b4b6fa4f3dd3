// tests/unit/ir/DepthTest.cpp — deep nesting and deep recursion end in errors, not crashes.
#include "IrTestSupport.h"

#include "compiler/interp/IrRunner.h"
#include "ir/Graphviz.h"
#include "ir/Pass.h"

using namespace tsl;
using namespace tsl::ir;
using namespace tsl::ir::test;

namespace {

/// `depth` ifs nested in one another, each yielding nothing.
std::string nestedIfs(int depth) {
  std::string text = "func @f(%c: bool) -> () {\n";
  for (int i = 0; i < depth; ++i) text += "if %c {\n";
  for (int i = 0; i < depth; ++i) text += "yield\n} else {\nyield\n}\n";
  return text + "return\n}\n";
}

} // namespace

TEST_CASE("deeply nested regions parse, print, verify and run") {
  // The sanitizers' frames are several times larger: this test runs on the main thread's
  // 8 MiB stack, so there 300 levels stand for the release build's 1,000.
#if defined(TSL_SANITIZE)
  constexpr int kDeep = 300;
#else
  constexpr int kDeep = 1000;
#endif
  for (int depth : {10, kDeep}) {
    CAPTURE(depth);
    std::unique_ptr<Module> m;
    REQUIRE_NOTHROW(m = parseModule(nestedIfs(depth)));
    CHECK_NOTHROW(verify(*m));
    CHECK(countOps(*m->functions()[0]) == 3 * depth + 1);
    const std::string printed = printModule(*m);
    CHECK_NOTHROW(parseModule(printed));
    CHECK(compiler::runIr(*m, *m->functions()[0], std::vector<Tensor>{Tensor::ofBool(true)}).empty());
    PassContext context;
    CHECK_NOTHROW(PassManager(optimizationPasses()).run(*m, context));
    CHECK_NOTHROW(printDot(*m->functions()[0]));
  }
}

TEST_CASE("nesting too deep for the native stack is an error in every stage, never a crash") {
  // Whatever depth the parser accepts, printing, verifying, the passes, DOT and the
  // interpreter either work or throw tsl::Error ("stack depth exceeded").
  int parsed = 0;
  for (int depth = 1000; depth <= 12000; depth += 1000) {
    CAPTURE(depth);
    std::unique_ptr<Module> m;
    if (errorFrom([&] { m = parseModule(nestedIfs(depth)); })) continue;
    ++parsed;
    const Function& f = *m->functions()[0];
    errorFrom([&] { printModule(*m); });
    errorFrom([&] { verify(*m); });
    errorFrom([&] { printDot(f); });
    errorFrom([&] { compiler::runIr(*m, f, std::vector<Tensor>{Tensor::ofBool(true)}); });
    for (const std::string& name : passNames()) {
      PassContext context;
      errorFrom([&] { createPass(name)->run(*m, context); });
    }
  }
  CHECK(parsed > 0); // the stages above ran on at least one deep module (a crash fails the run)
  const auto e = errorFrom([] { parseModule(nestedIfs(2000000)); });
  REQUIRE(e);
  CHECK(e->message() == "stack depth exceeded");
}

TEST_CASE("a recursion too deep for the native stack is an error") {
  const char* text = R"(func @down(%n: i64) -> (i64) {
  %zero = constant 0 : i64
  %one = constant 1 : i64
  %done = less_equal %n, %zero : bool
  %r = if %done : i64 {
    yield %zero
  } else {
    %m = sub %n, %one : i64
    %f = call @down(%m) : i64
    %p = add %f, %one : i64
    yield %p
  }
  return %r
}
)";
  std::unique_ptr<Module> m = parseModule(text);
  CHECK(compiler::runIr(*m, *m->find("down"), std::vector<Tensor>{Tensor::ofInt(1000, DType::I64)})[0].toInt() == 1000);
  const auto e = errorFrom([&] { compiler::runIr(*m, *m->find("down"), std::vector<Tensor>{Tensor::ofInt(100000000, DType::I64)}); });
  REQUIRE(e);
  CHECK(e->message() == "stack depth exceeded");
}
