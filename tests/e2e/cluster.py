"""Shared helpers of the end-to-end tests: the local Slurm cluster of
contrib/cluster, runs of srun as the unprivileged test user, and checks that
a step left nothing behind."""

import contextlib
import ctypes
import glob
import hashlib
import os
import pwd
import re
import shutil
import subprocess
import tempfile
import time
import unittest

SOURCE_ROOT = os.environ.get("STEPMAP_SOURCE_ROOT",
                             os.path.dirname(os.path.dirname(os.path.dirname(
                                 os.path.abspath(__file__)))))
# What every job and node sees, as a cluster's shared file system: the
# nodes have /tmp and /dev/shm of their own (contrib/cluster, --network
# hosts) and a job may have a private /tmp (job_container/tmpfs), so
# nothing a job runs or reads may live there, wherever the checkout is.
SHARED_DIR = "/var/tmp/stepmap-e2e"


def shared_copy(path):
    """`path` copied to a directory of SHARED_DIR kept per build tree (the
    one copy is replaced, atomically, when the file changes); files next to
    a SPANK plugin that it loads (stepmap_core.so) come along. "" stays ""."""
    if not path:
        return path
    source = os.path.realpath(path)
    key = hashlib.sha256(os.path.dirname(source).encode()).hexdigest()[:12]
    directory = os.path.join(SHARED_DIR, "programs", key)
    os.makedirs(directory, exist_ok=True)
    for d in (SHARED_DIR, os.path.join(SHARED_DIR, "programs"), directory):
        os.chmod(d, 0o755)
    names = [os.path.basename(source)]
    if source.endswith(".so"):
        names += [n for n in os.listdir(os.path.dirname(source))
                  if n.endswith(".so") and n != names[0]]
    for name in names:
        src = os.path.join(os.path.dirname(source), name)
        dst = os.path.join(directory, name)
        try:
            if os.path.getmtime(dst) == os.path.getmtime(src) and \
                    os.path.getsize(dst) == os.path.getsize(src):
                continue
        except OSError:
            pass
        tmp = f"{dst}.{os.getpid()}.tmp"
        shutil.copy2(src, tmp)
        os.chmod(tmp, 0o755)
        os.replace(tmp, dst)
    return os.path.join(directory, names[0])


def program(variable, installed=None):
    """A program or plugin the tests run, from the installed package's
    variable if set, else the build tree's, copied where nodes see it."""
    path = (installed and os.environ.get(installed)) or os.environ.get(variable, "")
    if path.startswith("/usr/"):
        return path
    return shared_copy(path) if os.geteuid() == 0 else path


# stepmap from the build tree, or (contrib/package/test-installed.sh) the
# files the Debian package installed: the STEPMAP_INSTALLED_* variables win.
PLUGIN = program("STEPMAP_PLUGIN", "STEPMAP_INSTALLED_PLUGIN")
SERVER = program("STEPMAP_SERVER", "STEPMAP_INSTALLED_SERVER")
MPI_HELLO = program("STEPMAP_MPI_HELLO")
MPI_EXCHANGE = program("STEPMAP_MPI_EXCHANGE")
PROFILE_TOOL = program("STEPMAP_PROFILE_TOOL", "STEPMAP_INSTALLED_PROFILE_TOOL")
PMIX_CLIENT = program("STEPMAP_PMIX_CLIENT")
TEST_USER = "smuser"
SERVER_TMPDIR = "/tmp"
# Node servers' per-step logs (the plugin's log_dir=), read by some tests.
LOG_DIR = "/var/tmp/stepmap-e2e-logs"

# Open MPI's settings come from the cluster's env.sh (start.sh): over the
# nodes' own interfaces when they are hosts of their own, TCP over loopback
# when they share one. ob1 always, unless a test asks for UCX.
OMPI_ENV = {"OMPI_MCA_pml": "ob1"}

_cluster_env = None
_cluster_args = ()


def require_root():
    """The cluster needs root to start; elsewhere the suite is skipped (77)."""
    if os.geteuid() != 0:
        print("skipped: the end-to-end tests start a Slurm cluster and need root")
        raise SystemExit(77)


def plugin_arguments():
    """start.sh's arguments for the cluster as it runs now: its
    configuration (--namespace, ...) and stepmap from this build."""
    args = list(_cluster_args)
    if PLUGIN:
        args += ["--plugin", PLUGIN, "--plugin-args",
                 f"server={SERVER} tmpdir={SERVER_TMPDIR} log_dir={LOG_DIR}"]
    return args


