"""End-to-end: what a user (or another user) can do to a stepmap step and to
the root side of the plugin. Each test is an attack that worked once; it
must change nothing now."""

import os
import re
import socket
import subprocess
import threading
import time
import unittest

import cluster
from cluster import (MPI_HELLO, StepTestCase, hello_ranks, require_root, run_as_user, srun)

OTHER_USER = "smother"
STEPMAP_VARIABLES = ("SLURM_STEPMAP_PLAN", "SLURM_STEPMAP_HUB", "SLURM_STEPMAP_SECRET")


def ensure_other_user():
    """A second unprivileged user on this machine (not the job's)."""
    if subprocess.run(["id", "-u", OTHER_USER], stdout=subprocess.DEVNULL,
                      stderr=subprocess.DEVNULL).returncode != 0:
        subprocess.run(["useradd", "-M", "-s", "/bin/sh", OTHER_USER], check=True)


def user_id(name):
    return int(subprocess.run(["id", "-u", name], stdout=subprocess.PIPE, text=True,
                              check=True).stdout)


PMIX_PROBE = cluster.program("STEPMAP_PMIX_PROBE")
FAKE_IDS = cluster.program("STEPMAP_FAKE_IDS")


def last_job_id():
    r = srun("-n", "1", "printenv", "SLURM_JOB_ID")
    return int(r.stdout.strip())


# Run as another user: opens PER_PORT idle connections to each HOST:PORT
# (in rounds, so that every port gets its first early), says how many it
# holds, and holds them until its standard input closes.
IDLE_CONNECTIONS = r"""
import resource, socket, sys
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
per_port = int(sys.argv[1])
targets = [(t.rsplit(":", 1)[0], int(t.rsplit(":", 1)[1])) for t in sys.argv[2:]]
held = []
for _ in range(per_port):
    for target in targets:
        try:
            held.append(socket.create_connection(target, timeout=2))
        except OSError:
            pass
print(len(held), flush=True)
sys.stdin.read()
"""


def server_listeners(user):
    """{(node, pid): ["HOST:PORT", ...]} of the listening TCP sockets of
    user's stepmap-stepd processes, as seen on each node (a wildcard
    address as loopback)."""
    uid = user_id(user)
    found = {}
    for node in cluster.NODES:
        out = subprocess.run(cluster.on_node(node, ["ss", "-ltnpH"]), stdout=subprocess.PIPE,
                             text=True).stdout
        for line in out.splitlines():
            m = re.search(r"\s(\S+):(\d+)\s+\S+\s+users:\(\(\"stepmap-stepd\",pid=(\d+)", line)
            if not m:
                continue
            host, port, pid = m.group(1), m.group(2), int(m.group(3))
            try:
                if os.stat(f"/proc/{pid}").st_uid != uid:
                    continue
            except OSError:
                continue
            host = {"0.0.0.0": "127.0.0.1", "*": "127.0.0.1", "[::]": "::1"}.get(host, host)
            found.setdefault((node, pid), []).append(f"{host.strip('[]')}:{port}")
        if not cluster.hosts_network():
            break  # one network: every node's sockets were in that one listing
    return found


