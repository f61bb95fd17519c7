"""Dynamic processes inside one srun (issue 25, first part): MPI's name
service (MPI_Publish_name, MPI_Lookup_name, MPI_Unpublish_name) served by
the step's hub, and MPI_Comm_accept meeting MPI_Comm_connect between two
halves of the step, on Debian's Open MPI 4.1 and on Open MPI 5 where it is
built (spawn and steps connecting: test_spawn). Slurm's own mpi/pmix
answers every one of these "not supported"."""

import os
import subprocess
import unittest

import cluster
from cluster import srun

MPI_NAMES = cluster.program("STEPMAP_MPI_NAMES")


class NamesCases:
    """The cases, run with self.program."""

    def run_step(self, *args, n=4):
        return srun("-n", str(n), "--map-by", "node", self.program, *args, timeout=180)

    def assertEveryRank(self, r, what, n=4):
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        for rank in range(n):
            self.assertIn(f"rank {rank} {what} ok", r.stdout, r.stdout + r.stderr)
        self.assertNotIn("FAILED", r.stdout)

    def test_a_published_name_is_found_on_every_node_and_gone_once_unpublished(self):
        self.assertEveryRank(self.run_step("names"), "names")

    def test_accept_meets_connect_between_two_halves_of_the_step(self):
        self.assertEveryRank(self.run_step("accept"), "accept")

    def test_pairs_on_the_same_nodes_connect_at_once_each_to_its_partner(self):
        # Ranks 0,2 on n1 and 1,3 on n2: the pairs (0,1) and (2,3) connect
        # over the same two nodes at the same time, in either order.
        r = srun("-N", "2", "-n", "4", "--map-by", "node", self.program, "pairs", timeout=180)
        self.assertEveryRank(r, "pairs")

    def two_sruns(self, runner):
        """A job script whose two sruns meet: a server step of two ranks on
        one node, a client step of one rank on another."""
        script = ("#!/bin/bash\n"
                  f"srun -N 1 -n 2 --map-by slot -w n1 {self.program} server svc-$SLURM_JOB_ID &\n"
                  f"srun -N 1 -n 1 --map-by slot -w n2 {self.program} client svc-$SLURM_JOB_ID\n"
                  "wait\n")
        return runner(script)

    def assertMet(self, out):
        for line in ("rank 0 server ok sum 3 size 3", "rank 1 server ok sum 3 size 3",
                     "rank 0 client ok sum 3 size 3"):
            self.assertIn(line, out)
        self.assertNotIn("FAILED", out)

    def test_two_sruns_of_a_job_meet_by_name_and_connect(self):
        def in_salloc(script):
            path = cluster.write_user_file(script)
            try:
                return cluster.run_as_user(["salloc", "-N", "2", "-n", "3", "bash", path],
                                           timeout=180)
            finally:
                os.unlink(path)
        r = self.two_sruns(in_salloc)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertMet(r.stdout)

    def test_two_background_sruns_of_a_batch_script_meet(self):
        r, out = self.two_sruns(lambda script: cluster.run_sbatch(
            script.replace("#!/bin/bash\n", "#!/bin/bash\n#SBATCH -N 2 -n 3\n"), timeout=180))
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr + out)
        self.assertMet(out)

    def test_accept_and_connect_with_several_ranks_a_node(self):
        r = srun("-N", "2", "-n", "4", "--map-by", "slot", self.program, "accept", timeout=180)
        self.assertEveryRank(r, "accept")


class OpenMpi4Test(NamesCases, cluster.StepTestCase):
    """mpi_names built with Debian's Open MPI 4.1."""
    program = MPI_NAMES


@unittest.skipUnless(cluster.have_ompi5(), "Open MPI 5 is not built (STEPMAP_OMPI5_PREFIX; "
                     "contrib/openmpi/build-openmpi5.sh builds it)")
class OpenMpi5Test(NamesCases, cluster.StepTestCase):
    """mpi_names built with Open MPI 5's mpicc (a PMIx 5 client)."""

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.dir, cls.program = cluster.build_with_ompi5("mpi_names.c", "stepmap-ompi5-names-")

    @classmethod
    def tearDownClass(cls):
        subprocess.run(["rm", "-rf", cls.dir])
        super().tearDownClass()


if __name__ == "__main__":
    cluster.require_root()
    unittest.main(verbosity=2)
