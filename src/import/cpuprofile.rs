//! V8 CPU profiles: Chrome DevTools' `.cpuprofile` (what `node --cpu-prof` writes) and the
//! same profile inside Chrome performance traces (`Profile` + `ProfileChunk` events, older
//! traces' single `CpuProfile` event), as time-ordered samples.
//!
//! A profile is a tree of `nodes` (`id`, `callFrame {functionName, url, lineNumber,
//! columnNumber}`, and `parent` or `children`), `samples` (a node id per sample) and
//! `timeDeltas` (microseconds from the previous sample; the first from `startTime`).
//! A trace splits it: the `Profile` event (by `id`, on the sampled thread) gives
//! `startTime`, and `ProfileChunk` events with the same `id` add nodes, samples and deltas.
//!
//! Rules, as DevTools and speedscope read them: `(root)` is not a frame; `(program)`,
//! `(idle)` and `(garbage collector)` are; an empty function name is `(anonymous)`; a
//! frame with a script is named `name file:line` (the file's last path segment, 1-based
//! line) so two functions of one name in two files stay apart. Deltas can be negative
//! (samples out of order): the samples are sorted by time. A sample's weight is the time
//! until the next sample of its thread, in nanoseconds (the last one gets the median
//! interval), so totals read as time, as DevTools' self and total times do.
//!
//! Node ids are looked up in a map, or a table indexed by id when every id is below a
//! bound set by the number of nodes; the tree is walked with a loop that gives up on
//! cycles (counted), so nothing in the file sizes an allocation or recursion.
//!
//! A `.cpuprofile` file is read without building its arrays (`parse_fast`): its
//! `samples` and `timeDeltas` are read side by side into the stream's columns, so a 1 GB
//! profile needs its samples' memory (12 B each, 4 more for the weights) and no more.
//! Whatever that reader does not take exactly as serde would goes to serde.

use super::ImportError;
use super::chrome::scan::{skip_string, skip_value};
use crate::model::samples::{EMPTY_STACK, Samples, StackId, Stream, ThreadInfo, Weights};
use crate::model::units::{Unit, ValueFormat};
use crate::model::{SourceFormat, Warnings};
use serde::Deserialize;
use std::collections::HashMap;

/// A call frame.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CallFrame {
    /// The function's name; empty for anonymous functions.
    #[serde(default)]
    pub function_name: String,
    /// The script's URL.
    #[serde(default)]
    pub url: String,
    /// 0-based line.
    #[serde(default)]
    pub line_number: Option<i64>,
}

/// A node of the profile's tree.
#[derive(Clone, Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Node {
    /// Its id.
    pub id: u64,
    /// Its frame.
    #[serde(default)]
    pub call_frame: CallFrame,
    /// Its parent (newer profiles).
    #[serde(default)]
    pub parent: Option<u64>,
    /// Its children (older profiles).
    #[serde(default)]
    pub children: Option<Vec<u64>>,
    /// Samples that hit it (its self count), when the writer gives it.
    #[serde(default)]
    pub hit_count: u64,
}

/// The profile object (`.cpuprofile`, a trace's `cpuProfile`).
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Profile {
    /// The tree.
    #[serde(default)]
    pub nodes: Vec<Node>,
    /// Microseconds.
    #[serde(default)]
    pub start_time: Option<f64>,
    /// A node id per sample.
    #[serde(default)]
    pub samples: Vec<u64>,
    /// Microseconds from the previous sample.
    #[serde(default)]
    pub time_deltas: Vec<f64>,
}

/// One thread's profile being put together from a trace's events (or one file).
#[derive(Debug, Default)]
pub struct Assembly {
    /// Thread name.
    pub thread: ThreadInfo,
    /// Microseconds on the trace's clock.
    pub start_us: Option<f64>,
    /// Every node seen.
    pub nodes: Vec<Node>,
    /// `(node, delta µs)` per sample in file order.
    pub samples: Vec<(u64, f64)>,
}

impl Assembly {
    /// Adds a profile (or a chunk of one).
    pub fn add(&mut self, p: Profile, deltas_outside: Option<Vec<f64>>) {
        if self.start_us.is_none() {
            self.start_us = p.start_time;
        }
        self.nodes.extend(p.nodes);
        let deltas = deltas_outside.unwrap_or(p.time_deltas);
        let n = p.samples.len();
        self.samples.extend(
            p.samples
                .into_iter()
                .zip(deltas.into_iter().chain(std::iter::repeat(0.0)))
                .take(n),
        );
    }
}

/// Adds the samples of `a` as a thread of `out` (event "cpu", weights in nanoseconds);
/// damage is counted in `warnings`.
pub fn add_thread(out: &mut Samples, a: Assembly, warnings: &mut Warnings) {
    let event = out.event(
        "cpu",
        ValueFormat {
            unit: Unit::Nanoseconds,
            ..ValueFormat::default()
        },
    );
    let (index, stack) = node_stacks(out, &a.nodes, warnings);
    let lookup = NodeLookup::new(&index, &stack);
    // Times: start + running sum of the deltas; then sorted, weighed by the gap to the
    // next sample.
    let thread = out.add_thread(a.thread);
    let s = out.stream(thread, event);
    let st = &mut out.streams[s];
    st.time.reserve_exact(a.samples.len());
    st.stack.reserve_exact(a.samples.len());
    let mut t = start_ns(a.start_us);
    let mut unknown = 0u64;
    for &(node, delta) in &a.samples {
        if delta.is_finite() {
            t += delta * 1000.0;
        }
        match lookup.get(node) {
            Some(id) => {
                st.time.push(clamp_ns(t));
                st.stack.push(id);
            }
            None => unknown += 1,
        }
    }
    if unknown > 0 {
        warnings.notes.push(unknown_note(unknown));
    }
    weigh_by_gaps(st);
}

/// The note for `samples` samples with `deltas` time deltas (named `member` in the file).
fn deltas_note(samples: usize, deltas: usize, member: &str) -> String {
    let what = if deltas < samples {
        "missing deltas count as 0"
    } else {
        "the extra ones are ignored"
    };
    format!("{samples} samples but {deltas} {member}: {what}")
}

/// Nanoseconds of the profile's start (`startTime`, microseconds; 0 without one).
fn start_ns(start_us: Option<f64>) -> f64 {
    (start_us.unwrap_or(0.0) * 1000.0).max(0.0)
}

