// tests/unit/eval/HostMisuseTest.cpp — a host misusing the embedding API gets tsl::Errors
// of the right kind, never a crash, a hang or an internal error: natives that recurse
// through the engine, blocked or strided tensors read as plain arrays, scalar access to
// matrices, the recur marker smuggled in, invalid dtypes, values asked for the wrong
// kind, impossible arities and special forms redefined (docs/robustness.md, "The
// embedding API").
#include "tsl/StackGuard.h"
#include "tsl/tsl.h"

#include <cstring>
#include <doctest/doctest.h>
#include <string>
#include <vector>

using namespace tsl;

namespace {

Value number(int64_t n) {
  return Value(Tensor::weakInt(n));
}

ErrorKind kindOf(const std::function<void()>& body) {
  try {
    body();
  } catch (const Error& e) {
    return e.kind();
  }
  FAIL("no error");
  return ErrorKind::Internal;
}

} // namespace

TEST_CASE("a native function calling itself back through Engine::call or Engine::eval meets the "
          "call-depth limit") {
  Engine engine(300);
  int calls = 0;
  engine.defineNative("again", [&](Args) -> Value {
    ++calls;
    return engine.call("again", {});
  });
  engine.defineNative("again-eval", [&](Args) -> Value { return engine.eval("(again-eval)"); });
  const char* limit = "runtime error: stack depth exceeded (more than 300 nested calls)";
  CHECK_THROWS_WITH_AS(engine.eval("(again)"), limit, Error);
  CHECK(calls == 300);
  CHECK_THROWS_WITH_AS(engine.call("again", {}), limit, Error);
  CHECK_THROWS_WITH_AS(engine.eval("(again-eval)"), limit, Error);
  // A native and a closure calling each other count both.
  engine.defineNative(
      "host-down", [&](Args args) -> Value { return engine.call("down", {args[0]}); }, 1, 1);
  engine.eval("(defn down [n] (if (= n 0) 0 (+ 1 (host-down (- n 1)))))");
  CHECK(engine.print(engine.eval("(down 100)")) == "100");
  CHECK_THROWS_WITH_AS(engine.eval("(down 200)"), limit, Error);
  CHECK(engine.print(engine.eval("(+ 1 2)")) == "3"); // the depth count came back to 0
}

TEST_CASE("native recursion meets the default limit on a large stack and the stack guard on a "
          "small one") {
  // On the stack runOnLargeStack gives, the limit of 10000 calls comes first, as for TSL
  // recursion.
  std::string message;
  runOnLargeStack([&] {
    Engine engine;
    engine.defineNative("again", [&](Args) -> Value { return engine.call("again", {}); });
    try {
      engine.eval("(again)");
    } catch (const Error& e) {
      message = e.what();
    }
    return 0;
  });
  CHECK(message == "runtime error: stack depth exceeded (more than 10000 nested calls)");
  // With no call limit to speak of on a 2 MiB stack, the native stack guard stops it.
  message.clear();
  runOnLargeStack(
      [&] {
        Engine engine(100000000);
        engine.defineNative("again", [&](Args) -> Value { return engine.call("again", {}); });
        try {
          engine.call("again", {});
        } catch (const Error& e) {
          message = e.what();
        }
        return 0;
      },
      size_t(2) << 20);
  CHECK(message.find("runtime error: stack depth exceeded") == 0);
}

TEST_CASE(
    "an interrupt requested during a native function's callback is not forgotten by the callback") {
  Engine engine;
  engine.defineNative("interrupt-then-call", [&](Args) -> Value {
    engine.interrupt();
    return engine.call("identity", {number(1)}); // a nested entry must not clear the request
  });
  engine.eval("(defn identity [x] x)");
  CHECK_THROWS_WITH_AS(engine.eval("(loop [i 0] (interrupt-then-call) (recur (inc i)))"),
                       "runtime error: interrupted", Error);
  CHECK(engine.print(engine.eval("(+ 1 1)")) == "2");
}

