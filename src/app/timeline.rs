//! The window's timeline mode: a trace (Chrome, Jaeger, OTLP, TiDB) as bands of spans on
//! a time axis, with the overview strip above.
//!
//! The horizontal view is the same [`ViewState`] camera as the flame graph's (wheel zoom
//! about the pointer, drag pan, animated zooms, Backspace history); the overview's window
//! is that camera's visible range, so brushing the overview moves the camera
//! ([`ViewState::show_ticks`]) and zooming the detail view moves the window. Everything
//! geometric (hit testing, brush edges, axis ticks) is pure code in
//! [`crate::view::timeline`]; this file maps events to it and builds the frame.

use super::{App, Gfx};
use crate::color::ColorMode;
use crate::export::TraceView;
use crate::layout::timeline::BandMode;
use crate::model::units::format_duration_ns;
use crate::pick::BarRef;
use crate::render::frame::{Overlay, TITLE_COLOR};
use crate::render::text::TextLayer;
use crate::render::timeline::{TimelineContent, TimelineScene, TimelineSpec};
use crate::view::search::{SearchResult, search_spans};
use crate::view::state::{ViewState, ZoomSpeed};
use crate::view::timeline::{
    BrushGrab, GraphHit, TimelineGeometry, TimelineStyle, brush_drag, brush_grab, pick_span,
};
use crate::view::{Camera, Orientation};
use std::path::PathBuf;
use std::time::Instant;
use winit::keyboard::{Key, NamedKey};

/// Pointer distance within which instants and thin spans are picked.
const PICK_SLOP_PX: f32 = 4.0;
/// Two clicks on the same span closer than this are a double click.
const DOUBLE_CLICK_S: f64 = 0.4;
/// Lines of the details panel.
const DETAIL_LINES: usize = 7;

/// A loaded trace and its view.
pub(super) struct TraceDoc {
    pub(super) trace: TraceView,
    pub(super) path: Option<PathBuf>,
    pub(super) name: String,
    pub(super) view: ViewState,
    pub(super) collapsed: Vec<bool>,
    pub(super) scroll_px: f32,
    pub(super) selected: Option<u32>,
    pub(super) color: ColorMode,
    pub(super) search: Option<SearchResult>,
    pub(super) search_generation: u64,
    pub(super) search_cursor: Option<usize>,
    /// Last click: time and span, for double clicks.
    pub(super) last_click: Option<(f64, u32)>,
}

/// What a left-button drag in timeline mode is doing.
#[derive(Clone, Copy, Debug)]
pub(super) enum TimelineDrag {
    /// Brushing the overview.
    Brush {
        grab: BrushGrab,
        window: (u64, u64),
        press_x: f32,
    },
    /// Panning the detail view.
    Pan,
}

impl TraceDoc {
    /// The bar showing span `s` in the current layout.
    fn bar_of(&self, s: u32) -> Option<BarRef> {
        let tl = &self.trace.tracks;
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
        let r = self.trace.tracks.layout.rows.get(bar.row)?;
        r.node.get(bar.index).copied()
    }
}

impl App {
    /// Shows a loaded trace.
    pub(super) fn set_trace(
        &mut self,
        trace: TraceView,
        scene: Option<TimelineScene>,
        path: Option<PathBuf>,
        name: String,
    ) {
        for w in trace.spans.warnings.lines() {
            eprintln!("scorch: warning: {}: {w}", trace.source);
        }
        let color = match self.opts.color {
            Some(
                c @ (ColorMode::Track
                | ColorMode::Category
                | ColorMode::Name
                | ColorMode::Package
                | ColorMode::Value),
            ) => c,
            _ => trace.default_color(),
        };
        let collapsed = vec![false; trace.tracks.bands.len()];
        let (w, h) = self.size();
        let g = TimelineGeometry::new(
            w,
            h,
            self.scale(),
            &trace.tracks.bands,
            &collapsed,
            timeline_style(false),
        );
        let view = ViewState::new(
            &trace.tracks.layout,
            f64::from(g.graph.w),
            g.graph.h,
            g.row_pitch_px,
            Orientation::Icicle,
            color,
        );
        if let Some(gfx) = &mut self.gfx {
            gfx.tscene = Some(scene.unwrap_or_else(|| {
                TimelineScene::new(&gfx.gpu, &gfx.renderer, &trace.spans, &trace.tracks)
            }));
            gfx.scene = None;
        }
        self.doc = None;
        self.clear_interaction();
        self.tdoc = Some(TraceDoc {
            trace,
            path,
            name,
            view,
            collapsed,
            scroll_px: 0.0,
            selected: None,
            color,
            search: None,
            search_generation: 0,
            search_cursor: None,
            last_click: None,
        });
    }

