//! Level of detail: per row, a pyramid of tiers that merge sub-pixel neighbours.
//!
//! Tier `k` of a row merges every maximal run of consecutive bars that are each narrower
//! than 2^k ticks and separated by gaps narrower than 2^k ticks into one bar spanning the
//! run, carrying how many bars it holds and the name of its widest member (its dominant
//! name); wider bars stay as they are. Every output bar is then either at least 2^k wide or
//! followed by a gap of at least 2^k, so over a window of W ticks a tier has at most
//! about 2·W/2^k bars. A frame showing T ticks per pixel uses the coarsest tier with
//! 2^k ≤ T: at most about two bars per pixel of the row, whatever the profile's size.
//!
//! Tiers are built bottom-up in one linear pass each, and one is kept only when it has at
//! most half the bars of the last kept one, so all tiers together hold at most as many
//! bars as the row itself. Tier 0 is the row (not copied). Merged bars never replace the
//! rows for picking: hover and click still binary-search the exact bars.
//!
//! A window keeps the whole pyramid ([`Lod::build`]) to zoom freely. An export draws one
//! frame at one zoom, so [`Lod::build_for_view`] stops merging at that zoom and keeps only
//! the tier the frame uses: the same bars, for a fraction of the memory.

use crate::layout::{Layout, Row};
use crate::model::NameId;

/// One coarser version of a row.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Tier {
    /// Bars narrower than 2^shift ticks (with small gaps) are merged here.
    pub shift: u32,
    /// Start ticks, sorted.
    pub x0: Vec<u64>,
    /// End ticks, sorted.
    pub x1: Vec<u64>,
    /// Dominant name (of the widest member).
    pub name: Vec<NameId>,
    /// Bars of the row this bar stands for (1: an original bar).
    pub count: Vec<u32>,
    /// Index in the row of the first bar it stands for.
    pub first: Vec<u32>,
}

impl Tier {
    /// Number of bars.
    pub fn len(&self) -> usize {
        self.x0.len()
    }

    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.x0.is_empty()
    }

    fn shrink_to_fit(&mut self) {
        self.x0.shrink_to_fit();
        self.x1.shrink_to_fit();
        self.name.shrink_to_fit();
        self.count.shrink_to_fit();
        self.first.shrink_to_fit();
    }

    /// Bars intersecting `[start, end)`.
    pub fn range_between(&self, start: u64, end: u64) -> std::ops::Range<usize> {
        crate::layout::range_between(&self.x0, &self.x1, start, end)
    }

    /// The bar containing `tick`, if any.
    pub fn bar_at(&self, tick: u64) -> Option<usize> {
        crate::layout::bar_at(&self.x0, &self.x1, tick)
    }
}

/// The tiers of every row.
#[derive(Clone, Debug, Default)]
pub struct Lod {
    /// `rows[r]` are row r's tiers, finest first (tier 0, the row itself, is implicit).
    pub rows: Vec<Vec<Tier>>,
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
    /// Builds the tiers of every row of `layout`.
    pub fn build(layout: &Layout) -> Lod {
        Lod {
            rows: layout
                .rows
                .iter()
                .map(|r| build_row(r, f64::INFINITY, true))
                .collect(),
        }
    }

    /// Builds, per row, only the tier a view at `ticks_per_px` uses: the one
    /// [`tier_for`](Self::tier_for) of the full [`build`](Self::build) would pick (the
    /// same bars, so the same pixels), or none when that is the row itself. A one-off
    /// frame (an export) needs nothing else, and stops merging at the first threshold
    /// wider than a pixel instead of building the whole pyramid.
    pub fn build_for_view(layout: &Layout, ticks_per_px: f64) -> Lod {
        Lod {
            rows: layout
                .rows
                .iter()
                .map(|r| build_row(r, ticks_per_px, false))
                .collect(),
        }
    }

    /// Tier `k` of row `row`, if it exists.
    pub fn tier(&self, row: usize, k: usize) -> Option<&Tier> {
        self.rows.get(row)?.get(k)
    }

