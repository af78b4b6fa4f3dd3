#!/usr/bin/env python3
"""Runs one golden test: the RUN lines of a .tsl or .ir file, LLVM lit style.

A RUN line is a comment holding `RUN: command`; a line ending in `\\` continues on the
next RUN line. Substitutions: %s the test file, %tsl the tsl command, %tsl-opt the IR
driver, %FileCheck LLVM's FileCheck, %dot Graphviz's dot, %t a scratch path (one per test,
the same in every RUN line, as in lit). Each command runs under bash with pipefail; the
test passes when every one exits 0. `not CMD` inverts CMD's status alone, as in lit, for
commands that must fail: in `not CMD 2>&1 | FileCheck` FileCheck must still pass, and a
CMD killed by a signal (a crash) fails the test.

usage: run_golden.py TSL TSL_OPT FILECHECK TEST_FILE
"""
import os
import re
import subprocess
import sys
import tempfile


def run_lines(path):
    commands, current = [], ""
    with open(path, encoding="utf-8") as f:
        for line in f:
            m = re.search(r"(?:;|//)\s*RUN:\s?(.*)$", line)
            if not m:
                continue
            part = m.group(1).rstrip()
            if part.endswith("\\"):
                current += part[:-1] + " "
                continue
            commands.append(current + part)
            current = ""
    return commands


def main():
    if len(sys.argv) != 5:
        print(__doc__, file=sys.stderr)
        return 2
    # Absolute paths: the commands run in the test's folder.
    tsl, tsl_opt, filecheck, test = (os.path.abspath(a) if os.sep in a else a for a in sys.argv[1:])
    commands = run_lines(test)
    if not commands:
        print(f"{test}: no RUN lines", file=sys.stderr)
        return 1
    with tempfile.TemporaryDirectory() as scratch:
        for i, command in enumerate(commands):
            expanded = (command.replace("%tsl-opt", tsl_opt).replace("%tsl", tsl)
                        .replace("%FileCheck", filecheck + " --dump-input=fail")
                        .replace("%dot", "dot").replace("%s", test)
                        .replace("%t", os.path.join(scratch, "t")))
            # `not` negates its own command only (bash's `!` would negate the whole
            # pipeline, hiding a FileCheck failure after it); a crash is no failure.
            prelude = "set -o pipefail; not() { \"$@\"; local s=$?; [ $s -ne 0 ] && [ $s -lt 128 ]; }; "
            result = subprocess.run(["bash", "-c", prelude + expanded],
                                    capture_output=True, text=True, cwd=os.path.dirname(test))
            if result.returncode != 0:
                print(f"{test}: RUN line {i + 1} failed (status {result.returncode}):\n  {expanded}",
                      file=sys.stderr)
                sys.stderr.write(result.stdout[-4000:])
                sys.stderr.write(result.stderr[-6000:])
                return 1
    print(f"{os.path.basename(test)}: {len(commands)} RUN lines passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
