#!/usr/bin/env python3
"""stepmap-plan end to end: runs the built CLI and compares what it prints.

usage: cli_test.py STEPMAP_PLAN [PRRTE_OFFLINE_DIR]

The PRRTE golden comparisons read tests/fixtures/prrte-offline; a missing
golden fails. Job maps are normalised as
tests/conformance does: the job id becomes "prterun-JOBID@N" and the slot
total "N".
"""

import json
import os
import re
import stat
import subprocess
import sys
import tempfile
import threading

from cli_checks import check, failures

EXE = sys.argv[1]
PRRTE = sys.argv[2] if len(sys.argv) > 2 else os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "fixtures", "prrte-offline")


def run(args, env=None, timeout=60):
    full_env = {k: v for k, v in os.environ.items() if not k.startswith("SLURM_")}
    full_env.update(env or {})
    return subprocess.run([EXE] + args, capture_output=True, text=True, env=full_env,
                          timeout=timeout, errors="backslashreplace")


def normalise(text):
    text = re.sub(r"Total slots allocated \d+", "Total slots allocated N", text)
    return text.replace("JOB N/A offset", "JOB prterun-JOBID@N offset").replace(
        "jobid: N/A", "jobid: prterun-JOBID@N")


def without_bindings(text):
    return re.sub(r" Bound: .*", "", text)


def golden(name, golden_path, args, bindings=True):
    """stepmap-plan prints the golden; bindings=False: but for the bound
    CPUs (a golden of the newer PRRTE where Open MPI 5.0's mpirun binds to
    the whole object, tests/conformance/prrte_offline_test.cpp)."""
    path = os.path.join(PRRTE, golden_path)
    if not os.path.exists(path):
        check(name, False, "no golden " + path)
        return
    res = run(args)
    with open(path) as f:
        want = f.read()
    got = normalise(res.stdout)
    if not bindings:
        want, got = without_bindings(want), without_bindings(got)
    check(name, res.returncode == 0 and got == want,
          "--- golden\n" + want + "--- stepmap-plan (rc %d)\n" % res.returncode + got +
          res.stderr)


def ranks_json(args, env=None):
    res = run(args, env)
    if res.returncode != 0:
        return None, res
    return json.loads(res.stdout)["ranks"], res


def refused(name, args, message, status=None, timeout=60):
    try:
        res = run(args, timeout=timeout)
    except subprocess.TimeoutExpired:
        check(name, False, "still running after %d s" % timeout)
        return
    ok = res.returncode != 0 and res.stderr.startswith("stepmap-plan: ") and message in res.stderr
    if status is not None:
        ok = ok and res.returncode == status
    check(name, ok, "rc %d, stderr: %s" % (res.returncode, res.stderr[:2000]))
    return res


