//! speedscope JSON and DTrace aggregations from `../shared/corpus` (see its MANIFEST.tsv).
//!
//! Every speedscope file must load with, per profile, the samples (sampled profiles) or
//! spans (evented profiles) and the total weight that an independent reader finds: a
//! `serde_json::Value` walk written here, with its own unit table and its own replay of
//! the `O`/`C` events. Files speedscope itself refuses must fail, naming the event.
//!
//! Every DTrace file must load, and where inferno ships the expected output of
//! `inferno-collapse-dtrace` for it, give exactly its lines (stack and count, compared as
//! sorted multisets).
//!
//! When the corpus folder is absent (a user's clone), the tests say so and pass; with
//! `CI` or `SCORCH_REQUIRE_CORPUS=1` set they fail.

use scorch::import::dtrace::{DTraceOptions, parse_with};
use scorch::import::{self, Imported};
use scorch::model::samples::Samples;
use scorch::model::timeorder::{ConvertOptions, convert};
use scorch::model::{NO_PARENT, Profile, SourceFormat};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// The corpus folder and its manifest's `(path, format)` rows.
fn corpus() -> Option<(PathBuf, Vec<(String, String)>)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus");
    let manifest = dir.join("MANIFEST.tsv");
    if !manifest.exists() {
        let required = std::env::var_os("CI").is_some()
            || std::env::var_os("SCORCH_REQUIRE_CORPUS").is_some_and(|v| v == "1");
        assert!(
            !required,
            "the corpus is required but {} is missing",
            manifest.display()
        );
        eprintln!("corpus tests skipped: {} not found", manifest.display());
        return None;
    }
    let text = std::fs::read_to_string(&manifest).unwrap();
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split('\t').collect();
    let col = |name: &str| header.iter().position(|h| *h == name).unwrap();
    let (c_path, c_format) = (col("local_path"), col("format"));
    let rows = lines
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            (f[c_path].to_string(), f[c_format].to_string())
        })
        .collect();
    Some((dir, rows))
}

/// speedscope files that must fail (speedscope refuses them too), and a phrase of the
/// error.
const SPEEDSCOPE_FAILURES: &[(&str, &str)] = &[
    (
        "jlfwong_speedscope/sample/profiles/speedscope/invalid/incomplete-trace.json",
        "profiles[0].events: 1 frame still open after the last event",
    ),
    (
        "jlfwong_speedscope/sample/profiles/speedscope/invalid/out-of-order-events.json",
        "profiles[0].events[6]: closes frame 1 (\"B\") while frame 0 (\"A\")",
    ),
];

/// What the reader expects of one profile: `(name, samples or spans, total)`, the total
/// in nanoseconds, bytes or counts.
type Expect = (String, u64, u64);

/// The independent reader: per profile, the sampled profile's nonzero-weight samples and
/// the sum of their weights, or the evented profile's spans of nonzero length and the
/// time from its first event to its last.
fn read_speedscope(v: &Value) -> Vec<Expect> {
    let scale = |unit: &str| match unit {
        "nanoseconds" | "bytes" | "none" => 1.0,
        "microseconds" => 1e3,
        "milliseconds" => 1e6,
        "seconds" => 1e9,
        other => panic!("unit {other}"),
    };
    let mut out = Vec::new();
    for p in v["profiles"].as_array().unwrap() {
        let name = p["name"].as_str().unwrap().to_string();
        let k = scale(p["unit"].as_str().unwrap());
        match p["type"].as_str().unwrap() {
            "sampled" => {
                let w: Vec<f64> = p["weights"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|w| w.as_f64().unwrap())
                    .filter(|&w| w > 0.0)
                    .collect();
                let total = w.iter().map(|w| (w * k).round() as u64).sum();
                out.push((name, w.len() as u64, total));
            }
            "evented" => {
                let mut open: Vec<f64> = Vec::new();
                let mut spans = 0;
                let events = p["events"].as_array().unwrap();
                for e in events {
                    let at = e["at"].as_f64().unwrap();
                    if e["type"] == "O" {
                        open.push(at);
                    } else if open.pop().unwrap() < at {
                        spans += 1;
                    }
                }
                let first = events[0]["at"].as_f64().unwrap();
                let last = events[events.len() - 1]["at"].as_f64().unwrap();
                out.push((name, spans, ((last - first) * k).round() as u64));
            }
            other => panic!("profile type {other}"),
        }
    }
    out.sort();
    out
}