TEST_CASE("a blocked tensor's data() is a value error; elements<T>() checks dtype and layout; "
          "rowMajor() copies") {
  Engine engine;
  const Tensor nz =
      engine.eval("(to-layout (reshape (astype (arange 256) :f32) [16 16]) :fractal-nz)").tensor();
  REQUIRE(nz.blocked());
  try {
    (void)nz.data();
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::Value);
    CHECK(std::string(e.message()).find("fractal-nz layout has no row-major address") !=
          std::string::npos);
  }
  CHECK(kindOf([&] { (void)nz.strides(); }) == ErrorKind::Value);
  CHECK(kindOf([&] { (void)nz.elements<float>(); }) == ErrorKind::Value);
  const Tensor plainNz = nz.rowMajor();
  CHECK(!plainNz.blocked());
  const std::span<const float> values = plainNz.elements<float>();
  REQUIRE(values.size() == 256);
  for (size_t i = 0; i < values.size(); ++i) CHECK(values[i] == static_cast<float>(i));

  // The C++ type must be the dtype's element type.
  CHECK_THROWS_WITH_AS((void)plainNz.elements<double>(),
                       doctest::Contains("holds f32 elements, not 8-byte ones"), Error);
  CHECK(kindOf([&] { (void)plainNz.elements<int32_t>(); }) == ErrorKind::Type);

  // A transposed view is not contiguous: a value error; rowMajor() gives the elements in
  // row-major order of the view.
  const Tensor t = engine.eval("(transpose (reshape (astype (arange 6) :i64) [2 3]))").tensor();
  CHECK(kindOf([&] { (void)t.elements<int64_t>(); }) == ErrorKind::Value);
  const Tensor copy = t.rowMajor(); // the span is valid while the tensor lives
  const std::span<const int64_t> rows = copy.elements<int64_t>();
  CHECK(std::vector<int64_t>(rows.begin(), rows.end()) == std::vector<int64_t>{0, 3, 1, 4, 2, 5});
  // Contiguous tensors are read in place, whatever their dtype; a scalar is one element.
  const Tensor mask = engine.eval("(> [1 2 3] 1)").tensor();
  const std::span<const bool> bits = mask.elements<bool>();
  CHECK(std::vector<bool>(bits.begin(), bits.end()) == std::vector<bool>{false, true, true});
  CHECK(mask.rowMajor().elements<bool>().data() == bits.data());
  const Tensor half = Tensor::ofFloat(1.0, DType::F16);
  CHECK(half.elements<uint16_t>()[0] == 0x3C00);
  const Tensor brain = Tensor::ofFloat(1.0, DType::BF16);
  CHECK(brain.elements<uint16_t>()[0] == 0x3F80);
  CHECK(Tensor::ofFloat(2.5, DType::F64).elements<double>()[0] == 2.5);
  std::vector<int32_t> host = {4, 5, 6};
  const Tensor wrapped = Tensor::view(host.data(), Shape{3}, DType::I32);
  CHECK(wrapped.elements<int32_t>().data() == host.data());
}

TEST_CASE("scalar access to a tensor of rank >= 1 is a type error") {
  Engine engine;
  const Tensor m = engine.eval("(ones [2 3])").tensor();
  CHECK_THROWS_WITH_AS((void)m.toDouble(),
                       doctest::Contains("Tensor::toDouble: a f32[2,3] tensor is not a number"),
                       Error);
  CHECK(kindOf([&] { (void)m.toDouble(); }) == ErrorKind::Type);
  CHECK(kindOf([&] { (void)m.toInt(); }) == ErrorKind::Type);
  CHECK(kindOf([&] { (void)m.isNonZero(); }) == ErrorKind::Type);
  CHECK(kindOf([&] { (void)m.castScalar(DType::F64); }) == ErrorKind::Type);
  // numberArg said so already; the method itself now does too.
  engine.defineNative(
      "host-double",
      [](Args args) -> Value {
        return Value(Tensor::ofFloat(args[0].tensor().toDouble() * 2, DType::F64));
      },
      1, 1);
  CHECK(engine.print(engine.eval("(host-double 2)")) == "4.0");
  try {
    engine.eval("(host-double [1 2])");
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::Type);
    CHECK(e.span().col == 1);
  }
}

TEST_CASE("the recur marker from a host is a type error, and never spins a loop") {
  Engine engine;
  engine.defineNative("host-recur", [](Args) { return Value::recurMarker(); });
  CHECK_THROWS_WITH_AS(
      engine.eval("(host-recur)"),
      doctest::Contains("the result of native function host-recur is the internal recur marker"),
      Error);
  // In tail position of a loop or a fn (which consume recur markers): an error, at once.
  CHECK(kindOf([&] { engine.eval("(loop [i 0] (if (< i 3) (recur (inc i)) (host-recur)))"); }) ==
        ErrorKind::Type);
  CHECK(kindOf([&] { engine.eval("(loop [] (host-recur))"); }) == ErrorKind::Type);
  CHECK(kindOf([&] { engine.eval("((fn [x] (host-recur)) 1)"); }) == ErrorKind::Type);
  // As an argument, a definition, a callee or an element.
  engine.eval("(defn identity [x] x)");
  CHECK(kindOf([&] { engine.call("identity", {Value::recurMarker()}); }) == ErrorKind::Type);
  CHECK(kindOf([&] { engine.call(Value::recurMarker(), {}); }) == ErrorKind::Type);
  CHECK(kindOf([&] { engine.define("r", Value::recurMarker()); }) == ErrorKind::Type);
  CHECK(kindOf([&] { makeVector({number(1), Value::recurMarker()}); }) == ErrorKind::Type);
  const Value items[] = {Value::recurMarker()};
  CHECK(kindOf([&] { makeList(items); }) == ErrorKind::Type);
  CHECK(kindOf([&] { makeMap({{makeKeyword("k"), Value::recurMarker()}}); }) == ErrorKind::Type);
  CHECK(engine.print(engine.eval("(loop [i 0] (if (< i 3) (recur (inc i)) i))")) == "3");
}

