//! Chrome Trace Event Format JSON (`chrome://tracing`, Perfetto's legacy JSON importer,
//! DevTools performance traces, catapult test data) → [`SpanSet`].
//!
//! Two top-level forms: a bare array of events, or an object whose `traceEvents` member is
//! that array (other members: `displayTimeUnit`, recorded in [`SpanSet::meta`] since it
//! only affects display; `systemTraceEvents`, `samples` … are noted and skipped). Browsers
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
//! is always the sequential one. Linking events into spans is one sequential pass over
//! small per-thread records.
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

use super::ImportError;
use crate::model::names::{NameId, Names};
use crate::model::spans::{AttrPair, SpanAttrs, SpanSet, Track, TrackInfo, TrackKind};
use crate::model::{NO_PARENT, Warnings};
use hashbrown::HashTable;
use serde::Deserialize;
use serde_json::value::RawValue;
use std::borrow::Cow;
use std::collections::HashMap;
use std::hash::BuildHasher;

/// Inputs at least this large are parsed on all cores.
pub const PARALLEL_MIN_BYTES: usize = 8 << 20;

/// Parses a Chrome trace (object or array form).
pub fn parse(file: &str, text: &[u8]) -> Result<SpanSet, ImportError> {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
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
    let split = Split {
        threads,
        min_bytes: min_parallel_bytes,
    };
    let (recs, names, args, doc) = read_doc(file, text, split)?;
    Ok(build(recs, names, args, doc))
}

/// When and how widely to parse in parallel.
#[derive(Clone, Copy)]
struct Split {
    threads: usize,
    min_bytes: usize,
}

// ---------------------------------------------------------------------------------------
// The document: where the events are, and what the top level says.

/// What the top level said besides the events.
struct Doc {
    display_time_unit: Option<String>,
    notes: Vec<String>,
}

fn err_at(file: &str, text: &[u8], at: usize, what: &str, message: String) -> ImportError {
    let (line, column) = line_col(text, at);
    ImportError::Invalid {
        file: file.to_string(),
        location: format!("{what} (line {line}, column {column})"),
        message,
    }
}

/// 1-based line and column (in bytes) of byte `at`.
fn line_col(text: &[u8], at: usize) -> (usize, usize) {
    let at = at.min(text.len());
    let line = memchr::memchr_iter(b'\n', &text[..at]).count() + 1;
    let start = memchr::memrchr(b'\n', &text[..at]).map_or(0, |i| i + 1);
    (line, at - start + 1)
}

fn skip_ws(text: &[u8], mut i: usize) -> usize {
    while i < text.len() && text[i].is_ascii_whitespace() {
        i += 1;
    }
    i
}

/// `i` is just after an opening quote; returns the index after the closing quote.
fn skip_string(text: &[u8], mut i: usize) -> Option<usize> {
    loop {
        let k = i + memchr::memchr2(b'"', b'\\', &text[i..])?;
        if text[k] == b'\\' {
            i = k + 2;
            if i > text.len() {
                return None;
            }
        } else {
            return Some(k + 1);
        }
    }
}

/// `text[i]` is `{` or `[`; returns the index after the matching close (brackets of
/// either kind are counted together: mismatches are left to the JSON parser).
fn skip_nested(text: &[u8], mut i: usize) -> Option<usize> {
    let mut depth = 0usize;
    loop {
        match *text.get(i)? {
            b'"' => i = skip_string(text, i + 1)?,
            b'{' | b'[' => {
                depth += 1;
                i += 1;
            }
            b'}' | b']' => {
                depth -= 1;
                i += 1;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => i += 1,
        }
    }
}

/// Skips any JSON value at `i`; `None` at the end of the input.
fn skip_value(text: &[u8], i: usize) -> Option<usize> {
    match *text.get(i)? {
        b'"' => skip_string(text, i + 1),
        b'{' | b'[' => skip_nested(text, i),
        _ => {
            let n = text[i..]
                .iter()
                .position(|&b| matches!(b, b',' | b'}' | b']') || b.is_ascii_whitespace())?;
            Some(i + n)
        }
    }
}

/// How a run over the traceEvents array ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum RunEnd {
    /// Closed by `]`; the index after it.
    Closed(usize),
    /// The input ends after a complete event (and maybe a comma).
    Open,
    /// The input ends inside an event, which starts at this byte.
    CutEvent(usize),
    /// Reached the next chunk's first event, at this byte.
    Stopped(usize),
}

/// Events parsed by one run, and how it ended.
struct Run<'a> {
    recs: Vec<Rec<'a>>,
    /// Names and categories, interned while the event's text is in cache.
    names: Names,
    /// `args` of the span events.
    args: ArgStore,
    end: RunEnd,
}

/// A bad event, found by a run that does not know how many events precede it.
struct EvError {
    /// Index among the run's events.
    local: usize,
    line: usize,
    column: usize,
    message: String,
}

impl EvError {
    fn at(text: &[u8], local: usize, byte: usize, message: String) -> EvError {
        let (line, column) = line_col(text, byte);
        EvError {
            local,
            line,
            column,
            message,
        }
    }

    fn into_import(self, file: &str, first_index: usize) -> ImportError {
        ImportError::Invalid {
            file: file.to_string(),
            location: format!(
                "traceEvents[{}] (line {}, column {})",
                first_index + self.local,
                self.line,
                self.column
            ),
            message: self.message,
        }
    }
}

/// Parses the events from byte `i` (inside the traceEvents array) until the array ends,
/// the input ends, or the next event starts at or after `stop`.
fn parse_run<'a>(text: &'a [u8], mut i: usize, stop: usize) -> Result<Run<'a>, EvError> {
    let mut recs = Vec::new();
    let mut names = Names::new();
    let mut args = ArgStore::default();
    let end = loop {
        i = skip_ws(text, i);
        match text.get(i) {
            None => break RunEnd::Open,
            Some(b']') => break RunEnd::Closed(i + 1),
            Some(b',') => i += 1,
            Some(b'{') => {
                if i >= stop {
                    break RunEnd::Stopped(i);
                }
                match scan_event(text, i) {
                    Ok((ev, end)) => {
                        recs.push(event_rec(text, i, recs.len(), ev, &mut names, &mut args)?);
                        i = end;
                    }
                    Err(ScanErr::Eof) => break RunEnd::CutEvent(i),
                    Err(ScanErr::Syntax(at, message)) => {
                        return Err(EvError::at(text, recs.len(), at, message));
                    }
                }
            }
            Some(&other) => {
                return Err(EvError::at(
                    text,
                    recs.len(),
                    i,
                    format!(
                        "expected an event object `{{…}}`, found `{}`",
                        char::from(other).escape_default()
                    ),
                ));
            }
        }
    };
    Ok(Run {
        recs,
        names,
        args,
        end,
    })
}

/// The first event start at or after `from`, guessed from the layout writers use: an
/// event begins a line (JSON strings cannot hold a raw newline, so a line start is never
/// inside a string). The guess is checked when the chunks are joined.
fn guess_event_start(text: &[u8], from: usize) -> Option<usize> {
    let mut i = from;
    for _ in 0..4096 {
        i += memchr::memchr(b'\n', text.get(i..)?)? + 1;
        let mut j = skip_ws(text, i);
        if text.get(j) == Some(&b',') {
            j = skip_ws(text, j + 1);
        }
        if text.get(j) == Some(&b'{') {
            return Some(j);
        }
    }
    None
}

