//! Jaeger and OTLP documents read on all cores, a part of their main array's elements
//! (traces, resources) per thread.
//!
//! Both formats put nearly all of a big file in one array near the top: the query API's
//! `{"data": [trace, …]}`, a collector's `{"resourceSpans": [resource, …]}`. Their
//! readers went over it on one thread (serde's pass over the outline, then each span's
//! members): 80–95 MB/s here, 12–13 s for 1 GB. Here, as for TiDB traces
//! ([`super::tidb_fast`]):
//!
//! - the array is cut into a part per thread at guessed element starts: from an even
//!   share of the bytes on, the first `{` whose first member is a key only an element has
//!   (`{"spans":`, `{"traceID": "…", "spans":`; `{"resource":`, `{"scopeSpans":`). Such
//!   a `{` is never inside a string of a valid document (the quote after it would end
//!   the string), but it can be an object nested deeper than the array;
//! - each part's thread reads elements from its start with the format's own serde code
//!   (a stream deserializer gives each element's end) into a [`SpanCollector`] of its
//!   own, until it reaches the next part's start or the array's end, and links its
//!   spans' parents within the part;
//! - this thread reads from the array's first element and takes over a part's reading
//!   only when it arrives exactly at that part's start: a start guessed inside an element
//!   is passed, and the elements after it are read again here, in order;
//! - the runs of elements read are joined in file order ([`SpanCollector::join`]: names,
//!   tracks and attribute keys interned again in order, span ids offset). The spans,
//!   their order and ids are those of the one-thread reading.
//!
//! Parents are looked up within a run only, which is right when no trace id shows up in
//! two runs (an element holds whole traces, and a span and its references name their
//! trace). Where one does, or anything fails to read, the caller reads the document on
//! one thread, with that reader's errors and positions.

use super::chrome::scan::json_ws as ws;
use super::trace_json::SpanCollector;
use std::sync::atomic::{AtomicU64, Ordering};

/// Documents under this size are read on one thread.
pub(super) const PARALLEL_MIN: usize = 4 << 20;

/// The threads a document of `len` bytes is read on: every core from
/// [`PARALLEL_MIN`] on, else this one.
pub(super) fn threads_for(len: usize) -> usize {
    if len >= PARALLEL_MIN {
        crate::par::cores()
    } else {
        1
    }
}

/// How far from an even share of the bytes a part's start is searched.
const SEARCH_WINDOW: usize = 64 << 20;

/// Where the array value of the document's first member ends up: the index of its `[`,
/// when `text` is `{"key": [` (JSON whitespace around, `key` written without escapes).
pub(super) fn first_member_array(text: &str, key: &str) -> Option<usize> {
    let t = text.as_bytes();
    let mut i = ws(t, 0);
    if t.get(i) != Some(&b'{') {
        return None;
    }
    i = ws(t, i + 1);
    let quoted = t
        .get(i..)?
        .strip_prefix(b"\"")?
        .strip_prefix(key.as_bytes())?;
    if quoted.first() != Some(&b'"') {
        return None;
    }
    i = ws(t, i + key.len() + 2);
    if t.get(i) != Some(&b':') {
        return None;
    }
    i = ws(t, i + 1);
    (t.get(i) == Some(&b'[')).then_some(i)
}

/// Whether the text from `end` (just after the array of the first member `key`) closes
/// the document: more members, none of them `key` again (serde would take the last),
/// then `}` and whitespace. The members are checked as JSON by serde.
pub(super) fn rest_closes(text: &str, end: usize, key: &str) -> bool {
    let t = text.as_bytes();
    let i = ws(t, end);
    match t.get(i) {
        Some(b'}') => ws(t, i + 1) == t.len(),
        // A member after the comma (not `,}`).
        Some(b',') if t.get(ws(t, i + 1)) == Some(&b'"') => {
            // `{` and the members after the comma: the object's other members.
            let rest = format!("{{{}", &text[i + 1..]);
            let mut d = serde_json::Deserializer::from_str(&rest);
            let keys = serde::de::Deserializer::deserialize_map(&mut d, KeysVisitor);
            matches!(keys, Ok(keys) if !keys.iter().any(|k| k == key)) && d.end().is_ok()
        }
        _ => false,
    }
}

/// An object's keys (unescaped), its values checked as JSON and skipped.
struct KeysVisitor;

impl<'de> serde::de::Visitor<'de> for KeysVisitor {
    type Value = Vec<String>;
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("an object")
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut a: A) -> Result<Vec<String>, A::Error> {
        let mut keys = Vec::new();
        while let Some((k, serde::de::IgnoredAny)) = a.next_entry::<String, _>()? {
            keys.push(k);
        }
        Ok(keys)
    }
}

