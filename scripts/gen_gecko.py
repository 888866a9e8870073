#!/usr/bin/env python3
"""Writes a gecko profile (the Firefox profiler's own format, version 27) as Firefox
writes one: each thread's samples and markers first, its tables after them.

    python3 scripts/gen_gecko.py SIZE FILE [THREADS] [SEED]
    python3 scripts/gen_gecko.py 1G /tmp/gecko-1g.json 8

SIZE is the file's size (bytes, or with K/M/G), split evenly between THREADS threads
(default 8). Each thread: 4 000 functions, a stack table of 30 000 stacks up to 60 deep,
samples 1 ms apart that keep the previous one's stack 70 % of the time, and a fifth of
its bytes interval markers with a small payload (whose strings include a table's name in
quotes, as a page's text may).
"""
import json
import random
import sys

from sizes import parse_size

FUNCS = 4000
STACKS = 30000


def thread_tables(rng):
    strings = [f"module_{i % 97}::function_{i} (file_{i % 53}.js:{i % 400}:{i % 80})" for i in range(FUNCS)]
    strings.append("DOMEvent")
    frames = [[i, False, None, None, 10 + i % 400, None, 2, 0] for i in range(FUNCS)]
    # A tree of stacks: a stack's prefix is an earlier stack no deeper than 59.
    prefix, depth = [], []
    for s in range(STACKS):
        if s == 0 or rng.random() < 0.02:
            prefix.append(None)
            depth.append(1)
        else:
            p = s - 1 - int(rng.random() ** 3 * min(s, 2000))
            while depth[p] >= 60:
                p = prefix[p]
            prefix.append(p)
            depth.append(depth[p] + 1)
    stacks = [[prefix[s], rng.randrange(FUNCS)] for s in range(STACKS)]
    return strings, frames, stacks


def write_rows(out, row, budget):
    """Writes rows made by `row()`, comma-separated, until `budget` bytes are written."""
    written, first, rows = 0, True, []
    while written < budget:
        r = row()
        rows.append(r)
        written += len(r) + 1
        if len(rows) == 10000:
            out.write(("" if first else ",") + ",".join(rows))
            first, rows = False, []
    if rows:
        out.write(("" if first else ",") + ",".join(rows))


def write_thread(out, k, budget, rng):
    strings, frames, stacks = thread_tables(rng)
    marker_name = len(strings) - 1
    out.write(
        '{"processType":"default","name":"Thread%d","registerTime":0,"unregisterTime":null,'
        '"tid":%d,"pid":100,' % (k, 100 + k)
    )
    out.write('"samples":{"schema":{"stack":0,"time":1,"eventDelay":2},"data":[')
    state = {"t": 0.0, "stack": rng.randrange(STACKS)}

    def sample():
        if rng.random() >= 0.7:
            state["stack"] = rng.randrange(STACKS)
        state["t"] += 1.0
        return "[%d,%.1f,0]" % (state["stack"], state["t"])

    def marker():
        state["t"] += 3.0 + rng.random()
        t = state["t"]
        return '[%d,%.1f,%.1f,1,3,{"type":"DOMEvent","eventType":"click \\"stackTable\\": %d"}]' % (
            marker_name,
            t,
            t + 0.5,
            rng.randrange(1000),
        )

    sample_budget = budget * 4 // 5
    write_rows(out, sample, sample_budget)
    out.write(']},"markers":{"schema":{"name":0,"startTime":1,"endTime":2,"phase":3,"category":4,"data":5},"data":[')
    state["t"] = 0.0
    write_rows(out, marker, budget - sample_budget)
    out.write("]},")
    out.write('"stackTable":{"schema":{"prefix":0,"frame":1},"data":')
    out.write(json.dumps(stacks, separators=(",", ":")))
    out.write('},"frameTable":{"schema":{"location":0,"relevantForJS":1,"innerWindowID":2,'
              '"implementation":3,"line":4,"column":5,"category":6,"subcategory":7},"data":')
    out.write(json.dumps(frames, separators=(",", ":")))
    out.write('},"stringTable":')
    out.write(json.dumps(strings, separators=(",", ":")))
    out.write("}")


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    size = parse_size(sys.argv[1])
    path = sys.argv[2]
    threads = int(sys.argv[3]) if len(sys.argv) > 3 else 8
    rng = random.Random(int(sys.argv[4]) if len(sys.argv) > 4 else 1)
    with open(path, "w") as out:
        out.write(
            '{"meta":{"version":27,"startTime":1700000000000,"interval":1,"product":"Firefox",'
            '"stackwalk":1,"processType":0,"categories":[{"name":"Idle","color":"transparent",'
            '"subcategories":["Other"]},{"name":"Other","color":"grey","subcategories":["Other"]},'
            '{"name":"JavaScript","color":"yellow","subcategories":["Other"]},'
            '{"name":"DOM","color":"blue","subcategories":["Other"]}],'
            '"configuration":{"threads":["GeckoMain","Renderer"],"features":["js","stackwalk"],'
            '"capacity":1048576}},"libs":[],"pages":[],"threads":['
        )
        for k in range(threads):
            if k:
                out.write(",")
            write_thread(out, k, size // threads, rng)
        out.write('],"pausedRanges":[],"processes":[]}\n')


if __name__ == "__main__":
    main()
