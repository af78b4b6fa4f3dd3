#!/usr/bin/env python3
"""tools/check-docs.py — fails when the user documentation points outside the project.

Users get docs/, README.md, examples/ and stdlib/ (the man page and the pages are
installed; the standard library is embedded in the binary), never the design notes the
project was built from. So these files must stand alone: each reference goes to the
project's own pages (docs/language.md §N, docs/tensor-core.md, docs/development.md, ...).
This prints every line that cites a file users do not have — a path into a `shared`
folder, or a design-note file name (LANGUAGE.md, ARCHITECTURE.md, TENSOR_CORE.md,
TENSOR_CORE_CHECKS.md, STYLE.md, also written as "LANGUAGE §4") — or that defers to
"the specification", as FILE:LINE, and exits 1 if there is any.

    python3 tools/check-docs.py [REPO_ROOT]
"""
import os
import re
import sys

# What users receive: these files and folders, every text file below them.
SCOPE = ["README.md", "docs", "examples", "stdlib"]

# A path into the design notes' folder, or deferring to a specification users never see.
FORBIDDEN = re.compile(r"(?:\.\./|/)shared/|\bshared/spec\b|\bthe\s+specification\b", re.IGNORECASE)
# The design notes' file names. Case matters: "language.md" is the project's own page.
NOTE_NAMES = re.compile(r"\b(?:LANGUAGE|ARCHITECTURE|TENSOR_CORE(?:_CHECKS)?|STYLE)(?:\.md\b|\s*§)")


def files(root):
    for entry in SCOPE:
        path = os.path.join(root, entry)
        if os.path.isfile(path):
            yield path
        for folder, _, names in os.walk(path):
            for name in sorted(names):
                yield os.path.join(folder, name)


def violations(path):
    try:
        with open(path, encoding="utf-8") as f:
            lines = f.read().splitlines()
    except UnicodeDecodeError:
        return  # not text (a picture, a data file)
    for number, line in enumerate(lines, 1):
        if FORBIDDEN.search(line) or NOTE_NAMES.search(line):
            yield number, line.strip()


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..")
    found = 0
    for path in files(root):
        for number, line in violations(path):
            print(f"{os.path.relpath(path, root)}:{number}: cites what users do not have: {line}")
            found += 1
    if found:
        print(f"{found} reference(s) outside the project; point them at its own pages "
              "(docs/language.md §N, docs/tensor-core.md, docs/development.md, ...)")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
