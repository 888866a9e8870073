//! The Layout: rows of bars on one tick axis, the shape every view produces.
//!
//! Row `d` holds the bars at depth `d` as parallel columns sorted by `x0`. Within a row
//! bars never overlap, so `x0` and `x1` are both sorted and any bar or visible range is two
//! `partition_point`s away. A bar refers back to its call tree node for everything else
//! (self, diff values), which keeps a bar at 24 bytes: `x0`, `x1` (u64 ticks), `name`
//! (interned) and `node`.
//!
//! [`flame_layout`] places a node's self time first and its children after it, left to
//! right in the tree's child order. That is what flamegraph.pl does with sorted input (a
//! stack ending at the parent sorts before the stacks through it) and what Pyroscope's
//! flamebearer encodes, so Pyroscope files keep their exact positions. The flame graph
//! (root at the bottom) and the icicle (root at the top) share this layout; orientation is
//! a property of the view, not of the rows.
//!
//! The walk is an explicit pre-order stack, which visits each depth left to right, so rows
//! come out sorted without a sort and a million-deep tree needs no call stack. A tree
//! whose nodes were made depth by depth (a flamebearer file's rows) is laid out row by
//! row instead, each row from the one above: the order its columns are in.

use crate::model::{CallTree, NameId, NodeId};
use crate::par::front;

mod lanes;
pub mod timeline;
mod unit;

use std::mem::MaybeUninit;
use std::ops::Range;
pub use unit::TickUnit;

/// One row of bars, sorted by `x0`, non-overlapping.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Row {
    /// Start tick of each bar (inclusive).
    pub x0: Vec<u64>,
    /// End tick of each bar (exclusive).
    pub x1: Vec<u64>,
    /// Interned name of each bar.
    pub name: Vec<NameId>,
    /// Call tree node each bar shows.
    pub node: Vec<NodeId>,
}

impl Row {
    /// Number of bars.
    pub fn len(&self) -> usize {
        self.x0.len()
    }

    /// True when the row has no bars.
    pub fn is_empty(&self) -> bool {
        self.x0.is_empty()
    }

    /// An empty row with room for `n` bars.
    pub fn with_capacity(n: usize) -> Row {
        Row {
            x0: Vec::with_capacity(n),
            x1: Vec::with_capacity(n),
            name: Vec::with_capacity(n),
            node: Vec::with_capacity(n),
        }
    }

    /// Releases spare capacity.
    pub fn shrink_to_fit(&mut self) {
        self.x0.shrink_to_fit();
        self.x1.shrink_to_fit();
        self.name.shrink_to_fit();
        self.node.shrink_to_fit();
    }

    /// No bars, the room kept.
    fn clear(&mut self) {
        self.x0.clear();
        self.x1.clear();
        self.name.clear();
        self.node.clear();
    }

    pub(crate) fn push(&mut self, x0: u64, x1: u64, name: NameId, node: NodeId) {
        self.x0.push(x0);
        self.x1.push(x1);
        self.name.push(name);
        self.node.push(node);
    }

    /// Bars that intersect the tick range `[start, end)`: a binary search and a search
    /// from there (see [`range_between`]).
    pub fn range_between(&self, start: u64, end: u64) -> Range<usize> {
        range_between(&self.x0, &self.x1, start, end)
    }

    /// The bar containing `tick`, if any.
    pub fn bar_at(&self, tick: u64) -> Option<usize> {
        bar_at(&self.x0, &self.x1, tick)
    }
}

/// Bars of sorted, non-overlapping columns `x0`/`x1` that intersect `[start, end)`.
///
/// The first is a binary search; the end is searched for from there, 1, 2, 4… bars
/// ahead first: where a row's bars are drawn one by one (and labelled) a frame shows a
/// few hundred of them at most, and that search stays in the cache lines after the
/// first, where a binary search over the whole row misses the cache at each step.
pub fn range_between(x0: &[u64], x1: &[u64], start: u64, end: u64) -> Range<usize> {
    let lo = x1.partition_point(|&x| x <= start);
    let hi = lo + gallop(&x0[lo.min(x0.len())..], |&x| x < end);
    lo..hi.max(lo)
}

/// `s.partition_point(pred)`, looking 1, 2, 4… up to [`GALLOP_MAX`] elements ahead
/// first, then by a binary search within the last step (or the rest).
fn gallop<T>(s: &[T], pred: impl Fn(&T) -> bool) -> usize {
    // `s[..known]` all satisfy `pred`.
    let mut known = 0;
    let mut k = 1;
    while k <= GALLOP_MAX && k <= s.len() {
        if !pred(&s[k - 1]) {
            return known + s[known..k - 1].partition_point(&pred);
        }
        known = k;
        k *= 2;
    }
    known + s[known..].partition_point(&pred)
}

/// How far [`gallop`] looks ahead before a binary search over the rest.
const GALLOP_MAX: usize = 256;

/// The bar of sorted, non-overlapping columns `x0`/`x1` containing `tick`, if any.
pub fn bar_at(x0: &[u64], x1: &[u64], tick: u64) -> Option<usize> {
    let i = x1.partition_point(|&x| x <= tick);
    (i < x0.len() && x0[i] <= tick).then_some(i)
}

/// Rows of bars; row 0 is the root.
#[derive(Clone, Debug, Default)]
pub struct Layout {
    /// Rows by depth.
    pub rows: Vec<Row>,
    /// The axis spans `[0, total_ticks)`.
    pub total_ticks: u64,
}

