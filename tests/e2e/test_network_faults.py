"""End-to-end: the network faults a cluster has, on the cluster of separate
hosts (contrib/cluster/start.sh --network hosts; link.sh makes the faults).
Each step either completes or ends within its deadline with a message
naming the node and the cause, srun's exit status says so, and afterwards
nothing of the step is left on any node and no job stays in squeue. Every
fault is undone by the test.

Deadlines (docs/faults.md): a node that cannot be reached at launch is
Slurm's to report (MessageTimeout, 5 s here); a link that goes silent
during a step ends it within stepmap's dead-link time (15 s) plus srun's
wind-down; a node whose slurmd dies keeps running its step."""

import os
import signal
import subprocess
import threading
import time
import unittest

import cluster
from cluster import MPI_EXCHANGE, MPI_HELLO, hello_ranks, require_root

LINK = os.path.join(cluster.SOURCE_ROOT, "contrib/cluster/link.sh")
DEAD_LINK_SECONDS = 15
# What srun takes after stepmap's verdict: its kill, the tasks' ends, the
# wind-down Slurm gives a step that does not answer (KillWait and the
# "Waiting up to 3 seconds" of srun).
WIND_DOWN_SECONDS = 8


def link(*args):
    subprocess.run([LINK] + list(args), check=True, stdout=subprocess.DEVNULL)


def srun_with_fault(args, fault, after, timeout=120, extra_env=None):
    """Runs srun with args as the test user; `after` seconds after its
    start runs fault(). Returns (result, seconds from the fault to srun's
    end)."""
    fired = {}

    def inject():
        time.sleep(after)
        fault()
        fired["at"] = time.monotonic()

    injector = threading.Thread(target=inject)
    injector.start()
    try:
        r = cluster.srun(*args, timeout=timeout, extra_env=extra_env)
    finally:
        injector.join()
    return r, time.monotonic() - fired.get("at", time.monotonic())


def shared_memory_left():
    """The test user's files in every node's /dev/shm that a stepmap server
    made (its PMIx shared-memory segments)."""
    uid = cluster.pwd.getpwnam(cluster.TEST_USER).pw_uid
    left = []
    for node in cluster.NODES:
        shm = cluster.node_path(node, "/dev/shm")
        for name in os.listdir(shm) if os.path.isdir(shm) else []:
            path = os.path.join(shm, name)
            if cluster._owner(path) == uid and ("stepmap" in name or name.startswith("pmix")):
                left.append(f"{node}:{path}")
    return left


@unittest.skipUnless(os.environ.get("STEPMAP_E2E_NETWORK", "hosts") == "hosts",
                     "the network faults need the cluster of separate hosts")
