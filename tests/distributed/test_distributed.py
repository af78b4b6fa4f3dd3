#!/usr/bin/env python3
"""Programs run as many ranks: the collectives, their derivatives, data-parallel training
and faults, each as 1 rank (plain `tsl run`, the identity world), and under
`mpirun --oversubscribe -n 2` and `-n 4` (docs/distributed.md).

usage: test_distributed.py PATH_TO_TSL [--no-mpi] [--max-ranks N]

The .tsl programs beside this script check their own results against references each
rank computes alone and print `ok RANK SIZE`; this driver checks that every rank did,
that the exit status is 0, that trained parameters are the same bytes on every rank, and
that an error on one rank ends every rank with status 1 and the rank's message, within
seconds. --no-mpi (a build without MPI) checks the one-rank world and that --ranks says
it needs MPI. --max-ranks 2 (the sanitizer builds, where 4 ranks on 2 cores take
minutes) leaves out the runs on 4 ranks. Standard library only.
"""
import os
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "harness"))
from checks import check, report  # noqa: E402

NO_MPI = "--no-mpi" in sys.argv[2:]
MAX_RANKS = int(sys.argv[sys.argv.index("--max-ranks") + 1]) if "--max-ranks" in sys.argv else 4
TSL = os.path.abspath(sys.argv[1])
WORK = tempfile.mkdtemp(prefix="tsl-distributed-")

# Open MPI as the CI runs it: as root it must be allowed to; 4 ranks on 2 cores need
# --oversubscribe; containers may forbid the shared-memory single copy (CMA).
MPIRUN = ["mpirun", "--oversubscribe", "--mca", "orte_base_help_aggregate", "0"]
if os.geteuid() == 0:
    MPIRUN.append("--allow-run-as-root")
ENV = dict(os.environ, OMPI_MCA_btl_vader_single_copy_mechanism="none")
for name in ("OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK"):  # never a rank of an outer world
    ENV.pop(name, None)


class Result:
    def __init__(self, rc, out, err, seconds):
        self.rc, self.out, self.err, self.seconds = rc, out, err, seconds

    def __str__(self):
        return f"exit status: {self.rc} after {self.seconds:.1f}s\nstdout: {self.out[-1500:]}\nstderr: {self.err[-1500:]}"


ROOT = os.path.dirname(os.path.dirname(HERE))


def run(command, timeout=240, cwd=WORK):
    """Runs `command`; the timeout is generous (4 ranks share 2 cores with whatever else
    runs) — the checks of faults bound their own times."""
    start = time.monotonic()
    try:
        p = subprocess.run(command, capture_output=True, cwd=cwd, env=ENV, timeout=timeout)
        rc, out, err = p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired as e:
        rc, out, err = "timeout", e.stdout or b"", e.stderr or b""
    return Result(rc, out.decode("utf-8", "replace"), err.decode("utf-8", "replace"), time.monotonic() - start)


def program(name):
    return os.path.join(HERE, name)


def ranks(n, *args, timeout=240):
    """`tsl run ARGS` as n ranks: plain for one rank (no launcher), under mpirun otherwise."""
    if n == 1:
        return run([TSL, "run", *args], timeout)
    return run([*MPIRUN, "-n", str(n), TSL, "run", *args], timeout)


def all_ok(result, n):
    """Every rank printed `ok RANK n` and the run ended well."""
    lines = {line for line in result.out.splitlines() if line.startswith("ok ")}
    ranks_ok = {int(line.split()[1]) for line in lines if len(line.split()) >= 3 and line.split()[2] == str(n)}
    return result.rc == 0 and ranks_ok == set(range(n))


def rank_pids(launcher):
    """The pids of the `tsl` processes `launcher` (mpirun) started."""
    pids = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/stat") as f:
                parent = f.read().rsplit(")", 1)[1].split()[1]
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                command = f.read()
        except OSError:  # ended meanwhile
            continue
        if parent == str(launcher) and b"tsl" in command:
            pids.append(int(pid))
    return sorted(pids)