/// A running time in nanoseconds as a sample time: never negative, and far from
/// overflowing when offsets are added.
fn clamp_ns(t: f64) -> u64 {
    t.max(0.0).min(u64::MAX as f64 / 2.0) as u64
}

fn unknown_note(unknown: u64) -> String {
    format!("{unknown} samples naming a node the profile does not have skipped")
}

/// Sorts `st`'s samples by time (a stable sort: samples of equal times keep the file's
/// order) and weighs each by the time to the next, the last by the median gap (of at
/// most 100 001 gaps evenly spread: exact for ordinary recordings, bounded for huge
/// ones); at least 1 ns each.
fn weigh_by_gaps(st: &mut Stream) {
    st.sort_by_time();
    let time = &st.time;
    let n = time.len();
    let median = match n.checked_sub(1) {
        None | Some(0) => 0,
        Some(gaps) => {
            let step = gaps.div_ceil(100_001).max(1);
            let mut some: Vec<u64> = (0..gaps)
                .step_by(step)
                .map(|k| time[k + 1] - time[k])
                .collect();
            let mid = some.len() / 2;
            *some.select_nth_unstable(mid).1
        }
    };
    let gap = |k: usize| {
        time.get(k + 1)
            .map_or(median, |&next| next - time[k])
            .max(1)
    };
    let mut narrow: Vec<u32> = Vec::with_capacity(n);
    for k in 0..n {
        match u32::try_from(gap(k)) {
            Ok(w) => narrow.push(w),
            Err(_) => {
                // A gap past 4 s: every weight in 64 bits.
                let mut w = Weights::default();
                (0..n).for_each(|k| w.push(gap(k)));
                st.weight = w;
                return;
            }
        }
    }
    st.weight = if narrow.iter().all(|&w| w == 1) {
        Weights::Ones(n)
    } else {
        Weights::Narrow(narrow)
    };
}

/// A node's stack by its id: a table indexed by id where the ids are small numbers (as
/// V8 numbers its nodes, from 1), else a map. The table is sized by the node list, never
/// by an id alone.
enum NodeLookup {
    Direct(Vec<StackId>),
    Map(HashMap<u64, StackId>),
}

/// Not a node of the profile, in [`NodeLookup::Direct`] (stack ids are positions in the
/// stack table; `EMPTY_STACK`, `u32::MAX`, is the root's).
const NOT_A_NODE: StackId = StackId::MAX - 1;

impl NodeLookup {
    fn new(index: &HashMap<u64, usize>, stack: &[StackId]) -> NodeLookup {
        let limit = 4 * index.len() as u64 + 4096;
        if index.keys().all(|&id| id < limit) {
            let len = index.keys().max().map_or(0, |&m| m as usize + 1);
            let mut table = vec![NOT_A_NODE; len];
            for (&id, &i) in index {
                table[id as usize] = stack[i];
            }
            NodeLookup::Direct(table)
        } else {
            NodeLookup::Map(index.iter().map(|(&id, &i)| (id, stack[i])).collect())
        }
    }

    #[inline]
    fn get(&self, id: u64) -> Option<StackId> {
        match self {
            NodeLookup::Direct(t) => usize::try_from(id)
                .ok()
                .and_then(|i| t.get(i).copied())
                .filter(|&s| s != NOT_A_NODE),
            NodeLookup::Map(m) => m.get(&id).copied(),
        }
    }
}

/// Each node's stack in `out` (by index in `nodes`), and the index of each node id.
fn node_stacks(
    out: &mut Samples,
    nodes: &[Node],
    warnings: &mut Warnings,
) -> (HashMap<u64, usize>, Vec<StackId>) {
    // Parents from `parent`, or from `children` lists.
    let index: HashMap<u64, usize> = nodes.iter().enumerate().map(|(i, n)| (n.id, i)).collect();
    let mut parent: Vec<Option<usize>> = nodes
        .iter()
        .map(|n| n.parent.and_then(|p| index.get(&p).copied()))
        .collect();
    for (i, n) in nodes.iter().enumerate() {
        for c in n.children.iter().flatten() {
            if let Some(&ci) = index.get(c)
                && parent[ci].is_none()
                && ci != i
            {
                parent[ci] = Some(i);
            }
        }
    }
    // Each node's stack, resolved root first with an explicit path; a cycle is cut.
    const UNRESOLVED: StackId = StackId::MAX - 1;
    let mut stack = vec![UNRESOLVED; nodes.len()];
    let mut path = Vec::new();
    let mut cycles = 0u64;
    let mut on_path = vec![false; nodes.len()];
    for start in 0..nodes.len() {
        if stack[start] != UNRESOLVED {
            continue;
        }
        path.clear();
        let mut at = Some(start);
        let mut base = EMPTY_STACK;
        while let Some(i) = at {
            if stack[i] != UNRESOLVED {
                base = stack[i];
                break;
            }
            if on_path[i] {
                cycles += 1;
                break;
            }
            on_path[i] = true;
            path.push(i);
            at = parent[i];
        }
        for &i in path.iter().rev() {
            on_path[i] = false;
            let f = &nodes[i].call_frame;
            base = if f.function_name == "(root)" {
                base
            } else {
                let name = frame_name(f);
                let id = out.intern(&name);
                out.stacks.child(base, id)
            };
            stack[i] = base;
        }
    }
    if cycles > 0 {
        warnings
            .notes
            .push(format!("{cycles} cycles in the node tree cut"));
    }
    (index, stack)
}

/// The profile the `nodes` array at the head of a `.cpuprofile` gives by the nodes' own
/// `hitCount`s (each node's self samples, counted), without reading the samples: the
/// preview of a big profile, whose node list comes first and is small. `None` when the
/// head holds no complete `nodes` array or its nodes carry no hit counts.
pub fn hit_count_profile(file: &str, head: &[u8]) -> Option<crate::model::Profile> {
    let nodes = nodes_at_head(head)?;
    if nodes.iter().all(|n| n.hit_count == 0) {
        return None;
    }
    let mut out = Samples::new(file, SourceFormat::CpuProfile);
    let mut warnings = Warnings::default();
    let (_, stack) = node_stacks(&mut out, &nodes, &mut warnings);
    let event = out.event("cpu", ValueFormat::default());
    let thread = out.add_thread(ThreadInfo {
        name: "main".into(),
        ..ThreadInfo::default()
    });
    let s = out.stream(thread, event);
    for (k, n) in nodes.iter().enumerate() {
        if n.hit_count > 0 {
            out.push(s, k as u64, stack[k], n.hit_count);
        }
    }
    out.finish().aggregate(Default::default()).ok()
}

