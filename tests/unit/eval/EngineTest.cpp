// tests/unit/eval/EngineTest.cpp — the embedding API as a host program sees it.
#include "tsl/tsl.h"

#include <doctest/doctest.h>
#include <sstream>
#include <stdexcept>
#include <thread>
#include <vector>

using namespace tsl;

TEST_CASE("a host evaluates source, calls functions and gets values back") {
  Engine engine;
  engine.eval("(defn add3 [a b c] (+ a b c))");
  const Value result = engine.call("add3", {Value(Tensor::weakInt(1)), Value(Tensor::weakInt(2)),
                                            Value(Tensor::weakInt(3))});
  CHECK(engine.print(result) == "6");
}

TEST_CASE("native functions are callable from TSL") {
  Engine engine;
  int calls = 0;
  engine.defineNative("host-count", [&](Args args) {
    ++calls;
    return Value(Tensor::ofInt(static_cast<int64_t>(args.size())));
  });
  CHECK(engine.print(engine.eval("(host-count 1 2 3)")) == "3");
  CHECK(calls == 1);
}

TEST_CASE("errors reach the host as tsl::Error with kind and span, never a crash") {
  Engine engine;
  try {
    engine.eval("(def x 1)\n(undefined-name x)", "host.tsl");
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::Name);
    CHECK(e.span().line == 2);
    CHECK(e.span().col == 2);
    CHECK(engine.describe(e).find("host.tsl:2:2: name error: unbound symbol 'undefined-name'") == 0);
  }
  CHECK_THROWS_AS(engine.call("no-such-function", {}), Error);
}

TEST_CASE("engines are independent") {
  Engine a, b;
  a.eval("(def shared 1)");
  CHECK_THROWS_AS(b.eval("shared"), Error);
  CHECK(a.print(a.eval("shared")) == "1");
}

TEST_CASE("print output goes where the host asks") {
  std::ostringstream out;
  Engine engine(10000, &out);
  engine.eval("(println \"hello\" 42) (print :k)");
  CHECK(out.str() == "hello 42\n:k");
}

TEST_CASE("an interrupt stops a running loop with a runtime error") {
  Engine engine;
  engine.defineNative("interrupt-me", [&](Args) {
    engine.interrupt();
    return Value();
  });
  try {
    engine.eval("(loop [i 0] (if (= i 5) (interrupt-me)) (recur (+ i 1)))");
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::Runtime);
    CHECK(std::string(e.what()) == "runtime error: interrupted");
  }
  // The engine is usable afterwards.
  CHECK(engine.print(engine.eval("(+ 1 1)")) == "2");
}

TEST_CASE("the call-depth limit is configurable") {
  Engine engine(50);
  engine.eval("(defn down [n] (if (= n 0) 0 (+ 1 (down (- n 1)))))");
  CHECK(engine.print(engine.eval("(down 40)")) == "40");
  CHECK_THROWS_WITH_AS(engine.eval("(down 60)"), "runtime error: stack depth exceeded (more than 50 nested calls)", Error);
}

TEST_CASE("completions list defined names by prefix") {
  Engine engine;
  engine.eval("(def my-value 1) (defn my-fn [] 2)");
  const auto names = engine.completions("my-");
  CHECK(names == std::vector<std::string>{"my-fn", "my-value"});
  const auto core = engine.completions("macroex");
  CHECK(core.size() == 3); // macroexpand, macroexpand-1, macroexpand-all
}

TEST_CASE("whatever a native callback throws reaches the host as a tsl::Error at the call") {
  Engine engine;
  engine.defineNative("host-fails", [](Args) -> Value { throw std::runtime_error("disk on fire"); });
  engine.defineNative("host-throws-int", [](Args) -> Value { throw 42; });
  engine.defineNative("host-tsl-error", [](Args) -> Value { fail(ErrorKind::Value, "bad host input"); });
  try {
    engine.eval("(+ 1 (host-fails))", "cb.tsl");
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::Runtime);
    CHECK(std::string(e.message()) == "native function host-fails failed: disk on fire");
    CHECK(e.span().line == 1);
    CHECK(e.span().col == 6);
  }
  CHECK_THROWS_WITH_AS(engine.eval("(host-throws-int)"), doctest::Contains("not an exception"), Error);
  try {
    engine.eval("(host-tsl-error)");
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::Value);
  }
  CHECK(engine.print(engine.eval("(+ 1 2)")) == "3"); // the engine goes on
}

