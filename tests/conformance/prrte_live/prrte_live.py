#!/usr/bin/env python3
"""The mapper against PRRTE itself: runs stepmap-plan and Open MPI 5's
mpirun (PRRTE) on the same generated cases (live_cases.py) and compares
which node runs each rank, in which application context, bound to which
CPUs.

usage: prrte_live.py STEPMAP_PLAN FIXTURES_DIR DIFFERENCES_TSV
                     [--only TEXT] [--jobs N] [--verbose] [--show]

--only runs the cases whose id holds TEXT; --show prints their two maps
side by side, rank by rank.

mpirun is $STEPMAP_PRRTE_MPIRUN (contrib/openmpi/build-openmpi5.sh builds
it); without it the test is skipped (exit 77) saying so. PRRTE plans
offline: `mpirun --do-not-launch --display map --prtemca
hwloc_use_topo_file FILE.xml` inside a Slurm allocation (the SLURM_*
variables of a job, read by PRRTE's ras/slurm: the context stepmap runs
in), with --host and --hostfile as filters on it; stepmap-plan gets the
same allocation (--nodes, --cpus), filters and topology, and
--always-hardware (mpirun always knows the hardware).

A case both refuse agrees. DIFFERENCES_TSV lists the cases allowed to
differ: a glob over case ids, a text the difference must hold (so a listed
case that starts to differ otherwise is caught), and the item of
mapper/README.md's "Deliberate differences from PRRTE" that explains it.
The first line that matches explains a case. Exit 0 when every
difference is listed and every listed pattern still matches a difference
(the list cannot go stale); 1 otherwise, printing each unexplained case
with both command lines.
"""

import argparse
import concurrent.futures
import fnmatch
import os
import shlex
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import live_cases  # noqa: E402
import live_maps  # noqa: E402


# Each mpirun plans in milliseconds; some inputs make it wait forever.
PRRTE_SECONDS = 8
STEPMAP_SECONDS = 30


def bounded_run(argv, env, seconds):
    """The finished process, or None when it ran past `seconds` (then it
    and its children are killed)."""
    with subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          env=env, errors="backslashreplace", start_new_session=True) as proc:
        try:
            out, err = proc.communicate(timeout=seconds)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, 9)
            proc.communicate()
            return None
        return subprocess.CompletedProcess(argv, proc.returncode, out, err)


def read_differences(path):
    """[(glob, text, item, reason)] from the TSV (# comments, blank lines):
    a case id matching GLOB whose difference holds TEXT (empty: any)."""
    listed = []
    with open(path) as f:
        for number, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if not line.strip() or line.startswith("#"):
                continue
            parts = line.split("\t")
            if len(parts) != 4:
                raise SystemExit(f"{path}:{number}: expected GLOB<TAB>TEXT<TAB>ITEM<TAB>REASON")
            listed.append(tuple(parts))
    return listed


class Runner:
    def __init__(self, plan, mpirun, fixtures, work):
        self.plan = plan
        self.mpirun = mpirun
        self.fixtures = fixtures
        self.work = work
        self.topologies = {}
        self.env = {"PATH": os.path.dirname(mpirun) + ":/usr/bin:/bin", "HOME": work,
                    "TMPDIR": work, "LC_ALL": "C"}

    def topology(self, key):
        if key not in self.topologies:
            path = os.path.join(self.fixtures, live_cases.TOPOLOGIES[key])
            self.topologies[key] = live_maps.Topology(path)
        return self.topologies[key]

    def _write(self, name, text):
        path = os.path.join(self.work, name)
        with open(path, "w") as f:
            f.write(text)
        return path

    def commands(self, case, tag):
        """(mpirun argv, stepmap-plan argv) for the case; `tag` names its files."""
        topo = self.topology(case.topology).path
        hosts = live_cases.HOSTS[case.hosts]
        directives = []
        for option, value in (("--map-by", case.map_by), ("--rank-by", case.rank_by),
                              ("--bind-to", case.bind_to)):
            if value is not None:
                directives += [option, value]

        # PRRTE's ras/slurm reads the allocation from the job's environment;
        # --do-not-launch starts no daemon, and the ssh launcher keeps its
        # slurm launcher from running srun (which would look for a
        # controller). `env` keeps the command line printed for a
        # difference complete.
        prrte = ["env", "SLURM_JOBID=1000", "SLURM_JOB_ID=1000",
                 f"SLURM_NODELIST={hosts.nodelist}", f"SLURM_JOB_NODELIST={hosts.nodelist}",
                 f"SLURM_TASKS_PER_NODE={hosts.cpus}", f"SLURM_JOB_CPUS_PER_NODE={hosts.cpus}",
                 self.mpirun]
        if os.geteuid() == 0:
            prrte.append("--allow-run-as-root")
        prrte += ["--prtemca", "plm", "ssh", "--do-not-launch", "--display", "map", "--prtemca", "hwloc_use_topo_file", topo]
        plan = [self.plan, "--topology", topo, "--always-hardware", "--output", "json",
                "--nodes", hosts.nodelist, "--cpus", hosts.cpus]
        if hosts.hostfile is not None:
            hostfile = self._write(f"{tag}.hosts", hosts.hostfile)
            prrte += ["--hostfile", hostfile]
            plan += ["--hostfile", hostfile]
        if hosts.host is not None:
            prrte += ["--host", hosts.host]
            plan += ["--host", hosts.host]
        prrte += directives
        plan += directives
        for i, np in enumerate(case.nps):
            if i:
                prrte.append(":")
                plan.append(":")
            if np is not None:
                prrte += ["-np", str(np)]
                plan += ["-n", str(np)]
            prrte.append("true")
        return prrte, plan

    def run(self, index, case):
        prrte_argv, plan_argv = self.commands(case, f"c{index}")
        prrte = bounded_run(prrte_argv, self.env, PRRTE_SECONDS)
        stepmap = bounded_run(plan_argv, self.env, STEPMAP_SECONDS)
        topology = self.topology(case.topology)
        if prrte is None:
            prrte_map, grains = live_maps.Hung(f"mpirun did not finish in {PRRTE_SECONDS} s"), {}
        else:
            prrte_map, grains = live_maps.parse_prrte(prrte, topology)
        if stepmap is None:
            stepmap_map = live_maps.Hung(f"stepmap-plan did not finish in {STEPMAP_SECONDS} s")
        else:
            stepmap_map = live_maps.parse_stepmap(stepmap, topology, grains)
        return (live_maps.difference(prrte_map, stepmap_map), prrte_map, stepmap_map,
                prrte_argv, plan_argv)


