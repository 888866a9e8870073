//! The timeline view of a trace: bands of spans on a time axis, under an overview strip.
//!
//! Frame, top to bottom: the title band, the overview strip (every row of the whole trace
//! drawn once into a cached texture, the visible window shaded around), the time axis
//! (1-2-5 marks relative to the trace's start, a red cursor line with its time), the bands
//! (one per track, or the whole trace as one tree: `T` switches; a header line per band,
//! click to collapse), and when a span is selected its details panel.
//!
//! The horizontal view is the same [`ViewState`] camera as the flame graph's (wheel zoom
//! about the pointer, drag pan, animated zooms, Backspace history), and it also holds the
//! bands' vertical scroll: the overview's window is that camera's visible range, so
//! brushing the overview moves the camera ([`ViewState::show_ticks`]) and zooming the
//! detail view moves the window. Geometry is [`TimelineGeometry`]; picking is
//! [`pick_span`] (the exact span, or the nearest within a few pixels).

mod attribution;
mod axis;
mod brush;
mod paint;
mod range;

pub use attribution::AttrColor;
pub use axis::{AxisTicks, axis_ticks, format_axis_time};
pub use brush::{BrushGrab, brush_drag, brush_grab};

use super::draw::{
    BarSource, BarValues, BarsLayer, Frame, Measure, SceneKey, line_height, rgba, row_draws,
};
use super::input::{Action, Wheel};
use super::interface::{
    Purpose, Reply, View, ViewEntry, ViewKind, ViewMemo, ViewOptions, Viewport,
};
use super::search::{SearchResult, search_spans};
use super::shell::Heading;
use super::state::ViewState;
use crate::color::{self, ColorMode};
use crate::geometry::timeline::{GraphHit, TimelineGeometry, TimelineStyle};
use crate::geometry::{Camera, Orientation, Style};
use crate::layout::timeline::{BandMode, TrackLayout, track_layout};
use crate::lod::{Lod, MergedRun, view_lod};
use crate::model::units::format_duration_ns;
use crate::model::{Document, NO_PARENT, SourceFormat, Trace};
use crate::pick::{BarRef, pick_span};
use std::sync::Arc;

/// Pointer distance within which instants and thin spans are picked (logical pixels).
const PICK_SLOP_PX: f32 = 4.0;
/// Two clicks on the same span closer than this are a double click.
const DOUBLE_CLICK_S: f64 = 0.4;
/// Lines of the details panel.
const DETAIL_LINES: usize = 7;
/// Connector lines drawn per frame at most: with more in the time in sight (a big trace
/// zoomed out has millions) they would be a solid smear, and none are drawn.
const MAX_CONNECTORS: usize = 20_000;

impl ViewKind {
    /// A trace's spans on a time axis.
    pub const TIMELINE: ViewKind = ViewKind("timeline");
}

/// The timeline in the window's list of views: it shows traces.
pub const ENTRY: ViewEntry = ViewEntry {
    kind: ViewKind::TIMELINE,
    shows: |doc| match doc {
        Document::Trace(_) => true,
        Document::Profile(p) => p.meta.sampled.is_some(),
    },
    open: |doc, opts| {
        let t = doc
            .as_trace()
            .expect("the timeline opens on documents that have spans");
        Box::new(TimelineView::new(t, opts))
    },
};

/// The band mode a trace format is usually viewed in: Chrome traces per thread
/// (Perfetto), distributed traces as one tree (TiDB Dashboard, Jaeger UI).
pub fn default_band_mode(trace: &Trace) -> BandMode {
    match trace.format {
        // Threads as bands, as Perfetto, DevTools and Firefox's stack chart show them.
        _ if trace.sampling.is_some() => BandMode::PerTrack,
        SourceFormat::ChromeTrace => BandMode::PerTrack,
        _ => BandMode::OneTree,
    }
}

/// The colors a trace starts with: one per track when the whole trace is one tree (TiDB
/// Dashboard, Jaeger), by name when tracks are bands (Perfetto).
pub fn default_color(mode: BandMode) -> ColorMode {
    match mode {
        BandMode::OneTree => ColorMode::Track,
        BandMode::PerTrack => ColorMode::Name,
    }
}

/// Span count, tracks and duration, for the title band.
pub fn summary(trace: &Trace, tracks: &TrackLayout) -> String {
    let n = trace.spans.len();
    let t = trace.spans.tracks.len();
    format!(
        "{} · {n} span{} · {t} track{} · {}",
        trace.format.describe(),
        if n == 1 { "" } else { "s" },
        if t == 1 { "" } else { "s" },
        format_duration_ns(tracks.layout.total_ticks as f64)
    )
}

/// What a left-button drag is doing.
#[derive(Clone, Copy, Debug)]
enum Drag {
    /// Brushing the overview.
    Brush {
        grab: BrushGrab,
        window: (u64, u64),
        press_x: f32,
    },
    /// Panning the detail view.
    Pan,
    /// Selecting a time range from `anchor` (its tick and the x pressed): `on_axis` when
    /// it started on the time axis (a click there clears the range).
    Range { anchor: (u64, f32), on_axis: bool },
}

/// Per name id: the palette index of the name and of its package part, hashed once (the
/// shader's category colors and the labels' contrast read them).
struct Palettes {
    name: Vec<u8>,
    package: Vec<u8>,
}

