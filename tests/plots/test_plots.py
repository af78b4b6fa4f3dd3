#!/usr/bin/env python3
"""Plots and progress bars, checked on what they produce: the SVG gnuplot draws holds each
series' points, the title and labels as given (quotes, backquotes and @ never reach
gnuplot as commands); PNG files have the signature and the size asked for; histogram
counts and edges equal NumPy's for the same data; imshow's image has the matrix's grey
levels with row 0 on top; save-plot refuses other suffixes and unwritable places without
leaving a file; a missing gnuplot is an io error at the call; progress writes nothing
when stderr is not a terminal, draws a bar under a pseudo-terminal, and leaves the
values as they were.

usage: test_plots.py PATH_TO_TSL   (run with a Python that has NumPy)
"""
import base64
import fcntl
import os
import pty
import re
import select
import signal
import struct
import subprocess
import sys
import tempfile
import termios
import time
import zlib

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "harness"))
from checks import check, report, tsl_binary  # noqa: E402

TSL = tsl_binary("test_plots.py")
WORK = tempfile.mkdtemp(prefix="tsl-plots-")


def at(name):
    return os.path.join(WORK, name)


def run(program, env=None):
    path = at("prog.tsl")
    with open(path, "w") as f:
        f.write(program)
    p = subprocess.run([TSL, "run", path], capture_output=True, cwd=WORK, timeout=120, env=env)
    return p.returncode, p.stdout.decode(), p.stderr.decode()


def png_chunks(data):
    pos, chunks = 8, []
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        chunks.append((kind, data[pos + 8:pos + 8 + n]))
        pos += 12 + n
    return chunks


def png_pixels(data):
    """The RGB pixels of an 8-bit RGB PNG, as a [h, w, 3] array (PNG's five filters undone)."""
    chunks = png_chunks(data)
    w, h, depth, colour = struct.unpack(">IIBB", chunks[0][1][:10])
    assert depth == 8 and colour in (2, 6), (depth, colour)
    bpp = 3 if colour == 2 else 4
    raw = zlib.decompress(b"".join(d for k, d in chunks if k == b"IDAT"))
    stride = w * bpp
    rows, prev = [], bytearray(stride)
    for y in range(h):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(line))
        prev = line
    return np.frombuffer(b"".join(rows), dtype=np.uint8).reshape(h, w, bpp)[:, :, :3]


# ---- plot: the SVG holds each series and the texts ----
title = "loss 'quoted' `touch pwned` @macro x_1"
rc, out, err = run(f"""
(def p (plot [1 2 3 4 5] [[0.9 0.5 0.3 0.2 0.15] [1.0 0.8 0.7 0.65 0.6]]
             :label ["train" "held_out"] :title "{title}"
             :xlabel "epoch" :ylabel "loss"))
(println p)
(save-plot p "lines.svg")
(save-plot p "lines.png" :width 320 :height 200)
(save-plot (scatter-plot [1 2 3] [3.0 1.0 2.0]) "points.svg")
""")
check("plot, scatter-plot and save-plot run", rc == 0, err)
check("a plot prints as a summary", out.strip() == f'#<plot 2 series "{title}">', out)
if rc == 0:
    svg = open(at("lines.svg")).read()
    check("an SVG document", svg.lstrip().startswith("<?xml") and "</svg>" in svg)
    for n in (1, 2):
        start = svg.find('<g id="gnuplot_plot_%d"' % n)
        end = svg.find('<g id="gnuplot_plot_%d"' % (n + 1))
        block = svg[start:end if end > 0 else len(svg)] if start >= 0 else ""
        # A series' path: the legend's sample segment (M..L) then the line itself (M..L..L).
        segments = [seg for d in re.findall(r"<path[^>]* d='([^']*)'", block) for seg in d.split("M")[1:]]
        line = max(segments, key=lambda seg: seg.count(","), default="")
        ys = [float(v) for v in re.findall(r"[-\d.]+,([-\d.]+)", line)]
        check(f"series {n} is a line through its 5 points, falling as the loss does",
              len(ys) == 5 and all(a < b for a, b in zip(ys, ys[1:])), f"{line!r} in {block[:200]!r}")
    escaped = title.replace("&", "&amp;").replace("'", "&#39;").replace("<", "&lt;")
    check("the title is drawn as given", title in svg or escaped in svg or title.replace("'", "&apos;") in svg,
          re.findall(r"<title>.*?</title>|loss[^<]*", svg)[:3])
    check("a backquote in a title runs nothing", not os.path.exists(at("pwned")))
    check("the legend holds the labels, _ kept", ">train<" in svg and ">held_out<" in svg)
    check("the axis labels", ">epoch<" in svg and ">loss<" in svg)
    png = open(at("lines.png"), "rb").read()
    check("PNG signature", png[:8] == b"\x89PNG\r\n\x1a\n")
    check("PNG of the size asked for", struct.unpack(">II", png[16:24]) == (320, 200), struct.unpack(">II", png[16:24]))
    pts = open(at("points.svg")).read()
    m = re.search(r'<g id="gnuplot_plot_1"[^>]*>(.*?)</g>', pts, re.S)
    check("scatter-plot draws one point symbol per value", m and len(re.findall(r"<use ", m.group(1))) == 3,
          m.group(1)[:300] if m else pts[:300])

