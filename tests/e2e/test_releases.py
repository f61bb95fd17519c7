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
    """Everyone's jobs Slurm still holds (pending, running or completing)."""
    return cluster.slurm_jobs(user=None)


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


class InitFailureModeTest(cluster.StepTestCase):
    """25.05+: a required stepmap whose slurm_spank_init fails in slurmstepd
    (here: a bad plugstack.conf argument on the nodes) fails the batch job,
    and leaves the node in service instead of draining it (Slurm's default)."""

    def test_failed_remote_init_fails_the_job_not_the_node(self):
        if cluster.slurm_release() < (25, 5):
            self.skipTest("slurm_spank_init_failure_mode is read from Slurm 25.05 on")
        env = cluster.cluster_env()

        def resume_if_drained():
            state = subprocess.run(["sinfo", "-h", "-n", "n3", "-o", "%t"],
                                   stdout=subprocess.PIPE, text=True,
                                   env={**os.environ, **env}).stdout.strip()
            if state.startswith("dr"):
                subprocess.run(["scontrol", "update", "NodeName=n3", "State=RESUME"],
                               env={**os.environ, **env})
            return state
        self.addCleanup(resume_if_drained)
        etc = os.path.join(env["STEPMAP_CLUSTER_DIR"], "etc")
        plugstack = os.path.join(etc, "plugstack.conf")
        with open(plugstack) as f:
            good = f.read()
        # sbatch and srun read their own slurm.conf, with no plugin; the
        # nodes read the cluster's plugstack.conf afresh for every step.
        with open(env["SLURM_CONF"]) as f:
            conf = f.read()
        srun_conf = os.path.join(etc, "slurm-srun-only.conf")
        empty = os.path.join(etc, "plugstack-empty.conf")
        with open(empty, "w") as f:
            f.write("")
        with open(srun_conf, "w") as f:
            f.write(re.sub(r"^PlugStackConfig=.*$", f"PlugStackConfig={empty}", conf,
                           flags=re.M))
        os.chmod(srun_conf, 0o644)
        os.chmod(empty, 0o644)
        try:
            with open(plugstack, "w") as f:
                f.write(good.rstrip("\n") + " no_such_setting=1\n")
            # A batch job: there Slurm drains the node on a failed init
            # unless the plugin asks for the job to fail instead.
            try:
                r = run_as_user(["sbatch", "--wait", "-w", "n3", "-o", "/dev/null", "--wrap",
                                 "true"], extra_env={"SLURM_CONF": srun_conf}, timeout=60)
                self.assertNotEqual(r.returncode, 0, "the job ran although init failed")
            except subprocess.TimeoutExpired:
                pass  # requeued and held: the node check below says why
        finally:
            with open(plugstack, "w") as f:
                f.write(good)
            os.unlink(srun_conf)
            os.unlink(empty)
        state = resume_if_drained()
        self.assertIn(state, ("idle", "mix", "alloc", "comp"), "n3 was taken out of service")
        r = srun("-w", "n3", "-n", "1", "--map-by", "node", "true")
        self.assertEqual(r.returncode, 0, r.stderr)


def slurm_failed_namespace(result, node):
    """True when Slurm itself failed to build the job's namespace on `node`
    (this one-host cluster's artifact, see NamespaceCase): stepmap said Slurm
    ended the job before it started, and the node's slurmd logged why."""
    m = re.search(r"Slurm ended job (\d+) before it started", result.stderr)
    if not m:
        return False
    log = os.path.join(cluster.cluster_env()["STEPMAP_CLUSTER_DIR"], "log", f"slurmd.{node}.log")
    line = f"[{m.group(1)}.extern] error: _create_ns: ns base mount failed"

    def logged():
        with open(log, errors="replace") as f:
            return line in f.read()
    # The extern step's lines may reach the log a little after srun returns.
    return cluster.wait_for(logged, 10)


def ns_srun(*args, **kw):
    """srun on the namespace cluster, on one node: "{node}" in args is n2, or
    the next node when Slurm failed to build the job's namespace there (such
    a failure tends to repeat on the same slurmd). Returns (result, node)."""
    for node in ("n2", "n3", "n4", "n1"):
        r = srun(*[a.replace("{node}", node) for a in args], **kw)
        if not slurm_failed_namespace(r, node):
            return r, node
        print(f"  (Slurm failed to build the job's namespace on {node}; trying the next node)")
        cluster.wait_for(lambda: not jobs_left(), 30)
    return r, node


