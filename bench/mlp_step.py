#!/usr/bin/env python3
"""bench/mlp_step.py — one MLP training step in TSL beside PyTorch, in one script.

The step: an MLP 784-256-256-10 with relu, cross-entropy on a batch of 128, the gradient
of every parameter, and a plain SGD update (lr 0.01). TSL runs it three ways
(bench/mlp-step.tsl): "eager" — (value-and-grad loss) compiled once per signature and
run on :interp, then optim/sgd operation by operation — and the whole step compiled with
jit for :interp and for :cpu, with and without donating the parameters. PyTorch
(Debian's python3-torch) runs it eagerly with autograd. Both sides run on one thread and
on as many as TSL's pool has (TSL_NUM_THREADS, else the core count); the ratio compares
the same thread count, and "÷ faster" the faster PyTorch configuration (Debian's build
can be much slower on two threads than on one: its OpenMP threads contend).

Each side reports the median of 21 steps after two warm-up steps; the ratio is
TSL / PyTorch (below 1: TSL is faster).

    /usr/bin/python3 bench/mlp_step.py [path/to/tsl]
"""
import os
import statistics
import subprocess
import sys
import time

import torch

from measure import cpu_model

HERE = os.path.dirname(os.path.abspath(__file__))
RUNS = 21


def torch_step_time(threads):
    torch.set_num_threads(threads)
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(784, 256), torch.nn.ReLU(), torch.nn.Linear(256, 256),
                                torch.nn.ReLU(), torch.nn.Linear(256, 10))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    loss_fn = torch.nn.CrossEntropyLoss()
    x = torch.randn(128, 784)
    y = torch.randint(0, 10, (128,))

    def step():
        optimizer.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        optimizer.step()
        return loss.item()

    step()
    step()
    times = []
    for _ in range(RUNS):
        start = time.perf_counter()
        step()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main():
    tsl = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "..", "build", "release", "repl", "tsl")
    threads = int(os.environ.get("TSL_NUM_THREADS", os.cpu_count() or 1))
    counts = sorted({1, threads})
    ours = {}
    for t in counts:
        env = dict(os.environ, TSL_NUM_THREADS=str(t))
        out = subprocess.run([tsl, "run", os.path.join(HERE, "mlp-step.tsl")], check=True, capture_output=True,
                             text=True, env=env).stdout
        ours[t] = {line.split()[0]: float(line.split()[1]) for line in out.splitlines() if line.strip()}
    by_threads = {t: torch_step_time(t) for t in counts}
    best = min(by_threads, key=by_threads.get)
    timings = ", ".join(f"{t} thread{'s' if t > 1 else ''} {v * 1e3:.3f} ms" for t, v in by_threads.items())
    print(f"CPU: {cpu_model()}")
    print(f"PyTorch {torch.__version__}: {timings} (the faster: {best})")
    print(f"{'threads':<8}{'mode':<12}{'TSL':>12}{'PyTorch':>12}{'ratio':>8}{'÷ faster':>10}")
    for t in counts:
        for mode in ["eager", "interp", "cpu", "cpu-donate"]:
            print(f"{t:<8}{mode:<12}{ours[t][mode] * 1e3:>9.3f} ms{by_threads[t] * 1e3:>9.3f} ms"
                  f"{ours[t][mode] / by_threads[t]:>8.2f}{ours[t][mode] / by_threads[best]:>10.2f}")

if __name__ == "__main__":
    main()