/// The top-level `"nodes": [...]` array of a JSON object in `head`, parsed, when it ends
/// within `head` (strings and escapes skipped while its brackets are matched).
fn nodes_at_head(head: &[u8]) -> Option<Vec<Node>> {
    let open = head.iter().position(|b| !b.is_ascii_whitespace())?;
    if head[open] != b'{' {
        return None;
    }
    let mut i = open + 1;
    let ws = |i: &mut usize| {
        while *i < head.len() && head[*i].is_ascii_whitespace() {
            *i += 1;
        }
    };
    ws(&mut i);
    let rest = &head[i..];
    let key = b"\"nodes\"";
    if !rest.starts_with(key) {
        return None;
    }
    i += key.len();
    ws(&mut i);
    if head.get(i) != Some(&b':') {
        return None;
    }
    i += 1;
    ws(&mut i);
    if head.get(i) != Some(&b'[') {
        return None;
    }
    let start = i;
    let mut depth = 0usize;
    while i < head.len() {
        match head[i] {
            b'"' => {
                i += 1;
                while i < head.len() && head[i] != b'"' {
                    i += if head[i] == b'\\' { 2 } else { 1 };
                }
            }
            b'[' | b'{' => depth += 1,
            b']' | b'}' => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return serde_json::from_slice(&head[start..=i]).ok();
                }
            }
            _ => {}
        }
        i += 1;
    }
    None
}

/// `name file:line`, `(anonymous) file:line`, or the bare name for frames without a script.
pub(super) fn frame_name(f: &CallFrame) -> String {
    let name = if f.function_name.is_empty() {
        "(anonymous)"
    } else {
        &f.function_name
    };
    if f.url.is_empty() {
        return name.to_string();
    }
    let file = f
        .url
        .trim_end_matches('/')
        .rsplit('/')
        .next()
        .unwrap_or(&f.url);
    match f.line_number {
        Some(l) if l >= 0 => format!("{name} {file}:{}", l + 1),
        _ => format!("{name} {file}"),
    }
}

/// Parses a `.cpuprofile` file: by [`parse_fast`], or where it declines, by serde.
pub fn parse(file: &str, text: &[u8]) -> Result<Samples, ImportError> {
    match parse_fast(file, text, Halves::Auto) {
        Some(done) => done,
        // No `nodes` list: perhaps the old form, its tree nested under `head`.
        None if super::v8_tree::has_head_tree(text) => super::v8_tree::parse_cpu(file, text),
        None => parse_whole(file, text),
    }
}

/// Reads a `.cpuprofile` without building its arrays: the top-level object's members are
/// located ([`Members`]), `nodes` and `startTime` parsed by serde, then `samples` and
/// `timeDeltas` read side by side, number by number, into the stream's columns. Read by
/// serde, a 1 GB profile (108 M samples) took 13 s and 6.9 GB: two arrays of 8-byte
/// numbers, their pairs, the time-stamped pairs and the gaps, each a fresh gigabyte to
/// fault in; this way 2.7-3.1 s on two cores and 2.7 GB (the stream's own columns).
///
/// `None` where the file has no `nodes` (an old-form profile, or none at all) or holds
/// anything this reader does not take exactly as serde would (a member name with escapes,
/// a member twice, a number JSON does not allow or one of the wrong type, no samples):
/// [`parse_whole`] reads it then, and reports its errors at serde's lines and columns.
/// Every byte is checked either way: members this reader skips are checked by serde.
fn parse_fast(file: &str, text: &[u8], halves: Halves) -> Option<Result<Samples, ImportError>> {
    let m = Members::find(text)?;
    let nodes: Vec<Node> = serde_json::from_slice(&text[m.nodes?]).ok()?;
    let start_us: Option<f64> = match m.start_time {
        Some(r) => serde_json::from_slice(&text[r]).ok()?,
        None => None,
    };
    let mut samples = Numbers::of(text, m.samples);
    let mut deltas = Numbers::of(text, m.deltas);

    let mut out = Samples::new(file, SourceFormat::CpuProfile);
    let event = out.event(
        "cpu",
        ValueFormat {
            unit: Unit::Nanoseconds,
            ..ValueFormat::default()
        },
    );
    let mut tree_notes = Warnings::default();
    let (index, stack) = node_stacks(&mut out, &nodes, &mut tree_notes);
    let lookup = NodeLookup::new(&index, &stack);
    let thread = out.add_thread(ThreadInfo {
        name: "main".into(),
        ..ThreadInfo::default()
    });
    let s = out.stream(thread, event);
    let st = &mut out.streams[s];
    let start = start_ns(start_us);
    let two = match halves {
        Halves::Auto => crate::par::two_threads_for(samples.inner.len() / 8),
        Halves::Always => true,
        Halves::Never => false,
    };
    let halves = if two {
        read_in_halves(&samples, &deltas, &lookup, start, st)
    } else {
        None
    };
    let Read {
        samples: n_samples,
        deltas: n_deltas,
        unknown,
    } = match halves {
        Some(read) => read?,
        None => read_in_order(&mut samples, &mut deltas, &lookup, start, st)?,
    };
    if n_samples == 0 {
        return None;
    }
    let mut warnings = Warnings::default();
    if n_deltas != n_samples {
        warnings
            .notes
            .push(deltas_note(n_samples, n_deltas, "timeDeltas"));
    }
    warnings.notes.append(&mut tree_notes.notes);
    if unknown > 0 {
        warnings.notes.push(unknown_note(unknown));
    }
    weigh_by_gaps(st);
    out.meta_mut().warnings = warnings;
    Some(Ok(out.finish()))
}

/// Whether [`parse_fast`] reads the samples in two halves ([`read_in_halves`]).
#[derive(Clone, Copy, Debug)]
enum Halves {
    /// On two cores or more, past 512 KiB of samples.
    Auto,
    #[cfg_attr(not(test), allow(dead_code))]
    Always,
    #[cfg_attr(not(test), allow(dead_code))]
    Never,
}