rc, out, err = run('(save-plot (plot []) "empty.svg")\n(save-plot (plot [(/ [0.0 0.0] 0.0) [1 2]] :label ["nan" "ok"]) "nan.svg")')
check("an empty plot, and a series of NaN beside another, still draw", rc == 0 and "<svg" in open(at("empty.svg")).read()
      and ">ok<" in open(at("nan.svg")).read(), err)

# ---- hist: counts and edges against NumPy ----
rng = np.random.default_rng(7)
data = np.concatenate([rng.normal(0, 1, 997), [3.25, -2.5, 0.0]]).astype(np.float64)
np.save(at("data.npy"), data)
for bins in (1, 7, 10, 33):
    rc, out, err = run(f"""
(def h (hist (load-npy "data.npy") :bins {bins}))
(println (:counts h))
(println (:edges h))
""")
    counts, edges = np.histogram(data, bins=bins)
    lines = out.splitlines()
    got_counts = [int(v) for v in re.findall(r"-?\d+", lines[0].split("]", 1)[1])] if rc == 0 else None
    got_edges = [float(v) for v in lines[1].split("[", 2)[2].rstrip("]").split()] if rc == 0 else None
    check(f"hist :bins {bins} counts equal numpy.histogram's", got_counts == counts.tolist(), f"{got_counts} {counts} {err}")
    check(f"hist :bins {bins} edges equal numpy.histogram's",
          got_edges is not None and np.allclose(got_edges, edges, rtol=0, atol=1e-12), f"{got_edges} {edges}")
# Values on edges: NumPy's half-open bins, the last closed.
edge_data = np.array([0, 1, 2, 3, 4, 5, 5, 5], dtype=np.float64)
rc, out, err = run("(println (:counts (hist [0 1 2 3 4 5 5 5] :bins 5)))")
check("values on bin edges fall as in NumPy", rc == 0 and out.split("]", 1)[1].strip(" []\n").split() ==
      [str(c) for c in np.histogram(edge_data, bins=5)[0]], out + err)
rc, out, err = run("(save-plot (hist [1 2 2 3 3 3] :bins 3 :title \"h\") \"hist.svg\")")
check("a histogram saves", rc == 0 and "<svg" in open(at("hist.svg")).read(), err)

