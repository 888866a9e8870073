//! Level of detail: per row, a pyramid of tiers that merge sub-pixel neighbours.
//!
//! Tier `k` of a row merges every maximal run of consecutive bars that are each narrower
//! than 2^k ticks and separated by gaps narrower than 2^k ticks into one bar spanning the
//! run, carrying how many bars it holds and the name of its widest member (its dominant
//! name); wider bars stay as they are. Every output bar is then either at least 2^k wide or
//! followed by a gap of at least 2^k, so over a window of W ticks a tier has at most
//! about 2·W/2^k bars. A frame showing T ticks per pixel uses the coarsest tier with
//! 2^k ≤ [`FOLD_PX`]·T (so 2^k > `FOLD_PX`·T/2): runs of bars narrower than a few pixels
//! are drawn as one, and a row gets at most about 4/`FOLD_PX` bars per pixel (one),
//! whatever the profile's size.
//!
//! Tiers are built bottom-up in one linear pass each, and one is kept only when it has at
//! most half the bars of the last kept one, so all tiers together hold at most as many
//! bars as the row itself. Tier 0 is the row (not copied). A tier is a partition of its
//! row into runs, stored as each run's first row index and dominant name (8 bytes a bar;
//! ticks are read from the row), so all tiers together cost at most 8 bytes per bar.
//! Merged bars never replace the rows for picking: hover and click still binary-search
//! the exact bars.
//!
//! A window keeps the whole pyramid ([`Lod::build`]) to zoom freely. An export draws one
//! frame at one zoom, so [`Lod::build_for_view`] stops merging at that zoom and keeps only
//! the tier the frame uses: the same bars, for a fraction of the memory; [`view_lod`]
//! builds those same tiers faster, by following merge events (`build_for_view` is its
//! test oracle). The whole pyramid is built by the same merge events
//! ([`Lod::build`]; [`Lod::build_by_passes`], a pass per threshold, is its oracle).
//! Rows of 256 Ki bars or more are merged in segments that stay in the caches
//! (`segments.rs`), on all cores when one row holds more than a core's share of the bars:
//! one row of a profile can hold a third of its bars.

use crate::layout::{Layout, Row};
use crate::model::NameId;

mod segments;
mod view_lod;
pub use view_lod::view_lod;

/// A frame showing T ticks per pixel draws the coarsest tier with 2^k ≤ `FOLD_PX`·T: runs
/// of neighbours narrower than 2–4 px (the power-of-two threshold lands in between) are
/// drawn as one merged bar, like Tracy folding zones under 3 px. Distinct 1-px slivers
/// carry no readable information, and each costs a quad: on llvmpipe about a microsecond,
/// so at one pixel a 1080p frame of 50 dense rows took ~100 ms; at four, a quarter.
pub const FOLD_PX: f64 = 4.0;

/// Whether a frame at `ticks_per_px` may draw the tier merging below `2^shift` ticks: the
/// one threshold test of [`Lod::tier_for`] and every builder of the tier it picks.
pub(crate) fn folds_at(shift: u32, ticks_per_px: f64) -> bool {
    (1u128 << shift) as f64 <= ticks_per_px * FOLD_PX
}

/// One coarser version of a row: a partition of the row's bars into consecutive runs.
///
/// Tier bar `j` stands for the row's bars `first[j]..first[j + 1]` (one bar, or a merged
/// run of several), so its extent is the first member's start to the last member's end
/// and its count is the difference of two `first`s: a tier bar costs 8 bytes (`first`
/// and the dominant name), its ticks are read from the row. Methods that need ticks take
/// the row the tier was built from.
#[derive(Clone, Debug, Default)]
pub struct Tier {
    /// Bars narrower than 2^shift ticks (with small gaps) are merged here.
    pub shift: u32,
    /// Index in the row of each tier bar's first member, then the row's length: one
    /// more entry than the tier has bars (empty for an empty tier).
    first: Vec<u32>,
    /// Dominant name (of the widest member).
    pub name: Vec<NameId>,
    /// Per block of [`WIDEST_BLOCK`] bars: a bound on the widths of the row's bars they
    /// stand for ([`row_widest`]'s byte; [`Lod`] notes it). A label search passes over
    /// blocks whose single bars are all too narrow for a label without reading their
    /// ticks ([`Tier::for_each_single`]).
    widest: Vec<u8>,
}

/// Two tiers are equal when they hold the same bars (the blocks' widest bars follow from
/// those and the row, and a tier a builder has not yet handed to [`Lod`] has none).
impl PartialEq for Tier {
    fn eq(&self, other: &Tier) -> bool {
        (self.shift, &self.first, &self.name) == (other.shift, &other.first, &other.name)
    }
}

impl Eq for Tier {}

/// Bars per block of [`Tier`]'s and [`Lod`]'s widest bars: a byte per 64 bars.
const WIDEST_BLOCK: usize = 64;