impl Layout {
    /// Number of bars in all rows.
    pub fn bar_count(&self) -> usize {
        self.rows.iter().map(Row::len).sum()
    }

    /// Heap bytes held by the rows, for memory reports.
    pub fn heap_bytes(&self) -> usize {
        self.rows
            .iter()
            .map(|r| {
                r.x0.capacity() * 8
                    + r.x1.capacity() * 8
                    + r.name.capacity() * 4
                    + r.node.capacity() * 4
            })
            .sum::<usize>()
            + self.rows.capacity() * std::mem::size_of::<Row>()
    }

    /// Checks the layout invariants against its tree: every row sorted and
    /// non-overlapping, every bar inside its parent's bar, widths equal to totals. Used by
    /// tests and debug builds; returns the first violation.
    pub fn check(&self, tree: &CallTree) -> Result<(), String> {
        let mut pos_of_node = vec![None::<(usize, usize)>; tree.len()];
        for (d, row) in self.rows.iter().enumerate() {
            for i in 0..row.len() {
                if row.x0[i] >= row.x1[i] {
                    return Err(format!(
                        "row {d} bar {i}: empty or inverted {}..{}",
                        row.x0[i], row.x1[i]
                    ));
                }
                if i > 0 && row.x0[i] < row.x1[i - 1] {
                    return Err(format!("row {d} bar {i}: overlaps bar {}", i - 1));
                }
                let n = row.node[i];
                if row.x1[i] - row.x0[i] != tree.total(n) {
                    return Err(format!("row {d} bar {i}: width differs from node total"));
                }
                if (d == 0) != (n == tree.root()) {
                    return Err(format!("row {d} bar {i}: the root belongs in row 0 alone"));
                }
                if row.name[i] != tree.name(n) {
                    return Err(format!("row {d} bar {i}: name differs from node"));
                }
                pos_of_node[n as usize] = Some((d, i));
                if d > 0 {
                    let p = tree.parent(n);
                    let Some((pd, pi)) = pos_of_node[p as usize] else {
                        return Err(format!("row {d} bar {i}: parent has no bar"));
                    };
                    if pd + 1 != d {
                        return Err(format!("row {d} bar {i}: parent in row {pd}"));
                    }
                    let prow = &self.rows[pd];
                    if row.x0[i] < prow.x0[pi] || row.x1[i] > prow.x1[pi] {
                        return Err(format!("row {d} bar {i}: outside its parent"));
                    }
                }
            }
        }
        Ok(())
    }
}

/// The order of a node's children in a flame layout.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum SiblingOrder {
    /// The tree's child order (by name for every importer: flamegraph.pl's and
    /// Pyroscope's), after the node's self time.
    #[default]
    AsTree,
    /// Speedscope's "left heavy": the heaviest child first (ties in the tree's order),
    /// children from the node's left edge, its self time last.
    HeaviestFirst,
}

/// Lays out a call tree as a flame graph: the root spans `[0, total)`; each node's self
/// time comes first, then its children side by side in the tree's child order. Nodes with
/// a total of zero (and so their subtrees) get no bar.
pub fn flame_layout(tree: &CallTree) -> Layout {
    flame_layout_ordered(tree, SiblingOrder::AsTree)
}

/// [`flame_layout`] with the children of every node in `order`.
pub fn flame_layout_ordered(tree: &CallTree, order: SiblingOrder) -> Layout {
    let threads = if tree.len() >= PARALLEL_MIN_NODES {
        crate::par::cores()
    } else {
        1
    };
    flame_layout_with(tree, order, threads)
}

/// Trees of at least this many nodes are laid out on all cores.
const PARALLEL_MIN_NODES: usize = 1 << 16;

/// [`flame_layout_ordered`] in `parts` parts, each walked on a thread of its own (tests
/// force parts on small trees).
///
/// The walk is a pre-order stack visiting each depth left to right (a tree made stack by
/// stack has its nodes mostly in that order, so the walk reads the tree's columns nearly
/// in sequence: the same rows built level by level on two threads took twice as long). For parts, the
/// axis is cut at `parts - 1` ticks: the bars that straddle a cut are placed first (a few
/// per row: the paths from the root to the cuts), and the subtrees hanging off them fall
/// each between two cuts, in one part. The first part walks its subtrees left to right
/// into the start of each row and the last right to left into its end ([`Ends`]); the
/// parts between (more than two cores) into rows of their own, copied between them with
/// the straddling bars. A level-ordered tree goes row by row instead ([`level_walk`]).
fn flame_layout_with(tree: &CallTree, order: SiblingOrder, parts: usize) -> Layout {
    flame_layout_by(tree, order, parts, None, LEVEL_PARALLEL_MIN)
}

