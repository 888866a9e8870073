//! Span timelines: rows for spans with start times, following the TiDB Dashboard's depth
//! rule (itself Datadog's), made overlap-free.
//!
//! The rule (see `../shared/seeds/001_*`): siblings are placed right to left (latest start
//! first). The rightmost sits one row under its parent. A sibling that overlaps its right
//! neighbour in time (comparing its *latest end over its whole subtree* with the
//! neighbour's start, or starting at the same time) goes one row under a leaf neighbour,
//! or two rows under the deepest descendant of a neighbour with children (the empty row
//! separates the two families); otherwise it sits one row under the parent. A span pushed
//! down more than one row below its parent gets a thin connector line back to it.
//!
//! The seed compares only with the adjacent right sibling, which lets a long span collide
//! with a sibling further right that was itself pushed down (A long, B short, C pushed
//! under D: A lands on C's row). Here a span goes below *every* right sibling it overlaps,
//! using a prefix-maximum (Fenwick) tree over the siblings already placed, which is the
//! seed's result whenever only the neighbour overlaps, and makes rows overlap-free by
//! induction: a parent's subtree stays within its own rows and time extent.
//!
//! Everything is iterative (explicit frames), so a million nested spans are fine.

use super::lanes::Lanes;
use super::{Layout, Row};
use crate::model::NO_PARENT;
use crate::model::spans::{SpanSet, SpanTree};

/// A thin vertical line from a span up to its parent, drawn where the span was pushed
/// down by an overlapping sibling.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Connector {
    /// The pushed-down span.
    pub span: u32,
    /// The parent's row.
    pub from_row: u32,
    /// The span's row.
    pub to_row: u32,
    /// Where the line stands: the span's start (relative ns).
    pub at_ns: u64,
}

/// Spans placed in rows.
#[derive(Clone, Debug, Default)]
pub struct TimelineLayout {
    /// Row of each span.
    pub depth: Vec<u32>,
    /// Rows of spans sorted by start; `node` is the span index, and an instant (zero
    /// duration) span is one nanosecond wide so it can be found and drawn.
    pub rows: Vec<Row>,
    /// Connector lines.
    pub connectors: Vec<Connector>,
}

/// Prefix maximum over positions, for "deepest requirement among the right siblings this
/// span overlaps" (positions not yet placed hold 0).
struct PrefixMax(Vec<u32>);

impl PrefixMax {
    /// Over `n` positions, reusing a vector from `pool` (a leaf's children need none).
    fn reuse(n: usize, pool: &mut Vec<Vec<u32>>) -> Self {
        if n == 0 {
            return PrefixMax(Vec::new());
        }
        let mut v = pool.pop().unwrap_or_default();
        v.clear();
        v.resize(n + 1, 0);
        PrefixMax(v)
    }
    fn set(&mut self, pos: usize, v: u32) {
        let mut i = pos + 1;
        while i < self.0.len() {
            self.0[i] = self.0[i].max(v);
            i += i & i.wrapping_neg();
        }
    }
    fn max_upto(&self, pos: usize) -> u32 {
        let mut i = pos + 1;
        let mut m = 0;
        while i > 0 {
            m = m.max(self.0[i]);
            i -= i & i.wrapping_neg();
        }
        m
    }
}

struct Frame<'a> {
    kids: &'a [u32],
    /// Row of the first child: parent's row + 1 (0 for roots).
    base: u32,
    /// Next child to place, counting down (`kids.len()` when none placed yet).
    next: usize,
    /// Requirements of placed children: the row just below them (+1 more with children).
    need: PrefixMax,
    /// Deepest row seen in this group.
    deepest: u32,
    /// The span whose children these are (`NO_PARENT` for the roots).
    owner: u32,
}

/// How spans are grouped into bands (tracks drawn one under another, each with a header).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum BandMode {
    /// One band per track (Chrome thread, service, TiDB node type). A link from a span to
    /// a parent on another track is cut for the layout: the span starts its own tree in
    /// its track's band (Perfetto's view).
    #[default]
    PerTrack,
    /// All spans in one band as one tree (the TiDB Dashboard's and Jaeger's view), colored
    /// by track.
    OneTree,
}

/// A band: a track's rows.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Band {
    /// Header text.
    pub name: String,
    /// The track shown (`None` for [`BandMode::OneTree`]).
    pub track: Option<u32>,
    /// First row of the band in [`TrackLayout::layout`].
    pub first_row: u32,
    /// Number of rows.
    pub rows: u32,
    /// Number of spans.
    pub spans: u64,
}

/// Spans placed in rows, band after band.
#[derive(Clone, Debug, Default)]
pub struct TrackLayout {
    /// All rows; `node` is the span index, `total_ticks` the end of the trace (ns after
    /// its start). Zero-duration spans are one nanosecond wide.
    pub layout: Layout,
    /// Row of each span in `layout`.
    pub row_of: Vec<u32>,
    /// The bands, in display order.
    pub bands: Vec<Band>,
    /// Connector lines (rows of `layout`).
    pub connectors: Vec<Connector>,
    /// Parent of each span as laid out (links across bands, and to a parent that starts
    /// later, cut), only when that differs from the span set's own parents; empty otherwise
    /// (Chrome traces never link across threads, so they keep no copy). Read with
    /// [`TrackLayout::parents`].
    pub parent: Vec<u32>,
}