/// The same, of what scorch loaded: per thread, its samples (or the spans they replay,
/// for exact samples) and their weight.
fn loaded(s: &Samples) -> Vec<Expect> {
    let mut out = Vec::new();
    for st in &s.streams {
        let name = s.threads[st.thread as usize].name.clone();
        // Names made unique (`one (2)`) are the file's `one`.
        let name = match name.rsplit_once(" (") {
            Some((base, n)) if n.trim_end_matches(')').parse::<u32>().is_ok() => base.to_string(),
            _ => name,
        };
        let total = (0..st.len()).map(|i| st.weight.get(i)).sum();
        let count = if s.exact {
            let (set, sampling) = convert(
                s,
                ConvertOptions {
                    event: st.event,
                    max_gap_ns: None,
                },
            );
            let track = sampling
                .tracks
                .iter()
                .find(|&&(_, stream)| s.streams[stream as usize].thread == st.thread)
                .unwrap()
                .0;
            (0..set.len()).filter(|&i| set.track[i] == track).count() as u64
        } else {
            st.len() as u64
        };
        out.push((name, count, total));
    }
    out.sort();
    out
}

#[test]
fn speedscope_files_load_with_the_counts_of_an_independent_reader() {
    let Some((dir, rows)) = corpus() else {
        return;
    };
    let mut failures = Vec::new();
    let (mut matched, mut refused) = (0, 0);
    for (path, _) in rows
        .iter()
        .filter(|(_, f)| f.starts_with("speedscope-json"))
    {
        let full = dir.join(path);
        let result = std::panic::catch_unwind(|| import::load_any_path(&full));
        let Ok(result) = result else {
            failures.push(format!("{path}: PANICKED"));
            continue;
        };
        let expected_failure = SPEEDSCOPE_FAILURES.iter().find(|(f, _)| f == path);
        let p = match (result, expected_failure) {
            (Err(e), Some((_, why))) => {
                let msg = e.to_string();
                if msg.contains(why) && msg.contains(path.as_str()) {
                    refused += 1;
                } else {
                    failures.push(format!("{path}: error '{msg}' lacks '{why}' or the path"));
                }
                continue;
            }
            (Err(e), None) => {
                failures.push(format!("{path}: {e}"));
                continue;
            }
            (Ok(_), Some(_)) => {
                failures.push(format!("{path}: loaded, but speedscope refuses it"));
                continue;
            }
            (Ok(Imported::Trace(_)), None) => {
                failures.push(format!("{path}: loaded as a trace"));
                continue;
            }
            (Ok(Imported::Profile(p)), None) => p,
        };
        let v: Value = serde_json::from_slice(&std::fs::read(&full).unwrap()).unwrap();
        let want = read_speedscope(&v);
        let s = &p.meta.sampled.as_ref().unwrap().samples;
        let got = loaded(s);
        if p.meta.format != SourceFormat::Speedscope {
            failures.push(format!("{path}: read as {:?}", p.meta.format));
        } else if got != want {
            failures.push(format!("{path}: loaded {got:?}, the reader finds {want:?}"));
        } else if !p.meta.warnings.is_empty() {
            failures.push(format!("{path}: warnings {:?}", p.meta.warnings.lines()));
        } else {
            matched += 1;
        }
    }
    eprintln!("speedscope: {matched} files match the reader, {refused} refused as expected");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert_eq!(refused, SPEEDSCOPE_FAILURES.len());
    assert!(matched >= 8, "only {matched} speedscope files matched");
}

/// inferno's expected output for a DTrace input: `(result file, inferno's --includeoffset)`.
fn dtrace_oracle(path: &str) -> Option<(String, bool)> {
    let stem = path.rsplit('/').next()?;
    if path == "brendangregg_FlameGraph/example-dtrace-stacks.txt" {
        // inferno compares this input with both; the corpus has the --includeoffset one.
        return Some((
            "jonhoo_inferno/tests/data/collapse-dtrace/results/dtrace-example-offsets.txt"
                .to_string(),
            true,
        ));
    }
    let folder = path.rsplit_once('/')?.0;
    Some((format!("{folder}/results/{stem}"), false))
}