    /// The window's timeline geometry.
    pub(super) fn tl_geometry(&self) -> Option<TimelineGeometry> {
        let d = self.tdoc.as_ref()?;
        let (w, h) = self.size();
        let mut g = TimelineGeometry::new(
            w,
            h,
            self.scale(),
            &d.trace.tracks.bands,
            &d.collapsed,
            timeline_style(d.selected.is_some()),
        );
        g.scroll_px = d.scroll_px.clamp(0.0, g.max_scroll());
        Some(g)
    }

    /// Keeps the camera's width and the scroll in step with the window.
    pub(super) fn tl_resize(&mut self) {
        let Some(g) = self.tl_geometry() else { return };
        if let Some(d) = &mut self.tdoc {
            d.view
                .resize(f64::from(g.graph.w), g.graph.h, g.row_pitch_px);
            d.scroll_px = d.scroll_px.clamp(0.0, g.max_scroll());
        }
    }

    pub(super) fn tl_update_hover(&mut self) {
        let Some(g) = self.tl_geometry() else { return };
        let new = match (&self.tdoc, self.cursor) {
            (Some(d), Some((x, y))) if self.tl_drag.is_none() => pick_span(
                &d.trace.tracks.layout,
                &g,
                &d.view.camera,
                x,
                y,
                PICK_SLOP_PX * g.scale,
            ),
            _ => None,
        };
        let run = match (&self.tdoc, &self.gfx, self.cursor, new) {
            (Some(d), Some(gfx), Some((x, _)), Some(bar)) => gfx.tscene.as_ref().and_then(|sc| {
                let cam = &d.view.camera;
                let tick = cam.tick_at(f64::from(x - g.graph.x));
                sc.lod
                    .merged_run_at(&d.trace.tracks.layout, bar.row, 1.0 / cam.px_per_tick, tick)
                    .map(|(k, j)| (bar.row, k, j))
            }),
            _ => None,
        };
        if new != self.hover || run != self.hover_run {
            self.hover = new;
            self.hover_run = run;
            self.redraw();
        }
        // The cursor line follows the pointer.
        if self.cursor.is_some() {
            self.redraw();
        }
    }

    fn tl_merged_run(&self) -> Option<crate::lod::MergedRun> {
        let (r, k, j) = self.hover_run?;
        let layout = &self.tdoc.as_ref()?.trace.tracks.layout;
        self.gfx.as_ref()?.tscene.as_ref()?.lod.run(layout, r, k, j)
    }

    pub(super) fn tl_run_search(&mut self) {
        let Some(d) = &mut self.tdoc else { return };
        d.search = (!self.search_text.is_empty()).then(|| {
            search_spans(
                &d.trace.spans,
                d.trace.tracks.parents(&d.trace.spans),
                &d.trace.tracks.layout,
                &self.search_text,
            )
        });
        d.search_cursor = None;
        d.search_generation += 1;
        if let Some(gfx) = &self.gfx
            && let Some(scene) = &gfx.tscene
        {
            let flags = d
                .search
                .as_ref()
                .map(|s| s.name_matches.clone())
                .unwrap_or_default();
            scene.bars.set_search(&gfx.gpu.queue, &flags);
        }
        self.redraw();
    }

    pub(super) fn tl_jump_to_match(&mut self, backwards: bool) {
        let now = self.now_s();
        let Some(d) = &mut self.tdoc else { return };
        let Some(s) = &d.search else { return };
        let layout = &d.trace.tracks.layout;
        let current = d.search_cursor.map(|i| s.bars[i]);
        if let Some(i) = s.next_from(layout, current, backwards) {
            let bar = s.bars[i];
            d.search_cursor = Some(i);
            let r = &layout.rows[bar.row];
            zoom_around_span(&mut d.view, r.x0[bar.index], r.x1[bar.index], now);
            d.selected = Some(r.node[bar.index]);
        }
        self.tl_reveal_selected();
        self.redraw();
    }

