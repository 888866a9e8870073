//! Chrome Trace Event Format JSON (`chrome://tracing`, Perfetto's legacy JSON importer,
//! DevTools performance traces, catapult test data) → [`SpanSet`].
//!
//! Two top-level forms: a bare array of events, or an object whose `traceEvents` member is
//! that array (other members: `displayTimeUnit`, recorded in [`SpanSet::meta`] since it
//! only affects display; `samples` … are noted and skipped, `systemTraceEvents` too except
//! the process and thread names of Fuchsia's JSON form). Browsers
//! stream the array and may stop anywhere, so a missing final `]`, a trailing comma and a
//! cut-off last event are accepted: everything before loads and a warning says what was
//! lost.
//!
//! **Speed** (over 300 MB/s on one core in `benches/pipeline.rs`; the figure quoted for
//! Perfetto's JSON importer is 177 MB/s). No `serde_json::Value` tree: each event is read by a small
//! hand-written reader for this one shape (member names matched as bytes, `memchr` jumps
//! inside strings) into a borrowed struct (`Cow<str>` strings, raw JSON text for numbers,
//! ids and `args`), and its name and category are interned right then, while its bytes
//! are in cache. From 8 MiB up the array is cut into one chunk per core at guessed event
//! starts (a line that starts with `{`: JSON strings cannot hold a raw newline) and the
//! chunks are parsed with `std::thread::scope`. Each chunk stops at the next one's first
//! event; if it does not land exactly there the guess was wrong (pretty-printed events)
//! and the rest is parsed in sequence, so the result, name ids and first error included,
//! is always the sequential one. Each run checks its bytes' UTF-8 in one pass and borrows
//! the strings inside without checking each again (a bad byte is still reported where it
//! is).
//! Linking events into spans sorts small per-thread records; the thread tracks are linked
//! on all cores (largest first), and async events are matched to their keys on all cores,
//! each thread taking a share of the keys' hash values, groups numbered by first event as
//! in sequence.
//!
//! **Times.** `ts`/`dur` are microseconds, possibly fractional, as numbers or numeric
//! strings. They are converted to integer nanoseconds from their decimal digits (round half
//! away from zero), never through `f64`, so `1.0005` µs is exactly 1001 ns. A number that
//! does not fit 64 bits is an error naming the event; nothing is ever allocated from a
//! number in the file.
//!
//! **Spans**, per thread (`pid`, `tid`), after a stable sort by `ts`:
//! - `X`: `ts` + `dur` (speedscope's fallback to `tdur`, else zero, counted);
//! - `B`/`E`: a stack per thread, as Chrome and Perfetto match them: `E` closes the most
//!   recent open `B` whatever its name (a different name is counted); `E` with nothing
//!   open is counted and skipped; a `B` never closed ends at the trace's last timestamp
//!   (catapult's auto-close; Perfetto also draws it to the end), counted. `E`'s `args`
//!   are merged into the span's;
//! - `i`/`I`/`R`: instants, zero-duration spans (process- or global-scoped ones, `s` of
//!   `p`/`g`, on the process's async track).
//!
//! These are nested by time containment on their thread (sorted by start, ties longer
//! first, then file order), with an explicit stack: a span partially overlapping the open
//! one cannot be its child; it closes it and is counted.
//!
//! **Async**, on one "async" track per process: nestable `b`/`e`/`n` keyed by (`cat`, id)
//! where the id is `id`, `id2.global` or `id2.local` (local ids also key on `pid`) plus
//! `scope`; a `b` inside an open `b` of the same key becomes its child, `e` closes the most
//! recent open `b` of its name (an unnamed `e` the most recent `b`; one matching nothing is
//! counted and skipped, as catapult does), ending with it the `b`s still open inside, and
//! `n` is an instant child.
//! Legacy `S`/`F` (keyed also by name) make one span each; `T`/`p` steps are counted.
//!
//! **Metadata** `M`: `process_name`, `thread_name`, `process_sort_index`,
//! `thread_sort_index` name and order the tracks like Perfetto: thread tracks are called
//! "`thread_name tid`" and grouped under "`process_name pid`" ([`TrackInfo::group`]),
//! ordered by process sort index, pid, then the async track, then thread sort index, tid.
//!
//! Counters `C`, objects `O`/`D`/`N`, flows `s`/`t`/`f`, samples `P`, memory dumps `v`/`V`
//! and unknown phases are counted and skipped, one warning line per kind. `args` become
//! span attributes (keys interned, values copied once into one text arena per chunk, which
//! the span set then owns), `cat` the span's category. Every pass is a loop with explicit stacks:
//! B/E nesting a hundred thousand deep costs no call stack.

mod cpu;
mod emit;
mod events;
mod link;
pub(super) mod scan;

use super::ImportError;
use crate::model::spans::SpanSet;

/// Inputs at least this large are parsed on all cores.
pub const PARALLEL_MIN_BYTES: usize = 8 << 20;

/// Parses a Chrome trace (object or array form).
pub fn parse(file: &str, text: &[u8]) -> Result<SpanSet, ImportError> {
    let threads = crate::par::cores();
    parse_with_threads(file, text, threads, PARALLEL_MIN_BYTES)
}

/// [`parse`] with an explicit thread count and parallel threshold (tests force parallel
/// parsing of small inputs with these).
pub fn parse_with_threads(
    file: &str,
    text: &[u8],
    threads: usize,
    min_parallel_bytes: usize,
) -> Result<SpanSet, ImportError> {
    parse_all(file, text, threads, min_parallel_bytes).map(|(s, _)| s)
}

/// The trace's spans and the CPU samples recorded in it (`Profile`/`ProfileChunk`
/// events, top-level `samples`; see [`cpu`]).
pub fn parse_with_samples(
    file: &str,
    text: &[u8],
) -> Result<(SpanSet, Option<crate::model::samples::Samples>), ImportError> {
    let threads = crate::par::cores();
    parse_all(file, text, threads, PARALLEL_MIN_BYTES)
}