/// Per block of [`WIDEST_BLOCK`] of a row's bars: one more than the bit length of the
/// widest bar's width in ticks (the bit length of all widths or-ed together; an end
/// before its start, which a layout never holds, reads as wide), in one pass the
/// compiler vectorizes.
fn row_widest(x0: &[u64], x1: &[u64]) -> Vec<u8> {
    x0.chunks(WIDEST_BLOCK)
        .zip(x1.chunks(WIDEST_BLOCK))
        .map(|(a, b)| {
            let or = a
                .iter()
                .zip(b)
                .fold(0u64, |or, (&s, &e)| or | e.wrapping_sub(s));
            bits(or) as u8 + 1
        })
        .collect()
}

/// Bit length: the smallest `k` with `v < 2^k`.
pub(super) fn bits(v: u64) -> u32 {
    64 - v.leading_zeros()
}

/// Calls `f` with the parts of `range` in blocks of [`WIDEST_BLOCK`] bars, in order,
/// except blocks whose widths (bounded by `widest`, as [`row_widest`] gives it) are all
/// `narrow`: `narrow` must hold for every width below one it holds for. A block `widest`
/// does not cover is never passed over.
fn for_each_block(
    widest: &[u8],
    range: std::ops::Range<usize>,
    narrow: impl Fn(u64) -> bool,
    mut f: impl FnMut(std::ops::Range<usize>),
) {
    let mut j = range.start;
    while j < range.end {
        let block = j / WIDEST_BLOCK;
        let end = ((block + 1) * WIDEST_BLOCK).min(range.end);
        // Every width of the block is below 2^(widest - 1) (0: no bar to bound).
        let skip = widest
            .get(block)
            .is_some_and(|&w| w == 0 || (w <= 64 && narrow(((1u128 << (w - 1)) - 1) as u64)));
        if !skip {
            f(j..end);
        }
        j = end;
    }
}

impl Tier {
    /// Number of bars.
    pub fn len(&self) -> usize {
        self.name.len()
    }

    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.name.is_empty()
    }

    /// Index in the row of bar `j`'s first member.
    pub fn first(&self, j: usize) -> usize {
        self.first[j] as usize
    }

    /// The row's bars bar `j` stands for.
    pub fn members(&self, j: usize) -> std::ops::Range<usize> {
        self.first[j] as usize..self.first[j + 1] as usize
    }

    /// Bars of the row bar `j` stands for (1: an original bar).
    pub fn count(&self, j: usize) -> u32 {
        self.first[j + 1] - self.first[j]
    }

    /// Start tick of bar `j` (`row`: the row the tier was built from).
    pub fn x0(&self, row: &Row, j: usize) -> u64 {
        row.x0[self.first[j] as usize]
    }

    /// End tick of bar `j`.
    pub fn x1(&self, row: &Row, j: usize) -> u64 {
        row.x1[self.first[j + 1] as usize - 1]
    }

    /// An empty tier at `shift` with room for `len` bars.
    pub(crate) fn with_capacity(shift: u32, len: usize) -> Tier {
        Tier {
            shift,
            first: Vec::with_capacity(len + 1),
            name: Vec::with_capacity(len),
            widest: Vec::new(),
        }
    }

    fn clear(&mut self) {
        self.first.clear();
        self.name.clear();
        self.widest.clear();
    }

    /// Appends a bar standing for the row's bars from `first` to the next bar's first.
    pub(crate) fn push(&mut self, first: u32, name: NameId) {
        self.first.push(first);
        self.name.push(name);
    }

    /// Closes the partition after the last bar (`row_len`: the row's length).
    pub(crate) fn seal(&mut self, row_len: usize) {
        if !self.name.is_empty() {
            self.first.push(row_len as u32);
        }
    }

    /// Notes, per block of the tier's bars, the widest of the row's bars they stand for
    /// from the row's own blocks (`row_widest`, by [`row_widest`]): a bound on the tier's
    /// single bars, which a merged member (narrower than the tier's `2^shift` ticks, a
    /// few pixels wherever the tier is drawn) loosens by nothing a label needs.
    fn note_widest(&mut self, row_widest: &[u8]) {
        let n = self.len();
        self.widest = (0..n)
            .step_by(WIDEST_BLOCK)
            .map(|j| {
                let lo = self.first[j] as usize / WIDEST_BLOCK;
                let hi = (self.first[(j + WIDEST_BLOCK).min(n)] as usize - 1) / WIDEST_BLOCK;
                // A block the row's blocks do not cover is never passed over.
                row_widest
                    .get(lo..=hi)
                    .and_then(|w| w.iter().copied().max())
                    .unwrap_or(u8::MAX)
            })
            .collect();
    }

    fn shrink_to_fit(&mut self) {
        self.first.shrink_to_fit();
        self.name.shrink_to_fit();
        self.widest.shrink_to_fit();
    }

    /// Heap bytes.
    pub fn heap_bytes(&self) -> usize {
        (self.first.capacity() + self.name.capacity()) * 4 + self.widest.capacity()
    }

    /// Calls `f` with the row index of each bar of `range` that stands for one bar of
    /// the row, in order, passing over every block of bars whose single bars are all
    /// `narrow` ([`for_each_block`]): a frame of tens of thousands of tier bars too
    /// narrow for labels then reads none of their ticks.
    pub fn for_each_single(
        &self,
        range: std::ops::Range<usize>,
        narrow: impl Fn(u64) -> bool,
        mut f: impl FnMut(usize),
    ) {
        for_each_block(&self.widest, range, narrow, |block| {
            for k in block {
                if self.count(k) == 1 {
                    f(self.first(k));
                }
            }
        });
    }

    /// The bars standing for any of the row's bars `members` where those are the row's
    /// bars intersecting some ticks ([`Row::range_between`]): the bars intersecting the
    /// same ticks, as [`range_between`](Self::range_between) finds them, but by two
    /// binary searches through the members' indices alone (no tick of the row read).
    pub fn covering(&self, members: &std::ops::Range<usize>) -> std::ops::Range<usize> {
        let n = self.len();
        // Bar j ends past the ticks' start iff its last member is at or after the first
        // bar that does; it starts before their end iff its first member is before the
        // first bar that does not.
        let lo = partition(n, |j| self.first[j + 1] as usize <= members.start);
        let hi = partition(n, |j| (self.first[j] as usize) < members.end);
        lo..hi.max(lo)
    }

    /// Bars intersecting `[start, end)`: two binary searches through the row's ticks.
    pub fn range_between(&self, row: &Row, start: u64, end: u64) -> std::ops::Range<usize> {
        let n = self.len();
        let lo = partition(n, |j| self.x1(row, j) <= start);
        let hi = partition(n, |j| self.x0(row, j) < end);
        lo..hi.max(lo)
    }

    /// The bar containing `tick`, if any.
    pub fn bar_at(&self, row: &Row, tick: u64) -> Option<usize> {
        let j = partition(self.len(), |j| self.x1(row, j) <= tick);
        (j < self.len() && self.x0(row, j) <= tick).then_some(j)
    }
}

