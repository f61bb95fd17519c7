#!/usr/bin/env python3
"""Launch-time benchmark: `srun` of two programs on the local 4-node cluster
through stepmap and through Slurm's own mpi/pmix, against the `/bin/true`
floor: the MPI hello (MPI_Init, an Allreduce, MPI_Finalize) and a PMIx-only
program (tests/programs/pmix_fence.c: Init, Put, Commit, a data-collecting
Fence, Get, Finalize), which shows the launcher's own cost without an MPI
library's start-up in the way. Fair: the floor and
mpi/pmix run with plugstack.conf empty (stepmap not loaded), stepmap's runs
with it; runs interleaved (interleave.py). Launch overhead = a median minus
the floor's median; ratio = stepmap's overhead / mpi/pmix's (lower is
better; issue 11's targets: 0.7 for the hello, 0.5 for PMIx-only).

Usage: launch_time.py [--rounds N] [--ranks 4,8,16,32] [--programs hello,pmix]
       [--network-model "delay=0.02 rate=10000"]   (root; the cluster
up with the plugin, as contrib/bench/launch-time.sh arranges)."""

import argparse
import os
import re
import statistics

from interleave import (Plugstack, Variant, add_network_model_option, cluster, describe,
                        median, modelled_network, run_rounds)


PMIX_FENCE = os.environ.get("STEPMAP_PMIX_FENCE", "")


def hello_ok(n):
    return lambda r: r.returncode == 0 and len(cluster.hello_ranks(r.stdout)) == n


def fence_ok(n):
    return lambda r: r.returncode == 0 and r.stdout.count("pmix_fence rank ") == n


# name, program, success check, the target ratio
PROGRAMS = {
    "hello": ("MPI hello", lambda: cluster.MPI_HELLO, hello_ok, 0.7),
    "pmix": ("PMIx-only", lambda: PMIX_FENCE, fence_ok, 0.5),
}


def variants(n, program, check):
    over = n > 8  # 4 nodes x 2 CPUs
    slurm_shape = ["-N", "4", "-n", str(n), "-m", "cyclic"] + (["--overcommit"] if over else [])
    ours = ["-n", str(n), "--map-by", "node:OVERSUBSCRIBE" if over else "node"]
    return [
        Variant(f"N={n} /bin/true (floor)", False,
                ["srun", "--mpi=none"] + slurm_shape + ["/bin/true"]),
        Variant(f"N={n} Slurm mpi/pmix", False,
                ["srun", "--mpi=pmix"] + slurm_shape + [program], ok=check(n)),
        Variant(f"N={n} stepmap", True, ["srun"] + ours + [program], ok=check(n)),
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
    ap.add_argument("--programs", default="hello,pmix")
    add_network_model_option(ap)
    opts = ap.parse_args()
    programs = opts.programs.split(",")
    for p in programs:
        if p not in PROGRAMS:
            raise SystemExit(f"--programs: unknown program '{p}' (hello, pmix)")
    if "pmix" in programs and not PMIX_FENCE:
        raise SystemExit("STEPMAP_PMIX_FENCE is not set (contrib/bench/launch-time.sh sets it)")
    cluster.start_cluster()
    summary = []
    if opts.network_model:
        print(f"every node's link: {opts.network_model} (contrib/cluster/link.sh shape)")
    with modelled_network(opts.network_model), Plugstack() as plugstack:
        for n in [int(x) for x in opts.ranks.split(",")]:
            # One floor per node count, shared by both programs; every
            # variant of that count interleaved in the same rounds.
            runs, floor = [], None
            for p in programs:
                name, program, check, _ = PROGRAMS[p]
                f, pmix, ours = variants(n, program(), check)
                pmix.name += f" {name}"
                ours.name += f" {name}"
                floor = floor or f
                runs.append((p, pmix, ours))
            run_rounds(plugstack, [floor] + [v for _, a, b in runs for v in (a, b)], opts.rounds)
            print(describe(floor))
            for p, pmix, ours in runs:
                print(describe(pmix))
                print(describe(ours))
                theirs = median(pmix) - median(floor)
                mine = median(ours) - median(floor)
                summary.append((p, n, mine, theirs))
                print(f"  {PROGRAMS[p][0]} overhead above the floor: stepmap {mine * 1000:.0f} ms, "
                      f"mpi/pmix {theirs * 1000:.0f} ms, ratio {mine / theirs:.2f}", flush=True)
    print()
    print(f"{'program':>9} {'ranks':>5} {'stepmap ms':>11} {'mpi/pmix ms':>12} {'ratio':>6} "
          f"{'target':>6}")
    for p, n, mine, theirs in summary:
        print(f"{PROGRAMS[p][0]:>9} {n:>5} {mine * 1000:>11.0f} {theirs * 1000:>12.0f} "
              f"{mine / theirs:>6.2f} {PROGRAMS[p][3]:>6.1f}")
    print("overhead = median launch time - median /bin/true floor; ratio = stepmap / mpi/pmix "
          "(lower is better)")
    plugin_cost(opts.rounds)


if __name__ == "__main__":
    main()
