//! Every Firefox Profiler file in `../shared/corpus` (gecko profiles, processed profiles,
//! DevTools recordings, the cleopatra profile) loads as time-ordered samples that agree
//! with an independent reader written here: a plain `serde_json::Value` walk that counts
//! each thread's samples (gecko rows in `samples.data`, processed columns in
//! `samples.stack`, cleopatra's `profileJSON` entries; sub-processes after their parent's
//! own threads, whether in `processes` or as JSON strings inside `threads`), sums their
//! weights and CPU deltas, and finds the first and last sample's absolute time (each
//! process's `meta.startTime` plus the sample's time or running sum of time deltas).
//!
//! When the corpus folder is absent (a user's clone) the test says so and passes; with
//! `CI` or `SCORCH_REQUIRE_CORPUS=1` set it fails.

mod common;

use scorch::import::{self, Imported};
use scorch::model::samples::{CounterKind, Samples};
use serde_json::Value;
use std::path::PathBuf;

fn samples_of(imported: &Imported) -> &Samples {
    match imported {
        Imported::Profile(p) => &p.meta.sampled.as_ref().expect("sampled").samples,
        Imported::Trace(t) => &t.samples.as_ref().expect("samples").samples,
    }
}

/// What the independent reader finds.
#[derive(Debug, Default)]
struct Oracle {
    /// Samples per thread, in file order.
    per_thread: Vec<usize>,
    /// Sum of the weights (1 where a sample has none).
    weight: f64,
    /// Sum of the CPU deltas in ns, without each thread's first (meaningless) one.
    cpu_ns: f64,
    /// First and last sample time, absolute ms.
    first_ms: f64,
    last_ms: f64,
}

impl Oracle {
    fn time(&mut self, ms: f64) {
        self.first_ms = self.first_ms.min(ms);
        self.last_ms = self.last_ms.max(ms);
    }

    /// A gecko or processed profile and, after its own threads, its sub-processes.
    fn profile(&mut self, p: &Value) {
        let start = p["meta"]["startTime"].as_f64().unwrap_or(0.0);
        let cpu_scale = match p["meta"]["sampleUnits"]["threadCPUDelta"].as_str() {
            Some("µs") => Some(1e3),
            Some("ns") => Some(1.0),
            _ => None,
        };
        let mut subs: Vec<Value> = Vec::new();
        for t in p["threads"].as_array().unwrap() {
            if let Some(text) = t.as_str() {
                subs.push(serde_json::from_str(text).unwrap());
                continue;
            }
            let s = &t["samples"];
            let mut n = 0;
            if let Some(rows) = s["data"].as_array() {
                // Gecko rows: columns by the schema's positions.
                let col = |name: &str| s["schema"][name].as_u64().map(|c| c as usize);
                let (time, cpu) = (col("time").unwrap(), col("threadCPUDelta"));
                for (k, r) in rows.iter().enumerate() {
                    self.time(start + r[time].as_f64().unwrap());
                    self.weight += 1.0;
                    if let (Some(c), Some(scale), true) = (cpu, cpu_scale, k > 0) {
                        self.cpu_ns += r[c].as_f64().unwrap_or(0.0) * scale;
                    }
                    n += 1;
                }
            } else {
                let stacks = s["stack"].as_array().unwrap();
                if let Some(len) = s["length"].as_u64() {
                    assert_eq!(len as usize, stacks.len(), "samples.length");
                }
                let mut clock = 0.0;
                for k in 0..stacks.len() {
                    let t = match s["time"].as_array() {
                        Some(times) => times[k].as_f64().unwrap(),
                        None => {
                            clock += s["timeDeltas"][k].as_f64().unwrap();
                            clock
                        }
                    };
                    self.time(start + t);
                    self.weight += s["weight"][k].as_f64().unwrap_or(1.0);
                    if let (Some(scale), true) = (cpu_scale, k > 0) {
                        self.cpu_ns += s["threadCPUDelta"][k].as_f64().unwrap_or(0.0) * scale;
                    }
                    n += 1;
                }
            }
            self.per_thread.push(n);
        }
        for sub in subs
            .iter()
            .chain(p["processes"].as_array().into_iter().flatten())
        {
            self.profile(sub);
        }
    }

    /// Cleopatra: `profileJSON` is the one thread's samples (or `{threads: {…}}`); a sample
    /// without a time comes one interval after the previous one.
    fn cleopatra(&mut self, v: &Value) {
        let interval = v["meta"]["interval"].as_f64().unwrap_or(1.0);
        let pj = &v["profileJSON"];
        let lists: Vec<&Vec<Value>> = match pj.as_array() {
            Some(a) => vec![a],
            None => {
                let threads = pj["threads"].as_object().unwrap();
                let mut keys: Vec<&String> = threads.keys().collect();
                keys.sort_by_key(|k| k.parse::<u64>().unwrap());
                keys.iter()
                    .map(|k| threads[*k]["samples"].as_array().unwrap())
                    .collect()
            }
        };
        for list in lists {
            let mut last = 0.0;
            for s in list {
                last = s["extraInfo"]["time"].as_f64().unwrap_or(last + interval);
                self.time(last);
                self.weight += 1.0;
            }
            self.per_thread.push(list.len());
        }
    }
}

