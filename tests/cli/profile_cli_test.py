#!/usr/bin/env python3
"""stepmap-profile end to end: runs the built CLI on the fixture sysfs trees.

usage: profile_cli_test.py STEPMAP_PROFILE SYSFS_FIXTURES_DIR

`probe` of each tree must print its golden YAML (tests/fixtures/sysfs/
<tree>.yaml) but for the time of profiling; `report` prints tables; bad
files and bad arguments fail with the messages below.
"""

import os
import re
import subprocess
import sys
import tempfile

from cli_checks import check, failures

EXE = sys.argv[1]
SYSFS = sys.argv[2]
TREES = ["ethernet", "rdma", "veth"]


def run(args):
    return subprocess.run([EXE] + args, capture_output=True, text=True, timeout=30,
                          errors="backslashreplace")


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

usage = ("usage: stepmap-profile probe [--root DIR] [--name NODE]\n"
         "       stepmap-profile report FILE\n")
for args, message in [
        ([], "no command"),
        (["plan"], "unknown command 'plan'"),
        (["probe", "--colour"], "probe: unexpected '--colour'"),
        (["probe", "--root"], "probe: unexpected '--root'"),
        (["report"], "report takes one file"),
]:
    res = run(args)
    check("usage: %s" % args, res.returncode == 2 and
          res.stderr == "stepmap-profile: " + message + "\n" + usage, res.stderr)
res = run(["--help"])
check("--help", res.returncode == 0 and res.stdout == usage, res.stdout)

if failures:
    print("%d failed: %s" % (len(failures), ", ".join(failures)))
    sys.exit(1)
print("all passed")
