"""End-to-end: another user of the nodes floods the fence-tree and
direct-modex listeners of a running step's servers with idle connections,
from each node to its own server: on a shared node every user connects
from the node's own address, so only the peer's uid tells the attacker
from the step's servers.
It used to push the children out (the oldest unauthenticated connection
went first) until srun ended the step; now each such connection is refused
at once, and the server logs whom it refused."""

import glob
import os
import re
import subprocess
import tempfile
import time
import unittest

import cluster
from cluster import MPI_EXCHANGE, MPI_HELLO, StepTestCase, hello_ranks, require_root
from test_security import OTHER_USER, ensure_other_user, user_id

# More than a tree parent lets wait (4 per child + 8) at the default
# fan-out of 16, per listener, kept up: a closed one is opened again.
FLOOD_PER_PORT = 4 * 16 + 8 + 8

# The other user's flooder: reads ports on stdin, one a line, and keeps
# FLOOD_PER_PORT idle connections open to each until stdin closes; then
# prints how many it made and how many the servers closed.
FLOODER = r"""
import os, socket, sys, time
per_port = int(sys.argv[1])
until = time.time() + float(sys.argv[2])
host = sys.argv[3]
os.set_blocking(0, False)
conns, made, closed, pending = {}, 0, 0, b""

def gone(s):
    try:
        while True:
            if s.recv(4096) == b"":
                return True
    except BlockingIOError:
        return False
    except OSError:
        return True

while time.time() < until:
    try:
        chunk = os.read(0, 4096)
        if chunk == b"":
            break
        pending += chunk
    except BlockingIOError:
        pass
    while b"\n" in pending:
        line, pending = pending.split(b"\n", 1)
        conns.setdefault(int(line), [])
    for port, live in conns.items():
        kept = []
        for s in live:
            if gone(s):
                closed += 1
                s.close()
            else:
                kept.append(s)
        while len(kept) < per_port:
            try:
                s = socket.create_connection((host, port), timeout=1)
            except OSError:
                break
            s.setblocking(False)
            made += 1
            kept.append(s)
        conns[port] = kept
    time.sleep(0.002)
print(f"made {made} closed {closed}", flush=True)
"""

TREE_PORT = re.compile(r"taking its fence tree children on port (\d+)")
DMODEX_PORT = re.compile(r"taking other servers' direct-modex requests on port (\d+)")


LOG_NODE = re.compile(r"stepmap-stepd\.\d+\.\d+\.(\w+)\.[0-9a-f]{16}\.log$")


def listener_ports(paths, pattern):
    """{(node, port)} of the listeners (pattern: their log line) the servers
    logging at paths announced."""
    ports = set()
    for path in paths:
        m = LOG_NODE.search(path)
        try:
            with open(path) as f:
                ports.update((m.group(1) if m else "n1", int(p))
                             for p in pattern.findall(f.read()))
        except OSError:
            pass
    return ports


