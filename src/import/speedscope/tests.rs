//! Unit tests of the speedscope importer: small hand-written files.

use super::*;
use crate::model::NO_PARENT;
use crate::model::timeorder::{ConvertOptions, convert};

fn load(text: &str) -> Samples {
    parse("t.speedscope.json", text.as_bytes()).unwrap()
}

fn error(text: &str) -> String {
    parse("t.speedscope.json", text.as_bytes())
        .unwrap_err()
        .to_string()
}

fn weights(s: &Samples, stream: usize) -> Vec<u64> {
    let st = &s.streams[stream];
    (0..st.len()).map(|i| st.weight.get(i)).collect()
}

/// A file of `profiles` over frames a, b, c, d.
fn file(profiles: &str) -> String {
    format!(
        r#"{{"$schema":"https://www.speedscope.app/file-format-schema.json",
        "shared":{{"frames":[{{"name":"a"}},{{"name":"b"}},{{"name":"c"}},{{"name":"d"}}]}},
        "profiles":[{profiles}]}}"#
    )
}

fn sampled(name: &str, unit: &str, samples: &str, weights: &str) -> String {
    format!(
        r#"{{"type":"sampled","name":"{name}","unit":"{unit}","startValue":0,
        "endValue":14,"samples":{samples},"weights":{weights}}}"#
    )
}

fn evented(events: &str) -> String {
    format!(
        r#"{{"type":"evented","name":"ev","unit":"none","startValue":0,"endValue":100,
        "events":[{events}]}}"#
    )
}

const SIMPLE: &str = "[[0,1,2],[0,1,2],[0,1,3],[0,1,2],[0,1]]";

#[test]
fn a_sampled_profile_in_file_order_with_weights_as_time() {
    let s = load(&file(&sampled("one", "seconds", SIMPLE, "[1,1,4,3,5]")));
    assert!(!s.timed && !s.exact);
    assert_eq!(s.events[0].name, "time");
    assert_eq!(s.events[0].values.unit, Unit::Nanoseconds);
    assert_eq!(s.threads[0].name, "one");
    let st = &s.streams[0];
    let sec = 1_000_000_000;
    assert_eq!(st.time, [0, sec, 2 * sec, 6 * sec, 9 * sec]);
    assert_eq!(weights(&s, 0), [sec, sec, 4 * sec, 3 * sec, 5 * sec]);
    let p = s.aggregate(Default::default()).unwrap();
    assert_eq!(
        p.folded_lines(),
        [
            format!("a;b {}", 5 * sec),
            format!("a;b;c {}", 5 * sec),
            format!("a;b;d {}", 4 * sec)
        ]
    );
}

#[test]
fn every_unit() {
    for (unit, event, want, scale) in [
        ("nanoseconds", "time", Unit::Nanoseconds, 1),
        ("microseconds", "time", Unit::Nanoseconds, 1_000),
        ("milliseconds", "time", Unit::Nanoseconds, 1_000_000),
        ("seconds", "time", Unit::Nanoseconds, 1_000_000_000),
        ("bytes", "bytes", Unit::Bytes, 1),
        ("none", "samples", Unit::Samples, 1),
    ] {
        let s = load(&file(&sampled("p", unit, "[[0],[1]]", "[2,3]")));
        assert_eq!(s.events.len(), 1, "{unit}");
        assert_eq!(s.events[0].name, event, "{unit}");
        assert_eq!(s.events[0].values.unit, want, "{unit}");
        assert_eq!(weights(&s, 0), [2 * scale, 3 * scale], "{unit}");
        assert_eq!(s.streams[0].time, [0, 2 * scale], "{unit}");
        assert!(s.meta().warnings.is_empty(), "{unit}");
    }
    // An unknown unit reads as counts, said once.
    let s = load(&file(&sampled("p", "furlongs", "[[0]]", "[2]")));
    assert_eq!(s.events[0].name, "samples");
    let notes = &s.meta().warnings.notes;
    assert!(notes[0].contains("\"furlongs\" is not one of"), "{notes:?}");
}

