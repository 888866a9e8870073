//! Records into spans: metadata, per-thread B/E matching and nesting by containment,
//! async spans matched by key, track order and names; `emit` makes the span set.

use super::events::{
    ArgStore, Doc, Extra, IdText, NO_EXTRA, NO_NAME, NONE, Pid, Rec, Recs, SystemName,
};
use crate::model::Warnings;
use crate::model::names::{NameId, Names};
use crate::model::spans::{SpanSet, Track, TrackInfo, TrackKind};
use hashbrown::HashTable;
use serde::Deserialize;
use serde_json::value::RawValue;
use std::borrow::Cow;
use std::collections::HashMap;
use std::hash::BuildHasher;

// ---------------------------------------------------------------------------------------
// Linking events into spans.

/// A span before it gets its final index.
pub(super) struct Pending {
    pub(super) start: i64,
    pub(super) end: i64,
    /// The event that opened it (args, async id).
    pub(super) rec: u32,
    /// The `E` event that closed it (its args are merged), or `u32::MAX`.
    pub(super) close: u32,
    /// Parent, as an index into the same track's pending list, or `u32::MAX`.
    pub(super) parent: u32,
    pub(super) name: NameId,
    pub(super) cat: NameId,
    /// Bit 0: the opening event has args; bit 1: the closing one; bit 2: an async id.
    pub(super) flags: u8,
}

pub(super) const OWN_ARGS: u8 = 1;
pub(super) const CLOSE_ARGS: u8 = 2;
pub(super) const HAS_ID: u8 = 4;

/// What linking needs of a thread event, copied out of its `Rec` so the per-thread
/// passes read small contiguous records instead of events scattered over memory. Sorts
/// by time, then file order.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, bytemuck::Zeroable)]
pub(super) struct Slim {
    pub(super) ts: i64,
    pub(super) k: u32,
    pub(super) name: NameId,
    pub(super) dur: i64,
    pub(super) cat: NameId,
    pub(super) ph: u8,
    pub(super) flags: u8,
}

impl Slim {
    pub(super) fn of(r: &Rec, ts: i64, k: u32) -> Slim {
        Slim {
            ts,
            k,
            name: r.name,
            dur: r.dur_ns,
            cat: r.cat,
            ph: r.ph,
            flags: if r.args.1 == 0 { 0 } else { OWN_ARGS } | if r.has_id() { HAS_ID } else { 0 },
        }
    }

    pub(super) fn pending(&self, start: i64, end: i64) -> Pending {
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
pub(super) enum TrackKey<'a> {
    Thread(Pid<'a>, Pid<'a>),
    Async(Pid<'a>),
}

#[derive(Default)]
pub(super) struct Counts {
    pub(super) e_without_b: u64,
    pub(super) unclosed_b: u64,
    pub(super) name_mismatch: u64,
    pub(super) partial_overlap: u64,
    pub(super) e_async_without_b: u64,
    pub(super) unclosed_async: u64,
    pub(super) async_closed_by_parent: u64,
    pub(super) f_without_s: u64,
    pub(super) steps: u64,
    pub(super) no_dur: u64,
    pub(super) negative_dur: u64,
    pub(super) no_ts: u64,
    pub(super) no_ph: u64,
    pub(super) async_without_id: u64,
    pub(super) skipped: std::collections::BTreeMap<u8, u64>,
}

impl Counts {
    /// Adds `o`'s counts to these.
    fn add(&mut self, o: &Counts) {
        self.e_without_b += o.e_without_b;
        self.unclosed_b += o.unclosed_b;
        self.name_mismatch += o.name_mismatch;
        self.partial_overlap += o.partial_overlap;
        self.e_async_without_b += o.e_async_without_b;
        self.unclosed_async += o.unclosed_async;
        self.async_closed_by_parent += o.async_closed_by_parent;
        self.f_without_s += o.f_without_s;
        self.steps += o.steps;
        self.no_dur += o.no_dur;
        self.negative_dur += o.negative_dur;
        self.no_ts += o.no_ts;
        self.no_ph += o.no_ph;
        self.async_without_id += o.async_without_id;
        for (&ph, &n) in &o.skipped {
            *self.skipped.entry(ph).or_default() += n;
        }
    }
}

/// A thread's `thread_name` and `thread_sort_index`.
pub(super) type ThreadMeta<'a> = (Option<Cow<'a, str>>, i64);

#[derive(Default)]
pub(super) struct Process<'a> {
    pub(super) name: Option<Cow<'a, str>>,
    pub(super) sort_index: i64,
}

/// Hash maps keyed by small ids: foldhash, as the name interner uses.
pub(super) type FastMap<K, V> = HashMap<K, V, foldhash::fast::FixedState>;

/// What matches async events to each other: the process for local ids, category, id,
/// scope, and for legacy `S`/`T`/`p`/`F` events also the name. `None` without an id.
pub(super) type AsyncKey<'k> = (Option<u32>, NameId, IdText<'k>, &'k str, NameId);

