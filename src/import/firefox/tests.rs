use super::*;

fn load(json: &str) -> (Samples, Option<SpanSet>) {
    parse("t.json", json.as_bytes()).unwrap()
}

/// A processed profile of two threads, one with CPU deltas and a marker.
const PROCESSED: &str = r#"{"meta": {"startTime": 1000, "interval": 2, "preprocessedProfileVersion": 49,
          "sampleUnits": {"threadCPUDelta": "µs"}}, "threads": [
         {"name": "main", "processName": "app", "pid": "42", "tid": 42,
          "stringArray": ["root", "work", "leaf", "Load"],
          "stackTable": {"prefix": [null, 0, 1], "frame": [0, 1, 2], "length": 3},
          "frameTable": {"func": [0, 1, 2], "length": 3},
          "funcTable": {"name": [0, 1, 2], "length": 3},
          "samples": {"stack": [2, 1, null], "time": [1, 3, 5], "weight": [1, 3, 1],
            "weightType": "samples", "threadCPUDelta": [9, 2, 4], "length": 3},
          "markers": {"name": [3], "startTime": [1.5], "endTime": [4.5], "phase": [1],
            "data": [null], "length": 1}},
         {"name": "worker", "pid": "42", "tid": 43, "stringArray": ["w"],
          "stackTable": {"prefixOffset": [0], "frame": [0], "length": 1},
          "frameTable": {"func": [0], "length": 1}, "funcTable": {"name": [0], "length": 1},
          "samples": {"stack": [0, 0], "timeDeltas": [2, 2], "weight": null, "length": 2}}]}"#;

/// A gecko profile with a sub-process on its own clock, and markers of both kinds.
const GECKO: &str = r#"{"meta": {"version": 13, "startTime": 1000, "interval": 1}, "threads": [
         {"name": "GeckoMain", "processType": "default", "pid": 7, "tid": 7,
          "stringTable": ["(root)", "a", "b", "Paint"],
          "frameTable": {"schema": {"location": 0, "line": 1}, "data": [[0], [1], [2, 3]]},
          "stackTable": {"schema": {"prefix": 0, "frame": 1},
            "data": [[null, 0], [0, 1], [1, 2]]},
          "samples": {"schema": {"stack": 0, "time": 1}, "data": [[2, 0], [1, 1]]},
          "markers": {"schema": {"name": 0, "time": 1, "data": 2}, "data": [
            [3, 0.5, {"type": "tracing", "interval": "start"}],
            [3, 1.5, {"type": "tracing", "interval": "end"}]]}}],
         "processes": [{"meta": {"version": 32, "startTime": 1500}, "threads": [
          {"name": "GeckoMain", "processType": "tab", "pid": 8, "tid": 8,
           "stringTable": ["c (x.js:1:2)[4]"],
           "frameTable": {"schema": {"location": 0}, "data": [[0]]},
           "stackTable": {"schema": {"prefix": 0, "frame": 1}, "data": [[null, 0]]},
           "samples": {"schema": {"stack": 0, "time": 1}, "data": [[0, 1]]},
           "markers": {"schema": {"name": 0, "startTime": 1, "endTime": 2, "phase": 3},
             "data": [[0, 0, 2, 1]]}}]}]}"#;

/// Sample `k` of stream `st` as `frames@ms*weight`.
fn sample(s: &Samples, st: usize, k: usize) -> String {
    let stream = &s.streams[st];
    let stack = stream.stack[k];
    let frames: Vec<&str> = if stack == EMPTY_STACK {
        Vec::new()
    } else {
        s.stacks
            .frames_of(stack)
            .into_iter()
            .map(|n| s.names.get(n))
            .collect()
    };
    let ms = stream.time[k] as f64 / NS_PER_MS;
    format!("{}@{ms}*{}", frames.join(";"), stream.weight.get(k))
}

fn notes(s: &Samples) -> String {
    s.meta().warnings.notes.join("\n")
}

#[test]
fn processed_threads_stacks_weights_cpu_and_markers() {
    let (s, spans) = load(PROCESSED);
    assert_eq!(s.origin_ns, 1_001_000_000);
    let got: Vec<String> = (0..3).map(|k| sample(&s, 0, k)).collect();
    assert_eq!(got, ["root;work;leaf@0*1", "root;work@2*3", "@4*1"]);
    assert_eq!(
        s.streams[0].counter(CounterKind::CpuNs),
        Some(&[0, 2000, 4000][..])
    );
    assert_eq!(
        (sample(&s, 1, 0), sample(&s, 1, 1)),
        ("w@1*1".into(), "w@3*1".into())
    );
    let t = &s.threads[0];
    assert_eq!(
        (t.process.as_str(), t.pid, t.tid),
        ("app 42", Some(42), Some(42))
    );
    assert_eq!(s.events[0].values.sample_rate_hz, Some(500));
    let spans = spans.unwrap();
    assert_eq!(spans.origin_ns, s.origin_ns);
    assert_eq!((spans.start_ns[0], spans.dur_ns[0]), (500_000, 3_000_000));
    assert_eq!(spans.tracks[0].name, "main 42");
    assert_eq!(spans.names.get(spans.name[0]), "Load");
}

