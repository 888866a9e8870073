//! Conformance on real files written by other projects: `../shared/corpus` (see its
//! README and MANIFEST.tsv).
//!
//! Every `perf script` file must load and give exactly the stacks and counts of
//! inferno-collapse-perf's expected output for it, where the inferno or FlameGraph
//! repositories ship one (`…-collapsed.txt` with default options; FlameGraph's
//! `…-collapsed-all.txt` with its `_[k]`/`_[j]` annotations removed, which is the default
//! output), and otherwise load with a layout that passes its invariants.
//!
//! Every folded-stacks and Pyroscope flamebearer file must load with the totals the file
//! itself states (checked by an independent oracle: plain `f64` sums over
//! whitespace-split lines, and the raw JSON's `numTicks`), or, for the files that are
//! malformed on purpose, fail with the error listed below. Every trace (Chrome Trace
//! Event JSON, Jaeger, OTLP/JSON, and Google Cloud Trace's Jaeger-like JSON) must load as a
//! trace with the number of spans an independent oracle counts: a `serde_json::Value` walk
//! that counts the events that open a span (Chrome `X`, `B`, `b`, `n`, `S`, `i`, `I`, `R`)
//! or the span objects (Jaeger, OTLP); the three speedscope files cut off on purpose are
//! not valid JSON for the oracle, so their counts (4: two `B` and two `X` before the cut)
//! were counted by hand and are listed in [`TRUNCATED_TRACES`]. Every pprof file must load
//! with the total of its shown sample type that a separate minimal protobuf decoder in
//! this file sums ([`pprof_oracle`]). Firefox Profiler files are checked in
//! `tests/samples_firefox.rs`, speedscope and DTrace files in `samples_speedscope.rs`.
//! Every other file in the corpus must be recognised as its
//! format and refused cleanly (those importers come later), never panic and never be
//! mistaken for one of ours.
//!
//! When the corpus folder is absent (a user's clone), the tests say so and pass; with
//! `CI` or `SCORCH_REQUIRE_CORPUS=1` set they fail, as must a file the manifest lists
//! but the folder lacks.

mod common;

use scorch::import::{self, ImportError, Imported};
use scorch::layout::flame_layout;
use scorch::layout::timeline::timeline_layout;
use scorch::model::spans::SpanTree;
use scorch::model::{Profile, SourceFormat};
use serde_json::Value;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// Files that must be rejected, and a phrase their error must contain.
const EXPECTED_FAILURES: &[(&str, &str)] = &[
    // inferno's "nameattr" files map function names to SVG attributes: no counts at all.
    (
        "jonhoo_inferno/tests/data/flamegraph/nameattr/nameattr.txt",
        "unrecognised format",
    ),
    (
        "jonhoo_inferno/tests/data/flamegraph/nameattr/nameattr_duplicate_attributes.txt",
        "unrecognised format",
    ),
    (
        "jonhoo_inferno/tests/data/flamegraph/nameattr/nameattr_empty_attribute.txt",
        "unrecognised format",
    ),
    (
        "jonhoo_inferno/tests/data/flamegraph/nameattr/nameattr_empty_first_line.txt",
        "unrecognised format",
    ),
    (
        "jonhoo_inferno/tests/data/flamegraph/nameattr/nameattr_invalid_attribute.txt",
        "unrecognised format",
    ),
    // Zero-byte files.
    (
        "jonhoo_inferno/tests/data/flamegraph/empty/empty.txt",
        "the input is empty",
    ),
    (
        "jonhoo_inferno/tests/data/collapse-perf/results/no-events-collapsed.txt",
        "the input is empty",
    ),
    // A Cypress mock whose bars run past numTicks (level 0 spans ticks 32..540 of 50).
    (
        "grafana_pyroscope/cypress/fixtures/render.json",
        "past numTicks = 50",
    ),
];

/// Files that load but with known damage: (path, invalid lines, comment lines).
const EXPECTED_DAMAGE: &[(&str, u64, u64)] = &[
    (
        "jlfwong_speedscope/sample/profiles/stackcollapse/simple-with-invalids.txt",
        1,
        2,
    ),
    (
        "jonhoo_inferno/tests/data/flamegraph/bad-lines/bad-lines.txt",
        2,
        0,
    ),
    ("jonhoo_inferno/tests/data/diff-folded/bad_before.txt", 1, 0),
];

/// Traces cut off on purpose (not valid JSON): span counts counted by hand, and the
/// warning their load must report.
const TRUNCATED_TRACES: &[(&str, usize, &str)] = &[
    (
        "jlfwong_speedscope/sample/profiles/trace-event/simple-partial.json",
        4,
        "not closed by `]`",
    ),
    (
        "jlfwong_speedscope/sample/profiles/trace-event/simple-partial-trailing-comma.json",
        4,
        "not closed by `]`",
    ),
    (
        "jlfwong_speedscope/sample/profiles/trace-event/simple-partial-whitespace.json",
        4,
        "not closed by `]`",
    ),
];

/// Trace edge cases and a phrase their warnings must contain.
const EXPECTED_TRACE_NOTES: &[(&str, &str)] = &[
    (
        "jlfwong_speedscope/sample/profiles/trace-event/end-event-with-empty-stack.json",
        "1 E event with no open B",
    ),
    (
        "jlfwong_speedscope/sample/profiles/trace-event/too-many-end-events.json",
        "2 E events with no open B",
    ),
    (
        "jlfwong_speedscope/sample/profiles/trace-event/only-begin-events.json",
        "3 B events never closed",
    ),
    (
        "jlfwong_speedscope/sample/profiles/trace-event/invalid-x-nesting.json",
        "1 span partially overlapping",
    ),
    (
        "jlfwong_speedscope/sample/profiles/trace-event/mismatched-name.json",
        "1 E event closed a B of another name",
    ),
    (
        "catapult-project_catapult/tracing/test_data/main_thread_has_unclosed_slices.json",
        "4 B events never closed",
    ),
    (
        "catapult-project_catapult/tracing/test_data/simple_trace.json",
        "5 counter events (ph 'C') skipped",
    ),
    (
        "catapult-project_catapult/tracing/test_data/tcmalloc_trace.json",
        "systemTraceEvents (ftrace text) not imported",
    ),
    (
        "jaegertracing_jaeger/internal/uimodel/converter/v1/json/fixtures/ui_01.json",
        "1 span shares an id",
    ),
];