def write(name, text):
    path = os.path.join(WORK, name)
    with open(path, "w") as f:
        f.write(text)
    return path


sizes = [1] if NO_MPI else [n for n in (1, 2, 4) if n <= MAX_RANKS]

for n in sizes:
    r = ranks(n, program("collectives.tsl"))
    check(f"every collective, eagerly and on :interp :cpu :tc, on {n} rank(s)", all_ok(r, n), str(r))
    r = ranks(n, program("derivatives.tsl"))
    check(f"derivatives by finite differences across {n} rank(s), trees, forward mode", all_ok(r, n), str(r))
    folder = os.path.join(WORK, f"train-{n}")
    os.makedirs(folder, exist_ok=True)
    r = ranks(n, program("train.tsl"), folder)
    check(f"data-parallel training on {n} rank(s) follows one process, parameters equal after every step",
          all_ok(r, n), str(r))
    saved = [open(os.path.join(folder, f"params-{q}.npy"), "rb").read()
             for q in range(n) if os.path.exists(os.path.join(folder, f"params-{q}.npy"))]
    check(f"trained parameters are the same bytes on all {n} rank(s)", len(saved) == n and len(set(saved)) == 1,
          f"{len(saved)} files, {len(set(saved))} distinct")

# examples/digits-dp.tsl: the same held-out accuracy on every number of ranks (within
# 0.5 %), and the loss curve of each epoch the one-process curve within float rounding.
curves, accuracies = {}, {}
for n in sizes:
    curve = os.path.join(WORK, f"curve-{n}.npy")
    command = [TSL, "run", "examples/digits-dp.tsl", curve]
    r = run(command if n == 1 else [*MPIRUN, "-n", str(n), *command], cwd=ROOT)
    accuracy = [line for line in r.out.splitlines() if "held-out accuracy" in line]
    if r.rc == 0 and accuracy and os.path.exists(curve):
        accuracies[n] = float(accuracy[0].split()[2])
        with open(curve, "rb") as f:
            data = f.read()
        header = data[8 + 2 + int.from_bytes(data[8:10], "little"):]  # .npy v1: f32 values after the header
        curves[n] = [float(v) for v in __import__("array").array("f", header)]
    check(f"examples/digits-dp.tsl trains on {n} rank(s)", n in curves, str(r))
for n in sizes[1:]:
    if 1 in curves and n in curves:
        worst = max(abs(a - b) / b for a, b in zip(curves[n], curves[1]))
        check(f"digits on {n} ranks: the loss curve of 1 rank (worst relative difference {worst:.1e}) "
              f"and its accuracy ({accuracies[n]} % vs {accuracies[1]} %)",
              len(curves[n]) == len(curves[1]) == 20 and worst < 1e-5 and abs(accuracies[n] - accuracies[1]) <= 0.5,
              f"{curves[n]}\n{curves[1]}")

if NO_MPI:
    r = run([TSL, "run", "--ranks", "2", program("collectives.tsl")])
    check("--ranks in a build without MPI says it needs MPI (status 2)",
          r.rc == 2 and "needs a build with MPI" in r.err, str(r))
    # Started as one of two ranks (as mpirun would), it refuses to run as a world of one.
    ENV["OMPI_COMM_WORLD_SIZE"] = "2"
    r = run([TSL, "run", program("collectives.tsl")])
    del ENV["OMPI_COMM_WORLD_SIZE"]
    check("a build without MPI launched as one of 2 ranks says so (status 1)",
          r.rc == 1 and "this build of TSL has no MPI, so it cannot run as one of 2 ranks" in r.err, str(r))
