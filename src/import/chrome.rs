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
//! **Speed.** No `serde_json::Value` tree for the document: a byte scanner (string and
//! escape aware, `memchr` jumps inside strings) finds the `{…}` boundaries of the events,
//! then each event is deserialized on its own into a borrowed struct (`Cow<str>` names,
//! `&RawValue` for numbers, ids and `args`). From 8 MiB up the events are split into
//! contiguous chunks of about equal bytes and parsed on all cores with
//! `std::thread::scope`; chunks are concatenated in order, so the result (and the first
//! error) is the sequential one. Linking events into spans is one sequential pass.
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
//! - `i`/`I`/`R`: instants, zero-duration spans.
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
//! span attributes, `cat` the span's category. Every pass is a loop with explicit stacks:
//! B/E nesting a hundred thousand deep costs no call stack.

use super::ImportError;
use crate::model::names::{NameId, Names};
use crate::model::spans::{SpanAttrs, SpanSet, Track, TrackInfo, TrackKind};
use crate::model::{NO_PARENT, Warnings};
use serde::Deserialize;
use serde::de::{self, MapAccess, Visitor};
use serde_json::value::RawValue;
use std::borrow::Cow;
use std::collections::HashMap;

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
    let doc = locate(file, text)?;
    let recs = if threads > 1 && text.len() >= min_parallel_bytes && doc.events.len() > 1 {
        parse_parallel(file, text, &doc.events, threads)?
    } else {
        parse_events(file, text, &doc.events, 0)?
    };
    Ok(build(recs, doc))
}

// ---------------------------------------------------------------------------------------
// Scanning: where the events are.

