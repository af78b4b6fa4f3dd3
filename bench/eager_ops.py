#!/usr/bin/env python3
"""bench/eager_ops.py — TSL's eager kernels beside NumPy, in one script.

Workloads (docs/language.md §4 primitives, run eagerly):
  tiny-add           (+ a b) on f32[4]: the cost of dispatching one operation
  tanh-chain-16M     (tanh (+ (* a b) c)) over 16M f32
  matmul-1024        1024x1024 f32 matmul (TSL: Eigen; NumPy: its BLAS, OpenBLAS here)
  softmax-4096x1024  softmax over the rows of f32[4096,1024]

Both sides report the median of 7 runs after a warm-up; TSL times itself with now-ns.
The ratio is TSL / NumPy: below 1 means TSL is faster.

    /usr/bin/python3 bench/eager_ops.py [path/to/tsl]
"""
import os
import subprocess
import sys

import numpy as np

from measure import timed as timed_runs

HERE = os.path.dirname(os.path.abspath(__file__))
RUNS = 7


def timed(fn, runs=RUNS):
    """The median of `runs` calls after a warm-up (bench/measure.py)."""
    return timed_runs(fn, runs)


def numpy_side():
    a = np.ones(4, dtype=np.float32)
    b = np.ones(4, dtype=np.float32)
    n = 1000000

    def tiny():
        for _ in range(n):
            a + b

    def empty():
        for _ in range(n):
            pass

    results = {"tiny-add-loop": timed(tiny, 3) / n, "empty-loop": timed(empty, 3) / n}
    rng = np.random.default_rng(0)
    x, y, z = (rng.random(16777216, dtype=np.float32) for _ in range(3))
    results["tanh-chain-16M"] = timed(lambda: np.tanh(x * y + z))
    m = rng.random((1024, 1024), dtype=np.float32)
    results["matmul-1024"] = timed(lambda: m @ m)
    s = rng.random((4096, 1024), dtype=np.float32)

    def softmax():
        e = np.exp(s - s.max(axis=1, keepdims=True))
        return e / e.sum(axis=1, keepdims=True)

    results["softmax-4096x1024"] = timed(softmax)
    return results


def main():
    tsl = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "..", "build", "release", "repl", "tsl")
    out = subprocess.run([tsl, "run", os.path.join(HERE, "eager-ops.tsl")], check=True,
                         capture_output=True, text=True).stdout
    ours = {line.split()[0]: float(line.split()[1]) for line in out.splitlines() if line.strip()}
    theirs = numpy_side()
    blas = [k for k, v in np.__config__.get_info("blas_opt_info").items()] if hasattr(np.__config__, "get_info") else []
    print(f"NumPy {np.__version__}; TSL threads: {os.environ.get('TSL_NUM_THREADS', 'all')}")
    print(f"{'workload':<20}{'TSL':>14}{'NumPy':>14}{'ratio':>8}")
    for name in ["tiny-add-loop", "empty-loop", "tanh-chain-16M", "matmul-1024", "softmax-4096x1024"]:
        t, p = ours[name], theirs[name]
        unit, scale = ("us", 1e6) if t < 1e-3 else ("ms", 1e3)
        print(f"{name:<20}{t * scale:>11.3f} {unit}{p * scale:>11.3f} {unit}{t / p:>8.2f}")
    net_t = ours["tiny-add-loop"] - ours["empty-loop"]
    net_p = theirs["tiny-add-loop"] - theirs["empty-loop"]
    print(f"{'tiny-add (net)':<20}{net_t * 1e6:>11.3f} us{net_p * 1e6:>11.3f} us{net_t / net_p:>8.2f}")


if __name__ == "__main__":
    main()
