//! Events into records: the traceEvents array read run by run (in parallel chunks for a
//! large input), each event turned into a compact [`Rec`] with its name and category
//! interned and its args stored; the top level of the document.

use super::Split;
use super::scan::{
    Ev, ScanErr, Valid, err_at, line_col, scan_event, scan_raw, scan_string, skip_string,
    skip_value, skip_ws,
};
use crate::import::ImportError;
use crate::import::text::one_line;
use crate::model::names::{NameId, Names};
use crate::model::spans::AttrPair;
use serde::Deserialize;
use serde_json::value::RawValue;
use std::borrow::Cow;
use std::collections::HashMap;

// ---------------------------------------------------------------------------------------
// The document: where the events are, and what the top level says.

/// What the top level said besides the events.
pub(super) struct Doc {
    pub(super) display_time_unit: Option<String>,
    pub(super) notes: Vec<String>,
    /// Byte ranges of the top-level `samples` and `stackFrames` values (older traces'
    /// CPU samples).
    pub(super) samples: Option<std::ops::Range<usize>>,
    pub(super) stack_frames: Option<std::ops::Range<usize>>,
    /// Process and thread names from a Fuchsia `systemTraceEvents` (`p` and `t`
    /// records), for the processes and threads traceEvents' metadata leaves unnamed.
    pub(super) system_names: Vec<SystemName>,
    /// Some event is a `P` (CPU sample) event.
    pub(super) profile_events: bool,
}

/// A process (`tid` `None`) or thread name from Fuchsia `systemTraceEvents`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct SystemName {
    pub(super) pid: i64,
    pub(super) tid: Option<i64>,
    pub(super) name: String,
}

/// What a top-level `systemTraceEvents` holds: ftrace text (a string, not imported), or
/// Fuchsia's JSON (`{"type": "fuchsia", "events": [...]}` or the bare array), whose
/// process (`ph` `p`) and thread (`ph` `t`) records name tracks; its other events (kernel
/// objects, …) are not imported. Gives the names and a note saying what was skipped.
pub(super) fn system_trace_events(value: &[u8]) -> (Vec<SystemName>, String) {
    #[derive(Deserialize)]
    struct Event<'b> {
        #[serde(borrow, default)]
        ph: Option<Cow<'b, str>>,
        #[serde(default)]
        pid: Option<i64>,
        #[serde(default)]
        tid: Option<i64>,
        #[serde(borrow, default)]
        name: Option<Cow<'b, str>>,
    }
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Fuchsia<'b> {
        Object {
            #[serde(borrow)]
            events: Vec<Event<'b>>,
        },
        Array(#[serde(borrow)] Vec<Event<'b>>),
    }
    if value.first() == Some(&b'"') {
        return (
            Vec::new(),
            "systemTraceEvents (ftrace text) not imported".to_string(),
        );
    }
    let events = match serde_json::from_slice::<Fuchsia<'_>>(value) {
        Ok(Fuchsia::Object { events } | Fuchsia::Array(events)) => events,
        Err(_) => {
            return (
                Vec::new(),
                "systemTraceEvents (neither ftrace text nor Fuchsia events) not imported"
                    .to_string(),
            );
        }
    };
    let mut names = Vec::new();
    let mut other = 0usize;
    for e in &events {
        match (e.ph.as_deref(), e.pid, &e.name) {
            (Some("p"), Some(pid), Some(name)) => names.push(SystemName {
                pid,
                tid: None,
                name: name.to_string(),
            }),
            (Some("t"), Some(pid), Some(name)) if e.tid.is_some() => names.push(SystemName {
                pid,
                tid: e.tid,
                name: name.to_string(),
            }),
            _ => other += 1,
        }
    }
    let note = format!(
        "systemTraceEvents (Fuchsia events): {} process and thread names read, {other} \
         other event{} not imported",
        names.len(),
        if other == 1 { "" } else { "s" }
    );
    (names, note)
}

