//! One timeline frame: title, overview strip, time axis, bands of spans with labels,
//! connector lines, hover and selection outlines, the cursor line, and overlays.
//!
//! Spans are bars of the same [`BarScene`] as flame graphs (instanced quads per row, level
//! of detail tiers, colors in `bars.wgsl`); an instance carries the span's duration (heat
//! colors), its track's palette index (track colors) and the duration again. The overview
//! strip shows every row of the whole trace squeezed into its height; it is drawn once into
//! a texture ([`OverviewCache`]) and copied onto each frame by the blit pipeline, and drawn
//! again only when its size, the colors or the search change.
//!
//! Geometry comes from [`TimelineGeometry`]; like [`Renderer::render`], a [`Tile`] says
//! which part of the image the target covers, so exports of any size tile seamlessly.

use super::bars::{BarGlobals, BarScene, SceneValues, diff_palette};
use super::blit::BlitSource;
use super::frame::{
    FrameError, FrameStats, MUTED_COLOR, Overlay, Renderer, TITLE_COLOR, Tile, clear_pass,
    scissor_to, srgb,
};
use super::gpu::Gpu;
use super::names::{NameHashes, PackedKeys};
use super::rects::RectInstance;
use super::text::{Layer, TextLayer};
use crate::color::{self, ColorMode};
use crate::layout::timeline::TrackLayout;
use crate::lod::{Lod, TierRef};
use crate::model::spans::SpanSet;
use crate::model::units::format_duration_ns;
use crate::pick::BarRef;
use crate::view::Camera;
use crate::view::timeline::{TimelineGeometry, axis_ticks, format_axis_time};
use std::sync::atomic::{AtomicU64, Ordering};

/// Connector lines drawn per frame at most (a pathological trace could have millions in
/// view; beyond this they would be a solid smear anyway).
const MAX_CONNECTORS: usize = 20_000;

static NEXT_SCENE_ID: AtomicU64 = AtomicU64::new(1);

/// A trace's drawing data: LOD tiers (CPU) and the bars on the GPU.
pub struct TimelineScene {
    /// Per-row tiers of merged sub-pixel spans.
    pub lod: Lod,
    /// Spans, tiers and name hashes on the GPU.
    pub bars: BarScene,
    /// Connector indices sorted by time, for a range search per frame.
    connectors_by_ns: Vec<u32>,
    /// Per name id: the palette index of the name, and of its package part.
    name_palette: Vec<u8>,
    package_palette: Vec<u8>,
    id: u64,
}

impl TimelineScene {
    /// The color span `s` is drawn in under `mode` (the CPU side of `bars.wgsl`), for
    /// choosing a label color that reads on it.
    fn span_color(
        &self,
        mode: ColorMode,
        spans: &SpanSet,
        s: usize,
        max_dur: f64,
        greyed: bool,
    ) -> [f32; 3] {
        if greyed {
            return [0.87, 0.87, 0.87];
        }
        let track = color::track_palette_index(spans.track[s]) as usize;
        let name = spans.name[s] as usize;
        let index = match mode {
            ColorMode::Track => track,
            ColorMode::Category => spans
                .category
                .get(s)
                .filter(|&&c| !spans.names.get(c).is_empty())
                .map_or(track, |&c| usize::from(self.name_palette[c as usize])),
            ColorMode::Name => usize::from(self.name_palette[name]),
            ColorMode::Package => usize::from(self.package_palette[name]),
            ColorMode::Value => return color::heat_color(spans.dur_ns[s] as f64, max_dur),
            ColorMode::Diff => 7,
        };
        color::palette_color(index)
    }

    /// Builds the tiers of `tracks` and uploads the spans of `spans`.
    pub fn new(gpu: &Gpu, renderer: &Renderer, spans: &SpanSet, tracks: &TrackLayout) -> Self {
        Self::with_layout(gpu, &renderer.scene_layout(), spans, tracks)
    }