/// The first index in `0..n` for which `pred` is false (`pred` true then false).
pub(crate) fn partition(n: usize, pred: impl Fn(usize) -> bool) -> usize {
    let (mut lo, mut hi) = (0, n);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if pred(mid) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    lo
}

/// The tiers of every row.
#[derive(Clone, Debug, Default)]
pub struct Lod {
    /// `rows[r]` are row r's tiers, finest first (tier 0, the row itself, is implicit).
    pub rows: Vec<Vec<Tier>>,
    /// Per row, its bars' widest width per block of 64 ([`row_widest`]): a label
    /// search passes over the blocks too narrow for a label
    /// ([`for_each_row_bar`](Self::for_each_row_bar)).
    widest: Vec<Vec<u8>>,
}

/// A merged run as the hover and tooltips show it: extent, bars held, dominant name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MergedRun {
    /// Start tick of the first member.
    pub x0: u64,
    /// End tick of the last member.
    pub x1: u64,
    /// Bars of the row it stands for.
    pub count: u32,
    /// Name of its widest member.
    pub name: NameId,
}

/// The tier a frame uses for a row: the row itself, or index `i` of `Lod::rows[r]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TierRef {
    /// The original bars.
    Row,
    /// A merged tier.
    Tier(usize),
}

impl Lod {
    /// Builds the tiers of every row of `layout`, by following merge events (as
    /// [`view_lod`] does for one zoom): a row costs about two passes, where
    /// [`build_by_passes`](Self::build_by_passes) makes one per threshold.
    pub fn build(layout: &Layout) -> Lod {
        view_lod::pyramid(layout)
    }

    /// [`build`](Self::build) by whole-row passes, one per threshold: the same tiers,
    /// bar for bar (its test oracle, and the benchmark's baseline).
    pub fn build_by_passes(layout: &Layout) -> Lod {
        Lod::of_rows(
            layout,
            per_row(layout, |r, _: &mut ()| build_row(r, f64::INFINITY, true)),
        )
    }

    /// The tiers `rows` of `layout`, with its rows' widest bars by block.
    pub(crate) fn of_rows(layout: &Layout, mut rows: Vec<Vec<Tier>>) -> Lod {
        let widest = per_row(layout, |r, _: &mut ()| row_widest(&r.x0, &r.x1));
        for (tiers, w) in rows.iter_mut().zip(&widest) {
            for t in tiers {
                t.note_widest(w);
            }
        }
        Lod { rows, widest }
    }

    /// Calls `f` with each bar of `range` of row `r` (of the layout the tiers were built
    /// from), in order, passing over every block of 64 bars that are all `narrow` (which
    /// must hold for every width below one it holds for).
    pub fn for_each_row_bar(
        &self,
        r: usize,
        range: std::ops::Range<usize>,
        narrow: impl Fn(u64) -> bool,
        mut f: impl FnMut(usize),
    ) {
        let widest = self.widest.get(r).map_or(&[][..], Vec::as_slice);
        for_each_block(widest, range, narrow, |block| block.for_each(&mut f));
    }

    /// Builds, per row, only the tier a view at `ticks_per_px` uses: the one
    /// [`tier_for`](Self::tier_for) of the full [`build`](Self::build) would pick (the
    /// same bars, so the same pixels), or none when that is the row itself. A one-off
    /// frame (an export) needs nothing else, and stops merging at the first threshold
    /// wider than a pixel instead of building the whole pyramid.
    pub fn build_for_view(layout: &Layout, ticks_per_px: f64) -> Lod {
        Lod::of_rows(
            layout,
            per_row(layout, |r, _: &mut ()| build_row(r, ticks_per_px, false)),
        )
    }

