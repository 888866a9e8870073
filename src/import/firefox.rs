//! Firefox Profiler files as time-ordered samples, with their interval markers as spans.
//!
//! Four kinds of file, told apart by their content:
//! - **gecko profiles**, what Firefox itself writes: `{meta, threads, processes}`, each
//!   thread with `samples`, `stackTable`, `frameTable` and `markers` as row tables
//!   (`{schema: {column: position}, data: [[…], …]}`) and a `stringTable` array. A frame
//!   is named by its `location` string (`foo (http://x.js:1:2)`, or a hex address when
//!   unsymbolicated), as the profiler shows it;
//! - **processed profiles**, what profiler.firefox.com saves (`meta.preprocessedProfileVersion`):
//!   column tables (`{column: […], length}`); a frame is named by `frameTable.func` →
//!   `funcTable.name` → string;
//! - **DevTools recordings** (the old performance panel's export): a gecko profile under
//!   `.profile`, beside the panel's own lists, which are not read;
//! - the pre-gecko **"cleopatra"** format (`format: "profileJSONWithSymbolicationTable,1"`):
//!   samples that list their frames root first as indices into `symbolicationTable`, and
//!   a time in `extraInfo.time` (or the previous one plus `meta.interval`).
//!
//! Columns are looked up by name in either layout, so columns that moved or were added
//! (frameNumber, responsiveness, eventDelay, relevantForJS …) need no version checks. The
//! changes that do matter, as the profiler's upgraders handle them:
//!
//! | format | version | change | here |
//! |---|---|---|---|
//! | gecko | < 5 | sub-process profiles are JSON strings inside `threads` | parsed, read as sub-processes |
//! | gecko | ≥ 5 | sub-processes in `processes`, each with its own `meta.startTime` | times shifted onto the parent's clock |
//! | gecko, processed | < 4 / < 1 | a content process's main thread is `Content` without `processType` | named `GeckoMain`, process `tab` |
//! | gecko | < 20 | markers `{name, time, data}`: intervals are `tracing` start/end pairs or `data.startTime/endTime` | both read |
//! | gecko | ≥ 20 | markers `{name, startTime, endTime, phase, …}` | phases read |
//! | gecko | ≥ 32 | `location` ends in `[sourceIndex]` | suffix dropped |
//! | processed | < 29 | weights in `samples.duration` | read as `weight` |
//! | processed | < 30 | markers with `time` only (as gecko < 20) | both read |
//! | processed | ≥ 50 | `samples.timeDeltas` may replace `samples.time` | summed |
//! | processed | ≥ 56 | strings in `profile.shared.stringArray` | used when a thread has none |
//! | processed | ≥ 60 | stack, frame and func tables in `profile.shared` | one shared reader |
//! | processed | ≥ 66 | `stackTable.prefixOffset` replaces `prefix` | both read |
//! | processed | ≥ 68 | a marker's unused start or end time may be any number | only the one its phase uses is read |
//!
//! **Samples.** Times are milliseconds after `meta.startTime` (an epoch in ms), which
//! becomes [`Samples::origin_ns`]; sub-process times move by the difference of the
//! start times. A sample weighs its `weight` (1 without one); `weightType` `tracing-ms`
//! makes the event `tracing` in nanoseconds, `bytes` makes it `bytes`; otherwise the event
//! is `samples`, with a sample rate from `meta.interval`. `threadCPUDelta` becomes the CPU
//! time counter when `meta.sampleUnits.threadCPUDelta` is `ns` or `µs` (cycles are left
//! out, with a note); its first value per thread means nothing and is dropped.
//!
//! **Markers** with a start and an end (phase 1, a start/end pair of one name on one
//! thread, or a payload's `startTime`/`endTime`) become spans, one track per thread,
//! nested by containment. Markers far outside the samples' time range (more than the
//! range's length, or a second, away from it) are left out and counted: DevTools
//! recordings keep them on another clock. The spans share the samples' origin unless a
//! marker starts before the first sample; then they start at that marker.
//!
//! **Damage.** Stacks are resolved with a loop over the prefix chain, memoised per table,
//! so depth costs no call stack; a cycle, or a prefix, frame, function or string index out
//! of range, breaks that stack and the samples that use it are skipped and counted with
//! the place of the first. A table of the wrong shape is an error naming its JSON path.
//! Every allocation is sized by arrays actually present in the file.
//!
//! **Memory.** The document is read once into a [`Json`] tree (`json_tree.rs`): a column
//! of numbers is an `f64` array (8 bytes a number where `serde_json::Value` took 32 and a
//! share of a growing `Vec`), strings borrow the input. A 100 MB processed profile peaks at
//! about 450 MB (the mapped file included), half of what the `Value` tree took.

use super::ImportError;
use super::json_tree::{Arr, J, Json};
use crate::model::names::{NameId, Names};
use crate::model::samples::{
    Counter, CounterKind, EMPTY_STACK, Samples, StackId, Stream, ThreadInfo, Weights,
};
use crate::model::spans::{SpanSet, Track, TrackInfo, TrackKind};
use crate::model::units::{Unit, ValueFormat};
use crate::model::{NO_PARENT, SourceFormat};
use samples::{Columns, read_columns};
use std::borrow::Cow;
use std::collections::HashMap;

const NS_PER_MS: f64 = 1e6;
/// Times further than this from the profile's start (about 300 years) are damage.
const MAX_MS: f64 = 1e13;
/// The newest versions whose changes this reader knows.
const GECKO_NEWEST: u64 = 36;
const PROCESSED_NEWEST: u64 = 70;

