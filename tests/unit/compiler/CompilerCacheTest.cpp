// tests/unit/compiler/CompilerCacheTest.cpp — the compiled-code cache looks up before the
// pipeline: a module compiled again (as lowered) runs no pass and no code generation, and
// the target's options and cache-key fields keep different compilations apart.
#include "compiler/Compiler.h"
#include "ir/Parser.h"

#include <doctest/doctest.h>

#include <sstream>

using namespace tsl;

namespace {

const char* kModule = R"(func @f(%a: f32[4], %b: f32[4]) -> (f32[4]) {
  %c = add %a, %b : f32[4]
  %d = mul %c, %c : f32[4]
  return %d
}
)";

/// Compiles kModule for `target`, printing the IR after every pass into `printed`.
std::shared_ptr<compiler::Executable> compileOnce(compiler::Compiler& compiler, const std::string& target,
                                                  std::string& printed, compiler::OptionValues backend = {},
                                                  int optLevel = 2) {
  std::ostringstream out;
  ir::PassContext context;
  context.printAfterAll = true;
  context.out = &out;
  compiler::CompileOptions options;
  options.context = &context;
  options.optLevel = optLevel;
  options.backend = std::move(backend);
  auto exe = compiler.compile(ir::parseModule(kModule, "f.ir"), "f", target, options);
  printed = out.str();
  return exe;
}

} // namespace

TEST_CASE("a module compiled again is found before any pass runs") {
  for (const char* target : {"interp", "cpu", "tc"}) {
    CAPTURE(target);
    compiler::Compiler compiler;
    std::string first, second;
    const auto a = compileOnce(compiler, target, first);
    CHECK(!first.empty()); // the pipeline ran, printing after each pass
    CHECK(compiler.cacheHits() == 0);
    const auto b = compileOnce(compiler, target, second);
    CHECK(second.empty()); // no pass ran
    CHECK(compiler.cacheHits() == 1);
    CHECK(a == b);
    // and the cached code computes what the first did: (a + b)^2
    Tensor x = Tensor::empty(DType::F32, Shape{4}), y = Tensor::empty(DType::F32, Shape{4});
    for (int i = 0; i < 4; ++i) {
      reinterpret_cast<float*>(x.mutableData())[i] = 1.5f;
      reinterpret_cast<float*>(y.mutableData())[i] = 0.5f;
    }
    const std::vector<Tensor> out = b->run(std::vector<Tensor>{x, y});
    REQUIRE(out.size() == 1);
    CHECK(reinterpret_cast<const float*>(out[0].data())[3] == 4.0f);
  }
}

TEST_CASE("the target's options and cache-key fields are part of the key") {
  compiler::Compiler compiler;
  std::string printed;
  const auto base = compileOnce(compiler, "tc", printed);
  CHECK(compileOnce(compiler, "tc", printed, {{"tc-dtype", "bf16"}}) != base); // an option of the target
  CHECK(!printed.empty());
  CHECK(compileOnce(compiler, "tc", printed, {{"tc-dtype", "bf16"}}) == compileOnce(compiler, "tc", printed, {{"tc-dtype", "bf16"}}));
  const auto cpu2 = compileOnce(compiler, "cpu", printed);
  CHECK(compileOnce(compiler, "cpu", printed, {}, 0) != cpu2); // :cpu's optimisation level
  CHECK(compileOnce(compiler, "interp", printed) != compileOnce(compiler, "cpu", printed)); // the target
  CHECK(compiler.cacheKey(*ir::parseModule(kModule, "f.ir"), "f", "cpu", {}) !=
        compiler.cacheKey(*ir::parseModule(kModule, "f.ir"), "f", "interp", {}));
}
