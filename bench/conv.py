#!/usr/bin/env python3
"""bench/conv.py — conv2d of f32[8,64,56,56] (NCHW, as the user writes it) by 64 3×3
filters, padding 1: TSL's :cpu and eager conv2d beside PyTorch (oneDNN) and the machine's
measured FMA peak, at 1 thread and at all threads, in one run. "train" is the forward
convolution with both cotangents (input and weights) of sum(conv2d(x, w) * dy): TSL's
derivative compiled for :cpu, PyTorch's autograd.

PyTorch runs in a child process with torch.set_num_threads equal to TSL_NUM_THREADS.
Medians of 7 runs after a warm-up; the ratio columns are TSL ÷ PyTorch, and TSL's share
of the FMA peak (2·N·O·C·9·56·56 flops).

    /usr/bin/python3 bench/conv.py [path/to/tsl] [--smoke]
"""
import os
import subprocess
import sys
import tempfile

from measure import cpu_model, fma_peak, tsl_timings

TORCH = r"""
import sys, time, statistics
import torch
n, c, hw, threads = map(int, sys.argv[1:5])
torch.set_num_threads(threads)
g = torch.Generator().manual_seed(0)
x = torch.randn(n, c, hw, hw, generator=g)
w = torch.randn(c, c, 3, 3, generator=g)
dy = torch.randn(n, c, hw, hw, generator=g)


def median(fn):
    fn()
    times = []
    for _ in range(7):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


with torch.no_grad():
    forward = median(lambda: torch.nn.functional.conv2d(x, w, padding=1))
xg, wg = x.clone().requires_grad_(), w.clone().requires_grad_()
train = median(lambda: torch.autograd.grad((torch.nn.functional.conv2d(xg, wg, padding=1) * dy).sum(), [xg, wg]))
print(forward, train)
"""


def main():
    args = [a for a in sys.argv[1:] if a != "--smoke"]
    smoke = "--smoke" in sys.argv
    tsl = args[0] if args else os.path.join(os.path.dirname(__file__), "..", "build", "release", "repl", "tsl")
    n, c, hw = (1, 4, 8) if smoke else (8, 64, 56)
    flops = 2.0 * n * c * c * 9 * hw * hw
    cores = os.cpu_count() or 1
    print(f"CPU: {cpu_model()}; conv2d f32[{n},{c},{hw},{hw}] * f32[{c},{c},3,3], padding 1")
    with tempfile.TemporaryDirectory() as scratch:
        script = os.path.join(scratch, "torch_conv.py")
        with open(script, "w") as f:
            f.write(TORCH)
        peak = fma_peak(scratch, smoke)
        print(f"{'threads':<8}{'TSL :cpu':>11}{'TSL eager':>11}{'PyTorch':>11}{'cpu/torch':>10}{'GFLOP/s':>9}"
              f"{'% peak':>8}{'train TSL':>12}{'PyTorch':>11}{'ratio':>7}")
        for threads in sorted({1, cores}):
            top = peak(threads)
            env = dict(os.environ, TSL_NUM_THREADS=str(threads))
            ours = tsl_timings(tsl, "conv.tsl", n, c, hw, env=env)
            peer = subprocess.run([sys.executable, script, str(n), str(c), str(hw), str(threads)],
                                  capture_output=True, text=True)
            if peer.returncode != 0:
                if not smoke or "No module named 'torch'" not in peer.stderr:
                    sys.exit(f"PyTorch failed (tools/dev bench installs python3-torch):\n{peer.stderr}")
                print("(PyTorch is not installed: its columns are nan in this smoke run)")
                torch, torch_train = float("nan"), float("nan")
            else:
                torch, torch_train = map(float, peer.stdout.split())
            rate = flops / ours["cpu"]
            print(f"{threads:<8}{ours['cpu'] * 1e3:>8.2f} ms{ours['eager'] * 1e3:>8.2f} ms{torch * 1e3:>8.2f} ms"
                  f"{ours['cpu'] / torch:>10.2f}{rate / 1e9:>9.1f}{100 * rate / top:>7.1f}%"
                  f"{ours['train'] * 1e3:>9.2f} ms{torch_train * 1e3:>8.2f} ms{ours['train'] / torch_train:>7.2f}")
            print(f"        FMA peak at {threads} thread(s): {top / 1e9:.1f} GFLOP/s")


if __name__ == "__main__":
    main()
