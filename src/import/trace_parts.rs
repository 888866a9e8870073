//! Jaeger and OTLP documents read on all cores, a run of their main array's elements
//! (traces, resources) at a time.
//!
//! Both formats put nearly all of a big file in one array near the top: the query API's
//! `{"data": [trace, …]}`, a collector's `{"resourceSpans": [resource, …]}`. Their
//! readers went over it on one thread (serde's pass over the outline, then each span's
//! members): 80–95 MB/s here, 10–12 s for 1 GB. Here:
//!
//! - this thread finds where each element of the array ends, from bracket to bracket
//!   ([`skip_nested`]: strings skipped, nothing parsed), and hands the elements over in
//!   batches of a few MiB as it goes;
//! - the other threads read each batch's elements with the format's own serde code into
//!   a [`SpanCollector`] of the batch's own, and link their spans' parents within it;
//! - the batches' collectors are joined in file order ([`SpanCollector::join`]): names,
//!   tracks and attribute keys interned again in order, span ids offset. The spans, their
//!   order and ids are those of the one-thread reading.
//!
//! Parents are looked up within a batch only, which is right when no trace id shows up in
//! two batches (a batch holds whole traces, and a trace's spans and references name
//! their own trace). Where one does, or anything fails to read (the bracket skip does not
//! check JSON; serde, reading each element whole, does), the caller reads the document
//! on one thread, with that reader's errors and positions.

use super::chrome::scan::skip_nested;
use super::trace_json::SpanCollector;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// Documents under this size are read on one thread.
pub(super) const PARALLEL_MIN: usize = 4 << 20;

/// JSON's whitespace (serde's: no form feed).
fn ws(t: &[u8], mut i: usize) -> usize {
    while matches!(t.get(i), Some(b' ' | b'\t' | b'\n' | b'\r')) {
        i += 1;
    }
    i
}

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

/// A batch of consecutive elements: its number, the index of its first element in the
/// array, the elements' text.
type Batch<'t> = (usize, usize, Vec<&'t str>);

/// Bytes of elements a batch holds for a document of `len` bytes read on `threads`
/// threads: about eight batches a thread, from 1 to 16 MiB.
pub(super) fn batch_bytes(len: usize, threads: usize) -> usize {
    (len / (threads.max(1) * 8)).clamp(1 << 20, 16 << 20)
}