impl TrackLayout {
    /// Parents as laid out; `set` is the one laid out.
    pub fn parents<'a>(&'a self, set: &'a SpanSet) -> &'a [u32] {
        if self.parent.is_empty() {
            &set.parent
        } else {
            &self.parent
        }
    }

    /// Parent of span `i` as laid out.
    pub fn parent_of(&self, set: &SpanSet, i: usize) -> u32 {
        self.parents(set)[i]
    }

    /// Heap bytes held, for memory reports.
    pub fn heap_bytes(&self) -> usize {
        self.layout.heap_bytes()
            + self.row_of.capacity() * 4
            + self
                .bands
                .iter()
                .map(|b| b.name.capacity() + std::mem::size_of::<Band>())
                .sum::<usize>()
            + self.connectors.capacity() * std::mem::size_of::<Connector>()
            + self.parent.capacity() * 4
    }

    /// The band holding `row`.
    pub fn band_of_row(&self, row: usize) -> Option<usize> {
        let i = self
            .bands
            .partition_point(|b| (b.first_row as usize) <= row)
            .checked_sub(1)?;
        let b = &self.bands[i];
        (row < (b.first_row + b.rows) as usize).then_some(i)
    }
}

/// Resident CPU bytes of a loaded trace, by part, for `scorch info` and benchmarks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TraceMemory {
    /// Span columns, names, categories and tracks.
    pub spans: usize,
    /// Span attributes.
    pub attrs: usize,
    /// The linked tree (children, roots, subtree ends, cycle fixes).
    pub tree: usize,
    /// The track layout: rows, row of each span, bands, connectors, cut parents.
    pub layout: usize,
    /// Of `layout`, the rows' bars (24 bytes each: x0, x1, name, node).
    pub rows: usize,
    /// Level-of-detail tiers.
    pub lod: usize,
}

impl TraceMemory {
    /// Measures `set`, `tree` and `layout`, with the LOD's bytes as given.
    pub fn of(set: &SpanSet, tree: &SpanTree, layout: &TrackLayout, lod: usize) -> TraceMemory {
        TraceMemory {
            spans: set.heap_bytes(),
            attrs: set.attrs.heap_bytes(),
            tree: tree.heap_bytes(),
            layout: layout.heap_bytes(),
            rows: layout.layout.heap_bytes(),
            lod,
        }
    }

    /// All parts together.
    pub fn total(&self) -> usize {
        self.spans + self.attrs + self.tree + self.layout + self.lod
    }
}

/// Places `set`'s spans (linked by `tree`) in rows (one band, as one tree).
pub fn timeline_layout(set: &SpanSet, tree: &SpanTree) -> TimelineLayout {
    let t = track_layout(set, tree, BandMode::OneTree);
    TimelineLayout {
        depth: t.row_of,
        rows: t.layout.rows,
        connectors: t.connectors,
    }
}

/// What placing subtrees reuses: the frame stack and the frames' prefix-max vectors.
#[derive(Default)]
struct Scratch<'a> {
    stack: Vec<Frame<'a>>,
    pool: Vec<Vec<u32>>,
}

/// Places `root`'s subtree with the seed's rule, `root` at relative row 0; returns the
/// number of rows it uses. `depth` and `max_child_depth` hold spans `first..` (the
/// subtree's spans all lie there).
fn place_subtree<'a>(
    set: &SpanSet,
    tree: &'a SpanTree,
    root: &'a u32,
    first: usize,
    depth: &mut [u32],
    max_child_depth: &mut [u32],
    scratch: &mut Scratch<'a>,
) -> u32 {
    let begin = |i: u32| set.start_ns[i as usize];
    if tree.children(*root).is_empty() {
        // A lone span: row 0 and nothing below.
        let r = *root as usize - first;
        (depth[r], max_child_depth[r]) = (0, 0);
        return 1;
    }
    let Scratch { stack, pool } = scratch;
    stack.push(Frame {
        kids: std::slice::from_ref(root),
        base: 0,
        next: 1,
        need: PrefixMax::reuse(1, pool),
        deepest: 0,
        owner: NO_PARENT,
    });
    let mut height = 1;
    while let Some(top) = stack.last_mut() {
        if top.next == 0 {
            // All children placed: finish the owner's subtree depth.
            let done = stack.pop().expect("non-empty");
            if done.need.0.capacity() > 0 {
                pool.push(done.need.0);
            }
            if done.owner == NO_PARENT {
                height = done.deepest + 1;
                continue;
            }
            let o = done.owner as usize - first;
            let deepest = if done.kids.is_empty() {
                depth[o]
            } else {
                done.deepest
            };
            max_child_depth[o] = deepest.max(depth[o]);
            if let Some(parent) = stack.last_mut() {
                let pos = parent.next;
                let leaf = max_child_depth[o] == depth[o];
                parent
                    .need
                    .set(pos, max_child_depth[o] + if leaf { 1 } else { 2 });
                parent.deepest = parent.deepest.max(max_child_depth[o]);
            }
            continue;
        }
        top.next -= 1;
        let i = top.next;
        let cur = top.kids[i];
        let c = cur as usize - first;
        // Right siblings this span (with its descendants) overlaps in time.
        let reach = tree.max_end_ns[cur as usize].max(begin(cur) + 1);
        let m = top.kids.partition_point(|&k| begin(k) < reach);
        let required = if m > i + 1 {
            top.need.max_upto(m - 1)
        } else {
            0
        };
        depth[c] = top.base.max(required);
        top.deepest = top.deepest.max(depth[c]);
        let kids = tree.children(cur);
        if kids.is_empty() {
            // A leaf is its own subtree: what finishing its (empty) group would record.
            max_child_depth[c] = depth[c];
            top.need.set(i, depth[c] + 1);
            continue;
        }
        stack.push(Frame {
            kids,
            base: depth[c] + 1,
            next: kids.len(),
            need: PrefixMax::reuse(kids.len(), pool),
            deepest: depth[c] + 1,
            owner: cur,
        });
    }
    height
}