/// [`flame_layout_with`], row by row ([`level_walk`]) where `levels` says so, or by
/// [`walk`] in parts, or (`None`) row by row exactly when the tree is level-ordered.
/// Row by row, rows of `level_min` bars or more are split into `parts` (tests lower it).
fn flame_layout_by(
    tree: &CallTree,
    order: SiblingOrder,
    parts: usize,
    levels: Option<bool>,
    level_min: usize,
) -> Layout {
    let total = tree.grand_total();
    if total == 0 {
        return Layout {
            rows: Vec::new(),
            total_ticks: 0,
        };
    }
    // Rows sized exactly: a bar is 24 bytes, not up to twice that after Vec doubling. (A
    // tree with stated totals may have a nonzero node under a zero one, which no walk
    // reaches: its row comes out shorter than counted.)
    let mut lens = tree.level_bars().to_vec();
    while lens.last() == Some(&0) {
        lens.pop();
    }
    let mut rows: Vec<Row> = lens.iter().map(|&n| Row::with_capacity(n)).collect();
    if levels.unwrap_or(tree.is_level_ordered()) {
        level_walk(tree, order, &mut rows, parts, level_min);
        return Layout {
            rows,
            total_ticks: total,
        };
    }
    // Cut ticks strictly inside the axis, increasing.
    let mut cuts: Vec<u64> = (1..parts as u128)
        .map(|j| (u128::from(total) * j / parts as u128) as u64)
        .filter(|&q| q > 0 && q < total)
        .collect();
    cuts.dedup();
    if cuts.is_empty() {
        walk(
            tree,
            order,
            (vec![(tree.root(), 0)], vec![0]),
            &mut rows,
            false,
        );
    } else {
        let split = Split::find(tree, order, &cuts);
        let last = cuts.len();
        let mut roots = split.roots;
        let back_roots = roots.pop().unwrap_or_default();
        let mut roots = roots.into_iter();
        let front_roots = roots.next().unwrap_or_default();
        let raw = RawRow::of(&mut rows, &lens);
        let mut front = Ends::new(raw.clone(), false);
        let mut back = Ends::new(raw, true);
        let lens = &lens;
        let others: Vec<Vec<Row>> = std::thread::scope(|s| {
            let back = s.spawn(|| walk(tree, order, back_roots, &mut back, true));
            let handles: Vec<_> = roots
                .map(|r| {
                    s.spawn(move || {
                        // Room for a whole row each: only what is written is ever touched.
                        let mut own = lens.iter().map(|&n| Row::with_capacity(n)).collect();
                        walk(tree, order, r, &mut own, false);
                        own
                    })
                })
                .collect();
            walk(tree, order, front_roots, &mut front, false);
            crate::par::join(back);
            handles.into_iter().map(crate::par::join).collect()
        });
        // Each row: the first part's bars, then the bar straddling the first cut, then
        // the second part's, and so on to the last part's, already at the row's end;
        // rows on all cores, cut where half the bars are.
        let straddling = &split.straddling;
        let (cuts, others) = (&cuts, &others);
        let (front, back) = (&front.written, &back.written);
        let assemble = move |first_row: usize, rows: &mut [Row]| {
            // Per part, the bars of the current row that start in it and straddle its
            // end: buffers kept from row to row (a million-deep tree has a million rows).
            let mut straddles: Vec<Row> = vec![Row::default(); last];
            for (i, row) in rows.iter_mut().enumerate() {
                let d = first_row + i;
                let at = straddling.partition_point(|&(sd, _, _)| sd < d);
                let here = &straddling[at..straddling.partition_point(|&(sd, _, _)| sd <= d)];
                for (part, straddle) in straddles.iter_mut().enumerate() {
                    straddle.clear();
                    for &(_, x0, n) in here.iter().filter(|&&(_, x0, _)| part_of(cuts, x0) == part)
                    {
                        straddle.push(x0, x0 + tree.total(n), tree.name(n), n);
                    }
                }
                // Between the ends: per part, its straddling bars, then the next part's
                // own bars unless it is the last.
                let straddles = &straddles;
                let middle = || {
                    (0..last).flat_map(move |part| {
                        std::iter::once(&straddles[part])
                            .chain(others.get(part).and_then(|o| o.get(d)))
                    })
                };
                close_row(row, lens[d], front[d], middle, back[d]);
            }
        };
        let half = lens.iter().sum::<usize>() / 2;
        let mid = lens
            .iter()
            .scan(0, |acc, &n| {
                *acc += n;
                Some(*acc)
            })
            .position(|acc| acc >= half)
            .unwrap_or(0);
        let (left, right) = rows.split_at_mut(mid);
        crate::par::both(|| assemble(0, left), || assemble(mid, right));
    }
    for r in &mut rows {
        // A no-op when the counts held (they do for trees whose totals add up).
        r.shrink_to_fit();
    }
    Layout {
        rows,
        total_ticks: total,
    }
}

/// Rows with at least this many bars give their children to the row below on all cores.
const LEVEL_PARALLEL_MIN: usize = 1 << 15;

/// Lays out a level-ordered tree (every node at least as deep as the node before it, as
/// the rows of a flamebearer file make it) row by row, each row's bars the children of
/// the row above, left to right. A pre-order walk jumps across such a tree's columns
/// (a cache miss per node: 67 M nodes in 4.5 s); row by row reads them nearly in order.
/// `rows` are empty, with room for their bars; a row of many bars is cut into `parts`
/// segments, each counting its children, then writing them into its slots of the row
/// below, on all cores.
fn level_walk(tree: &CallTree, order: SiblingOrder, rows: &mut [Row], parts: usize, min: usize) {
    let Some(first) = rows.first_mut() else {
        return;
    };
    let root = tree.root();
    first.push(0, tree.total(root), tree.name(root), root);
    // One buffer for a node's children (a million-deep tree has a million rows).
    let mut kids = Vec::new();
    for d in 1..rows.len() {
        let (above, below) = rows.split_at_mut(d);
        let src = &above[d - 1];
        let parts = if src.len() >= min { parts } else { 1 };
        next_row(tree, order, src, &mut below[0], parts, &mut kids);
    }
}

/// The number of children of `n` that get a bar.
fn children_with_bars(tree: &CallTree, n: NodeId) -> usize {
    tree.children(n)
        .iter()
        .filter(|&&c| tree.total(c) > 0)
        .count()
}

