//! Time-ordered stack samples: what a sampling profiler recorded, before aggregation.
//!
//! [`Samples`] keeps, per thread and per event ([`Stream`]), every sample in time order:
//! a timestamp, a stack id into one [`StackTable`] of `(parent, frame)` nodes (btrace's
//! CallstackTable: a stack is a node, its frames the path to the root), a weight, and
//! optional per-sample counters (CPU time, allocations, faults, context switches), the
//! thread that woke a blocked sample, and a message id that separates two executions of
//! the same code. The columns cost 16 bytes per sample (8 time, 4 stack, 4 weight; a
//! stream whose weights are all 1 stores none) beyond the stack table; each counter
//! present adds 4 (`benches/samples.rs` measures it at 50 M samples).
//!
//! From it, [`aggregate`](Samples::aggregate) gives the call tree the flame graph, table and
//! sandwich show (of one event, optionally of a time range only), and
//! [`convert`](super::sampled::convert) the spans the timeline shows.

use super::names::{NameId, Names};
use super::tree::LIST_MAX;
use super::units::ValueFormat;
use super::{CallTreeBuilder, ChildOrder, NO_PARENT, Profile, ProfileMeta, SourceFormat};
use hashbrown::HashTable;
use std::hash::BuildHasher;

/// A stack: a node of the [`StackTable`]. [`EMPTY_STACK`] has no frames.
pub type StackId = u32;

/// The stack without frames (a sample that caught the thread outside any known code).
pub const EMPTY_STACK: StackId = u32::MAX;

fn key_hash(hasher: &foldhash::fast::FixedState, parent: StackId, frame: NameId) -> u64 {
    hasher.hash_one((u64::from(parent) << 32) | u64::from(frame))
}

/// Stacks as a prefix table: node `i` is frame `frame[i]` called from stack `parent[i]`
/// ([`EMPTY_STACK`] for a root frame). A parent always has a smaller id than its children.
///
/// Finding a callee: as in [`CallTreeBuilder`], each stack keeps its callees in a list
/// (newest first) that [`child`](Self::child) walks, and a stack whose callees outgrow
/// [`LIST_MAX`] has them indexed by `(caller, frame)` in a
/// hash table instead: adding a stack costs a few appends, not an insert into a table of
/// every stack (which outgrows the caches on a large profile). The lists cover the first
/// `linked` stacks: [`absorb`](Self::absorb) appends another table's new stacks without
/// linking them (a load adds no stack after its parts are joined), and the next
/// [`child`](Self::child) links them first.
#[derive(Clone)]
pub struct StackTable {
    parent: Vec<StackId>,
    frame: Vec<NameId>,
    depth: Vec<u32>,
    /// Per stack: its newest callee ([`EMPTY_STACK`] when none).
    first: Vec<StackId>,
    /// Per stack: the next older stack with the same caller ([`EMPTY_STACK`] at the end).
    next: Vec<StackId>,
    /// Per stack: its callees, saturating: above `LIST_MAX` they are in `index`.
    kids: Vec<u8>,
    /// The root frames' list and count, as `first` and `kids` are for a stack's callees.
    root_first: StackId,
    root_kids: u8,
    /// The callees of stacks with more than `LIST_MAX` of them, by (caller, frame).
    index: HashTable<StackId>,
    /// Stacks linked into their caller's list (and indexed where it is long).
    linked: usize,
    hasher: foldhash::fast::FixedState,
}

impl Default for StackTable {
    fn default() -> Self {
        Self {
            parent: Vec::new(),
            frame: Vec::new(),
            depth: Vec::new(),
            first: Vec::new(),
            next: Vec::new(),
            kids: Vec::new(),
            root_first: EMPTY_STACK,
            root_kids: 0,
            index: HashTable::new(),
            linked: 0,
            hasher: foldhash::fast::FixedState::default(),
        }
    }
}

impl StackTable {
    /// Number of stacks (nodes).
    pub fn len(&self) -> usize {
        self.parent.len()
    }

    /// True without stacks.
    pub fn is_empty(&self) -> bool {
        self.parent.is_empty()
    }

    /// The caller stack of `s` ([`EMPTY_STACK`] for a root frame).
    pub fn parent(&self, s: StackId) -> StackId {
        self.parent[s as usize]
    }

    /// The innermost frame of `s`.
    pub fn frame(&self, s: StackId) -> NameId {
        self.frame[s as usize]
    }

    /// Frames in `s` (0 for [`EMPTY_STACK`]).
    pub fn depth(&self, s: StackId) -> u32 {
        if s == EMPTY_STACK {
            0
        } else {
            self.depth[s as usize]
        }
    }

    fn hash(&self, parent: StackId, frame: NameId) -> u64 {
        key_hash(&self.hasher, parent, frame)
    }

    /// The stack `frame` called from `parent`, added if new.
    pub fn child(&mut self, parent: StackId, frame: NameId) -> StackId {
        self.link_all();
        if let Some(s) = self.find(parent, frame) {
            return s;
        }
        let s = self.push(parent, frame);
        self.link_all();
        s
    }

    /// The stack `frame` called from `parent` while adding one path from the root: once
    /// a stack of the path has been added (`*fresh`), its callees cannot exist yet and
    /// are added without the lookup; `*fresh` becomes true when this call adds the stack.
    #[inline]
    pub fn path_child(&mut self, parent: StackId, frame: NameId, fresh: &mut bool) -> StackId {
        if *fresh {
            self.link_all();
            let s = self.push(parent, frame);
            self.link_all();
            return s;
        }
        let before = self.len();
        let s = self.child(parent, frame);
        *fresh = self.len() > before;
        s
    }

