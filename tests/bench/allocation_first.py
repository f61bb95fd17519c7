#!/usr/bin/env python3
"""What allocation first costs: srun without an allocation, stepmap's
`srun -n 8 --map-by node` (stepmap asks Slurm for the job, then plans)
next to plain `srun -n 8` with the plugin not loaded, runs interleaved; and
the srun-side cost of the plugin as `srun -v` reports it.

Usage: allocation_first.py [--reps N]   (run as root; the cluster must be
up with the plugin loaded, as contrib/bench/allocation-first.sh arranges)."""

import argparse
import os
import re
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "e2e"))
import cluster  # noqa: E402

PLUGSTACK = os.path.join(os.environ.get("STEPMAP_CLUSTER_DIR", "/var/tmp/stepmap-cluster"),
                         "etc", "plugstack.conf")


class Plugstack:
    """Switches the plugin in and out of plugstack.conf (srun and every
    slurmstepd read it anew), restoring it at the end."""

    def __init__(self):
        with open(PLUGSTACK) as f:
            self.loaded = f.read()

    def load(self, on):
        with open(PLUGSTACK, "w") as f:
            f.write(self.loaded if on else "")

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.load(True)


FAILED = {}


def timed(name, args, check):
    t0 = time.perf_counter()
    r = cluster.srun(*args, timeout=120)
    dt = time.perf_counter() - t0
    if r.returncode != 0 or not check(r):
        FAILED[name] = FAILED.get(name, 0) + 1
        return None, r
    return dt, r


def summary(values):
    values = [v for v in values if v is not None]
    if not values:
        return "no successful run"
    return (f"median {statistics.median(values):.3f} s (min {min(values):.3f}, "
            f"max {max(values):.3f}, {len(values)} runs)")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=9)
    opts = ap.parse_args()
    cluster.start_cluster()
    hello = cluster.MPI_HELLO
    ok = lambda r: True  # noqa: E731
    hello_ok = lambda r: len(cluster.hello_ranks(r.stdout)) == 8  # noqa: E731
    cases = [
        # name, plugin loaded, srun arguments, success check
        ("plain srun -n 8 true", False, ["-n", "8", "true"], ok),
        ("stepmap srun -n 8 --map-by node true", True, ["-n", "8", "--map-by", "node", "true"],
         ok),
        ("plain srun --mpi=pmix -n 8 mpi_hello", False, ["--mpi=pmix", "-n", "8", hello],
         hello_ok),
        ("stepmap srun -n 8 --map-by node mpi_hello", True,
         ["-n", "8", "--map-by", "node", hello], hello_ok),
    ]
    times = {name: [] for name, *_ in cases}
    plan_ms, wait_ms = [], []
    with Plugstack() as plugstack:
        for _ in range(opts.reps + 1):  # the first round warms caches, not counted
            for name, loaded, args, check in cases:
                plugstack.load(loaded)
                dt, _ = timed(name, args, check)
                times[name].append(dt)
            plugstack.load(True)
            r = cluster.srun("-v", "-n", "8", "--map-by", "node", "true")
            m = re.search(r"planned \d+ ranks on \d+ nodes in ([0-9.]+) ms \(and waited "
                          r"([0-9.]+) ms", r.stderr)
            if m:
                plan_ms.append(float(m.group(1)))
                wait_ms.append(float(m.group(2)))
    print("without an allocation, 4 nodes x 2 CPUs, runs interleaved, plugin loaded only for "
          "stepmap's runs:")
    for name in times:
        print(f"  {name:<42} {summary(times[name][1:])}")
    base = [v for v in times["plain srun -n 8 true"][1:] if v]
    ours = [v for v in times["stepmap srun -n 8 --map-by node true"][1:] if v]
    if base and ours:
        print(f"  ratio stepmap / plain (true): "
              f"{statistics.median(ours) / statistics.median(base):.2f}")
    if plan_ms:
        print(f"srun-side cost of the plugin (srun -v): median {statistics.median(plan_ms[1:] or plan_ms):.3f} ms"
              f", plus a median {statistics.median(wait_ms[1:] or wait_ms):.3f} ms from the "
              f"allocation request to Slurm's grant")
    print(f"failed runs: {FAILED or 'none'}")


if __name__ == "__main__":
    main()