/// Appends to the row `dst` the children of the bars of `src`, left to right, `src` cut
/// into `parts` segments on all cores.
fn next_row(
    tree: &CallTree,
    order: SiblingOrder,
    src: &Row,
    dst: &mut Row,
    parts: usize,
    kids: &mut Vec<(NodeId, u64)>,
) {
    let n = src.len();
    let parts = parts.min(n);
    if parts <= 1 {
        for (&p, &x0) in src.node.iter().zip(&src.x0) {
            kids.clear();
            push_children(tree, order, p, x0, kids);
            for &(c, cx0) in kids.iter().rev() {
                dst.push(cx0, cx0 + tree.total(c), tree.name(c), c);
            }
        }
        return;
    }
    let segments: Vec<Range<usize>> = (0..parts)
        .map(|p| n * p / parts..n * (p + 1) / parts)
        .collect();
    let counts = crate::par::map_each(segments.clone(), |s| {
        src.node[s]
            .iter()
            .map(|&p| children_with_bars(tree, p))
            .sum::<usize>()
    });
    let total: usize = counts.iter().sum();
    let base = dst.len();
    dst.x0.reserve(total);
    dst.x1.reserve(total);
    dst.name.reserve(total);
    dst.node.reserve(total);
    let (mut x0s, mut x1s, mut names, mut nodes) = (
        &mut dst.x0.spare_capacity_mut()[..total],
        &mut dst.x1.spare_capacity_mut()[..total],
        &mut dst.name.spare_capacity_mut()[..total],
        &mut dst.node.spare_capacity_mut()[..total],
    );
    let mut work = Vec::with_capacity(parts);
    for (s, &k) in segments.into_iter().zip(&counts) {
        work.push((
            s,
            front(&mut x0s, k),
            front(&mut x1s, k),
            front(&mut names, k),
            front(&mut nodes, k),
        ));
    }
    crate::par::map_each(work, |(s, x0s, x1s, names, nodes)| {
        let mut kids = Vec::new();
        let mut k = 0;
        for (&p, &x0) in src.node[s.clone()].iter().zip(&src.x0[s]) {
            kids.clear();
            push_children(tree, order, p, x0, &mut kids);
            for &(c, cx0) in kids.iter().rev() {
                // Out of bounds (a panic, not a wild write) if the count was short.
                x0s[k].write(cx0);
                x1s[k].write(cx0 + tree.total(c));
                names[k].write(tree.name(c));
                nodes[k].write(c);
                k += 1;
            }
        }
        assert_eq!(k, x0s.len(), "a segment wrote as many bars as it counted");
    });
    // SAFETY: every segment returned (a panic in one is raised again by `map_each`
    // before this line) having written each of its `counts[p]` slots (asserted), the
    // segments' slots are the first `total` of each column's spare capacity, one after
    // another, and `reserve` made room for them.
    unsafe {
        dst.x0.set_len(base + total);
        dst.x1.set_len(base + total);
        dst.name.set_len(base + total);
        dst.node.set_len(base + total);
    }
}

/// The part of the axis a tick falls in: the number of cuts at or before it.
fn part_of(cuts: &[u64], x: u64) -> usize {
    cuts.partition_point(|&q| q <= x)
}

/// Subtrees a walk lays out, as (node, x0), and their depths beside them.
type Roots = (Vec<(NodeId, u64)>, Vec<u32>);

/// The bars that straddle a cut, and the subtrees between cuts, of a layout in parts.
struct Split {
    /// (depth, x0, node) of every bar with a cut strictly inside, by depth, then x0.
    straddling: Vec<(usize, u64, NodeId)>,
    /// Per part, the (node, x0) of the subtrees it lays out, left to right, and their
    /// depths.
    roots: Vec<Roots>,
}

impl Split {
    /// From the root down the paths to the cuts: at most one bar per row and cut
    /// straddles, so this visits the children of a few bars per row.
    fn find(tree: &CallTree, order: SiblingOrder, cuts: &[u64]) -> Split {
        let mut straddling = Vec::new();
        let mut found = vec![Vec::new(); cuts.len() + 1];
        let mut stack = vec![(tree.root(), 0u64, 0u32)];
        let mut kids = Vec::new();
        while let Some((n, x0, d)) = stack.pop() {
            straddling.push((d as usize, x0, n));
            kids.clear();
            push_children(tree, order, n, x0, &mut kids);
            for &(c, cx0) in &kids {
                let cx1 = cx0 + tree.total(c);
                let part = part_of(cuts, cx0);
                if cuts.get(part).is_some_and(|&q| q < cx1) {
                    stack.push((c, cx0, d + 1));
                } else {
                    found[part].push((c, cx0, d + 1));
                }
            }
        }
        straddling.sort_unstable_by_key(|&(d, x0, _)| (d, x0));
        let roots = found
            .into_iter()
            .map(|mut r| {
                // Disjoint ranges: sorted by start, a walk emits every row left to right.
                r.sort_unstable_by_key(|&(_, x0, _)| x0);
                r.into_iter().map(|(n, x0, d)| ((n, x0), d)).unzip()
            })
            .collect();
        Split { straddling, roots }
    }
}

