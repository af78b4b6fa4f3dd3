#!/usr/bin/env python3
"""Drives the real `tsl` binary from the command line: options, `tsl run`, `tsl check`,
error reports, exit statuses and malformed input.

usage: test_cli.py PATH_TO_TSL

Every check is independent; each failure is printed, and the exit status is 1 if any
check failed. Standard library only.
"""
import json
import os
import random
import re
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "harness"))
from checks import check, report, tsl_binary  # noqa: E402

TSL = tsl_binary("test_cli.py")
BUDGET = 55.0  # past this many seconds in all, timeouts shrink so a hang fails fast
STARTED = time.monotonic()


def clip(text, limit=600):
    return text if len(text) <= limit else text[:limit] + f"... [{len(text) - limit} more chars]"


class Result:
    def __init__(self, rc, out, err, seconds):
        self.rc, self.out, self.err, self.seconds = rc, out, err, seconds

    def __str__(self):
        return f"exit status: {self.rc}\nstdout: {clip(self.out)!r}\nstderr: {clip(self.err)!r}"


def tsl(*args, stdin=b"", timeout=30, env=None):
    """Runs tsl with `args` in the work directory; never raises on timeout."""
    start = time.monotonic()
    timeout = min(timeout, max(3.0, BUDGET - (start - STARTED)))
    try:
        p = subprocess.run([TSL, *args], input=stdin, capture_output=True, cwd=WORK,
                           timeout=timeout, env=env)
        rc = p.returncode
        out, err = p.stdout, p.stderr
    except subprocess.TimeoutExpired as e:
        rc = "timeout"
        out, err = e.stdout or b"", e.stderr or b""
    return Result(rc, out.decode("utf-8", "replace"), err.decode("utf-8", "replace"),
                  time.monotonic() - start)


def write(name, content):
    path = os.path.join(WORK, name)
    with open(path, "wb") as f:
        f.write(content.encode() if isinstance(content, str) else content)
    return name


def caret_column(lines, headline_index):
    """Column (1-based) of the caret line following a headline and its source line."""
    if len(lines) < headline_index + 3:
        return None
    caret = lines[headline_index + 2]
    return caret.index("^") + 1 if "^" in caret else None


def check_report(name, r, file, line, col, kind, message, source_line, exit_status=1):
    """Checks `file:line:col: kind error: message...`, then the source line, then a caret."""
    lines = r.err.split("\n")
    prefix = f"{file}:{line}:{col}: {kind} error: {message}"
    heads = [i for i, l in enumerate(lines) if l.startswith(prefix)]
    ok = r.rc == exit_status and bool(heads)
    if ok:
        i = heads[0]
        ok = (len(lines) > i + 2 and lines[i + 1] == source_line
              and caret_column(lines, i) == col)
    check(name, ok, f"expected exit {exit_status} and stderr starting with {prefix!r}, "
                    f"then {source_line!r}, then a caret at column {col}\n{r}")


def check_no_crash(name, r, want="syntax error"):
    check(name, r.rc == 1 and want in r.err,
          f"expected exit 1 and {want!r} on stderr (no crash, no hang)\n{r}")