struct Entry {
    path: String,
    format: String,
    notes: String,
}

fn corpus() -> Option<(PathBuf, Vec<Entry>)> {
    let dir = common::root().join("../shared/corpus");
    let manifest = dir.join("MANIFEST.tsv");
    if !manifest.exists() {
        let required = std::env::var_os("CI").is_some()
            || std::env::var_os("SCORCH_REQUIRE_CORPUS").is_some_and(|v| v == "1");
        assert!(
            !required,
            "the corpus is required (CI) but {} is missing",
            manifest.display()
        );
        eprintln!("corpus tests skipped: {} not found", manifest.display());
        return None;
    }
    let text = std::fs::read_to_string(&manifest).unwrap();
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split('\t').collect();
    let col = |name: &str| header.iter().position(|h| *h == name).unwrap();
    let (c_path, c_format, c_notes) = (col("local_path"), col("format"), col("notes"));
    let entries = lines
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            Entry {
                path: f[c_path].to_string(),
                format: f[c_format].to_string(),
                notes: f.get(c_notes).unwrap_or(&"").to_string(),
            }
        })
        .collect();
    Some((dir, entries))
}

fn is_perf(format: &str) -> bool {
    format.starts_with("perf-script-text")
}

fn is_ours(format: &str) -> bool {
    format.starts_with("folded-stacks") || format.starts_with("pyroscope-flamebearer-json")
}

/// Formats whose corpus files `tests/samples_speedscope.rs` checks.
fn has_own_test(format: &str) -> bool {
    format.starts_with("speedscope-json")
        || format.starts_with("dtrace-stacks-text")
        || format.starts_with("firefox")
}

fn is_pprof(format: &str) -> bool {
    format.starts_with("pprof-protobuf")
}

fn is_trace(format: &str) -> bool {
    [
        "chrome-trace-event-json",
        "jaeger",
        "otlp",
        "google-cloud-trace-json",
    ]
    .iter()
    .any(|f| format.starts_with(f))
}

/// The whole file as a `Value` (gunzipped), or `None` when it is not valid JSON.
fn oracle_json(path: &Path) -> Option<Value> {
    let bytes = std::fs::read(path).unwrap();
    let bytes = if bytes.starts_with(&[0x1f, 0x8b]) {
        let mut out = Vec::new();
        std::io::Read::read_to_end(&mut flate2::read::MultiGzDecoder::new(&bytes[..]), &mut out)
            .unwrap();
        out
    } else {
        bytes
    };
    serde_json::from_slice(&bytes).ok()
}

/// Spans a trace file holds, by the rules in the module comment.
fn oracle_span_count(format: &str, v: &Value) -> usize {
    let len = |v: Option<&Value>| v.and_then(Value::as_array).map_or(0, Vec::len);
    if format.starts_with("chrome") {
        let events = v.get("traceEvents").unwrap_or(v).as_array().unwrap();
        return events
            .iter()
            .filter(|e| {
                let ph = e.get("ph").and_then(Value::as_str).unwrap_or("");
                ["X", "B", "b", "n", "S", "i", "I", "R"].contains(&ph)
            })
            .count();
    }
    if format.starts_with("otlp") {
        let rs = v
            .get("resourceSpans")
            .or_else(|| v.get("result").and_then(|r| r.get("resourceSpans")));
        return rs
            .and_then(Value::as_array)
            .unwrap()
            .iter()
            .flat_map(|r| {
                r.get("scopeSpans")
                    .or_else(|| r.get("instrumentationLibrarySpans"))
                    .and_then(Value::as_array)
                    .cloned()
                    .unwrap_or_default()
            })
            .map(|ss| len(ss.get("spans")))
            .sum();
    }
    // Jaeger (and Google Cloud Trace): spans arrays of one or more traces, or bare spans.
    match v {
        Value::Array(a) if a.iter().all(|x| x.get("spans").is_some()) => {
            a.iter().map(|t| len(t.get("spans"))).sum()
        }
        Value::Array(a) => a.len(),
        _ => match v.get("data") {
            Some(Value::Array(a)) => a.iter().map(|t| len(t.get("spans"))).sum(),
            Some(d) => len(d.get("spans")),
            None => len(v.get("spans")),
        },
    }
}

