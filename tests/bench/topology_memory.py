#!/usr/bin/env python3
"""Memory of N local clients holding the node topology: adopting the step
server's hwloc shared memory versus each parsing the XML into its own copy.
Prints the mean RSS and PSS per client (PSS shares shared pages fairly
between the processes that map them) and the ratio shmem / xml.

Usage: topology_memory.py [--clients N ...] (root; cluster up, as
contrib/bench/topology-memory.sh arranges)."""

import argparse
import os
import re
import statistics
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "e2e"))
import cluster  # noqa: E402


def measure(n, mode):
    r = cluster.srun("-n", str(n), "--host", "n1", "--map-by", "slot:OVERSUBSCRIBE",
                     cluster.PMIX_CLIENT, "mem", mode, timeout=120)
    rows = re.findall(r"^rank \d+ mem \S+ rss (\d+) pss (\d+)$", r.stdout, re.M)
    if r.returncode != 0 or len(rows) != n:
        raise SystemExit(f"{mode} run failed:\n{r.stdout}\n{r.stderr}")
    return (statistics.mean(int(a) for a, _ in rows), statistics.mean(int(b) for _, b in rows))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--clients", type=int, nargs="+", default=[2, 8, 16])
    opts = ap.parse_args()
    cluster.start_cluster()
    print(f"{'clients':>7} {'xml rss KB':>10} {'shm rss KB':>10} {'xml pss KB':>10} "
          f"{'shm pss KB':>10} {'pss ratio':>9}")
    for n in opts.clients:
        xr, xp = measure(n, "xml")
        sr, sp = measure(n, "shmem")
        print(f"{n:>7} {xr:>10.0f} {sr:>10.0f} {xp:>10.0f} {sp:>10.0f} {sp / xp:>9.2f}",
              flush=True)
    print("per client means; ratio = shmem / own XML copy (lower is better)")


if __name__ == "__main__":
    main()
