//! Picking: which bar is under a pixel.
//!
//! The row comes from `y` by arithmetic (rows have a fixed pitch); the bar within the row
//! by one binary search over that row's sorted `x1` column. The cost is O(log n) whatever
//! the zoom, and it never looks at what was drawn: the window's hover and click, and any
//! test, ask the Layout directly.

use crate::geometry::{Camera, FrameGeometry};
use crate::layout::Layout;

pub mod timeline;
pub use timeline::pick_span;

/// A bar, by row and index within the row.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BarRef {
    /// Row (depth).
    pub row: usize,
    /// Index in the row's columns.
    pub index: usize,
}

/// The bar under image pixel `(x, y)`, if any. A pixel in the separator below a bar (the
/// gap between rows) counts as that bar, so the pointer never flickers between rows.
pub fn pick(layout: &Layout, geom: &FrameGeometry, cam: &Camera, x: f32, y: f32) -> Option<BarRef> {
    if !geom.graph.contains(x, y) {
        return None;
    }
    let row = geom.row_at(y)?;
    let r = layout.rows.get(row)?;
    let tick = cam.tick_at(f64::from(x - geom.graph.x));
    let index = r.bar_at(tick)?;
    Some(BarRef { row, index })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::geometry::{Orientation, Style};
    use crate::layout::flame_layout;
    use crate::model::{CallTreeBuilder, ChildOrder, Names};

    use crate::generator::Rng;

    /// Picking against a brute-force linear scan over every bar, on seeded random layouts,
    /// at random zooms, in both orientations.
    #[test]
    fn pick_matches_linear_scan() {
        for seed in 1..25u64 {
            let mut rng = Rng(seed);
            let mut names = Names::new();
            let mut b = CallTreeBuilder::new(&mut names, false);
            for _ in 0..(20 + rng.next() % 200) {
                let depth = 1 + rng.next() % 10;
                let mut cur = 0;
                for _ in 0..depth {
                    let id = names.intern(&format!("f{}", rng.next() % 5));
                    cur = b.child(cur, id);
                }
                b.add_self(cur, 1 + rng.next() % 1000).unwrap();
            }
            let t = b.finish(&names, ChildOrder::ByName).unwrap();
            let l = flame_layout(&t);
            let orientation = if seed % 2 == 0 {
                Orientation::Flame
            } else {
                Orientation::Icicle
            };
            let g = FrameGeometry::new(800, 400, 1.0, l.rows.len(), orientation, Style::default());
            let zoom_start = rng.next() % l.total_ticks;
            let zoom_len = 1 + rng.next() % (l.total_ticks - zoom_start);
            let cam = Camera::range(zoom_start, zoom_start + zoom_len, f64::from(g.graph.w));
            for _ in 0..400 {
                let x = (rng.next() % 820) as f32 - 10.0 + 0.5;
                let y = (rng.next() % 420) as f32 - 10.0 + 0.5;
                let got = pick(&l, &g, &cam, x, y);
                // Oracle: scan all rows and bars.
                let mut want = None;
                if g.graph.contains(x, y) {
                    let tick = cam.tick_at(f64::from(x - g.graph.x));
                    for (ri, row) in l.rows.iter().enumerate() {
                        let top = g.row_top(ri);
                        let in_band = y >= top && y < top + g.row_pitch_px;
                        if !in_band {
                            continue;
                        }
                        for i in 0..row.len() {
                            if row.x0[i] <= tick && tick < row.x1[i] {
                                want = Some(BarRef { row: ri, index: i });
                            }
                        }
                    }
                }
                assert_eq!(got, want, "seed {seed} at ({x}, {y})");
            }
        }
    }
}
