//! Time-ordered samples: real recordings made for these tests (`data/recordings/`: a
//! `perf record -g -e cpu-clock -e sched:sched_switch` of three Python threads, a
//! `node --cpu-prof` profile) and the corpus' Chrome traces with CPU samples, each checked
//! against counts an independent reader finds (perf's own `perf script -F tid,event`
//! counts, recorded beside the file; a plain JSON walk); and the time-order picture.

mod common;

use common::*;
use scorch::export::{ExportOptions, ExportView, render_rgba};
use scorch::import::{self, Imported};
use scorch::model::Document;
use scorch::model::samples::Samples;
use scorch::model::units::Unit;
use std::collections::BTreeMap;
use std::path::Path;

fn samples_of(imported: &Imported) -> &Samples {
    match imported {
        Imported::Profile(p) => &p.meta.sampled.as_ref().expect("sampled").samples,
        Imported::Trace(t) => &t.samples.as_ref().expect("samples").samples,
    }
}

/// Samples per `(event, tid)`.
fn per_event_tid(s: &Samples) -> BTreeMap<(String, i64), usize> {
    let mut m = BTreeMap::new();
    for st in &s.streams {
        let tid = s.threads[st.thread as usize].tid.unwrap_or(-1);
        *m.entry((s.events[st.event as usize].name.clone(), tid))
            .or_default() += st.len();
    }
    m
}

/// Samples of event `e` (all threads).
fn event_count(s: &Samples, e: &str) -> usize {
    per_event_tid(s)
        .iter()
        .filter(|((ev, _), _)| ev == e)
        .map(|(_, n)| n)
        .sum()
}

#[test]
fn a_perf_recording_keeps_events_threads_and_time() {
    let path = root().join("data/recordings/python-threads.perf.gz");
    let imported = import::load_any_path(&path).unwrap();
    let s = samples_of(&imported);
    // `perf script -F event | sort | uniq -c` on the recording: 298 cpu-clock, 79
    // sched:sched_switch; `-F tid,event` for the threads.
    let count = |e: &str| event_count(s, e);
    assert_eq!(count("cpu-clock"), 298);
    assert_eq!(count("sched:sched_switch"), 79);
    let m = per_event_tid(s);
    for (tid, n) in [(17958, 107), (17957, 72), (17914, 49), (17956, 36)] {
        assert_eq!(m[&("cpu-clock".to_string(), tid)], n, "tid {tid}");
    }
    assert_eq!(m[&("sched:sched_switch".to_string(), 17914)], 23);
    // cpu-clock periods are nanoseconds: the profile is time.
    let Imported::Profile(p) = &imported else {
        panic!("a perf file is a profile")
    };
    assert_eq!(p.values.unit, Unit::Nanoseconds);
    assert_eq!(p.tree.grand_total(), 298 * 1_001_001);
    assert!(s.timed);
    let interval = s.median_interval(0);
    assert!((1_000_000..1_010_000).contains(&interval), "{interval}");
    // The other event, chosen as --event does.
    let opts = import::ImportOptions {
        samples: import::sampled::SampleOptions {
            event: Some("sched:sched_switch"),
            tids: &[17914],
            ..Default::default()
        },
        ..Default::default()
    };
    let Imported::Profile(p) = import::load_any_path_with_options(&path, opts, None).unwrap()
    else {
        panic!("a profile")
    };
    assert_eq!(p.tree.grand_total(), 23);
    let opts = import::ImportOptions {
        samples: import::sampled::SampleOptions {
            event: Some("page-faults"),
            ..Default::default()
        },
        ..Default::default()
    };
    let e = import::load_any_path_with_options(&path, opts, None)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("no samples of event 'page-faults'; it has cpu-clock (298 samples), sched:sched_switch (79 samples)"),
        "{e}"
    );
}

