// tests/backend/CountBackendTest.cpp — the :count target (CountBackend.cpp, registered from
// tests/ alone) through the embedding API: jit compiles for it, it takes its own option
// and reports its statistics; its results are the eager ones.
#include "tsl/tsl.h"

#include <doctest/doctest.h>

#include <algorithm>

using namespace tsl;

namespace {

int64_t integer(Engine& engine, std::string_view source) {
  const Value v = engine.eval(source);
  REQUIRE(v.isTensor());
  return v.tensor().toInt();
}

} // namespace

TEST_CASE("a target registered by the tests alone is a target like the others") {
  const std::vector<std::string> targets = Engine::targets();
  CHECK(std::find(targets.begin(), targets.end(), "count") != targets.end());
  CHECK(targets.front() != "count"); // the default stays the preferred built-in target

  Engine engine;
  // A loop of 5 steps, one add per step: the count grows by one add a step.
  engine.eval("(defn steps [x n] (loop [i 0 acc x] (if (< i n) (recur (+ i 1) (+ acc 1.0)) acc)))");
  engine.eval("(def x [1.0 2.0 3.0])");
  engine.eval("(def g (jit steps :target :count :static [1]))");
  const Value counted = engine.eval("(g x 5)");
  const Value eager = engine.eval("(steps x 5)");
  CHECK(engine.print(counted) == engine.print(eager));
  const int64_t five = integer(engine, "(get (count-stats) :operations)");
  engine.eval("(g x 9)");
  const int64_t nine = integer(engine, "(get (count-stats) :operations)");
  CHECK(five > 0);
  // Unrolled by :static, each further step adds the same operations.
  CHECK((nine - five) % 4 == 0);
  const int64_t perStep = (nine - five) / 4;
  CHECK(perStep >= 1);
  CHECK(five - 5 * perStep == nine - 9 * perStep);
  CHECK(integer(engine, "(get (count-stats :total) :operations)") == five + nine);
  CHECK(integer(engine, "(get (count-stats :total) :calls)") == 2);

  // Its own option: each operation counts three times.
  engine.eval("(def g3 (jit steps :target :count :static [1] :count-weight 3))");
  engine.eval("(g3 x 5)");
  CHECK(integer(engine, "(get (count-stats) :operations)") == 3 * five);
  CHECK(integer(engine, "(get (count-stats) :weight)") == 3);
  // The statistics as JSON for programs.
  CHECK(engine.statistics("count", false).find("\"operations\": " + std::to_string(3 * five)) != std::string::npos);
}

TEST_CASE("the target's option is checked by the target, and belongs to it") {
  Engine engine;
  engine.eval("(defn f [x] (* x 2.0))");
  auto message = [&](std::string_view source) {
    try {
      engine.eval(source);
    } catch (const Error& e) {
      return renderHeadline(e);
    }
    return std::string("no error");
  };
  CHECK(message("(jit f :target :count :count-weight 0)").find(
            "value error: jit :count-weight takes an integer from 1 to 1000, got 0") != std::string::npos);
  CHECK(message("(jit f :target :count :count-weight :many)").find("got :many") != std::string::npos);
  CHECK(message("(jit f :target :interp :count-weight 2)").find(
            "jit :count-weight applies to :target :count, not :interp") != std::string::npos);
  CHECK(message("(jit f :count-weight 2)").find("applies to :target :count") != std::string::npos);
  // The command-line flag goes through the same check.
  CHECK(Engine::checkTargetFlag("count-weight", "7") == "7");
  CHECK_THROWS_WITH_AS(Engine::checkTargetFlag("count-weight", "x"),
                       doctest::Contains("--count-weight takes an integer from 1 to 1000, got x"), Error);
  const auto flags = Engine::targetFlags();
  CHECK(std::any_of(flags.begin(), flags.end(), [](const Engine::TargetFlag& f) { return f.name == "count-weight"; }));
}

TEST_CASE("a flag set on the engine reaches the target's compilations") {
  Engine engine;
  engine.compileDebug().flags.emplace_back("count-weight", "2");
  engine.eval("(defn f [x] (* x 2.0))");
  engine.eval("((jit f :target :count) [1.0 2.0])");
  const int64_t two = integer(engine, "(get (count-stats) :operations)");
  Engine plain;
  plain.eval("(defn f [x] (* x 2.0))");
  plain.eval("((jit f :target :count) [1.0 2.0])");
  CHECK(two == 2 * integer(plain, "(get (count-stats) :operations)"));
  // and jit's keyword wins over the flag
  engine.eval("((jit f :target :count :count-weight 5) [1.0 2.0])");
  CHECK(integer(engine, "(get (count-stats) :operations)") * 2 == 5 * two);
}