/// Reads a Firefox Profiler file: its samples, and the spans of its interval markers when
/// it has any.
pub fn parse(file: &str, text: &[u8]) -> Result<(Samples, Option<SpanSet>), ImportError> {
    // A big profile's threads and processes are read into the tree on all cores.
    let doc = Json::from_slice_parallel(text, 16 << 20).map_err(|e| ImportError::json(file, &e))?;
    let mut r = Reader::new(file);
    read(&mut r, doc.view())?;
    // The tree is let go of on another core while the samples are laid out.
    crate::par::both(|| r.finish(), move || drop(doc)).0
}

/// The threads complete enough to draw in `head`, the start of a Firefox profile, for a
/// preview: those whose tables come before their samples (processed profiles), each
/// with the samples the head holds; a thread the head cuts inside its tables is left out.
/// `None` when the head holds nothing to draw (a gecko profile's samples come before its
/// tables).
pub fn parse_head(file: &str, head: &[u8]) -> Option<(Samples, Option<SpanSet>)> {
    let mut doc = Json::from_head(head)?;
    loop {
        let mut r = Reader::new(file);
        r.head = true;
        if read(&mut r, doc.view()).is_ok()
            && let Ok(read) = r.finish()
        {
            return Some(read);
        }
        // The last thread is where the head stops: without it, if there are others.
        let threads = match &mut doc {
            Json::Obj(m) => m.iter_mut().rev().find(|(k, _)| k == "threads"),
            _ => None,
        };
        match threads {
            Some((_, Json::Arr(t))) if t.len() > 1 => {
                t.pop();
            }
            _ => return None,
        }
    }
}

/// Reads the document `root` into `r`'s thread buffers.
fn read(r: &mut Reader<'_>, root: J<'_>) -> Result<(), ImportError> {
    let cleopatra = root.has("profileJSON")
        || root
            .get("format")
            .as_str()
            .is_some_and(|f| f.starts_with("profileJSONWithSymbolicationTable"));
    if cleopatra {
        return r.cleopatra(root);
    }
    let (profile, base) = match root.get("profile") {
        p if p.has("meta") => (p, "profile."),
        _ => (root, ""),
    };
    let meta = profile.get("meta");
    if !meta.is_object() {
        return Err(r.invalid(
            &format!("{base}meta"),
            "expected an object (a Firefox profile has `meta` and `threads`)",
        ));
    }
    r.start_ms = meta
        .get("startTime")
        .as_f64()
        .filter(|t| t.abs() < MAX_MS)
        .unwrap_or(0.0);
    r.interval_ms = meta.get("interval").as_f64();
    if let Some(p) = meta.get("product").as_str() {
        r.out.meta_mut().app_name = Some(p.to_string());
    }
    if meta.get("sampleUnits").get("time").as_str() == Some("bytes") {
        r.note("sample times are byte offsets (a size profile): laid out in order, not in time");
        r.out.timed = false;
        r.time_scale = 1.0;
    }
    let processed = meta.get("preprocessedProfileVersion").as_u64();
    let (what, version, newest) = match processed {
        Some(v) => ("processed", v, PROCESSED_NEWEST),
        // Pre-versioned processed profiles are told by their threads' `stringArray`.
        None if profile.get("threads").at(0).has("stringArray") => ("processed", 0, 0),
        None => (
            "gecko",
            meta.get("version").as_u64().unwrap_or(0),
            GECKO_NEWEST,
        ),
    };
    if version > newest {
        r.note(&format!(
            "{what} profile version {version} is newer than the newest this reader knows \
             ({newest}); read as that"
        ));
    }
    match profile {
        _ if what == "processed" => r.processed(profile, base),
        J::Node(profile) => r.gecko(profile, base),
        // `meta` is an object, so the profile is one: a node.
        _ => Ok(()),
    }
}

/// A non-negative integer index (`3` or `3.0`).
fn index(v: J<'_>) -> Option<usize> {
    match v.as_u64() {
        Some(u) => usize::try_from(u).ok(),
        None => v
            .as_f64()
            .filter(|f| f.fract() == 0.0 && *f >= 0.0 && *f < 9e15)
            .map(|f| f as usize),
    }
}

/// A pid or tid: a number, or a string holding one.
fn id_of(v: J<'_>) -> Option<i64> {
    v.as_i64()
        .or_else(|| v.as_str().and_then(|s| s.trim().parse().ok()))
}

/// The string `v` names: an index into `strings`, or the string itself.
fn string_at<'a>(strings: Arr<'a>, v: J<'a>) -> Option<&'a str> {
    match v.as_str() {
        Some(s) => Some(s),
        None => strings.get(index(v)?)?.as_str(),
    }
}

/// Sub-process `k` of gecko profile `p`.
fn sub_process<'x, 'a>(p: &'x Json<'a>, k: usize) -> Option<&'x Json<'a>> {
    p.member("processes")?.element(k)
}

/// `1 sample`, `2 samples`.
fn count(n: u64, what: &str) -> String {
    format!("{n} {what}{}", if n == 1 { "" } else { "s" })
}

/// `foo (http://x.js:1:2)[7]` → `foo (http://x.js:1:2)` (gecko ≥ 32's source index).
fn strip_source_index(s: &str) -> &str {
    if let Some(body) = s.strip_suffix(']')
        && let Some(open) = body.rfind('[')
        && body[..open].ends_with(')')
        && open + 1 < body.len()
        && body[open + 1..].bytes().all(|b| b.is_ascii_digit())
    {
        return &body[..open];
    }
    s
}

/// A table in either layout: gecko's rows (`{schema, data}`) or processed columns.
#[derive(Clone, Copy)]
struct Table<'a> {
    obj: J<'a>,
    /// Gecko's rows: the schema, and `data`.
    rows: Option<(J<'a>, Arr<'a>)>,
    len: usize,
}

