// tests/unit/ir/PassManagerTest.cpp — the pass registry, pipelines, --verify-each,
// --print-ir-after and --time-passes, and the interp pipeline end to end.
#include "PassTestSupport.h"
#include "runtime/Interrupt.h"

#include <sstream>

using namespace tsl;
using namespace tsl::ir;
using namespace tsl::ir::test;

TEST_CASE("the pass manager knows the passes, rejects unknown names and verifies on request") {
  const std::vector<std::string> names = passNames();
  CHECK(names == std::vector<std::string>{"infer-types", "inline", "fold-constants", "simplify", "cse", "dce"});
  for (const std::string& name : names) {
    auto pass = createPass(name);
    REQUIRE(pass);
    CHECK(pass->name() == name);
  }
  CHECK_FALSE(createPass("licm"));
  const auto e = errorFrom([] { PassManager manager({"cse", "licm", "dce"}); });
  REQUIRE(e);
  CHECK(e->kind() == ErrorKind::Value);
  CHECK(e->message().find("unknown pass 'licm'") != std::string::npos);
  CHECK(e->message().find("fold-constants") != std::string::npos);
  CHECK_NOTHROW(PassManager{optimizationPasses()});

  // A module with a wrong result type that dce does not touch: verifyEach catches it.
  const char* broken = "func @f(%x: f32) -> (i64) {\n  %0 = neg %x : i64\n  return %0\n}\n";
  std::unique_ptr<Module> m = parseModule(broken);
  PassContext quiet;
  CHECK_FALSE(PassManager({"dce"}).run(*m, quiet));
  PassContext checking;
  checking.verifyEach = true;
  const auto v = errorFrom([&] { PassManager({"dce"}).run(*m, checking); });
  REQUIRE(v);
  CHECK(v->message() == "verify: neg: has type i64 but its operands give f32");

  // Printing after a pass and timing.
  std::ostringstream out;
  PassContext printing;
  printing.out = &out;
  printing.printAfter = {"dce"};
  printing.timePasses = true;
  std::unique_ptr<Module> ok = parseModule("func @f(%x: f32) -> (f32) {\n  %u = exp %x : f32\n  return %x\n}\n");
  CHECK(PassManager({"cse", "dce"}).run(*ok, printing));
  CHECK(contains(out.str(), "// -----// IR after dce //----- //\n"));
  CHECK_FALSE(contains(out.str(), "IR after cse"));
  CHECK_FALSE(contains(out.str(), "exp"));
  REQUIRE(printing.timings.size() == 2);
  CHECK(printing.timings[0].first == "cse");
  CHECK(printing.timings[1].first == "dce");
}

TEST_CASE("the interp pipeline preserves results") {
  const char* text = R"(func @sq(%a: f32[4]) -> (f32[4]) {
  %0 = mul %a, %a : f32[4]
  return %0
}

func @f(%x: f32[4]) -> (f32[4]) {
  %one = constant 1.0 : f32
  %k = constant dense<[1.0, 2.0, 3.0, 4.0]> : f32[4]
  %k2 = add %k, %k : f32[4]
  %0 = mul %x, %one : f32[4]
  %1 = call @sq(%0) : f32[4]
  %2 = call @sq(%0) : f32[4]
  %3 = add %1, %2 : f32[4]
  %4 = add %3, %k2 : f32[4]
  return %4
}
)";
  const PassResult r = runPasses(text, optimizationPasses());
  CHECK_FALSE(contains(r.text.substr(r.text.find("func @f(")), "call"));
  CHECK(occurrences(r.text.substr(r.text.find("func @f(")), " = mul ") == 1);
  CHECK(contains(r.text, "constant dense<[2.0, 4.0, 6.0, 8.0]> : f32[4]"));
  checkSameResults(text, optimizationPasses(), {tensorOf({0.5, -1, 2, 3}, Shape{4}, DType::F32)});
}

TEST_CASE("Ctrl-C stops printing a long function (the compiler prints the IR as its cache key)") {
  std::string text = "func @f(%x: f32[4]) -> (f32[4]) {\n  %0 = add %x, %x : f32[4]\n";
  for (int i = 1; i < 5000; ++i) text += cat("  %", i, " = add %", i - 1, ", %x : f32[4]\n");
  text += "  return %4999\n}\n";
  const auto m = parseModule(text);
  CHECK(printModule(*m).size() > text.size() / 2); // not interrupted: prints in full
  InterruptFlag stop{true};
  InterruptScope scope(&stop);
  const auto e = errorFrom([&] { (void)printModule(*m); });
  REQUIRE(e);
  CHECK(e->kind() == ErrorKind::Runtime);
  CHECK(e->message() == "interrupted");
}
