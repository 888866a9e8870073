//! The time axis: marks at 1-2-5 steps that suit the zoom, and their labels.

use crate::geometry::Camera;

/// Tick marks for a time axis.
#[derive(Clone, Debug, PartialEq)]
pub struct AxisTicks {
    /// Distance between two marks, ns.
    pub step_ns: u64,
    /// The marks: time (ns after the trace's start) and pixel relative to the axis' left.
    pub marks: Vec<(u64, f64)>,
}

/// Marks every 1, 2 or 5 × 10^k ns, the smallest step at least `min_spacing_px` apart.
pub fn axis_ticks(cam: &Camera, width_px: f64, min_spacing_px: f64) -> AxisTicks {
    let ns_per_px = 1.0 / cam.px_per_tick;
    let want = (min_spacing_px * ns_per_px).max(1.0);
    let mut step: u64 = 1;
    'outer: loop {
        for m in [1u64, 2, 5] {
            let s = step.saturating_mul(m);
            if s as f64 >= want || s == u64::MAX {
                step = s;
                break 'outer;
            }
        }
        match step.checked_mul(10) {
            Some(s) => step = s,
            None => break,
        }
    }
    let (t0, t1) = cam.visible_ticks(width_px);
    let mut marks = Vec::new();
    let mut t = t0.div_ceil(step).saturating_mul(step);
    while t <= t1 && marks.len() < 10_000 {
        marks.push((t, cam.x_of(t)));
        match t.checked_add(step) {
            Some(n) => t = n,
            None => break,
        }
    }
    AxisTicks {
        step_ns: step,
        marks,
    }
}

/// A time on the axis, with as many decimals as the step needs: `0`, `250 µs`, `1.5 ms`,
/// `2 s`.
pub fn format_axis_time(ns: u64, step_ns: u64) -> String {
    if ns == 0 {
        return "0".to_string();
    }
    // The unit is chosen by the step so all marks read alike.
    // The unit is the largest the step is at least a tenth of (one decimal at most for
    // 1-2-5 steps): `1.5 ms` rather than `1500 µs`.
    let (div, unit) = match step_ns {
        0..100 => (1.0, "ns"),
        100..100_000 => (1e3, "µs"),
        100_000..100_000_000 => (1e6, "ms"),
        _ => (1e9, "s"),
    };
    let v = ns as f64 / div;
    let step = step_ns as f64 / div;
    let decimals = if step >= 1.0 {
        0
    } else {
        (-step.log10()).ceil() as usize
    };
    format!("{v:.decimals$} {unit}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn axis_steps_are_1_2_5_and_suit_the_zoom() {
        let cam = Camera::range(0, 1_000_000, 1000.0); // 1 ms over 1000 px
        let t = axis_ticks(&cam, 1000.0, 80.0);
        assert_eq!(t.step_ns, 100_000);
        assert_eq!(t.marks.first().map(|m| m.0), Some(0));
        assert_eq!(t.marks.len(), 11);
        assert!((t.marks[1].1 - 100.0).abs() < 1e-6);
        let cam = Camera::range(1_000, 1_300, 1000.0);
        let t = axis_ticks(&cam, 1000.0, 80.0);
        assert_eq!(t.step_ns, 50);
        assert_eq!(t.marks[0].0, 1_000);
        // The step at any zoom keeps marks at least the spacing apart.
        for (a, b) in [(0u64, 7u64), (0, 3_000_000_000), (5, 10_000_000_000_000)] {
            let cam = Camera::range(a, b, 777.0);
            let t = axis_ticks(&cam, 777.0, 70.0);
            for w in t.marks.windows(2) {
                assert!(w[1].1 - w[0].1 >= 70.0 - 1e-6);
            }
        }
        assert_eq!(format_axis_time(0, 100), "0");
        assert_eq!(format_axis_time(250_000, 50_000), "250 µs");
        assert_eq!(format_axis_time(1_500_000, 500_000), "1.5 ms");
        assert_eq!(format_axis_time(1_200_000, 200_000), "1.2 ms");
        assert_eq!(format_axis_time(2_000_000_000, 1_000_000_000), "2 s");
        assert_eq!(format_axis_time(1_050, 50), "1050 ns");
    }
}
