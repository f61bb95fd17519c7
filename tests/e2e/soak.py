"""Many stepmap steps in a row, ending every way a step can end: success,
MPI_Abort, a rank dying, a node server killed, srun killed. After each one
the machine must be back where it was: no processes, open files, shared
memory or temporary directories left, and the Slurm daemons and step
daemons not growing.

    python3 soak.py [--steps 200]

Prints the figures before and after and the growth; exits 1 on growth or
on a step that did not end as it should. The end-to-end suite runs a short
version (test_load.py); contrib/stress/soak.sh runs the full one."""

import argparse
import glob
import os
import signal
import subprocess
import sys
import threading
import time

import cluster
from cluster import MPI_HELLO, hello_ranks, leftovers, pids_of, srun, wait_for

KINDS = ("success", "abort", "rank_dies", "server_killed", "srun_interrupted", "srun_killed")


def _count_fds(pid):
    try:
        return len(os.listdir(f"/proc/{pid}/fd"))
    except OSError:
        return 0


def _rss_kb(pid, field="VmRSS"):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def _daemonpids_of():
    state = cluster.start_cluster()["STEPMAP_CLUSTER_DIR"]
    pids = {}
    for path in glob.glob(os.path.join(state, "run", "slurmd.*.pid")) + \
            [os.path.join(state, "run", "slurmctld.pid"),
             os.path.join(state, "munge", "munged.pid")]:
        try:
            with open(path) as f:
                pids[os.path.basename(path)[:-4]] = int(f.read())
        except (OSError, ValueError):
            pass
    return pids


def snapshot():
    """What a finished step may not leave growing."""
    daemons = _daemonpids_of()
    pmix_cli = os.path.join(cluster.start_cluster()["STEPMAP_CLUSTER_DIR"], "pmix-cli")
    return {
        "user processes": len(subprocess.run(["pgrep", "-u", cluster.TEST_USER],
                                             stdout=subprocess.PIPE, text=True).stdout.split()),
        "slurmstepd processes": len(pids_of("root", "slurmstepd")),
        "daemon open files": sum(_count_fds(p) for p in daemons.values()),
        "daemon RSS kB": sum(_rss_kb(p) for p in daemons.values()),
        "/dev/shm entries": len(os.listdir("/dev/shm")),
        "server directories": len(glob.glob(os.path.join(cluster.SERVER_TMPDIR, "stepmap.*"))),
        "PMIx client dir entries": len(os.listdir(pmix_cli)) if os.path.isdir(pmix_cli) else 0,
    }


class StepdPeak:
    """Samples the peak memory (VmHWM) of the step daemons while steps run."""

    def __init__(self):
        self.peaks = []  # per step: the largest VmHWM of its slurmstepds
        self._current = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self):
        while not self._stop.is_set():
            for pid in pids_of("root", "slurmstepd"):
                self._current = max(self._current, _rss_kb(pid, "VmHWM"))
            time.sleep(0.05)

    def start(self):
        self._thread.start()

    def step_done(self):
        self.peaks.append(self._current)
        self._current = 0

    def stop(self):
        self._stop.set()
        self._thread.join()


def _background(args):
    env = dict(cluster.start_cluster())
    env.update(cluster.OMPI_ENV)
    cmd = ["runuser", "-u", cluster.TEST_USER, "--", "env"]
    cmd += [f"{k}={v}" for k, v in env.items()] + ["srun"] + list(args)
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            cwd="/tmp")