    /// The number of callees of `parent` (saturating) and its newest one.
    fn callees(&self, parent: StackId) -> (u8, StackId) {
        if parent == EMPTY_STACK {
            (self.root_kids, self.root_first)
        } else {
            (self.kids[parent as usize], self.first[parent as usize])
        }
    }

    /// The stack `frame` called from `parent` among the linked ones.
    fn find(&self, parent: StackId, frame: NameId) -> Option<StackId> {
        let (kids, mut c) = self.callees(parent);
        if kids > LIST_MAX {
            let (p, f) = (&self.parent, &self.frame);
            return self
                .index
                .find(self.hash(parent, frame), |&s| {
                    p[s as usize] == parent && f[s as usize] == frame
                })
                .copied();
        }
        while c != EMPTY_STACK {
            if self.frame[c as usize] == frame {
                return Some(c);
            }
            c = self.next[c as usize];
        }
        None
    }

    /// Appends the stack `frame` called from `parent`, unlinked.
    fn push(&mut self, parent: StackId, frame: NameId) -> StackId {
        let s = StackId::try_from(self.parent.len())
            .ok()
            .filter(|&s| s != EMPTY_STACK)
            .expect("more than 4 G stacks");
        let depth = if parent == EMPTY_STACK {
            1
        } else {
            self.depth[parent as usize] + 1
        };
        self.parent.push(parent);
        self.frame.push(frame);
        self.depth.push(depth);
        self.first.push(EMPTY_STACK);
        self.next.push(EMPTY_STACK);
        self.kids.push(0);
        s
    }

    /// Links every stack appended since the last link into its caller's list, indexing
    /// it, or the whole list when it just outgrew `LIST_MAX`.
    fn link_all(&mut self) {
        while self.linked < self.parent.len() {
            let s = self.linked as StackId;
            let p = self.parent[self.linked];
            let (k, head) = self.callees(p);
            self.next[self.linked] = head;
            let kids = k.saturating_add(1).min(LIST_MAX + 1);
            if p == EMPTY_STACK {
                (self.root_first, self.root_kids) = (s, kids);
            } else {
                (self.first[p as usize], self.kids[p as usize]) = (s, kids);
            }
            if k > LIST_MAX {
                self.insert_indexed(s);
            } else if k == LIST_MAX {
                // The list just outgrew itself: index every callee, this one included.
                let mut c = s;
                while c != EMPTY_STACK {
                    self.insert_indexed(c);
                    c = self.next[c as usize];
                }
            }
            self.linked += 1;
        }
    }

    /// Adds stack `s` to the (caller, frame) index.
    fn insert_indexed(&mut self, s: StackId) {
        let (p, f, hasher) = (&self.parent, &self.frame, &self.hasher);
        let i = s as usize;
        self.index
            .insert_unique(key_hash(hasher, p[i], f[i]), s, |&o| {
                key_hash(hasher, p[o as usize], f[o as usize])
            });
    }

    /// The stack of `frames`, root first.
    pub fn path(&mut self, frames: impl IntoIterator<Item = NameId>) -> StackId {
        frames
            .into_iter()
            .fold(EMPTY_STACK, |parent, f| self.child(parent, f))
    }

    /// The stacks from the root frame to `s` (both included), root first, into `out`.
    pub fn nodes_of(&self, mut s: StackId, out: &mut Vec<StackId>) {
        out.clear();
        while s != EMPTY_STACK {
            out.push(s);
            s = self.parent[s as usize];
        }
        out.reverse();
    }

    /// The frames of `s`, root first.
    pub fn frames_of(&self, s: StackId) -> Vec<NameId> {
        let mut nodes = Vec::new();
        self.nodes_of(s, &mut nodes);
        nodes.into_iter().map(|n| self.frame(n)).collect()
    }

    /// Adds `other`'s stacks (whose frames are named in `other_names`) and returns where
    /// each of them is in this table.
    ///
    /// A stack whose caller is new here is new too (`other` holds each stack once), so
    /// only the stacks whose caller was here already are looked up; the new ones are
    /// appended unlinked. Another thread's part of a profile shares few stacks with
    /// this one: joining them costs a few appends per stack.
    pub fn absorb(
        &mut self,
        names: &mut Names,
        other: &StackTable,
        other_names: &Names,
    ) -> Vec<StackId> {
        self.link_all();
        let base = self.len() as StackId;
        let mut name_map = vec![u32::MAX; other_names.len()];
        let mut map: Vec<StackId> = Vec::with_capacity(other.len());
        self.parent.reserve(other.len());
        self.frame.reserve(other.len());
        self.depth.reserve(other.len());
        self.first.reserve(other.len());
        self.next.reserve(other.len());
        self.kids.reserve(other.len());
        for i in 0..other.len() {
            let f = other.frame[i] as usize;
            if name_map[f] == u32::MAX {
                name_map[f] = names.intern(other_names.get(f as NameId));
            }
            let p = other.parent[i];
            let parent = if p == EMPTY_STACK { p } else { map[p as usize] };
            let known = parent == EMPTY_STACK || parent < base;
            let s = match known.then(|| self.find(parent, name_map[f])).flatten() {
                Some(s) => s,
                None => self.push(parent, name_map[f]),
            };
            map.push(s);
        }
        map
    }

    /// Heap bytes (for memory reports).
    pub fn heap_bytes(&self) -> usize {
        self.parent.capacity() * 21 + self.index.capacity() * 5
    }
}

/// The weights of a stream's samples: none stored while every weight is 1.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Weights {
    /// Every sample weighs 1.
    Ones(usize),
    /// Weights that fit 32 bits.
    Narrow(Vec<u32>),
    /// Any weight.
    Wide(Vec<u64>),
}

impl Default for Weights {
    fn default() -> Self {
        Weights::Ones(0)
    }
}

