#!/usr/bin/env python3
"""bench/tc.py — the emulated tensor core's speed: a 512³ matmul run on the emulator (jit
:tc: f16 inputs, every instruction executed, its data movement checked for races and
timed on the pipes) beside the same matmul in native code (jit :cpu, f32), in MACs per
second, at 1 thread and at all threads (TSL_NUM_THREADS for both). The goal
(issue 11): the emulator reaches at least 0.2 of native :cpu's rate on this shape.
Medians of 7 runs after a warm-up, per configuration; each configuration is run
`--repeat` times (default 3) and the median of those reported, as the machine is shared.

    /usr/bin/python3 bench/tc.py [path/to/tsl] [--smoke] [--repeat N]
"""
import os
import statistics
import sys

from measure import cpu_model, tsl_timings


def main():
    args = sys.argv[1:]
    smoke = "--smoke" in args
    repeat = 3
    if "--repeat" in args:
        repeat = int(args[args.index("--repeat") + 1])
        del args[args.index("--repeat"):args.index("--repeat") + 2]
    args = [a for a in args if a != "--smoke"]
    tsl = args[0] if args else os.path.join(os.path.dirname(__file__), "..", "build", "release", "repl", "tsl")
    sizes = [32] if smoke else [512]
    if smoke:
        repeat = 1
    cores = os.cpu_count() or 1
    print(f"CPU: {cpu_model()}; C = A·B on f32[N,N]: jit :tc (emulated, f16 inputs) against jit :cpu (f32)")
    print(f"{'N':<6}{'threads':<8}{'TSL :tc':>11}{'TSL :cpu':>11}{'tc GMAC/s':>11}{'cpu GMAC/s':>12}{'tc/cpu':>8}")
    for threads in sorted({1, cores}):
        env = dict(os.environ, TSL_NUM_THREADS=str(threads))
        for n in sizes:
            runs = [tsl_timings(tsl, "tc.tsl", n, env=env) for _ in range(repeat)]
            tc = statistics.median(r["tc"] for r in runs)
            cpu = statistics.median(r["cpu"] for r in runs)
            macs = float(n) ** 3
            print(f"{n:<6}{threads:<8}{tc * 1e3:>8.2f} ms{cpu * 1e3:>8.2f} ms{macs / tc / 1e9:>11.2f}"
                  f"{macs / cpu / 1e9:>12.2f}{cpu / tc:>8.3f}")


if __name__ == "__main__":
    main()
