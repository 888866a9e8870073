//! What the fuzz targets share: small memory limits, and the work done on whatever an
//! input imports to (aggregation, layout, LOD, picking), all without a GPU.

use scorch::geometry::timeline::{TimelineGeometry, TimelineStyle};
use scorch::geometry::{Camera, FrameGeometry, Orientation, Style};
use scorch::import::{ImportError, Limits, sampled};
use scorch::layout::{Layout, flame_layout, timeline::track_layout};
use scorch::lod::Lod;
use scorch::model::samples::Samples;
use scorch::model::{Document, Profile, Trace};
use scorch::pick::{pick, pick_span};
use scorch::view::timeline::default_band_mode;

/// The name inputs are imported under.
pub const FILE: &str = "fuzz-input";

/// Limits small enough that no input can ask for more than a few hundred MB.
pub fn limits() -> Limits {
    let mut limits = Limits::default();
    limits.max_input_bytes = 64 << 20;
    limits.max_depth = 1 << 20;
    limits
}

/// Samples aggregated into their profile, as the import does after parsing.
pub fn aggregate(samples: Samples) -> Result<Profile, ImportError> {
    let chosen = sampled::choose(FILE, samples, &sampled::SampleOptions::default())?;
    chosen
        .sampled()
        .profile()
        .map_err(|e| ImportError::whole_file(FILE, e))
}

/// Image sizes the views are laid out at: ordinary, tiny and one pixel.
const SIZES: [(u32, u32); 3] = [(800, 600), (37, 19), (1, 1)];

/// A profile's flame graph in both orientations: layout, LOD tiers and picks over a grid
/// of points at a full and a zoomed camera; then its samples as a timeline, if it has any.
pub fn exercise_profile(p: &Profile) {
    let layout = flame_layout(&p.tree);
    let lod = Lod::build(&layout);
    for (w, h) in SIZES {
        for orientation in [Orientation::Flame, Orientation::Icicle] {
            let geom =
                FrameGeometry::new(w, h, 1.0, layout.rows.len(), orientation, Style::default());
            for cam in cameras(&layout, f64::from(geom.graph.w)) {
                for (x, y) in grid(w, h) {
                    if let Some(bar) = pick(&layout, &geom, &cam, x, y) {
                        let row = &layout.rows[bar.row];
                        assert!(bar.index < row.len());
                    }
                }
                probe_lod(&layout, &lod, &cam, f64::from(geom.graph.w));
            }
        }
    }
    if let Some(s) = &p.meta.sampled {
        exercise_trace(&s.trace());
    }
}

/// A trace's timeline: band layout, LOD tiers and picks over a grid of points.
pub fn exercise_trace(t: &Trace) {
    let tracks = track_layout(&t.spans, &t.tree, default_band_mode(t));
    let layout = &tracks.layout;
    assert_eq!(tracks.row_of.len(), t.spans.len());
    let lod = Lod::build(layout);
    for (w, h) in SIZES {
        let geom = TimelineGeometry::new(w, h, 1.0, &tracks.bands, &[], TimelineStyle::default());
        for cam in cameras(layout, f64::from(geom.graph.w)) {
            for (x, y) in grid(w, h) {
                if let Some(bar) = pick_span(layout, &geom, &cam, x, y, 4.0) {
                    assert!(bar.index < layout.rows[bar.row].len());
                }
            }
            probe_lod(layout, &lod, &cam, f64::from(geom.graph.w));
        }
    }
}

/// Whatever a document holds, exercised.
pub fn exercise(doc: &Document) {
    match doc {
        Document::Profile(p) => exercise_profile(p),
        Document::Trace(t) => exercise_trace(t),
    }
}

/// The whole axis, and a narrow window in its middle.
fn cameras(layout: &Layout, width_px: f64) -> [Camera; 2] {
    let total = layout.total_ticks.max(1);
    let start = total / 2;
    let end = (start + (total / 1000).max(1)).min(total).max(start + 1);
    [
        Camera::fit(total, width_px),
        Camera::range(start, end, width_px),
    ]
}

/// Points across an image of `w` × `h`, including a little outside it.
fn grid(w: u32, h: u32) -> impl Iterator<Item = (f32, f32)> {
    let (w, h) = (w as f32, h as f32);
    (0..=12).flat_map(move |i| {
        (0..=12).map(move |j| {
            (
                -2.0 + (w + 4.0) * i as f32 / 12.0,
                -2.0 + (h + 4.0) * j as f32 / 12.0,
            )
        })
    })
}

/// The LOD tiers a view at `cam` uses, read at a few ticks of every row, and the same
/// tiers built for that view alone.
fn probe_lod(layout: &Layout, lod: &Lod, cam: &Camera, width_px: f64) {
    let (start, end) = cam.visible_ticks(width_px);
    let ticks_per_px =
        (end.saturating_sub(start) as f64 / width_px.max(1.0)).max(f64::MIN_POSITIVE);
    let for_view = Lod::build_for_view(layout, ticks_per_px);
    for row in 0..layout.rows.len() {
        for tick in [start, start / 2 + end / 2, end.saturating_sub(1)] {
            for l in [lod, &for_view] {
                if let Some((k, j)) = l.merged_run_at(layout, row, ticks_per_px, tick) {
                    let run = l.run(layout, row, k, j).expect("a merged run exists");
                    assert!(run.x0 <= run.x1);
                }
            }
        }
    }
}
