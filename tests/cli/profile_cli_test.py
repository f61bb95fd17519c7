#!/usr/bin/env python3
"""stepmap-profile end to end: runs the built CLI on the fixture sysfs trees.

usage: profile_cli_test.py STEPMAP_PROFILE SYSFS_FIXTURES_DIR

`probe` of each tree must print its golden YAML (tests/fixtures/sysfs/
<tree>.yaml) but for the time of profiling; `report` prints tables; bad
files and bad arguments fail with the messages below. `make`, `update` and
`check` go through srun: tests/e2e/test_profile.py runs them on the real
cluster; here only what they refuse before srun runs.
"""

import os
import re
import shutil
import subprocess
import sys
import tempfile

from cli_checks import check, failures

EXE = os.path.abspath(sys.argv[1])
SYSFS = sys.argv[2]
TREES = ["ethernet", "rdma", "veth"]
# No Slurm job around the commands unless a test gives one.
BASE_ENV = {k: v for k, v in os.environ.items() if not k.startswith(("SLURM", "STEPMAP_"))}


def run(args, env=None):
    return subprocess.run([EXE] + args, capture_output=True, text=True, timeout=30,
                          errors="backslashreplace", env=dict(BASE_ENV, **(env or {})))


def read(path):
    with open(path) as f:
        return f.read()


def without_time(text):
    return re.sub(r"profiled_at: \S+", "profiled_at: TIME", text)


for tree in TREES:
    res = run(["probe", "--root", os.path.join(SYSFS, tree), "--name", tree + "-node"])
    want = without_time(read(os.path.join(SYSFS, tree + ".yaml")))
    check("probe " + tree, res.returncode == 0 and without_time(res.stdout) == want,
          "--- want\n" + want + "--- got (rc %d)\n" % res.returncode + res.stdout + res.stderr)
    times = re.findall(r"profiled_at: (\S+)", res.stdout)
    check("probe " + tree + " time is UTC",
          len(times) == 1 and re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", times[0]),
          res.stdout)

res = run(["report", os.path.join(SYSFS, "rdma.yaml")])
want = (
    "node rdma-node (sysfs, 2026-01-01T00:00:00Z, sha256:731159eb0fdf)\n"
    "  interface  state  mtu   speed        mac"
    "                                                          pci           numa  addresses\n"
    "  ib0        up     2044  100000 Mb/s  00:00:10:87:fe:80:00:00:00:00:00:00:00:02:c9:03:00:f1:e9:c1"
    "  0000:3b:00.0  1     192.168.100.7/24 fe80::2:c903:f1:e9c1/64\n"
    "  rdma    guid                 port  state          link        rate                 lid  gids\n"
    "  mlx5_0  0002:c903:00f1:e9c0  1     ACTIVE/LinkUp  InfiniBand  100 Gb/sec (4X EDR)  7    2\n")
check("report rdma", res.returncode == 0 and res.stdout == want,
      "--- want\n" + want + "--- got\n" + res.stdout + res.stderr)

res = run(["report", os.path.join(SYSFS, "veth.yaml")])
check("report veth: unknowns as '-'", res.returncode == 0 and
      "  veth1      lowerlayerdown  1500  -           a2:5b:1c:00:00:02  -    -     -\n"
      in res.stdout, res.stdout + res.stderr)

with tempfile.TemporaryDirectory() as tmp:
    broken = os.path.join(tmp, "broken.yaml")
    with open(broken, "w") as f:
        f.write(read(os.path.join(SYSFS, "ethernet.yaml")).replace("mtu: 9000", "mtu: abc"))
    res = run(["report", broken])
    want = ("stepmap-profile: " + broken +
            ":15: nodes[0].interfaces[0].mtu: 'abc' is not a number\n")
    check("report of a broken file", res.returncode == 1 and res.stderr == want and
          res.stdout == "", res.stderr)
    res = run(["probe", "--root", tmp, "--name", "n1"])
    check("probe of a tree without interfaces", res.returncode == 1 and res.stderr ==
          "stepmap-profile: " + tmp + "/sys/class/net: no network interfaces there\n",
          res.stderr)

