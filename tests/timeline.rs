//! Timeline rendering on a real wgpu device (Mesa llvmpipe/lavapipe without a GPU; skipped
//! without an adapter unless `SCORCH_REQUIRE_GPU=1`): span edges where the camera puts
//! them, track colors, connector lines, the overview's shaded window, labels, seamless
//! tiles, and golden images (`SCORCH_BLESS=1` re-blesses; look at the PNGs).

mod common;

use common::*;
use scorch::color::{ColorMode, track_color};
use scorch::export::{ExportOptions, export_view, render_rgba};
use scorch::import;
use scorch::layout::timeline::BandMode;
use scorch::model::spans::{RawSpan, SpanSet, Track};
use scorch::model::{Document, Names, SourceFormat, Trace, Warnings};
use scorch::render::{Renderer, Scenes, TARGET_FORMAT};
use scorch::view::View;
use scorch::view::export::timeline_export;
use scorch::view::timeline::TimelineView;
use std::sync::Arc;

fn tidb_demo() -> Document {
    let doc =
        Document::from(import::load_any_path(&root().join("data/demo-tidb-trace.json")).unwrap());
    assert!(
        matches!(doc, Document::Trace(_)),
        "the TiDB demo is a trace"
    );
    doc
}

/// The trace of a document.
fn trace(doc: &Document) -> Arc<Trace> {
    match doc {
        Document::Trace(t) => t.clone(),
        Document::Profile(_) => panic!("a trace"),
    }
}

/// The timeline `o` asks for.
fn timeline(doc: &Document, o: &ExportOptions) -> TimelineView {
    timeline_export(trace(doc), o).unwrap()
}

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

/// A deterministic three-thread trace: nested calls per thread, plus overlapping async
/// requests on their own track.
fn threads_trace() -> Document {
    let mut rng = Rng(7);
    let names = [
        "RunTask",
        "ParseHTML",
        "Layout",
        "Paint",
        "v8.compile",
        "FunctionCall",
        "GC",
        "Commit",
        "Decode",
        "fetch",
    ];
    let mut spans = Vec::new();
    let mut id = 1u64;
    for track in 0..3u32 {
        let mut t = 0u64;
        while t < 9_000_000 {
            let dur = 200_000 + rng.below(900_000);
            let root = id;
            spans.push(RawSpan {
                id,
                parent_id: None,
                start_ns: t,
                dur_ns: dur,
                name: names[rng.below(4) as usize].into(),
                track,
            });
            id += 1;
            // A chain of nested children, each inside its parent.
            let (mut ps, mut pd, mut parent) = (t, dur, root);
            for _ in 0..rng.below(5) {
                let s = ps + rng.below(pd / 4);
                let d = (pd - (s - ps)) / 2 + 1;
                spans.push(RawSpan {
                    id,
                    parent_id: Some(parent),
                    start_ns: s,
                    dur_ns: d,
                    name: names[4 + rng.below(4) as usize].into(),
                    track,
                });
                (ps, pd, parent) = (s, d, id);
                id += 1;
            }
            t += dur + rng.below(300_000);
        }
    }
    for k in 0..40u64 {
        spans.push(RawSpan {
            id,
            parent_id: None,
            start_ns: k * 220_000 + rng.below(100_000),
            dur_ns: 300_000 + rng.below(700_000),
            name: names[8 + (k % 2) as usize].into(),
            track: 3,
        });
        id += 1;
    }
    let tracks = [
        "CrRendererMain 1",
        "Compositor 2",
        "ThreadPool 3",
        "async requests",
    ]
    .iter()
    .map(|n| Track {
        name: (*n).to_string(),
    })
    .collect();
    let set = SpanSet::from_ids(Names::new(), spans, tracks, Warnings::default());
    Document::Trace(Arc::new(Trace::link(
        set,
        "threads.json".into(),
        SourceFormat::ChromeTrace,
        false,
    )))
}

fn export(width: u32) -> ExportOptions {
    ExportOptions {
        width,
        ..ExportOptions::default()
    }
}

#[test]
fn golden_tidb_seed_as_one_tree() {
    let Some(gpu) = gpu() else { return };
    let t = tidb_demo();
    assert_eq!(timeline(&t, &export(1000)).mode(), BandMode::OneTree);
    let (img, report) = render_rgba(gpu, &t, &export(1000)).unwrap();
    assert_eq!(report.labels, 5, "every span is wide enough for a label");
    check_golden("timeline_tidb", &img);
}

#[test]
fn golden_tidb_bands_zoomed() {
    let Some(gpu) = gpu() else { return };
    let t = tidb_demo();
    let mut o = export(1000);
    o.bands = Some(BandMode::PerTrack);
    o.start_ns = Some(250_000);
    o.end_ns = Some(480_000);
    let (img, _) = render_rgba(gpu, &t, &o).unwrap();
    check_golden("timeline_tidb_bands_zoom", &img);
}

#[test]
fn golden_threads() {
    let Some(gpu) = gpu() else { return };
    let t = threads_trace();
    assert_eq!(timeline(&t, &export(1200)).tracks().bands.len(), 4);
    let (img, _) = render_rgba(gpu, &t, &export(1200)).unwrap();
    check_golden("timeline_threads", &img);
}

