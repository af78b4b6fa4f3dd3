#!/usr/bin/env python3
"""bench/elementwise_chain.py — tanh(a·b + c) over 16M f32: TSL's :cpu code beside a
hand-written C++ loop and NumPy, in one script.

TSL compiles the chain into one loop nest (bench/elementwise-chain.tsl); the C++ loop is
`out[i] = std::tanh(a[i] * b[i] + c[i])` built here with g++ -O3 -march=native, split
over std::threads like TSL's pool; NumPy evaluates it as three temporaries. Every side
runs at one thread, then TSL and C++ at all the machine's threads (NumPy's ufuncs have
one). Medians of 9 runs after a warm-up; ratios TSL ÷ peer (below 1: TSL is faster).

    /usr/bin/python3 bench/elementwise_chain.py [path/to/tsl] [--smoke]
"""
import os
import subprocess
import sys
import tempfile

import numpy as np

from measure import build_cxx, cpu_model, timed, tsl_timings

CXX = r"""
int main(int argc, char** argv) {
  const long n = std::atol(argv[1]);
  const int threads = std::atoi(argv[2]);
  std::vector<float> a(n), b(n), c(n), out(n);
  std::mt19937 random(0);
  std::normal_distribution<float> normal;
  for (long i = 0; i < n; ++i) a[i] = normal(random), b[i] = normal(random), c[i] = normal(random);
  const double seconds = medianSeconds(9, [&] {
    splitRun(n, threads, [&](long begin, long end) {
      for (long i = begin; i < end; ++i) out[i] = std::tanh(a[i] * b[i] + c[i]);
    });
  });
  std::printf("%.9f %f\n", seconds, out[n / 2]);
}
"""


def main():
    args = [a for a in sys.argv[1:] if a != "--smoke"]
    smoke = "--smoke" in sys.argv
    tsl = args[0] if args else os.path.join(os.path.dirname(__file__), "..", "build", "release", "repl", "tsl")
    n = 65536 if smoke else 16777216
    cores = os.cpu_count() or 1
    print(f"CPU: {cpu_model()}; tanh(a*b + c) over {n} f32")
    with tempfile.TemporaryDirectory() as scratch:
        binary = build_cxx(CXX, scratch, "chain")

        def cxx(threads):
            return float(subprocess.run([binary, str(n), str(threads)], check=True, capture_output=True,
                                        text=True).stdout.split()[0])

        rng = np.random.default_rng(0)
        a, b, c = (rng.standard_normal(n, dtype=np.float32) for _ in range(3))
        numpy = timed(lambda: np.tanh(a * b + c), 9)
        rows = []
        for threads in sorted({1, cores}):
            env = dict(os.environ, TSL_NUM_THREADS=str(threads))
            ours = tsl_timings(tsl, "elementwise-chain.tsl", n, env=env)
            peer = cxx(threads)
            rows.append((threads, ours, peer, numpy if threads == 1 else None))
    print(f"{'threads':<8}{'TSL :cpu':>12}{'TSL eager':>12}{'C++ -O3':>12}{'NumPy':>12}{'cpu/C++':>9}{'cpu/NumPy':>10}")
    for threads, ours, peer, numpy_time in rows:
        numpy_text = f"{numpy_time * 1e3:>9.2f} ms" if numpy_time else f"{'-':>12}"
        ratio = f"{ours['cpu'] / numpy_time:>10.2f}" if numpy_time else f"{'-':>10}"
        print(f"{threads:<8}{ours['cpu'] * 1e3:>9.2f} ms{ours['eager'] * 1e3:>9.2f} ms{peer * 1e3:>9.2f} ms"
              f"{numpy_text}{ours['cpu'] / peer:>9.2f}{ratio}")


if __name__ == "__main__":
    main()
