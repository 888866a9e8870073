#!/usr/bin/env bash
# Side-by-side: scorch against inferno (speedscope: scripts/peers.sh)
# on the same inputs, in one run, on this machine. Prints a markdown table.
#
#   scripts/compare.sh                      # W1 folded and perf script, ~200 MB each
#   SIZE=1G PERF_SIZE=500M RUNS=5 scripts/compare.sh
#
# Environment:
#   SIZE        W1 folded input size (default 200M)
#   PERF_SIZE   W1 perf-script input size (default 200M)
#   RUNS        runs per tool and input; the median is reported (default 3)
#   SEED        generator seed (default 1)
#   REPEAT_LINES  distinct stacks of the "few distinct stacks" W1 input (default 15000)
#   WORK        scratch directory (default /tmp/scorch-compare)
#   CORPUS      corpus directory (default ../shared/corpus next to the repository)
#   BACKEND     `--backend` for scorch render (gl or vulkan; default: scorch's choice)
#   BASELINE    another scorch binary (say, built from an earlier commit): it runs in
#               turns with this one on every input, and the table gives this one's
#               speed-up over it; a generated Chrome trace (W6, CHROME_SIZE) is added
#   CHROME_SIZE W6 Chrome JSON input size with BASELINE (default 100M)
#   CARGO_TARGET_DIR  where cargo builds (default target/)
#
# Needs: cargo, /usr/bin/time (apt-get install time), inferno-collapse-perf and
# inferno-flamegraph (cargo install inferno), python3 (median and table).
#
# What is measured, per input and tool (the tools take turns, run by run): wall time
# (median of RUNS), input MB/s at that median, CPU time (user + system, median; on a
# machine shared with other work it varies less than the wall time), peak RSS (median;
# /usr/bin/time's maximum resident set size), and for scorch
# the call-tree node count and bytes per node (RSS / nodes, and the CPU data alone as
# `scorch info` reports it). Ratios are peer time / scorch time (> 1: scorch faster).
# Peers:
#   perf script: inferno-collapse-perf (perf -> folded, all cores) vs `scorch info`
#                (parse + layout); end to end `collapse-perf | flamegraph` (SVG) vs
#                `scorch render` (PNG);
#   folded:      inferno-flamegraph (folded -> SVG) vs `scorch info` and `scorch render`.
# The speed-up column also gives the median of the per-run ratios (run k of the peer over
# run k of scorch, seconds apart), which a load drifting during the run moves less.
# After the table: where `scorch render` spent its time on each input (`-v`, one run).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
SIZE=${SIZE:-200M}
PERF_SIZE=${PERF_SIZE:-200M}
RUNS=${RUNS:-3}
SEED=${SEED:-1}
WORK=${WORK:-/tmp/scorch-compare}
CORPUS=${CORPUS:-$ROOT/../shared/corpus}
TARGET=${CARGO_TARGET_DIR:-$ROOT/target}
PATH="$PATH:$HOME/.cargo/bin"
mkdir -p "$WORK"

need() { command -v "$1" >/dev/null 2>&1 || { echo "compare.sh: $1 not found: $2" >&2; exit 1; }; }
need /usr/bin/time "apt-get install time"
need inferno-collapse-perf "cargo install inferno"
need inferno-flamegraph "cargo install inferno"
need python3 "install python3"

echo "== building scorch (release)" >&2
(cd "$ROOT" && cargo build --release --quiet)
SCORCH="$TARGET/release/scorch"
RENDER_ARGS=()
[ -n "${BACKEND:-}" ] && RENDER_ARGS=(--backend "$BACKEND")

echo "== generating inputs in $WORK" >&2
W1F="$WORK/w1-$SIZE-s$SEED.folded"
W1P="$WORK/w1-$PERF_SIZE-s$SEED.perf"
[ -s "$W1F" ] || "$SCORCH" gen w1 --seed "$SEED" --size "$SIZE" -o "$W1F"
[ -s "$W1P" ] || "$SCORCH" gen w1 --format perf --seed "$SEED" --size "$PERF_SIZE" -o "$W1P"
# W1 with fewer distinct stacks: its first REPEAT_LINES stacks (long shared prefixes, as
# a generated tree walk has them) written again and again up to about the same size, as
# concatenated collapsed profiles or unmerged per-sample lines are: the same bytes to
# parse, a tenth of the call tree to lay out and draw.
W1R="$WORK/w1-$SIZE-s$SEED-repeated.folded"
if [ ! -s "$W1R" ]; then
    head -n "${REPEAT_LINES:-15000}" "$W1F" >"$WORK/block.folded"
    block=$(stat -c %s "$WORK/block.folded")
    want=$(stat -c %s "$W1F")
    : >"$W1R"
    for _ in $(seq $(((want + block - 1) / block))); do cat "$WORK/block.folded" >>"$W1R"; done
    rm -f "$WORK/block.folded"