usage = ("usage: stepmap-profile probe [--root DIR] [--name NODE | --name-from-slurmd]\n"
         "       stepmap-profile report FILE\n"
         "       stepmap-profile make -o FILE [--nodes LIST]\n"
         "       stepmap-profile update FILE [--nodes LIST]\n"
         "       stepmap-profile check FILE [--nodes LIST]\n")
for args, message in [
        ([], "no command"),
        (["plan"], "unknown command 'plan'"),
        (["probe", "--colour"], "probe: unexpected '--colour'"),
        (["probe", "--root"], "probe: unexpected '--root'"),
        (["report"], "report takes one file"),
        (["probe", "--name", "n1", "--name-from-slurmd"],
         "probe: --name and --name-from-slurmd exclude each other"),
        (["make"], "make needs -o FILE"),
        (["make", "-o"], "make: unexpected '-o'"),
        (["make", "p.yaml"], "make: unexpected 'p.yaml'"),
        (["update"], "update needs a profile file"),
        (["update", "a.yaml", "b.yaml"], "update: unexpected 'b.yaml'"),
        (["check", "a.yaml", "--nodes"], "check: unexpected '--nodes'"),
        (["check", "-o", "a.yaml"], "check: unexpected '-o'"),
]:
    res = run(args)
    check("usage: %s" % args, res.returncode == 2 and
          res.stderr == "stepmap-profile: " + message + "\n" + usage, res.stderr)
res = run(["--help"])
check("--help", res.returncode == 0 and res.stdout == usage, res.stdout)

# Outside an allocation: make, update and check refuse with one message.
for command in [["make", "-o", "p.yaml"], ["update", "p.yaml"], ["check", "p.yaml"]]:
    res = run(command)
    want = ("stepmap-profile %s: not inside a Slurm allocation (no SLURM_JOB_ID); run it under "
            "salloc or sbatch\n" % command[0])
    if command[0] != "make":  # the file is read first: make one that loads
        with tempfile.TemporaryDirectory() as tmp:
            shutil.copy(os.path.join(SYSFS, "rdma.yaml"), os.path.join(tmp, "p.yaml"))
            res = subprocess.run([EXE] + command, capture_output=True, text=True, timeout=30,
                                 cwd=tmp, env=BASE_ENV)
    check("%s outside an allocation" % command[0],
          res.returncode == 1 and res.stderr == want and res.stdout == "", res.stderr)



# Inside an allocation, what is refused before srun runs. What make, update
# and check do through srun is asserted on the real cluster
# (tests/e2e/test_profile.py), never with a stand-in for srun.
with tempfile.TemporaryDirectory() as tmp:
    def in_job(args, nodelist="n[1-3]"):
        return run(args, {"SLURM_JOB_ID": "42", "SLURM_JOB_NODELIST": nodelist})

    profile = os.path.join(tmp, "cluster.yaml")
    shutil.copy(os.path.join(SYSFS, "rdma.yaml"), profile)
    res = in_job(["check", profile, "--nodes", "n9"])
    check("--nodes outside the allocation", res.returncode == 1 and res.stderr ==
          "stepmap-profile check: --nodes 'n9': n9 is not in job 42 (n[1-3])\n", res.stderr)
    res = in_job(["update", os.path.join(tmp, "none.yaml")])
    check("update of a missing file", res.returncode == 1 and res.stderr ==
          "stepmap-profile update: %s/none.yaml: cannot open the profile\n" % tmp, res.stderr)
    res = run(["probe", "--name-from-slurmd"])
    check("probe --name-from-slurmd outside srun", res.returncode == 1 and res.stderr ==
          "stepmap-profile: --name-from-slurmd: SLURMD_NODENAME is not set (run it through srun)\n",
          res.stderr)

if failures:
    print("%d failed: %s" % (len(failures), ", ".join(failures)))
    sys.exit(1)
print("all passed")
