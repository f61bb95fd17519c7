"""Job maps of the two planners as comparable values.

A map is {rank: (node, app, binding)}, or a refusal. Bindings are compared
at the grain PRRTE prints them, which depends on the node's topology
(PRRTE's prte_hwloc_base_cset2str): cores by logical index, or PUs by OS
index when the job counts hardware threads as CPUs or every core has one PU.
stepmap-plan's JSON gives every rank's OS PU set; `Topology` turns either
side into the same form.
"""

import json
import re
import subprocess


class Topology:
    """The cores and PUs of one hwloc XML file as hwloc's tools see it (the
    allowed, online PUs: those PRRTE maps onto)."""

    def __init__(self, path):
        self.path = path
        cores = int(self._calc("--number-of", "core", "all"))
        self.core_pus = []  # logical core index -> frozenset of PU OS indices
        for core in range(cores):
            text = self._calc("--physical-output", "--intersect", "pu", f"core:{core}")
            self.core_pus.append(frozenset(int(x) for x in text.split(",") if x))
        self.core_of_pu = {pu: core for core, pus in enumerate(self.core_pus) for pu in pus}
        self.all_pus = frozenset(self.core_of_pu)
        # PRRTE prints PU numbers where a core is one PU.
        self.one_pu_per_core = all(len(pus) == 1 for pus in self.core_pus)

    def _calc(self, *args):
        return subprocess.run(["hwloc-calc", "-i", self.path, *args], capture_output=True,
                              text=True, check=True).stdout.strip()

    def binding(self, pus, grain):
        """A canonical binding: 'UNBOUND', or (grain, sorted tuple), grain
        'core' (logical core indices) or 'pu' (PU OS indices)."""
        if pus is None or pus == self.all_pus:
            return "UNBOUND"
        if grain == "core":
            return ("core", tuple(sorted({self.core_of_pu.get(pu, -1) for pu in pus})))
        return ("pu", tuple(sorted(pus)))


def id_list(text):
    """'0-2,5' -> {0, 1, 2, 5}."""
    out = set()
    for part in text.split(","):
        if not part:
            continue
        if "-" in part:
            a, b = part.split("-")
            out.update(range(int(a), int(b) + 1))
        else:
            out.add(int(part))
    return out


class Refused:
    def __init__(self, message):
        self.message = message

    def __eq__(self, other):
        return isinstance(other, Refused)

    def __repr__(self):
        return f"refused: {self.message}"


class Hung:
    """A planner that did not finish: agrees with nothing."""

    def __init__(self, message):
        self.message = message

    def __repr__(self):
        return self.message


_PRRTE_SET = re.compile(r"package\[(\d+)\]\[(core|hwt):L([0-9,\-]+)\]")


def prrte_binding(text, topology):
    """PRRTE's 'Binding:' value as (canonical binding, grain)."""
    text = text.strip()
    if text == "UNBOUND":
        return "UNBOUND", None
    sets = _PRRTE_SET.findall(text)
    if not sets:
        raise ValueError(f"unreadable PRRTE binding {text!r}")
    kind = sets[0][1]
    ids = set()
    for _pkg, _kind, listing in sets:
        ids |= id_list(listing)
    if kind == "hwt" or topology.one_pu_per_core:
        # hwloc's bitmap list: PU OS indices.
        return topology.binding(frozenset(ids), "pu"), "pu"
    pus = frozenset(pu for core in ids for pu in topology.core_pus[core])
    return topology.binding(pus, "core"), "core"


def parse_prrte(result, topology):
    """mpirun --display map (PRRTE 3, Open MPI 5.0) -> ({rank: (node, app,
    binding)}, {rank: grain}) or Refused."""
    out = result.stdout
    if result.returncode != 0 or "JOB MAP" not in out:
        return Refused(_first_words(result.stderr + out)), {}
    ranks, grains = {}, {}
    node = rank = app = None
    for line in out.splitlines():
        m = re.match(r"^Data for node: (\S+)", line)
        if m:
            node = m.group(1)
            continue
        m = re.match(r"^\s*Data for proc: \[[^,\]]+,(\d+)\]", line)
        if m:
            rank = int(m.group(1))
            continue
        m = re.search(r"App_context: (\d+)", line)
        if m:
            app = int(m.group(1))
            continue
        m = re.match(r"^\s*Binding: (.*)$", line)
        if m and rank is not None:
            binding, grain = prrte_binding(m.group(1), topology)
            ranks[rank] = (node, app, binding)
            grains[rank] = grain
            rank = None
    return ranks, grains


