#!/usr/bin/env python3
"""Launch-time benchmark: `srun` of the MPI hello (MPI_Init, an Allreduce,
MPI_Finalize) on the local 4-node cluster through stepmap and through
Slurm's own mpi/pmix, against the `/bin/true` floor. Fair: the floor and
mpi/pmix run with plugstack.conf empty (stepmap not loaded), stepmap's runs
with it; runs interleaved (interleave.py). Launch overhead = a median minus
the floor's median; ratio = stepmap's overhead / mpi/pmix's (lower is
better; issue 11's target is 0.7).

Usage: launch_time.py [--rounds N] [--ranks 4,8,16,32]   (root; the cluster
up with the plugin, as contrib/bench/launch-time.sh arranges)."""

import argparse
import re
import statistics

from interleave import Plugstack, Variant, cluster, describe, median, run_rounds


def hello_ok(n):
    return lambda r: r.returncode == 0 and len(cluster.hello_ranks(r.stdout)) == n


def variants(n, hello):
    over = n > 8  # 4 nodes x 2 CPUs
    slurm_shape = ["-N", "4", "-n", str(n), "-m", "cyclic"] + (["--overcommit"] if over else [])
    ours = ["-n", str(n), "--map-by", "node:OVERSUBSCRIBE" if over else "node"]
    return [
        Variant(f"N={n} /bin/true (floor)", False,
                ["srun", "--mpi=none"] + slurm_shape + ["/bin/true"]),
        Variant(f"N={n} Slurm mpi/pmix", False,
                ["srun", "--mpi=pmix"] + slurm_shape + [hello], ok=hello_ok(n)),
        Variant(f"N={n} stepmap", True, ["srun"] + ours + [hello], ok=hello_ok(n)),
    ]


def planned_ms(result):
    m = re.search(r"stepmap: planned \d+ ranks on \d+ nodes in ([0-9.]+) ms", result.stderr)
    if not m:
        raise SystemExit(f"no planning time in srun -v output:\n{result.stderr}")
    return float(m.group(1))


def plugin_cost(rounds):
    """The srun-side cost of planning (reading options, filtering, planning,
    writing the host file) for a 4-node job, as `srun -v` reports it."""
    inside, outside = [], []
    for _ in range(rounds):
        inside.append(planned_ms(cluster.run_as_user(
            ["salloc", "-N", "4", "-n", "8", "srun", "-v", "-n", "4", "--map-by", "node",
             "true"])))
        outside.append(planned_ms(cluster.srun("-v", "-n", "4", "--map-by", "node", "true")))
    print(f"srun-side planning, 4 nodes: {statistics.median(inside):.3f} ms median inside an "
          f"allocation, {statistics.median(outside):.3f} ms when srun allocates (reads Slurm's "
          f"node table)")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--ranks", default="4,8,16,32")
    opts = ap.parse_args()
    cluster.start_cluster()
    summary = []
    with Plugstack() as plugstack:
        for n in [int(x) for x in opts.ranks.split(",")]:
            floor, pmix, ours = variants(n, cluster.MPI_HELLO)
            run_rounds(plugstack, [floor, pmix, ours], opts.rounds)
            for v in (floor, pmix, ours):
                print(describe(v))
            theirs = median(pmix) - median(floor)
            mine = median(ours) - median(floor)
            summary.append((n, mine, theirs))
            print(f"  overhead above the floor: stepmap {mine * 1000:.0f} ms, mpi/pmix "
                  f"{theirs * 1000:.0f} ms, ratio {mine / theirs:.2f}", flush=True)
    print()
    print(f"{'ranks':>5} {'stepmap ms':>11} {'mpi/pmix ms':>12} {'ratio':>6}")
    for n, mine, theirs in summary:
        print(f"{n:>5} {mine * 1000:>11.0f} {theirs * 1000:>12.0f} {mine / theirs:>6.2f}")
    print("overhead = median launch time - median /bin/true floor; ratio = stepmap / mpi/pmix "
          "(lower is better; target 0.7)")
    plugin_cost(opts.rounds)


if __name__ == "__main__":
    main()