/// A column of a [`Table`]: a position in each row, or an array.
#[derive(Clone, Copy)]
enum Col<'a> {
    Absent,
    Field(usize),
    Array(Arr<'a>),
}

impl Col<'_> {
    fn is_absent(self) -> bool {
        matches!(self, Col::Absent)
    }
}

impl<'a> Table<'a> {
    /// The table `v` at `path`; its length is that of column `key` (or of `data`), cut to
    /// `length` when that is smaller.
    fn open(r: &Reader<'_>, v: J<'a>, path: &str, key: &str) -> Result<Table<'a>, ImportError> {
        if !v.is_object() {
            return Err(r.invalid(
                path,
                format!("expected a table (an object), found {}", v.kind()),
            ));
        }
        let schema = v.get("schema");
        if schema.is_object() {
            let Some(data) = v.get("data").array() else {
                return Err(r.invalid(path, "a table with a `schema` needs a `data` array"));
            };
            return Ok(Table {
                obj: v,
                rows: Some((schema, data)),
                len: data.len(),
            });
        }
        // A key column that is not an array reads as absent (the caller says which).
        let len = v.get(key).array().map_or(0, Arr::len);
        let len = index(v.get("length")).map_or(len, |l| l.min(len));
        Ok(Table {
            obj: v,
            rows: None,
            len,
        })
    }

    fn col(&self, name: &str) -> Col<'a> {
        match self.rows {
            Some((schema, _)) => index(schema.get(name)).map_or(Col::Absent, Col::Field),
            None => self.obj.get(name).array().map_or(Col::Absent, Col::Array),
        }
    }

    fn get(&self, c: Col<'a>, row: usize) -> Option<J<'a>> {
        match c {
            Col::Absent => None,
            Col::Field(k) => self.rows?.1.get(row)?.array()?.get(k),
            Col::Array(a) => a.get(row),
        }
    }
}

/// Where frame names come from.
struct FrameNames<'a> {
    frames: Table<'a>,
    /// gecko: `location` (a string index); processed: `func` (a function index).
    col: Col<'a>,
    /// processed: the function table and its `name` column.
    funcs: Option<(Table<'a>, Col<'a>)>,
    strings: Arr<'a>,
    strip_source_index: bool,
    memo: Vec<NameId>,
}

const NO_NAME: NameId = NameId::MAX;

impl<'a> FrameNames<'a> {
    fn new(
        frames: Table<'a>,
        col: Col<'a>,
        funcs: Option<(Table<'a>, Col<'a>)>,
        strings: Arr<'a>,
        strip_source_index: bool,
    ) -> FrameNames<'a> {
        FrameNames {
            memo: vec![NO_NAME; frames.len],
            frames,
            col,
            funcs,
            strings,
            strip_source_index,
        }
    }

    fn name(&mut self, out: &mut Samples, f: usize) -> Result<NameId, String> {
        match self.memo.get(f) {
            None => {
                return Err(format!(
                    "frame {f} is not in the frame table ({} frames)",
                    self.frames.len
                ));
            }
            Some(&id) if id != NO_NAME => return Ok(id),
            _ => {}
        }
        let cell = self.frames.get(self.col, f).unwrap_or(J::Null);
        let s = match &self.funcs {
            None => string_at(self.strings, cell)
                .ok_or_else(|| format!("frame {f}: its location is not a known string"))?,
            Some((funcs, name)) => {
                let func = index(cell)
                    .filter(|&k| k < funcs.len)
                    .ok_or_else(|| format!("frame {f}: its function is not in the func table"))?;
                funcs
                    .get(*name, func)
                    .and_then(|n| string_at(self.strings, n))
                    .ok_or_else(|| format!("function {func}: its name is not a known string"))?
            }
        };
        let s = if self.strip_source_index {
            strip_source_index(s)
        } else {
            s
        };
        let id = out.intern(s);
        self.memo[f] = id;
        Ok(id)
    }
}

const UNSEEN: StackId = StackId::MAX - 1;
const BROKEN: StackId = StackId::MAX - 2;
const WALKING: StackId = StackId::MAX - 3;

/// A stack table being turned into [`Samples::stacks`], stack by stack as samples use them.
struct Stacks<'a> {
    table: Table<'a>,
    frame: Col<'a>,
    prefix: Col<'a>,
    /// `prefixOffset` (processed ≥ 66): 0 for a root, else the distance back to the parent.
    offsets: bool,
    names: FrameNames<'a>,
    memo: Vec<StackId>,
    chain: Vec<usize>,
}

