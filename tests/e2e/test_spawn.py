"""MPI_Comm_spawn under srun (issue 25): the spawning rank's server takes
the request to srun, which starts the children as a new step of the job
inside its allocation; parents and children connect, merge, compute and
disconnect, on Debian's Open MPI 4.1 and on Open MPI 5 where it is built.
Slurm's own mpi/pmix answers a spawn "not supported"."""

import os
import re
import unittest

import cluster
from cluster import srun

MPI_SPAWN = os.environ.get("STEPMAP_MPI_SPAWN", "")


def parents_ok(stdout, n_parents, n_children):
    total = n_parents + n_children
    want = total * (total - 1) // 2
    return all(f"parent {r} spawn ok sum {want} size {total}" in stdout
               for r in range(n_parents))


class SpawnCases:
    """The cases, run with self.program."""

    def spawn(self, *args, nodes=3, n=1, timeout=180):
        return srun("-N", str(nodes), "-n", str(n), "--map-by", "node", self.program, "parent",
                    *args, timeout=timeout)

    def test_spawned_children_start_connect_and_compute_with_their_parent(self):
        r = self.spawn("2")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertTrue(parents_ok(r.stdout, 1, 2), r.stdout + r.stderr)
        children = re.findall(r"child (\d) of 2 parent-size 1 sum 3 host (\S+)", r.stdout)
        self.assertEqual(sorted(c for c, _ in children), ["0", "1"], r.stdout + r.stderr)


class OpenMpi4Test(SpawnCases, cluster.StepTestCase):
    """mpi_spawn built with Debian's Open MPI 4.1."""
    program = MPI_SPAWN


if __name__ == "__main__":
    unittest.main(verbosity=2)
