"""The generated cases: policies x modifiers x topologies x host specs x
process counts x bindings, in blocks that each vary what matters to one
part of the mapper (a full product would be millions). Deterministic: the
same list, in the same order, on every run.

A case is a value: its id names every input
("policy/test-topo2/even3/map=core/rank=fill/bind=-/np=3"), and the two
command lines are derived from it (prrte_live.py)."""

from dataclasses import dataclass, field

# Topology key -> hwloc XML under tests/fixtures.
TOPOLOGIES = {
    "test-topo2": "prrte-offline/topologies/test-topo2.xml",    # 1 package, 4 NUMA, 24 cores x 2 PUs
    "test-topo": "prrte-offline/topologies/test-topo.xml",      # 2 packages, 4 NUMA, 176 cores
    "2n6c2t": "topologies/24em64t-2n6c2t-pci.xml",               # 2 packages = 2 NUMA, 6 cores x 2 PUs
    "4n4d": "topologies/96em64t-4n4d3ca2co-pci.xml",             # 4 NUMA, 16 dies, 96 cores
    "power8": "topologies/power8gpudistances.xml",               # 2 packages, 8 cores x 2 PUs
    "offlines": "topologies/16em64t-4s2c2t-offlines.xml",        # offline PUs, uneven cores
    "cpusets": "topologies/16amd64-8n2c-cpusets.xml",            # restricted by a cpuset
    "knl": "topologies/64intel64-fakeKNL-SNC4-hybrid.xml",       # memory-only NUMA nodes
}


@dataclass(frozen=True)
class Hosts:
    """Where the job may run, as under Slurm: the allocation (Slurm's node
    list and CPUs per node, which are the slots) and the filters on it,
    --host and --hostfile."""
    nodelist: str             # SLURM_JOB_NODELIST
    cpus: str                 # SLURM_JOB_CPUS_PER_NODE (and SLURM_TASKS_PER_NODE)
    host: str = None          # --host
    hostfile: str = None      # the --hostfile's text

    def slots(self):
        """The allocation's slots in all."""
        total = 0
        for part in self.cpus.split(","):
            count, _, times = part.partition("(x")
            total += int(count) * (int(times.rstrip(")")) if times else 1)
        return total


HOSTS = {
    "even3": Hosts("n[1-3]", "4(x3)"),
    "uneven": Hosts("n[1-3]", "6,2,4"),
    "single": Hosts("n1", "8"),
    "host-two": Hosts("n[1-3]", "4(x3)", host="n2,n3"),
    "host-counts": Hosts("n[1-3]", "4(x3)", host="n3:3,n1:2"),
    "host-twice": Hosts("n[1-3]", "4(x3)", host="n2,n2,n3"),
    "host-over": Hosts("n[1-3]", "4(x3)", host="n2:6"),
    "hf-names": Hosts("n[1-3]", "4(x3)", hostfile="n3\nn1\n"),
    "hf-slots": Hosts("n[1-3]", "4(x3)", hostfile="n1 slots=2\nn3\n"),
    "hf-max": Hosts("n[1-3]", "4(x3)", hostfile="n1 slots=2 max_slots=3\nn3 max_slots=5\n"),
    "hf-host": Hosts("n[1-3]", "4(x3)", host="n3,n2", hostfile="n1\nn2\nn3\n"),
}


@dataclass(frozen=True)
class Case:
    block: str
    topology: str
    hosts: str
    nps: tuple                # one process count per application context (None: not given)
    map_by: str = None        # job-level directives (None: not given)
    rank_by: str = None
    bind_to: str = None

    @property
    def id(self):
        def word(v):
            return "-" if v is None else v
        return "/".join([self.block, self.topology, self.hosts, f"map={word(self.map_by)}",
                         f"rank={word(self.rank_by)}", f"bind={word(self.bind_to)}",
                         "np=" + ";".join(word(None if n is None else str(n)) for n in self.nps)])


