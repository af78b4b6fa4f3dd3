#!/usr/bin/env python3
"""bench/compile_time.py — how long jit :cpu takes to compile an MLP training step cold.

Each of 7 fresh `tsl` processes runs bench/compile-time.tsl, which compiles the step
(784-256-256-10, batch 128, relu, cross-entropy, gradients of every parameter, SGD) on
its first call: lowering, differentiation, the IR passes, LLVM's optimisation and code
generation. The script reports the median compile time over the processes (the first
call minus the median run) and the median run time, at the machine's thread count. The
target is 100 ms. With --time-passes, one process's breakdown by pass is printed too.

    /usr/bin/python3 bench/compile_time.py [path/to/tsl] [--time-passes]

With --scale it measures instead how compile time grows with a program's length: the
traced sum (reduce + (map (fn [i] (sin (* x i))) (range N))) of 3N operations, at about
10^3, 10^4 and 10^5 operations, on a tensor x (fused loops) and on a scalar x
(straight-line code); the median over fresh processes (RUNS_SCALE each, fewer at 10^5)
of the compile time, the time per operation, the growth from the size before, and the
median time of each pass. A process that runs longer than --timeout=S seconds (default
600) is stopped and reported as such (how the quadratic steps before the fixes showed).

    /usr/bin/python3 bench/compile_time.py [path/to/tsl] --scale [--timeout=S]
"""
import os
import statistics
import subprocess
import sys

from measure import HERE, cpu_model

PROCESSES = 7


RUNS_SCALE = 5
SCALE_TERMS = (333, 3333, 33333)  # 999, 9,999 and 99,999 operations


def scale(tsl, timeout):
    """Compile time against program length (see the module's docstring)."""
    program = os.path.join(HERE, "compile-time.tsl")
    print(f"CPU: {cpu_model()}; threads: {os.environ.get('TSL_NUM_THREADS', os.cpu_count())}")
    print("(reduce + (map (fn [i] (sin (* x i))) (range N))) under jit :cpu, 3N operations; "
          "median of fresh processes")
    for workload in ("tensor", "scalar"):
        print(f"\nx = {'(ones [4])' if workload == 'tensor' else '1.0'}:")
        previous = None
        for terms in SCALE_TERMS:
            runs = RUNS_SCALE if terms < 30000 else 3
            totals, passes = [], {}
            for _ in range(runs):
                try:
                    p = subprocess.run([tsl, "--time-passes", "run", program, "scale", workload, str(terms)],
                                       check=True, capture_output=True, text=True, timeout=timeout)
                except subprocess.TimeoutExpired:
                    totals = None
                    break
                totals.append(int(p.stdout.split()[2]) / 1e9)
                for line in p.stderr.splitlines():
                    if line.startswith("//   "):
                        name, ms = line.split()[1], float(line.split()[2])
                        passes.setdefault(name, []).append(ms / 1e3)
            ops = 3 * terms
            if totals is None:
                print(f"  {ops:>7} ops: stopped after {timeout} s")
                previous = None
                continue
            t = statistics.median(totals)
            growth = f", x{t / previous:.1f} from 10 times fewer" if previous else ""
            print(f"  {ops:>7} ops: {t:8.3f} s (min {min(totals):.3f}, max {max(totals):.3f}; {runs} runs), "
                  f"{t / ops * 1e6:6.1f} us per op{growth}")
            top = sorted(((statistics.median(v), k) for k, v in passes.items()), reverse=True)
            print("           " + ", ".join(f"{k} {s:.3f}" for s, k in top if s >= 0.0005 * t))
            previous = t


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    tsl = args[0] if args else os.path.join(HERE, "..", "build", "release", "repl", "tsl")
    if "--scale" in sys.argv:
        timeout = next((float(a.split("=", 1)[1]) for a in sys.argv if a.startswith("--timeout=")), 600.0)
        scale(tsl, timeout)
        return
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