/// Parses the traceEvents array whose `[` is just before `start`: on `split.threads`
/// cores when it is large. Chunks start at guessed event boundaries; each chunk parses up
/// to the next one's start, and a chunk whose predecessor did not end exactly there (a
/// wrong guess: pretty-printed events with nested objects at line starts) is discarded
/// and the rest parsed in sequence, so the result is always the sequential one.
fn parse_array<'a>(
    file: &str,
    text: &'a [u8],
    start: usize,
    split: Split,
) -> Result<(Vec<Rec<'a>>, Names, ArgStore, RunEnd), ImportError> {
    let starts = if split.threads > 1 && text.len() - start >= split.min_bytes {
        super::chunks::cut(text, start, split.threads, guess_event_start)
    } else {
        vec![start, text.len()]
    };
    if starts.len() == 2 {
        let run = parse_run(text, start, usize::MAX).map_err(|e| e.into_import(file, 0))?;
        return Ok((run.recs, run.names, run.args, run.end));
    }
    // Each run stops at the next one's start; the last runs to the end.
    let last = starts.len() - 2;
    let runs = super::chunks::run(&starts, |j, from, to| {
        parse_run(text, from, if j == last { usize::MAX } else { to })
    });
    let mut recs: Vec<Rec<'a>> = Vec::new();
    let mut names: Option<(Names, ArgStore)> = None;
    // Appends a run, renumbering its names into the first run's table: names get the
    // ids a sequential parse gives them (order of first appearance).
    let mut append = |run: Run<'a>, recs: &mut Vec<Rec<'a>>| match names.as_mut() {
        None => {
            names = Some((run.names, run.args));
            recs.extend(run.recs);
        }
        Some((global, args)) => {
            let map: Vec<NameId> = run.names.iter().map(|(_, n)| global.intern(n)).collect();
            let pair_base = args.append(run.args);
            recs.extend(run.recs.into_iter().map(|mut r| {
                for id in [&mut r.name, &mut r.cat] {
                    if *id != NO_NAME {
                        *id = map[*id as usize];
                    }
                }
                if r.args.1 > 0 {
                    r.args.0 += pair_base;
                }
                r
            }));
        }
    };
    for (j, run) in runs.into_iter().enumerate() {
        let run = run.map_err(|e| e.into_import(file, recs.len()))?;
        let end = run.end;
        append(run, &mut recs);
        match end {
            RunEnd::Stopped(at) if at == starts[j + 1] => continue,
            RunEnd::Stopped(at) => {
                // A wrong guess: go on from the true boundary in sequence.
                let rest =
                    parse_run(text, at, usize::MAX).map_err(|e| e.into_import(file, recs.len()))?;
                let end = rest.end;
                append(rest, &mut recs);
                let (names, args) = names.unwrap_or_default();
                return Ok((recs, names, args, end));
            }
            end => {
                let (names, args) = names.unwrap_or_default();
                return Ok((recs, names, args, end));
            }
        }
    }
    // The last run has no stop, so it never ends `Stopped`.
    let (names, args) = names.unwrap_or_default();
    Ok((recs, names, args, RunEnd::Open))
}

/// Reads an array-form or object-form trace.
fn read_doc<'a>(
    file: &str,
    text: &'a [u8],
    split: Split,
) -> Result<(Vec<Rec<'a>>, Names, ArgStore, Doc), ImportError> {
    let mut doc = Doc {
        display_time_unit: None,
        notes: Vec::new(),
    };
    let start = skip_ws(text, 0);
    let (recs, names, args, end) = match text.get(start) {
        Some(b'[') => parse_array(file, text, start + 1, split)?,
        Some(b'{') => {
            let mut found = None;
            let mut i = start + 1;
            loop {
                i = skip_ws(text, i);
                match text.get(i) {
                    None | Some(b'}') => break,
                    Some(b',') => {
                        i += 1;
                        continue;
                    }
                    Some(b'"') => {}
                    Some(&other) => {
                        return Err(err_at(
                            file,
                            text,
                            i,
                            "top level",
                            format!(
                                "expected a member name in quotes, found `{}`",
                                char::from(other).escape_default()
                            ),
                        ));
                    }
                }
                let Some(key_end) = skip_string(text, i + 1) else {
                    break;
                };
                let key = &text[i + 1..key_end - 1];
                i = skip_ws(text, key_end);
                if text.get(i) != Some(&b':') {
                    return Err(err_at(
                        file,
                        text,
                        i,
                        "top level",
                        format!("expected `:` after \"{}\"", String::from_utf8_lossy(key)),
                    ));
                }
                i = skip_ws(text, i + 1);
                if key == b"traceEvents" && found.is_none() {
                    if text.get(i) != Some(&b'[') {
                        return Err(err_at(
                            file,
                            text,
                            i,
                            "traceEvents",
                            "expected an array of events".to_string(),
                        ));
                    }
                    let (recs, names, args, end) = parse_array(file, text, i + 1, split)?;
                    found = Some((recs, names, args, end));
                    match end {
                        RunEnd::Closed(after) => {
                            i = after;
                            continue;
                        }
                        _ => break,
                    }
                }
                let Some(after) = skip_value(text, i) else {
                    break;
                };
                let value = &text[i..after];
                match key {
                    b"displayTimeUnit" => {
                        doc.display_time_unit = serde_json::from_slice::<String>(value).ok();
                    }
                    b"systemTraceEvents" => doc
                        .notes
                        .push("systemTraceEvents (ftrace text) not imported".to_string()),
                    b"samples" | b"powerTraceAsString" if value.len() > 2 => doc.notes.push(
                        format!("top-level {} not imported", String::from_utf8_lossy(key)),
                    ),
                    _ => {}
                }
                i = after;
            }
            found.ok_or_else(|| {
                err_at(
                    file,
                    text,
                    start,
                    "top level",
                    "expected a traceEvents array (an object without one is not a Chrome trace)"
                        .to_string(),
                )
            })?
        }
        _ => {
            return Err(err_at(
                file,
                text,
                start,
                "top level",
                "expected a JSON array of trace events or an object with traceEvents".to_string(),
            ));
        }
    };
    match end {
        RunEnd::Closed(_) | RunEnd::Stopped(_) => {}
        RunEnd::Open => doc.notes.push(format!(
            "the traceEvents array is not closed by `]` (a trace written while still \
             recording); all {} events loaded",
            recs.len()
        )),
        RunEnd::CutEvent(at) => {
            let (line, column) = line_col(text, at);
            doc.notes.push(format!(
                "the input ends inside traceEvents[{}] (line {line}, column {column}): \
                 truncated file; that event was dropped, the {} before it loaded",
                recs.len(),
                recs.len()
            ));
        }
    }
    Ok((recs, names, args, doc))
}

// ---------------------------------------------------------------------------------------
// Events.

