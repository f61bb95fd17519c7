"""What differs between the Slurm releases a site runs, on the release the
cluster runs (Debian's 22.05 by default; contrib/slurm/test-release.sh runs
the suite on 26.05): srun's --export forms, the CPUs-per-task variable, and
job namespaces (job_container/tmpfs, namespace/tmpfs from 25.11) with and
without EntireStepInNS and SlurmdParameters=contain_spank."""

import os
import re
import subprocess
import time
import unittest

import cluster
from cluster import MPI_HELLO, PMIX_CLIENT, hello_ranks, run_as_user, srun
from test_topology import client_facts, cpus

OMPI_NAMES = ",".join(sorted(cluster.OMPI_ENV))


def jobs_left():
    """Jobs Slurm still holds (pending, running or completing)."""
    env = {**os.environ, **cluster.cluster_env()}
    return subprocess.run(["squeue", "-h", "-o", "%i"], stdout=subprocess.PIPE, text=True,
                          env=env).stdout.split()


class ExportTest(cluster.StepTestCase):
    def test_export_none_is_still_a_stepmap_step(self):
        # srun passes on only SLURM* variables under --export=NONE.
        r = srun("--export=NONE", "-n", "2", "--map-by", "node", MPI_HELLO)
        self.assertRanksOn(r, ["n1", "n2"])

    def test_export_list_with_options_from_sbatch(self):
        r, text = cluster.run_sbatch(
            "#!/bin/bash\n#SBATCH -N 4 -n 8\n#SBATCH --map-by node\n"
            f"srun --export=PATH,{OMPI_NAMES} -n 4 {MPI_HELLO}\n")
        self.assertEqual(r.returncode, 0, r.stderr)
        ranks = hello_ranks(text)
        self.assertEqual([ranks[i][0] for i in sorted(ranks)], ["n1", "n2", "n3", "n4"], text)
        self.assertTrue(all(v[2].startswith("stepmap.") for v in ranks.values()), text)

    def test_sbatch_cpus_per_task_as_the_release_reads_it(self):
        # sbatch -c 2 sets SLURM_CPUS_PER_TASK; srun reads it as -c from 23.11
        # on (22.05 and 23.02 read SRUN_CPUS_PER_TASK only). stepmap counts a
        # node's slots as that srun will: with -c 2 a 2-CPU node holds one rank.
        r, text = cluster.run_sbatch(
            "#!/bin/bash\n#SBATCH -N 4 -n 4 -c 2\n"
            "srun -n 4 --map-by slot sh -c 'echo task $SLURM_PROCID node $SLURMD_NODENAME'\n")
        self.assertEqual(r.returncode, 0, r.stderr + text)
        nodes = dict(l.split()[1:4:2] for l in text.splitlines() if l.startswith("task "))
        if cluster.slurm_release() >= (23, 11):
            expected = {"0": "n1", "1": "n2", "2": "n3", "3": "n4"}
        else:
            expected = {"0": "n1", "1": "n1", "2": "n2", "3": "n2"}
        self.assertEqual(nodes, expected, text)

    def test_cpus_per_task_counts_slots(self):
        # srun -c 2 in a job of 2 CPUs per node: one rank per node, which
        # Slurm can start (two per node would need 4 CPUs there).
        r = run_as_user(["salloc", "-N", "4", "-n", "8", "srun", "-c", "2", "-n", "4",
                         "--map-by", "slot", MPI_HELLO])
        self.assertRanksOn(r, ["n1", "n2", "n3", "n4"])
        r = run_as_user(["salloc", "-N", "4", "-n", "8", "srun", "-c", "2", "-n", "5",
                         "--map-by", "slot", MPI_HELLO])
        self.assertRefused(r, "not enough slots")


def slurm_failed_namespace(result):
    """True when Slurm itself failed to build the job's namespace (this
    one-host cluster's artifact, see NamespaceCase): stepmap said Slurm ended
    the job before it started, and n2's slurmd logged why."""
    m = re.search(r"Slurm ended job (\d+) before it started", result.stderr)
    if not m:
        return False
    log = os.path.join(cluster.cluster_env()["STEPMAP_CLUSTER_DIR"], "log", "slurmd.n2.log")
    with open(log, errors="replace") as f:
        return f"[{m.group(1)}.extern] error: _create_ns: ns base mount failed" in f.read()


def ns_srun(*args, **kw):
    """srun on the namespace cluster, tried again (up to five times in all)
    when Slurm failed to build the job's namespace."""
    for _ in range(5):
        r = srun(*args, **kw)
        if not slurm_failed_namespace(r):
            return r
        print("  (Slurm failed to build the job's namespace; trying again)")
        if os.environ.get("STEPMAP_DEBUG_NS"):
            log = os.path.join(cluster.cluster_env()["STEPMAP_CLUSTER_DIR"], "log", "slurmd.n2.log")
            print(open(log).read()[-3000:])
        cluster.wait_for(lambda: not jobs_left(), 30)
        time.sleep(1)
    return r