else:
    # An error on one rank: every rank ends, status 1, the failing rank's message first.
    for n in (2, 4):
        r = ranks(n, program("fault.tsl"), timeout=30)
        expected = f"rank {n - 1}: {program('fault.tsl')}:7:3: shape error: + cannot broadcast shapes [2] and [3]"
        check(f"an error on rank {n - 1} of {n} ends every rank with status 1 and its message",
              r.rc == 1 and expected in r.err and "after" not in r.out and r.seconds < 20, str(r))
        check(f"the failing rank's source line and caret carry its prefix ({n} ranks)",
              f"rank {n - 1}:   (+ (ones [2]) (ones [3])))" in r.err and f"rank {n - 1}:   ^~~" in r.err, str(r))
    # Ranks that disagree on a collective fail instead of hanging.
    mismatch = write("mismatch.tsl", "(all-reduce (ones [(+ 2 (world-rank))]))\n(println \"never\")\n")
    r = ranks(2, mismatch, timeout=30)
    check("ranks calling all-reduce on different shapes fail with status 1",
          r.rc == 1 and "the ranks disagree" in r.err and "all-reduce of f32[" in r.err and "never" not in r.out,
          str(r))
    ended = write("ended.tsl", "(when (= (world-rank) 0) (barrier))\n")
    r = ranks(2, ended, timeout=30)
    # Both ranks see it; whichever reports first ends the other, perhaps before it speaks.
    check("a rank whose program ends while another waits in a collective: status 1, no hang",
          r.rc == 1 and ("rank 0: " in r.err and "the ranks disagree" in r.err or
                         "rank 1: runtime error: this rank's program ended while another rank still calls a collective"
                         in r.err), str(r))
    exits = write("exits.tsl", "(when (= (world-rank) 1) (exit 3))\n(barrier)\n")
    r = ranks(2, exits, timeout=30)
    check("(exit 3) on one rank ends every rank with status 3", r.rc == 3, str(r))
    # Ctrl-C to the launcher stops every rank; a rank that dies ends the others.
    spin = write("spin.tsl", "(println \"ready\" (world-rank))\n(loop [i 0] (when (= (world-rank) 0) (barrier)) (recur (inc i)))\n")
    for kill in ("interrupt", "rank"):
        p = subprocess.Popen([*MPIRUN, "-n", "2", TSL, "run", spin], cwd=WORK, env=ENV, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE)
        ready = [p.stdout.readline() for _ in range(2)]
        start = time.monotonic()  # from the signal on
        if kill == "interrupt":
            p.send_signal(signal.SIGINT)
        else:  # SIGKILL to one rank, a child of mpirun
            os.kill(rank_pids(p.pid)[-1], signal.SIGKILL)
        try:
            rc = p.wait(timeout=20)
        except subprocess.TimeoutExpired:
            p.kill()
            rc = "timeout"
        p.stdout.close()
        p.stderr.close()
        took = time.monotonic() - start
        what = "Ctrl-C to mpirun stops every rank" if kill == "interrupt" else "a rank killed ends the others"
        check(f"{what} (status {rc} in {took:.1f}s)", rc not in (0, "timeout") and took < 15 and len(ready) == 2,
              f"ready: {ready}")
    # tsl run --ranks N starts mpirun itself.
    r = run([TSL, "run", "--ranks", "2", program("collectives.tsl")])
    check("tsl run --ranks 2 runs the program as two ranks", all_ok(r, 2), str(r))
    r = run([TSL, "--ranks=2", "run", write("args.tsl", "(println \"ok\" (world-rank) (world-size) *args*)\n"),
             "--ranks", "x"])
    check("--ranks before run; the program's own arguments pass through untouched",
          all_ok(r, 2) and "[--ranks x]" in r.out, str(r))

r = run([TSL, "--ranks", "2"])
check("--ranks without run is a usage error", r.rc == 2 and "--ranks is an option of tsl run" in r.err, str(r))
r = run([TSL, "run", "--ranks", "0", program("collectives.tsl")])
check("--ranks 0 is a usage error", r.rc == 2 and "--ranks must be a number from 1 to 4096" in r.err, str(r))

sys.exit(report())
