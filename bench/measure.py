"""bench/measure.py — what every benchmark script shares: the CPU's name, timing a Python
callable, and running a TSL benchmark program that times itself.

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
