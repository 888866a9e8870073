#!/usr/bin/env bash
# Bar by bar: does scorch draw a Pyroscope flamebearer file the way Pyroscope does?
#
#   scripts/pyroscope-compare.sh [FILE.json ...]
#
# With no FILE: every flamebearer JSON under $CORPUS, and data/demo-pyroscope.json.
#
# For each file it draws Pyroscope's picture with $PYRO_DRAW (a command `PYRO_DRAW FILE
# OUT.png` that screenshots the canvas of Pyroscope's own flame graph component,
# @pyroscope/flamegraph 0.35.6, in a headless browser) and scorch's with
# `scorch render FILE --view icicle` at the same scale, then compares every bar wider
# than 5 px (scripts/pyroscope_compare.py says how bars are found): color (exact, and
# within TOL per channel), left edge and width in px. Prints a table per file and a
# summary. Not part of `cargo test`: it needs a browser and npm packages.
#
# Same width: scorch keeps a margin around its graph and Pyroscope's canvas has none, so
# scorch is drawn with its --width widened by its margins (measured from a first render)
# so that its graph area has exactly Pyroscope's canvas width; the two graphs then map
# ticks to pixels alike and edges compare directly.
#
# Environment:
#   WIDTH       Pyroscope's canvas width in CSS px (default 1200)
#   SCALE       device pixels per CSS px, for both (default 1)
#   TOL         per-channel tolerance for "within" (default 2); "equal" is always exact
#   BARS        0: print only the bars whose color differs (default 1: every bar of
#               every file)
#   CORPUS      where to look for flamebearer files (default ../shared/corpus next to
#               the repository)
#   PYRO_DRAW   the Pyroscope drawing command (default
#               ../shared/tools/pyroscope/run.sh next to the repository); it reads
#               PYRO_WIDTH and PYRO_SCALE, and PYRO_WORKDIR (set here to $WORK/pyroscope,
#               reused between runs)
#   SCORCH      scorch binary (default: `cargo build --release`, target/release/scorch)
#   WORK        where pictures go (default /tmp/scorch-pyroscope-compare)
#
# Needs: python3; what PYRO_DRAW needs (Chromium, node, npm).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
WIDTH=${WIDTH:-1200}
SCALE=${SCALE:-1}
TOL=${TOL:-2}
CORPUS=${CORPUS:-$ROOT/../shared/corpus}
PYRO_DRAW=${PYRO_DRAW:-$ROOT/../shared/tools/pyroscope/run.sh}
WORK=${WORK:-/tmp/scorch-pyroscope-compare}
export PYRO_WORKDIR=${PYRO_WORKDIR:-$WORK/pyroscope}
HELPER="$ROOT/scripts/pyroscope_compare.py"
mkdir -p "$WORK"

command -v python3 >/dev/null || { echo "pyroscope-compare.sh: python3 not found" >&2; exit 1; }
[ -x "$PYRO_DRAW" ] || { echo "pyroscope-compare.sh: PYRO_DRAW=$PYRO_DRAW is not executable" >&2; exit 1; }
if [ -z "${SCORCH:-}" ]; then
  echo "== building scorch (release)" >&2
  (cd "$ROOT" && cargo build --release --quiet)
  SCORCH="${CARGO_TARGET_DIR:-$ROOT/target}/release/scorch"
fi