#[test]
fn trace_files_load_with_the_span_counts_an_oracle_counts() {
    let Some((dir, entries)) = corpus() else {
        return;
    };
    let mut failures = Vec::new();
    let (mut checked, mut spans_total) = (0, 0);
    for e in entries.iter().filter(|e| is_trace(&e.format)) {
        checked += 1;
        let path = dir.join(&e.path);
        if !path.exists() {
            failures.push(format!("{}: listed in MANIFEST.tsv but missing", e.path));
            continue;
        }
        let want_format = expected_format(&e.format).unwrap_or(SourceFormat::Jaeger);
        let result = std::panic::catch_unwind(|| import::load_any_path(&path));
        let t = match result {
            Err(_) => {
                failures.push(format!("{}: PANICKED", e.path));
                continue;
            }
            Ok(Err(err)) => {
                failures.push(format!("{}: {err}", e.path));
                continue;
            }
            Ok(Ok(Imported::Profile(_))) => {
                failures.push(format!("{}: loaded as a profile", e.path));
                continue;
            }
            Ok(Ok(Imported::Trace(t))) => t,
        };
        if t.format != want_format {
            failures.push(format!(
                "{}: read as {:?}, want {want_format:?}",
                e.path, t.format
            ));
            continue;
        }
        let truncated = TRUNCATED_TRACES.iter().find(|(p, _, _)| *p == e.path);
        let want = match (oracle_json(&path), truncated) {
            (Some(v), None) => oracle_span_count(&e.format, &v),
            (None, Some(&(_, n, _))) => n,
            (Some(_), Some(_)) => {
                failures.push(format!("{}: listed as truncated but parses", e.path));
                continue;
            }
            (None, None) => {
                failures.push(format!("{}: the oracle cannot read it", e.path));
                continue;
            }
        };
        let s = &t.spans;
        if s.len() != want {
            failures.push(format!(
                "{}: {} spans, the oracle counts {want} (warnings: {:?})",
                e.path,
                s.len(),
                s.warnings.lines()
            ));
            continue;
        }
        let notes = s.warnings.lines().join("; ");
        let phrases = EXPECTED_TRACE_NOTES
            .iter()
            .filter(|(p, _)| *p == e.path)
            .map(|(_, w)| *w)
            .chain(truncated.map(|t| t.2));
        if let Some(missing) = phrases.into_iter().find(|w| !notes.contains(w)) {
            failures.push(format!("{}: warnings lack '{missing}': {notes}", e.path));
            continue;
        }
        // Every span has a track and is placed exactly once in the timeline.
        if s.track.iter().any(|&tr| tr as usize >= s.tracks.len())
            || (!s.track_info.is_empty() && s.track_info.len() != s.tracks.len())
        {
            failures.push(format!("{}: a span without a track", e.path));
            continue;
        }
        let tree = SpanTree::build(s);
        let layout = timeline_layout(s, &tree);
        let placed: usize = layout.rows.iter().map(|r| r.len()).sum();
        if placed != s.len() {
            failures.push(format!("{}: {placed} of {} spans placed", e.path, s.len()));
            continue;
        }
        spans_total += s.len();
    }
    eprintln!(
        "corpus: {checked} trace files loaded with the oracle's span counts ({spans_total} spans), {} failures",
        failures.len()
    );
    assert!(
        failures.is_empty(),
        "corpus failures:\n{}",
        failures.join("\n")
    );
    assert!(checked >= 65, "only {checked} trace files in the manifest");
}

/// Text of a folded file as the oracle reads it: UTF-16 with a BOM decoded, else UTF-8.
fn oracle_text(bytes: &[u8]) -> String {
    let utf16 = |le: bool| {
        let units: Vec<u16> = bytes[2..]
            .chunks_exact(2)
            .map(|c| {
                if le {
                    u16::from_le_bytes([c[0], c[1]])
                } else {
                    u16::from_be_bytes([c[0], c[1]])
                }
            })
            .collect();
        String::from_utf16_lossy(&units)
    };
    match bytes {
        [0xFF, 0xFE, ..] => utf16(true),
        [0xFE, 0xFF, ..] => utf16(false),
        _ => String::from_utf8_lossy(bytes).to_string(),
    }
}

fn is_count(s: &str) -> bool {
    let mut parts = s.splitn(2, '.');
    let int = parts.next().unwrap_or("");
    let frac = parts.next().unwrap_or("");
    !int.is_empty()
        && int.bytes().all(|b| b.is_ascii_digit())
        && frac.bytes().all(|b| b.is_ascii_digit())
}

/// Independent folded oracle: (left sum, right sum or total, invalid lines, diff?).
fn folded_oracle(text: &str) -> (f64, f64, u64, bool) {
    let mut diff = None;
    let (mut left, mut right, mut invalid) = (0.0, 0.0, 0u64);
    for line in text.lines() {
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        let toks: Vec<&str> = line.split_whitespace().collect();
        let n = toks.len();
        let two = n >= 3 && is_count(toks[n - 1]) && is_count(toks[n - 2]);
        let one = n >= 2 && is_count(toks[n - 1]);
        if !one {
            if !(line.starts_with('#') || line.starts_with("//")) {
                invalid += 1;
            }
            continue;
        }
        let d = *diff.get_or_insert(two);
        if d {
            if !two {
                invalid += 1;
                continue;
            }
            left += toks[n - 2].parse::<f64>().unwrap();
            right += toks[n - 1].parse::<f64>().unwrap();
        } else {
            right += toks[n - 1].parse::<f64>().unwrap();
        }
    }
    (left, right, invalid, diff == Some(true))
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-6 * a.abs().max(b.abs()).max(1.0)
}

fn check_folded(path: &Path, p: &Profile) -> Result<String, String> {
    let (left, right, invalid, diff) = folded_oracle(&oracle_text(&std::fs::read(path).unwrap()));
    let unit = p.values.ticks_per_unit as f64;
    let total = p.tree.grand_total() as f64 / unit;
    if diff != p.is_diff() {
        return Err(format!(
            "differential: oracle {diff}, scorch {}",
            p.is_diff()
        ));
    }
    if diff {
        let (l, r) = p.meta.diff_ticks.unwrap();
        if !close(l as f64 / unit, left) || !close(r as f64 / unit, right) {
            return Err(format!(
                "diff totals {l}/{r} (÷{unit}) vs oracle {left}/{right}"
            ));
        }
    } else if !close(total, right) {
        return Err(format!("total {total} vs oracle {right}"));
    }
    if p.meta.warnings.invalid_lines != invalid {
        return Err(format!(
            "invalid lines: scorch {} vs oracle {invalid}",
            p.meta.warnings.invalid_lines
        ));
    }
    Ok(format!("total {}", if diff { left + right } else { right }))
}

