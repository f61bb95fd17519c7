"""Fair, interleaved timing of srun runs on the local cluster, with and
without the plugin loaded (shared by the benchmark scripts).

Slurm reads plugstack.conf afresh for every srun and every slurmstepd, so a
run "without stepmap" is a run with the cluster's plugstack.conf emptied:
the peer pays nothing of ours. Variants run in turn, one run each per round,
in an order that rotates every round, so drift in the machine's load falls
on all of them alike. A failed run is counted, never timed."""

import os
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "e2e"))
import cluster  # noqa: E402,F401  (re-exported for the scripts)

import contextlib  # noqa: E402
import subprocess  # noqa: E402


@contextlib.contextmanager
def modelled_network(spec):
    """Every node's link shaped as `spec` says ("delay=0.02 rate=10000":
    contrib/cluster/link.sh shape's words) while the block runs, for the
    peer's runs and stepmap's alike; nothing if spec is empty."""
    link = os.path.join(cluster.SOURCE_ROOT, "contrib/cluster/link.sh")
    if spec:
        if not cluster.hosts_network():
            raise SystemExit("--network-model needs the cluster of separate hosts")
        for node in cluster.NODES:
            subprocess.run([link, node, "shape"] + spec.split(), check=True)
    try:
        yield
    finally:
        if spec:
            subprocess.run([link, "clear"], check=True)


def add_network_model_option(parser):
    parser.add_argument("--network-model", default="",
                        help='every node\'s link shaped so, e.g. "delay=0.02 rate=10000" '
                             '(20 us one way, 10 Gbit/s; contrib/cluster/link.sh shape)')


class Plugstack:
    """The cluster's plugstack.conf, switched between the plugin's line,
    nothing, (with profile=PATH) the plugin's line serving that
    interconnect profile and (with site=PATH) the plugin's line naming that
    site policy file; restored to the plugin's line on exit. A variant's
    `plugin` is True, False, "profile" or "site"."""

    def __init__(self, profile=None, site=None):
        conf = cluster.cluster_env()["SLURM_CONF"]
        self.path = os.path.join(os.path.dirname(conf), "plugstack.conf")
        with open(self.path) as f:
            self.loaded = f.read()
        if "stepmap" not in self.loaded:
            raise SystemExit(f"{self.path} does not load stepmap; start the cluster with "
                             "the plugin (contrib/bench/*.sh do)")
        self.state = True
        self.texts = {True: self.loaded, False: ""}
        if profile:
            self.texts["profile"] = self.with_arguments(f"profile={profile}")
        if site:
            self.texts["site"] = self.with_arguments(f"config={site}")

    def with_arguments(self, more):
        return "\n".join(line + " " + more if "stepmap" in line else line
                         for line in self.loaded.splitlines()) + "\n"

    def set(self, loaded):
        if loaded == self.state:
            return
        tmp = self.path + ".bench"
        with open(tmp, "w") as f:
            f.write(self.texts[loaded])
        os.chmod(tmp, 0o644)
        os.replace(tmp, self.path)
        self.state = loaded

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.set(True)


class Variant:
    """One way of running: a name, whether the plugin is loaded, the argv
    (run as the test user) and a check of a good result."""

    def __init__(self, name, plugin, argv, ok=lambda r: r.returncode == 0, timeout=60,
                 without=()):
        self.name, self.plugin, self.argv, self.ok, self.timeout = name, plugin, argv, ok, timeout
        self.without = without  # environment variables left out (cluster.run_as_user)
        self.times, self.failed, self.last_failure = [], 0, None


def run_rounds(plugstack, variants, rounds, warmup=1):
    """Runs every variant once per round, rotating the order; fills each
    variant's times (s) and failure count. Warm-up rounds are not kept."""
    for r in range(warmup + rounds):
        shift = r % len(variants)
        for v in variants[shift:] + variants[:shift]:
            plugstack.set(v.plugin)
            t0 = time.perf_counter()
            try:
                res = cluster.run_as_user(v.argv, timeout=v.timeout, without=v.without)
            except subprocess.TimeoutExpired as e:
                # A hung run (Slurm's mpi/pmix at times rejects its own
                # direct connection: "Invalid authentication credential")
                # is a failure, and its job must not hold the nodes.
                res = subprocess.CompletedProcess(v.argv, -1, e.stdout or "",
                                                  f"timed out after {v.timeout} s")
                subprocess.run(["scancel", "-u", cluster.TEST_USER],
                               env={**os.environ, **cluster.cluster_env()})
                cluster.wait_for(lambda: not cluster.slurm_jobs(), 60)
            dt = time.perf_counter() - t0
            if r < warmup:
                continue
            if v.ok(res):
                v.times.append(dt)
            else:
                v.failed += 1
                v.last_failure = res


def median(v):
    if not v.times:
        raise SystemExit(f"{v.name}: every run failed; last one:\n"
                         f"{v.last_failure.stdout}\n{v.last_failure.stderr}")
    return statistics.median(v.times)


def spread(v):
    """Interquartile range (s): the middle half of the runs."""
    if len(v.times) < 4:
        return max(v.times) - min(v.times)
    q = statistics.quantiles(v.times, n=4)
    return q[2] - q[0]


def describe(v):
    return (f"{v.name:<34} median {median(v) * 1000:8.1f} ms  IQR {spread(v) * 1000:6.1f} ms  "
            f"runs {len(v.times):3d}  failed {v.failed}")