def start_cluster(*cluster_args):
    """Starts (or reuses) the cluster with the plugin from the build tree;
    cluster_args (start.sh's --namespace, --contain-spank) restart it in
    that configuration, and a later call without them restarts it plain."""
    global _cluster_env, _cluster_args
    if _cluster_env is not None and cluster_args == _cluster_args:
        return _cluster_env
    _cluster_args = cluster_args
    os.makedirs(LOG_DIR, exist_ok=True)
    os.chmod(LOG_DIR, 0o1777)
    # Job ids restart when the cluster does: old logs would pass for new ones.
    for old in glob.glob(os.path.join(LOG_DIR, "*.log")):
        os.unlink(old)
    args = [os.path.join(SOURCE_ROOT, "contrib/cluster/start.sh")] + plugin_arguments()
    out = subprocess.run(args, check=True, stdout=subprocess.PIPE,
                         text=True, timeout=300).stdout
    env = {}
    for line in out.splitlines():
        m = re.match(r"^(?:export\s+)?([A-Z_][A-Z0-9_]*)=(.*)$", line.strip())
        if m:
            env[m.group(1)] = m.group(2).strip("'\"")
    _cluster_env = env
    enter_login_side()
    return env


LOGIN_NETNS = "/run/netns/stepmap-head"


def enter_login_side():
    """Moves this test process (and so every srun, squeue and scontrol it
    starts) into the login side's network namespace, where slurmctld
    listens and srun reaches the nodes; nothing if the nodes share this
    machine's network (start.sh --network shared). Again after a restart:
    the namespace is then a new one."""
    if not os.path.exists(LOGIN_NETNS):
        return
    libc = ctypes.CDLL(None, use_errno=True)
    clone_newnet = 0x40000000
    fd = os.open(LOGIN_NETNS, os.O_RDONLY | os.O_CLOEXEC)
    try:
        if libc.setns(fd, clone_newnet) != 0:
            raise OSError(ctypes.get_errno(), f"setns({LOGIN_NETNS})")
    finally:
        os.close(fd)


def hosts_network():
    """Whether the nodes are hosts of their own (start.sh --network hosts)."""
    return cluster_env().get("STEPMAP_CLUSTER_NETWORK", "shared") == "hosts"


def require_hosts_network():
    """Starts the cluster; skips the calling test class (SkipTest) where the
    nodes share one network (start.sh --network shared)."""
    start_cluster()
    if not hosts_network():
        raise unittest.SkipTest("the cluster shares one network (start.sh --network shared)")


def slurmd_pid(node):
    """The pid of the slurmd serving `node` (it and its steps live in the
    node's mount, network and UTS namespaces), or None."""
    conf = cluster_env().get("SLURM_CONF", "")
    for pid in subprocess.run(["pgrep", "-x", "slurmd"], stdout=subprocess.PIPE,
                              text=True).stdout.split():
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                args = f.read().split(b"\0")
            with open(f"/proc/{pid}/environ", "rb") as f:
                environ = f.read().split(b"\0")
        except OSError:
            continue
        if node.encode() in args and f"SLURM_CONF={conf}".encode() in environ:
            return int(pid)
    return None


NODES = ("n1", "n2", "n3", "n4")


def node_address(node):
    """The address `node` has on the cluster's network (what its servers
    listen on): its own with --network hosts, the machine's loopback
    otherwise."""
    return f"198.18.0.{10 + int(node[1:])}" if hosts_network() else "127.0.0.1"


def node_path(node, path):
    """`path` as `node` sees it (its own /tmp and /dev/shm), from here."""
    pid = slurmd_pid(node)
    if pid is None or not hosts_network():
        return path
    return f"/proc/{pid}/root{path}"


def on_node(node, argv):
    """argv to run as a process of `node`: in its namespaces (mount,
    network, hostname), as a local user of that host would."""
    pid = slurmd_pid(node)
    if pid is None or not hosts_network():
        return list(argv)
    return ["nsenter", "-t", str(pid), "-m", "-n", "-u", "--"] + list(argv)


