#!/usr/bin/env python3
"""attention against a float64 NumPy reference on every engine, and its memory on :cpu.

Random q, k, v (and masks, cotangents, tangents) are written with numpy.savez; a TSL
program loads them and computes, for each case, the output, the pullback of a random
cotangent (vjp) and the derivative along random tangents (jvp), eagerly and under jit on
:interp, :cpu and :tc, writing the results with save-tree. The reference materialises
the [..., Lq, Lk] scores in float64: softmax over the keys a query may attend (the mask,
and j <= i when causal: the top-left aligned triangle of PyTorch's is_causal), zeros for a
query that may attend none; its derivatives are the textbook formulas. The cases cover
batch axes that broadcast, masks that broadcast, causal with Lq < Lk and Lq > Lk, rows
with no key (zeros and zero gradients, never NaN), sizes that cross the kernels' tiles,
large scores, size-0 axes, f16 and integer operands.

Then the memory: attention of q, k, v [1, L, 64] f32 compiled for :cpu, and the causal
pullback of all three, run in a child process for L = 4096 and L = 16384; its peak
resident memory (getrusage) must stay far below one [L, L] f32 matrix (1 GiB at 16384),
and grow with L by about what the operands and results take.

usage: test_attention_numpy.py PATH_TO_TSL   (run with a Python that has NumPy)
"""
import os
import resource
import shutil
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "harness"))
from checks import check, report, tsl_binary  # noqa: E402

TSL = tsl_binary("test_attention_numpy.py")
WORK = tempfile.mkdtemp(prefix="tsl-attention-")
rng = np.random.default_rng(11)


def allowed_of(lq, lk, batch, mask, causal):
    allowed = np.ones(batch + (lq, lk), bool)
    if mask is not None:
        allowed &= np.broadcast_to(mask, allowed.shape)
    if causal:
        allowed &= np.tril(np.ones((lq, lk), bool))
    return allowed


def reference(q, k, v, mask, causal, g, tq, tk, tv):
    """out, the cotangents of q, k, v for g, and the tangent of out, in float64."""
    q, k, v, g = (x.astype(np.float64) for x in (q, k, v, g))
    tq, tk, tv = (x.astype(np.float64) for x in (tq, tk, tv))
    batch = np.broadcast_shapes(q.shape[:-2], k.shape[:-2], v.shape[:-2])
    lq, d, lk = q.shape[-2], q.shape[-1], k.shape[-2]
    allowed = allowed_of(lq, lk, batch, mask, causal)
    c = 1.0 / np.sqrt(d)
    kt = np.swapaxes(k, -1, -2)
    s = np.where(allowed, (q @ kt) * c, -np.inf)
    top = np.max(s, axis=-1, keepdims=True) if lk else np.zeros(batch + (lq, 1))
    top = np.where(np.isfinite(top), top, 0.0)
    e = np.where(allowed, np.exp(s - top), 0.0)
    total = e.sum(axis=-1, keepdims=True)
    p = np.where(total > 0, e / np.where(total > 0, total, 1.0), 0.0)
    out = p @ v
    dp = g @ np.swapaxes(v, -1, -2)
    ds = p * (dp - np.sum(dp * p, axis=-1, keepdims=True))
    dq = (ds @ k) * c
    dk = (np.swapaxes(ds, -1, -2) @ q) * c
    dv = np.swapaxes(p, -1, -2) @ g

    def to_shape(x, shape):  # the cotangent of a broadcast operand: summed back
        lead = x.ndim - len(shape)
        x = x.sum(axis=tuple(range(lead))) if lead else x
        return x.sum(axis=tuple(i for i, n in enumerate(shape) if n == 1 and x.shape[i] != 1), keepdims=True)

    dsdt = np.where(allowed, (tq @ kt + q @ np.swapaxes(tk, -1, -2)) * c, 0.0)
    dpdt = p * (dsdt - np.sum(p * dsdt, axis=-1, keepdims=True))
    tout = dpdt @ v + p @ tv
    return out, [to_shape(dq, q.shape), to_shape(dk, k.shape), to_shape(dv, v.shape)], tout


inputs, cases = {}, []


def case(name, qs, ks, vs, mask=None, causal=False, dtype=np.float64, scale=1.0, derivatives=True):
    def draw(shape):
        x = rng.standard_normal(shape) * scale
        return x.astype(dtype) if np.issubdtype(dtype, np.floating) else np.round(x * 2).astype(dtype)

    q, k, v = draw(qs), draw(ks), draw(vs)
    batch = np.broadcast_shapes(qs[:-2], ks[:-2], vs[:-2])
    out_shape = batch + (qs[-2], vs[-1])
    real = dtype if np.issubdtype(dtype, np.floating) else np.float32
    g = rng.standard_normal(out_shape).astype(real)
    tq, tk, tv = (rng.standard_normal(s).astype(real) for s in (qs, ks, vs))
    for suffix, x in (("q", q), ("k", k), ("v", v), ("g", g), ("tq", tq), ("tk", tk), ("tv", tv)):
        inputs["%s-%s" % (name, suffix)] = x
    if mask is not None:
        inputs[name + "-m"] = mask
    cases.append((name, mask is not None, causal, dtype, derivatives,
                  reference(q, k, v, mask, causal, g, tq, tk, tv)))


