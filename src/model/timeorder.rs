//! Samples in time order: btrace's conversion of a thread's stack samples into spans.
//!
//! Per thread, each sample's stack is compared with the previous one from the root: the
//! frames that differ end at this sample's time, the new ones start there, and identical
//! consecutive stacks extend the same spans (btrace 3.0, "Trace 生成"). Three rules on top:
//! - **gaps:** a sample further than `max_gap` from the previous one (by default
//!   [`GAP_INTERVALS`] median sampling intervals) ends every open span one interval after
//!   the previous sample, so a thread that slept is not drawn as running;
//! - **markers:** where the input gives a message id per sample, a change of id ends every
//!   open span even when the stacks are identical (two executions of the same code);
//! - **uncertainty:** a span's true start and end are known only to within one sampling
//!   interval; [`SpanSampling`] keeps the interval and each span's sample count (and CPU
//!   time) so the timeline can fade the ends and say "≈ 12.3 ms (± 1 ms), 13 samples".
//!
//! Sample counts and counter sums per span cost O(1) each: the running sums at a span's
//! start are kept beside it and subtracted at its end. Nothing recurses; a stack a
//! million frames deep is a loop.

use super::samples::{CounterKind, EMPTY_STACK, Samples, StackId};
use super::spans::{SpanSet, Track, TrackInfo, TrackKind};
use super::{NO_PARENT, Names};

/// The default gap rule: a sample more than this many median intervals after the previous
/// one starts afresh.
pub const GAP_INTERVALS: u64 = 4;

/// How to convert.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ConvertOptions {
    /// The event whose samples become spans.
    pub event: u32,
    /// A sample further than this (nanoseconds) from the previous one ends every open
    /// span; `None`: [`GAP_INTERVALS`] times the median interval.
    pub max_gap_ns: Option<u64>,
}

/// What sampling says about the spans it made.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SpanSampling {
    /// Spans before this index came from the file itself (a Chrome trace's events).
    pub first_span: u32,
    /// Per sampled span (index − `first_span`): samples inside it.
    pub samples: Vec<u32>,
    /// Per counter the event's samples carry (CPU time, allocations, faults, context
    /// switches): per sampled span, the sum over its samples.
    pub counters: Vec<(CounterKind, Vec<u64>)>,
    /// The median sampling interval: how uncertain each end is (0 for exact spans).
    pub interval_ns: u64,
    /// The gap that ended spans.
    pub max_gap_ns: u64,
    /// The spans are exact (evented input): no uncertainty.
    pub exact: bool,
    /// `(track, stream)` for each track made from a stream.
    pub tracks: Vec<(u32, u32)>,
}

impl SpanSampling {
    /// Sample count of span `i`, when it was made from samples.
    pub fn samples_of(&self, i: usize) -> Option<u32> {
        i.checked_sub(self.first_span as usize)
            .and_then(|k| self.samples.get(k).copied())
    }

    /// CPU time of span `i`, when known.
    pub fn cpu_of(&self, i: usize) -> Option<u64> {
        self.counter_of(i, CounterKind::CpuNs)
    }

    /// The sum of counter `kind` over span `i`'s samples, when the samples carry it.
    pub fn counter_of(&self, i: usize, kind: CounterKind) -> Option<u64> {
        let k = i.checked_sub(self.first_span as usize)?;
        self.counters
            .iter()
            .find(|(c, _)| *c == kind)
            .and_then(|(_, v)| v.get(k).copied())
    }

    /// Every counter's sum over span `i`'s samples.
    pub fn counters_of(&self, i: usize) -> Vec<(CounterKind, u64)> {
        let Some(k) = i.checked_sub(self.first_span as usize) else {
            return Vec::new();
        };
        self.counters
            .iter()
            .filter_map(|(c, v)| v.get(k).map(|&x| (*c, x)))
            .collect()
    }

    /// The stream a track was made from.
    pub fn stream_of_track(&self, track: u32) -> Option<u32> {
        self.tracks
            .iter()
            .find(|&&(t, _)| t == track)
            .map(|&(_, s)| s)
    }
}

/// An open span while converting.
struct Open {
    stack: StackId,
    span: u32,
    /// Running sample count when it opened (its counter sums' start is beside it, in
    /// the open stack's `open_sums`).
    n0: u64,
}

/// The spans of `samples`' event `opts.event` as a set of their own (one track per
/// thread).
pub fn convert(samples: &Samples, opts: ConvertOptions) -> (SpanSet, SpanSampling) {
    let mut set = SpanSet {
        origin_ns: samples.origin_ns,
        ..SpanSet::default()
    };
    let sampling = convert_into(samples, opts, &mut set);
    (set, sampling)
}