    /// Scrolls so the selected span's row is visible (expanding its band).
    fn tl_reveal_selected(&mut self) {
        let Some(d) = &mut self.tdoc else { return };
        let Some(bar) = d.selected.and_then(|s| d.bar_of(s)) else {
            return;
        };
        if let Some(b) = d.trace.tracks.band_of_row(bar.row) {
            d.collapsed[b] = false;
        }
        let Some(g) = self.tl_geometry() else { return };
        let Some(top) = g.row_top(bar.row) else {
            return;
        };
        let Some(d) = &mut self.tdoc else { return };
        if top < g.graph.y {
            d.scroll_px -= g.graph.y - top + g.header_px;
        } else if top + g.row_pitch_px > g.graph.y + g.graph.h {
            d.scroll_px += top + g.row_pitch_px - (g.graph.y + g.graph.h) + g.row_pitch_px;
        }
        d.scroll_px = d.scroll_px.clamp(0.0, g.max_scroll());
    }

    /// The frame: the trace as export draws it, plus cursor line, details and overlays.
    pub(super) fn tl_build_spec(
        &mut self,
        g: TimelineGeometry,
        cam: Camera,
        for_screenshot: bool,
    ) -> TimelineSpec {
        let s = g.scale;
        let w = g.width_px as f32;
        let Some(d) = &self.tdoc else {
            return TimelineSpec::new(g, cam, ColorMode::Track, "scorch".into());
        };
        let mut spec = TimelineSpec::new(g.clone(), cam, d.color, d.name.clone());
        spec.subtitle = format!(
            "{} · {} colors · {}",
            match d.trace.mode {
                BandMode::PerTrack => "bands per track",
                BandMode::OneTree => "one tree",
            },
            d.color.name(),
            d.trace.subtitle()
        );
        if let Some(note) = self.preview_counts_note() {
            spec.subtitle = format!("{} · {note}", spec.subtitle);
        }
        spec.search_active = d.search.is_some();
        spec.search_generation = d.search_generation;
        spec.selected = d.selected.and_then(|sp| d.bar_of(sp));
        if !for_screenshot {
            spec.hover = self.hover;
            spec.hover_ticks = self.tl_merged_run().map(|run| (run.x0, run.x1));
            spec.cursor_x = self
                .cursor
                .filter(|&(x, y)| y >= g.axis.y && y < g.graph.y + g.graph.h && x >= g.graph.x)
                .map(|c| c.0);
        }
        let details = d.selected.map(|sp| self.detail_lines(sp));

        // Details of the selected span, in a panel under the bands.
        if let Some(lines) = details {
            let small = (g.style.base.label_font * s).round();
            let line = TextLayer::line_height(small);
            let pad = (8.0 * s).round();
            let p = g.details;
            spec.overlays.push(Overlay::Rect {
                rect: [p.x, p.y, p.w, p.h],
                color: [248, 248, 250, 255],
            });
            spec.overlays.push(Overlay::Rect {
                rect: [p.x, p.y, p.w, s.round().max(1.0)],
                color: [200, 200, 205, 255],
            });
            for (i, l) in lines.iter().take(DETAIL_LINES).enumerate() {
                spec.overlays.push(Overlay::Text {
                    text: l.clone(),
                    size: small,
                    x: pad,
                    y: p.y + pad / 2.0 + i as f32 * line,
                    color: if i == 0 { TITLE_COLOR } else { [60, 60, 60] },
                    clip: [pad, p.y, w - pad, p.y + p.h],
                });
            }
        }

        // Status line.
        let left = "wheel: zoom · drag: pan · overview: drag edges/window, drag to select · click: select · double-click: zoom · header: collapse · / search · T bands · C colors · Ctrl+S screenshot".to_string();
        let mut right = String::new();
        if let Some((m, _)) = &self.message {
            right = m.clone();
        } else if let Some(sr) = &d.search {
            right = format!(
                "/{}: {} match{}, {} in matching spans",
                sr.query,
                sr.bars.len(),
                if sr.bars.len() == 1 { "" } else { "es" },
                format_duration_ns(sr.matched_ticks as f64)
            );
        }
        let mut overlays = std::mem::take(&mut spec.overlays);
        self.push_status(&mut overlays, g.status, s, &left, &right);
        if !for_screenshot {
            if let (Some(h), Some(c)) = (self.hover, self.cursor) {
                let lines = self.tl_tooltip_lines(h);
                self.push_tooltip(&mut overlays, &lines, c, w, g.status.y, s);
            }
            if self.show_times {
                self.push_frame_times(&mut overlays, w, g.graph.y, s);
            }
        }
        spec.overlays = overlays;
        spec
    }

