"""MPI_Comm_spawn under srun (issue 25): the spawning rank's server takes
the request to srun, which starts the children as a new step of the job
inside its allocation; parents and children connect, merge, compute and
disconnect, on Debian's Open MPI 4.1 and on Open MPI 5 where it is built.
Bad requests fail the spawn (MPI_ERR_SPAWN) with the reason on srun's
terminal, and nothing is left behind (StepTestCase checks every node).
Slurm's own mpi/pmix answers every spawn "not supported"."""

import os
import re
import subprocess
import time
import unittest

import cluster
from cluster import srun

MPI_SPAWN = cluster.program("STEPMAP_MPI_SPAWN")


def children(stdout, n):
    """{child rank: node} of mpi_spawn's children lines, each with the sum
    of every rank of parents and children merged."""
    return {int(r): node for r, node in
            re.findall(r"child (\d+) of %d parent-size \d+ sum \d+ host (\S+)" % n, stdout)}


class SpawnCases:
    """The cases, run with self.program."""

    def spawn(self, *args, nodes=3, n=1, timeout=180):
        return srun("-N", str(nodes), "-n", str(n), "--map-by", "node", self.program, "parent",
                    *args, timeout=timeout)

    def assertSpawned(self, r, parents, spawned):
        out = r.stdout + r.stderr
        self.assertEqual(r.returncode, 0, out)
        total = parents + spawned
        for rank in range(parents):
            self.assertRegex(r.stdout, r"parent %d spawn ok sum %d size %d host" %
                             (rank, total * (total - 1) // 2, total), out)
        got = children(r.stdout, spawned)
        self.assertEqual(sorted(got), list(range(spawned)), out)
        self.assertNotIn("FAILED", r.stdout)
        return got

    def assertSpawnFailed(self, r, *needles):
        out = r.stdout + r.stderr
        self.assertEqual(r.returncode, 0, out)
        self.assertIn("parent 0 spawn FAILED: class %d" % self.spawn_error, r.stdout, out)
        for needle in needles:
            self.assertIn(needle, r.stderr, out)
        # No step of the job is left: the job ends with srun.
        self.assertTrue(cluster.wait_for(lambda: cluster.slurm_jobs() == []), out)

    def test_children_start_on_free_slots_connect_and_compute_with_their_parent(self):
        # One CPU a node: the parent holds n1's, the children take the others.
        r = self.spawn("2")
        got = self.assertSpawned(r, 1, 2)
        parent_node = re.search(r"parent 0 spawn ok .* host (\S+)", r.stdout).group(1)
        self.assertNotIn(parent_node, got.values(), r.stdout)
        self.assertEqual(len(set(got.values())), 2, r.stdout)

    def test_every_parent_rank_joins_the_children_placed_by_the_host_key(self):
        r = self.spawn("2", "host=n3,n4", nodes=4, n=2)
        got = self.assertSpawned(r, 2, 2)
        self.assertEqual(sorted(got.values()), ["n3", "n4"], r.stdout)

    def test_spawn_multiple_starts_each_program_as_an_application_of_one_step(self):
        r = self.spawn("3", "first=1", nodes=4)
        self.assertSpawned(r, 1, 3)
        apps = dict(re.findall(r"child (\d+) of 3 .* app (\d+)", r.stdout))
        self.assertEqual(apps, {"0": "0", "1": "1", "2": "1"}, r.stdout)

    def test_more_processes_than_free_slots_is_mpiruns_error_unless_oversubscribing(self):
        r = self.spawn("5")
        self.assertSpawnFailed(r, "5 processes but 2 of the allocation's 3 slots are free",
                               "MPI_Info key map_by, value :OVERSUBSCRIBE")
        r = self.spawn("4", "map_by=:OVERSUBSCRIBE")
        self.assertSpawned(r, 1, 4)

    def test_hosts_outside_the_allocation_are_refused_naming_them(self):
        r = self.spawn("1", "host=n1,n9", nodes=1)
        self.assertSpawnFailed(r, "At least one of the requested hosts is not included in the "
                               "current allocation: n9")

    def test_add_host_is_refused_saying_to_allocate_the_nodes(self):
        r = self.spawn("1", "add-host=n4")
        self.assertSpawnFailed(r, "add-host asks for nodes outside the job",
                               "allocate it with them (salloc -w ...)")

    def test_a_program_that_does_not_exist_fails_the_spawn(self):
        r = self.spawn("1", "cmd=/nonexistent/worker")
        self.assertSpawnFailed(r, "/nonexistent/worker: No such file or directory",
                               "ended with exit status 2 before they all called MPI_Init")

    def test_children_that_never_call_mpi_init_fail_the_spawn_after_the_deadline(self):
        with cluster.plugstack(cluster.with_plugin_arguments("spawn_timeout=3")):
            started = time.time()
            r = self.spawn("1", "cmd=/bin/sleep", "args=300")
            took = time.time() - started
        self.assertSpawnFailed(r, "did not all call MPI_Init (PMIx_Init) within 3 s "
                               "(plugstack.conf's spawn_timeout=); they were ended")
        self.assertLess(took, 60)

    def test_a_parent_that_aborts_ends_its_children_too(self):
        r = self.spawn("2", "abort")
        self.assertEqual(r.returncode, 3, r.stdout + r.stderr)
        self.assertTrue(cluster.wait_for(lambda: cluster.slurm_jobs() == []),
                        r.stdout + r.stderr)


class OpenMpi4Test(SpawnCases, cluster.StepTestCase):
    """mpi_spawn built with Debian's Open MPI 4.1."""
    program = MPI_SPAWN
    spawn_error = 50  # MPI_ERR_SPAWN


@unittest.skipUnless(cluster.have_ompi5(), "Open MPI 5 is not built (STEPMAP_OMPI5_PREFIX; "
                     "contrib/openmpi/build-openmpi5.sh builds it)")
class OpenMpi5Test(SpawnCases, cluster.StepTestCase):
    """mpi_spawn built with Open MPI 5's mpicc (a PMIx 5 client)."""
    # Open MPI 5 turns the failed PMIx_Spawn into MPI_ERR_SPAWN, then
    # hands every rank the error through the port it connects on
    # ("<port>:error=50", ompi/mpi/c/comm_spawn.c), which comes back as
    # MPI_ERR_UNKNOWN: what its own mpirun returns too.
    spawn_error = 14

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.dir, cls.program = cluster.build_with_ompi5("mpi_spawn.c", "stepmap-ompi5-spawn-")

    @classmethod
    def tearDownClass(cls):
        subprocess.run(["rm", "-rf", cls.dir])
        super().tearDownClass()


POOL_SCRIPT = """\
import os
from mpi4py.futures import MPIPoolExecutor

def square(x):
    return x * x, os.environ.get("SLURMD_NODENAME", "?"), os.getpid()

if __name__ == "__main__":
    with MPIPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(square, range(32)))
    print("squares", sum(r[0] for r in results))
    print("workers", len(set(r[2] for r in results)))
    print("nodes", ",".join(sorted(set(r[1] for r in results))))
"""


CHILD_FAILS_SCRIPT = """\
import sys, time
from mpi4py import MPI
parent = MPI.Comm.Get_parent()
if parent == MPI.COMM_NULL:
    inter = MPI.COMM_SELF.Spawn(sys.executable, args=[__file__, sys.argv[1]], maxprocs=2)
    if sys.argv[1] == "disconnected":
        inter.Disconnect()
        time.sleep(3)  # the children fail meanwhile
        print("parent carries on", flush=True)
    else:
        print("parent got", inter.recv(source=1), flush=True)
elif sys.argv[1] == "disconnected":
    parent.Disconnect()
    sys.exit(3)
else:
    if MPI.COMM_WORLD.Get_rank() == 1:
        MPI.COMM_WORLD.Abort(5)
    parent.recv(source=0)
"""


class FailingChildrenTest(cluster.StepTestCase):
    """Seed 000's shutdown rule with mpi4py (Open MPI 4.1): a spawned step
    that fails ends its still-connected spawner rather than leave it
    waiting; one that disconnected first ends alone."""

    def run_script(self, mode):
        script = cluster.write_user_file(CHILD_FAILS_SCRIPT)
        try:
            return cluster.run_as_user(["salloc", "-N", "3", "-n", "3", "srun", "-n", "1",
                                        "--map-by", "slot", "/usr/bin/python3", script, mode],
                                       timeout=120)
        finally:
            os.unlink(script)

    def test_a_connected_child_that_aborts_ends_its_spawner_saying_why(self):
        started = time.time()
        r = self.run_script("connected")
        self.assertNotEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertRegex(r.stderr, r"stepmap: spawned step \d+\.\d+ \(2 x /usr/bin/python3 on "
                         r"\S+\) ended with exit status 5, connected to this step; ending the step")
        self.assertLess(time.time() - started, 60)
        self.assertTrue(cluster.wait_for(lambda: cluster.slurm_jobs() == []))

    def test_children_that_disconnected_fail_alone(self):
        r = self.run_script("disconnected")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("parent carries on", r.stdout)
        self.assertIn("ended with exit status 3", r.stderr)
        self.assertNotIn("ending the step", r.stderr)


class MpiPoolTest(cluster.StepTestCase):
    """mpi4py's MPIPoolExecutor (Debian's python3-mpi4py, Open MPI 4.1)
    spawns its workers: one srun rank, four workers on the job's free slots."""

    def test_a_pool_executor_runs_its_tasks_on_four_spawned_workers(self):
        script = cluster.write_user_file(POOL_SCRIPT)
        try:
            r = cluster.run_as_user(["salloc", "-N", "3", "-n", "5", "srun", "-n", "1",
                                     "--map-by", "slot", "/usr/bin/python3", script],
                                    timeout=180)
        finally:
            os.unlink(script)
        out = r.stdout + r.stderr
        self.assertEqual(r.returncode, 0, out)
        self.assertIn("squares %d" % sum(x * x for x in range(32)), r.stdout, out)
        self.assertIn("workers 4", r.stdout, out)
        self.assertNotIn("forcing job termination", r.stderr)


if __name__ == "__main__":
    cluster.require_root()
    unittest.main(verbosity=2)
