// examples/embed/main.cpp — a C++ host embedding TSL (docs/embedding.md).
//
// It loads model.tsl, trains the model a few steps on data that stays in the host's own
// arrays (Tensor::view: no copy), registers a native callback the model calls, compiles
// a function into a callable, and shows how a TSL error reaches the host.
#include <tsl/tsl.h>

#include <cmath>
#include <cstdio>
#include <span>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  const std::string model = argc > 1 ? argv[1] : "model.tsl";
  try {
    tsl::Engine engine;
    // A native function the model calls with each step's loss.
    std::vector<double> losses;
    engine.defineNative(
        "host-log",
        [&](tsl::Args args) -> tsl::Value {
          losses.push_back(tsl::numberArg(args, 0, "host-log"));
          return tsl::Value();
        },
        1, 1);
    engine.evalFile(model);

    // The host's data: y = 2·x0 - x1 + 0.5, eight rows, in plain arrays.
    std::vector<float> x(16), y(8);
    for (int i = 0; i < 8; ++i) {
      x[2 * i] = static_cast<float>(i) / 8.0f;
      x[2 * i + 1] = static_cast<float>(i % 3) / 3.0f;
      y[i] = 2.0f * x[2 * i] - x[2 * i + 1] + 0.5f;
    }
    const tsl::Tensor X = tsl::Tensor::view(x.data(), tsl::Shape{8, 2}, tsl::DType::F32);
    const tsl::Tensor Y = tsl::Tensor::view(y.data(), tsl::Shape{8}, tsl::DType::F32);

    // Parameters as a TSL map {:w [2] :b scalar}, made by TSL itself.
    tsl::Value params = engine.eval("{:w (zeros [2]) :b 0.0}");
    const tsl::Value lr(tsl::Tensor::scalarOf<float>(0.5f, tsl::DType::F32));
    for (int step = 0; step < 200; ++step) params = engine.call("train-step", {params, X, Y, lr});
    std::printf("loss: %.5f after %zu steps (first %.5f)\n", losses.back(), losses.size(), losses.front());
    std::printf("params: %s\n", engine.print(params).c_str());

    // A compiled function over tensors.
    engine.define("trained", params);
    const tsl::Value w = engine.eval("(:w trained)"), b = engine.eval("(:b trained)");
    const tsl::Engine::Function score = engine.compile("score", "x:f32[8,2],w:f32[2],b:f32", "cpu");
    const std::vector<tsl::Tensor> out = score({X, w.tensor(), b.tensor()});
    const std::span<const float> scores = out[0].elements<float>(); // checks dtype and layout
    double worst = 0;
    for (size_t i = 0; i < scores.size(); ++i) worst = std::fmax(worst, std::fabs(scores[i] - y[i]));
    std::printf("compiled score: largest error %.4f\n", worst);

    // A TSL error reaches the host as tsl::Error, with its kind and position.
    try {
      engine.eval("(predict trained (ones [3 5]))", "host-input");
    } catch (const tsl::Error& e) {
      std::printf("TSL reported: %s", engine.describe(e).c_str());
    }
    return losses.back() < 0.01 && worst < 0.2 ? 0 : 1;
  } catch (const tsl::Error& e) {
    std::fprintf(stderr, "%s: %s\n", tsl::errorKindName(e.kind()), e.what());
    return 1;
  }
}