/// What reading a profile's sample arrays counted.
#[derive(Default)]
struct Read {
    samples: usize,
    deltas: usize,
    /// Samples of nodes the profile does not have (skipped).
    unknown: u64,
}

/// Reads `samples` and `deltas` side by side into `st`'s columns, times from `start`
/// (ns) on: the running sum in floating point, as [`parse_whole`] makes it. `None` for
/// anything but numbers where they belong.
fn read_in_order(
    samples: &mut Numbers<'_>,
    deltas: &mut Numbers<'_>,
    lookup: &NodeLookup,
    start: f64,
    st: &mut Stream,
) -> Option<Read> {
    // At most one sample per comma and one more: reserved once (this bounds the columns
    // by the file's size, never by a number in it).
    let most = samples.most();
    st.time.reserve_exact(most);
    st.stack.reserve_exact(most);
    let mut t = start;
    let mut read = Read::default();
    while let Some(node) = samples.next_u64()? {
        read.samples += 1;
        if let Some(delta) = deltas.next_f64()? {
            read.deltas += 1;
            t += delta * 1000.0;
        }
        match lookup.get(node) {
            Some(id) => {
                st.time.push(clamp_ns(t));
                st.stack.push(id);
            }
            None => read.unknown += 1,
        }
    }
    while deltas.next_f64()?.is_some() {
        read.deltas += 1;
    }
    Some(read)
}

/// Sums below this many nanoseconds are exact in a 64-bit float.
const EXACT_NS: i64 = 1 << 53;

/// [`read_in_order`] on two threads, each half of the samples with its deltas (found by
/// counting commas). A float running sum cannot be split, but an integer one can: while
/// every delta is a whole number of microseconds and every sum stays below 2^53 ns, the
/// float sums are exactly the integer ones, so the halves sum in integers and the second
/// is shifted by the first's total. `None` where that does not hold (a fractional
/// delta, a start that is not a whole nanosecond, fewer deltas than the first half's
/// samples): the caller reads in order. `Some(None)`: not numbers where they belong.
fn read_in_halves(
    samples: &Numbers<'_>,
    deltas: &Numbers<'_>,
    lookup: &NodeLookup,
    start: f64,
    st: &mut Stream,
) -> Option<Option<Read>> {
    if start.fract() != 0.0 || start >= EXACT_NS as f64 || !st.time.is_empty() {
        return None;
    }
    let start = start as i64;
    let (s_all, d_all) = (samples.inner, deltas.inner);
    // The first half's samples end just before a comma past the middle; it has as many
    // deltas.
    let mid = s_all.len() / 2;
    let cut = mid + memchr::memchr(b',', &s_all[mid..])?;
    let first = commas(&s_all[..cut]) + 1;
    let d_cut = nth_comma(d_all, first)?;
    let most = first + commas(&s_all[cut..]);
    // Zeroed columns (fresh pages, touched only where written), each half writing its
    // share.
    let mut time = vec![0u64; most];
    let mut stack = vec![0 as StackId; most];
    let (t1, t2) = time.split_at_mut(first);
    let (k1, k2) = stack.split_at_mut(first);
    let half = |s: &'_ [u8], d: &'_ [u8], base: Option<i64>, t: &mut [u64], k: &mut [StackId]| {
        read_half(Numbers::new(s), Numbers::new(d), lookup, base, t, k)
    };
    let (a, b) = crate::par::both(
        || half(&s_all[..cut], &d_all[..d_cut], Some(start), t1, k1),
        || half(&s_all[cut + 1..], &d_all[d_cut + 1..], None, t2, k2),
    );
    let (a, b) = match (a, b) {
        (None, _) | (_, None) => return None,
        (Some(a), Some(b)) => (a, b),
    };
    let (Some(a), Some(b)) = (a, b) else {
        return Some(None);
    };
    // After a comma, a number: a half without one had a comma before the `]`.
    if b.read.samples == 0 || b.read.deltas == 0 {
        return Some(None);
    }
    if a.read.samples != first || a.read.deltas != first {
        return None;
    }
    // The second half's sums, shifted by the start and the first's total: every sum
    // below 2^53.
    let shift = start + a.sum;
    if shift.unsigned_abs() + b.max_abs >= EXACT_NS as u64 {
        return None;
    }
    for t in &mut time[first..first + b.written] {
        *t = (shift + *t as i64).max(0) as u64;
    }
    // Skipped samples (unknown nodes) leave the first half's share short.
    if a.written < first {
        time.copy_within(first..first + b.written, a.written);
        stack.copy_within(first..first + b.written, a.written);
    }
    let n = a.written + b.written;
    time.truncate(n);
    stack.truncate(n);
    time.shrink_to_fit();
    stack.shrink_to_fit();
    (st.time, st.stack) = (time, stack);
    Some(Some(Read {
        samples: a.read.samples + b.read.samples,
        deltas: a.read.deltas + b.read.deltas,
        unknown: a.read.unknown + b.read.unknown,
    }))
}

/// A half of [`read_in_halves`].
struct Half {
    read: Read,
    /// Samples written.
    written: usize,
    /// The sum of its deltas (ns) and the largest magnitude of its running sum.
    sum: i64,
    max_abs: u64,
}

