"""ParaStation placement end to end on the real 4-node cluster (n1..n4, 2
CPUs each): --loop-nodes-first, --overbook with it, --tpp, --nodes-sort and
the PSI_* environment as lower-precedence equivalents (seed 004,
shared/notes/parastation.md)."""

import contextlib
import os
import re
import subprocess
import time
import unittest

import cluster
from cluster import MPI_HELLO, PMIX_CLIENT, hello_ranks, run_as_user, srun, write_user_file
from test_site_policy import site_file
from test_topology import client_facts


# Task-level facts without MPI: rank, node, CPUs the task may run on, and
# Slurm's CPUs per task as the task sees it.
TASK_FACTS = ("echo task $SLURM_PROCID node $SLURMD_NODENAME cpus $(nproc) "
              "cpt ${SLURM_CPUS_PER_TASK:-unset}")


def task_facts(stdout):
    facts = {}
    for line in stdout.splitlines():
        m = re.match(r"^task (\d+) node (\S+) cpus (\d+) cpt (\S+)$", line)
        if m:
            facts[int(m.group(1))] = (m.group(2), int(m.group(3)), m.group(4))
    return facts


# The task's memory policy (get_mempolicy: 0 default, 2 bind) and the NUMA
# nodes it names, with the CPUs it may run on.
MEMPOLICY = r"""
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
number = {"x86_64": 239, "aarch64": 236}[os.uname().machine]
mode, mask = ctypes.c_int(), (ctypes.c_ulong * 16)()
if libc.syscall(number, ctypes.byref(mode), mask, 1024, None, 0) != 0:
    raise OSError(ctypes.get_errno(), "get_mempolicy")
nodes = [i for i in range(1024) if mask[i // 64] >> (i % 64) & 1]
status = open("/proc/self/status").read()
cpus = status.split("Cpus_allowed_list:")[1].split()[0]
print("task", os.environ["SLURM_PROCID"], "policy", mode.value,
      "nodes", ",".join(map(str, nodes)) or "-", "cpus", cpus)
"""


def memory_policies(stdout):
    """{rank: (policy, nodes, cpus)} from MEMPOLICY's lines."""
    return {int(m.group(1)): (int(m.group(2)), m.group(3), cluster.cpu_set(m.group(4)))
            for m in re.finditer(r"^task (\d+) policy (\d+) nodes (\S+) cpus (\S+)$",
                                 stdout, re.M)}


def numa_nodes_of(cpus):
    """The NUMA nodes (as MEMPOLICY prints them) holding `cpus`, from this
    machine's sysfs: the nodes share its CPUs."""
    base = "/sys/devices/system/node"
    found = []
    for name in sorted(os.listdir(base)):
        if re.fullmatch(r"node\d+", name):
            with open(os.path.join(base, name, "cpulist")) as f:
                text = f.read().strip()
            if text and cluster.cpu_set(text) & cpus:
                found.append(int(name[4:]))
    return ",".join(map(str, sorted(found)))


def in_job(*args, extra_env=None):
    """srun inside a 4-node job holding every CPU (as mpirun inside salloc)."""
    return run_as_user(["salloc", "-N", "4", "-n", "8", "srun"] + list(args),
                       extra_env=extra_env)


@contextlib.contextmanager
def busy_job(*sbatch_args):
    """Another job of the test user's, running `sleep 120` where sbatch_args
    put it, until the block ends; yields its id."""
    busy = run_as_user(["sbatch", "--parsable", "-o", "/dev/null"] + list(sbatch_args) +
                       ["--wrap", "sleep 120"])
    assert busy.returncode == 0, busy.stderr
    job = busy.stdout.strip().split(";")[0]
    try:
        deadline = time.time() + 30
        state = ""
        while time.time() < deadline:
            state = run_as_user(["squeue", "-h", "-j", job, "-o", "%T"]).stdout.strip()
            if state == "RUNNING":
                break
            time.sleep(0.2)
        assert state == "RUNNING", f"job {job} is {state}"
        yield job
    finally:
        run_as_user(["scancel", job])
        deadline = time.time() + 30
        while time.time() < deadline and run_as_user(
                ["squeue", "-h", "-j", job]).stdout.strip():
            time.sleep(0.2)
        cluster.wait_while_nodes_complete(cluster.cluster_env())