# ---- imshow: the matrix's grey levels, row 0 on top ----
matrix = np.array([[0, 1, 2], [3, 4, 5]], dtype=np.float64)
rc, out, err = run("""
(def im (imshow [[0.0 1.0 2.0] [3.0 4.0 5.0]] :title "m"))
(println im)
(save-plot im "image.svg")
(save-plot (imshow (reshape (slice (get (load-csv "%s") 0) [[0 64]]) [8 8])) "digit.png")
""" % os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "data", "digits.csv.gz"))
check("imshow runs (a matrix, a digit of the data set)", rc == 0, err)
check("an image prints as a summary", out.strip() == '#<plot image 2x3 "m">', out)
if rc == 0:
    svg = open(at("image.svg")).read()
    m = re.search(r"xlink:href='data:image/png;base64,([^']*)'", svg)
    check("the SVG embeds the image", m is not None)
    if m:
        pixels = png_pixels(base64.b64decode(m.group(1)))
        want = np.round(255 * (matrix - matrix.min()) / (matrix.max() - matrix.min()))
        check("one pixel per element", pixels.shape[:2] == matrix.shape, str(pixels.shape))
        check("grey levels: black the smallest, white the largest, linear, row 0 on top",
              pixels.shape[:2] == matrix.shape and np.all(pixels[:, :, 0] == pixels[:, :, 1]) and
              np.abs(pixels[:, :, 0].astype(int) - want).max() <= 1, f"{pixels[:, :, 0]} vs {want}")
    digit = open(at("digit.png"), "rb").read()
    check("a digit as PNG, 640x480 by default", digit[:8] == b"\x89PNG\r\n\x1a\n" and
          struct.unpack(">II", digit[16:24]) == (640, 480))
    rc, out, err = run("(imshow (ones [2 2 2]))")
    check("imshow of rank 3 is a shape error", rc != 0 and "shape error: imshow" in err, err)

# ---- save-plot's errors: nothing written ----
before = set(os.listdir(WORK))
rc, out, err = run('(save-plot (plot [1 2]) "plot.pdf")')
check("another suffix is a value error at the call", rc != 0 and "prog.tsl:1:1: value error: save-plot" in err and
      ".svg or .png" in err, err)
check("nothing is written for a bad suffix", not os.path.exists(at("plot.pdf")))
open(at("file"), "w").close()
rc, out, err = run('(save-plot (plot [1 2]) "file/x.svg")\n')
check("an unwritable place is an io error", rc != 0 and "io error" in err and "file/x.svg" in err, err)
rc, out, err = run('(save-plot (plot [1 2]) "missing-folder/x.png")\n')
check("a missing folder is an io error", rc != 0 and "io error" in err, err)
check("no file or temporary is left behind", set(os.listdir(WORK)) - before <= {"file", "prog.tsl"},
      str(set(os.listdir(WORK)) - before))
rc, out, err = run('(save-plot {:a 1} "x.svg")')
check("a map that is no plot is a type error", rc != 0 and "type error: save-plot expects a plot" in err, err)
rc, out, err = run('(plot [1 2 3] [1 2])')
check("xs and ys of other lengths are a shape error", rc != 0 and "shape error" in err, err)
env = dict(os.environ, PATH="/nonexistent")
rc, out, err = run('(def p (plot [1 2]))\n(save-plot p "x.svg")\n', env=env)
check("gnuplot missing: an io error at the call naming the package",
      rc != 0 and "prog.tsl:2:1: io error" in err and "gnuplot-nox" in err, err)
check("gnuplot missing: no file", not os.path.exists(at("x.svg")))
# A gnuplot that fails, and one that never finishes (stopped by Ctrl-C), stand in for it.
fake = at("fakebin")
os.mkdir(fake)
with open(os.path.join(fake, "gnuplot"), "w") as f:
    f.write("#!/bin/sh\ncat >/dev/null\necho 'line 7: undefined variable: nope' >&2\necho '         ^' >&2\nexit 1\n")
