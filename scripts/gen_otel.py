#!/usr/bin/env python3
"""Write a Jaeger or OTLP/JSON trace file of about SIZE bytes.

jaeger: the query API's `{"data": [trace, …]}`, as Jaeger UI downloads it: traces of 1000
spans each (128-bit trace ids, 64-bit span ids, a CHILD_OF reference to one of the 20
spans before, two tags a span, twelve processes a trace). 1 GB is about 2.4 M spans.

otlp: `{"resourceSpans": [resource, …]}`, as an OpenTelemetry collector's file exporter
writes a batch: resources of 1000 spans each in one scope (twelve services, times as digit
strings, a parent among the 20 spans before, two attributes a span). 1 GB is about 2.8 M
spans.

    python3 scripts/gen_otel.py jaeger 1G [seed] > jaeger-1g.json
    python3 scripts/gen_otel.py otlp 1G [seed] > otlp-1g.json
"""
import random
import sys

from sizes import parse_size


if len(sys.argv) < 3 or sys.argv[1] not in ("jaeger", "otlp"):
    sys.exit(__doc__)
kind = sys.argv[1]
size = parse_size(sys.argv[2])
rng = random.Random(int(sys.argv[3]) if len(sys.argv) > 3 else 3)
SPANS = 1000


def jaeger_trace(t):
    tid = "%016x%016x" % (rng.getrandbits(64), rng.getrandbits(64))
    spans, ids = [], []
    st = 1_600_000_000_000_000 + t * 10_000
    for i in range(SPANS):
        sid = "%016x" % rng.getrandbits(64)
        ref = ""
        if ids:
            parent = ids[rng.randrange(max(0, len(ids) - 20), len(ids))]
            ref = '{"refType":"CHILD_OF","traceID":"%s","spanID":"%s"}' % (tid, parent)
        ids.append(sid)
        spans.append(
            '{"traceID":"%s","spanID":"%s","operationName":"op%d","references":[%s],'
            '"startTime":%d,"duration":%d,"tags":[{"key":"http.status","type":"int64",'
            '"value":200},{"key":"component","type":"string","value":"grpc"}],'
            '"processID":"p%d"}'
            % (tid, sid, rng.randrange(50), ref, st + i * 7, rng.randrange(1, 5000),
               rng.randrange(12)))
    procs = ",".join('"p%d":{"serviceName":"svc%d","tags":[]}' % (k, k) for k in range(12))
    return '{"traceID":"%s","spans":[%s],"processes":{%s}}' % (tid, ",\n".join(spans), procs)


def otlp_resource(t):
    tid = "%016x%016x" % (rng.getrandbits(64), rng.getrandbits(64))
    spans, ids = [], []
    st = 1_600_000_000_000_000_000 + t * 10_000_000
    for i in range(SPANS):
        sid = "%016x" % rng.getrandbits(64)
        parent = ids[rng.randrange(max(0, len(ids) - 20), len(ids))] if ids else ""
        ids.append(sid)
        start = st + i * 7000
        spans.append(
            '{"traceId":"%s","spanId":"%s","parentSpanId":"%s","name":"op%d","kind":2,'
            '"startTimeUnixNano":"%d","endTimeUnixNano":"%d","attributes":[{"key":'
            '"http.status_code","value":{"intValue":"200"}},{"key":"rpc.system","value":'
            '{"stringValue":"grpc"}}],"status":{}}'
            % (tid, sid, parent, rng.randrange(50), start, start + rng.randrange(1000, 5_000_000)))
    service = '{"key":"service.name","value":{"stringValue":"svc%d"}}' % rng.randrange(12)
    return ('{"resource":{"attributes":[%s]},"scopeSpans":[{"scope":{"name":"lib"},'
            '"spans":[%s]}]}' % (service, ",\n".join(spans)))


out = sys.stdout
out.write('{"data":[\n' if kind == "jaeger" else '{"resourceSpans":[\n')
written, t = 0, 0
while written < size:
    doc = jaeger_trace(t) if kind == "jaeger" else otlp_resource(t)
    if written:
        out.write(",\n")
    out.write(doc)
    written += len(doc)
    t += 1
out.write("]}\n" if kind == "jaeger" else "]}\n")
out.flush()
