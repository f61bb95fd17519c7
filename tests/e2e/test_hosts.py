"""End-to-end: what only a cluster of separate hosts shows (contrib/cluster
start.sh --network hosts): srun's hub on the login side's address and
inside SrunPortRange, the fence tree between the nodes' own addresses, and
Open MPI's transports over the nodes' real interfaces, UCX included, both
under stepmap and under Slurm's own mpi/pmix."""

import os
import re
import subprocess
import time
import unittest

import cluster
from cluster import MPI_EXCHANGE, MPI_HELLO, hello_ranks, require_root

HEAD_ADDRESS = "198.18.0.1"
# UCX over TCP: Open MPI 4.1's pml ucx opens only where UCX has one of the
# devices or transports it names (mlx*, rc/dc/ud verbs, cuda_ipc, ...);
# "any" lets it run over Ethernet, as on a cluster without InfiniBand.
UCX_ENV = {
    "OMPI_MCA_pml": "ucx",
    "OMPI_MCA_pml_ucx_tls": "any",
    "OMPI_MCA_pml_ucx_devices": "any",
    "UCX_TLS": "tcp,self,sm",
    "UCX_NET_DEVICES": "eth0",
}


def srun_port_range():
    """(first, last) of SrunPortRange in the cluster's slurm.conf."""
    with open(cluster.cluster_env()["SLURM_CONF"]) as f:
        m = re.search(r"^SrunPortRange=(\d+)-(\d+)$", f.read(), re.M)
    return (int(m.group(1)), int(m.group(2))) if m else None


def tcp_peers(node, command):
    """{(local port, peer address)} of the established TCP connections of
    processes named `command` on `node`, as `ss` there shows them."""
    out = subprocess.run(cluster.on_node(node, ["ss", "-tnpH", "state", "established"]),
                         stdout=subprocess.PIPE, text=True).stdout
    peers = set()
    for line in out.splitlines():
        if f'(("{command}"' not in line:
            continue
        fields = line.split()
        local, peer = fields[2], fields[3]
        peers.add((int(local.rsplit(":", 1)[1]), peer.rsplit(":", 1)[0]))
    return peers


class HostsTest(cluster.StepTestCase):
    @classmethod
    def setUpClass(cls):
        cluster.require_hosts_network()

    def test_the_hub_listens_on_the_login_address_inside_srun_port_range(self):
        r = cluster.srun("-v", "-N", "2", "-n", "2", "--map-by", "node", MPI_HELLO)
        self.assertEqual(r.returncode, 0, r.stderr)
        m = re.search(r"stepmap: rendezvous of step \S+ at (\S+):(\d+)", r.stderr)
        self.assertIsNotNone(m, r.stderr)
        self.assertEqual(m.group(1), HEAD_ADDRESS, "the address the nodes reach srun by")
        first, last = srun_port_range()
        self.assertTrue(first <= int(m.group(2)) <= last, f"{m.group(2)} not in {first}-{last}")

    def test_the_fence_tree_links_the_nodes_servers_directly(self):
        # While the ranks sleep, n1's server (the tree's root) holds one
        # connection from each other node's address on the port it logged.
        proc = subprocess.Popen(
            ["runuser", "-u", cluster.TEST_USER, "--", "env"] +
            [f"{k}={v}" for k, v in {**cluster.cluster_env(), **cluster.OMPI_ENV}.items()] +
            ["srun", "-N", "4", "-n", "4", "--map-by", "node", "sh", "-c",
             f"sleep 4; exec {MPI_HELLO}"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd="/tmp")
        try:
            children = {cluster.node_address(n) for n in ("n2", "n3", "n4")}
            seen = set()
            deadline = time.monotonic() + 20
            while time.monotonic() < deadline and not children <= seen:
                seen = {peer for _port, peer in tcp_peers("n1", "stepmap-stepd")}
                time.sleep(0.1)
            out, err = proc.communicate(timeout=60)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        self.assertEqual(proc.returncode, 0, err)
        ranks = hello_ranks(out)
        self.assertEqual(len(ranks), 4, out + err)
        self.assertLessEqual(children, seen, "n1's server's peers")
        logs = cluster.server_logs(ranks[0][2])
        m = re.search(r"taking its fence tree children on port (\d+)", logs.get("n1", ""))
        self.assertIsNotNone(m, logs.get("n1"))
        for node in ("n2", "n3", "n4"):
            self.assertNotIn("through srun's hub", logs.get(node, ""), node)

    def test_direct_modex_goes_server_to_server_not_through_srun(self):
        # --modex=async: every rank fetches the others' endpoints at first
        # contact. Each server asks the owner's server on the port that one
        # logged, over the nodes' own addresses; srun routes none of it.
        r = cluster.srun("-v", "-N", "4", "-n", "8", "--map-by", "node", "--modex=async",
                         MPI_EXCHANGE, "alltoall", timeout=120)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertEqual(r.stdout.count(" alltoall ok"), 8, r.stdout + r.stderr)
        m = re.search(r"exchange \(4 of 4 node servers reported.*?(\d+) direct modex "
                      r"\(\d+ local, (\d+) remote\), (\d+) answered for other nodes", r.stderr)
        self.assertIsNotNone(m, r.stderr)
        self.assertGreaterEqual(int(m.group(2)), 4, "remote direct modex")
        self.assertEqual(m.group(2), m.group(3), "every remote request answered once")
        self.assertIn("srun's rendezvous: 0 direct-modex request(s) routed through srun",
                      r.stderr)
        self.assertEqual(cluster.leftovers(), [])

    def exchange_with(self, env, *launch):
        r = cluster.srun("-N", "2", "-n", "4", "--map-by", "node", *launch, MPI_EXCHANGE,
                         "alltoall", extra_env=env, timeout=120)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertEqual(r.stdout.count(" alltoall ok"), 4, r.stdout + r.stderr)
        return r

    def test_ucx_over_tcp_exchanges_its_addresses_through_stepmap(self):
        # pml ucx (forced: it fails rather than fall back to ob1) between
        # two nodes, its workers' addresses exchanged in the fence and, with
        # --modex=async, fetched at first contact.
        for modex in ("fence", "async"):
            with self.subTest(modex=modex):
                self.exchange_with(UCX_ENV, f"--modex={modex}")

    def test_ucx_over_tcp_runs_under_slurms_mpi_pmix_too(self):
        # The peer: the same program and transport without stepmap.
        r = cluster.srun("-N", "2", "-n", "4", "--mpi=pmix", MPI_EXCHANGE, "alltoall",
                         extra_env=UCX_ENV, timeout=120)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertEqual(r.stdout.count(" alltoall ok"), 4, r.stdout + r.stderr)
        self.assertEqual(cluster.leftovers(), [])

    def test_ob1_uses_shared_memory_inside_a_node_and_tcp_between(self):
        # Each node has its own /dev/shm now: vader (sm) works between a
        # node's ranks, which it could not when the nodes shared one host.
        self.exchange_with({"OMPI_MCA_btl": "self,vader,tcp"})


if __name__ == "__main__":
    require_root()
    unittest.main(verbosity=2)