/// Spans land where the camera says, in their track's color; a pushed-down span has its
/// connector; the overview shades what is outside the window.
#[test]
fn spans_connectors_and_overview_are_where_they_belong() {
    let Some(gpu) = gpu() else { return };
    let doc = tidb_demo();
    let mut o = export(1000);
    o.color = Some(ColorMode::Track);
    o.end_ns = Some(500_000);
    let v = timeline(&doc, &o);
    let (img, _) = render_rgba(gpu, &doc, &o).unwrap();
    let g = v.geometry(1.0);
    let cam = &v.state().camera;
    let t = v.tracks();
    let spans = &v.trace().spans;
    // executor.Next (TiDB, track 0) spans 300..500 µs after the start.
    let next = (0..spans.len())
        .find(|&i| spans.names.get(spans.name[i]) == "executor.Next")
        .unwrap();
    let row = t.row_of[next] as usize;
    let y = (g.row_top(row).unwrap() + g.bar_height_px / 2.0) as u32;
    let x0 = (g.graph.x as f64 + cam.x_of(spans.start_ns[next])).round() as u32;
    assert!(color_diff(img.pixel(x0 + 2, y), track_color(0)) <= 1);
    assert!(
        color_diff(img.pixel(x0 - 2, y), [255, 255, 255]) <= 1,
        "left edge at {x0}"
    );
    // The TiKV span under it is in the other track's color.
    let raft = (0..spans.len())
        .find(|&i| spans.names.get(spans.name[i]) == "RaftKv::async_snapshot")
        .unwrap();
    let ry = (g.row_top(t.row_of[raft] as usize).unwrap() + g.bar_height_px / 2.0) as u32;
    // Just inside its left edge, before the label's padding.
    let rx = (g.graph.x as f64 + cam.x_of(spans.start_ns[raft])).round() as u32 + 2;
    assert!(color_diff(img.pixel(rx, ry), track_color(1)) <= 1);
    // Endpoint:: was pushed down: its connector stands at its start, between the rows.
    let c = &t.connectors[0];
    let cx = (g.graph.x as f64 + cam.x_of(c.at_ns)).round() as u32;
    let cy = (g.row_top(c.to_row as usize).unwrap() - g.row_pitch_px / 2.0) as u32;
    assert!(
        img.pixel(cx, cy)[0] < 160,
        "connector pixel at ({cx}, {cy})"
    );
    // Overview: the window is 0..500 µs of 600; outside it is shaded darker than inside.
    let ov = g.overview;
    let yb = (ov.y + ov.h - 3.0) as u32;
    let inside = img.pixel(g.overview_x(300_000, 600_000) as u32, yb);
    let outside = img.pixel(g.overview_x(560_000, 600_000) as u32, yb);
    assert!(
        u32::from(outside[0]) + 30 < u32::from(inside[0]),
        "outside {outside:?} vs inside {inside:?}"
    );
}

/// A 64-pixel tiling draws the overview, the spans and the connectors exactly as one
/// tile does. (Text is left out: glyphon's clipping of a glyph cut by a tile edge can move
/// a few anti-aliased pixels; flame graph labels share that and the flame graph's tiling
/// test leaves labels out too.)
#[test]
fn timeline_tiles_are_seamless() {
    let Some(gpu) = gpu() else { return };
    let t = threads_trace();
    let mut v = timeline(&t, &export(700));
    v.set_labels(false);
    let g = v.geometry(1.0);
    let (w, h) = (g.width_px, g.height_px);
    let one = render_view_stats(gpu, &v, 4096).0;
    let tiled = render_view_stats(gpu, &v, 64).0;
    let header_at = |y: f32| {
        (0..g.bands.len()).any(|b| y >= g.header_top(b) && y < g.header_top(b) + g.header_px)
    };
    let mut compared = 0;
    for y in 0..h {
        let yf = y as f32 + 0.5;
        let in_overview = yf >= g.overview.y && yf < g.overview.y + g.overview.h;
        let in_rows = yf >= g.graph.y && yf < g.graph.y + g.graph.h && !header_at(yf);
        if !(in_overview || in_rows) {
            continue;
        }
        for x in 0..w {
            compared += 1;
            assert_eq!(
                one.pixel(x, y),
                tiled.pixel(x, y),
                "pixel ({x}, {y}) differs between tilings"
            );
        }
    }
    assert!(compared > (w * h / 2) as usize);
}

/// A bad window is refused with a message before any drawing.
#[test]
fn export_options_are_checked() {
    let t = tidb_demo();
    let err = |o: &ExportOptions| match export_view(&t, o) {
        Err(e) => e.to_string(),
        Ok(_) => panic!("{o:?} should be refused"),
    };
    let mut o = export(800);
    o.start_ns = Some(500_000);
    o.end_ns = Some(100_000);
    let e = err(&o);
    assert!(e.contains("must be before"), "{e}");
    o.start_ns = Some(10_000_000);
    o.end_ns = None;
    let e = err(&o);
    assert!(e.contains("past the trace's end"), "{e}");
    o.start_ns = None;
    o.color = Some(ColorMode::Diff);
    assert!(export_view(&t, &o).is_err());
}

/// Scenes are uploaded inside an out-of-memory error scope; what a failure says.
#[test]
fn uploads_run_in_an_out_of_memory_scope() {
    let Some(gpu) = gpu() else { return };
    let v = timeline(&tidb_demo(), &export(800));
    let renderer = Renderer::new(gpu, TARGET_FORMAT);
    let scenes =
        Scenes::build(gpu, &renderer.scene_layout(), &v.bar_sources()).expect("a small trace fits");
    assert!(scenes.instance_bytes() > 0);
    let e = scorch::render::GpuError::OutOfMemory {
        adapter: "llvmpipe".into(),
        what: "100000000 spans".into(),
        mib: 4577,
        detail: "Not enough memory left".into(),
    }
    .to_string();
    assert!(
        e.contains("no room for 100000000 spans (about 4577 MiB)") && e.contains("Not enough"),
        "{e}"
    );
}
