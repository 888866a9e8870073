//! TiDB trace JSON read in place, on all cores; the serde reader of [`super::tidb`] reads
//! whatever this one does not take.
//!
//! A TiDB trace is one document, `{"span_sets": [{"node_type", "spans": [span, …]}, …]}`,
//! nearly all of it span objects of five members. The serde reader decoded it into
//! structs with a `String` per span's name, on one thread (160 MB/s here), and nothing
//! could be drawn before the whole document was read. Here:
//!
//! - a span's members are read where they lie: numbers as digits, the name borrowed from
//!   the input unless it has escapes, interned at once;
//! - the document is cut into a part per core at guessed span boundaries (a `{` after
//!   `},`); each part's thread reads span objects from its guess until it reaches a later
//!   guess exactly or the end of its array. The thread that reads the document from its
//!   start takes over a part's spans only when it arrives at that part's guess at the
//!   start of a span, so a guess inside a string (or anywhere else) is never trusted: its
//!   part is read again in order;
//! - the reader is strict: anything it does not read exactly as serde would (escapes in
//!   member names, numbers with fractions or exponents, repeated members, a missing member,
//!   bad JSON anywhere, values that overflow) gives `None`, and the serde reader reads the
//!   document, with its errors and their positions. Members it does not know are checked
//!   as JSON and skipped, as serde skips them.
//!
//! [`read_head`] reads the start of a document cut anywhere, as far as whole spans go:
//! the preview of a big file.

use super::chrome::scan::{json_ws as ws, skip_string};
use crate::model::Warnings;
use crate::model::names::{NameId, Names};
use crate::model::spans::{IdColumns, IdSpan, SpanSet, Track};
use serde::de::IgnoredAny;
use std::borrow::Cow;
use std::sync::atomic::{AtomicU64, Ordering};

/// Documents under this size are read on one thread.
const PARALLEL_MIN: usize = 4 << 20;

/// Reads a whole document; `None` where the serde reader must (see the module doc).
pub(super) fn read(text: &str, progress: Option<&super::Progress>) -> Option<SpanSet> {
    let threads = if text.len() >= PARALLEL_MIN {
        crate::par::cores()
    } else {
        1
    };
    read_in_parts(text, progress, threads)
}

/// [`read`] in `parts` parts (tests force parts on small documents).
fn read_in_parts(text: &str, progress: Option<&super::Progress>, parts: usize) -> Option<SpanSet> {
    let t = text.as_bytes();
    let guesses = guesses(t, parts);
    let done = AtomicU64::new(0);
    let report = Report {
        progress,
        done: &done,
        len: t.len() as u64,
    };
    std::thread::scope(|s| {
        let mut handles: Vec<_> = (0..guesses.len())
            .map(|j| {
                let (guesses, report) = (&guesses, &report);
                Some(s.spawn(move || part(text, guesses, j, report)))
            })
            .collect();
        let mut take = |j: usize| handles[j].take().map(crate::par::join);
        let mut doc = Doc::new(text, &guesses, &mut take, report);
        // A document that read whole, with a span at least.
        doc.document().then(|| doc.finish()).flatten()
    })
}

/// Reads the start of a document cut anywhere, as far as whole spans go (the track of a
/// span set cut before its `node_type`: "span set N"); `None` when it has no whole span
/// or does not read as a TiDB trace up to the cut.
pub(super) fn read_head(head: &str) -> Option<SpanSet> {
    let mut none = |_| None;
    let mut doc = Doc::new(head, &[], &mut none, Report::none());
    let _ = doc.document();
    doc.finish()
}