fn json_u64(v: &serde_json::Value) -> Option<u64> {
    v.as_u64()
        .or_else(|| v.as_str().and_then(|s| s.parse().ok()))
}

fn check_flamebearer(path: &Path, entry: &Entry, p: &Profile) -> Result<String, String> {
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    let fb = v
        .get("flamebearer")
        .or_else(|| v.get("flamegraph"))
        .unwrap_or(&v);
    let stated = fb
        .get("numTicks")
        .or_else(|| fb.get("total"))
        .and_then(json_u64)
        .ok_or("no numTicks in the file")?;
    if p.tree.grand_total() != stated {
        return Err(format!(
            "total {} vs numTicks {stated}",
            p.tree.grand_total()
        ));
    }
    // The manifest's own note agrees (numTicks=N), as a second witness.
    if let Some(n) = entry.notes.split("numTicks=").nth(1) {
        let n: u64 = n
            .split(|c: char| !c.is_ascii_digit())
            .next()
            .unwrap()
            .parse()
            .unwrap();
        if n != stated {
            return Err(format!("manifest says numTicks={n}, file says {stated}"));
        }
    }
    if let (Some(l), Some(r)) = (
        v.get("leftTicks")
            .or_else(|| fb.get("leftTicks"))
            .and_then(json_u64),
        v.get("rightTicks")
            .or_else(|| fb.get("rightTicks"))
            .and_then(json_u64),
    ) && p.meta.diff_ticks != Some((l, r))
    {
        return Err(format!("diff ticks {:?} vs {l}/{r}", p.meta.diff_ticks));
    }
    let names = fb
        .get("names")
        .and_then(|n| n.as_array())
        .map_or(0, |a| a.len());
    let bars: usize = fb
        .get("levels")
        .and_then(|l| l.as_array())
        .map_or(0, |levels| {
            levels
                .iter()
                .map(|lv| {
                    let vals = lv.get("values").unwrap_or(lv);
                    vals.as_array().map_or(0, |a| a.len())
                })
                .sum::<usize>()
        })
        / if p.is_diff() { 7 } else { 4 };
    // Every bar of the file is a node (plus a synthetic root when level 0 is not one bar).
    if p.tree.len() != bars && p.tree.len() != bars + 1 {
        return Err(format!("{} nodes for {bars} bars", p.tree.len()));
    }
    if p.names.len() > names + 1 {
        return Err(format!(
            "{} names interned, file has {names}",
            p.names.len()
        ));
    }
    Ok(format!("numTicks {stated}"))
}

#[test]
fn folded_and_flamebearer_files_load_with_their_stated_totals() {
    let Some((dir, entries)) = corpus() else {
        return;
    };
    let mut failures = Vec::new();
    let (mut loaded, mut rejected, mut checked) = (0, 0, 0);
    for e in entries.iter().filter(|e| is_ours(&e.format)) {
        checked += 1;
        let path = dir.join(&e.path);
        if !path.exists() {
            failures.push(format!("{}: listed in MANIFEST.tsv but missing", e.path));
            continue;
        }
        let expected_failure = EXPECTED_FAILURES.iter().find(|(p, _)| *p == e.path);
        match (import::load_path(&path), expected_failure) {
            (Ok(p), None) => {
                let check = if e.format.starts_with("folded") {
                    check_folded(&path, &p)
                } else {
                    check_flamebearer(&path, e, &p)
                };
                if let Err(why) = check {
                    failures.push(format!("{}: {why}", e.path));
                    continue;
                }
                if let Err(why) = flame_layout(&p.tree).check(&p.tree) {
                    failures.push(format!("{}: layout invariant broken: {why}", e.path));
                    continue;
                }
                if let Some(&(_, inv, com)) = EXPECTED_DAMAGE.iter().find(|(f, _, _)| *f == e.path)
                {
                    let w = &p.meta.warnings;
                    if (w.invalid_lines, w.comment_lines) != (inv, com) {
                        failures.push(format!(
                            "{}: expected {inv} invalid and {com} comment lines, got {} and {}",
                            e.path, w.invalid_lines, w.comment_lines
                        ));
                        continue;
                    }
                } else if p.meta.warnings.invalid_lines > 0 {
                    failures.push(format!(
                        "{}: unexpected invalid lines: {:?}",
                        e.path,
                        p.meta.warnings.lines()
                    ));
                    continue;
                }
                loaded += 1;
            }
            (Ok(_), Some((_, why))) => {
                failures.push(format!("{}: loaded, but must fail with '{why}'", e.path))
            }
            (Err(err), Some((_, why))) => {
                let msg = err.to_string();
                if msg.contains(why) && msg.contains(&*path.to_string_lossy()) {
                    rejected += 1;
                } else {
                    failures.push(format!(
                        "{}: error '{msg}' lacks '{why}' or the path",
                        e.path
                    ));
                }
            }
            (Err(err), None) => failures.push(format!("{}: {err}", e.path)),
        }
    }
    eprintln!(
        "corpus: {checked} folded/flamebearer files checked: {loaded} loaded with the totals they \
         state, {rejected} rejected as expected, {} failures",
        failures.len()
    );
    assert!(
        failures.is_empty(),
        "corpus failures:\n{}",
        failures.join("\n")
    );
    assert_eq!(rejected, EXPECTED_FAILURES.len());
    assert!(
        checked >= 90,
        "only {checked} files of our formats in the manifest"
    );
}