/// How a run over the traceEvents array ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum RunEnd {
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
pub(super) struct Run<'a> {
    pub(super) recs: Vec<Rec>,
    /// What some records have besides ([`Rec::extra`] indexes it).
    pub(super) extras: Vec<Extra<'a>>,
    /// Process and thread ids, interned.
    pub(super) pids: Pids<'a>,
    /// Names and categories, interned while the event's text is in cache.
    pub(super) names: Names,
    /// `args` of the span events.
    pub(super) args: ArgStore,
    pub(super) end: RunEnd,
    /// Some event is a `P` (CPU sample) event.
    pub(super) profile_events: bool,
}

/// A bad event, found by a run that does not know how many events precede it.
pub(super) struct EvError {
    /// Index among the run's events.
    pub(super) local: usize,
    pub(super) line: usize,
    pub(super) column: usize,
    pub(super) message: String,
}

impl EvError {
    pub(super) fn at(text: &[u8], local: usize, byte: usize, message: String) -> EvError {
        let (line, column) = line_col(text, byte);
        EvError {
            local,
            line,
            column,
            message,
        }
    }

    pub(super) fn into_import(self, file: &str, first_index: usize) -> ImportError {
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
pub(super) fn parse_run<'a>(
    text: &'a [u8],
    mut i: usize,
    stop: usize,
    room: usize,
) -> Result<Run<'a>, EvError> {
    // Room for the events of `room` bytes at once: a list grown by doubling copies itself
    // where large blocks come from the heap (`heap::keep_large_blocks`), and leaves the
    // old copies' pages resident. Pages reserved and not written cost nothing; where the
    // system refuses that much address space, the list grows as it fills.
    let mut recs = Vec::new();
    let _ = recs.try_reserve(room / MIN_EVENT_BYTES);
    let mut extras = Vec::new();
    let mut pids = Pids::default();
    let mut profile_events = false;
    let mut names = Names::new();
    let mut args = ArgStore::default();
    // The run's bytes up to its stop are checked as UTF-8 at once (an event reaching past
    // the stop, after a wrong guess, has its strings checked one by one).
    let valid = Valid::prefix(text, i, stop);
    // Filled in place by each event's scan (a quarter of a kilobyte, not moved around).
    let mut ev = Ev::default();
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
                match scan_event(text, valid, i, &mut ev) {
                    Ok(end) => {
                        let rec = event_rec(
                            text,
                            i,
                            recs.len(),
                            &mut ev,
                            &mut pids,
                            &mut names,
                            &mut args,
                            &mut extras,
                        )?;
                        profile_events |= rec.ph == b'P';
                        recs.push(rec);
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
        extras,
        pids,
        names,
        args,
        end,
        profile_events,
    })
}