/// An event's members, borrowed from the input: strings as text (unescaped only when
/// they hold escapes), numbers, ids and `args` as their raw JSON text.
#[derive(Default)]
struct Ev<'a> {
    ph: Option<Cow<'a, str>>,
    name: Option<Cow<'a, str>>,
    cat: Option<Cow<'a, str>>,
    scope: Option<Cow<'a, str>>,
    s: Option<Cow<'a, str>>,
    ts: Option<&'a str>,
    dur: Option<&'a str>,
    tdur: Option<&'a str>,
    pid: Option<&'a str>,
    tid: Option<&'a str>,
    id: Option<&'a str>,
    id2: Option<&'a str>,
    args: Option<&'a str>,
}

/// Why an event could not be read.
enum ScanErr {
    /// The input ends inside it.
    Eof,
    /// Malformed JSON at a byte.
    Syntax(usize, String),
}

fn found(text: &[u8], at: usize) -> String {
    match text.get(at) {
        Some(&b) if b.is_ascii_graphic() => format!("`{}`", char::from(b)),
        Some(&b) => format!("byte 0x{b:02x}"),
        None => "the end of the input".to_string(),
    }
}

fn utf8(text: &[u8], a: usize, b: usize) -> Result<&str, ScanErr> {
    std::str::from_utf8(&text[a..b])
        .map_err(|e| ScanErr::Syntax(a + e.valid_up_to(), "invalid UTF-8 in a string".to_string()))
}

/// The JSON string whose opening quote is at `i`: its text and the index after it.
fn scan_string(text: &[u8], i: usize) -> Result<(Cow<'_, str>, usize), ScanErr> {
    let mut j = i + 1;
    let mut escaped = false;
    loop {
        let k = j + memchr::memchr2(b'"', b'\\', text.get(j..).unwrap_or_default())
            .ok_or(ScanErr::Eof)?;
        if text[k] == b'\\' {
            escaped = true;
            j = k + 2;
            if j > text.len() {
                return Err(ScanErr::Eof);
            }
        } else {
            j = k + 1;
            break;
        }
    }
    if !escaped {
        return Ok((Cow::Borrowed(utf8(text, i + 1, j - 1)?), j));
    }
    serde_json::from_slice::<String>(&text[i..j])
        .map(|s| (Cow::Owned(s), j))
        .map_err(|e| ScanErr::Syntax(i + e.column().saturating_sub(1), strip_position(&e)))
}

fn strip_position(e: &serde_json::Error) -> String {
    let m = e.to_string();
    m.rfind(" at line ")
        .map_or(m.clone(), |k| m[..k].to_string())
}

/// Any JSON value at `i` as raw text, and the index after it. Objects and arrays are
/// skipped by brackets and strings only; what is inside is checked where it is used.
fn scan_raw(text: &[u8], i: usize) -> Result<(&str, usize), ScanErr> {
    let end = match text.get(i) {
        None => return Err(ScanErr::Eof),
        Some(b'"') => scan_string(text, i)?.1,
        Some(b'{' | b'[') => skip_nested(text, i).ok_or(ScanErr::Eof)?,
        Some(b'-' | b'0'..=b'9' | b't' | b'f' | b'n') => {
            let n = text[i..]
                .iter()
                .position(|&b| matches!(b, b',' | b'}' | b']') || b.is_ascii_whitespace())
                .ok_or(ScanErr::Eof)?;
            i + n
        }
        Some(_) => {
            return Err(ScanErr::Syntax(
                i,
                format!("expected a value, found {}", found(text, i)),
            ));
        }
    };
    Ok((utf8(text, i, end)?, end))
}

/// A member that must be a string (or null).
fn scan_str<'a>(
    text: &'a [u8],
    i: usize,
    key: &str,
) -> Result<(Option<Cow<'a, str>>, usize), ScanErr> {
    match text.get(i) {
        Some(b'"') => scan_string(text, i).map(|(s, e)| (Some(s), e)),
        Some(b'n') if text[i..].starts_with(b"null") => Ok((None, i + 4)),
        None => Err(ScanErr::Eof),
        Some(_) => Err(ScanErr::Syntax(
            i,
            format!("{key}: expected a string, found {}", found(text, i)),
        )),
    }
}

/// Reads the event object whose `{` is at `i`: its members and the index after it. A
/// hand-written reader for this one shape is several times faster than a generic
/// deserializer: member names are matched as bytes, values are borrowed slices.
fn scan_event(text: &[u8], i: usize) -> Result<(Ev<'_>, usize), ScanErr> {
    let mut ev = Ev::default();
    let mut i = skip_ws(text, i + 1);
    if text.get(i) == Some(&b'}') {
        return Ok((ev, i + 1));
    }
    loop {
        match text.get(i) {
            Some(b'"') => {}
            None => return Err(ScanErr::Eof),
            Some(_) => {
                return Err(ScanErr::Syntax(
                    i,
                    format!("expected a member name in quotes, found {}", found(text, i)),
                ));
            }
        }
        let (key, after) = scan_string(text, i)?;
        i = skip_ws(text, after);
        match text.get(i) {
            Some(b':') => i = skip_ws(text, i + 1),
            None => return Err(ScanErr::Eof),
            Some(_) => {
                return Err(ScanErr::Syntax(
                    i,
                    format!("expected `:` after \"{key}\", found {}", found(text, i)),
                ));
            }
        }
        i = match key.as_bytes() {
            b"ph" | b"name" | b"cat" | b"scope" | b"s" => {
                let (v, e) = scan_str(text, i, &key)?;
                match key.as_bytes() {
                    b"ph" => ev.ph = v,
                    b"name" => ev.name = v,
                    b"cat" => ev.cat = v,
                    b"scope" => ev.scope = v,
                    _ => ev.s = v,
                }
                e
            }
            _ => {
                let (raw, e) = scan_raw(text, i)?;
                let raw = (raw != "null").then_some(raw);
                match key.as_bytes() {
                    b"ts" => ev.ts = raw,
                    b"dur" => ev.dur = raw,
                    b"tdur" => ev.tdur = raw,
                    b"pid" => ev.pid = raw,
                    b"tid" => ev.tid = raw,
                    b"id" => ev.id = raw,
                    b"id2" => ev.id2 = raw,
                    b"args" => ev.args = raw,
                    _ => {}
                }
                e
            }
        };
        i = skip_ws(text, i);
        match text.get(i) {
            Some(b',') => i = skip_ws(text, i + 1),
            Some(b'}') => return Ok((ev, i + 1)),
            None => return Err(ScanErr::Eof),
            Some(_) => {
                return Err(ScanErr::Syntax(
                    i,
                    format!(
                        "expected `,` or `}}` after a member, found {}",
                        found(text, i)
                    ),
                ));
            }
        }
    }
}

/// A process or thread id: a number, or (rarely) a non-numeric string.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
enum Pid<'a> {
    Num(i64),
    Text(&'a str),
}

impl std::fmt::Display for Pid<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Pid::Num(n) => write!(f, "{n}"),
            Pid::Text(t) => f.write_str(t),
        }
    }
}

fn pid_of(raw: Option<&str>) -> Pid<'_> {
    let Some(t) = raw else {
        return Pid::Num(0);
    };
    let inner = t
        .strip_prefix('"')
        .and_then(|t| t.strip_suffix('"'))
        .unwrap_or(t);
    match inner.trim().parse::<i64>() {
        Ok(n) => Pid::Num(n),
        Err(_) => Pid::Text(inner),
    }
}