impl<'a> Stacks<'a> {
    /// The stack table of `holder` (at `path`).
    fn new(
        r: &Reader<'_>,
        holder: J<'a>,
        path: &str,
        names: FrameNames<'a>,
    ) -> Result<Stacks<'a>, ImportError> {
        let path = &format!("{path}.stackTable");
        let table = Table::open(r, holder.get("stackTable"), path, "frame")?;
        let (prefix, offsets) = match table.col("prefix") {
            Col::Absent => (table.col("prefixOffset"), true),
            c => (c, false),
        };
        let frame = table.col("frame");
        if prefix.is_absent() || frame.is_absent() {
            return Err(r.invalid(
                path,
                "expected `frame` and `prefix` (or `prefixOffset`) columns",
            ));
        }
        Ok(Stacks {
            memo: vec![UNSEEN; table.len],
            table,
            frame,
            prefix,
            offsets,
            names,
            chain: Vec::new(),
        })
    }

    fn prefix_of(&self, i: usize) -> Result<Option<usize>, String> {
        let v = self.table.get(self.prefix, i).unwrap_or(J::Null);
        if self.offsets {
            return match index(v) {
                Some(0) => Ok(None),
                Some(k) if k <= i => Ok(Some(i - k)),
                _ => Err(format!(
                    "stack {i}: prefixOffset {v} does not point back into the table"
                )),
            };
        }
        if v.is_null() {
            return Ok(None);
        }
        match index(v) {
            Some(p) if p < self.memo.len() => Ok(Some(p)),
            _ => Err(format!(
                "stack {i}: prefix {v} is not in the stack table ({} stacks)",
                self.memo.len()
            )),
        }
    }

    /// Stack `s` in `out`'s table, or why it is broken. Walks the prefix chain up to a
    /// stack already resolved, then adds the new ones root first.
    fn resolve(&mut self, out: &mut Samples, s: usize) -> Result<StackId, String> {
        if s >= self.memo.len() {
            return Err(format!(
                "stack {s} is not in the stack table ({} stacks)",
                self.memo.len()
            ));
        }
        self.chain.clear();
        let (mut at, mut base) = (s, EMPTY_STACK);
        let why = loop {
            match self.memo[at] {
                UNSEEN => {
                    self.memo[at] = WALKING;
                    self.chain.push(at);
                    match self.prefix_of(at) {
                        Ok(None) => break None,
                        Ok(Some(p)) => at = p,
                        Err(e) => break Some(e),
                    }
                }
                WALKING => break Some(format!("stack {at} is its own ancestor (a prefix cycle)")),
                BROKEN => break Some(format!("stack {s} descends from broken stack {at}")),
                id => {
                    base = id;
                    break None;
                }
            }
        };
        if let Some(why) = why {
            for &i in &self.chain {
                self.memo[i] = BROKEN;
            }
            return Err(why);
        }
        for k in (0..self.chain.len()).rev() {
            let i = self.chain[k];
            let name = match self.table.get(self.frame, i).and_then(index) {
                Some(f) => self
                    .names
                    .name(out, f)
                    .map_err(|e| format!("stack {i}: {e}")),
                None => Err(format!("stack {i} has no frame index")),
            };
            match name {
                Ok(n) => {
                    base = out.stacks.child(base, n);
                    self.memo[i] = base;
                }
                Err(e) => {
                    for &j in &self.chain[..=k] {
                        self.memo[j] = BROKEN;
                    }
                    return Err(e);
                }
            }
        }
        Ok(base)
    }
}

/// Damage of one kind: how much, and where the first was.
#[derive(Default)]
struct Damage {
    n: u64,
    first: Option<String>,
}

impl Damage {
    fn hit(&mut self, at: impl FnOnce() -> String) {
        self.n += 1;
        if self.first.is_none() {
            self.first = Some(at());
        }
    }
}

/// How a process states `threadCPUDelta`.
#[derive(Clone, Copy)]
enum Cpu {
    /// Nanoseconds per unit.
    Ns(f64),
    /// CPU cycles, or a unit not known here.
    Other,
    /// No `meta.sampleUnits`.
    Unstated,
}

fn cpu_unit(meta: J<'_>) -> Cpu {
    match meta.get("sampleUnits").get("threadCPUDelta").as_str() {
        Some("ns") => Cpu::Ns(1.0),
        Some("µs" | "us") => Cpu::Ns(1e3),
        Some("ms") => Cpu::Ns(NS_PER_MS),
        Some(_) => Cpu::Other,
        None => Cpu::Unstated,
    }
}

/// One thread's samples and markers, on the root profile's clock (ms after its start).
#[derive(Default)]
struct ThreadBuf {
    info: ThreadInfo,
    thread: u32,
    event: u32,
    time: Vec<f64>,
    stack: Vec<StackId>,
    weight: Vec<u64>,
    /// Empty, or CPU nanoseconds per sample.
    cpu: Vec<u64>,
    /// `(start ms, end ms, name)`.
    marks: Vec<(f64, f64, NameId)>,
}

/// What a marker says about time.
enum Mark {
    Interval(Option<f64>, Option<f64>),
    Start(Option<f64>),
    End(Option<f64>),
}

/// A marker without phases (gecko < 20, processed < 30, cleopatra): a `tracing` start or
/// end, or a payload with distinct `startTime` and `endTime`; `None` for an instant.
fn unphased(time: Option<f64>, data: J<'_>) -> Option<Mark> {
    match (data.get("type").as_str(), data.get("interval").as_str()) {
        (Some("tracing"), Some("start")) => Some(Mark::Start(time)),
        (Some("tracing"), Some("end")) => Some(Mark::End(time)),
        (Some("tracing"), _) => None,
        _ => match (data.get("startTime").as_f64(), data.get("endTime").as_f64()) {
            (Some(a), Some(b)) if a != b => Some(Mark::Interval(Some(a), Some(b))),
            _ => None,
        },
    }
}

/// The process a thread belongs to as a group label: its name (or type) and pid.
fn thread_info(th: J<'_>, i: usize) -> ThreadInfo {
    let mut name = th.get("name").as_str().unwrap_or("").to_string();
    // Gecko < 4 and processed < 1 state no process type: a content process's main thread
    // is called `Content`, a plugin's `Plugin`, and the rest are the parent's.
    let ptype = match th.get("processType").as_str() {
        Some(t) => t,
        None if name == "Content" => {
            name = "GeckoMain".to_string();
            "tab"
        }
        None if name == "Plugin" => "plugin",
        None => "default",
    };
    if name.is_empty() {
        name = format!("thread {i}");
    }
    let pname = th
        .get("processName")
        .as_str()
        .filter(|s| !s.is_empty())
        .unwrap_or(match ptype {
            "default" => "Parent Process",
            "tab" => "Content Process",
            "gpu" => "GPU Process",
            other => other,
        });
    // A pid that is not a number (`Unknown Process 2`) was made up by an upgrader.
    let pid = id_of(th.get("pid"));
    let process = match pid {
        Some(p) => format!("{pname} {p}"),
        None => pname.to_string(),
    };
    ThreadInfo {
        name,
        process,
        pid,
        tid: id_of(th.get("tid")),
    }
}

