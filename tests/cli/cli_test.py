#!/usr/bin/env python3
"""stepmap-plan end to end: runs the built CLI and compares what it prints.

usage: cli_test.py STEPMAP_PLAN [PRRTE_OFFLINE_DIR]

The PRRTE golden comparisons need shared/conformance/prrte-offline; without
it they are skipped (the other checks still run). Job maps are normalised as
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

EXE = sys.argv[1]
PRRTE = sys.argv[2] if len(sys.argv) > 2 else "/work/shared/conformance/prrte-offline"
failures = []


def run(args, env=None):
    full_env = {k: v for k, v in os.environ.items() if not k.startswith("SLURM_")}
    full_env.update(env or {})
    return subprocess.run([EXE] + args, capture_output=True, text=True, env=full_env, timeout=60)


def check(name, ok, detail=""):
    print(("PASS " if ok else "FAIL ") + name)
    if not ok:
        failures.append(name)
        if detail:
            print(detail)


def normalise(text):
    text = re.sub(r"Total slots allocated \d+", "Total slots allocated N", text)
    return text.replace("JOB N/A offset", "JOB prterun-JOBID@N offset").replace(
        "jobid: N/A", "jobid: prterun-JOBID@N")


def golden(name, golden_path, args):
    path = os.path.join(PRRTE, golden_path)
    if not os.path.exists(path):
        print("SKIP " + name + ": no " + path)
        return
    res = run(args)
    with open(path) as f:
        want = f.read()
    got = normalise(res.stdout)
    check(name, res.returncode == 0 and got == want,
          "--- golden\n" + want + "--- stepmap-plan (rc %d)\n" % res.returncode + got +
          res.stderr)


def ranks_json(args, env=None):
    res = run(args, env)
    if res.returncode != 0:
        return None, res
    return json.loads(res.stdout)["ranks"], res


def refused(name, args, message, status=None):
    res = run(args)
    ok = res.returncode != 0 and res.stderr.startswith("stepmap-plan: ") and message in res.stderr
    if status is not None:
        ok = ok and res.returncode == status
    check(name, ok, "rc %d, stderr: %s" % (res.returncode, res.stderr))


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
            "--map-by", "node", ":", "-n", "3", "--map-by", "slot"])
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

    res = run(["--help"])
    check("--help", res.returncode == 0 and res.stdout.startswith("usage: stepmap-plan"))

sys.exit(1 if failures else 0)