/// What only scoped async events and metadata events have (boxed: most events have none
/// of it, and an async event with a plain id needs no allocation).
struct Extra<'a> {
    scope: Cow<'a, str>,
    /// `args` of metadata events, kept raw.
    meta_args: Option<&'a str>,
    /// The name of a metadata event (`process_name` …), which is no span name.
    meta_name: Option<Cow<'a, str>>,
}

/// An async id's text: inline when it fits (nearly always: `0x1f`, numbers, short
/// strings), so that matching a million ids while linking reads no input bytes, which by
/// then are long out of cache (reading them made matching memory-latency bound).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum IdText<'a> {
    /// Length and bytes (zero-padded).
    Inline(u8, [u8; 22]),
    Long(&'a str),
}

impl<'a> IdText<'a> {
    fn new(t: &'a str) -> IdText<'a> {
        let b = t.as_bytes();
        if b.len() <= 22 {
            let mut bytes = [0u8; 22];
            bytes[..b.len()].copy_from_slice(b);
            IdText::Inline(b.len() as u8, bytes)
        } else {
            IdText::Long(t)
        }
    }

    fn as_str(&self) -> &str {
        match self {
            // Whole `str`s were copied in, so the bytes are UTF-8.
            IdText::Inline(n, b) => std::str::from_utf8(&b[..*n as usize]).unwrap_or(""),
            IdText::Long(t) => t,
        }
    }
}

/// One event, as far as linking needs it.
struct Rec<'a> {
    /// Timestamp, or `i64::MIN` when absent.
    ts_ns: i64,
    /// Duration (`dur`, else `tdur`), or `i64::MIN` when absent.
    dur_ns: i64,
    pid: Pid<'a>,
    tid: Pid<'a>,
    /// Interned name, or [`NO_NAME`].
    name: NameId,
    /// Interned category, or [`NO_NAME`].
    cat: NameId,
    /// `args` of span events: `(first, count)` pairs in the run's [`ArgStore`].
    args: (u32, u32),
    /// Async id as raw text (quotes stripped).
    id: Option<IdText<'a>>,
    extra: Option<Box<Extra<'a>>>,
    /// The async id is process-local (`id2.local`).
    id_local: bool,
    /// The phase letter (0 for a missing, empty or multi-letter phase).
    ph: u8,
    /// Instant scope (`s`): b'g', b'p' or b't'.
    instant_scope: u8,
    /// `dur` was absent on an X event.
    no_dur: bool,
}

const NONE: i64 = i64::MIN;

/// No name or category.
const NO_NAME: NameId = NameId::MAX;

impl Rec<'_> {
    fn ts(&self) -> Option<i64> {
        (self.ts_ns != NONE).then_some(self.ts_ns)
    }

    fn id(&self) -> Option<(IdText<'_>, bool)> {
        self.id.map(|id| (id, self.id_local))
    }

    fn scope(&self) -> &str {
        self.extra.as_ref().map_or("", |e| &e.scope)
    }
}

/// Checks and converts a deserialized event that starts at byte `at`.
fn event_rec<'a>(
    text: &[u8],
    at: usize,
    local: usize,
    mut ev: Ev<'a>,
    names: &mut Names,
    store: &mut ArgStore,
) -> Result<Rec<'a>, EvError> {
    let number = |field: &str, raw: Option<&str>| -> Result<i64, EvError> {
        let Some(raw) = raw else { return Ok(NONE) };
        match micros_to_ns(raw) {
            Some(v) if v != NONE => Ok(v),
            _ => {
                let shown: String = raw.chars().take(40).collect();
                Err(EvError::at(
                    text,
                    local,
                    at,
                    format!(
                        "expected number {field} (microseconds within ±292 years), found {shown}"
                    ),
                ))
            }
        }
    };
    let ph = match ev.ph.as_deref().map(str::as_bytes) {
        Some([c]) => *c,
        _ => 0,
    };
    let ts_ns = number("ts", ev.ts)?;
    let mut dur_ns = number("dur", ev.dur)?;
    let mut no_dur = false;
    if ph == b'X' && dur_ns == NONE {
        dur_ns = number("tdur", ev.tdur)?;
        no_dur = true;
    }
    let id = match (ev.id, ev.id2) {
        (Some(id), _) => Some((id_text(id), false)),
        (None, Some(id2)) => {
            #[derive(Deserialize)]
            struct Id2<'b> {
                #[serde(borrow, default)]
                local: Option<&'b RawValue>,
                #[serde(borrow, default)]
                global: Option<&'b RawValue>,
            }
            match serde_json::from_str::<Id2<'a>>(id2) {
                Ok(Id2 { local: Some(l), .. }) => Some((id_text(l.get()), true)),
                Ok(Id2 {
                    global: Some(g), ..
                }) => Some((id_text(g.get()), false)),
                _ => Some((id2, false)),
            }
        }
        (None, None) => None,
    };
    let spans = matches!(
        ph,
        b'X' | b'B' | b'E' | b'i' | b'I' | b'R' | b'b' | b'e' | b'n' | b'S'
    );
    let args = match ev.args {
        Some(args) if spans => store.add(args),
        _ => (0, 0),
    };
    let (meta_args, meta_name) = if ph == b'M' {
        (ev.args, ev.name.take())
    } else {
        (None, None)
    };
    let extra = (ev.scope.is_some() || meta_args.is_some()).then(|| {
        Box::new(Extra {
            scope: ev.scope.unwrap_or(Cow::Borrowed("")),
            meta_args,
            meta_name,
        })
    });
    Ok(Rec {
        ts_ns,
        dur_ns,
        pid: pid_of(ev.pid),
        tid: pid_of(ev.tid),
        name: ev
            .name
            .filter(|n| !n.is_empty())
            .map_or(NO_NAME, |n| names.intern(&n)),
        cat: ev
            .cat
            .filter(|n| !n.is_empty())
            .map_or(NO_NAME, |n| names.intern(&n)),
        args,
        id: id.map(|(id, _)| IdText::new(id)),
        extra,
        id_local: id.is_some_and(|(_, local)| local),
        ph,
        instant_scope: match ev.s.as_deref() {
            Some("g") => b'g',
            Some("p") => b'p',
            _ => b't',
        },
        no_dur,
    })
}

fn id_text(t: &str) -> &str {
    t.strip_prefix('"')
        .and_then(|t| t.strip_suffix('"'))
        .unwrap_or(t)
}