@contextlib.contextmanager
def plugstack(change):
    """The cluster's plugstack.conf changed by change(text) for a while
    (srun and slurmstepd read it afresh for every step)."""
    conf = os.path.join(cluster_env()["STEPMAP_CLUSTER_DIR"], "etc/plugstack.conf")
    with open(conf) as f:
        original = f.read()
    try:
        with open(conf, "w") as f:
            f.write(change(original))
        yield
    finally:
        with open(conf, "w") as f:
            f.write(original)


def with_plugin_arguments(more):
    """A plugstack.conf change (for plugstack()) adding `more` to stepmap's line."""
    return lambda text: "\n".join(
        line + " " + more if "stepmap" in line and not line.lstrip().startswith("#") else line
        for line in text.splitlines()) + "\n"


def cluster_env():
    """The running cluster's environment, whatever its configuration (starts
    the plain cluster if none runs yet)."""
    return _cluster_env if _cluster_env is not None else start_cluster()


def run_as_user(argv, extra_env=None, timeout=120, cwd="/tmp", without=()):
    """Runs argv as the test user with the cluster's environment, less the
    variables named in `without`. Returns the CompletedProcess (stdout and
    stderr as text)."""
    env = dict(cluster_env())
    env.update(OMPI_ENV)
    if extra_env:
        env.update(extra_env)
    for name in without:
        env.pop(name, None)
    if argv and argv[0] in ("srun", "salloc", "sbatch"):
        wait_while_nodes_complete(env)
    cmd = ["runuser", "-u", TEST_USER, "--", "env"]
    cmd += [f"{k}={v}" for k, v in env.items()]
    cmd += list(argv)
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True, timeout=timeout, cwd=cwd)


def wait_while_nodes_complete(env, timeout=30.0):
    """Waits (up to `timeout` seconds) until no node is still completing a
    finished job: Slurm gives a new job other nodes meanwhile, and tests
    that let Slurm choose expect the first free ones. Nodes running a job
    (a test's background step) do not hold it up."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        r = subprocess.run(["sinfo", "-h", "-N", "-o", "%t"], stdout=subprocess.PIPE,
                           stderr=subprocess.DEVNULL, text=True,
                           env={**os.environ, "SLURM_CONF": env.get("SLURM_CONF", "")})
        if r.returncode != 0 or not any(t.startswith("comp") for t in r.stdout.split()):
            return
        time.sleep(0.05)


def srun(*args, **kw):
    return run_as_user(["srun"] + list(args), **kw)


def hello_ranks(stdout):
    """{rank: (node, size, nspace, sum, shared)} from mpi_hello's output."""
    ranks = {}
    for line in stdout.splitlines():
        m = re.match(r"^rank (\d+) size (\d+) node (\S+) nspace (\S+) sum (-?\d+) shared (\d+)(?: app -?\d+)?$",
                     line)
        if m:
            ranks[int(m.group(1))] = (m.group(3), int(m.group(2)), m.group(4),
                                      int(m.group(5)), int(m.group(6)))
    return ranks


def layout(nodes):
    """Nodes as a pattern of letters by first use: [n3, n2, n3, n2] is "ABAB"."""
    letters = {}
    return "".join(letters.setdefault(n, "ABCDEFGHIJKLMNOPQRSTUVWXYZ"[len(letters)]) for n in nodes)


def hello_apps(stdout):
    """{rank: MPI_APPNUM} from mpi_hello's output."""
    return {int(m.group(1)): int(m.group(2))
            for m in re.finditer(r"^rank (\d+) .* app (-?\d+)$", stdout, re.M)}


def leftovers(wait=5.0):
    """Stepmap processes and server directories of the test user's steps
    still present, after giving a finished step up to `wait` seconds to
    clean up. (Servers run as the job's user; other users' are not ours,
    e.g. a benchmark's on the same machine.)"""
    uid = pwd.getpwnam(TEST_USER).pw_uid
    deadline = time.time() + wait
    while True:
        procs = subprocess.run(["pgrep", "-a", "-u", TEST_USER, "-x", "stepmap-stepd"],
                               stdout=subprocess.PIPE, text=True).stdout.strip()
        procs = [p for p in procs.splitlines() if "pgrep" not in p and not _zombie(p)]
        dirs = [d for node in NODES
                for d in glob.glob(os.path.join(node_path(node, SERVER_TMPDIR), "stepmap.*"))
                if _owner(d) == uid]
        found = procs + dirs
        if not found or time.time() > deadline:
            return found
        time.sleep(0.2)