    /// Bars held by all tiers (memory reports).
    pub fn bar_count(&self) -> usize {
        self.rows.iter().flatten().map(Tier::len).sum()
    }

    /// Heap bytes of all tiers.
    pub fn heap_bytes(&self) -> usize {
        self.rows
            .iter()
            .flatten()
            .map(|t| {
                t.x0.capacity() * 8
                    + t.x1.capacity() * 8
                    + (t.name.capacity() + t.count.capacity() + t.first.capacity()) * 4
            })
            .sum()
    }

    /// The merged run (several bars drawn as one) at `tick` in row `row` as a view at
    /// `ticks_per_px` draws it: `(tier, index in the tier)`, or `None` over a single bar
    /// or nothing.
    pub fn merged_run_at(
        &self,
        row: usize,
        ticks_per_px: f64,
        tick: u64,
    ) -> Option<(usize, usize)> {
        let TierRef::Tier(k) = self.tier_for(row, ticks_per_px) else {
            return None;
        };
        let t = &self.rows[row][k];
        t.bar_at(tick).filter(|&j| t.count[j] > 1).map(|j| (k, j))
    }

    /// The tier of row `row` for a view showing `ticks_per_px` ticks per pixel: the
    /// coarsest one whose merge threshold is at most a pixel.
    pub fn tier_for(&self, row: usize, ticks_per_px: f64) -> TierRef {
        let Some(tiers) = self.rows.get(row) else {
            return TierRef::Row;
        };
        let mut best = TierRef::Row;
        for (i, t) in tiers.iter().enumerate() {
            if (1u128 << t.shift) as f64 <= ticks_per_px {
                best = TierRef::Tier(i);
            } else {
                break;
            }
        }
        best
    }
}

/// The bars a merge reads: a row (every bar stands for itself) or a tier.
#[derive(Clone, Copy)]
struct Bars<'a> {
    x0: &'a [u64],
    x1: &'a [u64],
    name: &'a [NameId],
    /// `None`: a row, each bar standing for one bar, itself.
    merged: Option<(&'a [u32], &'a [u32])>,
}

impl<'a> Bars<'a> {
    fn row(r: &'a Row) -> Self {
        Bars {
            x0: &r.x0,
            x1: &r.x1,
            name: &r.name,
            merged: None,
        }
    }

    fn tier(t: &'a Tier) -> Self {
        Bars {
            x0: &t.x0,
            x1: &t.x1,
            name: &t.name,
            merged: Some((&t.count, &t.first)),
        }
    }

    fn len(&self) -> usize {
        self.x0.len()
    }

    fn count(&self, i: usize) -> u32 {
        self.merged.map_or(1, |(c, _)| c[i])
    }

    fn first(&self, i: usize) -> u32 {
        self.merged.map_or(i as u32, |(_, f)| f[i])
    }
}