/// A `perf record -g -e cpu-clock -e sched:sched_switch -e sched:sched_wakeup` of a
/// Python producer thread handing work to a consumer thread through a queue: each
/// switch counts as voluntary or involuntary by its `prev_state`, and the consumer's
/// blocked samples name the producer as the thread that woke them.
#[test]
fn a_perf_recording_with_scheduler_events_attributes_switches_and_wakers() {
    use scorch::model::samples::CounterKind;
    let path = root().join("data/recordings/python-wakeups.perf.gz");
    let imported = import::load_any_path(&path).unwrap();
    let s = samples_of(&imported);
    let count = |e: &str| event_count(s, e);
    // `perf script -F event | sort | uniq -c` on the recording.
    assert_eq!(count("cpu-clock"), 368);
    assert_eq!(count("sched:sched_switch"), 209);
    assert_eq!(count("sched:sched_wakeup"), 89);
    // `perf script -F trace | grep -o 'prev_state=[A-Z+]*' | sort | uniq -c`: 152 S and
    // 8 D (blocked: voluntary), 44 R and 5 R+ (preempted: involuntary).
    let switch = s
        .events
        .iter()
        .position(|e| e.name == "sched:sched_switch")
        .unwrap() as u32;
    let sum = |k: CounterKind| -> u64 {
        s.streams_of(switch)
            .filter_map(|(_, st)| st.counter(k))
            .flat_map(|v| v.iter().map(|&x| u64::from(x)))
            .sum()
    };
    assert_eq!(sum(CounterKind::VoluntarySwitches), 160);
    assert_eq!(sum(CounterKind::InvoluntarySwitches), 49);
    // The producer (tid 30445) woke the consumer (30446) 32 times
    // (`perf script -F tid,trace` on the sched_wakeup lines); each wakeup ends the
    // consumer's latest blocked switch before it.
    let tid_of = |t: u32| s.threads[t as usize].tid;
    let mut by_pair = BTreeMap::new();
    for (_, st) in s.streams_of(switch) {
        for w in &st.wakers {
            assert!(st.counter(CounterKind::VoluntarySwitches).unwrap()[w.sample as usize] == 1);
            assert!(st.time[w.sample as usize] <= w.time, "woken after blocking");
            *by_pair
                .entry((tid_of(st.thread), tid_of(w.thread)))
                .or_insert(0) += 1;
        }
    }
    let producer_woke_consumer = by_pair[&(Some(30446), Some(30445))];
    assert!(
        (20..=32).contains(&producer_woke_consumer),
        "{producer_woke_consumer} {by_pair:?}"
    );
}

/// The samples of a `.cpuprofile` as a plain JSON walk counts them.
fn json_samples(v: &serde_json::Value) -> usize {
    v["samples"].as_array().map_or(0, Vec::len)
}

#[test]
fn a_node_cpu_profile_in_time_order() {
    let path = root().join("data/recordings/node-fib.cpuprofile");
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    let imported = import::load_any_path(&path).unwrap();
    assert_eq!(samples_of(&imported).len(), json_samples(&v));
    let doc = Document::from(imported);
    let s = &doc.sampled().unwrap().samples;
    // Every sample's weight is the time to the next: the total is the recording's span.
    let p = doc.as_profile().unwrap();
    let (lo, hi) = s.time_range();
    let last = s.streams[0].weight.get(s.len() - 1);
    assert_eq!(p.tree.grand_total(), hi - lo + last);
    // The time order: spans nest, and their sample counts add up per root.
    let t = doc.as_trace().unwrap();
    let sm = t.sampling.as_ref().unwrap();
    let roots: u64 = (0..t.spans.len())
        .filter(|&i| t.spans.parent[i] == scorch::model::NO_PARENT)
        .map(|i| u64::from(sm.samples[i]))
        .sum();
    assert_eq!(roots, s.len() as u64);
    assert!(sm.interval_ns > 500_000 && sm.interval_ns < 2_000_000);
}