    fn tl_tooltip_lines(&self, bar: BarRef) -> Vec<String> {
        let Some(d) = &self.tdoc else {
            return Vec::new();
        };
        let Some(sp) = d.span_at(bar) else {
            return Vec::new();
        };
        let spans = &d.trace.spans;
        let i = sp as usize;
        let mut lines = Vec::new();
        if let Some(run) = self.tl_merged_run() {
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
        lines.push(format!(
            "{} · starts at {}",
            format_duration_ns(spans.dur_ns[i] as f64),
            format_duration_ns(spans.start_ns[i] as f64)
        ));
        lines.push(track_label(spans, spans.track[i]));
        if let Some(c) = spans.category_of(i) {
            lines.push(format!("category: {c}"));
        }
        lines
    }

    /// The details panel's lines for span `sp`.
    fn detail_lines(&self, sp: u32) -> Vec<String> {
        let Some(d) = &self.tdoc else {
            return Vec::new();
        };
        let spans = &d.trace.spans;
        let i = sp as usize;
        let mut lines = vec![spans.names.get(spans.name[i]).to_string()];
        let track = track_label(spans, spans.track[i]);
        lines.push(format!(
            "duration {} · start {} after the trace's start · end {} · track {track}",
            format_duration_ns(spans.dur_ns[i] as f64),
            format_duration_ns(spans.start_ns[i] as f64),
            format_duration_ns(spans.end_ns(i) as f64),
        ));
        let parent = d.trace.tree.parent_of(spans, i);
        let kids = d.trace.tree.children(sp).len();
        lines.push(format!(
            "parent: {} · {kids} child span{}",
            if parent == crate::model::NO_PARENT {
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

    /// Draws the timeline into the window's frame.
    pub(super) fn tl_render(
        gfx: &mut Gfx,
        d: Option<&TraceDoc>,
        spec: &TimelineSpec,
        view: &wgpu::TextureView,
        tile: crate::render::Tile,
    ) -> Result<crate::render::FrameStats, crate::render::frame::FrameError> {
        let content = match (d, &gfx.tscene) {
            (Some(d), Some(scene)) => Some(TimelineContent {
                scene,
                spans: &d.trace.spans,
                tracks: &d.trace.tracks,
                matches: d.search.as_ref().map(|s| &s.name_matches[..]),
            }),
            _ => None,
        };
        gfx.renderer
            .render_timeline(&gfx.gpu, content, spec, view, tile, gfx.timer.as_mut())
    }

    /// A screenshot of the timeline at the window's size × the screenshot scale.
    pub(super) fn tl_screenshot(&mut self) -> anyhow::Result<PathBuf> {
        let now = self.now_s();
        if let Some(d) = &mut self.tdoc {
            d.view.tick(now);
        }
        let f = self.opts.screenshot_scale.max(0.1);
        let (w, h) = self.size();
        let spec = {
            let d = self
                .tdoc
                .as_ref()
                .ok_or_else(|| anyhow::anyhow!("nothing is loaded"))?;
            let mut g = TimelineGeometry::new(
                (w as f32 * f).round() as u32,
                (h as f32 * f).round() as u32,
                self.scale() * f,
                &d.trace.tracks.bands,
                &d.collapsed,
                timeline_style(d.selected.is_some()),
            );
            g.scroll_px = (d.scroll_px * f).clamp(0.0, g.max_scroll());
            let mut cam = d.view.camera;
            cam.px_per_tick *= f64::from(f);
            self.tl_build_spec(g, cam, true)
        };
        let d = self.tdoc.as_ref().expect("checked above");
        let path = super::screenshot_path(d.path.as_deref());
        let gfx = self.gfx.as_mut().ok_or_else(|| anyhow::anyhow!("no GPU"))?;
        let scene = gfx
            .tscene
            .as_ref()
            .ok_or_else(|| anyhow::anyhow!("no scene"))?;
        if gfx.shot_renderer.is_none() {
            gfx.shot_renderer = Some(
                gfx.renderer
                    .for_format(&gfx.gpu, crate::render::TARGET_FORMAT),
            );
        }
        let renderer = gfx.shot_renderer.as_mut().expect("just created");
        let content = TimelineContent {
            scene,
            spans: &d.trace.spans,
            tracks: &d.trace.tracks,
            matches: d.search.as_ref().map(|s| &s.name_matches[..]),
        };
        let gpu = &gfx.gpu;
        let (image, _) = crate::render::render_tiles(
            gpu,
            spec.geometry.width_px,
            spec.geometry.height_px,
            gpu.max_texture_side(),
            |view, tile| renderer.render_timeline(gpu, Some(content), &spec, view, tile, None),
        )?;
        let png = crate::export::encode_png(&image).map_err(|e| anyhow::anyhow!(e))?;
        std::fs::write(&path, png)?;
        Ok(path)
    }

    /// Left button pressed at `(x, y)`.
    pub(super) fn tl_press(&mut self, x: f32, y: f32) {
        let Some(g) = self.tl_geometry() else { return };
        let Some(d) = &self.tdoc else { return };
        let total = d.trace.tracks.layout.total_ticks.max(1);
        let window = d.view.camera.visible_ticks(f64::from(g.graph.w));
        let window = (window.0.min(total), window.1.min(total));
        self.tl_drag = Some(if g.overview.contains(x, y) {
            TimelineDrag::Brush {
                grab: brush_grab(&g, window, total, x),
                window,
                press_x: x,
            }
        } else {
            TimelineDrag::Pan
        });
    }

    /// The pointer moved by `(dx, dy)` to `(x, y)` with the button held (`moved`: past the
    /// click threshold).
    pub(super) fn tl_drag_to(&mut self, x: f32, dx: f32, dy: f32, moved: bool) {
        let Some(g) = self.tl_geometry() else { return };
        let Some(drag) = self.tl_drag else { return };
        let Some(d) = &mut self.tdoc else { return };
        if !moved {
            return;
        }
        match drag {
            TimelineDrag::Brush {
                grab,
                window,
                press_x,
            } => {
                let total = d.trace.tracks.layout.total_ticks.max(1);
                let (a, b) = brush_drag(&g, grab, window, total, press_x, x, 1);
                d.view.show_ticks(a, b);
            }
            TimelineDrag::Pan => {
                d.view.pan_px(f64::from(dx));
                d.scroll_px = (d.scroll_px - dy).clamp(0.0, g.max_scroll());
            }
        }
        self.redraw();
    }

    /// Left button released at `(x, y)`; `moved` is false for a click.
    pub(super) fn tl_release(&mut self, x: f32, y: f32, moved: bool) {
        let drag = self.tl_drag.take();
        let now = self.now_s();
        let Some(g) = self.tl_geometry() else { return };
        let run = self.tl_merged_run().map(|run| (run.x0, run.x1));
        let Some(d) = &mut self.tdoc else { return };
        if moved {
            if let Some(TimelineDrag::Brush { window, .. }) = drag {
                // Backspace returns to the window before the brush.
                d.view.remember_ticks(window.0, window.1);
            }
            return;
        }
        if g.overview.contains(x, y) {
            // A click in the overview centres the window there.
            let total = d.trace.tracks.layout.total_ticks.max(1);
            let (a, b) = d.view.camera.visible_ticks(f64::from(g.graph.w));
            let half = (b - a) / 2;
            let at = g.overview_ns(x, total);
            let start = at.saturating_sub(half).min(total.saturating_sub(b - a));
            d.view.zoom_to_ticks(start, start + (b - a), now);
            self.redraw();
            return;
        }
        match g.hit(y) {
            Some(GraphHit::Header(b)) if g.graph.contains(x, y) => {
                if let Some(c) = d.collapsed.get_mut(b) {
                    *c = !*c;
                }
            }
            Some(GraphHit::Row(_)) if g.graph.contains(x, y) => {
                if let Some((a, b)) = run {
                    d.view.zoom_to_ticks(a, b, now);
                } else {
                    let picked = pick_span(
                        &d.trace.tracks.layout,
                        &g,
                        &d.view.camera,
                        x,
                        y,
                        PICK_SLOP_PX * g.scale,
                    )
                    .and_then(|b| d.span_at(b));
                    match picked {
                        Some(sp) => {
                            let double = d
                                .last_click
                                .is_some_and(|(t, s)| s == sp && now - t < DOUBLE_CLICK_S);
                            if double {
                                let i = sp as usize;
                                let spans = &d.trace.spans;
                                zoom_around_span(
                                    &mut d.view,
                                    spans.start_ns[i],
                                    spans.end_ns(i).max(spans.start_ns[i] + 1),
                                    now,
                                );
                                d.last_click = None;
                            } else {
                                d.last_click = Some((now, sp));
                            }
                            d.selected = Some(sp);
                        }
                        None => {
                            d.selected = None;
                            d.last_click = None;
                        }
                    }
                }
            }
            _ => {}
        }
        self.tl_resize();
        self.redraw();
    }

    /// Wheel over the window: zoom (about the pointer, or about the pointer's time when
    /// over the overview), horizontal pan, Alt: scroll the bands.
    pub(super) fn tl_wheel(&mut self, dx: f64, dy: f64, speed: ZoomSpeed, alt: bool) {
        let Some(g) = self.tl_geometry() else { return };
        let cursor = self.cursor;
        let Some(d) = &mut self.tdoc else { return };
        let (cx, cy) = cursor.unwrap_or((g.graph.x, g.graph.y));
        if alt {
            d.scroll_px =
                (d.scroll_px - dy as f32 * g.row_pitch_px * 3.0).clamp(0.0, g.max_scroll());
        } else {
            let x = if g.overview.contains(cx, cy) {
                let total = d.trace.tracks.layout.total_ticks.max(1);
                d.view.camera.x_of(g.overview_ns(cx, total))
            } else {
                f64::from(cx - g.graph.x)
            };
            if dy != 0.0 {
                d.view
                    .wheel_zoom(x.clamp(0.0, f64::from(g.graph.w)), dy, speed);
            }
            if dx != 0.0 {
                d.view.pan_px(-dx);
            }
        }
        self.redraw();
    }

    /// Keys in timeline mode (the search field is handled by the caller).
    pub(super) fn tl_key(&mut self, key: &Key, ctrl: bool) -> bool {
        let now = self.now_s();
        let Some(g) = self.tl_geometry() else {
            return false;
        };
        let w = f64::from(g.graph.w);
        let page = g.graph.h * 0.9;
        let Some(d) = &mut self.tdoc else {
            return false;
        };
        let v = &mut d.view;
        let mut scroll = 0.0f32;
        match key {
            Key::Named(NamedKey::Escape) => {
                if d.search.is_some() {
                    self.search_text.clear();
                    self.tl_run_search();
                } else if d.selected.is_some() {
                    d.selected = None;
                } else {
                    v.back(now);
                }
            }
            Key::Named(NamedKey::Backspace) => {
                v.back(now);
            }
            Key::Named(NamedKey::ArrowLeft) => v.pan_px(w * 0.1),
            Key::Named(NamedKey::ArrowRight) => v.pan_px(-w * 0.1),
            Key::Named(NamedKey::ArrowUp) => scroll = -g.row_pitch_px * 3.0,
            Key::Named(NamedKey::ArrowDown) => scroll = g.row_pitch_px * 3.0,
            Key::Named(NamedKey::PageUp) => scroll = -page,
            Key::Named(NamedKey::PageDown) => scroll = page,
            Key::Named(NamedKey::Home) => scroll = -1e9,
            Key::Named(NamedKey::End) => scroll = 1e9,
            Key::Named(NamedKey::Enter) => {
                if let Some(sp) = d.selected {
                    let i = sp as usize;
                    let s = &d.trace.spans;
                    zoom_around_span(v, s.start_ns[i], s.end_ns(i).max(s.start_ns[i] + 1), now);
                }
            }
            Key::Character(c) => match c.as_str() {
                "+" | "=" | "w" | "W" => v.zoom_around(w / 2.0, 1.5),
                "-" | "_" | "s" | "S" if !ctrl => v.zoom_around(w / 2.0, 1.0 / 1.5),
                "0" => v.reset(),
                "a" | "A" => v.pan_px(w * 0.1),
                "d" | "D" => v.pan_px(-w * 0.1),
                "f" | "F" if !ctrl => {
                    if let Some(sp) = d.selected {
                        let i = sp as usize;
                        let s = &d.trace.spans;
                        zoom_around_span(v, s.start_ns[i], s.end_ns(i).max(s.start_ns[i] + 1), now);
                    }
                }
                "c" | "C" => {
                    d.color = match d.color {
                        ColorMode::Track => ColorMode::Category,
                        ColorMode::Category => ColorMode::Name,
                        ColorMode::Name => ColorMode::Package,
                        ColorMode::Package => ColorMode::Value,
                        _ => ColorMode::Track,
                    };
                }
                "t" | "T" => {
                    let mode = match d.trace.mode {
                        BandMode::PerTrack => BandMode::OneTree,
                        BandMode::OneTree => BandMode::PerTrack,
                    };
                    let t0 = Instant::now();
                    d.trace.set_mode(mode);
                    d.collapsed = vec![false; d.trace.tracks.bands.len()];
                    d.scroll_px = 0.0;
                    d.search_generation += 1;
                    let mut failed = None;
                    if let Some(gfx) = &mut self.gfx {
                        let bytes = d.trace.tracks.layout.bar_count() as u64 * 48;
                        let (spans, tracks) = (&d.trace.spans, &d.trace.tracks);
                        match gfx.gpu.allocating("the re-laid-out spans", bytes, || {
                            TimelineScene::new(&gfx.gpu, &gfx.renderer, spans, tracks)
                        }) {
                            Ok(scene) => gfx.tscene = Some(scene),
                            Err(e) => {
                                gfx.tscene = None;
                                failed = Some(e.to_string());
                            }
                        }
                    }
                    eprintln!(
                        "scorch: re-laid out {} spans in {:.0} ms",
                        d.trace.spans.len(),
                        t0.elapsed().as_secs_f64() * 1000.0
                    );
                    if let Some(e) = failed {
                        self.say(e);
                    }
                    self.tl_run_search();
                }
                "x" | "X" => {
                    let all = d.collapsed.iter().all(|&c| c);
                    d.collapsed.iter_mut().for_each(|c| *c = !all);
                    d.scroll_px = 0.0;
                }
                "n" => self.tl_jump_to_match(false),
                "N" => self.tl_jump_to_match(true),
                _ => return false,
            },
            _ => return false,
        }
        if let Some(d) = &mut self.tdoc {
            d.scroll_px = (d.scroll_px + scroll).max(0.0);
        }
        self.tl_resize();
        true
    }
}

/// The timeline's logical sizes in the window: a status line, and the details panel when a
/// span is selected.
pub fn timeline_style(details: bool) -> TimelineStyle {
    let mut s = TimelineStyle {
        base: super::window_style(),
        ..TimelineStyle::default()
    };
    if details {
        let line = TextLayer::line_height(s.base.label_font);
        s.details_height = (DETAIL_LINES as f32 * line + 16.0).round();
    }
    s
}

/// A track's name under its group (process), as the bands show it.
fn track_label(spans: &crate::model::spans::SpanSet, t: u32) -> String {
    let name = spans.tracks.get(t as usize).map_or("", |t| t.name.as_str());
    let group = spans.track_info(t).group;
    if group.is_empty() || name.starts_with(&group) {
        name.to_string()
    } else {
        format!("{group} / {name}")
    }
}

/// Zooms to `[a, b)` with a margin of a tenth on each side, as Perfetto's "F" does.
fn zoom_around_span(v: &mut ViewState, a: u64, b: u64, now: f64) {
    let m = (b - a) / 10;
    v.zoom_to_ticks(a.saturating_sub(m), b.saturating_add(m), now);
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