/// Layouts with fewer spans than this are placed on one thread.
const PARALLEL_MIN_SPANS: usize = 1 << 16;

/// Places `set`'s spans in bands of rows (see [`BandMode`]): within a tree the seed's
/// rule, the trees of a band packed into lanes, the bands one after another. Bands are
/// placed on all cores when the spans are many and each track's spans are contiguous.
pub fn track_layout(set: &SpanSet, tree: &SpanTree, mode: BandMode) -> TrackLayout {
    let threads = if set.len() >= PARALLEL_MIN_SPANS {
        crate::par::cores()
    } else {
        1
    };
    track_layout_with_threads(set, tree, mode, threads)
}

/// [`track_layout`] on up to `threads` threads (the result does not depend on how many).
pub fn track_layout_with_threads(
    set: &SpanSet,
    tree: &SpanTree,
    mode: BandMode,
    threads: usize,
) -> TrackLayout {
    let n = set.len();
    let band_count = match mode {
        BandMode::PerTrack => set.tracks.len().max(1),
        BandMode::OneTree => 1,
    };
    let band_of = |i: usize| -> usize {
        match mode {
            BandMode::PerTrack => (set.track[i] as usize).min(band_count - 1),
            BandMode::OneTree => 0,
        }
    };
    // Cut the links that cross bands (per track), and those of a span that starts before
    // its parent (clock skew, or a broken file): placing a subtree from its root's start
    // would put such a span over another tree's. Only when there are any: a second tree
    // costs as much as the first.
    let cut;
    let tree_parent = tree.parents(set);
    let crosses = |i: usize| {
        let p = tree_parent[i];
        p != NO_PARENT
            && (band_of(p as usize) != band_of(i) || set.start_ns[i] < set.start_ns[p as usize])
    };
    let two = threads > 1 && crate::par::two_threads_for(n);
    let any_crosses = if two {
        let (a, b) = crate::par::both(|| (0..n / 2).any(crosses), || (n / 2..n).any(crosses));
        a || b
    } else {
        (0..n).any(crosses)
    };
    let t: &SpanTree = if any_crosses {
        let parent = (0..n)
            .map(|i| {
                if crosses(i) {
                    NO_PARENT
                } else {
                    tree_parent[i]
                }
            })
            .collect();
        cut = SpanTree::build_with_parents(set, parent);
        &cut
    } else {
        tree
    };
    let parent = t.parents(set);

    // Each tree on its own, then its lane in the band.
    let mut depth = vec![0u32; n];
    let mut max_child_depth = vec![0u32; n];
    let mut offset = vec![0u32; n];
    let ranges = if threads > 1 && band_count > 1 {
        band_ranges(n, band_count, band_of)
    } else {
        None
    };
    let lanes = match ranges {
        Some(ranges) => place_bands_in_parallel(
            set,
            t,
            &ranges,
            threads,
            &mut depth,
            &mut max_child_depth,
            &mut offset,
        ),
        None => {
            let mut lanes: Vec<Lanes> = (0..band_count).map(|_| Lanes::new()).collect();
            let mut scratch = Scratch::default();
            for root in &t.roots {
                let r = *root as usize;
                let h = place_subtree(
                    set,
                    t,
                    root,
                    0,
                    &mut depth,
                    &mut max_child_depth,
                    &mut scratch,
                );
                let end = t.max_end_ns[r].max(set.start_ns[r] + 1);
                offset[r] = lanes[band_of(r)].place(set.start_ns[r], end, h);
            }
            lanes
        }
    };
    // Push each tree's offset down to its spans. Where every parent comes before its
    // children (spans in start order, a parent first among equal starts: what the
    // importers give) one forward pass over the parent column does it; otherwise a
    // pre-order walk of the trees.
    if parent
        .iter()
        .enumerate()
        .all(|(i, &p)| p == NO_PARENT || (p as usize) < i)
    {
        for i in 0..n {
            let p = parent[i];
            if p != NO_PARENT {
                offset[i] = offset[p as usize];
            }
        }
    } else {
        let mut walk: Vec<u32> = t.roots.clone();
        while let Some(v) = walk.pop() {
            let kids = t.children(v);
            for &k in kids {
                offset[k as usize] = offset[v as usize];
            }
            walk.extend_from_slice(kids);
        }
    }
    drop(max_child_depth);

    let mut bands = Vec::with_capacity(band_count);
    let mut first = 0u32;
    for (b, lane) in lanes.iter().enumerate() {
        let (name, track) = match mode {
            BandMode::OneTree => ("all spans".to_string(), None),
            BandMode::PerTrack => (set.track_label(b as u32), Some(b as u32)),
        };
        bands.push(Band {
            name,
            track,
            first_row: first,
            rows: lane.rows(),
            spans: 0,
        });
        first += lane.rows();
    }
    let mut row_of = depth;
    // Each span's row, and each band's span count (halves on two threads).
    let first_rows: Vec<u32> = bands.iter().map(|b| b.first_row).collect();
    let place = |from: usize, rows: &mut [u32]| -> Vec<u64> {
        let mut spans = vec![0u64; band_count];
        for (k, r) in rows.iter_mut().enumerate() {
            let i = from + k;
            let b = band_of(i);
            *r += offset[i] + first_rows[b];
            spans[b] += 1;
        }
        spans
    };
    let counts = if two {
        let (lo, hi) = row_of.split_at_mut(n / 2);
        let (a, b) = crate::par::both(|| place(0, lo), || place(n / 2, hi));
        a.iter().zip(&b).map(|(x, y)| x + y).collect()
    } else {
        place(0, &mut row_of)
    };
    for (band, c) in bands.iter_mut().zip(counts) {
        band.spans = c;
    }

    let rows = rows_by_start(set, &row_of, first as usize, threads);

    let connectors_in = |spans: std::ops::Range<usize>| -> Vec<Connector> {
        spans
            .filter_map(|i| {
                let p = parent[i];
                (p != NO_PARENT && row_of[i] > row_of[p as usize] + 1).then(|| Connector {
                    span: i as u32,
                    from_row: row_of[p as usize],
                    to_row: row_of[i],
                    at_ns: set.start_ns[i],
                })
            })
            .collect()
    };
    let connectors = if two {
        let (mut a, b) = crate::par::both(|| connectors_in(0..n / 2), || connectors_in(n / 2..n));
        a.extend(b);
        a
    } else {
        connectors_in(0..n)
    };
    let total_ticks = rows
        .iter()
        .filter_map(|r: &Row| r.x1.iter().copied().max())
        .max()
        .unwrap_or(0);
    TrackLayout {
        layout: Layout { rows, total_ticks },
        row_of,
        bands,
        connectors,
        parent: if t.has_set_parents() {
            Vec::new()
        } else {
            parent.to_vec()
        },
    }
}