impl Palettes {
    fn of(trace: &Trace) -> Palettes {
        let names = &trace.spans.names;
        Palettes {
            name: names
                .iter()
                .map(|(_, n)| color::palette_index(&color::pyroscope_key(n)) as u8)
                .collect(),
            package: names
                .iter()
                .map(|(_, n)| {
                    color::palette_index(&color::pyroscope_key(color::package_name(None, n))) as u8
                })
                .collect(),
        }
    }
}

/// A trace's spans as bands on a time axis.
pub struct TimelineView {
    trace: Arc<Trace>,
    mode: BandMode,
    tracks: TrackLayout,
    lod: Lod,
    /// Set for one image: `lod` holds only the tier each row draws at this many ticks
    /// per pixel, and only that is uploaded (see [`TimelineView::keep_one_zoom`]).
    only_at: Option<f64>,
    key: SceneKey,
    palettes: Palettes,
    /// Connector indices sorted by time, for a range search per frame.
    connectors_by_ns: Vec<u32>,
    state: ViewState,
    vp: Option<Viewport>,
    base: Style,
    title: String,
    labels: bool,
    note: Option<&'static str>,
    collapsed: Vec<bool>,
    selected: Option<u32>,
    search: Option<SearchResult>,
    search_cursor: Option<usize>,
    /// Last click: time and span, for double clicks.
    last_click: Option<(f64, u32)>,
    pointer: Option<(f32, f32)>,
    hover: Option<BarRef>,
    hover_run: Option<MergedRun>,
    drag: Option<Drag>,
    /// The longest span, the heat scale (computed once: it is O(spans)).
    max_dur_ns: u64,
    /// The selected time range in ticks (a timeline of samples only; see `range.rs`).
    range: Option<(u64, u64)>,
    /// Wake arrows of the current bands, by time (see `attribution.rs`).
    wakes: Vec<attribution::Wake>,
    /// The arrow under the pointer.
    hover_wake: Option<usize>,
    /// Colors by a counter of the samples instead of `state.color`.
    attr: Option<AttrColor>,
}

impl TimelineView {
    /// A timeline of `trace` in the format's usual band mode and colors.
    pub fn new(trace: Arc<Trace>, opts: &ViewOptions) -> TimelineView {
        let mode = default_band_mode(&trace);
        Self::with_mode(trace, mode, opts)
    }

    /// A timeline of `trace` in band mode `mode`.
    pub fn with_mode(trace: Arc<Trace>, mode: BandMode, opts: &ViewOptions) -> TimelineView {
        let tracks = track_layout(&trace.spans, &trace.tree, mode);
        Self::with_tracks(trace, mode, tracks, opts)
    }

    /// [`TimelineView::with_mode`] for one image: no tiers are built until
    /// [`TimelineView::keep_one_zoom`] builds the one its camera draws.
    pub fn for_one_image(trace: Arc<Trace>, mode: BandMode, opts: &ViewOptions) -> TimelineView {
        let tracks = track_layout(&trace.spans, &trace.tree, mode);
        Self::with_tracks_lod(trace, mode, tracks, Lod::default(), opts)
    }

    /// For one image at the current camera: when the image shows the whole trace at the
    /// zoom of its overview strip (which draws the whole trace with the tiers of its own
    /// zoom), keeps only the tier each row draws there (built as [`view_lod`] builds it:
    /// the same bars as the whole pyramid's tier, in a fraction of the time) and uploads
    /// only that, as a flame graph export does; otherwise (a time range, or a strip of
    /// another width) builds every tier, as a window does. Returns whether one tier was
    /// kept.
    pub fn keep_one_zoom(&mut self) -> bool {
        let tpp = 1.0 / self.state.camera.px_per_tick;
        // The overview's zoom, as `OverviewLayer::bars` takes it.
        let strip_w = (self.geometry(1.0).overview.w as u32).max(1);
        let strip = Camera::fit(self.tracks.layout.total_ticks.max(1), f64::from(strip_w));
        let one = (1.0 / strip.px_per_tick).to_bits() == tpp.to_bits();
        if one {
            self.lod = view_lod(&self.tracks.layout, tpp);
            self.only_at = Some(tpp);
        } else {
            self.lod = Lod::build(&self.tracks.layout);
            self.only_at = None;
        }
        self.key = SceneKey::fresh();
        one
    }

    /// A timeline of `trace` whose spans are laid out already in `tracks` (made in `mode`;
    /// benchmarks build huge layouts directly).
    pub fn with_tracks(
        trace: Arc<Trace>,
        mode: BandMode,
        tracks: TrackLayout,
        opts: &ViewOptions,
    ) -> TimelineView {
        let lod = Lod::build(&tracks.layout);
        Self::with_tracks_lod(trace, mode, tracks, lod, opts)
    }