/// Whether `a` and `b` have equal [`async_key`]s. Records without an [`Extra`] (no long
/// id, no scope: most async events) compare their fields as stored, without building
/// keys.
fn same_async_key(a: &Rec, b: &Rec, extras: &[Extra<'_>]) -> bool {
    if a.extra != NO_EXTRA || b.extra != NO_EXTRA {
        return async_key(a, extras) == async_key(b, extras);
    }
    let legacy_name = |r: &Rec| {
        if matches!(r.ph, b'S' | b'T' | b'p' | b'F') {
            r.name
        } else {
            NO_NAME
        }
    };
    if !a.has_id() || !b.has_id() {
        return a.has_id() == b.has_id();
    }
    a.id_raw() == b.id_raw()
        && a.cat == b.cat
        && (!a.id_is_local() || a.pid == b.pid)
        && legacy_name(a) == legacy_name(b)
}

pub(super) fn async_key<'r>(r: &Rec, extras: &'r [Extra<'_>]) -> Option<AsyncKey<'r>> {
    let (id, local) = r.id(extras)?;
    let legacy = matches!(r.ph, b'S' | b'T' | b'p' | b'F');
    Some((
        local.then_some(r.pid),
        r.cat,
        id,
        r.scope(extras),
        if legacy { r.name } else { NO_NAME },
    ))
}

/// Links the records of a trace into its span set; thread tracks are linked and async
/// events matched on up to `threads` threads (the result does not depend on how many).
pub(super) fn build(
    recs: Recs,
    extras: Vec<Extra<'_>>,
    pids: &[Pid<'_>],
    names: Names,
    store: ArgStore,
    mut doc: Doc,
    threads: usize,
) -> SpanSet {
    let mut c = Counts::default();
    let system = std::mem::take(&mut doc.system_names);
    let mut tracks = Tracks::default();
    let mut seen = Seen::default();
    let groups = group(
        &recs,
        &extras,
        pids,
        &mut tracks,
        &mut c,
        &mut seen,
        threads,
    );
    let meta = Meta::read(&recs, &extras, &seen, pids, &system);
    let per_track = std::mem::take(&mut tracks.per_track);
    let mut pending = all_thread_spans(per_track, meta.trace_end, threads, &mut c);
    async_spans(groups, &mut pending, meta.trace_end, threads, &mut c);
    pending.resize_with(tracks.keys.len(), Vec::new);
    let named = NamedTracks::of(&tracks.keys, &meta);
    super::emit::emit(
        &recs,
        &extras,
        seen.any_cat,
        names,
        store,
        &pending,
        named,
        doc,
        &c,
        threads,
    )
}

/// What `M` events say of processes and threads, and where the trace ends.
struct Meta<'r> {
    processes: FastMap<Pid<'r>, Process<'r>>,
    threads: FastMap<(Pid<'r>, Pid<'r>), ThreadMeta<'r>>,
    /// The latest end of any event (spans never closed end here).
    trace_end: i64,
}

impl<'r> Meta<'r> {
    /// The metadata events of `recs`; `system` names what they leave unnamed.
    fn read(
        recs: &Recs,
        extras: &'r [Extra<'_>],
        seen: &Seen,
        pids: &'r [Pid<'_>],
        system: &'r [SystemName],
    ) -> Meta<'r> {
        #[derive(Deserialize)]
        struct MetaArgs<'b> {
            #[serde(borrow, default)]
            name: Option<Cow<'b, str>>,
            #[serde(borrow, default)]
            sort_index: Option<&'b RawValue>,
        }
        let mut m = Meta {
            processes: FastMap::default(),
            threads: FastMap::default(),
            trace_end: seen.trace_end,
        };
        for &k in &seen.meta {
            let r = &recs[k as usize];
            let Some((args, name)) = r
                .extra(extras)
                .and_then(|e| Some((e.meta_args?, e.meta_name.as_deref()?)))
            else {
                continue;
            };
            let Ok(a) = serde_json::from_str::<MetaArgs<'_>>(args) else {
                continue;
            };
            let sort = a
                .sort_index
                .and_then(|s| s.get().parse::<i64>().ok())
                .unwrap_or(0);
            let (pid, tid) = (pids[r.pid as usize], pids[r.tid as usize]);
            match name {
                "process_name" => m.processes.entry(pid).or_default().name = a.name,
                "process_sort_index" => m.processes.entry(pid).or_default().sort_index = sort,
                "thread_name" => m.threads.entry((pid, tid)).or_default().0 = a.name,
                "thread_sort_index" => m.threads.entry((pid, tid)).or_default().1 = sort,
                _ => {}
            }
        }
        for n in system {
            let name = Some(Cow::Borrowed(n.name.as_str()));
            match n.tid {
                None => {
                    let p = m.processes.entry(Pid::Num(n.pid)).or_default();
                    p.name = p.name.take().or(name);
                }
                Some(tid) => {
                    let t = m
                        .threads
                        .entry((Pid::Num(n.pid), Pid::Num(tid)))
                        .or_default();
                    t.0 = t.0.take().or(name);
                }
            }
        }
        m.trace_end = m.trace_end.max(0);
        m
    }

    /// "`process_name` pid", or "Process pid".
    fn process_name(&self, pid: Pid<'_>) -> String {
        match self.processes.get(&pid).and_then(|p| p.name.as_deref()) {
            Some(n) if !n.is_empty() => format!("{n} {pid}"),
            _ => format!("Process {pid}"),
        }
    }

    fn process_sort(&self, pid: Pid<'_>) -> i64 {
        self.processes.get(&pid).map_or(0, |p| p.sort_index)
    }
}

/// Tracks under construction: their keys in order of first appearance, and per track
/// its thread events as [`Slim`]s.
#[derive(Default)]
struct Tracks<'r> {
    keys: Vec<TrackKey<'r>>,
    of: FastMap<TrackKey<'r>, u32>,
    per_track: Vec<Parts>,
}

impl<'r> Tracks<'r> {
    /// The track of `key`, made when new.
    fn intern(&mut self, key: TrackKey<'r>) -> u32 {
        *self.of.entry(key).or_insert_with(|| {
            self.keys.push(key);
            self.per_track.push(Parts::default());
            self.keys.len() as u32 - 1
        })
    }
}

/// Async events by key: a group per key in order of first appearance, with its process's
/// async track, and every async event as its group and [`Slim`] in file order (copied
/// while the event is in cache: gathering them group by group from the events made
/// linking a million async spans wait on memory).
struct AsyncGroups {
    track: Vec<u32>,
    group: Vec<u32>,
    events: Vec<Slim>,
}

/// Whether an event of phase `ph` is an async event (matched to others by its id).
fn is_async_phase(ph: u8) -> bool {
    matches!(ph, b'b' | b'e' | b'n' | b'S' | b'T' | b'p' | b'F')
}

/// Whether [`sort_events`] takes `r` as an async event: an async phase, a time, an id.
fn is_async_event(r: &Rec) -> bool {
    is_async_phase(r.ph) && r.ts().is_some() && r.has_id()
}