fn parse_all(
    file: &str,
    text: &[u8],
    threads: usize,
    min_parallel_bytes: usize,
) -> Result<(SpanSet, Option<crate::model::samples::Samples>), ImportError> {
    let parse = || read_and_link(file, text, threads, min_parallel_bytes);
    if text.len() >= min_parallel_bytes {
        // A big trace's records (64 B an event) are freed just before the span tree and
        // the layout allocate theirs: kept on the heap, their pages are reused.
        crate::heap::keep_large_blocks(parse)
    } else {
        parse()
    }
}

fn read_and_link(
    file: &str,
    text: &[u8],
    threads: usize,
    min_parallel_bytes: usize,
) -> Result<(SpanSet, Option<crate::model::samples::Samples>), ImportError> {
    let split = Split {
        threads,
        min_bytes: min_parallel_bytes,
    };
    let (recs, extras, pids, names, args, doc) = events::read_doc(file, text, split)?;
    // Linking is parallel where parsing was.
    let link_threads = if text.len() >= min_parallel_bytes {
        threads
    } else {
        1
    };
    if recs.is_empty() && doc.samples.is_none() {
        // As the other trace formats say of a file without spans.
        return Err(ImportError::Invalid {
            file: file.to_string(),
            location: "traceEvents".to_string(),
            message: "no events: the trace's array of events is empty".to_string(),
        });
    }
    let has_samples =
        doc.samples.is_some() || doc.profile_events || names.find("CpuProfile").is_some();
    if !has_samples {
        return Ok((
            link::build(recs, extras, &pids, names, args, doc, link_threads),
            None,
        ));
    }
    // Profiles are read before linking (which consumes the records) and named after it
    // (threads are named by the tracks' metadata).
    let collected = cpu::collect(file, text, &recs, &extras, &pids, &names, &args, &doc);
    let set = link::build(recs, extras, &pids, names, args, doc, link_threads);
    let samples = collected.finish(&set);
    Ok((set, samples))
}

/// When and how widely to parse in parallel.
#[derive(Clone, Copy)]
pub(super) struct Split {
    pub(super) threads: usize,
    pub(super) min_bytes: usize,
}

#[cfg(test)]
mod tests {
    use super::events::micros_to_ns;
    use super::*;
    use crate::model::NO_PARENT;
    use crate::model::spans::SpanTree;
    use crate::model::spans::TrackKind;

    #[test]
    fn event_record_is_compact() {
        // Millions of records: their size is page faults while parsing.
        assert!(std::mem::size_of::<events::Rec>() <= 64);
    }

