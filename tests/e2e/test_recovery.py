"""Recovery from a failed rank (issue 26): srun --with-ft=ulfm, as mpirun's
--with-ft ulfm. A rank that dies does not end the step; every node server
tells its ranks (the PMIx events Open MPI's ULFM listens for), and a ULFM
program built with Open MPI 5 revokes, shrinks and finishes with the
survivors. Without the option the first failure ends the step."""

import re
import subprocess
import time
import unittest

import cluster
from test_site_policy import site_file


@unittest.skipUnless(cluster.have_ompi5(), "Open MPI 5 is not built (STEPMAP_OMPI5_PREFIX; "
                     "contrib/openmpi/build-openmpi5.sh)")
class UlfmTest(cluster.StepTestCase):
    """tests/programs/mpi_ulfm.c, built with Open MPI 5 (fault tolerance on)."""

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.dir, cls.program = cluster.build_with_ompi5("mpi_ulfm.c", "stepmap-ulfm-")

    @classmethod
    def tearDownClass(cls):
        subprocess.run(["rm", "-rf", cls.dir])
        super().tearDownClass()

    def run_ulfm(self, *options_and_args, timeout=120):
        return cluster.run_as_user(["salloc", "-N", "3", "-n", "6", "srun", "--map-by", "node"] +
                                   list(options_and_args), timeout=timeout)

    def assertSurvivorsFinished(self, r, victim):
        survivors = re.findall(r"^survivor (\d) of 5 \(was (\d)\): sum (\d+)$", r.stdout, re.M)
        self.assertEqual(sorted(int(was) for _, was, _ in survivors),
                         [x for x in range(6) if x != victim], r.stdout + r.stderr)
        self.assertEqual({int(total) for _, _, total in survivors}, {15 - victim})
        self.assertEqual(sorted(int(new) for new, _, _ in survivors), list(range(5)))

    def test_the_survivors_of_a_killed_rank_shrink_and_finish(self):
        started = time.time()
        r = self.run_ulfm("--with-ft=ulfm", self.program, "4", "kill")
        self.assertSurvivorsFinished(r, 4)
        # srun's status is the failed rank's, as Slurm reports a task killed
        # by a signal; the survivors exited 0.
        self.assertEqual(r.returncode, 128 + 9, r.stderr)
        self.assertRegex(r.stderr, r"n2: task 4: Killed")
        self.assertLess(time.time() - started, 60)
        self.assertTrue(cluster.wait_for(lambda: cluster.slurm_jobs() == []))

    def test_the_survivors_of_a_rank_that_exits_without_finalize_finish(self):
        r = self.run_ulfm("--with-ft=ulfm", self.program, "1", "exit")
        self.assertSurvivorsFinished(r, 1)
        self.assertEqual(r.returncode, 3, r.stderr)

    def test_a_site_default_turns_it_on_and_the_user_can_turn_it_off(self):
        with site_file("defaults:\n  with_ft: ulfm\n"):
            on = self.run_ulfm(self.program, "2", "kill")
            off = self.run_ulfm("--with-ft=none", self.program, "2", "kill")
        self.assertSurvivorsFinished(on, 2)
        self.assertNotIn("survivor", off.stdout)
        self.assertNotEqual(off.returncode, 0)

    def test_without_the_option_the_first_failure_ends_the_step(self):
        started = time.time()
        r = self.run_ulfm(self.program, "4", "kill")
        self.assertNotEqual(r.returncode, 0)
        self.assertNotIn("survivor", r.stdout)
        self.assertLess(time.time() - started, 60)


class FaultToleranceOptionTest(cluster.StepTestCase):
    def test_an_unknown_mode_is_refused_before_anything_starts(self):
        r = cluster.run_as_user(["srun", "-n", "2", "--with-ft=checkpoint", "true"], timeout=60)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("--with-ft=checkpoint is not a fault tolerance mode; use ulfm",
                      r.stderr)
        self.assertEqual(cluster.slurm_jobs(), [])

    def test_killing_the_step_on_a_bad_exit_contradicts_it(self):
        r = cluster.run_as_user(["srun", "-n", "2", "--with-ft=ulfm", "-K1", "true"], timeout=60)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("--with-ft=ulfm keeps the step going when a rank fails, -K1 ends it",
                      r.stderr)


if __name__ == "__main__":
    cluster.require_root()
    unittest.main(verbosity=2)