class NamespaceCase(cluster.StepTestCase):
    """Runs its tests on a cluster restarted with a job namespace (and
    contain_spank where asked), then restores the plain one. Every job runs
    on one node, after the previous one is gone: on this one-host cluster
    Slurm's tmpfs namespaces fail for any job on several nodes, and now and
    then on one node, again and again on the same slurmd, without stepmap
    too (the extern step logs "ns base mount failed: Invalid argument"); a
    job is then tried on the next node (ns_srun)."""
    namespace = "tmpfs"
    contained = False
    # On 22.05 Slurm's job_container/tmpfs fails here in bursts on every
    # node at once (seen: eleven failures in a row), so often that no test
    # could pass reliably; 24.11 and later fail now and then only.
    min_release = (24, 11)

    @classmethod
    def setUpClass(cls):
        release = cluster.slurm_release()
        if release < cls.min_release:
            raise unittest.SkipTest(f"needs Slurm {cls.min_release}, this is {release}")
        args = ["--namespace", cls.namespace] + (["--contain-spank"] if cls.contained else [])
        cluster.start_cluster(*args)
        # Right after the slurmds start, Slurm's first namespaces on this host
        # often fail (see above): warm up with a plain job first.
        ns_srun("-w", "{node}", "-n", "1", "true")

    @classmethod
    def tearDownClass(cls):
        cluster.start_cluster()

    def setUp(self):
        super().setUp()
        self.assertTrue(cluster.wait_for(lambda: not jobs_left(), 30), "a job did not end")

    def test_ranks_reach_the_server_and_the_shared_topology(self):
        r, node = ns_srun("-w", "{node}", "-n", "2", "--map-by", "core", MPI_HELLO)
        self.assertRanksOn(r, [node, node])
        self.assertTrue(cluster.wait_for(lambda: not jobs_left(), 30))
        r, node = ns_srun("-n", "2", "-c", "1", "--host", "{node}:2", PMIX_CLIENT)
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
        # the node's own /tmp.
        probe = "/tmp/stepmap-ns-probe"
        for node in cluster.NODES:
            if os.path.lexists(cluster.node_path(node, probe)):
                os.unlink(cluster.node_path(node, probe))
        r, node = ns_srun("-w", "{node}", "-n", "1", "--map-by", "node", "sh", "-c",
                          "touch /tmp/stepmap-ns-probe && ls /tmp/stepmap-ns-probe")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn(probe, r.stdout)
        self.assertFalse(os.path.lexists(cluster.node_path(node, probe)))

    def test_failed_rank_ends_the_step_and_nothing_is_left(self):
        r, _ = ns_srun("-w", "{node}", "-n", "2", "--map-by", "core", MPI_HELLO, "die", "1", "3",
                 timeout=60)
        self.assertNotEqual(r.returncode, 0)
        self.assertEqual(cluster.leftovers(), [])


class TmpfsTest(NamespaceCase):
    """Tasks join the job's namespace, user_init and the server stay out."""


class TmpfsContainSpankTest(NamespaceCase):
    """user_init runs in a clone inside the job's namespace."""
    contained = True

    def test_server_watches_slurmstepd_not_the_clone(self):
        # user_init runs in a clone that exits at once: a server watching it
        # would stop before the ranks connect. The step works and its
        # server's log says srun ended it.
        r, node = ns_srun("-w", "{node}", "-n", "2", "--map-by", "core", MPI_HELLO)
        self.assertRanksOn(r, [node, node])
        nspace = hello_ranks(r.stdout)[0][2]
        logs = cluster.server_logs(nspace)
        self.assertEqual(sorted(logs), [node])
        # The ranks ran, so the server outlived the clone; it joined, and
        # found slurmstepd to watch (it leaves when the step or srun ends).
        self.assertIn("joined srun's rendezvous", logs[node])
        self.assertNotIn("cannot watch slurmstepd", logs[node])


class EntireStepInNsTest(NamespaceCase):
    """The whole step, slurmstepd included, in the job's namespace."""
    namespace = "tmpfs-entire-step"  # EntireStepInNS: 24.11 and later
    contained = True


del NamespaceCase  # a base, not a test of its own

if __name__ == "__main__":
    cluster.require_root()
    unittest.main(verbosity=2)