/// The span ranges of the bands when each band's spans are contiguous and in band order
/// (Chrome traces: spans are emitted track by track); `None` otherwise.
fn band_ranges(
    n: usize,
    band_count: usize,
    band_of: impl Fn(usize) -> usize,
) -> Option<Vec<std::ops::Range<usize>>> {
    // Bands without spans get an empty range where they would be, so that the ranges'
    // ends are sorted.
    let mut ranges = Vec::with_capacity(band_count);
    let mut start = 0;
    for i in 0..n {
        let b = band_of(i);
        if b < ranges.len() {
            return None;
        }
        if b > ranges.len() {
            ranges.push(start..i);
            start = i;
            ranges.resize(b, i..i);
        }
    }
    ranges.push(start..n);
    ranges.resize(band_count, n..n);
    Some(ranges)
}

/// Places the trees of each band (spans `ranges[b]`, trees never crossing bands) and packs
/// them into the band's lanes, bands on up to `threads` threads, largest first. Each band
/// writes only its own spans' entries, and its roots are taken in `tree.roots` order, so
/// the result is the sequential one.
fn place_bands_in_parallel(
    set: &SpanSet,
    tree: &SpanTree,
    ranges: &[std::ops::Range<usize>],
    threads: usize,
    depth: &mut [u32],
    max_child_depth: &mut [u32],
    offset: &mut [u32],
) -> Vec<Lanes> {
    let band_count = ranges.len();
    let mut roots: Vec<Vec<u32>> = vec![Vec::new(); band_count];
    let band_of = |i: usize| ranges.partition_point(|r| r.end <= i);
    for &r in &tree.roots {
        roots[band_of(r as usize)].push(r);
    }
    // Each band's slices of the per-span vectors.
    type Work<'s> = (usize, &'s mut [u32], &'s mut [u32], &'s mut [u32]);
    let mut work: Vec<std::sync::Mutex<Option<Work<'_>>>> = Vec::with_capacity(band_count);
    let (mut d, mut m, mut o) = (depth, max_child_depth, offset);
    for (b, r) in ranges.iter().enumerate() {
        let len = r.len();
        let (d0, d1) = std::mem::take(&mut d).split_at_mut(len);
        let (m0, m1) = std::mem::take(&mut m).split_at_mut(len);
        let (o0, o1) = std::mem::take(&mut o).split_at_mut(len);
        (d, m, o) = (d1, m1, o1);
        work.push(std::sync::Mutex::new(Some((b, d0, m0, o0))));
    }
    let mut order: Vec<usize> = (0..band_count).collect();
    order.sort_by_key(|&b| std::cmp::Reverse(ranges[b].len()));
    let next = std::sync::atomic::AtomicUsize::new(0);
    let run = || {
        let mut scratch = Scratch::default();
        let mut done = Vec::new();
        while let Some(&b) = order.get(next.fetch_add(1, std::sync::atomic::Ordering::Relaxed)) {
            let taken = work[b].lock().unwrap_or_else(|e| e.into_inner()).take();
            let Some((b, depth, max_child_depth, offset)) = taken else {
                continue;
            };
            let first = ranges[b].start;
            let mut lane = Lanes::new();
            for root in &roots[b] {
                let r = *root as usize;
                let h = place_subtree(set, tree, root, first, depth, max_child_depth, &mut scratch);
                let end = tree.max_end_ns[r].max(set.start_ns[r] + 1);
                offset[r - first] = lane.place(set.start_ns[r], end, h);
            }
            done.push((b, lane));
        }
        done
    };
    let mut lanes: Vec<Lanes> = (0..band_count).map(|_| Lanes::new()).collect();
    std::thread::scope(|s| {
        let others: Vec<_> = (1..threads.min(band_count)).map(|_| s.spawn(run)).collect();
        let mine = run();
        let joined = others.into_iter().map(|h| crate::par::join(h));
        for (b, lane) in joined.chain(std::iter::once(mine)).flatten() {
            lanes[b] = lane;
        }
    });
    lanes
}