fn oracle(v: &Value) -> Oracle {
    let mut o = Oracle {
        first_ms: f64::INFINITY,
        last_ms: f64::NEG_INFINITY,
        ..Oracle::default()
    };
    if v.get("profileJSON").is_some() {
        o.cleopatra(v);
    } else if v["profile"].is_object() {
        o.profile(&v["profile"]);
    } else {
        o.profile(v);
    }
    o
}

fn corpus() -> Option<PathBuf> {
    common::corpus_dir("Firefox corpus test")
}

#[test]
fn every_corpus_firefox_file_loads_with_the_samples_a_json_walk_counts() {
    let Some(dir) = corpus() else {
        return;
    };
    let manifest = std::fs::read_to_string(dir.join("MANIFEST.tsv")).unwrap();
    let files: Vec<&str> = manifest
        .lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            (f.len() > 6 && f[6].starts_with("firefox")).then_some(f[0])
        })
        .collect();
    assert!(files.len() >= 15, "the manifest lists 15 Firefox files");
    let mut failures = Vec::new();
    for f in files {
        let path = dir.join(f);
        let v: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        let want = oracle(&v);
        let imported = match import::load_any_path(&path) {
            Ok(i) => i,
            Err(e) => {
                failures.push(format!("{f}: {e}"));
                continue;
            }
        };
        let s = samples_of(&imported);
        let mut got = vec![0; s.threads.len()];
        for st in &s.streams {
            got[st.thread as usize] += st.len();
        }
        let weight: u64 = s
            .streams
            .iter()
            .map(|st| (0..st.len()).map(|k| st.weight.get(k)).sum::<u64>())
            .sum();
        let cpu: u64 = s
            .streams
            .iter()
            .filter_map(|st| st.counter(CounterKind::CpuNs))
            .map(|c| c.iter().map(|&x| u64::from(x)).sum::<u64>())
            .sum();
        let (lo, hi) = s.time_range();
        let first_ns = (s.origin_ns + lo) as f64;
        let last_ns = (s.origin_ns + hi) as f64;
        eprintln!(
            "{f}: {} samples in threads {got:?}, weights {weight}, CPU {cpu} ns",
            s.len()
        );
        let close = |a: f64, ms: f64| (a - ms * 1e6).abs() < 2_000.0;
        let checks = [
            (got == want.per_thread, "samples per thread"),
            (weight as f64 == want.weight, "weights"),
            ((cpu as f64 - want.cpu_ns).abs() < 1.0, "CPU time"),
            (close(first_ns, want.first_ms), "first sample time"),
            (close(last_ns, want.last_ms), "last sample time"),
        ];
        for (ok, what) in checks {
            if !ok {
                failures.push(format!(
                    "{f}: {what} differ: imported {got:?}, {weight}, {cpu} ns, {first_ns}..{last_ns} \
                     ns; the JSON walk finds {want:?}"
                ));
            }
        }
        // The aggregated profile counts the same weights.
        let p = import::load_path(&path).unwrap();
        if p.tree.grand_total() != weight {
            failures.push(format!("{f}: the profile's total {}", p.tree.grand_total()));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Damage a user might meet: a corpus file cut short fails at a line and column; one
/// sample pointing past the stack table is skipped, and the warning says where it is.
#[test]
fn a_damaged_corpus_file_fails_or_warns_with_a_place() {
    let Some(dir) = corpus() else {
        return;
    };
    let f = "firefox-devtools_profiler/src/test/fixtures/upgrades/processed-2.json";
    let bytes = std::fs::read(dir.join(f)).unwrap();
    let cut = import::load_any_bytes("cut.json", &bytes[..bytes.len() / 2], Default::default());
    let e = cut.unwrap_err().to_string();
    assert!(
        e.starts_with("cut.json: line ") && e.contains("column"),
        "{e}"
    );
    let mut v: Value = serde_json::from_slice(&bytes).unwrap();
    v["threads"][0]["samples"]["stack"][3] = Value::from(999);
    let text = serde_json::to_vec(&v).unwrap();
    let imported = import::load_any_bytes("bad.json", &text, Default::default()).unwrap();
    let s = samples_of(&imported);
    assert_eq!(s.len(), 20);
    let notes = s.meta().warnings.notes.join("\n");
    assert!(
        notes.contains("1 sample skipped (first: threads[0].samples, sample 3: stack 999"),
        "{notes}"
    );
}

/// A Firefox profile is samples first: it opens as their flame graph (the Firefox
/// Profiler opens on its call tree), its interval markers kept beside the samples, and
/// the timeline, made only when asked for, draws the markers beside the time order.
#[test]
fn a_profile_with_markers_opens_on_its_flame_graph_and_its_timeline_has_them() {
    let text = br#"{"meta": {"startTime": 1000, "interval": 1, "preprocessedProfileVersion": 49},
      "threads": [{"name": "main", "pid": "7", "tid": 7, "stringArray": ["root", "leaf", "Load"],
        "stackTable": {"prefix": [null, 0], "frame": [0, 1], "length": 2},
        "frameTable": {"func": [0, 1], "length": 2}, "funcTable": {"name": [0, 1], "length": 2},
        "samples": {"stack": [1, 1, 0], "time": [1, 2, 3], "length": 3},
        "markers": {"name": [2], "startTime": [1.5], "endTime": [2.5], "phase": [1],
          "data": [null], "length": 1}}]}"#;
    let imported = import::load_any_bytes("m.json", text, Default::default()).unwrap();
    let Imported::Profile(p) = imported else {
        panic!("a Firefox profile opens as a profile");
    };
    assert_eq!(p.tree.grand_total(), 3);
    let sampled = p.meta.sampled.as_ref().expect("sampled");
    let markers = sampled.base.as_ref().expect("the markers ride along");
    assert_eq!(markers.len(), 1);
    let doc = scorch::model::Document::Profile(std::sync::Arc::new(*p));
    let trace = doc.as_trace().expect("samples give a timeline");
    let names: Vec<&str> = (0..trace.spans.len())
        .map(|i| trace.spans.names.get(trace.spans.name[i]))
        .collect();
    // The marker first (the file's own spans), then the time order: root over the three
    // samples, leaf over the first two.
    assert_eq!(names, ["Load", "root", "leaf"]);
    assert_eq!(trace.spans.tracks.len(), 2);
}

/// `--tid` keeps the markers of the threads asked for, as it keeps their samples: a
/// timeline of one thread draws that thread's markers, not every thread's.
#[test]
fn tid_keeps_the_markers_of_the_threads_asked_for() {
    let thread = |name: &str, tid: u32, marker: &str| {
        format!(
            r#"{{"name": "{name}", "pid": "7", "tid": {tid}, "stringArray": ["root", "{marker}"],
              "stackTable": {{"prefix": [null], "frame": [0], "length": 1}},
              "frameTable": {{"func": [0], "length": 1}}, "funcTable": {{"name": [0], "length": 1}},
              "samples": {{"stack": [0, 0], "time": [1, 2], "length": 2}},
              "markers": {{"name": [1, 1], "startTime": [1.2, 1.3], "endTime": [1.8, 1.4],
                "phase": [1, 1], "data": [null, null], "length": 2}}}}"#
        )
    };
    let text = format!(
        r#"{{"meta": {{"startTime": 1000, "interval": 1, "preprocessedProfileVersion": 49}},
          "threads": [{}, {}, {}]}}"#,
        thread("main", 7, "Load"),
        thread("worker", 8, "Work"),
        thread("other", 9, "Idle")
    );
    let open = |tids: &[i64]| {
        let options = import::ImportOptions {
            samples: import::sampled::SampleOptions {
                tids,
                ..Default::default()
            },
            ..Default::default()
        };
        let imported = import::load_any_bytes_with_options("m.json", text.as_bytes(), options);
        let Ok(Imported::Profile(p)) = imported else {
            panic!("a Firefox profile opens as a profile");
        };
        p
    };
    let all = open(&[]);
    assert_eq!(
        all.meta
            .sampled
            .as_ref()
            .unwrap()
            .base
            .as_ref()
            .unwrap()
            .len(),
        6
    );

    let p = open(&[8, 9]);
    assert_eq!(p.tree.grand_total(), 4);
    let markers = p.meta.sampled.as_ref().unwrap().base.as_ref().unwrap();
    let names: Vec<&str> = (0..markers.len())
        .map(|i| markers.names.get(markers.name[i]))
        .collect();
    assert_eq!(names, ["Work", "Work", "Idle", "Idle"]);
    // The nesting survives: each thread's second marker lies inside its first.
    assert_eq!(
        markers.parent,
        [scorch::model::NO_PARENT, 0, scorch::model::NO_PARENT, 2]
    );
    let tids: Vec<_> = markers.track_info.iter().map(|t| t.tid).collect();
    assert_eq!(tids, [Some(8), Some(9)]);
    assert!(
        p.meta
            .warnings
            .notes
            .iter()
            .any(|n| n == "2 spans of other threads left out (--tid 8,9)"),
        "{:?}",
        p.meta.warnings.notes
    );

    // The timeline holds thread 8's and 9's markers and samples only.
    let doc = scorch::model::Document::Profile(std::sync::Arc::new(*p));
    let trace = doc.as_trace().expect("samples give a timeline");
    let mut names: Vec<&str> = (0..trace.spans.len())
        .map(|i| trace.spans.names.get(trace.spans.name[i]))
        .collect();
    names.sort_unstable();
    assert_eq!(names, ["Idle", "Idle", "Work", "Work", "root", "root"]);
}