/// Whether an event of phase `ph` becomes (part of) a span.
fn is_span_phase(ph: u8) -> bool {
    matches!(
        ph,
        b'X' | b'B' | b'E' | b'i' | b'I' | b'R' | b'b' | b'e' | b'n' | b'S' | b'T' | b'p' | b'F'
    )
}

/// A track's thread events in file order: those of the first chunk that had any, and the
/// later chunks' (joined by the thread that links the track, not in sequence here).
type Parts = (Vec<Slim>, Vec<Vec<Slim>>);

/// Sorts the span events: thread events onto their track, async ones into their group;
/// the rest is counted.
fn group<'r>(
    recs: &'r Recs,
    extras: &[Extra<'_>],
    pids: &'r [Pid<'_>],
    tracks: &mut Tracks<'r>,
    c: &mut Counts,
    seen: &mut Seen,
    threads: usize,
) -> AsyncGroups {
    // Chunks of the events sorted on all threads, then joined in file order: tracks are
    // made in order of first appearance, and each track's events stay in file order.
    // (Chunks do not cross the parse's parts: a part is one core's share already.)
    let chunk = recs.len().div_ceil(threads.max(1)).max(1);
    let chunks: Vec<(usize, &'r [Rec])> = recs
        .parts()
        .flat_map(|(start, part)| {
            part.chunks(chunk)
                .enumerate()
                .map(move |(j, c)| (start + j * chunk, c))
        })
        .collect();
    let parallel = threads > 1 && chunks.len() > 1;
    // The async events' lists are made once at their full length (each chunk's share
    // counted first) and each chunk fills its own share: lists made per chunk and joined
    // were copied, a million events' worth.
    let count = |c: &[Rec]| c.iter().filter(|r| is_async_event(r)).count();
    let shares: Vec<usize> = if parallel {
        std::thread::scope(|s| {
            let handles: Vec<_> = chunks
                .iter()
                .map(|&(_, c)| s.spawn(move || count(c)))
                .collect();
            handles.into_iter().map(|h| crate::par::join(h)).collect()
        })
    } else {
        chunks.iter().map(|&(_, c)| count(c)).collect()
    };
    let total: usize = shares.iter().sum();
    let mut async_events = vec![0u32; total];
    let mut events: Vec<Slim> = bytemuck::allocation::zeroed_vec(total);
    let mut hashes = vec![0u64; total];
    let mut async_pids = vec![0u32; total];
    let mut outs = Vec::with_capacity(chunks.len());
    let mut rest = (
        &mut async_events[..],
        &mut events[..],
        &mut hashes[..],
        &mut async_pids[..],
    );
    for &n in &shares {
        let (a, b, h, p) = rest;
        let (a, a2) = a.split_at_mut(n);
        let (b, b2) = b.split_at_mut(n);
        let (h, h2) = h.split_at_mut(n);
        let (p, p2) = p.split_at_mut(n);
        outs.push(AsyncOut {
            ks: a,
            events: b,
            hashes: h,
            pids: p,
        });
        rest = (a2, b2, h2, p2);
    }
    let work = chunks.into_iter().zip(outs);
    let sorted: Vec<Sorted<'r>> = if parallel {
        std::thread::scope(|s| {
            let handles: Vec<_> = work
                .map(|((base, c), out)| s.spawn(move || sort_events(c, extras, pids, base, out)))
                .collect();
            handles.into_iter().map(|h| crate::par::join(h)).collect()
        })
    } else {
        work.map(|((base, c), out)| sort_events(c, extras, pids, base, out))
            .collect()
    };
    for part in sorted {
        c.add(&part.counts);
        seen.add(part.seen);
        for (key, (evs, _)) in part.keys.into_iter().zip(part.per_track) {
            let t = tracks.intern(key) as usize;
            let parts = &mut tracks.per_track[t];
            if parts.0.is_empty() {
                parts.0 = evs;
            } else {
                parts.1.push(evs);
            }
        }
    }
    let (group_of, first) = match_async(recs, extras, &async_events, &hashes, threads);
    drop((async_events, hashes));
    // Each group's track: its first event's process (groups are numbered in the order of
    // their first events, so this reads the events in file order).
    let mut last_async: Option<(Pid<'_>, u32)> = None;
    let track = first
        .iter()
        .map(|&i| {
            let pid = pids[async_pids[i as usize] as usize];
            match last_async {
                Some((p, t)) if p == pid => t,
                _ => {
                    let t = tracks.intern(TrackKey::Async(pid));
                    last_async = Some((pid, t));
                    t
                }
            }
        })
        .collect();
    AsyncGroups {
        track,
        group: group_of,
        events,
    }
}

/// The hash of an async event's key ([`async_key`]), by which [`match_async`] groups.
fn async_hash(r: &Rec, extras: &[Extra<'_>]) -> u64 {
    foldhash::fast::FixedState::default().hash_one(async_key(r, extras))
}

/// The groups of the async events `ks` (events with an id), whose keys hash to `hashes`
/// (computed while the events were sorted, when their records were in cache): each
/// event's group, and each group's first event as a position in `ks`, groups numbered in
/// order of first appearance.
///
/// Events are grouped by their 64-bit hashes alone, then every event's key is checked
/// against its group's first event's in one pass in file order (the first event of a
/// group lies shortly before, so both records come from the caches): comparing keys
/// while grouping read a record cold from memory at each match. Should two keys ever
/// share a hash, the check fails and the events are grouped again comparing keys.
fn match_async(
    recs: &Recs,
    extras: &[Extra<'_>],
    ks: &[u32],
    hashes: &[u64],
    threads: usize,
) -> (Vec<u32>, Vec<u32>) {
    let rec = |i: u32| &recs[ks[i as usize] as usize];
    let same = |f: u32, i: u32| same_async_key(rec(f), rec(i), extras);
    let (group_of, first) = group_by_hash(hashes, threads, |_, _| true);
    let agrees = |range: std::ops::Range<usize>| {
        range
            .into_iter()
            .all(|i| same(first[group_of[i] as usize], i as u32))
    };
    let n = ks.len();
    let all_agree = if threads > 1 && crate::par::two_threads_for(n) {
        let (a, b) = crate::par::both(|| agrees(0..n / 2), || agrees(n / 2..n));
        a && b
    } else {
        agrees(0..n)
    };
    if all_agree {
        return (group_of, first);
    }
    group_by_hash(hashes, threads, same)
}

/// Groups the events whose hashes are `hashes` (an event is its position) by hash, and
/// among equal hashes by `same(first event of a group, event)`; groups numbered in order
/// of first appearance. On `threads > 1` each thread matches the events whose hash falls
/// in its share of hash values (equal keys hash alike, so each group lies in one share),
/// and the shares' groups are numbered together by their first events: the sequential
/// numbering.
fn group_by_hash(
    hashes: &[u64],
    threads: usize,
    same: impl Fn(u32, u32) -> bool + Sync,
) -> (Vec<u32>, Vec<u32>) {
    let parts = threads.clamp(1, 64);
    if parts == 1 {
        let mut m = AsyncMatcher::new(hashes.len());
        let group_of = hashes
            .iter()
            .enumerate()
            .map(|(i, &h)| m.group(i as u32, h, &same))
            .collect();
        return (group_of, m.first);
    }
    // Bits 44..60 pick the share: neither the table's bucket bits (low) nor its tag bits
    // (top 7) nor the recent-group cache's (32..44), which stay spread within a share.
    let share = |h: u64| (((h >> 44) & 0xffff) as usize * parts) >> 16;
    let same = &same;
    let shares: Vec<(Vec<u32>, Vec<u32>)> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..parts)
            .map(|p| {
                s.spawn(move || {
                    let mut m = AsyncMatcher::new(hashes.len() / parts);
                    let mut local = Vec::with_capacity(hashes.len() / parts);
                    for (i, &h) in hashes.iter().enumerate() {
                        if share(h) == p {
                            local.push(m.group(i as u32, h, same));
                        }
                    }
                    (local, m.first)
                })
            })
            .collect();
        handles.into_iter().map(|h| crate::par::join(h)).collect()
    });
    // Number the groups by first event: a merge of the shares' lists, each ascending.
    let total: usize = shares.iter().map(|s| s.1.len()).sum();
    let mut first = Vec::with_capacity(total);
    let mut global: Vec<Vec<u32>> = shares
        .iter()
        .map(|s| Vec::with_capacity(s.1.len()))
        .collect();
    let mut heads = vec![0usize; parts];
    loop {
        let mut best: Option<(u32, usize)> = None;
        for (p, s) in shares.iter().enumerate() {
            if let Some(&k) = s.1.get(heads[p])
                && best.is_none_or(|(b, _)| k < b)
            {
                best = Some((k, p));
            }
        }
        let Some((k, p)) = best else { break };
        global[p].push(first.len() as u32);
        first.push(k);
        heads[p] += 1;
    }
    let mut next = vec![0usize; parts];
    let group_of = hashes
        .iter()
        .map(|&h| {
            let p = share(h);
            let g = global[p][shares[p].0[next[p]] as usize];
            next[p] += 1;
            g
        })
        .collect();
    (group_of, first)
}

