#!/usr/bin/env python3
"""Compare two pictures of one flamebearer file bar by bar: Pyroscope's and scorch's.

    pyroscope_compare.py measure SCORCH.png
    pyroscope_compare.py compare FILE.json PYROSCOPE.png SCORCH.png [--tol N] [--bars]

`measure` prints the left edge and the width in pixels of a picture's root bar, which
scripts/pyroscope-compare.sh uses to give scorch a graph area exactly as wide as
Pyroscope's canvas. `compare` prints, with --bars, a table of every bar wider than 5 px
in Pyroscope's picture and the scorch bar matched with it, then the file's figures as one
last line, `RESULT <json>`.

How bars are found (nothing about either renderer is assumed but a white background and
an icicle, root on top; the rest is measured from each picture):
- the root row is the first scanline with a single-colored run over 90 % of the width; its
  run gives the graph's left edge and width;
- the bar height is the longest stretch of the root's color down any column of the root
  (columns through a label are cut short); the next row starts at the first color
  stretch of at least 3 px below it in most columns (Pyroscope's 0.5 px gap leaves a
  1 px blend, which this skips), which gives the row pitch;
- row k is sampled on the scanline 1 px below its top edge, above any label, and a bar is
  a run of identical pixels there. Pyroscope anti-aliases bar edges, so its run is the
  bar's fully covered pixels; "wider than 5 px" means a run of at least 6 of them;
- Pyroscope draws runs of bars up to 5 px wide as one grey "collapsed" block
  (rgba(200, 200, 200, 0.66)); those are counted apart, not compared;
- each Pyroscope bar is matched with the scorch run of the same row that overlaps it most
  (x measured from each graph's left edge); the color is equal when every channel is
  within --tol (default 0: exact), and the left edge and width differences are in px.
  A bar's run can take in a narrow neighbor of the same color (scorch keeps the colors of
  bars under 5 px, Pyroscope greys them), which shows as a larger edge difference.

Standard library only (zlib for PNG).
"""

import json
import struct
import sys
import zlib

BG = (255, 255, 255)
MIN_BAR_PX = 6