/// Where parts after the first start: for each of `parts - 1` places spread over `t`,
/// the first `{` after it that follows `}` and `,` (whitespace between) and precedes `"`,
/// within 64 KiB; increasing.
fn guesses(t: &[u8], parts: usize) -> Vec<usize> {
    let mut out = Vec::new();
    for k in 1..parts {
        let from = t.len() / parts * k;
        let to = (from + (64 << 10)).min(t.len());
        let mut i = from;
        while let Some(d) = memchr::memchr(b'{', &t[i..to]) {
            let at = i + d;
            i = at + 1;
            let before = back_ws(t, at);
            if t.get(at + 1) == Some(&b'"')
                && before > 0
                && t[before - 1] == b','
                && back_ws(t, before - 1) > 0
                && t[back_ws(t, before - 1) - 1] == b'}'
            {
                if out.last().is_none_or(|&l| l < at) {
                    out.push(at);
                }
                break;
            }
        }
    }
    out
}

/// The index just after the last non-whitespace byte before `i`.
fn back_ws(t: &[u8], mut i: usize) -> usize {
    while i > 0 && is_ws(t[i - 1]) {
        i -= 1;
    }
    i
}

#[inline]
fn is_ws(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r')
}

/// Progress in bytes, summed over the threads.
#[derive(Clone, Copy)]
struct Report<'a> {
    progress: Option<&'a super::Progress>,
    done: &'a AtomicU64,
    /// The document's length (a part read again counts twice).
    len: u64,
}

static NO_BYTES: AtomicU64 = AtomicU64::new(0);

impl Report<'_> {
    fn none() -> Report<'static> {
        Report {
            progress: None,
            done: &NO_BYTES,
            len: 0,
        }
    }

    fn add(&self, bytes: usize) {
        if let Some(p) = self.progress {
            let d = self.done.fetch_add(bytes as u64, Ordering::Relaxed) + bytes as u64;
            p.set_done(d.min(self.len));
        }
    }
}

/// Spans read by one thread, names in its own table.
#[derive(Default)]
struct Run {
    names: Names,
    spans: IdColumns,
}

impl Run {
    fn push(&mut self, f: Fields<'_>) {
        let name = self.names.intern(f.event.as_deref().unwrap_or(""));
        self.spans.push(IdSpan {
            id: f.id,
            parent_id: f.parent.filter(|&p| p != 0),
            start_ns: f.begin,
            dur_ns: f.dur,
            name,
            track: 0,
        });
    }
}

/// How a part's thread stopped.
enum Stop {
    /// At the start of the span where part `j` starts.
    Part(usize),
    /// Its array ended just before this index.
    End(usize),
}

/// A part's spans and how it stopped; `None` when it read something else.
type PartOut = Option<(Run, Stop)>;

/// The spans from `guesses[j]` to a later guess or the end of the array.
fn part(text: &str, guesses: &[usize], j: usize, report: &Report<'_>) -> PartOut {
    let t = text.as_bytes();
    let mut run = Run::default();
    let mut i = guesses[j];
    let mut next = j + 1;
    let mut reported = i;
    loop {
        let (f, end) = span_at(text, i)?;
        run.push(f);
        let after = ws(t, end);
        match t.get(after) {
            Some(b',') => i = ws(t, after + 1),
            Some(b']') => {
                report.add(after + 1 - reported);
                return Some((run, Stop::End(after + 1)));
            }
            _ => return None,
        }
        while next < guesses.len() && guesses[next] < i {
            next += 1;
        }
        if guesses.get(next) == Some(&i) {
            report.add(i - reported);
            return Some((run, Stop::Part(next)));
        }
        if i - reported >= 1 << 20 {
            report.add(i - reported);
            reported = i;
        }
    }
}

/// A span's members.
struct Fields<'a> {
    id: u64,
    parent: Option<u64>,
    begin: u64,
    dur: u64,
    event: Option<Cow<'a, str>>,
}