def run_step(kind):
    """Runs one step ending as kind; returns an error text or None."""
    # -N 4: a server on every node (and srun's restart without -N soaked too).
    base = ["-N", "4", "-n", "4", "--map-by", "node"]
    if kind == "success":
        r = srun(*base, MPI_HELLO)
        return None if r.returncode == 0 and len(hello_ranks(r.stdout)) == 4 else r.stderr
    if kind == "abort":
        r = srun(*base, MPI_HELLO, "abort", "1", "3")
        return None if r.returncode == 3 else f"exit {r.returncode}: {r.stderr}"
    if kind == "rank_dies":
        r = srun(*base, MPI_HELLO, "die", "2", "5")
        return None if r.returncode != 0 else "a dead rank did not fail the step"
    proc = _background(base + ["sleep", "60"])
    if not wait_for(lambda: len(pids_of(cluster.TEST_USER, "stepmap-stepd")) == 4, 20):
        proc.kill()
        return "the servers did not start"
    time.sleep(0.5)  # let them join the rendezvous
    if kind == "server_killed":
        os.kill(pids_of(cluster.TEST_USER, "stepmap-stepd")[0], signal.SIGKILL)
    elif kind == "srun_interrupted":
        # Ctrl-C twice within a second: srun ends the step. Slurm 26.05's
        # srun now and then misses the second one (plain srun too, about one
        # time in five): then the user presses Ctrl-C twice again.
        for _ in range(3):
            for _ in range(2):
                for pid in pids_of(cluster.TEST_USER, "srun"):
                    os.kill(pid, signal.SIGINT)
                time.sleep(0.2)
            if wait_for(lambda: proc.poll() is not None, 5):
                break
    else:
        for pid in pids_of(cluster.TEST_USER, "srun"):
            os.kill(pid, signal.SIGKILL)
    try:
        proc.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        return f"the step went on after {kind}"
    if kind == "srun_killed":
        # Slurm keeps the tasks of a killed srun's step running until the
        # job ends; the servers must go at once (checked by the caller),
        # the tasks with the job, as a user's scancel ends it.
        if not wait_for(lambda: not pids_of(cluster.TEST_USER, "stepmap-stepd"), 20):
            return "the servers outlived srun"
        subprocess.run(["scancel", "-u", cluster.TEST_USER],
                       env=dict(os.environ, **cluster.start_cluster()))
        wait_for(lambda: not pids_of("root", "slurmstepd"), 20)
    return None


def soak(steps, report=print):
    """Runs the steps; returns (failures, before, after, stepd peaks)."""
    subprocess.run(["scancel", "-u", cluster.TEST_USER],
                   env=dict(os.environ, **cluster.start_cluster()))
    srun("-n", "4", "--map-by", "node", MPI_HELLO)  # warm up caches and daemons
    leftovers(wait=15)
    wait_for(lambda: not pids_of("root", "slurmstepd") and
          not pids_of(cluster.TEST_USER, "sleep"), 20)
    before = snapshot()
    peaks = StepdPeak()
    peaks.start()
    failures = []
    try:
        for i in range(steps):
            kind = KINDS[i % len(KINDS)]
            error = run_step(kind)
            left = leftovers(wait=20)
            if left:
                error = (error or "") + f" left behind: {left}"
            if error:
                failures.append((i, kind, error))
                report(f"step {i + 1} ({kind}): {error}")
            peaks.step_done()
            if (i + 1) % 25 == 0:
                report(f"{i + 1} steps, {len(failures)} failed")
    finally:
        peaks.stop()
    wait_for(lambda: not pids_of("root", "slurmstepd"), 20)
    after = snapshot()
    return failures, before, after, peaks.peaks


def growth(before, after, peaks):
    """What grew beyond noise: a list of sentences."""
    grew = []
    for key in before:
        # Memory moves a little; the daemons' descriptors come and go with
        # their connections (Slurm 26.05's keep a few more open for a while:
        # +7 seen over five daemons). A leak per step grows by the number of
        # steps (24 in the e2e suite, 200 in contrib/stress/soak.sh).
        slack = (before[key] // 10 + 512 if key.endswith("kB") else
                 12 if key.endswith("open files") else 0)
        if after[key] > before[key] + slack:
            grew.append(f"{key}: {before[key]} -> {after[key]}")
    if len(peaks) >= 10:
        tenth = len(peaks) // 5
        first, last = max(peaks[:tenth]), max(peaks[-tenth:])
        if last > first + first // 10:
            grew.append(f"slurmstepd peak memory: {first} kB early, {last} kB late")
    return grew


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--steps", type=int, default=200)
    a = p.parse_args()
    failures, before, after, peaks = soak(a.steps)
    print(f"soak: {a.steps} steps ({', '.join(KINDS)} in turn), {len(failures)} did not end "
          "as they should")
    for key in before:
        print(f"  {key}: {before[key]} before, {after[key]} after")
    if peaks:
        print(f"  slurmstepd peak memory per step: {min(peaks)}-{max(peaks)} kB")
    grew = growth(before, after, peaks)
    for g in grew:
        print(f"  GREW {g}")
    return 1 if failures or grew else 0


if __name__ == "__main__":
    sys.exit(main())
