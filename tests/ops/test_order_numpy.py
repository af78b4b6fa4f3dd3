#!/usr/bin/env python3
"""sort, argsort, top-k, gather, scatter-add and cumprod against NumPy, on every engine.

Random tensors with NaN, infinities, signed zeros and ties, integer and boolean tensors and
size-0 axes are written with numpy.savez; a TSL program loads them, applies each operation
eagerly and under jit on :interp, :cpu and :tc, and writes the results with save-tree.
Every result must equal the reference bit for bit: np.sort and np.argsort (kind="stable",
NaN last), np.take_along_axis, a loop adding in idx's order rounded to the dtype
(PyTorch's scatter_add), np.cumprod in f64 rounded once (integers wrapping), and for top-k
the descending order with NaN first and ties to the lower index.

usage: test_order_numpy.py PATH_TO_TSL   (run with a Python that has NumPy)
"""
import os
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "harness"))
from checks import check, report, tsl_binary  # noqa: E402

TSL = tsl_binary("test_order_numpy.py")
WORK = tempfile.mkdtemp(prefix="tsl-order-")
rng = np.random.default_rng(7)


def floats(shape, dtype):
    """Normals rounded to one decimal (ties), with NaN, ±inf and ±0 sprinkled in."""
    x = np.round(rng.standard_normal(shape), 1).astype(dtype)
    flat = x.reshape(-1)
    for value in (np.nan, np.inf, -np.inf, -0.0, 0.0, np.nan):
        if flat.size:
            flat[rng.integers(flat.size)] = value
    return x


inputs = {
    "f": floats((6, 7), np.float32),
    "d": floats((5, 4), np.float64),
    "i": rng.integers(-3, 4, (4, 9)).astype(np.int32),
    "l": rng.integers(-2**62, 2**62, (3, 5)).astype(np.int64),
    "b": rng.integers(0, 2, (3, 5)).astype(np.bool_),
    "e": np.zeros((0, 4), np.float32),
    "gx": rng.standard_normal((3, 5)).astype(np.float32),
    "gi": rng.integers(-5, 5, (3, 4)),
    "gib": rng.integers(-5, 5, (1, 6)),
    "gxb": rng.standard_normal((1, 5)).astype(np.float32),
    "gi0": rng.integers(-3, 3, (4, 5)).astype(np.int32),
    "sx": rng.standard_normal((4, 6)).astype(np.float32),
    "si": rng.integers(-6, 6, (3, 5)),
    "ss": (rng.standard_normal((3, 7)) * 1e4).astype(np.float32),
    "si0": rng.integers(-4, 4, (2, 6)),
    "ss0": rng.standard_normal((2, 6)).astype(np.float32),
    "sxi": rng.integers(-9, 9, (4, 6)),
    "ssi": rng.integers(-9, 9, (3, 5)),
    "cf": np.where(rng.random((5, 6)) < 0.15, 0.0, 1 + 0.3 * rng.standard_normal((5, 6))).astype(np.float32),
    "ci": rng.integers(-7, 8, (4, 5)),
}
np.savez(os.path.join(WORK, "in.npz"), **inputs)


def top_k(x, k):
    """Values and indices of the k largest along the last axis: NaN first, ties to the lower index."""
    flat = x.reshape(-1, x.shape[-1])
    values = np.empty((flat.shape[0], k), x.dtype)
    indices = np.empty((flat.shape[0], k), np.int64)
    for r, row in enumerate(flat):
        key = [(0, 0.0, j) if row[j] != row[j] else (1, -float(row[j]), j) for j in range(len(row))]
        order = [j for _, _, j in sorted(key)][:k]
        values[r], indices[r] = row[order], order
    return values.reshape(x.shape[:-1] + (k,)), indices.reshape(x.shape[:-1] + (k,))


def scatter_add(x, idx, src, axis):
    """PyTorch's scatter_add: src added at idx in idx's row-major order, each sum rounded."""
    out = x.copy()
    n = x.shape[axis]
    for p in np.ndindex(*idx.shape):
        q = list(p)
        q[axis] = idx[p] % n
        out[tuple(q)] = out[tuple(q)] + src[p]
    return out