    fn with_tracks_lod(
        trace: Arc<Trace>,
        mode: BandMode,
        tracks: TrackLayout,
        lod: Lod,
        opts: &ViewOptions,
    ) -> TimelineView {
        let color = match opts.color {
            Some(
                c @ (ColorMode::Track
                | ColorMode::Category
                | ColorMode::Name
                | ColorMode::Package
                | ColorMode::Value),
            ) => c,
            _ => default_color(mode),
        };
        let palettes = Palettes::of(&trace);
        let max_dur_ns = trace.spans.dur_ns.iter().copied().max().unwrap_or(0);
        let connectors_by_ns = connectors_by_ns(&tracks);
        let state = ViewState::new(&tracks.layout, 1.0, 0.0, 1.0, Orientation::Icicle, color);
        let title = opts
            .title
            .clone()
            .unwrap_or_else(|| crate::model::document::file_name(&trace.source));
        let mut v = TimelineView {
            collapsed: vec![false; tracks.bands.len()],
            trace,
            mode,
            tracks,
            lod,
            only_at: None,
            key: SceneKey::fresh(),
            palettes,
            connectors_by_ns,
            state,
            vp: None,
            base: opts.style,
            title,
            labels: true,
            note: None,
            selected: None,
            search: None,
            search_cursor: None,
            last_click: None,
            pointer: None,
            hover: None,
            hover_run: None,
            drag: None,
            max_dur_ns,
            range: None,
            wakes: Vec::new(),
            hover_wake: None,
            attr: None,
        };
        v.wakes = v.collect_wakes();
        let r = v.trace.sampled.as_ref().and_then(|s| s.selection.range);
        let r = v.range_from_samples(r);
        v.set_range(r);
        v
    }

    /// The trace shown.
    pub fn trace(&self) -> &Trace {
        &self.trace
    }

    /// Its spans in rows and bands.
    pub fn tracks(&self) -> &TrackLayout {
        &self.tracks
    }

    /// The band mode.
    pub fn mode(&self) -> BandMode {
        self.mode
    }

    /// The camera, scroll and colors.
    pub fn state(&self) -> &ViewState {
        &self.state
    }

    /// The camera, scroll and colors, to change directly (tests, benchmarks).
    pub fn state_mut(&mut self) -> &mut ViewState {
        &mut self.state
    }

    /// The level-of-detail tiers.
    pub fn lod(&self) -> &Lod {
        &self.lod
    }

    /// The logical sizes of this view's parts (a details panel while a span is selected).
    pub fn timeline_style(&self) -> TimelineStyle {
        let mut s = TimelineStyle {
            base: self.base,
            ..TimelineStyle::default()
        };
        if self.selected.is_some() {
            let line = line_height(s.base.label_font);
            s.details_height = (DETAIL_LINES as f32 * line + 16.0).round();
        }
        s
    }

    /// The geometry of the current viewport (scaled by `factor` for a screenshot).
    pub fn geometry(&self, factor: f32) -> TimelineGeometry {
        let vp = self.vp.unwrap_or(Viewport::UNIT).scaled(factor);
        let mut g = TimelineGeometry::new(
            vp.width_px,
            vp.height_px,
            vp.scale,
            &self.tracks.bands,
            &self.collapsed,
            self.timeline_style(),
        );
        g.scroll_px = (self.state.scroll_px * factor).clamp(0.0, g.max_scroll());
        g
    }

    /// The camera as drawn for `purpose`.
    pub fn camera(&self, purpose: Purpose) -> Camera {
        self.state.camera.scaled(purpose.factor())
    }

    /// Lays the bands out again in `mode` (a new scene, collapsed state and scroll reset;
    /// the search runs again).
    pub fn set_mode(&mut self, mode: BandMode) {
        let t0 = std::time::Instant::now();
        self.mode = mode;
        self.tracks = track_layout(&self.trace.spans, &self.trace.tree, mode);
        self.lod = Lod::build(&self.tracks.layout);
        self.only_at = None;
        self.connectors_by_ns = connectors_by_ns(&self.tracks);
        self.key = SceneKey::fresh();
        self.collapsed = vec![false; self.tracks.bands.len()];
        self.state.scroll_px = 0.0;
        self.hover = None;
        self.hover_run = None;
        self.wakes = self.collect_wakes();
        self.hover_wake = None;
        if let Some(q) = self.search.as_ref().map(|s| s.query.clone()) {
            self.search(&q);
        }
        eprintln!(
            "scorch: re-laid out {} spans in {:.0} ms",
            self.trace.spans.len(),
            t0.elapsed().as_secs_f64() * 1000.0
        );
        self.sync();
    }

    /// Keeps the camera's width and the scroll range in step with the geometry.
    fn sync(&mut self) {
        let g = self.geometry(1.0);
        self.state.content_px = Some(g.content_h);
        self.state
            .resize(f64::from(g.graph.w), g.graph.h, g.row_pitch_px);
    }