def bools(shape, p=0.6):
    return rng.random(shape) < p


case("plain", (2, 3, 5, 8), (2, 3, 7, 8), (2, 3, 7, 4))
case("broadcast", (2, 1, 5, 8), (1, 3, 7, 8), (3, 7, 4))
case("causal-wide", (2, 5, 6), (2, 9, 6), (2, 9, 3), causal=True)
case("causal-tall", (2, 9, 6), (2, 5, 6), (2, 5, 3), causal=True)
m = bools((5, 7))
m[1, :] = False  # a query with no key
case("mask", (2, 3, 5, 8), (2, 3, 7, 8), (2, 3, 7, 4), mask=m)
case("mask-heads", (2, 3, 5, 8), (2, 3, 7, 8), (2, 3, 7, 4), mask=bools((3, 1, 7)))
m = bools((6, 6))
m[0, 0] = False  # query 0 sees only key 0 when causal: masked, it sees none
m[3, :2] = False
case("mask-causal", (2, 6, 4), (2, 6, 4), (2, 6, 5), mask=m, causal=True)
case("masked-out", (3, 4), (5, 4), (5, 2), mask=np.zeros((3, 5), bool))
case("scalar-mask", (3, 4), (5, 4), (5, 2), mask=np.array(True))
# Sizes that cross the kernels' tiles (32 queries or keys) and blocks (64).
case("tiles", (1, 70, 16), (1, 130, 16), (1, 130, 24))
case("tiles-causal", (2, 100, 9), (2, 77, 9), (2, 77, 40), causal=True)
case("tiles-mask", (1, 67, 12), (1, 129, 12), (1, 129, 33), mask=bools((67, 129), 0.3), causal=True)
case("tiles-f32", (2, 70, 16), (2, 130, 16), (2, 130, 24), mask=bools((1, 130)), dtype=np.float32)
case("causal-f32", (1, 200, 64), (1, 200, 64), (1, 200, 64), causal=True, dtype=np.float32)
case("large-scores", (1, 40, 8), (1, 90, 8), (1, 90, 8), scale=30.0)
case("f16", (2, 33, 8), (2, 40, 8), (2, 40, 8), dtype=np.float16, derivatives=False)
case("ints", (4, 3), (6, 3), (6, 2), dtype=np.int64, derivatives=False)
case("no-queries", (2, 0, 4), (2, 5, 4), (2, 5, 3))
case("no-keys", (2, 3, 4), (2, 0, 4), (2, 0, 3), causal=True)
case("no-batch", (0, 3, 4), (0, 5, 4), (0, 5, 3))
case("no-values", (3, 4), (5, 4), (5, 0))
np.savez(os.path.join(WORK, "in.npz"), **inputs)

forms = []
for name, masked, causal, dtype, derivatives, _ in cases:
    opts = (":mask (:%s-m in) " % name if masked else "") + ":causal " + ("true" if causal else "false")
    f = "(fn [q k v] (attention q k v %s))" % opts
    args = " ".join("(:%s-%s in)" % (name, s) for s in ("q", "k", "v"))
    forms.append(":%s-out (attention %s %s)" % (name, args, opts))
    if derivatives:
        forms.append(":%s-grad ((second (vjp %s %s)) (:%s-g in))" % (name, f, args, name))
        forms.append(":%s-jvp (second (jvp %s [%s] [%s]))" %
                     (name, f, args, " ".join("(:%s-%s in)" % (name, s) for s in ("tq", "tk", "tv"))))
program = """(def in (load-tree "in.npz"))
(defn run [in] {%s})
(save-tree "eager.npz" (run in))
(save-tree "interp.npz" ((jit run :target :interp) in))
(save-tree "cpu.npz" ((jit run :target :cpu) in))
(save-tree "tc.npz" ((jit run :target :tc) in))
""" % "\n  ".join(forms)
with open(os.path.join(WORK, "prog.tsl"), "w") as f:
    f.write(program)
p = subprocess.run([TSL, "run", "--print-fallbacks", "prog.tsl"], capture_output=True, text=True, cwd=WORK,
                   timeout=600)