impl Weights {
    /// The weight of sample `i`.
    pub fn get(&self, i: usize) -> u64 {
        match self {
            Weights::Ones(_) => 1,
            Weights::Narrow(v) => u64::from(v[i]),
            Weights::Wide(v) => v[i],
        }
    }

    /// Appends `w`, widening the storage when it needs to.
    pub fn push(&mut self, w: u64) {
        match self {
            Weights::Ones(n) if w == 1 => *n += 1,
            Weights::Ones(n) => {
                let mut v = vec![1u32; *n];
                if let Ok(w) = u32::try_from(w) {
                    v.push(w);
                    *self = Weights::Narrow(v);
                } else {
                    let mut v: Vec<u64> = v.into_iter().map(u64::from).collect();
                    v.push(w);
                    *self = Weights::Wide(v);
                }
            }
            Weights::Narrow(v) => match u32::try_from(w) {
                Ok(w) => v.push(w),
                Err(_) => {
                    let mut wide: Vec<u64> = v.iter().map(|&x| u64::from(x)).collect();
                    wide.push(w);
                    *self = Weights::Wide(wide);
                }
            },
            Weights::Wide(v) => v.push(w),
        }
    }

    /// The weights `w`, stored as [`Weights::push`] stores them one by one.
    pub fn from_values(w: Vec<u64>) -> Weights {
        if w.iter().all(|&x| x == 1) {
            Weights::Ones(w.len())
        } else if w.iter().all(|&x| x <= u64::from(u32::MAX)) {
            Weights::Narrow(w.iter().map(|&x| x as u32).collect())
        } else {
            Weights::Wide(w)
        }
    }

    fn permute(&mut self, order: &[u32]) {
        match self {
            Weights::Ones(_) => {}
            Weights::Narrow(v) => *v = order.iter().map(|&i| v[i as usize]).collect(),
            Weights::Wide(v) => *v = order.iter().map(|&i| v[i as usize]).collect(),
        }
    }

    fn heap_bytes(&self) -> usize {
        match self {
            Weights::Ones(_) => 0,
            Weights::Narrow(v) => v.capacity() * 4,
            Weights::Wide(v) => v.capacity() * 8,
        }
    }
}

/// A per-sample quantity besides the weight.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum CounterKind {
    /// CPU time the thread used since its previous sample, nanoseconds.
    CpuNs,
    /// Objects allocated since the previous sample.
    AllocCount,
    /// Bytes allocated since the previous sample.
    AllocBytes,
    /// Major page faults since the previous sample.
    MajorFaults,
    /// Voluntary context switches since the previous sample.
    VoluntarySwitches,
    /// Involuntary context switches since the previous sample.
    InvoluntarySwitches,
}

impl CounterKind {
    /// Every kind, in the order columns are shown.
    pub const ALL: [CounterKind; 6] = [
        CounterKind::CpuNs,
        CounterKind::AllocCount,
        CounterKind::AllocBytes,
        CounterKind::MajorFaults,
        CounterKind::VoluntarySwitches,
        CounterKind::InvoluntarySwitches,
    ];

    /// A table column's title.
    pub fn short_name(self) -> &'static str {
        match self {
            CounterKind::CpuNs => "CPU",
            CounterKind::AllocCount => "Allocs",
            CounterKind::AllocBytes => "Alloc bytes",
            CounterKind::MajorFaults => "Faults",
            CounterKind::VoluntarySwitches => "Vol. sw.",
            CounterKind::InvoluntarySwitches => "Invol. sw.",
        }
    }

    /// The name used in tooltips, tables and `scorch info`.
    pub fn name(self) -> &'static str {
        match self {
            CounterKind::CpuNs => "CPU time",
            CounterKind::AllocCount => "allocations",
            CounterKind::AllocBytes => "allocated bytes",
            CounterKind::MajorFaults => "major faults",
            CounterKind::VoluntarySwitches => "voluntary switches",
            CounterKind::InvoluntarySwitches => "involuntary switches",
        }
    }

    /// A human amount of this counter.
    pub fn format(self, v: u64) -> String {
        match self {
            CounterKind::CpuNs => super::units::format_duration_ns(v as f64),
            CounterKind::AllocBytes => super::units::format_bytes(v as f64),
            _ => super::units::format_count(v as f64),
        }
    }
}

/// One counter's values, one per sample of its stream (saturated at `u32::MAX`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Counter {
    /// What it counts.
    pub kind: CounterKind,
    /// Per sample.
    pub values: Vec<u32>,
}

/// A blocked sample's waker: the thread that woke it, and when.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Waker {
    /// Index of the sample in its stream.
    pub sample: u32,
    /// The waking thread (index into [`Samples::threads`]).
    pub thread: u32,
    /// When it woke the sample's thread (the stream's clock; the sample's own time when
    /// the input does not say).
    pub time: u64,
}

/// One thread's samples of one event, in time order.
#[derive(Clone, Debug, Default)]
pub struct Stream {
    /// Index into [`Samples::threads`].
    pub thread: u32,
    /// Index into [`Samples::events`].
    pub event: u32,
    /// Nanoseconds after [`Samples::origin_ns`] (for untimed inputs: the running sum of
    /// the weights before the sample, speedscope's way of laying samples out in order).
    pub time: Vec<u64>,
    /// The stack of each sample.
    pub stack: Vec<StackId>,
    /// The weight of each sample.
    pub weight: Weights,
    /// Counters the input gives per sample.
    pub counters: Vec<Counter>,
    /// A message id or marker per sample, where the input has one: consecutive samples
    /// with the same stack but different ids are two executions.
    pub marker: Option<Vec<u32>>,
    /// Wakers of blocked samples, by sample index.
    pub wakers: Vec<Waker>,
}

impl Stream {
    /// Number of samples.
    pub fn len(&self) -> usize {
        self.time.len()
    }