#[test]
fn gecko_sub_processes_move_onto_the_parents_clock() {
    let (s, spans) = load(GECKO);
    assert_eq!(s.origin_ns, 1_000_000_000);
    assert_eq!(sample(&s, 0, 0), "(root);a;b@0*1");
    assert_eq!(sample(&s, 1, 0), "c (x.js:1:2)@501*1");
    assert_eq!(s.threads[1].process, "Content Process 8");
    let spans = spans.unwrap();
    assert_eq!(spans.tracks.len(), 2);
    let ms = |i: usize| (spans.start_ns[i] / 1_000_000, spans.dur_ns[i] / 1_000_000);
    assert_eq!((spans.start_ns[0], spans.dur_ns[0]), (500_000, 1_000_000));
    assert_eq!(ms(1), (500, 2));
}

/// A processed profile of one thread with this stack table and these samples.
fn one_thread(prefix: &str, stacks: &str) -> String {
    format!(
        r#"{{"meta": {{"preprocessedProfileVersion": 20}}, "threads": [{{
          "stringArray": ["f"], "frameTable": {{"func": [0, 0, 0]}},
          "funcTable": {{"name": [0]}}, "stackTable": {{"prefix": {prefix},
          "frame": [0, 0, 0]}}, "samples": {{"stack": {stacks}, "time": [1, 2, 3]}}}}]}}"#
    )
}

#[test]
fn a_cyclic_stack_table_is_counted_not_followed() {
    let (s, _) = load(&one_thread("[1, 0, null]", "[0, 2, 1]"));
    assert_eq!(s.len(), 1);
    assert_eq!(sample(&s, 0, 0), "f@0*1");
    let n = notes(&s);
    assert!(
        n.contains(
            "2 samples skipped (first: threads[0].samples, sample 0: stack 0 is its own ancestor"
        ),
        "{n}"
    );
}

