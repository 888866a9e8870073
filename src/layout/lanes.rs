//! Lanes: the rows of a timeline band that its trees are packed into.
//!
//! Each root's subtree (`height` rows, busy until its latest end) goes to the lowest rows
//! free at its start, like Perfetto packs async slices. Roots come sorted by start, so
//! with single-row trees (async spans, instants) this is interval partitioning, and the
//! number of rows is the largest number of spans open at once. Taller trees look for the
//! lowest free window by a scan over the band's rows.
//!
//! A million async spans are a million places in one band, on one thread. The rows' free
//! times sit in a tree of minimums, eight children to a node: the lowest row free at a
//! time is a walk down its few levels, each a comparison of eight times without a branch
//! to mispredict, and taking a row a walk up. No row is ever stale, so there is nothing
//! to skip. (A heap of busy rows by their free times and a heap of free rows, which
//! mispredicted a branch at each level of each sift, took 65 ns a span where this takes
//! 50: 1 M spans with ~170 open at once.)

/// The rows of one band.
pub(super) struct Lanes {
    /// How many rows are in use.
    rows: usize,
    /// `levels[0]`: each row's free time (rows not yet in use are free at 0), `8^k`
    /// of them; `levels[l + 1][i]`: the least of `levels[l][8i..8i + 8]`, up to a single
    /// node. Eight children are compared at once, so a band of up to 512 rows is three
    /// levels.
    levels: Vec<Vec<u64>>,
}

/// Children per node.
const FAN: usize = 8;

impl Lanes {
    pub(super) fn new() -> Lanes {
        Lanes::with_levels(3)
    }

    /// Room for `FAN^(levels - 1)` rows.
    fn with_levels(levels: usize) -> Lanes {
        Lanes {
            rows: 0,
            levels: (0..levels)
                .map(|l| vec![0u64; FAN.pow((levels - 1 - l) as u32)])
                .collect(),
        }
    }

    fn capacity(&self) -> usize {
        self.levels[0].len()
    }

    /// `FAN` times the leaves, the minimums computed again.
    fn grow(&mut self) {
        let mut grown = Lanes::with_levels(self.levels.len() + 1);
        grown.levels[0][..self.capacity()].copy_from_slice(&self.levels[0]);
        for l in 1..grown.levels.len() {
            let (below, above) = grown.levels.split_at_mut(l);
            for (node, kids) in above[0].iter_mut().zip(below[l - 1].chunks_exact(FAN)) {
                *node = least(kids);
            }
        }
        grown.rows = self.rows;
        *self = grown;
    }

    /// Row `row` is busy until `t`.
    fn set(&mut self, row: usize, t: u64) {
        self.levels[0][row] = t;
        let mut i = row;
        for l in 1..self.levels.len() {
            i /= FAN;
            let kids = &self.levels[l - 1][i * FAN..i * FAN + FAN];
            let m = least(kids);
            self.levels[l][i] = m;
        }
    }

    /// The first row of a window of `height` rows free at `start`, now busy until `end`
    /// (after `start`). Calls come in order of `start`.
    pub(super) fn place(&mut self, start: u64, end: u64, height: u32) -> u32 {
        let base = if height == 1 {
            // Rows past those in use are free at 0: when none is free, grow.
            if self.levels[self.levels.len() - 1][0] > start {
                self.grow();
            }
            let mut i = 0;
            for level in self.levels.iter().rev().skip(1) {
                let kids = &level[i * FAN..i * FAN + FAN];
                let free = kids
                    .iter()
                    .enumerate()
                    .fold(0u32, |m, (j, &t)| m | u32::from(t <= start) << j);
                i = i * FAN + free.trailing_zeros() as usize;
            }
            i
        } else {
            let h = height as usize;
            let mut run = 0;
            let mut base = self.rows;
            for (r, &t) in self.levels[0][..self.rows].iter().enumerate() {
                run = if t <= start { run + 1 } else { 0 };
                if run == h {
                    base = r + 1 - h;
                    break;
                }
            }
            if base == self.rows {
                // Extend the trailing free run, if any, with new rows.
                base -= run;
            }
            base
        };
        let top = base + height as usize;
        while self.capacity() < top {
            self.grow();
        }
        self.rows = self.rows.max(top);
        for r in base..top {
            self.set(r, end);
        }
        base as u32
    }

    pub(super) fn rows(&self) -> u32 {
        self.rows as u32
    }
}

/// The least of a node's children.
fn least(kids: &[u64]) -> u64 {
    kids.iter().copied().fold(u64::MAX, u64::min)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The lanes' rows by a plain reading of the rule: each span's window is the lowest
    /// run of `height` rows all free at its start.
    fn reference(spans: &[(u64, u64, u32)]) -> Vec<u32> {
        let mut free_at: Vec<u64> = Vec::new();
        spans
            .iter()
            .map(|&(start, end, h)| {
                let h = h as usize;
                let base = (0..=free_at.len())
                    .find(|&b| (b..b + h).all(|r| free_at.get(r).is_none_or(|&t| t <= start)))
                    .expect("rows past the end are free");
                if free_at.len() < base + h {
                    free_at.resize(base + h, 0);
                }
                for t in &mut free_at[base..base + h] {
                    *t = end;
                }
                base as u32
            })
            .collect()
    }

    fn xorshift(state: &mut u64) -> u64 {
        *state ^= *state << 13;
        *state ^= *state >> 7;
        *state ^= *state << 17;
        *state
    }

    #[test]
    fn lanes_give_the_lowest_free_rows() {
        for seed in 1..40u64 {
            let mut s = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15);
            let mut start = 0u64;
            let n = 2000;
            let spans: Vec<(u64, u64, u32)> = (0..n)
                .map(|_| {
                    // Bursts and gaps, ends far and near, the odd tall tree, equal
                    // starts and equal ends.
                    start += match xorshift(&mut s) % 4 {
                        0 => 0,
                        1 => xorshift(&mut s) % 3,
                        _ => xorshift(&mut s) % 50,
                    };
                    let len = 1 + match xorshift(&mut s) % 5 {
                        0 => xorshift(&mut s) % 5000,
                        _ => xorshift(&mut s) % (200 * (seed % 7 + 1)),
                    };
                    let h = if seed.is_multiple_of(3) && xorshift(&mut s).is_multiple_of(9) {
                        1 + (xorshift(&mut s) % 4) as u32
                    } else {
                        1
                    };
                    (start, start + len, h)
                })
                .collect();
            let mut lanes = Lanes::new();
            let got: Vec<u32> = spans
                .iter()
                .map(|&(a, b, h)| lanes.place(a, b, h))
                .collect();
            assert_eq!(got, reference(&spans), "seed {seed}");
        }
    }
}