    /// True without samples.
    pub fn is_empty(&self) -> bool {
        self.time.is_empty()
    }

    /// Sets counter `kind` of the last sample (earlier samples without it count 0;
    /// saturated at `u32::MAX`).
    pub fn set_last_counter(&mut self, kind: CounterKind, value: u64) {
        let n = self.time.len();
        if n == 0 {
            return;
        }
        let i = match self.counters.iter().position(|c| c.kind == kind) {
            Some(i) => i,
            None => {
                self.counters.push(Counter {
                    kind,
                    values: Vec::new(),
                });
                self.counters.len() - 1
            }
        };
        let v = &mut self.counters[i].values;
        v.resize(n, 0);
        v[n - 1] = u32::try_from(value).unwrap_or(u32::MAX);
    }

    /// The values of counter `kind`, when the stream has it.
    pub fn counter(&self, kind: CounterKind) -> Option<&[u32]> {
        self.counters
            .iter()
            .find(|c| c.kind == kind)
            .map(|c| c.values.as_slice())
    }

    /// The samples at times in `[from, to)`, as an index range.
    pub fn range(&self, from: u64, to: u64) -> std::ops::Range<usize> {
        let lo = self.time.partition_point(|&t| t < from);
        let hi = self.time.partition_point(|&t| t < to);
        lo..hi.max(lo)
    }

    /// The median distance between consecutive samples (0 with fewer than two).
    pub fn median_interval(&self) -> u64 {
        if self.time.len() < 2 {
            return 0;
        }
        // At most 100 001 gaps, evenly spread: exact for ordinary recordings, bounded for
        // huge ones.
        let n = self.time.len() - 1;
        let step = n.div_ceil(100_001).max(1);
        let mut gaps: Vec<u64> = (0..n)
            .step_by(step)
            .map(|i| self.time[i + 1] - self.time[i])
            .filter(|&g| g > 0)
            .collect();
        if gaps.is_empty() {
            return 0;
        }
        let mid = gaps.len() / 2;
        *gaps.select_nth_unstable(mid).1
    }

    /// Heap bytes of the per-sample columns.
    pub fn heap_bytes(&self) -> usize {
        self.time.capacity() * 8
            + self.stack.capacity() * 4
            + self.weight.heap_bytes()
            + self
                .counters
                .iter()
                .map(|c| c.values.capacity() * 4)
                .sum::<usize>()
            + self.marker.as_ref().map_or(0, |m| m.capacity() * 4)
            + self.wakers.capacity() * std::mem::size_of::<Waker>()
    }

    /// Sorts the samples by time (stable), when an importer gave them out of order.
    pub(crate) fn sort_by_time(&mut self) {
        if self.time.windows(2).all(|w| w[0] <= w[1]) {
            return;
        }
        let mut order: Vec<u32> = (0..self.time.len() as u32).collect();
        order.sort_by_key(|&i| self.time[i as usize]);
        let mut rank = vec![0u32; order.len()];
        for (new, &old) in order.iter().enumerate() {
            rank[old as usize] = new as u32;
        }
        self.time = order.iter().map(|&i| self.time[i as usize]).collect();
        self.stack = order.iter().map(|&i| self.stack[i as usize]).collect();
        self.weight.permute(&order);
        for c in &mut self.counters {
            c.values = order.iter().map(|&i| c.values[i as usize]).collect();
        }
        if let Some(m) = &mut self.marker {
            *m = order.iter().map(|&i| m[i as usize]).collect();
        }
        for w in &mut self.wakers {
            w.sample = rank[w.sample as usize];
        }
        self.wakers.sort_by_key(|w| w.sample);
    }
}

/// A thread that has samples.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ThreadInfo {
    /// Its name (`perf`'s command, a speedscope profile's name, `CrRendererMain`).
    pub name: String,
    /// Its process, as the track group shows it (`"node 4242"`); empty for none.
    pub process: String,
    /// Process id, when known.
    pub pid: Option<i64>,
    /// Thread id, when known.
    pub tid: Option<i64>,
}

impl ThreadInfo {
    /// `name pid/tid`, `name tid` or `name` (just the name when it already holds the
    /// thread id as a word, as Chrome's `CrRendererMain 775` does).
    pub fn label(&self) -> String {
        if let Some(t) = self.tid
            && self.name.split_whitespace().any(|w| w == t.to_string())
        {
            return self.name.clone();
        }
        match (self.pid, self.tid) {
            (Some(p), Some(t)) if p != t => format!("{} {p}/{t}", self.name),
            (_, Some(t)) => format!("{} {t}", self.name),
            (Some(p), None) => format!("{} {p}", self.name),
            (None, None) => self.name.clone(),
        }
    }
}

/// What a stream's samples are samples of, and what their weights mean.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EventInfo {
    /// `cpu-clock`, `sched:sched_switch`, `samples`, `wall` …
    pub name: String,
    /// What a weight is: nanoseconds for `cpu-clock`, cycles for `cycles`, samples …
    pub values: ValueFormat,
}

/// Every sample of one input.
#[derive(Clone, Default)]
pub struct Samples {
    /// Frame names.
    pub names: Names,
    /// Every stack.
    pub stacks: StackTable,
    /// Threads with samples.
    pub threads: Vec<ThreadInfo>,
    /// Events sampled.
    pub events: Vec<EventInfo>,
    /// One per thread and event that has samples.
    pub streams: Vec<Stream>,
    /// False when the input has no timestamps (DTrace, folded-like speedscope profiles
    /// without them): stream times are then running sums of the weights.
    pub timed: bool,
    /// Stacks start with a frame that stands for the thread (perf's command, as
    /// inferno roots its stacks); the time order leaves it out.
    pub thread_root_frames: bool,
    /// Spans are exact (speedscope's evented profiles): no sampling uncertainty.
    pub exact: bool,
    /// Absolute time of relative 0, in the format's clock (nanoseconds).
    pub origin_ns: u64,
    /// Where the samples came from, and what went wrong reading them.
    pub meta: Option<ProfileMeta>,
}