    /// The spans as one scene of bars with the values `of` gives (the shader's heat
    /// scale tops at `max_self`; `merge` combines a merged run's values).
    fn scene_source<'a>(
        &'a self,
        of: Box<dyn Fn(u32) -> [f32; 3] + Sync + 'a>,
        merge: fn([f64; 3], [f64; 3]) -> [f64; 3],
        max_self: f32,
    ) -> Vec<BarSource<'a>> {
        vec![BarSource {
            key: self.key,
            layout: &self.tracks.layout,
            lod: &self.lod,
            names: &self.trace.spans.names,
            spy: None,
            values: BarValues {
                of,
                merge,
                max_self,
                diff_ticks: None,
                // Attribute colors are heat of the values.
                read: self.attr.is_some() || BarValues::read_by(self.only_at, self.state.color),
                nested: false,
            },
            only_at: self.only_at,
            noun: "spans",
        }]
    }

    /// The bar showing span `s` in the current layout.
    fn bar_of(&self, s: u32) -> Option<BarRef> {
        let tl = &self.tracks;
        let row = *tl.row_of.get(s as usize)? as usize;
        let r = tl.layout.rows.get(row)?;
        let start = self.trace.spans.start_ns[s as usize];
        let from = r.x0.partition_point(|&x| x < start);
        (from..r.len())
            .take_while(|&i| r.x0[i] == start)
            .find(|&i| r.node[i] == s)
            .map(|index| BarRef { row, index })
    }

    fn span_at(&self, bar: BarRef) -> Option<u32> {
        let r = self.tracks.layout.rows.get(bar.row)?;
        r.node.get(bar.index).copied()
    }

    fn pick(&self, g: &TimelineGeometry, x: f32, y: f32) -> Option<BarRef> {
        pick_span(
            &self.tracks.layout,
            g,
            &self.state.camera,
            x,
            y,
            PICK_SLOP_PX * g.scale,
        )
    }

    fn update_hover(&mut self) -> bool {
        let g = self.geometry(1.0);
        let new = match self.pointer {
            Some((x, y)) if self.drag.is_none() => self.pick(&g, x, y),
            _ => None,
        };
        let run = match (self.pointer, new) {
            (Some((x, _)), Some(bar)) => {
                let cam = &self.state.camera;
                let tick = cam.tick_at(f64::from(x - g.graph.x));
                let layout = &self.tracks.layout;
                self.lod
                    .merged_run_at(layout, bar.row, 1.0 / cam.px_per_tick, tick)
                    .and_then(|(k, j)| self.lod.run(layout, bar.row, k, j))
            }
            _ => None,
        };
        let wake = match self.pointer {
            Some((x, y)) if self.drag.is_none() => self.wake_at(x, y),
            _ => None,
        };
        let changed = new != self.hover || run != self.hover_run || wake != self.hover_wake;
        self.hover = new;
        self.hover_run = run;
        self.hover_wake = wake;
        changed
    }

    /// Zooms to span `s` with a margin of a tenth on each side, as Perfetto's "F" does.
    fn zoom_to_span(&mut self, s: u32, now_s: f64) {
        let i = s as usize;
        let spans = &self.trace.spans;
        let (a, b) = (
            spans.start_ns[i],
            spans.end_ns(i).max(spans.start_ns[i] + 1),
        );
        self.zoom_around(a, b, now_s);
    }

    /// Zooms to `[a, b)` with a margin of a tenth on each side.
    fn zoom_around(&mut self, a: u64, b: u64, now_s: f64) {
        let m = (b - a) / 10;
        self.state
            .zoom_to_ticks(a.saturating_sub(m), b.saturating_add(m), now_s);
    }

    /// Scrolls so the selected span's row is visible (expanding its band).
    fn reveal_selected(&mut self) {
        let Some(bar) = self.selected.and_then(|s| self.bar_of(s)) else {
            return;
        };
        if let Some(b) = self.tracks.band_of_row(bar.row) {
            self.collapsed[b] = false;
        }
        self.sync();
        let g = self.geometry(1.0);
        let Some(top) = g.row_top(bar.row) else {
            return;
        };
        let v = &mut self.state;
        if top < g.graph.y {
            v.scroll_by(-(g.graph.y - top + g.header_px));
        } else if top + g.row_pitch_px > g.graph.y + g.graph.h {
            v.scroll_by(top + g.row_pitch_px - (g.graph.y + g.graph.h) + g.row_pitch_px);
        }
    }

    /// The color span `s` is drawn in (the CPU side of `bars.wgsl`), for a label color
    /// that reads on it.
    fn span_color(&self, s: usize, max_dur: f64, greyed: bool) -> [f32; 3] {
        if greyed {
            return [0.87, 0.87, 0.87];
        }
        if let Some(a) = self.attr {
            return self.attr_color(a, s);
        }
        let spans = &self.trace.spans;
        let track = color::track_palette_index(spans.track[s]) as usize;
        let name = spans.name[s] as usize;
        let index = match self.state.color {
            ColorMode::Track => track,
            ColorMode::Category => spans
                .category
                .get(s)
                .filter(|&&c| !spans.names.get(c).is_empty())
                .map_or(track, |&c| usize::from(self.palettes.name[c as usize])),
            ColorMode::Name => usize::from(self.palettes.name[name]),
            ColorMode::Package => usize::from(self.palettes.package[name]),
            ColorMode::Value => return color::heat_color(spans.dur_ns[s] as f64, max_dur),
            ColorMode::Diff => 7,
        };
        color::palette_color(index)
    }

    /// A span made from samples: `≈ 12.3 ms (± 130 µs), 13 samples`, or for one sample
    /// `≈ 130 µs (± 130 µs), a single sample`; `None` for spans the file states (and
    /// exact ones, from evented input).
    fn sampled_duration(&self, i: usize) -> Option<String> {
        let sm = self.trace.sampling.as_ref()?;
        let n = sm.samples_of(i)?;
        if sm.exact {
            return None;
        }
        let d = format_duration_ns(self.trace.spans.dur_ns[i] as f64);
        let pm = format_duration_ns(sm.interval_ns as f64);
        Some(if n == 1 {
            format!("≈ {d} (± {pm}), a single sample")
        } else {
            format!("≈ {d} (± {pm}), {n} samples")
        })
    }

    /// The details panel's lines for span `sp`.
    fn detail_lines(&self, sp: u32) -> Vec<String> {
        let spans = &self.trace.spans;
        let i = sp as usize;
        let mut lines = vec![spans.names.get(spans.name[i]).to_string()];
        let track = spans.track_label(spans.track[i]);
        lines.push(format!(
            "duration {} · start {} after the trace's start · end {} · track {track}",
            self.sampled_duration(i)
                .unwrap_or_else(|| format_duration_ns(spans.dur_ns[i] as f64)),
            format_duration_ns(spans.start_ns[i] as f64),
            format_duration_ns(spans.end_ns(i) as f64),
        ));
        lines.extend(self.counter_lines(i));
        let parent = self.trace.tree.parent_of(spans, i);
        let kids = self.trace.tree.children(sp).len();
        lines.push(format!(
            "parent: {} · {kids} child span{}",
            if parent == NO_PARENT {
                "none (a root)".to_string()
            } else {
                spans.names.get(spans.name[parent as usize]).to_string()
            },
            if kids == 1 { "" } else { "s" }
        ));
        lines.extend(span_attributes(spans, i));
        if lines.len() > DETAIL_LINES {
            let more = lines.len() - (DETAIL_LINES - 1);
            lines.truncate(DETAIL_LINES - 1);
            lines.push(format!("… and {more} more lines of attributes"));
        }
        lines
    }
}