def read_png(path):
    """(width, height, rows of (r, g, b) tuples) of an 8-bit RGB or RGBA PNG."""
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        sys.exit(f"{path}: not a PNG")
    pos, idat = 8, []
    width = height = ctype = None
    while pos < len(data):
        (n,) = struct.unpack(">I", data[pos : pos + 4])
        kind, body = data[pos + 4 : pos + 8], data[pos + 8 : pos + 8 + n]
        pos += 12 + n
        if kind == b"IHDR":
            width, height, depth, ctype, _, _, interlace = struct.unpack(">IIBBBBB", body)
            if depth != 8 or ctype not in (2, 6) or interlace:
                sys.exit(f"{path}: only 8-bit RGB/RGBA non-interlaced PNGs are read")
        elif kind == b"IDAT":
            idat.append(body)
        elif kind == b"IEND":
            break
    bpp = 3 if ctype == 2 else 4
    raw = zlib.decompress(b"".join(idat))
    stride = width * bpp
    rows, prev, i = [], bytearray(stride), 0
    for _ in range(height):
        f, line = raw[i], bytearray(raw[i + 1 : i + 1 + stride])
        i += 1 + stride
        if f == 1:
            for x in range(bpp, stride):
                line[x] = (line[x] + line[x - bpp]) & 255
        elif f == 2:
            for x in range(stride):
                line[x] = (line[x] + prev[x]) & 255
        elif f == 3:
            for x in range(stride):
                a = line[x - bpp] if x >= bpp else 0
                line[x] = (line[x] + (a + prev[x]) // 2) & 255
        elif f == 4:
            for x in range(stride):
                a = line[x - bpp] if x >= bpp else 0
                b = prev[x]
                c = prev[x - bpp] if x >= bpp else 0
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                pred = a if pa <= pb and pa <= pc else b if pb <= pc else c
                line[x] = (line[x] + pred) & 255
        rows.append(line)
        prev = line
    pixels = [[tuple(r[x * bpp : x * bpp + 3]) for x in range(width)] for r in rows]
    return width, height, pixels


def runs(line):
    """Maximal runs of identical pixels: (x0, length, color)."""
    out, start = [], 0
    for x in range(1, len(line) + 1):
        if x == len(line) or line[x] != line[start]:
            out.append((start, x - start, line[start]))
            start = x
    return out


class Grid:
    """Where the bars of an icicle picture are: measured, see the module doc."""

    def __init__(self, path):
        self.path = path
        self.w, self.h, self.px = read_png(path)
        self.top = None
        for y in range(self.h):
            long = [r for r in runs(self.px[y]) if r[2] != BG and r[1] >= 0.9 * self.w]
            if long:
                self.top = y
                self.left, self.root_px, self.root_color = long[0]
                break
        if self.top is None:
            sys.exit(f"{path}: no root bar (a run over 90 % of the width) found")
        # Bar height: the longest stretch of the root's color down a column of the root.
        cols = range(self.left + 1, self.left + self.root_px - 1)
        stretch = {}
        for x in cols:
            y = self.top
            while y < self.h and self.px[y][x] == self.root_color:
                y += 1
            stretch[x] = y - self.top
        self.bar_h = max(stretch.values())
        # The next row: the first non-background stretch of >= 3 px below the root, in
        # columns where the root bar is whole (no label).
        starts = {}
        for x in (x for x in cols if stretch[x] == self.bar_h):
            y = self.top + self.bar_h
            while y < self.h:
                c = self.px[y][x]
                y1 = y
                while y1 < self.h and self.px[y1][x] == c:
                    y1 += 1
                if c != BG and y1 - y >= 3:
                    starts[y] = starts.get(y, 0) + 1
                    break
                y = y1
        self.pitch = (max(starts, key=starts.get) - self.top) if starts else None

    def row_runs(self, k):
        """Runs of non-background pixels on the sampling scanline of row `k` (x from the
        graph's left edge), or None past the picture."""
        if k > 0 and self.pitch is None:
            return None
        y = self.top + k * (self.pitch or 0) + 1
        if y >= self.h:
            return None
        return [(x0 - self.left, n, c) for x0, n, c in runs(self.px[y]) if c != BG]


def bar_names(path):
    """Per level, the bars of a flamebearer file as (start tick, total ticks, name), and
    the number of ticks of the whole graph."""
    d = json.load(open(path))
    if "flamebearer" in d:
        fb, meta = d["flamebearer"], d.get("metadata") or {}
    else:
        fb, meta = d, {}
    fmt = meta.get("format") or fb.get("format") or "single"
    step = 7 if fmt == "double" else 4
    names, levels = fb["names"], fb["levels"]
    out = []
    for level in levels:
        bars = []
        ends = [0, 0]  # delta decoding, per side (double: left at 0, right at 3)
        for j in range(0, len(level), step):
            if step == 4:
                x0 = ends[0] + level[j]
                total = level[j + 1]
                ends[0] = x0 + total
                start, tot = x0, total
            else:
                l0 = ends[0] + level[j]
                r0 = ends[1] + level[j + 3]
                ends[0] = l0 + level[j + 1]
                ends[1] = r0 + level[j + 4]
                start, tot = l0 + r0, level[j + 1] + level[j + 4]
            bars.append((start, tot, names[level[j + step - 1]]))
        out.append(bars)
    num_ticks = fb.get("numTicks") or (out[0][0][1] if out and out[0] else 1)
    return out, num_ticks


def compare(file, pyro_png, scorch_png, tol, show_bars):
    pg, sg = Grid(pyro_png), Grid(scorch_png)
    levels, num_ticks = bar_names(file)
    collapsed_grey = (219, 219, 219)
    res = {"bars": 0, "exact": 0, "within_tol": 0, "missing": 0, "collapsed": 0,
           "max_left": 0, "max_width": 0, "graph_px": [pg.root_px, sg.root_px],
           "row_px": [[pg.bar_h, pg.pitch], [sg.bar_h, sg.pitch]], "mismatches": []}
    lines = []
    for k, bars in enumerate(levels):
        pr, sr = pg.row_runs(k), sg.row_runs(k)
        if pr is None:
            break
        sr = sr or []
        for x0, n, c in pr:
            if n < MIN_BAR_PX:
                continue
            if all(abs(a - b) <= 2 for a, b in zip(c, collapsed_grey)) and len(set(c)) == 1:
                res["collapsed"] += 1
                continue
            # The flamebearer bar under the run's middle, for its name.
            mid_tick = (x0 + n / 2) / (pg.root_px + 1) * num_ticks
            name = next((b[2] for b in bars if b[0] <= mid_tick < b[0] + b[1]), "?")
            best, best_ov = None, 0
            for s in sr:
                ov = min(x0 + n, s[0] + s[1]) - max(x0, s[0])
                if ov > best_ov:
                    best, best_ov = s, ov
            res["bars"] += 1
            if best is None:
                res["missing"] += 1
                res["mismatches"].append(f"row {k} {name}: no scorch bar")
                lines.append(f"{k:>3} {x0:>6} {n:>6} {str(c):>15}  {'-':>6} {'-':>6} "
                             f"{'-':>15} {'-':>5} {'-':>5}  missing  {name}")
                continue
            sx, sn, sc = best
            dl, dw = sx - x0, sn - n
            diff = max(abs(a - b) for a, b in zip(c, sc))
            status = "=" if diff == 0 else ("~" if diff <= tol else "DIFF")
            res["exact"] += diff == 0
            res["within_tol"] += diff <= tol
            res["max_left"] = max(res["max_left"], abs(dl))
            res["max_width"] = max(res["max_width"], abs(dw))
            if diff > tol:
                res["mismatches"].append(f"row {k} {name}: pyroscope {c} scorch {sc}")
            lines.append(f"{k:>3} {x0:>6} {n:>6} {str(c):>15}  {sx:>6} {sn:>6} {str(sc):>15} "
                         f"{dl:>+5} {dw:>+5}  {status:<7}  {name}")
    if show_bars:
        print(f"{'row':>3} {'x':>6} {'width':>6} {'pyroscope':>15}  {'x':>6} {'width':>6} "
              f"{'scorch':>15} {'Δleft':>5} {'Δw':>5}  color    name")
        for line in lines:
            print(line)
    return res


def main(argv):
    if len(argv) >= 2 and argv[0] == "measure":
        g = Grid(argv[1])
        print(g.left, g.root_px)
        return 0
    if len(argv) >= 4 and argv[0] == "compare":
        tol, show = 0, "--bars" in argv
        if "--tol" in argv:
            tol = int(argv[argv.index("--tol") + 1])
        res = compare(argv[1], argv[2], argv[3], tol, show)
        print("RESULT " + json.dumps(res))
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