/// The first event start at or after `from`, guessed from the layout writers use: an
/// event begins a line (JSON strings cannot hold a raw newline, so a line start is never
/// inside a string). The guess is checked when the chunks are joined.
pub(super) fn guess_event_start(text: &[u8], from: usize) -> Option<usize> {
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

/// The fewest bytes an event takes on average in the traces a list of records is reserved
/// for (`{"ph":"X","ts":1,"pid":1,"tid":1}` alone is 36; real events carry a name, a
/// category, a duration and often arguments: W6's average 90). Denser traces grow the list.
const MIN_EVENT_BYTES: usize = 48;

/// Parses the traceEvents array whose `[` is just before `start`: on `split.threads`
/// cores when it is large. Chunks start at guessed event boundaries; each chunk parses up
/// to the next one's start, and a chunk whose predecessor did not end exactly there (a
/// wrong guess: pretty-printed events with nested objects at line starts) is discarded
/// and the rest parsed in sequence, so the result is always the sequential one.
pub(super) fn parse_array<'a>(
    file: &str,
    text: &'a [u8],
    start: usize,
    split: Split,
) -> Result<Parsed<'a, (RunEnd, bool)>, ImportError> {
    let starts = if split.threads > 1 && text.len() - start >= split.min_bytes {
        super::super::chunks::cut(text, start, split.threads, guess_event_start)
    } else {
        vec![start, text.len()]
    };
    if starts.len() == 2 {
        let run = parse_run(text, start, usize::MAX, text.len() - start)
            .map_err(|e| e.into_import(file, 0))?;
        let end = (run.end, run.profile_events);
        let mut recs = Recs::default();
        recs.push_part(run.recs);
        return Ok((recs, run.extras, run.pids.list, run.names, run.args, end));
    }
    // Each run stops at the next one's start; the last runs to the end.
    let last = starts.len() - 2;
    let runs = super::super::chunks::run(&starts, |j, from, to| {
        // The first run's list becomes the whole list: room for every event.
        let room = if j == 0 || j == last {
            text.len() - from
        } else {
            to - from
        };
        parse_run(text, from, if j == last { usize::MAX } else { to }, room)
    });
    let mut recs = Recs::default();
    let mut extras: Vec<Extra<'a>> = Vec::new();
    let mut names: Option<(Pids<'a>, Names, ArgStore)> = None;
    let mut profile_events = false;
    // Appends a run, renumbering its names into the first run's table: names get the
    // ids a sequential parse gives them (order of first appearance).
    let mut append = |run: Run<'a>, recs: &mut Recs, extras: &mut Vec<Extra<'a>>| {
        profile_events |= run.profile_events;
        append_run(run, recs, extras, &mut names)
    };
    for (j, run) in runs.into_iter().enumerate() {
        let run = run.map_err(|e| e.into_import(file, recs.len()))?;
        let end = run.end;
        append(run, &mut recs, &mut extras);
        match end {
            RunEnd::Stopped(at) if at == starts[j + 1] => continue,
            RunEnd::Stopped(at) => {
                // A wrong guess: go on from the true boundary in sequence.
                let rest = parse_run(text, at, usize::MAX, text.len() - at)
                    .map_err(|e| e.into_import(file, recs.len()))?;
                let end = rest.end;
                append(rest, &mut recs, &mut extras);
                let (pids, names, args) = names.unwrap_or_default();
                return Ok((recs, extras, pids.list, names, args, (end, profile_events)));
            }
            end => {
                let (pids, names, args) = names.unwrap_or_default();
                return Ok((recs, extras, pids.list, names, args, (end, profile_events)));
            }
        }
    }
    // The last run has no stop, so it never ends `Stopped`.
    let (pids, names, args) = names.unwrap_or_default();
    Ok((
        recs,
        extras,
        pids.list,
        names,
        args,
        (RunEnd::Open, profile_events),
    ))
}

/// Appends a run, renumbering its names and process/thread ids into the first run's
/// tables: they get the ids a sequential parse gives them (order of first appearance).
/// A later run's records are renumbered in place (in two halves on two threads when
/// many) and kept as a part of their own.
fn append_run<'a>(
    run: Run<'a>,
    recs: &mut Recs,
    extras: &mut Vec<Extra<'a>>,
    names: &mut Option<(Pids<'a>, Names, ArgStore)>,
) {
    match names.as_mut() {
        None => {
            // The first run: its ids and extras' positions are the global ones.
            *names = Some((run.pids, run.names, run.args));
            *extras = run.extras;
            recs.push_part(run.recs);
        }
        Some((pids, global, args)) => {
            let map: Vec<NameId> = run.names.iter().map(|(_, n)| global.intern(n)).collect();
            let pid_map: Vec<u32> = run.pids.list.iter().map(|&p| pids.intern(p)).collect();
            let pair_base = args.append(run.args);
            let extra_base = extras.len() as u32;
            extras.extend(run.extras);
            let renumber = |part: &mut [Rec]| {
                for r in part {
                    *r = r.extra_from(extra_base);
                    for id in [&mut r.name, &mut r.cat] {
                        if *id != NO_NAME {
                            *id = map[*id as usize];
                        }
                    }
                    if r.args.1 > 0 {
                        r.args.0 += pair_base;
                    }
                    r.pid = pid_map[r.pid as usize];
                    r.tid = pid_map[r.tid as usize];
                }
            };
            let mut part = run.recs;
            if crate::par::two_threads_for(part.len()) {
                let half = part.len() / 2;
                let (a, b) = part.split_at_mut(half);
                crate::par::both(|| renumber(a), || renumber(b));
            } else {
                renumber(&mut part);
            }
            recs.push_part(part);
        }
    }
}