fn connectors_by_ns(tracks: &TrackLayout) -> Vec<u32> {
    let mut by: Vec<u32> = (0..tracks.connectors.len() as u32).collect();
    by.sort_by_key(|&c| tracks.connectors[c as usize].at_ns);
    by
}

/// A span's category and attributes as lines of `key: value` pairs, several to a line
/// (none when the format has none).
fn span_attributes(spans: &crate::model::spans::SpanSet, i: usize) -> Vec<String> {
    const LINE_CHARS: usize = 160;
    const VALUE_CHARS: usize = 120;
    let mut items: Vec<String> = Vec::new();
    if let Some(c) = spans.category_of(i) {
        items.push(format!("category: {c}"));
    }
    for (k, v) in spans.attrs.get(i as u32) {
        let v = if v.chars().count() > VALUE_CHARS {
            let cut: String = v.chars().take(VALUE_CHARS).collect();
            format!("{cut}…")
        } else {
            v.to_string()
        };
        items.push(format!("{k}: {v}"));
    }
    let mut lines: Vec<String> = Vec::new();
    for it in items {
        match lines.last_mut() {
            Some(l) if l.chars().count() + it.chars().count() + 3 <= LINE_CHARS => {
                l.push_str(" · ");
                l.push_str(&it);
            }
            _ => lines.push(it),
        }
    }
    lines
}

impl View for TimelineView {
    fn kind(&self) -> ViewKind {
        ViewKind::TIMELINE
    }

    fn document(&self) -> Document {
        Document::Trace(self.trace.clone())
    }

    fn viewport(&self) -> Option<Viewport> {
        self.vp
    }

    fn set_viewport(&mut self, vp: Viewport) {
        let first = self.vp.is_none();
        self.vp = Some(vp);
        if first {
            let g = self.geometry(1.0);
            self.state = ViewState::new(
                &self.tracks.layout,
                f64::from(g.graph.w),
                g.graph.h,
                g.row_pitch_px,
                Orientation::Icicle,
                self.state.color,
            );
        }
        self.sync();
        self.update_hover();
    }

    fn style(&self) -> Style {
        self.base
    }

    fn content_top(&self) -> f32 {
        self.geometry(1.0).graph.y
    }

    fn tick(&mut self, now_s: f64) -> bool {
        let running = self.state.tick(now_s);
        self.update_hover();
        running
    }

    fn pointer(&mut self, at: Option<(f32, f32)>) -> bool {
        self.pointer = at;
        // The cursor line follows the pointer: any move redraws.
        self.update_hover() || at.is_some()
    }

    fn press(&mut self, x: f32, y: f32) {
        let g = self.geometry(1.0);
        let total = self.tracks.layout.total_ticks.max(1);
        let window = self.state.camera.visible_ticks(f64::from(g.graph.w));
        let window = (window.0.min(total), window.1.min(total));
        self.drag = Some(if g.overview.contains(x, y) {
            Drag::Brush {
                grab: brush_grab(&g, window, total, x),
                window,
                press_x: x,
            }
        } else if g.axis.contains(x, y) && self.trace.sampled.is_some() {
            Drag::Range {
                anchor: (self.tick_at_x(x), x),
                on_axis: true,
            }
        } else {
            Drag::Pan
        });
    }

    fn press_shifted(&mut self, x: f32, y: f32) {
        let g = self.geometry(1.0);
        if self.trace.sampled.is_some() && g.graph.contains(x, y) {
            self.drag = Some(Drag::Range {
                anchor: (self.tick_at_x(x), x),
                on_axis: false,
            });
        } else {
            self.press(x, y);
        }
    }

