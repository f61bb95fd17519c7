#!/usr/bin/env python3
"""Dynamic-process benchmarks (issue 25), programs built with Open MPI 5,
under `srun` with stepmap and under Open MPI 5's own mpirun in the same
allocation:
- accept: MPI_Comm_accept meeting MPI_Comm_connect between the two halves
  of one job (tests/programs/mpi_names.c accept); the slowest rank's time
  from the port's lookup to the intercommunicator.
- spawn: one rank's MPI_Comm_spawn of 1, 4 and 8 children
  (tests/programs/mpi_spawn.c), the call's time on the spawner: the
  children's start, their MPI_Init and the connect to them. 8 children do
  not fit the 7 free slots: both are told map_by slot:OVERSUBSCRIBE.
- sessions: an MPI-4 sessions program's MPI_Comm_create_from_group over
  mpi://WORLD (tests/programs/mpi_sessions.c; a PMIx group construct with
  a context id), the slowest rank's time; needs the server built with PMIx 5.
Start-up of the job itself is in neither. Fair: the mpirun runs with
plugstack.conf empty (its daemons start through srun, which then pays
nothing of ours); runs interleaved (interleave.py). Ratio = stepmap's
median / mpirun's (lower is better).

Usage: dynamic_processes.py [--rounds N] [--ranks 4,8] [--children 1,4,8]
       [--only accept|spawn|sessions]   (root; the cluster up with the plugin and
Open MPI 5 built, as contrib/bench/dynamic-processes.sh arranges)."""

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


def spawn_timed(children, times):
    """A check that keeps the spawner's spawn-ms of a good run."""
    def ok(r):
        m = re.search(r"^spawn-ms ([0-9.]+)$", r.stdout, re.M)
        good = (r.returncode == 0 and "parent 0 spawn ok" in r.stdout and m
                and r.stdout.count("child ") == children)
        if good:
            times.append(float(m.group(1)))
        return bool(good)
    return ok


def create_timed(times):
    """A check that keeps a good sessions run's create-ms."""
    def ok(r):
        m = re.search(r"^create-ms ([0-9.]+)$", r.stdout, re.M)
        good = r.returncode == 0 and m
        if good:
            times.append(float(m.group(1)))
        return bool(good)
    return ok


def measure(plugstack, variants, times, rounds, unit):
    run_rounds(plugstack, variants, rounds)
    for v, got in zip(variants, times):
        if not got:
            raise SystemExit(f"{v.name}: every run failed; last one:\n"
                             f"{v.last_failure.stdout}\n{v.last_failure.stderr}")
        print(f"{v.name:<30} {unit} median {statistics.median(got):8.2f} ms"
              f"  min {min(got):8.2f}  runs {len(got)}  failed {v.failed}", flush=True)
    return statistics.median(times[0]), statistics.median(times[1])


def spawn_rows(plugstack, mpirun, program, counts, rounds):
    rows = []
    job = ["salloc", "-N", "4", "-n", "8"]
    for children in counts:
        args = [program, "parent", str(children)] + (
            ["map_by=slot:OVERSUBSCRIBE"] if children > 7 else [])
        ours, theirs = [], []
        variants = [
            Variant(f"spawn {children} stepmap srun", True,
                    job + ["srun", "-n", "1", "--map-by", "slot"] + args,
                    ok=spawn_timed(children, ours), timeout=180),
            Variant(f"spawn {children} Open MPI 5 mpirun", False,
                    job + [mpirun, "-n", "1"] + args,
                    ok=spawn_timed(children, theirs), timeout=180),
        ]
        mine, peer = measure(plugstack, variants, (ours, theirs), rounds, "MPI_Comm_spawn")
        rows.append((f"spawn {children}", mine, peer))
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--ranks", default="4,8")
    ap.add_argument("--children", default="1,4,8")
    ap.add_argument("--only", choices=["accept", "spawn", "sessions"])
    opts = ap.parse_args()
    if not cluster.have_ompi5():
        raise SystemExit("Open MPI 5 is not built (STEPMAP_OMPI5_PREFIX; "
                         "contrib/openmpi/build-openmpi5.sh builds it)")
    cluster.start_cluster()
    directory, program = cluster.build_with_ompi5("mpi_names.c", "stepmap-bench-names-")
    spawn_dir, spawner = cluster.build_with_ompi5("mpi_spawn.c", "stepmap-bench-spawn-")
    sessions_dir, sessions = cluster.build_with_ompi5("mpi_sessions.c", "stepmap-bench-sessions-")
    mpirun = f"{cluster.OMPI5}/bin/mpirun"
    rows = []
    try:
        with Plugstack() as plugstack:
            if opts.only in (None, "sessions"):
                for n in [int(x) for x in opts.ranks.split(",")]:
                    job = ["salloc", "-N", "4", "-n", str(n)]
                    ours, theirs = [], []
                    variants = [
                        Variant(f"sessions n={n} stepmap srun", True,
                                job + ["srun", "--map-by", "node", sessions],
                                ok=create_timed(ours), timeout=180),
                        Variant(f"sessions n={n} Open MPI 5 mpirun", False,
                                job + [mpirun, "-n", str(n), "--map-by", "node", sessions],
                                ok=create_timed(theirs), timeout=180),
                    ]
                    mine, peer = measure(plugstack, variants, (ours, theirs), opts.rounds,
                                         "create_from_group")
                    rows.append((f"sessions {n} ranks", mine, peer))
            if opts.only in (None, "spawn"):
                rows += spawn_rows(plugstack, mpirun, spawner,
                                   [int(x) for x in opts.children.split(",")], opts.rounds)
            for n in ([] if opts.only in ("spawn", "sessions") else [int(x) for x in opts.ranks.split(",")]):
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
                mine, peer = measure(plugstack, variants, (ours, theirs), opts.rounds,
                                     "accept/connect")
                rows.append((f"accept {n} ranks", mine, peer))
    finally:
        shutil.rmtree(directory, ignore_errors=True)
        shutil.rmtree(spawn_dir, ignore_errors=True)
        shutil.rmtree(sessions_dir, ignore_errors=True)
    print()
    print(f"{'what':<16} {'stepmap ms':>11} {'mpirun ms':>10} {'ratio':>6}")
    for what, mine, peer in rows:
        print(f"{what:<16} {mine:>11.2f} {peer:>10.2f} {mine / peer:>6.2f}")
    print("spawn = MPI_Comm_spawn on the spawner; accept = the slowest rank's lookup of the "
          "port to the intercommunicator; sessions = the slowest rank's "
          "MPI_Comm_create_from_group over mpi://WORLD; ratio = stepmap / mpirun (lower is better)")


if __name__ == "__main__":
    main()