/// The document's layout: event byte ranges and what the top level said.
struct Doc {
    events: Vec<(usize, usize)>,
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

/// `text[i]` is `{`; returns the index after its matching `}`, counting only braces (an
/// event's arrays need no tracking to find its end).
fn skip_object(text: &[u8], mut i: usize) -> Option<usize> {
    let mut depth = 0usize;
    loop {
        let k = i + memchr::memchr3(b'"', b'{', b'}', &text[i..])?;
        match text[k] {
            b'"' => i = skip_string(text, k + 1)?,
            b'{' => {
                depth += 1;
                i = k + 1;
            }
            _ => {
                depth -= 1;
                i = k + 1;
                if depth == 0 {
                    return Some(i);
                }
            }
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

/// How the traceEvents array ended.
enum ArrayEnd {
    /// Closed by `]` at this index.
    Closed(usize),
    /// The input ends after a complete event (and maybe a comma).
    Open,
    /// The input ends inside an event, which starts at this byte.
    CutEvent(usize),
}

fn scan_array(
    file: &str,
    text: &[u8],
    mut i: usize,
    events: &mut Vec<(usize, usize)>,
) -> Result<ArrayEnd, ImportError> {
    loop {
        i = skip_ws(text, i);
        let Some(&b) = text.get(i) else {
            return Ok(ArrayEnd::Open);
        };
        match b {
            b']' => return Ok(ArrayEnd::Closed(i + 1)),
            b',' => i += 1,
            b'{' => match skip_object(text, i) {
                Some(end) => {
                    events.push((i, end));
                    i = end;
                }
                None => return Ok(ArrayEnd::CutEvent(i)),
            },
            other => {
                return Err(err_at(
                    file,
                    text,
                    i,
                    &format!("traceEvents[{}]", events.len()),
                    format!(
                        "expected an event object `{{…}}`, found `{}`",
                        char::from(other).escape_default()
                    ),
                ));
            }
        }
    }
}

/// Finds the events of an array-form or object-form trace.
fn locate(file: &str, text: &[u8]) -> Result<Doc, ImportError> {
    let mut doc = Doc {
        events: Vec::new(),
        display_time_unit: None,
        notes: Vec::new(),
    };
    let start = skip_ws(text, 0);
    let end = match text.get(start) {
        Some(b'[') => scan_array(file, text, start + 1, &mut doc.events)?,
        Some(b'{') => {
            let mut end = None;
            let mut i = start + 1;
            loop {
                i = skip_ws(text, i);
                match text.get(i) {
                    None => break,
                    Some(b'}') => break,
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
                if key == b"traceEvents" {
                    if text.get(i) != Some(&b'[') {
                        return Err(err_at(
                            file,
                            text,
                            i,
                            "traceEvents",
                            "expected an array of events".to_string(),
                        ));
                    }
                    let e = scan_array(file, text, i + 1, &mut doc.events)?;
                    match e {
                        ArrayEnd::Closed(after) => {
                            end = Some(e);
                            i = after;
                            continue;
                        }
                        other => {
                            end = Some(other);
                            break;
                        }
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
            match end {
                Some(e) => e,
                None => {
                    return Err(err_at(
                        file,
                        text,
                        start,
                        "top level",
                        "expected a traceEvents array (an object without one is not a Chrome trace)"
                            .to_string(),
                    ));
                }
            }
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
        ArrayEnd::Closed(_) => {}
        ArrayEnd::Open => doc.notes.push(format!(
            "the traceEvents array is not closed by `]` (a trace written while still \
             recording); all {} events loaded",
            doc.events.len()
        )),
        ArrayEnd::CutEvent(at) => {
            let (line, column) = line_col(text, at);
            doc.notes.push(format!(
                "the input ends inside traceEvents[{}] (line {line}, column {column}): \
                 truncated file; that event was dropped, the {} before it loaded",
                doc.events.len(),
                doc.events.len()
            ));
        }
    }
    Ok(doc)
}

// ---------------------------------------------------------------------------------------
// Parsing events (in parallel for large inputs).

#[derive(Deserialize)]
struct Ev<'a> {
    #[serde(borrow, default)]
    ph: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    name: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    cat: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    ts: Option<&'a RawValue>,
    #[serde(borrow, default)]
    dur: Option<&'a RawValue>,
    #[serde(borrow, default)]
    tdur: Option<&'a RawValue>,
    #[serde(borrow, default)]
    pid: Option<&'a RawValue>,
    #[serde(borrow, default)]
    tid: Option<&'a RawValue>,
    #[serde(borrow, default)]
    id: Option<&'a RawValue>,
    #[serde(borrow, default)]
    id2: Option<&'a RawValue>,
    #[serde(borrow, default)]
    scope: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    s: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    args: Option<&'a RawValue>,
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

fn pid_of(raw: Option<&RawValue>) -> Pid<'_> {
    let Some(raw) = raw else {
        return Pid::Num(0);
    };
    let t = raw.get();
    let inner = t
        .strip_prefix('"')
        .and_then(|t| t.strip_suffix('"'))
        .unwrap_or(t);
    match inner.trim().parse::<i64>() {
        Ok(n) => Pid::Num(n),
        Err(_) => Pid::Text(inner),
    }
}

/// One event, as far as linking needs it.
struct Rec<'a> {
    /// The phase letter (0 for a missing, empty or multi-letter phase).
    ph: u8,
    ts_ns: Option<i64>,
    dur_ns: Option<i64>,
    pid: Pid<'a>,
    tid: Pid<'a>,
    name: Cow<'a, str>,
    cat: Cow<'a, str>,
    /// Async id as text, with whether it is process-local.
    id: Option<(Cow<'a, str>, bool)>,
    scope: Cow<'a, str>,
    /// Instant scope (`s`): b'g', b'p' or b't'.
    instant_scope: u8,
    /// `args` of metadata events, kept raw.
    meta_args: Option<&'a RawValue>,
    /// `args` of span events as text pairs (empty: no allocation).
    attrs: Vec<(String, String)>,
    /// `dur` was absent on an X event.
    no_dur: bool,
}

fn parse_parallel<'a>(
    file: &str,
    text: &'a [u8],
    events: &[(usize, usize)],
    threads: usize,
) -> Result<Vec<Rec<'a>>, ImportError> {
    // Contiguous chunks of about equal bytes, cut at event boundaries.
    let total = events.last().map_or(0, |e| e.1) - events.first().map_or(0, |e| e.0);
    let per = total / threads + 1;
    let mut cuts = vec![0usize];
    let base = events[0].0;
    for k in 1..threads {
        let target = base + per * k;
        let at = events.partition_point(|e| e.0 < target);
        if at > *cuts.last().unwrap_or(&0) && at < events.len() {
            cuts.push(at);
        }
    }
    cuts.push(events.len());
    let results: Vec<Result<Vec<Rec<'a>>, ImportError>> = std::thread::scope(|scope| {
        let handles: Vec<_> = cuts
            .windows(2)
            .map(|w| {
                let (a, b) = (w[0], w[1]);
                scope.spawn(move || parse_events(file, text, &events[a..b], a))
            })
            .collect();
        handles
            .into_iter()
            .map(|h| match h.join() {
                Ok(r) => r,
                Err(p) => std::panic::resume_unwind(p),
            })
            .collect()
    });
    let mut out = Vec::with_capacity(events.len());
    for r in results {
        out.extend(r?);
    }
    Ok(out)
}

fn parse_events<'a>(
    file: &str,
    text: &'a [u8],
    events: &[(usize, usize)],
    first_index: usize,
) -> Result<Vec<Rec<'a>>, ImportError> {
    let mut out = Vec::with_capacity(events.len());
    for (k, &(a, b)) in events.iter().enumerate() {
        let index = first_index + k;
        out.push(parse_event(file, text, a, b, index)?);
    }
    Ok(out)
}

fn parse_event<'a>(
    file: &str,
    text: &'a [u8],
    a: usize,
    b: usize,
    index: usize,
) -> Result<Rec<'a>, ImportError> {
    let what = || format!("traceEvents[{index}]");
    let ev: Ev<'a> = serde_json::from_slice(&text[a..b]).map_err(|e| {
        // Position of the error inside the whole input.
        let (l0, c0) = line_col(text, a);
        let (line, column) = if e.line() <= 1 {
            (l0, c0 + e.column().saturating_sub(1))
        } else {
            (l0 + e.line() - 1, e.column())
        };
        let m = e.to_string();
        let m = m
            .rfind(" at line ")
            .map_or(m.clone(), |i| m[..i].to_string());
        ImportError::Invalid {
            file: file.to_string(),
            location: format!("{} (line {line}, column {column})", what()),
            message: m,
        }
    })?;
    let number = |field: &str, raw: Option<&RawValue>| -> Result<Option<i64>, ImportError> {
        let Some(raw) = raw else { return Ok(None) };
        if raw.get() == "null" {
            return Ok(None);
        }
        micros_to_ns(raw.get()).map(Some).ok_or_else(|| {
            let shown: String = raw.get().chars().take(40).collect();
            err_at(
                file,
                text,
                a,
                &what(),
                format!("expected number {field} (microseconds within ±292 years), found {shown}"),
            )
        })
    };
    let ph = match ev.ph.as_deref().map(str::as_bytes) {
        Some([c]) => *c,
        _ => 0,
    };
    let ts_ns = number("ts", ev.ts)?;
    let mut dur_ns = number("dur", ev.dur)?;
    let mut no_dur = false;
    if ph == b'X' && dur_ns.is_none() {
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
            match serde_json::from_str::<Id2<'a>>(id2.get()) {
                Ok(Id2 { local: Some(l), .. }) => Some((id_text(l), true)),
                Ok(Id2 {
                    global: Some(g), ..
                }) => Some((id_text(g), false)),
                _ => Some((Cow::Borrowed(id2.get()), false)),
            }
        }
        (None, None) => None,
    };
    let spans = matches!(
        ph,
        b'X' | b'B' | b'E' | b'i' | b'I' | b'R' | b'b' | b'e' | b'n' | b'S'
    );
    let attrs = match ev.args {
        Some(args) if spans => args_pairs(args),
        _ => Vec::new(),
    };
    Ok(Rec {
        ph,
        ts_ns,
        dur_ns,
        pid: pid_of(ev.pid),
        tid: pid_of(ev.tid),
        name: ev.name.unwrap_or(Cow::Borrowed("")),
        cat: ev.cat.unwrap_or(Cow::Borrowed("")),
        id,
        scope: ev.scope.unwrap_or(Cow::Borrowed("")),
        instant_scope: match ev.s.as_deref() {
            Some("g") => b'g',
            Some("p") => b'p',
            _ => b't',
        },
        meta_args: if ph == b'M' { ev.args } else { None },
        attrs,
        no_dur,
    })
}