/// The spans of each of `rows_n` rows (span `i` on row `row_of[i]`), each row sorted by
/// start, then index. Rows are made at their full length, and the spans read in index
/// order (in two halves on two threads, the first half's spans of each row before the
/// second's), each written at its row's next place: every column is read and written in
/// sequence. (Gathering each row's spans by index read a row's spans a cache line
/// apart.) A row whose spans were not in start order by index is sorted after.
fn rows_by_start(set: &SpanSet, row_of: &[u32], rows_n: usize, threads: usize) -> Vec<Row> {
    let n = row_of.len();
    let two = threads > 1 && crate::par::two_threads_for(n);
    let mid = if two { n / 2 } else { n };
    let count = |spans: &[u32]| {
        let mut c = vec![0usize; rows_n];
        for &r in spans {
            c[r as usize] += 1;
        }
        c
    };
    let (lo, hi) = if two {
        crate::par::both(|| count(&row_of[..mid]), || count(&row_of[mid..]))
    } else {
        (count(row_of), vec![0; rows_n])
    };
    let mut rows: Vec<Row> = lo
        .iter()
        .zip(&hi)
        .map(|(&a, &b)| Row {
            x0: vec![0; a + b],
            x1: vec![0; a + b],
            name: vec![0; a + b],
            node: vec![0; a + b],
        })
        .collect();
    drop(hi);
    let mut first: Vec<RowShare<'_>> = Vec::with_capacity(rows_n);
    let mut second: Vec<RowShare<'_>> = Vec::with_capacity(if two { rows_n } else { 0 });
    for (row, &a) in rows.iter_mut().zip(&lo) {
        let (x0, x0b) = row.x0.split_at_mut(a);
        let (x1, x1b) = row.x1.split_at_mut(a);
        let (name, nameb) = row.name.split_at_mut(a);
        let (node, nodeb) = row.node.split_at_mut(a);
        first.push(RowShare {
            x0,
            x1,
            name,
            node,
            at: 0,
        });
        if two {
            second.push(RowShare {
                x0: x0b,
                x1: x1b,
                name: nameb,
                node: nodeb,
                at: 0,
            });
        }
    }
    let fill = |from: usize, spans: &[u32], shares: &mut [RowShare<'_>]| {
        for (k, &r) in spans.iter().enumerate() {
            let i = from + k;
            let s = &mut shares[r as usize];
            let x0 = set.start_ns[i];
            s.x0[s.at] = x0;
            s.x1[s.at] = set.end_ns(i).max(x0 + 1);
            s.name[s.at] = set.name[i];
            s.node[s.at] = i as u32;
            s.at += 1;
        }
    };
    if two {
        crate::par::both(
            || fill(0, &row_of[..mid], &mut first),
            || fill(mid, &row_of[mid..], &mut second),
        );
    } else {
        fill(0, row_of, &mut first);
    }
    drop((first, second));
    let sort = |rows: &mut [Row]| {
        for row in rows {
            if !row.x0.is_sorted() {
                sort_row(row);
            }
        }
    };
    if two {
        let (a, b) = rows.split_at_mut(rows_n / 2);
        crate::par::both(|| sort(a), || sort(b));
    } else {
        sort(&mut rows);
    }
    rows
}

/// One half's places in a row being filled by [`rows_by_start`].
struct RowShare<'r> {
    x0: &'r mut [u64],
    x1: &'r mut [u64],
    name: &'r mut [crate::model::NameId],
    node: &'r mut [u32],
    at: usize,
}

