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
        check_buffers(tsl, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return report()


HOST = r"""
#include "scale.h"
#include <stdio.h>
#include <string.h>

static void show(const char* what, int status, const float* out) {
  if (status != 0) printf("%s %d %s\n", what, status, scale_error());
  else printf("%s 0 %g %g %g %g\n", what, out[0], out[1], out[2], out[3]);
}

int main(void) {
  float x[6] = {1, 2, 3, 4, 5, 6}, w[6] = {1, 0, 0, 1, 1, 1}, out[4] = {0};
  float buffer[10] = {1, 2, 3, 4, 5, 6, 0, 0, 0, 0};
  show("null-x", scale(NULL, w, out), out);
  show("null-w", scale(x, NULL, out), out);
  show("null-result", scale(x, w, NULL), out);
  show("result-is-x", scale(buffer, w, buffer), out);
  show("result-inside-x", scale(buffer, w, buffer + 4), out);
  show("result-is-w", scale(x, buffer, buffer), out);
  show("x-is-w", scale(x, x, out), out);
  show("fine", scale(x, w, out), out);
  return 0;
}
"""


def check_buffers(tsl, work):
    """A C host calling an entry with NULL and overlapping buffers gets an error status and
    message, never a crash; inputs may share memory."""
    folder = os.path.join(work, "buffers")
    os.makedirs(folder)
    source = os.path.join(folder, "scale.tsl")
    with open(source, "w") as f:
        f.write("(defn scale [x w] (matmul x w))\n")
    sig = "x:f32[2,3],w:f32[3,2]"
    r1 = run(tsl, "compile", source, "--entry", "scale", "--sig", sig, "--emit=lib", "-o", os.path.join(folder, "libscale.so"))
    r2 = run(tsl, "compile", source, "--entry", "scale", "--sig", sig, "--emit=header", "-o", os.path.join(folder, "scale.h"))
    header = open(os.path.join(folder, "scale.h")).read() if r2.returncode == 0 else ""
    check("the generated header says no pointer may be NULL and no result may overlap another buffer",
          r1.returncode == 0 and "No pointer may be NULL" in header and "must not overlap an input" in header
          and "Inputs may overlap" in header, r1.stderr + r2.stderr + header)
    with open(os.path.join(folder, "host.c"), "w") as f:
        f.write(HOST)
    cc = os.environ.get("CC") or "cc"
    r = run(cc, "-std=c99", "-Wall", "-Werror", "-o", os.path.join(folder, "host"), os.path.join(folder, "host.c"),
            "-I", folder, "-L", folder, "-lscale", "-Wl,-rpath," + folder)
    check("a C host of the library compiles", r.returncode == 0, r.stdout + r.stderr)
    r = run(os.path.join(folder, "host"))
    got = dict(line.split(" ", 1) for line in r.stdout.splitlines())
    # The products, computed here: x·w and x·x (x read as a [3,2] matrix).
    x = [[1, 2, 3], [4, 5, 6]]
    w = [[1, 0], [0, 1], [1, 1]]
    xx = [[1, 2], [3, 4], [5, 6]]
    def product(a, b):
        return " ".join("%g" % sum(a[i][k] * b[k][j] for k in range(3)) for i in range(2) for j in range(2))
    refused = "5 value error: scale: "
    check("NULL buffers are refused with status 5 and a message naming the parameter",
          r.returncode == 0 and got.get("null-x") == refused + "x is NULL (every buffer must point at its 24 bytes)"
          and got.get("null-w") == refused + "w is NULL (every buffer must point at its 24 bytes)"
          and got.get("null-result") == refused + "result0 is NULL (every buffer must point at its 16 bytes)",
          r.stdout + r.stderr)
    overlap = " (a result must not share memory with an input or another result)"
    check("a result overlapping an input is refused with status 5, wholly or in part",
          got.get("result-is-x") == refused + "result0 overlaps x" + overlap
          and got.get("result-inside-x") == refused + "result0 overlaps x" + overlap
          and got.get("result-is-w") == refused + "result0 overlaps w" + overlap, r.stdout + r.stderr)
    check("inputs may share memory, and a good call after refused ones computes the product",
          got.get("x-is-w") == "0 " + product(x, xx) and got.get("fine") == "0 " + product(x, w), r.stdout + r.stderr)


if __name__ == "__main__":
    sys.exit(main())
