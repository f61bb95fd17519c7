"""What the step's PMIx servers tell processes about the hardware, checked
from inside real cgroup-constrained steps: the step's own topology through
hwloc shared memory and XML, locality, device distances, and the locality
Open MPI derives from it."""

import os
import re
import unittest
from collections import defaultdict

import cluster
from cluster import MPI_HELLO, PMIX_CLIENT, hello_ranks, leftovers, run_as_user, srun


def client_facts(stdout):
    """{rank: {key: value}} from pmix_topo_client; peer_locality as a dict."""
    facts = defaultdict(lambda: {"peer_locality": {}})
    for line in stdout.splitlines():
        m = re.match(r"^rank (\d+) (\S+) ?(.*)$", line)
        if not m:
            continue
        rank, key, value = int(m.group(1)), m.group(2), m.group(3)
        if key == "peer_locality":
            peer, loc = value.split(" ", 1)
            facts[rank]["peer_locality"][int(peer)] = loc
        else:
            facts[rank][key] = value
    return dict(facts)


cpus = cluster.cpu_set


class TopologyTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cluster.start_cluster()

    def tearDown(self):
        self.assertEqual(leftovers(), [], "a step left processes or files behind")

    def test_step_topology_from_shared_memory(self):
        # n2 holds two ranks (two cores of the step), n3 one (one core): each
        # process must see exactly its step's CPUs on its node, not the machine.
        # -c 1: each step takes its tasks' CPUs only (the job may hold more).
        r = srun("-n", "3", "-c", "1", "--host", "n2:2,n3", PMIX_CLIENT)
        self.assertEqual(r.returncode, 0, r.stderr)
        facts = client_facts(r.stdout)
        self.assertEqual(sorted(facts), [0, 1, 2], r.stdout)
        for rank, f in facts.items():
            with self.subTest(rank=rank):
                self.assertTrue(f["nspace"].startswith("stepmap."))
                self.assertEqual(f["shmem"], "adopted")
                self.assertEqual(cpus(f["topo_pus"]), cpus(f["cgroup"]))
                # Unbound (no --bind-to yet): the process may use the whole
                # step cpuset here, and is told it is not bound.
                self.assertEqual(cpus(f["allowed"]), cpus(f["cgroup"]))
                self.assertEqual(f["cpuset"], "none")
                self.assertGreater(int(f["xml_v2"]), 0)
                self.assertGreater(int(f["xml_v1"]), 0)
                self.assertRegex(f["locality"], r"^SK\d")
                self.assertGreaterEqual(int(f["distances"]), 0)
        self.assertEqual(len(cpus(facts[2]["topo_pus"])), 1)
        self.assertEqual(len(cpus(facts[0]["topo_pus"])), min(2, os.cpu_count()))
        # Local peers and their locality: ranks 0 and 1 share n2.
        self.assertEqual(sorted(facts[0]["peer_locality"]), [0, 1])
        self.assertEqual(sorted(facts[2]["peer_locality"]), [2])
        for loc in facts[0]["peer_locality"].values():
            self.assertRegex(loc, r"^SK\d")

    def test_bind_to_core_is_enforced_and_reported(self):
        # Inside an allocation (2 CPUs on each of 4 nodes): each rank bound
        # to one core; its affinity, PMIX_CPUSET and the job map all agree.
        r = run_as_user(["salloc", "-N", "4", "-n", "8", "srun", "-n", "8", "--map-by", "core",
                         "--bind-to", "core", "--display-map", PMIX_CLIENT])
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("Mapping policy: BYCORE", r.stderr)
        bound = re.findall(r"Process rank: (\d+) Bound: package\[0\]\[core:L(\d+)\]", r.stderr)
        self.assertEqual(len(bound), 8, r.stderr)
        facts = client_facts(r.stdout)
        self.assertEqual(sorted(facts), list(range(8)))
        for rank, core in bound:
            f = facts[int(rank)]
            with self.subTest(rank=rank):
                self.assertEqual(cpus(f["allowed"]), {int(core)})
                self.assertEqual(f["cpuset"], f"hwloc:{core}")
                self.assertRegex(f["locality"], rf"CR{core}(:|$)")

    def test_open_mpi_reports_the_planned_binding(self):
        r = run_as_user(["salloc", "-N", "2", "-n", "4", "srun", "-n", "4", "--map-by", "core",
                         "--bind-to", "core", MPI_HELLO],
                        extra_env={"OMPI_MCA_hwloc_base_report_bindings": "1"})
        self.assertEqual(r.returncode, 0, r.stderr)
        reported = dict(re.findall(r"MCW rank (\d+) bound to socket 0\[core (\d+)\[hwt 0\]\]:",
                                   r.stderr))
        # map-by core fills n1's cores 0,1 then n2's: ranks 0,2 on core 0.
        self.assertEqual(reported, {"0": "0", "1": "1", "2": "0", "3": "1"}, r.stderr)

    def test_bind_to_none_leaves_the_cgroup(self):
        r = run_as_user(["salloc", "-N", "4", "-n", "8", "srun", "-n", "4", "--map-by", "core",
                         "--bind-to", "none", PMIX_CLIENT])
        self.assertEqual(r.returncode, 0, r.stderr)
        for rank, f in client_facts(r.stdout).items():
            self.assertEqual(f["cpuset"], "none")
            self.assertEqual(cpus(f["allowed"]), cpus(f["cgroup"]))

    def test_open_mpi_shared_memory_groups_are_nodes(self):
        r = srun("-n", "6", "--map-by", "node", MPI_HELLO)
        self.assertEqual(r.returncode, 0, r.stderr)
        ranks = hello_ranks(r.stdout)
        per_node = defaultdict(int)
        for node, *_ in ranks.values():
            per_node[node] += 1
        self.assertEqual(dict(per_node), {"n1": 2, "n2": 2, "n3": 1, "n4": 1})
        for rank, (node, _size, _ns, _sum, shared) in ranks.items():
            self.assertEqual(shared, per_node[node], f"rank {rank} on {node}")


if __name__ == "__main__":
    cluster.require_root()
    unittest.main(verbosity=2)
