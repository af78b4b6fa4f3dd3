#!/usr/bin/env python3
"""tests/difftest/test_difftest.py — the differential-testing tools themselves.

    test_difftest.py TSL TSL_REFERENCE

- `tsl-reference --json` is the operation table as data: every name of docs/primitives.md,
  with its call form and arguments;
- tools/progen, driven by it, calls every name within a few hundred programs, and the
  same seed gives the same programs;
- `tsl run --keep-going` reports a failing form and runs the next ones (exit status 1);
- tools/difftest's comparison catches a value, a dtype and an error position that differ,
  and accepts rounding within the tolerance;
- tools/reduce shrinks a program while a check holds, to the few forms it needs.
"""
import importlib.machinery
import importlib.util
import json
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TSL, REFERENCE = sys.argv[1], sys.argv[2]
failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)


def load(name):
    path = os.path.join(ROOT, "tools", name)
    loader = importlib.machinery.SourceFileLoader(name, path)
    spec = importlib.util.spec_from_loader(name, loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


tmp = tempfile.mkdtemp(prefix="test-difftest-")
ops = subprocess.run([REFERENCE, "--json"], stdout=subprocess.PIPE, check=True).stdout
table = json.loads(ops)
names = [n["name"] for n in table["names"]]
documented = re.findall(r"^\| `([^`]+)` \| `\(", open(os.path.join(ROOT, "docs/primitives.md")).read(), re.M)
documented = [d.replace("\\|", "|") for d in documented]
check(names == documented, "tsl-reference --json lists the names of docs/primitives.md, in order")
check(all(n["form"] and isinstance(n["args"], list) for n in table["names"]), "every name has a call form and arguments")
ops_path = os.path.join(tmp, "ops.json")
open(ops_path, "wb").write(ops)

progen = [sys.executable, os.path.join(ROOT, "tools/progen"), "--ops", ops_path, "--count", "300", "--coverage"]
a = subprocess.run(progen + ["--seed", "5"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
b = subprocess.run(progen + ["--seed", "5"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
check(a.returncode == 0 and a.stdout == b.stdout, "progen: the same seed gives the same programs")
check(("covered %d of %d names" % (len(names), len(names))) in a.stderr, "progen calls every name: " + a.stderr.strip())

# --keep-going: the form after a failing one runs; the status says something failed
prog = os.path.join(tmp, "keep.tsl")
open(prog, "w").write('(println "one")\n(get [1 2] 5)\n(println "two")\n')
r = subprocess.run([TSL, "run", "--keep-going", prog], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
check(r.returncode == 1 and r.stdout == "one\ntwo\n" and "2:1: value error" in r.stderr,
      "tsl run --keep-going runs the forms after a failing one, exit 1")
r = subprocess.run([TSL, "run", prog], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
check(r.returncode == 1 and r.stdout == "one\n", "tsl run without it stops at the failing form")

# the driver's comparison
difftest = load("difftest")
meta = {"exact": False, "k": 1, "tc": False, "dtypes": ["f32"], "kind": "plain"}
v = lambda *leaves: ("value", [list(l) for l in leaves])
check(difftest.compare(v(("f32", [2], [1.0, 2.0])), v(("f32", [2], [1.0, 2.0000001])), "cpu", meta) == "",
      "a rounding difference within the tolerance agrees")
check(difftest.compare(v(("f32", [2], [1.0, 2.0])), v(("f32", [2], [1.0, 2.5])), "cpu", meta)[0] == "value",
      "a wrong element is a disagreement")
check(difftest.compare(v(("f32", [2], [1.0, 2.0])), v(("f32", [2], [1.0, 2.0000001])), "cpu",
                       dict(meta, exact=True))[0] == "value", "a bit-exact program must agree bit for bit")
check(difftest.compare(v(("i64", [1], [3])), v(("i32", [1], [3])), "interp", meta)[0] == "dtype",
      "a different dtype is a disagreement")
e1 = ("error", "shape", 3, 5, "matmul cannot contract")
check(difftest.compare(e1, ("error", "shape", 3, 9, "matmul cannot contract"), "tc", meta)[0] == "error",
      "an error at another position is a disagreement")
check(difftest.compare(e1, e1, "tc", meta) == "", "the same error agrees")
out = difftest.parse_output("@run 1 eager\n@value 1 eager 1\n@leaf :f32 [2 2]\nf32[4] [1 nan\n -inf 2.5e-08]\n"
                            "@run 1 cpu\nx.tsl:3:5: shape error: no\n  (f)\n  ^\n")
check(out[(1, "eager")] == ("value", [["f32", [2, 2], out[(1, "eager")][1][0][2]]]) and
      len(out[(1, "eager")][1][0][2]) == 4 and out[(1, "cpu")][:4] == ("error", "shape", 3, 5),
      "the driver reads values over several lines, and errors")

# :tc programs marked tc_unbounded (an inverse, a division... of a contraction's result)
# are compared on :tc by structure only; every other engine still compares their values
unbounded = dict(meta, tc=True, tc_amplified=True, tc_unbounded=True)
check(difftest.compare(v(("f32", [2], [0.0, 1.0])), v(("f32", [2], [1.0, 1.0])), "tc", unbounded) == "",
      "tc_unbounded: any value agrees on :tc")
check(difftest.compare(v(("f32", [2], [0.0, 1.0])), v(("f32", [2], [1.0, 1.0])), "cpu", unbounded)[0] == "value",
      "tc_unbounded: :cpu still compares values")
check(difftest.compare(v(("f32", [2], [0.0, 1.0])), v(("f32", [1, 2], [1.0, 1.0])), "tc", unbounded)[0] == "shape",
      "tc_unbounded: :tc still compares shapes")
check(difftest.compare(v(("f32", [2], [0.0, 1.0])), v(("f32", [2], [1.0, 1.0])), "tc",
                       dict(unbounded, tc_unbounded=False))[0] == "value", "tc_amplified alone: within 25 %")

# progen's marking: an operation of TC_UNBOUNDED applied to a contraction's result marks the
# program, one of TC_BOUNDED marks nothing, any other tc_amplified only
progen_mod = load("progen")
by_name = {n["name"]: n for n in table["names"]}
fed = progen_mod.E("(matmul a b)", "f32", (3, 3), False, tc=True)
marks = {}
for name in ("inv", "/", "+", "exp"):
    for seed in range(200):
        gen = progen_mod.Gen(table, progen_mod.random.Random(seed))
        gen.names = [by_name[name]]
        gen.frames.append([])
        gen.expr([fed], 2)
        if name in gen.ops_used:
            marks[name] = (gen.tc_amplified, gen.tc_unbounded)
            break
check(marks == {"inv": (True, True), "/": (True, True), "+": (False, False), "exp": (True, False)},
      "progen marks inv and / of a contraction unbounded, exp amplified, + neither: %s" % marks)
# a derivative of (sum (* o o)) with o from a contraction: 2·Σ o·ȯ cancels, so amplified
kinds = set()
for seed in range(40):
    gen = progen_mod.Gen(table, progen_mod.random.Random(seed))
    gen.expr = lambda env, depth: progen_mod.E("(matmul x0 (ones [2 2]))", "f32", (2, 2), False, tc=True)
    m = json.loads(re.search(r"@meta \d+ (.*)", progen_mod.program(gen, 0, table)).group(1))
    kinds.add((m["kind"] in ("grad", "vjp", "jvp", "jacobian"), m["tc_amplified"]))
check((True, True) in kinds and (True, False) not in kinds,
      "progen marks a derivative of a contraction's result amplified: %s" % sorted(kinds))

# the minimiser: keeps what the check needs, drops the rest
big = os.path.join(tmp, "big.tsl")
open(big, "w").write("(def a (ones [3 4]))\n(def b (+ a 2))\n(defn f [x y] (let [z (* x 4)] (sum (log (- y z)))))\n"
                     "(println (f a b))\n(println (shape b))\n")
check_cmd = "sh -c '%s run \"$0\" 2>/dev/null | grep -q nan'" % TSL
r = subprocess.run([sys.executable, os.path.join(ROOT, "tools/reduce"), big, "--check", check_cmd, "-o",
                    os.path.join(tmp, "small.tsl")], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
small = r.stdout
check(r.returncode == 0 and "log" in small and "shape" not in small and len(small) < len(open(big).read()) * 2 // 3,
      "tools/reduce shrinks a program to what the check needs: " + small.strip().replace("\n", " | "))

print("%d passed, %d failed" % (21 - len(failures), len(failures)))
sys.exit(1 if failures else 0)