/// Reads a half's samples and deltas into `time` and `stack`: with a `base`, the final
/// times (`base` plus the running sum, at least 0); without, the running sums as they
/// are (two's complement), for the caller to shift. `None`:
/// not for this split (a delta that is not a whole number of microseconds, or a sum
/// past 2^53 ns); `Some(None)`: not numbers where they belong.
fn read_half(
    mut samples: Numbers<'_>,
    mut deltas: Numbers<'_>,
    lookup: &NodeLookup,
    base: Option<i64>,
    time: &mut [u64],
    stack: &mut [StackId],
) -> Option<Option<Half>> {
    let b0 = base.unwrap_or(0);
    let mut h = Half {
        read: Read::default(),
        written: 0,
        sum: 0,
        max_abs: 0,
    };
    let next_delta = |deltas: &mut Numbers<'_>| -> Option<Option<Option<i64>>> {
        let Some(d) = deltas.next_f64()? else {
            return Some(Some(None));
        };
        // Whole microseconds whose nanoseconds are exact.
        if d.fract() != 0.0 || d.abs() >= (EXACT_NS / 1000) as f64 {
            return Some(None);
        }
        Some(Some(Some(d as i64 * 1000)))
    };
    while let Some(node) = match samples.next_u64() {
        Some(n) => n,
        None => return Some(None),
    } {
        h.read.samples += 1;
        match next_delta(&mut deltas) {
            None => return Some(None),
            Some(None) => return None,
            Some(Some(Some(d))) => {
                h.read.deltas += 1;
                h.sum += d;
                let m = (b0 + h.sum).unsigned_abs().max(h.sum.unsigned_abs());
                if m >= EXACT_NS as u64 {
                    return None;
                }
                h.max_abs = h.max_abs.max(h.sum.unsigned_abs());
            }
            Some(Some(None)) => {}
        }
        if let Some(id) = lookup.get(node) {
            // Within `time`: one slot per sample of the half, counted from its commas.
            time[h.written] = match base {
                Some(b) => (b + h.sum).max(0) as u64,
                None => h.sum as u64,
            };
            stack[h.written] = id;
            h.written += 1;
        } else {
            h.read.unknown += 1;
        }
    }
    loop {
        match next_delta(&mut deltas) {
            None => return Some(None),
            Some(None) => return None,
            Some(Some(Some(_))) => h.read.deltas += 1,
            Some(Some(None)) => break,
        }
    }
    Some(Some(h))
}

/// Commas in `t`.
fn commas(t: &[u8]) -> usize {
    t.iter().filter(|&&b| b == b',').count()
}

/// The index of the `n`th comma of `t` (from 1); `None` if it has fewer.
fn nth_comma(t: &[u8], n: usize) -> Option<usize> {
    const BLOCK: usize = 1 << 16;
    let mut left = n;
    let mut from = 0;
    while from < t.len() {
        let block = &t[from..(from + BLOCK).min(t.len())];
        let c = commas(block);
        if c >= left {
            return memchr::memchr_iter(b',', block)
                .nth(left - 1)
                .map(|i| from + i);
        }
        left -= c;
        from += block.len();
    }
    None
}

/// Where the members of a profile's top-level object are that [`parse_fast`] reads: the
/// byte ranges of their values.
#[derive(Default)]
struct Members {
    nodes: Option<std::ops::Range<usize>>,
    start_time: Option<std::ops::Range<usize>>,
    samples: Option<std::ops::Range<usize>>,
    deltas: Option<std::ops::Range<usize>>,
}

impl Members {
    /// The members of the object that is `text`; `None` for anything [`parse_fast`]
    /// leaves to serde. Other members' values are checked by serde here.
    fn find(text: &[u8]) -> Option<Members> {
        let mut m = Members::default();
        let mut i = json_ws(text, 0);
        if text.get(i) != Some(&b'{') {
            return None;
        }
        i = json_ws(text, i + 1);
        loop {
            if text.get(i) != Some(&b'"') {
                return None;
            }
            let key_end = skip_string(text, i + 1)?;
            let key = &text[i + 1..key_end - 1];
            if key.contains(&b'\\') {
                return None;
            }
            i = json_ws(text, key_end);
            if text.get(i) != Some(&b':') {
                return None;
            }
            let start = json_ws(text, i + 1);
            let end = match key {
                // Arrays of numbers only (checked while they are read): they end at the
                // first `]`.
                b"samples" | b"timeDeltas" => {
                    if text.get(start) != Some(&b'[') {
                        return None;
                    }
                    start + 1 + memchr::memchr(b']', &text[start + 1..])? + 1
                }
                _ => skip_value(text, start)?,
            };
            let slot = match key {
                b"nodes" => &mut m.nodes,
                b"startTime" => &mut m.start_time,
                b"samples" => &mut m.samples,
                b"timeDeltas" => &mut m.deltas,
                _ => {
                    serde_json::from_slice::<serde::de::IgnoredAny>(&text[start..end]).ok()?;
                    &mut None
                }
            };
            if slot.is_some() {
                return None;
            }
            *slot = Some(start..end);
            i = json_ws(text, end);
            match text.get(i) {
                Some(b',') => i = json_ws(text, i + 1),
                Some(b'}') => break,
                _ => return None,
            }
        }
        (json_ws(text, i + 1) == text.len()).then_some(m)
    }
}

/// The index of the first byte at or after `i` that is not JSON whitespace.
fn json_ws(text: &[u8], mut i: usize) -> usize {
    while matches!(text.get(i), Some(b' ' | b'\t' | b'\n' | b'\r')) {
        i += 1;
    }
    i
}

/// The numbers of a JSON array, read one at a time.
struct Numbers<'a> {
    /// Between the brackets.
    inner: &'a [u8],
    i: usize,
    first: bool,
}