TEST_CASE("a native function never sees a value being compiled: jit of a call to it is a type error "
          "at the call, and it runs as usual eagerly") {
  Engine engine;
  int calls = 0;
  engine.defineNative("host-twice", [&](Args args) {
    ++calls;
    return Value(args[0].tensor()); // a host may read its arguments as tensors
  });
  CHECK(engine.print(engine.eval("(host-twice [1.0 2.0])")) == "f32[2] [1 2]");
  CHECK(calls == 1);
  for (const char* program : {"((jit (fn [x] (host-twice x))) [1.0 2.0])",
                              "((jit (fn [x] (host-twice {:w [x]}))) [1.0 2.0])"}) {
    CAPTURE(program);
    try {
      engine.eval(program, "host.tsl");
      FAIL("no error");
    } catch (const Error& e) {
      CHECK(e.kind() == ErrorKind::Type);
      CHECK(std::string(e.what()).find("native function host-twice cannot take argument 1") != std::string::npos);
      CHECK(e.span().line == 1);
    }
  }
  CHECK(calls == 1); // refused before the host's function ran
  // A static argument (a number the function computes from nothing traced) is fine.
  CHECK(engine.print(engine.eval("((jit (fn [x] (+ x (host-twice 2.0)))) [1.0 2.0])")) == "f32[2] [3 4]");
}

TEST_CASE("a dtype outside the enumeration is a value error, not another table's text") {
  const auto bad = static_cast<DType>(42);
  float data[4] = {};
  CHECK_THROWS_WITH_AS(Tensor::view(data, Shape{4}, bad), doctest::Contains("invalid dtype 42"),
                       Error);
  CHECK(kindOf([&] { Tensor::view(data, Shape{4}, bad); }) == ErrorKind::Value);
  CHECK(kindOf([&] { Tensor::wrap(data, static_cast<DType>(7), Shape{2}); }) == ErrorKind::Value);
  CHECK(kindOf([&] { Tensor::empty(bad, Shape{2}); }) == ErrorKind::Value);
  CHECK(kindOf([&] { Tensor::zeros(bad, Shape{}); }) == ErrorKind::Value);
  CHECK(kindOf([&] { Tensor::ofInt(1, bad); }) == ErrorKind::Value);
  CHECK(kindOf([&] { Tensor::ofFloat(1, bad); }) == ErrorKind::Value);
  CHECK(kindOf([&] { (void)dtypeName(bad); }) == ErrorKind::Value);
  CHECK(kindOf([&] { (void)dtypeSize(bad); }) == ErrorKind::Value);
  CHECK(std::strcmp(dtypeName(DType::F64), "f64") == 0);
}

TEST_CASE("a value asked for another kind is a type error naming both") {
  const Value s = makeString("text");
  CHECK_THROWS_WITH_AS((void)s.tensor(),
                       "type error: Value::tensor(): the value is a string, not a tensor", Error);
  const Value t(Tensor::ofInt(3));
  CHECK(kindOf([&] { (void)t.map(); }) == ErrorKind::Type);
  CHECK(kindOf([&] { (void)t.vector(); }) == ErrorKind::Type);
  CHECK(kindOf([&] { (void)t.string(); }) == ErrorKind::Type);
  CHECK(kindOf([&] { (void)Value().function(); }) == ErrorKind::Type);
  CHECK(kindOf([&] { (void)s.keyword(); }) == ErrorKind::Type);
  CHECK(kindOf([&] { (void)s.symbol(); }) == ErrorKind::Type);
  CHECK(kindOf([&] { (void)s.list(); }) == ErrorKind::Type);
  CHECK(Value::emptyList().list() == nullptr);
  CHECK(t.tensor().toInt() == 3);
}

TEST_CASE("impossible arities and redefined special forms are refused") {
  Engine engine;
  auto nothing = [](Args) { return Value(); };
  CHECK_THROWS_WITH_AS(engine.defineNative("bad", nothing, 5, 2),
                       doctest::Contains("the arity 5 to 2 is impossible"), Error);
  CHECK(kindOf([&] { engine.defineNative("bad", nothing, -1, 2); }) == ErrorKind::Value);
  CHECK(kindOf([&] { engine.defineNative("bad", {}, 0, 0); }) == ErrorKind::Value);
  CHECK_THROWS_AS(engine.eval("(bad)"), Error); // nothing was defined
  engine.defineNative("fine", nothing, 2, 2);
  engine.defineNative("any", nothing, 0, -1);
  engine.defineNative("exactly-none", nothing, 0, 0);
  CHECK(engine.print(engine.eval("[(fine 1 2) (any) (exactly-none)]")) == "[nil nil nil]");
  for (const char* form : {"if", "fn", "def", "loop", "recur", "quote", "do", "let"}) {
    CAPTURE(form);
    CHECK_THROWS_WITH_AS(engine.define(form, number(1)),
                         doctest::Contains("cannot redefine the special form"), Error);
    CHECK(kindOf([&] { engine.defineNative(form, nothing); }) == ErrorKind::Value);
  }
  CHECK(engine.print(engine.eval("(if true (let [x 1] x) 2)")) == "1");
}