os.chmod(os.path.join(fake, "gnuplot"), 0o755)
env = dict(os.environ, PATH=fake + ":/usr/bin:/bin")
rc, out, err = run('(save-plot (plot [1 2]) "failed.svg")\n', env=env)
check("gnuplot failing: an io error with its message", rc != 0 and "io error: plot: gnuplot failed: line 7: undefined variable" in err, err)
check("gnuplot failing: no file", not os.path.exists(at("failed.svg")))
with open(os.path.join(fake, "gnuplot"), "w") as f:
    f.write("#!/bin/sh\nexec sleep 60\n")
with open(at("prog.tsl"), "w") as f:
    f.write('(save-plot (plot [1 2]) "hung.svg")\n')
hung = subprocess.Popen([TSL, "run", at("prog.tsl")], stderr=subprocess.PIPE, cwd=WORK, env=env)
time.sleep(1.0)
started = time.monotonic()
hung.send_signal(signal.SIGINT)
try:
    err = hung.communicate(timeout=10)[1].decode()
except subprocess.TimeoutExpired:
    hung.kill()
    err = "still running 10 s after Ctrl-C"
check("Ctrl-C stops a gnuplot that never finishes", hung.returncode != 0 and "interrupted" in err and
      time.monotonic() - started < 5, err)
check("Ctrl-C: no file", not os.path.exists(at("hung.svg")))
rc, out, err = run('(println (plot-text (plot [3 1 2]) :width 40 :height 12))')
check("plot-text draws in characters", rc == 0 and len(out.splitlines()) >= 10 and "*" in out, out + err)

# ---- examples/digits.tsl draws its loss curves and misread digits into the folder given ----
ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
pictures = at("digits")
os.mkdir(pictures)
p = subprocess.run([TSL, "run", "examples/digits.tsl", pictures], capture_output=True, cwd=ROOT, timeout=300)
check("examples/digits.tsl runs", p.returncode == 0, p.stderr.decode()[-2000:])
check("examples/digits.tsl draws no progress bar into a pipe", p.stderr == b"", p.stderr.decode()[-500:])
if p.returncode == 0:
    svg = open(os.path.join(pictures, "digits-loss.svg")).read()
    check("the loss plot has its title and both curves", "digits: training loss" in svg and
          ">eager<" in svg and ">jit<" in svg and 'id="gnuplot_plot_2"' in svg)
    misread = open(os.path.join(pictures, "digits-misread.png"), "rb").read()
    check("the misread digits as PNG", misread[:8] == b"\x89PNG\r\n\x1a\n" and
          struct.unpack(">II", misread[16:24]) == (640, 240))