impl<'a> Numbers<'a> {
    /// The array at `range` (from its `[` to after its `]`); an absent member reads as
    /// an empty array.
    fn of(text: &'a [u8], range: Option<std::ops::Range<usize>>) -> Numbers<'a> {
        Numbers::new(range.map_or(&[][..], |r| &text[r.start + 1..r.end - 1]))
    }

    /// The numbers of `inner`, the text between an array's brackets.
    fn new(inner: &'a [u8]) -> Numbers<'a> {
        Numbers {
            inner,
            i: 0,
            first: true,
        }
    }

    /// The most numbers the array can hold: one more than its commas.
    fn most(&self) -> usize {
        self.inner.iter().filter(|&&b| b == b',').count() + 1
    }

    /// The next number's text; `Some(None)` after the last; `None` for anything but
    /// numbers, the commas between them and whitespace.
    #[inline]
    fn token(&mut self) -> Option<Option<&'a [u8]>> {
        let t = self.inner;
        let mut i = json_ws(t, self.i);
        if self.first {
            self.first = false;
        } else if i < t.len() {
            if t[i] != b',' {
                return None;
            }
            i = json_ws(t, i + 1);
            if i == t.len() {
                // A comma before the `]`.
                return None;
            }
        }
        if i == t.len() {
            self.i = i;
            return Some(None);
        }
        let start = i;
        while i < t.len() && !matches!(t[i], b',' | b' ' | b'\t' | b'\n' | b'\r') {
            i += 1;
        }
        self.i = i;
        Some(Some(&t[start..i]))
    }

    /// Digits at `i` that make a JSON integer of at most `max` digits, followed by a
    /// comma or the end: their value and where they end. The common case of
    /// [`Numbers::next_u64`] and [`Numbers::next_f64`], read in one pass.
    #[inline]
    fn plain_digits(&self, i: usize, max: usize) -> Option<(u64, usize)> {
        let t = self.inner;
        let mut j = i;
        let mut v = 0u64;
        while let Some(&b) = t.get(j) {
            let d = b.wrapping_sub(b'0');
            if d > 9 {
                break;
            }
            v = v.wrapping_mul(10).wrapping_add(u64::from(d));
            j += 1;
        }
        let n = j - i;
        let ends = j == t.len() || t[j] == b',';
        (n > 0 && n <= max && !(n > 1 && t[i] == b'0') && ends).then_some((v, j))
    }

    /// Where the next number starts when only a comma (or nothing, first) comes before
    /// it; `None` for the general path.
    #[inline]
    fn plain_start(&self) -> Option<usize> {
        if self.first {
            return Some(self.i);
        }
        (self.inner.get(self.i) == Some(&b',')).then_some(self.i + 1)
    }

    /// The next number as a node id (a JSON integer that fits 64 bits).
    #[inline]
    fn next_u64(&mut self) -> Option<Option<u64>> {
        // 19 digits never overflow.
        if let Some(i) = self.plain_start()
            && let Some((v, end)) = self.plain_digits(i, 19)
        {
            (self.first, self.i) = (false, end);
            return Some(Some(v));
        }
        match self.token()? {
            None => Some(None),
            Some(tok) => json_uint(tok).map(Some),
        }
    }

    /// The next number (any JSON number, finite as a 64-bit float).
    #[inline]
    fn next_f64(&mut self) -> Option<Option<f64>> {
        // Integers of up to 15 digits are exact as floats.
        if let Some(i) = self.plain_start() {
            let neg = self.inner.get(i) == Some(&b'-');
            if let Some((v, end)) = self.plain_digits(i + usize::from(neg), 15) {
                (self.first, self.i) = (false, end);
                let v = v as f64;
                return Some(Some(if neg { -v } else { v }));
            }
        }
        let Some(tok) = self.token()? else {
            return Some(None);
        };
        if !is_json_number(tok) {
            return None;
        }
        let v: f64 = std::str::from_utf8(tok).ok()?.parse().ok()?;
        v.is_finite().then_some(Some(v))
    }
}

/// A JSON integer without sign (no leading zeros) that fits 64 bits.
#[inline]
fn json_uint(tok: &[u8]) -> Option<u64> {
    if tok.is_empty() || tok.len() > 1 && tok[0] == b'0' {
        return None;
    }
    let mut v = 0u64;
    for &b in tok {
        let d = b.wrapping_sub(b'0');
        if d > 9 {
            return None;
        }
        v = v.checked_mul(10)?.checked_add(u64::from(d))?;
    }
    Some(v)
}

/// Whether `tok` is a number by JSON's grammar: `-? int frac? exp?`.
fn is_json_number(tok: &[u8]) -> bool {
    let mut i = usize::from(tok.first() == Some(&b'-'));
    let digits = |i: &mut usize| {
        let s = *i;
        while tok.get(*i).is_some_and(u8::is_ascii_digit) {
            *i += 1;
        }
        *i - s
    };
    let int_start = i;
    let n = digits(&mut i);
    if n == 0 || n > 1 && tok[int_start] == b'0' {
        return false;
    }
    if tok.get(i) == Some(&b'.') {
        i += 1;
        if digits(&mut i) == 0 {
            return false;
        }
    }
    if matches!(tok.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(tok.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        if digits(&mut i) == 0 {
            return false;
        }
    }
    i == tok.len()
}

/// Parses a `.cpuprofile` file with serde: every array built, then combined.
fn parse_whole(file: &str, text: &[u8]) -> Result<Samples, ImportError> {
    let p: Profile = serde_json::from_slice(text).map_err(|e| ImportError::json(file, &e))?;
    from_profile(file, p, "timeDeltas")
}

/// The samples of a whole profile as one thread, `main` (`deltas`: the member the
/// deltas came from, for the note when there are fewer of them than samples).
pub(super) fn from_profile(file: &str, p: Profile, deltas: &str) -> Result<Samples, ImportError> {
    if p.samples.is_empty() {
        return Err(ImportError::NoSamples {
            file: file.to_string(),
            detail: format!(
                "the profile has {} nodes but an empty samples array",
                p.nodes.len()
            ),
        });
    }
    let mut out = Samples::new(file, SourceFormat::CpuProfile);
    let mut warnings = Warnings::default();
    let mut a = Assembly {
        thread: ThreadInfo {
            name: "main".into(),
            ..ThreadInfo::default()
        },
        ..Assembly::default()
    };
    if p.time_deltas.len() != p.samples.len() {
        warnings
            .notes
            .push(deltas_note(p.samples.len(), p.time_deltas.len(), deltas));
    }
    a.add(p, None);
    add_thread(&mut out, a, &mut warnings);
    out.meta_mut().warnings = warnings;
    Ok(out.finish())
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    const PROFILE: &str = r#"{"nodes":[
        {"id":1,"callFrame":{"functionName":"(root)","url":"","lineNumber":-1},"children":[2,4]},
        {"id":2,"callFrame":{"functionName":"main","url":"file:///a/app.js","lineNumber":9},"children":[3]},
        {"id":3,"callFrame":{"functionName":"","url":"file:///a/app.js","lineNumber":19}},
        {"id":4,"callFrame":{"functionName":"(idle)","url":""}}],
        "startTime":1000,"endTime":2000,
        "samples":[2,3,3,4,2],"timeDeltas":[100,100,100,100,200]}"#;

    #[test]
    fn a_cpuprofile_in_time_order_with_time_weights() {
        let s = parse("t.cpuprofile", PROFILE.as_bytes()).unwrap();
        let st = &s.streams[0];
        assert_eq!(s.origin_ns, 1_100_000);
        assert_eq!(st.time, [0, 100_000, 200_000, 300_000, 500_000]);
        // Each sample weighs the time to the next; the last the median gap.
        let w: Vec<u64> = (0..5).map(|i| st.weight.get(i)).collect();
        assert_eq!(w, [100_000, 100_000, 100_000, 200_000, 100_000]);
        let p = s.aggregate(Default::default()).unwrap();
        assert_eq!(
            p.folded_lines(),
            [
                "(idle) 200000",
                "main app.js:10 200000",
                "main app.js:10;(anonymous) app.js:20 200000"
            ]
        );
        assert_eq!(p.values.unit, Unit::Nanoseconds);
    }