/// The span object at `text[i]` and the index after it.
fn span_at(text: &str, i: usize) -> Option<(Fields<'_>, usize)> {
    let t = text.as_bytes();
    if t.get(i) != Some(&b'{') {
        return None;
    }
    let (mut id, mut parent, mut begin, mut dur, mut event) = (None, None, None, None, None);
    let mut parent_seen = false;
    let mut event_seen = false;
    let mut i = ws(t, i + 1);
    if t.get(i) == Some(&b'}') {
        return None;
    }
    loop {
        let (key, after) = key_at(t, i)?;
        i = after;
        match key {
            b"span_id" if id.is_none() => (id, i) = num(t, i).map(|(v, e)| (Some(v), e))?,
            b"begin_unix_time_ns" if begin.is_none() => {
                (begin, i) = num(t, i).map(|(v, e)| (Some(v), e))?;
            }
            b"duration_ns" if dur.is_none() => {
                (dur, i) = num(t, i).map(|(v, e)| (Some(v), e))?;
            }
            b"parent_id" if !parent_seen => {
                parent_seen = true;
                if t[i..].starts_with(b"null") {
                    i += 4;
                } else {
                    (parent, i) = num(t, i).map(|(v, e)| (Some(v), e))?;
                }
            }
            b"event" if !event_seen => {
                event_seen = true;
                (event, i) = opt_string(text, i)?;
            }
            b"span_id" | b"begin_unix_time_ns" | b"duration_ns" | b"parent_id" | b"event" => {
                return None;
            }
            _ => i = other(t, i)?,
        }
        i = ws(t, i);
        match t.get(i) {
            Some(b',') => i = ws(t, i + 1),
            Some(b'}') => break,
            _ => return None,
        }
    }
    let (id, begin, dur) = (id?, begin?, dur?);
    begin.checked_add(dur)?;
    let f = Fields {
        id,
        parent,
        begin,
        dur,
        event,
    };
    Some((f, i + 1))
}

/// The member name at `t[i]` (no escapes) and the index of its value.
fn key_at(t: &[u8], i: usize) -> Option<(&[u8], usize)> {
    if t.get(i) != Some(&b'"') {
        return None;
    }
    let end = skip_string(t, i + 1)?;
    let key = &t[i + 1..end - 1];
    if key.iter().any(|&b| b == b'\\' || b < 0x20) {
        return None;
    }
    let colon = ws(t, end);
    if t.get(colon) != Some(&b':') {
        return None;
    }
    Some((key, ws(t, colon + 1)))
}

/// A non-negative integer at `t[i]`, as `flamebearer::Num` reads one: JSON digits (no
/// fraction or exponent; none of those here) or a string of ASCII digits.
fn num(t: &[u8], i: usize) -> Option<(u64, usize)> {
    let digits = |from: usize, to_quote: bool| -> Option<(u64, usize)> {
        let mut v: u64 = 0;
        let mut j = from;
        while let Some(&b) = t.get(j).filter(|b| b.is_ascii_digit()) {
            v = v.checked_mul(10)?.checked_add(u64::from(b - b'0'))?;
            j += 1;
        }
        if j == from {
            return None;
        }
        if to_quote {
            return (t.get(j) == Some(&b'"')).then_some((v, j + 1));
        }
        // JSON has no leading zeros; a fraction or an exponent is left to serde.
        let leading_zero = t[from] == b'0' && j - from > 1;
        let more = matches!(t.get(j), Some(b'.' | b'e' | b'E'));
        (!leading_zero && !more).then_some((v, j))
    };
    match *t.get(i)? {
        b'0'..=b'9' => digits(i, false),
        b'"' => digits(i + 1, true),
        _ => None,
    }
}

/// A string or `null` at `text[i]`.
#[allow(clippy::type_complexity)]
fn opt_string(text: &str, i: usize) -> Option<(Option<Cow<'_, str>>, usize)> {
    let t = text.as_bytes();
    if t[i..].starts_with(b"null") {
        return Some((None, i + 4));
    }
    let (s, end) = string_at(text, i)?;
    Some((Some(s), end))
}