#[test]
fn bad_indices_are_skipped_with_their_place_and_bad_shapes_fail() {
    let (s, _) = load(&one_thread("[null, 0, 7]", "[1, 99, 2]"));
    assert_eq!(s.len(), 1);
    let n = notes(&s);
    assert!(
        n.contains("sample 1: stack 99 is not in the stack table (3 stacks)"),
        "{n}"
    );
    let bad = one_thread("[null, 0, 1]", "[0, 1, 2]").replace(r#"{"func": [0, 0, 0]}"#, "7");
    let e = parse("t.json", bad.as_bytes()).unwrap_err().to_string();
    assert!(
        e.contains("t.json: threads[0].frameTable: expected a table"),
        "{e}"
    );
    let all_bad = one_thread("[null, 0, 1]", "[9, 9, 9]");
    let e = parse("t.json", all_bad.as_bytes()).unwrap_err().to_string();
    assert!(
        e.contains("t.json: threads[0].samples, sample 0: stack 9 is not in the stack table")
            && e.contains("no sample is usable (3 skipped"),
        "{e}"
    );
    let e = parse("t.json", b"{\"meta\": {}, \"threads\": [}").unwrap_err();
    assert!(e.to_string().contains("line 1, column 26"), "{e}");
}

#[test]
fn deep_stacks_and_cleopatra() {
    let n = 20_000;
    let prefix: Vec<String> = (0..n)
        .map(|i| {
            if i == 0 {
                "null".into()
            } else {
                (i - 1).to_string()
            }
        })
        .collect();
    let json = one_thread(
        &format!("[{}]", prefix.join(",")),
        &format!("[{}, 0, 5]", n - 1),
    )
    .replace(
        r#""frame": [0, 0, 0]"#,
        &format!(r#""frame": [{}]"#, vec!["0"; n].join(",")),
    );
    let (s, _) = load(&json);
    assert_eq!(s.stacks.depth(s.streams[0].stack[0]), n as u32);
    let (s, _) = load(
        r#"{"format": "profileJSONWithSymbolicationTable,1", "meta": {"interval": 1},
          "profileJSON": [{"frames": [0, 1], "extraInfo": {"time": 5}},
            {"frames": [0], "extraInfo": {}}],
          "symbolicationTable": {"0": "(root)", "1": "main (in xul.dll)"}}"#,
    );
    assert_eq!(sample(&s, 0, 0), "(root);main (in xul.dll)@0*1");
    assert_eq!(sample(&s, 0, 1), "(root)@1*1");
}

/// Documents damaged at random (bytes replaced by JSON's punctuation, quotes, escapes,
/// digits or bytes that are not UTF-8; cut short) read or fail, whole and as heads,
/// and never panic.
#[test]
fn randomly_damaged_documents_never_panic() {
    let mut rng = crate::generator::Rng(23);
    let alphabet = b"{}[]:,\"\\0123456789eE.-+ nulltrue\xff\xc3u";
    for doc in [PROCESSED, GECKO] {
        for _ in 0..2000 {
            let mut bytes = doc.as_bytes().to_vec();
            for _ in 0..1 + rng.next() % 4 {
                let at = (rng.next() % bytes.len() as u64) as usize;
                bytes[at] = alphabet[(rng.next() % alphabet.len() as u64) as usize];
            }
            let _ = parse("d.json", &bytes);
            let cut = bytes.len() - (rng.next() % 64) as usize;
            let _ = parse("d.json", &bytes[..cut]);
            let _ = parse_head("d.json", &bytes[..cut]);
        }
    }
}

/// A thread's samples are read apart from their stacks (on all cores) and joined after:
/// a damaged sample is still judged by the first thing wrong with it, its time, then its
/// stack (resolved), then its weight, and the first one counted is the first in the
/// table, whichever way it was read.
#[test]
fn damage_is_judged_in_table_order_stacks_before_weights() {
    // Stacks 0 and 1 are each other's prefix (a cycle); 2 is a root, 3 its child.
    let doc = |stacks: &str, times: &str, weights: &str| {
        format!(
            r#"{{"meta": {{"preprocessedProfileVersion": 20,
              "sampleUnits": {{"threadCPUDelta": "ns"}}}}, "threads": [{{
              "stringArray": ["f", "g"], "frameTable": {{"func": [0, 1]}},
              "funcTable": {{"name": [0, 1]}}, "stackTable": {{"prefix": [1, 0, null, 2],
              "frame": [0, 0, 0, 1]}}, "samples": {{"stack": {stacks}, "time": {times},
              "weight": {weights}, "threadCPUDelta": [5, 6, 7, 8, 9, 10, 11]}}}}]}}"#
        )
    };
    // (document, the first damage counted, the samples kept, their CPU deltas).
    let cases = [
        // A cyclic stack with a bad weight: the stack is what is wrong.
        (
            doc(
                "[3, 0, 2, \"x\", 5000000000, 3, 0]",
                "[1, 2, null, 4, 5, 6, 7]",
                "[1, -1, 1, 1, 1, \"w\", 2]",
            ),
            "6 samples skipped (first: threads[0].samples, sample 1: stack 0 is its own ancestor",
            vec!["f;g@0*1"],
            None,
        ),
        // A bad time before a broken stack; a stack index past 32 bits.
        (
            doc(
                "[2, 0, 5000000000, 3, 3, 3, 3]",
                "[1, \"t\", 3, 4, 5, 6, 7]",
                "[1, 1, 1, 1, 1, 1, 1]",
            ),
            "2 samples skipped (first: threads[0].samples, sample 1: its time is not a usable number",
            vec!["f@0*1", "f;g@3*1", "f;g@4*1", "f;g@5*1", "f;g@6*1"],
            Some(vec![0, 8, 9, 10, 11]),
        ),
        (
            doc(
                "[2, 2, 5000000000, 3, 3, 3, 3]",
                "[1, 2, 3, 4, 5, 6, 7]",
                "[1, 1, 1, 1, 1, 1, 1]",
            ),
            "1 sample skipped (first: threads[0].samples, sample 2: stack 5000000000 is not in the stack table (4 stacks)",
            vec!["f@0*1", "f@1*1", "f;g@3*1", "f;g@4*1", "f;g@5*1", "f;g@6*1"],
            Some(vec![0, 6, 8, 9, 10, 11]),
        ),
        // A null weight is 1; a cycle met by a plain sample.
        (
            doc(
                "[2, 3, 1, 2, 2, 2, 2]",
                "[1, 2, 3, 4, 5, 6, 7]",
                "[1, null, 2.5, 1, 1, 1, 1]",
            ),
            "1 sample skipped (first: threads[0].samples, sample 2: stack 1 is its own ancestor",
            vec!["f@0*1", "f;g@1*1", "f@3*1", "f@4*1", "f@5*1", "f@6*1"],
            Some(vec![0, 6, 8, 9, 10, 11]),
        ),
        // A bad weight on a good stack before a cycle.
        (
            doc(
                "[2, 3, 3, 2, 1, 2, 2]",
                "[1, 2, 3, 4, 5, 6, 7]",
                "[1, 1, \"w\", 1, 1, 1, 1]",
            ),
            "2 samples skipped (first: threads[0].samples, sample 2: weight \"w\" is not a count",
            vec!["f@0*1", "f;g@1*1", "f@3*1", "f@5*1", "f@6*1"],
            Some(vec![0, 6, 8, 10, 11]),
        ),
    ];
    for (json, first, kept, cpu) in cases {
        let (s, _) = load(&json);
        let n = notes(&s);
        assert!(n.contains(first), "{n}\nexpected: {first}");
        let got: Vec<String> = (0..s.streams[0].len()).map(|k| sample(&s, 0, k)).collect();
        assert_eq!(got, kept, "{n}");
        // The first kept sample's CPU delta has nothing before it to be a delta from.
        let got = s.streams[0]
            .counter(CounterKind::CpuNs)
            .map(<[u32]>::to_vec);
        assert_eq!(got, cpu, "{n}");
    }
}
