#!/usr/bin/env python3
"""What the node's topology cache (topology/node_cache.hpp) saves a step:
`srun -v`'s node-server phases for the MPI hello on the 4 nodes of the local
cluster, with the cache (plugstack.conf as the cluster has it) and without
(the same line plus topology_cache=none), runs interleaved, one of each per
round. Prints per variant the median over the rounds of the nodes' median
and slowest topology phase, and of the time the servers were ready (ms
after srun's start).

Usage: topology_cache.py [--rounds N]   (root; the cluster up with the
plugin, as contrib/bench/topology-cache.sh arranges)."""

import argparse
import re
import statistics

from interleave import cluster

PHASES = re.compile(r"topology ([0-9.]+) \(slowest \S+ ([0-9.]+)\).*?"
                    r"ready \+([0-9.]+) \(slowest \S+ \+([0-9.]+)\)")


def phases():
    r = cluster.srun("-v", "-n", "4", "--map-by", "node", cluster.MPI_HELLO)
    m = PHASES.search(r.stderr)
    if r.returncode != 0 or not m:
        raise SystemExit(f"the step failed or srun -v said no phases:\n{r.stderr}")
    return [float(x) for x in m.groups()]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=8)
    rounds = ap.parse_args().rounds
    cluster.start_cluster()
    runs = {"with the cache": [], "topology_cache=none": []}
    for i in range(rounds):
        order = list(runs) if i % 2 == 0 else list(reversed(runs))
        for name in order:
            if name == "with the cache":
                runs[name].append(phases())
            else:
                with cluster.plugstack(lambda line: line.rstrip("\n") + " topology_cache=none\n"):
                    runs[name].append(phases())
    for name, values in runs.items():
        med = [statistics.median(column) for column in zip(*values)]
        print(f"{name:22} topology {med[0]:6.1f} ms (slowest node {med[1]:6.1f}); "
              f"servers ready +{med[2]:6.1f} ms (slowest +{med[3]:6.1f})  [{rounds} runs]")


if __name__ == "__main__":
    cluster.require_root()
    main()
