#!/usr/bin/env python3
"""Connect/accept benchmark (issue 25): MPI_Comm_accept meeting
MPI_Comm_connect between the two halves of one job
(tests/programs/mpi_names.c accept, built with Open MPI 5), under `srun`
with stepmap and under Open MPI 5's own mpirun in the same kind of
allocation. The time is the program's own: the slowest rank's, from the
port's lookup to the intercommunicator (start-up is not in it). Fair: the
mpirun runs with plugstack.conf empty (its daemons start through srun,
which then pays nothing of ours); runs interleaved (interleave.py).
Ratio = stepmap's median / mpirun's (lower is better).

Usage: dynamic_processes.py [--rounds N] [--ranks 4,8]   (root; the cluster
up with the plugin and Open MPI 5 built, as contrib/bench/dynamic-processes.sh
arranges)."""

import argparse
import re
import shutil
import statistics

from interleave import Plugstack, Variant, cluster, run_rounds


def timed(n, times):
    """A check that keeps the program's accept-ms of a good run."""
    def ok(r):
        m = re.search(r"^accept-ms ([0-9.]+)$", r.stdout, re.M)
        good = r.returncode == 0 and r.stdout.count(" accept ok") == n and m
        if good:
            times.append(float(m.group(1)))
        return bool(good)
    return ok


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--ranks", default="4,8")
    opts = ap.parse_args()
    if not cluster.have_ompi5():
        raise SystemExit("Open MPI 5 is not built (STEPMAP_OMPI5_PREFIX; "
                         "contrib/openmpi/build-openmpi5.sh builds it)")
    cluster.start_cluster()
    directory, program = cluster.build_with_ompi5("mpi_names.c", "stepmap-bench-names-")
    mpirun = f"{cluster.OMPI5}/bin/mpirun"
    rows = []
    try:
        with Plugstack() as plugstack:
            for n in [int(x) for x in opts.ranks.split(",")]:
                job = ["salloc", "-N", "4", "-n", str(n)] + (["--overcommit"] if n > 8 else [])
                ours, theirs = [], []
                variants = [
                    Variant(f"n={n} stepmap srun", True,
                            job + ["srun", "-n", str(n), "--map-by", "node", program, "accept"],
                            ok=timed(n, ours), timeout=180),
                    Variant(f"n={n} Open MPI 5 mpirun", False,
                            job + [mpirun, "-n", str(n), "--map-by", "node", program, "accept"],
                            ok=timed(n, theirs), timeout=180),
                ]
                run_rounds(plugstack, variants, opts.rounds)
                for v, times in zip(variants, (ours, theirs)):
                    if not times:
                        raise SystemExit(f"{v.name}: every run failed; last one:\n"
                                         f"{v.last_failure.stdout}\n{v.last_failure.stderr}")
                    print(f"{v.name:<26} accept/connect median {statistics.median(times):8.2f} ms"
                          f"  min {min(times):8.2f}  runs {len(times)}  failed {v.failed}",
                          flush=True)
                rows.append((n, statistics.median(ours), statistics.median(theirs)))
    finally:
        shutil.rmtree(directory, ignore_errors=True)
    print()
    print(f"{'ranks':>5} {'stepmap ms':>11} {'mpirun ms':>10} {'ratio':>6}")
    for n, mine, peer in rows:
        print(f"{n:>5} {mine:>11.2f} {peer:>10.2f} {mine / peer:>6.2f}")
    print("time = the slowest rank's, lookup of the port to the intercommunicator; "
          "ratio = stepmap / mpirun (lower is better)")


if __name__ == "__main__":
    main()
