#!/usr/bin/env python3
"""bench/compile_time.py — how long jit :cpu takes to compile an MLP training step cold.

Each of 7 fresh `tsl` processes runs bench/compile-time.tsl, which compiles the step
(784-256-256-10, batch 128, relu, cross-entropy, gradients of every parameter, SGD) on
its first call: lowering, differentiation, the IR passes, LLVM's optimisation and code
generation. The script reports the median compile time over the processes (the first
call minus the median run) and the median run time, at the machine's thread count. The
target is 100 ms. With --time-passes, one process's breakdown by pass is printed too.

    /usr/bin/python3 bench/compile_time.py [path/to/tsl] [--time-passes]
"""
import os
import statistics
import subprocess
import sys

from measure import HERE, cpu_model

PROCESSES = 7


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    tsl = args[0] if args else os.path.join(HERE, "..", "build", "release", "repl", "tsl")
    program = os.path.join(HERE, "compile-time.tsl")
    compiles, runs = [], []
    for _ in range(PROCESSES):
        out = subprocess.run([tsl, "run", program], check=True, capture_output=True, text=True).stdout
        for line in out.splitlines():
            name, _, ns = line.split()
            (compiles if name == "compile" else runs).append(int(ns) / 1e6)
    print(f"CPU: {cpu_model()}; threads: {os.environ.get('TSL_NUM_THREADS', os.cpu_count())}")
    print(f"MLP training step 784-256-256-10, batch 128, jit :cpu, {PROCESSES} cold processes")
    print(f"  compile: median {statistics.median(compiles):.1f} ms "
          f"(min {min(compiles):.1f}, max {max(compiles):.1f}; target 100 ms)")
    print(f"  run:     median {statistics.median(runs):.2f} ms")
    if "--time-passes" in sys.argv:
        breakdown = subprocess.run([tsl, "--time-passes", "run", program], check=True, capture_output=True,
                                   text=True).stderr
        print(breakdown)


if __name__ == "__main__":
    main()