#[test]
fn two_profiles_are_two_threads_the_active_one_first() {
    let text = format!(
        r#"{{"name":"Two","activeProfileIndex":1,"exporter":"x@1",
        "shared":{{"frames":[{{"name":"a"}},{{"name":"b"}}]}},
        "profiles":[{},{},{}]}}"#,
        sampled("one", "milliseconds", "[[0],[0,1]]", "[1,2]"),
        sampled("two", "bytes", "[[1]]", "[7]"),
        sampled("one", "milliseconds", "[[1]]", "[1]"),
    );
    let s = load(&text);
    let names: Vec<&str> = s.threads.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["two", "one", "one (2)"]);
    let events: Vec<&str> = s.events.iter().map(|e| e.name.as_str()).collect();
    assert_eq!(events, ["bytes", "time"]);
    assert_eq!(s.meta().app_name.as_deref(), Some("Two"));
    assert_eq!(s.len(), 4);
    let p = s
        .aggregate(Selection {
            event: 1,
            range: None,
        })
        .unwrap();
    assert_eq!(
        p.folded_lines(),
        ["one (2);b 1000000", "one;a 1000000", "one;a;b 2000000"]
    );
    // A hint that is not an index is ignored, and said so.
    let s = load(&text.replace("\"activeProfileIndex\":1", "\"activeProfileIndex\":7"));
    assert_eq!(s.threads[0].name, "one");
    assert!(s.meta().warnings.notes[0].contains("activeProfileIndex 7"));
    // py-spy writes null: the first profile, without a warning; a boolean is reported.
    let s = load(&text.replace("\"activeProfileIndex\":1", "\"activeProfileIndex\":null"));
    assert!(
        s.meta().warnings.notes.is_empty(),
        "{:?}",
        s.meta().warnings.notes
    );
    let s = load(&text.replace("\"activeProfileIndex\":1", "\"activeProfileIndex\":true"));
    assert!(s.meta().warnings.notes[0].contains("activeProfileIndex a value of another type"));
}

use crate::model::samples::Selection;

/// `(depth, name, start, end)` of every span of positive length the events describe.
fn intervals(names: &[&str], events: &[(char, usize, u64)]) -> Vec<(usize, String, u64, u64)> {
    let mut open = Vec::new();
    let mut out = Vec::new();
    for &(k, f, t) in events {
        if k == 'O' {
            open.push((f, t));
        } else {
            let (g, t0) = open.pop().unwrap();
            assert_eq!(g, f);
            if t > t0 {
                out.push((open.len(), names[f].to_string(), t0, t));
            }
        }
    }
    out.sort();
    out
}

/// The same, of the spans the samples convert to.
fn spans(s: &Samples) -> Vec<(usize, String, u64, u64)> {
    let (set, _) = convert(s, ConvertOptions::default());
    let mut out: Vec<_> = (0..set.len())
        .map(|i| {
            let mut depth = 0;
            let mut p = set.parent[i];
            while p != NO_PARENT {
                depth += 1;
                p = set.parent[p as usize];
            }
            (
                depth,
                set.names.get(set.name[i]).to_string(),
                set.start_ns[i] + set.origin_ns,
                set.end_ns(i) + set.origin_ns,
            )
        })
        .collect();
    out.sort();
    out
}

