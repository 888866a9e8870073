//! Level-of-detail tiers built by merge events instead of whole-row passes: the one
//! tier per row an export's frame draws, and the whole pyramid a window keeps.
//!
//! [`Lod::build_for_view`] finds a row's tier by merging the whole row again at every
//! threshold `2^k` up to the frame's ticks per pixel (each pass merges the runs of
//! neighbours that are both narrower than `2^k` with a gap narrower than `2^k`), keeping
//! the last result that halves the previous kept one. A deep row of a large profile
//! needs about ten such passes, each copying nearly the whole row, because at the first
//! thresholds only a few neighbours merge.
//!
//! [`view_lod`] gives the same tiers, bar for bar, by following only what changes. Each
//! pair of neighbours merges at the first threshold `k` with `2^k` above both widths and
//! the gap: its level, the largest of their bit lengths (at least 1, the first threshold
//! a pass merges at). Pairs wait in buckets by level;
//! a pass at threshold `k` takes the pairs of levels up to `k` (all of them neighbours
//! before the pass, as in a whole-row pass), merges each run they chain into one bar (its
//! name the widest member's, the first one on a tie), and files the pairs the new bars
//! form with their neighbours for later passes. A row is a linked list of runs of
//! consecutive bars, so a bar is known by its first bar's index, its end by the next
//! run's. A pass costs what it merges, a kept tier what it holds: about two passes over
//! the row in all, instead of one per threshold. The whole pyramid ([`Lod::build`]) is
//! the same walk with no threshold limit, keeping a snapshot of the runs at every pass
//! that halves the last kept tier (all snapshots together hold at most the row's count).
//!
//! The walk works on a [`Part`]: the runs of a slice of the row, which merge only within
//! it. A row is one part; a row of 256 Ki bars or more is first cut into segments that
//! merge (on one thread or on all cores) up to the threshold their cuts allow
//! ([`super::segments`]), and their state, linked end to end, is the whole row's part
//! from there on.

use super::{Lod, Tier, bits};
use crate::layout::{Layout, Row};
use crate::model::NameId;
use crate::par::front;

/// The tiers [`Lod::build_for_view`] builds for `ticks_per_px`, with the same bars;
/// large layouts on all cores, a row per thread at a time (rows of millions of bars in
/// segments: [`super::segments`]).
pub fn view_lod(layout: &Layout, ticks_per_px: f64) -> Lod {
    Lod::of_rows(layout, rows(layout, ticks_per_px, false))
}

/// The whole pyramid (every tier that halves the last kept one; [`Lod::build`]), with
/// the bars [`Lod::build_by_passes`] gives, by the same merge events.
pub(super) fn pyramid(layout: &Layout) -> Lod {
    Lod::of_rows(layout, rows(layout, f64::INFINITY, true))
}

/// Every row's tiers, a row per thread at a time (those of [`super::segments::SEGMENTED`]
/// bars or more in segments on that thread, for the caches); then each row holding more
/// than a core's share of all bars, which alone would outlast the others on one core, in
/// segments on all threads. A big row's serial steps (its cuts, the tiers' assembly, its
/// last passes over the whole row) leave the other cores idle when the big rows run one
/// after another on all of them: the 1 GB W1 pprof's LOD kept two cores a third idle so.
fn rows(layout: &Layout, ticks_per_px: f64, keep_all: bool) -> Vec<Vec<Tier>> {
    let threads = crate::par::cores();
    let total = layout.bar_count();
    let hog = |row: &Row| {
        threads > 1 && row.len() >= super::segments::SEGMENTED && row.len() * threads > total
    };
    let mut rows = super::per_row(layout, |row, scratch: &mut Scratch| {
        if hog(row) {
            Vec::new()
        } else if row.len() >= super::segments::SEGMENTED {
            super::segments::segmented_row(row, ticks_per_px, keep_all, scratch, 1)
        } else {
            view_row(row, ticks_per_px, keep_all, scratch)
        }
    });
    let mut scratch = Scratch::default();
    for (r, row) in layout.rows.iter().enumerate() {
        if hog(row) {
            rows[r] =
                super::segments::segmented_row(row, ticks_per_px, keep_all, &mut scratch, threads);
        }
    }
    rows
}

