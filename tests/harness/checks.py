"""The check-and-report harness of the scripts that drive the real `tsl` binary
(tests/cli, tests/repl): each check prints `ok` or `FAIL` with its detail, and `report`
prints the tally and gives the exit status. Standard library only."""
import os
import sys
import time

_failures = []
_passes = 0
_started = time.monotonic()


def tsl_binary(script):
    """The absolute path of the `tsl` binary given as the one argument of `script`."""
    if len(sys.argv) != 2:
        sys.exit(f"usage: {script} PATH_TO_TSL")
    path = os.path.abspath(sys.argv[1])
    if not (os.path.isfile(path) and os.access(path, os.X_OK)):
        sys.exit(f"FAIL  {path} is not an executable file")
    return path


def check(name, ok, detail=""):
    global _passes
    if ok:
        _passes += 1
        print(f"ok    {name}")
    else:
        _failures.append(name)
        print(f"FAIL  {name}")
        for line in detail.rstrip("\n").split("\n") if detail else []:
            print(f"        {line}")


def report():
    """Prints the tally and the failed checks; the exit status (1 if any failed)."""
    print(f"\n{_passes} passed, {len(_failures)} failed in {time.monotonic() - _started:.1f}s")
    if _failures:
        print("failed checks:")
        for name in _failures:
            print(f"  - {name}")
    return 1 if _failures else 0