TEST_CASE("bad input from the host is a tsl::Error: null or misaligned memory, wrong shapes, unknown names") {
  CHECK_THROWS_AS(Tensor::wrap(nullptr, DType::F32, Shape{4}), Error);
  alignas(8) float data[4] = {1, 2, 3, 4};
  CHECK_THROWS_AS(Tensor::wrap(reinterpret_cast<char*>(data) + 1, DType::F32, Shape{2}), Error);
  CHECK_NOTHROW(Tensor::wrap(nullptr, DType::F32, Shape{0}));
  Engine engine;
  engine.eval("(defn mm [a b] (matmul a b)) (def cmm (jit mm))");
  const Tensor a = Tensor::wrap(data, DType::F32, Shape{2, 2});
  const Tensor b = Tensor::wrap(data, DType::F32, Shape{4, 1});
  for (const char* f : {"mm", "cmm"}) {
    try {
      engine.call(f, {Value(a), Value(b)});
      FAIL("no error");
    } catch (const Error& e) {
      CHECK(e.kind() == ErrorKind::Shape);
    }
  }
  CHECK(engine.print(engine.call("cmm", {Value(a), Value(a)})) == "f32[2,2] [[7 10] [15 22]]");
  try {
    engine.call("nope", {});
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::Name);
  }
  engine.eval("(def not-a-function 3)");
  CHECK_THROWS_AS(engine.call("not-a-function", {}), Error);
}

TEST_CASE("engines on several threads at once compute what one engine computes alone") {
  const char* program = R"(
(defn loss [w x] (sum (square (matmul x w))))
(def x (reshape (astype (arange 64) :f32) [8 8]))
(def w (/ (ones [8 4]) 10.0))
(def g ((jit (grad loss)) w x))
(def t ((jit (fn [a b] (matmul a b)) :target :tc) x w))
[(sum g) (sum t) ((jit loss :target :interp) w x)]
)";
  Engine alone;
  const std::string expected = alone.print(alone.eval(program));
  std::vector<std::string> results(4);
  std::vector<std::thread> threads;
  for (size_t i = 0; i < results.size(); ++i)
    threads.emplace_back([&, i] {
      try {
        Engine engine;
        for (int round = 0; round < 3; ++round) results[i] = engine.print(engine.eval(program));
      } catch (const Error& e) {
        results[i] = std::string("error: ") + e.what();
      }
    });
  for (auto& t : threads) t.join();
  for (const std::string& r : results) CHECK(r == expected);
}

TEST_CASE("doc gives a user function's docstring and a primitive's entry of the operation table") {
  Engine engine;
  engine.eval("(defn sq \"The square of x.\" [x] (* x x))");
  CHECK(engine.doc("sq") == "(sq x)\n  The square of x.\n");
  CHECK(engine.doc("softmax") ==
        "(softmax x :axis -1)\n  e^x / Σ e^x along an axis (the last by default).\n  e.g. (softmax [0.0 0.0]) ; f32[2] [0.5 0.5]\n");
  CHECK(engine.doc("zeros").find("(zeros shape :dtype :f32)\n") == 0); // an alias of full
  CHECK(engine.doc("map").find("map\n  (map f coll...): ") == 0); // a builtin of eval/BuiltinDocs.cpp
  CHECK_THROWS_AS(engine.doc("no-such-name"), Error);
}