/// Appends the spans of `samples`' event `opts.event` to `set`, one new track per thread,
/// on `set`'s clock (both clocks are the format's own; the earlier origin wins).
pub fn convert_into(samples: &Samples, opts: ConvertOptions, set: &mut SpanSet) -> SpanSampling {
    // One clock: shift whichever starts later.
    if set.is_empty() {
        set.origin_ns = samples.origin_ns;
    } else if samples.origin_ns < set.origin_ns {
        let d = set.origin_ns - samples.origin_ns;
        set.start_ns.iter_mut().for_each(|s| *s += d);
        set.origin_ns = samples.origin_ns;
    }
    let shift = samples.origin_ns - set.origin_ns;
    let (interval, max_gap) = gap_rule(samples, opts);
    let mut out = SpanSampling {
        first_span: set.len() as u32,
        interval_ns: interval,
        max_gap_ns: max_gap,
        exact: samples.exact,
        ..SpanSampling::default()
    };
    // The counters the event's samples carry: per span, the sum over its samples.
    let kinds = samples.counters_of(opts.event);
    let nk = kinds.len();
    out.counters = kinds.iter().map(|&k| (k, Vec::new())).collect();
    let mut names: Names = std::mem::take(&mut set.names);
    let mut name_of = vec![u32::MAX; samples.names.len()];
    let mut order: Vec<(usize, &super::samples::Stream)> = samples.streams_of(opts.event).collect();
    order.sort_by_key(|(_, s)| {
        let t = &samples.threads[s.thread as usize];
        (t.pid, t.tid, s.thread)
    });
    let mut fresh: Vec<StackId> = Vec::new();
    for (si, stream) in order {
        let thread = &samples.threads[stream.thread as usize];
        let track = set.tracks.len() as u32;
        set.tracks.push(Track::new(thread.label()));
        if set.track_info.len() + 1 < set.tracks.len() {
            set.track_info
                .resize(set.tracks.len() - 1, TrackInfo::default());
        }
        set.track_info.push(TrackInfo {
            kind: TrackKind::Thread,
            group: thread.process.clone(),
            pid: thread.pid,
            tid: thread.tid,
            sort_index: 0,
        });
        out.tracks.push((track, si as u32));
        let columns: Vec<Option<&[u32]>> = kinds.iter().map(|&k| stream.counter(k)).collect();
        let mut open: Vec<Open> = Vec::new();
        // The running counter sums when each open span opened, `nk` per open span.
        let mut open_sums: Vec<u64> = Vec::new();
        let mut count = 0u64;
        let mut sums = vec![0u64; nk];
        let close_to = |open: &mut Vec<Open>,
                        open_sums: &mut Vec<u64>,
                        keep: usize,
                        end: u64,
                        count: u64,
                        sums: &[u64],
                        set: &mut SpanSet,
                        out: &mut SpanSampling| {
            while open.len() > keep {
                let o = open.pop().expect("longer than keep");
                let i = o.span as usize;
                set.dur_ns[i] = (end + shift).saturating_sub(set.start_ns[i]);
                let k = i - out.first_span as usize;
                out.samples[k] = (count - o.n0) as u32;
                let from = open_sums.len() - nk;
                for (c, (_, v)) in out.counters.iter_mut().enumerate() {
                    v[k] = sums[c] - open_sums[from + c];
                }
                open_sums.truncate(from);
            }
        };
        let n = stream.len();
        for i in 0..n {
            let t = stream.time[i];
            match cut(stream, i, max_gap) {
                Cut::Gap => {
                    let prev = stream.time[i - 1];
                    let end = prev + sample_len(samples, stream, i - 1, interval);
                    close_to(
                        &mut open,
                        &mut open_sums,
                        0,
                        end.min(t),
                        count,
                        &sums,
                        set,
                        &mut out,
                    );
                }
                Cut::Marker => {
                    close_to(&mut open, &mut open_sums, 0, t, count, &sums, set, &mut out);
                }
                Cut::None => {}
            }
            let keep = fresh_frames(
                samples,
                stream.stack[i],
                |d| open.get(d).map(|o| o.stack),
                &mut fresh,
            );
            close_to(
                &mut open,
                &mut open_sums,
                keep,
                t,
                count,
                &sums,
                set,
                &mut out,
            );
            for &f in fresh.iter().rev() {
                let frame = samples.stacks.frame(f);
                let nm = &mut name_of[frame as usize];
                if *nm == u32::MAX {
                    *nm = names.intern(samples.names.get(frame));
                }
                let span = set.start_ns.len() as u32;
                set.start_ns.push(t + shift);
                set.dur_ns.push(0);
                set.parent.push(open.last().map_or(NO_PARENT, |o| o.span));
                set.name.push(*nm);
                set.track.push(track);
                out.samples.push(0);
                for (_, v) in out.counters.iter_mut() {
                    v.push(0);
                }
                open.push(Open {
                    stack: f,
                    span,
                    n0: count,
                });
                open_sums.extend_from_slice(&sums);
            }
            count += 1;
            for (c, col) in columns.iter().enumerate() {
                if let Some(col) = col {
                    sums[c] += u64::from(col[i]);
                }
            }
        }
        if let Some(&last) = stream.time.last() {
            let end = last + sample_len(samples, stream, n - 1, interval);
            close_to(
                &mut open,
                &mut open_sums,
                0,
                end,
                count,
                &sums,
                set,
                &mut out,
            );
        }
    }
    if !set.category.is_empty() {
        set.category.resize(set.len(), 0);
    }
    set.names = names;
    out
}