    /// Tier `k` of row `row`, if it exists.
    pub fn tier(&self, row: usize, k: usize) -> Option<&Tier> {
        self.rows.get(row)?.get(k)
    }

    /// Bar `j` of tier `k` of row `row` (of `layout`, the tiers' layout), if it exists.
    pub fn run(&self, layout: &Layout, row: usize, k: usize, j: usize) -> Option<MergedRun> {
        let t = self.tier(row, k)?;
        let r = layout.rows.get(row)?;
        (j < t.len()).then(|| MergedRun {
            x0: t.x0(r, j),
            x1: t.x1(r, j),
            count: t.count(j),
            name: t.name[j],
        })
    }

    /// Bars held by all tiers (memory reports).
    pub fn bar_count(&self) -> usize {
        self.rows.iter().flatten().map(Tier::len).sum()
    }

    /// Heap bytes of all tiers and of the rows' widest bars by block.
    pub fn heap_bytes(&self) -> usize {
        self.rows
            .iter()
            .flatten()
            .map(Tier::heap_bytes)
            .sum::<usize>()
            + self.widest.iter().map(Vec::capacity).sum::<usize>()
    }

    /// The merged run (several bars drawn as one) at `tick` in row `row` as a view at
    /// `ticks_per_px` draws it: `(tier, index in the tier)`, or `None` over a single bar
    /// or nothing.
    pub fn merged_run_at(
        &self,
        layout: &Layout,
        row: usize,
        ticks_per_px: f64,
        tick: u64,
    ) -> Option<(usize, usize)> {
        let TierRef::Tier(k) = self.tier_for(row, ticks_per_px) else {
            return None;
        };
        let t = &self.rows[row][k];
        t.bar_at(&layout.rows[row], tick)
            .filter(|&j| t.count(j) > 1)
            .map(|j| (k, j))
    }

    /// The tier of row `row` for a view showing `ticks_per_px` ticks per pixel: the
    /// coarsest one whose merge threshold is at most `FOLD_PX` pixels.
    pub fn tier_for(&self, row: usize, ticks_per_px: f64) -> TierRef {
        let Some(tiers) = self.rows.get(row) else {
            return TierRef::Row;
        };
        let mut best = TierRef::Row;
        for (i, t) in tiers.iter().enumerate() {
            if folds_at(t.shift, ticks_per_px) {
                best = TierRef::Tier(i);
            } else {
                break;
            }
        }
        best
    }
}

/// The bars a merge reads: a row (every bar stands for itself) or a tier of it.
#[derive(Clone, Copy)]
struct Bars<'a> {
    row: &'a Row,
    /// `None`: the row itself.
    tier: Option<&'a Tier>,
}

impl<'a> Bars<'a> {
    fn row(row: &'a Row) -> Self {
        Bars { row, tier: None }
    }

    fn tier(row: &'a Row, t: &'a Tier) -> Self {
        Bars { row, tier: Some(t) }
    }

    fn len(&self) -> usize {
        self.tier.map_or(self.row.len(), Tier::len)
    }

    fn x0(&self, i: usize) -> u64 {
        self.tier.map_or(self.row.x0[i], |t| t.x0(self.row, i))
    }

    fn x1(&self, i: usize) -> u64 {
        self.tier.map_or(self.row.x1[i], |t| t.x1(self.row, i))
    }

    fn name(&self, i: usize) -> NameId {
        self.tier.map_or(self.row.name[i], |t| t.name[i])
    }

    fn first(&self, i: usize) -> u32 {
        self.tier.map_or(i as u32, |t| t.first[i])
    }
}

/// Merges one level into `out` (cleared first, its buffers reused): runs of bars
/// narrower than `2^shift` with gaps narrower than it.
fn merge_into(src: Bars<'_>, shift: u32, out: &mut Tier) {
    let limit = 1u128 << shift;
    out.shift = shift;
    out.clear();
    let n = src.len();
    if n == 0 {
        return;
    }
    // Ticks of the current and next bar, read once each.
    let (mut x0, mut x1) = (src.x0(0), src.x1(0));
    let mut i = 0;
    while i < n {
        let small = |a: u64, b: u64| u128::from(b - a) < limit;
        if !small(x0, x1) {
            out.push(src.first(i), src.name(i));
            i += 1;
            if i < n {
                (x0, x1) = (src.x0(i), src.x1(i));
            }
            continue;
        }
        // A run of small bars with small gaps.
        let start = i;
        let mut best = i;
        let mut best_w = x1 - x0;
        i += 1;
        while i < n {
            let prev_end = x1;
            (x0, x1) = (src.x0(i), src.x1(i));
            if !small(x0, x1) || !small(prev_end, x0) {
                break;
            }
            if x1 - x0 > best_w {
                best = i;
                best_w = x1 - x0;
            }
            i += 1;
        }
        out.push(src.first(start), src.name(best));
    }
    out.seal(src.row.len());
}