FILES=("$@")
if [ ${#FILES[@]} = 0 ]; then
  while IFS= read -r f; do FILES+=("$f"); done < <(
    grep -rl --include='*.json' '"flamebearer"' "$CORPUS" 2>/dev/null | sort)
  FILES+=("$ROOT/data/demo-pyroscope.json")
fi

SUMMARY="$WORK/summary.tsv"
: >"$SUMMARY"
# One file: pictures in $WORK/NAME/, its row appended to $SUMMARY. Returns non-zero with
# a reason on stdout when a picture cannot be drawn or measured.
compare_one() {
  local f=$1 name=$2 out=$3 pyro_root scorch_root wide
  PYRO_WIDTH=$WIDTH PYRO_SCALE=$SCALE "$PYRO_DRAW" "$f" "$out/pyroscope.png" >"$out/pyroscope.log" 2>&1 \
    || { echo "Pyroscope's drawing failed: $(tail -1 "$out/pyroscope.log")"; return 1; }
  # First render at WIDTH, measure scorch's graph area, widen by what its margins take.
  "$SCORCH" render "$f" -o "$out/scorch.png" --view icicle --width "$WIDTH" --scale "$SCALE" \
    >/dev/null 2>"$out/scorch.log" || { echo "$(tail -1 "$out/scorch.log")"; return 1; }
  pyro_root=$(python3 "$HELPER" measure "$out/pyroscope.png" | cut -d' ' -f2) \
    || { echo "no root bar in Pyroscope's picture"; return 1; }
  scorch_root=$(python3 "$HELPER" measure "$out/scorch.png" | cut -d' ' -f2) \
    || { echo "no root bar in scorch's picture"; return 1; }
  wide=$(python3 -c "print(round($WIDTH + ($pyro_root - $scorch_root) / $SCALE))")
  if [ "$wide" != "$WIDTH" ]; then
    "$SCORCH" render "$f" -o "$out/scorch.png" --view icicle --width "$wide" --scale "$SCALE" \
      >/dev/null 2>"$out/scorch.log" || { echo "$(tail -1 "$out/scorch.log")"; return 1; }
  fi
  local args=(compare "$f" "$out/pyroscope.png" "$out/scorch.png" --tol "$TOL")
  [ "${BARS:-1}" = 1 ] && args+=(--bars)
  python3 "$HELPER" "${args[@]}" >"$out/compare.txt" || { echo "comparison failed"; return 1; }
  grep -v '^RESULT ' "$out/compare.txt" || true
  python3 - "$name" "$wide" "$out/compare.txt" >>"$SUMMARY" <<'PY'
import json, sys
name, wide, path = sys.argv[1:]
res = json.loads([l for l in open(path) if l.startswith("RESULT ")][-1][7:])
for m in res["mismatches"]:
    print(f"   color differs: {m}")
g = res["graph_px"]
print("\t".join(map(str, [name, res["bars"], res["exact"], res["within_tol"], res["missing"],
                          res["collapsed"], res["max_left"], res["max_width"],
                          f"{g[0]}/{g[1]}", wide, ""])))
PY
}

for f in "${FILES[@]}"; do
  name=$(basename "$f" .json)
  out="$WORK/$name"
  mkdir -p "$out"
  echo "== $f"
  if why=$(compare_one "$f" "$name" "$out"); then
    echo "$why"
    echo "   pictures: $out/pyroscope.png $out/scorch.png"
  else
    echo "$why" | sed 's/^/   not compared: /'
    printf '%s\t-\t-\t-\t-\t-\t-\t-\t-\t-\t%s\n' "$name" "not compared: ${why//$'\n'/ }" >>"$SUMMARY"
  fi
done

echo
python3 - "$SUMMARY" "$TOL" <<'EOF'
import sys
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1]) if l.strip()]
done = [r for r in rows if r[1] != "-"]
tol = sys.argv[2]
head = ["file", "bars", "equal", f"within {tol}", "missing", "collapsed", "max Δleft",
        "max Δwidth", "root px P/S", "scorch --width", "note"]
print("| " + " | ".join(head) + " |")
print("|" + "---|" * len(head))
for r in rows:
    print("| " + " | ".join(r) + " |")
n = sum(int(r[1]) for r in done)
eq = sum(int(r[2]) for r in done)
wt = sum(int(r[3]) for r in done)
ml = max((int(r[6]) for r in done), default=0)
mw = max((int(r[7]) for r in done), default=0)
print(f"\n{len(done)} of {len(rows)} files compared, {n} bars wider than 5 px: colors equal {eq} "
      f"(exact), within {tol} per channel {wt}; largest left-edge difference {ml} px, "
      f"largest width difference {mw} px")
EOF
