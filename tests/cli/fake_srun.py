#!/usr/bin/env python3
"""A stand-in for srun in the stepmap-profile tests (STEPMAP_SRUN), so that
make, update and check run without Slurm.

It takes srun's options up to the first word that is not one, expands
--nodelist (one bracket: "n[1-3,5]", or a comma list), and runs the command
once per node, one after the other, with SLURMD_NODENAME set and
"--root TREE" appended, TREE from FAKE_SRUN_ROOTS ("n1=/a,n2=/b"). Output
lines are labelled with the task number as srun --label does; a failing
task is reported as srun reports it and makes the exit status 1. Its own
command line goes to FAKE_SRUN_LOG, one word a line.
"""

import os
import re
import subprocess
import sys


def expand(hostlist):
    names = []
    for item in re.findall(r"[^,\[]+(?:\[[^\]]*\])?", hostlist):
        m = re.fullmatch(r"([^\[]*)\[([^\]]*)\]", item)
        if not m:
            names.append(item)
            continue
        for part in m.group(2).split(","):
            lo, _, hi = part.partition("-")
            for n in range(int(lo), int(hi or lo) + 1):
                names.append(m.group(1) + str(n).zfill(len(lo)))
    return names


args = sys.argv[1:]
with open(os.environ["FAKE_SRUN_LOG"], "w") as log:
    log.write("\n".join(sys.argv) + "\n")
options = {}
while args and args[0].startswith("-"):
    key, _, value = args.pop(0).partition("=")
    options[key] = value
roots = dict(entry.split("=", 1) for entry in os.environ["FAKE_SRUN_ROOTS"].split(","))
status = 0
for task, node in enumerate(expand(options["--nodelist"])):
    env = dict(os.environ, SLURMD_NODENAME=node)
    res = subprocess.run(args + ["--root", roots[node]], env=env, capture_output=True, text=True)
    for line in res.stdout.splitlines():
        print("%d: %s" % (task, line))
    for line in res.stderr.splitlines():
        print("%d: %s" % (task, line), file=sys.stderr)
    if res.returncode != 0:
        print("srun: error: %s: task %d: Exited with exit code %d" % (node, task, res.returncode),
              file=sys.stderr)
        status = 1
sys.exit(status)