class FloodTest(StepTestCase):
    def flooded_step(self, command, pattern, ranks_done):
        """Runs command (srun ...) once alone and once while another user on
        every node floods the listeners whose log lines match pattern;
        returns the flooded step's stdout, stderr and {node: server log},
        having checked that both completed (ranks_done(stdout)) and in about
        the same time."""
        ensure_other_user()

        # Normal time: the same step without a flood.
        started = time.monotonic()
        baseline = cluster.srun(*command[1:], timeout=120)
        normal = time.monotonic() - started
        self.assertEqual(baseline.returncode, 0, baseline.stderr)
        self.assertTrue(ranks_done(baseline.stdout), baseline.stdout)

        # One flooder on each node, for that node's server (its loopback).
        flooders = {node: subprocess.Popen(
            cluster.on_node(node, ["runuser", "-u", OTHER_USER, "--", "python3", "-c", FLOODER,
                                   str(FLOOD_PER_PORT), "180", cluster.node_address(node)]),
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd="/tmp")
            for node in cluster.NODES}
        env = dict(cluster.start_cluster())
        env.update(cluster.OMPI_ENV)
        cluster.wait_while_nodes_complete(env)
        old_logs = set(glob.glob(os.path.join(cluster.LOG_DIR, "*.log")))
        cmd = ["runuser", "-u", cluster.TEST_USER, "--", "env"]
        cmd += [f"{k}={v}" for k, v in env.items()] + command
        with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
            started = time.monotonic()
            step = subprocess.Popen(cmd, stdout=out, stderr=err, text=True, cwd="/tmp")
            flooded = set()
            try:
                # Each listener is flooded as soon as its server says where
                # it is, until the step ends.
                while step.poll() is None and time.monotonic() - started < 120:
                    new_logs = set(glob.glob(os.path.join(cluster.LOG_DIR, "*.log"))) - old_logs
                    for node, port in listener_ports(new_logs, pattern) - flooded:
                        flooders[node].stdin.write(f"{port}\n")
                        flooders[node].stdin.flush()
                        flooded.add((node, port))
                    time.sleep(0.01)
                step.wait(timeout=60)
            finally:
                if step.poll() is None:
                    step.kill()
                    step.wait()
                report = ""
                for flooder in flooders.values():
                    flooder.stdin.close()
                    report += flooder.stdout.read()
                    flooder.wait(timeout=30)
            took = time.monotonic() - started
            out.seek(0)
            err.seek(0)
            stdout, stderr = out.read(), err.read()

        self.assertEqual(step.returncode, 0, stderr)
        self.assertTrue(ranks_done(stdout), stdout + stderr)
        self.assertTrue(flooded, "no server said where its listener is")
        # Normal time: no retries, no detour.
        self.assertLess(took, normal + 10, f"flooded {took:.1f} s, normal {normal:.1f} s")
        made = [int(n) for n in re.findall(r"made (\d+) closed \d+", report)]
        self.assertEqual(len(made), len(flooders), report)
        self.assertGreaterEqual(max(made), FLOOD_PER_PORT, report)
        logs = {}
        for path in set(glob.glob(os.path.join(cluster.LOG_DIR, "*.log"))) - old_logs:
            m = LOG_NODE.search(path)
            with open(path) as f:
                logs[m.group(1) if m else path] = f.read()
        return stdout, stderr, logs

    def refused_in(self, logs, listener):
        refused = re.compile(rf"{listener}: refused [\d.]+:\d+, a connection of "
                             rf"uid {user_id(OTHER_USER)} on this host \(not the step's user\)")
        self.assertTrue(any(refused.search(text) for text in logs.values()),
                        "\n".join(f"{node}: {text}" for node, text in logs.items()))

    def test_another_users_flood_of_the_tree_listeners_does_not_stop_the_step(self):
        command = ["srun", "-N", "4", "-n", "4", "--map-by", "node", "sh", "-c",
                   f"sleep 4; exec {MPI_HELLO}"]
        _, _, logs = self.flooded_step(command, TREE_PORT,
                                       lambda out: len(hello_ranks(out)) == 4)
        self.assertEqual(len(logs), 4, sorted(logs))
        self.refused_in(logs, "fence tree listener")
        # (A child may still log its parent's link lost at the end, when the
        # parent's server stops first: that is the step ending, not the flood.)
        for node, text in logs.items():
            self.assertNotIn("could not join the fence tree parent", text, node)
            self.assertNotIn("through srun's hub", text, node)

    def test_another_users_flood_of_the_direct_modex_listeners_does_not_stop_the_step(self):
        # --modex=async: every rank fetches the others' endpoints from their
        # servers, server to server, while the listeners are flooded.
        command = ["srun", "-v", "-N", "4", "-n", "8", "--map-by", "node", "--modex=async",
                   "sh", "-c", f"sleep 4; exec {MPI_EXCHANGE} alltoall"]
        _, stderr, logs = self.flooded_step(command, DMODEX_PORT,
                                            lambda out: out.count(" alltoall ok") == 8)
        self.assertIn("srun's rendezvous: 0 direct-modex request(s) routed through srun",
                      stderr)
        self.assertEqual(len(logs), 4, sorted(logs))
        self.refused_in(logs, "direct-modex listener")
        for node, text in logs.items():
            self.assertNotIn("direct-modex link to", text, node)


if __name__ == "__main__":
    require_root()
    unittest.main(verbosity=2)