    fn drag(&mut self, x: f32, _y: f32, dx: f32, dy: f32) {
        let g = self.geometry(1.0);
        match self.drag {
            Some(Drag::Brush {
                grab,
                window,
                press_x,
            }) => {
                let total = self.tracks.layout.total_ticks.max(1);
                let (a, b) = brush_drag(&g, grab, window, total, press_x, x, 1);
                self.state.show_ticks(a, b);
            }
            Some(Drag::Pan) => {
                self.state.pan_px(f64::from(dx));
                self.state.scroll_by(-dy);
            }
            Some(Drag::Range { anchor, .. }) => self.drag_range(anchor, x),
            None => {}
        }
    }

    fn release(&mut self, x: f32, y: f32, click: bool, now_s: f64) {
        let drag = self.drag.take();
        let g = self.geometry(1.0);
        let run = self.hover_run.map(|r| (r.x0, r.x1));
        if let Some(Drag::Range { on_axis, .. }) = drag {
            if click && on_axis {
                // A click on the axis clears the range.
                self.range = None;
            }
            self.update_hover();
            return;
        }
        if !click {
            if let Some(Drag::Brush { window, .. }) = drag {
                // Backspace returns to the window before the brush.
                self.state.remember_ticks(window.0, window.1);
            }
            self.update_hover();
            return;
        }
        if let Some(k) = self.wake_at(x, y) {
            self.follow_wake(k, now_s);
            self.update_hover();
            return;
        }
        if g.overview.contains(x, y) {
            // A click in the overview centres the window there.
            let total = self.tracks.layout.total_ticks.max(1);
            let (a, b) = self.state.camera.visible_ticks(f64::from(g.graph.w));
            let half = (b - a) / 2;
            let at = g.overview_ns(x, total);
            let start = at.saturating_sub(half).min(total.saturating_sub(b - a));
            self.state.zoom_to_ticks(start, start + (b - a), now_s);
            self.update_hover();
            return;
        }
        match g.hit(y) {
            Some(GraphHit::Header(b)) if g.graph.contains(x, y) => {
                if let Some(c) = self.collapsed.get_mut(b) {
                    *c = !*c;
                }
            }
            Some(GraphHit::Row(_)) if g.graph.contains(x, y) => {
                if let Some((a, b)) = run {
                    self.state.zoom_to_ticks(a, b, now_s);
                } else {
                    match self.pick(&g, x, y).and_then(|b| self.span_at(b)) {
                        Some(sp) => {
                            let double = self
                                .last_click
                                .is_some_and(|(t, s)| s == sp && now_s - t < DOUBLE_CLICK_S);
                            if double {
                                self.zoom_to_span(sp, now_s);
                                self.last_click = None;
                            } else {
                                self.last_click = Some((now_s, sp));
                            }
                            self.selected = Some(sp);
                        }
                        None => {
                            self.selected = None;
                            self.last_click = None;
                        }
                    }
                }
            }
            _ => {}
        }
        self.sync();
        self.update_hover();
    }

    fn wheel(&mut self, at: Option<(f32, f32)>, w: Wheel) {
        let g = self.geometry(1.0);
        match w {
            Wheel::Scroll { rows } => self.state.scroll_by(-rows * g.row_pitch_px),
            Wheel::Zoom {
                steps,
                speed,
                pan_px,
            } => {
                let (cx, cy) = at.unwrap_or((g.graph.x, g.graph.y));
                let x = if g.overview.contains(cx, cy) {
                    // Over the overview: zoom about the pointer's time.
                    let total = self.tracks.layout.total_ticks.max(1);
                    self.state.camera.x_of(g.overview_ns(cx, total))
                } else {
                    f64::from(cx - g.graph.x)
                };
                if steps != 0.0 {
                    self.state
                        .wheel_zoom(x.clamp(0.0, f64::from(g.graph.w)), steps, speed);
                }
                if pan_px != 0.0 {
                    self.state.pan_px(-pan_px);
                }
            }
        }
        self.update_hover();
    }

    fn pinch(&mut self, at: Option<(f32, f32)>, factor: f64) {
        let g = self.geometry(1.0);
        let cx = at.map_or(0.0, |(x, _)| f64::from(x - g.graph.x));
        self.state.zoom_around(cx, factor);
        self.update_hover();
    }

