#!/usr/bin/env python3
"""bench/lowering.py — how compile time grows with program size, at N and 10 N.

Workloads (bench/lowering.tsl):
  grad-sum         the gradient of (reduce + (map (fn [i] (* x i)) (range N))) at 1.0:
                   tracing N terms to IR, differentiating, the passes, one run
  jit-sum          the same function under jit (no derivative)
  macroexpand-all  N nested (when true ...) forms (of 2000 and 20,000, with --max-depth raised)

Peer for grad-sum: PyTorch's autograd on the same sum written as a Python loop (a tape
of N multiplications and additions, then backward): what a user of define-by-run
differentiation pays for the same program. PyTorch runs on one thread. TSL times itself
with now-ns; median of RUNS runs; growth = time(10 N) / time(N), 10 when linear.

    /usr/bin/python3 bench/lowering.py [path/to/tsl] [N] [runs]
"""
import os
import sys

from measure import cpu_model, timed, tsl_timings


def torch_time(n, runs):
    import torch
    torch.set_num_threads(1)

    def step():
        x = torch.tensor(1.0, requires_grad=True)
        total = torch.tensor(0.0)
        for i in range(n):
            total = total + x * i
        total.backward()
        return x.grad

    return timed(step, runs), torch.__version__


def main():
    tsl = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "build", "release", "repl", "tsl")
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 1000
    runs = int(sys.argv[3]) if len(sys.argv) > 3 else 7
    small, large = tsl_timings(tsl, "lowering.tsl", n, runs, "sum"), tsl_timings(tsl, "lowering.tsl", 10 * n, runs, "sum")
    # Nesting 20,000 deep needs a call-depth limit above it (macro expansion shares it).
    deep = ("--max-depth", "1000000")
    expand_small = tsl_timings(tsl, "lowering.tsl", 2000, runs, "expand", options=deep)
    expand_large = tsl_timings(tsl, "lowering.tsl", 20000, runs, "expand", options=deep)
    p_small, version = torch_time(n, runs)
    p_large, _ = torch_time(10 * n, runs)
    print(f"CPU: {cpu_model()}; PyTorch {version} (1 thread); median of {runs} runs")
    print(f"{'workload':16} {'N':>6} {'TSL N':>10} {'TSL 10N':>10} {'growth':>6}   {'PyTorch 10N':>11} {'growth':>6} {'TSL/PyTorch':>11}")
    for name in ("grad-sum", "jit-sum"):
        ts, tl = small[name], large[name]
        peer = f"{p_large * 1e3:9.1f}ms {p_large / p_small:6.1f} {tl / p_large:11.2f}" if name == "grad-sum" else ""
        print(f"{name:16} {n:6} {ts * 1e3:8.1f}ms {tl * 1e3:8.1f}ms {tl / ts:6.1f}   {peer}")
    ts, tl = expand_small["macroexpand-all"], expand_large["macroexpand-all"]
    print(f"{'macroexpand-all':16} {2000:6} {ts * 1e3:8.1f}ms {tl * 1e3:8.1f}ms {tl / ts:6.1f}")
    print("growth = time(10 N) / time(N), 10 if linear; TSL/PyTorch below 1 means TSL is faster")


if __name__ == "__main__":
    main()