with tempfile.TemporaryDirectory() as tmp:
    alloc = os.path.join(tmp, "alloc")
    with open(alloc, "w") as f:
        f.write("node0 slots=8\nnode1 slots=8\nnode2 slots=8\n")
    topo = os.path.join(PRRTE, "topologies/test-topo.xml")

    # (a) PRRTE's own job map, from an allocation file and its topology.
    golden("golden core/fill/core n7",
           "golden/test-topo/matrix.test-topo.even.m-core.r-fill.b-core.n7.map",
           ["--allocation", alloc, "--topology", topo, "-n", "7", "--map-by", "core",
            "--rank-by", "fill", "--bind-to", "core"])

    # (b) Slurm-syntax allocation, map-by node, JSON.
    ranks, res = ranks_json(["--nodes", "n[1-4]", "--cpus", "2(x4)", "-n", "6", "--map-by",
                             "node", "--output", "json"])
    check("json map-by node", ranks is not None and
          [r["node"] for r in ranks] == ["n1", "n2", "n3", "n4", "n1", "n2"], res.stdout + res.stderr)

    # (c) bad input: non-zero exit, a message naming the input.
    refused("unknown --map-by", ["--nodes", "n[1-4]", "--cpus", "2(x4)", "--map-by", "bogus"],
            "unknown mapping policy 'bogus'", 2)
    refused("host outside the allocation",
            ["--nodes", "n[1-4]", "--cpus", "2(x4)", "--host", "zz"],
            "not included in the current allocation", 1)
    refused("missing allocation file", ["--allocation", os.path.join(tmp, "nope")],
            "cannot read --allocation", 2)
    refused("missing hostfile", ["--nodes", "n1", "--cpus", "2", "--hostfile",
                                 os.path.join(tmp, "nope")], "cannot read --hostfile", 2)
    refused("unknown option", ["--nodes", "n1", "--cpus", "2", "--frobnicate"],
            "unknown argument '--frobnicate'", 2)
    refused("no allocation", [], "no allocation", 2)
    refused("nodes-sort needs Slurm", ["--nodes", "n1", "--cpus", "2", "--nodes-sort", "load"],
            "--nodes-sort NONE", 2)
    refused("cpus without nodes", ["--cpus", "2"], "--cpus needs --nodes", 2)
    refused("bad --slurm-shape", ["--nodes", "n1", "--cpus", "2", "--slurm-shape", "2:x:1",
                                  "--map-by", "core"], "--slurm-shape '2:x:1'", 2)
    refused("global option after ':'", ["--nodes", "n1", "--cpus", "2", "-n", "1", ":",
                                        "--host", "n1"], "before the first ':'", 2)
    refused("too many ranks", ["--nodes", "n1", "--cpus", "2", "-n", "3"], "", 1)

    # (d) MPMD: a job-level policy shared by two contexts, and per-app maps.
    golden("golden MPMD job-level policy", "golden/test-topo/group.test-topo.multiapp.map",
           ["--allocation", alloc, "--topology", topo, "--map-by", "core", "--rank-by", "slot",
            "--bind-to", "core", "-n", "2", ":", "-n", "3"])
    golden("golden MPMD per-app binding", "golden/test-topo/perapp.test-topo.bind.numa-core.map",
           ["--allocation", alloc, "--topology", topo, "-n", "2", "--map-by", "numa",
            "--bind-to", "numa", ":", "-n", "2", "--map-by", "core", "--bind-to", "core"])
    golden("golden MPMD per-app maps (--always-hardware)",
           "golden/test-topo/perapp.test-topo.map.node-slot.map",
           ["--allocation", alloc, "--topology", topo, "--always-hardware", "-n", "3",
            "--map-by", "node", ":", "-n", "3", "--map-by", "slot"], bindings=False)
    ranks, res = ranks_json(["--nodes", "n[1-3]", "--cpus", "4(x3)", "--output", "json", "-n", "2",
                             "--map-by", "slot", ":", "-n", "3", "--map-by", "node"])
    check("MPMD json", ranks is not None and
          [(r["node"], r["app"]) for r in ranks] ==
          [("n1", 0), ("n1", 0), ("n1", 1), ("n2", 1), ("n3", 1)], res.stdout + res.stderr)

    # Slurm shape, bindings as logical lists and masks.
    res = run(["--nodes", "n1", "--cpus", "4", "--slurm-shape", "2:2:1", "-n", "2", "--map-by",
               "core", "--bind-to", "core", "--bindings", "mask"])
    check("mask bindings", res.returncode == 0 and "Bound: [B/.][./.]" in res.stdout,
          res.stdout + res.stderr)
    res = run(["--nodes", "n1", "--cpus", "4", "--synthetic", "package:1 core:4 pu:2", "-n", "2",
               "--map-by", "core", "--bind-to", "core", "--bindings", "logical"])
    check("logical bindings", res.returncode == 0 and "Bound: L2-3" in res.stdout,
          res.stdout + res.stderr)

    # Slurm's environment is the default allocation.
    ranks, res = ranks_json(["--output", "json", "--map-by", "node"],
                            {"SLURM_JOB_NODELIST": "c[1-2]", "SLURM_JOB_CPUS_PER_NODE": "2(x2)"})
    check("Slurm environment", ranks is not None and
          [r["node"] for r in ranks] == ["c1", "c2", "c1", "c2"], res.stdout + res.stderr)

    # --job: a fake scontrol in PATH; its CPU ids give the slots and restrict the nodes.
    bindir = os.path.join(tmp, "bin")
    os.mkdir(bindir)
    fake = os.path.join(bindir, "scontrol")
    with open(fake, "w") as f:
        f.write("""#!/bin/sh
[ "$4" = 42 ] || { echo "slurm_load_jobs error: Invalid job id specified"; exit 1; }
cat <<'OUT'
JobId=42 JobName=demo
   JobState=RUNNING Reason=None Dependency=(null)
   ReqNodeList=(null) ExcNodeList=(null)
   NodeList=k[1-2]
   NumNodes=2 NumCPUs=6 NumTasks=6 CPUs/Task=1 ReqB:S:C:T=0:0:*:*
     Nodes=k1 CPU_IDs=0-3 Mem=0 GRES=
     Nodes=k2 CPU_IDs=2-3 Mem=0 GRES=
OUT
""")
    os.chmod(fake, os.stat(fake).st_mode | stat.S_IXUSR)
    path_env = {"PATH": bindir + os.pathsep + os.environ.get("PATH", "")}
    ranks, res = ranks_json(["--job", "42", "--slurm-shape", "1:4:1", "--map-by", "core",
                             "--bind-to", "core", "--output", "json"], path_env)
    check("--job via scontrol", ranks is not None and
          [(r["node"], r["cpuset_logical"]) for r in ranks] ==
          [("k1", "0"), ("k1", "1"), ("k1", "2"), ("k1", "3"), ("k2", "2"), ("k2", "3")],
          res.stdout + res.stderr)
    res = run(["--job", "43"], path_env)
    check("--job unknown id", res.returncode == 2 and "Invalid job id" in res.stderr, res.stderr)

    # Bounded, clear inputs (issue 7). A file past the cap (sparse: it costs
    # no disk) is refused after reading the cap.
    nodes = ["--nodes", "n[1-2]", "--cpus", "2(x2)"]
    big = os.path.join(tmp, "big")
    with open(big, "w") as f:
        f.truncate((16 << 20) + 1)
    too_large = "is larger than 16 MiB, the most stepmap reads of a file"
    for option, args in [
            ("--hostfile", nodes + ["--hostfile", big]),
            ("--allocation", ["--allocation", big]),
            ("seq file", nodes + ["--map-by", f"seq:FILE={big}"]),
            ("rankfile", nodes + ["--map-by", f"rankfile:FILE={big}"])]:
        refused(option + " past 16 MiB stops at the cap", args, too_large, 2, timeout=20)
    huge = os.path.join(tmp, "huge")
    with open(huge, "w") as f:
        f.truncate((64 << 20) + 1)
    refused("--topology past 64 MiB stops at the cap",
            nodes + ["--topology", huge, "--map-by", "core"],
            "is larger than 64 MiB, the most stepmap reads of a file", 2, timeout=20)

    # A FIFO (what --hostfile <(cmd) gives) is read to its writer's end.
    fifo = os.path.join(tmp, "fifo")
    os.mkfifo(fifo)

    def feed():
        with open(fifo, "w") as f:
            f.write("n2 slots=1\n")
    writer = threading.Thread(target=feed)
    writer.start()
    ranks, res = ranks_json(nodes + ["--hostfile", fifo, "--output", "json"])
    writer.join()
    check("--hostfile FIFO", ranks is not None and [r["node"] for r in ranks] == ["n2"],
          res.stdout + res.stderr)
    # A FIFO nobody writes to is refused at its deadline (open() of it used
    # to wait for a writer forever); a device, which may never end, and a
    # directory at once; each naming the file and what to give instead.
    not_regular = ", not a regular file; name a regular file, or a command's output as <(command)"
    no_writer = ("it is a FIFO and nothing wrote to it within 5 s; name a regular file, or a "
                 "command's output as <(command)")
    for option, args, message in [
            ("--hostfile /dev/zero", nodes + ["--hostfile", "/dev/zero"],
             "cannot read --hostfile '/dev/zero': it is a character device" + not_regular),
            ("--allocation /dev/urandom", ["--allocation", "/dev/urandom"],
             "it is a character device" + not_regular),
            ("seq file /dev/zero", nodes + ["--map-by", "seq:FILE=/dev/zero"],
             "it is a character device" + not_regular),
            ("--topology /dev/zero", nodes + ["--topology", "/dev/zero", "--map-by", "core"],
             "--topology '/dev/zero': cannot read the file: it is a character device" +
             not_regular),
            ("--hostfile FIFO without a writer", nodes + ["--hostfile", fifo],
             f"cannot read --hostfile '{fifo}': " + no_writer),
            ("rankfile FIFO without a writer", nodes + ["--map-by", f"rankfile:FILE={fifo}"],
             no_writer),
            ("--hostfile directory", nodes + ["--hostfile", tmp],
             f"cannot read --hostfile '{tmp}': it is a directory" + not_regular)]:
        refused(option + " is refused", args, message, 2, timeout=20)

    # Work that would take minutes or gigabytes is refused before it starts.
    refused("--synthetic larger than a node",
            nodes + ["--synthetic", "package:100000 core:100000 pu:100000", "--map-by", "core"],
            "--synthetic 'package:100000 core:100000 pu:100000': a node of more than 65536 PUs",
            2, timeout=20)
    refused("--slurm-shape larger than a node",
            nodes + ["--slurm-shape", "99999999999:1:1", "--map-by", "core"],
            "--slurm-shape '99999999999:1:1': a node of more than 65536 CPUs", 2, timeout=20)
    refused("ppr count above the process limit",
            nodes + ["--map-by", "ppr:1000000000:node:OVERSUBSCRIBE"],
            "the ppr count '1000000000' is above 16777216, the most processes stepmap places",
            2, timeout=20)
    refused("ppr pattern above the process limit",
            nodes + ["--map-by", "ppr:16000000:node:OVERSUBSCRIBE"],
            "--map-by ppr:16000000:node: the pattern asks for more than 16777216 processes on "
            "the 2 nodes", 1, timeout=20)

    # A ppr object no node has: refused, not an empty plan (exit 0, no rank).
    refused("ppr on an object no node has",
            nodes + ["--synthetic", "package:2 core:2 pu:1", "--map-by", "ppr:1:l3cache"],
            "--map-by ppr:1:l3cache: node n1 has no l3cache among the CPUs the job holds there",
            1, timeout=20)

    res = refused("pe-list naming more CPUs than a node has",
                  nodes + ["--synthetic", "core:2 pu:1", "--map-by",
                           "pe-list=" + ",".join(["0-16777215"] * 40)],
                  "names more than 65536 CPUs, the most stepmap takes for a node", 1, timeout=20)
    check("pe-list message is short", res is not None and len(res.stderr) < 600,
          str(len(res.stderr)) if res else "")

    # Numbers too large for their field say the limit.
    for name, args, message in [
            ("-n", ["-n", "2147483648"],
             "process count '2147483648': stepmap places at most 16777216 processes"),
            ("--host N", ["--host", "n1:99999999999999"],
             "the slot count is above 16777216, the most processes stepmap places"),
            ("--tpp", ["--tpp", "99999999999"],
             "--tpp '99999999999': at most 65535 hardware threads per process"),
            ("PE=", ["--map-by", "slot:PE=99999999999"],
             "PE is above 65536, the most CPUs stepmap takes for a node"),
            ("ppr", ["--map-by", "ppr:99999999999:node"],
             "the ppr count '99999999999' is above 16777216")]:
        refused("too large: " + name, nodes + args, message, 2)

    # Empty MPMD contexts, and --overbook with node:OVERSUBSCRIBE.
    refused("empty trailing context", nodes + ["-n", "1", ":"],
            "application context 1 is empty (nothing after ':' number 1): give each context at "
            "least -n N (e.g. -n 2 : -n 3), or remove the extra ':'", 2)
    refused("only colons", nodes + [":", ":", ":"],
            "application context 0 is empty (nothing before the first ':')", 2)
    refused("--overbook with node:OVERSUBSCRIBE",
            nodes + ["--overbook", "--map-by", "node:OVERSUBSCRIBE"], "Drop --overbook.", 1)

    # A host's slots= given twice, as PRRTE refuses it.
    twice = os.path.join(tmp, "twice")
    with open(twice, "w") as f:
        f.write("n1 slots=1\nn1 slots=1\n")
    refused("hostfile slots= twice", nodes + ["--hostfile", twice, "-n", "2"],
            "line 2: host n1 is listed again with slots= (first on line 1)", 2)

    # File contents are shown escaped: a NUL does not cut the message, and no
    # control character or invalid UTF-8 reaches the terminal.
    nul = os.path.join(tmp, "nul")
    with open(nul, "wb") as f:
        f.write(b"n1\x00bad slots=1\n")
    refused("NUL in a hostfile", nodes + ["--hostfile", nul],
            "invalid hostlist 'n1\\x00bad': invalid character '\\x00'", 2)
    raw = os.path.join(tmp, "raw")
    with open(raw, "wb") as f:
        f.write(b"n\x1b[31mred\xff\xfe slots=1\n")
    res = refused("escapes and bad UTF-8 in a hostfile", nodes + ["--hostfile", raw],
                  "invalid hostlist 'n\\x1b[31mred\\xff\\xfe'", 2)
    check("no raw control characters", res is not None and "\x1b" not in res.stderr,
          res.stderr if res else "")

    # A message listing bad hosts shows the first few and a count.
    res = refused("many hosts outside the allocation", nodes + ["--host", "m[1-100000]"],
                  "The requested hosts were:\n  m1,m2,m3,m4,m5 and 99995 more\n", 1)
    check("short message", res is not None and len(res.stderr) < 400, str(len(res.stderr)))

    res = run(["--help"])
    check("--help", res.returncode == 0 and res.stdout.startswith("usage: stepmap-plan"))
    check("--help names --site", "--site FILE" in res.stdout, res.stdout)

    # --site: the site policy file, applied as srun applies it (readSitePolicy
    # refuses files others may write: each is written 0644).
    def site_file(name, text, mode=0o644):
        path = os.path.join(tmp, name)
        with open(path, "w") as f:
            f.write(text)
        os.chmod(path, mode)
        return path

    def node_order(args):
        ranks, res = ranks_json(nodes + ["--output", "json"] + args)
        return ([r["node"] for r in ranks] if ranks is not None else None), res

    by_node = site_file("by-node.yaml", "defaults: {map_by: node}\n")
    plain, res = node_order(["-n", "4"])
    check("without --site: by slot", plain == ["n1", "n1", "n2", "n2"], res.stdout + res.stderr)
    sited, res = node_order(["--site", by_node, "-n", "4"])
    check("--site defaults.map_by changes the plan", sited == ["n1", "n2", "n1", "n2"],
          res.stdout + res.stderr)
    sited, res = node_order(["--site", by_node, "-n", "4", "--map-by", "slot"])
    check("--site: the command line's --map-by wins", sited == ["n1", "n1", "n2", "n2"],
          res.stdout + res.stderr)
    # MPMD: a directive given nowhere takes the site's for the whole job; one
    # given only in the first context is the user's for the whole job.
    ranks, res = ranks_json(nodes + ["--output", "json", "--site", by_node, "-n", "2", ":", "-n",
                                     "2"])
    check("--site MPMD: the default is the job's", ranks is not None and
          [(r["node"], r["app"]) for r in ranks] == [("n1", 0), ("n2", 0), ("n1", 1), ("n2", 1)],
          res.stdout + res.stderr)
    ranks, res = ranks_json(nodes + ["--output", "json", "--site", by_node, "-n", "2", "--map-by",
                                     "slot", ":", "-n", "2"])
    check("--site MPMD: the first context's --map-by is the job's", ranks is not None and
          [(r["node"], r["app"]) for r in ranks] == [("n1", 0), ("n1", 0), ("n2", 1), ("n2", 1)],
          res.stdout + res.stderr)
    # ParaStation placement keeps the site's defaults out, as in srun.
    sited, res = node_order(["--site", by_node, "-n", "4", "--tpp", "1"])
    check("--site: --tpp keeps the defaults out", sited == plain, res.stdout + res.stderr)
    # A refused plan that used a default names it and the file.
    refused("--site default named in a refusal", nodes + ["--site", by_node, "-n", "5"],
            "(--map-by node: this cluster's default, from " + by_node +
            "; give the option to choose another)", 1)

    two = site_file("two.yaml", "limits:\n  ranks: 2\n")
    check("--site limits.ranks allows 2", node_order(["--site", two, "-n", "2"])[0] is not None)
    refused("--site limits.ranks refuses -n 3", nodes + ["--site", two, "-n", "3"],
            "the plan has 3 ranks; this cluster allows at most 2 in a step (limits.ranks: 2 in " +
            two + "); run fewer ranks", 1)
    no_over = site_file("no-over.yaml", "allow:\n  oversubscribe: false\n")
    check("oversubscribed without --site",
          node_order(["-n", "6", "--map-by", "slot:OVERSUBSCRIBE"])[0] is not None)
    refused("--site allow.oversubscribe: false", nodes + ["--site", no_over, "-n", "6", "--map-by",
                                                         "slot:OVERSUBSCRIBE"],
            "does not allow oversubscribing (allow.oversubscribe: false in " + no_over + ")", 1)
    no_book = site_file("no-book.yaml", "allow: {overbook: false}\n")
    refused("--site allow.overbook: false", nodes + ["--site", no_book, "--overbook", "-n", "2"],
            "--overbook: this cluster does not allow overbooking (allow.overbook: false in " +
            no_book + ")", 1)

    broken = site_file("broken.yaml", "defaults:\n  map_by: bogus\n")
    refused("--site broken file: FILE:LINE: KEY", nodes + ["--site", broken],
            broken + ":2: defaults.map_by", 2)
    unknown = site_file("unknown.yaml", "serve: options\nlimits:\n  rank: 2\n")
    refused("--site unknown key", nodes + ["--site", unknown], unknown + ":3: limits.rank", 2)
    writable = site_file("writable.yaml", "defaults: {map_by: node}\n", 0o664)
    refused("--site group-writable file", nodes + ["--site", writable],
            "the site policy file is writable by", 2)
    refused("--site missing file", nodes + ["--site", os.path.join(tmp, "none.yaml")],
            os.path.join(tmp, "none.yaml"), 2)

sys.exit(1 if failures else 0)