struct Reader<'f> {
    file: &'f str,
    out: Samples,
    threads: Vec<ThreadBuf>,
    marker_names: Names,
    /// The root profile's `meta.startTime`, ms.
    start_ms: f64,
    interval_ms: Option<f64>,
    /// Nanoseconds per unit of sample time (1 for byte offsets).
    time_scale: f64,
    bad_samples: Damage,
    bad_markers: Damage,
    unpaired: u64,
    cpu_noted: bool,
    /// Reading a head for a preview (a flame graph): samples whose time the head cut off
    /// keep the one before's.
    head: bool,
}

impl<'f> Reader<'f> {
    fn new(file: &'f str) -> Reader<'f> {
        Reader {
            file,
            out: Samples::new(file, SourceFormat::FirefoxProfile),
            threads: Vec::new(),
            marker_names: Names::new(),
            start_ms: 0.0,
            interval_ms: None,
            time_scale: NS_PER_MS,
            bad_samples: Damage::default(),
            bad_markers: Damage::default(),
            unpaired: 0,
            cpu_noted: false,
            head: false,
        }
    }

    fn invalid(&self, at: &str, message: impl std::fmt::Display) -> ImportError {
        ImportError::Invalid {
            file: self.file.to_string(),
            location: if at.is_empty() { "top level" } else { at }.to_string(),
            message: message.to_string(),
        }
    }

    fn note(&mut self, s: &str) {
        self.out.meta_mut().warnings.notes.push(s.to_string());
    }

    /// A new thread buffer (its thread added to the samples).
    fn thread(&mut self, info: ThreadInfo) -> ThreadBuf {
        let thread = self.out.add_thread(info.clone());
        ThreadBuf {
            info,
            thread,
            ..ThreadBuf::default()
        }
    }

    /// The event of samples weighed as `weight_type` (its weights' scale to nanoseconds:
    /// [`samples::weight_scale`]).
    fn event(&mut self, weight_type: &str) -> u32 {
        let (name, unit) = match weight_type {
            "tracing-ms" => ("tracing", Unit::Nanoseconds),
            "bytes" => ("bytes", Unit::Bytes),
            _ => ("samples", Unit::Samples),
        };
        let rate = self
            .interval_ms
            .filter(|i| i.is_finite() && (0.001..=10_000.0).contains(i))
            .map(|i| (1000.0 / i).round() as u32)
            .filter(|&hz| hz > 0 && unit == Unit::Samples);
        let values = ValueFormat {
            unit,
            sample_rate_hz: rate,
            ticks_per_unit: 1,
        };
        self.out.event(name, values)
    }

    /// Gecko profiles, the root's threads first, then each sub-process's (depth first, in
    /// file order, through a work list).
    fn gecko<'r>(&mut self, root: &'r Json<'r>, base: &str) -> Result<(), ImportError> {
        let mut work: Vec<(Cow<'r, Json<'r>>, String)> =
            vec![(Cow::Borrowed(root), base.to_string())];
        while let Some((p, path)) = work.pop() {
            let pv = p.view();
            let meta = pv.get("meta");
            let version = meta.get("version").as_u64().unwrap_or(0);
            let start = meta.get("startTime").as_f64().filter(|t| t.abs() < MAX_MS);
            let shift = start.map_or(0.0, |s| s - self.start_ms);
            let cpu = cpu_unit(meta);
            let Some(threads) = pv.get("threads").array() else {
                return Err(self.invalid(&format!("{path}threads"), "expected an array of threads"));
            };
            let mut subs: Vec<(Cow<'r, Json<'r>>, String)> = Vec::new();
            let mut columns = self.columns_of(threads, &path, (shift, cpu)).into_iter();
            for (i, th) in threads.iter().enumerate() {
                let columns = columns.next().unwrap_or(Ok(None));
                let at = format!("{path}threads[{i}]");
                if let Some(s) = th.as_str() {
                    // Gecko < 5: a sub-process's whole profile as a string.
                    let v = Json::from_slice(s.as_bytes()).map_err(|e| {
                        self.invalid(
                            &at,
                            format!(
                                "a sub-process profile (JSON in a string) that does not \
                                 parse: {} at its line {}, column {}",
                                super::json_message(&e),
                                e.line(),
                                e.column()
                            ),
                        )
                    })?;
                    subs.push((Cow::Owned(v.into_owned()), format!("{at}.")));
                } else if th.is_object() {
                    self.gecko_thread(th, &at, columns, (shift, version), cpu)?;
                } else {
                    return Err(
                        self.invalid(&at, format!("expected a thread, found {}", th.kind()))
                    );
                }
            }
            let n = pv.get("processes").array().map_or(0, Arr::len);
            for k in 0..n {
                let child = match &p {
                    Cow::Borrowed(b) => {
                        sub_process(b, k).map_or(Cow::Owned(Json::Null), Cow::Borrowed)
                    }
                    Cow::Owned(o) => Cow::Owned(sub_process(o, k).cloned().unwrap_or(Json::Null)),
                };
                subs.push((child, format!("{path}processes[{k}].")));
            }
            work.extend(subs.into_iter().rev());
        }
        Ok(())
    }

