#!/usr/bin/env python3
"""Checkpoints against NumPy: numpy.load reads what save-tree writes (names, dtypes, bits),
load-npz and load-tree read what numpy.savez and numpy.savez_compressed write, and hostile
archives (truncated, corrupt, wrong member types, lying sizes) are io errors, never crashes.

usage: test_npz_numpy.py PATH_TO_TSL   (run with a Python that has NumPy)
"""
import os
import subprocess
import sys
import tempfile
import zipfile

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "harness"))
from checks import check, report, tsl_binary  # noqa: E402

TSL = tsl_binary("test_npz_numpy.py")
WORK = tempfile.mkdtemp(prefix="tsl-npz-")


def run(program):
    path = os.path.join(WORK, "prog.tsl")
    with open(path, "w") as f:
        f.write(program)
    p = subprocess.run([TSL, "run", path], capture_output=True, cwd=WORK, timeout=60)
    return p.returncode, p.stdout.decode(), p.stderr.decode()


def at(name):
    return os.path.join(WORK, name)


# ---- save-tree → numpy.load ----
rc, out, err = run("""
(save-tree "tree.npz" {:w (reshape (astype (arange 6) :f32) [2 3])
                       :layers [{:b (astype [1 -2] :i32)} {:b (> [3 0] 1)}]
                       :scale 2.5
                       :steps 7
                       :h (astype [0.5 65504.0] :f16)
                       :d (/ (ones [2] :dtype :f64) 3)})
""")
check("save-tree runs", rc == 0, err)
if rc == 0:
    z = np.load(at("tree.npz"))
    check("numpy.load sees every path", sorted(z.files) == sorted(
        ["w", "layers/0/b", "layers/1/b", "scale", "steps", "h", "d"]), str(z.files))
    check("f32 matrix", z["w"].dtype == np.float32 and np.array_equal(z["w"], np.arange(6, dtype=np.float32).reshape(2, 3)))
    check("i32 in a vector of maps", z["layers/0/b"].dtype == np.int32 and z["layers/0/b"].tolist() == [1, -2])
    check("bool", z["layers/1/b"].dtype == np.bool_ and z["layers/1/b"].tolist() == [True, False])
    check("a float number is a 0-d f32", z["scale"].shape == () and z["scale"].dtype == np.float32 and z["scale"] == 2.5)
    check("an integer is a 0-d i64", z["steps"].shape == () and z["steps"].dtype == np.int64 and z["steps"] == 7)
    check("f16", z["h"].dtype == np.float16 and z["h"].tolist() == [0.5, 65504.0])
    check("f64 bit for bit", z["d"].dtype == np.float64 and np.array_equal(z["d"], np.ones(2) / 3))
    with zipfile.ZipFile(at("tree.npz")) as zf:
        check("members are stored NAME.npy in tree order",
              [i.filename for i in zf.infolist()] == ["w.npy", "layers/0/b.npy", "layers/1/b.npy", "scale.npy", "steps.npy", "h.npy", "d.npy"]
              and all(i.compress_type == zipfile.ZIP_STORED for i in zf.infolist()),
              str([(i.filename, i.compress_type) for i in zf.infolist()]))

rc, out, err = run("""
(def t {:w (reshape (astype (arange 6) :f32) [2 3]) :layers [{:b [1 2]} {:b [3 4]}] :s 2.5})
(save-tree "rt.npz" t)
(prn (load-tree "rt.npz"))
(prn (= (load-tree "rt.npz") t))
""")
check("load-tree rebuilds the tree save-tree wrote", rc == 0 and out.strip().endswith("true")
      and "{:w f32[2,3] [[0 1 2] [3 4 5]], :layers [{:b i64[2] [1 2]} {:b i64[2] [3 4]}], :s 2.5}" in out, out + err)

# ---- numpy.savez / savez_compressed → load-npz, load-tree ----
rng = np.random.default_rng(0)
arrays = {
    "a": rng.standard_normal((3, 4)).astype(np.float32),
    "b": np.arange(10, dtype=np.int64),
    "c": (rng.standard_normal(5) > 0),
    "d": rng.standard_normal((2, 2)),
    "e": np.asfortranarray(rng.standard_normal((3, 2)).astype(np.float32)),
    "f": np.array(3.5, dtype=np.float16),
    "g": rng.integers(-100, 100, size=(4,)).astype(np.int32).astype(">i4"),
}
for kind, save in (("stored", np.savez), ("deflated", np.savez_compressed)):
    save(at(f"np-{kind}.npz"), **arrays)
    os.makedirs(at(f"out-{kind}"), exist_ok=True)
    rc, out, err = run(f"""
(def m (load-npz "np-{kind}.npz"))
(prn (keys m))
(doseq [[k v] m] (save-npy (str "out-{kind}/" k ".npy") v))
""")
    check(f"load-npz reads numpy.savez ({kind})", rc == 0 and out.strip() == '["a" "b" "c" "d" "e" "f" "g"]', out + err)
    if rc == 0:
        for name, want in arrays.items():
            got = np.load(at(f"out-{kind}/{name}.npy"))
            check(f"{kind} {name}: dtype, shape and bits", got.dtype == want.dtype.newbyteorder("=")
                  and got.shape == want.shape and np.array_equal(got, want), f"{got!r} vs {want!r}")

np.savez_compressed(at("nested.npz"), **{"enc/0/w": np.ones((2, 2), np.float32), "enc/1/w": np.zeros(2, np.float32), "lr": np.float32(0.1)})
rc, out, err = run('(prn (load-tree "nested.npz"))')
check("load-tree of a numpy-written nested tree", rc == 0 and out.strip() == "{:enc [{:w f32[2,2] [[1 1] [1 1]]} {:w f32[2] [0 0]}], :lr 0.1}", out + err)

