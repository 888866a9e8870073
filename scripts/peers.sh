#!/usr/bin/env bash
# The browser peer: speedscope (its npm package's built page) in headless Chromium,
# driven by Playwright, against the scorch window and `scorch render` on the same files,
# in one run. Prints a markdown table with ratios and what failed on each side.
#
#   scripts/peers.sh                                  # 4 formats × 10M 100M 375M 1G
#   SIZES="10M 100M" FORMATS="folded chrome" scripts/peers.sh
#
# Method, definitions and the environment variables (SIZES, FORMATS, SEED, WORK, TIMEOUT,
# SCORCH, CHROMIUM, SIDES): scripts/peers/peers.mjs. Results: BENCHMARKS.md.
# Needs: node and npm (Debian's), chromium (apt-get install chromium), Xvfb, /usr/bin/time
# (apt-get install time); `npm ci` in scripts/peers fetches speedscope and playwright-core.
# Not part of `.ci/run` (hours at 1 GB); `tests/peers.rs` runs a 10 MB version.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
need() { command -v "$1" >/dev/null 2>&1 || { echo "peers.sh: $1 not found: $2" >&2; exit 1; }; }
need node "apt-get install nodejs npm"
need "${CHROMIUM:-/usr/bin/chromium}" "apt-get install chromium"
need Xvfb "apt-get install xvfb"
need /usr/bin/time "apt-get install time"

if [ ! -d "$ROOT/scripts/peers/node_modules/playwright-core" ] \
    || [ ! -d "$ROOT/scripts/peers/node_modules/speedscope" ]; then
    echo "== npm ci (speedscope, playwright-core)" >&2
    (cd "$ROOT/scripts/peers" && npm ci --no-audit --no-fund >&2)
fi
if [ -z "${SCORCH:-}" ]; then
    echo "== building scorch (release)" >&2
    (cd "$ROOT" && cargo build --release --quiet)
    export SCORCH="${CARGO_TARGET_DIR:-$ROOT/target}/release/scorch"
fi
exec node "$ROOT/scripts/peers/peers.mjs"
