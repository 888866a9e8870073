//! Picking on a timeline: the span under the pointer, or the nearest one within a few
//! pixels (instants and sub-pixel spans are hard to hit exactly).

use super::BarRef;
use crate::geometry::Camera;
use crate::geometry::timeline::{GraphHit, TimelineGeometry};
use crate::layout::{Layout, Row};

/// The span under `(x, y)`: the exact bar at the pointer's time or, failing that, the
/// nearest one within `slop_px` (instants and sub-pixel spans are hard to hit exactly).
pub fn pick_span(
    layout: &Layout,
    geom: &TimelineGeometry,
    cam: &Camera,
    x: f32,
    y: f32,
    slop_px: f32,
) -> Option<BarRef> {
    if !geom.graph.contains(x, y) {
        return None;
    }
    let Some(GraphHit::Row(row)) = geom.hit(y) else {
        return None;
    };
    let r = layout.rows.get(row)?;
    let gx = f64::from(x - geom.graph.x);
    let tick = cam.tick_at(gx);
    if let Some(index) = r.bar_at(tick) {
        return Some(BarRef { row, index });
    }
    nearest(r, cam, gx, f64::from(slop_px)).map(|index| BarRef { row, index })
}

fn nearest(r: &Row, cam: &Camera, gx: f64, slop: f64) -> Option<usize> {
    // Bars in a row are sorted and disjoint, so the nearest one to a point in a gap is
    // the last bar before it or the first after it: one binary search, whatever the
    // number of (sub-pixel) bars within the slop.
    let tick = cam.tick_at(gx);
    let i = r.x1.partition_point(|&x| x <= tick);
    let before = i.checked_sub(1).map(|j| (gx - cam.x_of(r.x1[j]), j));
    let after = (i < r.len()).then(|| (cam.x_of(r.x0[i]) - gx, i));
    [before, after]
        .into_iter()
        .flatten()
        .map(|(d, j)| (d.max(0.0), j))
        .filter(|&(d, _)| d <= slop)
        .min_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, j)| j)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::geometry::timeline::fixtures::geom;
    use crate::layout::Layout;

    #[test]
    fn picking_finds_spans_and_near_instants() {
        let mut layout = Layout::default();
        let mut r = Row::default();
        for (a, b) in [(0u64, 100u64), (200, 201), (500, 900)] {
            r.push(a, b, 0, 0);
        }
        layout.rows = vec![r.clone(), Row::default(), Row::default(), r];
        layout.total_ticks = 1000;
        let g = geom(&[]);
        let cam = Camera::range(0, 1000, f64::from(g.graph.w));
        let y0 = g.row_top(0).unwrap() + 2.0;
        let x_of = |t: u64| g.graph.x + cam.x_of(t) as f32;
        assert_eq!(
            pick_span(&layout, &g, &cam, x_of(50), y0, 4.0),
            Some(BarRef { row: 0, index: 0 })
        );
        // The 1 ns instant at 200 is hit from 3 px away, not from 30.
        assert_eq!(
            pick_span(&layout, &g, &cam, x_of(200) + 3.0, y0, 4.0),
            Some(BarRef { row: 0, index: 1 })
        );
        assert_eq!(pick_span(&layout, &g, &cam, x_of(230), y0, 4.0), None);
        let y3 = g.row_top(3).unwrap() + 2.0;
        assert_eq!(
            pick_span(&layout, &g, &cam, x_of(600), y3, 4.0),
            Some(BarRef { row: 3, index: 2 })
        );
        // Headers are not spans.
        assert_eq!(
            pick_span(&layout, &g, &cam, x_of(50), g.graph.y + 1.0, 4.0),
            None
        );
    }

    /// The nearest-span search (two neighbours of one binary search) agrees with a scan
    /// of every span within the slop, on random rows with dense sub-pixel spans and gaps.
    #[test]
    fn nearest_span_matches_a_scan() {
        let mut rng = crate::testing::Lcg::new(99);
        let mut next = |m: u64| rng.next_u64() % m;
        for round in 0..30 {
            let mut r = Row::default();
            let mut t = next(50);
            for _ in 0..2000 {
                let w = 1 + next(if round % 2 == 0 { 5 } else { 400 });
                r.push(t, t + w, 0, 0);
                t += w + next(300);
            }
            let end = t;
            let span = 1 + next(end);
            let start = next(end - span + 1);
            let cam = Camera::range(start, start + span, 1000.0);
            for _ in 0..200 {
                let gx = next(1000) as f64 + 0.5;
                let slop = 4.0;
                let range = r.range_between(
                    cam.tick_at(gx - slop),
                    cam.tick_at(gx + slop).saturating_add(1),
                );
                let want = range
                    .map(|i| {
                        let (a, b) = (cam.x_of(r.x0[i]), cam.x_of(r.x1[i]));
                        ((a - gx).max(gx - b).max(0.0), i)
                    })
                    .filter(|&(d, _)| d <= slop)
                    .min_by(|a, b| a.0.total_cmp(&b.0));
                let got = nearest(&r, &cam, gx, slop);
                match (want, got) {
                    (None, None) => {}
                    (Some((dw, _)), Some(g)) => {
                        let (a, b) = (cam.x_of(r.x0[g]), cam.x_of(r.x1[g]));
                        let dg = (a - gx).max(gx - b).max(0.0);
                        assert!(
                            (dg - dw).abs() < 1e-9,
                            "round {round} at {gx}: {dg} vs {dw}"
                        );
                    }
                    other => panic!("round {round} at {gx}: {other:?}"),
                }
            }
        }
    }
}
