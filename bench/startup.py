#!/usr/bin/env python3
"""bench/startup.py — how long `tsl run` takes on a one-line program, beside `python3 -c
pass` (CPython's start-up), and `tsl --version` (the process alone: loading and
relocating the binary, no engine). Medians of 41 runs each, interleaved, after a warm-up
(the page cache holds both binaries). The goal (issue 12): `tsl run` within 10 ms.

    /usr/bin/python3 bench/startup.py [path/to/tsl] [--smoke]
"""
import os
import statistics
import subprocess
import sys
import tempfile
import time

from measure import cpu_model


def main():
    args = [a for a in sys.argv[1:] if a != "--smoke"]
    runs = 3 if "--smoke" in sys.argv else 41
    tsl = args[0] if args else os.path.join(os.path.dirname(__file__), "..", "build", "release", "repl", "tsl")
    with tempfile.TemporaryDirectory() as scratch:
        program = os.path.join(scratch, "one.tsl")
        with open(program, "w") as f:
            f.write("(println (+ 1 2))\n")
        commands = {"tsl run (one line)": [tsl, "run", program], "tsl --version": [tsl, "--version"],
                    "python3 -c pass": [sys.executable, "-c", "pass"]}
        times = {name: [] for name in commands}
        for _ in range(runs + 1):
            for name, command in commands.items():
                start = time.perf_counter()
                subprocess.run(command, check=True, capture_output=True)
                times[name].append(time.perf_counter() - start)
    print(f"CPU: {cpu_model()}; wall time of a whole process, median of {runs} runs")
    for name, t in times.items():
        print(f"{name:<22}{statistics.median(t[1:]) * 1e3:>8.2f} ms")


if __name__ == "__main__":
    main()