fn events_json(events: &[(char, usize, u64)]) -> String {
    events
        .iter()
        .map(|(k, f, t)| format!(r#"{{"type":"{k}","frame":{f},"at":{t}}}"#))
        .collect::<Vec<_>>()
        .join(",")
}

#[test]
fn evented_spans_come_back_exactly() {
    // speedscope's simple.speedscope.json.
    let ev = [
        ('O', 0, 0),
        ('O', 1, 0),
        ('O', 2, 0),
        ('C', 2, 2),
        ('O', 3, 2),
        ('C', 3, 6),
        ('O', 2, 6),
        ('C', 2, 9),
        ('C', 1, 14),
        ('C', 0, 14),
    ];
    let s = load(&file(&evented(&events_json(&ev))));
    assert!(s.timed && s.exact);
    assert_eq!(s.events[0].name, "samples");
    let want = intervals(&["a", "b", "c", "d"], &ev);
    assert_eq!(spans(&s), want);
    assert_eq!(want.len(), 5);
    // The idle time between 9 and 14 is b's own; every interval weighs its length.
    assert_eq!(weights(&s, 0), [2, 4, 3, 5]);
    let p = s.aggregate(Default::default()).unwrap();
    assert_eq!(p.folded_lines(), ["a;b 5", "a;b;c 5", "a;b;d 4"]);
}

#[test]
fn a_frame_closed_and_reopened_at_once_is_two_spans() {
    let ev = [
        ('O', 0, 0),
        ('O', 1, 0),
        ('C', 1, 5),
        ('C', 0, 5),
        ('O', 0, 5),
        ('O', 1, 5),
        ('C', 1, 8),
        ('O', 2, 8),
        ('C', 2, 9),
        ('C', 0, 9),
        ('O', 3, 12),
        ('C', 3, 13),
    ];
    let s = load(&file(&evented(&events_json(&ev))));
    assert_eq!(spans(&s), intervals(&["a", "b", "c", "d"], &ev));
    // The gap 9..12 is an empty sample, so nothing spans it.
    assert_eq!(s.streams[0].stack[4], EMPTY_STACK);
}

/// A small deterministic generator (xorshift).
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

#[test]
fn random_evented_profiles_round_trip_through_the_time_order() {
    for seed in 1..60u64 {
        let mut r = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15));
        let mut ev = Vec::new();
        let (mut t, mut open) = (0u64, Vec::new());
        for _ in 0..(20 + r.next() % 200) {
            // Often no time passes: closes and opens at one instant.
            if r.next().is_multiple_of(3) {
                t += 1 + r.next() % 4;
            }
            if open.is_empty() || r.next().is_multiple_of(2) {
                let f = (r.next() % 3) as usize;
                open.push(f);
                ev.push(('O', f, t));
            } else {
                ev.push(('C', open.pop().unwrap(), t));
            }
        }
        t += r.next() % 2;
        while let Some(f) = open.pop() {
            ev.push(('C', f, t));
        }
        let s = load(&file(&evented(&events_json(&ev))));
        assert_eq!(
            spans(&s),
            intervals(&["a", "b", "c", "d"], &ev),
            "seed {seed}"
        );
    }
}

#[test]
fn evented_times_in_microseconds_are_nanoseconds() {
    let ev = events_json(&[
        ('O', 0, 1000),
        ('O', 1, 1500),
        ('C', 1, 2000),
        ('C', 0, 3000),
    ]);
    let s = load(&file(&evented(&ev).replace("\"none\"", "\"microseconds\"")));
    assert_eq!(s.origin_ns, 1_000_000);
    assert_eq!(s.streams[0].time, [0, 500_000, 1_000_000]);
    assert_eq!(weights(&s, 0), [500_000, 500_000, 1_000_000]);
    assert_eq!(s.events[0].values.unit, Unit::Nanoseconds);
}

#[test]
fn deep_stacks_need_no_recursion() {
    const DEPTH: usize = 100_000;
    let frames = vec!["0"; DEPTH].join(",");
    let s = load(&file(&sampled(
        "deep",
        "none",
        &format!("[[{frames}],[0]]"),
        "[1,1]",
    )));
    assert_eq!(s.stacks.depth(s.streams[0].stack[0]), DEPTH as u32);
    let mut ev = vec![('O', 0usize, 0u64); DEPTH];
    ev.extend(vec![('C', 0, 5); DEPTH]);
    let s = load(&file(&evented(&events_json(&ev))));
    assert_eq!(s.stacks.depth(s.streams[0].stack[0]), DEPTH as u32);
    let (set, _) = convert(&s, ConvertOptions::default());
    assert_eq!(set.len(), DEPTH);
    assert_eq!(set.dur_ns[DEPTH - 1], 5);
}

#[test]
fn anonymous_frames_and_a_negative_start() {
    let text = r#"{"shared":{"frames":[{"name":"","file":"/src/app.js","line":12},
        {"file":"lib.js"},{"name":""},{"name":"main","file":"x.js","line":3,"col":4}]},
        "profiles":[{"type":"sampled","name":"p","unit":"milliseconds",
        "startValue":-5,"endValue":0,"samples":[[3,0],[3,1],[3,2]],"weights":[1,1,1]}]}"#;
    let s = load(text);
    let p = s.aggregate(Default::default()).unwrap();
    assert_eq!(
        p.folded_lines(),
        [
            "main;(anonymous app.js:12) 1000000",
            "main;(anonymous lib.js) 1000000",
            "main;(anonymous) 1000000"
        ]
    );
    assert_eq!(s.streams[0].time, [0, 1_000_000, 2_000_000]);
}