/// Reads an array-form or object-form trace.
pub(super) fn read_doc<'a>(
    file: &str,
    text: &'a [u8],
    split: Split,
) -> Result<Parsed<'a, Doc>, ImportError> {
    let mut doc = Doc {
        display_time_unit: None,
        notes: Vec::new(),
        samples: None,
        stack_frames: None,
        system_names: Vec::new(),
        profile_events: false,
    };
    let start = skip_ws(text, 0);
    let (recs, extras, pids, names, args, (end, profile_events)) = match text.get(start) {
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
                        format!(
                            "expected `:` after \"{}\"",
                            one_line(&String::from_utf8_lossy(key))
                        ),
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
                    let parsed = parse_array(file, text, i + 1, split)?;
                    let end = parsed.5.0;
                    found = Some(parsed);
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
                    b"systemTraceEvents" => {
                        let (names, note) = system_trace_events(value);
                        doc.system_names = names;
                        doc.notes.push(note);
                    }
                    b"samples" => doc.samples = Some(i..after),
                    b"stackFrames" => doc.stack_frames = Some(i..after),
                    b"powerTraceAsString" if value.len() > 2 => doc.notes.push(format!(
                        "top-level {} not imported",
                        String::from_utf8_lossy(key)
                    )),
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
    doc.profile_events = profile_events;
    Ok((recs, extras, pids, names, args, doc))
}

/// The records, their process and thread ids, names, args, and how the array ended (or
/// the document).
pub(super) type Parsed<'a, T> = (Recs, Vec<Extra<'a>>, Vec<Pid<'a>>, Names, ArgStore, T);

/// A process or thread id: a number, or (rarely) a non-numeric string.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(super) enum Pid<'a> {
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

#[inline]
pub(super) fn pid_of(raw: Option<&str>) -> Pid<'_> {
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

/// Process and thread ids as read, each given a `u32` id in order of first appearance
/// (records hold those: 4 bytes instead of 24).
#[derive(Default)]
pub(super) struct Pids<'a> {
    pub(super) list: Vec<Pid<'a>>,
    map: HashMap<Pid<'a>, u32, foldhash::fast::FixedState>,
    /// The raw text of the last pid and tid read, and their ids: consecutive events
    /// mostly share them, so most are found without parsing or hashing.
    last: [Option<(Option<&'a str>, u32)>; 2],
}

impl<'a> Pids<'a> {
    pub(super) fn intern(&mut self, p: Pid<'a>) -> u32 {
        if let Some(&id) = self.map.get(&p) {
            return id;
        }
        // At most one id per event, and a record takes far more than a byte.
        let id = self.list.len() as u32;
        self.list.push(p);
        self.map.insert(p, id);
        id
    }

    /// The id of a raw `pid` (`slot` 0) or `tid` (`slot` 1) value.
    #[inline]
    fn raw(&mut self, slot: usize, raw: Option<&'a str>) -> u32 {
        match self.last[slot] {
            Some((last, id)) if last == raw => id,
            _ => {
                let id = self.intern(pid_of(raw));
                self.last[slot] = Some((raw, id));
                id
            }
        }
    }
}

/// What only scoped async events, metadata events and events with a long async id have
/// (in a list beside the records: most events have none of it, an async event with a
/// short id needs none, and records that own nothing are freed without a pass over them).
pub(super) struct Extra<'a> {
    /// An async id too long to be inline in the record.
    pub(super) id: Option<IdText<'a>>,
    pub(super) scope: Cow<'a, str>,
    /// `args` of metadata events, kept raw.
    pub(super) meta_args: Option<&'a str>,
    /// The name of a metadata event (`process_name` …), which is no span name.
    pub(super) meta_name: Option<Cow<'a, str>>,
}

