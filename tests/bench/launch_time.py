#!/usr/bin/env python3
"""Launch-time benchmark: wall time of `srun` running the MPI hello (MPI_Init,
an Allreduce, MPI_Finalize) on the local 4-node cluster, through stepmap and
through Slurm's own mpi/pmix, alternating runs so both see the same machine.

Usage: launch_time.py [--reps N]   (run as root; the cluster must be up with
the plugin loaded, as contrib/bench/launch-time.sh arranges)."""

import argparse
import os
import re
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


FAILURES = {}


def timed(args, tries=3):
    """Wall time of one successful run. A failed run is counted (Slurm's
    22.05 mpi/pmix sometimes crashes Open MPI on this one-host cluster) and
    retried, at most `tries` times."""
    for _ in range(tries):
        t0 = time.perf_counter()
        r = cluster.srun(*args, timeout=120)
        dt = time.perf_counter() - t0
        if r.returncode == 0 and cluster.hello_ranks(r.stdout):
            return dt
        key = "mpi/pmix" if "--mpi=pmix" in args else "stepmap"
        FAILURES[key] = FAILURES.get(key, 0) + 1
    raise SystemExit(f"srun {' '.join(args)} failed {tries} times:\n{r.stdout}\n{r.stderr}")


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
    print(f"failed runs (retried): stepmap {FAILURES.get('stepmap', 0)}, "
          f"mpi/pmix {FAILURES.get('mpi/pmix', 0)}")
    plugin_cost(opts.reps)


def planned_ms(result):
    m = re.search(r"stepmap: planned \d+ ranks on \d+ nodes in ([0-9.]+) ms", result.stderr)
    if not m:
        raise SystemExit(f"no planning time in srun -v output:\n{result.stderr}")
    return float(m.group(1))


def plugin_cost(reps):
    """The srun-side cost of the plugin (reading options, filtering, planning,
    writing the host file) for a 4-node job, as `srun -v` reports it."""
    inside, outside = [], []
    for _ in range(reps):
        inside.append(planned_ms(cluster.run_as_user(
            ["salloc", "-N", "4", "-n", "8", "srun", "-v", "-n", "4", "--map-by", "node",
             "true"])))
        outside.append(planned_ms(cluster.srun("-v", "-n", "4", "--map-by", "node", "true")))
    print(f"srun-side plugin cost, 4 nodes: {statistics.median(inside):.3f} ms median inside an "
          f"allocation, {statistics.median(outside):.3f} ms when srun allocates (reads Slurm's "
          f"node table); target < 5 ms")


if __name__ == "__main__":
    main()