def _owner(path):
    try:
        return os.lstat(path).st_uid
    except OSError:
        return None


def wait_for(predicate, timeout=20.0):
    """True once predicate() is, False after timeout seconds."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return False


def pids_of(user, name):
    """Live processes of user named exactly name."""
    out = subprocess.run(["pgrep", "-u", user, "-x", name], stdout=subprocess.PIPE,
                         text=True).stdout.split()
    return [int(p) for p in out if not _zombie(p)]


def _zombie(pgrep_line):
    """True for an exited process not yet reaped (PID 1 here reaps late)."""
    pid = pgrep_line.split()[0]
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return True


def server_log_paths(nspace):
    """{node: log path} of the node servers of one step: the plugin names
    each stepmap-stepd.<job>.<step>.<node>.<16 random hex digits>.log."""
    step = ".".join(nspace.split(".")[1:3])  # stepmap.<job>.<step>.<from the secret>
    name = re.compile(re.escape(f"stepmap-stepd.{step}.") + r"(.+)\.[0-9a-f]{16}\.log")
    paths = {}
    for path in glob.glob(os.path.join(LOG_DIR, f"stepmap-stepd.{step}.*.log")):
        m = name.fullmatch(os.path.basename(path))
        if m:
            paths[m.group(1)] = path
    return paths


def server_logs(nspace):
    """{node: log text} of the node servers of one step."""
    logs = {}
    for node, path in server_log_paths(nspace).items():
        with open(path) as f:
            logs[node] = f.read()
    return logs


def cpu_set(listing):
    """A Linux CPU list ('0-1,3', as in Cpus_allowed_list) -> {0, 1, 3}."""
    out = set()
    for part in listing.split(","):
        if "-" in part:
            lo, hi = part.split("-")
            out.update(range(int(lo), int(hi) + 1))
        elif part:
            out.add(int(part))
    return out


def shared_dir(name):
    """SHARED_DIR/name, made, every user may write to it (as /tmp)."""
    path = os.path.join(SHARED_DIR, name)
    os.makedirs(path, exist_ok=True)
    os.chmod(SHARED_DIR, 0o755)
    os.chmod(path, 0o1777)
    return path


def write_user_file(text):
    """A file the test user can read, where every node and job sees it; the
    caller removes it."""
    fd, path = tempfile.mkstemp(prefix="stepmap-test-", dir=shared_dir("files"))
    with os.fdopen(fd, "w") as f:
        f.write(text)
    os.chmod(path, 0o644)
    return path


def profile_command(command, path, *args, nodes="n[1-4]", timeout=120):
    """Runs `stepmap-profile COMMAND PATH ARGS` as the test user inside an
    allocation of `nodes` (salloc), on a profile at `path` that root owns
    (0644, as a site keeps it): the tool works on a copy in a directory of
    the user's, which replaces `path` after make and update. Returns the
    salloc result."""
    work = tempfile.mkdtemp(prefix="stepmap-profile-")
    os.chown(work, pwd.getpwnam(TEST_USER).pw_uid, -1)
    copy = os.path.join(work, "profile.yaml")
    try:
        if os.path.exists(path):
            with open(path) as src, open(copy, "w") as dst:
                dst.write(src.read())
            os.chmod(copy, 0o666)
        r = run_as_user(["salloc", "-w", nodes, PROFILE_TOOL, command]
                        + (["-o", copy] if command == "make" else [copy]) + list(args),
                        timeout=timeout)
        if command in ("make", "update") and r.returncode == 0:
            with open(copy) as src, open(path + ".new", "w") as dst:
                dst.write(src.read())
            os.chmod(path + ".new", 0o644)
            os.replace(path + ".new", path)
        return r
    finally:
        subprocess.run(["rm", "-rf", work])


def make_profile(path):
    """The interconnect profile of the cluster's four nodes at `path`."""
    r = profile_command("make", path)
    if r.returncode != 0:
        raise RuntimeError(f"stepmap-profile make failed:\n{r.stdout}\n{r.stderr}")


def run_sbatch(script_text, timeout=120):
    """Runs a job script with `sbatch --wait` as the test user; returns the
    sbatch result and the job's output. Removes both files."""
    script = write_user_file(script_text)
    out = script + ".out"
    try:
        os.chmod(script, 0o755)
        r = run_as_user(["sbatch", "--wait", "-o", out, script], timeout=timeout)
        text = ""
        if os.path.exists(out):
            with open(out) as f:
                text = f.read()
        return r, text
    finally:
        os.unlink(script)
        if os.path.exists(out):
            os.unlink(out)