impl std::fmt::Debug for Samples {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Samples")
            .field("stacks", &self.stacks.len())
            .field("threads", &self.threads.len())
            .field("events", &self.events)
            .field("samples", &self.len())
            .field("timed", &self.timed)
            .finish()
    }
}

/// Which samples an aggregation counts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Selection {
    /// The event (index into [`Samples::events`]).
    pub event: u32,
    /// Only samples with a time in `[from, to)` (relative nanoseconds).
    pub range: Option<(u64, u64)>,
}

impl Samples {
    /// No samples yet, of an input called `source` in `format`.
    pub fn new(source: &str, format: SourceFormat) -> Samples {
        Samples {
            timed: true,
            meta: Some(ProfileMeta::new(source, format, Default::default())),
            ..Samples::default()
        }
    }

    /// The input's facts.
    pub fn meta(&self) -> &ProfileMeta {
        self.meta.as_ref().expect("samples have a source")
    }

    /// The input's facts, to change.
    pub fn meta_mut(&mut self) -> &mut ProfileMeta {
        self.meta.as_mut().expect("samples have a source")
    }

    /// Samples in all.
    pub fn len(&self) -> usize {
        self.streams.iter().map(Stream::len).sum()
    }

    /// True without samples.
    pub fn is_empty(&self) -> bool {
        self.streams.iter().all(Stream::is_empty)
    }

    /// Interns `name` as a frame name.
    pub fn intern(&mut self, name: &str) -> NameId {
        self.names.intern(name)
    }

    /// Adds a thread and returns its index.
    pub fn add_thread(&mut self, info: ThreadInfo) -> u32 {
        self.threads.push(info);
        self.threads.len() as u32 - 1
    }

    /// The event called `name`, added with `values` if new.
    pub fn event(&mut self, name: &str, values: ValueFormat) -> u32 {
        if let Some(i) = self.events.iter().position(|e| e.name == name) {
            return i as u32;
        }
        self.events.push(EventInfo {
            name: name.to_string(),
            values,
        });
        self.events.len() as u32 - 1
    }

    /// The stream of `thread` and `event`, added if new (its index in `streams`).
    pub fn stream(&mut self, thread: u32, event: u32) -> usize {
        if let Some(i) = self
            .streams
            .iter()
            .rposition(|s| s.thread == thread && s.event == event)
        {
            return i;
        }
        self.streams.push(Stream {
            thread,
            event,
            ..Stream::default()
        });
        self.streams.len() - 1
    }

    /// Appends a sample to stream `s`.
    pub fn push(&mut self, s: usize, time: u64, stack: StackId, weight: u64) {
        let st = &mut self.streams[s];
        st.time.push(time);
        st.stack.push(stack);
        st.weight.push(weight);
    }

    /// Sets counter `kind` of the last sample pushed to stream `s` (earlier samples
    /// without it count 0).
    pub fn set_counter(&mut self, s: usize, kind: CounterKind, value: u64) {
        self.streams[s].set_last_counter(kind, value);
    }

    /// Sets the marker (message id) of the last sample pushed to stream `s`.
    pub fn set_marker(&mut self, s: usize, marker: u32) {
        let st = &mut self.streams[s];
        let n = st.time.len();
        let m = st.marker.get_or_insert_with(Vec::new);
        m.resize(n, 0);
        if let Some(last) = m.last_mut() {
            *last = marker;
        }
    }

    /// Records that `waker` woke the thread of stream `s` before its last sample.
    pub fn set_waker(&mut self, s: usize, waker: u32) {
        let st = &mut self.streams[s];
        if let Some(n) = st.time.len().checked_sub(1) {
            st.wakers.push(Waker {
                sample: n as u32,
                thread: waker,
                time: st.time[n],
            });
        }
    }

    /// Finishes import: streams sorted by time, counter and marker columns as long as
    /// their streams, empty streams dropped, relative times starting at 0 (the shift is
    /// added to `origin_ns`).
    pub fn finish(mut self) -> Samples {
        self.streams.retain(|s| !s.is_empty());
        for s in &mut self.streams {
            let n = s.time.len();
            for c in &mut s.counters {
                c.values.resize(n, 0);
            }
            if let Some(m) = &mut s.marker {
                m.resize(n, 0);
            }
            s.sort_by_time();
        }
        let first = self
            .streams
            .iter()
            .filter_map(|s| s.time.first().copied())
            .min()
            .unwrap_or(0);
        if first > 0 {
            for s in &mut self.streams {
                for t in &mut s.time {
                    *t -= first;
                }
                for w in &mut s.wakers {
                    w.time = w.time.saturating_sub(first);
                }
            }
            self.origin_ns = self.origin_ns.saturating_add(first);
        }
        self
    }

    /// Streams of `event`.
    pub fn streams_of(&self, event: u32) -> impl Iterator<Item = (usize, &Stream)> {
        self.streams
            .iter()
            .enumerate()
            .filter(move |(_, s)| s.event == event)
    }

    /// Samples of `event` (all threads).
    pub fn count_of(&self, event: u32) -> usize {
        self.streams_of(event).map(|(_, s)| s.len()).sum()
    }

    /// `(first, last)` sample time over every stream (relative).
    pub fn time_range(&self) -> (u64, u64) {
        let lo = self.streams.iter().filter_map(|s| s.time.first()).min();
        let hi = self.streams.iter().filter_map(|s| s.time.last()).max();
        (lo.copied().unwrap_or(0), hi.copied().unwrap_or(0))
    }

