#!/usr/bin/env python3
"""tools/check-layers.py — fails when an #include breaks the layer order of
docs/architecture.md.

The table "Folders and dependencies" there lists each folder and what it depends on.
A source file of folder F may include headers of F itself, the public API (`tsl/...`,
include/tsl/) and the folders F depends on — nothing else; a public header (include/tsl/)
may include only other public headers. Quoted and angle-bracket includes are both checked
(`<eval/Value.h>` is the same dependency as `"eval/Value.h"`). Prints each violation as FILE:LINE and exits 1
if there is any.

    python3 tools/check-layers.py [REPO_ROOT]
"""
import os
import re
import sys


def table(root):
    folders = {}
    with open(os.path.join(root, "docs", "architecture.md")) as f:
        in_table = False
        for line in f:
            if line.startswith("## Folders and dependencies"):
                in_table = True
            elif in_table and line.startswith("## "):
                break
            elif in_table and line.startswith("| `"):
                cells = [c.strip() for c in line.strip().strip("|").split("|")]
                folder = cells[0].strip("`").rstrip("/")
                folders[folder] = cells[-1]
    names = {f.split("/")[0] for f in folders}
    allowed = {}
    for folder, deps in folders.items():
        if deps.strip() == "all":
            allowed[folder] = None  # anything
        else:
            words = set(re.findall(r"[a-z]+", deps))
            allowed[folder] = {w for w in words if w in names and w != folder.split("/")[0]}
    return allowed, names


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    allowed, names = table(root)
    bad = []
    for folder, deps in allowed.items():
        top = folder.split("/")[0]
        base = os.path.join(root, folder)
        if deps is None or not os.path.isdir(base):
            continue
        for directory, _, files in os.walk(base):
            for name in files:
                if not name.endswith((".h", ".hpp", ".cpp", ".c")):
                    continue
                path = os.path.join(directory, name)
                with open(path, errors="replace") as f:
                    for number, line in enumerate(f, 1):
                        m = re.match(r'\s*#\s*include\s+["<]([^">]+)[">]', line)
                        if not m:
                            continue
                        target = m.group(1).split("/")[0]
                        if "/" not in m.group(1) or target == "tsl":
                            continue  # same folder, generated headers, or the public API
                        if folder == "include/tsl":
                            bad.append(f"{os.path.relpath(path, root)}:{number}: a public header includes {m.group(1)}")
                        elif target in names and target != top and target not in deps:
                            bad.append(f"{os.path.relpath(path, root)}:{number}: {top}/ may not include {m.group(1)} "
                                       f"(it depends on: {', '.join(sorted(deps)) or 'nothing'})")
    for b in bad:
        print(b)
    print(f"{len(bad)} include(s) break the layer order" if bad else "the layer order holds")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
