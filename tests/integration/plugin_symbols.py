#!/usr/bin/env python3
"""The plugin exports only what Slurm looks up: slurm_spank_* hooks and the
plugin_name/type/version data; no C++ symbol leaks into Slurm's namespace."""
import re
import subprocess
import sys

plugin = sys.argv[1]
out = subprocess.run(["nm", "-D", "--defined-only", plugin], check=True,
                     stdout=subprocess.PIPE, text=True).stdout
names = [line.split()[-1] for line in out.splitlines() if line.strip()]
bad = [n for n in names if not re.fullmatch(r"slurm_spank_\w+|plugin_(name|type|version)", n)]
required = {"slurm_spank_init", "slurm_spank_exit", "plugin_name", "plugin_type",
            "plugin_version"}
missing = required - set(names)
if bad or missing:
    print("unexpected exports:", bad, "missing:", sorted(missing))
    sys.exit(1)
print("exports:", " ".join(sorted(names)))