    fn act(&mut self, action: Action, now_s: f64) -> Reply {
        let g = self.geometry(1.0);
        let w = f64::from(g.graph.w);
        let page = g.graph.h * 0.9;
        let pitch = g.row_pitch_px;
        let v = &mut self.state;
        match action {
            Action::Escape => {
                if self.selected.is_some() {
                    self.selected = None;
                } else if self.range.is_some() {
                    self.range = None;
                } else {
                    v.back(now_s);
                }
            }
            Action::Back => {
                v.back(now_s);
            }
            Action::PanLeft => v.pan_px(w * 0.1),
            Action::PanRight => v.pan_px(-w * 0.1),
            Action::ScrollUp => v.scroll_by(-pitch * 3.0),
            Action::ScrollDown => v.scroll_by(pitch * 3.0),
            Action::PageUp => v.scroll_by(-page),
            Action::PageDown => v.scroll_by(page),
            Action::Home => v.scroll_by(-1e9),
            Action::End => v.scroll_by(1e9),
            Action::ZoomIn => v.zoom_around(w / 2.0, 1.5),
            Action::ZoomOut => v.zoom_around(w / 2.0, 1.0 / 1.5),
            Action::Reset => v.reset(),
            Action::ZoomToSelection => {
                if let Some(sp) = self.selected {
                    self.zoom_to_span(sp, now_s);
                }
            }
            Action::CycleColor => {
                // After the value heat: the samples' counters, then around again.
                let modes = attribution::attr_modes(&self.trace);
                match self.attr {
                    Some(a) => {
                        let k = modes.iter().position(|&m| m == a);
                        self.attr = k.and_then(|k| modes.get(k + 1).copied());
                        self.key = SceneKey::fresh();
                        if self.attr.is_none() {
                            v.color = ColorMode::Track;
                        }
                    }
                    None if v.color == ColorMode::Value && !modes.is_empty() => {
                        self.attr = Some(modes[0]);
                        self.key = SceneKey::fresh();
                    }
                    None => {
                        v.color = match v.color {
                            ColorMode::Track => ColorMode::Category,
                            ColorMode::Category => ColorMode::Name,
                            ColorMode::Name => ColorMode::Package,
                            ColorMode::Package => ColorMode::Value,
                            _ => ColorMode::Track,
                        };
                    }
                }
            }
            Action::ToggleBands => {
                let mode = match self.mode {
                    BandMode::PerTrack => BandMode::OneTree,
                    BandMode::OneTree => BandMode::PerTrack,
                };
                self.set_mode(mode);
            }
            Action::ToggleAllBands => {
                let all = self.collapsed.iter().all(|&c| c);
                self.collapsed.iter_mut().for_each(|c| *c = !all);
                v.scroll_px = 0.0;
            }
            Action::NextMatch => self.next_match(false, now_s),
            Action::PrevMatch => self.next_match(true, now_s),
            _ => return Reply::Ignored,
        }
        self.sync();
        self.update_hover();
        Reply::Done
    }

    fn search(&mut self, query: &str) {
        let t = &self.trace;
        self.search = (!query.is_empty()).then(|| {
            search_spans(
                &t.spans,
                self.tracks.parents(&t.spans),
                &self.tracks.layout,
                query,
            )
        });
        self.search_cursor = None;
    }

    fn search_summary(&self) -> Option<String> {
        let sr = self.search.as_ref()?;
        Some(format!(
            "/{}: {} match{}, {} in matching spans",
            sr.query,
            sr.bars.len(),
            if sr.bars.len() == 1 { "" } else { "es" },
            format_duration_ns(sr.matched_ticks as f64)
        ))
    }

    fn next_match(&mut self, backwards: bool, now_s: f64) {
        let Some(s) = &self.search else { return };
        let layout = &self.tracks.layout;
        let current = self.search_cursor.map(|i| s.bars[i]);
        if let Some(i) = s.next_from(layout, current, backwards) {
            let bar = s.bars[i];
            self.search_cursor = Some(i);
            let r = &layout.rows[bar.row];
            let (sp, a, b) = (r.node[bar.index], r.x0[bar.index], r.x1[bar.index]);
            self.zoom_around(a, b, now_s);
            self.selected = Some(sp);
        }
        self.reveal_selected();
        self.sync();
    }

    fn heading(&self, purpose: Purpose) -> Heading {
        let summary = summary(&self.trace, &self.tracks);
        let subtitle = if purpose.windowed() {
            let mut s = format!(
                "{} · {} colors · {summary}",
                match self.mode {
                    BandMode::PerTrack => "bands per track",
                    BandMode::OneTree => "one tree",
                },
                self.attr.map_or(self.state.color.name(), AttrColor::name),
            );
            if let Some(note) = self.note {
                s = format!("{s} · {note}");
            }
            s
        } else {
            summary
        };
        Heading {
            title: self.title.clone(),
            subtitle,
            legend: None,
        }
    }

    fn status_hint(&self) -> String {
        if let Some(r) = self.range_status() {
            return r;
        }
        if self.trace.sampled.is_some() {
            return "wheel: zoom · drag: pan · drag the time axis or Shift+drag: select a range · click: select · double-click: zoom · / search · C colors · E event · Ctrl+S screenshot · ?: every key".to_string();
        }
        "wheel: zoom · drag: pan · overview: drag edges/window, drag to select · click: select · double-click: zoom · header: collapse · / search · T bands · C colors · Ctrl+S screenshot · ?: every key".to_string()
    }

    fn tooltip(&self) -> Vec<String> {
        if let Some(k) = self.hover_wake {
            return self.wake_tooltip(k);
        }
        let Some(sp) = self.hover.and_then(|b| self.span_at(b)) else {
            return Vec::new();
        };
        let spans = &self.trace.spans;
        let i = sp as usize;
        let mut lines = Vec::new();
        if let Some(run) = self.hover_run {
            lines.push(format!(
                "{} spans merged at this zoom, mostly {}",
                run.count,
                spans.names.get(run.name)
            ));
            lines.push(format!(
                "{} from {} to {} · click to zoom in",
                format_duration_ns((run.x1 - run.x0) as f64),
                format_duration_ns(run.x0 as f64),
                format_duration_ns(run.x1 as f64)
            ));
            return lines;
        }
        lines.push(spans.names.get(spans.name[i]).to_string());
        match self.sampled_duration(i) {
            Some(d) => lines.push(format!(
                "{d} · starts at ≈ {}",
                format_duration_ns(spans.start_ns[i] as f64)
            )),
            None => lines.push(format!(
                "{} · starts at {}",
                format_duration_ns(spans.dur_ns[i] as f64),
                format_duration_ns(spans.start_ns[i] as f64)
            )),
        }
        lines.extend(self.counter_lines(i));
        lines.push(spans.track_label(spans.track[i]));
        if let Some(c) = spans.category_of(i) {
            lines.push(format!("category: {c}"));
        }
        lines
    }