/// The string at `text[i]` (a `"`), borrowed unless it has escapes, and the index after
/// it; `None` for a control character in it (which JSON forbids).
fn string_at(text: &str, i: usize) -> Option<(Cow<'_, str>, usize)> {
    let t = text.as_bytes();
    if t.get(i) != Some(&b'"') {
        return None;
    }
    let end = skip_string(t, i + 1)?;
    let raw = &t[i + 1..end - 1];
    if raw.iter().any(|&b| b < 0x20) {
        return None;
    }
    let s = if raw.contains(&b'\\') {
        Cow::Owned(serde_json::from_str::<String>(&text[i..end]).ok()?)
    } else {
        Cow::Borrowed(&text[i + 1..end - 1])
    };
    Some((s, end))
}

/// Any other value at `t[i]`, checked as JSON; the index after it.
fn other(t: &[u8], i: usize) -> Option<usize> {
    let end = super::chrome::scan::skip_value(t, i)?;
    serde_json::from_slice::<IgnoredAny>(&t[i..end]).ok()?;
    Some(end)
}

/// The reader of a document from its start, taking over parts read ahead.
struct Doc<'a, 'g> {
    text: &'a str,
    guesses: &'g [usize],
    take: &'g mut dyn FnMut(usize) -> Option<PartOut>,
    report: Report<'g>,
    /// Runs of spans in document order, each with the span set it belongs to.
    runs: Vec<(Run, usize)>,
    /// The current run (this thread's own reading).
    own: Run,
    /// Per span set: its track.
    set_track: Vec<u32>,
    tracks: Vec<Track>,
    /// The set being read.
    set: usize,
}

impl<'a, 'g> Doc<'a, 'g> {
    fn new(
        text: &'a str,
        guesses: &'g [usize],
        take: &'g mut dyn FnMut(usize) -> Option<PartOut>,
        report: Report<'g>,
    ) -> Self {
        Doc {
            text,
            guesses,
            take,
            report,
            runs: Vec::new(),
            own: Run::default(),
            set_track: Vec::new(),
            tracks: Vec::new(),
            set: 0,
        }
    }

    /// Reads the document; whether all of it read (a head: whether it read to its end).
    fn document(&mut self) -> bool {
        let t = self.text.as_bytes();
        let mut i = ws(t, 0);
        if t.get(i) != Some(&b'{') {
            return false;
        }
        i = ws(t, i + 1);
        if t.get(i) == Some(&b'}') {
            return false;
        }
        let mut sets_seen = false;
        loop {
            let Some((key, after)) = key_at(t, i) else {
                return false;
            };
            i = match key {
                b"span_sets" if !sets_seen => {
                    sets_seen = true;
                    match self.span_sets(after) {
                        Some(e) => e,
                        None => return false,
                    }
                }
                b"span_sets" => return false,
                _ => match other(t, after) {
                    Some(e) => e,
                    None => return false,
                },
            };
            i = ws(t, i);
            match t.get(i) {
                Some(b',') => i = ws(t, i + 1),
                Some(b'}') => break,
                _ => return false,
            }
        }
        ws(t, i + 1) == t.len()
    }

    /// The `span_sets` array at `i`; the index after it.
    fn span_sets(&mut self, mut i: usize) -> Option<usize> {
        let t = self.text.as_bytes();
        if t.get(i) != Some(&b'[') {
            return None;
        }
        i = ws(t, i + 1);
        if t.get(i) == Some(&b']') {
            return Some(i + 1);
        }
        loop {
            i = ws(t, self.span_set(i)?);
            match t.get(i) {
                Some(b',') => i = ws(t, i + 1),
                Some(b']') => return Some(i + 1),
                _ => return None,
            }
        }
    }

