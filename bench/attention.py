#!/usr/bin/env python3
"""bench/attention.py — scaled dot-product attention of q, k, v f32[B,H,L,D] (1, 4, 4096,
64 by default): TSL's fused, blocked attention (jit :cpu and eager) beside PyTorch on
the CPU, at 1 thread and at all threads, in one run: the forward pass, the causal forward
pass, and "train": the causal forward pass with the cotangents of q, k and v of
sum(attention(q, k, v) * dy) (TSL's derivative compiled for :cpu, PyTorch's autograd).

The peer is torch.nn.functional.scaled_dot_product_attention where the installed PyTorch
has it (2.0 and later); Debian 12's PyTorch 1.13 has not, and the peer is then the
composition that function's reference implementation computes, softmax(q kᵀ/√d + mask)
v, which materialises the [L, L] scores (its peak memory is printed beside TSL's).
PyTorch runs in a child process with torch.set_num_threads equal to TSL_NUM_THREADS.
Medians of 7 runs after a warm-up; the ratio columns are TSL ÷ PyTorch; GFLOP/s counts
4·B·H·L²·D for the forward pass (half of it causal).

    /usr/bin/python3 bench/attention.py [path/to/tsl] [--smoke]
"""
import os
import resource
import subprocess
import sys
import tempfile

from measure import cpu_model, tsl_timings

TORCH = r"""
import math, resource, sys, time, statistics
import torch
b, h, l, d, threads = map(int, sys.argv[1:6])
torch.set_num_threads(threads)
g = torch.Generator().manual_seed(0)
q, k, v, dy = (torch.randn(b, h, l, d, generator=g) for _ in range(4))
fused = hasattr(torch.nn.functional, "scaled_dot_product_attention")
causal_mask = torch.full((l, l), float("-inf")).triu(1)


def attention(q, k, v, causal):
    if fused:
        return torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal)
    s = q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1])
    return torch.softmax(s + causal_mask if causal else s, dim=-1) @ v


def median(fn):
    fn()
    times = []
    for _ in range(7):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


with torch.no_grad():
    forward = median(lambda: attention(q, k, v, False))
    causal = median(lambda: attention(q, k, v, True))
qg, kg, vg = (x.clone().requires_grad_() for x in (q, k, v))
train = median(lambda: torch.autograd.grad((attention(qg, kg, vg, True) * dy).sum(), [qg, kg, vg]))
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(forward, causal, train, peak, "sdpa" if fused else "composition", torch.__version__)
"""


def main():
    args = [a for a in sys.argv[1:] if a != "--smoke"]
    smoke = "--smoke" in sys.argv
    tsl = args[0] if args else os.path.join(os.path.dirname(__file__), "..", "build", "release", "repl", "tsl")
    b, h, l, d = (1, 2, 64, 16) if smoke else (1, 4, 4096, 64)
    flops = 4.0 * b * h * l * l * d
    cores = os.cpu_count() or 1
    print(f"CPU: {cpu_model()}; attention of q, k, v f32[{b},{h},{l},{d}]")
    with tempfile.TemporaryDirectory() as scratch:
        script = os.path.join(scratch, "torch_attention.py")
        with open(script, "w") as f:
            f.write(TORCH)
        print(f"{'threads':<8}{'TSL :cpu':>11}{'eager':>11}{'PyTorch':>11}{'ratio':>7}{'GFLOP/s':>9}"
              f"{'causal TSL':>12}{'PyTorch':>11}{'ratio':>7}{'train TSL':>12}{'PyTorch':>11}{'ratio':>7}")
        # TSL's runs first, so that the children's peak memory is TSL's alone.
        ours = {}
        for threads in sorted({1, cores}):
            env = dict(os.environ, TSL_NUM_THREADS=str(threads))
            ours[threads] = tsl_timings(tsl, "attention.tsl", b, h, l, d, env=env)
        ours_peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        for threads in sorted({1, cores}):
            peer = subprocess.run([sys.executable, script, str(b), str(h), str(l), str(d), str(threads)],
                                  capture_output=True, text=True)
            if peer.returncode != 0:
                if not smoke or "No module named 'torch'" not in peer.stderr:
                    sys.exit(f"PyTorch failed (tools/dev bench installs python3-torch):\n{peer.stderr}")
                print("(PyTorch is not installed: its columns are nan in this smoke run)")
                torch = [float("nan")] * 4 + ["-", "-"]
            else:
                torch = peer.stdout.split()
            fwd, causal, train, peak = map(float, torch[:4])
            t = ours[threads]
            print(f"{threads:<8}{t['cpu'] * 1e3:>8.1f} ms{t['eager'] * 1e3:>8.1f} ms{fwd * 1e3:>8.1f} ms"
                  f"{t['cpu'] / fwd:>7.2f}{flops / t['cpu'] / 1e9:>9.1f}"
                  f"{t['causal'] * 1e3:>9.1f} ms{causal * 1e3:>8.1f} ms{t['causal'] / causal:>7.2f}"
                  f"{t['train'] * 1e3:>9.1f} ms{train * 1e3:>8.1f} ms{t['train'] / train:>7.2f}")
        print(f"peak resident memory: TSL {ours_peak:.0f} MiB, PyTorch {peak:.0f} MiB; "
              f"PyTorch {torch[5]} ({torch[4]})")


if __name__ == "__main__":
    main()
