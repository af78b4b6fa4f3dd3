#!/usr/bin/env python3
"""tests/backend/test_count_cli.py — the :count target (CountBackend.cpp) from the command
line: `tsl-count` is `tsl` with the test-only target linked in, and nothing else changed.

    python3 test_count_cli.py path/to/tsl-count
"""
import os
import re
import subprocess
import sys
import tempfile

TSL = sys.argv[1]
PROGRAM = """
(defn f [x] (+ (* x 2.0) 1.0))
(def g (jit f))
(println (g [1.0 2.0 3.0]))
(println (get (count-stats) :operations))
"""


def run(*args, source=PROGRAM):
    with tempfile.NamedTemporaryFile("w", suffix=".tsl", delete=False) as f:
        f.write(source)
    try:
        return subprocess.run([TSL, *args, f.name] if args and args[0] == "run" else [TSL, *args],
                              capture_output=True, text=True, timeout=60)
    finally:
        os.unlink(f.name)


def operations(result):
    assert result.returncode == 0, result.stderr
    lines = result.stdout.strip().splitlines()
    assert lines[0] == "f32[3] [3 5 7]", lines
    return int(lines[1])


# --target count: jit with no :target compiles for :count.
one = operations(run("run", "--target", "count"))
assert one >= 2, one  # at least the multiply and the add
# The target's own flag.
three = operations(run("run", "--target=count", "--count-weight=3"))
assert three == 3 * one, (one, three)
# Its value is checked by the target, in its words.
bad = run("run", "--target", "count", "--count-weight=lots")
assert bad.returncode == 2, bad
assert "--count-weight takes an integer from 1 to 1000, got lots" in bad.stderr, bad.stderr
# A flag that acts after the run: the target's statistics on standard error.
report = run("run", "--target", "count", "--count-report")
assert report.returncode == 0, report.stderr
assert re.search(r'count: \{"operations": %d, "calls": 1, "weight": 1\}' % one, report.stderr), report.stderr
# Without --target the default target runs the program (no :count statistics).
default = run("run")
assert default.returncode == 0 and default.stdout.splitlines()[1] == "0", default
# The help lists the target and its flags.
usage = subprocess.run([TSL, "--help"], capture_output=True, text=True, timeout=60)
assert "--count-weight=N" in usage.stdout and "count" in usage.stdout, usage.stdout
print("ok")
