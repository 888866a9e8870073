#!/usr/bin/env python3
"""Write a TiDB trace (the JSON TiDB Dashboard fetches) of about SIZE bytes.

Statements one after another, each a tree across two span sets, as in the seed document
of the TiDB timeline: in the TiDB set `session.ExecuteStmt` with its executors'
`Next` calls, and in the TiKV set the requests those calls send (unary request handling,
snapshot, coprocessor scans), whose parents are TiDB spans. Ids are 64-bit (above 2^53),
times Unix nanoseconds; 1 GB is about 6.6 M spans.

    python3 scripts/gen_tidb.py 1G [seed] > tidb-1g.json
"""
import random
import sys
import tempfile

from sizes import parse_size


size = parse_size(sys.argv[1]) if len(sys.argv) > 1 else 1 << 30
rng = random.Random(int(sys.argv[2]) if len(sys.argv) > 2 else 7)

EXECUTORS = ["TableReader", "IndexLookUp", "HashJoin", "HashAgg", "Projection", "Selection",
             "StreamAgg", "IndexReader", "Sort", "Limit"]
TIKV = ["Endpoint::parse_and_handle_unary_request", "RaftKv::async_snapshot",
        "LocalReader::propose_raft_command", "Coprocessor::handle_request",
        "Snapshot::get", "Scanner::next_batch", "RocksDB::seek", "BlockCache::lookup"]

next_id = 1 << 60


def new_id():
    global next_id
    next_id += rng.randrange(1, 17)
    return next_id


def span(sid, parent, begin, dur, event):
    return (f'{{"span_id":{sid},"parent_id":{parent},"begin_unix_time_ns":{begin},'
            f'"duration_ns":{dur},"event":"{event}"}}')


tidb = tempfile.TemporaryFile("w+")
tikv = tempfile.TemporaryFile("w+")
written = 0
first = {"tidb": True, "tikv": True}


def put(which, text):
    global written
    f = tidb if which == "tidb" else tikv
    if not first[which]:
        f.write(",\n")
    first[which] = False
    f.write(text)
    written += len(text) + 2


t = 1_607_658_272_409_800_000
stmt = 0
while written < size:
    root = new_id()
    begin = t
    cur = begin + rng.randrange(2_000, 20_000)
    for _ in range(rng.randrange(1, 12)):
        ex = EXECUTORS[rng.randrange(len(EXECUTORS))]
        ex_id = new_id()
        ex_begin = cur
        cur += rng.randrange(1_000, 5_000)
        for _ in range(rng.randrange(1, 9)):
            nxt = new_id()
            n_begin = cur
            # A Next call sends a request to TiKV: a chain of nested spans there.
            req_begin = n_begin + rng.randrange(500, 3_000)
            parent = nxt
            depth = rng.randrange(2, len(TIKV) + 1)
            b = req_begin
            ids = []
            for d in range(depth):
                sid = new_id()
                ids.append((sid, parent, b, TIKV[d]))
                parent = sid
                b += rng.randrange(100, 2_000)
            end = b + rng.randrange(1_000, 50_000)
            for sid, parent_id, sb, ev in ids:
                put("tikv", span(sid, parent_id, sb, end - sb, ev))
                end += rng.randrange(50, 500)
            cur = end + rng.randrange(500, 3_000)
            put("tidb", span(nxt, ex_id, n_begin, cur - n_begin, f"executor.{ex}.Next"))
        cur += rng.randrange(500, 3_000)
        put("tidb", span(ex_id, root, ex_begin, cur - ex_begin, f"executor.{ex}.Open"))
    cur += rng.randrange(1_000, 10_000)
    put("tidb", span(root, 0, begin, cur - begin, f"session.ExecuteStmt #{stmt % 1000}"))
    stmt += 1
    # Statements overlap at times: a connection pool runs several at once.
    t = cur - rng.randrange(0, (cur - begin) // 2 + 1) if rng.random() < 0.3 else cur + rng.randrange(10_000, 100_000)

out = sys.stdout
out.write('{"trace_id": 5796316316865205225,\n "span_sets": [\n')
for k, (name, f) in enumerate([("TiDB", tidb), ("TiKV", tikv)]):
    out.write(f'  {{"node_type": "{name}", "spans": [\n')
    f.seek(0)
    while True:
        block = f.read(1 << 20)
        if not block:
            break
        out.write(block)
    out.write("\n  ]}" + (",\n" if k == 0 else "\n"))
out.write(" ]}\n")
out.flush()
