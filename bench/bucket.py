#!/usr/bin/env python3
"""bench/bucket.py — one data-parallel training step of an MLP (784 → 1024 → 1024 → 10,
softmax cross-entropy, SGD, a global batch of 256) at 1 and 2 ranks: TSL's step compiled
for :cpu with blocking gradient all-reduces (jit :bucket-bytes 0), one 25 MiB bucket and
1 MiB buckets (docs/distributed.md), beside PyTorch's DistributedDataParallel (gloo, its
default 25 MiB buckets, all-reduced while the backward pass runs) on the same model, in
one run.

Each rank runs one thread (TSL_NUM_THREADS=1, torch.set_num_threads(1)), so 2 ranks fill
this machine's cores. Timed per run: a barrier, then the step alone, the slowest rank's
time; a warm-up, then 15 runs, three rounds with TSL and PyTorch taking turns; medians.

    /usr/bin/python3 bench/bucket.py [path/to/tsl] [--smoke]
"""
import os
import statistics
import subprocess
import sys
import tempfile

from measure import HERE, cpu_model
from allreduce import mpirun
from gemm import best_coretype

TORCH = r'''
import os, sys, time, torch, torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel
torch.set_num_threads(1)
dist.init_process_group("gloo")
rank, size = dist.get_rank(), dist.get_world_size()
batch, width, runs = map(int, sys.argv[1:4])
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(784, width), torch.nn.ReLU(), torch.nn.Linear(width, width),
                            torch.nn.ReLU(), torch.nn.Linear(width, 10))
ddp = DistributedDataParallel(model) if size > 1 else model
opt = torch.optim.SGD(model.parameters(), lr=0.01)
g = torch.Generator().manual_seed(1 + rank)
local = batch // size
x = torch.rand(local, 784, generator=g)
y = torch.randint(0, 10, (local,), generator=g)
def step():
    opt.zero_grad(set_to_none=True)
    torch.nn.functional.cross_entropy(ddp(x), y).backward()
    opt.step()
step(); step()
for _ in range(runs):
    dist.barrier()
    start = time.perf_counter_ns(); step(); took = time.perf_counter_ns() - start
    slowest = torch.tensor([took], dtype=torch.int64)
    dist.all_reduce(slowest, op=dist.ReduceOp.MAX)
    if rank == 0:
        print("pytorch-ddp", width, int(slowest.item()), flush=True)
'''


def torch_version():
    try:
        import torch
        return torch.__version__
    except ImportError:
        return "(absent)"


def main():
    args = sys.argv[1:]
    smoke = "--smoke" in args
    positional = [a for a in args if not a.startswith("--")]
    tsl = positional[0] if positional else os.path.join(HERE, "..", "build", "release", "repl", "tsl")
    batch, width, runs, rounds = (64, 128, 2, 1) if smoke else (256, 1024, 15, 3)
    # PyTorch's BLAS is Debian's libblas.so.3: OpenBLAS when libopenblas0-pthread is
    # installed (`tools/dev bench` installs it), told the best kernel for this CPU.
    env = dict(os.environ, TSL_NUM_THREADS="1", OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1",
               OPENBLAS_CORETYPE=best_coretype(), MASTER_ADDR="127.0.0.1", MASTER_PORT="29533",
               OMPI_MCA_btl_vader_single_copy_mechanism="none")
    try:
        import torch  # noqa: F401
        have_torch = True
    except ImportError:
        have_torch = False
    times = {}
    with tempfile.TemporaryDirectory() as scratch:
        peer = os.path.join(scratch, "ddp.py")
        with open(peer, "w") as f:
            f.write(TORCH)
        for _ in range(rounds):
            for ranks in (1, 2):
                commands = [[*mpirun(ranks), tsl, "run", os.path.join(HERE, "bucket.tsl"), str(batch), str(width),
                             str(runs)]]
                if have_torch:
                    # torchrun's environment by hand: mpirun gives each rank its number.
                    commands.append([*mpirun(ranks), "-x", "MASTER_ADDR", "-x", "MASTER_PORT", "sh", "-c",
                                     f'RANK=$OMPI_COMM_WORLD_RANK WORLD_SIZE=$OMPI_COMM_WORLD_SIZE exec '
                                     f'{sys.executable} {peer} {batch} {width} {runs}'])
                    commands[-1][len(mpirun(ranks)):len(mpirun(ranks))] = ["-x", "OPENBLAS_CORETYPE",
                                                                          "-x", "OPENBLAS_NUM_THREADS"]
                for command in commands:
                    out = subprocess.run(command, check=True, capture_output=True, text=True, env=env).stdout
                    for line in out.splitlines():
                        name, _, ns = line.split()
                        times.setdefault((ranks, name), []).append(float(ns) / 1e6)
    print(f"CPU: {cpu_model()}; MLP 784-{width}-{width}-10, global batch {batch}, one thread per rank; "
          f"median step time in ms (slowest rank); PyTorch {torch_version()} on "
          f"OPENBLAS_CORETYPE={env['OPENBLAS_CORETYPE']}")
    names = ["blocking", "bucket-25MiB", "bucket-1MiB"] + (["pytorch-ddp"] if have_torch else [])
    print(f"{'ranks':<7}" + "".join(f"{'TSL ' + n if not n.startswith('pytorch') else 'PyTorch DDP':>20}" for n in names)
          + f"{'DDP/TSL 25MiB':>15}")
    for ranks in (1, 2):
        med = {n: statistics.median(times[(ranks, n)]) for n in names if (ranks, n) in times}
        ratio = f"{med['pytorch-ddp'] / med['bucket-25MiB']:>15.2f}" if "pytorch-ddp" in med else ""
        print(f"{ranks:<7}" + "".join(f"{med.get(n, float('nan')):>20.1f}" for n in names) + ratio)
    if not have_torch:
        print("(PyTorch is not installed: `tools/dev bench` installs python3-torch)")


if __name__ == "__main__":
    main()