/// `f` of every row, in row order: a big layout's rows on all cores, each thread taking
/// the next row not yet taken and keeping its own scratch `S`.
///
/// Rows differ a lot in size (a flame graph's deepest rows can hold a third of its bars),
/// so they are taken largest first: a big row taken last would run alone on one core
/// while the others wait. Taken longest first, the cores end within about one small row
/// of each other, unless one row alone outweighs a core's share.
pub(crate) fn per_row<T: Send + Default + Clone, S: Default>(
    layout: &Layout,
    f: impl Fn(&Row, &mut S) -> T + Sync,
) -> Vec<T> {
    let rows = &layout.rows;
    let threads = crate::par::cores();
    if threads <= 1 || rows.len() < 2 || layout.bar_count() < 1 << 16 {
        let mut scratch = S::default();
        return rows.iter().map(|r| f(r, &mut scratch)).collect();
    }
    let order = largest_first(rows);
    let next = std::sync::atomic::AtomicUsize::new(0);
    let work = || {
        let mut scratch = S::default();
        let mut built = Vec::new();
        loop {
            let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let Some(&r) = order.get(i) else {
                return built;
            };
            built.push((r, f(&rows[r], &mut scratch)));
        }
    };
    let mut out = vec![T::default(); rows.len()];
    std::thread::scope(|s| {
        let others: Vec<_> = (1..threads.min(rows.len()))
            .map(|_| s.spawn(work))
            .collect();
        let mine = work();
        for (r, v) in others
            .into_iter()
            .flat_map(|h| h.join().expect("a LOD thread panicked"))
            .chain(mine)
        {
            out[r] = v;
        }
    });
    out
}

/// Row indices, most bars first (ties in row order).
fn largest_first(rows: &[Row]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..rows.len()).collect();
    order.sort_by_key(|&r| std::cmp::Reverse(rows[r].len()));
    order
}

#[cfg(test)]
fn merge(src: Bars<'_>, shift: u32) -> Tier {
    let mut out = Tier::default();
    merge_into(src, shift, &mut out);
    out
}

/// The tiers of one row, merging at thresholds up to `ticks_per_px` (infinite: all).
/// `keep_all` keeps every tier that halves the last kept one; otherwise only the last
/// such tier within the limit (what [`Lod::tier_for`] picks at `ticks_per_px`).
///
/// The first merge reads the row's columns directly (copying the row into a "tier 0"
/// first would cost as much as the merge), and merges that are not kept recycle their
/// buffers: fresh memory costs a page fault per 4 KiB, a large share of building tiers.
fn build_row(row: &Row, ticks_per_px: f64, keep_all: bool) -> Vec<Tier> {
    let mut tiers: Vec<Tier> = Vec::new();
    if row.len() < 2 {
        return tiers;
    }
    let within = |shift: u32| folds_at(shift, ticks_per_px);
    let mut kept_len = row.len();
    // The last merge result when it was not kept (merging goes on from it), and a
    // buffer to merge into.
    let mut scratch: Option<Tier> = None;
    let mut spare = Tier::default();
    let mut shift = next_shift(Bars::row(row), 0);
    while shift < 64 && within(shift) {
        let mut out = std::mem::take(&mut spare);
        let src = match (&scratch, tiers.last()) {
            (Some(t), _) | (None, Some(t)) => Bars::tier(row, t),
            (None, None) => Bars::row(row),
        };
        merge_into(src, shift, &mut out);
        let len = out.len();
        if len * 2 <= kept_len {
            kept_len = len;
            if !keep_all && let Some(old) = tiers.pop() {
                spare = old;
            }
            // A recycled buffer may be far larger than this tier: a window keeps the
            // tiers, and memory reports count capacity.
            out.shrink_to_fit();
            tiers.push(out);
            if let Some(old) = scratch.take() {
                spare = old;
            }
        } else if let Some(old) = scratch.replace(out) {
            spare = old;
        }
        if len <= 1 {
            break;
        }
        let last = match (&scratch, tiers.last()) {
            (Some(t), _) | (None, Some(t)) => Bars::tier(row, t),
            (None, None) => Bars::row(row),
        };
        shift = next_shift(last, shift);
    }
    tiers
}