/// Appends to `out` the children of `n` (whose bar starts at `x0`) with a nonzero total
/// and where their bars start, right to left: the order a pre-order stack pushes them in,
/// so that the leftmost is popped first.
fn push_children(
    tree: &CallTree,
    order: SiblingOrder,
    n: NodeId,
    x0: u64,
    out: &mut Vec<(NodeId, u64)>,
) {
    let kids = tree.children(n);
    match order {
        SiblingOrder::AsTree => {
            // Self time first: the children end where the node ends.
            let mut cursor = x0 + tree.total(n);
            for &c in kids.iter().rev() {
                let t = tree.total(c);
                if t > 0 {
                    cursor -= t;
                    out.push((c, cursor));
                }
            }
        }
        SiblingOrder::HeaviestFirst => {
            let from = out.len();
            out.extend(
                kids.iter()
                    .copied()
                    .filter(|&c| tree.total(c) > 0)
                    .map(|c| (c, 0)),
            );
            let mine = &mut out[from..];
            // Stable: equal totals keep the tree's order.
            mine.sort_by_key(|&(c, _)| std::cmp::Reverse(tree.total(c)));
            let mut cursor = x0;
            for (c, cx0) in mine.iter_mut() {
                *cx0 = cursor;
                cursor += tree.total(*c);
            }
            mine.reverse();
        }
    }
}

/// Where a walk puts the bars it visits: rows of its own, or the ends of the layout's.
trait Bars {
    /// A bar at depth `d`.
    fn put(&mut self, d: usize, x0: u64, x1: u64, name: NameId, node: NodeId);
}

impl Bars for Vec<Row> {
    #[inline]
    fn put(&mut self, d: usize, x0: u64, x1: u64, name: NameId, node: NodeId) {
        if self.len() <= d {
            self.resize_with(d + 1, Row::default);
        }
        self[d].push(x0, x1, name, node);
    }
}

/// One row's columns of a layout in parts, as pointers to their spare room, which holds
/// `len` bars: the row's count.
#[derive(Clone, Copy)]
struct RawRow {
    x0: *mut MaybeUninit<u64>,
    x1: *mut MaybeUninit<u64>,
    name: *mut MaybeUninit<NameId>,
    node: *mut MaybeUninit<NodeId>,
    len: usize,
}

impl RawRow {
    /// The spare room of `rows` (empty, each with room for its count in `lens`).
    fn of(rows: &mut [Row], lens: &[usize]) -> Vec<RawRow> {
        rows.iter_mut()
            .zip(lens)
            .map(|(r, &len)| {
                assert!(r.is_empty(), "rows start empty");
                let room = |n: usize| assert!(n >= len, "rows have room for their count");
                room(r.x0.capacity());
                room(r.x1.capacity());
                room(r.name.capacity());
                room(r.node.capacity());
                RawRow {
                    x0: r.x0.spare_capacity_mut().as_mut_ptr(),
                    x1: r.x1.spare_capacity_mut().as_mut_ptr(),
                    name: r.name.spare_capacity_mut().as_mut_ptr(),
                    node: r.node.spare_capacity_mut().as_mut_ptr(),
                    len,
                }
            })
            .collect()
    }
}

/// The first part of a layout in parts writes each row from its start, and the last part
/// (`back`) from its end, on two threads at once, straight into the layout's rows: no rows
/// of its own to copy afterwards (on the 139 M bars of a 1 GB pprof, the copy and the
/// fresh pages of those rows took 4 s). `written` counts each row's bars.
///
/// The two never write the same slot: a row's count is the number of nodes at its depth
/// with a nonzero total, every bar a walk puts is such a node, and the parts' subtrees
/// are disjoint (each node has one parent), so the bars the first part puts at the start
/// and those the last part puts at the end number at most the count. `put` checks that
/// each part's own bars stay within it.
struct Ends {
    rows: Vec<RawRow>,
    written: Vec<usize>,
    back: bool,
}

impl Ends {
    /// Nothing written yet into `rows`, from their starts or (`back`) their ends.
    fn new(rows: Vec<RawRow>, back: bool) -> Ends {
        let written = vec![0; rows.len()];
        Ends {
            rows,
            written,
            back,
        }
    }
}

// SAFETY: the pointers are into rows the layout holds until both walks are joined, and
// the two `Ends` write disjoint slots (above); nothing reads the slots until then.
unsafe impl Send for Ends {}

impl Bars for Ends {
    #[inline]
    fn put(&mut self, d: usize, x0: u64, x1: u64, name: NameId, node: NodeId) {
        let r = self.rows[d];
        let k = self.written[d];
        assert!(k < r.len, "row {d} has more bars than its count");
        let i = if self.back { r.len - 1 - k } else { k };
        // SAFETY: `i < len`, and each column has room for `len` (checked by `RawRow::of`);
        // no other thread writes slot `i` (see `Ends`).
        unsafe {
            r.x0.add(i).write(MaybeUninit::new(x0));
            r.x1.add(i).write(MaybeUninit::new(x1));
            r.name.add(i).write(MaybeUninit::new(name));
            r.node.add(i).write(MaybeUninit::new(node));
        }
        self.written[d] = k + 1;
    }
}

