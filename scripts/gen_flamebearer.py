#!/usr/bin/env python3
"""Writes a Pyroscope flamebearer JSON profile ("single" format, Pyroscope's export
wrapper) of about SIZE bytes: a random call tree written level by level, as Pyroscope
writes one.

    python3 scripts/gen_flamebearer.py SIZE FILE [SEED]
    python3 scripts/gen_flamebearer.py 1G /tmp/fb-1g.json

The tree: 20 000 names in 997 packages, 10^12 ticks at the root; every node keeps 0-20 %
of its ticks as self time and splits the rest among 1-4 children, until the tree has
SIZE/16 nodes (about 16 bytes a bar) or a node is 60 deep or under 4 ticks; the last
level's nodes are leaves. Bars are `[offset, total, self, name]`, offsets delta-encoded
against the end of the previous bar of the row, children placed after their parent's
self time (as Pyroscope lays them out). Only two levels are held in memory.
"""
import random
import sys

from gen_gecko import parse_size

NAMES = 20000
TICKS = 10**12


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    target = max(1, parse_size(sys.argv[1]) // 16)
    out = sys.argv[2]
    rng = random.Random(int(sys.argv[3]) if len(sys.argv) > 3 else 7)
    names = [f"module_{i % 997:04}::component::function_{i:06}" for i in range(NAMES)]
    count = 1
    # The current level: each bar's start, total and name.
    xs, totals, nms = [0], [TICKS], [0]
    depth = 0
    with open(out, "w") as f:
        f.write('{"version":1,"flamebearer":{"names":[')
        f.write(",".join(f'"{n}"' for n in names))
        f.write('],"levels":[')
        while xs:
            nxs, ntotals, nnms = [], [], []
            parts = []
            end = 0
            for x, t, nm in zip(xs, totals, nms):
                s = t
                if depth < 60 and t >= 4 and count < target:
                    k = rng.choice((1, 1, 2, 2, 3, 4))
                    s = t * rng.randint(0, 20) // 100
                    rest = t - s
                    if rest >= k:
                        cuts = sorted(rng.randint(1, rest - 1) for _ in range(k - 1))
                        c, prev = x + s, 0
                        for cut in cuts + [rest]:
                            if cut > prev:
                                nxs.append(c)
                                ntotals.append(cut - prev)
                                nnms.append(rng.randrange(NAMES))
                                c += cut - prev
                                count += 1
                            prev = cut
                    else:
                        s = t
                parts.append(f"{x - end},{t},{s},{nm}")
                end = x + t
            f.write(("," if depth else "") + "[" + ",".join(parts) + "]")
            xs, totals, nms = nxs, ntotals, nnms
            depth += 1
            sys.stderr.write(f"level {depth}: {len(parts)} bars, {count} nodes\n")
        f.write(f'],"numTicks":{TICKS},"maxSelf":0}},')
        f.write('"metadata":{"format":"single","units":"samples","spyName":"gospy"}}')


if __name__ == "__main__":
    main()
