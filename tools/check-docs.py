#!/usr/bin/env python3
"""tools/check-docs.py — fails when the user documentation points outside the project.

Users get docs/, README.md, examples/ and stdlib/ (the man page and the pages are
installed; the standard library is embedded in the binary), never the design notes the
project was built from. So these files must stand alone: each reference goes to the
project's own pages (docs/language.md §N, docs/tensor-core.md, docs/development.md, ...).
This prints every line that cites a file users do not have — a path into a `shared`
folder, or a design-note file name (LANGUAGE.md, ARCHITECTURE.md, TENSOR_CORE.md,
TENSOR_CORE_CHECKS.md, STYLE.md, also written as "LANGUAGE §4") — or that defers to
"the specification", or names a project file (`compiler/cpu/kernels/Kernels.h`) that
does not exist, as FILE:LINE, and every page of docs/ that the README's
documentation list does not name; it exits 1 if there is any.

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


# A file path in backquotes: folders, a name, an extension.
PATH = re.compile(r"`((?:[\w.-]+/)+[\w.-]+\.[A-Za-z0-9]+)`")
# Paths that are not the project's files: an installation's, an include's, a build's.
ELSEWHERE = ("lib/", "share/", "include/tsl/", "tsl/", "build/", "/")


def missing_paths(root, path, line):
    """The backquoted project paths on the line that name no file (from the root or the file's folder)."""
    for match in PATH.finditer(line):
        ref = match.group(1)
        if ref.startswith(ELSEWHERE) and not os.path.exists(os.path.join(root, ref)):
            continue
        if not (os.path.exists(os.path.join(root, ref)) or os.path.exists(os.path.join(os.path.dirname(path), ref))):
            yield ref


def violations(path, root):
    try:
        with open(path, encoding="utf-8") as f:
            lines = f.read().splitlines()
    except UnicodeDecodeError:
        return  # not text (a picture, a data file)
    for number, line in enumerate(lines, 1):
        if FORBIDDEN.search(line) or NOTE_NAMES.search(line):
            yield number, line.strip()
        for ref in missing_paths(root, path, line):
            yield number, f"{ref} (no such file in the project)"


def unlisted_pages(root):
    """The pages of docs/ (not pictures) that README.md's "Documentation" list omits."""
    with open(os.path.join(root, "README.md"), encoding="utf-8") as f:
        readme = f.read()
    start = readme.find("## Documentation")
    listed = readme[start:] if start >= 0 else ""
    end = listed.find("\n## ", 1)
    listed = listed[:end] if end >= 0 else listed
    for name in sorted(os.listdir(os.path.join(root, "docs"))):
        path = os.path.join(root, "docs", name)
        if os.path.isfile(path) and f"`docs/{name}`" not in listed:
            yield name


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..")
    found = 0
    for path in files(root):
        for number, line in violations(path, root):
            print(f"{os.path.relpath(path, root)}:{number}: cites what users do not have: {line}")
            found += 1
    for name in unlisted_pages(root):
        print(f"README.md: the documentation list does not name docs/{name}")
        found += 1
    if found:
        print(f"{found} problem(s): point references at the project's own pages "
              "(docs/language.md §N, docs/tensor-core.md, docs/development.md, ...) and list every "
              "page of docs/ in README.md")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