def main():
    # --- options ------------------------------------------------------------------------
    for flag in ("--help", "-h"):
        r = tsl(flag)
        check(f"{flag} exits 0 and shows usage with run/check",
              r.rc == 0 and "usage" in r.out.lower() and "run" in r.out and "check" in r.out
              and "--max-depth" in r.out, str(r))
    r = tsl("--version")
    check("--version exits 0 and prints 'tsl X.Y.Z'",
          r.rc == 0 and re.fullmatch(r"tsl \d+\.\d+\.\d+\S*\n", r.out) is not None, str(r))
    r = tsl("--no-such-option")
    check("an unknown option exits 2 and names it",
          r.rc == 2 and "--no-such-option" in r.err, str(r))
    r = tsl("frobnicate")
    check("an unknown command exits 2 and names it", r.rc == 2 and "frobnicate" in r.err, str(r))
    r = tsl("run")
    check("'run' without a file exits 2", r.rc == 2 and "usage" in r.err, str(r))
    r = tsl("check", "a.tsl", "b.tsl")
    check("'check' with two files exits 2", r.rc == 2, str(r))
    for bad in ("x", "0", "-5", "99999999999"):
        r = tsl("--max-depth", bad, "run", "nothing.tsl")
        check(f"--max-depth {bad} is refused with exit 2", r.rc == 2, str(r))
    r = tsl("--max-depth")
    check("--max-depth without a value exits 2", r.rc == 2, str(r))

    # --- run with arguments ---------------------------------------------------------------
    args = write("args.tsl", "(prn *args*)\n")
    r = tsl("run", args, "a", "b")
    check("run FILE a b binds *args* to [\"a\" \"b\"]", r.rc == 0 and r.out == '["a" "b"]\n', str(r))
    r = tsl("run", args)
    check("run FILE without arguments binds *args* to []", r.rc == 0 and r.out == "[]\n", str(r))
    r = tsl("run", args, "--max-depth", "-x", "")
    check("arguments after FILE (even option-like ones) belong to the program",
          r.rc == 0 and r.out == '["--max-depth" "-x" ""]\n', str(r))

    # --- syntax error: unclosed paren on line 3 ---------------------------------------------
    unclosed = write("unclosed.tsl", "(def x 1)\n(println x)\n  (defn f [y]\n    (+ y 1)\n\n")
    r = tsl("run", unclosed)
    check_report("unclosed '(' on line 3 is reported at 3:3 with source line and caret", r,
                 unclosed, 3, 3, "syntax", "unclosed '('", "  (defn f [y]")
    r = tsl("check", unclosed)
    check_report("'check' reports the unclosed '(' the same way", r,
                 unclosed, 3, 3, "syntax", "unclosed '('", "  (defn f [y]")

    # --- loop/recur in constant stack -----------------------------------------------------
    loop = write("loop.tsl", "(println (loop [i 0] (if (< i 1000000) (recur (inc i)) i)))\n")
    r = tsl("run", loop)
    check("10^6 iterations of loop/recur finish and print the count",
          r.rc == 0 and r.out == "1000000\n", str(r))

    # --- call depth ------------------------------------------------------------------------
    deep = write("deep.tsl", "(defn f [n] (+ 1 (f n)))\n(f 1)\n")
    r = tsl("run", deep)
    check_report("unbounded recursion: runtime error: stack depth exceeded at the call (1:18)", r,
                 deep, 1, 18, "runtime", "stack depth exceeded", "(defn f [n] (+ 1 (f n)))")
    rec = "(defn f [n] (if (= n 0) 0 (+ 1 (f (- n 1)))))\n(println (f {}))\n"
    r150 = write("rec150.tsl", rec.format(150))
    r50 = write("rec50.tsl", rec.format(50))
    r9000 = write("rec9000.tsl", rec.format(9000))
    r = tsl("--max-depth", "100", "run", r150)
    check("--max-depth 100: recursion of depth 150 fails with stack depth exceeded",
          r.rc == 1 and re.search(r"^rec150\.tsl:\d+:\d+: runtime error: stack depth exceeded",
                                  r.err, re.M) is not None and r.out == "", str(r))
    r = tsl("--max-depth", "100", "run", r50)
    check("--max-depth 100: recursion of depth 50 succeeds", r.rc == 0 and r.out == "50\n", str(r))
    r = tsl("run", r9000)
    check("default limit: recursion of depth 9000 succeeds", r.rc == 0 and r.out == "9000\n", str(r))
    r = tsl("--max-depth", "1000000", "run", deep, timeout=45)
    check("--max-depth 1000000: unbounded recursion still stops cleanly with "
          "'file:line:col: runtime error: stack depth exceeded' (native stack guard)",
          r.rc == 1 and re.search(r"^deep\.tsl:\d+:\d+: runtime error: stack depth exceeded",
                                  r.err, re.M) is not None, str(r))

    # --- error reports and kept output --------------------------------------------------------
    err = write("err.tsl", '(println "before")\n(println (+ 1 nope))\n(println "after")\n')
    r = tsl("run", err)
    check_report("name error: file:line:col, source line, caret", r,
                 err, 2, 15, "name", "unbound symbol 'nope'", "(println (+ 1 nope))")
    check("stdout printed before an error is kept, nothing after it runs",
          r.out == "before\n", str(r))
    check("errors go to stderr, not stdout", "error" not in r.out, str(r))
    typ = write("type.tsl", '(println "one")\n  (1 2)\n')
    r = tsl("run", typ)
    check_report("type error: calling a number points at its '('", r,
                 typ, 2, 3, "type", "1 is not a function", "  (1 2)")
    asrt = write("assert.tsl", '(assert (= 1 2) "boom")\n')
    r = tsl("run", asrt)
    check_report("assert error carries its message", r,
                 asrt, 1, 1, "assert", "boom", '(assert (= 1 2) "boom")')

    # --- standard input -----------------------------------------------------------------------
    r = tsl("run", "-", stdin=b"(println (+ 40 2))\n")
    check("run - reads the program from standard input", r.rc == 0 and r.out == "42\n", str(r))
    r = tsl("run", "-", "x", "y", stdin=b"(prn *args*)\n")
    check("run - ARGS binds *args*", r.rc == 0 and r.out == '["x" "y"]\n', str(r))
    r = tsl("run", "-", stdin=b"(println 1)\n(car 2)\n")
    check("an error in a stdin program names <stdin>",
          r.rc == 1 and r.out == "1\n" and r.err.startswith("<stdin>:2:"), str(r))

    # --- exit -------------------------------------------------------------------------------------
    ex = write("exit.tsl", '(println "bye")\n(exit 3)\n(println "not reached")\n')
    r = tsl("run", ex)
    check("(exit 3) exits with status 3, output before it kept",
          r.rc == 3 and r.out == "bye\n", str(r))
    r = tsl("run", "-", stdin=b"(exit 0)\n(println \"no\")\n")
    check("(exit 0) exits 0 immediately", r.rc == 0 and r.out == "", str(r))

    # --- check ------------------------------------------------------------------------------------
    two = write("two.tsl",
                "(defn f [n]\n"
                "  (+ 1 (recur n)))\n"
                "\n"
                "(defn g [x]\n"
                "  (* x undefined-thing))\n"
                "\n"
                '(println "side effect")\n')
    r = tsl("check", two)
    check("check reports both independent errors (misplaced recur, unbound name), exit 1",
          r.rc == 1
          and re.search(r"^two\.tsl:2:8: syntax error: .*recur", r.err, re.M) is not None
          and "two.tsl:5:8: name error: unbound symbol 'undefined-thing'" in r.err, str(r))
    check("check does not run the program (no side effects on stdout)",
          "side effect" not in r.out, str(r))
    ok_file = write("good.tsl",
                    "(defmacro twice [x] `(do ~x ~x))\n"
                    "(defn sq [x] (* x x))\n"
                    "(defn use-later [] (defined-below 2))\n"
                    "(defn defined-below [y] (sq y))\n"
                    '(twice (println "SIDE-EFFECT" (sq 3)))\n'
                    "(exit 7)\n")
    r = tsl("check", ok_file)
    check("check of a correct file exits 0 without running it (no println, no exit 7)",
          r.rc == 0 and "SIDE-EFFECT" not in r.out and r.err == "", str(r))
    many = write("many.tsl", "(if)\n(when)\n(def z (fn [] zz))\n(defn c [x] (+ x (loop [i 0] (recur i) 1)))\n")
    r = tsl("check", many)
    check("check reports four errors in four forms",
          r.rc == 1 and all(f"many.tsl:{n}:" in r.err for n in (1, 2, 3, 4)), str(r))
    r = tsl("check", "-", stdin=b'(println "from stdin")\n')
    check("check - reads standard input and runs nothing", r.rc == 0 and r.out == "", str(r))

    # --- io errors ----------------------------------------------------------------------------------
    for cmd in ("run", "check"):
        r = tsl(cmd, "does-not-exist.tsl")
        check(f"{cmd} of a missing file: io error naming it, exit 1",
              r.rc == 1 and "io error" in r.err and "does-not-exist.tsl" in r.err, str(r))
    os.mkdir(os.path.join(WORK, "adir"))
    for cmd in ("run", "check"):
        r = tsl(cmd, "adir")
        check(f"{cmd} of a directory: io error, exit 1",
              r.rc == 1 and "io error" in r.err, str(r))

    # --- malformed input ------------------------------------------------------------------------------
    rng = random.Random(20240611)
    malformed = {
        "binary garbage": bytes(rng.randrange(256) for _ in range(8192)),
        "garbage starting with valid text": b"(println 1)\n" + bytes(rng.randrange(128, 256) for _ in range(512)),
        "invalid UTF-8 in a string": b'(println "caf\xe9 \xff\xfe")\n',
        "truncated UTF-8 sequence": b'(println "\xe2\x82")\n',
        "UTF-16 surrogate encoded in UTF-8": b'(println "\xed\xa0\x80")\n',
        "overlong UTF-8 encoding": b'(println "\xc0\xaf")\n',
        "NUL bytes": b"\x00\x00(\x00)\n",
        "100000 nested parens (closed)": b"(" * 100000 + b")" * 100000 + b"\n",
        "100000 nested parens (unclosed)": b"(" * 100000 + b"\n",
        "100000 nested brackets": b"[" * 100000 + b"]" * 100000 + b"\n",
        "100000 nested braces": b"{" * 100000 + b"\n",
        "100000 quote prefixes": b"'" * 100000 + b"x\n",
        "100000 stray closers": b")" * 100000 + b"\n",
        "unterminated string": b'(println "abc\n',
    }
    for i, (what, data) in enumerate(malformed.items()):
        name = write(f"malformed{i}.tsl", data)
        for cmd in ("run", "check"):
            r = tsl(cmd, name)
            check_no_crash(f"{cmd}: {what} gives a syntax error, exit 1", r)
            if cmd == "run":
                check(f"{cmd}: {what}: nothing printed to stdout", r.out == "", str(r))
    r = tsl("run", "-", stdin=bytes(rng.randrange(256) for _ in range(4096)))
    check_no_crash("run -: binary garbage on stdin gives a syntax error, exit 1", r)
    r = tsl("run", write("nul.tsl", b"\x00\x00(\x00)\n"))
    head = r.err.split("\n")[0]
    check("a NUL byte is named by its code point and never echoed raw",
          head.endswith("syntax error: unexpected control character U+0000") and "\x00" not in r.err,
          f"headline: {head!r}\n{r}")

    # --- tsl compile: IR of a function for a signature -------------------------------------------
    model = write("model.tsl", "(defn predict [w x] (relu (matmul x w)))\n"
                              "(println \"the top level must not run\")\n"
                              "(defn loss [w x y] (mean (square (- (predict w x) y))))\n")
    r = tsl("compile", model, "--entry", "loss", "--sig", "w:f32[64,10],x:f32[n,64],y:f32[n,10]")
    check("compile --emit=ir prints the entry's IR with symbolic sizes, without running the file",
          r.rc == 0 and r.out.startswith("func @loss(%w: f32[64,10], %x: f32[n,64], %y: f32[n,10]) -> (f32)")
          and "matmul %x, %w : f32[n,10]" in r.out and "the top level" not in r.out + r.err, str(r))
    check("compile IR carries the user's spans", f'loc("{model}":1:27-1:38)' in r.out, str(r))
    r = tsl("compile", model, "--entry", "loss", "--sig", "f32[64,10],f32[5,63],f32[5,10]")
    check("compile reports a shape error at the user's span, exit 1",
          r.rc == 1 and r.err.startswith(f"{model}:1:27: shape error: matmul cannot contract f32[5,63] with f32[64,10]"),
          str(r))
    r = tsl("compile", model, "--entry", "predict", "--sig", "w:f32[3,2],x:f32[4,3]", "--emit=graph")
    check("compile --emit=graph prints DOT", r.rc == 0 and r.out.startswith('digraph "predict" {'), str(r))
    out = os.path.join(WORK, "out.ir")
    r = tsl("compile", model, "--entry", "predict", "--sig", "w:f32[3,2],x:f32[4,3]", "-o", out)
    check("compile -o writes the IR to the file, nothing to stdout",
          r.rc == 0 and r.out == "" and open(out).read().startswith("func @predict"), str(r))
    r = tsl("compile", model, "--entry", "predict", "--sig", "w:f32[3,2],x:f32[4,3]", "-o",
            os.path.join(WORK, "no-such-dir", "out.ir"))
    check("compile -o into a missing directory is an io error, exit 1", r.rc == 1 and "io error" in r.err, str(r))
    r = tsl("compile", model, "--entry", "nope", "--sig", "f32[2]")
    check("compile of an undefined entry is a name error", r.rc == 1 and "name error" in r.err, str(r))
    for bad in ("x:f33[2]", "x:f32[2", ":f32", "x:f32[-1]"):
        r = tsl("compile", model, "--entry", "predict", "--sig", bad)
        check(f"compile --sig {bad!r} is a value error naming it", r.rc == 1 and "signature" in r.err, str(r))
    r = tsl("compile", model, "--entry", "predict")
    check("compile without --sig exits 2 with usage", r.rc == 2 and "usage" in r.err, str(r))
    r = tsl("--print-ir-after=simplify", "--time-passes", "--verify-each", "compile", model, "--entry",
            "predict", "--sig", "f32[3,2],f32[4,3]")
    check("--print-ir-after=simplify and --time-passes report on stderr",
          r.rc == 0 and r.err.count("// -----// IR after simplify //----- //") == 2
          and "pass timings" in r.err and "fold-constants" in r.err, str(r))
    r = tsl("--print-ir-after=no-such-pass", "compile", model)
    check("--print-ir-after with an unknown pass exits 2 and lists the passes",
          r.rc == 2 and "no-such-pass" in r.err and "simplify" in r.err, str(r))
    # --- tsl compile: native code for :cpu ------------------------------------------------------
    sig = "w:f32[3,2],x:f32[4,3]"
    r = tsl("compile", model, "--entry", "predict", "--sig", sig, "--emit=llvm")
    check("compile --emit=llvm prints LLVM IR with the C entry and its error function",
          r.rc == 0 and re.search(r"define .*i32 @predict\(ptr", r.out) and "@predict_error" in r.out
          and '"target-cpu"="x86-64-v3"' in r.out, clip(str(r)))
    r = tsl("compile", model, "--entry", "predict", "--sig", sig, "--emit=asm", "--target-cpu=x86-64")
    check("compile --emit=asm --target-cpu=x86-64 prints assembly for baseline x86-64 (no AVX)",
          r.rc == 0 and "predict:" in r.out and "ymm" not in r.out, clip(str(r)))
    r = tsl("compile", model, "--entry", "predict", "--sig", sig, "--emit=asm", "--target-cpu=no-such-cpu")
    check("compile --target-cpu with an unknown CPU is a value error naming it",
          r.rc == 1 and "value error: unknown CPU 'no-such-cpu'" in r.err, str(r))
    for cpu in ("i686", "i386", "pentium4", "yonah", "geode"):
        r = tsl("compile", model, "--entry", "predict", "--sig", sig, "--emit=asm", f"--target-cpu={cpu}")
        check(f"compile --target-cpu={cpu} (32-bit only) is refused like an unknown CPU, not an LLVM abort",
              r.rc == 1 and f"value error: CPU '{cpu}' cannot run 64-bit code" in r.err, str(r))
    r = tsl("compile", model, "--entry", "predict", "--sig", sig, "--emit=asm", "--target-cpu=core2")
    check("compile --target-cpu=core2 (an old 64-bit CPU) still compiles", r.rc == 0 and "predict:" in r.out, clip(str(r)))
    r = tsl("compile", model, "--entry", "predict", "--sig", "w:f32[3 2],x:f32[4,3]")
    check("compile --sig with a space inside a size is a value error naming the item (not f32[32])",
          r.rc == 1 and "value error: bad signature item 'w:f32[3 2]'" in r.err, str(r))
    r = tsl("compile", model, "--entry", "predict", "--sig", "w: f32[3, 2], x: f32[4, 3]")
    check("compile --sig allows spaces after commas and colons",
          r.rc == 0 and "f32[3,2]" in r.out and "f32[4,3]" in r.out, str(r))
    r = tsl("compile", model, "--entry", "predict", "--sig", sig, "--emit=header")
    check("compile --emit=header declares the C entry over buffers and its error function",
          r.rc == 0 and "int32_t predict(const float* w, const float* x, float* result0);" in r.out
          and "const char* predict_error(void);" in r.out and "predict(w: f32[3,2], x: f32[4,3]) -> (f32[4,2])" in r.out,
          str(r))
    tree_model = write("tree-model.tsl", "(defn predict [p x] (+ (matmul x (:w p)) (:b p)))\n")
    r = tsl("compile", tree_model, "--entry", "predict", "--sig", "p:{:w f32[784,10] :b f32[10]},x:f32[32,784]",
            "--emit=header")
    check("compile --sig takes a tree; the header passes its leaves in the order written, named by path",
          r.rc == 0 and "int32_t predict(const float* p_w, const float* p_b, const float* x, float* result0);" in r.out,
          str(r))
    r = tsl("compile", tree_model, "--entry", "predict", "--sig", "p:{:b f32[10] :w f32[784,10]},x:f32[32,784]")
    check("compile --sig with a tree lowers the function with one parameter per leaf",
          r.rc == 0 and re.search(r"%p\.b: f32\[10\], %p\.w: f32\[784,10\], %x: f32\[32,784\]", r.out), str(r))
    r = tsl("compile", tree_model, "--entry", "predict", "--sig", "p:{:w f32[784,10]},x:f32[32,784]")
    check("compile --sig with a tree missing a key the function reads is an error, not a crash",
          r.rc == 1 and "error" in r.err, str(r))
    r = tsl("compile", model, "--entry", "predict", "--sig", sig, "--emit=lib")
    check("compile --emit=lib without -o exits 2 (a binary is not printed)", r.rc == 2 and "-o" in r.err, str(r))
    lib = os.path.join(WORK, "libpredict.so")
    obj = os.path.join(WORK, "predict.o")
    r = tsl("compile", model, "--entry", "predict", "--sig", sig, "--emit=lib", "-O3", "-o", lib)
    r2 = tsl("compile", model, "--entry", "predict", "--sig", sig, "--emit=obj", "-O0", "-o", obj)
    check("compile --emit=lib and --emit=obj write an ELF shared library and object",
          r.rc == 0 and r2.rc == 0 and open(lib, "rb").read(4) == b"\x7fELF" and open(obj, "rb").read(4) == b"\x7fELF",
          f"{r}\n{r2}")
    r = tsl("compile", model, "--entry", "loss", "--sig", "w:f32[64,10],x:f32[n,64],y:f32[n,10]", "--emit=lib", "-o", lib)
    check("compile of native code for a symbolic size is a value error",
          r.rc == 1 and "value error" in r.err and "symbolic size" in r.err, str(r))
    mse = write("mse.tsl", "(defn f [x y] (mse x y))\n")
    r = tsl("compile", mse, "--entry", "f", "--sig", "x:f32[2,2],y:f32[2,2]", "--emit=lib", "-o", lib)
    check("compile --emit=lib of an operation that only an eager kernel runs names it, at its span",
          r.rc == 1 and f"{mse}:1:15: value error: cpu: mse" in r.err and "ahead of time" in r.err, str(r))
    fallback = write("fallback.tsl", "(def f (jit (fn [x y] (relu (mse x y)))))\n(println (f (ones [2 2]) (zeros [2 2])))\n")
    r = tsl("--print-fallbacks", "run", fallback)
    check("--print-fallbacks lists each operation jit :cpu runs on its eager kernel, with its span",
          r.rc == 0 and f"fallback: {fallback}:1:29: mse (f32[2,2], f32[2,2]) -> f32" in r.err
          and "1.0" in r.out, str(r))
    r = tsl("--print-memory-plan", "compile", model, "--entry", "loss", "--sig", "w:f32[64,10],x:f32[8,64],y:f32[8,10]")
    check("--print-memory-plan prints each buffer's home, offset and live range, and the peak",
          r.rc == 0 and "// memory plan of @loss: peak 320 bytes of arena" in r.err
          and re.search(r"%0 +f32\[8,10\] +arena +0 +320  1\.\.2", r.err), str(r))
    r = tsl("compile", model, "--entry", "loss", "--sig", "w:f32[64,10],x:f32[8,64],y:f32[8,10]", "--pass=inline",
            "--pass=fuse", "--no-locations")
    check("compile --pass runs the passes named, in order, instead of the pipeline (fuse groups the loss)",
          r.rc == 0 and "fused reduction" in r.out, str(r))
    r = tsl("compile", model, "--entry", "loss", "--sig", "f32[2]", "--pass=no-such-pass")
    check("compile --pass with an unknown pass exits 2 and lists them", r.rc == 2 and "plan-memory" in r.err, str(r))
    r = tsl("--time-passes", "run", jitted_source := write("timed.tsl", "((jit (fn [x] (* x 2))) (ones [4]))\n"))
    check("--time-passes includes LLVM's optimisation and code generation",
          r.rc == 0 and "llvm-optimization" in r.err and "llvm-code-generation" in r.err, str(r))
    jitted = write("jit.tsl", "(def f (jit (fn [x] (* x 2))))\n(f (ones [2]))\n(f (ones [3]))\n")
    r = tsl("--explain-recompile", "run", jitted)
    check("--explain-recompile says which argument changed",
          r.rc == 0 and "compiles version 2" in r.err and "shape f32[3], was f32[2]" in r.err, str(r))
    r = tsl(stdin=b"(defn f [x] (+ x 1))\n:ir (f (ones [2]))\n")
    check("piped :ir prints the IR of a call",
          r.rc == 0 and "func @f(%x: f32[2])" in r.out and "add %x" in r.out, str(r))

    # --- ahead of time: the packed convolution, its weight cotangent and pooling in a library --
    import ctypes
    from array import array
    kernels = write("kernels.tsl", "(defn conv [x w] (relu (conv2d x w :padding 1)))\n"
                    "(defn dw [x w dy] ((grad (fn [w] (sum (* (conv2d x w :padding 1) dy)))) w))\n"
                    "(defn pool [x] (max-pool2d x :kernel 2))\n")
    rng = random.Random(5)
    N, C, H, W, O = 2, 2, 5, 6, 3
    xs = array("f", [rng.uniform(-1, 1) for _ in range(N * C * H * W)])
    ws = array("f", [rng.uniform(-1, 1) for _ in range(O * C * 9)])
    dys = array("f", [rng.uniform(-1, 1) for _ in range(N * O * H * W)])

    def at(a, *index_and_dims):  # a[i0, i1, ...] of a row-major array with these dims
        index, dims = index_and_dims[:len(index_and_dims) // 2], index_and_dims[len(index_and_dims) // 2:]
        flat = 0
        for i, d in zip(index, dims):
            flat = flat * d + i
        return a[flat]

    def conv_ref(b, o, i, j):
        return sum(at(xs, b, c, i + ki - 1, j + kj - 1, N, C, H, W) * at(ws, o, c, ki, kj, O, C, 3, 3)
                   for c in range(C) for ki in range(3) for kj in range(3)
                   if 0 <= i + ki - 1 < H and 0 <= j + kj - 1 < W)

    def library(entry, sig):
        so = os.path.join(WORK, entry + ".so")
        r = tsl("compile", kernels, "--entry", entry, "--sig", sig, "--emit=lib", "-o", so)
        return r, (ctypes.CDLL(so) if r.rc == 0 else None)

    def buffer(a):
        return (ctypes.c_float * len(a)).from_buffer(a)

    r, lib = library("conv", f"x:f32[{N},{C},{H},{W}],w:f32[{O},{C},3,3]")
    out = array("f", [0.0] * (N * O * H * W))
    status = lib.conv(buffer(xs), buffer(ws), buffer(out)) if lib else -1
    want = [max(0.0, conv_ref(b, o, i, j)) for b in range(N) for o in range(O) for i in range(H) for j in range(W)]
    check("an ahead-of-time conv2d with relu matches a Python loop",
          status == 0 and max(abs(a - b) for a, b in zip(out, want)) < 1e-5, str(r))
    r, lib = library("dw", f"x:f32[{N},{C},{H},{W}],w:f32[{O},{C},3,3],dy:f32[{N},{O},{H},{W}]")
    out = array("f", [0.0] * (O * C * 9))
    status = lib.dw(buffer(xs), buffer(ws), buffer(dys), buffer(out)) if lib else -1
    want = [sum(at(dys, b, o, i, j, N, O, H, W) * at(xs, b, c, i + ki - 1, j + kj - 1, N, C, H, W)
                for b in range(N) for i in range(H) for j in range(W)
                if 0 <= i + ki - 1 < H and 0 <= j + kj - 1 < W)
            for o in range(O) for c in range(C) for ki in range(3) for kj in range(3)]
    check("an ahead-of-time weight cotangent of conv2d matches a Python loop",
          status == 0 and max(abs(a - b) for a, b in zip(out, want)) < 1e-4, str(r))
    r, lib = library("pool", f"x:f32[{N},{C},{H},{W}]")
    out = array("f", [0.0] * (N * C * (H // 2) * (W // 2)))
    status = lib.pool(buffer(xs), buffer(out)) if lib else -1
    want = [max(at(xs, b, c, 2 * i + di, 2 * j + dj, N, C, H, W) for di in range(2) for dj in range(2))
            for b in range(N) for c in range(C) for i in range(H // 2) for j in range(W // 2)]
    check("an ahead-of-time max-pool2d matches a Python loop", status == 0 and list(out) == want, str(r))

    # --- the emulated tensor core: statistics, traces, programs as text ------------------------
    write("tc.tsl", "(defn mm [a b] (matmul a b))\n"
                    "(def f (jit mm :target :tc))\n"
                    "(println (shape (f (ones [64 48]) (ones [48 32]))))\n")
    r = tsl("run", "--tc-stats", "--tc-trace=trace.json", "tc.tsl")
    stats = None
    try:
        stats = json.loads(r.err.strip().splitlines()[-1])
    except (ValueError, IndexError):
        pass
    check("tsl run --tc-stats prints the tensor core's counters as JSON",
          r.rc == 0 and stats is not None and stats["macs"] == 64 * 48 * 32
          and stats["cube_cycles"] <= stats["cycles"] <= stats["serial_cycles"]
          and set(stats["bytes"]) == {"gm_l1", "gm_ub", "l1_l0a", "l1_l0b", "l0c_gm", "l0c_ub", "ub_gm"}, str(r))
    # The JSON's keys are (tc-stats)'s, snake_case, at every level.
    write("keys.tsl", "(def f (jit (fn [a b] (matmul a b)) :target :tc))\n(f (ones [16 16]) (ones [16 16]))\n"
                      "(def s (tc-stats :total))\n"
                      "(println (str (keys s)))\n"
                      "(doseq [k [:bytes :busy :stall :peak :numerics]] (println (str k \" \" (keys (get s k)))))\n")
    r = tsl("run", "--tc-stats", "keys.tsl")
    lines = r.out.strip().splitlines()
    try:
        key_stats = json.loads(r.err.strip().splitlines()[-1])
    except (ValueError, IndexError):
        key_stats = None
    def snake(words):
        return [w.lstrip(":").replace("-", "_") for w in re.findall(r":[a-z0-9-]+", words)]
    want_nested = {line.split()[0].lstrip(":"): snake(" ".join(line.split()[1:])) for line in lines[1:]}
    check("--tc-stats JSON has (tc-stats)'s keys in snake_case, nested maps too",
          r.rc == 0 and key_stats is not None and sorted(key_stats) == sorted(snake(lines[0])) and len(want_nested) == 5
          and all(sorted(key_stats[k]) == sorted(v) for k, v in want_nested.items()), str(r))
    trace = None
    try:
        with open(os.path.join(WORK, "trace.json")) as f:
            trace = json.load(f)
    except (OSError, ValueError):
        pass
    boxes = [e for e in trace["traceEvents"] if e.get("ph") == "X"] if trace else []
    names = {e["args"]["name"] for e in trace["traceEvents"] if e.get("ph") == "M"} if trace else set()
    check("--tc-trace writes trace-event JSON: a box per instruction on its pipe's thread",
          trace is not None and boxes and {"MTE2", "MTE1", "CUBE", "FIXPIPE"} <= names
          and all(isinstance(e["ts"], int) and e["dur"] >= 0 and e["pid"] == 1 and 1 <= e["tid"] <= 6 for e in boxes)
          and any(e["name"] == "mmad" for e in boxes)
          and max(e["ts"] + e["dur"] for e in boxes) == stats["cycles"], str(r))
    # The same trace as an SVG timeline: well-formed XML, a lane per pipe that was busy, a
    # box (a rect with a tooltip) per instruction.
    r = tsl("run", "--tc-stats", "--tc-trace=trace.svg", "tc.tsl")
    svg_stats, root = None, None
    try:
        svg_stats = json.loads(r.err.strip().splitlines()[-1])
        root = ET.parse(os.path.join(WORK, "trace.svg")).getroot()
    except (ValueError, IndexError, OSError, ET.ParseError):
        pass
    ns = "{http://www.w3.org/2000/svg}"
    lanes = [t.text for t in root.iter(ns + "text") if t.get("class") == "lane"] if root is not None else []
    tips = [r_.find(ns + "title").text for r_ in root.iter(ns + "rect")
            if r_.find(ns + "title") is not None] if root is not None else []
    check("--tc-trace=FILE.svg writes the trace as an SVG timeline: lanes the busy pipes, a box per instruction",
          r.rc == 0 and svg_stats is not None and root is not None and root.tag == ns + "svg"
          and [l.lower() for l in lanes] == [k for k, v in svg_stats["busy"].items() if v > 0]
          and len(tips) == svg_stats["instructions"] and any(t.startswith("mmad ") for t in tips), str(r))

    # --- --pictures DIR: what the program shows, as numbered SVG files ---------------------------
    write("show.tsl", "(def f (jit (fn [a b] (matmul a b)) :target :tc))\n(f (ones [16 16]) (ones [16 16]))\n"
                      "(display (tc-trace))\n(display [1 2 3])\n(display \"plain\")\n"
                      "(display (layout-svg (ones [2 3])))\n(println \"done\")\n")
    r = tsl("run", "--pictures", "pics", "show.tsl")
    written = sorted(os.listdir(os.path.join(WORK, "pics"))) if os.path.isdir(os.path.join(WORK, "pics")) else []
    roots = []
    for name in written:
        try:
            roots.append(ET.parse(os.path.join(WORK, "pics", name)).getroot().tag)
        except ET.ParseError:
            roots.append(None)
    check("tsl run --pictures DIR writes each picture displayed as DIR/picture-N.svg and says so on stderr",
          r.rc == 0 and written == ["picture-001.svg", "picture-002.svg"] and roots == [ns + "svg"] * 2
          and r.err.splitlines() == ["tsl: wrote pics/picture-001.svg", "tsl: wrote pics/picture-002.svg"]
          and r.out.startswith("#<trace :tc ") and "i64[3] [1 2 3]\nplain\n<svg" in r.out
          and r.out.endswith("</svg>\n\ndone\n"), str(r))
    r = tsl("--pictures=replpics", stdin=b"(def f (jit (fn [a b] (matmul a b)) :target :tc))\n"
                                          b"(f (ones [16 16]) (ones [16 16]))\n(tc-trace)\n(+ 1 2)\n")
    check("the REPL with --pictures writes the picture of a value it prints",
          r.rc == 0 and "#<trace :tc " in r.out and r.err == "tsl: wrote replpics/picture-001.svg\n"
          and os.listdir(os.path.join(WORK, "replpics")) == ["picture-001.svg"], str(r))
    bindir = os.path.join(WORK, "fakebin")
    os.makedirs(bindir, exist_ok=True)
    write("fakebin/xdg-open", f"#!/bin/sh\necho \"$1\" >> {WORK}/opened\n")
    os.chmod(os.path.join(bindir, "xdg-open"), 0o755)
    r = tsl("run", "--pictures", "pics2", "--open", "show.tsl", env={**os.environ, "PATH": bindir + ":/usr/bin:/bin"})
    opened = []
    for _ in range(50):  # xdg-open runs detached
        if os.path.exists(os.path.join(WORK, "opened")):
            opened = open(os.path.join(WORK, "opened")).read().split()
            if len(opened) == 2:
                break
        time.sleep(0.05)
    check("--open starts xdg-open on each picture written",
          r.rc == 0 and sorted(opened) == ["pics2/picture-001.svg", "pics2/picture-002.svg"], str(r) + str(opened))
    r = tsl("run", "--pictures", "pics3", "--open", "show.tsl", env={**os.environ, "PATH": os.path.join(WORK, "nobin")})
    check("--open without xdg-open writes the pictures and says so once",
          r.rc == 0 and r.err.count("xdg-open is not installed") == 1 and r.err.count("tsl: wrote pics3/") == 2, str(r))
    r = tsl("run", "--pictures", "show.tsl/pics", "show.tsl")
    check("--pictures under a regular file says why on stderr and the program runs on",
          r.rc == 0 and r.out.endswith("done\n")
          and r.err.count("tsl: --pictures: cannot make the folder 'show.tsl/pics'") == 2, str(r))
    r = tsl("run", "--open", "show.tsl")
    check("--open alone is a usage error", r.rc == 2 and "give --pictures too" in r.err, str(r))

    r = tsl("compile", "tc.tsl", "--entry", "mm", "--sig", "a:f32[20,30],b:f32[30,40]", "--emit=tc", "-o", "mm.tc")
    r2 = tsl("tc-run", "mm.tc", "--out", "2=c.npy")
    ran = None
    try:
        ran = json.loads(r2.out)
    except ValueError:
        pass
    check("tsl compile --emit=tc writes a program tsl tc-run runs",
          r.rc == 0 and r2.rc == 0 and ran is not None and ran["macs"] == 20 * 30 * 40
          and os.path.exists(os.path.join(WORK, "c.npy")), str(r) + str(r2))
    program = open(os.path.join(WORK, "mm.tc")).read() if r.rc == 0 else ""
    # The first hand-over from MTE2 to MTE1 taken out: the load reads data nothing ordered.
    lines = program.split("\n")
    first = next((i for i, l in enumerate(lines) if l.startswith("wait_flag src=mte2 dst=mte1")), None)
    if first is not None:
        del lines[first]
        del lines[first - 1]
    write("race.tc", "\n".join(lines))
    r = tsl("tc-run", "race.tc")
    check("a hand-edited program that races fails naming the instruction and its line",
          r.rc == 1 and re.search(r"race\.tc:\d+:1: runtime error: tc: instruction \d+ \(load2d .*race: reads data MTE2 wrote",
                                  r.err) is not None, str(r))
    r = tsl("tc-run", "race.tc", "--races=count")
    check("tc-run --races=count counts the races instead", r.rc == 0 and '"races": ' in r.out
          and '"races": 0' not in r.out, str(r))
    write("bad.tc", ".gm %0 a f32 16 in\nmmad c=0 a=0 b=0 m=16 k=16\n")
    r = tsl("tc-run", "bad.tc")
    check("a malformed program is a syntax error with its position",
          r.rc == 1 and "bad.tc:2:1: syntax error: tc: mmad needs n=" in r.err, str(r))
    r = tsl("run", "--tc-device=910a", "--tc-stats", "tc.tsl")
    check("--tc-device=910a drains L0C through UB and MTE3 (no FIXPIPE)",
          r.rc == 0 and '"l0c_gm": 0' in r.err and '"ub_gm": 8192' in r.err, str(r))
    write("huge.tc", ".gm %0 a f32 1099511627776 in\n.gm %1 c f32 16 out\n")
    r = tsl("tc-run", "huge.tc")
    check("tc-run refuses GM tensors over 1 GiB with a value error at the .gm line's size",
          r.rc == 1 and "huge.tc:1:14: value error: tc-run: GM tensor %0 brings the program's GM tensors to "
          "4398046511104 bytes; tc-run allows 1 GiB" in r.err and "^~~~" in r.err, str(r))
    write("many.tc", ".gm %0 a f32 16 in\n.gm %1 b f32 134217728 in\n.gm %2 c f32 134217728 out\n")
    r = tsl("tc-run", "many.tc")
    check("tc-run points at the GM tensor that takes the program past 1 GiB",
          r.rc == 1 and "many.tc:3:14: value error: tc-run: GM tensor %2 brings the program's GM tensors to "
          "1073741888 bytes" in r.err, str(r))
    np_path = os.path.join(WORK, "short.npy")
    with open(np_path, "wb") as f:  # a .npy of 3 float32, written by hand
        header = "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }"
        header += " " * (63 - (10 + len(header)) % 64) + "\n"
        f.write(b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") + header.encode() + bytes(12))
    write("small.tc", "; a program\n.gm %0 a f32 16 in\n.gm %1 c f32 16 out\n")
    r = tsl("tc-run", "small.tc", "--in", "0=" + np_path)
    check("tc-run --in with a .npy of another size is a value error at the GM tensor's .gm line",
          r.rc == 1 and "small.tc:2:14: value error: tc-run: " in r.err and "but %0 is 16 elements of f32" in r.err, str(r))
    write("sizes.tc", ".gm %0 a f32 16 in\ncopy_gm_to_l1 dst=0 src=%0 rows=1099511627776 cols=1099511627776\n"
                      "mmad c=0 a=0 b=0 m=1099511627776 k=1099511627776 n=1099511627776\n")
    r = tsl("tc-run", "sizes.tc")
    check("absurd sizes in a program are an error naming the instruction, not a crash",
          r.rc == 1 and "sizes.tc:2:1: runtime error: tc: instruction 1 (copy_gm_to_l1" in r.err, str(r))
    write("noise.tc", bytes(random.Random(5).randrange(256) for _ in range(4000)))
    r = tsl("tc-run", "noise.tc")
    check("random bytes as a program are a syntax error", r.rc == 1 and "syntax error" in r.err, str(r))
    write("dev.txt", "preset = 910a\nl0a.bytes = 100\n")
    r = tsl("run", "--tc-device=dev.txt", "tc.tsl")
    check("a device file that does not validate is an io error at the file, line and column of the value",
          r.rc == 1 and "dev.txt:2:13: io error: l0a.bytes must hold a fractal" in r.err, str(r))
    write("slow.txt", "# a device whose latency would overflow the timing\nlatency = 9223372036854775807\n")
    r = tsl("run", "--tc-device=slow.txt", "tc.tsl")
    check("a device latency beyond its range is refused at its line, before anything is timed",
          r.rc == 1 and "slow.txt:2:11: io error: latency must be 0 to 1048576, got 9223372036854775807" in r.err
          and "cycles" not in r.err, str(r))

    # --- tsl without a terminal: a plain read-eval-print loop over stdin ------------------------
    r = tsl(stdin=b"(+ 1 2)\n(def x 41)\n(inc x)\nnope\n(+ 2 2)\n")
    check("tsl with piped stdin evaluates each form, survives errors, exits 0",
          r.rc == 0 and r.out.split("\n")[:4] == ["3", "x", "42", "4"]
          and "name error: unbound symbol 'nope'" in r.err, str(r))


with tempfile.TemporaryDirectory(prefix="tsl-cli-") as WORK:
    main()
sys.exit(report())