fi

# The largest folded and perf-script files of the corpus (decompressed when gzipped).
INPUTS=("$W1F:folded:W1 generated" "$W1R:folded:W1 few distinct stacks" "$W1P:perf:W1 generated")
if [ -n "${BASELINE:-}" ]; then
    [ -x "$BASELINE" ] || { echo "compare.sh: BASELINE=$BASELINE is not an executable" >&2; exit 1; }
    W6="$WORK/w6-${CHROME_SIZE:-100M}-s$SEED.json"
    [ -s "$W6" ] || "$SCORCH" gen w6 --seed "$SEED" --size "${CHROME_SIZE:-100M}" -o "$W6"
    INPUTS+=("$W6:chrome:W6 generated")
fi
if [ -f "$CORPUS/MANIFEST.tsv" ]; then
    for kind in folded perf; do
        pat=$([ $kind = folded ] && echo '^folded-stacks' || echo '^perf-script-text')
        best=$(awk -F'\t' -v pat="$pat" 'NR>1 && $7 ~ pat {print $6 "\t" $1}' "$CORPUS/MANIFEST.tsv" \
            | sort -n | tail -1 | cut -f2)
        [ -n "$best" ] || continue
        dst="$WORK/corpus-$(basename "$best" .gz)"
        if [[ "$best" == *.gz ]]; then gzip -dc "$CORPUS/$best" >"$dst"; else cp "$CORPUS/$best" "$dst"; fi
        INPUTS+=("$dst:$kind:corpus $(basename "$best")")
    done
else
    echo "compare.sh: no corpus at $CORPUS: corpus rows skipped" >&2
fi

RESULTS="$WORK/results.tsv"
: >"$RESULTS"
: >"$WORK/parse.tsv"

# run INPUT TOOL CMD...: one timed run; appends "input tool wall_s rss_kb user_s sys_s" to
# the results.
run() {
    local input=$1 tool=$2
    shift 2
    if ! /usr/bin/time -o "$WORK/time.txt" -f '%e %M %U %S' bash -c "$*" >/dev/null 2>"$WORK/err.txt"; then
        echo "compare.sh: $tool failed on $input: $(tail -3 "$WORK/err.txt")" >&2
        return 0
    fi
    local t
    t=$(tail -1 "$WORK/time.txt")
    printf '%s\t%s\t%s\n' "$input" "$tool" "${t// /$'\t'}" >>"$RESULTS"
}

# The tools take turns: run k of every tool before run k+1 of any. On a shared machine
# the load drifts over a minute; interleaving gives every tool the same drift, so the
# ratios compare like with like.
for spec in "${INPUTS[@]}"; do
    IFS=: read -r file kind label <<<"$spec"
    echo "== $label ($kind, $(du -h "$file" | cut -f1))" >&2
    q=$(printf %q "$file")
    png=$(printf %q "$WORK/out.png")
    for _ in $(seq "$RUNS"); do
        if [ "$kind" = perf ]; then
            run "$file" "inferno-collapse-perf" "inferno-collapse-perf $q >/dev/null"
            run "$file" "collapse-perf → flamegraph" \
                "inferno-collapse-perf $q | inferno-flamegraph >$WORK/out.svg"
        elif [ "$kind" = folded ]; then
            run "$file" "inferno-flamegraph" "inferno-flamegraph $q >$WORK/out.svg"
        fi
        if [ -n "${BASELINE:-}" ]; then
            run "$file" "baseline info" "$BASELINE info $q"
            run "$file" "baseline render" "$BASELINE render $q -o $png ${RENDER_ARGS[*]:-}"
        fi
        run "$file" "scorch info" "$SCORCH info $q"
        # Parse time alone, as scorch info reports it (no process start, layout or LOD).
        "$SCORCH" info "$file" 2>/dev/null | sed -n 's/^time: *read+parse \([0-9.]*\) ms.*/\1/p' \
            | xargs -I{} printf '%s\tscorch parse only\t%s\t0\t0\t0\n' "$file" "{}" >>"$WORK/parse.tsv"
        run "$file" "scorch render" "$SCORCH render $q -o $png ${RENDER_ARGS[*]:-}"
    done
    "$SCORCH" info "$file" >"$WORK/info-$(basename "$file").txt" 2>&1 || true
    "$SCORCH" render -v "$file" -o "$WORK/out.png" ${RENDER_ARGS[*]:-} 2>&1 \
        | grep '^scorch: \(load\|render:\|device thread\)' >"$WORK/stages-$(basename "$file").txt" || true
done

# speedscope runs in its own harness: scripts/peers.sh (headless Chromium, Playwright).
SPEEDSCOPE="not run here: scripts/peers.sh runs it in headless Chromium"
echo "speedscope: $SPEEDSCOPE" >&2

