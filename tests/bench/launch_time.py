#!/usr/bin/env python3
"""Launch-time benchmark: wall time of `srun` running the MPI hello (MPI_Init,
an Allreduce, MPI_Finalize) on the local 4-node cluster, through stepmap and
through Slurm's own mpi/pmix, alternating runs so both see the same machine.

Usage: launch_time.py [--reps N]   (run as root; the cluster must be up with
the plugin loaded, as contrib/bench/launch-time.sh arranges)."""

import argparse
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "e2e"))
import cluster  # noqa: E402

CASES = [
    # (ranks, stepmap srun args, Slurm mpi/pmix srun args)
    (4, ["--map-by", "node"], ["-N", "4", "-m", "cyclic"]),
    (8, ["--map-by", "node"], ["-N", "4", "-m", "cyclic"]),
    (16, ["--map-by", "node:OVERSUBSCRIBE"], ["-N", "4", "-m", "cyclic", "--overcommit"]),
]


def timed(args):
    t0 = time.perf_counter()
    r = cluster.srun(*args, timeout=120)
    dt = time.perf_counter() - t0
    if r.returncode != 0 or len(cluster.hello_ranks(r.stdout)) == 0:
        raise SystemExit(f"srun {' '.join(args)} failed:\n{r.stdout}\n{r.stderr}")
    return dt


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=10)
    opts = ap.parse_args()
    hello = cluster.MPI_HELLO
    cluster.start_cluster()
    print(f"{'ranks':>5} {'stepmap median s':>17} {'mpi/pmix median s':>18} {'ratio':>6}")
    for n, ours, theirs in CASES:
        a = ["-n", str(n)] + ours + [hello]
        b = ["--mpi=pmix", "-n", str(n)] + theirs + [hello]
        timed(a), timed(b)  # warm caches for both
        sa, sb = [], []
        for _ in range(opts.reps):
            sa.append(timed(a))
            sb.append(timed(b))
        ma, mb = statistics.median(sa), statistics.median(sb)
        print(f"{n:>5} {ma:>17.3f} {mb:>18.3f} {ma / mb:>6.2f}", flush=True)
    print("ratio = stepmap / Slurm mpi/pmix (lower is better; 1.0 = same)")


if __name__ == "__main__":
    main()