    fn set_note(&mut self, note: Option<&'static str>) {
        self.note = note;
    }

    fn set_labels(&mut self, on: bool) {
        self.labels = on;
    }

    fn bar_sources(&self) -> Vec<BarSource<'_>> {
        if let Some(a) = self.attr {
            return self.attr_sources(a);
        }
        let spans = &self.trace.spans;
        let names = &self.palettes.name;
        let of = move |s: u32| -> [f32; 3] {
            let s = s as usize;
            let d = spans.dur_ns[s] as f32;
            let track = color::track_palette_index(spans.track[s]);
            let cat = spans
                .category
                .get(s)
                .filter(|&&c| !spans.names.get(c).is_empty())
                .map_or(track, |&c| u32::from(names[c as usize]));
            [d, track as f32, cat as f32]
        };
        // A merged run keeps its first span's colors and sums the durations.
        self.scene_source(
            Box::new(of),
            |a, b| [a[0] + b[0], a[1], a[2]],
            self.max_dur_ns as f32,
        )
    }

    fn draw<'a>(&'a self, frame: &mut Frame<'a>, m: &mut dyn Measure, purpose: Purpose) {
        let g = self.geometry(purpose.factor());
        let cam = self.camera(purpose);
        let sight = paint::Sight { g: &g, cam };
        self.draw_overview(frame, &sight);
        let ticks = self.draw_axis(frame, &sight, m);
        self.draw_band_headers(frame, &g);
        let rows = row_draws(
            &self.tracks.layout,
            Some(&self.lod),
            g.visible_rows(),
            &cam,
            f64::from(g.graph.w),
            0,
        );
        self.draw_uncertainty(frame, &sight, &rows);
        self.draw_cpu(frame, &sight, &rows);
        self.draw_labels(frame, &sight, &rows, m);
        self.draw_connectors(frame, &sight);
        self.draw_wakes(frame, &sight);
        self.draw_range(frame, &sight, m);
        let line = g.scale.round().max(1.0);
        if let Some(sel) = self.selected.and_then(|s| self.bar_of(s)) {
            self.outline_bar(
                frame,
                &sight,
                sel,
                None,
                (2.0 * line, rgba([20, 60, 200], 1.0)),
            );
        }
        if purpose.pointer()
            && let Some(h) = self.hover
        {
            let ticks = self.hover_run.map(|r| (r.x0, r.x1));
            self.outline_bar(frame, &sight, h, ticks, (line, [0.1, 0.1, 0.1, 0.85]));
        }
        if purpose.pointer()
            && let Some((cx, cy)) = self.pointer
            && cy >= g.axis.y
            && cy < g.graph.y + g.graph.h
            && cx >= g.graph.x
            && cx < g.graph.x + g.graph.w
        {
            self.draw_cursor(frame, &sight, &ticks, cx, m);
        }
        if let Some(sp) = self.selected {
            self.draw_details(frame, &g, sp);
        }
        frame.bars.push(BarsLayer {
            scene: self.key,
            clip: g.graph,
            camera: cam,
            bar_height: g.bar_height_px,
            gap: g.gap_px,
            color: self.shader_color(),
            colorblind: false,
            search: self.search.as_ref().map(SearchResult::flags),
            rows,
            lod: &self.lod,
        });
    }

    fn rows_shown(&self) -> (usize, usize) {
        let g = self.geometry(1.0);
        let shown = g.visible_rows().len();
        let all: usize = g.bands.iter().map(|b| b.rows_shown as usize).sum();
        (shown.min(all), all)
    }

    fn memo(&self) -> ViewMemo {
        let v = &self.state;
        let cam = v.target_camera();
        let left = cam.start as f64 + cam.start_frac;
        let right = left + v.graph_w / cam.px_per_tick;
        let span = v.total_ticks as f64;
        let whole = left / span <= 1e-9 && right / span >= 1.0 - 1e-9;
        let origin = self.trace.spans.origin_ns as f64;
        ViewMemo {
            color: Some(v.color),
            time_window: (!whole).then_some((left + origin, right + origin)),
            scroll_px: v.scroll_px,
            fit: None,
            function: None,
            ..ViewMemo::default()
        }
    }

    fn color_label(&self) -> Option<&'static str> {
        Some(self.attr.map_or(self.state.color.name(), AttrColor::name))
    }

    fn sample_range(&self) -> Option<Option<(u64, u64)>> {
        self.trace.sampled.as_ref()?;
        Some(self.range_in_samples())
    }

    fn restore(&mut self, memo: &ViewMemo, _now_s: f64) {
        if let Some(c) = memo.color {
            self.state.color = c;
        }
        self.state.scroll_by(memo.scroll_px);
        if let Some((l, r)) = memo.time_window {
            // Both in this trace's ticks: ticks are nanoseconds after each trace's origin.
            let origin = self.trace.spans.origin_ns as f64;
            let x0 = (l - origin).max(0.0) as u64;
            let x1 = (r - origin).max(0.0).ceil() as u64;
            self.state.show_ticks(x0, x1.max(x0 + 1));
        }
        self.update_hover();
    }
}