/// Chrome traces: samples in `ProfileChunk`/`CpuProfile` events whose node the profile
/// has, and top-level `samples` naming a known stack frame, as a JSON walk counts them.
fn chrome_samples(v: &serde_json::Value) -> usize {
    let events = v
        .as_array()
        .or_else(|| v["traceEvents"].as_array())
        .cloned()
        .unwrap_or_default();
    let mut nodes: BTreeMap<String, std::collections::BTreeSet<u64>> = BTreeMap::new();
    let mut samples: Vec<(String, u64)> = Vec::new();
    for (k, e) in events.iter().enumerate() {
        let name = e["name"].as_str().unwrap_or("");
        let cp = &e["args"]["data"]["cpuProfile"];
        let key = match name {
            "ProfileChunk" => format!("{}/{}", e["pid"], e["id"]),
            "CpuProfile" => format!("event {k}"),
            _ => continue,
        };
        for n in cp["nodes"].as_array().into_iter().flatten() {
            nodes
                .entry(key.clone())
                .or_default()
                .insert(n["id"].as_u64().unwrap());
        }
        for sm in cp["samples"].as_array().into_iter().flatten() {
            samples.push((key.clone(), sm.as_u64().unwrap()));
        }
    }
    let from_events = samples
        .iter()
        .filter(|(k, id)| nodes.get(k).is_some_and(|n| n.contains(id)))
        .count();
    let frames = v["stackFrames"].as_object();
    let top = v["samples"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|s| {
            let sf = match &s["sf"] {
                serde_json::Value::Number(n) => n.to_string(),
                serde_json::Value::String(t) => t.clone(),
                _ => return false,
            };
            frames.is_some_and(|f| f.contains_key(&sf))
        })
        .count();
    from_events + top
}

#[test]
fn corpus_chrome_traces_with_cpu_samples() {
    let corpus = root().join("../shared/corpus");
    if !corpus.join("MANIFEST.tsv").exists() {
        let required = std::env::var_os("CI").is_some()
            || std::env::var_os("SCORCH_REQUIRE_CORPUS").is_some_and(|v| v == "1");
        assert!(!required, "the corpus is required but missing");
        eprintln!("corpus tests skipped: {} not found", corpus.display());
        return;
    }
    let files = [
        "jlfwong_speedscope/sample/profiles/Chrome/65/simple-timeline.json",
        "jlfwong_speedscope/sample/profiles/Chrome/66/worker.json",
        "jlfwong_speedscope/sample/profiles/Chrome/69/simple.json",
        "jlfwong_speedscope/sample/profiles/Chrome/70/worker.json",
        "jlfwong_speedscope/sample/profiles/Chrome/141/no-arg-data.json",
        "catapult-project_catapult/tracing/test_data/perf_sampling_trace_with_trace_events.json.gz",
    ];
    for f in files {
        let path = corpus.join(f);
        let bytes = std::fs::read(&path).unwrap();
        let text = if f.ends_with(".gz") {
            let mut out = Vec::new();
            std::io::Read::read_to_end(&mut flate2::read::GzDecoder::new(&bytes[..]), &mut out)
                .unwrap();
            out
        } else {
            bytes
        };
        let v: serde_json::Value = serde_json::from_slice(&text).unwrap();
        let want = chrome_samples(&v);
        assert!(want > 0, "{f}: the test expects samples");
        let imported = import::load_any_path(Path::new(&path)).unwrap();
        assert_eq!(samples_of(&imported).len(), want, "{f}");
        // Drawn beside the spans, one sampled track per thread.
        let Document::Trace(t) = Document::from(imported) else {
            panic!("{f}: a trace")
        };
        let sm = t.sampling.as_ref().unwrap();
        assert!(
            sm.first_span > 0 || f.contains("141"),
            "{f}: the file's own spans come first"
        );
        assert!(!sm.tracks.is_empty());
    }
}

#[test]
fn golden_node_time_order_with_uncertainty() {
    let Some(gpu) = gpu() else { return };
    let path = root().join("data/recordings/node-fib.cpuprofile");
    let doc = Document::from(import::load_any_path(&path).unwrap());
    // 30 ms of the recording: wide enough that each end's ±1 ms fades visibly.
    let o = ExportOptions {
        width: 1000,
        height: Some(420),
        view: Some(ExportView::Timeline),
        start_ns: Some(255_000_000),
        end_ns: Some(285_000_000),
        ..ExportOptions::default()
    };
    let (img, _) = render_rgba(gpu, &doc, &o).unwrap();
    check_golden("samples_node_time_order", &img);
}

