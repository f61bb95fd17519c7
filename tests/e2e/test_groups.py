"""PMIx groups and MPI-4 sessions (issue 26): Open MPI 5's sessions
programs under srun, and PMIx_Group_construct at the PMIx level with its
bad input and faults. What a server serves depends on the PMIx it hosts
(`stepmap-stepd --version`): with PMIx 5 the programs run; with Debian's
PMIx 4.2 Open MPI 5 is told the operation is unsupported, at once."""

import os
import re
import subprocess
import time
import unittest

import cluster


def server_serves_groups():
    r = subprocess.run([cluster.SERVER, "--version"], capture_output=True, text=True)
    return r.returncode == 0 and "PMIx groups (MPI-4 sessions): served" in r.stdout


NEEDS_OMPI5 = unittest.skipUnless(cluster.have_ompi5(), "Open MPI 5 is not built "
                                  "(STEPMAP_OMPI5_PREFIX; contrib/openmpi/build-openmpi5.sh)")


class VersionTest(unittest.TestCase):
    def test_the_server_says_which_pmix_it_hosts_and_whether_it_serves_groups(self):
        r = subprocess.run([cluster.SERVER, "--version"], capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertRegex(r.stdout, r"^stepmap-stepd \S+, PMIx \S.*; PMIx groups \(MPI-4 sessions\): "
                         r"(served|not served \(needs PMIx 5\))$")


@NEEDS_OMPI5
class SessionsTest(cluster.StepTestCase):
    """tests/programs/mpi_sessions.c, built with Open MPI 5."""

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.dir, cls.program = cluster.build_with_ompi5("mpi_sessions.c", "stepmap-sessions-")
        cls.served = server_serves_groups()

    @classmethod
    def tearDownClass(cls):
        subprocess.run(["rm", "-rf", cls.dir])
        super().tearDownClass()

    def run_sessions(self, nodes, tasks, *args):
        return cluster.run_as_user(["salloc", "-N", str(nodes), "-n", str(tasks), "srun",
                                    "--map-by", "node", self.program] + list(args), timeout=120)

    def test_a_sessions_program_makes_communicators_from_groups_on_four_nodes(self):
        if not self.served:
            self.skipTest("this server hosts PMIx 4 (see test_without_pmix5_...)")
        r = self.run_sessions(4, 6)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        world = re.findall(r"^world rank (\d+) of 6 on (n\d): sum 15$", r.stdout, re.M)
        self.assertEqual(sorted(int(w[0]) for w in world), list(range(6)), r.stdout)
        # --map-by node: rank r on node r % 4.
        for rank, node in world:
            self.assertEqual(node, "n%d" % (int(rank) % 4 + 1))
        # The even ranks' communicator spans three nodes.
        self.assertEqual(len(re.findall(r"^part even: rank \d of 3, sum 6$", r.stdout, re.M)), 3,
                         r.stdout)
        self.assertEqual(r.stdout.count("dup: sum 6\n"), 6, r.stdout)
        self.assertEqual(r.stdout.count("self: size 1\n"), 6, r.stdout)
        psets = re.search(r"^psets \d+: (.*)$", r.stdout, re.M)
        self.assertTrue(psets, r.stdout)
        self.assertIn("mpi://WORLD", psets.group(1).split(","))
        self.assertIn("mpi://SELF", psets.group(1).split(","))

    def test_a_group_of_two_ranks_on_two_nodes_leaves_the_others_out(self):
        if not self.served:
            self.skipTest("this server hosts PMIx 4")
        r = self.run_sessions(2, 4, "last2")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        parts = re.findall(r"^part last2: rank (\d) of 2, sum 5$", r.stdout, re.M)
        self.assertEqual(sorted(parts), ["0", "1"], r.stdout)

    def test_without_pmix5_open_mpi_is_told_groups_are_unsupported_at_once(self):
        if self.served:
            self.skipTest("this server hosts PMIx 5 and serves groups")
        started = time.time()
        r = self.run_sessions(2, 2)
        self.assertNotEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("PMIx server does not support PMIx Group operations", r.stdout + r.stderr)
        self.assertLess(time.time() - started, 60)


@NEEDS_OMPI5
class PmixGroupTest(cluster.StepTestCase):
    """tests/programs/pmix_group.c, a PMIx 5 client (Open MPI 5's PMIx)."""

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        if not server_serves_groups():
            raise unittest.SkipTest("this server hosts PMIx 4: no PMIx groups")
        cls.dir, cls.program = cluster.build_with_ompi5("pmix_group.c", "stepmap-pmix-group-",
                                                        ["-lpmix"])

    @classmethod
    def tearDownClass(cls):
        subprocess.run(["rm", "-rf", cls.dir])
        super().tearDownClass()

    def run_group(self, tasks, *args, more=()):
        return cluster.run_as_user(["salloc", "-N", "3", "-n", str(tasks), "srun", "--map-by",
                                    "node"] + list(more) + [self.program] + list(args),
                                   timeout=120)

    def test_members_on_three_nodes_share_a_context_id_and_each_others_group_info(self):
        r = self.run_group(6, "members", "1,2,3,5")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        ids = re.findall(r"^rank (\d): group of 4, context id (\d+)$", r.stdout, re.M)
        self.assertEqual(sorted(rank for rank, _ in ids), ["1", "2", "3", "5"], r.stdout)
        self.assertEqual(len({cid for _, cid in ids}), 1, "one context id for the group")
        self.assertNotEqual(ids[0][1], "0")
        # Each member reads the next member's PMIX_GROUP_INFO.
        for rank, other in (("1", "2"), ("2", "3"), ("3", "5"), ("5", "1")):
            self.assertIn("rank %s: member %s says %d\n" % (rank, other, int(other) * 7), r.stdout)
        self.assertEqual(sorted(re.findall(r"^rank (\d): not a member$", r.stdout, re.M)),
                         ["0", "4"])

    def test_a_group_naming_a_rank_the_step_does_not_have_fails_saying_so(self):
        started = time.time()
        r = self.run_group(3, "unknown")
        self.assertNotEqual(r.returncode, 0, r.stdout)
        self.assertEqual(len(re.findall(r"^rank \d: PMIx_Group_construct failed", r.stdout,
                                        re.M)), 3, r.stdout + r.stderr)
        self.assertLess(time.time() - started, 30)

    def test_a_construct_a_member_never_joins_fails_after_the_fence_timeout(self):
        started = time.time()
        with cluster.plugstack(cluster.with_plugin_arguments("fence_timeout=3")):
            r = self.run_group(3, "abandoned")
        self.assertNotEqual(r.returncode, 0, r.stdout)
        self.assertEqual(len(re.findall(r"^rank [01]: PMIx_Group_construct failed", r.stdout,
                                        re.M)), 2, r.stdout + r.stderr)
        # The waiting members fail after 3 s, not when the idle one ends.
        self.assertLess(time.time() - started, 28)

    def test_a_member_that_dies_during_a_construct_fails_it_at_once_under_ulfm(self):
        # With --with-ft=ulfm the step outlives the dead member: the others'
        # construct must fail when its node's processes are gone, not wait
        # for the fence timeout (300 s).
        started = time.time()
        r = self.run_group(3, "dies", more=["--with-ft=ulfm"])
        self.assertEqual(len(re.findall(r"^rank [01]: PMIx_Group_construct failed", r.stdout,
                                        re.M)), 2, r.stdout + r.stderr)
        self.assertLess(time.time() - started, 60)


if __name__ == "__main__":
    unittest.main(verbosity=2)