/// Sorts a row's bars by start, then span index.
fn sort_row(row: &mut Row) {
    let mut order: Vec<u32> = (0..row.len() as u32).collect();
    order.sort_unstable_by_key(|&j| (row.x0[j as usize], row.node[j as usize]));
    let take = |col: &[u64]| order.iter().map(|&j| col[j as usize]).collect::<Vec<u64>>();
    row.x0 = take(&row.x0);
    row.x1 = take(&row.x1);
    row.name = order.iter().map(|&j| row.name[j as usize]).collect();
    row.node = order.iter().map(|&j| row.node[j as usize]).collect();
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Names;
    use crate::model::Warnings;
    use crate::model::spans::{RawSpan, Track};

    fn set(spans: &[(u64, u64, u64, u64, &str)]) -> SpanSet {
        SpanSet::from_ids(
            Names::new(),
            spans
                .iter()
                .map(|&(id, parent, start, dur, name)| RawSpan {
                    id,
                    parent_id: (parent != 0).then_some(parent),
                    start_ns: start,
                    dur_ns: dur,
                    name: name.into(),
                    track: 0,
                })
                .collect(),
            vec![Track { name: "t".into() }],
            Warnings::default(),
        )
    }

    fn depth_of(s: &SpanSet, l: &TimelineLayout, name: &str) -> u32 {
        let i = (0..s.len())
            .find(|&i| s.names.get(s.name[i]) == name)
            .unwrap();
        l.depth[i]
    }

    fn check(s: &SpanSet, t: &SpanTree, l: &TimelineLayout) {
        for (d, row) in l.rows.iter().enumerate() {
            for i in 1..row.len() {
                assert!(
                    row.x0[i] >= row.x1[i - 1],
                    "row {d}: span {} overlaps {}",
                    row.node[i],
                    row.node[i - 1]
                );
            }
        }
        let mut expected = 0;
        for i in 0..s.len() {
            let p = t.parent_of(s, i);
            if p != NO_PARENT {
                assert!(
                    l.depth[i] > l.depth[p as usize],
                    "span {i} not below its parent"
                );
                if l.depth[i] > l.depth[p as usize] + 1 {
                    expected += 1;
                    assert!(l.connectors.iter().any(|c| c.span == i as u32));
                }
            }
        }
        assert_eq!(
            l.connectors.len(),
            expected,
            "connectors exactly where pushed down"
        );
    }

    /// The seed's c1/c2 example: overlapping leaf siblings; c2 (later) is placed first,
    /// c1 goes one row under it, with a connector to p.
    #[test]
    fn seed_c1_c2() {
        let s = set(&[
            (1, 0, 0, 100, "p"),
            (2, 1, 10, 50, "c1"),
            (3, 1, 40, 40, "c2"),
        ]);
        let t = SpanTree::build(&s);
        let l = timeline_layout(&s, &t);
        assert_eq!(depth_of(&s, &l, "p"), 0);
        assert_eq!(depth_of(&s, &l, "c2"), 1);
        assert_eq!(depth_of(&s, &l, "c1"), 2);
        assert_eq!(l.connectors.len(), 1);
        assert_eq!(l.connectors[0].from_row, 0);
        assert_eq!(l.connectors[0].at_ns, 10);
        check(&s, &t, &l);
    }

    /// The seed's b1/b2/c1/d1 example: b1 ends before b2 starts, but its child d1 does
    /// not, so b1 goes under b2's family with an empty row between.
    #[test]
    fn seed_b1_b2_c1_d1() {
        let s = set(&[
            (1, 0, 0, 100, "a"),
            (2, 1, 0, 30, "b1"),
            (3, 2, 10, 40, "d1"),
            (4, 1, 40, 50, "b2"),
            (5, 4, 45, 15, "c1"),
        ]);
        let t = SpanTree::build(&s);
        let l = timeline_layout(&s, &t);
        assert_eq!(depth_of(&s, &l, "b2"), 1);
        assert_eq!(depth_of(&s, &l, "c1"), 2);
        assert_eq!(
            depth_of(&s, &l, "b1"),
            4,
            "two rows under b2's deepest descendant"
        );
        assert_eq!(depth_of(&s, &l, "d1"), 5);
        check(&s, &t, &l);
    }

    #[test]
    fn bands_are_placed_in_parallel_only_when_contiguous() {
        let of = |t: &'static [usize]| move |i: usize| t[i];
        assert_eq!(
            band_ranges(5, 3, of(&[0, 0, 1, 2, 2])),
            Some(vec![0..2, 2..3, 3..5])
        );
        assert_eq!(
            band_ranges(3, 3, of(&[0, 2, 2])),
            Some(vec![0..1, 1..1, 1..3])
        );
        assert_eq!(band_ranges(4, 2, of(&[0, 1, 0, 1])), None);
        assert_eq!(band_ranges(2, 2, of(&[1, 0])), None);
        assert_eq!(band_ranges(2, 3, of(&[1, 1])), Some(vec![0..0, 0..2, 2..2]));
    }

    #[test]
    fn non_overlapping_siblings_share_a_row() {
        let s = set(&[
            (1, 0, 0, 100, "p"),
            (2, 1, 0, 10, "x"),
            (3, 1, 20, 10, "y"),
            (4, 1, 40, 10, "z"),
        ]);
        let t = SpanTree::build(&s);
        let l = timeline_layout(&s, &t);
        assert_eq!(l.rows.len(), 2);
        assert_eq!(l.rows[1].len(), 3);
        assert!(l.connectors.is_empty());
    }

    /// Where the seed's neighbour-only rule would overlap: A spans B, C and D; C was pushed
    /// under D. A must go under C, not merely under B.
    #[test]
    fn a_long_span_goes_under_every_sibling_it_overlaps() {
        let s = set(&[
            (1, 0, 0, 200, "p"),
            (2, 1, 0, 100, "A"),
            (3, 1, 10, 10, "B"),
            (4, 1, 30, 10, "C"),
            (5, 1, 35, 15, "D"),
        ]);
        let t = SpanTree::build(&s);
        let l = timeline_layout(&s, &t);
        assert_eq!(depth_of(&s, &l, "D"), 1);
        assert_eq!(depth_of(&s, &l, "C"), 2);
        assert_eq!(depth_of(&s, &l, "B"), 1);
        assert_eq!(depth_of(&s, &l, "A"), 3);
        check(&s, &t, &l);
    }

    #[test]
    fn random_trees_keep_the_invariants() {
        let mut rng = crate::testing::Lcg::new(0x5eed_u64);
        let mut next = || rng.next_u64();
        for round in 0..60 {
            let n = 2 + next() % 300;
            let mut spans = vec![(1u64, 0u64, 0u64, 10_000u64, "root".to_string())];
            for id in 2..=n {
                let parent = 1 + next() % (id - 1);
                let (_, _, ps, pd, _) = spans[(parent - 1) as usize].clone();
                // Children mostly inside their parent, sometimes spilling out.
                let start = ps + next() % (pd.max(1));
                let dur = next() % (pd / 2 + 5) + if next() % 7 == 0 { pd } else { 0 };
                spans.push((id, parent, start, dur, format!("s{id}")));
            }
            let refs: Vec<(u64, u64, u64, u64, &str)> = spans
                .iter()
                .map(|(a, b, c, d, e)| (*a, *b, *c, *d, e.as_str()))
                .collect();
            let s = set(&refs);
            let t = SpanTree::build(&s);
            let l = timeline_layout(&s, &t);
            check(&s, &t, &l);
            let _ = round;
        }
    }

    #[test]
    fn a_million_nested_spans() {
        let spans: Vec<RawSpan> = (1..=1_000_000u64)
            .map(|i| RawSpan {
                id: i,
                parent_id: (i > 1).then_some(i - 1),
                start_ns: i,
                dur_ns: 3_000_000 - 2 * i,
                name: "f".into(),
                track: 0,
            })
            .collect();
        let s = SpanSet::from_ids(Names::new(), spans, vec![], Warnings::default());
        let t = SpanTree::build(&s);
        let l = timeline_layout(&s, &t);
        assert_eq!(l.rows.len(), 1_000_000);
        assert!(l.connectors.is_empty());
    }

    fn tracked(spans: &[(u64, u64, u64, u64, &str, u32)], tracks: &[&str]) -> SpanSet {
        SpanSet::from_ids(
            Names::new(),
            spans
                .iter()
                .map(|&(id, parent, start, dur, name, track)| RawSpan {
                    id,
                    parent_id: (parent != 0).then_some(parent),
                    start_ns: start,
                    dur_ns: dur,
                    name: name.into(),
                    track,
                })
                .collect(),
            tracks
                .iter()
                .map(|t| Track {
                    name: (*t).to_string(),
                })
                .collect(),
            Warnings::default(),
        )
    }

    fn check_tracks(s: &SpanSet, l: &TrackLayout) {
        for (d, row) in l.layout.rows.iter().enumerate() {
            for i in 1..row.len() {
                assert!(row.x0[i] >= row.x1[i - 1], "row {d} overlaps");
            }
            let b = l.band_of_row(d).expect("every row is in a band");
            for &sp in &row.node {
                assert_eq!(l.row_of[sp as usize], d as u32);
                if let Some(t) = l.bands[b].track {
                    assert_eq!(s.track[sp as usize], t, "span in its track's band");
                }
            }
        }
        for i in 0..s.len() {
            let p = l.parent_of(s, i);
            if p != NO_PARENT {
                assert!(l.row_of[i] > l.row_of[p as usize]);
            }
        }
        let total: u64 = l.bands.iter().map(|b| b.spans).sum();
        assert_eq!(total, s.len() as u64);
    }

    /// Found by fuzzing (a Jaeger trace): a span that starts before its parent was placed
    /// from its root's start, on the row where another tree's span already was at that time.
    #[test]
    fn a_span_that_starts_before_its_parent_overlaps_no_other_tree() {
        let text = br#"[
          {"traceID":"1","spanID":"a","operationName":"a","startTime":1000,"duration":5,
           "process":{"serviceName":"s","tags":[]}},
          {"traceID":"1","spanID":"b","operationName":"b","startTime":10,"duration":5,
           "references":[{"refType":"CHILD_OF","traceID":"1","spanID":"a"}],
           "process":{"serviceName":"s","tags":[]}},
          {"traceID":"1","spanID":"c","operationName":"c","startTime":0,"duration":5,
           "process":{"serviceName":"s","tags":[]}},
          {"traceID":"1","spanID":"d","operationName":"d","startTime":10,"duration":5,
           "references":[{"refType":"CHILD_OF","traceID":"1","spanID":"c"}],
           "process":{"serviceName":"s","tags":[]}}]"#;
        let s = crate::import::jaeger::parse("t.json", text).unwrap();
        let t = SpanTree::build(&s);
        for mode in [BandMode::PerTrack, BandMode::OneTree] {
            let l = track_layout(&s, &t, mode);
            check_tracks(&s, &l);
            crate::lod::Lod::build(&l.layout);
        }
    }

    /// A chain of async spans, each overlapping only the next: lanes, not a staircase.
    #[test]
    fn overlapping_roots_are_packed_into_lanes() {
        let spans: Vec<(u64, u64, u64, u64, &str, u32)> = (0..1000u64)
            .map(|i| (i + 1, 0, i * 10, 15, "async", 0))
            .collect();
        let s = tracked(&spans, &["t"]);
        let t = SpanTree::build(&s);
        let l = track_layout(&s, &t, BandMode::PerTrack);
        assert_eq!(l.layout.rows.len(), 2, "at most two spans are open at once");
        assert_eq!(l.layout.rows[0].len(), 500);
        check_tracks(&s, &l);
        // Lowest free lane first: after a gap everything returns to row 0.
        let s = tracked(
            &[
                (1, 0, 0, 10, "a", 0),
                (2, 0, 5, 10, "b", 0),
                (3, 0, 7, 10, "c", 0),
                (4, 0, 100, 10, "d", 0),
            ],
            &["t"],
        );
        let t = SpanTree::build(&s);
        let l = track_layout(&s, &t, BandMode::PerTrack);
        assert_eq!(l.row_of, vec![0, 1, 2, 0]);
    }

    /// A tree's lane reaches all of its spans whether parents come before their children
    /// in the span list (one forward pass) or after them (a walk of the trees): the
    /// same spans listed both ways land on the same rows.
    #[test]
    fn spans_listed_after_their_children_land_on_the_same_rows() {
        // Overlapping three-level trees, so the later trees get lanes above row 0.
        let mut spans = Vec::new();
        let mut names = Vec::new();
        for k in 0..6u64 {
            names.push([format!("r{k}"), format!("c{k}"), format!("g{k}")]);
        }
        for (k, [r, c, g]) in names.iter().enumerate() {
            let (k, id) = (k as u64, k as u64 * 10);
            spans.push((id + 1, 0, k * 7, 20, r.as_str(), 0));
            spans.push((id + 2, id + 1, k * 7 + 1, 15, c.as_str(), 0));
            spans.push((id + 3, id + 2, k * 7 + 2, 5, g.as_str(), 0));
        }
        let rows = |spans: &[(u64, u64, u64, u64, &str, u32)]| {
            let s = tracked(spans, &["t"]);
            let t = SpanTree::build(&s);
            let l = track_layout(&s, &t, BandMode::PerTrack);
            check_tracks(&s, &l);
            let mut by_name: Vec<(String, u32)> = (0..s.len())
                .map(|i| (s.names.get(s.name[i]).to_string(), l.row_of[i]))
                .collect();
            by_name.sort();
            by_name
        };
        let forward = rows(&spans);
        spans.reverse();
        assert_eq!(rows(&spans), forward);
        assert!(forward.iter().any(|&(_, r)| r > 2), "{forward:?}");
    }

    /// Trees taller than one row get a window of free rows.
    #[test]
    fn overlapping_trees_get_whole_windows() {
        let s = tracked(
            &[
                (1, 0, 0, 100, "r1", 0),
                (2, 1, 0, 50, "r1c", 0),
                (3, 0, 10, 100, "r2", 0),
                (4, 3, 20, 10, "r2c", 0),
                (5, 0, 150, 10, "r3", 0),
            ],
            &["t"],
        );
        let t = SpanTree::build(&s);
        let l = track_layout(&s, &t, BandMode::PerTrack);
        assert_eq!(l.row_of, vec![0, 1, 2, 3, 0]);
        check_tracks(&s, &l);
    }

    /// Per track, a span whose parent is on another track starts a tree in its own band;
    /// as one tree it stays under its parent.
    #[test]
    fn bands_per_track_and_as_one_tree() {
        let s = tracked(
            &[
                (1, 0, 0, 100, "tidb root", 0),
                (2, 1, 10, 50, "tidb child", 0),
                (3, 2, 20, 20, "tikv work", 1),
                (4, 3, 25, 5, "tikv inner", 1),
            ],
            &["TiDB", "TiKV"],
        );
        let t = SpanTree::build(&s);
        let l = track_layout(&s, &t, BandMode::PerTrack);
        assert_eq!(l.bands.len(), 2);
        assert_eq!(l.bands[0].name, "TiDB");
        assert_eq!((l.bands[0].first_row, l.bands[0].rows), (0, 2));
        assert_eq!((l.bands[1].first_row, l.bands[1].rows), (2, 2));
        assert_eq!(l.row_of, vec![0, 1, 2, 3]);
        assert_eq!(l.parent_of(&s, 2), NO_PARENT, "the cross-track link is cut");
        assert_eq!(l.band_of_row(3), Some(1));
        assert_eq!(l.band_of_row(4), None);
        check_tracks(&s, &l);
        let one = track_layout(&s, &t, BandMode::OneTree);
        assert_eq!(one.bands.len(), 1);
        assert_eq!(one.row_of, vec![0, 1, 2, 3]);
        assert_eq!(one.parent_of(&s, 2), 1);
        assert!(one.parent.is_empty(), "no copy of unchanged parents");
        check_tracks(&s, &one);
    }

    #[test]
    fn random_forests_in_bands_keep_the_invariants() {
        let mut rng = crate::testing::Lcg::new(0xba4d_u64);
        let mut next = || rng.next_u64();
        for _ in 0..40 {
            let n = 2 + next() % 400;
            let mut spans: Vec<(u64, u64, u64, u64, String, u32)> = Vec::new();
            for id in 1..=n {
                let track = (next() % 3) as u32;
                if id == 1 || next() % 5 == 0 {
                    spans.push((id, 0, next() % 5000, next() % 800, format!("r{id}"), track));
                } else {
                    let parent = 1 + next() % (id - 1);
                    let (_, _, ps, pd, _, pt) = spans[(parent - 1) as usize].clone();
                    let start = ps + next() % pd.max(1);
                    let dur = next() % (pd / 2 + 5);
                    let track = if next() % 4 == 0 { track } else { pt };
                    spans.push((id, parent, start, dur, format!("s{id}"), track));
                }
            }
            let refs: Vec<(u64, u64, u64, u64, &str, u32)> = spans
                .iter()
                .map(|(a, b, c, d, e, f)| (*a, *b, *c, *d, e.as_str(), *f))
                .collect();
            let s = tracked(&refs, &["a", "b", "c"]);
            let t = SpanTree::build(&s);
            for mode in [BandMode::PerTrack, BandMode::OneTree] {
                let l = track_layout(&s, &t, mode);
                check_tracks(&s, &l);
                let expected = (0..s.len())
                    .filter(|&i| {
                        let p = l.parent_of(&s, i);
                        p != NO_PARENT && l.row_of[i] > l.row_of[p as usize] + 1
                    })
                    .count();
                assert_eq!(l.connectors.len(), expected);
            }
        }
    }
}
