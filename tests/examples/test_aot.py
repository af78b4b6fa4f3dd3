#!/usr/bin/env python3
"""examples/aot built and run as a user would: the eager engine writes the data and its
answer, CMake builds the C host against the library `tsl compile` makes, the host's
probabilities must match the engine's, and the library must need nothing but the C
library (no LLVM, no C++ runtime, no TSL engine).

usage: test_aot.py TSL REPOSITORY"""
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "harness"))
from checks import check, report  # noqa: E402


def run(*args, **kwargs):
    return subprocess.run(args, capture_output=True, text=True, timeout=300, **kwargs)


def main():
    tsl, repo = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    example = os.path.join(repo, "examples", "aot")
    work = tempfile.mkdtemp(prefix="tsl-aot-")
    try:
        data, build = os.path.join(work, "data"), os.path.join(work, "build")
        os.makedirs(data)
        r = run(tsl, "run", os.path.join(example, "reference.tsl"), data, os.path.join(repo, "data"))
        check("reference.tsl trains the model eagerly and writes the data and the eager answer",
              r.returncode == 0 and os.path.exists(os.path.join(data, "expected.npy")), r.stdout + r.stderr)
        generator = ["-G", "Ninja"] if shutil.which("ninja") else []
        r = run("cmake", "-S", example, "-B", build, f"-DTSL={tsl}", *generator)
        check("the example's CMake project configures", r.returncode == 0, r.stdout + r.stderr)
        r = run("cmake", "--build", build)
        check("building it compiles model.tsl to libpredict.so and links the C host", r.returncode == 0,
              r.stdout + r.stderr)
        r = run(os.path.join(build, "host"), data)
        check("the C host's probabilities from libpredict.so match the eager engine's within 1e-5",
              r.returncode == 0 and "largest difference from the eager engine" in r.stdout, r.stdout + r.stderr)
        r = run("ldd", os.path.join(build, "libpredict.so"))
        needed = [line.split()[0] for line in r.stdout.splitlines() if "=>" in line]
        check("ldd of the library shows only the C library: no LLVM, no C++ runtime, no TSL",
              r.returncode == 0 and needed and all(n.startswith(("libc.so", "libm.so", "libpthread.so")) for n in needed),
              r.stdout)
        r = run("nm", "-D", "--defined-only", os.path.join(build, "libpredict.so"))
        exported = sorted(line.split()[-1] for line in r.stdout.splitlines())
        check("the library exports predict and predict_error only", exported == ["predict", "predict_error"], r.stdout)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return report()


if __name__ == "__main__":
    sys.exit(main())