/// Buffers a thread reuses from row to row.
#[derive(Default)]
pub(super) struct Scratch {
    /// Per run (by its first bar): the first bar of the next run (`n` after the last).
    pub(super) next: Vec<u32>,
    /// Per run: the first bar of the previous run.
    pub(super) prev: Vec<u32>,
    /// Per run: its name (the widest member's).
    pub(super) name: Vec<NameId>,
    /// Per run: whether it merges with the next run in the current pass.
    pub(super) joins: Vec<bool>,
    /// Per run: the level of the pair it forms with the next run, as last filed.
    pub(super) filed: Vec<u8>,
    /// Per bar, for a segment that records its merges: the threshold that absorbed it
    /// into the run before it (`u8::MAX`: none yet).
    pub(super) absorbed: Vec<u8>,
    pub(super) work: Work,
}

impl Scratch {
    /// Room for a row of `n` bars (contents unspecified: a [`Part`] sets its own).
    pub(super) fn size(&mut self, n: usize) {
        self.next.resize(n, 0);
        self.prev.resize(n, 0);
        self.name.resize(n, 0);
        self.joins.resize(n, false);
        self.filed.resize(n, 0);
    }

    /// The runs of the whole row, `0..n`.
    pub(super) fn whole<'a>(&'a mut self, row: &'a Row, top: u32) -> (Part<'a>, &'a mut Work) {
        let n = row.len();
        self.size(n);
        let part = Part {
            x0: &row.x0,
            x1: &row.x1,
            lo: 0,
            hi: n as u32,
            next: &mut self.next[..n],
            prev: &mut self.prev[..n],
            name: &mut self.name[..n],
            joins: &mut self.joins[..n],
            filed: &mut self.filed[..n],
            record: None,
            top,
            last: n as u32 - 1,
            len: n,
        };
        (part, &mut self.work)
    }
}

/// What a segment's passes changed: enough to list its runs after any of them.
pub(super) struct Record<'a> {
    /// Per bar: the threshold that absorbed it (`u8::MAX`: none).
    absorbed: &'a mut [u8],
    /// Each run that took another name, and the name, in the order of the passes.
    log: Vec<(u32, NameId)>,
    /// The log's length after each threshold (from 1).
    log_at: Vec<u32>,
}

/// A thread's pairs waiting by level, and the pairs a pass takes.
#[derive(Default)]
pub(super) struct Work {
    /// Pairs (by their left run) waiting by level; stale entries are skipped.
    buckets: Vec<Vec<u32>>,
    /// The left runs of the pairs merging in the current pass.
    taken: Vec<u32>,
    /// Names of a segment's runs as they were at a threshold (`Part::recorded_runs`).
    pub(super) names: Vec<NameId>,
}

impl Work {
    fn clear(&mut self) {
        self.buckets.resize_with(65, Vec::new);
        for b in &mut self.buckets {
            b.clear();
        }
    }
}

/// Parts of at least this many bars take each pass's pairs in the row's order (their
/// columns, ~30 bytes a bar, no longer fit a core's second-level cache); smaller ones
/// in the order they were filed, which costs them less than the sort.
const SORTED_PASSES: usize = 1 << 17;

/// The level at which two neighbours (widths `wa`, `wb`, `gap` between them) merge: the
/// first threshold `2^k` above all three; at least 1, the first threshold a pass merges
/// at (two empty bars without a gap merge there too).
pub(super) fn pair_level(wa: u64, wb: u64, gap: u64) -> u32 {
    bits(wa.max(wb).max(gap)).max(1)
}

/// The highest threshold a frame at `ticks_per_px` merges at (0: none).
pub(super) fn top_level(ticks_per_px: f64) -> u32 {
    (0..64u32)
        .take_while(|&k| crate::lod::folds_at(k, ticks_per_px))
        .last()
        .unwrap_or(0)
}