/// A chunk's span events: thread events by track (tracks in order of first appearance),
/// async events into its [`AsyncOut`]; the rest counted.
struct Sorted<'r> {
    keys: Vec<TrackKey<'r>>,
    per_track: Vec<Parts>,
    counts: Counts,
    seen: Seen,
}

/// What the pass over all records notes besides span events.
pub(super) struct Seen {
    /// The latest end of any event.
    trace_end: i64,
    /// Some event has a category.
    any_cat: bool,
    /// The metadata (`M`) events.
    meta: Vec<u32>,
}

impl Default for Seen {
    fn default() -> Seen {
        Seen {
            trace_end: i64::MIN,
            any_cat: false,
            meta: Vec::new(),
        }
    }
}

impl Seen {
    fn add(&mut self, o: Seen) {
        self.trace_end = self.trace_end.max(o.trace_end);
        self.any_cat |= o.any_cat;
        self.meta.extend_from_slice(&o.meta);
    }
}

/// A chunk's share of the async events' lists, in file order: each event's index, its
/// [`Slim`], its key's hash ([`async_hash`]) and its process id.
struct AsyncOut<'o> {
    ks: &'o mut [u32],
    events: &'o mut [Slim],
    hashes: &'o mut [u64],
    pids: &'o mut [u32],
}

/// Entries of the thread-to-track cache of [`sort_events`].
const THREAD_CACHE: usize = 64;

/// The cache slot of a thread's (process, thread) ids.
fn thread_slot(pid: u32, tid: u32) -> usize {
    let h = (pid.wrapping_mul(0x9e37_79b9) ^ tid).wrapping_mul(0x85eb_ca6b);
    (h >> 26) as usize % THREAD_CACHE
}

