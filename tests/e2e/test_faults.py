"""Faults during a step: whatever happens, the step ends (or goes on) as it
should and nothing of stepmap is left behind on any node."""

import glob
import os
import re
import signal
import subprocess
import unittest

import cluster
from cluster import leftovers, plugstack, wait_for


def user_processes(name):
    return cluster.pids_of(cluster.TEST_USER, name)


class FaultTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cluster.start_cluster()

    def tearDown(self):
        subprocess.run(["scancel", "-u", cluster.TEST_USER],
                       env=dict(os.environ, **cluster.start_cluster()))
        self.assertEqual(leftovers(wait=15), [], "a step left processes or files behind")
        # A killed step's job may still be completing: the next test's srun
        # would wait for its nodes and miss its own deadline.
        self.assertTrue(wait_for(lambda: not cluster.slurm_jobs(), 60),
                        f"jobs left in squeue: {cluster.slurm_jobs()}")

    def start_background_step(self, *args):
        env = dict(cluster.start_cluster())
        env.update(cluster.OMPI_ENV)
        cmd = ["runuser", "-u", cluster.TEST_USER, "--", "env"]
        cmd += [f"{k}={v}" for k, v in env.items()] + ["srun"] + list(args)
        cluster.wait_while_nodes_complete(env)
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True, cwd="/tmp")
        if not wait_for(lambda: len(user_processes("stepmap-stepd")) == 4, 30):
            servers = user_processes("stepmap-stepd")
            jobs = cluster.slurm_jobs()
            proc.kill()
            out, err = proc.communicate()
            self.fail(f"the step's four servers did not start (servers: {servers}, "
                      f"jobs: {jobs}, srun exit {proc.returncode}, stderr: {err!r})")
        # And joined srun's rendezvous (a server lost before that is caught
        # by the hub's deadline instead, 30 s later).
        self.assertTrue(wait_for(lambda: self.joined() == 4), "the servers did not join srun")
        return proc

    @staticmethod
    def joined():
        logs = glob.glob(os.path.join(cluster.LOG_DIR, "stepmap-stepd.*.log"))
        newest = max((os.path.basename(p).split(".")[1] for p in logs), key=int, default=None)
        count = 0
        for path in logs:
            if os.path.basename(path).split(".")[1] == newest:
                with open(path) as f:
                    count += "joined srun's rendezvous" in f.read()
        return count

    def test_lost_server_ends_the_step(self):
        proc = self.start_background_step("-n", "4", "--map-by", "node", "sleep", "60")
        os.kill(user_processes("stepmap-stepd")[0], signal.SIGKILL)
        try:
            _out, err = proc.communicate(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            self.fail("the step went on without one of its servers")
        self.assertNotEqual(proc.returncode, 0)
        self.assertIn("lost the stepmap server", err)

    def test_server_that_cannot_start_fails_the_step_before_any_task(self):
        # The server starts while slurmstepd forks the tasks; one that fails
        # (here: reports an error, or dies without a word) stops them before
        # exec, and srun says why.
        failing = {
            "reports": "while [ $# -gt 0 ]; do [ \"$1\" = --ready-fd ] && fd=$2; shift; done\n"
                       "eval \"echo 'ERROR no PMIx for you (test)' >&$fd\"\n",
            "dies": "exit 3\n",
        }
        for how, body in failing.items():
            script = cluster.write_user_file("#!/bin/sh\n" + body)
            os.chmod(script, 0o755)
            try:
                with plugstack(lambda line: re.sub(r"server=\S+", "server=" + script, line)):
                    r = cluster.srun("-n", "4", "--map-by", "node", "echo", "task ran")
            finally:
                os.unlink(script)
            # srun's exit status is Slurm's: 22.05 exits 0 when every task
            # failed to launch, later releases 1.
            self.assertNotIn("task ran", r.stdout, how)
            self.assertIn("launch failed", r.stderr, how)
            self.assertRegex(r.stderr, r"stepmap: the PMIx server for step \d+\.0 on n\d did not "
                             r"start: ", how)
            if how == "reports":
                self.assertIn("no PMIx for you (test)", r.stderr)
            else:
                self.assertIn("the server exited before it was ready", r.stderr)

    def test_a_step_failing_before_its_tasks_leaves_no_server(self):
        # The server starts in slurm_spank_init, before the rest of the
        # step's set-up; another site plugin failing the step after that
        # (fail_user_init's user_init) must not leave it or its directory
        # behind on any node.
        failing = cluster.program("STEPMAP_FAIL_USER_INIT")
        logs_before = set(glob.glob(os.path.join(cluster.LOG_DIR, "stepmap-stepd.*.log")))
        with plugstack(lambda text: text.rstrip("\n") + "\nrequired " + failing + "\n"):
            r = cluster.srun("-n", "4", "--map-by", "node", "echo", "task ran",
                             extra_env={"SLURM_TEST_FAIL_USER_INIT": "1"})
        # srun's exit status is Slurm's (22.05: 0 when no task launched).
        self.assertNotIn("task ran", r.stdout)
        self.assertIn("launch failed", r.stderr)
        # The servers had started: each node's log says so.
        started = [p for p in set(glob.glob(os.path.join(cluster.LOG_DIR, "stepmap-stepd.*.log")))
                   - logs_before if "starting as uid" in open(p).read()]
        self.assertEqual(len(started), 4, r.stderr)
        self.assertEqual(leftovers(wait=10), [], "a failed step left its servers behind")

    def test_a_mistyped_site_setting_stops_every_step(self):
        # Also a step stepmap would not serve: the setting is named at once.
        with plugstack(lambda text: text.rstrip("\n") + " colour=blue\n"):
            r = cluster.srun("-n", "1", "echo", "task ran")
        self.assertNotEqual(r.returncode, 0)
        self.assertNotIn("task ran", r.stdout)
        self.assertIn("stepmap: unknown plugstack.conf argument 'colour' (value 'blue'); known: "
                      "server, config, tmpdir, log_dir, hub_address, client_auth, dmodex_timeout, "
                      "server_start_timeout", r.stderr)

    def test_a_stale_or_unsafe_topology_cache_is_never_served(self):
        # Root writes the node's topology when slurmd starts
        # (topology_cache=/run/stepmap); a step's server reads it instead of
        # discovering the machine, but only what is still this boot's and
        # root's alone. Anything else: the server says why and discovers.
        cache = "/run/stepmap/node-topology.xml"
        with open(cache) as f:
            good = f.read()

        def servers_say():
            r = cluster.srun("-n", "4", "--map-by", "node", "printenv", "PMIX_NAMESPACE")
            self.assertEqual(r.returncode, 0, r.stderr)
            logs = cluster.server_logs(r.stdout.split()[0])
            self.assertEqual(len(logs), 4, logs)
            return logs.values()

        try:
            for log in servers_say():
                self.assertIn("topology from the node's cache " + cache, log)
            stale = re.sub(r"(?m)^boot_id .*$", "boot_id 0-0-0", good)
            with open(cache, "w") as f:
                f.write(stale)
            for log in servers_say():
                self.assertIn(f"not using the node's topology cache {cache}: it was made in "
                              "another boot; discovering the machine", log)
            with open(cache, "w") as f:
                f.write(good)
            os.chmod(cache, 0o666)  # anyone could have written it
            for log in servers_say():
                self.assertIn(f"not using the node's topology cache {cache}: it is not a file "
                              "root alone may write; discovering the machine", log)
        finally:
            with open(cache, "w") as f:
                f.write(good)
            os.chmod(cache, 0o644)

    def test_killed_srun_leaves_nothing(self):
        proc = self.start_background_step("-n", "4", "--map-by", "node", "sleep", "60")
        srun_pids = [int(p) for p in subprocess.run(
            ["pgrep", "-u", cluster.TEST_USER, "-x", "srun"], stdout=subprocess.PIPE,
            text=True).stdout.split()]
        self.assertTrue(srun_pids)
        for pid in srun_pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass  # a short-lived srun process (the allocation's watcher) already gone
        proc.communicate(timeout=10)
        # Without their rendezvous the servers leave on their own.
        self.assertTrue(wait_for(lambda: not user_processes("stepmap-stepd")),
                        "servers outlived srun")


if __name__ == "__main__":
    cluster.require_root()
    unittest.main(verbosity=2)