/// Reads an element at the start of the text it is given (the rest of the document)
/// into the part's collector and state, returning the element's length; `first`: it
/// is the array's first element (other indices are not known to a part: the paths of
/// errors come from the reading in one go).
pub(super) trait ReadElement<'t, S>:
    Fn(&'t str, bool, &mut SpanCollector, &mut S) -> Option<usize> + Sync
{
}

impl<'t, S, F: Fn(&'t str, bool, &mut SpanCollector, &mut S) -> Option<usize> + Sync>
    ReadElement<'t, S> for F
{
}

/// What separates the elements read: commas in an array, or whitespace between
/// documents (JSON Lines).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Sep {
    /// An array's elements: a `,` between them, `]` after the last.
    Array,
    /// Documents one after another to the end of the text.
    Lines,
}

/// How a part's reading stopped.
enum Stop {
    /// At the start of part `j` exactly.
    Part(usize),
    /// Past the start of the next part (not the start of an element: that part's reading
    /// is not taken), at the start of an element here.
    Past(usize),
    /// At the array's end: the index after its `]`.
    End(usize),
}

/// What a part read: its collector and state, and where it stopped; `None` when
/// something did not read.
type Part<S> = Option<(SpanCollector, S, Stop)>;

/// Reads the elements from `first` (the first one's index: just inside an array, or the
/// first document of JSON Lines) with `read`, in `threads` parts from guessed element
/// starts (`find_start`: the first element start it sees from a byte index on; see the
/// module's notes); returns the collectors (parents resolved) and states of the runs of
/// elements read, in file order, and the index after the array (the text's length for
/// JSON Lines). `None` when an element is not an object, the array does not end or
/// `read` gives `None`.
pub(super) fn read_elements<'t, S, F>(
    text: &'t str,
    first: usize,
    sep: Sep,
    threads: usize,
    progress: Option<&super::Progress>,
    find_start: impl Fn(&[u8], usize) -> Option<usize>,
    read: F,
) -> Option<(Vec<(SpanCollector, S)>, usize)>
where
    S: Default + Send,
    F: ReadElement<'t, S>,
{
    let t = text.as_bytes();
    // Part k's guessed start (strictly increasing; the first part's is the array's
    // first element).
    let mut starts = vec![first];
    for k in 1..threads.max(1) {
        let from = (first + (t.len() - first) / threads * k).max(*starts.last()? + 1);
        // A part whose start is not within 64 MiB of its share (a document of a few huge
        // traces, one resource) is left to the part before: this thread searches the
        // starts before any part begins.
        let window = &t[..t.len().min(from.saturating_add(SEARCH_WINDOW))];
        if let Some(s) = find_start(window, from) {
            starts.push(s);
        }
    }
    let done = AtomicU64::new(0);
    let report = |bytes: usize| {
        if let Some(p) = progress {
            let d = done.fetch_add(bytes as u64, Ordering::Relaxed) + bytes as u64;
            p.set_done(d.min(t.len() as u64));
        }
    };
    std::thread::scope(|s| {
        let mut handles: Vec<_> = (1..starts.len())
            .map(|k| {
                let (starts, read, report) = (&starts, &read, &report);
                Some(s.spawn(move || read_from(text, sep, starts, starts[k], read, report)))
            })
            .collect();
        let mut runs = Vec::new();
        // This thread reads from the first element, taking over a part's reading where
        // it arrives at its start.
        let mut stop = read_from(text, sep, &starts, first, &read, &report);
        loop {
            let (c, state, how) = stop?;
            runs.push((c, state));
            match how {
                Stop::End(end) => {
                    if let Some(p) = progress {
                        p.set_done(end as u64);
                    }
                    return Some((runs, end));
                }
                Stop::Part(j) => stop = handles[j - 1].take().map(crate::par::join)?,
                Stop::Past(at) => stop = read_from(text, sep, &starts, at, &read, &report),
            }
        }
    })
}

/// Reads elements from `at` (the start of one) until the start of a later part, or past
/// it, or the array's end.
fn read_from<'t, S: Default, F: ReadElement<'t, S>>(
    text: &'t str,
    sep: Sep,
    starts: &[usize],
    mut at: usize,
    read: &F,
    report: &impl Fn(usize),
) -> Part<S> {
    let t = text.as_bytes();
    let mut c = SpanCollector::default();
    let mut state = S::default();
    let next = starts.partition_point(|&s| s <= at);
    let mut reported = at;
    let stop = loop {
        if let Some(&s) = starts.get(next)
            && at >= s
        {
            break if at == s {
                Stop::Part(next)
            } else {
                Stop::Past(at)
            };
        }
        if t.get(at) != Some(&b'{') {
            return None;
        }
        let len = read(&text[at..], at == starts[0], &mut c, &mut state)?;
        at = ws(t, at + len);
        if at - reported >= 1 << 20 {
            report(at - reported);
            reported = at;
        }
        match (sep, t.get(at)) {
            (Sep::Array, Some(b',')) => at = ws(t, at + 1),
            (Sep::Array, Some(b']')) => break Stop::End(at + 1),
            (Sep::Lines, Some(b'{')) => {}
            (Sep::Lines, None) => break Stop::End(at),
            _ => return None,
        }
    };
    report(at - reported);
    c.resolve_parents();
    Some((c, state, stop))
}

