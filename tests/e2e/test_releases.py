"""What differs between the Slurm releases a site runs, on the release the
cluster runs (Debian's 22.05 by default; contrib/slurm/test-release.sh runs
the suite on 26.05): srun's --export forms, the CPUs-per-task variable, and
job namespaces (job_container/tmpfs, namespace/tmpfs from 25.11) with and
without EntireStepInNS and SlurmdParameters=contain_spank."""

import os
import unittest

import cluster
from cluster import MPI_HELLO, PMIX_CLIENT, hello_ranks, run_as_user, srun
from test_topology import client_facts, cpus

OMPI_NAMES = ",".join(sorted(cluster.OMPI_ENV))


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


class NamespaceCase(cluster.StepTestCase):
    """Runs its tests on a cluster restarted with a job namespace (and
    contain_spank where the release has it), then restores the plain one."""
    namespace = "tmpfs"
    min_release = (22, 5)

    @classmethod
    def cluster_args(cls):
        args = ["--namespace", cls.namespace]
        if cls.contained:
            args.append("--contain-spank")
        return tuple(args)

    @classmethod
    def setUpClass(cls):
        release = cluster.slurm_release()
        if release < cls.min_release:
            raise unittest.SkipTest(f"needs Slurm {cls.min_release}, this is {release}")
        cluster.start_cluster(*cls.cluster_args())

    @classmethod
    def tearDownClass(cls):
        cluster.start_cluster()

    def test_ranks_reach_the_server_and_the_shared_topology(self):
        r = srun("-n", "4", "--map-by", "node", MPI_HELLO)
        self.assertRanksOn(r, ["n1", "n2", "n3", "n4"])
        r = srun("-n", "2", "-c", "1", "--host", "n2:2", PMIX_CLIENT)
        self.assertEqual(r.returncode, 0, r.stderr)
        facts = client_facts(r.stdout)
        self.assertEqual(sorted(facts), [0, 1], r.stdout + r.stderr)
        for rank, f in facts.items():
            with self.subTest(rank=rank):
                self.assertEqual(f["shmem"], "adopted")
                self.assertEqual(cpus(f["topo_pus"]), cpus(f["cgroup"]))

    def test_private_tmp_is_the_jobs(self):
        # The namespace is in force: a file a task leaves in /tmp is gone
        # for the next job, and the host's /tmp never saw it.
        r = srun("-n", "1", "--map-by", "node", "sh", "-c",
                 "touch /tmp/stepmap-ns-probe && ls /tmp/stepmap-ns-probe")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertFalse(os.path.exists("/tmp/stepmap-ns-probe"))

    def test_failed_rank_ends_the_step_and_nothing_is_left(self):
        r = srun("-n", "4", "--map-by", "node", MPI_HELLO, "die", "2", "3", timeout=60)
        self.assertNotEqual(r.returncode, 0)
        self.assertEqual(cluster.leftovers(), [])


class TmpfsTest(NamespaceCase):
    namespace = "tmpfs"
    contained = False


class TmpfsContainSpankTest(NamespaceCase):
    namespace = "tmpfs"
    contained = True
    min_release = (24, 5)  # contain_spank

    def test_server_watches_slurmstepd_not_the_clone(self):
        # user_init runs in a clone that exits at once: a server watching it
        # would stop before the ranks connect. The step works and its
        # servers' logs say they served to the end.
        r = srun("-n", "2", "--map-by", "node", MPI_HELLO)
        self.assertRanksOn(r, ["n1", "n2"])
        nspace = hello_ranks(r.stdout)[0][2]
        logs = cluster.server_logs(nspace)
        self.assertEqual(sorted(logs), ["n1", "n2"])
        for node, text in logs.items():
            self.assertNotIn("slurmstepd is gone", text, node)
            self.assertNotIn("cannot watch slurmstepd", text, node)


class EntireStepInNsTest(NamespaceCase):
    namespace = "tmpfs-entire-step"
    contained = True
    min_release = (24, 11)  # EntireStepInNS


if __name__ == "__main__":
    cluster.require_root()
    unittest.main(verbosity=2)
