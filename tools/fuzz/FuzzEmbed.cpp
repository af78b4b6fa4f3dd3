// tools/fuzz/FuzzEmbed.cpp — libFuzzer target on the embedding API (include/tsl/tsl.h).
//
// The input is a byte stream read as a sequence of API calls on one engine, as a host
// might make them in any order: eval of a program from a small table, call of a global
// with values made from the bytes (tensors of any dtype and small shape, strings,
// keywords, nested vectors and maps, nil), define, defineNative (whose function returns,
// throws a tsl::Error, throws something else or calls back into the engine), check,
// compile for :interp or :cpu with a signature made from the bytes and a call of the
// result, emit, print, doc, completions, interrupt, setArgs. Every call must return or
// throw a tsl::Error of a user-facing kind; a crash, a sanitizer report, an internal
// error or any other exception is a bug. Limits as in FuzzEval.cpp.
#include "runtime/StorageLimit.h"
#include "tsl/tsl.h"

#include <cstdint>
#include <cstdlib>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

const char* const kPrograms[] = {
    "(defn f [x] (+ x 1))",
    "(defn g [x y] (matmul x y))",
    "(defn h [& xs] (count xs))",
    "(defn s [x] (sum (* x x)))",
    "(def v [1 2 3])",
    "(defn k [m] (get m :a))",
    "(defn r [n] (if (< n 1) 0 (r (dec n))))",
    "(defn t [x] (native 1 x))",
    "(defn u [x] ((grad s) x))",
    "(defn w [x] (reduce + (map inc x)))",
    "(f (native))",
    "(native 1 2 3)",
    "(r 100)",
    "(defmacro m [x] `(f ~x))",
    "(m 2)",
    "(loop [i 0] (recur (inc i)))",
    "(throw (ex-info \"boom\" {:a 1}))",
    "(f",
    "*args*",
    "(def f 3)",
};
const char* const kNames[] = {"f", "g", "h", "s", "v", "k", "r", "t", "u", "w", "native", "missing", "+", "if", "", "recur"};
const char* const kTargets[] = {"", "interp", "cpu", "tc", "nope"};
const tsl::DType kDTypes[] = {tsl::DType::F32, tsl::DType::F64, tsl::DType::I64, tsl::DType::I32,
                              tsl::DType::Bool, tsl::DType::F16, tsl::DType::BF16};
const char* const kDTypeNames[] = {"f32", "f64", "i64", "i32", "bool", "f16", "bf16"};