def hold_idle_connections(per_port, targets, node="n1"):
    """Another user's process on `node` holding idle connections; returns it
    once they are open (close its stdin to end it) and how many it holds."""
    proc = subprocess.Popen(cluster.on_node(node, ["runuser", "-u", OTHER_USER, "--", "python3",
                                                   "-c", IDLE_CONNECTIONS, str(per_port)] +
                                            targets),
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    return proc, int(proc.stdout.readline() or 0)


class SecurityTest(StepTestCase):
    def test_tasks_do_not_get_the_plan_the_rendezvous_or_its_secret(self):
        r = srun("-n", "2", "--map-by", "node", "env")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("PMIX_NAMESPACE=stepmap.", r.stdout)
        for name in STEPMAP_VARIABLES:
            self.assertNotIn(name + "=", r.stdout)

    def test_inherited_stepmap_variables_do_not_make_a_step_served(self):
        # As in an srun run from inside a stepmap task: the outer step's
        # variables are in the environment, this srun has no stepmap option.
        outer = {"SLURM_STEPMAP_PLAN": "SM1;n[1-2];2*2;-*2;0;0-1", "SLURM_STEPMAP_HUB": "127.0.0.1:9",
                 "SLURM_STEPMAP_SECRET": "00" * 32}
        r = srun("-n", "2", "-N", "2", "env", extra_env=outer)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertNotIn("PMIX_NAMESPACE=stepmap", r.stdout)
        for name in STEPMAP_VARIABLES:
            self.assertNotIn(name + "=", r.stdout)

    def test_a_made_up_plan_is_refused_at_once_without_expanding_it(self):
        # Plans pushed past srun into a plain one-task step: 16M ranks in 23
        # bytes (~400 MB decoded), and 2^20 names of 900 characters in 1 KiB
        # (2 GB and 12 s). slurmstepd (root) must refuse them against
        # Slurm's own figures of the step before expanding anything.
        bombs = ["SM1;n1;1;-;0;0*16777216",
                 "SM1;" + "a" * 900 + "[0-1048575];1*1048576;-*1048576;0;0"]
        for bomb in bombs:
            with self.subTest(bomb=bomb[:40]):
                started = time.monotonic()
                r = srun("-n", "1", f"--export=ALL,SLURM_STEPMAP_PLAN={bomb}", "echo", "ran",
                         timeout=120)
                elapsed = time.monotonic() - started
                # (Slurm 22.05's srun exits 0 when a task fails to launch.)
                self.assertNotIn("ran", r.stdout)
                self.assertLess(elapsed, 10, "slurmstepd spent its time on the plan")
                self.assertRegex(r.stderr, r"stepmap: SLURM_STEPMAP_PLAN in the job environment is "
                                           r"damaged: invalid stepmap plan")

    def test_hub_ignores_junk_huge_frames_and_a_flood_of_connections(self):
        env = dict(cluster.start_cluster())
        env.update(cluster.OMPI_ENV)
        cmd = ["runuser", "-u", cluster.TEST_USER, "--", "env"]
        cmd += [f"{k}={v}" for k, v in env.items()]
        cmd += ["srun", "-v", "-n", "4", "--map-by", "node", "sh", "-c",
                f"sleep 3; exec {MPI_HELLO}"]
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                cwd="/tmp")
        address = None
        stderr_lines = []
        for line in proc.stderr:
            stderr_lines.append(line)
            m = re.search(r"stepmap: rendezvous of step \S+ at (\S+):(\d+)", line)
            if m:
                address = (m.group(1), int(m.group(2)))
                break
        self.assertIsNotNone(address, "".join(stderr_lines))
        drain = threading.Thread(target=lambda: stderr_lines.extend(proc.stderr))
        drain.start()
        # Junk, a 256 MiB frame announced before any authentication, and
        # 300 connections that never say anything.
        with socket.create_connection(address) as s:
            s.sendall(b"\x00\x00\x00\x30" + b"x" * 48)
        with socket.create_connection(address) as s:
            s.sendall(b"\x10\x00\x00\x00\x03" + b"y" * 65536)
        idle = []
        for _ in range(300):
            try:
                idle.append(socket.create_connection(address, timeout=2))
            except OSError:
                break
        out, _ = proc.communicate(timeout=120)
        drain.join()
        for s in idle:
            s.close()
        self.assertEqual(proc.returncode, 0, "".join(stderr_lines))
        self.assertEqual(len(hello_ranks(out)), 4, out + "".join(stderr_lines))

    def test_another_user_cannot_take_the_servers_directory_name(self):
        # The old name was stepmap.<uid>.<job>.<step>.<node>: another user
        # could make it first and stop the server from starting.
        ensure_other_user()
        uid = user_id(cluster.TEST_USER)
        nxt = last_job_id() + 1
        made = []
        for job in range(nxt, nxt + 3):
            for node in ("n1", "n2", "n3", "n4"):
                for name in (f"stepmap.{uid}.{job}.0.{node}", f"stepmap.{job}.0.{node}."):
                    path = os.path.join(cluster.SERVER_TMPDIR, name)
                    subprocess.run(cluster.on_node(node, ["runuser", "-u", OTHER_USER, "--",
                                                          "mkdir", "-m", "0777", path]),
                                   stderr=subprocess.DEVNULL)
                    made.append(cluster.node_path(node, path))
        try:
            r = srun("-n", "4", "--map-by", "node", MPI_HELLO)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertEqual(len(hello_ranks(r.stdout)), 4)
        finally:
            for path in made:
                if os.path.isdir(path):
                    os.rmdir(path)

    def test_another_user_cannot_join_the_steps_pmix_server(self):
        # PMIx 4.2 serves its clients on loopback TCP. Another user on the
        # node, knowing everything a rank's environment says (namespace,
        # rank, server URI) and claiming the job user's ids, tries to join
        # as rank 0 in every security mode; joined, it would abort the step.
        ensure_other_user()
        env_file = os.path.join(cluster.shared_dir("files"), "stepmap-probe-env")
        env = dict(cluster.start_cluster())
        cmd = ["runuser", "-u", cluster.TEST_USER, "--", "env"]
        cmd += [f"{k}={v}" for k, v in env.items()]
        cmd += ["srun", "-n", "1", "--map-by", "node", "sh", "-c",
                f"env | grep ^PMIX_ > {env_file}.tmp && mv {env_file}.tmp {env_file}; "
                "sleep 10; echo task-done"]
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                cwd="/tmp")
        try:
            deadline = time.time() + 30
            while not os.path.exists(env_file) and time.time() < deadline:
                time.sleep(0.1)
            with open(env_file) as f:
                rank_env = [line.strip() for line in f if line.strip()]
            self.assertTrue(any(v.startswith("PMIX_SERVER_URI") for v in rank_env), rank_env)
            ids = {"FAKE_UID": str(user_id(cluster.TEST_USER)),
                   "FAKE_GID": subprocess.run(["id", "-g", cluster.TEST_USER],
                                              stdout=subprocess.PIPE, text=True).stdout.strip()}
            for mode in ("native", "munge"):
                for preload in (True, False):
                    probe_env = rank_env + [f"PMIX_SECURITY_MODE={mode}"]
                    if preload:
                        probe_env += [f"LD_PRELOAD={FAKE_IDS}"] + [f"{k}={v}" for k, v in
                                                                     ids.items()]
                    r = subprocess.run(cluster.on_node("n1", [
                                        "runuser", "-u", OTHER_USER, "--", "env"] + probe_env +
                                       ["timeout", "20", PMIX_PROBE]),
                                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                       text=True, timeout=60)
                    self.assertNotIn("joined", r.stdout, f"mode {mode}, claimed ids: {preload}")
                    self.assertIn("refused", r.stdout, r.stdout)
            out, err = proc.communicate(timeout=60)
            self.assertEqual(proc.returncode, 0, err)
            self.assertIn("task-done", out)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
            if os.path.exists(env_file):
                os.unlink(env_file)

    def test_another_users_idle_connections_do_not_slow_a_step(self):
        # PMIx 4.2.2 reads a new connection's header on its one progress
        # thread and waits for it without a deadline: one silent connection
        # from any local user to a node server's PMIx port held every rank
        # of that node in MPI_Init (a 4 s step took 33 s under a 30 s hold).
        # Another user opens 1, then 200 more, idle connections to every
        # port the step's node servers listen on, before the ranks' PMIx_Init
        # and while they run it and their fences; the step takes its normal
        # time, and the servers name the refused user.
        ensure_other_user()
        command = ["srun", "-N", "4", "-n", "4", "--map-by", "node", "sh", "-c",
                   f"sleep 3; exec {MPI_HELLO}"]
        started = time.monotonic()
        r = run_as_user(command)
        normal = time.monotonic() - started
        self.assertEqual(r.returncode, 0, r.stderr)

        env = dict(cluster.cluster_env())
        env.update(cluster.OMPI_ENV)
        cluster.wait_while_nodes_complete(env)
        cmd = ["runuser", "-u", cluster.TEST_USER, "--", "env"]
        cmd += [f"{k}={v}" for k, v in env.items()] + command
        started = time.monotonic()
        step = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                cwd="/tmp")
        attackers = []
        try:
            listeners = {}
            deadline = time.monotonic() + 20
            while len(listeners) < 4 and time.monotonic() < deadline and step.poll() is None:
                time.sleep(0.05)
                listeners = server_listeners(cluster.TEST_USER)
            self.assertEqual(len(listeners), 4, f"node servers listening: {listeners}")
            # The fence tree's listeners come a moment after PMIx's.
            settle = time.monotonic() + 1
            while time.monotonic() < settle and min(map(len, listeners.values())) < 2:
                time.sleep(0.05)
                listeners = server_listeners(cluster.TEST_USER) or listeners
            # From each node to its own node server (the nodes are hosts of
            # their own: a server's loopback is only its node's).
            per_node = {}
            for (node, _pid), ports in listeners.items():
                per_node.setdefault(node, set()).update(ports)
            targets = sorted({t for ports in per_node.values() for t in ports})
            for count in (1, 200):
                for node, ports in sorted(per_node.items()):
                    attackers.append(hold_idle_connections(count, sorted(ports), node))
            out, err = step.communicate(timeout=120)
            took = time.monotonic() - started
        finally:
            if step.poll() is None:
                step.kill()
                step.wait()
            for proc, _held in attackers:
                proc.stdin.close()
                proc.wait(timeout=30)
        print(f"step under {sum(h for _p, h in attackers)} idle connections of another user to "
              f"{len(targets)} ports: {took:.1f} s; without: {normal:.1f} s", flush=True)
        self.assertEqual(step.returncode, 0, err)
        ranks = hello_ranks(out)
        self.assertEqual(len(ranks), 4, out + err)
        self.assertGreater(attackers[0][1], 0, "the other user could not even connect")
        self.assertLess(took, normal + 5,
                        f"{took:.1f} s under {sum(h for _p, h in attackers)} idle connections to "
                        f"{targets}, {normal:.1f} s without")
        logs = "".join(cluster.server_logs(ranks[0][2]).values())
        self.assertIn("refused a PMIx connection from 127.0.0.1:", logs)
        self.assertIn(f"uid {user_id(OTHER_USER)}: only the job's user may connect", logs)

    def test_the_pmix_namespace_is_in_no_command_line_and_not_the_job_number(self):
        # PMIx 4.2.2 takes a connecting peer's word for the namespace's
        # protocol modules before it checks who the peer is: its name must
        # not be something another user can read off `ps` or squeue.
        env = dict(cluster.cluster_env())
        cluster.wait_while_nodes_complete(env)
        cmd = ["runuser", "-u", cluster.TEST_USER, "--", "env"]
        cmd += [f"{k}={v}" for k, v in env.items()]
        cmd += ["srun", "-N", "2", "-n", "2", "--map-by", "node", "sh", "-c",
                'echo "NS=$PMIX_NAMESPACE JOB=$SLURM_JOB_ID"; sleep 3']
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                cwd="/tmp")
        try:
            line = proc.stdout.readline()
            m = re.match(r"NS=(\S+) JOB=(\d+)", line)
            self.assertIsNotNone(m, line + proc.stderr.read() if proc.poll() is not None else line)
            nspace, job = m.group(1), m.group(2)
            self.assertRegex(nspace, rf"^stepmap\.{job}\.0\.[0-9a-f]{{16}}$")
            seen = []
            for pid in filter(str.isdigit, os.listdir("/proc")):
                try:
                    with open(f"/proc/{pid}/cmdline", "rb") as f:
                        args = f.read().decode(errors="replace")
                except OSError:
                    continue
                if nspace in args:
                    seen.append(args.replace("\0", " "))
            self.assertEqual(seen, [], "the namespace is in these command lines")
            out, err = proc.communicate(timeout=60)
            self.assertEqual(proc.returncode, 0, err)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()

    def test_another_user_cannot_plant_the_servers_log(self):
        # The log directory is shared (1777): another user makes the next
        # steps' log files first, under the names the plugin once used
        # (stepmap-stepd.<job>.<step>.<node>.log), writable by all, to read
        # what the job's servers write or to leave them without a log. They
        # must stay untouched, and every server must still have its own log.
        ensure_other_user()
        nxt = last_job_id() + 1
        planted = []
        for job in range(nxt, nxt + 3):
            for node in ("n1", "n2", "n3", "n4"):
                path = os.path.join(cluster.LOG_DIR, f"stepmap-stepd.{job}.0.{node}.log")
                subprocess.run(["runuser", "-u", OTHER_USER, "--", "sh", "-c",
                                f"umask 0; : > {path}"], check=True)
                planted.append(path)
        try:
            r = srun("-n", "4", "--map-by", "node", MPI_HELLO)
            self.assertEqual(r.returncode, 0, r.stderr)
            ranks = hello_ranks(r.stdout)
            self.assertEqual(len(ranks), 4)
            for path in planted:
                self.assertEqual(os.path.getsize(path), 0, f"a server wrote into {path}")
            nspace = ranks[0][2]
            logs = cluster.server_log_paths(nspace)
            self.assertEqual(sorted(logs), sorted(node for node, *_ in ranks.values()),
                             f"the servers of {nspace} logged to {logs}")
            test_uid = user_id(cluster.TEST_USER)
            for node, path in logs.items():
                st = os.stat(path)
                self.assertGreater(st.st_size, 0, f"{node}'s server logged nothing to {path}")
                self.assertEqual(st.st_uid, test_uid, path)
                self.assertEqual(st.st_mode & 0o7777, 0o600, path)
        finally:
            for path in planted:
                if os.path.exists(path):
                    os.unlink(path)

    def test_server_has_the_jobs_limits_no_inherited_directory_or_oom_shield(self):
        # srun propagates the user's limits (PropagateResourceLimits); the
        # server runs with them, not with slurmstepd's, and in /.
        job_file = os.path.join(cluster.shared_dir("files"), "stepmap-limits-job")
        proc = subprocess.Popen(
            ["runuser", "-u", cluster.TEST_USER, "--", "env"] +
            [f"{k}={v}" for k, v in cluster.start_cluster().items()] +
            ["sh", "-c", "ulimit -n 300 && exec srun -n 1 --map-by node sh -c "
             f"'echo $SLURM_JOB_ID > {job_file}.tmp; mv {job_file}.tmp {job_file}; sleep 5'"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd="/tmp")
        try:
            deadline = time.time() + 30
            while not os.path.exists(job_file) and time.time() < deadline:
                time.sleep(0.1)
            with open(job_file) as f:
                job = f.read().strip()
            out = subprocess.run(["pgrep", "-u", cluster.TEST_USER, "-f", "--",
                                  f"--step {job}.0 "], stdout=subprocess.PIPE,
                                 text=True).stdout.split()
            self.assertEqual(len(out), 1, f"servers of job {job}: {out}")
            with open(f"/proc/{out[0]}/limits") as f:
                limits = f.read()
            self.assertRegex(limits, r"Max open files\s+300\s")
            self.assertEqual(os.readlink(f"/proc/{out[0]}/cwd"), "/")
            # slurmstepd shields itself from the OOM killer; the server must
            # not inherit that shield.
            with open(f"/proc/{out[0]}/oom_score_adj") as f:
                self.assertEqual(f.read().strip(), "0")
            _, err = proc.communicate(timeout=60)
            self.assertEqual(proc.returncode, 0, err)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
                subprocess.run(["scancel", "-u", cluster.TEST_USER],
                               env=dict(os.environ, **cluster.start_cluster()))
            if os.path.exists(job_file):
                os.unlink(job_file)

    def test_no_user_process_can_name_what_root_signals(self):
        # A process of the job's user races every server start: it writes a
        # readiness line naming a root-owned victim into the server's
        # report channel (as /proc/<server>/fd/3), hoping the plugin, as
        # root, later signals that pid.
        victim = subprocess.Popen(["sleep", "600"])
        attacker_code = (
            "import os,time,glob\n"
            f"victim={victim.pid}\n"
            "end=time.time()+60\n"
            "while time.time()<end and not os.path.exists('/tmp/stepmap-attack-stop'):\n"
            "  for d in glob.glob('/proc/[0-9]*'):\n"
            "    try:\n"
            "      if open(d+'/comm').read().strip()!='stepmap-stepd': continue\n"
            # Holding the channel open keeps the reader waiting; what is
            # written after the server's report is read last.
            "      with open(d+'/fd/3','a') as f:\n"
            "        time.sleep(0.3); f.write('OK %d\\nREADY\\nEND\\n'%victim)\n"
            "    except Exception: pass\n")
        attacker = subprocess.Popen(["runuser", "-u", cluster.TEST_USER, "--", "python3", "-c",
                                     attacker_code])
        try:
            for _ in range(5):
                r = srun("-n", "4", "--map-by", "node", MPI_HELLO)
                self.assertEqual(r.returncode, 0, r.stderr)
            self.assertIsNone(victim.poll(), "root signalled a process a user named")
        finally:
            with open("/tmp/stepmap-attack-stop", "w"):
                pass
            attacker.wait(timeout=90)
            os.unlink("/tmp/stepmap-attack-stop")
            victim.kill()
            victim.wait()


if __name__ == "__main__":
    require_root()
    unittest.main(verbosity=2)
