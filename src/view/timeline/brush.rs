//! The overview's brush: what a press grabs of the visible window, and what dragging it
//! does.

use crate::geometry::timeline::TimelineGeometry;

/// Which part of the overview's window the pointer grabbed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BrushGrab {
    /// The left edge: dragging resizes the window's start.
    Left,
    /// The right edge: dragging resizes its end.
    Right,
    /// Inside: dragging moves the window.
    Inside,
    /// Outside: dragging selects a new window.
    Outside,
}

/// What a press at overview pixel `x` grabs, given the window `[t0, t1)`.
pub fn brush_grab(geom: &TimelineGeometry, window: (u64, u64), total_ns: u64, x: f32) -> BrushGrab {
    let l = geom.overview_x(window.0, total_ns);
    let r = geom.overview_x(window.1, total_ns);
    let grab = geom.style.edge_grab * geom.scale;
    // A window narrower than two grab zones: the nearer edge wins, outside the window.
    if (x - l).abs() <= grab && (x <= (l + r) / 2.0 || (x - l).abs() < (x - r).abs()) {
        BrushGrab::Left
    } else if (x - r).abs() <= grab {
        BrushGrab::Right
    } else if x > l && x < r {
        BrushGrab::Inside
    } else {
        BrushGrab::Outside
    }
}

/// The window after dragging from `press_x` to `x` with `grab`, starting from `window`.
/// Windows never get narrower than `min_ns` and never leave `[0, total_ns)`.
pub fn brush_drag(
    geom: &TimelineGeometry,
    grab: BrushGrab,
    window: (u64, u64),
    total_ns: u64,
    press_x: f32,
    x: f32,
    min_ns: u64,
) -> (u64, u64) {
    let total = total_ns.max(1);
    let min_ns = min_ns.clamp(1, total);
    let at = geom.overview_ns(x, total);
    match grab {
        BrushGrab::Left => (at.min(window.1.saturating_sub(min_ns)), window.1),
        BrushGrab::Right => (window.0, at.max(window.0 + min_ns).min(total)),
        BrushGrab::Inside => {
            let from = geom.overview_ns(press_x, total) as i128;
            let delta = at as i128 - from;
            let w = (window.1 - window.0) as i128;
            let start = (window.0 as i128 + delta).clamp(0, total as i128 - w);
            (start as u64, (start + w) as u64)
        }
        BrushGrab::Outside => {
            let a = geom.overview_ns(press_x, total);
            let (lo, hi) = (a.min(at), a.max(at));
            if hi - lo >= min_ns {
                (lo, hi)
            } else {
                let lo = lo.min(total - min_ns);
                (lo, lo + min_ns)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::geometry::timeline::fixtures::geom;

    #[test]
    fn overview_brush_grabs_and_drags() {
        let g = geom(&[]);
        let total = 1_000_000;
        let ov = g.overview;
        let window = (250_000, 500_000);
        let xl = g.overview_x(window.0, total);
        let xr = g.overview_x(window.1, total);
        assert_eq!(brush_grab(&g, window, total, xl + 2.0), BrushGrab::Left);
        assert_eq!(brush_grab(&g, window, total, xr - 2.0), BrushGrab::Right);
        assert_eq!(
            brush_grab(&g, window, total, (xl + xr) / 2.0),
            BrushGrab::Inside
        );
        assert_eq!(brush_grab(&g, window, total, xr + 50.0), BrushGrab::Outside);

        let x_of = |ns: u64| g.overview_x(ns, total);
        let drag = |grab, from, to, min| brush_drag(&g, grab, window, total, from, to, min);
        // Edges resize.
        let w = drag(BrushGrab::Left, xl, x_of(100_000), 10);
        assert_eq!(w, (100_000, 500_000));
        let w = drag(BrushGrab::Right, xr, x_of(900_000), 10);
        assert_eq!(w, (250_000, 900_000));
        // An edge dragged past the other stops short of it.
        let w = drag(BrushGrab::Left, xl, x_of(800_000), 10);
        assert_eq!(w, (499_990, 500_000));
        // Inside moves, keeping the width, and stops at the ends.
        let w = drag(BrushGrab::Inside, x_of(300_000), x_of(400_000), 10);
        assert_eq!(w, (350_000, 600_000));
        let w = drag(BrushGrab::Inside, x_of(300_000), ov.x + ov.w + 500.0, 10);
        assert_eq!(w, (750_000, 1_000_000));
        // Outside selects a new window, in either direction.
        let w = drag(BrushGrab::Outside, x_of(900_000), x_of(700_000), 10);
        assert_eq!(w, (700_000, 900_000));
        let w = drag(BrushGrab::Outside, x_of(10_000), x_of(10_000), 5_000);
        assert_eq!(w, (10_000, 15_000));
    }
}