class Bytes {
public:
  Bytes(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  bool done() const { return at_ >= size_; }
  uint8_t next() { return at_ < size_ ? data_[at_++] : 0; }
  template <typename T, size_t N> const T& pick(const T (&table)[N]) { return table[next() % N]; }

private:
  const uint8_t* data_;
  size_t size_, at_ = 0;
};

tsl::Shape smallShape(Bytes& in) {
  std::vector<int64_t> dims(in.next() % 4);
  for (int64_t& d : dims) d = in.next() % 5;
  return tsl::Shape(std::span<const int64_t>(dims));
}

tsl::Tensor tensor(Bytes& in) {
  const tsl::DType dtype = in.pick(kDTypes);
  tsl::Tensor t = tsl::Tensor::zeros(dtype, smallShape(in));
  char* p = const_cast<char*>(t.data());
  const size_t bytes = static_cast<size_t>(t.numel()) * t.elementSize();
  for (size_t i = 0; i < bytes; ++i) p[i] = static_cast<char>(dtype == tsl::DType::Bool ? in.next() & 1 : in.next());
  return t;
}

tsl::Value value(Bytes& in, int depth = 0) {
  switch (in.next() % (depth < 3 ? 8 : 5)) {
  case 0: return tsl::Value();
  case 1: return tsl::Value(tsl::Tensor::ofInt(static_cast<int8_t>(in.next())));
  case 2: return tsl::makeString(std::string(in.next() % 8, 'a' + in.next() % 26));
  case 3: return tsl::makeKeyword(in.pick(kNames));
  case 4: return tsl::Value(tensor(in));
  case 5: {
    std::vector<tsl::Value> items(in.next() % 4);
    for (tsl::Value& item : items) item = value(in, depth + 1);
    return tsl::makeVector(std::move(items));
  }
  case 6: {
    std::vector<std::pair<tsl::Value, tsl::Value>> entries(in.next() % 3);
    for (auto& [k, v] : entries) k = tsl::makeKeyword(in.pick(kNames)), v = value(in, depth + 1);
    return tsl::makeMap(std::move(entries));
  }
  default: return tsl::makeSymbol(in.pick(kNames));
  }
}

std::string signature(Bytes& in) {
  std::string text;
  for (int i = in.next() % 3; i >= 0; --i) {
    if (!text.empty()) text += ",";
    text += std::string("x") + char('a' + i) + ":" + in.pick(kDTypeNames) + "[";
    const tsl::Shape shape = smallShape(in);
    for (int d = 0; d < shape.rank(); ++d) text += (d ? "," : "") + std::to_string(shape[d]);
    text += "]";
  }
  return text;
}

void step(tsl::Engine& engine, Bytes& in) {
  switch (in.next() % 13) {
  case 0: engine.eval(in.pick(kPrograms), "<fuzz>"); break;
  case 1: {
    std::vector<tsl::Value> args(in.next() % 4);
    for (tsl::Value& a : args) a = value(in);
    (void)engine.print(engine.call(in.pick(kNames), std::move(args)));
    break;
  }
  case 2: engine.define(in.pick(kNames), value(in)); break;
  case 3: {
    const int min = in.next() % 3, max = static_cast<int>(in.next() % 4) - 1;
    const uint8_t behaviour = in.next();
    engine.defineNative(
        "native",
        [&engine, behaviour](tsl::Args args) -> tsl::Value {
          switch (behaviour % 5) {
          case 0: return args.empty() ? tsl::Value() : args[0];
          case 1: throw tsl::Error(tsl::ErrorKind::User, "the host says no");
          case 2: throw std::runtime_error("a host's own exception");
          case 3: return engine.eval("(f 1)", "<native>");
          default: return tsl::Value(tsl::Tensor::ofInt(static_cast<int64_t>(args.size())));
          }
        },
        min, max);
    break;
  }
  case 4: (void)engine.check(in.pick(kPrograms), "<fuzz>"); break;
  case 5: {
    const char* name = in.pick(kNames);
    const std::string sig = signature(in);
    tsl::Engine::Function fn = engine.compile(name, sig, in.pick(kTargets));
    std::vector<tsl::Tensor> args(in.next() % 4);
    for (tsl::Tensor& a : args) a = tensor(in);
    (void)fn(args);
    break;
  }
  case 6: (void)engine.emit(in.pick(kNames), signature(in), "ir", {}); break;
  case 7: (void)engine.doc(in.pick(kNames)); break;
  case 8: (void)engine.completions(in.pick(kNames)); break;
  case 9: engine.interrupt(); break;
  case 10: engine.setArgs({std::string(in.next() % 4, 'x'), ""}); break;
  case 11: (void)engine.print(value(in)); break;
  default: engine.evalEach(in.pick(kPrograms), "<fuzz>", [&](const tsl::Value& v) { (void)engine.print(v); }); break;
  }
}

} // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  tsl::setStorageByteLimit(size_t(16) << 20);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Bytes in(data, size);
  std::ostringstream out;
  tsl::Engine engine(64, &out);
  engine.setStepLimit(100000);
  for (int calls = 0; !in.done() && calls < 16; ++calls) {
    try {
      step(engine, in);
    } catch (const tsl::Error& e) {
      if (e.kind() == tsl::ErrorKind::Internal) std::abort();
      (void)engine.describe(e);
    }
  }
  return 0;
}