def generate():
    """Every case."""
    cases = []

    def add(block, topology, hosts, nps, map_by=None, rank_by=None, bind_to=None):
        cases.append(Case(block, topology, hosts, tuple(nps), map_by, rank_by, bind_to))

    def total(_topology, hosts):
        return HOSTS[hosts].slots()

    object_maps = [None, "slot", "node", "core", "hwthread", "l2cache", "l3cache", "numa",
                   "package"]
    # Policies and ranking, default binding.
    for topology in ["test-topo2", "2n6c2t", "4n4d", "power8"]:
        for hosts in ["even3", "uneven"]:
            for map_by in object_maps:
                for rank_by in [None, "slot", "node", "fill", "span"]:
                    for np in [3, total(topology, hosts)]:
                        add("policy", topology, hosts, [np], map_by, rank_by)
    # Bindings on every topology.
    for topology in TOPOLOGIES:
        for map_by in [None, "slot", "node", "core", "hwthread", "numa", "package"]:
            for bind_to in [None, "none", "core", "hwthread", "l3cache", "numa", "package",
                            "core:overload-allowed"]:
                for np in [2, 7]:
                    add("bind", topology, "even3", [np], map_by, None, bind_to)
    # More processes than slots: refused, or spread past the slots.
    for topology in ["test-topo2", "2n6c2t"]:
        for hosts in ["even3", "uneven", "single", "hf-max", "host-counts"]:
            for base in [None, "slot", "node", "core", "hwthread", "numa", "package"]:
                for modifier in ["", ":OVERSUBSCRIBE", ":NOOVERSUBSCRIBE"]:
                    if base is None and not modifier:
                        map_by = None
                    else:
                        map_by = (base or "") + modifier
                    for extra in [1, 5]:
                        add("oversub", topology, hosts, [total(topology, hosts) + extra], map_by)
    # :SPAN over objects, and its ranking.
    for topology in ["test-topo2", "2n6c2t", "4n4d"]:
        for hosts in ["even3", "uneven"]:
            for obj in ["core", "numa", "package", "l3cache", "hwthread"]:
                for rank_by in [None, "span", "fill"]:
                    for np in [3, 7, total(topology, hosts)]:
                        add("span", topology, hosts, [np], obj + ":SPAN", rank_by)
    # ppr, PE=n and pe-list on every kind of node.
    for topology in ["test-topo2", "2n6c2t", "knl", "4n4d", "offlines", "cpusets"]:
        for map_by in ["ppr:1:node", "ppr:2:node", "ppr:1:package", "ppr:2:package",
                       "ppr:1:numa", "ppr:2:numa", "ppr:1:l3cache", "ppr:2:core",
                       "core:PE=2", "slot:PE=2", "numa:PE=3", "pe-list=0,1", "pe-list=1-3"]:
            for np in [None, 3, 4]:
                add("ppr-pe", topology, "even3", [np], map_by)
    # Several application contexts under one job-level policy.
    for topology in ["test-topo2", "2n6c2t"]:
        for map_by, rank_by, bind_to in [(None, None, None), ("node", None, None),
                                         ("slot", None, None), ("core", "fill", "core"),
                                         ("numa", "span", "core"), ("package", None, "none"),
                                         ("node:OVERSUBSCRIBE", None, None)]:
            for nps in [(2, 3), (1, 1, 1), (4, 5), (6, 9)]:
                add("mpmd", topology, "even3", nps, map_by, rank_by, bind_to)
    # --host and --hostfile filtering Slurm's allocation.
    for topology in ["2n6c2t", "offlines"]:
        for hosts in ["host-two", "host-counts", "host-twice", "host-over", "hf-names",
                      "hf-slots", "hf-max", "hf-host", "single"]:
            for map_by in [None, "slot", "node", "core"]:
                for np in [None, 2, 5]:
                    add("hosts", topology, hosts, [np], map_by)
    # Hardware threads as CPUs.
    for topology in ["test-topo2", "2n6c2t", "knl"]:
        for map_by in ["hwthread:HWTCPUS", "core:HWTCPUS", "slot:HWTCPUS", "numa:HWTCPUS"]:
            for bind_to in [None, "hwthread", "core"]:
                for np in [3, 9]:
                    add("hwtcpus", topology, "even3", [np], map_by, None, bind_to)
    return cases
