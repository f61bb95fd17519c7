#!/usr/bin/env python3
"""What the plugin costs a step it does not serve: `srun --mpi=none /bin/true`
inside one allocation, with the plugin in plugstack.conf and without it,
interleaved (interleave.py). The target (issue 11): at most 5 ms per step.
Then a site policy file that does not serve PMIx steps (serve: options): a
plain `srun --mpi=pmix` step, which the entry object must read that file
for, against the same step without the plugin (Slurm's mpi/pmix either way).

Usage: unserved_tax.py [--rounds N]   (root; the cluster up with the plugin,
as contrib/bench/unserved-tax.sh arranges)."""

import argparse
import os
import re

from interleave import Plugstack, Variant, cluster, describe, median, run_rounds

TARGET_MS = 5.0


def allocate():
    r = cluster.run_as_user(["salloc", "-N", "4", "-n", "8", "--no-shell", "-J", "bench-tax"],
                            timeout=60)
    m = re.search(r"Granted job allocation (\d+)", r.stderr)
    if not m:
        raise SystemExit(f"salloc failed:\n{r.stderr}")
    return m.group(1)


def compare(plugstack, without, loaded, rounds):
    """Runs both interleaved and prints them and the tax."""
    run_rounds(plugstack, [without, loaded], rounds)
    tax = (median(loaded) - median(without)) * 1000
    print(describe(without))
    print(describe(loaded))
    verdict = "within" if tax <= TARGET_MS else "ABOVE"
    print(f"  tax {tax:+.1f} ms per step ({verdict} the {TARGET_MS:.0f} ms target)", flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=15)
    opts = ap.parse_args()
    cluster.start_cluster()
    job = allocate()
    cases = [("1 task on 1 node", ["-N", "1", "-n", "1"]),
             ("8 tasks on 4 nodes", ["-N", "4", "-n", "8"])]
    site = os.path.join(os.path.dirname(cluster.cluster_env()["SLURM_CONF"]), "stepmap-bench.yaml")
    with open(site, "w") as f:
        f.write("serve: options\ndefaults:\n  map_by: node\n")
    os.chmod(site, 0o644)
    try:
        with Plugstack(site=site) as plugstack:
            print(f"job {job}: srun --jobid {job} --mpi=none ... /bin/true, "
                  f"{opts.rounds} interleaved rounds")
            for name, shape in cases:
                argv = ["srun", "--jobid", job, "--mpi=none"] + shape + ["/bin/true"]
                compare(plugstack, Variant(f"{name}, plugin not loaded", False, argv),
                        Variant(f"{name}, plugin loaded", True, argv), opts.rounds)
            argv = ["srun", "--jobid", job, "--mpi=pmix", "-N", "1", "-n", "1", "/bin/true"]
            compare(plugstack, Variant("--mpi=pmix, plugin not loaded", False, argv),
                    Variant("--mpi=pmix, plugin with a site file (serve: options)", "site", argv),
                    opts.rounds)
    finally:
        cluster.run_as_user(["scancel", job])
        os.unlink(site)


if __name__ == "__main__":
    main()
