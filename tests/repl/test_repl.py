#!/usr/bin/env python3
"""Drives the `tsl` REPL through a pseudo-terminal, the way a person types at it.

usage: test_repl.py PATH_TO_TSL

HOME is a temporary directory (so ~/.tsl_history lands there) and TERM=xterm. Output is
matched after stripping ANSI escape sequences; every wait polls with a generous timeout.
Each failed check is printed; the exit status is 1 if any failed. Standard library only.
"""
import fcntl
import os
import pty
import re
import select
import signal
import struct
import sys
import tempfile
import termios
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "harness"))
from checks import check, report, tsl_binary  # noqa: E402

TSL = tsl_binary("test_repl.py")

TIMEOUT = 8.0  # seconds to wait for any single expected output
BUDGET = 50.0  # past this many seconds in all, waits shrink so a hung REPL fails fast
STARTED = time.monotonic()
# A sanitizer build runs about three times slower (tests/CMakeLists.txt sets the factor):
# a bound on how soon Ctrl-C takes effect grows by it. (Most of a stopped compile's
# latency is freeing its IR, which AddressSanitizer's allocator makes slowest.)
TIME_SCALE = float(os.environ.get("TSL_TEST_TIME_SCALE", "1"))


def limit(timeout):
    """`timeout`, cut short once the script's overall budget is spent."""
    return min(timeout, max(0.5, BUDGET - (time.monotonic() - STARTED)))
PROMPT = "tsl> "
CONTINUATION = "...> "

ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]"        # CSI: ESC [ ... final
                  r"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)"  # OSC: ESC ] ... BEL / ST
                  r"|\x1b[()][0-9A-Za-z]"             # charset selection
                  r"|\x1b[@-Z\\-_=>78]")              # other two-byte escapes


def strip_ansi(text):
    text = ANSI.sub("", text)
    return text.replace("\r", "").replace("\x07", "")