fn id_text(raw: &RawValue) -> Cow<'_, str> {
    let t = raw.get();
    match t.strip_prefix('"').and_then(|t| t.strip_suffix('"')) {
        Some(inner) => Cow::Borrowed(inner),
        None => Cow::Borrowed(t),
    }
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

/// `args` as `(key, value)` text pairs: strings as they are, anything else as its JSON.
fn args_pairs(args: &RawValue) -> Vec<(String, String)> {
    struct Pairs;
    impl<'de> Visitor<'de> for Pairs {
        type Value = Vec<(String, String)>;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("an object")
        }
        fn visit_map<M: MapAccess<'de>>(self, mut m: M) -> Result<Self::Value, M::Error> {
            let mut out = Vec::new();
            while let Some(k) = m.next_key::<Cow<'de, str>>()? {
                let v: &'de RawValue = m.next_value()?;
                out.push((k.into_owned(), value_text(v)));
            }
            Ok(out)
        }
    }
    let t = args.get();
    if t == "{}" || t == "null" {
        return Vec::new();
    }
    let mut de = serde_json::Deserializer::from_str(t);
    match de::Deserializer::deserialize_map(&mut de, Pairs) {
        Ok(v) => v,
        Err(_) => vec![("args".to_string(), t.to_string())],
    }
}

