"""Checking stepmap's SVG pictures with a real renderer, shared by the cli
test of stepmap-plan --output svg and the end-to-end test of srun
--display-map=svg:FILE: rsvg-convert (Debian: librsvg2-bin) draws the SVG
as PNG, and the PNG is read back with zlib alone (no imaging library), so
that a test can count the pixels of a colour."""

import shutil
import struct
import subprocess
import xml.etree.ElementTree as ET
import zlib
from collections import Counter

RSVG = shutil.which("rsvg-convert")
SVG_NS = "{http://www.w3.org/2000/svg}"
MISSING_RENDERER = ("rsvg-convert is not installed: install Debian's librsvg2-bin "
                    "(contrib/install-deps.sh installs it)")

# svg_elements.cpp's palette (Tableau 10): apps 0 and 1.
APP_COLOURS = [(0x4e, 0x79, 0xa7), (0xf2, 0x8e, 0x2b)]


def tint(rgb):
    """svg::appTint: the colour of an unbound rank's chip."""
    return tuple((c + 3 * 255) // 4 for c in rgb)


def _paeth(a, b, c):
    p = a + b - c
    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
    if pa <= pb and pa <= pc:
        return a
    return b if pb <= pc else c


def _unfilter(kind, line, prev, bpp):
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
            line[i] = (line[i] + _paeth(left, prev[i], corner)) & 0xff
    elif kind != 0:
        raise ValueError("PNG filter %d" % kind)


def read_png(path):
    """(width, height, Counter of (r, g, b) over opaque pixels) of an 8-bit
    RGB or RGBA PNG, as rsvg-convert writes; ValueError if it is not one."""
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
    if header is None:
        raise ValueError("PNG without IHDR")
    width, height, depth, colour_type, _, _, interlace = header
    if depth != 8 or colour_type not in (2, 6) or interlace != 0:
        raise ValueError("PNG depth %d colour type %d interlace %d" %
                         (depth, colour_type, interlace))
    bpp = 4 if colour_type == 6 else 3
    raw = zlib.decompress(idat)
    stride = width * bpp
    if len(raw) != height * (stride + 1):
        raise ValueError("PNG data of %d bytes for %dx%d" % (len(raw), width, height))
    prev = bytearray(stride)
    colours = Counter()
    for y in range(height):
        at = y * (stride + 1)
        line = bytearray(raw[at + 1:at + 1 + stride])
        _unfilter(raw[at], line, prev, bpp)
        for x in range(0, stride, bpp):
            if bpp == 3 or line[x + 3] == 255:
                colours[(line[x], line[x + 1], line[x + 2])] += 1
        prev = line
    return width, height, colours


def near(colours, rgb, tolerance=3):
    """Pixels within `tolerance` of rgb in each channel."""
    return sum(n for c, n in colours.items()
               if all(abs(c[i] - rgb[i]) <= tolerance for i in range(3)))


def groups(root, cls):
    """The <g> elements of the SVG whose class list holds cls."""
    return [g for g in root.iter(SVG_NS + "g") if cls in g.get("class", "").split()]


class Picture:
    """An SVG drawn by rsvg-convert: its XML root, the PNG's path, size and
    colours. `problem` says what failed (None: all of it worked)."""

    def __init__(self):
        self.root = None
        self.png = None
        self.width = self.height = 0
        self.colours = Counter()
        self.problem = None


def render(svg_path, png_path):
    """Parses svg_path and renders it to png_path with rsvg-convert, then
    reads the PNG back. The PNG must have the SVG's width and height."""
    picture = Picture()
    if RSVG is None:
        picture.problem = MISSING_RENDERER
        return picture
    try:
        picture.root = ET.parse(svg_path).getroot()
    except (ET.ParseError, OSError) as error:
        picture.problem = "%s is not well-formed XML: %s" % (svg_path, error)
        return picture
    conv = subprocess.run([RSVG, "-o", png_path, svg_path], capture_output=True, timeout=60)
    if conv.returncode != 0:
        picture.problem = "rsvg-convert failed: " + conv.stderr.decode(errors="replace")
        return picture
    try:
        picture.width, picture.height, picture.colours = read_png(png_path)
    except (ValueError, OSError, zlib.error) as error:
        picture.problem = "rsvg-convert's PNG does not decode: %s" % error
        return picture
    picture.png = png_path
    expected = (picture.root.get("width"), picture.root.get("height"))
    if (str(picture.width), str(picture.height)) != expected:
        picture.problem = "PNG of %dx%d, the SVG says %sx%s" % (
            picture.width, picture.height, expected[0], expected[1])
    return picture