check("the program runs on every engine", p.returncode == 0, p.stderr)
# f16 and integer operands are converted by the eager kernel (a declared fallback); f32 and
# f64 run the kernel library's code.
fallbacks = [line for line in (p.stdout + p.stderr).splitlines() if "fallback:" in line and "attention" in line]
check(":cpu runs attention and its derivatives on f32 and f64 without the eager kernels",
      len(fallbacks) == 2 and all("f16[" in line or "i64[" in line for line in fallbacks), "\n".join(fallbacks))


def close(got, want, dtype):
    tol = {np.float64: 1e-10, np.float32: 2e-5, np.float16: 2e-3, np.int64: 2e-5}[dtype]
    if got.shape != want.shape or not np.all(np.isfinite(got)):
        return False
    scale = np.max(np.abs(want)) if want.size else 0.0
    return bool(np.all(np.abs(got - want) <= tol * (np.abs(want) + scale + 1.0)))


if p.returncode == 0:
    for engine in ("eager", "interp", "cpu", "tc"):
        got = np.load(os.path.join(WORK, engine + ".npz"))
        for name, _, _, dtype, derivatives, (out, grads, tout) in cases:
            want_dtype = {np.float64: np.float64, np.float32: np.float32, np.float16: np.float16,
                          np.int64: np.float32}[dtype]
            o = got[name + "-out"]
            check("%s %s: the output" % (engine, name), o.dtype == want_dtype and close(o, out, dtype),
                  "got %s %s" % (o.dtype, o.shape))
            if not derivatives:
                continue
            for i, part in enumerate("qkv"):
                check("%s %s: the cotangent of %s" % (engine, name, part),
                      close(got["%s-grad/%d" % (name, i)], grads[i], dtype))
            check("%s %s: the tangent" % (engine, name), close(got[name + "-jvp"], tout, dtype))
    cpu = np.load(os.path.join(WORK, "cpu.npz"))
    check("a query with no key gives zeros, and zero cotangents",
          not np.any(cpu["mask-out"][:, :, 1]) and not np.any(cpu["masked-out-out"])
          and not np.any(cpu["masked-out-grad/0"]) and not np.any(cpu["masked-out-grad/1"]))

# ---- memory linear in L on :cpu ----

MEMORY = """(def n (nth *args* 0))
(def L (if (= n "4096") 4096 16384))
(def q (randn (rng-key 1) [1 L 64]))
(def k (randn (rng-key 2) [1 L 64]))
(def v (randn (rng-key 3) [1 L 64]))
(def forward (jit (fn [q k v] (attention q k v)) :target :cpu))
(def pullback (jit (fn [q k v g] ((second (vjp (fn [q k v] (attention q k v :causal true)) q k v)) g)) :target :cpu))
(def y (forward q k v))
(def grads (pullback q k v y))
(println (shape y) (mapv shape grads) (every? (fn [t] (< (max (abs t)) 1e30)) (conj grads y)))
"""
with open(os.path.join(WORK, "memory.tsl"), "w") as f:
    f.write(MEMORY)


def peak_rss(length):
    """The child's own peak resident memory in bytes, and what it printed. A fresh Python
    process runs it and reports ru_maxrss of its children, which is then this child's
    alone (this process's RUSAGE_CHILDREN is the largest of every child so far, the
    larger programs above included)."""
    wrapper = ("import resource, subprocess, sys\n"
               "r = subprocess.run(sys.argv[1:], capture_output=True, text=True)\n"
               "sys.stdout.write(r.stdout)\nsys.stderr.write(r.stderr)\n"
               "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
               "sys.exit(r.returncode)\n")
    r = subprocess.run([sys.executable, "-c", wrapper, TSL, "run", "memory.tsl", str(length)],
                       capture_output=True, text=True, cwd=WORK, timeout=600)
    lines = r.stdout.strip().splitlines()
    printed = "\n".join(lines[:-1])
    check("attention of length %d runs" % length, r.returncode == 0 and printed.strip().endswith("true"),
          r.stdout + r.stderr)
    return (int(lines[-1]) * 1024 if lines and lines[-1].isdigit() else 0), printed


small, _ = peak_rss(4096)
large, printed = peak_rss(16384)
square = 16384 * 16384 * 4
print("peak resident memory: %.0f MiB at L = 4096, %.0f MiB at L = 16384 (one [L, L] f32 matrix: %.0f MiB)"
      % (small / 2**20, large / 2**20, square / 2**20))
check("memory at L = 16384 stays far below one [L, L] matrix", large < square / 4,
      "%.0f MiB" % (large / 2**20))
# q, k, v, the output, its cotangent and three gradients, [16384, 64] f32 each: 4 MiB each.
check("memory grows with L by about the operands' size, not L^2", large - small < 96 * 2**20,
      "%.0f MiB more" % ((large - small) / 2**20))

shutil.rmtree(WORK, ignore_errors=True)
sys.exit(report())
