"""The spine, end to end on the real 4-node cluster: srun placement options
-> launch plan -> per-node stepmap PMIx servers -> Open MPI."""

import os
import re
import shlex
import tempfile
import time
import unittest

import cluster
from cluster import MPI_HELLO, hello_ranks, run_as_user, srun, write_user_file


class SpineTest(cluster.StepTestCase):
    def test_map_by_node_round_robin(self):
        r = srun("-n", "6", "--map-by", "node", MPI_HELLO)
        self.assertRanksOn(r, ["n1", "n2", "n3", "n4", "n1", "n2"])

    def test_map_by_node_inside_salloc(self):
        r = run_as_user(["salloc", "-N", "4", "-n", "8", "srun", "--map-by", "node", "-n",
                         "6", MPI_HELLO])
        self.assertRanksOn(r, ["n1", "n2", "n3", "n4", "n1", "n2"])

    def served(self, result):
        nspace = next(iter(hello_ranks(result.stdout).values()))[2]
        totals = {"fences": 0, "asked": 0}
        logs = cluster.server_logs(nspace)
        self.assertEqual(len(logs), len({n for n, *_ in hello_ranks(result.stdout).values()}))
        for text in logs.values():
            # Each server ran as the job's user, inside the step's cpuset
            # (it starts before Slurm makes it, in the node's root one).
            m = re.search(r"ran as uid (\d+) .*cgroup \d+:cpuset:([^,\s]+)", text)
            self.assertIsNotNone(m, text)
            self.assertNotEqual(int(m.group(1)), 0)
            self.assertRegex(m.group(2), r"/job_\d+/step_0$")
            m = re.search(r"served (\d+) fences, asked (\d+) and answered (\d+)", text)
            self.assertIsNotNone(m, text)
            totals["fences"] += int(m.group(1))
            totals["asked"] += int(m.group(2))
        return totals

    def test_collecting_fence_across_nodes(self):
        # Open MPI's default: modex data exchanged in a fence in MPI_Init.
        r = srun("-n", "6", "--map-by", "node", MPI_HELLO)
        self.assertRanksOn(r, ["n1", "n2", "n3", "n4", "n1", "n2"])
        served = self.served(r)
        self.assertGreater(served["fences"], 0)
        self.assertEqual(served["asked"], 0)

    def test_verbose_srun_shows_where_the_start_went(self):
        # srun -v: the step's critical path, srun's part and every node
        # server's (start, rendezvous, each fence, teardown).
        r = srun("-v", "-n", "6", "--map-by", "node", MPI_HELLO)
        self.assertRanksOn(r, ["n1", "n2", "n3", "n4", "n1", "n2"])
        self.assertIn("4 of 4 node servers reported", r.stderr)
        self.assertRegex(r.stderr, r"stepmap:   srun: planned in [0-9.]+ \(Slurm granted the job "
                         r"after [0-9.]+\), step created \+[0-9.]+, rendezvous open \+[0-9.]+")
        self.assertRegex(r.stderr, r"node server start: slurmstepd starts it \+[0-9.]+ \(slowest "
                         r"n\d \+[0-9.]+\); to main\(\) [0-9.]+ .*topology [0-9.]+ .*ready \+")
        # How long slurmstepd held the forked tasks for each node's server.
        self.assertRegex(r.stderr, r"stepmap:   tasks: forked \+[0-9.]+ \(slowest n\d \+[0-9.]+\), "
                         r"held before exec for the server [0-9.]+ \(slowest n\d [0-9.]+\)")
        # Open MPI 4.1: the modex, the end of MPI_Init, MPI_Finalize.
        self.assertRegex(r.stderr, r"fence 3: last node in \+[0-9.]+ \(n\d\), then done in")
        self.assertIn("teardown: from the last fence to the server's stop", r.stderr)
        # The step's exchange: Open MPI 4.1's default modex, one collecting
        # fence, two barriers, no direct modex.
        self.assertRegex(r.stderr, r"stepmap:   exchange \(4 of 4 node servers reported; [^)]*\): "
                         r"1 data fence \([1-9][0-9]* bytes\), 2 barriers, 0 direct modex "
                         r"\(0 local, 0 remote\), 0 answered for other nodes; network: ")

    def test_direct_modex_without_fence_data(self):
        # Async modex: no data in fences; peers' data fetched on demand from
        # the node that owns the rank.
        r = srun("-n", "6", "--map-by", "node", MPI_HELLO,
                 extra_env={"OMPI_MCA_pmix_base_async_modex": "1",
                            "OMPI_MCA_pmix_base_collect_data": "0"})
        self.assertRanksOn(r, ["n1", "n2", "n3", "n4", "n1", "n2"])
        self.assertGreater(self.served(r)["asked"], 0)
        # Each server counted no data fence and the two barriers.
        nspace = next(iter(hello_ranks(r.stdout).values()))[2]
        for text in cluster.server_logs(nspace).values():
            self.assertIn("exchange: 0 data fences (0 bytes), 2 barriers, ", text)

    def test_default_np_is_sum_of_slots(self):
        r = run_as_user(["salloc", "-N", "4", "-n", "8", "srun", "--map-by", "slot", MPI_HELLO])
        self.assertRanksOn(r, ["n1", "n1", "n2", "n2", "n3", "n3", "n4", "n4"])

    def test_host_filter_before_and_after_n(self):
        for args in (["--host", "n2:2,n3", "-n", "3"], ["-n", "3", "--host", "n2:2,n3"]):
            with self.subTest(args=args):
                r = srun(*args, MPI_HELLO)
                self.assertRanksOn(r, ["n2", "n2", "n3"])

    def test_host_names_count_slots_as_mpirun(self):
        # A bare name is one slot (mpirun inside an allocation): -n defaults
        # to the names' count, in --host's order.
        r = srun("--host", "n3,n2,n3", MPI_HELLO)
        self.assertRanksOn(r, ["n3", "n3", "n2"])
        r = srun("--host", "n2,n3", "-n", "3", MPI_HELLO)
        self.assertRefused(r, "There are not enough slots available")

    def test_hostfile_slots_filter(self):
        path = write_user_file("# two nodes\nn3 slots=1\n\nn2 slots=2\n")
        try:
            r = srun("--hostfile", path, "-n", "3", MPI_HELLO)
            self.assertRanksOn(r, ["n3", "n2", "n2"])
        finally:
            os.unlink(path)

    def test_exclude_n1(self):
        r = srun("--host", "!^n1", "-n", "6", MPI_HELLO)
        self.assertRanksOn(r, ["n2", "n2", "n3", "n3", "n4", "n4"])

    def test_overbook_spreads_evenly(self):
        r = run_as_user(["salloc", "-N", "4", "-n", "8", "srun", "--overbook", "-n", "10",
                         MPI_HELLO])
        self.assertRanksOn(r, ["n1"] * 4 + ["n2"] * 2 + ["n3"] * 2 + ["n4"] * 2)

    def test_every_fence_fan_out_a_site_sets_gives_the_same_results(self):
        # fence_fanout=1: the four servers in a chain, three of them taking
        # a child; 16: the first takes the three others; 0: every fence
        # through srun's hub, nobody takes children.
        for fanout, parents in (("1", 3), ("0", 0), ("16", 1)):
            with cluster.plugstack(cluster.with_plugin_arguments(f"fence_fanout={fanout}")):
                r = srun("-v", "-n", "8", "--map-by", "node", MPI_HELLO)
            self.assertRanksOn(r, ["n1", "n2", "n3", "n4"] * 2)
            self.assertRegex(r.stderr, r"fence 1: last node in", f"fence_fanout={fanout}")
            logs = cluster.server_logs(hello_ranks(r.stdout)[0][2])
            self.assertEqual(len(logs), 4, logs)
            taking = [node for node, text in logs.items()
                      if "taking its fence tree children" in text]
            self.assertEqual(len(taking), parents, f"fence_fanout={fanout}: {taking}")
            # Below the tree's second level, servers join srun through their
            # parent (fan-out 1: n3 through n2, n4 through n3); srun takes
            # the others itself.
            through = sorted(node for node, text in logs.items()
                             if "joined srun's rendezvous through its tree parent" in text)
            self.assertEqual(through, ["n3", "n4"] if fanout == "1" else [],
                             f"fence_fanout={fanout}")

    def test_a_fence_past_the_sites_deadline_ends_the_step_naming_the_node_it_waits_for(self):
        # Rank 5 (on n2) reaches MPI_Init 8 s late; the others wait in its
        # exchange, which fence_timeout=2 gives 2 s.
        with cluster.plugstack(cluster.with_plugin_arguments("fence_timeout=2")):
            started = time.monotonic()
            r = srun("-n", "8", "--map-by", "node", cluster.MPI_EXCHANGE, "ring", "late", "5",
                     "8000", timeout=60)
            took = time.monotonic() - started
        self.assertNotEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("a fence of 4 nodes did not complete in 2 s (fence_timeout=): n2 has not "
                      "entered it", r.stderr)
        self.assertNotIn("ring ok", r.stdout)
        self.assertLess(took, 8, "the step waited for the late rank")

    def test_the_sites_task_variables_reach_the_tasks_of_served_steps_only(self):
        site = "task_env=STEPMAP_E2E_SITE=from-site;PMIX_RANK=site"
        with cluster.plugstack(cluster.with_plugin_arguments(site)):
            served = srun("-n", "2", "--map-by", "node", "/usr/bin/env")
            plain = srun("-n", "1", "/usr/bin/env")
        self.assertEqual(served.returncode, 0, served.stderr)
        self.assertEqual(served.stdout.count("STEPMAP_E2E_SITE=from-site\n"), 2, served.stdout)
        # PMIx's own variables win over the site's.
        self.assertIn("PMIX_RANK=0\n", served.stdout)
        self.assertIn("PMIX_RANK=1\n", served.stdout)
        self.assertNotIn("PMIX_RANK=site", served.stdout)
        self.assertEqual(plain.returncode, 0, plain.stderr)
        self.assertNotIn("STEPMAP_E2E_SITE", plain.stdout)

    def test_the_demo_runs_what_it_says(self):
        # contrib/demo.sh is a newcomer's first command: each of its sruns
        # runs its MPI program, except one the line before announces as
        # refused (a change of --host's counting once made its second srun
        # fail without anyone noticing).
        demo = open(os.path.join(cluster.SOURCE_ROOT, "contrib", "demo.sh")).read()
        lines = demo.splitlines()
        runs = [(i, shlex.split(line)[1:]) for i, line in enumerate(lines)
                if line.startswith("run ")]
        self.assertGreaterEqual(len(runs), 3, demo)
        for i, args in runs:
            args = [MPI_HELLO if a == "$hello" else a for a in args]
            r = srun(*args)
            if "refused" in lines[i - 1]:
                self.assertNotEqual(r.returncode, 0, args)
                self.assertEqual(hello_ranks(r.stdout), {}, args)
                self.assertIn("stepmap:", r.stderr, args)
            else:
                self.assertEqual(r.returncode, 0, f"{args}: {r.stdout}{r.stderr}")
                self.assertTrue(hello_ranks(r.stdout), f"{args}: {r.stdout}{r.stderr}")

    def test_host_outside_allocation_is_refused(self):
        # Inside a job: mpirun's words. Without one, Slurm is asked for n9.
        r = run_as_user(["salloc", "-N", "2", "srun", "--host", "n9", "-n", "2", MPI_HELLO])
        self.assertRefused(r, "n9", "not included in the current allocation")
        r = srun("--host", "n9", "-n", "2", MPI_HELLO)
        self.assertRefused(r, "Slurm refused the job allocation", "Invalid node name",
                           "nodes named: n9")

    def test_malformed_hostfile_is_refused(self):
        path = write_user_file("n1 slots=two\n")
        try:
            r = srun("--hostfile", path, MPI_HELLO)
            self.assertRefused(r, path, "line 1")
        finally:
            os.unlink(path)

    def test_missing_hostfile_is_refused(self):
        r = srun("--hostfile", "/nonexistent/hosts", MPI_HELLO)
        self.assertRefused(r, "/nonexistent/hosts")

    def test_unknown_map_by_is_refused(self):
        r = srun("--map-by", "bogus", "-n", "2", MPI_HELLO)
        self.assertRefused(r, "bogus")

    def test_conflicting_mpi_is_refused(self):
        r = srun("--mpi=pmix", "--map-by", "node", "-n", "2", MPI_HELLO)
        self.assertRefused(r, "--mpi=pmix")

    def test_abort_ends_step_with_status(self):
        start = time.time()
        r = srun("-n", "6", "--map-by", "node", MPI_HELLO, "abort", "3", "7", timeout=60)
        elapsed = time.time() - start
        self.assertEqual(r.returncode, 7, r.stderr)
        self.assertLess(elapsed, 30, "the abort did not end the step promptly")
        self.assertIn("rank 3", r.stderr)

    def test_rank_dying_without_finalize_ends_step(self):
        start = time.time()
        r = srun("-n", "4", "--map-by", "node", MPI_HELLO, "die", "2", "3", timeout=60)
        self.assertNotEqual(r.returncode, 0)
        self.assertLess(time.time() - start, 30, "the others were left waiting")

    def test_sbatch_script_options_reach_srun(self):
        r, text = cluster.run_sbatch("#!/bin/bash\n#SBATCH -N 4 -n 8\n#SBATCH --map-by node\n"
                                     f"srun -n 6 {MPI_HELLO}\n")
        self.assertEqual(r.returncode, 0, r.stderr)
        ranks = hello_ranks(text)
        self.assertEqual([ranks[i][0] for i in sorted(ranks)],
                         ["n1", "n2", "n3", "n4", "n1", "n2"], text)

    def test_multi_prog_lines_are_application_contexts(self):
        conf = write_user_file(f"# two programs\n0-1 {MPI_HELLO}\n2-4 {MPI_HELLO}\n")
        try:
            r = run_as_user(["salloc", "-N", "4", "-n", "8", "srun", "-n", "5", "--map-by",
                             "node", "--multi-prog", conf])
            # As mpirun maps "a : b": each application context from the
            # first node on (ranks 0-1 app 0, ranks 2-4 app 1).
            self.assertRanksOn(r, ["n1", "n2", "n1", "n2", "n3"])
            self.assertEqual(cluster.hello_apps(r.stdout), {0: 0, 1: 0, 2: 1, 3: 1, 4: 1})
        finally:
            os.unlink(conf)

    def test_multi_prog_out_of_order_is_refused(self):
        conf = write_user_file(f"2-3 {MPI_HELLO}\n0-1 {MPI_HELLO}\n")
        try:
            r = srun("-n", "4", "--map-by", "node", "--multi-prog", conf)
            self.assertRefused(r, conf, "line 1", "consecutive ranks")
        finally:
            os.unlink(conf)

    def test_endless_or_hostile_files_are_refused_at_once(self):
        # /dev/zero would never end; a FIFO without a writer hung srun in
        # open(): it is given 5 s to be written, then refused.
        fifo_dir = tempfile.mkdtemp(prefix="stepmap-test-", dir="/tmp")
        os.chmod(fifo_dir, 0o755)  # the test user runs srun
        fifo = os.path.join(fifo_dir, "hosts")
        os.mkfifo(fifo, 0o644)
        try:
            for args, said in ((["--hostfile", "/dev/zero"],
                                "it is a character device, not a regular file"),
                               (["--map-by", "seq:FILE=/dev/urandom"],
                                "it is a character device, not a regular file"),
                               (["--hostfile", fifo],
                                "it is a FIFO and nothing wrote to it within 5 s")):
                with self.subTest(args=args):
                    r = srun(*args, "-n", "1", MPI_HELLO, timeout=30)
                    self.assertRefused(r, said)
        finally:
            os.unlink(fifo)
            os.rmdir(fifo_dir)
        # Control characters from a file are shown escaped, never raw.
        path = write_user_file("n1 slots=2\nn\x1b[31mX\x00y slots=1\n")
        try:
            r = srun("--hostfile", path, "-n", "1", MPI_HELLO)
            self.assertRefused(r, "\\x1b[31mX\\x00y")
            self.assertNotIn("\x1b", r.stderr)
        finally:
            os.unlink(path)

    def test_without_options_srun_is_untouched(self):
        r = srun("-n", "2", "-N", "2", "env")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertNotIn("SLURM_STEPMAP_PLAN", r.stdout)
        self.assertNotIn("SLURM_STEPMAP_HUB", r.stdout)
        self.assertNotIn("SLURM_DISTRIBUTION=arbitrary", r.stdout)
        self.assertNotIn("PMIX_NAMESPACE=stepmap", r.stdout)