    /// The span set object at `i`; the index after it.
    fn span_set(&mut self, mut i: usize) -> Option<usize> {
        let t = self.text.as_bytes();
        self.set = self.set_track.len();
        self.set_track.push(u32::MAX);
        if t.get(i) != Some(&b'{') {
            return None;
        }
        let mut node_type: Option<Cow<'a, str>> = None;
        let (mut type_seen, mut spans_seen) = (false, false);
        i = ws(t, i + 1);
        let result = (|| {
            if t.get(i) == Some(&b'}') {
                return Some(i + 1);
            }
            loop {
                let (key, after) = key_at(t, i)?;
                i = match key {
                    b"node_type" if !type_seen => {
                        type_seen = true;
                        let (v, e) = opt_string(self.text, after)?;
                        node_type = v;
                        // The track is known before the spans (as the file usually has it).
                        self.name_track(node_type.as_deref());
                        e
                    }
                    b"spans" if !spans_seen => {
                        spans_seen = true;
                        self.spans(after)?
                    }
                    b"node_type" | b"spans" => return None,
                    _ => other(t, after)?,
                };
                i = ws(t, i);
                match t.get(i) {
                    Some(b',') => i = ws(t, i + 1),
                    Some(b'}') => return Some(i + 1),
                    _ => return None,
                }
            }
        })();
        // A set whose node type comes after its spans, or none (or a head cut first).
        self.name_track(node_type.as_deref());
        self.close_run();
        result
    }

    /// The current set's track, named `node_type` (or "span set N"), if not yet named.
    fn name_track(&mut self, node_type: Option<&str>) {
        if self.set_track[self.set] != u32::MAX {
            return;
        }
        let name = node_type.map_or_else(|| format!("span set {}", self.set), str::to_string);
        let track = match self.tracks.iter().position(|t| t.name == name) {
            Some(k) => k as u32,
            None => {
                self.tracks.push(Track { name });
                self.tracks.len() as u32 - 1
            }
        };
        self.set_track[self.set] = track;
    }

    /// Ends the current run of this thread's own spans.
    fn close_run(&mut self) {
        if !self.own.spans.is_empty() {
            let run = std::mem::take(&mut self.own);
            self.runs.push((run, self.set));
        }
    }

    /// The `spans` array at `i`, taking over the parts read ahead from where they start;
    /// the index after it.
    fn spans(&mut self, mut i: usize) -> Option<usize> {
        let t = self.text.as_bytes();
        if t.get(i) != Some(&b'[') {
            return None;
        }
        i = ws(t, i + 1);
        if t.get(i) == Some(&b']') {
            return Some(i + 1);
        }
        let mut next = self.guesses.partition_point(|&g| g < i);
        let mut reported = i;
        loop {
            // A part read ahead starts here: its spans, then where it stopped.
            while self.guesses.get(next) == Some(&i) {
                let (run, stop) = (self.take)(next).flatten()?;
                self.close_run();
                self.runs.push((run, self.set));
                match stop {
                    Stop::Part(j) => {
                        i = self.guesses[j];
                        next = j;
                    }
                    Stop::End(e) => return Some(e),
                }
                reported = i;
            }
            let (f, end) = span_at(self.text, i)?;
            self.own.push(f);
            let after = ws(t, end);
            match t.get(after) {
                Some(b',') => i = ws(t, after + 1),
                Some(b']') => {
                    self.report.add(after + 1 - reported);
                    return Some(after + 1);
                }
                _ => return None,
            }
            while self.guesses.get(next).is_some_and(|&g| g < i) {
                next += 1;
            }
            if i - reported >= 1 << 20 {
                self.report.add(i - reported);
                reported = i;
            }
        }
    }