/// The format each manifest family must be recognised as.
fn expected_format(manifest_format: &str) -> Option<SourceFormat> {
    let f = manifest_format;
    Some(if f.starts_with("chrome-trace-event-json") {
        SourceFormat::ChromeTrace
    } else if f.starts_with("perf-script-text") {
        SourceFormat::PerfScript
    } else if f.starts_with("dtrace-stacks-text") {
        SourceFormat::DTrace
    } else if f.starts_with("pprof-protobuf") {
        SourceFormat::Pprof
    } else if f.starts_with("speedscope-json") {
        SourceFormat::Speedscope
    } else if f.starts_with("firefox") {
        SourceFormat::FirefoxProfile
    } else if f.starts_with("jaeger") {
        SourceFormat::Jaeger
    } else if f.starts_with("otlp") {
        SourceFormat::Otlp
    } else {
        return None;
    })
}

#[test]
fn every_other_corpus_file_is_recognised_and_refused_cleanly() {
    let Some((dir, entries)) = corpus() else {
        return;
    };
    let mut failures = Vec::new();
    let mut checked = 0;
    for e in entries.iter().filter(|e| {
        !is_ours(&e.format)
            && !is_perf(&e.format)
            && !is_trace(&e.format)
            && !is_pprof(&e.format)
            && !has_own_test(&e.format)
    }) {
        let path = dir.join(&e.path);
        if !path.exists() {
            failures.push(format!("{}: listed in MANIFEST.tsv but missing", e.path));
            continue;
        }
        checked += 1;
        let result = std::panic::catch_unwind(|| import::load_path(&path));
        let Ok(result) = result else {
            failures.push(format!("{}: PANICKED", e.path));
            continue;
        };
        match (result, expected_format(&e.format)) {
            (Err(ImportError::Unsupported { format, .. }), Some(want)) if format == want => {}
            (Err(ImportError::Unsupported { .. }), None) => {}
            // A zero-byte file has no format to recognise.
            (Err(ImportError::Empty { .. }), _) if std::fs::metadata(&path).unwrap().len() == 0 => {
            }
            (Err(ImportError::Unsupported { format, .. }), Some(want)) => failures.push(format!(
                "{}: recognised as {format:?}, manifest says {want:?}",
                e.path
            )),
            (Err(other), _) => failures.push(format!("{}: {other}", e.path)),
            (Ok(p), _) => failures.push(format!(
                "{}: a {} file was imported as {}",
                e.path,
                e.format,
                p.meta.format.describe()
            )),
        }
    }
    eprintln!("corpus: {checked} files of other formats recognised and refused cleanly");
    assert!(
        failures.is_empty(),
        "corpus failures:\n{}",
        failures.join("\n")
    );
}

/// Perf files that load with known damage: (path, invalid lines).
const PERF_DAMAGE: &[(&str, u64)] = &[
    (
        "jonhoo_inferno/tests/data/collapse-perf/weird-stack-line.txt",
        1,
    ),
    // The stack of the second sample is cut off by a blank line.
    ("jonhoo_inferno/tests/data/collapse-perf/empty-line.txt", 1),
    // A line cut short: `7fa4c73bc184 start_thread (/lib/x86_64-linux-gnu`.
    ("Netflix_flamescope/examples/perf.test01", 1),
];

/// Perf files that must be rejected, and a phrase their error must contain.
const PERF_FAILURES: &[(&str, &str)] = &[
    // The only event line is followed by a blank line, so its stack lines are orphans:
    // no sample has a stack (inferno's output for it is empty too).
    (
        "jonhoo_inferno/tests/data/collapse-guess/invalid-perf-with-empty-line-after-event-line.txt",
        "no stack samples found: no event line followed by stack frames; 6 lines of another \
         shape (line 3: expected an event line",
    ),
];

/// FlameGraph inputs whose Perl-made expected output inferno (and scorch) do not match.
/// (inferno 0.12.8 agrees with scorch on each; checked with the live comparison below.)
const PERL_DIFFERS: &[(&str, &str)] = &[
    (
        "brendangregg_FlameGraph/test/perf-dd-stacks-01.txt",
        "inferno keeps a sample the Perl script drops",
    ),
    (
        "brendangregg_FlameGraph/test/perf-js-stacks-01.txt",
        "the Perl script strips quotes from names, inferno does not",
    ),
    (
        "brendangregg_FlameGraph/test/perf-mirageos-stacks-01.txt",
        "one sample counted differently",
    ),
    (
        "brendangregg_FlameGraph/test/perf-numa-stacks-01.txt",
        "one sample counted differently",
    ),
    (
        "brendangregg_FlameGraph/test/perf-vertx-stacks-01.txt",
        "inferno keeps a sample the Perl script drops",
    ),
];