class HelpTest(unittest.TestCase):
    def test_srun_help_lists_every_option_with_one_line_of_help(self):
        """srun --help (on an 80-column terminal, as Slurm assumes without
        COLUMNS) shows each of stepmap's options with its help on one line."""
        with open(os.path.join(cluster.SOURCE_ROOT, "spank_plugin/option_table.hpp")) as f:
            table = f.read()
        names = re.findall(r'^\s*\{"([a-z-]+)",', table, re.M)
        self.assertGreaterEqual(len(names), 11, "the option table was not read")
        r = run_as_user(["env", "-u", "COLUMNS", "srun", "--help"])
        self.assertEqual(r.returncode, 0, r.stderr)
        lines = r.stdout.splitlines()
        plugins = lines[next(i for i, l in enumerate(lines) if "Options provided by plugins" in l):]
        for name in names:
            at = [i for i, l in enumerate(plugins) if re.match(rf"^\s+--{name}(=|\s|$)", l)]
            self.assertEqual(len(at), 1, f"--{name} in srun --help:\n" + "\n".join(plugins))
            i = at[0]
            # Slurm puts a long --name=arg on its own line, the help below it;
            # a wrapped help continues on lines indented by 30 columns.
            first = i if len(plugins[i].split()) > 1 else i + 1
            after = plugins[first + 1] if first + 1 < len(plugins) else ""
            self.assertFalse(after.startswith(" " * 30) and after.strip(),
                             f"--{name}'s help takes more than one line:\n" +
                             "\n".join(plugins[i:first + 2]))

if __name__ == "__main__":
    cluster.require_root()
    unittest.main(verbosity=2)