/// A thread that computes (on the CPU all the time), then reads a file (on the CPU a
/// tenth of the time), then computes half the time (preempted), sampled every
/// millisecond with the CPU time of each sample, as the Firefox Profiler's
/// `threadCPUDelta` gives it; a second thread wakes the first when the read is done.
fn cpu_and_waits() -> Document {
    use scorch::model::samples::{CounterKind, ThreadInfo};
    use scorch::model::{Sampled, SourceFormat, ValueFormat};
    let mut s = Samples::new("cpu.json", SourceFormat::Speedscope);
    let main = s.add_thread(ThreadInfo {
        name: "main".into(),
        tid: Some(1),
        ..Default::default()
    });
    let io = s.add_thread(ThreadInfo {
        name: "io".into(),
        tid: Some(2),
        ..Default::default()
    });
    let e = s.event("samples", ValueFormat::default());
    let path = |s: &mut Samples, f: &str| {
        let ids: Vec<_> = f.split(';').map(|x| s.intern(x)).collect();
        s.stacks.path(ids)
    };
    let (compute, read, mix) = (
        path(&mut s, "main;run;compute;hash"),
        path(&mut s, "main;run;load;read"),
        path(&mut s, "main;run;compute;sort"),
    );
    let st = s.stream(main, e);
    for i in 0..60u64 {
        let (stack, cpu) = match i {
            0..20 => (compute, 1_000_000),
            20..40 => (read, 100_000),
            _ => (mix, 500_000),
        };
        s.push(st, i * 1_000_000, stack, 1);
        s.set_counter(st, CounterKind::CpuNs, cpu);
        if i == 39 {
            s.set_waker(st, io);
        }
    }
    let poll = path(&mut s, "io;poll");
    let st2 = s.stream(io, e);
    for i in 0..60u64 {
        s.push(st2, i * 1_000_000, poll, 1);
        s.set_counter(
            st2,
            CounterKind::CpuNs,
            if (35..40).contains(&i) {
                800_000
            } else {
                50_000
            },
        );
    }
    let samples = std::sync::Arc::new(s.finish());
    Document::Profile(std::sync::Arc::new(
        Sampled::new(samples).profile().unwrap(),
    ))
}

#[test]
fn cpu_time_is_summed_per_span_and_said() {
    let doc = cpu_and_waits();
    let t = doc.as_trace().unwrap();
    let sm = t.sampling.as_ref().unwrap();
    let spans = &t.spans;
    let find = |n: &str| {
        (0..spans.len())
            .find(|&i| spans.names.get(spans.name[i]) == n)
            .unwrap()
    };
    // 20 samples of 1 ms CPU each; 20 of 0.1 ms; `run` holds all 60 of its thread.
    assert_eq!(sm.cpu_of(find("hash")), Some(20_000_000));
    assert_eq!(sm.cpu_of(find("read")), Some(2_000_000));
    assert_eq!(
        sm.cpu_of(find("run")),
        Some(20_000_000 + 2_000_000 + 10_000_000)
    );
    // What the tooltip and the details say.
    let v = scorch::view::timeline::TimelineView::new(t.clone(), &Default::default());
    let lines = v.counter_lines(find("read"));
    assert_eq!(
        lines,
        [
            "CPU 2.00 ms (10 % of its time) · waited 18.0 ms",
            "woken by io 2 at 39.0 ms"
        ],
        "{lines:?}"
    );
}

#[test]
fn golden_time_order_with_cpu_shading_and_a_wake() {
    let Some(gpu) = gpu() else { return };
    let doc = cpu_and_waits();
    let o = ExportOptions {
        width: 900,
        height: Some(360),
        view: Some(ExportView::Timeline),
        ..ExportOptions::default()
    };
    let (img, _) = render_rgba(gpu, &doc, &o).unwrap();
    check_golden("samples_cpu_shading", &img);
}