/// An async id's text: inline when it fits (nearly always: `0x1f`, numbers, short
/// strings), so that matching a million ids while linking reads no input bytes, which by
/// then are long out of cache (reading them made matching memory-latency bound).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(super) enum IdText<'a> {
    /// Length and bytes (zero-padded).
    Inline(u8, [u8; 22]),
    Long(&'a str),
}

impl<'a> IdText<'a> {
    pub(super) fn new(t: &'a str) -> IdText<'a> {
        let b = t.as_bytes();
        if b.len() <= 22 {
            let mut bytes = [0u8; 22];
            bytes[..b.len()].copy_from_slice(b);
            IdText::Inline(b.len() as u8, bytes)
        } else {
            IdText::Long(t)
        }
    }

    pub(super) fn as_str(&self) -> &str {
        match self {
            // Whole `str`s were copied in, so the bytes are UTF-8.
            IdText::Inline(n, b) => std::str::from_utf8(&b[..*n as usize]).unwrap_or(""),
            IdText::Long(t) => t,
        }
    }
}

/// One event, as far as linking needs it: 64 bytes (a W6 trace has millions, and their
/// pages are a good part of the parse time).
#[derive(Clone, Copy)]
pub(super) struct Rec {
    /// Timestamp, or `i64::MIN` when absent.
    pub(super) ts_ns: i64,
    /// Duration (`dur`, else `tdur`), or `i64::MIN` when absent.
    pub(super) dur_ns: i64,
    /// Process and thread: ids into the parse's [`Pid`] list.
    pub(super) pid: u32,
    pub(super) tid: u32,
    /// Interned name, or [`NO_NAME`].
    pub(super) name: NameId,
    /// Interned category, or [`NO_NAME`].
    pub(super) cat: NameId,
    /// `args` of span events: `(first, count)` pairs in the run's [`ArgStore`].
    pub(super) args: (u32, u32),
    /// The async id's raw text (quotes stripped) when it fits, zero-padded; see `id_len`.
    id_bytes: [u8; ID_INLINE],
    /// Its [`Extra`] in the parse's list, or [`NO_EXTRA`].
    pub(super) extra: u32,
    /// The inline id's length, or [`ID_NONE`] or [`ID_LONG`] (in `extra`); with
    /// [`ID_LOCAL`] set when the async id is process-local (`id2.local`).
    id_len: u8,
    /// The phase letter (0 for a missing, empty or multi-letter phase).
    pub(super) ph: u8,
    /// Instant scope (`s`): b'g', b'p' or b't'.
    pub(super) instant_scope: u8,
    /// `dur` was absent on an X event.
    pub(super) no_dur: bool,
}

pub(super) const NONE: i64 = i64::MIN;

/// Async ids up to this long are inline in the record.
const ID_INLINE: usize = 12;
const ID_NONE: u8 = 0x7f;
const ID_LONG: u8 = 0x7e;
const ID_LOCAL: u8 = 0x80;

/// No name or category.
pub(super) const NO_NAME: NameId = NameId::MAX;

/// A record without an [`Extra`].
pub(super) const NO_EXTRA: u32 = u32::MAX;

impl Rec {
    /// This record with its [`Extra`] counted from `base` in a joined list.
    fn extra_from(&self, base: u32) -> Rec {
        let mut r = *self;
        if r.extra != NO_EXTRA {
            r.extra += base;
        }
        r
    }

    pub(super) fn ts(&self) -> Option<i64> {
        (self.ts_ns != NONE).then_some(self.ts_ns)
    }

    /// Its [`Extra`] in `extras` (the parse's list), if any.
    pub(super) fn extra<'e, 'a>(&self, extras: &'e [Extra<'a>]) -> Option<&'e Extra<'a>> {
        extras.get(self.extra as usize)
    }

    /// The async id (as [`IdText::new`] gives it), and whether it is process-local.
    pub(super) fn id<'e>(&self, extras: &'e [Extra<'_>]) -> Option<(IdText<'e>, bool)> {
        let local = self.id_len & ID_LOCAL != 0;
        match self.id_len & !ID_LOCAL {
            ID_NONE => None,
            ID_LONG => Some((self.extra(extras)?.id?, local)),
            n => {
                let mut bytes = [0u8; 22];
                bytes[..ID_INLINE].copy_from_slice(&self.id_bytes);
                Some((IdText::Inline(n, bytes), local))
            }
        }
    }

