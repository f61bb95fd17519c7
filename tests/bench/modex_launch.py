#!/usr/bin/env python3
"""Modex benchmark (issue 12): launch time of the MPI hello through stepmap
with each --modex mode, against Slurm's own mpi/pmix and the /bin/true
floor, for N = 4, 8, 16 ranks on the local 4-node cluster; all variants
interleaved in the same rounds (interleave.py). The profile of the 4 nodes
is made first (stepmap-profile make). Variants:

  floor, mpi/pmix            plugstack.conf empty (stepmap not loaded)
  stepmap fence, no profile  the plugin without a profile: issue 11's path
  stepmap fence / async /    the plugin with profile= in plugstack.conf:
  profile                    every served step pays the profile rendezvous

For stepmap's runs the exchange counters of the last good run are shown
(srun -v): data fences, barriers, direct modex served locally/remotely and
bytes between nodes.

Usage: modex_launch.py [--rounds N] [--ranks 4,8,16]  (root; the cluster up
with the plugin, as contrib/bench/modex-launch.sh arranges)."""

import argparse
import os
import re

from interleave import (Plugstack, Variant, add_network_model_option, cluster, describe,
                        median, modelled_network, run_rounds)

PROFILE = "/var/tmp/stepmap-bench-profile.yaml"
# Every variant lets Open MPI use its default interfaces (eth0 here): the
# modex-less launch predicts records for those, not for the e2e suite's
# loopback-only setting.
DEFAULT_INTERFACES = ("OMPI_MCA_btl_tcp_if_include", "OMPI_MCA_oob_tcp_if_include")


def hello_ok(n):
    return lambda r: r.returncode == 0 and len(cluster.hello_ranks(r.stdout)) == n


def counters(result):
    """srun -v's exchange counters, as printed (one line)."""
    m = re.search(r"exchange \([^)]*\): (.*)", result.stderr)
    return m.group(1).strip() if m else "(no counters)"


def variants(n):
    over = n > 8  # 4 nodes x 2 CPUs
    slurm_shape = ["-N", "4", "-n", str(n), "-m", "cyclic"] + (["--overcommit"] if over else [])
    ours = ["srun", "-v", "-n", str(n), "--map-by", "node:OVERSUBSCRIBE" if over else "node"]
    hello = cluster.MPI_HELLO
    return [
        Variant(f"N={n} /bin/true (floor)", False,
                ["srun", "--mpi=none"] + slurm_shape + ["/bin/true"]),
        Variant(f"N={n} Slurm mpi/pmix", False,
                ["srun", "--mpi=pmix"] + slurm_shape + [hello], ok=hello_ok(n)),
        Variant(f"N={n} stepmap fence, no profile", True, ours + [hello], ok=hello_ok(n)),
        Variant(f"N={n} stepmap fence", "profile", ours + ["--modex=fence", hello],
                ok=hello_ok(n)),
        Variant(f"N={n} stepmap async", "profile", ours + ["--modex=async", hello],
                ok=hello_ok(n)),
        Variant(f"N={n} stepmap profile (modex-less)", "profile",
                ours + ["--modex=profile", hello], ok=hello_ok(n)),
    ]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--ranks", default="4,8,16")
    add_network_model_option(ap)
    opts = ap.parse_args()
    cluster.start_cluster()
    cluster.make_profile(PROFILE)
    summary = []
    if opts.network_model:
        print(f"every node's link: {opts.network_model} (contrib/cluster/link.sh shape)")
    with modelled_network(opts.network_model), Plugstack(profile=PROFILE) as plugstack:
        for n in [int(x) for x in opts.ranks.split(",")]:
            vs = variants(n)
            kept = {}
            for v in vs:
                v.without = DEFAULT_INTERFACES
                # Keep each variant's last good result for its counters.
                check = v.ok
                v.ok = lambda r, v=v, check=check: check(r) and kept.__setitem__(v.name, r) is None
            run_rounds(plugstack, vs, opts.rounds)
            floor, pmix = vs[0], vs[1]
            for v in vs:
                print(describe(v))
                if v.name in kept and "stepmap" in v.name:
                    print(f"    exchange: {counters(kept[v.name])}")
            theirs = median(pmix) - median(floor)
            for v in vs[2:]:
                mine = median(v) - median(floor)
                summary.append((n, v.name.split(" ", 1)[1], mine, theirs))
            print(flush=True)
    print(f"{'ranks':>5} {'variant':<34} {'overhead ms':>12} {'vs mpi/pmix':>12}")
    for n, name, mine, theirs in summary:
        print(f"{n:>5} {name:<34} {mine * 1000:>12.0f} {mine / theirs:>12.2f}")
    print("overhead = median launch time - median /bin/true floor; the ratio divides it by "
          "mpi/pmix's overhead (lower is better)")


if __name__ == "__main__":
    main()