    /// The median sampling interval over the streams of `event` (the median of each
    /// stream's median, weighted by nothing: threads sampled alike agree).
    pub fn median_interval(&self, event: u32) -> u64 {
        let mut m: Vec<u64> = self
            .streams_of(event)
            .map(|(_, s)| s.median_interval())
            .filter(|&g| g > 0)
            .collect();
        if m.is_empty() {
            return 0;
        }
        let mid = m.len() / 2;
        *m.select_nth_unstable(mid).1
    }

    /// Counters present in any stream of `event`.
    pub fn counters_of(&self, event: u32) -> Vec<CounterKind> {
        let mut v: Vec<CounterKind> = self
            .streams_of(event)
            .flat_map(|(_, s)| s.counters.iter().map(|c| c.kind))
            .collect();
        v.sort();
        v.dedup();
        v
    }

    /// Heap bytes of the per-sample columns (all streams), without the stack table.
    pub fn sample_bytes(&self) -> usize {
        self.streams.iter().map(Stream::heap_bytes).sum()
    }

    /// The call tree of the selected samples: each sample's weight added to its stack,
    /// under a frame for its thread when [`thread_root_frames`](Self::thread_root_frames)
    /// is false and there are several threads (none otherwise). O(samples + stacks).
    pub fn aggregate(&self, sel: Selection) -> Result<Profile, super::tree::TotalOverflow> {
        let mut names = self.names.clone();
        let mut builder = CallTreeBuilder::new(&mut names, false);
        // Weight per (thread root, stack): one pass over the samples, then the used
        // stacks in id order (parents first) into the builder.
        let per_thread = !self.thread_root_frames
            && self
                .streams_of(sel.event)
                .map(|(_, s)| s.thread)
                .collect::<std::collections::BTreeSet<_>>()
                .len()
                > 1;
        // Per group: the weight of each stack, and of each counter the event carries.
        let kinds = self.counters_of(sel.event);
        let nk = kinds.len();
        type Group = (Option<u32>, Vec<u64>, Vec<Vec<u64>>);
        let mut groups: Vec<Group> = Vec::new();
        for (_, s) in self.streams_of(sel.event) {
            let key = per_thread.then_some(s.thread);
            let gi = match groups.iter().position(|g| g.0 == key) {
                Some(i) => i,
                None => {
                    groups.push((key, vec![0u64; self.stacks.len() + 1], vec![Vec::new(); nk]));
                    groups.len() - 1
                }
            };
            let (_, acc, cacc) = &mut groups[gi];
            let r = match sel.range {
                Some((a, b)) => s.range(a, b),
                None => 0..s.len(),
            };
            let cols: Vec<Option<&[u32]>> = kinds.iter().map(|&k| s.counter(k)).collect();
            for i in r {
                let st = s.stack[i];
                let slot = if st == EMPTY_STACK {
                    self.stacks.len()
                } else {
                    st as usize
                };
                acc[slot] = acc[slot]
                    .checked_add(s.weight.get(i))
                    .ok_or(super::tree::TotalOverflow)?;
                for (c, col) in cols.iter().enumerate() {
                    if let Some(col) = col
                        && col[i] > 0
                    {
                        let v = &mut cacc[c];
                        if v.is_empty() {
                            v.resize(self.stacks.len() + 1, 0);
                        }
                        v[slot] += u64::from(col[i]);
                    }
                }
            }
        }
        groups.sort_by(|a, b| {
            let name = |k: Option<u32>| k.map(|t| self.threads[t as usize].label());
            name(a.0).cmp(&name(b.0))
        });
        let n = self.stacks.len();
        let mut used = vec![false; n];
        let mut node = vec![NO_PARENT; n];
        // Counter sums per builder node (self first, totals below).
        let mut node_sums: Vec<Vec<u64>> = vec![Vec::new(); nk];
        let add_sum = |sums: &mut Vec<Vec<u64>>, c: usize, at: super::NodeId, v: u64| {
            let s = &mut sums[c];
            if s.len() <= at as usize {
                s.resize(at as usize + 1, 0);
            }
            s[at as usize] += v;
        };
        for (key, acc, cacc) in &groups {
            let top = match key {
                Some(t) => {
                    let label = self.threads[*t as usize].label();
                    let id = names.intern(&label);
                    builder.child(0, id)
                }
                None => 0,
            };
            used.iter_mut().for_each(|u| *u = false);
            for i in (0..n).rev() {
                let counted = acc[i] > 0 || cacc.iter().any(|v| v.get(i).is_some_and(|&x| x > 0));
                if counted || used[i] {
                    used[i] = true;
                    let p = self.stacks.parent(i as StackId);
                    if p != EMPTY_STACK {
                        used[p as usize] = true;
                    }
                }
            }
            for i in 0..n {
                if !used[i] {
                    continue;
                }
                let p = self.stacks.parent(i as StackId);
                let parent = if p == EMPTY_STACK {
                    top
                } else {
                    node[p as usize]
                };
                node[i] = builder.child(parent, self.stacks.frame(i as StackId));
                if acc[i] > 0 {
                    builder.add_self(node[i], acc[i])?;
                }
                for (c, v) in cacc.iter().enumerate() {
                    if let Some(&x) = v.get(i).filter(|&&x| x > 0) {
                        add_sum(&mut node_sums, c, node[i], x);
                    }
                }
            }
            if acc[n] > 0 {
                builder.add_self(top, acc[n])?;
            }
            for (c, v) in cacc.iter().enumerate() {
                if let Some(&x) = v.get(n).filter(|&&x| x > 0) {
                    add_sum(&mut node_sums, c, top, x);
                }
            }
        }
        let tree = builder.finish(&names, ChildOrder::ByName)?;
        let values = self
            .events
            .get(sel.event as usize)
            .map(|e| e.values.clone())
            .unwrap_or_default();
        let mut meta = self.meta().clone();
        if nk > 0 {
            // Totals: children have larger ids than their parents.
            for s in &mut node_sums {
                s.resize(tree.len(), 0);
                for i in (1..tree.len()).rev() {
                    let p = tree.parent(i as super::NodeId) as usize;
                    s[p] += s[i];
                }
            }
            meta.node_counters = Some(std::sync::Arc::new(
                kinds.into_iter().zip(node_sums).collect(),
            ));
        }
        Ok(Profile {
            names,
            tree,
            values,
            meta,
        })
    }
}