/// The median sampling interval (0 for exact input) and the gap that ends every span.
fn gap_rule(samples: &Samples, opts: ConvertOptions) -> (u64, u64) {
    let interval = if samples.exact {
        0
    } else {
        samples.median_interval(opts.event)
    };
    let max_gap = opts
        .max_gap_ns
        .unwrap_or(interval.saturating_mul(GAP_INTERVALS));
    (interval, max_gap)
}

/// What ends every open span before sample `i` of a stream.
enum Cut {
    None,
    /// More than the gap since the previous sample.
    Gap,
    /// Another message id than the previous sample's.
    Marker,
}

fn cut(stream: &super::samples::Stream, i: usize, max_gap: u64) -> Cut {
    if i == 0 {
        return Cut::None;
    }
    if max_gap > 0 && stream.time[i] - stream.time[i - 1] > max_gap {
        Cut::Gap
    } else if stream.marker.as_ref().is_some_and(|m| m[i] != m[i - 1]) {
        Cut::Marker
    } else {
        Cut::None
    }
}

/// The frames of stack `st` that are not open (`open_at(depth)`: the stack open at that
/// depth), leaf first into `fresh`; returns how many open frames stay open.
fn fresh_frames(
    samples: &Samples,
    st: StackId,
    open_at: impl Fn(usize) -> Option<StackId>,
    fresh: &mut Vec<StackId>,
) -> usize {
    let skip = u32::from(samples.thread_root_frames);
    fresh.clear();
    let mut s = st;
    while s != EMPTY_STACK && samples.stacks.depth(s) > skip {
        let d = (samples.stacks.depth(s) - 1 - skip) as usize;
        if open_at(d) == Some(s) {
            break;
        }
        fresh.push(s);
        s = samples.stacks.parent(s);
    }
    if s == EMPTY_STACK || samples.stacks.depth(s) <= skip {
        0
    } else {
        (samples.stacks.depth(s) - skip) as usize
    }
}

/// How many spans [`convert`] would make, without making them: the same walk over the
/// stacks, keeping only the open stacks. A time order's memory is about this many times
/// [`BYTES_PER_SPAN`], so a caller can refuse one that would not fit.
pub fn span_count(samples: &Samples, opts: ConvertOptions) -> u64 {
    let (_, max_gap) = gap_rule(samples, opts);
    let (mut open, mut fresh): (Vec<StackId>, Vec<StackId>) = (Vec::new(), Vec::new());
    let mut n = 0u64;
    for (_, stream) in samples.streams_of(opts.event) {
        open.clear();
        for i in 0..stream.len() {
            if !matches!(cut(stream, i, max_gap), Cut::None) {
                open.clear();
            }
            let keep = fresh_frames(
                samples,
                stream.stack[i],
                |d| open.get(d).copied(),
                &mut fresh,
            );
            open.truncate(keep);
            open.extend(fresh.iter().rev());
            n += fresh.len() as u64;
        }
    }
    n
}

/// Memory a span of a time order takes from conversion to the window, rounded up: the
/// span set's columns and sample counts (~40 B), the tree (16 B), the layout (28 B) and
/// its level-of-detail tiers, measured at 82–94 B resident a span on 25–29 M spans of
/// Firefox profiles, plus the 21 B a span uploaded (which a software renderer holds in
/// memory too).
pub const BYTES_PER_SPAN: u64 = 128;