/// The next threshold at which merging changes anything: the smallest over neighbours
/// of the bit length of the widest of the two bars and the gap between them (below it
/// no two neighbours are both small and close). Skipped thresholds would produce the
/// same bars, never kept, so the tiers are those of trying every threshold.
fn next_shift(t: Bars<'_>, shift: u32) -> u32 {
    let mut m = u64::MAX;
    if t.len() > 0 {
        let (mut px0, mut px1) = (t.x0(0), t.x1(0));
        for i in 1..t.len() {
            let (x0, x1) = (t.x0(i), t.x1(i));
            m = m.min((px1 - px0).max(x1 - x0).max(x0 - px1));
            (px0, px1) = (x0, x1);
        }
    }
    bits(m).max(shift + 1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::import::{Limits, load_bytes};
    use crate::layout::flame_layout;

    fn row(spans: &[(u64, u64)]) -> Row {
        Row {
            x0: spans.iter().map(|s| s.0).collect(),
            x1: spans.iter().map(|s| s.1).collect(),
            name: (0..spans.len() as u32).collect(),
            node: (0..spans.len() as u32).collect(),
        }
    }

    /// 1000 bars one tick wide but bar 500, nine ticks wide: with bars under five ticks
    /// narrow, only the block of 64 holding bar 500 is read; with none narrow, all are,
    /// in order; a range is cut to its part of each block.
    #[test]
    fn a_rows_blocks_of_narrow_bars_are_passed_over() {
        let spans: Vec<(u64, u64)> = (0..1000u64)
            .map(|i| (10 * i, 10 * i + if i == 500 { 9 } else { 1 }))
            .collect();
        let layout = Layout {
            rows: vec![row(&spans)],
            total_ticks: 10_000,
        };
        let lod = Lod::build(&layout);
        let read = |range: std::ops::Range<usize>, narrow: fn(u64) -> bool| {
            let mut seen = Vec::new();
            lod.for_each_row_bar(0, range, narrow, |i| seen.push(i));
            seen
        };
        assert_eq!(read(0..1000, |w| w < 5), (448..512).collect::<Vec<_>>());
        assert_eq!(read(490..700, |w| w < 5), (490..512).collect::<Vec<_>>());
        assert_eq!(read(0..1000, |_| false), (0..1000).collect::<Vec<_>>());
        assert_eq!(read(0..1000, |w| w < 16), Vec::<usize>::new());
        // A bound of 9 is 15 ticks (bit length 4): a width of 15 is narrow or not by it.
        assert_eq!(read(0..1000, |w| w < 15).len(), 64);
        // Without the rows' blocks (a default Lod) nothing is passed over.
        let mut all = 0;
        Lod::default().for_each_row_bar(0, 0..1000, |w| w < 5, |_| all += 1);
        assert_eq!(all, 1000);
    }

    /// A tier whose first 100 bars each merge two of the row's and whose other 800 stand
    /// for one: its blocks too narrow are passed over, its merged bars never given.
    #[test]
    fn a_tiers_blocks_of_narrow_single_bars_are_passed_over() {
        let spans: Vec<(u64, u64)> = (0..1000u64)
            .map(|i| (10 * i, 10 * i + if i == 500 { 9 } else { 1 }))
            .collect();
        let r = row(&spans);
        let mut t = Tier::with_capacity(1, 900);
        for j in 0..100u32 {
            t.push(2 * j, 0);
        }
        for i in 200..1000u32 {
            t.push(i, 0);
        }
        t.seal(1000);
        t.note_widest(&row_widest(&r.x0, &r.x1));
        let read = |narrow: fn(u64) -> bool| {
            let mut seen = Vec::new();
            t.for_each_single(0..900, narrow, |i| seen.push(i));
            seen
        };
        assert_eq!(read(|_| false), (200..1000).collect::<Vec<_>>());
        let wide = read(|w| w < 5);
        // Bar 500 is the tier's bar 400, in its block 6 (row bars 484..548), whose row
        // blocks 7 and 8 also bound its block 5 (row bars 420..484).
        assert_eq!(wide, (420..548).collect::<Vec<_>>());
        assert!(read(|w| w < 16).is_empty());
    }

    /// Found by fuzzing: two samples at the same time made a zero-duration span at the very
    /// end of its parent; drawn one nanosecond wide, it overlapped the next tree's span on
    /// the same row, and building the tiers of that row underflowed.
    #[test]
    fn zero_duration_span_at_its_parents_end_overlaps_no_bar() {
        use crate::layout::timeline::{BandMode, track_layout};
        let text = b"p 1 1.000001: 1 cycles:\n\t1 a (/x)\n\t2 main (/x)\n\n\
                     p 1 1.000002: 1 cycles:\n\t1 b (/x)\n\t2 main (/x)\n\n\
                     p 1 1.000002: 1 cycles:\n\t1 c (/x)\n\t2 other (/x)\n\n\
                     p 1 1.000003: 1 cycles:\n\t1 c (/x)\n\t2 other (/x)\n";
        let p = load_bytes("t.perf", text, Limits::default()).unwrap();
        let t = p.meta.sampled.as_ref().unwrap().trace();
        let tracks = track_layout(&t.spans, &t.tree, BandMode::PerTrack);
        for r in &tracks.layout.rows {
            for i in 1..r.len() {
                assert!(r.x1[i - 1] <= r.x0[i], "{:?} {:?}", r.x0, r.x1);
            }
        }
        Lod::build(&tracks.layout);
    }

    /// Rows are taken largest first on all cores, and come back in row order with the
    /// tiers the pass-per-threshold oracle gives.
    #[test]
    fn rows_on_all_cores_are_taken_largest_first_and_come_back_in_row_order() {
        // Row sizes out of order, the biggest one last (as a flame graph's deepest rows);
        // bars of mixed widths and gaps, so that tiers merge at several thresholds.
        let sizes = [3usize, 40_000, 7, 1, 0, 25_000, 90_000];
        let mut state = 7u64;
        let mut rows = Vec::new();
        for &n in &sizes {
            let mut at = 0u64;
            let spans: Vec<(u64, u64)> = (0..n)
                .map(|_| {
                    state = state
                        .wrapping_mul(6364136223846793005)
                        .wrapping_add(1442695040888963407);
                    let (w, gap) = (1 + (state >> 60), (state >> 40) % 3);
                    let span = (at + gap, at + gap + w);
                    at = span.1;
                    span
                })
                .collect();
            rows.push(row(&spans));
        }
        assert_eq!(largest_first(&rows), [6, 1, 5, 2, 0, 3, 4]);
        let total_ticks = rows
            .iter()
            .filter_map(|r| r.x1.last())
            .max()
            .copied()
            .unwrap();
        let layout = Layout { rows, total_ticks };
        assert!(
            layout.bar_count() >= 1 << 16,
            "small layouts stay on one thread"
        );
        // Each thread's first row (its scratch says whether it has taken one).
        let firsts = std::sync::Mutex::new(Vec::new());
        let seen = per_row(&layout, |r, started: &mut bool| {
            if !*started {
                *started = true;
                firsts.lock().unwrap().push(r.len());
            }
            r.len()
        });
        assert_eq!(seen, sizes);
        let firsts = firsts.into_inner().unwrap();
        if crate::par::cores() > 1 {
            // Row 6 is taken first, by one of the threads (in depth order: row 0).
            assert!(firsts.contains(&90_000), "{firsts:?}");
        }
        let pyramid = Lod::build(&layout);
        assert_eq!(pyramid.rows, Lod::build_by_passes(&layout).rows);
        assert!(pyramid.rows[6].len() > 2, "{}", pyramid.rows[6].len());
    }

    #[test]
    fn merges_small_neighbours_keeps_wide_bars() {
        // Four 1-tick bars, a wide bar, two 1-tick bars after a big gap.
        let r = row(&[
            (0, 1),
            (1, 2),
            (2, 3),
            (3, 4),
            (4, 100),
            (200, 201),
            (201, 202),
        ]);
        let t = merge(Bars::row(&r), 2);
        let x0: Vec<u64> = (0..t.len()).map(|j| t.x0(&r, j)).collect();
        let x1: Vec<u64> = (0..t.len()).map(|j| t.x1(&r, j)).collect();
        let count: Vec<u32> = (0..t.len()).map(|j| t.count(j)).collect();
        assert_eq!(x0, vec![0, 4, 200]);
        assert_eq!(x1, vec![4, 100, 202]);
        assert_eq!(count, vec![4, 1, 2]);
        assert_eq!(t.first, vec![0, 4, 5, 7]);
        // Merging a tier again reads its ticks through the row.
        let t2 = merge(Bars::tier(&r, &t), 8);
        assert_eq!(t2.first, vec![0, 7]);
        assert_eq!((t2.x0(&r, 0), t2.x1(&r, 0)), (0, 202));
        assert_eq!(t2.count(0), 7);
        // Its name is its widest source bar's, the wide bar.
        assert_eq!(t2.name[0], 4);
        // The dominant name is the widest member's (ties: the first).
        assert_eq!(t.name[0], 0);
    }

    #[test]
    fn gaps_split_runs() {
        let r = row(&[(0, 1), (5, 6), (6, 7)]);
        let t = merge(Bars::row(&r), 2);
        assert_eq!((t.x0(&r, 0), t.x0(&r, 1)), (0, 5));
        assert_eq!((t.count(0), t.count(1)), (1, 2));
        assert_eq!(t.range_between(&r, 1, 6), 1..2);
        assert_eq!(t.range_between(&r, 0, 6), 0..2);
        assert_eq!(t.bar_at(&r, 3), None);
        assert_eq!(t.bar_at(&r, 6), Some(1));
    }

    /// Every tier covers exactly what it merges: each original bar lies inside exactly one
    /// tier bar, tier bars are sorted and disjoint, and counts add up to the row.
    #[test]
    fn tiers_cover_exactly_what_they_merge() {
        let mut text = String::new();
        let mut rng = crate::testing::Lcg::new(7);
        for i in 0..3000 {
            let seed = rng.step();
            let w = 1 + (seed >> 33) % if i % 97 == 0 { 5000 } else { 20 };
            text.push_str(&format!("root;f{i} {w}\n"));
        }
        let p = load_bytes("t", text.as_bytes(), Limits::default()).unwrap();
        let l = flame_layout(&p.tree);
        let lod = Lod::build(&l);
        let r = &l.rows[2];
        let tiers = &lod.rows[2];
        assert!(tiers.len() >= 3, "{} tiers", tiers.len());
        let mut prev_len = r.len();
        for t in tiers {
            assert!(t.len() * 2 <= prev_len, "each kept tier at least halves");
            prev_len = t.len();
            assert_eq!(
                (0..t.len()).map(|j| t.count(j) as usize).sum::<usize>(),
                r.len()
            );
            for i in 0..t.len() {
                assert!(t.x0(r, i) < t.x1(r, i));
                if i > 0 {
                    assert!(t.x0(r, i) >= t.x1(r, i - 1), "disjoint and sorted");
                    assert_eq!(t.members(i - 1).end, t.members(i).start, "a partition");
                }
                let first = t.first(i);
                let last = first + t.count(i) as usize - 1;
                assert_eq!(t.x0(r, i), r.x0[first]);
                assert_eq!(t.x1(r, i), r.x1[last]);
                // The dominant name is a member's.
                assert!(t.members(i).any(|k| r.name[k] == t.name[i]));
            }
            // A tier's range search agrees with a scan.
            for (a, b) in [(0, 10), (100, 5000), (l.total_ticks / 3, l.total_ticks / 2)] {
                let want: Vec<usize> = (0..t.len())
                    .filter(|&j| t.x1(r, j) > a && t.x0(r, j) < b)
                    .collect();
                let got: Vec<usize> = t.range_between(r, a, b).collect();
                assert_eq!(got, want);
            }
            // Found from the row's bars over the same ticks, the same bars (where the
            // row has some there: a draw of no bars is skipped).
            let mut covered = 0;
            for k in 0..400u64 {
                let a = k * k * 7919 % l.total_ticks;
                let b = a + 1 + k * k * k % (l.total_ticks / (1 + k % 40));
                let members = r.range_between(a, b);
                if !members.is_empty() {
                    assert_eq!(t.covering(&members), t.range_between(r, a, b), "{a}..{b}");
                    covered += 1;
                }
            }
            assert!(covered > 300, "{covered}");
        }
        assert!(
            lod.bar_count() <= r.len() + l.rows[1].len(),
            "tiers hold at most the row again"
        );
        // No tier keeps a recycled buffer's spare capacity: 8 bytes a bar, 4 a tier, a
        // byte per 64 bars of each tier and row.
        let all_tiers: usize = lod.rows.iter().map(Vec::len).sum();
        let blocks: usize = lod
            .rows
            .iter()
            .flatten()
            .map(|t| t.len().div_ceil(64))
            .sum::<usize>()
            + l.rows.iter().map(|r| r.len().div_ceil(64)).sum::<usize>();
        assert_eq!(
            lod.heap_bytes(),
            lod.bar_count() * 8 + all_tiers * 4 + blocks
        );
    }

    /// The one tier `build_for_view` keeps is, bar for bar, the tier the full pyramid
    /// gives a frame at the same zoom; none where the frame draws the row itself.
    #[test]
    fn view_tiers_equal_what_the_full_pyramid_picks() {
        let mut text = String::new();
        let mut rng = crate::testing::Lcg::new(11);
        for i in 0..5000 {
            let seed = rng.step();
            let w = 1 + (seed >> 33) % if i % 89 == 0 { 9000 } else { 30 };
            let depth = 1 + (seed >> 20) % 4;
            let stack: Vec<String> = (0..depth).map(|d| format!("f{}", (i >> d) % 37)).collect();
            text.push_str(&format!("root;{} {w}\n", stack.join(";")));
        }
        let p = load_bytes("t", text.as_bytes(), Limits::default()).unwrap();
        let l = flame_layout(&p.tree);
        let full = Lod::build(&l);
        let mut tiers_seen = 0;
        for tpp in [0.5, 1.0, 3.0, 17.0, 250.0, 4096.0, 1e5, 1e9] {
            let view = Lod::build_for_view(&l, tpp);
            for r in 0..l.rows.len() {
                match full.tier_for(r, tpp) {
                    TierRef::Row => {
                        assert_eq!(view.tier_for(r, tpp), TierRef::Row, "row {r} at {tpp}");
                        assert!(view.rows[r].is_empty());
                    }
                    TierRef::Tier(k) => {
                        assert_eq!(view.tier_for(r, tpp), TierRef::Tier(0), "row {r} at {tpp}");
                        assert_eq!(view.rows[r], vec![full.rows[r][k].clone()]);
                        tiers_seen += 1;
                    }
                }
            }
        }
        assert!(tiers_seen > 10, "only {tiers_seen} rows used a tier");
    }

    #[test]
    fn a_frame_gets_at_most_about_one_bar_per_pixel() {
        let mut text = String::new();
        for i in 0..200_000 {
            text.push_str(&format!("root;f{} {}\n", i, 1 + i % 7));
        }
        let p = load_bytes("t", text.as_bytes(), Limits::default()).unwrap();
        let l = flame_layout(&p.tree);
        let lod = Lod::build(&l);
        let width_px = 1000.0;
        let tpp = l.total_ticks as f64 / width_px;
        match lod.tier_for(2, tpp) {
            TierRef::Tier(i) => {
                let t = &lod.rows[2][i];
                let vis = t.range_between(&l.rows[2], 0, l.total_ticks);
                assert!(
                    vis.len() as f64 <= 4.0 * width_px / FOLD_PX + 1.0,
                    "{} bars for {width_px} px",
                    vis.len()
                );
            }
            TierRef::Row => panic!("a 200 000-bar row at 1000 px needs a tier"),
        }
        // Zoomed in to less than a tick per pixel: the row itself.
        assert_eq!(lod.tier_for(2, 0.5), TierRef::Row);
    }
}