/// The runs of bars `lo..hi` of a row, as a linked list over the bars (a run is known by
/// its first bar). The columns are those bars' slices of a row-long scratch, indexed by
/// bar minus `lo`, holding row-wide bar indices; `hi` ends the list. A part merges only
/// within itself: the pairs across its ends are the caller's (a segment's neighbours),
/// so parts of one row can merge on several threads at once.
pub(super) struct Part<'a> {
    x0: &'a [u64],
    x1: &'a [u64],
    pub(super) lo: u32,
    pub(super) hi: u32,
    next: &'a mut [u32],
    prev: &'a mut [u32],
    name: &'a mut [NameId],
    joins: &'a mut [bool],
    filed: &'a mut [u8],
    /// What a segment's passes changed, to give its runs at any threshold afterwards.
    pub(super) record: Option<Record<'a>>,
    /// Pairs above this level never merge (the frame's highest threshold): not filed.
    top: u32,
    /// The first bar of the last run.
    pub(super) last: u32,
    /// Runs.
    pub(super) len: usize,
}

impl<'a> Part<'a> {
    /// Splits the scratch columns of a row of `n` bars into parts starting at `starts`
    /// (the first 0, increasing, each below `n`).
    pub(super) fn split(
        s: &'a mut Scratch,
        row: &'a Row,
        starts: &[u32],
        top: u32,
    ) -> Vec<Part<'a>> {
        let n = row.len();
        s.size(n);
        s.absorbed.resize(n, u8::MAX);
        let mut absorbed = &mut s.absorbed[..n];
        let (mut next, mut prev, mut name, mut joins, mut filed) = (
            &mut s.next[..n],
            &mut s.prev[..n],
            &mut s.name[..n],
            &mut s.joins[..n],
            &mut s.filed[..n],
        );
        let mut parts = Vec::with_capacity(starts.len());
        for (i, &lo) in starts.iter().enumerate() {
            let hi = starts.get(i + 1).map_or(n as u32, |&h| h);
            let k = (hi - lo) as usize;
            parts.push(Part {
                x0: &row.x0,
                x1: &row.x1,
                lo,
                hi,
                next: front(&mut next, k),
                prev: front(&mut prev, k),
                name: front(&mut name, k),
                joins: front(&mut joins, k),
                filed: front(&mut filed, k),
                record: Some(Record {
                    absorbed: front(&mut absorbed, k),
                    log: Vec::new(),
                    log_at: Vec::new(),
                }),
                top,
                last: hi - 1,
                len: k,
            });
        }
        parts
    }

    #[inline]
    fn at(&self, a: u32) -> usize {
        (a - self.lo) as usize
    }

    /// Every bar a run of its own (`names`: the row's names).
    pub(super) fn init(&mut self, names: &[NameId]) {
        let lo = self.lo;
        for (i, v) in self.next.iter_mut().enumerate() {
            *v = lo + i as u32 + 1;
        }
        for (i, v) in self.prev.iter_mut().enumerate() {
            *v = (lo + i as u32).wrapping_sub(1);
        }
        self.name
            .copy_from_slice(&names[lo as usize..self.hi as usize]);
        self.joins.fill(false);
        self.filed.fill(u8::MAX);
        if let Some(r) = &mut self.record {
            r.absorbed.fill(u8::MAX);
            r.log.clear();
            r.log_at.clear();
        }
        self.last = self.hi - 1;
        self.len = (self.hi - lo) as usize;
    }

    /// The level of the pair (run `a`, the run after it, within the part).
    #[inline]
    fn level(&self, a: u32) -> u32 {
        let (x0, x1) = (self.x0, self.x1);
        let b = self.next[self.at(a)];
        let c = self.next[self.at(b)];
        let wa = x1[b as usize - 1] - x0[a as usize];
        let wb = x1[c as usize - 1] - x0[b as usize];
        let gap = x0[b as usize] - x1[b as usize - 1];
        pair_level(wa, wb, gap)
    }

    /// Files the pair (run `a`, the run after it) at its level, or marks it as never
    /// merging within the frame's thresholds.
    #[inline]
    fn file(&mut self, a: u32, w: &mut Work) {
        let l = self.level(a);
        let i = self.at(a);
        if l <= self.top {
            self.filed[i] = l as u8;
            w.buckets[l as usize].push(a);
        } else {
            self.filed[i] = u8::MAX;
        }
    }

    /// Files every pair of neighbouring bars (after [`init`](Self::init)).
    pub(super) fn file_bars(&mut self, w: &mut Work) {
        w.clear();
        for a in self.lo..self.hi - 1 {
            self.file(a, w);
        }
    }

    /// Files every pair of neighbouring runs, whatever was filed before.
    pub(super) fn file_runs(&mut self, w: &mut Work) {
        w.clear();
        let mut a = self.lo;
        while a < self.hi {
            let b = self.next[self.at(a)];
            if b < self.hi {
                self.file(a, w);
            } else {
                self.filed[self.at(a)] = u8::MAX;
            }
            a = b;
        }
    }

    /// Whether the pair filed at level `l` with left run `a` still holds: the run still
    /// exists and the pair was last filed at that level (a run's pair is filed again
    /// whenever it changes).
    #[inline]
    fn holds(&self, a: u32, l: usize) -> bool {
        let i = self.at(a);
        (a == self.lo || self.prev[i] != u32::MAX) && self.filed[i] as usize == l
    }

    /// The lowest level with a pair that holds.
    pub(super) fn lowest(&self, w: &mut Work) -> Option<u32> {
        for l in 1..w.buckets.len() {
            while let Some(&a) = w.buckets[l].last() {
                if self.holds(a, l) {
                    return Some(l as u32);
                }
                w.buckets[l].pop();
            }
        }
        None
    }

    /// Merges every pair of the current state at or below `shift`: each run of joined
    /// pairs becomes one bar (its name the widest member's, the first one on a tie), and
    /// the pairs the new bars form are filed for later thresholds.
    pub(super) fn pass(&mut self, shift: u32, w: &mut Work) {
        w.taken.clear();
        for l in 1..=shift as usize {
            while let Some(a) = w.buckets[l].pop() {
                if self.holds(a, l) && !self.joins[self.at(a)] {
                    let i = self.at(a);
                    self.joins[i] = true;
                    w.taken.push(a);
                }
            }
        }
        if w.taken.is_empty() {
            if let Some(r) = &mut self.record {
                r.log_at.push(r.log.len() as u32);
            }
            return;
        }
        self.len -= w.taken.len();
        // In the row's order, where the part's columns outgrow the caches: the pairs a
        // pass takes are spread over the part, and following them in the order they
        // were filed reads its columns at random.
        if (self.hi - self.lo) as usize >= SORTED_PASSES {
            w.taken.sort();
        }
        let (x0, x1, lo, hi) = (self.x0, self.x1, self.lo, self.hi);
        // Each run of joined pairs becomes one bar, starting at a run whose left
        // neighbour does not join it.
        let mut heads = std::mem::take(&mut w.taken);
        heads.retain(|&a| a == lo || !self.joins[self.at(self.prev[self.at(a)])]);
        for &head in &heads {
            let mut best = head;
            let mut best_w = x1[self.next[self.at(head)] as usize - 1] - x0[head as usize];
            let mut cur = head;
            while self.joins[self.at(cur)] {
                let c = self.at(cur);
                self.joins[c] = false;
                let b = self.next[c];
                // `b` is absorbed: no run starts there any more.
                let bi = self.at(b);
                self.prev[bi] = u32::MAX;
                if let Some(r) = &mut self.record {
                    r.absorbed[bi] = shift as u8;
                }
                let wb = x1[self.next[bi] as usize - 1] - x0[b as usize];
                if wb > best_w {
                    best = b;
                    best_w = wb;
                }
                cur = b;
            }
            let after = self.next[self.at(cur)];
            let h = self.at(head);
            self.next[h] = after;
            if after < hi {
                let ai = self.at(after);
                self.prev[ai] = head;
            } else {
                self.last = head;
            }
            let name = self.name[self.at(best)];
            if let Some(r) = &mut self.record
                && name != self.name[h]
            {
                r.log.push((head, name));
            }
            self.name[h] = name;
        }
        // The pairs the new bars form, for later thresholds (a bar that reached the end
        // of the part has no pair on its right any more).
        for &head in &heads {
            let h = self.at(head);
            let after = self.next[h];
            if after >= hi {
                self.filed[h] = u8::MAX;
            }
            let left = (head > lo).then(|| self.prev[h]);
            let right = (after < hi).then_some(head);
            for a in left.into_iter().chain(right) {
                self.file(a, w);
            }
        }
        w.taken = heads;
        if let Some(r) = &mut self.record {
            r.log_at.push(r.log.len() as u32);
        }
    }

    /// Links the segment starting at `lo` after the run starting at `last` (the end of
    /// the segment before it): `lo` is a run's first bar in the whole row again.
    pub(super) fn link(&mut self, lo: u32, last: u32) {
        let (l, p) = (self.at(lo), self.at(last));
        debug_assert_eq!(self.next[p], lo);
        self.prev[l] = last;
    }

    /// The runs this segment had after each threshold in `levels` (increasing, each at
    /// most the last threshold passed), from its record: the bars no threshold up to it
    /// absorbed, named as the log had named them by then. `names` is a buffer.
    pub(super) fn recorded_runs(
        &self,
        row_names: &[NameId],
        levels: &[u32],
        names: &mut Vec<NameId>,
    ) -> Vec<Tier> {
        let Some(r) = &self.record else {
            return Vec::new();
        };
        names.clear();
        names.extend_from_slice(&row_names[self.lo as usize..self.hi as usize]);
        let mut runs: Vec<u32> = Vec::new();
        let mut first = true;
        let mut logged = 0;
        let mut out = Vec::with_capacity(levels.len());
        for &k in levels {
            let upto = r.log_at[k as usize - 1] as usize;
            for &(head, name) in &r.log[logged..upto] {
                names[(head - self.lo) as usize] = name;
            }
            logged = upto;
            if first {
                runs.extend(
                    (self.lo..self.hi)
                        .filter(|&b| u32::from(r.absorbed[(b - self.lo) as usize]) > k),
                );
                first = false;
            } else {
                runs.retain(|&b| u32::from(r.absorbed[(b - self.lo) as usize]) > k);
            }
            let mut t = Tier::with_capacity(k, runs.len());
            for &b in &runs {
                t.push(b, names[(b - self.lo) as usize]);
            }
            out.push(t);
        }
        out
    }

    /// Appends the current runs to `t` (first bars and names).
    pub(super) fn snapshot_into(&self, t: &mut Tier) {
        let mut a = self.lo;
        while a < self.hi {
            let i = self.at(a);
            t.push(a, self.name[i]);
            a = self.next[i];
        }
    }
}