/// A JSON value as display text: a string unquoted, anything else as written.
pub(crate) fn value_text(v: &RawValue) -> String {
    let t = v.get();
    if t.starts_with('"') {
        serde_json::from_str::<String>(t).unwrap_or_else(|_| t.to_string())
    } else {
        t.to_string()
    }
}

// ---------------------------------------------------------------------------------------
// Linking events into spans.

/// A span before it gets its final index.
struct Pending {
    start: i64,
    end: i64,
    /// The event that opened it (name, category, args).
    rec: u32,
    /// The `E` event that closed it (its args are merged), or `u32::MAX`.
    close: u32,
    /// Parent, as an index into the same track's pending list (async), or `u32::MAX`.
    parent: u32,
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

fn build(recs: Vec<Rec<'_>>, doc: Doc) -> SpanSet {
    let mut c = Counts::default();

    // Metadata, and the trace's end (for spans never closed).
    let mut processes: HashMap<Pid<'_>, Process<'_>> = HashMap::new();
    let mut thread_names: HashMap<(Pid<'_>, Pid<'_>), ThreadMeta<'_>> = HashMap::new();
    let mut trace_end = i64::MIN;
    for r in &recs {
        if let Some(ts) = r.ts_ns {
            let end = ts.saturating_add(r.dur_ns.unwrap_or(0).max(0));
            trace_end = trace_end.max(end);
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
        let Some(args) = r.meta_args else { continue };
        let Ok(m) = serde_json::from_str::<MetaArgs<'_>>(args.get()) else {
            continue;
        };
        let sort = m
            .sort_index
            .and_then(|s| s.get().parse::<i64>().ok())
            .unwrap_or(0);
        match &*r.name {
            "process_name" => processes.entry(r.pid).or_default().name = m.name,
            "process_sort_index" => processes.entry(r.pid).or_default().sort_index = sort,
            "thread_name" => thread_names.entry((r.pid, r.tid)).or_default().0 = m.name,
            "thread_sort_index" => thread_names.entry((r.pid, r.tid)).or_default().1 = sort,
            _ => {}
        }
    }

    // Group span events by track (threads) or async key.
    let mut tracks: Vec<TrackKey<'_>> = Vec::new();
    let mut track_of: HashMap<TrackKey<'_>, u32> = HashMap::new();
    let mut thread_events: Vec<Vec<u32>> = Vec::new();
    type AsyncKey<'k> = (Option<Pid<'k>>, &'k str, &'k str, &'k str, &'k str);
    let mut async_of: HashMap<AsyncKey<'_>, u32> = HashMap::new();
    let mut async_events: Vec<Vec<u32>> = Vec::new();
    fn intern_track<'r>(
        track_of: &mut HashMap<TrackKey<'r>, u32>,
        tracks: &mut Vec<TrackKey<'r>>,
        key: TrackKey<'r>,
    ) -> u32 {
        *track_of.entry(key).or_insert_with(|| {
            tracks.push(key);
            tracks.len() as u32 - 1
        })
    }
    let mut thread_slot: HashMap<u32, usize> = HashMap::new();
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
        if r.ts_ns.is_none() {
            c.no_ts += 1;
            continue;
        }
        match r.ph {
            b'b' | b'e' | b'n' | b'S' | b'T' | b'p' | b'F' => {
                let Some((id, local)) = &r.id else {
                    c.async_without_id += 1;
                    continue;
                };
                let legacy = matches!(r.ph, b'S' | b'T' | b'p' | b'F');
                let key: AsyncKey<'_> = (
                    local.then_some(r.pid),
                    &r.cat,
                    id,
                    &r.scope,
                    if legacy { &r.name } else { "" },
                );
                let g = *async_of.entry(key).or_insert_with(|| {
                    async_events.push(Vec::new());
                    async_events.len() as u32 - 1
                });
                async_events[g as usize].push(k);
            }
            _ => {
                let key = if matches!(r.ph, b'i' | b'I' | b'R') && r.instant_scope != b't' {
                    TrackKey::Async(r.pid)
                } else {
                    TrackKey::Thread(r.pid, r.tid)
                };
                let t = intern_track(&mut track_of, &mut tracks, key);
                let slot = *thread_slot.entry(t).or_insert_with(|| {
                    thread_events.push(Vec::new());
                    thread_events.len() - 1
                });
                thread_events[slot].push(k);
            }
        }
    }
    let trace_end = trace_end.max(0);

    // Per track: pending spans with parents (indices into the track's list).
    let mut pending: Vec<Vec<Pending>> = Vec::new();
    let mut pending_slot: HashMap<u32, usize> = HashMap::new();
    let mut slot_for = |t: u32, pending: &mut Vec<Vec<Pending>>| -> usize {
        *pending_slot.entry(t).or_insert_with(|| {
            pending.push(Vec::new());
            pending.len() - 1
        })
    };
    let ts = |k: u32| recs[k as usize].ts_ns.unwrap_or(0);

    // Threads: B/E matching, X, instants; then nesting by containment.
    let mut slots: Vec<(u32, usize)> = thread_slot.iter().map(|(&t, &s)| (t, s)).collect();
    slots.sort_unstable();
    for (t, s) in slots {
        let mut evs = std::mem::take(&mut thread_events[s]);
        evs.sort_by_key(|&k| ts(k)); // stable: file order among equal timestamps
        let mut spans: Vec<Pending> = Vec::new();
        let mut open: Vec<u32> = Vec::new();
        for &k in &evs {
            let r = &recs[k as usize];
            let at = ts(k);
            match r.ph {
                b'B' => open.push(k),
                b'E' => match open.pop() {
                    Some(b) => {
                        let rb = &recs[b as usize];
                        if !r.name.is_empty() && r.name != rb.name {
                            c.name_mismatch += 1;
                        }
                        spans.push(Pending {
                            start: ts(b),
                            end: at,
                            rec: b,
                            close: k,
                            parent: u32::MAX,
                        });
                    }
                    None => c.e_without_b += 1,
                },
                b'X' => {
                    if r.no_dur {
                        c.no_dur += 1;
                    }
                    let mut d = r.dur_ns.unwrap_or(0);
                    if d < 0 {
                        c.negative_dur += 1;
                        d = 0;
                    }
                    spans.push(Pending {
                        start: at,
                        end: at.saturating_add(d),
                        rec: k,
                        close: u32::MAX,
                        parent: u32::MAX,
                    });
                }
                _ => spans.push(Pending {
                    start: at,
                    end: at,
                    rec: k,
                    close: u32::MAX,
                    parent: u32::MAX,
                }),
            }
        }
        for b in open {
            c.unclosed_b += 1;
            spans.push(Pending {
                start: ts(b),
                end: trace_end.max(ts(b)),
                rec: b,
                close: u32::MAX,
                parent: u32::MAX,
            });
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
        let slot = slot_for(t, &mut pending);
        pending[slot] = spans;
    }

    // Async groups.
    for evs in async_events.iter_mut() {
        evs.sort_by_key(|&k| ts(k));
        let first = &recs[evs[0] as usize];
        let t = intern_track(&mut track_of, &mut tracks, TrackKey::Async(first.pid));
        let slot = slot_for(t, &mut pending);
        let list = &mut pending[slot];
        let mut open: Vec<usize> = Vec::new(); // indices into `list`
        let mut legacy_open: Vec<usize> = Vec::new();
        for &k in evs.iter() {
            let r = &recs[k as usize];
            let at = ts(k);
            let parent = open.last().map_or(u32::MAX, |&p| p as u32);
            match r.ph {
                b'b' => {
                    list.push(Pending {
                        start: at,
                        end: i64::MIN,
                        rec: k,
                        close: u32::MAX,
                        parent,
                    });
                    open.push(list.len() - 1);
                }
                b'n' => list.push(Pending {
                    start: at,
                    end: at,
                    rec: k,
                    close: u32::MAX,
                    parent,
                }),
                b'e' => {
                    // A named e closes the latest open b of that name (b's opened inside
                    // it and still open end with it); an unnamed e closes the latest b.
                    let pos = if r.name.is_empty() {
                        open.len().checked_sub(1)
                    } else {
                        open.iter()
                            .rposition(|&o| recs[list[o].rec as usize].name == r.name)
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
                            }
                        }
                        None => c.e_async_without_b += 1,
                    }
                }
                b'S' => {
                    list.push(Pending {
                        start: at,
                        end: i64::MIN,
                        rec: k,
                        close: u32::MAX,
                        parent: u32::MAX,
                    });
                    legacy_open.push(list.len() - 1);
                }
                b'F' => match legacy_open.pop() {
                    Some(o) => {
                        list[o].end = at.max(list[o].start);
                        list[o].close = k;
                    }
                    None => c.f_without_s += 1,
                },
                _ => c.steps += 1, // T, p
            }
        }
        for o in open.into_iter().chain(legacy_open) {
            c.unclosed_async += 1;
            list[o].end = trace_end.max(list[o].start);
        }
    }

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
    let any_cat = recs.iter().any(|r| !r.cat.is_empty());
    if any_cat {
        set.category.reserve(total);
    }
    let mut names = Names::new();
    let mut attrs = SpanAttrs::default();
    let unnamed = "(unnamed)";
    // Consecutive spans often share a name or category: skip the hash then.
    let mut last_name: Option<(&str, NameId)> = None;
    let mut last_cat: Option<(&str, NameId)> = None;
    for (new_t, &t) in order.iter().enumerate() {
        let Some(&slot) = pending_slot.get(&t) else {
            continue;
        };
        let base = set.len() as u32;
        for p in &pending[slot] {
            let r = &recs[p.rec as usize];
            let i = set.len() as u32;
            set.start_ns.push((p.start - origin) as u64);
            set.dur_ns.push((p.end - p.start).max(0) as u64);
            set.parent.push(if p.parent == u32::MAX {
                NO_PARENT
            } else {
                base + p.parent
            });
            let n: &str = if r.name.is_empty() { unnamed } else { &r.name };
            set.name.push(intern_cached(&mut names, &mut last_name, n));
            set.track.push(new_t as u32);
            if any_cat {
                set.category
                    .push(intern_cached(&mut names, &mut last_cat, &r.cat));
            }
            let closing = (p.close != u32::MAX).then(|| &recs[p.close as usize]);
            let mut extra: Vec<(String, String)> = Vec::new();
            if let Some((id, _)) = &r.id {
                extra.push(("id".to_string(), id.to_string()));
            }
            let has = !r.attrs.is_empty()
                || closing.is_some_and(|e| !e.attrs.is_empty())
                || !extra.is_empty();
            if has {
                attrs.push(
                    i,
                    extra
                        .into_iter()
                        .chain(r.attrs.iter().cloned())
                        .chain(closing.into_iter().flat_map(|e| e.attrs.iter().cloned())),
                );
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

fn intern_cached<'s>(
    names: &mut Names,
    last: &mut Option<(&'s str, NameId)>,
    s: &'s str,
) -> NameId {
    match *last {
        Some((l, id)) if l == s => id,
        _ => {
            let id = names.intern(s);
            *last = Some((s, id));
            id
        }
    }
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
        assert_eq!(s.attrs.get(beta as u32), [kv("b", "x"), kv("e", "1")]);
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
        assert_eq!(s.attrs.get(find(&s, "dns") as u32)[0].0, "id");
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
                {"ph":"X","name":"b","ts":6,"tdur":4,"pid":"Main","tid":12},
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
                    s.attrs.get(i as u32).to_vec(),
                )
            })
            .collect()
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