python3 - "$RESULTS" "$WORK" "$SPEEDSCOPE" "${INPUTS[@]}" <<'PY'
import os, re, statistics, sys
results, work, speedscope, specs = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
rows = {}
for line in open(results):
    f, tool, wall, rss, user, sys_ = line.rstrip("\n").split("\t")
    rows.setdefault((f, tool), []).append((float(wall), int(rss), float(user) + float(sys_)))
for line in open(os.path.join(work, "parse.tsv")):
    f, tool, ms, _, _, _ = line.rstrip("\n").split("\t")
    rows.setdefault((f, tool), []).append((float(ms) / 1000, 0, 0.0))
def med(f, tool):
    v = rows.get((f, tool))
    if not v:
        return None
    return (statistics.median(w for w, _, _ in v), statistics.median(r for _, r, _ in v),
            statistics.median(c for _, _, c in v))
print("| input | size | tool | median wall | MB/s | CPU | peak RSS | nodes | RSS B/node | CPU data B/node | scorch speed-up |")
print("|---|---|---|---|---|---|---|---|---|---|---|")
for spec in specs:
    f, kind, label = spec.split(":", 2)
    size = os.path.getsize(f)
    info = open(os.path.join(work, "info-" + os.path.basename(f) + ".txt")).read()
    m = re.search(r"nodes:\s+(\d+)", info)
    nodes = int(m.group(1)) if m else None
    m = re.search(r"per node: ([\d.]+) B", info)
    cpu_per_node = m.group(1) if m else "?"
    peers = {"perf": ["inferno-collapse-perf", "collapse-perf → flamegraph"],
             "folded": ["inferno-flamegraph"]}.get(kind, [])
    baseline = ["baseline info", "baseline render"] if med(f, "baseline info") else []
    tools = peers + baseline + ["scorch parse only", "scorch info", "scorch render"]
    peer_parse = med(f, peers[0]) if peers else None
    peer_e2e = med(f, peers[-1]) if peers else None
    for tool in tools:
        r = med(f, tool)
        if r is None and tool == "scorch parse only":
            continue
        if r is None:
            print(f"| {label} | {size/1e6:.0f} MB | {tool} | failed | | | | | | | |")
            continue
        wall, rss, cpu = r
        # /usr/bin/time has 10 ms resolution: tiny inputs would divide by zero.
        if tool == "scorch parse only":
            shown = f"{wall * 1000:.1f} ms"
        else:
            shown = f"{wall:.2f} s" if wall >= 0.01 else "< 0.01 s"
        # (Parse-only times come from scorch's own clock, in ms: no clamp needed.)
        wall = max(wall, 1e-4 if tool == "scorch parse only" else 0.005)
        scorch = tool.startswith("scorch") and tool != "scorch parse only"
        ratio = ""
        def vs(peer, name):
            if peer[0] < 0.01:
                return f"n/a ({name} < 10 ms)"
            # Run k of the peer against run k of scorch (they ran seconds apart): the
            # median of these is less moved by a load that drifts over the whole run.
            paired = [p[0] / max(s[0], 0.005)
                      for p, s in zip(rows.get((f, name), []), rows.get((f, tool), []))]
            per_run = (f" (per run: median {statistics.median(paired):.2f}x)"
                       if paired and tool != "scorch parse only" else "")
            return f"{peer[0]/wall:.2f}x vs {name}{per_run}"
        parts = []
        if tool in ("scorch info", "scorch parse only") and peer_parse:
            parts.append(vs(peer_parse, peers[0]))
        if tool == "scorch render" and peer_e2e:
            parts.append(vs(peer_e2e, peers[-1]))
        for b in baseline:
            if tool == "scorch " + b.split()[1]:
                parts.append(vs(med(f, b), b))
        ratio = "; ".join(parts)
        print(f"| {label} | {size/1e6:.1f} MB | {tool} | {shown} | {size/1e6/wall:.0f} | "
              f"{f'{cpu:.2f} s' if tool != 'scorch parse only' else ''} | "
              f"{f'{rss/1024:.0f} MiB' if rss else '(in scorch info)'} | {nodes if scorch and nodes else ''} | "
              f"{(rss*1024/nodes) if scorch and nodes else 0:.0f} | "
              f"{cpu_per_node if scorch else ''} | {ratio} |".replace("| 0 |", "|  |"))
print()
print(f"speedscope: {speedscope}")
for spec in specs:
    f, kind, label = spec.split(":", 2)
    path = os.path.join(work, "stages-" + os.path.basename(f) + ".txt")
    if os.path.exists(path) and os.path.getsize(f) >= 10_000_000:
        print()
        print(f"`scorch render -v` on {label} ({kind}), one run:")
        print()
        print("```")
        print(open(path).read().rstrip())
        print("```")
PY
