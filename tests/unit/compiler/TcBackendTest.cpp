// tests/unit/compiler/TcBackendTest.cpp — the :tc backend behind the seam: its lowering
// table covers every operation, and a module compiled for it runs its contractions as
// tensor-core programs (counted in the session) and everything else on eager kernels.
#include "compiler/Backend.h"
#include "compiler/Compiler.h"
#include "compiler/tc/TcBackend.h"
#include "ir/Parser.h"
#include "runtime/Ops.h"

#include <doctest/doctest.h>

#include <algorithm>

using namespace tsl;

TEST_CASE("every operation has a :tc lowering: the cube for contractions, else its eager kernel") {
  auto tc = compiler::makeBackend("tc");
  REQUIRE(tc);
  const auto& targets = compiler::targetNames();
  CHECK(std::find(targets.begin(), targets.end(), "tc") != targets.end());
  int cube = 0;
  for (const OpInfo& info : allOps()) {
    CAPTURE(info.name);
    compiler::Lowering lowering = compiler::Lowering::Native;
    REQUIRE_NOTHROW(lowering = tc->lowering(info.kind));
    if (lowering == compiler::Lowering::Native) {
      ++cube;
      CHECK(info.fusion == FusionClass::Contraction); // only contractions reach the cube
    }
  }
  CHECK(tc->lowering(OpKind::MatMul) == compiler::Lowering::Native);
  CHECK(tc->lowering(OpKind::Conv2d) == compiler::Lowering::Native);
  CHECK(tc->lowering(OpKind::Dot) == compiler::Lowering::Native);
  CHECK(tc->lowering(OpKind::Relu) == compiler::Lowering::GenericKernel);
  CHECK(cube == 3);
  CHECK(std::string(tc->layoutTarget()) == "tc");
}

TEST_CASE("a module compiled for :tc runs its matmul on the cube, its other operations eagerly") {
  compiler::Compiler compiler;
  auto module = ir::parseModule(R"(func @f(%a: f32[20,30], %b: f32[30,40]) -> (f32[20,40]) {
  %c = matmul %a, %b : f32[20,40]
  %d = exp %c : f32[20,40]
  return %d
}
)",
                                "f.ir");
  compiler::CompileOptions options;
  const auto exe = compiler.compile(std::move(module), "f", "tc", options);
  const Tensor a = Tensor::zeros(DType::F32, Shape{20, 30}), b = Tensor::zeros(DType::F32, Shape{30, 40});
  const std::vector<Tensor> out = exe->run(std::vector<Tensor>{a, b});
  REQUIRE(out.size() == 1);
  CHECK(out[0].shape() == Shape{20, 40});
  CHECK(reinterpret_cast<const float*>(out[0].data())[0] == 1.0f); // exp(0)
  auto& session = compiler::tc::sessionOf(compiler.backend("tc"));
  CHECK(session.last.programs == 1);
  CHECK(session.last.macs == 20 * 30 * 40);
  CHECK(exe->inspect("tc").find("mmad c=") != std::string::npos);
  CHECK(exe->inspect("llvm").empty());
}