/// How long sample `i` of `stream` lasts when no later sample ends it: its weight for
/// exact or untimed inputs (the weight is the time), else one sampling interval.
fn sample_len(samples: &Samples, stream: &super::samples::Stream, i: usize, interval: u64) -> u64 {
    if samples.exact || !samples.timed {
        stream.weight.get(i)
    } else {
        interval.max(1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::samples::ThreadInfo;
    use crate::model::{SourceFormat, ValueFormat};

    fn stack(s: &mut Samples, frames: &str) -> StackId {
        let ids: Vec<_> = frames
            .split(';')
            .filter(|f| !f.is_empty())
            .map(|f| s.intern(f))
            .collect();
        s.stacks.path(ids)
    }

    /// Samples of one thread, 1 ms apart, with optional markers.
    fn thread(stacks: &[&str], markers: Option<&[u32]>) -> Samples {
        let mut s = Samples::new("t", SourceFormat::Speedscope);
        let t = s.add_thread(ThreadInfo {
            name: "main".into(),
            ..Default::default()
        });
        let e = s.event("cpu", ValueFormat::default());
        let st = s.stream(t, e);
        for (i, f) in stacks.iter().enumerate() {
            let id = stack(&mut s, f);
            s.push(st, i as u64 * 1_000_000, id, 1);
            if let Some(m) = markers {
                s.set_marker(st, m[i]);
            }
        }
        s.finish()
    }

    /// `name start+dur (samples)` per span, in span order, times in ms.
    fn spans(s: &Samples) -> Vec<String> {
        let (set, sm) = convert(s, ConvertOptions::default());
        // Counting without converting gives the same number (gaps, markers, root frames).
        assert_eq!(span_count(s, ConvertOptions::default()), set.len() as u64);
        (0..set.len())
            .map(|i| {
                format!(
                    "{} {}+{} ({})",
                    set.names.get(set.name[i]),
                    set.start_ns[i] / 1_000_000,
                    set.dur_ns[i] / 1_000_000,
                    sm.samples[i]
                )
            })
            .collect()
    }

    #[test]
    fn the_seeds_case_a_b_c_twice_then_a_e_c() {
        let s = thread(&["A;B;C", "A;B;C", "A;E;C"], None);
        assert_eq!(
            spans(&s),
            [
                "A 0+3 (3)",
                "B 0+2 (2)",
                "C 0+2 (2)",
                "E 2+1 (1)",
                "C 2+1 (1)"
            ]
        );
        let (set, _) = convert(&s, ConvertOptions::default());
        assert_eq!(set.parent, [NO_PARENT, 0, 1, 0, 3]);
    }

    #[test]
    fn a_message_id_splits_identical_stacks() {
        let s = thread(&["A;B", "A;B", "A;B"], Some(&[1, 1, 2]));
        assert_eq!(
            spans(&s),
            ["A 0+2 (2)", "B 0+2 (2)", "A 2+1 (1)", "B 2+1 (1)"]
        );
    }

    #[test]
    fn a_gap_ends_every_span_one_interval_after_the_last_sample() {
        let mut s = Samples::new("t", SourceFormat::Speedscope);
        let t = s.add_thread(ThreadInfo::default());
        let e = s.event("cpu", ValueFormat::default());
        let st = s.stream(t, e);
        let ab = stack(&mut s, "A;B");
        for ms in [0, 1, 2, 3, 50, 51] {
            s.push(st, ms * 1_000_000, ab, 1);
        }
        let s = s.finish();
        assert_eq!(
            spans(&s),
            ["A 0+4 (4)", "B 0+4 (4)", "A 50+2 (2)", "B 50+2 (2)"]
        );
        // Told that 100 ms is no gap, the thread runs on.
        let (set, _) = convert(
            &s,
            ConvertOptions {
                event: 0,
                max_gap_ns: Some(100_000_000),
            },
        );
        assert_eq!(set.len(), 2);
        assert_eq!(set.dur_ns[0], 52_000_000);
    }

    #[test]
    fn thread_root_frames_are_left_out_and_empty_stacks_close_everything() {
        let mut s = thread(&["java;A;B", "", "java;A"], None);
        s.thread_root_frames = true;
        assert_eq!(spans(&s), ["A 0+1 (1)", "B 0+1 (1)", "A 2+1 (1)"]);
    }

    /// A small deterministic generator (xorshift), so the random tests need no crate.
    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }
    }

    #[test]
    fn random_streams_aggregate_back_exactly_and_nest() {
        for seed in 1..40u64 {
            let mut r = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15));
            let mut s = Samples::new("t", SourceFormat::Speedscope);
            let e = s.event("cpu", ValueFormat::default());
            for th in 0..3 {
                let t = s.add_thread(ThreadInfo {
                    name: format!("t{th}"),
                    tid: Some(th),
                    ..Default::default()
                });
                let st = s.stream(t, e);
                let mut time = 0u64;
                let mut cur: Vec<u32> = Vec::new();
                for _ in 0..(50 + r.next() % 300) {
                    // Random walk of the stack: pop some, push some.
                    let pop = (r.next() % 3) as usize;
                    cur.truncate(cur.len().saturating_sub(pop));
                    for _ in 0..r.next() % 3 {
                        cur.push((r.next() % 4) as u32);
                    }
                    let frames: Vec<_> = cur.iter().map(|f| s.intern(&format!("f{f}"))).collect();
                    let id = s.stacks.path(frames);
                    time += 1 + r.next() % 3 + if r.next().is_multiple_of(20) { 40 } else { 0 };
                    s.push(st, time, id, 1);
                }
            }
            let s = s.finish();
            let (set, sm) = convert(&s, ConvertOptions::default());
            assert_eq!(span_count(&s, ConvertOptions::default()), set.len() as u64);
            // Spans aggregated back by path (self samples = samples − children's) equal
            // the call tree of the samples.
            let mut self_n: Vec<i64> = sm.samples.iter().map(|&n| i64::from(n)).collect();
            for i in 0..set.len() {
                if set.parent[i] != NO_PARENT {
                    self_n[set.parent[i] as usize] -= i64::from(sm.samples[i]);
                }
            }
            let mut by_path = std::collections::BTreeMap::<String, i64>::new();
            for (i, &own) in self_n.iter().enumerate() {
                let mut path = vec![set.names.get(set.name[i]).to_string()];
                let mut p = set.parent[i];
                while p != NO_PARENT {
                    path.push(set.names.get(set.name[p as usize]).to_string());
                    p = set.parent[p as usize];
                }
                path.push(s.threads[set.track[i] as usize].label());
                path.reverse();
                assert!(own >= 0, "seed {seed}");
                if own > 0 {
                    *by_path.entry(path.join(";")).or_default() += own;
                }
            }
            let tree = s.aggregate(Default::default()).unwrap();
            let mut want = std::collections::BTreeMap::<String, i64>::new();
            for line in tree.folded_lines() {
                let (p, n) = line.rsplit_once(' ').unwrap();
                if p.contains(';') {
                    want.insert(p.to_string(), n.parse().unwrap());
                }
            }
            assert_eq!(by_path, want, "seed {seed}");
            // Children lie inside their parent; spans of one row of a track never overlap.
            let mut rows = std::collections::BTreeMap::<(u32, u32), Vec<(u64, u64)>>::new();
            for i in 0..set.len() {
                let (a, b) = (set.start_ns[i], set.end_ns(i));
                assert!(b > a, "seed {seed}: empty span");
                let mut depth = 0;
                let p = set.parent[i];
                if p != NO_PARENT {
                    let p = p as usize;
                    assert!(set.start_ns[p] <= a && b <= set.end_ns(p), "seed {seed}");
                }
                let mut q = p;
                while q != NO_PARENT {
                    depth += 1;
                    q = set.parent[q as usize];
                }
                rows.entry((set.track[i], depth)).or_default().push((a, b));
            }
            for v in rows.values_mut() {
                v.sort();
                assert!(v.windows(2).all(|w| w[0].1 <= w[1].0), "seed {seed}");
            }
        }
    }

    #[test]
    fn a_million_deep_stack_converts_without_recursion() {
        let mut s = Samples::new("t", SourceFormat::Speedscope);
        let t = s.add_thread(ThreadInfo::default());
        let e = s.event("cpu", ValueFormat::default());
        let f = s.intern("f");
        let deep = s.stacks.path(std::iter::repeat_n(f, 1_000_000));
        let st = s.stream(t, e);
        s.push(st, 0, deep, 1);
        s.push(st, 10, s.stacks.parent(deep), 1);
        let s = s.finish();
        let (set, sm) = convert(&s, ConvertOptions::default());
        assert_eq!(set.len(), 1_000_000);
        assert_eq!(sm.samples[999_999], 1);
        assert_eq!(sm.samples[0], 2);
    }
}
