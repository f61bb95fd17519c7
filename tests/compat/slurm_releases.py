#!/usr/bin/env python3
"""Compiles the SPANK plugin's sources against the headers of every Slurm
release a site may run (22.05 to 26.05), with the build's own flags plus
-Werror, so that a change that breaks an older or newer release fails here
and not on a site's cluster.

    slurm_releases.py BUILD_DIR SOURCE_ROOT HEADER_SETS

HEADER_SETS holds one folder per release (22.05.8/slurm/slurm.h, ...), the
build's -Dslurm_header_sets. A missing or empty folder fails.
"""
import concurrent.futures
import json
import os
import shlex
import subprocess
import sys

build, source_root = sys.argv[1], os.path.realpath(sys.argv[2])


sets_dir = sys.argv[3] if len(sys.argv) > 3 else ""
if not os.path.isdir(sets_dir):
    print(f"FAIL: no Slurm header sets in '{sets_dir}' (-Dslurm_header_sets=DIR, "
          "DIR/<release>/slurm/spank.h)")
    sys.exit(1)
print(f"header sets: {sets_dir}")
releases = sorted(d for d in os.listdir(sets_dir)
                  if os.path.isfile(os.path.join(sets_dir, d, "slurm", "spank.h")))
if not releases:
    print(f"FAIL: {sets_dir} holds no <release>/slurm/spank.h")
    sys.exit(1)

with open(os.path.join(build, "compile_commands.json")) as f:
    commands = [c for c in json.load(f) if "stepmap.so.p" in c["output"] or "stepmap_core.so.p" in c["output"]]
if not commands:
    print("FAIL: compile_commands.json lists no source of the plugin (stepmap.so)")
    sys.exit(1)


def syntax_only(command):
    """The build's command for one source, checking only (no object written)."""
    args, out = [], shlex.split(command)
    skip = 0
    for a in out:
        if skip:
            skip -= 1
            continue
        if a in ("-o", "-MQ", "-MF"):
            skip = 1
            continue
        if a in ("-c", "-MD", "-fdiagnostics-color=always"):
            continue
        args.append(a)
    return args + ["-fsyntax-only", "-Werror"]


def check(release, command):
    include = os.path.join(sets_dir, release)
    args = syntax_only(command["command"]) + ["-isystem", include]
    # Slurm's headers must come from the release under test, not /usr/include.
    r = subprocess.run(args, cwd=command["directory"], capture_output=True, text=True)
    return release, os.path.basename(command["file"]), r.returncode, r.stderr


failed = 0
with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
    jobs = [pool.submit(check, r, c) for r in releases for c in commands]
    results = {}
    for j in jobs:
        release, source, rc, err = j.result()
        results.setdefault(release, []).append((source, rc, err))
for release in releases:
    bad = [(s, e) for s, rc, e in results[release] if rc != 0]
    version = open(os.path.join(sets_dir, release, "slurm", "slurm_version.h")).read()
    a, b, c = (int(x) for x in release.split(".")[:3])
    if "SLURM_VERSION_NUMBER 0x%02x%02x%02x" % (a, b, c) not in version:
        print(f"FAIL {release}: its slurm_version.h is not release {release}'s")
        failed += 1
        continue
    if bad:
        failed += 1
        print(f"FAIL {release}: " + ", ".join(s for s, _ in bad))
        for s, e in bad:
            print(e[:4000])
    else:
        print(f"ok   {release}: {len(results[release])} plugin sources compile without warnings")
sys.exit(1 if failed else 0)