OMPI5 = os.environ.get("STEPMAP_OMPI5_PREFIX", "")


def have_ompi5():
    """Whether Open MPI 5 is built (contrib/openmpi/build-openmpi5.sh)."""
    return bool(OMPI5) and os.access(os.path.join(OMPI5, "bin/mpicc"), os.X_OK)


def build_with_ompi5(source, prefix, libraries=()):
    """(directory, program): `source` (tests/programs/) compiled by Open MPI
    5's mpicc (and linked with `libraries`, e.g. ["-lpmix"] for its PMIx)
    into a new directory every user and node can read; the caller removes
    the directory."""
    directory = tempfile.mkdtemp(prefix=prefix, dir=shared_dir("files"))
    os.chmod(directory, 0o755)
    program = os.path.join(directory, os.path.splitext(os.path.basename(source))[0])
    subprocess.run([os.path.join(OMPI5, "bin/mpicc"), "-o", program,
                    os.path.join(SOURCE_ROOT, "tests/programs", source)] + list(libraries),
                   check=True)
    os.chmod(program, 0o755)
    return directory, program


class StepTestCase(unittest.TestCase):
    """Starts the cluster once; after every test, nothing of stepmap may be
    left on any node."""

    @classmethod
    def setUpClass(cls):
        start_cluster()

    def setUp(self):
        # Every test starts on nodes done with the previous one's job: a
        # step that must start at once (ParaStation's rule without
        # PSI_WAIT) would otherwise find a node still completing.
        wait_while_nodes_complete(cluster_env())

    def tearDown(self):
        self.assertEqual(leftovers(), [], "a step left processes or files behind")

    def assertRanksOn(self, result, expected_nodes):
        """mpi_hello ran with rank r on expected_nodes[r], a correct
        Allreduce everywhere, served by stepmap (not Slurm's mpi/pmix)."""
        self.assertEqual(result.returncode, 0, result.stderr)
        ranks = hello_ranks(result.stdout)
        n = len(expected_nodes)
        self.assertEqual(sorted(ranks), list(range(n)), result.stdout + result.stderr)
        for r, node in enumerate(expected_nodes):
            got_node, size, nspace, total, _shared = ranks[r]
            self.assertEqual(got_node, node, f"rank {r}")
            self.assertEqual(size, n, f"rank {r} size")
            self.assertEqual(total, n * (n - 1) // 2, f"rank {r} allreduce")
            self.assertTrue(nspace.startswith("stepmap."), nspace)

    def assertRanksLaidOut(self, result, pattern):
        """As assertRanksOn, where Slurm chose the nodes: `pattern` has a
        letter per rank, the same letter for ranks on the same node and
        different letters for different nodes ("ABAB": by node over two).
        A node still completing the previous job is not chosen, so a test
        that does not pin its nodes (-w) must not name them."""
        ranks = hello_ranks(result.stdout)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(sorted(ranks), list(range(len(pattern))), result.stdout + result.stderr)
        nodes = [ranks[r][0] for r in range(len(pattern))]
        self.assertEqual(layout(nodes), pattern, f"ranks on {nodes}")
        self.assertRanksOn(result, nodes)

    def assertRefused(self, result, *needles):
        """srun failed before any task started, saying all of needles."""
        self.assertNotEqual(result.returncode, 0)
        self.assertEqual(hello_ranks(result.stdout), {}, "a task started")
        for needle in needles:
            self.assertIn(needle, result.stderr)


def slurm_jobs(user=TEST_USER):
    """Ids of the jobs Slurm still holds (pending, running or completing),
    of `user` (None: everyone's), on the cluster that runs now."""
    args = ["squeue", "-h", "-o", "%i"] + (["-u", user] if user else [])
    return subprocess.run(args, stdout=subprocess.PIPE, text=True,
                          env={**os.environ, **cluster_env()}).stdout.split()


def slurm_release():
    """(major, minor) of the Slurm the cluster runs, e.g. (22, 5)."""
    text = cluster_env().get("STEPMAP_SLURM_RELEASE", "0.0")
    major, minor = text.split(".")[:2]
    return int(major), int(minor)
