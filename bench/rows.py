#!/usr/bin/env python3
"""bench/rows.py — softmax and layer-norm over the rows of f32[4096,1024]: TSL's :cpu code
beside hand-written C++ loops, in one script.

The peers are the textbook loops, built here with g++ -O3 -march=native -ffast-math (so
that GCC vectorises expf through glibc's libmvec, as a C++ programmer who wants speed
would), rows split over std::threads like TSL's pool: softmax in two passes over each
row (its maximum; then exp(x - max) stored and summed, and a scaling of the row, which
is in cache), layer-norm in two passes (mean and variance; then the normalisation), eps
1e-5 as TSL's default. Medians of 9 runs after a warm-up, at 1 thread and at all; ratios
TSL ÷ C++ (target ≤ 1.1).

    /usr/bin/python3 bench/rows.py [path/to/tsl] [--smoke]
"""
import os
import subprocess
import sys
import tempfile

from measure import build_cxx, cpu_model, tsl_timings

CXX = r"""

void softmax(const float* x, float* y, long rows, long n) {
  for (long r = 0; r < rows; ++r, x += n, y += n) {
    float m = x[0];
    for (long j = 1; j < n; ++j) m = std::max(m, x[j]);
    float s = 0;
    for (long j = 0; j < n; ++j) s += (y[j] = std::exp(x[j] - m));
    const float k = 1.0f / s;
    for (long j = 0; j < n; ++j) y[j] *= k;
  }
}

void layerNorm(const float* x, float* y, long rows, long n) {
  for (long r = 0; r < rows; ++r, x += n, y += n) {
    float s = 0, q = 0;
    for (long j = 0; j < n; ++j) s += x[j], q += x[j] * x[j];
    const float mean = s / n, var = std::max(0.0f, q / n - mean * mean);
    const float k = 1.0f / std::sqrt(var + 1e-5f);
    for (long j = 0; j < n; ++j) y[j] = (x[j] - mean) * k;
  }
}

int main(int argc, char** argv) {
  const long rows = std::atol(argv[1]), n = std::atol(argv[2]);
  const int threads = std::atoi(argv[3]);
  std::vector<float> x(rows * n), y(rows * n);
  std::mt19937 random(0);
  std::normal_distribution<float> normal;
  for (auto& v : x) v = normal(random);
  for (int which = 0; which < 2; ++which) {
    const double seconds = medianSeconds(9, [&] {
      splitRun(rows, threads, [&](long begin, long end) {
        if (which == 0) softmax(x.data() + begin * n, y.data() + begin * n, end - begin, n);
        else layerNorm(x.data() + begin * n, y.data() + begin * n, end - begin, n);
      });
    });
    std::printf("%.9f %f\n", seconds, y[n / 2]);
  }
}
"""


def main():
    args = [a for a in sys.argv[1:] if a != "--smoke"]
    smoke = "--smoke" in sys.argv
    tsl = args[0] if args else os.path.join(os.path.dirname(__file__), "..", "build", "release", "repl", "tsl")
    rows, cols = (64, 128) if smoke else (4096, 1024)
    cores = os.cpu_count() or 1
    print(f"CPU: {cpu_model()}; softmax and layer-norm over the rows of f32[{rows},{cols}]")
    with tempfile.TemporaryDirectory() as scratch:
        binary = build_cxx(CXX, scratch, "rows", ["-ffast-math"])
        print(f"{'threads':<8}{'softmax TSL':>13}{'C++':>11}{'ratio':>7}{'layer-norm TSL':>16}{'C++':>11}{'ratio':>7}")
        for threads in sorted({1, cores}):
            env = dict(os.environ, TSL_NUM_THREADS=str(threads))
            ours = tsl_timings(tsl, "rows.tsl", rows, cols, env=env)
            out = subprocess.run([binary, str(rows), str(cols), str(threads)], check=True, capture_output=True,
                                 text=True).stdout.split("\n")
            soft, norm = float(out[0].split()[0]), float(out[1].split()[0])
            print(f"{threads:<8}{ours['softmax'] * 1e3:>10.2f} ms{soft * 1e3:>8.2f} ms{ours['softmax'] / soft:>7.2f}"
                  f"{ours['layernorm'] * 1e3:>13.2f} ms{norm * 1e3:>8.2f} ms{ours['layernorm'] / norm:>7.2f}")


if __name__ == "__main__":
    main()