/// `inferno-collapse-perf`'s live output for `text`, when it is on the PATH.
fn live_inferno(text: &[u8]) -> Option<String> {
    use std::io::Write;
    let mut child = std::process::Command::new("inferno-collapse-perf")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .ok()?;
    let mut stdin = child.stdin.take()?;
    let input = text.to_vec();
    let writer = std::thread::spawn(move || stdin.write_all(&input));
    let out = child.wait_with_output().ok()?;
    let _ = writer.join();
    Some(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// inferno's expected collapsed output for a perf input, with annotations removed.
fn perf_oracle(dir: &Path, path: &str) -> Option<String> {
    let (stem, folder) = (
        path.rsplit('/').next()?.strip_suffix(".txt")?,
        path.rsplit_once('/')?.0,
    );
    let default = dir.join(format!("{folder}/results/{stem}-collapsed.txt"));
    if default.exists() {
        return Some(std::fs::read_to_string(default).unwrap());
    }
    // inferno's `--all` output (kernel and JIT annotations) for FlameGraph's inputs,
    // else FlameGraph's own (stackcollapse-perf.pl `--all`, which inferno's tests
    // compare with, minus the differences listed in PERL_DIFFERS).
    let inferno_all = dir.join(format!(
        "jonhoo_inferno/tests/data/collapse-perf/results/{stem}-collapsed-all.txt"
    ));
    let perl_all = dir.join(format!("{folder}/results/{stem}-collapsed-all.txt"));
    let all = if inferno_all.exists() {
        inferno_all
    } else {
        perl_all
    };
    if all.exists() && !PERL_DIFFERS.iter().any(|(f, _)| *f == path) {
        let text = std::fs::read_to_string(all).unwrap();
        let stripped: Vec<String> = text
            .lines()
            .map(|l| {
                let (stack, count) = l.rsplit_once(' ').unwrap();
                let frames: Vec<&str> = stack
                    .split(';')
                    .map(|f| {
                        f.strip_suffix("_[k]")
                            .or_else(|| f.strip_suffix("_[j]"))
                            .unwrap_or(f)
                    })
                    .collect();
                format!("{} {count}", frames.join(";"))
            })
            .collect();
        return Some(stripped.join("\n"));
    }
    None
}

/// Sorted `path count` lines of a profile, merged by path.
fn collapsed(p: &Profile) -> Vec<String> {
    let mut v = Vec::new();
    for n in 1..p.tree.len() as u32 {
        let s = p.tree.self_ticks(n);
        if s > 0 {
            let path: Vec<&str> = p
                .tree
                .path(n)
                .iter()
                .map(|&x| p.names.get(p.tree.name(x)))
                .collect();
            // Trimmed as a folded line is when read back (a last frame named " ").
            v.push(format!("{} {s}", path.join(";").trim_end()));
        }
    }
    v.sort();
    v
}

#[test]
fn perf_script_files_match_inferno() {
    let Some((dir, entries)) = corpus() else {
        return;
    };
    let mut failures = Vec::new();
    let (mut matched, mut loaded, mut rejected, mut live_checked) = (0, 0, 0, 0);
    for e in entries.iter().filter(|e| is_perf(&e.format)) {
        let path = dir.join(&e.path);
        if !path.exists() {
            failures.push(format!("{}: listed in MANIFEST.tsv but missing", e.path));
            continue;
        }
        let result = std::panic::catch_unwind(|| import::load_path(&path));
        let Ok(result) = result else {
            failures.push(format!("{}: PANICKED", e.path));
            continue;
        };
        let p = match result {
            Ok(p) => p,
            // A zero-byte file has nothing to load.
            Err(ImportError::Empty { .. }) if std::fs::metadata(&path).unwrap().len() == 0 => {
                rejected += 1;
                continue;
            }
            Err(err) => {
                let msg = err.to_string();
                match PERF_FAILURES.iter().find(|(f, _)| *f == e.path) {
                    Some((_, why)) if msg.contains(why) && msg.contains(&e.path) => rejected += 1,
                    _ => failures.push(format!("{}: {err}", e.path)),
                }
                continue;
            }
        };
        if PERF_FAILURES.iter().any(|(f, _)| *f == e.path) {
            failures.push(format!("{}: loaded, but must fail", e.path));
            continue;
        }
        if p.meta.format != SourceFormat::PerfScript {
            failures.push(format!("{}: read as {:?}", e.path, p.meta.format));
            continue;
        }
        let want_invalid = PERF_DAMAGE
            .iter()
            .find(|(f, _)| *f == e.path)
            .map_or(0, |d| d.1);
        if p.meta.warnings.invalid_lines != want_invalid {
            failures.push(format!(
                "{}: {} invalid lines, expected {want_invalid}: {:?}",
                e.path,
                p.meta.warnings.invalid_lines,
                p.meta.warnings.lines()
            ));
            continue;
        }
        if let Err(why) = flame_layout(&p.tree).check(&p.tree) {
            failures.push(format!("{}: layout invariant broken: {why}", e.path));
            continue;
        }
        // With inferno installed, compare with its live output too (every file).
        let raw = std::fs::read(&path).unwrap();
        let decoded = import::decode::decode(&e.path, &raw, import::Limits::default()).unwrap();
        if let Some(live) = live_inferno(&decoded.text) {
            let want = import::load_bytes("live", live.as_bytes(), import::Limits::default())
                .map(|o| collapsed(&o))
                .unwrap_or_default();
            // inferno reads no event line with tabs (simpleperf); scorch does.
            if collapsed(&p) != want && !(want.is_empty() && raw_has_tab_events(&decoded.text)) {
                failures.push(format!(
                    "{}: differs from live inferno-collapse-perf",
                    e.path
                ));
                continue;
            }
            live_checked += 1;
        }
        if let Some(oracle) = perf_oracle(&dir, &e.path) {
            let want = import::load_bytes("oracle", oracle.as_bytes(), import::Limits::default())
                .map(|o| collapsed(&o))
                .unwrap_or_default();
            let got = collapsed(&p);
            if got != want {
                let missing: Vec<_> = want.iter().filter(|l| !got.contains(l)).take(3).collect();
                let extra: Vec<_> = got.iter().filter(|l| !want.contains(l)).take(3).collect();
                failures.push(format!(
                    "{}: differs from inferno ({} vs {} stacks); missing {missing:?}, extra {extra:?}",
                    e.path,
                    got.len(),
                    want.len()
                ));
                continue;
            }
            matched += 1;
        }
        loaded += 1;
    }
    eprintln!(
        "corpus: perf script: {loaded} loaded ({matched} equal to inferno's stored output, \
         {live_checked} to live inferno-collapse-perf), {rejected} rejected (empty or \
         malformed on purpose), {} failures",
        failures.len()
    );
    assert!(
        failures.is_empty(),
        "corpus failures:\n{}",
        failures.join("\n")
    );
    assert!(
        matched >= 10,
        "only {matched} perf files compared with inferno"
    );
}

/// True when an event line separates its fields with tabs (simpleperf's output).
fn raw_has_tab_events(text: &[u8]) -> bool {
    String::from_utf8_lossy(text)
        .lines()
        .any(|l| !l.starts_with(['\t', ' ', '#']) && l.contains('\t'))
}

/// pprof files whose load must carry a note containing this phrase.
const PPROF_NOTES: &[(&str, &str)] = &[
    // Every function has id 0: repaired as Pyroscope repairs it.
    (
        "grafana_pyroscope/pkg/og/convert/pprof/testdata/dotnet-pprof-73.pb.gz",
        "every function has id 0",
    ),
    // Its default (last) sample type, lock-time, is 0 in every sample.
    (
        "grafana_pyroscope/pkg/og/convert/pprof/testdata/dotnet-pprof-73.pb.gz",
        "showing cpu/nanoseconds",
    ),
];

/// What the pprof oracle finds: the sample type shown and the sum of its values.
#[derive(Debug, PartialEq)]
struct PprofSums {
    /// `type/unit` of the shown sample type.
    shown: String,
    /// Sum of its positive values over all samples, in the file's unit.
    total: u128,
    /// Samples in the file.
    samples: usize,
}

/// An independent, deliberately plain pprof reader: every top-level field of the
/// `Profile`, the values of each sample (packed or not), the string table. The type shown
/// is `default_sample_type` when it names one, else the last; when that one is 0 in every
/// sample, the first type with a positive value (scorch's documented fallback).
fn pprof_oracle(bytes: &[u8]) -> PprofSums {
    fn varint(b: &[u8], i: &mut usize) -> u64 {
        let mut v = 0u64;
        for shift in (0..64).step_by(7) {
            let x = b[*i];
            *i += 1;
            v |= u64::from(x & 0x7f) << shift;
            if x < 0x80 {
                break;
            }
        }
        v
    }
    /// (field, varint value or payload) of each field of `b`.
    fn fields(b: &[u8]) -> Vec<(u64, Result<u64, &[u8]>)> {
        let mut out = Vec::new();
        let mut i = 0;
        while i < b.len() {
            let tag = varint(b, &mut i);
            match tag & 7 {
                0 => out.push((tag >> 3, Ok(varint(b, &mut i)))),
                2 => {
                    let n = varint(b, &mut i) as usize;
                    out.push((tag >> 3, Err(&b[i..i + n])));
                    i += n;
                }
                1 => i += 8,
                5 => i += 4,
                w => panic!("wire type {w}"),
            }
        }
        out
    }
    let data = if bytes.starts_with(&[0x1f, 0x8b]) {
        let mut out = Vec::new();
        std::io::Read::read_to_end(&mut flate2::read::MultiGzDecoder::new(bytes), &mut out)
            .unwrap();
        out
    } else {
        bytes.to_vec()
    };
    let (mut strings, mut types, mut samples) = (Vec::new(), Vec::new(), Vec::new());
    let mut default = 0;
    for (f, v) in fields(&data) {
        match (f, v) {
            (1, Err(m)) => {
                let vt = fields(m);
                let get = |n| vt.iter().find(|x| x.0 == n).map_or(0, |x| x.1.unwrap());
                types.push((get(1), get(2)));
            }
            (2, Err(m)) => {
                let mut values: Vec<i64> = Vec::new();
                for (g, w) in fields(m) {
                    match (g, w) {
                        (2, Ok(v)) => values.push(v as i64),
                        (2, Err(packed)) => {
                            let mut i = 0;
                            while i < packed.len() {
                                values.push(varint(packed, &mut i) as i64);
                            }
                        }
                        _ => {}
                    }
                }
                samples.push(values);
            }
            (6, Err(s)) => strings.push(String::from_utf8_lossy(s).into_owned()),
            (14, Ok(v)) => default = v,
            _ => {}
        }
    }
    let name = |(t, u): (u64, u64)| format!("{}/{}", strings[t as usize], strings[u as usize]);
    let sum = |k: usize| -> u128 {
        samples
            .iter()
            .filter(|v| v.len() == types.len())
            .map(|v| v[k].max(0) as u128)
            .sum()
    };
    let default_name = &strings[default as usize];
    let mut k = types
        .iter()
        .position(|&(t, _)| !default_name.is_empty() && strings[t as usize] == *default_name)
        .unwrap_or(types.len() - 1);
    if sum(k) == 0 {
        k = (0..types.len()).find(|&i| sum(i) > 0).unwrap_or(k);
    }
    PprofSums {
        shown: name(types[k]),
        total: sum(k),
        samples: samples.len(),
    }
}

#[test]
fn pprof_files_load_with_the_totals_an_oracle_sums() {
    let Some((dir, entries)) = corpus() else {
        return;
    };
    let mut failures = Vec::new();
    let (mut checked, mut samples) = (0, 0);
    for e in entries.iter().filter(|e| is_pprof(&e.format)) {
        let path = dir.join(&e.path);
        if !path.exists() {
            failures.push(format!("{}: listed in MANIFEST.tsv but missing", e.path));
            continue;
        }
        let result = std::panic::catch_unwind(|| import::load_path(&path));
        let p = match result {
            Err(_) => {
                failures.push(format!("{}: PANICKED", e.path));
                continue;
            }
            Ok(Err(err)) => {
                failures.push(format!("{}: {err}", e.path));
                continue;
            }
            Ok(Ok(p)) => p,
        };
        if p.meta.format != SourceFormat::Pprof {
            failures.push(format!("{}: read as {:?}", e.path, p.meta.format));
            continue;
        }
        let want = pprof_oracle(&std::fs::read(&path).unwrap());
        let types = p.meta.sample_types.clone().unwrap();
        let shown = &types.names[types.chosen];
        // Time units scorch shows in nanoseconds.
        let unit = shown.rsplit('/').next().unwrap_or("");
        let scale: u128 = match unit {
            "microseconds" => 1_000,
            "milliseconds" => 1_000_000,
            "seconds" => 1_000_000_000,
            _ => 1,
        };
        let got = u128::from(p.tree.grand_total());
        if *shown != want.shown || got != want.total * scale {
            failures.push(format!(
                "{}: {shown} total {got}, the oracle sums {} of {} (×{scale})",
                e.path, want.total, want.shown
            ));
            continue;
        }
        let notes = p.meta.warnings.lines().join("; ");
        let expected: Vec<&str> = PPROF_NOTES
            .iter()
            .filter(|(f, _)| *f == e.path)
            .map(|(_, n)| *n)
            .collect();
        if let Some(missing) = expected.iter().find(|n| !notes.contains(*n)) {
            failures.push(format!("{}: warnings lack '{missing}': {notes}", e.path));
            continue;
        }
        if expected.is_empty() && !p.meta.warnings.is_empty() {
            failures.push(format!("{}: unexpected warnings: {notes}", e.path));
            continue;
        }
        if let Err(why) = flame_layout(&p.tree).check(&p.tree) {
            failures.push(format!("{}: layout invariant broken: {why}", e.path));
            continue;
        }
        checked += 1;
        samples += want.samples;
    }
    eprintln!(
        "corpus: {checked} pprof files loaded with the oracle's totals ({samples} samples), {} \
         failures",
        failures.len()
    );
    assert!(
        failures.is_empty(),
        "corpus failures:\n{}",
        failures.join("\n")
    );
    assert!(checked >= 19, "only {checked} pprof files in the manifest");
}

/// Issue 14, failure 9: .NET's `alloc-samples/count` beside a `cpu/nanoseconds` period of
/// 1 was shown as time ("1.88 µs" for 1,881 allocation samples); only CPU `samples` at a
/// known period are time.
#[test]
fn pprof_alloc_samples_shown_as_time() {
    let Some((dir, _)) = corpus() else {
        return;
    };
    let path = dir.join("grafana_pyroscope/pkg/og/convert/pprof/testdata/dotnet-pprof-73.pb.gz");
    let options = import::ImportOptions {
        sample_type: Some("alloc-samples"),
        ..Default::default()
    };
    let Imported::Profile(p) = import::load_any_path_with_options(&path, options, None).unwrap()
    else {
        panic!("a pprof file is a profile");
    };
    let total = p.tree.grand_total();
    assert_eq!(total, 1881);
    assert_eq!(p.values.as_nanoseconds(total), None);
    assert_eq!(p.values.format(total), "1,881 samples");
}

/// Per function (self, total counting recursion once) from the lines of a folded file
/// alone, or `None` for a file this oracle leaves to the totals test (diffs, fractions).
fn function_oracle(text: &str) -> Option<HashMap<String, (u64, u64)>> {
    let mut out: HashMap<String, (u64, u64)> = HashMap::new();
    for line in text.lines() {
        let line = line.trim();
        let Some((stack, count)) = line.rsplit_once(|c: char| c.is_ascii_whitespace()) else {
            continue;
        };
        // A `#` line with a count is a stack, as inferno and the totals oracle read it.
        if !is_count(count) {
            continue;
        }
        let stack = stack.trim_end();
        if count.contains('.') || stack.rsplit_once(' ').is_some_and(|(_, t)| is_count(t)) {
            return None;
        }
        let c: u64 = count.parse().ok()?;
        let frames: Vec<&str> = stack.split(';').collect();
        out.entry(frames.last()?.to_string()).or_default().0 += c;
        let mut seen: Vec<&str> = Vec::new();
        for f in frames {
            if !seen.contains(&f) {
                seen.push(f);
                out.entry(f.to_string()).or_default().1 += c;
            }
        }
    }
    Some(out)
}

#[test]
fn top_matches_an_independent_sum_on_folded_files() {
    let Some((dir, entries)) = corpus() else {
        return;
    };
    let (mut compared, mut failures) = (0, Vec::new());
    for e in entries.iter().filter(|e| e.format.starts_with("folded")) {
        let path = dir.join(&e.path);
        let Some(want) = function_oracle(&oracle_text(&std::fs::read(&path).unwrap())) else {
            continue;
        };
        let o = std::process::Command::new(env!("CARGO_BIN_EXE_scorch"))
            .args(["top", "--format", "tsv"])
            .arg(&path)
            .output()
            .unwrap();
        if !o.status.success() {
            // Files the importer refuses are the totals test's business.
            continue;
        }
        let out = String::from_utf8(o.stdout).unwrap();
        let mut got: HashMap<String, (u64, u64)> = HashMap::new();
        for line in out.lines().skip(1) {
            let f: Vec<&str> = line.splitn(6, '\t').collect();
            let name = f[5].replace("\\t", "\t").replace("\\\\", "\\");
            got.insert(name, (f[0].parse().unwrap(), f[2].parse().unwrap()));
        }
        if got != want {
            let mut diffs: Vec<String> = want
                .iter()
                .filter(|(k, v)| got.get(*k) != Some(v))
                .take(3)
                .map(|(k, v)| format!("{k:?}: oracle {v:?}, scorch {:?}", got.get(k)))
                .collect();
            diffs.extend(
                got.keys()
                    .filter(|k| !want.contains_key(*k))
                    .take(3)
                    .map(|k| format!("{k:?}: only in scorch")),
            );
            failures.push(format!("{}: {}", e.path, diffs.join("; ")));
        }
        compared += 1;
    }
    eprintln!("corpus: scorch top compared with an independent sum on {compared} folded files");
    assert!(failures.is_empty(), "top differs:\n{}", failures.join("\n"));
    assert!(compared >= 40, "only {compared} folded files compared");
}