    /// [`new`](Self::new) given [`Renderer::scene_layout`], for a loader thread.
    pub fn with_layout(
        gpu: &Gpu,
        bind_layout: &wgpu::BindGroupLayout,
        spans: &SpanSet,
        tracks: &TrackLayout,
    ) -> Self {
        let lod = Lod::build(&tracks.layout);
        let keys = PackedKeys::from_pairs(
            spans
                .names
                .iter()
                .map(|(_, n)| (color::package_name(None, n), n)),
        );
        let hashes = NameHashes::compute_packed(gpu, &keys);
        // Palette indices of every interned name (span names and categories) and of its
        // package part, hashed once: the shader's category colors and the labels' contrast
        // read them, instead of hashing per span or per label every frame.
        let name_palette: Vec<u8> = spans
            .names
            .iter()
            .map(|(_, n)| color::palette_index(&color::pyroscope_key(n)) as u8)
            .collect();
        let package_palette: Vec<u8> = spans
            .names
            .iter()
            .map(|(_, n)| {
                color::palette_index(&color::pyroscope_key(color::package_name(None, n))) as u8
            })
            .collect();
        let of = |s: u32| -> [f32; 3] {
            let s = s as usize;
            let d = spans.dur_ns[s] as f32;
            let track = color::track_palette_index(spans.track[s]);
            let cat = spans
                .category
                .get(s)
                .filter(|&&c| !spans.names.get(c).is_empty())
                .map_or(track, |&c| u32::from(name_palette[c as usize]));
            [d, track as f32, cat as f32]
        };
        // A merged run keeps its first span's colors and sums the durations.
        let merge = |a: [f32; 3], b: [f32; 3]| [a[0] + b[0], a[1], a[2]];
        let max_dur = spans.dur_ns.iter().copied().max().unwrap_or(0) as f32;
        let bars = BarScene::from_values(
            gpu,
            bind_layout,
            &hashes,
            spans.names.len(),
            &tracks.layout,
            &lod,
            SceneValues {
                of: &of,
                merge: &merge,
                max_self: max_dur,
                diff_ticks: None,
            },
        );
        let mut connectors_by_ns: Vec<u32> = (0..tracks.connectors.len() as u32).collect();
        connectors_by_ns.sort_by_key(|&c| tracks.connectors[c as usize].at_ns);
        TimelineScene {
            lod,
            bars,
            connectors_by_ns,
            name_palette,
            package_palette,
            id: NEXT_SCENE_ID.fetch_add(1, Ordering::Relaxed),
        }
    }
}

/// What a timeline frame shows.
#[derive(Clone, Copy)]
pub struct TimelineContent<'a> {
    /// GPU data.
    pub scene: &'a TimelineScene,
    /// The spans.
    pub spans: &'a SpanSet,
    /// Their layout.
    pub tracks: &'a TrackLayout,
    /// Per name id: matches the current search (for label contrast on greyed spans).
    pub matches: Option<&'a [bool]>,
}

/// What to draw.
#[derive(Clone, Debug)]
pub struct TimelineSpec {
    /// Image layout.
    pub geometry: TimelineGeometry,
    /// Horizontal view of the detail area.
    pub camera: Camera,
    /// Span colors: track, name, package or value (heat by duration).
    pub color: ColorMode,
    /// Title at the top left.
    pub title: String,
    /// Secondary text after the title.
    pub subtitle: String,
    /// Labels inside spans.
    pub labels: bool,
    /// Span under the pointer (outlined).
    pub hover: Option<BarRef>,
    /// Extent of a merged run under the pointer, outlined instead.
    pub hover_ticks: Option<(u64, u64)>,
    /// The selected span (outlined thicker).
    pub selected: Option<BarRef>,
    /// A search is active: non-matching spans are greyed.
    pub search_active: bool,
    /// Changes whenever the search changes (the overview is redrawn then).
    pub search_generation: u64,
    /// Pointer x (image pixels): a vertical line with its time on the axis.
    pub cursor_x: Option<f32>,
    /// Drawn over everything.
    pub overlays: Vec<Overlay>,
}