    /// The inline id as stored: its length byte (with the process-local bit) and its
    /// zero-padded bytes. Two records without an [`Extra`] have equal ids exactly when
    /// these are equal.
    pub(super) fn id_raw(&self) -> (u8, [u8; ID_INLINE]) {
        (self.id_len, self.id_bytes)
    }

    /// The async id is process-local (`id2.local`).
    pub(super) fn id_is_local(&self) -> bool {
        self.id_len & ID_LOCAL != 0
    }

    pub(super) fn has_id(&self) -> bool {
        self.id_len & !ID_LOCAL != ID_NONE
    }

    pub(super) fn scope<'e>(&self, extras: &'e [Extra<'_>]) -> &'e str {
        self.extra(extras).map_or("", |e| &e.scope)
    }
}

/// The records of a parse: each run's list as it was parsed, one after another (joined
/// into one list, a later run's records were copied into fresh pages: 105 MB for W6's
/// second half). Indexed as one list.
#[derive(Default)]
pub(super) struct Recs {
    parts: Vec<Vec<Rec>>,
    /// Each part's first index.
    starts: Vec<usize>,
    len: usize,
}

impl Recs {
    pub(super) fn len(&self) -> usize {
        self.len
    }

    pub(super) fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The parts, each with its first index.
    pub(super) fn parts(&self) -> impl Iterator<Item = (usize, &[Rec])> {
        self.starts
            .iter()
            .copied()
            .zip(self.parts.iter().map(Vec::as_slice))
    }

    pub(super) fn iter(&self) -> impl Iterator<Item = &Rec> {
        self.parts.iter().flatten()
    }

    fn push_part(&mut self, part: Vec<Rec>) {
        if part.is_empty() {
            return;
        }
        self.starts.push(self.len);
        self.len += part.len();
        self.parts.push(part);
    }
}

impl std::ops::Index<usize> for Recs {
    type Output = Rec;