TEST_CASE("a host compiles a function into a callable and feeds it its own memory, not copied") {
  Engine engine;
  engine.eval("(defn affine [x w b] (+ (matmul x w) b))");
  std::vector<float> x = {1, 2, 3, 4}, w = {1, 0, 0, 1}, b = {10, 20};
  for (const char* target : {"cpu", "interp", "tc"}) {
    const tsl::Function f = engine.compile("affine", "x:f32[2,2],w:f32[2,2],b:f32[2]", target);
    CHECK(f.name() == "affine");
    const std::vector<Tensor> out =
        f({Tensor::view(x.data(), Shape{2, 2}, DType::F32), Tensor::view(w.data(), Shape{2, 2}, DType::F32),
           Tensor::view(b.data(), Shape{2}, DType::F32)});
    REQUIRE(out.size() == 1);
    CHECK(out[0].at({0, 0}) == 11.0);
    CHECK(out[0].at({1, -1}) == 24.0);
    CHECK_THROWS_AS(out[0].at({2, 0}), Error);
    CHECK_THROWS_AS(out[0].at({0}), Error);
    // The wrong shape, dtype or number of tensors: type errors, not crashes.
    CHECK_THROWS_AS(f({Tensor::view(x.data(), Shape{4}, DType::F32)}), Error);
    std::vector<double> wide = {1, 2, 3, 4};
    CHECK_THROWS_WITH_AS(f({Tensor::view(wide.data(), Shape{2, 2}, DType::F64), Tensor::view(w.data(), Shape{2, 2}, DType::F32),
                            Tensor::view(b.data(), Shape{2}, DType::F32)}),
                         doctest::Contains("expects f32[2,2] for argument 1, got f64[2,2]"), Error);
    CHECK_THROWS_AS(f({Tensor::view(x.data(), Shape{2, 2}, DType::F32), Tensor::view(x.data(), Shape{4}, DType::F32),
                       Tensor::view(b.data(), Shape{2}, DType::F32)}),
                    Error);
  }
  CHECK_THROWS_AS(engine.compile("affine", "x:f32[2,2]", "gpu"), Error);
  tsl::Function orphan;
  {
    Engine gone;
    gone.eval("(defn twice [x] (* 2.0 x))");
    orphan = gone.compile("twice", "x:f32[2]");
  }
  CHECK_THROWS_WITH_AS(orphan({Tensor::view(b.data(), Shape{2}, DType::F32)}), doctest::Contains("outlived its engine"),
                       Error);
  CHECK_THROWS_AS(tsl::Function{}({}), Error);
  CHECK_THROWS_AS(engine.compile("nothing", "x:f32[2]"), Error);
  CHECK_THROWS_AS(engine.compile("affine", "x:f32[n,2],w:f32[2,2],b:f32[2]"), Error);
}

TEST_CASE("typed argument helpers turn a native function's misuse into type errors") {
  Engine engine;
  engine.defineNative("scale", [](Args args) -> Value {
    const double k = numberArg(args, 1, "scale");
    const Tensor& t = tensorArg(args, 0, "scale");
    return Value(Tensor::scalarOf<double>(t.toDouble() * k, DType::F64));
  });
  engine.defineNative("greet", [](Args args) -> Value { return makeString("hello " + stringArg(args, 0, "greet")); });
  CHECK(engine.print(engine.eval("(scale 2.0 3)")) == "6.0");
  CHECK(engine.print(engine.eval("(greet \"host\")")) == "\"hello host\"");
  CHECK_THROWS_WITH_AS(engine.eval("(scale \"x\" 3)"), doctest::Contains("scale expects a tensor as argument 1"), Error);
  CHECK_THROWS_WITH_AS(engine.eval("(scale 1.0)"), doctest::Contains("scale expects at least 2 arguments"), Error);
  CHECK_THROWS_WITH_AS(engine.eval("(greet 1)"), doctest::Contains("greet expects a string"), Error);
}

TEST_CASE("a step limit stops any program, try cannot catch it, and it restarts at each entry") {
  Engine engine;
  engine.setStepLimit(10000);
  auto stopped = [&](const char* source) {
    try {
      engine.eval(source);
      return std::string("finished");
    } catch (const Error& e) {
      return std::string(e.what());
    }
  };
  const std::string message = "runtime error: step limit exceeded (more than 10000 calls and loop iterations)";
  CHECK(stopped("(loop [i 0] (recur (inc i)))") == message);
  // Many calls, shallow (a deep recursion would meet the depth limit or the native stack first).
  CHECK(stopped("(defn r [n] (if (< n 1) 0 (+ (r (dec n)) (r (dec n))))) (r 20)") == message);
  CHECK(stopped("(try (loop [] (recur)) (catch :any e 42))") == message);
  CHECK(stopped("(count (filter (fn [x] (> x 5)) (range 100000)))") == message);
  // Each entry from the host starts a fresh count: 5000 iterations, twice, both finish.
  for (int i = 0; i < 2; ++i) CHECK(engine.print(engine.eval("(loop [i 0] (if (< i 5000) (recur (inc i)) i))")) == "5000");
  engine.setStepLimit(0);
  CHECK(engine.print(engine.eval("(loop [i 0] (if (< i 100000) (recur (inc i)) i))")) == "100000");
}