class NetworkFaultTest(cluster.StepTestCase):
    @classmethod
    def setUpClass(cls):
        cluster.require_hosts_network()

    def setUp(self):
        link("clear")

    def tearDown(self):
        link("clear")
        emulators = [line for line in subprocess.run(["pgrep", "-a", "-x", "link_emulator"],
                                                     stdout=subprocess.PIPE, text=True)
                     .stdout.splitlines() if not cluster._zombie(line)]
        self.assertEqual(emulators, [], "link.sh clear left link emulators running")
        # A node cut off from slurmctld finishes its job once it is back;
        # a completion message the fault lost, when slurmctld sends its
        # TERMINATE_JOB again (after 60 s).
        self.assertTrue(cluster.wait_for(lambda: not cluster.slurm_jobs(), 120),
                        f"jobs left in squeue: {cluster.slurm_jobs()}")
        super().tearDown()
        self.assertEqual(shared_memory_left(), [])

    def assertEndedNaming(self, r, took, deadline, *needles):
        self.assertNotEqual(r.returncode, 0, r.stdout + r.stderr)
        for needle in needles:
            self.assertRegex(r.stderr, needle)
        self.assertLess(took, deadline, r.stderr)

    def test_a_node_unreachable_at_launch_fails_the_step_naming_it(self):
        link("n3", "down")
        started = time.monotonic()
        r = cluster.srun("-N", "4", "-n", "4", "--map-by", "node", MPI_HELLO, timeout=120)
        took = time.monotonic() - started
        link("n3", "up")
        self.assertEndedNaming(r, took, 20, r"launch for StepId=\S+ failed on node n3")
        self.assertLess(len(hello_ranks(r.stdout)), 4)

    def test_a_link_down_during_a_fence_ends_the_step_naming_the_node(self):
        # Rank 2 (n3) is 4 s late into MPI_Init: the others wait for it in
        # the fence when n3's switch port goes down.
        r, took = srun_with_fault(
            ["-N", "4", "-n", "4", "--map-by", "node", MPI_EXCHANGE, "ring", "late", "2", "4000"],
            lambda: link("n3", "down"), after=2)
        link("n3", "up")
        self.assertEndedNaming(r, took, DEAD_LINK_SECONDS + WIND_DOWN_SECONDS,
                               r"stepmap: lost the stepmap server of n3: .*connection timed out "
                               rf"\(no answer for {DEAD_LINK_SECONDS} s\); ending the step")

    def test_a_link_down_during_a_direct_modex_ends_the_step_naming_the_node(self):
        # --modex=async: no data at MPI_Init; the ring's first messages ask
        # n3's server for rank 2's data, which is late, when n3 goes down.
        r, took = srun_with_fault(
            ["-v", "-N", "4", "-n", "4", "--map-by", "node", "--modex=async", MPI_EXCHANGE,
             "ring", "late", "2", "4000"],
            lambda: link("n3", "down"), after=2)
        link("n3", "up")
        self.assertEndedNaming(r, took, DEAD_LINK_SECONDS + WIND_DOWN_SECONDS,
                               r"stepmap: lost the stepmap server of n3: .*connection timed out")

    def test_a_partition_between_tree_parent_and_child_ends_the_step_naming_both(self):
        # The fence tree's root is n1 and n2 its child; both still reach srun
        # and slurmctld, so only stepmap can see that they lost each other.
        r, took = srun_with_fault(
            ["-N", "4", "-n", "4", "--map-by", "node", MPI_EXCHANGE, "ring", "late", "2", "4000"],
            lambda: link("partition", "n1", "n2"), after=2)
        self.assertEndedNaming(r, took, DEAD_LINK_SECONDS + WIND_DOWN_SECONDS,
                               r"stepmap: the network link between n[12] and n[12] failed: .*"
                               r"connection timed out")

    def test_five_percent_loss_on_every_link_still_completes(self):
        for node in cluster.NODES:
            link(node, "shape", "loss=5")
        started = time.monotonic()
        r = cluster.srun("-N", "4", "-n", "8", "--map-by", "node", MPI_EXCHANGE, "alltoall",
                         timeout=180)
        took = time.monotonic() - started
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertEqual(r.stdout.count(" alltoall ok"), 8, r.stdout + r.stderr)
        print(f"8 ranks all-to-all over links losing 5%: {took:.1f} s", flush=True)

    def test_five_ms_latency_on_one_link_still_completes_and_costs_round_trips(self):
        base = cluster.srun("-N", "4", "-n", "4", "--map-by", "node", MPI_HELLO)
        self.assertEqual(base.returncode, 0, base.stderr)
        started = time.monotonic()
        base = cluster.srun("-N", "4", "-n", "4", "--map-by", "node", MPI_HELLO)
        normal = time.monotonic() - started
        link("n3", "shape", "delay=5")
        started = time.monotonic()
        r = cluster.srun("-N", "4", "-n", "4", "--map-by", "node", MPI_HELLO)
        slow = time.monotonic() - started
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(len(hello_ranks(r.stdout)), 4, r.stdout)
        print(f"hello on 4 nodes: {normal:.2f} s; with 5 ms on n3's link: {slow:.2f} s",
              flush=True)
        # Slurm's launch and stepmap's rendezvous cross n3's link a bounded
        # number of times: a step does not pay seconds for 10 ms round trips.
        self.assertLess(slow, normal + 2.0)

    def test_a_slurmd_killed_mid_step_leaves_the_step_running(self):
        # slurmstepd, the node server and the ranks do not need slurmd once
        # the step runs: the step completes; the node comes back (start.sh
        # starts its slurmd again) and its job ends there.
        def kill_slurmd():
            os.kill(cluster.slurmd_pid("n3"), signal.SIGKILL)

        try:
            r, _ = srun_with_fault(["-N", "4", "-n", "4", "--map-by", "node", "sh", "-c",
                                    f"sleep 3; exec {MPI_HELLO}"], kill_slurmd, after=1)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertEqual(len(hello_ranks(r.stdout)), 4, r.stdout + r.stderr)
        finally:
            subprocess.run([os.path.join(cluster.SOURCE_ROOT, "contrib/cluster/start.sh")] +
                           cluster.plugin_arguments(), check=True, stdout=subprocess.DEVNULL)
            # The node is back once its job ended there and a job runs on
            # it again: the next test must not meet a slurmd still settling
            # (its first TERMINATE_JOB went unanswered, 60 s more).
            self.assertTrue(cluster.wait_for(lambda: not cluster.slurm_jobs(), 120),
                            f"jobs left in squeue: {cluster.slurm_jobs()}")
            probe = cluster.srun("-w", "n3", "-n", "1", "true", timeout=60)
            self.assertEqual(probe.returncode, 0, probe.stderr)
            self.assertTrue(cluster.wait_for(lambda: not cluster.slurm_jobs(), 120),
                            f"jobs left in squeue: {cluster.slurm_jobs()}")


if __name__ == "__main__":
    require_root()
    unittest.main(verbosity=2)
