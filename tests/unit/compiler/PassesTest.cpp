// tests/unit/compiler/PassesTest.cpp — fuse and plan-memory on random and chosen programs.
//
// Fusion must not change what a program computes (the :interp runner runs fused regions
// op by op on the same kernels, so results agree bit for bit); the memory plan must never
// give two values alive at once overlapping bytes of the arena.
#include "compiler/Backend.h"
#include "compiler/interp/IrRunner.h"
#include "ir/MemoryPlan.h"
#include "ir/Parser.h"
#include "ir/Printer.h"
#include "ir/Verifier.h"
#include "runtime/Creation.h"
#include "runtime/Random.h"

#include <doctest/doctest.h>

#include <cstring>
#include <random>

using namespace tsl;

namespace {

/// A random straight-line program over f32[R,C] values: elementwise operations (unary and
/// binary, some with a broadcast f32[C] operand), sums over an axis, transposes and
/// reshapes; several values returned.
std::string randomProgram(std::mt19937& random, int ops) {
  const int rows = 4, cols = 6;
  std::string body;
  std::vector<std::string> square{"%x", "%y"};
  int next = 0;
  auto fresh = [&] { return "%" + std::to_string(next++); };
  const char* unary[] = {"exp", "tanh", "neg", "square", "relu", "sigmoid", "abs"};
  const char* binary[] = {"add", "mul", "sub", "maximum", "minimum"};
  std::vector<std::string> reduced;
  for (int i = 0; i < ops; ++i) {
    const std::string a = square[random() % square.size()];
    const std::string v = fresh();
    switch (random() % 6) {
    case 0:
    case 1: body += "  " + v + " = " + unary[random() % 7] + " " + a + " : f32[4,6]\n"; break;
    case 2:
    case 3: {
      const std::string b = random() % 4 == 0 ? std::string("%b") : square[random() % square.size()];
      body += "  " + v + " = " + binary[random() % 5] + " " + a + ", " + b + " : f32[4,6]\n";
      break;
    }
    case 4: {
      const std::string t = fresh();
      body += "  " + t + " = transpose " + a + " {perm = [1, 0]} : f32[6,4]\n";
      body += "  " + v + " = transpose " + t + " {perm = [1, 0]} : f32[4,6]\n";
      break;
    }
    default: {
      const std::string s = fresh();
      body += "  " + s + " = mul " + a + ", " + a + " : f32[4,6]\n";
      body += "  " + v + " = sum " + s + " {axes = [1]} : f32[4]\n";
      reduced.push_back(v);
      continue;
    }
    }
    square.push_back(v);
  }
  std::string ret = square.back() + ", " + square[square.size() / 2];
  std::string types = "f32[4,6], f32[4,6]";
  if (!reduced.empty()) {
    ret += ", " + reduced.back();
    types += ", f32[4]";
  }
  (void)rows;
  (void)cols;
  return "func @f(%x: f32[4,6], %y: f32[4,6], %b: f32[6]) -> (" + types + ") {\n" + body + "  return " + ret + "\n}\n";
}

std::vector<Tensor> inputs(uint64_t seed) {
  const Tensor key = rngKey(static_cast<int64_t>(seed));
  return {randNormal(key, Shape{4, 6}, DType::F32), randNormal(rngKey(static_cast<int64_t>(seed) + 1000), Shape{4, 6}, DType::F32),
          randNormal(rngKey(static_cast<int64_t>(seed + 1)), Shape{6}, DType::F32)};
}

bool sameBits(const Tensor& a, const Tensor& b) {
  if (TensorType::of(a) != TensorType::of(b)) return false;
  return std::memcmp(a.data(), b.data(), static_cast<size_t>(a.numel()) * a.elementSize()) == 0;
}

void checkPlan(const ir::Function& f) {
  REQUIRE(f.plan());
  const ir::MemoryPlan& plan = *f.plan();
  for (size_t i = 0; i < plan.values.size(); ++i)
    for (size_t j = i + 1; j < plan.values.size(); ++j) {
      const ir::Placement& a = plan.values[i];
      const ir::Placement& b = plan.values[j];
      if (a.home != ir::Home::Arena || b.home != ir::Home::Arena) continue;
      const bool together = a.defined <= b.lastUse && b.defined <= a.lastUse;
      const bool overlap = a.offset < b.offset + b.bytes && b.offset < a.offset + a.bytes;
      CHECK_FALSE((together && overlap));
    }
  for (const ir::Placement& p : plan.values) {
    if (p.home == ir::Home::Arena) CHECK(p.offset + p.bytes <= plan.arenaBytes);
    if (p.home == ir::Home::Shared) CHECK(plan.find(plan.root(p.value))->home != ir::Home::Shared);
  }
}

} // namespace

TEST_CASE("fusion and memory planning keep random programs' results bit for bit") {
  compiler::registerPasses();
  std::mt19937 random(17);
  for (int trial = 0; trial < 60; ++trial) {
    const std::string text = randomProgram(random, 3 + trial % 12);
    CAPTURE(text);
    const auto plain = ir::parseModule(text);
    const auto fused = ir::parseModule(text);
    ir::PassContext context;
    context.verifyEach = true;
    ir::PassManager({"fuse", "plan-memory"}).run(*fused, context);
    checkPlan(*fused->find("f"));
    const std::vector<Tensor> args = inputs(static_cast<uint64_t>(trial));
    const auto expected = compiler::runIr(*plain, *plain->find("f"), args);
    const auto actual = compiler::runIr(*fused, *fused->find("f"), args);
    REQUIRE(expected.size() == actual.size());
    for (size_t i = 0; i < expected.size(); ++i) CHECK(sameBits(expected[i], actual[i]));
    // And the fused text parses back to the same module.
    CHECK(ir::printModule(*ir::parseModule(ir::printModule(*fused)), {false}) == ir::printModule(*fused, {false}));
  }
}

TEST_CASE("the memory plan reuses dead memory and updates in place") {
  compiler::registerPasses();
  const auto m = ir::parseModule(R"(func @f(%x: f32[256]) -> (f32) {
  %0 = exp %x : f32[256]
  %1 = neg %0 : f32[256]
  %2 = sum %1 : f32
  %3 = tanh %x : f32[256]
  %4 = sum %3 : f32
  %5 = add %2, %4 : f32
  return %5
})");
  ir::PassContext context;
  ir::PassManager({"plan-memory"}).run(*m, context);
  const ir::Function& f = *m->find("f");
  checkPlan(f);
  const ir::MemoryPlan& plan = *f.plan();
  // exp's result is updated in place by neg; tanh's reuses it once both are dead.
  CHECK(plan.arenaBytes == 1024);
  int shared = 0;
  for (const ir::Placement& p : plan.values) shared += p.home == ir::Home::Shared && p.inPlace;
  CHECK(shared == 1);
}
