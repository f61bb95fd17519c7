#!/usr/bin/env python3
"""What Slurm loads: stepmap.so exports only what Slurm looks up
(slurm_spank_* hooks, plugin_name/type/version) and needs nothing but libc,
so a step stepmap does not serve loads no C++ runtime, libcrypto or libuv;
stepmap_core.so, the plugin proper it loads for served steps, exports only
the three calls the entry makes. No C++ symbol leaks into Slurm's namespace.

usage: plugin_symbols.py STEPMAP_SO STEPMAP_CORE_SO"""
import re
import subprocess
import sys

failures = []


def exports(path):
    out = subprocess.run(["nm", "-D", "--defined-only", path], check=True,
                         stdout=subprocess.PIPE, text=True).stdout
    return [line.split()[-1] for line in out.splitlines() if line.strip()]


def needed(path):
    out = subprocess.run(["readelf", "-d", path], check=True, stdout=subprocess.PIPE,
                         text=True).stdout
    return re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", out)


def check(what, ok, detail):
    print(("PASS " if ok else "FAIL ") + what + ": " + detail)
    if not ok:
        failures.append(what)


entry, core = sys.argv[1], sys.argv[2]
names = exports(entry)
bad = [n for n in names if not re.fullmatch(r"slurm_spank_\w+|plugin_(name|type|version)", n)]
missing = {"slurm_spank_init", "slurm_spank_exit", "plugin_name", "plugin_type",
           "plugin_version"} - set(names)
check("stepmap.so exports", not bad and not missing,
      f"{' '.join(sorted(names))}; unexpected {bad}, missing {sorted(missing)}")
libs = needed(entry)
# A sanitizer build adds its runtimes (contrib/sanitize.sh); nothing else may come.
check("stepmap.so needs libc only",
      all(re.match(r"lib(c|dl|asan|ubsan)\.so", lib) for lib in libs), " ".join(libs))
core_names = set(exports(core))
want = {"stepmap_core_init", "stepmap_core_option", "stepmap_core_hook"}
check("stepmap_core.so exports", core_names == want, " ".join(sorted(core_names)))
sys.exit(1 if failures else 0)