/// Reads the elements of the array at `text[open]` (a `[`) with `read` (the element's
/// index in the array, its text, the batch's collector and state), in batches of about
/// `batch_bytes` on `threads` threads; returns each batch's collector (its parents resolved) and state
/// in file order, and the index just after the array. `None` when an element is not an
/// object, the array does not end, or `read` gives `None`.
pub(super) fn read_elements<'t, S, F>(
    text: &'t str,
    open: usize,
    threads: usize,
    batch_bytes: usize,
    progress: Option<&super::Progress>,
    read: F,
) -> Option<(Vec<(SpanCollector, S)>, usize)>
where
    S: Default + Send,
    F: Fn(usize, &'t str, &mut SpanCollector, &mut S) -> Option<()> + Sync,
{
    let (tx, rx) = std::sync::mpsc::sync_channel::<Batch<'t>>(threads * 4);
    let rx = Mutex::new(rx);
    let failed = AtomicBool::new(false);
    let done = AtomicU64::new(0);
    let len = text.len() as u64;
    std::thread::scope(|s| {
        let workers: Vec<_> = (0..threads.max(1))
            .map(|_| {
                let (rx, failed, done, read) = (&rx, &failed, &done, &read);
                s.spawn(move || {
                    let mut out = Vec::new();
                    loop {
                        let batch = match rx.lock() {
                            Ok(r) => r.recv(),
                            Err(_) => break,
                        };
                        let Ok((n, first, elements)) = batch else {
                            break;
                        };
                        if failed.load(Ordering::Relaxed) {
                            continue;
                        }
                        let mut c = SpanCollector::default();
                        let mut state = S::default();
                        let ok = elements
                            .iter()
                            .enumerate()
                            .all(|(k, e)| read(first + k, e, &mut c, &mut state).is_some());
                        if !ok {
                            failed.store(true, Ordering::Relaxed);
                            continue;
                        }
                        c.resolve_parents();
                        let bytes: usize = elements.iter().map(|e| e.len()).sum();
                        if let Some(p) = progress {
                            let d = done.fetch_add(bytes as u64, Ordering::Relaxed);
                            p.set_done((d + bytes as u64).min(len));
                        }
                        out.push((n, c, state));
                    }
                    out
                })
            })
            .collect();
        let end = batches(text, open, batch_bytes, |b| {
            !failed.load(Ordering::Relaxed) && tx.send(b).is_ok()
        });
        drop(tx);
        let mut parts: Vec<(usize, SpanCollector, S)> =
            workers.into_iter().flat_map(crate::par::join).collect();
        if failed.load(Ordering::Relaxed) {
            return None;
        }
        let end = end?;
        if let Some(p) = progress {
            p.set_done(end as u64);
        }
        parts.sort_unstable_by_key(|p| p.0);
        Some((parts.into_iter().map(|(_, c, s)| (c, s)).collect(), end))
    })
}

/// Cuts the array at `text[open]` into its elements (objects only), handing them to
/// `send` in batches of about `batch_bytes`, numbered from 0, until `send` says stop;
/// returns the index after the array, `None` when it stopped or something else than
/// objects separated by commas came.
fn batches<'t>(
    text: &'t str,
    open: usize,
    batch_bytes: usize,
    mut send: impl FnMut(Batch<'t>) -> bool,
) -> Option<usize> {
    let t = text.as_bytes();
    let mut i = ws(t, open + 1);
    let (mut n, mut first, mut count) = (0, 0, 0);
    let mut batch: Vec<&'t str> = Vec::new();
    let mut bytes = 0;
    if t.get(i) != Some(&b']') {
        loop {
            if t.get(i) != Some(&b'{') {
                return None;
            }
            let end = skip_nested(t, i)?;
            batch.push(&text[i..end]);
            bytes += end - i;
            count += 1;
            if bytes >= batch_bytes {
                let full = std::mem::take(&mut batch);
                if !send((n, first, full)) {
                    return None;
                }
                (n, first, bytes) = (n + 1, count, 0);
            }
            i = ws(t, end);
            match t.get(i) {
                Some(b',') => i = ws(t, i + 1),
                Some(b']') => break,
                _ => return None,
            }
        }
    }
    if !batch.is_empty() && !send((n, first, batch)) {
        return None;
    }
    Some(i + 1)
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

    fn cut(text: &str, batch_bytes: usize) -> Option<(Vec<Batch<'_>>, usize)> {
        let mut out = Vec::new();
        let end = batches(text, text.find('[')?, batch_bytes, |b| {
            out.push(b);
            true
        })?;
        Some((out, end))
    }

    #[test]
    fn elements_are_cut_where_they_end() {
        let text = r#"{"data": [ {"a": "]}"}, {"b": [{}, "\"}"]},
            {"c": {"d": "x"}} ], "total": 3}"#;
        let (b, end) = cut(text, 1).unwrap();
        let all: Vec<&str> = b.iter().flat_map(|b| b.2.iter().copied()).collect();
        assert_eq!(
            all,
            [
                r#"{"a": "]}"}"#,
                r#"{"b": [{}, "\"}"]}"#,
                r#"{"c": {"d": "x"}}"#
            ]
        );
        assert_eq!(&text[end..], r#", "total": 3}"#);
        // One batch per element at 1 byte, numbered with their first element's index.
        let firsts: Vec<(usize, usize)> = b.iter().map(|b| (b.0, b.1)).collect();
        assert_eq!(firsts, [(0, 0), (1, 1), (2, 2)]);
        let (b, _) = cut(text, 1 << 20).unwrap();
        assert_eq!((b.len(), b[0].2.len()), (1, 3));
        assert_eq!(
            cut("{\"data\": [ ]}", 1).map(|(b, e)| (b.len(), e)),
            Some((0, 12))
        );
        // Anything but objects separated by commas is left to serde.
        for bad in [
            "[{}, 1]",
            "[{},]",
            "[{} {}]",
            "[{}, {\"a\": 1}",
            "[{\"a\": \"]}",
            "[[{}]]",
        ] {
            assert!(cut(bad, 1).is_none(), "{bad}");
        }
    }
}