/// DTrace files that load nothing, and a phrase of the error.
const DTRACE_FAILURES: &[(&str, &str)] = &[(
    // inferno warns "File ended while skipping headers" and writes nothing.
    "jonhoo_inferno/tests/data/collapse-dtrace/only-header-lines.txt",
    "only a header (2 lines), no stack of frames with a count",
)];

/// Sorted `stack count` lines, one per node with self ticks.
fn collapsed(p: &Profile) -> Vec<String> {
    let mut v = Vec::new();
    for n in 1..p.tree.len() as u32 {
        let s = p.tree.self_ticks(n);
        if s > 0 {
            let mut path = Vec::new();
            let mut x = n;
            while x != 0 && x != NO_PARENT {
                path.push(p.names.get(p.tree.name(x)));
                x = p.tree.parent(x);
            }
            path.reverse();
            v.push(format!("{} {s}", path.join(";")));
        }
    }
    v.sort();
    v
}

#[test]
fn dtrace_files_load_and_match_inferno() {
    let Some((dir, rows)) = corpus() else {
        return;
    };
    let mut failures = Vec::new();
    let (mut loaded_n, mut matched, mut refused) = (0, 0, 0);
    for (path, _) in rows
        .iter()
        .filter(|(_, f)| f.starts_with("dtrace-stacks-text"))
    {
        let full = dir.join(path);
        let result = std::panic::catch_unwind(|| import::load_any_path(&full));
        let Ok(result) = result else {
            failures.push(format!("{path}: PANICKED"));
            continue;
        };
        let p = match (result, DTRACE_FAILURES.iter().find(|(f, _)| f == path)) {
            (Err(e), Some((_, why))) => {
                let msg = e.to_string();
                if msg.contains(why) && msg.contains(path.as_str()) {
                    refused += 1;
                } else {
                    failures.push(format!("{path}: error '{msg}' lacks '{why}' or the path"));
                }
                continue;
            }
            (Err(e), None) => {
                failures.push(format!("{path}: {e}"));
                continue;
            }
            (Ok(_), Some(_)) => {
                failures.push(format!("{path}: loaded, but must fail"));
                continue;
            }
            (Ok(Imported::Trace(_)), None) => {
                failures.push(format!("{path}: loaded as a trace"));
                continue;
            }
            (Ok(Imported::Profile(p)), None) => p,
        };
        loaded_n += 1;
        if p.meta.format != SourceFormat::DTrace || !p.meta.warnings.is_empty() {
            failures.push(format!(
                "{path}: read as {:?} with warnings {:?}",
                p.meta.format,
                p.meta.warnings.lines()
            ));
            continue;
        }
        let Some((result, offsets)) = dtrace_oracle(path) else {
            continue;
        };
        let Ok(want) = std::fs::read_to_string(dir.join(&result)) else {
            continue;
        };
        let mut want: Vec<String> = want
            .lines()
            .filter(|l| !l.is_empty())
            .map(str::to_string)
            .collect();
        want.sort();
        let got = if offsets {
            let bytes = std::fs::read(&full).unwrap();
            let opts = DTraceOptions {
                include_offset: true,
            };
            collapsed(&parse_with(path, &bytes, opts).unwrap())
        } else {
            collapsed(&p)
        };
        if got == want {
            matched += 1;
        } else {
            let missing: Vec<_> = want.iter().filter(|l| !got.contains(l)).take(3).collect();
            let extra: Vec<_> = got.iter().filter(|l| !want.contains(l)).take(3).collect();
            failures.push(format!(
                "{path}: {} lines, inferno's {result} has {}; missing {missing:?}, extra {extra:?}",
                got.len(),
                want.len()
            ));
        }
    }
    eprintln!(
        "dtrace: {loaded_n} files loaded, {matched} equal to inferno's output, {refused} refused \
         as expected"
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert_eq!(refused, DTRACE_FAILURES.len());
    assert!(
        matched >= 4,
        "only {matched} DTrace files compared with inferno"
    );
}
