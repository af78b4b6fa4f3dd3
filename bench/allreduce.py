#!/usr/bin/env python3
"""bench/allreduce.py — all-reduce (:sum of f32) across ranks: TSL's eagerly and compiled
(jit :cpu) beside MPI_Allreduce called from C, the same Open MPI, in one run.

Sizes 4 KiB, 1 MiB and 64 MiB (OSU's method: a warm-up, then per run a barrier and the
collective alone timed, the slowest rank's time; 201, 41 and 9 runs; three rounds, C and
TSL taking turns). Reported: medians,
the bus bandwidth (nccl-tests' busbw = bytes / time · 2(n − 1)/n, what a link carries for
any n) and TSL's share of C's bandwidth (C's time ÷ TSL's). The C peer is built with mpicc.
All ranks run on this machine (Open MPI's shared-memory transport).

    /usr/bin/python3 bench/allreduce.py [path/to/tsl] [--ranks N] [--smoke]
"""
import os
import statistics
import subprocess
import sys
import tempfile

from measure import HERE, cpu_model


def mpirun(ranks):
    command = ["mpirun", "-n", str(ranks)]
    if os.geteuid() == 0:
        command.append("--allow-run-as-root")
    if ranks > (os.cpu_count() or 1):
        command.append("--oversubscribe")
    return command


def timings(commands, rounds):
    """The median seconds of each (workload, size) over `rounds` runs of every command, the
    commands taking turns (so that a neighbour's load falls on both sides alike)."""
    times = {}
    for _ in range(rounds):
        for command in commands:
            out = subprocess.run(command, check=True, capture_output=True, text=True).stdout
            for line in out.split("\n"):
                if line:
                    name, size, ns = line.split()
                    times.setdefault((name, int(size)), []).append(float(ns) / 1e9)
    return {key: statistics.median(t) for key, t in times.items()}


def main():
    args = sys.argv[1:]
    smoke = "--smoke" in args
    ranks = int(args[args.index("--ranks") + 1]) if "--ranks" in args else 2
    positional = [a for i, a in enumerate(args) if not a.startswith("--") and (i == 0 or args[i - 1] != "--ranks")]
    tsl = positional[0] if positional else os.path.join(HERE, "..", "build", "release", "repl", "tsl")
    sizes = [4096, 65536] if smoke else [4096, 1 << 20, 64 << 20]
    with tempfile.TemporaryDirectory() as scratch:
        peer = os.path.join(scratch, "allreduce")
        subprocess.run(["mpicc", "-O2", os.path.join(HERE, "allreduce.c"), "-o", peer], check=True)
        t = timings([[*mpirun(ranks), peer, *map(str, sizes)],
                     [*mpirun(ranks), tsl, "run", os.path.join(HERE, "allreduce.tsl"), *map(str, sizes)]],
                    1 if smoke else 3)
    print(f"CPU: {cpu_model()}; {ranks} ranks on this machine; all-reduce :sum of f32, median time, busbw")
    print(f"{'size':<10}{'C MPI_Allreduce':>22}{'TSL eager':>22}{'TSL jit :cpu':>22}{'eager/C bw':>12}{'cpu/C bw':>10}")
    factor = 2 * (ranks - 1) / ranks

    def cell(seconds, size):
        return f"{seconds * 1e6:9.1f} us {size / seconds * factor / 1e9:6.2f} GB/s"

    for size in sizes:
        tc, te, tj = t[("c", size)], t[("eager", size)], t[("cpu", size)]
        label = f"{size // 1024} KiB" if size < (1 << 20) else f"{size >> 20} MiB"
        print(f"{label:<10}{cell(tc, size):>22}{cell(te, size):>22}{cell(tj, size):>22}{tc / te:>12.2f}{tc / tj:>10.2f}")


if __name__ == "__main__":
    main()
