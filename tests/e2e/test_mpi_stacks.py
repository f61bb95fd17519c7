"""Other MPI stacks through stepmap: mpi4py (Python on Debian's Open MPI)
runs on stepmap's PMIx server like a C program; Open MPI 5 (its PMIx 5
client against stepmap's PMIx 4.2 server) too, where it is built
(STEPMAP_OMPI5_PREFIX, contrib/openmpi/build-openmpi5.sh); a program linked
with Debian's MPICH, which speaks PMI only, is refused with a message that
names the library and the way to run it, before anything is allocated."""

import os
import re
import subprocess
import tempfile
import time
import unittest

import cluster
from cluster import srun

MPICH_HELLO = cluster.program("STEPMAP_MPICH_HELLO")
PYTHON = "/usr/bin/python3"  # Debian's, with python3-mpi4py

MPI4PY_SCRIPT = """\
import os
from mpi4py import MPI
comm = MPI.COMM_WORLD
total = comm.allreduce(comm.rank)
print("rank %d size %d node %s nspace %s sum %d lib %s" % (
    comm.rank, comm.size, os.environ.get("SLURMD_NODENAME"),
    os.environ.get("PMIX_NAMESPACE"), total, MPI.Get_library_version().split(",")[0]),
    flush=True)
"""


squeue_jobs = cluster.slurm_jobs


class MpiStacksTest(cluster.StepTestCase):
    def test_mpi4py_ranks_get_their_placement_from_stepmap(self):
        if not os.path.exists(PYTHON) or subprocess.run(
                [PYTHON, "-c", "import mpi4py"], capture_output=True).returncode != 0:
            self.skipTest("python3-mpi4py is not installed")
        with tempfile.NamedTemporaryFile("w", suffix=".py", dir=cluster.shared_dir("files"),
                                         delete=False) as f:
            f.write(MPI4PY_SCRIPT)
        os.chmod(f.name, 0o644)
        try:
            r = srun("-n", "4", "--map-by", "node", PYTHON, f.name, timeout=180)
        finally:
            os.unlink(f.name)
        self.assertEqual(r.returncode, 0, r.stderr)
        lines = re.findall(r"^rank (\d+) size (\d+) node (\S+) nspace (\S+) sum (\d+) lib (.*)$",
                           r.stdout, re.M)
        self.assertEqual(sorted(int(l[0]) for l in lines), [0, 1, 2, 3], r.stdout + r.stderr)
        for rank, size, node, nspace, total, lib in lines:
            self.assertEqual(node, f"n{int(rank) + 1}", "--map-by node puts rank r on n(r+1)")
            self.assertEqual((int(size), int(total)), (4, 6))
            self.assertTrue(nspace.startswith("stepmap."), nspace)
            self.assertIn("Open MPI", lib)

    @unittest.skipUnless(MPICH_HELLO, "MPICH (libmpich-dev) was not found at build time")
    def test_mpich_program_is_refused_with_the_way_to_run_it(self):
        started = time.monotonic()
        r = srun("-n", "2", "--map-by", "node", MPICH_HELLO, timeout=60)
        self.assertLess(time.monotonic() - started, 30, "refused at once, not after a hang")
        self.assertRefused(r, "is linked with MPICH (libmpich.so", "PMI-1/PMI-2",
                           "srun --mpi=pmi2")
        self.assertNotIn("size 1", r.stdout, "no rank started as a singleton")
        self.assertTrue(cluster.wait_for(lambda: not squeue_jobs(), 10),
                        f"a job was left: {squeue_jobs()}")

    @unittest.skipUnless(MPICH_HELLO, "MPICH (libmpich-dev) was not found at build time")
    def test_mpich_program_runs_as_the_message_says(self):
        # The advice holds: without stepmap's options, Slurm's PMI-2 serves it.
        r = srun("--mpi=pmi2", "-N", "2", "-n", "2", MPICH_HELLO, timeout=120)
        self.assertEqual(r.returncode, 0, r.stderr)
        sizes = re.findall(r"^rank \d+ size (\d+)", r.stdout, re.M)
        self.assertEqual(sizes, ["2", "2"], r.stdout + r.stderr)


@unittest.skipUnless(cluster.have_ompi5(), "Open MPI 5 is not built (STEPMAP_OMPI5_PREFIX; "
                     "contrib/openmpi/build-openmpi5.sh builds it)")
class OpenMpi5Test(cluster.StepTestCase):
    """The MPI hello built with Open MPI 5's mpicc: a PMIx 5 client."""

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.dir, cls.hello = cluster.build_with_ompi5("mpi_hello.c", "stepmap-ompi5-")

    @classmethod
    def tearDownClass(cls):
        subprocess.run(["rm", "-rf", cls.dir])

    def test_linked_with_open_mpi_5(self):
        libs = subprocess.run(["ldd", self.hello], capture_output=True, text=True).stdout
        self.assertIn(os.path.join(cluster.OMPI5, "lib/libmpi.so"), libs)
        self.assertIn(os.path.join(cluster.OMPI5, "lib/libpmix.so"), libs)

    def test_ranks_placed_and_served_by_stepmap(self):
        r = srun("-n", "4", "--map-by", "node", self.hello, timeout=180)
        self.assertRanksOn(r, ["n1", "n2", "n3", "n4"])

    def test_async_modex(self):
        r = srun("-v", "-N", "2", "-n", "4", "--map-by", "node", "--modex=async", self.hello,
                 timeout=180)
        self.assertRanksLaidOut(r, "ABAB")
        self.assertRegex(r.stderr, r"exchange .*: 0 data fences")

    def test_abort_ends_the_step_with_its_status(self):
        r = srun("-n", "4", "--map-by", "node", self.hello, "abort", "2", "7", timeout=120)
        self.assertEqual(r.returncode, 7, r.stderr)
        self.assertIn("rank 2", r.stderr)
        # Open MPI 5 sends its help messages through PMIx_Log; the server
        # lets the rank print this one itself rather than drop it.
        self.assertRegex(r.stdout + r.stderr, r"MPI_ABORT was invoked on rank 2 in communicator "
                         r"MPI_COMM_WORLD(.|\n)*Errorcode: 7")


if __name__ == "__main__":
    cluster.require_root()
    unittest.main(verbosity=2)
