#!/usr/bin/env python3
"""Write a Chrome trace of nestable async spans: the 1 M async-span input of BENCHMARKS.md.

One thread, 2 M `b`/`e` events sorted by time, string ids "0x…" (one per span), spans of
0.05-4 us starting every ~15 ns, so ~130 are open at once; 1 M spans are ~180 MB.

    python3 scripts/gen_async.py 1000000 > async-1m.json
"""
import random
import sys

n = int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000
rng = random.Random(int(sys.argv[2]) if len(sys.argv) > 2 else 7)
events = []
t = 0.0
for i in range(n):
    t += rng.uniform(0.0, 0.03)
    dur = rng.uniform(0.05, 4.0)
    events.append((t, 0, i))
    events.append((t + dur, 1, i))
events.sort()
out = sys.stdout
out.write('{"traceEvents":[\n')
last = len(events) - 1
for k, (ts, end, i) in enumerate(events):
    ph = "e" if end else "b"
    sep = "\n" if k == last else ",\n"
    out.write(
        f'{{"ph":"{ph}","cat":"net","id":"0x{i:x}","pid":1,"tid":1,'
        f'"ts":{ts:.3f},"name":"request {i % 1000}"}}{sep}'
    )
out.write("]}\n")