/// Sorts the span events of `recs` (the events from index `base` on).
fn sort_events<'r>(
    recs: &'r [Rec],
    extras: &[Extra<'_>],
    pids: &'r [Pid<'_>],
    base: usize,
    out: AsyncOut<'_>,
) -> Sorted<'r> {
    let mut c = Counts::default();
    let mut tracks = Tracks::default();
    let mut next = 0;
    // A thread's track by its process and thread ids (small numbers: indices into the
    // parse's id list) in a direct-mapped cache: events of a few threads interleave, and
    // most find their track there without hashing the ids' text.
    let mut thread_track = [(u32::MAX, u32::MAX, 0u32); THREAD_CACHE];
    let mut seen = Seen::default();
    for (k, r) in recs.iter().enumerate() {
        let k = (base + k) as u32;
        if let Some(ts) = r.ts() {
            let d = if r.dur_ns == NONE { 0 } else { r.dur_ns.max(0) };
            seen.trace_end = seen.trace_end.max(ts.saturating_add(d));
        }
        seen.any_cat |= r.cat != NO_NAME;
        if r.ph == b'M' {
            seen.meta.push(k);
        }
        if r.ph == 0 {
            c.no_ph += 1;
            continue;
        }
        if !is_span_phase(r.ph) {
            // `P` events are CPU samples: `cpu.rs` reads and counts them.
            if r.ph != b'M' && r.ph != b'P' {
                *c.skipped.entry(r.ph).or_default() += 1;
            }
            continue;
        }
        let Some(ts) = r.ts() else {
            c.no_ts += 1;
            continue;
        };
        if is_async_phase(r.ph) {
            if !r.has_id() {
                c.async_without_id += 1;
                continue;
            }
            out.ks[next] = k;
            out.events[next] = Slim::of(r, ts, k);
            out.hashes[next] = async_hash(r, extras);
            out.pids[next] = r.pid;
            next += 1;
            continue;
        }
        let t = if matches!(r.ph, b'i' | b'I' | b'R') && r.instant_scope != b't' {
            tracks.intern(TrackKey::Async(pids[r.pid as usize]))
        } else {
            let slot = thread_slot(r.pid, r.tid);
            match thread_track[slot] {
                (p, t, id) if p == r.pid && t == r.tid => id,
                _ => {
                    let (pid, tid) = (pids[r.pid as usize], pids[r.tid as usize]);
                    let id = tracks.intern(TrackKey::Thread(pid, tid));
                    thread_track[slot] = (r.pid, r.tid, id);
                    id
                }
            }
        };
        if r.no_dur {
            c.no_dur += 1;
        }
        tracks.per_track[t as usize].0.push(Slim::of(r, ts, k));
    }
    debug_assert_eq!(next, out.ks.len(), "async events counted as sorted");
    Sorted {
        keys: tracks.keys,
        per_track: tracks.per_track,
        counts: c,
        seen,
    }
}

/// Numbers async keys in order of first appearance. The table holds each group's hash
/// and number; a group's key is read back from its first event when asked to compare
/// keys, so a million distinct ids cost 16 bytes of table each, and no allocation.
struct AsyncMatcher {
    table: HashTable<(u64, u32)>,
    first: Vec<u32>,
    /// The `e` of an async span usually follows its `b` closely: a small direct-mapped
    /// cache of recently used groups (in L1/L2) answers it without a probe into the large
    /// table, whose random accesses made matching memory-latency bound.
    recent: Vec<(u64, u32)>,
}

const RECENT_GROUPS: usize = 4096;

impl AsyncMatcher {
    fn new(async_count: usize) -> AsyncMatcher {
        let mut table: HashTable<(u64, u32)> = HashTable::new();
        table.reserve(async_count / 2, |e| e.0);
        AsyncMatcher {
            table,
            first: Vec::new(),
            recent: vec![(0u64, u32::MAX); RECENT_GROUPS],
        }
    }

    /// The group of event `i`, whose key hashes to `h`: that of an earlier event with
    /// hash `h` when `same(its group's first event, i)`.
    fn group(&mut self, i: u32, h: u64, same: impl Fn(u32, u32) -> bool) -> u32 {
        let first = &self.first;
        let slot = (h >> 32) as usize % RECENT_GROUPS;
        let (rh, rg) = self.recent[slot];
        let g = if rh == h && rg != u32::MAX && same(first[rg as usize], i) {
            rg
        } else if let Some(&(_, g)) = self
            .table
            .find(h, |&(eh, g)| eh == h && same(first[g as usize], i))
        {
            g
        } else {
            let g = self.first.len() as u32;
            self.first.push(i);
            self.table.insert_unique(h, (h, g), |e| e.0);
            g
        };
        self.recent[slot] = (h, g);
        g
    }
}

/// [`thread_spans`] of every track, in track order: on up to `threads` threads when there
/// are several tracks (the caller asks for one thread below the parallel input size), each thread taking the largest track not yet
/// taken and counting into its own [`Counts`] (sums, so the totals are the sequential
/// ones).
fn all_thread_spans(
    per_track: Vec<Parts>,
    trace_end: i64,
    threads: usize,
    c: &mut Counts,
) -> Vec<Vec<Pending>> {
    let threads = threads.min(per_track.len());
    if threads <= 1 {
        return per_track
            .into_iter()
            .map(|parts| thread_spans(parts, trace_end, c))
            .collect();
    }
    // Largest first, so that no thread is left with a big track at the end.
    let mut order: Vec<usize> = (0..per_track.len()).collect();
    let len = |p: &Parts| p.0.len() + p.1.iter().map(Vec::len).sum::<usize>();
    order.sort_by_key(|&t| std::cmp::Reverse(len(&per_track[t])));
    let slots: Vec<std::sync::Mutex<Parts>> =
        per_track.into_iter().map(std::sync::Mutex::new).collect();
    let next = std::sync::atomic::AtomicUsize::new(0);
    let work = || {
        let mut counts = Counts::default();
        let mut built = Vec::new();
        while let Some(&t) = order.get(next.fetch_add(1, std::sync::atomic::Ordering::Relaxed)) {
            let parts = std::mem::take(&mut *slots[t].lock().unwrap_or_else(|e| e.into_inner()));
            built.push((t, thread_spans(parts, trace_end, &mut counts)));
        }
        (built, counts)
    };
    let mut out: Vec<Vec<Pending>> = Vec::new();
    out.resize_with(slots.len(), Vec::new);
    std::thread::scope(|s| {
        let others: Vec<_> = (1..threads).map(|_| s.spawn(work)).collect();
        let mine = work();
        let joined = others.into_iter().map(|h| crate::par::join(h));
        for (built, counts) in joined.chain(std::iter::once(mine)) {
            c.add(&counts);
            for (t, spans) in built {
                out[t] = spans;
            }
        }
    });
    out
}

