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
import shutil
import struct
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
import zlib
from collections import Counter

from cli_checks import check, failures

EXE = sys.argv[1]
RSVG = shutil.which("rsvg-convert")
SVG_NS = "{http://www.w3.org/2000/svg}"

# svg_elements.cpp's palette (Tableau 10): apps 0 and 1.
APP_COLOURS = [(0x4e, 0x79, 0xa7), (0xf2, 0x8e, 0x2b)]


def tint(rgb):
    return tuple((c + 3 * 255) // 4 for c in rgb)


def run(args, env=None):
    full_env = {k: v for k, v in os.environ.items() if not k.startswith("SLURM_")}
    full_env.update(env or {})
    return subprocess.run([EXE] + args, capture_output=True, env=full_env, timeout=60)


def paeth(a, b, c):
    p = a + b - c
    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
    if pa <= pb and pa <= pc:
        return a
    return b if pb <= pc else c


def unfilter(kind, line, prev, bpp):
    if kind == 1:
        for i in range(bpp, len(line)):
            line[i] = (line[i] + line[i - bpp]) & 0xff
    elif kind == 2:
        for i in range(len(line)):
            line[i] = (line[i] + prev[i]) & 0xff
    elif kind == 3:
        for i in range(len(line)):
            left = line[i - bpp] if i >= bpp else 0
            line[i] = (line[i] + ((left + prev[i]) >> 1)) & 0xff
    elif kind == 4:
        for i in range(len(line)):
            left = line[i - bpp] if i >= bpp else 0
            corner = prev[i - bpp] if i >= bpp else 0
            line[i] = (line[i] + paeth(left, prev[i], corner)) & 0xff
    elif kind != 0:
        raise ValueError("PNG filter %d" % kind)


def read_png(path):
    """(width, height, Counter of (r, g, b) over opaque pixels)."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG")
    pos, idat, header = 8, b"", None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        pos += 12 + length
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
    width, height, depth, colour_type, _, _, interlace = header
    if depth != 8 or colour_type not in (2, 6) or interlace != 0:
        raise ValueError("PNG depth %d colour type %d interlace %d" %
                         (depth, colour_type, interlace))
    bpp = 4 if colour_type == 6 else 3
    raw = zlib.decompress(idat)
    stride = width * bpp
    prev = bytearray(stride)
    colours = Counter()
    for y in range(height):
        at = y * (stride + 1)
        line = bytearray(raw[at + 1:at + 1 + stride])
        unfilter(raw[at], line, prev, bpp)
        for x in range(0, stride, bpp):
            if bpp == 3 or line[x + 3] == 255:
                colours[(line[x], line[x + 1], line[x + 2])] += 1
        prev = line
    return width, height, colours


def near(colours, rgb, tolerance=3):
    return sum(n for c, n in colours.items()
               if all(abs(c[i] - rgb[i]) <= tolerance for i in range(3)))


def render(name, args, tmp, env=None):
    """The SVG's root element and the PNG's (width, height, colours), or None."""
    res = run(args + ["--output", "svg"], env)
    if res.returncode != 0:
        check(name + ": stepmap-plan", False, res.stderr.decode(errors="replace"))
        return None, None
    svg_path = os.path.join(tmp, name.replace(" ", "_") + ".svg")
    png_path = svg_path[:-4] + ".png"
    with open(svg_path, "wb") as f:
        f.write(res.stdout)
    try:
        root = ET.fromstring(res.stdout)
    except ET.ParseError as error:
        check(name + ": well-formed XML", False, str(error))
        return None, None
    conv = subprocess.run([RSVG, "-o", png_path, svg_path], capture_output=True, timeout=60)
    if conv.returncode != 0 or not os.path.exists(png_path):
        check(name + ": rsvg-convert", False, conv.stderr.decode(errors="replace"))
        return root, None
    width, height, colours = read_png(png_path)
    check(name + ": PNG of the SVG's size",
          (width, height) == (int(root.get("width")), int(root.get("height"))) and
          width > 100 and height > 100, "%dx%d vs %sx%s" % (
              width, height, root.get("width"), root.get("height")))
    check(name + ": PNG not trivial", os.path.getsize(png_path) > 4000 and len(colours) >= 8,
          "%d bytes, %d colours" % (os.path.getsize(png_path), len(colours)))
    return root, colours


def groups(root, cls):
    return [g for g in root.iter(SVG_NS + "g") if cls in g.get("class", "").split()]


if RSVG is None:
    check("rsvg-convert found", False,
          "rsvg-convert is not installed: install Debian's librsvg2-bin "
          "(contrib/install-deps.sh installs it)")
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