class NamespaceCase(cluster.StepTestCase):
    """Runs its tests on a cluster restarted with a job namespace (and
    contain_spank where asked), then restores the plain one. Every job runs
    on n2 alone, after the previous one is gone: on this one-host cluster
    Slurm's tmpfs namespaces fail when several slurmd build or remove them
    at once or right after they start, without stepmap too (the extern step
    logs "ns base mount failed: Invalid argument"; a job on several nodes
    always fails)."""
    namespace = "tmpfs"
    contained = False
    min_release = (22, 5)

    @classmethod
    def setUpClass(cls):
        release = cluster.slurm_release()
        if release < cls.min_release:
            raise unittest.SkipTest(f"needs Slurm {cls.min_release}, this is {release}")
        args = ["--namespace", cls.namespace] + (["--contain-spank"] if cls.contained else [])
        cluster.start_cluster(*args)
        # Right after the slurmds start, Slurm's first namespaces on this host
        # often fail (see the class comment): warm up with plain jobs first.
        for _ in range(5):
            if srun("-w", "n2", "-n", "1", "true").returncode == 0:
                break
            cluster.wait_for(lambda: not jobs_left(), 30)

    @classmethod
    def tearDownClass(cls):
        cluster.start_cluster()

    def setUp(self):
        super().setUp()
        self.assertTrue(cluster.wait_for(lambda: not jobs_left(), 30), "a job did not end")

    def test_ranks_reach_the_server_and_the_shared_topology(self):
        r = ns_srun("-w", "n2", "-n", "2", "--map-by", "core", MPI_HELLO)
        self.assertRanksOn(r, ["n2", "n2"])
        self.assertTrue(cluster.wait_for(lambda: not jobs_left(), 30))
        r = ns_srun("-n", "2", "-c", "1", "--host", "n2:2", PMIX_CLIENT)
        self.assertEqual(r.returncode, 0, r.stderr)
        facts = client_facts(r.stdout)
        self.assertEqual(sorted(facts), [0, 1], r.stdout + r.stderr)
        for rank, f in facts.items():
            with self.subTest(rank=rank):
                self.assertTrue(f["nspace"].startswith("stepmap."))
                self.assertEqual(f["shmem"], "adopted", "the shared topology is reachable")
                self.assertEqual(cpus(f["topo_pus"]), cpus(f["cgroup"]))

    def test_private_tmp_is_the_jobs(self):
        # The namespace is in force: a file a task leaves in /tmp is not in
        # the host's /tmp.
        probe = "/tmp/stepmap-ns-probe"
        if os.path.lexists(probe):
            os.unlink(probe)
        r = ns_srun("-w", "n2", "-n", "1", "--map-by", "node", "sh", "-c",
                 "touch /tmp/stepmap-ns-probe && ls /tmp/stepmap-ns-probe")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertFalse(os.path.lexists(probe))

    def test_failed_rank_ends_the_step_and_nothing_is_left(self):
        r = ns_srun("-w", "n2", "-n", "2", "--map-by", "core", MPI_HELLO, "die", "1", "3",
                 timeout=60)
        self.assertNotEqual(r.returncode, 0)
        self.assertEqual(cluster.leftovers(), [])


class TmpfsTest(NamespaceCase):
    """Tasks join the job's namespace, user_init and the server stay out."""


class TmpfsContainSpankTest(NamespaceCase):
    """user_init runs in a clone inside the job's namespace."""
    contained = True
    min_release = (24, 5)  # contain_spank

    def test_server_watches_slurmstepd_not_the_clone(self):
        # user_init runs in a clone that exits at once: a server watching it
        # would stop before the ranks connect. The step works and its
        # server's log says srun ended it.
        r = ns_srun("-w", "n2", "-n", "2", "--map-by", "core", MPI_HELLO)
        self.assertRanksOn(r, ["n2", "n2"])
        nspace = hello_ranks(r.stdout)[0][2]
        logs = cluster.server_logs(nspace)
        self.assertEqual(sorted(logs), ["n2"])
        # It stops when srun or Slurm ends the step, never on its own.
        self.assertIn("joined srun's rendezvous", logs["n2"])
        self.assertNotIn("slurmstepd is gone", logs["n2"])
        self.assertNotIn("cannot watch slurmstepd", logs["n2"])


class EntireStepInNsTest(NamespaceCase):
    """The whole step, slurmstepd included, in the job's namespace."""
    namespace = "tmpfs-entire-step"
    contained = True
    min_release = (24, 11)  # EntireStepInNS


del NamespaceCase  # a base, not a test of its own

if __name__ == "__main__":
    cluster.require_root()
    unittest.main(verbosity=2)