/// A thread's spans from its events: B/E matching, X, instants; then nesting by
/// containment. Parents are indices into the returned list.
fn thread_spans(parts: Parts, trace_end: i64, c: &mut Counts) -> Vec<Pending> {
    let (mut evs, more) = parts;
    evs.reserve(more.iter().map(Vec::len).sum());
    for part in more {
        evs.extend_from_slice(&part);
    }
    // (ts, event) pairs are unique: an unstable sort keeps file order among equal
    // timestamps, like a stable sort by ts.
    if !evs.is_sorted() {
        sort_by_time(&mut evs);
    }
    // Spans are listed in the order of their start: a `B` takes its place when it opens
    // and gets its end when its `E` comes, so that the list is usually in the order
    // nesting needs already (see `nest_by_containment`).
    let mut spans: Vec<Pending> = Vec::with_capacity(evs.len());
    let mut open: Vec<(Slim, usize)> = Vec::new();
    for e in &evs {
        let at = e.ts;
        match e.ph {
            b'B' => {
                open.push((*e, spans.len()));
                spans.push(e.pending(at, at));
            }
            b'E' => match open.pop() {
                Some((b, slot)) => {
                    if e.name != NO_NAME && e.name != b.name {
                        c.name_mismatch += 1;
                    }
                    let mut p = b.pending(b.ts, at);
                    p.close = e.k;
                    if e.flags & OWN_ARGS != 0 {
                        p.flags |= CLOSE_ARGS;
                    }
                    spans[slot] = p;
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
    for (b, slot) in open {
        c.unclosed_b += 1;
        spans[slot] = b.pending(b.ts, trace_end.max(b.ts));
    }
    nest_by_containment(&mut spans, c);
    spans
}

/// Sorts `evs` as `Slim`'s order does (time, then file order: a unique pair). A thread's
/// events are mostly in time order already (a writer emits `B`/`E` as they happen; an `X`
/// written when it completes lands after its children, a sixth of W6's events): the
/// events in order (each at or after the latest before it) stay where they are, compacted
/// to the front; only the others are sorted, and the two lists are merged from the back
/// into place. An input in any order costs one pass and one merge more than sorting it
/// all.
fn sort_by_time(evs: &mut [Slim]) {
    let key = |e: &Slim| (e.ts, e.k);
    let mut rest: Vec<Slim> = Vec::new();
    let mut kept = 0;
    let mut latest = (i64::MIN, 0u32);
    for i in 0..evs.len() {
        let e = evs[i];
        if key(&e) >= latest {
            latest = key(&e);
            evs[kept] = e;
            kept += 1;
        } else {
            rest.push(e);
        }
    }
    if rest.is_empty() {
        return;
    }
    sort_by_time_keys(&mut rest);
    // Merging from the back writes at `w - 1 >= i - 1`: no kept event is overwritten
    // before it is read.
    let (mut i, mut j, mut w) = (kept, rest.len(), evs.len());
    while j > 0 {
        if i > 0 && key(&evs[i - 1]) > key(&rest[j - 1]) {
            evs[w - 1] = evs[i - 1];
            i -= 1;
        } else {
            evs[w - 1] = rest[j - 1];
            j -= 1;
        }
        w -= 1;
    }
}

/// Sorts `evs` as `Slim`'s order does by sorting 16-byte keys that carry each event's
/// position and gathering the events after: half the bytes moved of sorting the 32-byte
/// events themselves, and one integer comparison instead of two fields'.
fn sort_by_time_keys(evs: &mut Vec<Slim>) {
    let Ok(n) = u32::try_from(evs.len()) else {
        evs.sort_unstable();
        return;
    };
    // The time with its sign bit flipped orders as the signed time does.
    let mut keys: Vec<u128> = evs
        .iter()
        .zip(0..n)
        .map(|(e, i)| {
            u128::from(e.ts as u64 ^ 1 << 63) << 64 | u128::from(e.k) << 32 | u128::from(i)
        })
        .collect();
    keys.sort_unstable();
    *evs = keys.iter().map(|&key| evs[key as u32 as usize]).collect();
}

/// Sets each span's parent to the innermost span containing it (sorted by start, longer
/// first, file order); a span partially overlapping the open one closes it, counted.
fn nest_by_containment(spans: &mut [Pending], c: &mut Counts) {
    // A total order (`rec` is unique): the sorted list is the same whatever the order
    // before, and a list already in order (events in time order) is not sorted again.
    let key = |p: &Pending| (p.start, std::cmp::Reverse(p.end), p.rec);
    if !spans.is_sorted_by_key(key) {
        spans.sort_unstable_by_key(key);
    }
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
}

/// The async groups' events gathered group by group (a counting sort, file order kept
/// within a group), each group's spans added to its process's async track. On two
/// threads when there are many events: the groups cut in two halves of about as many
/// events, each half gathered and linked into lists of its own, appended in group order
/// (the same lists as in sequence).
fn async_spans(
    groups: AsyncGroups,
    pending: &mut Vec<Vec<Pending>>,
    trace_end: i64,
    threads: usize,
    c: &mut Counts,
) {
    let AsyncGroups {
        track,
        group,
        events,
    } = groups;
    let n = track.len();
    let mut group_start = vec![0u32; n + 1];
    for &g in &group {
        group_start[g as usize + 1] += 1;
    }
    for g in 0..n {
        group_start[g + 1] += group_start[g];
    }
    let tracks = track.iter().map(|&t| t as usize + 1).max().unwrap_or(0);
    if pending.len() < tracks {
        pending.resize_with(tracks, Vec::new);
    }
    let total = events.len();
    // Zeroed by the system (every slot is written below): a million groups' events are
    // pages that the gathering threads fault in, not a pass of their own.
    let mut by_group: Vec<Slim> = bytemuck::allocation::zeroed_vec(total);
    // Gathers the events of groups `range` into `out` (their slots, from the range's
    // first). Each half reads every event's group (4 bytes each) and copies only its own.
    let gather = |out: &mut [Slim], range: std::ops::Range<usize>| {
        let base = group_start[range.start];
        let mut fill: Vec<u32> = group_start[range.clone()].to_vec();
        for (&g, e) in group.iter().zip(&events) {
            let g = g as usize;
            if range.contains(&g) {
                let f = &mut fill[g - range.start];
                out[(*f - base) as usize] = *e;
                *f += 1;
            }
        }
    };
    // Links the gathered groups `range` group by group onto `lists`.
    let link = |out: &mut [Slim],
                range: std::ops::Range<usize>,
                lists: &mut Vec<Vec<Pending>>,
                c: &mut Counts| {
        let base = group_start[range.start];
        let mut open = OpenAsync::default();
        for g in range {
            let evs =
                &mut out[(group_start[g] - base) as usize..(group_start[g + 1] - base) as usize];
            if !evs.is_sorted() {
                evs.sort_unstable();
            }
            async_group(evs, &mut lists[track[g] as usize], &mut open, trace_end, c);
        }
    };
    if threads <= 1 || !crate::par::two_threads_for(total) {
        gather(&mut by_group, 0..n);
        drop((group, events));
        link(&mut by_group, 0..n, pending, c);
        return;
    }
    let mid = group_start[..n].partition_point(|&s| (s as usize) < total / 2);
    let (lo, hi) = by_group.split_at_mut(group_start[mid] as usize);
    crate::par::both(|| gather(lo, 0..mid), || gather(hi, mid..n));
    drop((group, events));
    let mut later: Vec<Vec<Pending>> = Vec::new();
    later.resize_with(tracks, Vec::new);
    let mut later_counts = Counts::default();
    crate::par::both(
        || link(lo, 0..mid, pending, c),
        || link(hi, mid..n, &mut later, &mut later_counts),
    );
    c.add(&later_counts);
    // The later half's parents are indices into its own lists: past what the track's
    // list held before them.
    for (list, mut more) in pending.iter_mut().zip(later) {
        let at = list.len() as u32;
        crate::par::extend_mapped(list, &mut more, |p| Pending {
            parent: if p.parent == u32::MAX {
                u32::MAX
            } else {
                p.parent + at
            },
            ..*p
        });
    }
}

/// The spans of an async group still open, as indices into its track's list (kept
/// between groups: a million groups allocate once).
#[derive(Default)]
struct OpenAsync {
    nestable: Vec<usize>,
    legacy: Vec<usize>,
}

/// One async group's spans onto `list`: `b`/`e` nest, `n` are instants, `S`/`F` pair up.
fn async_group(
    evs: &[Slim],
    list: &mut Vec<Pending>,
    scratch: &mut OpenAsync,
    trace_end: i64,
    c: &mut Counts,
) {
    let OpenAsync {
        nestable: open,
        legacy: legacy_open,
    } = scratch;
    open.clear();
    legacy_open.clear();
    let close = |p: &mut Pending, end: i64, e: &Slim| {
        p.end = end;
        p.close = e.k;
        if e.flags & OWN_ARGS != 0 {
            p.flags |= CLOSE_ARGS;
        }
    };
    for e in evs {
        let at = e.ts;
        let parent = open.last().map_or(u32::MAX, |&p| p as u32);
        match e.ph {
            b'b' | b'n' => {
                let mut p = e.pending(at, if e.ph == b'b' { i64::MIN } else { at });
                p.parent = parent;
                list.push(p);
                if e.ph == b'b' {
                    open.push(list.len() - 1);
                }
            }
            b'e' => {
                // A named e closes the latest open b of that name (b's opened inside
                // it and still open end with it); an unnamed e closes the latest b.
                let pos = if e.name == NO_NAME {
                    open.len().checked_sub(1)
                } else {
                    open.iter().rposition(|&o| list[o].name == e.name)
                };
                let Some(p) = pos else {
                    c.e_async_without_b += 1;
                    continue;
                };
                let end = at.max(list[open[p]].start);
                for o in open.drain(p + 1..) {
                    c.async_closed_by_parent += 1;
                    list[o].end = end.max(list[o].start);
                }
                if let Some(o) = open.pop() {
                    close(&mut list[o], end, e);
                }
            }
            b'S' => {
                list.push(e.pending(at, i64::MIN));
                legacy_open.push(list.len() - 1);
            }
            b'F' => match legacy_open.pop() {
                Some(o) => {
                    let end = at.max(list[o].start);
                    close(&mut list[o], end, e);
                }
                None => c.f_without_s += 1,
            },
            _ => c.steps += 1, // T, p
        }
    }
    for &o in open.iter().chain(legacy_open.iter()) {
        c.unclosed_async += 1;
        list[o].end = trace_end.max(list[o].start);
    }
}

/// The tracks in display order, with their names and metadata.
pub(super) struct NamedTracks {
    /// Track indices in display order.
    pub(super) order: Vec<u32>,
    pub(super) tracks: Vec<Track>,
    pub(super) info: Vec<TrackInfo>,
}

impl NamedTracks {
    /// Orders the tracks like Perfetto: by process sort index, pid, then the async track,
    /// then thread sort index, tid; names threads "`thread_name tid`" under
    /// "`process_name pid`".
    fn of(keys: &[TrackKey<'_>], meta: &Meta<'_>) -> NamedTracks {
        let thread_sort = |pid, tid| {
            meta.threads
                .get(&(pid, tid))
                .map_or(0, |t: &ThreadMeta<'_>| t.1)
        };
        let mut order: Vec<u32> = (0..keys.len() as u32).collect();
        order.sort_by_key(|&t| match keys[t as usize] {
            TrackKey::Async(pid) => (meta.process_sort(pid), pid, 0, 0, Pid::Num(i64::MIN)),
            TrackKey::Thread(pid, tid) => {
                (meta.process_sort(pid), pid, 1, thread_sort(pid, tid), tid)
            }
        });
        let as_num = |p: Pid<'_>| match p {
            Pid::Num(n) => Some(n),
            Pid::Text(_) => None,
        };
        let mut tracks = Vec::with_capacity(order.len());
        let mut info = Vec::with_capacity(order.len());
        for &t in &order {
            let (name, i) = match keys[t as usize] {
                TrackKey::Async(pid) => (
                    format!("{} — async", meta.process_name(pid)),
                    TrackInfo {
                        kind: TrackKind::Async,
                        group: meta.process_name(pid),
                        pid: as_num(pid),
                        tid: None,
                        sort_index: meta.process_sort(pid),
                    },
                ),
                TrackKey::Thread(pid, tid) => {
                    let name = match meta.threads.get(&(pid, tid)).and_then(|t| t.0.as_deref()) {
                        Some(n) if !n.is_empty() => format!("{n} {tid}"),
                        _ => format!("Thread {tid}"),
                    };
                    let i = TrackInfo {
                        kind: TrackKind::Thread,
                        group: meta.process_name(pid),
                        pid: as_num(pid),
                        tid: as_num(tid),
                        sort_index: thread_sort(pid, tid),
                    };
                    (name, i)
                }
            };
            tracks.push(Track::new(name));
            info.push(i);
        }
        NamedTracks {
            order,
            tracks,
            info,
        }
    }
}

pub(super) fn plural(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

pub(super) fn warnings(c: &Counts, notes: Vec<String>) -> Warnings {
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

    /// Sorting by keys and gathering, and sorting the events out of order and merging,
    /// give `Slim`'s own order: times negative, zero and near both ends of `i64`, many
    /// equal times (file order decides), lists short and long, in any order, mostly in
    /// order or reversed.
    #[test]
    fn sorting_by_time_keys_is_slims_order() {
        let mut rng = crate::generator::Rng(11);
        for n in [0usize, 1, 2, 3, 17, 1000, 20_000] {
            let mut evs: Vec<Slim> = (0..n)
                .map(|i| {
                    let r = rng.next();
                    let ts = match r % 5 {
                        0 => i64::MIN + (r >> 40) as i64,
                        1 => i64::MAX - (r >> 40) as i64,
                        2 => -((r >> 50) as i64),
                        _ => ((r >> 54) % 64) as i64,
                    };
                    Slim {
                        ts,
                        k: (r >> 8) as u32 % (n as u32 * 4 + 1),
                        name: i as u32,
                        dur: (r >> 20) as i64,
                        cat: 0,
                        ph: b'X',
                        flags: 0,
                    }
                })
                .collect();
            // (ts, k) is unique in a trace: each event has its own index.
            evs.sort_by_key(|e| e.k);
            evs.dedup_by_key(|e| e.k);
            let mut want = evs.clone();
            want.sort_unstable();
            let mut keyed = evs.clone();
            sort_by_time_keys(&mut keyed);
            assert!(keyed == want, "{n} events, by keys");
            // Any order; mostly in order (a sixth of the events moved back a little, as
            // `X` events written after their children are); the reverse of the order.
            let mut nearly = want.clone();
            for i in 0..nearly.len() {
                let r = rng.next();
                if r.is_multiple_of(6) {
                    let back = ((r >> 8) % 40) as usize;
                    nearly[i.saturating_sub(back)..=i].rotate_right(1);
                }
            }
            let mut reversed = want.clone();
            reversed.reverse();
            for (what, mut list) in [("any", evs), ("nearly", nearly), ("reversed", reversed)] {
                sort_by_time(&mut list);
                assert!(list == want, "{n} events in {what} order");
            }
        }
    }

    /// Grouping by hash alone, then checking keys, gives the groups of comparing keys;
    /// hashes that collide (all equal, or pairs of keys made to share one) send it back
    /// to comparing keys, with the same groups, on one thread and on several.
    #[test]
    fn async_groups_survive_colliding_hashes() {
        let mut text = String::from("[");
        let ids = [
            "0x1",
            "0x2",
            "\"long-id-past-the-inline-bytes-1\"",
            "0x1",
            "7",
            "\"long-id-past-the-inline-bytes-2\"",
            "{\"local\":\"0x2\"}",
        ];
        for (i, id) in ids.iter().cycle().take(400).enumerate() {
            // Legacy async events (`S`, `F`) also key on their names.
            let (ph, cat) = match i % 11 {
                0 => ("S", "a"),
                1 => ("F", "a"),
                _ if i % 3 == 0 => ("b", "a"),
                _ => ("e", "b"),
            };
            let cat = if i % 5 == 0 { cat } else { "a" };
            let name = if i % 11 < 2 {
                ["n", "m"][i % 13 % 2]
            } else {
                "n"
            };
            let field = if id.starts_with('{') { "id2" } else { "id" };
            text.push_str(&format!(
                r#"{{"ph":"{ph}","cat":"{cat}","{field}":{id},"pid":{},"tid":1,"ts":{i},"name":"{name}"}},"#,
                1 + i % 2
            ));
        }
        text.push_str(r#"{"ph":"X","pid":1,"tid":1,"ts":0,"dur":1,"name":"x"}]"#);
        let split = super::super::Split {
            threads: 1,
            min_bytes: usize::MAX,
        };
        let (recs, extras, ..) =
            super::super::events::read_doc("t", text.as_bytes(), split).expect("the trace parses");
        let ks: Vec<u32> = (0..recs.len() as u32)
            .filter(|&k| recs[k as usize].has_id())
            .collect();
        let hashes: Vec<u64> = ks
            .iter()
            .map(|&k| async_hash(&recs[k as usize], &extras))
            .collect();
        let exact = |threads| {
            let key_of = |i: u32| async_key(&recs[ks[i as usize] as usize], &extras);
            group_by_hash(&hashes, threads, |f, i| key_of(f) == key_of(i))
        };
        let want = exact(1);
        assert!(want.1.len() >= 20, "{} groups", want.1.len());
        assert_eq!(exact(3), want);
        let zero = vec![0u64; hashes.len()];
        // Every second group's hash given to the group after it.
        let paired: Vec<u64> = ks
            .iter()
            .enumerate()
            .map(|(i, _)| {
                let g = want.0[i];
                hashes[want.1[(g | 1).min(want.1.len() as u32 - 1) as usize] as usize]
            })
            .collect();
        for (what, hs) in [("real", &hashes), ("all equal", &zero), ("paired", &paired)] {
            for threads in [1, 2, 5] {
                let got = match_async(&recs, &extras, &ks, hs, threads);
                assert_eq!(got, want, "{what} hashes, {threads} threads");
            }
        }
        // Hashes alone would have merged groups.
        assert_ne!(group_by_hash(&zero, 1, |_, _| true), want);
    }
}
