// tests/unit/eval/LayoutPropertyTest.cpp — a layout never changes a result: generated
// small programs run with their inputs in random layouts, eagerly and under jit :interp
// and :cpu (and :interp with the tensor core's layout preferences, which place blocked
// layouts and run elementwise work on them), give what the all-row-major eager run gives (integers exactly; floats within
// the compiled code's tolerance, since a strided NHWC read may sum in another order).
#include "tsl/tsl.h"

#include <doctest/doctest.h>
#include <random>
#include <sstream>

using namespace tsl;

namespace {

const char* const kLayouts[] = {":row-major", ":nhwc", ":nc1hwc0", ":fractal-nz"};

/// One random program over x, y: [N,C,H,W] and w: [K,C,3,3], as TSL source.
struct Program {
  std::string source;
  bool floating;
};

Program generate(std::mt19937& gen) {
  auto pick = [&](int n) { return static_cast<int>(gen() % static_cast<unsigned>(n)); };
  const bool floating = pick(3) != 0;
  const char* dtype = floating ? (pick(2) ? ":f32" : ":f64") : (pick(2) ? ":i32" : ":i64");
  const int n = 1 + pick(2), c = 1 + pick(20), h = 1 + pick(5), w = 1 + pick(5), k = 1 + pick(4);
  std::ostringstream s;
  auto tensor = [&](const char* name, int a, int b, int cc, int d, int seed) {
    s << "(def " << name << " (astype (- (mod (* (reshape (arange " << a * b * cc * d << ") [" << a << " " << b << " "
      << cc << " " << d << "]) " << 7 + seed << ") 13) 6) " << dtype << "))\n";
  };
  tensor("x0", n, c, h, w, 0);
  tensor("y0", n, c, h, w, 2);
  tensor("w0", k, c, 3, 3, 4);
  // A chain of operations keeping v rank 4 with C channels (or K after a convolution).
  std::string v = "x";
  int steps = 2 + pick(5);
  bool convolved = false;
  for (int i = 0; i < steps; ++i) {
    std::string next;
    switch (pick(floating ? 11 : 8)) {
    case 0: next = "(relu " + v + ")"; break;
    case 1: next = "(- " + v + ")"; break;
    case 2: next = convolved ? "(abs " + v + ")" : "(+ " + v + " y)"; break;
    case 3: next = convolved ? "(* " + v + " 3)" : "(* " + v + " y)"; break;
    case 4: next = "(+ " + v + " 2)"; break;
    case 5: next = "(sum " + v + " :axis " + std::to_string(pick(4)) + " :keepdims true)"; break;
    case 6: next = "(max " + v + " :axis 1 :keepdims true)"; break;
    case 7: next = "(transpose (transpose " + v + "))"; break;
    case 8: next = "(exp (* " + v + " 0.1))"; break;
    case 9: next = "(softmax " + v + " :axis 1)"; break;
    default:
      if (convolved) next = "(tanh " + v + ")";
      else {
        next = "(conv2d " + v + " w :padding 1)";
        convolved = true;
      }
    }
    // Shapes change under reductions; a later y or w would not fit, so stop there.
    v = next;
    if (next.starts_with("(sum") || next.starts_with("(max")) break;
  }
  s << "(defn f [x y w] " << v << ")\n";
  return {s.str(), floating};
}

} // namespace

TEST_CASE("generated programs give the row-major result whatever their inputs' layouts") {
  std::mt19937 gen(20261124);
  Engine engine;
  engine.eval(R"(
(defn agree [a b floating]
  (if floating
    (let [d (astype a :f64) e (astype b :f64)]
      (if (= (shape a) (shape b))
        (<= (max (abs (- d e))) (* 2e-5 (+ 1.0 (max (abs d)))))
        false))
    (= a b)))
)");
  for (int trial = 0; trial < 24; ++trial) {
    const Program p = generate(gen);
    CAPTURE(p.source);
    engine.eval(p.source);
    engine.eval("(def expected (f x0 y0 w0))");
    for (int round = 0; round < 2; ++round) {
      std::ostringstream setup;
      const char* lx = kLayouts[gen() % 4];
      const char* ly = kLayouts[gen() % 4];
      const char* const weightLayouts[] = {":row-major", ":nhwc", ":nc1hwc0", ":fractal-z"};
      const char* lwz = weightLayouts[gen() % 4];
      setup << "(def xs (to-layout x0 " << lx << ")) (def ys (to-layout y0 " << ly << ")) (def ws (to-layout w0 "
            << lwz << "))";
      CAPTURE(setup.str());
      engine.eval(setup.str());
      const std::string floating = p.floating ? "true" : "false";
      CHECK(engine.print(engine.eval("(agree expected (f xs ys ws) " + floating + ")")) == "true");
      CHECK(engine.print(engine.eval("(agree expected ((jit f :target :interp) xs ys ws) " + floating + ")")) == "true");
      CHECK(engine.print(engine.eval("(agree expected ((jit f :target :cpu) xs ys ws) " + floating + ")")) == "true");
      // As the tensor core's preferences lay it out (NC1HWC0, FRACTAL_Z, NZ), run by :interp.
      CHECK(engine.print(engine.eval("(agree expected ((jit f :target :interp :layouts :tc) xs ys ws) " + floating + ")")) ==
            "true");
    }
  }
}