# ---- what cannot round trip is refused before writing ----
for program, kind in (('(save-tree "x.npz" {"w" [1 2]})', "type error"),
                      ('(save-tree "x.npz" {(keyword "0") [1 2]})', "value error"),
                      ('(save-tree "x.npz" {:w {}})', "value error"),
                      ('(save-tree "x.npz" {:w nil})', "type error"),
                      ('(save-tree "x.npz" (list (ones [2]) 3))', None),
                      ('(save-tree "x.npz" 3)', "type error")):
    rc, out, err = run(program)
    if kind:
        check(f"refused: {program}", rc != 0 and kind in err and not os.path.exists(at("x.npz")), err)
    else:
        check(f"saved: {program}", rc == 0 and sorted(np.load(at("x.npz")).files) == ["0", "1"], err)
        os.remove(at("x.npz"))

# ---- hostile archives: io errors, never a crash ----
good = open(at("np-deflated.npz"), "rb").read()
stored = open(at("np-stored.npz"), "rb").read()


def hostile(name, data, fns=("load-npz", "load-tree")):
    path = at(name)
    with open(path, "wb") as f:
        f.write(data)
    for fn in fns:
        rc, out, err = run(f'({fn} "{name}")')
        check(f"{fn} {name}: an io error", rc > 0 and "io error" in err and "internal" not in err,
              f"rc={rc}\n{err}")


hostile("empty.npz", b"")
hostile("not-zip.npz", b"\x93NUMPY" + b"\0" * 100)
for cut in (10, len(good) // 2, len(good) - 30, len(good) - 1):
    hostile(f"truncated-{cut}.npz", good[:cut])
# flipped bytes inside deflated and stored data: a CRC or a stream error
data = bytearray(good)
data[len(good) // 3] ^= 0xFF
hostile("corrupt-deflate.npz", bytes(data))
data = bytearray(stored)
header_end = stored.index(b"\n", stored.index(b"NUMPY")) + 1
data[header_end + 8] ^= 0x55
hostile("corrupt-crc.npz", bytes(data))


def zip_with(members, compression=zipfile.ZIP_STORED):
    path = at("build.npz")
    with zipfile.ZipFile(path, "w", compression) as zf:
        for name, payload in members:
            zf.writestr(name, payload)
    return open(path, "rb").read()


def npy_bytes(array):
    import io
    buf = io.BytesIO()
    np.save(buf, array)
    return buf.getvalue()


hostile("text-member.npz", zip_with([("notes.txt", b"hello")]))
hostile("not-npy-member.npz", zip_with([("x.npy", b"plain text, not an array")]))
hostile("u8-member.npz", zip_with([("x.npy", npy_bytes(np.arange(3, dtype=np.uint8)))]))
object_header = b"{'descr': '|O', 'fortran_order': False, 'shape': (2,), }"
object_header += b" " * (63 - (10 + len(object_header)) % 64) + b"\n"
hostile("object-member.npz", zip_with([("x.npy", b"\x93NUMPY\x01\x00" + len(object_header).to_bytes(2, "little") + object_header + b"\0" * 16)]))
hostile("short-member.npz", zip_with([("x.npy", npy_bytes(np.zeros(100, np.float32))[:-8])]))
# names that are fine for load-npz but form no tree
hostile("bad-tree.npz", zip_with([("a.npy", npy_bytes(np.zeros(1))), ("a/b.npy", npy_bytes(np.zeros(1)))]), ("load-tree",))
hostile("bad-positions.npz", zip_with([("v/0.npy", npy_bytes(np.zeros(1))), ("v/2.npy", npy_bytes(np.zeros(1)))]), ("load-tree",))
rc, out, err = run('(prn (count (load-npz "bad-tree.npz")))')
check("load-npz reads names that form no tree as they are", rc == 0 and out.strip() == "2", out + err)


def lie_about_size(data, size):
    """Rewrites the uncompressed size of the first member in its local header and in the
    central directory."""
    out = bytearray(data)
    local = out.index(b"PK\x03\x04")
    out[local + 22:local + 26] = size.to_bytes(4, "little")
    central = out.index(b"PK\x01\x02")
    out[central + 24:central + 28] = size.to_bytes(4, "little")
    return bytes(out)


big = zip_with([("x.npy", npy_bytes(np.zeros(1000, np.float32)))], zipfile.ZIP_DEFLATED)
hostile("huge-deflated.npz", lie_about_size(big, 0xFFFFFFF0))
hostile("huge-stored.npz", lie_about_size(stored, 0x7FFFFFF0))
# a .npy header declaring 2^40 elements inside a small deflated member
def npy_header(shape, descr="<f4"):
    import io
    buf = io.BytesIO()
    np.lib.format.write_array_header_1_0(buf, {"descr": descr, "fortran_order": False, "shape": shape})
    return buf.getvalue()


hostile("huge-shape.npz", zip_with([("x.npy", npy_header((1 << 40,)) + b"\0" * 64)], zipfile.ZIP_DEFLATED))
hostile("zeros-bomb.npz", zip_with([("x.npy", npy_header((1 << 28,)) + b"\0" * 4096)], zipfile.ZIP_DEFLATED))
rc, out, err = run('(load-npz "/dev/null")')
check("load-npz of a device: an io error", rc > 0 and "io error" in err, err)
rc, out, err = run('(load-npz "missing.npz")')
check("load-npz of a missing file: an io error", rc > 0 and "io error" in err, err)

sys.exit(report())