impl Samples {
    /// Per counter of the selected samples: per function of `names` (a profile's names:
    /// the same strings, any ids), the sum over the samples whose stack holds it
    /// (recursion counted once, as the table's totals count it). O(samples × depth).
    pub fn function_counters(&self, sel: Selection, names: &Names) -> Vec<(CounterKind, Vec<u64>)> {
        let kinds = self.counters_of(sel.event);
        if kinds.is_empty() {
            return Vec::new();
        }
        // Our name ids in the profile's.
        let map: Vec<Option<NameId>> = (0..self.names.len() as NameId)
            .map(|id| names.find(self.names.get(id)))
            .collect();
        let mut out: Vec<(CounterKind, Vec<u64>)> = kinds
            .iter()
            .map(|&k| (k, vec![0u64; names.len()]))
            .collect();
        // The sample that last counted each name (recursion once).
        let mut seen = vec![u32::MAX; names.len()];
        let mut stamp = 0u32;
        let mut frames: Vec<NameId> = Vec::new();
        for (_, st) in self.streams_of(sel.event) {
            let cols: Vec<Option<&[u32]>> = kinds.iter().map(|&k| st.counter(k)).collect();
            let r = match sel.range {
                Some((a, b)) => st.range(a, b),
                None => 0..st.len(),
            };
            for i in r {
                if cols.iter().all(|c| c.is_none_or(|c| c[i] == 0)) {
                    continue;
                }
                stamp = stamp.wrapping_add(1);
                frames.clear();
                let mut s = st.stack[i];
                while s != EMPTY_STACK {
                    if let Some(Some(id)) = map.get(self.stacks.frame(s) as usize) {
                        let k = *id as usize;
                        if seen[k] != stamp {
                            seen[k] = stamp;
                            frames.push(*id);
                        }
                    }
                    s = self.stacks.parent(s);
                }
                for (c, col) in cols.iter().enumerate() {
                    if let Some(col) = col {
                        let v = u64::from(col[i]);
                        for &f in &frames {
                            out[c].1[f as usize] += v;
                        }
                    }
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(crate) fn stack(s: &mut Samples, frames: &str) -> StackId {
        let ids: Vec<NameId> = frames
            .split(';')
            .filter(|f| !f.is_empty())
            .map(|f| s.intern(f))
            .collect();
        s.stacks.path(ids)
    }

    #[test]
    fn stack_table_interns_prefixes_once() {
        let mut s = Samples::new("t", SourceFormat::Speedscope);
        let abc = stack(&mut s, "a;b;c");
        let abd = stack(&mut s, "a;b;d");
        assert_eq!(s.stacks.len(), 4);
        assert_eq!(s.stacks.parent(abc), s.stacks.parent(abd));
        assert_eq!(s.stacks.depth(abc), 3);
        assert_eq!(stack(&mut s, "a;b;c"), abc);
        let names: Vec<&str> = s
            .stacks
            .frames_of(abd)
            .into_iter()
            .map(|n| s.names.get(n))
            .collect();
        assert_eq!(names, ["a", "b", "d"]);
    }

    /// Random frame lists over a few names (roots and siblings repeat), sorted or not.
    fn random_stacks(rng: &mut crate::generator::Rng, n: usize) -> Vec<Vec<String>> {
        let mut v: Vec<Vec<String>> = (0..n)
            .map(|_| {
                let depth = 1 + rng.below(7) as usize;
                // The roots and some callers have more than LIST_MAX callees.
                (0..depth)
                    .map(|d| format!("f{}", rng.below([12, 3, 6, 9, 14, 20, 30][d])))
                    .collect()
            })
            .collect();
        if rng.below(2) == 0 {
            v.sort();
        }
        v
    }

    fn table_of(stacks: &[Vec<String>]) -> (Names, StackTable, Vec<StackId>) {
        let mut names = Names::new();
        let mut t = StackTable::default();
        let ids = stacks
            .iter()
            .map(|f| t.path(f.iter().map(|x| names.intern(x))))
            .collect();
        (names, t, ids)
    }

    fn frame_names(t: &StackTable, names: &Names, s: StackId) -> Vec<String> {
        t.frames_of(s)
            .into_iter()
            .map(|n| names.get(n).to_string())
            .collect()
    }

    /// Asserts that no `(caller, frame)` is in `t` twice.
    fn assert_each_stack_once(t: &StackTable, case: usize) {
        let mut keys: Vec<(StackId, NameId)> = (0..t.len() as StackId)
            .map(|s| (t.parent(s), t.frame(s)))
            .collect();
        keys.sort_unstable();
        keys.dedup();
        assert_eq!(keys.len(), t.len(), "case {case}: a stack is there twice");
    }

    #[test]
    fn absorbed_stacks_are_found_once_and_keep_their_frames() {
        let mut rng = crate::generator::Rng(5);
        let mut appended = 0;
        for case in 0..150 {
            let counts = [rng.below(200), rng.below(200), rng.below(200)];
            let parts: Vec<Vec<Vec<String>>> = counts
                .iter()
                .map(|&c| random_stacks(&mut rng, c as usize))
                .collect();
            let (mut names, mut t, _) = table_of(&parts[0]);
            for part in &parts[1..] {
                let (other_names, other, ids) = table_of(part);
                let before = t.len();
                let map = t.absorb(&mut names, &other, &other_names);
                appended += t.len() - before;
                // Every stack of the other table has its frames here.
                for (frames, &id) in part.iter().zip(&ids) {
                    assert_eq!(
                        &frame_names(&t, &names, map[id as usize]),
                        frames,
                        "case {case}"
                    );
                }
            }
            // Each (caller, frame) once, and every stack found again, nothing added.
            assert_each_stack_once(&t, case);
            let len = t.len();
            for frames in parts.iter().flatten() {
                let s = t.path(frames.iter().map(|x| names.intern(x)));
                assert_eq!(&frame_names(&t, &names, s), frames);
            }
            assert_eq!(t.len(), len, "case {case}: an absorbed stack was not found");
            // A new stack under an absorbed one (the last: it has no callee yet) is
            // added once.
            if len > 0 {
                let (last, frame) = ((len - 1) as StackId, t.frame(0));
                let deep = t.child(last, frame);
                assert_eq!(t.child(last, frame), deep);
                assert_eq!(t.len(), len + 1);
            }
        }
        assert!(appended > 10_000, "only {appended} stacks appended");
    }

    #[test]
    fn paths_added_with_path_child_are_the_paths_added_with_child() {
        let mut rng = crate::generator::Rng(9);
        for case in 0..100 {
            let count = rng.below(300) as usize;
            let stacks = random_stacks(&mut rng, count);
            let (names, want, want_ids) = table_of(&stacks);
            let mut t = StackTable::default();
            let mut ids = Vec::new();
            let mut names2 = Names::new();
            for (k, frames) in stacks.iter().enumerate() {
                // Halfway, another table's stacks absorbed (appended unlinked).
                if k == stacks.len() / 2 {
                    let (other_names, other, _) = table_of(&stacks[k..]);
                    t.absorb(&mut names2, &other, &other_names);
                }
                let (mut node, mut fresh) = (EMPTY_STACK, false);
                for f in frames {
                    node = t.path_child(node, names2.intern(f), &mut fresh);
                }
                ids.push(node);
            }
            for (k, frames) in stacks.iter().enumerate() {
                assert_eq!(&frame_names(&t, &names2, ids[k]), frames, "case {case}");
                assert_eq!(&frame_names(&want, &names, want_ids[k]), frames);
            }
            assert_each_stack_once(&t, case);
        }
    }

    #[test]
    fn weights_widen_only_when_needed() {
        let mut w = Weights::default();
        w.push(1);
        w.push(1);
        assert_eq!(w, Weights::Ones(2));
        w.push(7);
        assert_eq!(w, Weights::Narrow(vec![1, 1, 7]));
        w.push(1 << 40);
        assert_eq!(w.get(3), 1 << 40);
        assert_eq!(w.get(2), 7);
        for values in [
            vec![],
            vec![1, 1],
            vec![1, 7, 1],
            vec![2, u64::from(u32::MAX) + 1, 1],
        ] {
            let mut pushed = Weights::default();
            values.iter().for_each(|&v| pushed.push(v));
            assert_eq!(Weights::from_values(values), pushed);
        }
    }

    #[test]
    fn finish_sorts_every_column_by_time() {
        let mut s = Samples::new("t", SourceFormat::Speedscope);
        let t = s.add_thread(ThreadInfo::default());
        let e = s.event("cpu", ValueFormat::default());
        let st = s.stream(t, e);
        let (a, b) = (stack(&mut s, "a"), stack(&mut s, "b"));
        s.push(st, 30, a, 3);
        s.set_counter(st, CounterKind::CpuNs, 300);
        s.push(st, 10, b, 1);
        s.set_waker(st, 0);
        s.push(st, 20, a, 2);
        let s = s.finish();
        let st = &s.streams[0];
        assert_eq!(st.time, [0, 10, 20]);
        assert_eq!(s.origin_ns, 10);
        assert_eq!(st.stack, [b, a, a]);
        assert_eq!((st.weight.get(0), st.weight.get(2)), (1, 3));
        assert_eq!(st.counter(CounterKind::CpuNs), Some(&[0, 0, 300][..]));
        assert_eq!(
            st.wakers,
            [Waker {
                sample: 0,
                thread: 0,
                time: 0
            }]
        );
    }

    #[test]
    fn aggregate_counts_a_range_and_groups_threads() {
        let mut s = Samples::new("t", SourceFormat::Speedscope);
        let e = s.event("cpu", ValueFormat::default());
        let t1 = s.add_thread(ThreadInfo {
            name: "main".into(),
            ..Default::default()
        });
        let t2 = s.add_thread(ThreadInfo {
            name: "worker".into(),
            ..Default::default()
        });
        let (ab, ac) = (stack(&mut s, "a;b"), stack(&mut s, "a;c"));
        let s1 = s.stream(t1, e);
        for (i, st) in [ab, ab, ac, EMPTY_STACK].into_iter().enumerate() {
            s.push(s1, i as u64 * 10, st, 1);
        }
        let s2 = s.stream(t2, e);
        s.push(s2, 5, ac, 4);
        let s = s.finish();
        let all = s.aggregate(Selection::default()).unwrap();
        assert_eq!(
            all.folded_lines(),
            ["main 1", "main;a;b 2", "main;a;c 1", "worker;a;c 4"]
        );
        let part = s
            .aggregate(Selection {
                event: 0,
                range: Some((10, 21)),
            })
            .unwrap();
        assert_eq!(part.folded_lines(), ["main;a;b 1", "main;a;c 1"]);
        assert_eq!(part.tree.grand_total(), 2);
    }
}