/// Completes an empty row whose first `front` and last `back` of `len` slots the two
/// ends' walks wrote: the bars of `middle` go after the front, the back block moves down
/// to follow them if they do not meet (a tree whose totals do not add up), and the row's
/// length is set.
fn close_row<'a, I: Iterator<Item = &'a Row>>(
    row: &mut Row,
    len: usize,
    front: usize,
    middle: impl Fn() -> I,
    back: usize,
) {
    assert!(row.is_empty() && front + back <= len);
    let end = len - back;
    fn fill<'a, T: Copy + 'a>(
        col: &mut Vec<T>,
        front: usize,
        end: usize,
        len: usize,
        middle: impl Iterator<Item = &'a [T]>,
    ) {
        let room = &mut col.spare_capacity_mut()[..len];
        let mut at = front;
        for piece in middle {
            assert!(
                at + piece.len() <= end,
                "a row has more bars than its count"
            );
            for (slot, &v) in room[at..at + piece.len()].iter_mut().zip(piece) {
                slot.write(v);
            }
            at += piece.len();
        }
        room.copy_within(end..len, at);
        // SAFETY: slots `..front` were written by the first part's walk and `end..len` by
        // the last part's (both joined before this), `front..at` just now, and the back
        // block moved to `at..at + (len - end)`; `room` has `len` slots.
        unsafe { col.set_len(at + (len - end)) };
    }
    fill(&mut row.x0, front, end, len, middle().map(|r| &r.x0[..]));
    fill(&mut row.x1, front, end, len, middle().map(|r| &r.x1[..]));
    fill(
        &mut row.name,
        front,
        end,
        len,
        middle().map(|r| &r.name[..]),
    );
    fill(
        &mut row.node,
        front,
        end,
        len,
        middle().map(|r| &r.node[..]),
    );
}