#[test]
fn bad_samples_are_skipped_and_counted_with_their_path() {
    let s = load(&file(&sampled(
        "p",
        "none",
        r#"[[0,1],[0,9],[0,"x"],5,[0],[1],[2],[3],[0]]"#,
        r#"[1,1,1,1,-2,null,1e300,0,2.5]"#,
    )));
    assert_eq!(s.len(), 2);
    assert_eq!(weights(&s, 0), [1, 3]);
    let notes = s.meta().warnings.notes.join("\n");
    assert!(
        notes.contains(
            "skipped 6 invalid samples (first: profiles[0].samples[1][1]: frame 9 is not in \
             shared.frames (4 frames))"
        ),
        "{notes}"
    );
    assert!(notes.contains("1 sample of weight 0 skipped"), "{notes}");
    assert!(notes.contains("1 value rounded to whole counts"), "{notes}");
    let s = load(&file(&sampled("p", "none", "[[0,-1]]", "[1]")).replace(
        "\"samples\":[[0,-1]],\"weights\":[1]",
        "\"samples\":[[0],[0,-1]],\"weights\":[1,1]",
    ));
    assert!(
        s.meta().warnings.notes[0].contains("samples[1][1]: expected a frame index"),
        "{:?}",
        s.meta().warnings.notes
    );
}

