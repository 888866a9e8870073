#!/usr/bin/env bash
# Runs scorch's fuzz targets (fuzz/fuzz_targets/), each seeded from the shared corpus.
#
#   scripts/fuzz.sh                 every target, 600 s each
#   scripts/fuzz.sh 60              every target, 60 s each
#   scripts/fuzz.sh 60 folded perf  those targets, 60 s each
#
# Needs the nightly toolchain and cargo-fuzz (`cargo install cargo-fuzz`). Seeds are
# copied from $SCORCH_CORPUS (default: ../shared/corpus beside the repository, whose
# MANIFEST.tsv names each file's format) and from data/ into fuzz/corpus/<target>/, which
# also keeps what the fuzzer adds; crashes land in fuzz/artifacts/<target>/, logs in
# fuzz/logs/. None of these is committed. A crash found becomes an ordinary unit test in
# the importer it concerns (the input inlined as bytes).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
secs=${1:-600}
shift || true
all=(folded perf flamebearer pprof chrome jaeger otlp tidb cpuprofile speedscope firefox
    dtrace detect gzip pipeline)
if (($#)); then targets=("$@"); else targets=("${all[@]}"); fi
corpus=${SCORCH_CORPUS:-$root/../shared/corpus}
manifest=$corpus/MANIFEST.tsv
[[ -f $manifest ]] || echo "note: no $manifest; seeding from data/ only" >&2

# Formats (prefixes of MANIFEST.tsv's format column) whose files seed a target; "*" is
# every file. Files are given to format targets decompressed, to the others as they are.
formats() {
    case $1 in
    folded) echo folded-stacks ;;
    perf) echo perf-script-text ;;
    flamebearer) echo pyroscope-flamebearer-json ;;
    pprof) echo pprof-protobuf ;;
    chrome) echo chrome-trace-event-json ;;
    jaeger) echo jaeger- ;;
    otlp) echo otlp- ;;
    speedscope) echo speedscope-json ;;
    firefox) echo firefox- ;;
    dtrace) echo dtrace-stacks-text ;;
    detect | gzip | pipeline) echo '*' ;;
    *) echo none ;;
    esac
}
# Extra seeds from the repository's own data.
extra() {
    case $1 in
    tidb) ls data/demo-tidb-*.json ;;
    cpuprofile) ls data/recordings/*.cpuprofile ;;
    perf) ls data/recordings/*.perf.gz ;;
    folded) ls data/*.folded ;;
    flamebearer) ls data/demo-pyroscope.json ;;
    detect | pipeline) ls data/*.folded data/*.json data/recordings/* ;;
    gzip) ls data/recordings/*.gz ;;
    esac 2>/dev/null || true
}
# Longest input the fuzzer makes. Seeds longer than this are left out (JSON cut short
# would only exercise the error paths).
max_len() {
    case $1 in
    folded | perf | dtrace) echo 65536 ;;
    *) echo 262144 ;;
    esac
}

# Copies `src` into `dir` (decompressed when `raw` is 0), unless longer than `limit`.
seed() {
    local src=$1 dir=$2 raw=$3 limit=$4
    local name
    name=$(echo "${src#"$corpus"/}" | tr -c 'A-Za-z0-9._\n-' '_')
    [[ -e $dir/$name ]] && return 0
    if ((raw == 0)) && [[ $(head -c2 "$src" | od -An -tx1 | tr -d ' \n') == 1f8b ]]; then
        gzip -dc "$src" 2>/dev/null | head -c $((limit + 1)) >"$dir/$name.tmp" || true
    else
        head -c $((limit + 1)) "$src" >"$dir/$name.tmp"
    fi
    if (($(stat -c %s "$dir/$name.tmp") > limit)); then rm "$dir/$name.tmp"; else mv "$dir/$name.tmp" "$dir/$name"; fi
}

seed_target() {
    local t=$1 dir=fuzz/corpus/$1 raw=0 limit
    limit=$(max_len "$t")
    mkdir -p "$dir"
    case $t in detect | gzip | pipeline) raw=1 ;; esac
    if [[ -f $manifest ]]; then
        local prefix
        prefix=$(formats "$t")
        while IFS=$'\t' read -r path _ _ _ _ _ format _; do
            [[ $path == local_path ]] && continue
            [[ $prefix == '*' || $format == "$prefix"* ]] || continue
            [[ $t == gzip && $path != *.gz ]] && continue
            seed "$corpus/$path" "$dir" $raw "$limit"
        done <"$manifest"
    fi
    for f in $(extra "$t"); do seed "$f" "$dir" $raw "$limit"; done
}

flags=(-s none --debug-assertions)
mkdir -p fuzz/logs
summary=()
for t in "${targets[@]}"; do
    seed_target "$t"
    log=fuzz/logs/$t.log
    echo "== $t: $(find "fuzz/corpus/$t" -type f | wc -l) inputs, ${secs}s" >&2
    status=0
    cargo +nightly fuzz run "${flags[@]}" "$t" -- \
        -max_total_time="$secs" -rss_limit_mb=2048 -malloc_limit_mb=1024 -timeout=20 \
        -max_len="$(max_len "$t")" -print_final_stats=1 >"$log" 2>&1 || status=$?
    execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo '?')
    took=$(grep -o 'stat::average_exec_per_sec: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo '?')
    if ((status == 0)); then result=ok; else result="FAILED (exit $status; see $log and fuzz/artifacts/$t/)"; fi
    line="$t: $execs executions ($took/s) in ${secs}s: $result"
    echo "$line" >&2
    summary+=("$line")
done
echo
printf '%s\n' "${summary[@]}"