def parse_stepmap(result, topology, grains):
    """stepmap-plan --output json -> {rank: (node, app, binding)} or Refused;
    bindings at the grain PRRTE printed each rank's (cores where it
    printed none)."""
    if result.returncode != 0:
        return Refused(_first_words(result.stderr))
    plan = json.loads(result.stdout)
    ranks = {}
    for r in plan["ranks"]:
        os_set = r.get("cpuset_os")
        pus = None if os_set is None else frozenset(id_list(os_set))
        grain = grains.get(r["rank"]) or ("pu" if topology.one_pu_per_core else "core")
        ranks[r["rank"]] = (r["node"], r["app"], topology.binding(pus, grain))
    return ranks


def _first_words(text):
    lines = [l.strip() for l in text.splitlines()
             if l.strip() and not set(l.strip()) <= set("-=") and not l.startswith("srun:")]
    return " ".join(lines)[:300]


def describe(binding):
    if binding == "UNBOUND":
        return "unbound"
    grain, ids = binding
    if not ids:
        return grain + " -"
    parts, start, prev = [], ids[0], ids[0]
    for i in list(ids[1:]) + [None]:
        if i is not None and i == prev + 1:
            prev = i
            continue
        parts.append(f"{start}" if start == prev else f"{start}-{prev}")
        if i is not None:
            start = prev = i
    return f"{grain} {','.join(parts)}"


def difference(prrte, stepmap):
    """None when the two agree, else a line saying how they differ."""
    if isinstance(prrte, Hung) or isinstance(stepmap, Hung):
        return f"{prrte if isinstance(prrte, Hung) else stepmap}"
    if isinstance(prrte, Refused) or isinstance(stepmap, Refused):
        if isinstance(prrte, Refused) and isinstance(stepmap, Refused):
            return None
        if isinstance(prrte, Refused):
            return f"PRRTE refuses ({prrte.message}); stepmap maps {len(stepmap)} ranks"
        return f"stepmap refuses ({stepmap.message}); PRRTE maps {len(prrte)} ranks"
    if sorted(prrte) != sorted(stepmap):
        return f"PRRTE maps {len(prrte)} ranks, stepmap {len(stepmap)}"
    nodes = [r for r in sorted(prrte) if prrte[r][:2] != stepmap[r][:2]]
    if nodes:
        r = nodes[0]
        return (f"{len(nodes)} ranks on other nodes/apps; rank {r}: PRRTE {prrte[r][0]} app "
                f"{prrte[r][1]}, stepmap {stepmap[r][0]} app {stepmap[r][1]}")
    cpus = [r for r in sorted(prrte) if prrte[r][2] != stepmap[r][2]]
    if cpus:
        r = cpus[0]
        return (f"{len(cpus)} ranks bound differently; rank {r}: PRRTE {describe(prrte[r][2])}, "
                f"stepmap {describe(stepmap[r][2])}")
    return None


def side_by_side(prrte, stepmap):
    """Both maps, a line per rank, for a person comparing them."""
    def cell(m, r):
        if not isinstance(m, dict):
            return str(m) if r == 0 else ""
        if r not in m:
            return "-"
        node, app, binding = m[r]
        return f"{node} app {app} {describe(binding)}"
    count = max([len(m) for m in (prrte, stepmap) if isinstance(m, dict)] + [1])
    lines = [f"    {'rank':>5}  {'PRRTE':<44} stepmap"]
    for r in range(count):
        a, b = cell(prrte, r), cell(stepmap, r)
        lines.append(f"    {r:>5}  {a:<44} {b}{'' if a == b else '   <<'}")
    return "\n".join(lines)
