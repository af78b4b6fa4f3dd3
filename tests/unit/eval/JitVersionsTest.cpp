// tests/unit/eval/JitVersionsTest.cpp — a jit function called with ever new shapes keeps
// a bounded number of compiled versions (the least recently used go), their code is
// freed, and an evicted signature compiles again and computes the same.
#include "compiler/Compiler.h"
#include "eval/Builtins.h"
#include "eval/Compile.h"
#include "tsl/tsl.h"

#include <doctest/doctest.h>
#include <memory>
#include <string>

using namespace tsl;

namespace {

/// (g (arange n)) as the sum of its result: 2 * n(n-1)/2.
double sumOfCall(Engine& engine, int n) {
  return engine.eval("(sum (g (astype (arange " + std::to_string(n) + ") :f32)))")
      .tensor()
      .toDouble();
}

} // namespace

TEST_CASE(
    "a jit function keeps at most :max-versions versions, and an evicted one recompiles right") {
  Engine engine;
  engine.eval("(def g (jit (fn [x] (* x 2.0)) :target :interp :max-versions 4))");
  JitState* state = builtins::jitState(engine.eval("g"));
  REQUIRE(state);
  CHECK(state->maxVersions() == 4);
  CHECK(sumOfCall(engine, 1) == 0.0);
  REQUIRE(state->lastVersion());
  const std::weak_ptr<compiler::Executable> first = state->lastVersion()->executable;
  // More shapes than the version cap and the compiler's cache of executables together:
  // the first version's code must be gone.
  const int shapes = static_cast<int>(compiler::Compiler::kCachedExecutables) + 16;
  for (int n = 2; n <= shapes; ++n) CHECK(sumOfCall(engine, n) == static_cast<double>(n) * (n - 1));
  CHECK(state->versions() == 4);
  CHECK(state->compiled() == static_cast<size_t>(shapes));
  CHECK(state->evicted() == static_cast<size_t>(shapes - 4));
  CHECK(first.expired());
  // Recently used versions are hits; an evicted signature compiles again.
  CHECK(sumOfCall(engine, shapes) == static_cast<double>(shapes) * (shapes - 1));
  CHECK(state->compiled() == static_cast<size_t>(shapes));
  CHECK(sumOfCall(engine, 5) == 20.0);
  CHECK(state->compiled() == static_cast<size_t>(shapes) + 1);
  CHECK(state->versions() == 4);
  const std::string explained = engine.print(engine.eval("(jit-explain g)"));
  CHECK(explained.find("4 versions (" + std::to_string(shapes - 3) +
                       " evicted: at most 4 are kept") != std::string::npos);
}

TEST_CASE("the least recently used version is the one evicted") {
  Engine engine;
  engine.eval("(def g (jit (fn [x] (* x 2.0)) :target :interp :max-versions 2))");
  JitState* state = builtins::jitState(engine.eval("g"));
  REQUIRE(state);
  sumOfCall(engine, 1);
  sumOfCall(engine, 2);
  sumOfCall(engine, 1); // 2 is now the least recently used
  sumOfCall(engine, 3); // evicts 2
  CHECK(state->compiled() == 3);
  sumOfCall(engine, 1);
  CHECK(state->compiled() == 3);
  CHECK(sumOfCall(engine, 2) == 2.0);
  CHECK(state->compiled() == 4);
}

TEST_CASE("without :max-versions a jit function keeps the documented default") {
  Engine engine;
  engine.eval("(def g (jit (fn [x] (* x 2.0)) :target :interp))");
  JitState* state = builtins::jitState(engine.eval("g"));
  REQUIRE(state);
  CHECK(state->maxVersions() == kDefaultMaxVersions);
  CHECK(kDefaultMaxVersions == 64);
  const int shapes = static_cast<int>(kDefaultMaxVersions) + 6;
  for (int n = 1; n <= shapes; ++n) sumOfCall(engine, n);
  CHECK(state->versions() == kDefaultMaxVersions);
  CHECK(state->evicted() == 6);
}