    /// The set of every span read, their names in one table in order of first
    /// appearance; `None` when there is none.
    fn finish(mut self) -> Option<SpanSet> {
        self.close_run();
        let n: usize = self.runs.iter().map(|(r, _)| r.spans.len()).sum();
        if n == 0 {
            return None;
        }
        let mut names = Names::new();
        let mut all = IdColumns::default();
        all.id.reserve_exact(n);
        all.parent_id.reserve_exact(n);
        all.start_ns.reserve_exact(n);
        all.dur_ns.reserve_exact(n);
        all.name.reserve_exact(n);
        all.track.reserve_exact(n);
        for (run, set) in self.runs {
            // The run's names in the order it met them: ids in one table by first use.
            let map: Vec<NameId> = run.names.iter().map(|(_, s)| names.intern(s)).collect();
            let track = self.set_track[set];
            let s = run.spans;
            all.id.extend_from_slice(&s.id);
            all.parent_id.extend_from_slice(&s.parent_id);
            all.start_ns.extend_from_slice(&s.start_ns);
            all.dur_ns.extend_from_slice(&s.dur_ns);
            all.name.extend(s.name.iter().map(|&k| map[k as usize]));
            all.track.extend(std::iter::repeat_n(track, s.id.len()));
        }
        Some(SpanSet::from_id_columns(
            names,
            all,
            self.tracks,
            Warnings::default(),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generator::Rng;

    /// What a set says, names as text: equal sets read alike everywhere.
    fn shown(s: &SpanSet) -> String {
        let names: Vec<&str> = s.name.iter().map(|&n| s.names.get(n)).collect();
        let tracks: Vec<&str> = s.tracks.iter().map(|t| t.name.as_str()).collect();
        format!(
            "origin {} starts {:?} durs {:?} parents {:?} names {names:?} ids {:?} tracks {:?} {tracks:?} notes {:?}",
            s.origin_ns, s.start_ns, s.dur_ns, s.parent, s.name, s.track, s.warnings.notes
        )
    }

    fn serde(text: &str) -> Result<SpanSet, crate::import::ImportError> {
        super::super::tidb::parse_serde("t.json", text.as_bytes())
    }

    /// A random document: span sets in any member order, numbers as digits or digit
    /// strings, nulls, unknown members, names with escapes, parents among the ids (some
    /// repeated), unknown or 0, whitespace of every JSON kind.
    fn random_doc(rng: &mut Rng, spans: usize) -> String {
        let ws = |rng: &mut Rng| [" ", "", "\n", "\t", "\r\n  "][rng.below(5) as usize];
        let mut ids = Vec::new();
        let mut sets = Vec::new();
        let set_count = 1 + rng.below(4) as usize;
        for si in 0..set_count {
            let mut objs = Vec::new();
            for _ in 0..(spans / set_count).max(1) {
                let id = if !ids.is_empty() && rng.below(40) == 0 {
                    ids[rng.below(ids.len() as u64) as usize]
                } else {
                    (1u64 << 60) + rng.below(1 << 40)
                };
                ids.push(id);
                let num = |rng: &mut Rng, v: u64| {
                    if rng.below(6) == 0 {
                        format!("\"{v}\"")
                    } else {
                        v.to_string()
                    }
                };
                let parent = match rng.below(6) {
                    0 => "null".to_string(),
                    1 => "0".to_string(),
                    2 => {
                        let v = rng.next() >> 4;
                        num(rng, v)
                    }
                    _ => {
                        let v = ids[rng.below(ids.len() as u64) as usize];
                        num(rng, v)
                    }
                };
                let event = match rng.below(10) {
                    0 => "null".to_string(),
                    1 => r#""quote \" tab \t é \u00e9""#.to_string(),
                    2 => r#""},{\"span_id\":1}""#.to_string(),
                    _ => format!("\"op{}\"", rng.below(30)),
                };
                let space = ws(rng);
                let id_text = num(rng, id);
                let begin = 1_607_658_272_409_800_000 + rng.below(1 << 30);
                let begin = num(rng, begin);
                let dur = rng.below(1 << 20);
                let dur = num(rng, dur);
                let mut members = vec![
                    format!("\"span_id\":{space}{id_text}"),
                    format!("\"begin_unix_time_ns\":{begin}"),
                    format!("\"duration_ns\":{dur}"),
                ];
                if rng.below(8) != 0 {
                    members.push(format!("\"parent_id\":{parent}"));
                }
                if rng.below(8) != 0 {
                    members.push(format!("\"event\":{}{event}", ws(rng)));
                }
                if rng.below(5) == 0 {
                    members.push(r#""tags":{"k":[1,2.5,{"x":null}],"e":"a\"b"}"#.to_string());
                }
                // Member order as it comes.
                for k in (1..members.len()).rev() {
                    members.swap(k, rng.below(k as u64 + 1) as usize);
                }
                let sep = format!(",{}", ws(rng));
                objs.push(format!("{{{}{}{}}}", ws(rng), members.join(&sep), ws(rng)));
            }
            let spans = format!(
                "\"spans\":[{}{}]",
                ws(rng),
                objs.join(&format!(",{}", ws(rng)))
            );
            let node = match rng.below(5) {
                0 => None,
                1 => Some("\"node_type\":null".to_string()),
                _ => Some(format!(
                    "\"node_type\":\"{}\"",
                    ["TiDB", "TiKV", "PD"][si % 3]
                )),
            };
            let set = match (node, rng.below(2)) {
                (None, _) => format!("{{{spans}}}"),
                (Some(n), 0) => format!("{{{n},{spans}}}"),
                (Some(n), _) => format!("{{{spans},{}{n}}}", ws(rng)),
            };
            sets.push(set);
        }
        format!(
            "{{\"trace_id\": 5796316316865205225,{}\"span_sets\":[{}]{}}}{}",
            ws(rng),
            sets.join(","),
            ws(rng),
            ws(rng)
        )
    }

    /// Random documents read in place, in 1, 2, 3 and 8 parts, give serde's sets.
    #[test]
    fn reads_as_serde_reads_in_any_parts() {
        let mut rng = Rng(5);
        let mut parted = 0;
        for case in 0..60 {
            let doc = random_doc(&mut rng, [1, 5, 40, 400, 3000][case % 5]);
            let want = shown(&serde(&doc).unwrap());
            for parts in [1, 2, 3, 8] {
                let got = read_in_parts(&doc, None, parts)
                    .unwrap_or_else(|| panic!("case {case}: not read in {parts} parts\n{doc}"));
                assert_eq!(shown(&got), want, "case {case}, {parts} parts");
                parted += usize::from(parts > 1 && !guesses(doc.as_bytes(), parts).is_empty());
            }
        }
        assert!(parted > 50, "only {parted} reads in parts");
    }

    /// A guess inside a name (a name ending `},{`, its closing quote after the `{`) is
    /// never trusted: the part read from it is dropped and its bytes read in order.
    #[test]
    fn a_guess_inside_a_string_is_read_again() {
        let span = |i: u64| {
            format!(
                r#"{{"span_id":{i},"parent_id":{},"begin_unix_time_ns":{i},"duration_ns":5,"event":"x}},{{"}}"#,
                i / 2
            )
        };
        let spans: Vec<String> = (1..=2000).map(span).collect();
        let doc = format!(
            r#"{{"span_sets":[{{"node_type":"TiDB","spans":[{}]}}]}}"#,
            spans.join(",")
        );
        let want = shown(&serde(&doc).unwrap());
        for parts in [2, 3, 7] {
            let g = guesses(doc.as_bytes(), parts);
            let traps = g.iter().filter(|&&at| doc[..at].ends_with("\"x},")).count();
            assert!(traps > 0, "{parts} parts: no guess in a name: {g:?}");
            assert_eq!(shown(&read_in_parts(&doc, None, parts).unwrap()), want);
        }
    }

    /// What the reader does not take is left to serde, which gives its error or reads it.
    #[test]
    fn what_it_does_not_take_goes_to_serde() {
        let ok = r#"{"span_id":1,"begin_unix_time_ns":2,"duration_ns":3}"#;
        let doc = |span: &str| format!(r#"{{"span_sets":[{{"spans":[{ok},{span}]}}]}}"#);
        for (span, serde_reads) in [
            (
                r#"{"span_id":2.0,"begin_unix_time_ns":2,"duration_ns":3}"#,
                true,
            ),
            (
                r#"{"span_id":1e1,"begin_unix_time_ns":2,"duration_ns":3}"#,
                true,
            ),
            (
                r#"{"span_id":" 7","begin_unix_time_ns":2,"duration_ns":3}"#,
                true,
            ),
            (
                r#"{"span\u005fid":2,"begin_unix_time_ns":2,"duration_ns":3}"#,
                true,
            ),
            (
                r#"{"span_id":02,"begin_unix_time_ns":2,"duration_ns":3}"#,
                false,
            ),
            (
                r#"{"span_id":-2,"begin_unix_time_ns":2,"duration_ns":3}"#,
                false,
            ),
            (
                r#"{"span_id":2,"span_id":3,"begin_unix_time_ns":2,"duration_ns":3}"#,
                false,
            ),
            (r#"{"begin_unix_time_ns":2,"duration_ns":3}"#, false),
            (
                r#"{"span_id":2,"begin_unix_time_ns":18446744073709551615,"duration_ns":3}"#,
                false,
            ),
            (
                r#"{"span_id":99999999999999999999,"begin_unix_time_ns":2,"duration_ns":3}"#,
                false,
            ),
            (
                r#"{"span_id":2,"begin_unix_time_ns":2,"duration_ns":3,"x":[1,}"#,
                false,
            ),
            (
                r#"{"span_id":2,"begin_unix_time_ns":2,"duration_ns":3,"event":"a	b"}"#,
                false,
            ),
            (
                r#"{"span_id":2,"begin_unix_time_ns":2,"duration_ns":3,"event":true}"#,
                false,
            ),
            (
                r#"{"span_id":2,"begin_unix_time_ns":2,"duration_ns":3} x"#,
                false,
            ),
            ("null", false),
        ] {
            let d = doc(span);
            assert!(read_in_parts(&d, None, 1).is_none(), "taken: {span}");
            let parsed = super::super::tidb::parse("t.json", d.as_bytes());
            assert_eq!(parsed.is_ok(), serde_reads, "{span}: {:?}", parsed.err());
            if serde_reads {
                assert_eq!(shown(&parsed.unwrap()), shown(&serde(&d).unwrap()));
            }
        }
        // Trailing bytes, a repeated `span_sets`, no spans, not an object.
        for d in [
            format!("{} x", doc(ok)),
            format!(r#"{{"span_sets":[],"span_sets":[{{"spans":[{ok}]}}]}}"#),
            r#"{"span_sets":[{"spans":[]}]}"#.to_string(),
            r#"{"trace_id":1}"#.to_string(),
            "[]".to_string(),
        ] {
            assert!(read_in_parts(&d, None, 1).is_none(), "taken: {d}");
            assert!(
                super::super::tidb::parse("t.json", d.as_bytes()).is_err(),
                "{d}"
            );
        }
        assert!(read_in_parts(&doc(ok), None, 1).is_some());
    }

    /// A head cut anywhere reads as the spans whole before the cut, in their sets;
    /// never a panic.
    #[test]
    fn heads_are_the_whole_spans_before_the_cut() {
        let mut rng = Rng(9);
        let doc = random_doc(&mut rng, 300);
        let whole = read_in_parts(&doc, None, 1).unwrap();
        let mut seen_partial = false;
        let mut last = 0;
        for cut in (0..doc.len()).step_by(7) {
            if !doc.is_char_boundary(cut) {
                continue;
            }
            let Some(head) = read_head(&doc[..cut]) else {
                continue;
            };
            let n = head.len();
            assert!(n >= last && n <= whole.len(), "cut {cut}: {n} spans");
            last = n;
            seen_partial |= n > 0 && n < whole.len();
            // The same spans as the whole, up to parents further on.
            let names = |s: &SpanSet, i: usize| s.names.get(s.name[i]).to_string();
            for i in 0..n {
                assert_eq!(names(&head, i), names(&whole, i), "cut {cut}, span {i}");
                assert_eq!(
                    head.start_ns[i] + head.origin_ns,
                    whole.start_ns[i] + whole.origin_ns
                );
            }
        }
        assert!(seen_partial);
        assert_eq!(
            shown(&read_head(&doc).unwrap()),
            shown(&whole),
            "a whole document read as a head"
        );
    }
}