impl TimelineSpec {
    /// A spec with nothing interactive.
    pub fn new(
        geometry: TimelineGeometry,
        camera: Camera,
        color: ColorMode,
        title: String,
    ) -> Self {
        TimelineSpec {
            geometry,
            camera,
            color,
            title,
            subtitle: String::new(),
            labels: true,
            hover: None,
            hover_ticks: None,
            selected: None,
            search_active: false,
            search_generation: 0,
            cursor_x: None,
            overlays: Vec::new(),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct OverviewKey {
    scene: u64,
    w: u32,
    h: u32,
    color: u32,
    search: Option<u64>,
}

/// The overview strip, drawn once.
pub struct OverviewCache {
    key: OverviewKey,
    _texture: wgpu::Texture,
    source: BlitSource,
}

fn rgba(c: [u8; 3], a: f32) -> [f32; 4] {
    let s = srgb(c);
    [s[0], s[1], s[2], a]
}

impl Renderer {
    /// Draws the overview strip into its texture unless the cached one still holds.
    fn ensure_overview(&mut self, gpu: &Gpu, content: &TimelineContent<'_>, spec: &TimelineSpec) {
        let g = &spec.geometry;
        let max_side = gpu.max_texture_side();
        let w = (g.overview.w as u32).clamp(1, max_side);
        let h = (g.overview.h as u32).clamp(1, max_side);
        let key = OverviewKey {
            scene: content.scene.id,
            w,
            h,
            color: spec.color.shader_code(),
            search: spec.search_active.then_some(spec.search_generation),
        };
        if self.overview.as_ref().is_some_and(|o| o.key == key) {
            return;
        }
        let texture = gpu.device.create_texture(&wgpu::TextureDescriptor {
            label: Some("timeline::overview"),
            size: wgpu::Extent3d {
                width: w,
                height: h,
                depth_or_array_layers: 1,
            },
            mip_level_count: 1,
            sample_count: 1,
            dimension: wgpu::TextureDimension::D2,
            format: self.format,
            usage: wgpu::TextureUsages::RENDER_ATTACHMENT | wgpu::TextureUsages::TEXTURE_BINDING,
            view_formats: &[],
        });
        let view = texture.create_view(&wgpu::TextureViewDescriptor::default());
        let layout = &content.tracks.layout;
        let total = layout.total_ticks.max(1);
        let cam = Camera::fit(total, f64::from(w));
        let rows = layout.rows.len().max(1);
        // Rows squeezed into the strip: at most 8 px each, at least one pixel.
        let row_h = (h as f32 / rows as f32).clamp(1.0, 8.0 * g.scale);
        let spread = if rows as f32 * row_h > h as f32 {
            h as f32 / rows as f32
        } else {
            row_h
        };
        let mut globals = BarGlobals::new(spec.color, diff_palette(false));
        globals.search_active = u32::from(spec.search_active);
        globals.view_start = cam.start_split();
        globals.px_per_tick = cam.px_per_tick as f32;
        globals.target_size = [w as f32, h as f32];
        globals.origin_x = 0.0;
        globals.clip_left = 0.0;
        globals.clip_right = w as f32;
        globals.bar_height = row_h.round().max(1.0);
        globals.gap = 0.0;
        let scene = content.scene;
        scene.bars.complete_globals(&mut globals);
        scene.bars.write_globals(&gpu.queue, &globals);
        let tpp = 1.0 / cam.px_per_tick;
        let draws: Vec<_> = (0..layout.rows.len())
            .map(|r| {
                let tier = scene.lod.tier_for(r, tpp);
                let len = match tier {
                    TierRef::Row => layout.rows[r].len(),
                    TierRef::Tier(k) => scene.lod.rows[r][k].len(),
                };
                (r, (r as f32 * spread).floor(), tier, 0..len, 1.0f32)
            })
            .collect();
        let mut enc = gpu
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some("timeline::overview"),
            });
        {
            let mut pass = clear_pass(&mut enc, "timeline::overview", &view, [250, 250, 250], None);
            scene.bars.draw(&mut pass, &self.bars, draws);
        }
        // Submitted on its own: the frame rewrites the same uniform buffer afterwards.
        gpu.queue.submit([enc.finish()]);
        let source = self.blit.source(&gpu.device, &view);
        self.overview = Some(OverviewCache {
            key,
            _texture: texture,
            source,
        });
    }

    /// Draws a timeline frame into `target`, which covers `tile` of the image. Without
    /// content (still loading) only the title and overlays are drawn.
    #[allow(clippy::too_many_arguments)]
    pub fn render_timeline(
        &mut self,
        gpu: &Gpu,
        content: Option<TimelineContent<'_>>,
        spec: &TimelineSpec,
        target: &wgpu::TextureView,
        tile: Tile,
        mut timer: Option<&mut super::timer::GpuTimer>,
    ) -> Result<FrameStats, FrameError> {
        let t_start = std::time::Instant::now();
        if let Some(c) = &content {
            self.ensure_overview(gpu, c, spec);
        }
        let g = &spec.geometry;
        let (tx, ty) = (tile.x as f32, tile.y as f32);
        let scale = g.scale;
        let px = |v: f32| (v * scale).round();
        // Three layers of rectangles: under the bars, over them, and overlays.
        let mut under: Vec<RectInstance> = Vec::new();
        let mut over: Vec<RectInstance> = Vec::new();
        self.text.clear();
        let rect = |r: [f32; 4], c: [f32; 4]| RectInstance {
            rect: [r[0] - tx, r[1] - ty, r[2], r[3]],
            color: c,
        };

        // Title band.
        let title_size = px(g.style.base.title_font);
        let small = px(g.style.base.label_font);
        let margin = px(g.style.base.margin);
        let line_h = TextLayer::line_height(title_size);
        let title_top = (g.title.y + (g.title.h - line_h) / 2.0).round();
        let title_clip = [
            margin - tx,
            g.title.y - ty,
            g.width_px as f32 - margin - tx,
            g.title.y + g.title.h - ty,
        ];
        self.text.push(
            &spec.title,
            title_size,
            margin - tx,
            title_top - ty,
            title_clip,
            TITLE_COLOR,
        );
        let title_w = self.text.measure(&spec.title, title_size).width;
        let sub_x = margin + title_w + px(12.0);
        let right = g.width_px as f32 - margin;
        if !spec.subtitle.is_empty()
            && sub_x < right
            && let Some(sub) = self
                .text
                .fit(&spec.subtitle, &spec.subtitle, small, right - sub_x)
        {
            let top = (g.title.y + (g.title.h - TextLayer::line_height(small)) / 2.0).round()
                + scale.round();
            self.text
                .push(&sub, small, sub_x - tx, top - ty, title_clip, MUTED_COLOR);
        }

        let cam = &spec.camera;
        let total = content.map_or(1, |c| c.tracks.layout.total_ticks.max(1));
        let (t0, t1) = cam.visible_ticks(f64::from(g.graph.w));
        let gx = g.graph.x;
        let graph_right = g.graph.x + g.graph.w;
        let line = scale.round().max(1.0);

        // Overview: the cached strip, the window shaded around, its edges.
        let ov = g.overview;
        let have_overview = content.is_some() && self.overview.is_some();
        if have_overview {
            self.blit.prepare(
                &gpu.queue,
                [tile.w as f32, tile.h as f32],
                [ov.x - tx, ov.y - ty, ov.w, ov.h],
            );
            let wl = g.overview_x(t0.min(total), total).round();
            let wr = g.overview_x(t1.min(total), total).round().max(wl + line);
            let shade = rgba([60, 60, 60], 0.22);
            over.push(rect([ov.x, ov.y, (wl - ov.x).max(0.0), ov.h], shade));
            over.push(rect([wr, ov.y, (ov.x + ov.w - wr).max(0.0), ov.h], shade));
            let edge = rgba([40, 70, 140], 1.0);
            over.push(rect([wl - line, ov.y, 2.0 * line, ov.h], edge));
            over.push(rect([wr - line, ov.y, 2.0 * line, ov.h], edge));
        }
        let border = rgba([200, 200, 200], 1.0);
        for r in super::frame::outline([ov.x, ov.y, ov.w, ov.h], line) {
            over.push(rect(r, border));
        }

        // Time axis: background, marks and labels (times after the trace's start).
        let ax = g.axis;
        under.push(rect([ax.x, ax.y, ax.w, ax.h], rgba([244, 244, 244], 1.0)));
        under.push(rect([ax.x, ax.y + ax.h - line, ax.w, line], border));
        let ticks = axis_ticks(cam, f64::from(g.graph.w), f64::from(px(90.0)));
        let axis_clip = [ax.x - tx, ax.y - ty, ax.x + ax.w - tx, ax.y + ax.h - ty];
        let label_line = TextLayer::line_height(small);
        for &(t, x) in &ticks.marks {
            let x = (gx + x as f32).round();
            if x < ax.x || x > ax.x + ax.w {
                continue;
            }
            under.push(rect(
                [x, ax.y + ax.h - px(6.0), line, px(6.0)],
                rgba([120, 120, 120], 1.0),
            ));
            // Faint grid lines through the bands, under the spans.
            under.push(rect(
                [x, g.graph.y, line, g.graph.h],
                rgba([235, 235, 235], 1.0),
            ));
            let label = format_axis_time(t, ticks.step_ns);
            if x + px(3.0) + self.text.measure(&label, small).width > ax.x + ax.w {
                continue;
            }
            self.text.push(
                &label,
                small,
                x + px(3.0) - tx,
                (ax.y + (ax.h - label_line) / 2.0).round() - ty - px(2.0),
                axis_clip,
                MUTED_COLOR,
            );
        }

        // Bands: headers, then rows of spans.
        let mut draws = Vec::new();
        let mut labels = 0usize;
        let pad = px(g.style.base.label_pad);
        let min_label = g.style.base.min_label_width * scale;
        let graph_clip = |top: f32, h: f32| {
            [
                gx - tx,
                top.max(g.graph.y) - ty,
                graph_right - tx,
                (top + h).min(g.graph.y + g.graph.h) - ty,
            ]
        };
        if let Some(c) = &content {
            let max_dur = f64::from(c.scene.bars.max_self());
            for b in g.visible_bands() {
                let Some(band) = c.tracks.bands.get(b) else {
                    continue;
                };
                let top = g.header_top(b);
                let slot = &g.bands[b];
                under.push(rect(
                    [
                        0.0,
                        top.max(g.graph.y),
                        g.width_px as f32,
                        (top + g.header_px).min(g.graph.y + g.graph.h) - top.max(g.graph.y),
                    ],
                    rgba([236, 238, 242], 1.0),
                ));
                let mut x = gx + pad;
                if spec.color == ColorMode::Track
                    && let Some(t) = band.track
                {
                    let sw = px(10.0);
                    let sy = (top + (g.header_px - sw) / 2.0).round();
                    if sy >= g.graph.y && sy + sw <= g.graph.y + g.graph.h {
                        under.push(rect([x, sy, sw, sw], rgba(color::track_color(t), 1.0)));
                    }
                    x += sw + pad;
                }
                let arrow = if slot.collapsed { "▸" } else { "▾" };
                let text = format!(
                    "{arrow} {}   {} span{}{}",
                    band.name,
                    band.spans,
                    if band.spans == 1 { "" } else { "s" },
                    if slot.collapsed { " (collapsed)" } else { "" }
                );
                self.text.push(
                    &text,
                    small,
                    x - tx,
                    (top + (g.header_px - label_line) / 2.0).round() - ty,
                    graph_clip(top, g.header_px),
                    TITLE_COLOR,
                );
            }
            let tpp = 1.0 / cam.px_per_tick;
            for (r, top) in g.visible_rows() {
                let Some(row) = c.tracks.layout.rows.get(r) else {
                    continue;
                };
                if top + g.row_pitch_px <= ty || top >= ty + tile.h as f32 {
                    continue;
                }
                let tier = c.scene.lod.tier_for(r, tpp);
                let (range, tier_bars) = match tier {
                    TierRef::Row => (row.range_between(t0, t1), None),
                    TierRef::Tier(k) => {
                        let t = &c.scene.lod.rows[r][k];
                        (t.range_between(row, t0, t1), Some(t))
                    }
                };
                draws.push((r, top - ty, tier, range.clone(), 1.0f32));
                if !spec.labels {
                    continue;
                }
                for j in range {
                    let i = match tier_bars {
                        None => j,
                        Some(t) if t.count(j) == 1 => t.first(j),
                        Some(_) => continue,
                    };
                    let x0 = gx + cam.x_of(row.x0[i]) as f32;
                    let x1 = gx + cam.x_of(row.x1[i]) as f32;
                    if x1 - x0 < min_label {
                        continue;
                    }
                    let vx0 = x0.max(gx).round();
                    let vx1 = (x1.round() - g.gap_px).min(graph_right);
                    if vx1 <= tx || vx0 >= tx + tile.w as f32 {
                        continue;
                    }
                    let s = row.node[i] as usize;
                    let name = c.spans.names.get(c.spans.name[s]);
                    let greyed = spec.search_active
                        && c.matches
                            .is_none_or(|m| m.get(c.spans.name[s] as usize) != Some(&true));
                    let bg = c.scene.span_color(spec.color, c.spans, s, max_dur, greyed);
                    let fg = color::label_color(bg);
                    let avail = vx1 - vx0 - 2.0 * pad;
                    let text_top = (top + (g.bar_height_px - label_line) / 2.0).round() - ty;
                    let clip = [vx0 - tx, top - ty, vx1 - tx, top + g.bar_height_px - ty];
                    // Name on the left and duration on the right when both fit; else the
                    // name, truncated if need be; else nothing.
                    let dur = format_duration_ns(c.spans.dur_ns[s] as f64);
                    let wn = self.text.measure(name, small).width;
                    let wd = self.text.measure(&dur, small).width;
                    if wn + px(10.0) + wd <= avail {
                        self.text
                            .push(name, small, vx0 + pad - tx, text_top, clip, fg);
                        self.text
                            .push(&dur, small, vx1 - pad - wd - tx, text_top, clip, fg);
                        labels += 1;
                    } else if let Some(t) = self.text.fit(name, name, small, avail) {
                        self.text
                            .push(&t, small, vx0 + pad - tx, text_top, clip, fg);
                        labels += 1;
                    }
                }
            }

            // Connectors: from the parent's row down to a pushed-down span's row.
            let conns = &c.tracks.connectors;
            let by = &c.scene.connectors_by_ns;
            let lo = by.partition_point(|&k| conns[k as usize].at_ns < t0);
            let hi = by.partition_point(|&k| conns[k as usize].at_ns < t1);
            let conn_color = rgba([110, 110, 110], 1.0);
            for &k in by[lo..hi].iter().take(MAX_CONNECTORS) {
                let cn = &conns[k as usize];
                let (Some(a), Some(b)) = (
                    g.row_top(cn.from_row as usize),
                    g.row_top(cn.to_row as usize),
                ) else {
                    continue;
                };
                let y0 = (a + g.bar_height_px).max(g.graph.y);
                let y1 = b.min(g.graph.y + g.graph.h);
                if y1 <= y0 {
                    continue;
                }
                let x = (gx + cam.x_of(cn.at_ns) as f32).round();
                over.push(rect([x, y0, line, y1 - y0], conn_color));
                // A short foot pointing into the span.
                over.push(rect([x, y1 - line, px(4.0), line], conn_color));
            }

            // Hover and selection outlines, clipped to the graph.
            let mut outline_bar =
                |bar: BarRef, ticks: Option<(u64, u64)>, t: f32, col: [f32; 4]| {
                    let Some(row) = c.tracks.layout.rows.get(bar.row) else {
                        return;
                    };
                    if bar.index >= row.len() {
                        return;
                    }
                    let Some(top) = g.row_top(bar.row) else {
                        return;
                    };
                    if top + g.bar_height_px <= g.graph.y || top >= g.graph.y + g.graph.h {
                        return;
                    }
                    let (a, b) = ticks.unwrap_or((row.x0[bar.index], row.x1[bar.index]));
                    if b <= t0 || a >= t1 {
                        return;
                    }
                    let x0 = (gx + cam.x_of(a) as f32).round().max(gx - t);
                    let x1 = ((gx + cam.x_of(b) as f32).round() - g.gap_px)
                        .min(graph_right + t)
                        .max(x0 + 1.0);
                    for r in super::frame::outline(
                        [
                            x0 - t + line,
                            top - t + line,
                            x1 - x0 + 2.0 * (t - line),
                            g.bar_height_px + 2.0 * (t - line),
                        ],
                        t,
                    ) {
                        over.push(rect(r, col));
                    }
                };
            if let Some(sel) = spec.selected {
                outline_bar(sel, None, 2.0 * line, rgba([20, 60, 200], 1.0));
            }
            if let Some(h) = spec.hover {
                outline_bar(h, spec.hover_ticks, line, [0.1, 0.1, 0.1, 0.85]);
            }
        }

        // The cursor line and its time on the axis, over everything but the overlays.
        let mut top_rects: Vec<RectInstance> = Vec::new();
        if let Some(cx) = spec.cursor_x
            && cx >= gx
            && cx < graph_right
        {
            let x = cx.round();
            let col = rgba([200, 40, 40], 0.85);
            top_rects.push(rect([x, ax.y, line, g.graph.y + g.graph.h - ax.y], col));
            let t = cam.tick_at(f64::from(cx - gx));
            let label = format_axis_time(t, (ticks.step_ns / 100).max(1));
            let w = self.text.measure(&label, small).width + 2.0 * pad;
            let lx = (x + px(2.0)).min(ax.x + ax.w - w);
            let box_ = [lx, ax.y + line, w, ax.h - 2.0 * line];
            top_rects.push(rect(box_, rgba([255, 255, 255], 1.0)));
            for r in super::frame::outline(box_, line) {
                top_rects.push(rect(r, col));
            }
            self.text.push_on(
                Layer::Overlay,
                &label,
                small,
                lx + pad - tx,
                (ax.y + (ax.h - label_line) / 2.0).round() - ty,
                axis_clip,
                [150, 20, 20],
            );
        }

        // Overlays after everything.
        let n_under = under.len() as u32;
        let mut rects = under;
        rects.extend(over);
        let n_base = rects.len() as u32;
        rects.extend(top_rects);
        self.push_overlays(&spec.overlays, &mut rects, tile);
        let n_all = rects.len() as u32;

        let mut globals = BarGlobals::new(spec.color, diff_palette(false));
        globals.search_active = u32::from(spec.search_active);
        globals.view_start = cam.start_split();
        globals.view_start_frac = cam.start_frac as f32;
        globals.px_per_tick = cam.px_per_tick as f32;
        globals.target_size = [tile.w as f32, tile.h as f32];
        globals.origin_x = gx - tx;
        globals.clip_left = gx - tx;
        globals.clip_right = graph_right - tx;
        globals.bar_height = g.bar_height_px;
        globals.gap = g.gap_px;
        if let Some(c) = &content {
            c.scene.bars.complete_globals(&mut globals);
            c.scene.bars.write_globals(&gpu.queue, &globals);
        }
        self.rects.prepare(
            &gpu.device,
            &gpu.queue,
            [tile.w as f32, tile.h as f32],
            &rects,
        );
        self.text.prepare(&gpu.device, &gpu.queue, tile.w, tile.h)?;

        let mut enc = gpu
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some("Renderer::timeline"),
            });
        let bars_drawn;
        {
            let timestamps = timer.as_mut().and_then(|t| t.pass_writes());
            let mut pass = clear_pass(
                &mut enc,
                "Renderer::timeline_pass",
                target,
                super::frame::BACKGROUND,
                timestamps,
            );
            // The overview, clipped to this tile.
            if have_overview
                && let Some(o) = &self.overview
                && scissor_to(&mut pass, ov, tile)
            {
                self.blit.render(&mut pass, &o.source);
            }
            pass.set_scissor_rect(0, 0, tile.w, tile.h);
            self.rects.render(&mut pass, 0..n_under);
            bars_drawn = match &content {
                Some(c) if scissor_to(&mut pass, g.graph, tile) => {
                    c.scene.bars.draw(&mut pass, &self.bars, draws)
                }
                _ => 0,
            };
            pass.set_scissor_rect(0, 0, tile.w, tile.h);
            self.rects.render(&mut pass, n_under..n_base);
            self.text.render(&mut pass, Layer::Base)?;
            self.rects.render(&mut pass, n_base..n_all);
            self.text.render(&mut pass, Layer::Overlay)?;
        }
        if let Some(t) = &timer {
            t.resolve(&mut enc);
        }
        let commands = enc.finish();
        let encode_ms = t_start.elapsed().as_secs_f32() * 1000.0;
        gpu.queue.submit([commands]);
        if let Some(t) = timer {
            t.after_submit();
        }
        Ok(FrameStats {
            bars_drawn,
            labels,
            encode_ms,
        })
    }
}