/// Passes from the threshold after `shift` on, as long as the frame's thresholds
/// allow and more than one run is left, keeping each tier that has at most half the
/// runs of the last kept one (`kept_len` runs; all of them with `keep_all`, otherwise
/// only the last): the rest of [`view_row`] from any state.
pub(super) fn continue_passes(
    part: &mut Part,
    w: &mut Work,
    mut shift: u32,
    ticks_per_px: f64,
    keep_all: bool,
    mut kept_len: usize,
    kept: &mut Vec<Tier>,
) {
    let n = part.hi as usize;
    while part.len > 1 {
        // The next threshold that merges anything: the lowest level with a pair that
        // holds, and above the last threshold.
        let Some(lowest) = part.lowest(w) else {
            break;
        };
        shift = lowest.max(shift + 1);
        if shift >= 64 || !crate::lod::folds_at(shift, ticks_per_px) {
            break;
        }
        part.pass(shift, w);
        if part.len * 2 <= kept_len {
            kept_len = part.len;
            if !keep_all {
                kept.clear();
            }
            let mut t = Tier::with_capacity(shift, part.len);
            part.snapshot_into(&mut t);
            t.seal(n);
            kept.push(t);
        }
    }
}

/// One row's tier (or none, when the frame draws the row itself), as `build_row` of
/// `crate::lod` gives it; with `keep_all`, every tier it keeps, as for the whole pyramid.
pub(super) fn view_row(row: &Row, ticks_per_px: f64, keep_all: bool, s: &mut Scratch) -> Vec<Tier> {
    let n = row.len();
    if n < 2 {
        return Vec::new();
    }
    let (mut part, w) = s.whole(row, top_level(ticks_per_px));
    part.init(&row.name);
    part.file_bars(w);
    let mut kept = Vec::new();
    continue_passes(&mut part, w, 0, ticks_per_px, keep_all, n, &mut kept);
    kept
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::import::{Limits, load_bytes};
    use crate::layout::flame_layout;

    use crate::generator::Rng;

    /// Random rows: runs of narrow bars with narrow or wide gaps, some wide bars, widths
    /// and gaps spread over many bit lengths, ties in width, a few names.
    pub(in crate::lod) fn random_row(rng: &mut Rng, n: usize) -> Row {
        let mut row = Row::default();
        let mut x = rng.next() % 50;
        for i in 0..n {
            let r = rng.next();
            let width = match r % 7 {
                0 => 1 + (r >> 8) % 3,
                1 => 1 << ((r >> 8) % 20),
                2 => 4,
                _ => 1 + (r >> 8) % (1 << ((r >> 32) % 14)),
            };
            let gap = match (r >> 40) % 5 {
                0 | 1 => 0,
                2 => 1 + (r >> 44) % 5,
                _ => (r >> 44) % (1 << ((r >> 50) % 16)),
            };
            x += gap;
            row.push(x, x + width, (i as u32 * 7 + (r as u32 % 5)) % 23, i as u32);
            x += width;
        }
        row
    }

    #[test]
    fn same_tiers_as_whole_row_passes_on_random_rows() {
        let mut rng = Rng(42);
        let mut tiers_seen = 0;
        let mut pyramid_tiers = 0;
        for case in 0..300 {
            let n = [2, 3, 5, 17, 100, 1000, 5000][case % 7];
            let layout = Layout {
                rows: vec![random_row(&mut rng, n), random_row(&mut rng, n / 2 + 1)],
                total_ticks: 0,
            };
            for tpp in [
                0.5,
                1.0,
                2.0,
                3.0,
                7.5,
                64.0,
                1000.0,
                1e5,
                1e7,
                1e12,
                f64::MAX,
            ] {
                let want = Lod::build_for_view(&layout, tpp);
                let got = view_lod(&layout, tpp);
                for r in 0..layout.rows.len() {
                    assert_eq!(got.rows[r], want.rows[r], "case {case} row {r} at {tpp}");
                    tiers_seen += want.rows[r].len();
                }
            }
            let (want, got) = (Lod::build_by_passes(&layout), Lod::build(&layout));
            for r in 0..layout.rows.len() {
                assert_eq!(
                    got.rows[r], want.rows[r],
                    "case {case} row {r}, whole pyramid"
                );
                pyramid_tiers += want.rows[r].len();
            }
        }
        assert!(tiers_seen > 1000, "only {tiers_seen} tiers compared");
        assert!(
            pyramid_tiers > 1000,
            "only {pyramid_tiers} pyramid tiers compared"
        );
    }

    /// Empty bars without gaps between them (instant events at one time) merge at the
    /// first threshold, as the passes merge them; they were never filed (level 0).
    #[test]
    fn empty_bars_merge_at_the_first_threshold() {
        let mut row = Row::default();
        for (i, (x0, x1)) in [(0, 0), (0, 0), (0, 0), (0, 5), (5, 5), (5, 5), (9, 40)]
            .into_iter()
            .enumerate()
        {
            row.push(x0, x1, i as u32, i as u32);
        }
        let layout = Layout {
            rows: vec![row],
            total_ticks: 40,
        };
        let pyramid = Lod::build(&layout);
        assert_eq!(pyramid.rows, Lod::build_by_passes(&layout).rows);
        assert_eq!(pyramid.rows[0][0].members(0), 0..6, "{:?}", pyramid.rows[0]);
        for tpp in [0.3, 1.0, 4.0] {
            let want = Lod::build_for_view(&layout, tpp);
            assert_eq!(view_lod(&layout, tpp).rows, want.rows, "{tpp}");
        }
    }

    #[test]
    fn same_tiers_as_whole_row_passes_on_a_profile() {
        let mut text = String::new();
        let mut rng = Rng(7);
        for i in 0..20_000u64 {
            let r = rng.next();
            let depth = 1 + r % 9;
            let frames: Vec<String> = (0..depth)
                .map(|d| format!("f{}", (i >> d) % (3 + d * 11)))
                .collect();
            text.push_str(&format!(
                "main;{} {}\n",
                frames.join(";"),
                1 + (r >> 20) % 40
            ));
        }
        let p = load_bytes("t.folded", text.as_bytes(), Limits::default()).unwrap();
        let layout = flame_layout(&p.tree);
        let total = layout.total_ticks as f64;
        for px in [100.0, 1200.0, 3840.0, 20_000.0] {
            let tpp = total / px;
            let want = Lod::build_for_view(&layout, tpp);
            let got = view_lod(&layout, tpp);
            assert_eq!(got.rows, want.rows, "{px} px");
        }
        assert_eq!(Lod::build(&layout).rows, Lod::build_by_passes(&layout).rows);
    }
}
