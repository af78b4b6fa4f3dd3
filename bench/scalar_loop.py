#!/usr/bin/env python3
"""bench/scalar_loop.py — TSL's loop/recur against the same loop in CPython.

Runs 10^6 iterations of `i += 1; acc += i` in both, several times each, in one script,
and reports the median time per run and the ratio TSL / CPython. TSL times itself
(now-ns around the loop, excluding start-up); CPython is timed with perf_counter.

    /usr/bin/python3 bench/scalar_loop.py [path/to/tsl] [runs]
"""
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def count_up(n):
    i = 0
    acc = 0
    while i < n:
        acc = acc + i
        i = i + 1
    return acc


def main():
    tsl = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "..", "build", "release", "repl", "tsl")
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 7
    out = subprocess.run([tsl, "run", os.path.join(HERE, "scalar-loop.tsl"), str(runs)],
                         check=True, capture_output=True, text=True).stdout
    tsl_times = [int(line) / 1e9 for line in out.split()]
    py_times = []
    for _ in range(runs):
        start = time.perf_counter()
        assert count_up(1000000) == 499999500000
        py_times.append(time.perf_counter() - start)
    t, p = statistics.median(tsl_times), statistics.median(py_times)
    print(f"scalar loop/recur, 10^6 iterations, median of {runs}:")
    print(f"  TSL      {t * 1e3:8.2f} ms")
    print(f"  CPython  {p * 1e3:8.2f} ms   ({sys.version.split()[0]})")
    print(f"  ratio TSL/CPython = {t / p:.2f}  (below 1 means TSL is faster)")


if __name__ == "__main__":
    main()