def cumprod(x, axis):
    if np.issubdtype(x.dtype, np.floating):
        return np.cumprod(x.astype(np.float64), axis=axis).astype(x.dtype)
    return np.cumprod(x.astype(np.int64), axis=axis)


expected, calls = {}, []


def case(name, call, value):
    calls.append(":%s %s" % (name, call))
    expected[name] = value


for name in ("f", "d", "i", "l", "b", "e"):
    x = inputs[name]
    for axis in range(x.ndim):
        case("sort-%s-%d" % (name, axis), "(sort (:%s in) :axis %d)" % (name, axis), np.sort(x, axis, kind="stable"))
        case("argsort-%s-%d" % (name, axis), "(argsort (:%s in) :axis %d)" % (name, axis),
             np.argsort(x, axis, kind="stable").astype(np.int64))
    for k in sorted({0, min(3, x.shape[-1]), x.shape[-1]}):
        values, indices = top_k(x, k)
        case("topv-%s-%d" % (name, k), "(nth (top-k (:%s in) %d) 0)" % (name, k), values)
        case("topi-%s-%d" % (name, k), "(nth (top-k (:%s in) %d) 1)" % (name, k), indices)
case("gather-1", "(gather (:gx in) (:gi in))", np.take_along_axis(inputs["gx"], inputs["gi"], 1))
case("gather-idx-broadcast", "(gather (:gx in) (:gib in) :axis 1)", np.take_along_axis(inputs["gx"], inputs["gib"], 1))
case("gather-x-broadcast", "(gather (:gxb in) (:gi in))", np.take_along_axis(inputs["gxb"], inputs["gi"], 1))
case("gather-0", "(gather (:gx in) (:gi0 in) :axis 0)", np.take_along_axis(inputs["gx"], inputs["gi0"], 0))
case("scatter-1", "(scatter-add (:sx in) (:si in) (:ss in))", scatter_add(inputs["sx"], inputs["si"], inputs["ss"], 1))
case("scatter-0", "(scatter-add (:sx in) (:si0 in) (:ss0 in) :axis 0)",
     scatter_add(inputs["sx"], inputs["si0"], inputs["ss0"], 0))
case("scatter-int", "(scatter-add (:sxi in) (:si in) (:ssi in) :axis -1)",
     scatter_add(inputs["sxi"], inputs["si"], inputs["ssi"], 1))
for name in ("cf", "ci", "i", "e"):
    for axis in range(inputs[name].ndim):
        case("cumprod-%s-%d" % (name, axis), "(cumprod (:%s in) :axis %d)" % (name, axis), cumprod(inputs[name], axis))

program = """(def in (load-tree "in.npz"))
(defn ops [in] {%s})
(save-tree "eager.npz" (ops in))
(save-tree "interp.npz" ((jit ops :target :interp) in))
(save-tree "cpu.npz" ((jit ops :target :cpu) in))
(save-tree "tc.npz" ((jit ops :target :tc) in))
""" % "\n  ".join(calls)
with open(os.path.join(WORK, "prog.tsl"), "w") as f:
    f.write(program)
p = subprocess.run([TSL, "run", "prog.tsl"], capture_output=True, text=True, cwd=WORK, timeout=300)
check("the program runs on every engine", p.returncode == 0, p.stderr)


def same(a, b):
    """Equal dtype, shape and bits (NaN payloads aside: any NaN matches any NaN)."""
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    if np.issubdtype(a.dtype, np.floating):
        bits = np.dtype("u%d" % a.dtype.itemsize)
        return bool(np.all((np.isnan(a) & np.isnan(b)) | (a.view(bits) == b.view(bits))))
    return np.array_equal(a, b)


if p.returncode == 0:
    for engine in ("eager", "interp", "cpu", "tc"):
        got = np.load(os.path.join(WORK, engine + ".npz"))
        for name, want in expected.items():
            have = got[name]
            check("%s %s" % (engine, name), same(have, want),
                  "got %s %s\n%s\nwant %s %s\n%s" % (have.dtype, have.shape, have, want.dtype, want.shape, want))

sys.exit(report())