    #[test]
    fn long_and_local_async_ids_match() {
        // Ids longer than fit inline in a record, and process-local ones.
        let long = "0x0123456789abcdef0123456789";
        let s = load(&format!(
            r#"[{{"ph":"b","id":"{long}","cat":"c","name":"a","ts":1,"pid":1,"tid":1}},
            {{"ph":"b","id2":{{"local":"0x5"}},"cat":"c","name":"l","ts":2,"pid":1,"tid":1}},
            {{"ph":"e","id2":{{"local":"0x5"}},"cat":"c","name":"l","ts":3,"pid":1,"tid":1}},
            {{"ph":"b","id2":{{"local":"0x5"}},"cat":"c","name":"m","ts":2,"pid":2,"tid":1}},
            {{"ph":"e","id2":{{"local":"0x5"}},"cat":"c","name":"m","ts":5,"pid":2,"tid":1}},
            {{"ph":"e","id":"{long}","cat":"c","name":"a","ts":9,"pid":1,"tid":1}}]"#
        ));
        let dur = |n: &str| s.dur_ns[find(&s, n)];
        assert_eq!(dur("a"), 8000);
        assert_eq!(dur("l"), 1000);
        assert_eq!(dur("m"), 3000);
    }

    fn load(s: &str) -> SpanSet {
        parse("t.json", s.as_bytes()).unwrap()
    }

    fn name(s: &SpanSet, i: usize) -> &str {
        s.names.get(s.name[i])
    }

    fn find(s: &SpanSet, n: &str) -> usize {
        (0..s.len()).find(|&i| name(s, i) == n).unwrap()
    }

    fn parent_name(s: &SpanSet, n: &str) -> Option<String> {
        let p = s.parent[find(s, n)];
        (p != NO_PARENT).then(|| name(s, p as usize).to_string())
    }

    fn has_note(s: &SpanSet, what: &str) -> bool {
        s.warnings.notes.iter().any(|n| n.contains(what))
    }

    #[test]
    fn fractional_microseconds_round_exactly() {
        assert_eq!(micros_to_ns("1"), Some(1000));
        assert_eq!(micros_to_ns("1.0005"), Some(1001));
        assert_eq!(micros_to_ns("1.0004999"), Some(1000));
        assert_eq!(micros_to_ns("-1.0005"), Some(-1001));
        assert_eq!(micros_to_ns("0.1"), Some(100));
        assert_eq!(micros_to_ns("\"12.5\""), Some(12500));
        assert_eq!(micros_to_ns("1.5e3"), Some(1_500_000));
        assert_eq!(micros_to_ns("15e-4"), Some(2));
        assert_eq!(micros_to_ns("1e-400"), Some(0));
        assert_eq!(micros_to_ns("123456789012.345678"), Some(123456789012346));
        // 2^63 ns is out of range; huge values are refused without allocating.
        assert_eq!(micros_to_ns("9223372036854775.808"), None);
        assert_eq!(micros_to_ns("9223372036854775.807"), Some(i64::MAX));
        assert_eq!(micros_to_ns("1e400000000000"), None);
        assert_eq!(micros_to_ns(&"9".repeat(5000)), None);
        assert_eq!(micros_to_ns("abc"), None);
        assert_eq!(micros_to_ns("1.2.3"), None);
        assert_eq!(micros_to_ns("true"), None);
        // The short path and the general one agree.
        for t in [
            "0",
            "7",
            "12.",
            "12.5",
            "12.34",
            "12.345",
            "12.3456",
            "999999999999999.999",
            "9999999999999999",
            "1.",
            ".5",
            "01.250",
            "-0",
            "1e3",
            " 5",
            "5 ",
            "",
        ] {
            let general = {
                let q = format!("\"{t}\"");
                micros_to_ns(&q)
            };
            assert_eq!(micros_to_ns(t), general, "{t}");
        }
    }

    #[test]
    fn x_events_nest_by_containment() {
        let s = load(
            r#"[{"ph":"X","name":"a","ts":0,"dur":10,"pid":1,"tid":1},
                {"ph":"X","name":"c","ts":2,"dur":3,"pid":1,"tid":1},
                {"ph":"X","name":"b","ts":0,"dur":5,"pid":1,"tid":1},
                {"ph":"X","name":"d","ts":5,"dur":5,"pid":1,"tid":1},
                {"ph":"X","name":"z","ts":0,"dur":4,"pid":1,"tid":2}]"#,
        );
        assert_eq!(s.len(), 5);
        assert_eq!(parent_name(&s, "a"), None);
        assert_eq!(parent_name(&s, "b").as_deref(), Some("a"));
        assert_eq!(parent_name(&s, "c").as_deref(), Some("b"));
        // d starts where b ends: a sibling of b.
        assert_eq!(parent_name(&s, "d").as_deref(), Some("a"));
        assert_eq!(parent_name(&s, "z"), None);
        assert_eq!(s.tracks.len(), 2);
        assert!(s.warnings.is_empty(), "{:?}", s.warnings);
    }

    #[test]
    fn partial_overlap_is_counted() {
        let s = load(
            r#"[{"ph":"X","name":"alpha","ts":0,"dur":10,"pid":0,"tid":0},
                {"ph":"X","name":"beta","ts":5,"dur":10,"pid":0,"tid":0}]"#,
        );
        assert_eq!(parent_name(&s, "beta"), None);
        assert!(
            has_note(&s, "1 span partially overlapping"),
            "{:?}",
            s.warnings
        );
    }

    #[test]
    fn b_e_matching_with_damage() {
        // Out of order in the file; an E with nothing open; a B never closed.
        let s = load(
            r#"[{"ph":"E","name":"beta","ts":10,"pid":0,"tid":0,"args":{"e":1}},
                {"ph":"B","name":"alpha","ts":0,"pid":0,"tid":0},
                {"ph":"E","name":"alpha","ts":12,"pid":0,"tid":0},
                {"ph":"B","name":"beta","ts":1,"pid":0,"tid":0,"args":{"b":"x"}},
                {"ph":"E","name":"gamma","ts":13,"pid":0,"tid":0},
                {"ph":"B","name":"open","ts":14,"pid":0,"tid":0},
                {"ph":"X","name":"last","ts":15,"dur":5,"pid":0,"tid":0}]"#,
        );
        assert_eq!(s.len(), 4);
        let beta = find(&s, "beta");
        assert_eq!(s.start_ns[beta], 1000);
        assert_eq!(s.dur_ns[beta], 9000);
        assert_eq!(parent_name(&s, "beta").as_deref(), Some("alpha"));
        // E's args are merged into the span's.
        let kv = |k: &str, v: &str| (k.to_string(), v.to_string());
        assert_eq!(s.attrs.owned(beta as u32), [kv("b", "x"), kv("e", "1")]);
        // The unclosed B ends at the trace's end (X "last" ends at 20 µs).
        let open = find(&s, "open");
        assert_eq!(s.end_ns(open), 20_000);
        assert_eq!(parent_name(&s, "last").as_deref(), Some("open"));
        assert!(has_note(&s, "1 E event with no open B"), "{:?}", s.warnings);
        assert!(has_note(&s, "1 B event never closed"), "{:?}", s.warnings);
    }

    #[test]
    fn e_closes_the_top_whatever_its_name() {
        let s = load(
            r#"[{"ph":"B","name":"alpha","ts":0,"pid":0,"tid":0},
                {"ph":"B","name":"beta","ts":1,"pid":0,"tid":0},
                {"ph":"E","name":"alpha","ts":9,"pid":0,"tid":0},
                {"ph":"E","name":"beta","ts":10,"pid":0,"tid":0}]"#,
        );
        assert_eq!(s.end_ns(find(&s, "beta")), 9000);
        assert_eq!(s.end_ns(find(&s, "alpha")), 10000);
        assert!(has_note(&s, "2 E events closed a B of another name"));
    }

    #[test]
    fn a_hundred_thousand_deep_b_e_nesting() {
        let n = 100_000;
        let mut t = String::from("[");
        for i in 0..n {
            t.push_str(&format!(
                r#"{{"ph":"B","name":"f{}","ts":{i},"pid":1,"tid":1}},"#,
                i % 7
            ));
        }
        for i in 0..n {
            t.push_str(&format!(r#"{{"ph":"E","ts":{},"pid":1,"tid":1}},"#, n + i));
        }
        t.pop();
        t.push(']');
        let s = load(&t);
        assert_eq!(s.len(), n);
        let tree = SpanTree::build(&s);
        assert_eq!(tree.roots.len(), 1);
        let deepest = (0..s.len()).max_by_key(|&i| s.start_ns[i]).unwrap();
        let mut depth = 0;
        let mut cur = deepest as u32;
        while s.parent[cur as usize] != NO_PARENT {
            cur = s.parent[cur as usize];
            depth += 1;
        }
        assert_eq!(depth, n - 1);
        let l = crate::layout::timeline::timeline_layout(&s, &tree);
        assert_eq!(l.rows.len(), n);
    }

    #[test]
    fn deeply_nested_args_cost_no_call_stack() {
        let deep = format!("{}1{}", "[".repeat(200_000), "]".repeat(200_000));
        let t = format!(
            r#"[{{"ph":"X","name":"a","ts":0,"dur":1,"args":{{"deep":{deep},"k":"v"}}}},
                {{"ph":"M","name":"thread_name","args":{{"name":{deep}}}}}]"#
        );
        let s = load(&t);
        assert_eq!(s.len(), 1);
        // The nested value is kept whole, as text.
        let a = s.attrs.owned(0);
        assert_eq!((a[0].0.as_str(), a[0].1.len()), ("deep", 400_001));
        assert_eq!(a[1], ("k".to_string(), "v".to_string()));
    }

    /// Issue 14, failure 9: a `systemTraceEvents` holding Fuchsia JSON was reported as
    /// ftrace text and its process and thread names were lost. traceEvents' own metadata
    /// still wins where both name a process.
    #[test]
    fn fuchsia_system_trace_events_reported_as_ftrace_text() {
        let s = load(
            r#"{"systemTraceEvents":{"type":"fuchsia","events":[
                  {"ph":"p","pid":7009,"name":"root_presenter"},
                  {"ph":"t","pid":7009,"tid":7022,"name":"initial-thread"},
                  {"ph":"p","pid":1,"name":"not this"},
                  {"ph":"k","koid":1,"name":"kernel object"}]},
                "traceEvents":[
                  {"ph":"M","name":"process_name","pid":1,"args":{"name":"browser"}},
                  {"ph":"M","name":"thread_name","pid":1,"tid":1,"args":{"name":"main"}},
                  {"ph":"X","name":"work","pid":1,"tid":1,"ts":0,"dur":10},
                  {"ph":"X","name":"fx","pid":7009,"tid":7022,"ts":0,"dur":10}]}"#,
        );
        let names: Vec<(&str, &str)> = s
            .tracks
            .iter()
            .zip(&s.track_info)
            .map(|(t, i)| (i.group.as_str(), t.name.as_str()))
            .collect();
        assert_eq!(
            names,
            [
                ("browser 1", "main 1"),
                ("root_presenter 7009", "initial-thread 7022")
            ]
        );
        assert!(!has_note(&s, "ftrace"), "{:?}", s.warnings);
        assert!(
            has_note(
                &s,
                "Fuchsia events): 3 process and thread names read, 1 other event"
            ),
            "{:?}",
            s.warnings
        );
        // ftrace text, and JSON that is neither, are skipped with a note saying which.
        let s = load(
            r##"{"systemTraceEvents":"# tracer: nop\n","traceEvents":[{"ph":"X","name":"a","pid":1,"tid":1,"ts":0,"dur":1}]}"##,
        );
        assert!(
            has_note(&s, "systemTraceEvents (ftrace text)"),
            "{:?}",
            s.warnings
        );
        let s = load(
            r#"{"systemTraceEvents":{"x":1},"traceEvents":[{"ph":"X","name":"a","pid":1,"tid":1,"ts":0,"dur":1}]}"#,
        );
        assert!(
            has_note(&s, "neither ftrace text nor Fuchsia events"),
            "{:?}",
            s.warnings
        );
    }

    /// Issue 14, failure 10: a member name with an escaped newline was quoted decoded, and
    /// broke the message over two lines.
    #[test]
    fn a_quoted_excerpt_with_a_newline_breaks_the_message() {
        for doc in [
            r#"{"traceEvents":[{"ph":"X","na\nme" 1}]}"#,
            r#"{"tr\nx" 1, "traceEvents":[]}"#,
        ] {
            let e = parse("k.json", doc.as_bytes()).unwrap_err().to_string();
            assert!(!e.contains('\n') && e.contains(r"\n"), "{e}");
        }
    }

    /// Issue 14, failure 10: `[]` was "unrecognised" while `{"traceEvents":[]}` loaded
    /// silently; both are a Chrome trace without events, an error naming the file.
    #[test]
    fn an_empty_json_array_is_unrecognised_while_empty_trace_events_load() {
        for doc in [
            "[]",
            " [\n] ",
            r#"{"traceEvents":[]}"#,
            r#"{"displayTimeUnit":"ns","traceEvents":[ ]}"#,
        ] {
            let e = crate::import::load_any_bytes("e.json", doc.as_bytes(), Default::default())
                .unwrap_err()
                .to_string();
            assert_eq!(
                e, "e.json: traceEvents: no events: the trace's array of events is empty",
                "{doc}"
            );
        }
    }

    #[test]
    fn instants_metadata_and_track_order() {
        let s = load(
            r#"{"displayTimeUnit":"ns","traceEvents":[
                {"ph":"M","name":"process_name","pid":2,"args":{"name":"Renderer"}},
                {"ph":"M","name":"process_name","pid":1,"args":{"name":"Browser"}},
                {"ph":"M","name":"process_sort_index","pid":2,"args":{"sort_index":-1}},
                {"ph":"M","name":"thread_name","pid":1,"tid":7,"args":{"name":"IO"}},
                {"ph":"M","name":"thread_name","pid":1,"tid":3,"args":{"name":"Main"}},
                {"ph":"M","name":"thread_sort_index","pid":1,"tid":7,"args":{"sort_index":-5}},
                {"ph":"X","name":"io","ts":1,"dur":1,"pid":1,"tid":7},
                {"ph":"X","name":"main","ts":1,"dur":1,"pid":1,"tid":3,"cat":"toplevel"},
                {"ph":"i","name":"mark","ts":1.5,"pid":1,"tid":3,"s":"t"},
                {"ph":"I","name":"global","ts":2,"pid":1,"tid":3,"s":"g"},
                {"ph":"X","name":"r","ts":0,"dur":1,"pid":2,"tid":9},
                {"ph":"C","name":"ctr","ts":0,"pid":2,"args":{"v":1}},
                {"ph":"C","name":"ctr","ts":1,"pid":2,"args":{"v":2}},
                {"ph":"O","name":"obj","ts":1,"pid":2,"id":"0x1"}
            ]}"#,
        );
        let names: Vec<(String, String)> = s
            .tracks
            .iter()
            .zip(&s.track_info)
            .map(|(t, i)| (i.group.clone(), t.name.clone()))
            .collect();
        assert_eq!(
            names,
            [
                ("Renderer 2", "Thread 9"),
                ("Browser 1", "Browser 1 — async"),
                ("Browser 1", "IO 7"),
                ("Browser 1", "Main 3"),
            ]
            .map(|(a, b)| (a.to_string(), b.to_string()))
        );
        assert_eq!(s.track_info[2].tid, Some(7));
        assert_eq!(s.track_info[1].kind, TrackKind::Async);
        assert_eq!(s.len(), 5);
        let mark = find(&s, "mark");
        assert_eq!(s.dur_ns[mark], 0);
        assert_eq!(parent_name(&s, "mark").as_deref(), Some("main"));
        assert_eq!(s.category_of(find(&s, "main")), Some("toplevel"));
        assert_eq!(s.track[find(&s, "global")], 1);
        assert_eq!(s.meta, [("displayTimeUnit".to_string(), "ns".to_string())]);
        assert!(
            has_note(&s, "2 counter events (ph 'C') skipped"),
            "{:?}",
            s.warnings
        );
        assert!(
            has_note(&s, "1 object event (ph 'O') skipped"),
            "{:?}",
            s.warnings
        );
        // Origin is the first span start: r at 0 µs.
        assert_eq!(s.origin_ns, 0);
        assert_eq!(s.start_ns[mark], 1500);
    }

    #[test]
    fn nestable_and_legacy_async() {
        let s = load(
            r#"[{"ph":"b","name":"req","cat":"net","id":"0x10","ts":0,"pid":1,"tid":1},
                {"ph":"b","name":"dns","cat":"net","id":"0x10","ts":1,"pid":1,"tid":1},
                {"ph":"n","name":"hit","cat":"net","id":"0x10","ts":2,"pid":1,"tid":1},
                {"ph":"e","name":"dns","cat":"net","id":"0x10","ts":3,"pid":1,"tid":1},
                {"ph":"b","name":"req","cat":"net","id2":{"local":"0x10"},"ts":1,"pid":1,"tid":2},
                {"ph":"e","name":"req","cat":"net","id":"0x10","ts":10,"pid":1,"tid":2},
                {"ph":"e","name":"req","cat":"net","id":"0x99","ts":10,"pid":1,"tid":2},
                {"ph":"S","name":"old","id":5,"ts":0,"pid":1,"tid":1},
                {"ph":"T","name":"old","id":5,"ts":1,"pid":1,"tid":1,"args":{"step":"s1"}},
                {"ph":"F","name":"old","id":5,"ts":4,"pid":1,"tid":1},
                {"ph":"b","name":"outer","id":7,"ts":20,"pid":1,"tid":1},
                {"ph":"b","name":"inner","id":7,"ts":21,"pid":1,"tid":1},
                {"ph":"e","name":"nomatch","id":7,"ts":22,"pid":1,"tid":1},
                {"ph":"e","name":"outer","id":7,"ts":25,"pid":1,"tid":1}]"#,
        );
        assert_eq!(s.len(), 7);
        // The unmatched named e closed nothing; outer's e closed inner too.
        assert_eq!(s.end_ns(find(&s, "outer")), 25_000);
        assert_eq!(s.end_ns(find(&s, "inner")), 25_000);
        assert_eq!(parent_name(&s, "inner").as_deref(), Some("outer"));
        assert!(
            has_note(&s, "1 async span still open when an enclosing"),
            "{:?}",
            s.warnings
        );
        assert_eq!(parent_name(&s, "dns").as_deref(), Some("req"));
        assert_eq!(parent_name(&s, "hit").as_deref(), Some("dns"));
        let reqs: Vec<usize> = (0..s.len()).filter(|&i| name(&s, i) == "req").collect();
        assert_eq!(reqs.len(), 2);
        // The global req ends at 10 µs; the local one (other key) never ends.
        assert!(reqs.iter().any(|&r| s.end_ns(r) == 10_000));
        let old = find(&s, "old");
        assert_eq!(s.dur_ns[old], 4000);
        assert!(s.tracks.iter().all(|t| t.name.ends_with("— async")));
        assert!(
            has_note(&s, "2 async e events with no open b"),
            "{:?}",
            s.warnings
        );
        assert!(
            has_note(&s, "1 async span never closed"),
            "{:?}",
            s.warnings
        );
        assert!(has_note(&s, "1 async step"), "{:?}", s.warnings);
        assert_eq!(s.attrs.owned(find(&s, "dns") as u32)[0].0, "id");
    }

    #[test]
    fn truncated_arrays_load_what_is_complete() {
        let full = r#"[{"ph":"X","name":"a","ts":0,"dur":5,"pid":0,"tid":0},
                       {"ph":"X","name":"b","ts":1,"dur":2,"pid":0,"tid":0}"#;
        for (text, spans, note) in [
            (full.to_string(), 2, "not closed"),
            (format!("{full},\n\n"), 2, "not closed"),
            (
                format!("{full},{{\"ph\":\"X\",\"na"),
                2,
                "ends inside traceEvents[2]",
            ),
            (format!("{{\"traceEvents\":{full}"), 2, "not closed"),
            (format!("{full}]"), 2, ""),
        ] {
            let s = load(&text);
            assert_eq!(s.len(), spans, "{text}");
            if note.is_empty() {
                assert!(s.warnings.is_empty(), "{:?}", s.warnings);
            } else {
                assert!(has_note(&s, note), "{text}: {:?}", s.warnings);
            }
        }
    }

    #[test]
    fn errors_name_the_event_and_position() {
        let e = parse(
            "t.json",
            b"[{\"ph\":\"X\",\"ts\":0,\"dur\":1},\n {\"ph\":\"X\",\"ts\":\"soon\",\"dur\":1}]",
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.contains("t.json: traceEvents[1] (line 2, column 2)"),
            "{e}"
        );
        assert!(e.contains("expected number ts"), "{e}");
        let e = parse(
            "t.json",
            b"[{\"ph\":\"X\",\"ts\":0},\n {\"ph\":\"X\",\"ts\":1,,}]",
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("traceEvents[1] (line 2, column 19)"), "{e}");
        let e = parse("t.json", b"[{\"ph\":\"X\",\"ts\":0}, 42]")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("traceEvents[1]") && e.contains("expected an event object"),
            "{e}"
        );
        let e = parse("t.json", b"{\"foo\": []}").unwrap_err().to_string();
        assert!(e.contains("expected a traceEvents array"), "{e}");
        let e = parse("t.json", b"[{\"ph\":\"X\",\"ts\":1e30,\"dur\":1}]")
            .unwrap_err()
            .to_string();
        assert!(e.contains("traceEvents[0]") && e.contains("1e30"), "{e}");
    }

    /// The input's UTF-8 is checked a run at a time; a bad byte is still reported at its
    /// own line and column, whichever thread's run holds it.
    #[test]
    fn invalid_utf8_is_reported_where_it_is() {
        let mut t = random_trace(4, 2000).into_bytes();
        let at = t.windows(8).rposition(|w| w == b"\"name\":\"").unwrap() + 9;
        t[at] = 0xff;
        let line = t[..at].iter().filter(|&&b| b == b'\n').count() + 1;
        let column = at - t[..at].iter().rposition(|&b| b == b'\n').unwrap();
        let want = format!("(line {line}, column {column}): invalid UTF-8 in a string");
        for (threads, min) in [(1, usize::MAX), (3, 0), (8, 0)] {
            let e = parse_with_threads("t.json", &t, threads, min)
                .unwrap_err()
                .to_string();
            assert!(e.starts_with("t.json: traceEvents["), "{e}");
            assert!(e.ends_with(&want), "{threads}: {e} (want {want})");
        }
        // In args, which are read again from their raw text.
        let t = b"[{\"ph\":\"X\",\"ts\":0,\"dur\":1,\"args\":{\"k\":\"a\xc3\"}}]";
        let e = parse("t.json", t).unwrap_err().to_string();
        assert!(e.contains("traceEvents[0] (line 1, column 41)"), "{e}");
    }

    #[test]
    fn odd_ids_and_missing_fields() {
        let s = load(
            r#"[{"ph":"X","name":"a","ts":"5","dur":"1.5","pid":"Main","tid":"12"},
                {"ph":"X","name":"b","ts":6,"tdur":4,"pid":"Main","tid":12,"args":[1, 2]},
                {"name":"nophase","ts":1},
                {"ph":"X","ts":9,"dur":0}]"#,
        );
        assert_eq!(s.len(), 3);
        // "12" and 12 are one thread; the event without pid/tid is on thread 0 of pid 0.
        assert_eq!(s.tracks.len(), 2);
        let t = s.track[find(&s, "a")] as usize;
        assert_eq!(t, s.track[find(&s, "b")] as usize);
        assert_eq!(s.tracks[t].name, "Thread 12");
        assert_eq!(s.track_info[t].group, "Process Main");
        assert_eq!(s.dur_ns[find(&s, "b")], 4000);
        // args that are not an object are kept whole.
        let b = find(&s, "b") as u32;
        assert_eq!(
            s.attrs.owned(b),
            [("args".to_string(), "[1, 2]".to_string())]
        );
        assert_eq!(s.dur_ns[find(&s, "a")], 1500);
        assert_eq!(s.dur_ns[find(&s, "(unnamed)")], 0);
        assert!(has_note(&s, "1 X event without dur"), "{:?}", s.warnings);
        assert!(
            has_note(&s, "1 event without a one-letter ph"),
            "{:?}",
            s.warnings
        );
    }

    /// Random multi-thread traces with X, B/E, instants, async and args.
    fn random_trace(seed: u64, events: usize) -> String {
        let mut x = seed;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let mut out = String::from("{\"traceEvents\":[\n");
        let mut open = [0u32; 4];
        for i in 0..events {
            let r = next();
            let tid = r % 4;
            let ts = i as u64 * 3 + r % 5;
            let ev = match (r >> 8) % 6 {
                0 => format!(
                    r#"{{"ph":"X","name":"x{}","ts":{ts}.{},"dur":{},"pid":1,"tid":{tid},"args":{{"n":{i}}}}}"#,
                    r % 13,
                    r % 1000,
                    r % 40
                ),
                1 | 2 => {
                    open[tid as usize] += 1;
                    format!(
                        r#"{{"ph":"B","name":"b{}","ts":{ts},"pid":1,"tid":{tid}}}"#,
                        r % 5
                    )
                }
                3 if open[tid as usize] > 0 => {
                    open[tid as usize] -= 1;
                    format!(r#"{{"ph":"E","ts":{ts},"pid":1,"tid":{tid}}}"#)
                }
                4 => format!(
                    r#"{{"ph":"{}","name":"a","cat":"c","id":{},"ts":{ts},"pid":1,"tid":{tid}}}"#,
                    if r % 2 == 0 { "b" } else { "e" },
                    r % 3
                ),
                _ => format!(r#"{{"ph":"i","name":"i","ts":{ts},"pid":1,"tid":{tid},"s":"t"}}"#),
            };
            out.push_str(&ev);
            out.push_str(if i + 1 < events { ",\n" } else { "\n" });
        }
        out.push_str("]}");
        out
    }

    type Dumped = (u64, u64, u32, String, u32, Vec<(String, String)>);

    fn dump(s: &SpanSet) -> Vec<Dumped> {
        (0..s.len())
            .map(|i| {
                (
                    s.start_ns[i],
                    s.dur_ns[i],
                    s.parent[i],
                    name(s, i).to_string(),
                    s.track[i],
                    s.attrs.owned(i as u32),
                )
            })
            .collect()
    }

    #[test]
    fn damaged_input_never_panics() {
        // Truncations and byte edits anywhere: an error or a load, never a panic.
        let t = random_trace(11, 60).into_bytes();
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let bytes = b"{}[]\",:0123456789.-eE \n\\uXtf\xff\xc3";
        for round in 0..3000 {
            let mut m = t.clone();
            if round % 3 == 0 {
                m.truncate((next() % t.len() as u64) as usize);
            }
            for _ in 0..1 + next() % 4 {
                if m.is_empty() {
                    break;
                }
                let at = (next() % m.len() as u64) as usize;
                m[at] = bytes[(next() % bytes.len() as u64) as usize];
            }
            for threads in [1, 3] {
                let _ = parse_with_threads("t", &m, threads, 0);
            }
        }
    }

    /// Linking thread tracks and laying out bands on several threads gives the sequential
    /// result: spans, warnings, rows, connectors and bands, on random traces with many
    /// threads (some with one event, some with none but instants on the async track).
    #[test]
    fn parallel_link_and_layout_equal_sequential() {
        use crate::layout::timeline::{BandMode, track_layout_with_threads};
        for seed in 1..6 {
            let mut t = random_trace(seed, 4000);
            // Spread the events over more threads and processes than there are cores.
            for (k, tid) in ["\"tid\":1", "\"tid\":2", "\"tid\":3"].iter().enumerate() {
                let mut n = 0;
                t = t
                    .split(tid)
                    .enumerate()
                    .map(|(i, part)| {
                        n += 1;
                        if i == 0 {
                            part.to_string()
                        } else {
                            format!("\"tid\":{}{part}", 10 * (k + 1) + n % (seed as usize + 2))
                        }
                    })
                    .collect();
            }
            let t = t.replace("\"pid\":1,\"tid\":1", "\"pid\":2,\"tid\":1");
            // Many async ids, so that the groups spread over the threads' shares.
            let t: String = t
                .split("\"id\":")
                .enumerate()
                .map(|(i, part)| {
                    if i == 0 {
                        part.to_string()
                    } else {
                        format!("\"id\":{}{part}", i % 41)
                    }
                })
                .collect();
            let seq = parse_with_threads("t", t.as_bytes(), 1, usize::MAX).unwrap();
            let seq_tree = SpanTree::build(&seq);
            let seq_layout = track_layout_with_threads(&seq, &seq_tree, BandMode::PerTrack, 1);
            assert!(seq.tracks.len() >= 8, "{}", seq.tracks.len());
            for threads in [2, 3, 7] {
                let par = parse_with_threads("t", t.as_bytes(), threads, 0).unwrap();
                assert_eq!(dump(&seq), dump(&par), "seed {seed}, {threads} threads");
                assert_eq!(seq.warnings, par.warnings);
                assert_eq!(seq.tracks, par.tracks);
                let tree = SpanTree::build(&par);
                let l = track_layout_with_threads(&par, &tree, BandMode::PerTrack, threads);
                assert_eq!(l.layout.rows, seq_layout.layout.rows, "seed {seed}");
                assert_eq!(l.layout.total_ticks, seq_layout.layout.total_ticks);
                assert_eq!(l.row_of, seq_layout.row_of);
                assert_eq!(l.bands, seq_layout.bands);
                assert_eq!(l.connectors, seq_layout.connectors);
                assert_eq!(l.parent, seq_layout.parent);
            }
        }
    }

    #[test]
    fn interleaved_threads_keep_their_own_tracks() {
        // More threads than the thread-to-track cache has slots, in two processes with the
        // same thread ids, their events interleaved: each span on its own thread's track.
        let mut events = Vec::new();
        for round in 0..5 {
            for pid in [1, 2] {
                for tid in 0..150 {
                    let ts = round * 10 + 1;
                    events.push(format!(
                        r#"{{"ph":"X","name":"p{pid}t{tid}","ts":{ts},"dur":5,"pid":{pid},"tid":{tid}}}"#
                    ));
                }
            }
        }
        let s = load(&format!("[{}]", events.join(",\n")));
        assert_eq!(s.len(), 5 * 2 * 150);
        assert_eq!(s.tracks.len(), 2 * 150);
        let mut per_track = vec![0; s.tracks.len()];
        for i in 0..s.len() {
            let t = s.track[i] as usize;
            per_track[t] += 1;
            // A span's name says its process and thread; its track says the same.
            let info = s.track_info(t as u32);
            let label = s.track_label(t as u32);
            let n = name(&s, i);
            let (p, t) = n[1..].split_once('t').unwrap();
            assert!(
                label.ends_with(&format!(" {t}")) && info.group.ends_with(&format!(" {p}")),
                "span {n} on track {label:?} of group {:?}",
                info.group
            );
        }
        assert!(per_track.iter().all(|&c| c == 5), "{per_track:?}");
    }

    /// Large enough for the two-thread paths that start at 64 Ki items (appending a
    /// chunk's records, gathering and linking async groups, filling the span set's
    /// columns): many overlapping async ids on two processes, nested `b`s of one id,
    /// instants, `e`s matching nothing, process-scoped instants on the async tracks, and
    /// thread spans with and without names, categories and args; the sequential result.
    #[test]
    fn large_async_traces_link_as_in_sequence() {
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let mut out = String::from("[\n");
        let mut open: Vec<(u64, u32)> = Vec::new();
        let mut id = 0u64;
        for i in 0..160_000u64 {
            let r = next();
            let ts = i * 2 + r % 3;
            let pid = 1 + r % 2;
            let ev = match r % 12 {
                0..=3 => {
                    id += 1;
                    open.push((id, 0));
                    format!(
                        r#"{{"ph":"b","cat":"c","id":"0x{id:x}","name":"r{}","ts":{ts},"pid":{pid},"tid":1}}"#,
                        id % 7
                    )
                }
                4 | 5 if !open.is_empty() => {
                    let (k, _) = open.swap_remove((r >> 8) as usize % open.len());
                    format!(
                        r#"{{"ph":"e","cat":"c","id":"0x{k:x}","name":"r{}","ts":{ts},"pid":{pid},"tid":1}}"#,
                        k % 7
                    )
                }
                6 if !open.is_empty() => {
                    let j = (r >> 8) as usize % open.len();
                    open[j].1 += 1;
                    format!(
                        r#"{{"ph":"b","cat":"c","id":"0x{:x}","name":"inner","ts":{ts},"pid":{pid},"tid":1}}"#,
                        open[j].0
                    )
                }
                7 if !open.is_empty() => {
                    let k = open[(r >> 8) as usize % open.len()].0;
                    format!(
                        r#"{{"ph":"n","cat":"c","id":"0x{k:x}","name":"mark","ts":{ts},"pid":{pid},"tid":1}}"#
                    )
                }
                8 => format!(
                    r#"{{"ph":"e","cat":"c","id":"0xfffff{}","name":"none","ts":{ts},"pid":{pid},"tid":1}}"#,
                    r % 5
                ),
                9 => format!(r#"{{"ph":"i","name":"p","s":"p","ts":{ts},"pid":{pid},"tid":2}}"#),
                // Thread spans with and without a name, a category or args.
                _ => {
                    let name = if (r >> 12) % 3 == 0 {
                        String::new()
                    } else {
                        format!(r#""name":"x{}","#, r % 9)
                    };
                    let cat = if (r >> 16) % 4 == 0 {
                        ""
                    } else {
                        r#""cat":"t","#
                    };
                    let args = if (r >> 20) % 5 == 0 {
                        format!(r#","args":{{"n":{i}}}"#)
                    } else {
                        String::new()
                    };
                    format!(
                        r#"{{"ph":"X",{name}{cat}"ts":{ts},"dur":{},"pid":{pid},"tid":3{args}}}"#,
                        r % 7
                    )
                }
            };
            out.push_str(&ev);
            out.push_str(",\n");
            if i % 1000 == 0 {
                // Two children overlapping under a parent: the second goes two rows
                // down, joined to its parent by a connector.
                for (name, from, dur) in [("parent", 0, 100), ("a", 1, 49), ("b", 10, 50)] {
                    let t = ts + from;
                    out.push_str(&format!(
                        "{{\"ph\":\"X\",\"name\":\"{name}\",\"ts\":{t},\"dur\":{dur},\"pid\":{pid},\"tid\":4}},\n"
                    ));
                }
            }
        }
        out.push_str(r#"{"ph":"X","name":"last","ts":1,"dur":1,"pid":1,"tid":2}]"#);
        let seq = parse_with_threads("t", out.as_bytes(), 1, usize::MAX).unwrap();
        let par = parse_with_threads("t", out.as_bytes(), 2, 0).unwrap();
        assert!(seq.len() > 100_000, "{}", seq.len());
        assert!(seq.names.find("(unnamed)").is_some() && seq.names.find("").is_some());
        assert!((0..seq.len()).any(|i| !seq.attrs.owned(i as u32).is_empty()));
        assert_eq!(dump(&seq), dump(&par));
        assert_eq!(seq.category, par.category);
        assert_eq!(seq.names.len(), par.names.len());
        assert_eq!(seq.warnings, par.warnings);
        assert_eq!(seq.tracks, par.tracks);
        // Laid out on one thread and on two (past 64 Ki spans: the passes over all spans
        // in two halves, bands in parallel), in both band modes.
        use crate::layout::timeline::{BandMode, track_layout_with_threads};
        let tree = SpanTree::build(&par);
        for mode in [BandMode::PerTrack, BandMode::OneTree] {
            let one = track_layout_with_threads(&par, &tree, mode, 1);
            let two = track_layout_with_threads(&par, &tree, mode, 2);
            assert_eq!(one.layout.rows, two.layout.rows);
            assert_eq!(one.layout.total_ticks, two.layout.total_ticks);
            assert_eq!(one.row_of, two.row_of);
            assert_eq!(one.bands, two.bands);
            assert_eq!(one.connectors, two.connectors);
            assert_eq!(one.parent, two.parent);
            // Connectors in both halves of the spans.
            let half = (par.len() / 2) as u32;
            assert!(one.connectors.iter().any(|c| c.span < half));
            assert!(one.connectors.iter().any(|c| c.span >= half));
            assert!(one.bands.iter().all(|b| b.spans > 0));
        }
    }

    #[test]
    fn parallel_parse_equals_sequential() {
        for seed in 1..4 {
            let t = random_trace(seed, 3000);
            let seq = parse_with_threads("t", t.as_bytes(), 1, usize::MAX).unwrap();
            for threads in [2, 3, 8] {
                let par = parse_with_threads("t", t.as_bytes(), threads, 0).unwrap();
                assert_eq!(dump(&seq), dump(&par), "seed {seed}, {threads} threads");
                assert_eq!(seq.warnings, par.warnings);
                assert_eq!(seq.tracks, par.tracks);
            }
            assert!(seq.len() > 1000);
        }
        // Pretty-printed events put nested objects at line starts, where chunks may be
        // guessed to start; truncated files end inside the last chunk; object members after
        // the array hold more line-start braces. All parse as in sequence.
        let t = random_trace(5, 3000);
        let pretty = t.replace(r#","args":{"#, ",\n  \"args\":\n{");
        let cut = &t[..t.len() * 2 / 3];
        let trailing = format!(
            "{},\n\"metadata\":\n{{\"a\":\n{{\"b\":1}}}},\"displayTimeUnit\":\"ns\"}}",
            &t[..t.len() - 1]
        );
        for (what, text) in [
            ("pretty", &pretty[..]),
            ("cut", cut),
            ("trailing", &trailing),
        ] {
            let seq = parse_with_threads("t", text.as_bytes(), 1, usize::MAX).unwrap();
            for threads in [2, 5, 16] {
                let par = parse_with_threads("t", text.as_bytes(), threads, 0).unwrap();
                assert_eq!(dump(&seq), dump(&par), "{what}, {threads} threads");
                assert_eq!(seq.warnings, par.warnings, "{what}");
                assert_eq!(seq.names.len(), par.names.len(), "{what}");
            }
            assert!(seq.len() > 1000, "{what}");
        }
        let trailing = parse_with_threads("t", trailing.as_bytes(), 4, 0).unwrap();
        assert_eq!(trailing.meta[0].1, "ns");

        // The first error wins whichever chunk finds it.
        let mut t = random_trace(9, 2000);
        let at = t.find("\"ts\":").unwrap() + 5;
        t.insert_str(at, "\"x\"");
        let at = t.rfind("\"ts\":").unwrap() + 5;
        t.insert_str(at, "\"y\"");
        let a = parse_with_threads("t", t.as_bytes(), 1, usize::MAX).unwrap_err();
        let b = parse_with_threads("t", t.as_bytes(), 4, 0).unwrap_err();
        assert_eq!(a.to_string(), b.to_string());
        assert!(a.to_string().contains("traceEvents[0]"), "{a}");
    }
}
