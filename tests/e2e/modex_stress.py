"""Direct-modex launches under CPU load: Open MPI with async modex and no
data collection (every peer's data fetched on demand through the node
servers), many times in a row while busy loops compete for the cores.

    python3 modex_stress.py [--runs 300] [--load 3] [--ranks 6]

Prints the runs, the failures (each with srun's error and the node servers'
logs of that step) and the launch times; exits 1 if any run failed. The
end-to-end suite runs a short version (test_load.py); contrib/stress/
direct-modex.sh runs the full one."""

import argparse
import statistics
import sys
import time

from cluster import MPI_HELLO, hello_ranks, server_logs, srun
from cpu_load import CpuLoad

ASYNC_MODEX = {"OMPI_MCA_pmix_base_async_modex": "1",
               "OMPI_MCA_pmix_base_collect_data": "0"}


def one_launch(ranks):
    """(ok, seconds, details) of one `srun -n RANKS --map-by node` hello."""
    start = time.monotonic()
    r = srun("-n", str(ranks), "--map-by", "node", MPI_HELLO, extra_env=ASYNC_MODEX,
             timeout=300)
    seconds = time.monotonic() - start
    got = hello_ranks(r.stdout)
    ok = r.returncode == 0 and sorted(got) == list(range(ranks))
    details = ""
    if not ok:
        details = f"srun exit {r.returncode}\n" + r.stderr[-3000:]
        nspaces = {v[2] for v in got.values()}
        for ns in nspaces:
            for node, text in sorted(server_logs(ns).items()):
                details += f"\n--- server log {node}:\n{text[-2000:]}"
    return ok, seconds, details


def stress(runs, load, ranks, report=print):
    """Runs the launches; returns (failures, times)."""
    failures = []
    times = []
    with CpuLoad(load):
        for i in range(runs):
            ok, seconds, details = one_launch(ranks)
            times.append(seconds)
            if not ok:
                failures.append((i, details))
                report(f"run {i + 1}: FAILED\n{details}")
            elif (i + 1) % 25 == 0:
                report(f"{i + 1} runs, {len(failures)} failed")
    return failures, times


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--runs", type=int, default=300)
    p.add_argument("--load", type=int, default=3, help="busy processes beside the launches")
    p.add_argument("--ranks", type=int, default=6)
    a = p.parse_args()
    failures, times = stress(a.runs, a.load, a.ranks)
    print(f"direct-modex stress: {a.runs} launches of {a.ranks} ranks on 4 nodes, "
          f"{a.load} busy loops: {len(failures)} failed")
    print(f"launch time: median {statistics.median(times):.2f} s, "
          f"min {min(times):.2f} s, max {max(times):.2f} s")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