/// Microseconds (a JSON number, or a string holding one) → nanoseconds, rounded half
/// away from zero from the decimal digits. `None` when it is not a number or does not fit
/// an `i64`.
pub(crate) fn micros_to_ns(raw: &str) -> Option<i64> {
    let t = raw.trim();
    let t = t
        .strip_prefix('"')
        .and_then(|t| t.strip_suffix('"'))
        .unwrap_or(t)
        .trim();
    let b = t.as_bytes();
    let mut i = 0;
    let neg = b.first() == Some(&b'-');
    if neg {
        i += 1;
    }
    // Significant digits (at most 37, so the u128 never overflows) and a power of ten.
    const CAP: u128 = 10u128.pow(37);
    let mut digits: u128 = 0;
    let mut exp10: i64 = 3; // µs → ns
    let mut any = false;
    let mut round_up = false;
    while i < b.len() && b[i].is_ascii_digit() {
        any = true;
        if digits < CAP {
            digits = digits * 10 + u128::from(b[i] - b'0');
        } else {
            exp10 += 1;
        }
        i += 1;
    }
    if i < b.len() && b[i] == b'.' {
        i += 1;
        while i < b.len() && b[i].is_ascii_digit() {
            any = true;
            if digits < CAP {
                digits = digits * 10 + u128::from(b[i] - b'0');
                exp10 -= 1;
            }
            i += 1;
        }
    }
    if !any {
        return None;
    }
    if i < b.len() && (b[i] == b'e' || b[i] == b'E') {
        i += 1;
        let eneg = b.get(i) == Some(&b'-');
        if matches!(b.get(i), Some(b'-' | b'+')) {
            i += 1;
        }
        let mut e: i64 = 0;
        let mut edigits = false;
        while i < b.len() && b[i].is_ascii_digit() {
            edigits = true;
            e = (e * 10 + i64::from(b[i] - b'0')).min(100_000);
            i += 1;
        }
        if !edigits {
            return None;
        }
        exp10 += if eneg { -e } else { e };
    }
    if i != b.len() {
        return None;
    }
    let value: u128 = if exp10 >= 0 {
        if digits == 0 {
            0
        } else if exp10 > 38 {
            return None;
        } else {
            digits.checked_mul(10u128.pow(exp10 as u32))?
        }
    } else {
        let k = -exp10;
        if k > 38 {
            0
        } else {
            let p = 10u128.pow(k as u32);
            let q = digits / p;
            let r = digits % p;
            round_up = r * 2 >= p && r > 0;
            q
        }
    };
    let value = value + u128::from(round_up);
    if neg {
        if value > i64::MAX as u128 + 1 {
            return None;
        }
        Some((value as i128).wrapping_neg() as i64)
    } else {
        i64::try_from(value).ok()
    }
}

/// `args` read by a run: keys interned, values in one text arena; events refer to a
/// range of `pairs`. No allocation per event or per pair.
#[derive(Default)]
struct ArgStore {
    keys: Names,
    pairs: Vec<AttrPair>,
    text: String,
}

impl ArgStore {
    fn pair(&mut self, key: &str, value: &str) -> AttrPair {
        let start = self.text.len() as u64;
        self.text.push_str(value);
        AttrPair {
            key: self.keys.intern(key),
            start,
            len: value.len() as u32,
        }
    }

    /// Stores an `args` object's members (strings as their text, anything else as its
    /// JSON); a non-object, or one this reader cannot follow, is kept whole as `args`.
    fn add(&mut self, raw: &str) -> (u32, u32) {
        let first = self.pairs.len();
        let text_len = self.text.len();
        if self.members(raw).is_err() {
            self.pairs.truncate(first);
            self.text.truncate(text_len);
            let p = self.pair("args", raw);
            self.pairs.push(p);
        }
        (first as u32, (self.pairs.len() - first) as u32)
    }

    fn members(&mut self, raw: &str) -> Result<(), ScanErr> {
        let b = raw.as_bytes();
        let syntax = |i| ScanErr::Syntax(i, String::new());
        if b.first() != Some(&b'{') {
            return Err(syntax(0));
        }
        let mut i = skip_ws(b, 1);
        if b.get(i) == Some(&b'}') {
            return Ok(());
        }
        loop {
            if b.get(i) != Some(&b'"') {
                return Err(syntax(i));
            }
            let (key, after) = scan_string(b, i)?;
            i = skip_ws(b, after);
            if b.get(i) != Some(&b':') {
                return Err(syntax(i));
            }
            i = skip_ws(b, i + 1);
            let (value, after) = if b.get(i) == Some(&b'"') {
                scan_string(b, i)?
            } else {
                let (v, e) = scan_raw(b, i)?;
                (Cow::Borrowed(v), e)
            };
            let p = self.pair(&key, &value);
            self.pairs.push(p);
            i = skip_ws(b, after);
            match b.get(i) {
                Some(b',') => i = skip_ws(b, i + 1),
                Some(b'}') => return Ok(()),
                _ => return Err(syntax(i)),
            }
        }
    }

    /// Moves `other` to the end of this store; returns the index its first pair got.
    fn append(&mut self, other: ArgStore) -> u32 {
        let base = self.pairs.len() as u32;
        let text_base = self.text.len() as u64;
        let keys: Vec<NameId> = other
            .keys
            .iter()
            .map(|(_, k)| self.keys.intern(k))
            .collect();
        self.pairs.extend(other.pairs.iter().map(|p| AttrPair {
            key: keys[p.key as usize],
            start: p.start + text_base,
            len: p.len,
        }));
        self.text.push_str(&other.text);
        base
    }
}

// ---------------------------------------------------------------------------------------
// Linking events into spans.

/// A span before it gets its final index.
struct Pending {
    start: i64,
    end: i64,
    /// The event that opened it (args, async id).
    rec: u32,
    /// The `E` event that closed it (its args are merged), or `u32::MAX`.
    close: u32,
    /// Parent, as an index into the same track's pending list, or `u32::MAX`.
    parent: u32,
    name: NameId,
    cat: NameId,
    /// Bit 0: the opening event has args; bit 1: the closing one; bit 2: an async id.
    flags: u8,
}

const OWN_ARGS: u8 = 1;
const CLOSE_ARGS: u8 = 2;
const HAS_ID: u8 = 4;

/// What linking needs of a thread event, copied out of its `Rec` so the per-thread
/// passes read small contiguous records instead of events scattered over memory. Sorts
/// by time, then file order.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Slim {
    ts: i64,
    k: u32,
    name: NameId,
    dur: i64,
    cat: NameId,
    ph: u8,
    flags: u8,
}

impl Slim {
    fn of(r: &Rec<'_>, ts: i64, k: u32) -> Slim {
        Slim {
            ts,
            k,
            name: r.name,
            dur: r.dur_ns,
            cat: r.cat,
            ph: r.ph,
            flags: if r.args.1 == 0 { 0 } else { OWN_ARGS }
                | if r.id().is_some() { HAS_ID } else { 0 },
        }
    }

    fn pending(&self, start: i64, end: i64) -> Pending {
        Pending {
            start,
            end,
            rec: self.k,
            close: u32::MAX,
            parent: u32::MAX,
            name: self.name,
            cat: self.cat,
            flags: self.flags,
        }
    }
}

/// Tracks under construction, keyed by what they stand for.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
enum TrackKey<'a> {
    Thread(Pid<'a>, Pid<'a>),
    Async(Pid<'a>),
}

#[derive(Default)]
struct Counts {
    e_without_b: u64,
    unclosed_b: u64,
    name_mismatch: u64,
    partial_overlap: u64,
    e_async_without_b: u64,
    unclosed_async: u64,
    async_closed_by_parent: u64,
    f_without_s: u64,
    steps: u64,
    no_dur: u64,
    negative_dur: u64,
    no_ts: u64,
    no_ph: u64,
    async_without_id: u64,
    skipped: std::collections::BTreeMap<u8, u64>,
}

