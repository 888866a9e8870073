#!/usr/bin/env python3
"""Write a sampled speedscope profile (a py-spy recording's kind) of about SIZE bytes.

5000 frames; 20 000 distinct stacks of 5-40 frames, each sample one of them at random;
weights 0.01 s. A 500 MB file holds ~4.3 M samples.

    python3 scripts/gen_speedscope.py 500000000 ss-500m.json   # `shared` first, as
        # many writers put it
    python3 scripts/gen_speedscope.py 500000000 ss-500m.json 7 last   # `shared` after
        # the profiles, as speedscope's own exports, py-spy and rbspy write it
"""
import random
import sys

size = int(sys.argv[1])
rng = random.Random(int(sys.argv[3]) if len(sys.argv) > 3 else 7)
nf = 5000
shared_last = len(sys.argv) > 4 and sys.argv[4] == "last"
out = open(sys.argv[2], "w")
shared = ('"shared":{"frames":['
          + ",".join('{"name":"func_%d","file":"mod%d.py","line":%d}' % (i, i % 97, i) for i in range(nf))
          + ']}')
out.write('{"$schema":"https://www.speedscope.app/file-format-schema.json",')
if not shared_last:
    out.write(shared + ",")
out.write('"profiles":[{"type":"sampled","name":"main","unit":"seconds",'
          '"startValue":0,"endValue":1,"samples":[')
stacks = []
for _ in range(20000):
    depth = rng.randint(5, 40)
    stacks.append("[" + ",".join(str(rng.randrange(nf)) for _ in range(depth)) + "]")
written = n = 0
chosen = []
while written < size:
    st = stacks[rng.randrange(len(stacks))]
    chosen.append(st)
    written += len(st) + 7
    n += 1
out.write(",".join(chosen))
out.write('],"weights":[')
out.write(",".join("0.01" for _ in range(n)))
out.write("]}]")
out.write("," + shared + "}" if shared_last else "}")