def render_current_line(raw):
    """A tiny terminal: applies the bytes in `raw` and returns the line the cursor is on.

    Enough of VT100 for a line editor's redraws: CR, LF, BS, TAB, CSI G/C/D/A/B/K/J, BEL.
    """
    rows = [[]]
    row = col = 0
    i = 0
    text = raw
    while i < len(text):
        ch = text[i]
        if ch == "\x1b":
            m = re.compile(r"\x1b\[([0-?]*)[ -/]*([@-~])").match(text, i)
            if m:
                params, final = m.group(1), m.group(2)
                n = int(params.split(";")[0]) if params.split(";")[0].isdigit() else None
                if final == "G":
                    col = (n or 1) - 1
                elif final == "C":
                    col += n or 1
                elif final == "D":
                    col = max(0, col - (n or 1))
                elif final == "A":
                    row = max(0, row - (n or 1))
                elif final == "B":
                    row += n or 1
                elif final == "K":
                    while len(rows) <= row:
                        rows.append([])
                    if params in ("", "0"):
                        del rows[row][col:]
                    elif params == "2":
                        rows[row] = []
                    else:
                        rows[row][:col] = [" "] * min(col, len(rows[row]))
                elif final == "J" and params in ("", "0"):
                    del rows[row + 1:]
                    del rows[row][col:]
                i = m.end()
                continue
            m = ANSI.match(text, i)
            i = m.end() if m else i + 1
            continue
        while len(rows) <= row:
            rows.append([])
        line = rows[row]
        if ch == "\r":
            col = 0
        elif ch == "\n":
            row += 1
        elif ch == "\b":
            col = max(0, col - 1)
        elif ch == "\t":
            col = (col // 8 + 1) * 8
        elif ch == "\x07" or ord(ch) < 32:
            pass
        else:
            while len(line) < col:
                line.append(" ")
            if col < len(line):
                line[col] = ch
            else:
                line.append(ch)
            col += 1
        i += 1
    while len(rows) <= row:
        rows.append([])
    return "".join(rows[row])


class Repl:
    """One `tsl` REPL session on a pseudo-terminal."""

    def __init__(self, home, args=()):
        self.raw = b""
        self.alive = True  # False once the terminal has closed (the REPL ended)
        self.pos = 0  # where the next expect() starts looking, in the stripped text
        self.status = None
        pid, fd = pty.fork()
        if pid == 0:  # child: the pty slave is stdin/stdout/stderr and controlling tty
            try:
                fcntl.ioctl(0, termios.TIOCSWINSZ, struct.pack("HHHH", 50, 200, 0, 0))
                env = dict(os.environ, HOME=home, TERM="xterm", LC_ALL="C.UTF-8")
                env.pop("INPUTRC", None)
                env.pop("EDITRC", None)
                os.execve(TSL, [TSL, *args], env)
            finally:
                os._exit(127)
        self.pid, self.fd = pid, fd

    # --- I/O -------------------------------------------------------------------------------
    def _pump(self, wait):
        """Reads whatever is available within `wait` seconds. False once the pty closed."""
        if not self.alive:
            return False
        r, _, _ = select.select([self.fd], [], [], wait)
        if not r:
            return True
        try:
            data = os.read(self.fd, 65536)
        except OSError:  # EIO: the child closed the terminal
            data = b""
        if not data:
            self.alive = False
            return False
        self.raw += data
        return True

    def text(self):
        return strip_ansi(self.raw.decode("utf-8", "replace"))

    def send(self, data):
        try:
            os.write(self.fd, data.encode() if isinstance(data, str) else data)
        except OSError:
            self.alive = False

    def expect(self, pattern, timeout=TIMEOUT, flags=re.M):
        """Waits for regex `pattern` in the stripped output after the last match."""
        regex = re.compile(pattern, flags)
        deadline = time.monotonic() + limit(timeout)
        while True:
            m = regex.search(self.text(), self.pos)
            if m:
                self.pos = m.end()
                return m
            if not self.alive or time.monotonic() >= deadline:
                return None
            self._pump(min(0.1, max(0.0, deadline - time.monotonic())))

    def expect_prompt(self, timeout=TIMEOUT):
        return self.expect(re.escape(PROMPT) + r"$", timeout)

    def settle(self, quiet=0.3, timeout=3.0):
        """Reads until no output arrives for `quiet` seconds (never the only synchronisation)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            before = len(self.raw)
            if not self._pump(quiet) or len(self.raw) == before:
                return

    def recent(self, chars=700):
        tail = self.text()[-chars:]
        return "recent output (stripped):\n" + "\n".join("  | " + l for l in tail.split("\n"))

    # --- lifetime ----------------------------------------------------------------------------
    def wait_exit(self, timeout=TIMEOUT):
        deadline = time.monotonic() + limit(timeout)
        while time.monotonic() < deadline:
            if not self._pump(0.05):
                time.sleep(0.05)  # terminal closed; the process may not be reaped yet
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid == self.pid:
                self.status = status
                self._drain()
                return os.waitstatus_to_exitcode(status)
        return None

    def _drain(self):
        """Collects output still buffered in the terminal after the process ended."""
        deadline = time.monotonic() + 1.0
        while time.monotonic() < deadline:
            before = len(self.raw)
            if not self._pump(0.05) or len(self.raw) == before:
                return

    def close(self):
        if self.status is None:
            try:
                os.kill(self.pid, signal.SIGKILL)
                os.waitpid(self.pid, 0)
            except (ProcessLookupError, ChildProcessError):
                pass
            self.status = -1
        try:
            os.close(self.fd)
        except OSError:
            pass


def evaluate(repl, form, result_pattern, name, timeout=TIMEOUT):
    """Types `form` + Enter; checks a whole output line matches `result_pattern`, then a prompt."""
    repl.send(form + "\r")
    m = repl.expect(r"^" + result_pattern + r"$", timeout)
    ok = m is not None and repl.expect_prompt() is not None
    check(name, ok, f"typed {form!r}, expected a line matching {result_pattern!r} and a new "
                    f"prompt\n{repl.recent()}")
    return ok


def decode_history(data):
    """libedit stores entries vis(3)-encoded: \\040 for space, \\012 for newline, ..."""
    text = data.decode("utf-8", "replace")
    text = re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), text)
    return text.replace("\\\\", "\\")


def main_session(home, work):
    repl = Repl(home)
    try:
        check("the REPL shows the prompt 'tsl> '", repl.expect_prompt() is not None, repl.recent())

        evaluate(repl, "(+ 1 2)", "3", "(+ 1 2) prints 3")

        repl.send("(+ 1\r")
        check("an unfinished form shows the continuation prompt '...> '",
              repl.expect(r"^" + re.escape(CONTINUATION) + "$") is not None, repl.recent())
        evaluate(repl, "2)", "3", "completing the form on the next line prints 3")

        repl.send("(+ 1 nope)\r")
        m = repl.expect(r"^<repl>:\d+:\d+: name error: unbound symbol 'nope'$")
        check("an error prints 'file:line:col: name error: unbound symbol ...'", m is not None,
              repl.recent())
        check("the error shows the source line and a caret",
              repl.expect(r"^\(\+ 1 nope\)\n {5}\^") is not None, repl.recent())
        check("a prompt follows the error", repl.expect_prompt() is not None, repl.recent())
        evaluate(repl, "(+ 2 2)", "4", "the session goes on after an error: (+ 2 2) prints 4")

        evaluate(repl, "(def x 41)", r"\S+", "(def x 41) evaluates")
        evaluate(repl, "(inc x)", "42", "definitions persist: (inc x) prints 42")
        evaluate(repl, '"s"', '"s"', "strings print quoted in the REPL")

        repl.send("(defn f [n] (+ 1 (f n))) (f 1)\r")
        check("a stack depth error is reported and the REPL survives it",
              repl.expect(r"runtime error: stack depth exceeded") is not None
              and repl.expect_prompt() is not None, repl.recent())
        evaluate(repl, "(+ 20 22)", "42", "...and still evaluates afterwards")

        repl.send(":help\r")
        check(":help prints help mentioning :quit and :load",
              repl.expect(r":quit") is not None and repl.expect(r":load") is not None
              and repl.expect_prompt() is not None, repl.recent())

        evaluate(repl, "(defn dbl [v] (* v 2.0))", r"\S+", "(defn dbl ...) evaluates")
        repl.send(":ir (dbl (ones [3]))\r")
        check(":ir (dbl (ones [3])) prints the function's IR and a prompt",
              repl.expect(r"^func @dbl\(%v: f32\[3\]\) -> \(f32\[3\]\) \{$") is not None
              and repl.expect(r"^  %\d+ = mul %v, %\d+ : f32\[3\]$") is not None
              and repl.expect_prompt() is not None, repl.recent())
        repl.send(":graph (dbl (ones [3]))\r")
        check(":graph prints Graphviz DOT", repl.expect(r'^digraph "dbl" \{$') is not None
              and repl.expect_prompt() is not None, repl.recent())
        repl.send(":ir (dbl (ones [2 2]) (ones [3]))\r")
        check(":ir reports an error (wrong arity) and the REPL goes on",
              repl.expect(r"type error: wrong number of arguments") is not None
              and repl.expect_prompt() is not None, repl.recent())

        lib = os.path.join(work, "lib.tsl")
        with open(lib, "w") as f:
            f.write("(defn triple [x] (* 3 x))\n(def loaded-value 7)\n")
        mark = len(repl.text())
        repl.send(f":load {lib}\r")
        check(":load FILE loads the file without an error", repl.expect_prompt() is not None
              and "error" not in repl.text()[mark:], repl.recent())
        evaluate(repl, "(triple loaded-value)", "21", "definitions from :load are usable")
        repl.send(":load /no/such/file.tsl\r")
        check(":load of a missing file reports an io error and the session goes on",
              repl.expect(r"io error") is not None and repl.expect_prompt() is not None,
              repl.recent())

        # Ctrl-C while typing a half-entered form.
        repl.send("(+ 1 2")
        repl.expect(r"\(\+ 1 2$")
        repl.send("\x03")
        check("Ctrl-C while typing gives a fresh prompt at once (without further input)",
              repl.expect_prompt(timeout=4.0) is not None, repl.recent())
        evaluate(repl, "(+ 1 1)", "2", "after Ctrl-C the half-entered form is dropped: "
                                        "(+ 1 1) prints 2")

        # Ctrl-C at the continuation prompt.
        repl.send("(* 5\r")
        repl.expect(r"^" + re.escape(CONTINUATION) + "$")
        repl.send("\x03")
        check("Ctrl-C at the continuation prompt gives a fresh 'tsl> ' prompt",
              repl.expect_prompt(timeout=4.0) is not None, repl.recent())
        evaluate(repl, "(+ 3 3)", "6", "after Ctrl-C the pending lines are dropped: "
                                        "(+ 3 3) prints 6")

        # Ctrl-C while an evaluation runs. Resend it until it lands: one sent before the
        # evaluation starts is legitimately taken by the line editor.
        repl.send("(loop [] (recur))\r")
        repl.expect(r"\(loop \[\] \(recur\)\)\n")
        deadline = time.monotonic() + limit(15)
        interrupted = None
        while interrupted is None and repl.alive and time.monotonic() < deadline:
            repl.send("\x03")
            interrupted = repl.expect(r"runtime error: interrupted", timeout=1.0)
        check("Ctrl-C stops (loop [] (recur)) with 'runtime error: interrupted'",
              interrupted is not None, repl.recent())
        repl.settle()
        repl.pos = len(repl.text())
        evaluate(repl, "(+ 1 1)", "2", "after the interrupt the REPL answers (+ 1 1) with 2")

        # Ctrl-C in a long kernel (a 6000x6000 matmul takes seconds): it stops between
        # tiles of work, and a line typed ahead while it ran is kept and evaluated after.
        repl.send("(sum (matmul (ones [6000 6000]) (ones [6000 6000])))\r")
        repl.expect(r"\(ones \[6000 6000\]\)\)\)\n")
        time.sleep(0.5)
        repl.send("(+ 40 2)\r")
        time.sleep(0.3)
        sent = time.monotonic()
        repl.send("\x03")
        stopped = repl.expect(r"runtime error: interrupted", timeout=10.0)
        took = time.monotonic() - sent
        check(f"Ctrl-C stops a 6000x6000 matmul within {TIME_SCALE:g} s",
              stopped is not None and took < 1.0 * TIME_SCALE, f"after {took:.2f}s\n{repl.recent()}")
        check("a line typed while the matmul ran survives the Ctrl-C and is evaluated: 42",
              repl.expect(r"^42$") is not None and repl.expect_prompt() is not None, repl.recent())

        # Ctrl-C in compiled code: a while compiled for :cpu polls the interrupt flag on
        # every iteration; this one never ends on its own.
        repl.send("((jit (fn [x] (loop [x x] (if (> x -1.0) (recur (+ x 1.0)) x)))) 0.0)\r")
        repl.expect(r"x\)\)\)\) 0\.0\)\n")
        time.sleep(1.0)
        deadline = time.monotonic() + limit(15)
        interrupted = None
        while interrupted is None and repl.alive and time.monotonic() < deadline:
            repl.send("\x03")
            interrupted = repl.expect(r"runtime error: interrupted", timeout=1.0)
        check("Ctrl-C stops a compiled :cpu while loop with 'runtime error: interrupted'",
              interrupted is not None, repl.recent())
        repl.settle()
        repl.pos = len(repl.text())
        evaluate(repl, "(+ 2 2)", "4", "after interrupting compiled code the REPL answers (+ 2 2) with 4")

        # Ctrl-C in a long compile: 300,000 operations take over ten seconds to trace,
        # optimise and compile (they once took fuse minutes, through Ctrl-C); the passes,
        # LLVM's phases and the loops inside them poll the interrupt flag.
        repl.send("((jit (fn [x] (reduce + (map (fn [i] (sin (* x i))) (range 100000))))) (ones [4]))\r")
        repl.expect(r"\(ones \[4\]\)\)\n")
        time.sleep(4.0)
        sent = time.monotonic()
        repl.send("\x03")
        stopped = repl.expect(r"runtime error: interrupted", timeout=limit(10))
        took = time.monotonic() - sent
        check(f"Ctrl-C stops a compile of 300,000 operations within {1.5 * TIME_SCALE:g} s",
              stopped is not None and took < 1.5 * TIME_SCALE, f"after {took:.2f}s\n{repl.recent()}")
        repl.settle()
        repl.pos = len(repl.text())
        evaluate(repl, "(+ 3 4)", "7", "after interrupting a compile the REPL answers (+ 3 4) with 7")

        # :llvm and :asm show the native code of a function for example arguments.
        repl.send(":llvm ((fn [x] (* x 2.0)) [1.0 2.0])\r")
        check(":llvm prints the function's optimised LLVM IR",
              repl.expect(r"define .*i32 @tsl\.") is not None and repl.expect_prompt() is not None, repl.recent())
        repl.send(":asm ((fn [x] (* x 2.0)) [1.0 2.0])\r")
        check(":asm prints its assembly", repl.expect(r"^\s+ret") is not None and repl.expect_prompt() is not None,
              repl.recent())

        # :doc and :time
        repl.send(":doc matmul\r")
        check(":doc prints a primitive's call form from the operation table",
              repl.expect(r"^\(matmul a b\)$") is not None and repl.expect_prompt() is not None, repl.recent())
        repl.send(":doc nn/linear\r")
        check(":doc of a name of a stdlib module not imported suggests the import",
              repl.expect(r"no module is imported as 'nn' .*\(add \(import \"stdlib/nn\"\)\)") is not None
              and repl.expect_prompt() is not None, repl.recent())
        repl.send(":doc reduce\r")
        check(":doc prints a builtin's call form and example",
              repl.expect(r"^  \(reduce f coll\)") is not None and repl.expect(r"^  e\.g\. \(reduce") is not None
              and repl.expect_prompt() is not None, repl.recent())
        repl.send("(redcue + [1 2])\r")
        check("a mistyped name suggests the nearest one",
              repl.expect(r"unbound symbol 'redcue' \(did you mean reduce\?\)") is not None
              and repl.expect_prompt() is not None, repl.recent())
        repl.send(":time (+ 1 2)\r")
        check(":time prints the value, then the time it took",
              repl.expect(r"^3$") is not None and repl.expect(r"^; [0-9.]+ ms$") is not None
              and repl.expect_prompt() is not None, repl.recent())
        start = repl.pos
        repl.send(":time (+ 1\r")
        error = repl.expect(r"syntax error: unclosed '\('")
        prompt = repl.expect_prompt()
        check(":time of a form with a syntax error prints only the error, no timing",
              error is not None and prompt is not None and " ms\n" not in repl.text()[start:], repl.recent())
        start = repl.pos
        repl.send(":time (/ 1 (first []))\r")
        error = repl.expect(r"error")
        prompt = repl.expect_prompt()
        check(":time of a form that fails when run prints only the error",
              error is not None and prompt is not None and " ms\n" not in repl.text()[start:], repl.recent())

        # :tc shows the tensor-core program of a function's contraction; :tc-stats what the
        # last :tc call did.
        repl.send(":tc ((fn [a b] (matmul a b)) (ones [16 16]) (ones [16 16]))\r")
        check(":tc prints the tensor-core program",
              repl.expect(r"^mmad c=0 a=0 b=0 m=16 k=16 n=16$") is not None and repl.expect_prompt() is not None,
              repl.recent())
        evaluate(repl, "(shape ((jit (fn [a b] (matmul a b)) :target :tc) (ones [16 16]) (ones [16 16])))", r"\[16 16\]",
                 "a matmul runs on :tc from the REPL")
        repl.send(":tc-stats\r")
        check(":tc-stats prints the last call's counters as (tc-stats)'s map, a key a line",
              repl.expect(r"^\{:cycles \d+,$") is not None and repl.expect(r"^ :serial-cycles \d+,$") is not None
              and repl.expect(r"^ :macs 4096,$") is not None and repl.expect(r"^ :bytes \{:gm-l1 \d+, :gm-ub")
              and repl.expect(r"^ :tilings \[.*\]\}$") is not None and repl.expect_prompt() is not None, repl.recent())
        # Ctrl-C in a long emulation (a 4096³ matmul on the emulated tensor core takes seconds).
        repl.send("((jit (fn [a b] (matmul a b)) :target :tc) (ones [4096 4096]) (ones [4096 4096]))\r")
        repl.expect(r"\(ones \[4096 4096\]\)\)\n")
        time.sleep(1.0)
        sent = time.monotonic()
        repl.send("\x03")
        stopped = repl.expect(r"runtime error: interrupted", timeout=10.0)
        took = time.monotonic() - sent
        check("Ctrl-C stops a long :tc emulation within a second", stopped is not None and took < 1.0,
              f"after {took:.2f}s\n{repl.recent()}")
        evaluate(repl, "(+ 2 3)", "5", "after interrupting the emulator the REPL answers (+ 2 3) with 5")

        # Ctrl-D in the middle of a form drops the form, not the session.
        repl.send("(+ 1\r")
        repl.expect(r"^" + re.escape(CONTINUATION) + "$")
        repl.send("\x04")
        check("Ctrl-D at the continuation prompt says the form is discarded and stays",
              repl.expect(r"unfinished form discarded") is not None and repl.expect_prompt() is not None,
              repl.recent())
        evaluate(repl, "(+ 2 3)", "5", "after Ctrl-D at the continuation prompt the REPL evaluates (+ 2 3)")

        # Completion.
        repl.send("(macroexp")
        repl.expect(r"\(macroexp")
        mark = len(repl.raw)
        repl.send("\t")
        deadline = time.monotonic() + limit(TIMEOUT)
        line = ""
        while repl.alive and time.monotonic() < deadline:
            repl._pump(0.1)
            line = render_current_line(repl.raw.decode("utf-8", "replace"))
            if "macroexpand" in line:
                break
        echoed = strip_ansi(repl.raw[mark:].decode("utf-8", "replace"))
        check("Tab completes '(macroexp' toward 'macroexpand'",
              "macroexpand" in line or "macroexpand" in echoed,
              f"line on screen: {line!r}\nechoed after Tab: {echoed!r}")
        evaluate(repl, " '(when true 1))", r"\(if true .*\)",
                 "the completed name is in the line: (macroexpand '(when true 1)) expands")

        # Something distinctive for the history file.
        evaluate(repl, '(str "hist-" 31337)', r'"hist-31337"', "a distinctive form evaluates")

        repl.send(":quit\r")
        code = repl.wait_exit()
        check(":quit ends the session with exit status 0", code == 0,
              f"exit status: {code}\n{repl.recent()}")
    finally:
        repl.close()

    path = os.path.join(home, ".tsl_history")
    data = open(path, "rb").read() if os.path.exists(path) else b""
    history = decode_history(data)
    check("~/.tsl_history holds the distinctive form", '(str "hist-" 31337)' in history,
          f"{path}: {data[:800]!r}")
    check("~/.tsl_history holds a multi-line entry", "(+ 1\n2)" in history,
          f"{path}: {data[:800]!r}")


def history_session(home):
    """A new session recalls the previous session's entry with the Up arrow."""
    repl = Repl(home)
    try:
        repl.expect_prompt()
        repl.send("\x1b[A")
        repl.expect(r'\(str "hist-" 31337\)')
        repl.send("\r")
        check("a new session recalls the last entry with Up arrow and evaluates it",
              repl.expect(r'^"hist-31337"$') is not None and repl.expect_prompt() is not None,
              repl.recent())
        repl.send("\x04")
        code = repl.wait_exit()
        check("Ctrl-D (EOF) at an empty prompt ends the session with exit status 0",
              code == 0, f"exit status: {code}\n{repl.recent()}")
    finally:
        repl.close()


def exit_session(home):
    repl = Repl(home)
    try:
        repl.expect_prompt()
        repl.send("(exit 4)\r")
        code = repl.wait_exit()
        check("(exit 4) in the REPL ends it with exit status 4", code == 4,
              f"exit status: {code}\n{repl.recent()}")
    finally:
        repl.close()


def main():
    with tempfile.TemporaryDirectory(prefix="tsl-repl-") as tmp:
        home = os.path.join(tmp, "home")
        work = os.path.join(tmp, "work")
        os.mkdir(home)
        os.mkdir(work)
        main_session(home, work)
        history_session(home)
        exit_session(home)
    return report()


if __name__ == "__main__":
    sys.exit(main())