/// A thread's `thread_name` and `thread_sort_index`.
type ThreadMeta<'a> = (Option<Cow<'a, str>>, i64);

#[derive(Default)]
struct Process<'a> {
    name: Option<Cow<'a, str>>,
    sort_index: i64,
}

/// Hash maps keyed by small ids: foldhash, as the name interner uses.
type FastMap<K, V> = HashMap<K, V, foldhash::fast::FixedState>;

/// What matches async events to each other: the process for local ids, category, id,
/// scope, and for legacy `S`/`T`/`p`/`F` events also the name. `None` without an id.
type AsyncKey<'k> = (Option<Pid<'k>>, NameId, IdText<'k>, &'k str, NameId);

fn async_key<'r>(r: &'r Rec<'_>) -> Option<AsyncKey<'r>> {
    let (id, local) = r.id()?;
    let legacy = matches!(r.ph, b'S' | b'T' | b'p' | b'F');
    Some((
        local.then_some(r.pid),
        r.cat,
        id,
        r.scope(),
        if legacy { r.name } else { NO_NAME },
    ))
}

fn build(recs: Vec<Rec<'_>>, mut names: Names, store: ArgStore, doc: Doc) -> SpanSet {
    let mut c = Counts::default();

    // Metadata, and the trace's end (for spans never closed).
    let mut processes: FastMap<Pid<'_>, Process<'_>> = FastMap::default();
    let mut thread_names: FastMap<(Pid<'_>, Pid<'_>), ThreadMeta<'_>> = FastMap::default();
    let mut trace_end = i64::MIN;
    let mut async_count = 0;
    for r in &recs {
        async_count += usize::from(r.id.is_some());
        if let Some(ts) = r.ts() {
            let d = if r.dur_ns == NONE { 0 } else { r.dur_ns.max(0) };
            trace_end = trace_end.max(ts.saturating_add(d));
        }
        if r.ph != b'M' {
            continue;
        }
        #[derive(Deserialize)]
        struct MetaArgs<'b> {
            #[serde(borrow, default)]
            name: Option<Cow<'b, str>>,
            #[serde(borrow, default)]
            sort_index: Option<&'b RawValue>,
        }
        let Some((args, name)) = r
            .extra
            .as_ref()
            .and_then(|e| Some((e.meta_args?, e.meta_name.as_deref()?)))
        else {
            continue;
        };
        let Ok(m) = serde_json::from_str::<MetaArgs<'_>>(args) else {
            continue;
        };
        let sort = m
            .sort_index
            .and_then(|s| s.get().parse::<i64>().ok())
            .unwrap_or(0);
        match name {
            "process_name" => processes.entry(r.pid).or_default().name = m.name,
            "process_sort_index" => processes.entry(r.pid).or_default().sort_index = sort,
            "thread_name" => thread_names.entry((r.pid, r.tid)).or_default().0 = m.name,
            "thread_sort_index" => thread_names.entry((r.pid, r.tid)).or_default().1 = sort,
            _ => {}
        }
    }
    let trace_end = trace_end.max(0);

    // Group span events by track (threads) or async key, as (ts, event) pairs.
    fn intern_track<'r>(
        track_of: &mut FastMap<TrackKey<'r>, u32>,
        tracks: &mut Vec<TrackKey<'r>>,
        per_track: &mut Vec<Vec<Slim>>,
        key: TrackKey<'r>,
    ) -> u32 {
        *track_of.entry(key).or_insert_with(|| {
            tracks.push(key);
            per_track.push(Vec::new());
            tracks.len() as u32 - 1
        })
    }
    let mut tracks: Vec<TrackKey<'_>> = Vec::new();
    let mut track_of: FastMap<TrackKey<'_>, u32> = FastMap::default();
    let mut per_track: Vec<Vec<Slim>> = Vec::new();
    // Async events: a group per key, numbered in order of first appearance. The table
    // holds only group numbers; a group's key is read back from its first event, so a
    // million distinct ids cost 4 bytes of table each, and no allocation.
    let hasher = foldhash::fast::FixedState::default();
    let mut async_table: HashTable<u32> = HashTable::new();
    let mut group_hash: Vec<u64> = Vec::new();
    let mut group_first: Vec<u32> = Vec::new();
    // (group, event) of every async event, in file order.
    let mut async_events: Vec<(u32, u32)> = Vec::with_capacity(async_count);
    // The `e` of an async span usually follows its `b` closely: a small direct-mapped
    // cache of recently used groups (in L1/L2) answers it without a probe into the large
    // table, whose random accesses made matching memory-latency bound.
    const RECENT_GROUPS: usize = 4096;
    let mut recent = vec![(0u64, u32::MAX); RECENT_GROUPS];
    async_table.reserve(async_count / 2, |&g| group_hash[g as usize]);
    // Consecutive events are often on the same thread: skip the hash then.
    let mut last_thread: Option<(Pid<'_>, Pid<'_>, u32)> = None;
    for (k, r) in recs.iter().enumerate() {
        let k = k as u32;
        if r.ph == 0 {
            c.no_ph += 1;
            continue;
        }
        let is_span = matches!(
            r.ph,
            b'X' | b'B'
                | b'E'
                | b'i'
                | b'I'
                | b'R'
                | b'b'
                | b'e'
                | b'n'
                | b'S'
                | b'T'
                | b'p'
                | b'F'
        );
        if !is_span {
            if r.ph != b'M' {
                *c.skipped.entry(r.ph).or_default() += 1;
            }
            continue;
        }
        let Some(ts) = r.ts() else {
            c.no_ts += 1;
            continue;
        };
        match r.ph {
            b'b' | b'e' | b'n' | b'S' | b'T' | b'p' | b'F' => {
                let Some(key) = async_key(r) else {
                    c.async_without_id += 1;
                    continue;
                };
                let h = hasher.hash_one(key);
                let same = |g: u32| {
                    group_hash[g as usize] == h
                        && async_key(&recs[group_first[g as usize] as usize]) == Some(key)
                };
                let slot = (h >> 32) as usize % RECENT_GROUPS;
                let (rh, rg) = recent[slot];
                let g = if rh == h && rg != u32::MAX && same(rg) {
                    rg
                } else if let Some(&g) = async_table.find(h, |&g| same(g)) {
                    g
                } else {
                    let g = group_first.len() as u32;
                    group_first.push(k);
                    group_hash.push(h);
                    async_table.insert_unique(h, g, |&g| group_hash[g as usize]);
                    g
                };
                recent[slot] = (h, g);
                async_events.push((g, k));
            }
            _ => {
                let t = if matches!(r.ph, b'i' | b'I' | b'R') && r.instant_scope != b't' {
                    intern_track(
                        &mut track_of,
                        &mut tracks,
                        &mut per_track,
                        TrackKey::Async(r.pid),
                    )
                } else {
                    match last_thread {
                        Some((p, t, id)) if p == r.pid && t == r.tid => id,
                        _ => {
                            let id = intern_track(
                                &mut track_of,
                                &mut tracks,
                                &mut per_track,
                                TrackKey::Thread(r.pid, r.tid),
                            );
                            last_thread = Some((r.pid, r.tid, id));
                            id
                        }
                    }
                };
                if r.no_dur {
                    c.no_dur += 1;
                }
                per_track[t as usize].push(Slim::of(r, ts, k));
            }
        }
    }

    // Threads: B/E matching, X, instants; then nesting by containment. `pending[t]` holds
    // track t's spans, parents as indices into the same list.
    let mut pending: Vec<Vec<Pending>> = Vec::with_capacity(tracks.len());
    for evs in per_track.iter_mut() {
        let mut evs = std::mem::take(evs);
        // (ts, event) pairs are unique: an unstable sort keeps file order among equal
        // timestamps, like a stable sort by ts.
        if !evs.is_sorted() {
            evs.sort_unstable();
        }
        let mut spans: Vec<Pending> = Vec::with_capacity(evs.len());
        let mut open: Vec<Slim> = Vec::new();
        for e in &evs {
            let at = e.ts;
            match e.ph {
                b'B' => open.push(*e),
                b'E' => match open.pop() {
                    Some(b) => {
                        if e.name != NO_NAME && e.name != b.name {
                            c.name_mismatch += 1;
                        }
                        let mut p = b.pending(b.ts, at);
                        p.close = e.k;
                        if e.flags & OWN_ARGS != 0 {
                            p.flags |= CLOSE_ARGS;
                        }
                        spans.push(p);
                    }
                    None => c.e_without_b += 1,
                },
                b'X' => {
                    let mut d = if e.dur == NONE { 0 } else { e.dur };
                    if d < 0 {
                        c.negative_dur += 1;
                        d = 0;
                    }
                    spans.push(e.pending(at, at.saturating_add(d)));
                }
                _ => spans.push(e.pending(at, at)),
            }
        }
        for b in open {
            c.unclosed_b += 1;
            spans.push(b.pending(b.ts, trace_end.max(b.ts)));
        }
        // Nesting by containment: start, longer first, file order.
        spans.sort_unstable_by_key(|p| (p.start, std::cmp::Reverse(p.end), p.rec));
        let mut stack: Vec<usize> = Vec::new();
        for i in 0..spans.len() {
            let (s0, e0) = (spans[i].start, spans[i].end);
            while let Some(&top) = stack.last() {
                let te = spans[top].end;
                // A zero-length span contains nothing; `s0 >= top start` by the sort.
                if s0 < te && e0 <= te {
                    break;
                }
                if s0 < te {
                    c.partial_overlap += 1;
                }
                stack.pop();
            }
            spans[i].parent = stack.last().map_or(u32::MAX, |&p| p as u32);
            stack.push(i);
        }
        pending.push(spans);
    }

    // Async groups: their events gathered group by group (a counting sort, file order
    // kept within a group), each group's sorted by time.
    drop(async_table);
    let groups = group_first.len();
    let mut group_start = vec![0u32; groups + 1];
    for &(g, _) in &async_events {
        group_start[g as usize + 1] += 1;
    }
    for g in 0..groups {
        group_start[g + 1] += group_start[g];
    }
    let mut by_group = vec![0u32; async_events.len()];
    {
        let mut fill = group_start.clone();
        for &(g, k) in &async_events {
            by_group[fill[g as usize] as usize] = k;
            fill[g as usize] += 1;
        }
    }
    drop(async_events);
    let mut evs: Vec<Slim> = Vec::new();
    let mut open: Vec<usize> = Vec::new(); // indices into the track's list
    let mut legacy_open: Vec<usize> = Vec::new();
    let mut last_async: Option<(Pid<'_>, usize)> = None;
    for g in 0..groups {
        evs.clear();
        evs.extend(
            by_group[group_start[g] as usize..group_start[g + 1] as usize]
                .iter()
                .map(|&k| {
                    let r = &recs[k as usize];
                    Slim::of(r, r.ts_ns, k)
                }),
        );
        if !evs.is_sorted() {
            evs.sort_unstable();
        }
        let pid = recs[evs[0].k as usize].pid;
        let t = match last_async {
            Some((p, t)) if p == pid => t,
            _ => {
                let t = intern_track(
                    &mut track_of,
                    &mut tracks,
                    &mut per_track,
                    TrackKey::Async(pid),
                ) as usize;
                last_async = Some((pid, t));
                t
            }
        };
        if t >= pending.len() {
            pending.resize_with(t + 1, Vec::new);
        }
        let list = &mut pending[t];
        open.clear();
        legacy_open.clear();
        for e in evs.iter() {
            let (at, k) = (e.ts, e.k);
            let parent = open.last().map_or(u32::MAX, |&p| p as u32);
            match e.ph {
                b'b' => {
                    let mut p = e.pending(at, i64::MIN);
                    p.parent = parent;
                    list.push(p);
                    open.push(list.len() - 1);
                }
                b'n' => {
                    let mut p = e.pending(at, at);
                    p.parent = parent;
                    list.push(p);
                }
                b'e' => {
                    // A named e closes the latest open b of that name (b's opened inside
                    // it and still open end with it); an unnamed e closes the latest b.
                    let pos = if e.name == NO_NAME {
                        open.len().checked_sub(1)
                    } else {
                        open.iter().rposition(|&o| list[o].name == e.name)
                    };
                    match pos {
                        Some(p) => {
                            let end = at.max(list[open[p]].start);
                            for o in open.drain(p + 1..) {
                                c.async_closed_by_parent += 1;
                                list[o].end = end.max(list[o].start);
                            }
                            if let Some(o) = open.pop() {
                                list[o].end = end;
                                list[o].close = k;
                                if e.flags & OWN_ARGS != 0 {
                                    list[o].flags |= CLOSE_ARGS;
                                }
                            }
                        }
                        None => c.e_async_without_b += 1,
                    }
                }
                b'S' => {
                    list.push(e.pending(at, i64::MIN));
                    legacy_open.push(list.len() - 1);
                }
                b'F' => match legacy_open.pop() {
                    Some(o) => {
                        list[o].end = at.max(list[o].start);
                        list[o].close = k;
                        if e.flags & OWN_ARGS != 0 {
                            list[o].flags |= CLOSE_ARGS;
                        }
                    }
                    None => c.f_without_s += 1,
                },
                _ => c.steps += 1, // T, p
            }
        }
        for &o in open.iter().chain(&legacy_open) {
            c.unclosed_async += 1;
            list[o].end = trace_end.max(list[o].start);
        }
    }
    pending.resize_with(tracks.len(), Vec::new);

    // Track order and names.
    let proc_name = |pid: Pid<'_>| -> String {
        match processes.get(&pid).and_then(|p| p.name.as_deref()) {
            Some(n) if !n.is_empty() => format!("{n} {pid}"),
            _ => format!("Process {pid}"),
        }
    };
    let proc_sort = |pid: Pid<'_>| processes.get(&pid).map_or(0, |p| p.sort_index);
    let mut order: Vec<u32> = (0..tracks.len() as u32).collect();
    order.sort_by_key(|&t| match tracks[t as usize] {
        TrackKey::Async(pid) => (proc_sort(pid), pid, 0, 0, Pid::Num(i64::MIN)),
        TrackKey::Thread(pid, tid) => (
            proc_sort(pid),
            pid,
            1,
            thread_names.get(&(pid, tid)).map_or(0, |t| t.1),
            tid,
        ),
    });
    let mut out_tracks = Vec::with_capacity(order.len());
    let mut out_info = Vec::with_capacity(order.len());
    let as_num = |p: Pid<'_>| match p {
        Pid::Num(n) => Some(n),
        Pid::Text(_) => None,
    };
    for &t in &order {
        match tracks[t as usize] {
            TrackKey::Async(pid) => {
                out_tracks.push(Track::new(format!("{} — async", proc_name(pid))));
                out_info.push(TrackInfo {
                    kind: TrackKind::Async,
                    group: proc_name(pid),
                    pid: as_num(pid),
                    tid: None,
                    sort_index: proc_sort(pid),
                });
            }
            TrackKey::Thread(pid, tid) => {
                let (name, sort) = thread_names
                    .get(&(pid, tid))
                    .map_or((None, 0), |(n, s)| (n.as_deref(), *s));
                let name = match name {
                    Some(n) if !n.is_empty() => format!("{n} {tid}"),
                    _ => format!("Thread {tid}"),
                };
                out_tracks.push(Track::new(name));
                out_info.push(TrackInfo {
                    kind: TrackKind::Thread,
                    group: proc_name(pid),
                    pid: as_num(pid),
                    tid: as_num(tid),
                    sort_index: sort,
                });
            }
        }
    }

    // Emit spans track by track.
    let total: usize = pending.iter().map(Vec::len).sum();
    let origin = pending.iter().flatten().map(|p| p.start).min().unwrap_or(0);
    let mut set = SpanSet {
        origin_ns: origin.max(0) as u64,
        ..SpanSet::default()
    };
    set.start_ns.reserve(total);
    set.dur_ns.reserve(total);
    set.parent.reserve(total);
    set.name.reserve(total);
    set.track.reserve(total);
    let any_cat = recs.iter().any(|r| r.cat != NO_NAME);
    if any_cat {
        set.category.reserve(total);
    }
    let ArgStore {
        keys,
        pairs: arg_pairs,
        text: arg_text,
    } = store;
    let mut attrs = SpanAttrs::from_parts(keys, arg_text);
    let mut unnamed = None;
    let mut no_cat = None;
    for (new_t, &t) in order.iter().enumerate() {
        let base = set.len() as u32;
        for p in &pending[t as usize] {
            let i = set.len() as u32;
            set.start_ns.push(p.start.abs_diff(origin));
            set.dur_ns.push(p.end.saturating_sub(p.start).max(0) as u64);
            set.parent.push(if p.parent == u32::MAX {
                NO_PARENT
            } else {
                base + p.parent
            });
            set.name.push(if p.name == NO_NAME {
                *unnamed.get_or_insert_with(|| names.intern("(unnamed)"))
            } else {
                p.name
            });
            set.track.push(new_t as u32);
            if any_cat {
                set.category.push(if p.cat == NO_NAME {
                    *no_cat.get_or_insert_with(|| names.intern(""))
                } else {
                    p.cat
                });
            }
            if p.flags == 0 {
                continue;
            }
            // The pairs point into the arena the runs filled: nothing is copied.
            attrs.begin(i);
            if p.flags & HAS_ID != 0
                && let Some((id, _)) = recs[p.rec as usize].id()
            {
                let pair = attrs.intern_pair("id", id.as_str());
                attrs.push_pair(pair);
            }
            for (flag, k) in [(OWN_ARGS, p.rec), (CLOSE_ARGS, p.close)] {
                if p.flags & flag != 0 {
                    let (first, n) = recs[k as usize].args;
                    for &pair in &arg_pairs[first as usize..(first + n) as usize] {
                        attrs.push_pair(pair);
                    }
                }
            }
        }
    }
    attrs.finish();
    set.names = names;
    set.attrs = attrs;
    set.tracks = out_tracks;
    set.track_info = out_info;
    if let Some(u) = doc.display_time_unit {
        set.meta.push(("displayTimeUnit".to_string(), u));
    }
    set.warnings = warnings(&c, doc.notes);
    set
}