/// Lays out the subtrees `roots` ((node, x0), left to right, ranges disjoint; with their
/// depths) into `out` by depth, an explicit pre-order stack: each row's bars left to right,
/// or right to left when `mirrored` (children and roots taken from the right).
fn walk(
    tree: &CallTree,
    order: SiblingOrder,
    (mut roots, mut depths): Roots,
    out: &mut impl Bars,
    mirrored: bool,
) {
    if !mirrored {
        roots.reverse();
        depths.reverse();
    }
    // Each entry's depth beside it (the tree keeps no depth column).
    let mut stack = roots;
    while let (Some((n, x0)), Some(d)) = (stack.pop(), depths.pop()) {
        out.put(d as usize, x0, x0 + tree.total(n), tree.name(n), n);
        let from = stack.len();
        push_children(tree, order, n, x0, &mut stack);
        depths.resize(stack.len(), d + 1);
        if mirrored {
            stack[from..].reverse();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{CallTreeBuilder, ChildOrder, Names};

    #[test]
    fn left_heavy_puts_the_heaviest_child_first_and_keeps_every_bar() {
        let p = crate::import::folded::parse(
            "h.txt",
            b"r;a 2\nr;b 7\nr;c 2\nr;b;x 1\nr;b;y 5\nr 3\nq 1\n",
        )
        .unwrap();
        let heavy = flame_layout_ordered(&p.tree, SiblingOrder::HeaviestFirst);
        heavy.check(&p.tree).unwrap();
        let plain = flame_layout(&p.tree);
        let names = |l: &Layout, d: usize| -> Vec<(String, u64, u64)> {
            let r = &l.rows[d];
            (0..r.len())
                .map(|i| (p.names.get(r.name[i]).to_string(), r.x0[i], r.x1[i]))
                .collect()
        };
        let t = |s: &str, a: u64, b: u64| (s.to_string(), a, b);
        // r (20) before q (1); b (13) before a and c (2 each, tree order); r's self last.
        assert_eq!(names(&heavy, 1), [t("r", 0, 20), t("q", 20, 21)]);
        assert_eq!(
            names(&heavy, 2),
            [t("b", 0, 13), t("a", 13, 15), t("c", 15, 17)]
        );
        assert_eq!(names(&heavy, 3), [t("y", 0, 5), t("x", 5, 6)]);
        // The same bars as the plain layout, only placed elsewhere.
        for d in 0..plain.rows.len() {
            let mut a: Vec<_> = names(&plain, d)
                .into_iter()
                .map(|(n, x0, x1)| (n, x1 - x0))
                .collect();
            let mut b: Vec<_> = names(&heavy, d)
                .into_iter()
                .map(|(n, x0, x1)| (n, x1 - x0))
                .collect();
            a.sort();
            b.sort();
            assert_eq!(a, b, "row {d}");
        }
    }

    use crate::generator::Rng;

    fn random_profile(seed: u64, stacks: usize) -> (Names, CallTree, Vec<(Vec<String>, u64)>) {
        let mut rng = Rng(seed);
        let mut names = Names::new();
        let mut b = CallTreeBuilder::new(&mut names, false);
        let mut samples = Vec::new();
        for _ in 0..stacks {
            let depth = 1 + rng.below(12) as usize;
            let frames: Vec<String> = (0..depth).map(|_| format!("f{}", rng.below(6))).collect();
            let v = rng.below(20);
            let mut cur = 0;
            for f in &frames {
                let id = names.intern(f);
                cur = b.child(cur, id);
            }
            b.add_self(cur, v).unwrap();
            samples.push((frames, v));
        }
        let t = b.finish(&names, ChildOrder::ByName).unwrap();
        (names, t, samples)
    }

    #[test]
    fn small_tree_positions() {
        let mut names = Names::new();
        let mut b = CallTreeBuilder::new(&mut names, false);
        let (a, bb, c) = (names.intern("a"), names.intern("b"), names.intern("c"));
        let na = b.child(0, a);
        let nb = b.child(na, bb);
        let nc = b.child(na, c);
        b.add_self(na, 2).unwrap();
        b.add_self(nb, 3).unwrap();
        b.add_self(nc, 5).unwrap();
        let t = b.finish(&names, ChildOrder::ByName).unwrap();
        let l = flame_layout(&t);
        assert_eq!(l.total_ticks, 10);
        assert_eq!(l.rows.len(), 3);
        assert_eq!((l.rows[1].x0[0], l.rows[1].x1[0]), (0, 10));
        // Self first: b starts after a's 2 self ticks, c after b.
        assert_eq!(l.rows[2].x0, vec![2, 5]);
        assert_eq!(l.rows[2].x1, vec![5, 10]);
        l.check(&t).unwrap();
    }

    /// Brute-force oracle: a bar's x0 is the sum of everything that sorts before its path
    /// among (self-first) leaves; checked against the layout for random trees.
    #[test]
    fn random_trees_match_oracle_and_invariants() {
        for seed in 0..40 {
            let (names, t, _) = random_profile(seed, 1 + (seed as usize * 7) % 60);
            let l = flame_layout(&t);
            l.check(&t).unwrap_or_else(|e| panic!("seed {seed}: {e}"));

            // Totals preserved per row: each row's widths sum to at most the root's, and
            // the children of each node sum to total − self.
            for n in 0..t.len() as NodeId {
                let kids: u64 = t.children(n).iter().map(|&c| t.total(c)).sum();
                assert_eq!(t.self_ticks(n), t.total(n) - kids, "seed {seed} node {n}");
            }
            for row in &l.rows {
                let w: u64 = row.x0.iter().zip(&row.x1).map(|(a, b)| b - a).sum();
                assert!(w <= l.total_ticks);
            }

            // Oracle for x0: walk the path from the root; at each level add the parent's
            // self and the totals of the siblings sorted before.
            for (d, row) in l.rows.iter().enumerate() {
                for i in 0..row.len() {
                    let n = row.node[i];
                    let mut x = 0u64;
                    let mut prev = 0;
                    for &step in &t.path(n) {
                        x += t.self_ticks(prev);
                        for &s in t.children(prev) {
                            if s == step {
                                break;
                            }
                            x += t.total(s);
                        }
                        prev = step;
                    }
                    assert_eq!(
                        row.x0[i],
                        x,
                        "seed {seed} row {d} bar {i} ({})",
                        names.get(row.name[i])
                    );
                }
            }
        }
    }

    #[test]
    fn a_layout_in_parts_is_the_layout_in_one() {
        for seed in 0..40 {
            let (_, t, _) = random_profile(seed, 1 + (seed as usize * 13) % 90);
            for order in [SiblingOrder::AsTree, SiblingOrder::HeaviestFirst] {
                let one = flame_layout_with(&t, order, 1);
                one.check(&t).unwrap_or_else(|e| panic!("seed {seed}: {e}"));
                for parts in [2, 3, 5, 16, 1000] {
                    let many = flame_layout_with(&t, order, parts);
                    assert_eq!(many.rows, one.rows, "seed {seed} {order:?} {parts}");
                    assert_eq!(many.total_ticks, one.total_ticks);
                    for r in &many.rows {
                        assert_eq!(r.x0.capacity(), r.len(), "rows sized exactly");
                    }
                }
            }
        }
    }

    /// The tree of `random_profile(seed, stacks)` with its nodes made level by level
    /// (every node of depth 1 first, then depth 2, ...), as a flamebearer file makes them.
    fn level_built(seed: u64, stacks: usize) -> CallTree {
        let (_, _, samples) = random_profile(seed, stacks);
        let mut names = Names::new();
        let mut b = CallTreeBuilder::new(&mut names, false);
        let mut made: std::collections::HashMap<Vec<String>, NodeId> = Default::default();
        let deepest = samples.iter().map(|(f, _)| f.len()).max().unwrap_or(0);
        for d in 1..=deepest {
            // Stacks in reverse so that node ids do not follow the tree's child order.
            for (frames, _) in samples.iter().rev().filter(|(f, _)| f.len() >= d) {
                if made.contains_key(&frames[..d]) {
                    continue;
                }
                let parent = if d == 1 { 0 } else { made[&frames[..d - 1]] };
                let id = names.intern(&frames[d - 1]);
                made.insert(frames[..d].to_vec(), b.push_child(parent, id));
            }
        }
        for (frames, v) in &samples {
            b.add_self(made[&frames[..]], *v).unwrap();
        }
        b.finish(&names, ChildOrder::ByName).unwrap()
    }

    #[test]
    fn a_layout_row_by_row_is_the_walk() {
        for seed in 0..40 {
            let stacks = 1 + (seed as usize * 13) % 90;
            let (_, dfs, _) = random_profile(seed, stacks);
            let bfs = level_built(seed, stacks);
            for t in [&dfs, &bfs] {
                for order in [SiblingOrder::AsTree, SiblingOrder::HeaviestFirst] {
                    let one = flame_layout_by(t, order, 1, Some(false), 1);
                    one.check(t).unwrap_or_else(|e| panic!("seed {seed}: {e}"));
                    for parts in [1, 2, 3, 8] {
                        let rows = flame_layout_by(t, order, parts, Some(true), 1);
                        assert_eq!(rows.rows, one.rows, "seed {seed} {order:?} {parts}");
                        assert_eq!(rows.total_ticks, one.total_ticks);
                    }
                }
            }
        }
    }

    #[test]
    fn level_ordered_trees_are_told_apart() {
        let mut told = 0;
        for seed in 0..40 {
            let stacks = 2 + (seed as usize * 13) % 90;
            let bfs = level_built(seed, stacks);
            assert!(bfs.is_level_ordered(), "seed {seed}");
            let (_, dfs, _) = random_profile(seed, stacks);
            if dfs.max_depth() > 1 && !dfs.is_level_ordered() {
                told += 1;
            }
        }
        assert!(told > 30, "{told} stack-built trees are not level-ordered");
    }

    #[test]
    fn a_node_no_walk_reaches_leaves_its_row_short_in_every_way() {
        // Stated totals (as a flamebearer file states them): `x` has none, its child `y`
        // has 5, so depth 3 counts one bar more than any walk puts there. Row 3 has bars
        // on both sides of the cut at 50: the last part's block moves down.
        let mut names = Names::new();
        let mut b = CallTreeBuilder::new(&mut names, false);
        let [a, bb, x, y, c, d, e, f] =
            ["a", "b", "x", "y", "c", "d", "e", "f"].map(|s| names.intern(s));
        let na = b.child(0, a);
        let nb = b.child(0, bb);
        let nx = b.child(na, x);
        let ny = b.child(nx, y);
        let nc = b.child(na, c);
        let ne = b.child(nc, e);
        let nd = b.child(nb, d);
        let nf = b.child(nd, f);
        for (n, total, self_) in [
            (0, 100, 0),
            (na, 50, 10),
            (nb, 50, 20),
            (nx, 0, 0),
            (ny, 5, 5),
            (nc, 40, 30),
            (ne, 10, 10),
            (nd, 30, 20),
            (nf, 10, 10),
        ] {
            b.set_stated(n, total, self_, None);
        }
        let t = b.finish(&names, ChildOrder::ByName).unwrap();
        assert_eq!(t.level_bars(), [1, 2, 2, 3]);
        let one = flame_layout_by(&t, SiblingOrder::AsTree, 1, Some(false), 1);
        one.check(&t).unwrap();
        assert_eq!(one.rows[3].node, vec![ne, nf]);
        for parts in [2, 3] {
            for levels in [false, true] {
                let l = flame_layout_by(&t, SiblingOrder::AsTree, parts, Some(levels), 1);
                assert_eq!(l.rows, one.rows, "{parts} parts, row by row: {levels}");
            }
        }
    }

    #[test]
    fn range_and_bar_at() {
        let row = Row {
            x0: vec![0, 10, 20, 35],
            x1: vec![5, 20, 30, 40],
            name: vec![0; 4],
            node: vec![0; 4],
        };
        assert_eq!(row.range_between(0, 100), 0..4);
        assert_eq!(row.range_between(5, 10), 1..1);
        assert_eq!(row.range_between(6, 21), 1..3);
        assert_eq!(row.range_between(29, 36), 2..4);
        assert_eq!(row.bar_at(4), Some(0));
        assert_eq!(row.bar_at(5), None);
        assert_eq!(row.bar_at(20), Some(2));
        assert_eq!(row.bar_at(40), None);
        // Brute force over every tick and range.
        for s in 0..45 {
            let want = (0..4).find(|&i| row.x0[i] <= s && s < row.x1[i]);
            assert_eq!(row.bar_at(s), want);
            for e in s..45 {
                let vis: Vec<usize> = (0..4).filter(|&i| row.x1[i] > s && row.x0[i] < e).collect();
                let r = row.range_between(s, e);
                assert_eq!(r.collect::<Vec<_>>(), vis, "{s}..{e}");
            }
        }
    }

    /// The search from the start finds what a binary search over the row does, for
    /// ranges short and long, at the row's ends and past them.
    #[test]
    fn ranges_found_from_their_start_are_the_binary_searches() {
        let mut row = Row::default();
        let mut x = 3;
        for i in 0..3000u64 {
            let w = 1 + (i * 7919) % 13;
            row.push(x, x + w, 0, i as u32);
            x += w + (i % 3);
        }
        let binary = |s: u64, e: u64| {
            let lo = row.x1.partition_point(|&x| x <= s);
            let hi = row.x0.partition_point(|&x| x < e);
            lo..hi.max(lo)
        };
        for s in (0..x + 20).step_by(7) {
            for len in [0, 1, 2, 5, 17, 100, 600, 1500, 3000, 9000, 40_000] {
                assert_eq!(
                    row.range_between(s, s + len),
                    binary(s, s + len),
                    "{s}+{len}"
                );
            }
        }
        assert_eq!(gallop(&[1, 2, 3][..], |&v| v < 10), 3);
        assert_eq!(gallop(&[0u8; 0][..], |&v| v < 10), 0);
    }

    #[test]
    fn zero_total_nodes_get_no_bar() {
        let mut names = Names::new();
        let mut b = CallTreeBuilder::new(&mut names, false);
        let (a, z) = (names.intern("a"), names.intern("z"));
        let na = b.child(0, a);
        let _nz = b.child(0, z);
        b.add_self(na, 4).unwrap();
        let t = b.finish(&names, ChildOrder::ByName).unwrap();
        let l = flame_layout(&t);
        assert_eq!(l.rows[1].len(), 1);
        l.check(&t).unwrap();
    }

    #[test]
    fn very_deep_layout() {
        let mut names = Names::new();
        let mut b = CallTreeBuilder::new(&mut names, false);
        let f = names.intern("f");
        let mut cur = 0;
        for _ in 0..100_000 {
            cur = b.child(cur, f);
        }
        b.add_self(cur, 1).unwrap();
        let t = b.finish(&names, ChildOrder::ByName).unwrap();
        let l = flame_layout(&t);
        assert_eq!(l.rows.len(), 100_001);
        l.check(&t).unwrap();
    }
}