class ParaStationTest(cluster.StepTestCase):
    # -------------------------------------------------------- the options

    def test_loop_nodes_first(self):
        r = srun("--loop-nodes-first", "-n", "6", MPI_HELLO)
        self.assertRanksOn(r, ["n1", "n2", "n3", "n4", "n1", "n2"])

    def test_loop_nodes_first_too_few_cpus_is_refused(self):
        r = in_job("--loop-nodes-first", "-n", "10", MPI_HELLO)
        self.assertRefused(r, "not enough slots", "the selected nodes have 8 slots",
                           "--overbook (PSI_OVERBOOK)")

    def test_overbook_with_loop_nodes_first_walks_cyclically(self):
        # notes/parastation.md: n1 ranks 0,4,8; n2 1,5,9; n3 2,6; n4 3,7.
        r = srun("--overbook", "--loop-nodes-first", "-n", "10", MPI_HELLO)
        self.assertRanksOn(r, ["n1", "n2", "n3", "n4"] * 2 + ["n1", "n2"])

    def test_loop_nodes_first_with_map_by_node_is_refused(self):
        r = srun("--loop-nodes-first", "--map-by", "node", "-n", "4", MPI_HELLO)
        self.assertRefused(r, "--loop-nodes-first cannot be combined with --map-by node")

    def test_tpp_gives_each_rank_two_cpus_of_one_node(self):
        r = srun("--tpp=2", "-n", "4", "sh", "-c", TASK_FACTS)
        self.assertEqual(r.returncode, 0, r.stderr)
        facts = task_facts(r.stdout)
        self.assertEqual(facts, {0: ("n1", 2, "2"), 1: ("n2", 2, "2"),
                                 2: ("n3", 2, "2"), 3: ("n4", 2, "2")}, r.stdout)

    def test_tpp_places_mpi_ranks_one_per_node(self):
        # np defaults to the room of the job: 4 (without a job, of what Slurm grants).
        r = in_job("--tpp", "2", MPI_HELLO)
        self.assertRanksOn(r, ["n1", "n2", "n3", "n4"])

    def test_tpp_beyond_the_room_is_refused(self):
        r = in_job("--tpp=2", "-n", "5", MPI_HELLO)
        self.assertRefused(r, "with --tpp=2 (2 hardware threads per process) the selected "
                              "nodes have room for 4 procs")

    def test_nodes_sort_proc_avoids_a_busy_node(self):
        # n1 fully taken by another job: PROC rates it 2/2, the idle nodes 0,
        # so srun's own allocation goes to n2 and n3 instead of waiting.
        with busy_job("-w", "n1", "-n", "2"):
            r = srun("--nodes-sort=PROC", "-n", "4", MPI_HELLO, timeout=60)
            self.assertRanksOn(r, ["n2", "n2", "n3", "n3"])

    # ------------------------------------------- exclusive nodes, waiting

    def test_psi_exclusive_without_a_job_takes_a_node_no_other_job_uses(self):
        # Another job holds one of n1's two CPUs. Slurm would give the free
        # one to a 1-CPU job; PSI_EXCLUSIVE asks for a node of its own.
        with busy_job("-w", "n1", "-n", "1"):
            r = srun("-v", "-n", "1", MPI_HELLO,
                     extra_env={"PSI_EXCLUSIVE": "", "PSI_WAIT": ""}, timeout=60)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertIn("PSI_EXCLUSIVE: asked Slurm for nodes no other job uses, held for "
                          "this job (--exclusive)", r.stderr)
            [(node, *_)] = hello_ranks(r.stdout).values()
            self.assertNotEqual(node, "n1", r.stdout)
            # Without it, the shared node is what Slurm gives.
            r = srun("-n", "1", MPI_HELLO, extra_env={"PSI_WAIT": ""}, timeout=60)
            self.assertRanksOn(r, ["n1"])

    def test_psi_exclusive_inside_a_job_refuses_a_node_another_job_shares(self):
        with busy_job("-w", "n1", "-n", "1"):
            r = run_as_user(["salloc", "-w", "n1", "-n", "1", "srun", MPI_HELLO],
                            extra_env={"PSI_EXCLUSIVE": "1"}, timeout=60)
            self.assertRefused(r, "PSI_EXCLUSIVE asks for nodes no other job uses, and job ",
                               " shares n1 (other jobs hold 1 of its 2 CPUs); run in a job "
                               "that holds its nodes whole (salloc or sbatch --exclusive), or "
                               "without PSI_EXCLUSIVE")
        # A node the job has alone is granted.
        r = run_as_user(["salloc", "-w", "n2", "-n", "1", "srun", MPI_HELLO],
                        extra_env={"PSI_EXCLUSIVE": "1"}, timeout=60)
        self.assertRanksOn(r, ["n2"])

    def test_psi_wait_unset_fails_at_once_while_the_node_is_held(self):
        with busy_job("-w", "n1", "-n", "2"):
            started = time.monotonic()
            r = srun("-n", "1", MPI_HELLO, extra_env={"PSI_HOSTS": "n1"}, timeout=60)
            took = time.monotonic() - started
            self.assertRefused(r, "the job cannot start now and PSI_WAIT is not set, so it does "
                                  "not wait in Slurm's queue (",
                               "busy: n1 (2 of 2 CPUs in use)",
                               "set PSI_WAIT to wait until Slurm can start it")
            self.assertLess(took, 10, "it must not wait")
            self.assertEqual(cluster.leftovers(), [])

    def test_psi_wait_waits_in_the_queue_until_the_node_is_free(self):
        env = dict(cluster.cluster_env())
        env.update(cluster.OMPI_ENV)
        env.update({"PSI_HOSTS": "n1", "PSI_WAIT": ""})
        with busy_job("-w", "n1", "-n", "2") as other:
            waiting = subprocess.Popen(
                ["runuser", "-u", cluster.TEST_USER, "--", "env"] +
                [f"{k}={v}" for k, v in env.items()] + ["srun", "-n", "1", MPI_HELLO],
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd="/tmp")
            try:
                time.sleep(4)
                self.assertIsNone(waiting.poll(), "srun did not wait")
                pending = run_as_user(["squeue", "-h", "-t", "PD", "-o", "%i"]).stdout.split()
                self.assertTrue(pending, "no job waits in the queue")
                run_as_user(["scancel", other])
                out, err = waiting.communicate(timeout=60)
            finally:
                if waiting.poll() is None:
                    waiting.kill()
                    waiting.communicate()
        self.assertEqual(waiting.returncode, 0, err)
        self.assertEqual([n for n, *_ in hello_ranks(out).values()], ["n1"], out + err)

    def test_nodes_sort_none_keeps_the_order(self):
        r = srun("--nodes-sort=none", "-n", "3", MPI_HELLO)
        self.assertRanksOn(r, ["n1", "n1", "n2"])

    def test_sbatch_forwards_loop_nodes_first_and_tpp(self):
        r, text = cluster.run_sbatch(
            "#!/bin/bash\n#SBATCH -N 4 -n 8\n#SBATCH --loop-nodes-first\n"
            f"srun -n 6 {MPI_HELLO}\n"
            "srun --tpp=2 sh -c 'echo task $SLURM_PROCID node "
            "$SLURMD_NODENAME cpus $(nproc) cpt $SLURM_CPUS_PER_TASK'\n")
        self.assertEqual(r.returncode, 0, r.stderr)
        ranks = hello_ranks(text)
        self.assertEqual([ranks[i][0] for i in sorted(ranks)],
                         ["n1", "n2", "n3", "n4", "n1", "n2"], text)
        # Both options in effect: one rank of 2 CPUs per node, round robin.
        self.assertEqual(task_facts(text), {0: ("n1", 2, "2"), 1: ("n2", 2, "2"),
                                            2: ("n3", 2, "2"), 3: ("n4", 2, "2")}, text)

    # -------------------------------------------------------------- pinning

    def assertPinnedToSlots(self, result, slots_of_local_rank, ranks_per_node):
        """Each rank bound to the CPUs its local rank's slots name (indices
        into its step's cpuset on its node), as its affinity, PMIX_CPUSET
        and locality all say."""
        self.assertEqual(result.returncode, 0, result.stderr)
        facts = client_facts(result.stdout)
        self.assertEqual(len(facts), 4 * ranks_per_node, result.stdout + result.stderr)
        for rank, f in facts.items():
            with self.subTest(rank=rank):
                step = sorted(cluster.cpu_set(f["cgroup"]))
                local = rank // 4  # --loop-nodes-first over 4 nodes
                want = {step[i] for i in slots_of_local_rank[local]}
                self.assertEqual(cluster.cpu_set(f["allowed"]), want, f)
                self.assertEqual(cluster.cpu_set(f["cpuset"].removeprefix("hwloc:")), want, f)
                cores = re.search(r"(?:^|:)CR([0-9,-]+)", f["locality"])
                self.assertEqual(cluster.cpu_set(cores.group(1)), want, f["locality"])

    def test_each_process_is_pinned_to_its_cpu_slot(self):
        # Seed 004: each process pinned to a CPU-slot by default. Two ranks
        # per node: local rank 0 on the step's first core, 1 on its second.
        r = in_job("--loop-nodes-first", "-n", "8", "--display-map", PMIX_CLIENT)
        self.assertIn("Binding policy: CPU-SLOT:CORES-FIRST", r.stderr)
        self.assertEqual(len(re.findall(r"Process rank: \d+ Bound: \S*core", r.stderr)), 8,
                         r.stderr)
        self.assertPinnedToSlots(r, {0: [0], 1: [1]}, 2)

    def test_tpp_pins_each_process_to_its_tpp_slots(self):
        r = in_job("--loop-nodes-first", "--tpp=2", "-n", "4", PMIX_CLIENT)
        self.assertPinnedToSlots(r, {0: [0, 1]}, 1)

    def test_psi_no_pinproc_runs_unpinned(self):
        for unpin in ({"__PSI_NO_PINPROC": "1"}, None):
            args = ["--loop-nodes-first", "-n", "8", PMIX_CLIENT]
            if unpin is None:
                args = ["--bind-to", "none"] + args
            r = in_job(*args, extra_env=unpin)
            self.assertEqual(r.returncode, 0, r.stderr)
            facts = client_facts(r.stdout)
            self.assertEqual(len(facts), 8, r.stdout)
            for rank, f in facts.items():
                self.assertEqual(f["cpuset"], "none", (unpin, rank, f))
                self.assertEqual(cluster.cpu_set(f["allowed"]), cluster.cpu_set(f["cgroup"]))

    def test_memory_is_bound_to_the_slots_numa_nodes(self):
        r = in_job("--loop-nodes-first", "-n", "8", "python3", "-c", MEMPOLICY)
        self.assertEqual(r.returncode, 0, r.stderr)
        policies = memory_policies(r.stdout)
        self.assertEqual(sorted(policies), list(range(8)), r.stdout + r.stderr)
        for rank, (policy, nodes, cpus) in policies.items():
            self.assertEqual(len(cpus), 1, (rank, cpus))  # pinned
            self.assertEqual((policy, nodes), (2, numa_nodes_of(cpus)), rank)  # MPOL_BIND
        # __PSI_NO_BINDMEM: still pinned, memory as the kernel decides.
        r = in_job("--loop-nodes-first", "-n", "8", "python3", "-c", MEMPOLICY,
                   extra_env={"__PSI_NO_BINDMEM": "1"})
        self.assertEqual(r.returncode, 0, r.stderr)
        policies = memory_policies(r.stdout)
        self.assertEqual(sorted(policies), list(range(8)), r.stdout + r.stderr)
        for rank, (policy, _nodes, cpus) in policies.items():
            self.assertEqual((policy, len(cpus)), (0, 1), rank)

    def test_psi_cpumap_is_refused_unless_the_site_allows_it(self):
        r = in_job("--loop-nodes-first", "-n", "8", PMIX_CLIENT,
                   extra_env={"__PSI_CPUMAP": "1,0"})
        self.assertRefused(r, "__PSI_CPUMAP: this cluster does not let users choose")
        with site_file("allow:\n  user_cpumap: true\n"):
            r = in_job("--loop-nodes-first", "-n", "8", "--display-map", PMIX_CLIENT,
                       extra_env={"__PSI_CPUMAP": "1,0"})
            self.assertIn("Binding policy: CPU-SLOT:__PSI_CPUMAP", r.stderr)
            # Slot 0 is CPU 1 now: local rank 0 on the step's second CPU.
            self.assertPinnedToSlots(r, {0: [1], 1: [0]}, 2)
            r = in_job("--loop-nodes-first", "-n", "8", PMIX_CLIENT,
                       extra_env={"__PSI_CPUMAP": "0,7"})
            self.assertRefused(r, "__PSI_CPUMAP maps CPU-slot 1 to CPU 7, which the job does "
                                  "not hold on n1")

    def test_bind_to_with_parastation_placement_is_refused(self):
        r = in_job("--loop-nodes-first", "--bind-to", "core", "-n", "8", MPI_HELLO)
        self.assertRefused(r, "ParaStation placement pins each process to its CPU-slots itself",
                           "--bind-to none")

    # ---------------------------------------------------- the environment

    def test_overbook_without_a_job_spreads_over_every_cpu_it_may_use(self):
        # The README's and the demo's command (issue 28): n1 excluded, 10
        # processes for the 6 CPUs of n2-n4: every CPU gets one or two, the
        # extra ones to the first CPUs of the list, consecutive ranks on a
        # node (notes/parastation.md); it used to put all ten on one node.
        r = srun("-v", "--host", "!^n1", "--overbook", "-n", "10", MPI_HELLO)
        self.assertRanksOn(r, ["n2"] * 4 + ["n3"] * 4 + ["n4"] * 2)
        self.assertIn("--overbook: 10 processes for the 6 CPUs of n[2-4]: asked Slurm for every "
                      "one of those nodes, whole", r.stderr)

    def test_overbook_without_a_job_that_fits_is_not_overbooked(self):
        r = srun("-v", "--overbook", "-n", "4", MPI_HELLO)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("--overbook: 4 processes fit the 8 CPUs of the nodes it may use; asked "
                      "Slurm for them without overbooking", r.stderr)
        # Overbooking enforces PSI_EXCLUSIVE (seed 004): whole nodes of its own.
        self.assertIn("--overbook (which enforces PSI_EXCLUSIVE): asked Slurm for nodes no "
                      "other job uses, held for this job (--exclusive)", r.stderr)
        self.assertEqual(len(hello_ranks(r.stdout)), 4, r.stdout + r.stderr)
        # Not overbooked: no node runs more ranks than its 2 CPUs.
        for node, _size, _ns, _sum, shared in hello_ranks(r.stdout).values():
            self.assertLessEqual(shared, 2, r.stdout)

    def test_psi_overbook(self):
        r = in_job("-n", "10", MPI_HELLO, extra_env={"PSI_OVERBOOK": "0"})
        self.assertRanksOn(r, ["n1"] * 4 + ["n2"] * 2 + ["n3"] * 2 + ["n4"] * 2)

    def test_psi_loop_nodes_first_and_overbook(self):
        r = srun("-n", "10", MPI_HELLO,
                 extra_env={"PSI_OVERBOOK": "", "PSI_LOOP_NODES_FIRST": "0"})
        self.assertRanksOn(r, ["n1", "n2", "n3", "n4"] * 2 + ["n1", "n2"])

    def test_psi_hosts(self):
        r = in_job("-n", "3", MPI_HELLO, extra_env={"PSI_HOSTS": "n3 n2"})
        self.assertRanksOn(r, ["n3", "n3", "n2"])
        # Without a job, Slurm is asked for n2 and n3 and decides the CPUs.
        r = srun("-n", "3", MPI_HELLO, extra_env={"PSI_HOSTS": "n3 n2"})
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual({n for n, *_ in cluster.hello_ranks(r.stdout).values()}, {"n2", "n3"})

    def test_psi_nodes(self):
        # Without a job, the indices count the cluster's nodes: 3 is n4, 1 is n2.
        r = srun("-n", "3", MPI_HELLO, extra_env={"PSI_NODES": "3,1"})
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual({n for n, *_ in cluster.hello_ranks(r.stdout).values()}, {"n2", "n4"})

    def test_psi_nodes_index_the_job_allocation(self):
        # Inside salloc the indices count the job's nodes: 2 is n4, 0 is n2.
        r = run_as_user(["salloc", "-w", "n2,n3,n4", "-n", "6", "srun", "-n", "3", MPI_HELLO],
                        extra_env={"PSI_NODES": "2,0"})
        self.assertRanksOn(r, ["n4", "n4", "n2"])

    def test_psi_nodes_wins_over_psi_hosts(self):
        r = srun("-n", "2", MPI_HELLO, extra_env={"PSI_NODES": "1", "PSI_HOSTS": "n4"})
        self.assertRanksOn(r, ["n2", "n2"])

    def test_psi_hostfile_counts_lines(self):
        path = write_user_file("# two on n2, one on n3\nn2\nn3\nn2\n")
        try:
            r = srun(MPI_HELLO, extra_env={"PSI_HOSTFILE": path})
            self.assertRanksOn(r, ["n2", "n2", "n3"])
        finally:
            os.unlink(path)

    def test_psi_loop_nodes_first_over_psi_hosts(self):
        r = srun("-n", "4", MPI_HELLO,
                 extra_env={"PSI_LOOP_NODES_FIRST": "", "PSI_HOSTS": "n4 n2"})
        self.assertRanksOn(r, ["n4", "n2", "n4", "n2"])

    def test_psi_tpp(self):
        r = srun("sh", "-c", TASK_FACTS, extra_env={"PSI_TPP": "2", "PSI_HOSTS": "n3 n4"})
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(task_facts(r.stdout), {0: ("n3", 2, "2"), 1: ("n4", 2, "2")},
                         r.stdout)

    # ------------------------------------------ options over the environment

    def test_host_option_wins_over_psi_hosts(self):
        r = srun("--host", "n1:2", "-n", "2", MPI_HELLO, extra_env={"PSI_HOSTS": "n4"})
        self.assertRanksOn(r, ["n1", "n1"])

    def test_tpp_option_wins_over_psi_tpp(self):
        # With PSI_TPP=2 the nodes would hold 4 ranks; --tpp=1 gives 8.
        r = srun("--tpp=1", "-n", "8", MPI_HELLO, extra_env={"PSI_TPP": "2"})
        self.assertRanksOn(r, ["n1", "n1", "n2", "n2", "n3", "n3", "n4", "n4"])

    def test_nodes_sort_option_wins_over_bad_psi_nodes_sort(self):
        r = srun("--nodes-sort=NONE", "-n", "2", MPI_HELLO,
                 extra_env={"PSI_NODES_SORT": "bogus"})
        self.assertRanksOn(r, ["n1", "n1"])

    # ------------------------------------------------------------ refusals

    def test_bad_psi_nodes_sort_is_refused_before_anything_starts(self):
        r = srun("-v", "-n", "2", MPI_HELLO, extra_env={"PSI_NODES_SORT": "busy"})
        self.assertRefused(r, "PSI_NODES_SORT 'busy': unknown sort criterion (accepted, in "
                              "any case: PROC, LOAD, LOAD_1, LOAD_5, LOAD_15, PROC+LOAD, NONE)")
        # Refused in slurm_spank_init: srun asked Slurm for nothing.
        self.assertNotIn("Granted job allocation", r.stderr)
        self.assertNotIn("launching", r.stderr)

    def test_psi_nodes_sort_load_5_is_refused(self):
        r = srun("-n", "2", MPI_HELLO, extra_env={"PSI_NODES_SORT": "LOAD_5"})
        self.assertRefused(r, "PSI_NODES_SORT=LOAD_5: the 5-minute load average of node n1 "
                              "is not known")

    def test_psi_hosts_outside_the_allocation_is_refused(self):
        r = run_as_user(["salloc", "-w", "n1,n2", "-n", "4", "srun", "-n", "2", MPI_HELLO],
                        extra_env={"PSI_HOSTS": "n1 n3"})
        self.assertRefused(r, "not included in the current allocation", "n3",
                           "using the PSI_HOSTS specification")

    def test_psi_variable_with_layout_option_is_refused(self):
        r = srun("-m", "cyclic", "-n", "2", MPI_HELLO, extra_env={"PSI_OVERBOOK": "1"})
        self.assertRefused(r, "-m lays the tasks out itself, and stepmap's placement "
                              "(PSI_OVERBOOK is set in the environment) decide")

    def test_omp_num_threads_alone_leaves_srun_untouched(self):
        r = srun("-n", "2", "-N", "2", "env", extra_env={"OMP_NUM_THREADS": "2"})
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertNotIn("SLURM_STEPMAP_PLAN", r.stdout)


if __name__ == "__main__":
    cluster.require_root()
    unittest.main(verbosity=2)