    #[test]
    fn parents_negative_deltas_cycles_and_unknown_nodes() {
        let text = r#"{"nodes":[
            {"id":10,"callFrame":{"functionName":"(root)"}},
            {"id":11,"callFrame":{"functionName":"a"},"parent":10},
            {"id":12,"callFrame":{"functionName":"b"},"parent":13},
            {"id":13,"callFrame":{"functionName":"c"},"parent":12}],
            "startTime":0,"samples":[11,12,99,11],"timeDeltas":[10,20,5,-15]}"#;
        let s = parse("t.cpuprofile", text.as_bytes()).unwrap();
        let notes = &s.meta().warnings.notes;
        assert!(notes.iter().any(|n| n.contains("1 cycles")), "{notes:?}");
        assert!(
            notes.iter().any(|n| n.contains("1 samples naming")),
            "{notes:?}"
        );
        // Times 10, 30, (35 skipped), 20 µs: sorted.
        assert_eq!(s.streams[0].time, [0, 10_000, 20_000]);
    }

    /// The preview of a big profile: the node list's hit counts. In a real `node
    /// --cpu-prof` recording they count a few more ticks than the samples array holds
    /// (277 against 264 here: `(program)` has 14 hits and 1 sample), on the same stacks
    /// and more. A head that ends inside the node list gives no preview.
    #[test]
    fn the_node_lists_hit_counts_are_the_samples_aggregated() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/data/recordings/node-fib.cpuprofile"
        );
        let bytes = std::fs::read(path).unwrap();
        let hits = hit_count_profile("fib.cpuprofile", &bytes).unwrap();
        let p: Profile = serde_json::from_slice(&bytes).unwrap();
        let (h, n) = (hits.tree.grand_total(), p.samples.len() as u64);
        assert!(h >= n && h <= n + n / 10, "{h} hits, {n} samples");
        let paths = |p: &crate::model::Profile| -> std::collections::BTreeSet<String> {
            p.folded_lines()
                .iter()
                .map(|l| l.rsplit_once(' ').unwrap().0.to_string())
                .collect()
        };
        let full = parse("fib.cpuprofile", &bytes).unwrap();
        let full = full.aggregate(Default::default()).unwrap();
        assert!(paths(&full).is_subset(&paths(&hits)));
        // Cut inside the node list, or a list that is not the first key: no preview.
        let cut = memchr::memmem::find(&bytes, b"\"samples\"").unwrap() / 2;
        assert!(hit_count_profile("x", &bytes[..cut]).is_none());
        assert!(hit_count_profile("x", br#"{"startTime":1,"nodes":[]}"#).is_none());
        assert!(nodes_at_head(br#" {"nodes" : [{"id":1,"hitCount":2}], "x":1"#).is_some());
    }

    #[test]
    fn bad_json_and_no_samples_are_clear() {
        let e = parse("x.cpuprofile", b"{\"nodes\": [1,")
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("x.cpuprofile: line 1, column"), "{e}");
        let e = parse("x.cpuprofile", br#"{"nodes":[],"samples":[]}"#)
            .unwrap_err()
            .to_string();
        assert!(e.contains("empty samples array"), "{e}");
    }

    /// What a parse gives, in terms that do not depend on the order stacks and names were
    /// interned in.
    pub(crate) fn summary(s: &Samples) -> (u64, Vec<u64>, Vec<u64>, Vec<String>, Vec<String>) {
        let st = &s.streams[0];
        let stacks = st
            .stack
            .iter()
            .map(|&id| {
                let frames = if id == EMPTY_STACK {
                    Vec::new()
                } else {
                    s.stacks.frames_of(id)
                };
                let names: Vec<&str> = frames.iter().map(|&f| s.names.get(f)).collect();
                names.join(";")
            })
            .collect();
        let weights = (0..st.len()).map(|i| st.weight.get(i)).collect();
        let notes = s.meta().warnings.notes.clone();
        (s.origin_ns, st.time.clone(), weights, stacks, notes)
    }

    /// Random profiles, written with whitespace, member orders, extra members, unknown
    /// nodes, negative and fractional deltas and mismatched lengths: the fast reader
    /// reads each, and as serde does.
    #[test]
    fn the_fast_reader_reads_as_serde_does() {
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = move |n: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % n.max(1)
        };
        for round in 0..300 {
            let n_nodes = 1 + next(40);
            let base = [1, 100, 1 << 40][next(3) as usize];
            let mut nodes = Vec::new();
            for k in 0..n_nodes {
                let id = base + k;
                let name = ["(root)", "main", "", "work", "(idle)"][next(5) as usize];
                let parent = if k == 0 {
                    String::new()
                } else {
                    format!(r#","parent":{}"#, base + next(k))
                };
                nodes.push(format!(
                    r#"{{"id":{id},"callFrame":{{"functionName":"{name}","url":"file:///x/a{k}.js","lineNumber":{k}}}{parent}}}"#
                ));
            }
            let n_samples = 1 + next(200);
            let ws = |k: u64| [",", ", ", " ,\n", ",\t"][(k % 4) as usize];
            let spaced = round % 3 == 0;
            let mut samples = String::from("[");
            let mut deltas = String::from("[");
            let n_deltas = match next(6) {
                0 => n_samples.saturating_sub(1 + next(3)),
                1 => n_samples + 1 + next(3),
                _ => n_samples,
            };
            for k in 0..n_samples.max(n_deltas) {
                let sep = if spaced { ws(next(4)) } else { "," };
                if k < n_samples {
                    if k > 0 {
                        samples.push_str(sep);
                    }
                    let id = if next(50) == 0 {
                        7
                    } else {
                        base + next(n_nodes)
                    };
                    samples.push_str(&id.to_string());
                }
                if k < n_deltas {
                    if k > 0 {
                        deltas.push_str(sep);
                    }
                    let d = match next(20) {
                        0 => format!("-{}", next(500)),
                        1 => ["0.5", "12.25", "-3.125", "1e3", "2.5E-1", "0"][next(6) as usize]
                            .to_string(),
                        _ => (900 + next(200)).to_string(),
                    };
                    deltas.push_str(&d);
                }
            }
            samples.push(']');
            deltas.push(']');
            let mut members = vec![
                format!(r#""nodes":[{}]"#, nodes.join(",")),
                format!(r#""startTime":{}"#, next(1_000_000)),
                format!(r#""endTime":{}"#, next(1_000_000)),
                format!(r#""samples":{samples}"#),
                format!(r#""timeDeltas":{deltas}"#),
            ];
            if round % 4 == 1 {
                members.push(r#""title":"a \"quoted\" [title]","x":{"y":[1,{"z":null}]}"#.into());
            }
            if round % 5 == 2 {
                members.reverse();
            }
            let text = if spaced {
                format!("\n{{ {} }}\n", members.join(" ,\n "))
            } else {
                format!("{{{}}}", members.join(","))
            };
            let whole = parse_whole("t.cpuprofile", text.as_bytes()).unwrap();
            for halves in [Halves::Never, Halves::Always] {
                let fast = parse_fast("t.cpuprofile", text.as_bytes(), halves)
                    .unwrap_or_else(|| panic!("declined: {text}"))
                    .unwrap();
                assert_eq!(summary(&fast), summary(&whole), "{halves:?} {text}");
            }
        }
    }

    /// Anything the fast reader does not take exactly as serde would is left to serde,
    /// whose error (or reading) stands.
    #[test]
    fn the_fast_reader_leaves_the_unusual_to_serde() {
        let head = r#"{"nodes":[{"id":1,"callFrame":{"functionName":"a"}}],"#;
        for tail in [
            r#""samples":[1,1,],"timeDeltas":[1,2]}"#,
            r#""samples":[1,01],"timeDeltas":[1,2]}"#,
            r#""samples":[1,1.0],"timeDeltas":[1,2]}"#,
            r#""samples":[1,-1],"timeDeltas":[1,2]}"#,
            r#""samples":[1,,1],"timeDeltas":[1,2]}"#,
            r#""samples":[1,1],"timeDeltas":[1,1e400]}"#,
            r#""samples":[1,1],"timeDeltas":[1,.5]}"#,
            r#""samples":[1,1],"timeDeltas":[1,"2"]}"#,
            r#""samples":[1,1],"timeDeltas":[1,2],"samples":[1]}"#,
            r#""samples":null,"timeDeltas":[1,2]}"#,
            r#""samples":[1,1],"timeDeltas":[1,2]} x"#,
            r#""samples":[1,1],"timeDeltas":[1,2],"endTime":12x}"#,
            r#""samples":[1,1],"timeDeltas":[1,2],"\u0078":1}"#,
            r#""samples":[1,1],"timeDeltas":[1,2]"#,
            r#""samples":[],"timeDeltas":[]}"#,
            r#""samples":[1,1],"timeDeltas":[1,2],}"#,
            r#""samples":[18446744073709551616],"timeDeltas":[1]}"#,
        ] {
            let text = format!("{head}{tail}");
            for halves in [Halves::Never, Halves::Always] {
                assert!(parse_fast("x", text.as_bytes(), halves).is_none(), "{text}");
            }
            let (a, b) = (
                parse("x", text.as_bytes()),
                parse_whole("x", text.as_bytes()),
            );
            assert_eq!(a.is_ok(), b.is_ok(), "{text}");
            if let (Err(a), Err(b)) = (a, b) {
                assert_eq!(a.to_string(), b.to_string());
            }
        }
        // What it takes: spaces inside the arrays, 19-digit ids, a real recording.
        let text = format!("{head}\"samples\":[ 1 , 1 ],\"timeDeltas\":[ -0 , 1.5e1 ]}}");
        assert!(parse_fast("x", text.as_bytes(), Halves::Always).is_some());
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/data/recordings/node-fib.cpuprofile"
        );
        let bytes = std::fs::read(path).unwrap();
        let fast = parse_fast("fib", &bytes, Halves::Always)
            .expect("taken")
            .unwrap();
        assert_eq!(
            summary(&fast),
            summary(&parse_whole("fib", &bytes).unwrap())
        );
    }

    /// The two halves read what one reading in order reads: the second half shifted by
    /// the start and the first's sum, samples of unknown nodes skipped on both sides,
    /// negative deltas; and they decline what they cannot split exactly.
    #[test]
    fn halves_read_as_one_reading_in_order() {
        let ids: Vec<u64> = (0..5).collect();
        let index: HashMap<u64, usize> = ids.iter().map(|&i| (i, i as usize)).collect();
        let stacks: Vec<StackId> = vec![10, 11, 12, 13, 14];
        let lookup = NodeLookup::new(&index, &stacks);
        let list = |n: usize, sep: &str, item: fn(usize) -> String| {
            (0..n).map(item).collect::<Vec<_>>().join(sep)
        };
        let samples = list(1000, ",", |k| {
            if k % 97 == 5 { 9 } else { k % 5 }.to_string()
        });
        let deltas = list(1003, " , ", |k| {
            if k % 31 == 0 {
                "-7".to_string()
            } else {
                (k % 13).to_string()
            }
        });
        let read = |halves: bool, start: f64, deltas: &str| {
            let mut st = Stream::default();
            let (mut s, mut d) = (
                Numbers::new(samples.as_bytes()),
                Numbers::new(deltas.as_bytes()),
            );
            let r = if halves {
                read_in_halves(&s, &d, &lookup, start, &mut st)
            } else {
                Some(read_in_order(&mut s, &mut d, &lookup, start, &mut st))
            };
            r.map(|r| r.map(|r| (r.samples, r.deltas, r.unknown, st.time, st.stack)))
        };
        for start in [0.0, 5e6] {
            let halves = read(true, start, &deltas).expect("split").expect("numbers");
            assert_eq!(Some(Some(halves.clone())), read(false, start, &deltas));
            assert_eq!((halves.0, halves.1, halves.2), (1000, 1003, 11));
        }
        // A fractional delta, a start inside a nanosecond, too few deltas: not split.
        assert!(read(true, 0.0, &format!("{deltas},0.5")).is_none());
        assert!(read(true, 0.5, &deltas).is_none());
        assert!(read(true, 0.0, "1,2").is_none());
        // A comma before the `]`: not numbers.
        assert_eq!(
            read(true, 0.0, &format!("{deltas},")).map(|r| r.is_none()),
            Some(true)
        );
    }
}
