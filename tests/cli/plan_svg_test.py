#!/usr/bin/env python3
"""stepmap-plan --output svg, drawn by a real SVG renderer.

usage: plan_svg_test.py STEPMAP_PLAN

Renders the pictures with rsvg-convert (Debian: librsvg2-bin, installed by
contrib/install-deps.sh) and reads the PNG back (zlib only, no imaging
library): its size must be the SVG's, and the applications' colours, the
unbound ranks' tint and the hatching must be there as pixels. Without
rsvg-convert the test fails: it checks the picture, not only the XML.
"""

import os
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from svg_pictures import (APP_COLOURS, MISSING_RENDERER, RSVG, SVG_NS, groups, near,  # noqa: E402
                          render as render_file, tint)
from cli_checks import check, failures  # noqa: E402

EXE = sys.argv[1]


def run(args, env=None):
    full_env = {k: v for k, v in os.environ.items() if not k.startswith("SLURM_")}
    full_env.update(env or {})
    return subprocess.run([EXE] + args, capture_output=True, env=full_env, timeout=60)


def render(name, args, tmp, env=None):
    """The SVG's root element and the PNG's colours, or None."""
    res = run(args + ["--output", "svg"], env)
    if res.returncode != 0:
        check(name + ": stepmap-plan", False, res.stderr.decode(errors="replace"))
        return None, None
    svg_path = os.path.join(tmp, name.replace(" ", "_") + ".svg")
    png_path = svg_path[:-4] + ".png"
    with open(svg_path, "wb") as f:
        f.write(res.stdout)
    try:
        ET.fromstring(res.stdout)
    except ET.ParseError as error:
        check(name + ": well-formed XML", False, str(error))
        return None, None
    picture = render_file(svg_path, png_path)
    if picture.png is None:
        check(name + ": rsvg-convert", False, picture.problem)
        return picture.root, None
    check(name + ": PNG of the SVG's size",
          picture.problem is None and picture.width > 100 and picture.height > 100,
          picture.problem or "%dx%d" % (picture.width, picture.height))
    check(name + ": PNG not trivial",
          os.path.getsize(png_path) > 4000 and len(picture.colours) >= 8,
          "%d bytes, %d colours" % (os.path.getsize(png_path), len(picture.colours)))
    return picture.root, picture.colours


if RSVG is None:
    check("rsvg-convert found", False, MISSING_RENDERER)
    sys.exit(1)

with tempfile.TemporaryDirectory() as tmp:
    # Three nodes, two applications, bound: app 0 to cores, app 1 to packages.
    hardware = ["--nodes", "n[1-3]", "--cpus", "8(x3)",
                "--synthetic", "package:2 core:4 pu:2"]
    root, colours = render("multi-node MPMD bound", hardware + [
        "-n", "10", "--map-by", "core", "--bind-to", "core",
        ":", "-n", "6", "--map-by", "package", "--bind-to", "package"], tmp)
    if root is not None:
        nodes = groups(root, "node")
        check("a group per node", [g.get("data-node") for g in nodes] == ["n1", "n2", "n3"],
              str([g.get("data-node") for g in nodes]))
        ranks = groups(root, "rank")
        check("every rank drawn, all bound",
              sorted({int(g.get("data-rank")) for g in ranks}) == list(range(16)) and
              not groups(root, "unbound"), str([g.get("class") for g in ranks]))
        check("both applications", len(groups(root, "app0")) == 10 and
              len(groups(root, "app1")) >= 6, str([g.get("class") for g in ranks]))
        check("cores drawn", sum(1 for r in root.iter(SVG_NS + "rect")
                                 if r.get("class") == "core") == 24)
    if colours is not None:
        # Ten bars of 16x14 px and the legend's swatch for app 0; app 1's
        # bars span up to a package of 8 PUs.
        for app, least in [(0, 1200), (1, 1500)]:
            found = near(colours, APP_COLOURS[app])
            check("app %d's colour rendered" % app, found >= least,
                  "%d pixels of %s" % (found, APP_COLOURS[app]))

    # Unbound ranks on an oversubscribed node: dashed chips, hatched.
    root, colours = render("unbound oversubscribed", [
        "--nodes", "n1", "--cpus", "2", "--synthetic", "package:1 core:2 pu:1",
        "-n", "4", "--map-by", "slot:OVERSUBSCRIBE"], tmp)
    if root is not None:
        check("unbound and oversubscribed marked", len(groups(root, "unbound")) == 4 and
              len(groups(root, "oversubscribed")) == 4,
              str([g.get("class") for g in groups(root, "rank")]))
        check("hardware drawn although the plan does not use it",
              sum(1 for r in root.iter(SVG_NS + "rect") if r.get("class") == "core") == 2)
    if colours is not None:
        pale = tint(APP_COLOURS[0])
        hatched = tuple(round(c * 0.55) for c in pale)
        check("unbound tint rendered", near(colours, pale) >= 400,
              "%d pixels of %s" % (near(colours, pale), pale))
        check("hatching rendered", near(colours, hatched, 6) >= 100,
              "%d pixels near %s" % (near(colours, hatched, 6), hatched))

    # A hostile job id from Slurm's environment stays text.
    env = {"SLURM_JOB_NODELIST": "c[1-2]", "SLURM_JOB_CPUS_PER_NODE": "2(x2)",
           "SLURM_JOB_ID": "a<b&\"c'</svg>"}
    res = run(["--output", "svg"], env)
    check("hostile job id escaped", res.returncode == 0 and
          b"job a&lt;b&amp;&quot;c&apos;&lt;/svg&gt;" in res.stdout, res.stderr.decode())
    root, colours = render("hostile job id", [], tmp, env)
    check("hostile job id renders", root is not None and colours is not None)

    res = run(["--nodes", "n1", "--cpus", "2", "--output", "png"])
    check("unknown --output", res.returncode == 2 and res.stderr.decode() ==
          "stepmap-plan: --output 'png': unknown format (accepted: map, json, svg)\n",
          res.stderr.decode())

sys.exit(1 if failures else 0)
