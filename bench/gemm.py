#!/usr/bin/env python3
"""bench/gemm.py — sgemm: TSL's :cpu matmul (and eager) beside OpenBLAS through NumPy and
the machine's measured FMA peak, at 1 thread and at all threads, in one run.

OpenBLAS runs in a child process per configuration, as detected and with
OPENBLAS_CORETYPE naming the best kernel for this CPU (0.3.21 takes a Zen 4 for a Zen
and uses its AVX2 kernels): SkylakeX where the CPU has AVX-512, Haswell otherwise. The
FMA peak is a C++ loop of independent vector FMA chains (g++ -O3 -march=native) per
thread: 2 flops per lane per FMA. Medians of 7 runs after a warm-up; the ratio columns
are TSL ÷ the faster OpenBLAS, and TSL's share of the peak.

    /usr/bin/python3 bench/gemm.py [path/to/tsl] [--smoke]
"""
import os
import subprocess
import sys
import tempfile

from measure import cpu_model, fma_peak, tsl_timings

OPENBLAS = r"""
import sys, time, statistics
import numpy as np
n = int(sys.argv[1])
rng = np.random.default_rng(0)
a = rng.standard_normal((n, n), dtype=np.float32)
b = rng.standard_normal((n, n), dtype=np.float32)
a @ b
times = []
for _ in range(7):
    start = time.perf_counter()
    a @ b
    times.append(time.perf_counter() - start)
print(statistics.median(times))
"""


def best_coretype():
    with open("/proc/cpuinfo") as f:
        flags = next((line for line in f if line.startswith("flags")), "")
    return "SkylakeX" if " avx512f" in flags else "Haswell"


def main():
    args = [a for a in sys.argv[1:] if a != "--smoke"]
    smoke = "--smoke" in sys.argv
    tsl = args[0] if args else os.path.join(os.path.dirname(__file__), "..", "build", "release", "repl", "tsl")
    sizes = [64] if smoke else [1024, 2048]
    cores = os.cpu_count() or 1
    coretype = best_coretype()
    print(f"CPU: {cpu_model()}; sgemm f32[N,N] @ f32[N,N]; OPENBLAS_CORETYPE={coretype} is the tuned peer")
    with tempfile.TemporaryDirectory() as scratch:
        script = os.path.join(scratch, "openblas.py")
        with open(script, "w") as f:
            f.write(OPENBLAS)
        peak = fma_peak(scratch, smoke)

        def openblas(n, threads, core=None):
            env = dict(os.environ, OPENBLAS_NUM_THREADS=str(threads), OMP_NUM_THREADS=str(threads))
            if core:
                env["OPENBLAS_CORETYPE"] = core
            return float(subprocess.run([sys.executable, script, str(n)], check=True, capture_output=True,
                                        text=True, env=env).stdout)

        print(f"{'N':<6}{'threads':<8}{'TSL :cpu':>11}{'TSL eager':>11}{'OpenBLAS':>11}{coretype:>11}"
              f"{'cpu/BLAS':>9}{'GFLOP/s':>9}{'% peak':>8}")
        for threads in sorted({1, cores}):
            top = peak(threads)
            env = dict(os.environ, TSL_NUM_THREADS=str(threads))
            for n in sizes:
                ours = tsl_timings(tsl, "gemm.tsl", n, env=env)
                detected = openblas(n, threads)
                tuned = openblas(n, threads, coretype)
                flops = 2.0 * n ** 3 / ours["cpu"]
                print(f"{n:<6}{threads:<8}{ours['cpu'] * 1e3:>8.2f} ms{ours['eager'] * 1e3:>8.2f} ms"
                      f"{detected * 1e3:>8.2f} ms{tuned * 1e3:>8.2f} ms{ours['cpu'] / min(detected, tuned):>9.2f}"
                      f"{flops / 1e9:>9.1f}{100 * flops / top:>7.1f}%")
            print(f"        FMA peak at {threads} thread(s): {top / 1e9:.1f} GFLOP/s")


if __name__ == "__main__":
    main()
