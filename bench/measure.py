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