#[test]
fn malformed_files_fail_with_a_position() {
    let e = error(r#"{"profiles": [1,"#);
    assert!(e.starts_with("t.speedscope.json: line 1, column"), "{e}");
    let e = error(r#"{"shared":{"frames":[]}}"#);
    assert!(e.contains("profiles: expected an array of profiles"), "{e}");
    let e = error(r#"{"shared":{"frames":[]},"profiles":[]}"#);
    assert!(e.contains("profiles array is empty"), "{e}");
    let e = error(&file(&sampled("p", "none", "[[0],[1]]", "[1]")));
    assert!(
        e.contains("profiles[0].weights: expected one weight per sample: 2 samples, 1 weights"),
        "{e}"
    );
    let e = error(&file(r#"{"type":"sampled","unit":"none","samples":[[0]]}"#));
    assert!(e.contains("profiles[0]: a sampled profile needs"), "{e}");
    let e = error(&file(r#"{"type":"evented","unit":"none"}"#));
    assert!(
        e.contains("profiles[0]: an evented profile needs `events`"),
        "{e}"
    );
    let cases = [
        (
            events_json(&[('O', 0, 0), ('C', 0, 1), ('C', 0, 2)]),
            "profiles[0].events[2]: closes frame 0 (\"a\") but no frame is open",
        ),
        (
            events_json(&[('O', 0, 0), ('O', 1, 1), ('C', 0, 2)]),
            "profiles[0].events[2]: closes frame 0 (\"a\") while frame 1 (\"b\") (opened \
             at events[1]) is the innermost open frame",
        ),
        (
            events_json(&[('O', 0, 5), ('C', 0, 4)]),
            "profiles[0].events[1]: at = 4 is before the previous event's at = 5",
        ),
        (
            events_json(&[('O', 0, 0), ('O', 1, 0), ('C', 1, 1)]),
            "profiles[0].events: 1 frame still open after the last event (the innermost, \
             frame 0 (\"a\"), opened at events[0])",
        ),
        (
            events_json(&[('O', 7, 0)]),
            "profiles[0].events[0]: frame 7 is not in shared.frames (4 frames)",
        ),
        (
            r#"{"type":"O","frame":0,"at":0},3"#.to_string(),
            "profiles[0].events[1]: expected an event object",
        ),
        (
            r#"{"type":"O","frame":0,"at":"soon"}"#.to_string(),
            "profiles[0].events[0]: expected a number in \"at\"",
        ),
        (
            r#"{"type":"O","frame":0,"at":1e300}"#.to_string(),
            "profiles[0].events[0]: at = 1e300 is out of range",
        ),
    ];
    for (events, want) in cases {
        let e = error(&file(&evented(&events)));
        assert!(e.contains(want), "{e}\nwanted: {want}");
    }
}

#[test]
fn other_event_types_and_profile_types_are_skipped_and_counted() {
    let ev = r#"{"type":"O","frame":0,"at":0},{"type":"X","frame":0,"at":1},
        {"type":"C","frame":0,"at":2}"#;
    let text = file(&format!(
        r#"{},{{"type":"flamechart","name":"q"}}"#,
        evented(ev)
    ));
    let s = load(&text);
    assert_eq!(s.len(), 1);
    let notes = s.meta().warnings.notes.join("\n");
    assert!(
        notes.contains("profiles[1]: type \"flamechart\""),
        "{notes}"
    );
    assert!(
        notes.contains(
            "1 event of a type other than \"O\" or \"C\" skipped (first: profiles[0].events[1])"
        ),
        "{notes}"
    );
}

#[test]
fn loads_through_the_importer_table() {
    let text = file(&sampled("one", "seconds", SIMPLE, "[1,1,4,3,5]"));
    let p = crate::import::load_bytes("t.json", text.as_bytes(), Default::default()).unwrap();
    assert_eq!(p.meta.format, SourceFormat::Speedscope);
    assert_eq!(p.tree.grand_total(), 14_000_000_000);
    assert_eq!(p.meta.sampled.as_ref().unwrap().samples.len(), 5);
}

#[test]
fn every_prefix_and_byte_flip_fails_cleanly_or_loads() {
    let text = file(&format!(
        "{},{}",
        sampled("one", "seconds", SIMPLE, "[1,1.5,4,3,5]"),
        evented(&events_json(&[
            ('O', 0, 0),
            ('O', 1, 2),
            ('C', 1, 3),
            ('C', 0, 4)
        ]))
    ));
    let bytes = text.as_bytes();
    for n in 0..bytes.len() {
        let _ = parse("t", &bytes[..n]);
    }
    let mut r = Rng(7);
    for _ in 0..2000 {
        let mut b = bytes.to_vec();
        let i = (r.next() % b.len() as u64) as usize;
        b[i] = b"[]{},:\"0-9eO C"[(r.next() % 14) as usize];
        if let Ok(s) = parse("t", &b) {
            let _ = s.aggregate(Default::default());
            let _ = convert(&s, ConvertOptions::default());
        }
    }
}

/// Repeated stacks come from the memo of frame lists; a list that differs in its last
/// frame, a bad list after a good one with the same start, and an empty list do not.
#[test]
fn repeated_stacks_are_the_same_stacks() {
    let s = load(&file(&sampled(
        "p",
        "none",
        "[[0,1],[0,1],[0,2],[0,1],[1],[0,1,9],[0,1],[],[1],[]]",
        "[1,1,1,1,1,1,1,1,1,1]",
    )));
    let st = &s.streams[0];
    let names: Vec<String> = st
        .stack
        .iter()
        .map(|&id| {
            if id == EMPTY_STACK {
                return String::new();
            }
            let frames = s.stacks.frames_of(id);
            let f: Vec<&str> = frames.iter().map(|&n| s.names.get(n)).collect();
            f.join(";")
        })
        .collect();
    assert_eq!(names, ["a;b", "a;b", "a;c", "a;b", "b", "a;b", "", "b", ""]);
    assert_eq!(st.stack[0], st.stack[3]);
    assert_eq!(st.stack[4], st.stack[7]);
    let notes = &s.meta().warnings.notes;
    assert!(
        notes
            .iter()
            .any(|n| n.contains("1 invalid sample") && n.contains("samples[5][2]")),
        "{notes:?}"
    );
}

/// Each distinct frame list is kept once, samples by list; parts joined keep the lists'
/// numbers of the first and add the others'.
#[test]
fn frame_lists_are_kept_once() {
    fn stacks(samples: &[&[u32]]) -> FlatStacks {
        let mut f = FlatStacks::default();
        for s in samples {
            let mark = f.frames.len();
            f.frames.extend_from_slice(s);
            f.end_sample(mark);
        }
        f
    }
    let mut a = stacks(&[&[1, 2], &[1, 2], &[1], &[], &[1, 3], &[], &[1, 2]]);
    assert_eq!(a.lists, [0, 0, 1, 2, 3, 2, 0]);
    assert_eq!((a.distinct(), a.frames.len()), (4, 5));
    let b = stacks(&[&[9], &[1, 3], &[], &[9], &[2, 1]]);
    a.append(&b);
    assert_eq!(a.lists, [0, 0, 1, 2, 3, 2, 0, 4, 3, 2, 4, 5]);
    let got: Vec<&[u32]> = (0..a.len()).map(|i| a.get(i)).collect();
    let want: [&[u32]; 12] = [
        &[1, 2],
        &[1, 2],
        &[1],
        &[],
        &[1, 3],
        &[],
        &[1, 2],
        &[9],
        &[1, 3],
        &[],
        &[9],
        &[2, 1],
    ];
    assert_eq!(got, want);
}
