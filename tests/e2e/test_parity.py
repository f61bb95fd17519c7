"""What a client of Slurm's own mpi/pmix reads, a client of stepmap's
server reads too, for the same layout (issue 26, parity for a site that
switches over): job data compared key by key, each step on the real cluster
once through `srun --mpi=pmix` and once through stepmap."""

import os
import unittest

import cluster
from cluster import srun

PMIX_JOB_KEYS = cluster.program("STEPMAP_PMIX_JOB_KEYS")


def job_keys(stdout):
    """{key: value or '!STATUS'} from pmix_job_keys' lines."""
    out = {}
    for line in stdout.splitlines():
        for sep in ("=", "!"):
            if sep in line:
                key, value = line.split(sep, 1)
                out[key] = value if sep == "=" else "!" + value
                break
    return out


class ParityTest(cluster.StepTestCase):
    KEYS = ("pmix.anlmap", "pmix.job.size", "pmix.num.nodes")

    def compare(self, slurm_layout, stepmap_layout):
        theirs = srun("--mpi=pmix", *slurm_layout, PMIX_JOB_KEYS, *self.KEYS)
        ours = srun(*stepmap_layout, PMIX_JOB_KEYS, *self.KEYS)
        for r in (theirs, ours):
            self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        theirs, ours = job_keys(theirs.stdout), job_keys(ours.stdout)
        self.assertEqual(set(theirs), set(self.KEYS), theirs)
        for key in self.KEYS:
            self.assertFalse(theirs[key].startswith("!"), f"mpi/pmix has no {key}: {theirs}")
            self.assertEqual(ours[key], theirs[key], key)

    def test_a_block_layout_maps_as_under_mpi_pmix(self):
        self.compare(["-N", "2", "-n", "4", "-m", "block"],
                     ["-N", "2", "-n", "4", "--map-by", "slot"])

    def test_a_cyclic_layout_maps_as_under_mpi_pmix(self):
        self.compare(["-N", "4", "-n", "8", "-m", "cyclic"],
                     ["-N", "4", "-n", "8", "--map-by", "node"])

    def test_an_uneven_layout_maps_as_under_mpi_pmix(self):
        self.compare(["-N", "2", "-n", "3", "-m", "block"],
                     ["-N", "2", "-n", "3", "--map-by", "slot"])


class OversubscribedNodeTest(cluster.StepTestCase):
    """A node with more ranks than CPUs says so (PMIX_NODE_OVERSUBSCRIBED),
    as mpirun's PRRTE does, so that Open MPI yields when idle."""

    def node_says(self, *layout):
        r = srun(*layout, PMIX_JOB_KEYS, "pmix.ndosub")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        return job_keys(r.stdout)["pmix.ndosub"]

    def test_only_an_oversubscribed_node_says_so(self):
        # Two CPUs a node: three ranks on rank 0's node, then two.
        self.assertEqual(self.node_says("-N", "1", "-n", "3", "--map-by", "slot:OVERSUBSCRIBE"),
                         "true")
        self.assertEqual(self.node_says("-N", "1", "-n", "2", "--map-by", "slot"), "!NOT-FOUND")


if __name__ == "__main__":
    cluster.require_root()
    unittest.main(verbosity=2)