    #[inline]
    fn index(&self, k: usize) -> &Rec {
        // Parts are few (one per core): the last part starting at or before `k`.
        let mut p = self.parts.len() - 1;
        while self.starts[p] > k {
            p -= 1;
        }
        &self.parts[p][k - self.starts[p]]
    }
}

/// Checks and converts a deserialized event that starts at byte `at`.
#[allow(clippy::too_many_arguments)]
pub(super) fn event_rec<'a>(
    text: &[u8],
    at: usize,
    local: usize,
    ev: &mut Ev<'a>,
    pids: &mut Pids<'a>,
    names: &mut Names,
    store: &mut ArgStore,
    extras: &mut Vec<Extra<'a>>,
) -> Result<Rec, EvError> {
    let number = |field: &str, raw: Option<&str>| -> Result<i64, EvError> {
        let Some(raw) = raw else { return Ok(NONE) };
        match micros_to_ns(raw) {
            Some(v) if v != NONE => Ok(v),
            _ => {
                let shown: String = raw.chars().take(40).collect();
                let shown = one_line(&shown);
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
    // `P` events keep theirs too: a trace's CPU profile is in `Profile`/`ProfileChunk` args.
    let args = match ev.args {
        Some(args) if spans || ph == b'P' => store.add(args),
        _ => (0, 0),
    };
    let (meta_args, meta_name) = if ph == b'M' {
        (ev.args, ev.name.take())
    } else {
        (None, None)
    };
    let mut id_bytes = [0u8; ID_INLINE];
    let (id_len, long_id) = match id {
        None => (ID_NONE, None),
        Some((t, local)) => {
            let local = if local { ID_LOCAL } else { 0 };
            if t.len() <= ID_INLINE {
                id_bytes[..t.len()].copy_from_slice(t.as_bytes());
                (t.len() as u8 | local, None)
            } else {
                (ID_LONG | local, Some(IdText::new(t)))
            }
        }
    };
    let extra = if ev.scope.is_some() || meta_args.is_some() || long_id.is_some() {
        extras.push(Extra {
            id: long_id,
            scope: ev.scope.take().unwrap_or(Cow::Borrowed("")),
            meta_args,
            meta_name,
        });
        (extras.len() - 1) as u32
    } else {
        NO_EXTRA
    };
    Ok(Rec {
        ts_ns,
        dur_ns,
        pid: pids.raw(0, ev.pid),
        tid: pids.raw(1, ev.tid),
        name: ev
            .name
            .take()
            .filter(|n| !n.is_empty())
            .map_or(NO_NAME, |n| names.intern(&n)),
        cat: ev
            .cat
            .take()
            .filter(|n| !n.is_empty())
            .map_or(NO_NAME, |n| names.intern(&n)),
        args,
        id_bytes,
        extra,
        id_len,
        ph,
        instant_scope: match ev.s.as_deref() {
            Some("g") => b'g',
            Some("p") => b'p',
            _ => b't',
        },
        no_dur,
    })
}

#[inline]
pub(super) fn id_text(t: &str) -> &str {
    t.strip_prefix('"')
        .and_then(|t| t.strip_suffix('"'))
        .unwrap_or(t)
}

/// Microseconds (a JSON number, or a string holding one) → nanoseconds, rounded half
/// away from zero from the decimal digits. `None` when it is not a number or does not fit
/// an `i64`.
#[inline]
pub(crate) fn micros_to_ns(raw: &str) -> Option<i64> {
    if let Some(v) = short_micros_to_ns(raw.as_bytes()) {
        return Some(v);
    }
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

/// The common case of [`micros_to_ns`]: a plain non-negative number of at most 15
/// integer digits and at most 3 decimals (`1234.567`), exact in `i64` nanoseconds
/// without rounding. `None` for anything else, which the general path reads.
#[inline]
fn short_micros_to_ns(b: &[u8]) -> Option<i64> {
    if b.is_empty() || b.len() > 19 {
        return None;
    }
    let mut v: i64 = 0;
    let mut i = 0;
    while i < b.len() && b[i].is_ascii_digit() {
        v = v * 10 + i64::from(b[i] - b'0');
        i += 1;
    }
    if i == 0 || i > 15 {
        return None;
    }
    let mut decimals = 0;
    if i < b.len() {
        if b[i] != b'.' {
            return None;
        }
        i += 1;
        while i < b.len() && b[i].is_ascii_digit() {
            v = v * 10 + i64::from(b[i] - b'0');
            i += 1;
            decimals += 1;
        }
        if i != b.len() || decimals == 0 || decimals > 3 {
            return None;
        }
    }
    Some(v * [1000, 100, 10, 1][decimals])
}

/// `args` read by a run: keys interned, values in one text arena; events refer to a
/// range of `pairs`. No allocation per event or per pair.
#[derive(Default)]
pub(super) struct ArgStore {
    pub(super) keys: Names,
    pub(super) pairs: Vec<AttrPair>,
    pub(super) text: String,
}

impl ArgStore {
    pub(super) fn pair(&mut self, key: &str, value: &str) -> AttrPair {
        AttrPair::store(&mut self.keys, &mut self.text, key, value)
    }

    /// Stores an `args` object's members (strings as their text, anything else as its
    /// JSON); a non-object, or one this reader cannot follow, is kept whole as `args`.
    pub(super) fn add(&mut self, raw: &str) -> (u32, u32) {
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

    pub(super) fn members(&mut self, raw: &str) -> Result<(), ScanErr> {
        let b = raw.as_bytes();
        let valid = Valid { s: raw, at: 0 };
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
            let (key, after) = scan_string(b, valid, i)?;
            i = skip_ws(b, after);
            if b.get(i) != Some(&b':') {
                return Err(syntax(i));
            }
            i = skip_ws(b, i + 1);
            let (value, after) = if b.get(i) == Some(&b'"') {
                scan_string(b, valid, i)?
            } else {
                let (v, e) = scan_raw(b, valid, i)?;
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
    pub(super) fn append(&mut self, other: ArgStore) -> u32 {
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
