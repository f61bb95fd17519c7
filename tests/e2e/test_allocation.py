"""Slurm decides where, stepmap decides how: without an allocation, Slurm's
scheduler picks the nodes (busy nodes, partitions) and stepmap places the
ranks inside what it granted; srun's -N, -w, -x work with stepmap's
options; bindings are the CPUs the step really holds; Ctrl-C and failures
leave no job behind."""

import os
import re
import signal
import subprocess
import time
import unittest

import cluster
from cluster import MPI_HELLO, run_as_user, srun


squeue_jobs = cluster.slurm_jobs


cpu_list = cluster.cpu_set


class AllocationTest(cluster.StepTestCase):
    def setUp(self):
        self.jobs = []

    def tearDown(self):
        for job in self.jobs:
            run_as_user(["scancel", job])
        self.assertTrue(cluster.wait_for(lambda: not squeue_jobs(), 20),
                        f"jobs left: {squeue_jobs()}")
        super().tearDown()

    def hold(self, *nodes):
        """A batch job holding every CPU of `nodes`, running when this returns."""
        r = run_as_user(["sbatch", "--parsable", "-o", "/dev/null", "-w", ",".join(nodes),
                         "-N", str(len(nodes)), "-n", str(2 * len(nodes)), "--wrap",
                         "sleep 300"])
        self.assertEqual(r.returncode, 0, r.stderr)
        job = r.stdout.strip().split(";")[0]
        self.jobs.append(job)
        env = dict(cluster.start_cluster())

        def running():
            s = subprocess.run(["squeue", "-h", "-j", job, "-o", "%T"], stdout=subprocess.PIPE,
                               text=True, env={**os.environ, **env}).stdout.strip()
            return s == "RUNNING"
        self.assertTrue(cluster.wait_for(running, 30), "the holding job did not start")
        return job

    # 1. The scheduler picks the nodes.
    def test_busy_nodes_are_left_to_other_jobs(self):
        self.hold("n1", "n2")
        started = time.time()
        r = srun("-n", "2", "--map-by", "node", MPI_HELLO, timeout=60)
        self.assertRanksOn(r, ["n3", "n4"])
        self.assertLess(time.time() - started, 30, "srun waited for the busy nodes")

    def test_a_partition_limits_the_nodes(self):
        r = srun("-p", "small", "-n", "2", "--map-by", "node", MPI_HELLO)
        self.assertRanksOn(r, ["n3", "n4"])
        r = srun("-p", "small", "-n", "4", "--map-by", "node", "-l", "printenv",
                 "SLURM_JOB_PARTITION")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(set(re.findall(r"^\d+: (\S+)$", r.stdout, re.M)), {"small"})

    def test_node_count_alternates_over_two_nodes(self):
        r = srun("-N", "2", "-n", "4", "--map-by", "node", MPI_HELLO)
        ranks = cluster.hello_ranks(r.stdout)
        self.assertEqual(r.returncode, 0, r.stderr)
        a, b = ranks[0][0], ranks[1][0]
        self.assertNotEqual(a, b)
        self.assertRanksOn(r, [a, b, a, b])
        inside = run_as_user(["salloc", "-N", "4", "-n", "8", "srun", "-N", "2", "-n", "4",
                              "--map-by", "node", MPI_HELLO])
        self.assertRanksOn(inside, ["n1", "n2", "n1", "n2"])

    def test_nodelist_and_exclude_inside_salloc(self):
        r = run_as_user(["salloc", "-N", "4", "-n", "8", "srun", "-w", "n3,n4", "-n", "4",
                         "--map-by", "node", MPI_HELLO])
        self.assertRanksOn(r, ["n3", "n4", "n3", "n4"])
        r = run_as_user(["salloc", "-N", "4", "-n", "8", "srun", "-x", "n1", "-n", "3",
                         "--map-by", "node", MPI_HELLO])
        self.assertRanksOn(r, ["n2", "n3", "n4"])
        r = run_as_user(["salloc", "-N", "2", "srun", "-w", "n9", "-n", "2", "--map-by",
                         "node", MPI_HELLO])
        self.assertRefused(r, "-w names node 'n9', which is not in the job's allocation")

    def test_layout_options_that_contradict_the_plan_are_refused(self):
        r = srun("-m", "cyclic", "-n", "2", "--map-by", "node", MPI_HELLO)
        self.assertRefused(r, "-m lays the tasks out itself", "drop -m")
        r = run_as_user(["salloc", "-N", "2", "-n", "4", "srun", "--ntasks-per-node=1", "-n",
                         "4", "--map-by", "node", MPI_HELLO])
        self.assertRefused(r, "--ntasks-per-node 1 disagrees with the plan, which puts 2 ranks "
                           "on n1")

    def test_a_plan_that_fails_in_the_granted_job_releases_it(self):
        # Slurm grants a node; only then does the plan find no core 7 there.
        r = srun("-n", "1", "--map-by", "pe-list=7", MPI_HELLO)
        self.assertRefused(r, "pe-list=7 on node", "there is no core 7")
        self.assertTrue(cluster.wait_for(lambda: not squeue_jobs(), 20),
                        f"the job outlived the refusal: {squeue_jobs()}")

    def test_allocation_options_stepmap_cannot_pass_on_are_refused(self):
        r = srun("--gres=gpu:1", "-n", "2", "--map-by", "node", MPI_HELLO)
        self.assertRefused(r, "--gres shapes the job's allocation", "salloc --gres gpu:1 srun")

    # 3. Bindings on the CPUs the step holds, as the map shows them.
    def assertBindingsAsMapped(self, *args):
        r = srun(*args, "--display-map", "-l", "grep", "Cpus_allowed_list", "/proc/self/status")
        self.assertEqual(r.returncode, 0, r.stderr)
        bound = {int(m.group(1)): cpu_list(m.group(2)) for m in re.finditer(
            r"Process rank: (\d+) Bound: \S*?\[(?:core|hwt):L([0-9,-]+)\]", r.stderr)}
        ran = {int(m.group(1)): cpu_list(m.group(2)) for m in re.finditer(
            r"^(\d+): Cpus_allowed_list:\s+(\S+)$", r.stdout, re.M)}
        self.assertTrue(bound, r.stderr)
        self.assertEqual(sorted(ran), sorted(bound), r.stdout + r.stderr)
        # This machine's PUs: logical and OS indices agree.
        self.assertEqual(ran, bound, r.stderr)

    def test_ppr_map_binds_what_it_shows(self):
        self.assertBindingsAsMapped("-n", "4", "--map-by", "ppr:1:node")

    def test_package_map_binds_what_it_shows(self):
        self.assertBindingsAsMapped("-n", "3", "--map-by", "package")

    def test_bind_to_core_binds_what_it_shows(self):
        self.assertBindingsAsMapped("-n", "4", "--map-by", "node", "--bind-to", "core")

    # Ctrl-C, failures: no job left.
    def test_ctrl_c_while_waiting_withdraws_the_request(self):
        self.hold("n1", "n2", "n3", "n4")
        p = self.start_srun("-n", "2", "--map-by", "node", MPI_HELLO)
        self.assertTrue(cluster.wait_for(lambda: len(squeue_jobs()) == 2, 20))
        os.killpg(p.pid, signal.SIGINT)  # Ctrl-C: the terminal's process group
        out, err = p.communicate(timeout=30)
        self.assertNotEqual(p.returncode, 0)
        self.assertIn("interrupted while waiting for the job allocation", err)
        self.assertTrue(cluster.wait_for(lambda: len(squeue_jobs()) == 1, 20),
                        "the withdrawn request is still queued")

    def test_killed_srun_leaves_no_job(self):
        self.hold("n1", "n2", "n3", "n4")
        p = self.start_srun("-n", "2", "--map-by", "node", MPI_HELLO)
        self.assertTrue(cluster.wait_for(lambda: len(squeue_jobs()) == 2, 20))
        os.killpg(p.pid, signal.SIGKILL)
        p.wait(timeout=10)
        self.assertTrue(cluster.wait_for(lambda: len(squeue_jobs()) == 1, 20),
                        "the job of a killed srun outlived it")

    def test_ctrl_c_while_running_ends_the_job(self):
        # -N: srun restarts itself without it, and must still be "srun".
        p = self.start_srun("-N", "2", "-n", "2", "--map-by", "node", "sleep", "60")
        self.assertTrue(cluster.wait_for(lambda: bool(cluster.pids_of(cluster.TEST_USER,
                                                                      "sleep")), 30))
        self.assertTrue(cluster.pids_of(cluster.TEST_USER, "srun"), "srun lost its name")
        # srun: "one more within 1 sec to abort". Slurm 26.05's srun now and
        # then misses the second (plain srun too): then Ctrl-C twice again.
        for _ in range(3):
            for _ in range(2):
                os.killpg(p.pid, signal.SIGINT)
                time.sleep(0.2)
            if cluster.wait_for(lambda: p.poll() is not None, 5):
                break
        p.communicate(timeout=30)
        self.assertNotEqual(p.returncode, 0)
        self.assertTrue(cluster.wait_for(lambda: not squeue_jobs(), 20))

    def test_exit_status_reaches_the_shell(self):
        # Ranks fail a moment after they start, as an MPI program does (its
        # node's server has joined srun by then; a rank that fails within
        # milliseconds can beat it, and srun then reports Slurm's status).
        r = srun("-n", "2", "--map-by", "node", "sh", "-c", "sleep 1; exit 3")
        self.assertEqual(r.returncode, 3, r.stderr)
        # As mpirun: the failing rank's status, though Slurm then kills the
        # other rank (plain srun -K would exit 143).
        r = srun("-n", "2", "--map-by", "node", "sh", "-c",
                 "sleep 1; [ $SLURM_PROCID = 1 ] && exit 7; sleep 30")
        self.assertEqual(r.returncode, 7, r.stderr)

    def start_srun(self, *args):
        env = dict(cluster.start_cluster())
        env.update(cluster.OMPI_ENV)
        cmd = ["runuser", "-u", cluster.TEST_USER, "--", "env"]
        cmd += [f"{k}={v}" for k, v in env.items()]
        cmd += ["srun"] + list(args)
        return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                cwd="/tmp", start_new_session=True)


if __name__ == "__main__":
    cluster.require_root()
    unittest.main(verbosity=2)