fn plural(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

fn warnings(c: &Counts, notes: Vec<String>) -> Warnings {
    let mut w = Warnings {
        notes,
        ..Warnings::default()
    };
    let mut note = |n: u64, text: String| {
        if n > 0 {
            w.notes.push(text);
        }
    };
    note(
        c.e_without_b,
        format!(
            "{} with no open B on its thread skipped",
            plural(c.e_without_b, "E event", "E events")
        ),
    );
    note(
        c.unclosed_b,
        format!(
            "{} never closed by E: ended at the trace's last timestamp",
            plural(c.unclosed_b, "B event", "B events")
        ),
    );
    note(
        c.name_mismatch,
        format!(
            "{} closed a B of another name (matched by nesting, as Chrome does)",
            plural(c.name_mismatch, "E event", "E events")
        ),
    );
    note(
        c.partial_overlap,
        format!(
            "{} partially overlapping an enclosing span on the same thread (drawn beside it, not inside)",
            plural(c.partial_overlap, "span", "spans")
        ),
    );
    note(
        c.no_dur,
        format!(
            "{} without dur (tdur used when present, else zero)",
            plural(c.no_dur, "X event", "X events")
        ),
    );
    note(
        c.negative_dur,
        format!(
            "{} with a negative dur drawn as instants",
            plural(c.negative_dur, "X event", "X events")
        ),
    );
    note(
        c.no_ts,
        format!("{} without ts skipped", plural(c.no_ts, "event", "events")),
    );
    note(
        c.no_ph,
        format!(
            "{} without a one-letter ph skipped",
            plural(c.no_ph, "event", "events")
        ),
    );
    note(
        c.async_without_id,
        format!(
            "{} without id skipped",
            plural(c.async_without_id, "async event", "async events")
        ),
    );
    note(
        c.e_async_without_b,
        format!(
            "{} with no open b of its id and name skipped",
            plural(c.e_async_without_b, "async e event", "async e events")
        ),
    );
    note(
        c.async_closed_by_parent,
        format!(
            "{} still open when an enclosing async span ended: ended with it",
            plural(c.async_closed_by_parent, "async span", "async spans")
        ),
    );
    note(
        c.unclosed_async,
        format!(
            "{} never closed: ended at the trace's last timestamp",
            plural(c.unclosed_async, "async span", "async spans")
        ),
    );
    note(
        c.f_without_s,
        format!(
            "{} with no open S skipped",
            plural(c.f_without_s, "F event", "F events")
        ),
    );
    note(
        c.steps,
        format!(
            "{} (ph T/p) not drawn: their S…F span is",
            plural(c.steps, "async step", "async steps")
        ),
    );
    for (&ph, &n) in &c.skipped {
        let what = match ph {
            b'C' => "counter",
            b'O' | b'N' | b'D' => "object",
            b's' | b't' | b'f' => "flow",
            b'P' => "sample",
            b'v' | b'V' => "memory dump",
            b'c' => "clock sync",
            b'a' => "mark",
            _ => "unsupported",
        };
        let ph = char::from(ph);
        w.notes.push(format!(
            "{} (ph '{}') skipped: not drawn as spans",
            plural(n, &format!("{what} event"), &format!("{what} events")),
            ph.escape_default()
        ));
    }
    w
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::spans::SpanTree;

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
