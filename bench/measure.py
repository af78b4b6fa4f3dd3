"""bench/measure.py — what every benchmark script shares: the CPU's name, timing a Python
callable, running a TSL benchmark program that times itself, and building a C++ peer.

A TSL benchmark program prints one line per workload and run, "name size nanoseconds"
(measured with now-ns around the work, so start-up is not counted)."""
import os
import platform
import statistics
import subprocess
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def cpu_model():
    """The CPU's model name, as /proc/cpuinfo gives it (ratios compare only within a run)."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def timed(fn, runs, warmup=True):
    """The median time of `runs` calls of fn, after one call to warm up."""
    if warmup:
        fn()
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def tsl_timings(tsl, program, *args, options=(), env=None):
    """Runs bench/PROGRAM with ARGS (and tsl OPTIONS, in environment ENV); the median
    seconds of each workload it reports."""
    out = subprocess.run([tsl, *options, "run", os.path.join(HERE, program), *map(str, args)],
                         check=True, capture_output=True, text=True, env=env).stdout
    times = {}
    for line in out.split("\n"):
        if line:
            name, _, ns = line.split()
            times.setdefault(name, []).append(int(ns) / 1e9)
    return {name: statistics.median(t) for name, t in times.items()}


CXX_HARNESS = r"""
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <thread>
#include <vector>

// chunk(begin, end) over [0, n), split into `threads` parts on std::threads (the caller
// runs the first), as TSL's pool splits a loop.
template <class F>
void splitRun(long n, int threads, F chunk) {
  std::vector<std::thread> pool;
  const long step = (n + threads - 1) / threads;
  for (int t = 1; t < threads; ++t)
    if (t * step < n) pool.emplace_back(chunk, t * step, std::min(n, (t + 1) * step));
  chunk(0, std::min(n, step));
  for (auto& t : pool) t.join();
}

// The median seconds of `runs` calls of fn, after one call to warm up.
template <class F>
double medianSeconds(int runs, F fn) {
  fn();
  std::vector<double> times;
  for (int r = 0; r < runs; ++r) {
    const auto start = std::chrono::steady_clock::now();
    fn();
    times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  std::sort(times.begin(), times.end());
  return times[runs / 2];
}
"""


def build_cxx(source, scratch, name, flags=()):
    """Builds CXX_HARNESS followed by SOURCE with g++ -O3 -march=native (and FLAGS) in
    SCRATCH; returns the executable's path."""
    path, binary = os.path.join(scratch, name + ".cpp"), os.path.join(scratch, name)
    with open(path, "w") as f:
        f.write(CXX_HARNESS + source)
    subprocess.run(["g++", "-O3", "-march=native", *flags, "-std=c++17", "-pthread", path, "-o", binary], check=True)
    return binary


# The machine's FMA peak: independent vector FMA chains per thread (g++ -O3 -march=native),
# 2 flops per lane per FMA; the best of 5 runs.
PEAK = r"""
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>
#if defined(__AVX512F__)
constexpr int kLanes = 16;
#elif defined(__AVX__)
constexpr int kLanes = 8;
#else
constexpr int kLanes = 4;
#endif
typedef float vec __attribute__((vector_size(kLanes * 4)));

// 12 independent accumulators hide the FMA latency on every x86 core we know.
double chain(long iterations) {
  vec acc[12], x, y;
  for (int i = 0; i < kLanes; ++i) x[i] = 1.0f + 1e-7f * i, y[i] = 0.999999f;
  for (auto& a : acc) a = x;
  for (long it = 0; it < iterations; ++it)
    for (auto& a : acc) a = a * y + x;
  float s = 0;
  for (auto& a : acc) for (int i = 0; i < kLanes; ++i) s += a[i];
  return s;
}

int main(int argc, char** argv) {
  const int threads = std::atoi(argv[1]);
  const long iterations = std::atol(argv[2]);
  double best = 0;
  for (int r = 0; r < 5; ++r) {
    std::vector<std::thread> pool;
    std::vector<double> sink(threads);
    const auto start = std::chrono::steady_clock::now();
    for (int t = 0; t < threads; ++t) pool.emplace_back([&, t] { sink[t] = chain(iterations); });
    for (auto& t : pool) t.join();
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const double flops = 2.0 * kLanes * 12 * iterations * threads / s;
    if (flops > best) best = flops;
  }
  std::printf("%.6e %d\n", best, kLanes);
}
"""



def fma_peak(scratch, smoke=False):
    """A function of a thread count giving the measured FMA peak in flop/s (f32)."""
    binary = build_cxx(PEAK, scratch, "peak")

    def peak(threads):
        out = subprocess.run([binary, str(threads), "20000" if smoke else "20000000"], check=True,
                             capture_output=True, text=True).stdout.split()
        return float(out[0])
    return peak