#[test]
fn the_table_sums_counters_per_function_and_sorts_by_them() {
    use scorch::model::samples::CounterKind;
    use scorch::view::table::{Column, TableView};
    use scorch::view::{View, Viewport};
    let doc = cpu_and_waits();
    let p = doc.as_profile().unwrap();
    let mut t = TableView::new(p.clone(), &Default::default());
    t.set_viewport(Viewport::logical(1200, 600, 1.0));
    let cols: Vec<Column> = t.columns(&t.geometry(1.0)).iter().map(|c| c.0).collect();
    assert!(
        cols.contains(&Column::Counter(CounterKind::CpuNs)),
        "{cols:?}"
    );
    let cpu = |name: &str| {
        t.counter_values(CounterKind::CpuNs).unwrap()[p.names.find(name).unwrap() as usize]
    };
    assert_eq!(cpu("hash"), 20_000_000);
    assert_eq!(cpu("read"), 2_000_000);
    assert_eq!(cpu("compute"), 30_000_000);
    // `main` and `run`: every sample of the main thread, once each.
    assert_eq!(cpu("run"), 32_000_000);
    assert_eq!(cpu("poll"), 55 * 50_000 + 5 * 800_000);
    t.sort_by(Column::Counter(CounterKind::CpuNs));
    let order: Vec<&str> = t
        .shown_rows()
        .map(|r| p.names.get(r.name))
        .take(4)
        .collect();
    assert_eq!(order, ["main", "run", "compute", "hash"]);
    // A range counts only its samples: the first 20 ms are all `hash`.
    let sampled = p.meta.sampled.as_ref().unwrap();
    let sel = scorch::model::samples::Selection {
        range: Some((0, 20_000_000)),
        ..sampled.selection
    };
    let ranged = std::sync::Arc::new(sampled.with_selection(sel).profile().unwrap());
    let t2 = TableView::new(ranged.clone(), &Default::default());
    let v = t2.counter_values(CounterKind::CpuNs).unwrap();
    assert_eq!(v[ranged.names.find("hash").unwrap() as usize], 20_000_000);
    assert_eq!(v[ranged.names.find("read").unwrap() as usize], 0);
    // Per node of the flame graph: the sums under each node, in its tooltip.
    let node = |p: &scorch::model::Profile, name: &str| {
        (0..p.tree.len() as scorch::model::NodeId)
            .find(|&n| p.names.get(p.tree.name(n)) == name)
            .unwrap()
    };
    let nc = p.meta.node_counters.as_ref().expect("counters per node");
    let cpu_of = |n| nc.iter().find(|(k, _)| *k == CounterKind::CpuNs).unwrap().1[n as usize];
    assert_eq!(cpu_of(node(&p, "hash")), 20_000_000);
    assert_eq!(cpu_of(node(&p, "run")), 32_000_000);
    assert_eq!(cpu_of(0), 32_000_000 + 55 * 50_000 + 5 * 800_000);
    assert_eq!(
        scorch::view::flame::counter_line(&p, node(&p, "read")).as_deref(),
        Some("CPU time 2.00 ms")
    );
    // A transform makes other nodes: the sums are not carried over.
    let rule = scorch::color::package_rule(None);
    let t = scorch::model::transform::apply(
        &p,
        &scorch::model::transform::Transform::Merge("run".into()),
        &rule,
    )
    .unwrap();
    assert!(t.meta.node_counters.is_none());
}

#[test]
fn colors_cycle_through_cpu_share_after_the_value_heat() {
    use scorch::view::input::Action;
    use scorch::view::{Purpose, View};
    let doc = cpu_and_waits();
    let mut v =
        scorch::view::timeline::TimelineView::new(doc.as_trace().unwrap(), &Default::default());
    let mut seen = Vec::new();
    for _ in 0..7 {
        v.act(Action::CycleColor, 0.0);
        seen.push(v.color_label().unwrap());
    }
    // Bands per thread start by name: package, value, CPU share, then around again.
    assert_eq!(
        seen,
        [
            "package",
            "value",
            "CPU share",
            "track",
            "category",
            "name",
            "package"
        ]
    );
    for _ in 0..2 {
        v.act(Action::CycleColor, 0.0);
    }
    assert_eq!(v.color_label(), Some("CPU share"));
    assert!(
        v.heading(Purpose::Window)
            .subtitle
            .contains("CPU share colors")
    );
}