# ---- the REPL draws a plot it prints at a terminal, in characters ----
def repl_session(source, rows=30, cols=100, wait=20):
    pid, fd = pty.fork()
    if pid == 0:
        try:
            fcntl.ioctl(0, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
            os.execve(TSL, [TSL], dict(os.environ, HOME=WORK, TERM="dumb"))
        finally:
            os._exit(127)
    os.write(fd, source.encode())
    # Until the prompt comes back after the value.
    seen, deadline = b"", time.monotonic() + wait
    while time.monotonic() < deadline and seen.count(b"tsl> ") < 2:
        r, _, _ = select.select([fd], [], [], 0.5)
        if r:
            try:
                seen += os.read(fd, 65536)
            except OSError:
                break
    os.write(fd, b"\x04")
    time.sleep(0.2)
    try:
        while select.select([fd], [], [], 0.5)[0]:
            seen += os.read(fd, 65536)
    except OSError:
        pass
    os.waitpid(pid, 0)
    os.close(fd)
    return re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", seen.decode(errors="replace"))


screen = repl_session('(plot [3 1 2 5] :title "curve")\n')
start = screen.find('#<plot 1 series "curve">')
drawing = screen[start:screen.find("tsl> ", start)] if start >= 0 else ""
check("at a terminal the REPL prints a plot's summary and draws it",
      '#<plot 1 series "curve">' in screen and "curve" in drawing[30:] and drawing.count("\n") >= 20 and
      "+-" in drawing and "*" in drawing, screen[-3000:])
widest = max((len(line.rstrip("\r")) for line in drawing.splitlines()), default=0)
check("the drawing is as wide as the terminal allows", 80 <= widest < 100, str(widest))
p = subprocess.run([TSL], input=b'(plot [3 1 2 5] :title "curve")\n', capture_output=True, timeout=60)
check("into a pipe the REPL prints only the summary", p.stdout.decode().strip().endswith('#<plot 1 series "curve">')
      and "+-" not in p.stdout.decode(), p.stdout.decode())

# ---- progress ----
program = """
(def xs [10 20 30 40])
(println (= (progress xs) (vec xs)) (= (progress ["a" {:b 1} [2 3]]) ["a" {:b 1} [2 3]]))
(println (map inc (progress xs :label "map")))
(println (reduce + (progress (range 1000) :label "sum")))
(println (filter odd? (progress (range 7))))
(doseq [x (progress [1 2 3] :label "doseq")] (println x))
(println (progress (reshape (arange 4) [2 2])))
"""
expected = "true true\n[11 21 31 41]\n499500\n[1 3 5]\n1\n2\n3\n[i64[2] [0 1] i64[2] [2 3]]\n"
rc, out, err = run(program)
check("progress leaves values unchanged", rc == 0 and out == expected, out + err)
check("progress is silent when stderr is not a terminal", err == "", repr(err))

# Under a pseudo-terminal (stderr only; stdout stays a pipe), the bar is drawn and cleared.
def read_all(master):
    """Everything written to the pseudo-terminal until its other end closes."""
    drawn = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:
            return drawn
        if not chunk:
            return drawn
        drawn += chunk


with open(at("prog.tsl"), "w") as f:
    f.write('(doseq [x (progress (range 5) :label "train")] (do (loop [i 0] (if (< i 20000) (recur (inc i)) nil)) x))\n'
            '(println "done")\n')
master, slave = pty.openpty()
p = subprocess.Popen([TSL, "run", at("prog.tsl")], stdout=subprocess.PIPE, stderr=slave, cwd=WORK)
os.close(slave)
drawn = read_all(master)
stdout = p.communicate(timeout=60)[0].decode()
os.close(master)
text = drawn.decode(errors="replace")
check("under a terminal the program still runs", p.returncode == 0 and stdout == "done\n", stdout)
check("under a terminal the bar is drawn: label, count, rate, elapsed", "train [" in text and "0/5" in text and
      "it/s" in text and re.search(r"\d+:\d\d<", text), repr(text))
check("the bar is redrawn in place and cleared at the end", text.count("\r") >= 2 and text.endswith("\r\x1b[K"), repr(text[-40:]))

# Nested bars share the line (the inner one draws, the outer one returns after it), and
# println clears the line before it writes.
with open(at("prog.tsl"), "w") as f:
    f.write('(doseq [e (progress (range 3) :label "outer")]\n'
            '  (doseq [b (progress (range 4) :label "inner")] (loop [i 0] (if (< i 20000) (recur (inc i)) nil)))\n'
            '  (println "epoch" e))\n')
master, slave = pty.openpty()
p = subprocess.Popen([TSL, "run", at("prog.tsl")], stdout=slave, stderr=slave, cwd=WORK)
os.close(slave)
drawn = read_all(master)
p.wait(timeout=60)
os.close(master)
text = drawn.decode(errors="replace")
check("nested bars: both drawn, the outer one back after the inner", p.returncode == 0 and "inner [" in text and
      re.search(r"outer \[[^\r]*1/3", text) is not None, repr(text[-600:]))
lines = [re.sub(r".*\r", "", line).replace("\x1b[K", "") for line in text.replace("\r\n", "\n").split("\n")]
check("println clears the bar's line first: each epoch line reads clean", [l for l in lines if "epoch" in l] ==
      ["epoch 0", "epoch 1", "epoch 2"], repr(lines))
check("nested bars: the line is cleared at the end", text.endswith("\r\x1b[K"), repr(text[-80:]))

report()