def main(argv):
    parser = argparse.ArgumentParser(
        description="stepmap-plan against Open MPI 5's mpirun on generated cases")
    parser.add_argument("plan", help="stepmap-plan")
    parser.add_argument("fixtures", help="tests/fixtures")
    parser.add_argument("differences", help="differences.tsv")
    parser.add_argument("--only", help="the cases whose id holds this text")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--verbose", action="store_true", help="a line for every case")
    parser.add_argument("--show", action="store_true", help="both maps, side by side")
    args = parser.parse_args(argv[1:])
    plan, fixtures, differences_path = args.plan, args.fixtures, args.differences
    only, jobs, verbose, show = args.only, args.jobs, args.verbose, args.show

    mpirun = os.environ.get("STEPMAP_PRRTE_MPIRUN", "")
    if not mpirun or not os.access(mpirun, os.X_OK):
        print("prrte_live: SKIPPED: no PRRTE mpirun to compare with: set STEPMAP_PRRTE_MPIRUN "
              "to Open MPI 5's mpirun (contrib/openmpi/build-openmpi5.sh builds "
              "/opt/openmpi-5.0.10/bin/mpirun)"
              + (f"; {mpirun!r} is not an executable" if mpirun else ""))
        return 77
    version = subprocess.run([mpirun, "--version"], capture_output=True, text=True).stdout
    print(f"prrte_live: {mpirun}: {version.splitlines()[0] if version else '?'}")

    listed = read_differences(differences_path)
    with tempfile.TemporaryDirectory(prefix="stepmap-prrte-live.") as work:
        runner = Runner(plan, mpirun, fixtures, work)
        cases = live_cases.generate()
        if only:
            cases = [c for c in cases if only in c.id]
        with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
            results = list(pool.map(lambda ic: runner.run(*ic), enumerate(cases)))

    agree_mapped = agree_refused = 0
    explained = {(pattern, text): 0 for pattern, text, _item, _reason in listed}
    unexplained = []
    for case, (diff, prrte_map, stepmap_map, prrte_argv, plan_argv) in zip(cases, results):
        if diff is None:
            if isinstance(prrte_map, live_maps.Refused):
                agree_refused += 1
            else:
                agree_mapped += 1
            if verbose:
                print(f"agree   {case.id}")
            continue
        pattern = next(((p, t) for p, t, _i, _r in listed
                        if fnmatch.fnmatchcase(case.id, p) and t in diff), None)
        if pattern is not None:
            explained[pattern] += 1
            if verbose:
                print(f"listed  {case.id}: {diff}")
            continue
        unexplained.append((case, diff, prrte_argv, plan_argv))

    if show:
        for case, (diff, prrte_map, stepmap_map, prrte_argv, plan_argv) in zip(cases, results):
            print(f"{case.id}: {diff or 'agree'}")
            print(f"    mpirun:       {shlex.join(prrte_argv)}")
            print(f"    stepmap-plan: {shlex.join(plan_argv)}")
            print(live_maps.side_by_side(prrte_map, stepmap_map))
        return 0
    for case, diff, prrte_argv, plan_argv in unexplained:
        print(f"DIFFERS {case.id}: {diff}")
        print(f"    mpirun:       {shlex.join(prrte_argv)}")
        print(f"    stepmap-plan: {shlex.join(plan_argv)}")
    stale = [p for p, count in explained.items() if count == 0 and not only]
    for pattern, text in stale:
        print(f"STALE   {pattern} ({text!r}): listed as differing, but no case it names "
              "differs so")
    total = len(cases)
    print(f"prrte_live: {total} cases: {agree_mapped + agree_refused} agree "
          f"({agree_mapped} mapped alike, {agree_refused} refused by both), "
          f"{sum(explained.values())} differ as listed, {len(unexplained)} differ unexplained")
    by_item = {}
    for pattern, text, item, reason in listed:
        count, first = by_item.get(item, (0, reason))
        by_item[item] = (count + explained[(pattern, text)], first)
    for item, (count, reason) in sorted(by_item.items(), key=lambda kv: int(kv[0])):
        print(f"    {count:4d} differ as mapper/README.md difference {item}: {reason}")
    return 1 if unexplained or stale else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