/// Merges one level into `out` (cleared first, its buffers reused): runs of bars
/// narrower than `2^shift` with gaps narrower than it.
fn merge_into(src: Bars<'_>, shift: u32, out: &mut Tier) {
    let limit = 1u128 << shift;
    let small = |i: usize| u128::from(src.x1[i] - src.x0[i]) < limit;
    out.shift = shift;
    out.x0.clear();
    out.x1.clear();
    out.name.clear();
    out.count.clear();
    out.first.clear();
    let n = src.len();
    let mut i = 0;
    while i < n {
        if !small(i) {
            out.x0.push(src.x0[i]);
            out.x1.push(src.x1[i]);
            out.name.push(src.name[i]);
            out.count.push(src.count(i));
            out.first.push(src.first(i));
            i += 1;
            continue;
        }
        // A run of small bars with small gaps.
        let start = i;
        let mut best = i;
        let mut count = src.count(i);
        while i + 1 < n && small(i + 1) && u128::from(src.x0[i + 1] - src.x1[i]) < limit {
            i += 1;
            count = count.saturating_add(src.count(i));
            if src.x1[i] - src.x0[i] > src.x1[best] - src.x0[best] {
                best = i;
            }
        }
        out.x0.push(src.x0[start]);
        out.x1.push(src.x1[i]);
        out.name.push(src.name[best]);
        out.count.push(count);
        out.first.push(src.first(start));
        i += 1;
    }
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
    let within = |shift: u32| (1u128 << shift) as f64 <= ticks_per_px;
    let mut kept_len = row.len();
    // The last merge result when it was not kept (merging goes on from it), and a
    // buffer to merge into.
    let mut scratch: Option<Tier> = None;
    let mut spare = Tier::default();
    let mut shift = next_shift(Bars::row(row), 0);
    while shift < 64 && within(shift) {
        let mut out = std::mem::take(&mut spare);
        let src = match (&scratch, tiers.last()) {
            (Some(t), _) | (None, Some(t)) => Bars::tier(t),
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
            (Some(t), _) | (None, Some(t)) => Bars::tier(t),
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
    for i in 1..t.len() {
        let w0 = t.x1[i - 1] - t.x0[i - 1];
        let w1 = t.x1[i] - t.x0[i];
        let gap = t.x0[i] - t.x1[i - 1];
        m = m.min(w0.max(w1).max(gap));
    }
    (64 - m.leading_zeros()).max(shift + 1)
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
        let base = Tier {
            shift: 0,
            x0: r.x0.clone(),
            x1: r.x1.clone(),
            name: r.name.clone(),
            count: vec![1; 7],
            first: (0..7).collect(),
        };
        let t = merge(Bars::tier(&base), 2);
        assert_eq!(t.x0, vec![0, 4, 200]);
        assert_eq!(t.x1, vec![4, 100, 202]);
        assert_eq!(t.count, vec![4, 1, 2]);
        assert_eq!(t.first, vec![0, 4, 5]);
        // The dominant name is the widest member's (ties: the first).
        assert_eq!(t.name[0], 0);
    }

    #[test]
    fn gaps_split_runs() {
        let r = row(&[(0, 1), (5, 6), (6, 7)]);
        let base = Tier {
            shift: 0,
            x0: r.x0.clone(),
            x1: r.x1.clone(),
            name: r.name.clone(),
            count: vec![1; 3],
            first: vec![0, 1, 2],
        };
        let t = merge(Bars::tier(&base), 2);
        assert_eq!(t.x0, vec![0, 5]);
        assert_eq!(t.count, vec![1, 2]);
    }

    /// Every tier covers exactly what it merges: each original bar lies inside exactly one
    /// tier bar, tier bars are sorted and disjoint, and counts add up to the row.
    #[test]
    fn tiers_cover_exactly_what_they_merge() {
        let mut text = String::new();
        let mut seed = 7u64;
        for i in 0..3000 {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
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
            assert_eq!(t.count.iter().map(|&c| c as usize).sum::<usize>(), r.len());
            for i in 0..t.len() {
                assert!(t.x0[i] < t.x1[i]);
                if i > 0 {
                    assert!(t.x0[i] >= t.x1[i - 1], "disjoint and sorted");
                }
                let first = t.first[i] as usize;
                let last = first + t.count[i] as usize - 1;
                assert_eq!(t.x0[i], r.x0[first]);
                assert_eq!(t.x1[i], r.x1[last]);
            }
        }
        assert!(
            lod.bar_count() <= r.len() + l.rows[1].len(),
            "tiers hold at most the row again"
        );
        // No tier keeps a recycled buffer's spare capacity.
        assert_eq!(lod.heap_bytes(), lod.bar_count() * 28);
    }

    /// The one tier `build_for_view` keeps is, bar for bar, the tier the full pyramid
    /// gives a frame at the same zoom; none where the frame draws the row itself.
    #[test]
    fn view_tiers_equal_what_the_full_pyramid_picks() {
        let mut text = String::new();
        let mut seed = 11u64;
        for i in 0..5000 {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
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
    fn a_frame_gets_about_two_bars_per_pixel() {
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
                let vis = t.range_between(0, l.total_ticks);
                assert!(
                    vis.len() <= 2 * width_px as usize + 1,
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
