#!/usr/bin/env python3
"""`meson install --destdir` lays out what the Debian package ships.

usage: install_layout.py BUILD_DIR SOURCE_ROOT PLUGIN_DIR SERVER BIN_DIR
                         MAN_DIR SNIPPET EXAMPLES_DIR MAN_PAGE...

Every path but BUILD_DIR and SOURCE_ROOT is the absolute installed path this
build was configured with (contrib/debian/rules sets the Debian ones). The
build is installed into a temporary directory and checked: stepmap.so with
stepmap_core.so next to it (the entry loads the core from its own
directory), the server at the path compiled into the core, the tools, every
man page, the plugstack.conf.d snippet naming the installed plugin on a
commented-out line, the example site file when the source has it, and
nothing else.
"""

import os
import subprocess
import sys
import tempfile


def main(argv):
    build, source, plugin_dir, server, bin_dir, man_dir, snippet, examples = argv[:8]
    man_pages = argv[8:]
    with tempfile.TemporaryDirectory(prefix="stepmap-install-") as dest:
        result = subprocess.run(["meson", "install", "-C", build, "--no-rebuild",
                                 "--destdir", dest], capture_output=True, text=True)
        if result.returncode != 0:
            print("meson install failed:\n" + result.stdout + result.stderr)
            return 1
        return check(dest, source, plugin_dir, server, bin_dir, man_dir, snippet,
                     examples, man_pages)


def check(dest, source, plugin_dir, server, bin_dir, man_dir, snippet, examples,
          man_pages):
    def under(path):
        return os.path.join(dest, path.lstrip("/"))

    failures = []
    expected = set()

    def want(path, executable=False):
        expected.add(path)
        if not os.path.isfile(under(path)):
            failures.append("missing: " + path)
        elif executable and not os.access(under(path), os.X_OK):
            failures.append("not executable: " + path)

    plugin = os.path.join(plugin_dir, "stepmap.so")
    core = os.path.join(plugin_dir, "stepmap_core.so")
    want(plugin)
    want(core)
    want(server, executable=True)
    for tool in ("stepmap-plan", "stepmap-profile"):
        want(os.path.join(bin_dir, tool), executable=True)
    for page in man_pages:
        name = os.path.basename(page)
        want(os.path.join(man_dir, "man" + name.rsplit(".", 1)[1], name))
    want(snippet)
    if os.path.isfile(os.path.join(source, "contrib", "site", "stepmap.yaml.example")):
        want(os.path.join(examples, "stepmap.yaml"))

    # The plugin's default server= is where the server is installed, so a
    # plugstack.conf line without server= works.
    if os.path.isfile(under(core)):
        with open(under(core), "rb") as f:
            if (server.encode() + b"\0") not in f.read():
                failures.append("%s does not name %s as its server" % (core, server))

    if os.path.isfile(under(snippet)):
        with open(under(snippet)) as f:
            lines = [line.strip() for line in f]
        active = [line for line in lines if line and not line.startswith("#")]
        if active:
            failures.append("%s enables something: %s" % (snippet, active))
        if not any(line == "#required " + plugin or line.startswith("#required " + plugin + " ")
                   for line in lines):
            failures.append("%s has no commented-out line '#required %s ...'" % (snippet, plugin))
        if not any(server in line for line in lines):
            failures.append("%s does not name the default server %s" % (snippet, server))

    installed = set()
    for root, _, files in os.walk(dest):
        for name in files:
            installed.add("/" + os.path.relpath(os.path.join(root, name), dest))
    for path in sorted(installed - expected):
        failures.append("installed but not expected: " + path)

    for failure in failures:
        print(failure)
    print("%d files installed, %d expected: %d failures" %
          (len(installed), len(expected), len(failures)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
