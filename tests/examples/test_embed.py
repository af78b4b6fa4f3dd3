#!/usr/bin/env python3
"""TSL as a library, as a user meets it: `cmake --install` into a fresh prefix, then
examples/embed built against the installed tree — not the build tree — with CMake's
find_package(tsl) and with pkg-config, both hosts run; the installed headers include
nothing but each other; and `cpack -G DEB` makes a Debian package whose contents are
listed and checked.

usage: test_embed.py BUILD_DIR REPOSITORY [CXX] [--no-package]  (CXX: the compiler TSL
was built with: a sanitizer build's hosts need its sanitizer runtime. --no-package: the
sanitizer builds leave out the Debian package, a release artifact that takes half a
minute to compress there)"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "harness"))
from checks import check, report  # noqa: E402


def run(*args, env=None, cwd=None):
    return subprocess.run(args, capture_output=True, text=True, timeout=600, env=env, cwd=cwd)


def debian_package(build, work):
    """`cpack -G DEB`: the package, its contents and its dependencies."""
    debs = os.path.join(work, "deb")
    r = run("cpack", "-G", "DEB", "--config", os.path.join(build, "CPackConfig.cmake"), "-B", debs)
    check("cpack -G DEB makes a Debian package", r.returncode == 0, r.stdout + r.stderr)
    packages = [f for f in os.listdir(debs) if f.endswith(".deb")] if os.path.isdir(debs) else []
    listing = run("dpkg-deb", "-c", os.path.join(debs, packages[0])).stdout if packages else ""
    print(f"contents of {packages[0] if packages else '(no package)'}:")
    for line in listing.splitlines():
        print("   ", line.split()[-1])
    for path in ["./usr/bin/tsl", "./usr/include/tsl/tsl.h", "./usr/lib/libtsl.so", "./usr/lib/pkgconfig/tsl.pc",
                 "./usr/lib/cmake/tsl/tslConfig.cmake", "./usr/share/man/man1/tsl.1"]:
        check(f"the package holds {path}", path in listing)
    info = run("dpkg-deb", "-f", os.path.join(debs, packages[0]), "Depends").stdout if packages else ""
    check("the package names its dependencies", "libantlr4-runtime4.9" in info, info)


def main():
    package = "--no-package" not in sys.argv
    args = [a for a in sys.argv[1:] if a != "--no-package"]
    build, repo = os.path.abspath(args[0]), os.path.abspath(args[1])
    cxx = args[2] if len(args) > 2 else "c++"
    example = os.path.join(repo, "examples", "embed")
    work = tempfile.mkdtemp(prefix="tsl-embed-")
    try:
        prefix = os.path.join(work, "prefix")
        r = run("cmake", "--install", build, "--prefix", prefix)
        check("cmake --install puts TSL under a fresh prefix", r.returncode == 0, r.stdout + r.stderr)
        for path in ["include/tsl/tsl.h", "lib/libtsl.so", "lib/libtsl.a", "bin/tsl", "lib/cmake/tsl/tslConfig.cmake",
                     "lib/pkgconfig/tsl.pc", "share/man/man1/tsl.1", "share/doc/tsl/embedding.md"]:
            check(f"the installed tree has {path}", os.path.exists(os.path.join(prefix, path)))
        headers = os.path.join(prefix, "include", "tsl")
        outside = []
        for name in sorted(os.listdir(headers)):
            with open(os.path.join(headers, name)) as f:
                for line in f:
                    m = re.match(r'\s*#\s*include\s+"([^"]+)"', line)
                    if m and not m.group(1).startswith("tsl/"):
                        outside.append(f"{name}: {m.group(1)}")
        check("the installed headers include only each other", not outside, "\n".join(outside))

        env = dict(os.environ, LD_LIBRARY_PATH=os.path.join(prefix, "lib"))
        model = os.path.join(example, "model.tsl")
        generator = ["-G", "Ninja"] if shutil.which("ninja") else []
        cbuild = os.path.join(work, "cmake-build")
        r = run("cmake", "-S", example, "-B", cbuild, f"-DCMAKE_PREFIX_PATH={prefix}", f"-DCMAKE_CXX_COMPILER={cxx}", *generator)
        check("examples/embed configures with find_package(tsl) against the installed tree", r.returncode == 0,
              r.stdout + r.stderr)
        r = run("cmake", "--build", cbuild)
        check("and builds", r.returncode == 0, r.stdout + r.stderr)
        hosts = [os.path.join(cbuild, "embed")]
        pc_env = dict(os.environ, PKG_CONFIG_PATH=os.path.join(prefix, "lib", "pkgconfig"))
        flags = run("pkg-config", "--cflags", "--libs", "tsl", env=pc_env)
        check("pkg-config knows tsl", flags.returncode == 0 and "-ltsl" in flags.stdout, flags.stdout + flags.stderr)
        pc_host = os.path.join(work, "embed-pc")
        r = run(cxx, "-std=c++20", os.path.join(example, "main.cpp"), *flags.stdout.split(), "-o", pc_host)
        check("the same host builds with pkg-config --cflags --libs tsl", r.returncode == 0, r.stdout + r.stderr)
        hosts.append(pc_host)
        for host in hosts:
            r = run(host, model, env=env)
            out = r.stdout
            check(f"{os.path.basename(host)} trains the model on host memory, calls a compiled function, "
                  "gets its callbacks and a TSL error",
                  r.returncode == 0 and "loss: 0.0000" in out and "compiled score: largest error" in out
                  and re.search(r"TSL reported: .*model\.tsl:3:6: shape error: matmul cannot contract", out)
                  is not None, out + r.stderr)

        if package:
            debian_package(build, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    sys.exit(report())


if __name__ == "__main__":
    main()