/// Index of the last byte before `i` that is not JSON whitespace.
fn back_ws(t: &[u8], mut i: usize) -> Option<usize> {
    loop {
        i = i.checked_sub(1)?;
        if !matches!(t[i], b' ' | b'\t' | b'\n' | b'\r') {
            return Some(i);
        }
    }
}

/// From `from` on, the first `{` that starts an object whose first member is one of
/// `keys` (`{"key":` with JSON whitespace anywhere between; such a `{` cannot be inside a
/// string of a valid document: the quote after it would end that string). A guess:
/// the reading in order checks it.
pub(super) fn object_with_first_key(t: &[u8], from: usize, keys: &[&str]) -> Option<usize> {
    let mut at = from;
    loop {
        let q = at + memchr::memchr(b'{', t.get(at..)?)?;
        let k = ws(t, q + 1);
        for key in keys {
            let end = k + key.len() + 2;
            if t.get(k) == Some(&b'"')
                && t.get(k + 1..end - 1) == Some(key.as_bytes())
                && t.get(end - 1) == Some(&b'"')
                && t.get(ws(t, end)) == Some(&b':')
            {
                return Some(q);
            }
        }
        at = q + 1;
    }
}

/// From `from` on, the first `{` that starts a Jaeger trace: `{"spans":` or
/// `{"traceID": "…", "spans":` (the query API's order; `traceId` too), JSON
/// whitespace anywhere between. A guess, as [`object_with_first_key`]'s.
pub(super) fn jaeger_trace_start(t: &[u8], from: usize) -> Option<usize> {
    let finder = memchr::memmem::Finder::new(b"\"spans\"");
    let mut at = from;
    loop {
        let k = at + finder.find(t.get(at..)?)?;
        at = k + 1;
        if t.get(ws(t, k + 7)) != Some(&b':') {
            continue;
        }
        let Some(b) = back_ws(t, k) else { continue };
        if t[b] == b'{' && b >= from {
            return Some(b);
        }
        // `"traceID"` `:` `"…"` `,` before it, after the object's `{`.
        if t[b] != b',' {
            continue;
        }
        let Some(close) = back_ws(t, b).filter(|&c| t[c] == b'"') else {
            continue;
        };
        let Some(open) = memchr::memrchr(b'"', &t[..close]) else {
            continue;
        };
        let Some(colon) = back_ws(t, open).filter(|&c| t[c] == b':') else {
            continue;
        };
        let Some(key_end) = back_ws(t, colon).filter(|&c| t[c] == b'"') else {
            continue;
        };
        let key_start = key_end.saturating_sub(8);
        if !matches!(
            t.get(key_start..=key_end),
            Some(b"\"traceID\"" | b"\"traceId\"")
        ) {
            continue;
        }
        if let Some(brace) = back_ws(t, key_start).filter(|&c| t[c] == b'{' && c >= from) {
            return Some(brace);
        }
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::model::spans::SpanSet;

    /// What a set says, names and attributes as text: equal sets read alike everywhere.
    pub(in crate::import) fn shown(s: &SpanSet) -> String {
        let names: Vec<&str> = s.name.iter().map(|&n| s.names.get(n)).collect();
        let tracks: Vec<&str> = s.tracks.iter().map(|t| t.name.as_str()).collect();
        let attrs: Vec<Vec<(String, String)>> =
            (0..s.len()).map(|i| s.attrs.owned(i as u32)).collect();
        format!(
            "origin {} starts {:?} durs {:?} parents {:?} names {names:?} ids {:?} \
             tracks {:?} {tracks:?} {:?} notes {:?} attrs {attrs:?}",
            s.origin_ns, s.start_ns, s.dur_ns, s.parent, s.name, s.track, s.track_info, s.warnings,
        )
    }

    /// Guessed starts: the first `{` from the given index on whose first member (or, for
    /// Jaeger, first after a `traceID` string) is a key only an element has.
    /// Counts of documents read in parts (and of those read in several runs).
    #[derive(Default)]
    pub(in crate::import) struct PartsSeen {
        pub read: usize,
        pub several: usize,
    }

    /// `doc` read in parts on 1, 2, 3 and 8 threads (`parts`) gives the set the reading
    /// in one go gave (`whole`); a part reading may leave it to that reading only where
    /// the document does not read or, on several threads, where `shared` (a trace id in
    /// two places).
    pub(in crate::import) fn parts_read_as_whole(
        doc: &str,
        whole: &Result<SpanSet, crate::import::ImportError>,
        shared: bool,
        parts: impl Fn(usize) -> Option<(SpanSet, usize)>,
        seen: &mut PartsSeen,
    ) {
        for threads in [1, 2, 3, 8] {
            match (parts(threads), whole) {
                (Some((p, runs)), Ok(w)) => {
                    assert_eq!(shown(&p), shown(w), "{doc}");
                    seen.read += 1;
                    seen.several += usize::from(runs > 1);
                }
                (Some(_), Err(e)) => panic!("read in parts, in one go {e}: {doc}"),
                (None, _) => assert!(
                    whole.is_err() || (shared && threads > 1),
                    "left to the reading in one go: {doc}"
                ),
            }
        }
    }

    #[test]
    fn element_starts_are_guessed_at_their_first_keys() {
        let jaeger = |t: &str, from: usize| jaeger_trace_start(t.as_bytes(), from);
        let doc = r#"{"data":[{"traceID":"a","spans":[{"traceID":"a","spanID":"1"}]},
            { "traceId" : "b" ,
              "spans" : []}, {"spans":[], "traceID": "c"}, {"processes":{}, "spans": []}]}"#;
        let starts: Vec<usize> = doc.match_indices('{').map(|(i, _)| i).collect();
        assert_eq!(jaeger(doc, 1), Some(starts[1]));
        assert_eq!(jaeger(doc, starts[1] + 1), Some(starts[3]));
        assert_eq!(jaeger(doc, starts[3] + 1), Some(starts[4]));
        // Spans first or second only: not after `processes`.
        assert_eq!(jaeger(doc, starts[4] + 1), None);
        // A `"spans"` that is a value, an escaped quote in the id, a start before `from`.
        assert_eq!(jaeger(r#"{"op":"spans","x":1}"#, 0), None);
        assert_eq!(jaeger(r#"{"traceID":"a\"b","spans":[]}"#, 0), None);
        assert_eq!(jaeger(r#"{"traceID":"a","spans":[]}"#, 1), None);
        let otlp = |t: &str, from: usize| {
            object_with_first_key(t.as_bytes(), from, &["resource", "scopeSpans"])
        };
        let doc = r#"{"resourceSpans":[{"resource":{}},{ "scopeSpans" :[]},{"a":{"resource":1}}]}"#;
        let starts: Vec<usize> = doc.match_indices('{').map(|(i, _)| i).collect();
        assert_eq!(otlp(doc, 0), Some(starts[1]));
        assert_eq!(otlp(doc, starts[1] + 1), Some(starts[3]));
        // A nested object with such a key is a guess too (the reading in order passes it).
        assert_eq!(otlp(doc, starts[3] + 1), Some(starts[5]));
        assert_eq!(otlp(doc, starts[5] + 1), None);
        assert_eq!(otlp(r#"{"key":"resource"}"#, 0), None);
    }

    #[test]
    fn first_members_are_found_strictly() {
        assert_eq!(first_member_array(" {\n\"data\" : [1]}", "data"), Some(12));
        assert_eq!(first_member_array("{\"data\":[", "data"), Some(8));
        assert_eq!(first_member_array("{\"datum\":[]}", "data"), None);
        assert_eq!(first_member_array("{\"dat\":[]}", "data"), None);
        assert_eq!(first_member_array("{\"data\":{}}", "data"), None);
        assert_eq!(first_member_array("{\"d\\u0061ta\":[]}", "data"), None);
        // A form feed is not JSON's whitespace.
        assert_eq!(first_member_array("\x0c{\"data\":[]}", "data"), None);
        assert_eq!(first_member_array("[{\"data\":[]}]", "data"), None);
    }

    #[test]
    fn the_rest_of_the_document_is_checked() {
        let doc = |rest: &str| format!("{{\"data\":[]{rest}");
        let ok = |rest: &str| {
            let d = doc(rest);
            rest_closes(&d, 10, "data")
        };
        assert!(ok("}"));
        assert!(ok(" } \n"));
        assert!(ok(",\"total\":0,\"errors\":null}"));
        assert!(ok(", \"errors\": [{\"code\": 1}] }\n"));
        assert!(!ok(",\"data\":[]}"));
        assert!(!ok(",\"d\\u0061ta\":[]}"));
        assert!(!ok("} x"));
        assert!(!ok(",\"total\":}"));
        assert!(!ok(",\"total\":0"));
        assert!(!ok(",}"));
        assert!(!ok(", }"));
        assert!(!ok(",,\"a\":1}"));
        assert!(!ok(""));
    }
}