    /// Reads gecko thread `th` (at `path`), whose sample columns were read as `columns`.
    fn gecko_thread(
        &mut self,
        th: J<'_>,
        path: &str,
        columns: Result<Option<Columns<'_>>, ImportError>,
        (shift, version): (f64, u64),
        cpu: Cpu,
    ) -> Result<(), ImportError> {
        let mut buf = self.thread(thread_info(th, self.threads.len()));
        let Some(strings) = th.get("stringTable").array() else {
            return Err(self.invalid(
                &format!("{path}.stringTable"),
                "expected an array of strings",
            ));
        };
        let (frames, col) = self.table(th, path, "frameTable", "location")?;
        let names = FrameNames::new(frames, col, None, strings, version >= 32);
        let mut stacks = Stacks::new(self, th, path, names)?;
        if let Some(c) = columns? {
            self.join_samples(&mut buf, c, &mut stacks, cpu);
        }
        self.read_markers(&mut buf, th, path, strings, shift)?;
        self.threads.push(buf);
        Ok(())
    }

    /// The sample columns of each of `threads` (at `{base}threads[i]`, `None` for one that
    /// is not an object), read on all cores; `clock`: the process's clock offset (ms) and
    /// CPU delta unit.
    fn columns_of<'a>(
        &self,
        threads: Arr<'a>,
        base: &str,
        clock: (f64, Cpu),
    ) -> Vec<Result<Option<Columns<'a>>, ImportError>> {
        let items: Vec<(usize, J<'a>)> = threads.iter().enumerate().collect();
        crate::par::map_each(items, |(i, th)| match th.is_object() {
            true => read_columns(self, th, &format!("{base}threads[{i}]"), clock),
            false => Ok(None),
        })
    }

    /// The stack reader of the tables in `holder` (a thread, or `profile.shared`).
    fn processed_stacks<'a>(
        &self,
        holder: J<'a>,
        strings: Arr<'a>,
        path: &str,
    ) -> Result<Stacks<'a>, ImportError> {
        let (frames, col) = self.table(holder, path, "frameTable", "func")?;
        let funcs = self.table(holder, path, "funcTable", "name")?;
        let names = FrameNames::new(frames, col, Some(funcs), strings, false);
        Stacks::new(self, holder, path, names)
    }

    /// `holder[key]` as a table (at `{path}.{key}`) with a `col` column.
    fn table<'a>(
        &self,
        holder: J<'a>,
        path: &str,
        key: &str,
        col: &str,
    ) -> Result<(Table<'a>, Col<'a>), ImportError> {
        let at = format!("{path}.{key}");
        let t = Table::open(self, holder.get(key), &at, col)?;
        match t.col(col) {
            Col::Absent => Err(self.invalid(&at, format!("expected a `{col}` column"))),
            c => Ok((t, c)),
        }
    }

    fn processed(&mut self, p: J<'_>, base: &str) -> Result<(), ImportError> {
        let shared = p.get("shared");
        let cpu = cpu_unit(p.get("meta"));
        let Some(threads) = p.get("threads").array() else {
            return Err(self.invalid(&format!("{base}threads"), "expected an array of threads"));
        };
        let mut shared_stacks: Option<Stacks<'_>> = None;
        let mut columns = self.columns_of(threads, base, (0.0, cpu)).into_iter();
        for (i, th) in threads.iter().enumerate() {
            let columns = columns.next().unwrap_or(Ok(None));
            let at = format!("{base}threads[{i}]");
            let strings = [
                th.get("stringArray"),
                th.get("stringTable"),
                shared.get("stringArray"),
            ]
            .into_iter()
            .find_map(J::array);
            let Some(strings) = strings else {
                return Err(self.invalid(
                    &at,
                    "no strings: expected `stringArray` (or `profile.shared.stringArray`)",
                ));
            };
            let mut buf = self.thread(thread_info(th, i));
            if th.has("stackTable") {
                let mut stacks = self.processed_stacks(th, strings, &at)?;
                if let Some(c) = columns? {
                    self.join_samples(&mut buf, c, &mut stacks, cpu);
                }
            } else {
                let stacks = match shared_stacks.take() {
                    Some(s) => s,
                    None => {
                        let strings = shared.get("stringArray").array().unwrap_or(strings);
                        self.processed_stacks(shared, strings, &format!("{base}shared"))?
                    }
                };
                let stacks = shared_stacks.insert(stacks);
                if let Some(c) = columns? {
                    self.join_samples(&mut buf, c, stacks, cpu);
                }
            }
            self.read_markers(&mut buf, th, &at, strings, 0.0)?;
            self.threads.push(buf);
        }
        Ok(())
    }

    /// Reads thread `th`'s interval markers into `buf`.
    fn read_markers(
        &mut self,
        buf: &mut ThreadBuf,
        th: J<'_>,
        path: &str,
        strings: Arr<'_>,
        shift: f64,
    ) -> Result<(), ImportError> {
        let (v, path) = (th.get("markers"), &format!("{path}.markers"));
        if v.is_null() {
            return Ok(());
        }
        let t = Table::open(self, v, path, "name")?;
        let (name, phase, data) = (t.col("name"), t.col("phase"), t.col("data"));
        let (start, end, time) = (t.col("startTime"), t.col("endTime"), t.col("time"));
        let mut open: HashMap<NameId, Vec<f64>> = HashMap::new();
        for i in 0..t.len {
            let at = |why: &str| format!("{path}, marker {i}: {why}");
            let Some(nm) = t.get(name, i).and_then(|n| string_at(strings, n)) else {
                self.bad_markers
                    .hit(|| at("its name is not a known string"));
                continue;
            };
            let nid = self.marker_names.intern(nm);
            let time_of = |c: Col<'_>| t.get(c, i).and_then(J::as_f64);
            let mark = if phase.is_absent() {
                unphased(time_of(time), t.get(data, i).unwrap_or(J::Null))
            } else {
                match t.get(phase, i).and_then(J::as_u64) {
                    Some(0) => None,
                    Some(1) => Some(Mark::Interval(time_of(start), time_of(end))),
                    Some(2) => Some(Mark::Start(time_of(start))),
                    Some(3) => Some(Mark::End(time_of(end))),
                    _ => {
                        self.bad_markers.hit(|| at("its phase is not 0 to 3"));
                        continue;
                    }
                }
            };
            self.mark(buf, &mut open, nid, mark, shift, || {
                at("its time is not a number")
            });
        }
        self.unpaired += open.values().map(|v| v.len() as u64).sum::<u64>();
        Ok(())
    }

    /// Adds what one marker says to `buf`: an interval, or one end of a pair.
    fn mark(
        &mut self,
        buf: &mut ThreadBuf,
        open: &mut HashMap<NameId, Vec<f64>>,
        name: NameId,
        mark: Option<Mark>,
        shift: f64,
        at: impl FnOnce() -> String,
    ) {
        let ok = |t: f64| t.is_finite() && t.abs() < MAX_MS;
        let (a, b) = match mark {
            None => return,
            Some(Mark::Start(Some(a))) if ok(a) => {
                open.entry(name).or_default().push(a);
                return;
            }
            Some(Mark::End(Some(b))) if ok(b) => match open.get_mut(&name).and_then(Vec::pop) {
                Some(a) => (a, b),
                None => {
                    self.unpaired += 1;
                    return;
                }
            },
            Some(Mark::Interval(Some(a), Some(b))) if ok(a) && ok(b) => (a, b),
            Some(_) => return self.bad_markers.hit(at),
        };
        if b < a {
            return self
                .bad_markers
                .hit(|| format!("{} (it ends before it starts)", at()));
        }
        buf.marks.push((a + shift, b + shift, name));
    }

    fn cleopatra(&mut self, root: J<'_>) -> Result<(), ImportError> {
        let interval = root
            .get("meta")
            .get("interval")
            .as_f64()
            .filter(|i| *i > 0.0 && *i < 1e6)
            .unwrap_or(1.0);
        self.interval_ms = Some(interval);
        let mut symbols: HashMap<u64, NameId> = HashMap::new();
        for (k, v) in root
            .get("symbolicationTable")
            .object()
            .into_iter()
            .flatten()
        {
            if let (Ok(k), Some(s)) = (k.parse::<u64>(), v.view().as_str()) {
                symbols.insert(k, self.out.intern(s));
            }
        }
        let pj = root.get("profileJSON");
        // (where its samples are, the thread)
        let threads: Vec<(String, J<'_>)> = match (pj.array(), pj.get("threads")) {
            (Some(_), _) => vec![("profileJSON".to_string(), pj)],
            (_, t) if t.is_object() => {
                let mut v: Vec<(u64, &str, J<'_>)> = t
                    .object()
                    .into_iter()
                    .flatten()
                    .map(|(k, t)| (k.parse().unwrap_or(u64::MAX), k.as_ref(), t.view()))
                    .collect();
                v.sort_by_key(|&(n, _, _)| n);
                v.into_iter()
                    .map(|(_, k, t)| (format!("profileJSON.threads[\"{k}\"].samples"), t))
                    .collect()
            }
            (_, t) => match t.array() {
                Some(a) => a
                    .iter()
                    .enumerate()
                    .map(|(i, t)| (format!("profileJSON.threads[{i}].samples"), t))
                    .collect(),
                None => {
                    return Err(self.invalid(
                        "profileJSON",
                        "expected an array of samples or an object with `threads`",
                    ));
                }
            },
        };
        let mut frames: Vec<NameId> = Vec::new();
        for (i, (path, th)) in threads.into_iter().enumerate() {
            let (list, info) = match th.array() {
                Some(a) => (
                    a,
                    ThreadInfo {
                        name: "GeckoMain".into(),
                        ..ThreadInfo::default()
                    },
                ),
                None => match th.get("samples").array() {
                    Some(a) => (a, thread_info(th, i)),
                    None => return Err(self.invalid(&path, "expected an array")),
                },
            };
            let mut buf = self.thread(info);
            buf.event = self.event("samples");
            let mut last = 0.0;
            'samples: for (k, s) in list.iter().enumerate() {
                frames.clear();
                for f in s.get("frames").array().into_iter().flat_map(Arr::iter) {
                    let id = match f.as_str() {
                        Some(name) => Some(self.out.intern(name)),
                        None => f.as_u64().and_then(|n| symbols.get(&n).copied()),
                    };
                    let Some(id) = id else {
                        let at =
                            || format!("{path}[{k}]: frame {f} is not in the symbolicationTable");
                        self.bad_samples.hit(at);
                        continue 'samples;
                    };
                    frames.push(id);
                }
                let t = s
                    .get("extraInfo")
                    .get("time")
                    .as_f64()
                    .filter(|t| t.is_finite() && t.abs() < MAX_MS);
                last = t.unwrap_or(last + interval);
                buf.time.push(last);
                buf.stack.push(self.out.stacks.path(frames.iter().copied()));
                buf.weight.push(1);
            }
            let mut open = HashMap::new();
            let markers = th.get("markers").array();
            for (k, m) in markers.into_iter().flat_map(Arr::iter).enumerate() {
                let at = || format!("{path} marker {k}: its time is not a number");
                let Some(nm) = m.get("name").as_str() else {
                    continue;
                };
                let nid = self.marker_names.intern(nm);
                let mark = unphased(m.get("time").as_f64(), m.get("data"));
                self.mark(&mut buf, &mut open, nid, mark, 0.0, at);
            }
            self.unpaired += open
                .values()
                .map(|v: &Vec<f64>| v.len() as u64)
                .sum::<u64>();
            self.threads.push(buf);
        }
        Ok(())
    }

    /// Samples on one clock, and spans of the markers near them.
    fn finish(mut self) -> Result<(Samples, Option<SpanSet>), ImportError> {
        let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
        for t in self.threads.iter().flat_map(|b| &b.time) {
            lo = lo.min(*t);
            hi = hi.max(*t);
        }
        if lo > hi {
            if let Some(first) = self.bad_samples.first.take() {
                let n = self.bad_samples.n;
                let msg = format!("no sample is usable ({n} skipped, this the first)");
                return Err(self.invalid(&first, msg));
            }
        } else {
            let reach = (hi - lo).max(1000.0);
            let (from, to) = (lo - reach, hi + reach);
            let mut outside = 0;
            for b in &mut self.threads {
                let before = b.marks.len();
                b.marks.retain(|&(a, e, _)| e >= from && a <= to);
                outside += before - b.marks.len();
            }
            if outside > 0 {
                self.note(&format!(
                    "{} far outside the samples' time range left out (DevTools recordings \
                     keep markers on another clock)",
                    count(outside as u64, "marker")
                ));
            }
        }
        let marks = self.threads.iter().flat_map(|b| &b.marks);
        let base = marks.fold(lo, |m, &(a, _, _)| m.min(a));
        let base = if base.is_finite() { base } else { 0.0 };
        let scale = self.time_scale;
        let origin = ((self.start_ms * NS_PER_MS).round() as i128)
            .saturating_add((base * scale).round() as i128);
        let origin_ns = origin.clamp(0, i128::from(u64::MAX)) as u64;
        let ns = |t: f64| ((t - base) * scale).round() as u64;
        // Each thread's stream made on all cores, its columns moved out of its buffer.
        let columns: Vec<_> = (self.threads.iter_mut())
            .filter(|b| !b.time.is_empty())
            .map(|b| {
                use std::mem::take;
                let (time, stack) = (take(&mut b.time), take(&mut b.stack));
                (
                    b.thread,
                    b.event,
                    time,
                    stack,
                    take(&mut b.weight),
                    take(&mut b.cpu),
                )
            })
            .collect();
        let streams = crate::par::map_each(columns, |(thread, event, time, stack, w, cpu)| {
            let counters = match cpu.iter().any(|&c| c > 0) {
                true => vec![Counter {
                    kind: CounterKind::CpuNs,
                    values: cpu
                        .iter()
                        .map(|&c| u32::try_from(c).unwrap_or(u32::MAX))
                        .collect(),
                }],
                false => Vec::new(),
            };
            Stream {
                thread,
                event,
                time: time.iter().map(|&t| ns(t)).collect(),
                stack,
                weight: Weights::from_values(w),
                counters,
                ..Stream::default()
            }
        });
        for st in streams {
            // Each buffer is a thread of its own: its stream is new and empty.
            let s = self.out.stream(st.thread, st.event);
            self.out.streams[s] = st;
        }
        for (d, what) in [(&self.bad_samples, "sample"), (&self.bad_markers, "marker")] {
            if let Some(first) = &d.first {
                let note = format!("{} skipped (first: {first})", count(d.n, what));
                self.out.meta_mut().warnings.notes.push(note);
            }
        }
        if self.unpaired > 0 {
            let what = count(self.unpaired, "interval marker");
            self.note(&format!("{what} without a start or an end left out"));
        }
        self.out.origin_ns = origin_ns;
        let samples = self.out.finish();
        // Spans: per track, sorted by start (longer first), nested by containment.
        let mut spans: Vec<(u32, u64, u64, NameId)> = Vec::new();
        let mut set = SpanSet {
            names: self.marker_names,
            origin_ns,
            ..SpanSet::default()
        };
        for b in self.threads.iter().filter(|b| !b.marks.is_empty()) {
            let track = set.tracks.len() as u32;
            set.tracks.push(Track::new(b.info.label()));
            set.track_info.push(TrackInfo {
                kind: TrackKind::Thread,
                group: b.info.process.clone(),
                pid: b.info.pid,
                tid: b.info.tid,
                sort_index: 0,
            });
            spans.extend(b.marks.iter().map(|&(a, e, n)| (track, ns(a), ns(e), n)));
        }
        if spans.is_empty() {
            return Ok((samples, None));
        }
        spans.sort_unstable_by_key(|&(t, a, e, _)| (t, a, std::cmp::Reverse(e)));
        let shift = samples.origin_ns.saturating_sub(origin_ns);
        let shift = if spans.iter().all(|s| s.1 >= shift) {
            shift
        } else {
            0
        };
        set.origin_ns += shift;
        let mut stack: Vec<usize> = Vec::new();
        for (i, &(track, a, e, name)) in spans.iter().enumerate() {
            while let Some(&top) = stack.last() {
                let (tt, _, te, _) = spans[top];
                if tt == track && a < te && e <= te {
                    break;
                }
                stack.pop();
            }
            set.parent
                .push(stack.last().map_or(NO_PARENT, |&p| p as u32));
            stack.push(i);
            set.start_ns.push(a - shift);
            set.dur_ns.push(e - a);
            set.name.push(name);
            set.track.push(track);
        }
        Ok((samples, Some(set)))
    }
}

mod samples;
#[cfg(test)]
mod tests;
