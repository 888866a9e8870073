//! One frame: background, bars, title, legend and labels, into any texture view.
//!
//! The same [`Renderer::render`] draws a window's surface and an export's offscreen tiles,
//! so a screenshot is exactly what the window shows. Geometry is in image space (see
//! [`crate::view::FrameGeometry`]); a [`Tile`] says which part of the image the target
//! covers, and everything is shifted by the tile's origin, so an image larger than the
//! device's texture limit is drawn tile by tile with identical pixels at the seams.

use super::bars::{BarGlobals, BarPipeline, BarScene, diff_palette};
use super::gpu::Gpu;
use super::rects::{RectInstance, RectPipeline};
use super::text::{Layer, TextLayer};
use crate::color::{self, ColorMode};
use crate::layout::Layout;
use crate::lod::{Lod, TierRef};
use crate::model::Profile;
use crate::model::units::format_percent;
use crate::pick::BarRef;
use crate::view::{Camera, FrameGeometry, RectPx};

/// Texture format of every scorch target: colors are sRGB values written as they are
/// (like a browser canvas), so blending and text match what users know.
pub const TARGET_FORMAT: wgpu::TextureFormat = wgpu::TextureFormat::Rgba8Unorm;

/// Page background.
pub const BACKGROUND: [u8; 3] = [255, 255, 255];
/// Title text color.
pub const TITLE_COLOR: [u8; 3] = [34, 34, 34];
/// Secondary text color.
pub const MUTED_COLOR: [u8; 3] = [102, 102, 102];

/// What to draw.
#[derive(Clone, Debug)]
pub struct FrameSpec {
    /// Image layout.
    pub geometry: FrameGeometry,
    /// Horizontal view.
    pub camera: Camera,
    /// Bar coloring.
    pub color: ColorMode,
    /// Use the color-blind diff palette.
    pub colorblind: bool,
    /// Title, drawn at the top left.
    pub title: String,
    /// Secondary text drawn after the title.
    pub subtitle: String,
    /// Draw labels inside bars (tests turn them off to sample bar colors).
    pub labels: bool,
    /// The bar under the pointer, outlined.
    pub hover: Option<BarRef>,
    /// When the pointer is over a merged run of tiny bars: its tick extent, outlined
    /// instead of the single bar.
    pub hover_ticks: Option<(u64, u64)>,
    /// Rows shallower than this are drawn faded (the ancestors of a zoomed bar).
    pub faded_rows: usize,
    /// A search is active: non-matching bars are greyed (see `BarScene::set_search`).
    pub search_active: bool,
    /// Text of the collapsed-ancestors line when the geometry has a header (focus).
    pub header_label: String,
    /// Drawn over everything: status line, tooltip, menus, search field.
    pub overlays: Vec<Overlay>,
}

impl FrameSpec {
    /// A spec with the given essentials and nothing interactive.
    pub fn new(
        geometry: FrameGeometry,
        camera: Camera,
        color: ColorMode,
        title: String,
    ) -> FrameSpec {
        FrameSpec {
            geometry,
            camera,
            color,
            colorblind: false,
            title,
            subtitle: String::new(),
            labels: true,
            hover: None,
            hover_ticks: None,
            faded_rows: 0,
            search_active: false,
            header_label: String::new(),
            overlays: Vec::new(),
        }
    }
}

/// Something drawn over the frame, in image pixels.
#[derive(Clone, Debug, PartialEq)]
pub enum Overlay {
    /// A filled rectangle: left, top, width, height; sRGB color with alpha.
    Rect {
        /// Left, top, width, height.
        rect: [f32; 4],
        /// sRGBA.
        color: [u8; 4],
    },
    /// A line of text with its top-left corner at (`x`, `y`), clipped to `clip`.
    Text {
        /// The text.
        text: String,
        /// Font size in pixels.
        size: f32,
        /// Left edge.
        x: f32,
        /// Top edge.
        y: f32,
        /// sRGB.
        color: [u8; 3],
        /// Left, top, right, bottom.
        clip: [f32; 4],
    },
}

/// The part of the image a render target covers, in image pixels.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tile {
    /// Left edge.
    pub x: u32,
    /// Top edge.
    pub y: u32,
    /// Width.
    pub w: u32,
    /// Height.
    pub h: u32,
}

/// What a frame cost.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct FrameStats {
    /// Bar instances drawn.
    pub bars_drawn: u64,
    /// Labels drawn.
    pub labels: usize,
    /// CPU time spent building and encoding the frame, up to the submit (ms).
    pub encode_ms: f32,
}

/// Why a frame could not be drawn.
#[derive(Debug, thiserror::Error)]
pub enum FrameError {
    /// glyphon could not prepare the text (atlas full, …).
    #[error("text preparation failed: {0}")]
    Text(#[from] glyphon::PrepareError),
    /// glyphon could not draw.
    #[error("text rendering failed: {0}")]
    TextRender(#[from] glyphon::RenderError),
}

/// Drawing data for one profile and layout: the level-of-detail tiers (CPU, for range
/// searches) and everything uploaded to the GPU.
pub struct Scene {
    /// Per-row tiers of merged sub-pixel bars.
    pub lod: Lod,
    /// Bars, tiers and name hashes on the GPU.
    pub bars: BarScene,
}

impl Scene {
    /// Builds the LOD tiers of `layout` and uploads everything (values from `profile`).
    pub fn new(gpu: &Gpu, renderer: &Renderer, profile: &Profile, layout: &Layout) -> Scene {
        Self::with_layout(gpu, &renderer.scene_layout(), profile, layout)
    }

    /// [`new`](Self::new) given [`Renderer::scene_layout`]: usable on another thread
    /// (wgpu's device and queue are shared), so a big profile is prepared off the UI thread.
    pub fn with_layout(
        gpu: &Gpu,
        bind_layout: &wgpu::BindGroupLayout,
        profile: &Profile,
        layout: &Layout,
    ) -> Scene {
        let lod = Lod::build(layout);
        let bars = BarScene::with_layout(gpu, bind_layout, profile, layout, &lod);
        Scene { lod, bars }
    }
}

/// Pipelines and text state; create once per device.
pub struct Renderer {
    pub(super) bars: BarPipeline,
    pub(super) rects: RectPipeline,
    pub(super) text: TextLayer,
    pub(super) blit: super::blit::BlitPipeline,
    pub(super) format: wgpu::TextureFormat,
    /// The timeline overview drawn last, reused while its key holds.
    pub(super) overview: Option<super::timeline::OverviewCache>,
}

pub(super) fn srgb(c: [u8; 3]) -> [f32; 4] {
    [
        f32::from(c[0]) / 255.0,
        f32::from(c[1]) / 255.0,
        f32::from(c[2]) / 255.0,
        1.0,
    ]
}

fn to_u8(c: [f32; 3]) -> [u8; 3] {
    c.map(|v| (v * 255.0).round().clamp(0.0, 255.0) as u8)
}

/// Begins a render pass into `view` that clears it to `bg` (sRGB).
pub(super) fn clear_pass<'e>(
    enc: &'e mut wgpu::CommandEncoder,
    label: &str,
    view: &wgpu::TextureView,
    bg: [u8; 3],
    timestamp_writes: Option<wgpu::RenderPassTimestampWrites<'e>>,
) -> wgpu::RenderPass<'e> {
    let bg = srgb(bg);
    enc.begin_render_pass(&wgpu::RenderPassDescriptor {
        label: Some(label),
        color_attachments: &[Some(wgpu::RenderPassColorAttachment {
            view,
            depth_slice: None,
            resolve_target: None,
            ops: wgpu::Operations {
                load: wgpu::LoadOp::Clear(wgpu::Color {
                    r: f64::from(bg[0]),
                    g: f64::from(bg[1]),
                    b: f64::from(bg[2]),
                    a: 1.0,
                }),
                store: wgpu::StoreOp::Store,
            },
        })],
        depth_stencil_attachment: None,
        timestamp_writes,
        occlusion_query_set: None,
        multiview_mask: None,
    })
}

/// Clips drawing to `rect` (image pixels) within `tile`; false (and nothing set) when
/// they do not intersect.
pub(super) fn scissor_to(pass: &mut wgpu::RenderPass<'_>, rect: RectPx, tile: Tile) -> bool {
    let (tx, ty) = (tile.x as f32, tile.y as f32);
    let x0 = (rect.x - tx).max(0.0).floor();
    let y0 = (rect.y - ty).max(0.0).floor();
    let x1 = (rect.x + rect.w - tx).min(tile.w as f32).ceil();
    let y1 = (rect.y + rect.h - ty).min(tile.h as f32).ceil();
    if x1 <= x0 || y1 <= y0 {
        return false;
    }
    pass.set_scissor_rect(x0 as u32, y0 as u32, (x1 - x0) as u32, (y1 - y0) as u32);
    true
}

/// The four edges of `rect` = (left, top, width, height) as rectangles `t` thick.
pub fn outline(rect: [f32; 4], t: f32) -> [[f32; 4]; 4] {
    let [x, y, w, h] = rect;
    [
        [x, y, w, t],
        [x, y + h - t, w, t],
        [x, y, t, h],
        [x + w - t, y, t, h],
    ]
}

/// The label of a bar: `name (share, amount)`, or for a diff `name (change)`.
pub fn bar_label(profile: &Profile, node: crate::model::NodeId) -> String {
    let tree = &profile.tree;
    let name = profile.names.get(tree.name(node));
    let total = tree.total(node);
    match profile.diff_ticks() {
        Some((lt, rt)) if profile.is_diff() => {
            let l = tree.left_total(node);
            format!("{name} ({})", diff_change(l, total - l, lt, rt))
        }
        _ => {
            let share = total as f64 / tree.grand_total().max(1) as f64;
            format!(
                "{name} ({}, {})",
                format_percent(share),
                profile.values.format(total)
            )
        }
    }
}

/// The change of a diff bar's share between left and right, for labels and tooltips:
/// `new`, `removed`, `+12.5%`, `−4.17%`, `±0%` (to 0.01 %, as Pyroscope's tooltip).
pub fn diff_change(left: u64, right: u64, left_ticks: u64, right_ticks: u64) -> String {
    if left == 0 && right > 0 {
        return "new".to_string();
    }
    if right == 0 && left > 0 {
        return "removed".to_string();
    }
    // From the shares rounded as for the bar's color, so label and color agree.
    let (lp, rp) = color::diff_shares(left, right, left_ticks, right_ticks);
    let r = (color::relative_change(lp, rp) * 100.0).round() / 100.0;
    if r == 0.0 {
        "±0%".to_string()
    } else if r == f64::INFINITY {
        "+∞%".to_string()
    } else if r > 0.0 {
        format!("+{r}%")
    } else {
        format!("−{}%", -r)
    }
}

impl Renderer {
    /// Compiles the pipelines for targets of `format`.
    pub fn new(gpu: &Gpu, format: wgpu::TextureFormat) -> Renderer {
        Renderer {
            bars: BarPipeline::new(&gpu.device, format),
            rects: RectPipeline::new(&gpu.device, format),
            text: TextLayer::new(&gpu.device, &gpu.queue, format),
            blit: super::blit::BlitPipeline::new(&gpu.device, format),
            format,
            overview: None,
        }
    }

    /// A renderer for another target format that can draw the same [`Scene`]s (the
    /// window draws into its surface's format, screenshots into [`TARGET_FORMAT`]).
    pub fn for_format(&self, gpu: &Gpu, format: wgpu::TextureFormat) -> Renderer {
        Renderer {
            bars: self.bars.for_format(&gpu.device, format),
            rects: RectPipeline::new(&gpu.device, format),
            text: TextLayer::new(&gpu.device, &gpu.queue, format),
            blit: super::blit::BlitPipeline::new(&gpu.device, format),
            format,
            overview: None,
        }
    }

    /// The bind group layout scenes drawn by this renderer are built for.
    pub fn scene_layout(&self) -> wgpu::BindGroupLayout {
        self.bars.bind_group_layout()
    }

    /// Access to the text layer (measurements for the window's overlays).
    pub fn text(&mut self) -> &mut TextLayer {
        &mut self.text
    }

    /// Draws `spec` into `target`, which covers `tile` of the image.
    #[allow(clippy::too_many_arguments)]
    pub fn render(
        &mut self,
        gpu: &Gpu,
        scene: &Scene,
        profile: &Profile,
        layout: &Layout,
        spec: &FrameSpec,
        target: &wgpu::TextureView,
        tile: Tile,
    ) -> Result<FrameStats, FrameError> {
        self.render_timed(
            gpu,
            Some((scene, profile, layout)),
            spec,
            target,
            tile,
            None,
        )
    }

    /// [`render`](Self::render) with the profile optional (a window still loading draws
    /// its title and overlays only) and an optional GPU timer around the pass.
    pub fn render_timed(
        &mut self,
        gpu: &Gpu,
        content: Option<(&Scene, &Profile, &Layout)>,
        spec: &FrameSpec,
        target: &wgpu::TextureView,
        tile: Tile,
        mut timer: Option<&mut super::timer::GpuTimer>,
    ) -> Result<FrameStats, FrameError> {
        let t_start = std::time::Instant::now();
        let empty_layout = Layout::default();
        let (scene, layout) = match content {
            Some((s, _, l)) => (Some(s), l),
            None => (None, &empty_layout),
        };
        let g = &spec.geometry;
        let (tx, ty) = (tile.x as f32, tile.y as f32);
        let scale = g.scale;
        let mut rects: Vec<RectInstance> = Vec::new();
        self.text.clear();

        // Title band: title, subtitle, and for diffs the legend on the right. The legend
        // uses long captions only when everything fits; the subtitle gets what is left,
        // truncated with an ellipsis.
        let title_size = (g.style.title_font * scale).round();
        let sub_size = (g.style.label_font * scale).round();
        let line_h = TextLayer::line_height(title_size);
        let title_top = (g.title.y + (g.title.h - line_h) / 2.0).round();
        let margin = (g.style.margin * scale).round();
        let spacing = (12.0 * scale).round();
        let title_w = self.text.measure(&spec.title, title_size).width;
        let sub_w = if spec.subtitle.is_empty() {
            0.0
        } else {
            self.text.measure(&spec.subtitle, sub_size).width
        };
        let mut title_right = g.width_px as f32 - margin;
        if spec.color == ColorMode::Diff {
            let long = self.legend_width(spec, true);
            let fits_long = margin + title_w + spacing + sub_w + spacing + long <= title_right;
            title_right =
                self.legend(spec, &mut rects, tile, title_top, line_h, fits_long) - spacing;
        }
        let title_clip = [
            margin - tx,
            g.title.y - ty,
            title_right - tx,
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
        let sub_x = margin + title_w + spacing;
        if !spec.subtitle.is_empty()
            && sub_x < title_right
            && let Some(sub) = self.text.fit(
                &spec.subtitle,
                &spec.subtitle,
                sub_size,
                title_right - sub_x,
            )
        {
            let sub_top = (g.title.y + (g.title.h - TextLayer::line_height(sub_size)) / 2.0)
                .round()
                + scale.round();
            self.text.push(
                &sub,
                sub_size,
                sub_x - tx,
                sub_top - ty,
                title_clip,
                MUTED_COLOR,
            );
        }

        // Bars: visible rows, and per row the visible range by binary search.
        let cam = &spec.camera;
        let graph_right = g.graph.x + g.graph.w;
        let (t0, t1) = cam.visible_ticks(f64::from(g.graph.w));
        let mut draws: Vec<(usize, f32, TierRef, std::ops::Range<usize>, f32)> = Vec::new();
        let ticks_per_px = 1.0 / cam.px_per_tick;
        let label_size = (g.style.label_font * scale).round();
        let label_line = TextLayer::line_height(label_size);
        let pad = (g.style.label_pad * scale).round();
        let min_label = g.style.min_label_width * scale;
        let diff_pal = diff_palette(spec.colorblind);
        let diff_ticks = content.and_then(|(_, p, _)| p.diff_ticks());
        // From the scene: scanning every node for it would cost O(nodes) per frame.
        let max_self = scene.map_or(0.0, |sc| f64::from(sc.bars.max_self()));
        let mut labels = 0usize;
        for r in g.visible_rows() {
            let Some(row) = layout.rows.get(r) else {
                continue;
            };
            let top = g.row_top(r);
            if top + g.row_pitch_px <= ty || top >= ty + tile.h as f32 {
                continue;
            }
            // The coarsest tier finer than a few pixels (`lod::FOLD_PX`).
            let tier = scene.map_or(TierRef::Row, |sc| sc.lod.tier_for(r, ticks_per_px));
            let (range, tier_bars) = match tier {
                TierRef::Row => (row.range_between(t0, t1), None),
                TierRef::Tier(k) => {
                    let t = &scene.expect("tier implies a scene").lod.rows[r][k];
                    (t.range_between(row, t0, t1), Some(t))
                }
            };
            let alpha = if r < spec.faded_rows { 0.35 } else { 1.0 };
            draws.push((r, top - ty, tier, range.clone(), alpha));
            for j in range {
                // Labels for real bars only; a merged run has no single name to show.
                let i = match tier_bars {
                    None => j,
                    Some(t) if t.count(j) == 1 => t.first(j),
                    Some(_) => continue,
                };
                let x0 = g.graph.x + cam.x_of(row.x0[i]) as f32;
                let x1 = g.graph.x + cam.x_of(row.x1[i]) as f32;
                if !spec.labels || x1 - x0 < min_label {
                    continue;
                }
                let vx0 = x0.max(g.graph.x).round();
                let vx1 = (x1.round() - g.gap_px).min(graph_right);
                if vx1 <= tx || vx0 >= tx + tile.w as f32 {
                    continue;
                }
                let n = row.node[i];
                let Some((_, profile, _)) = content else {
                    continue;
                };
                let name = profile.names.get(row.name[i]);
                let full = bar_label(profile, n);
                let Some(text) = self
                    .text
                    .fit(&full, name, label_size, vx1 - vx0 - 2.0 * pad)
                else {
                    continue;
                };
                let bg = match spec.color {
                    ColorMode::Package
                    | ColorMode::Name
                    | ColorMode::Track
                    | ColorMode::Category => color::palette_color(7),
                    ColorMode::Value => {
                        color::heat_color(profile.tree.self_ticks(n) as f64, max_self)
                    }
                    ColorMode::Diff => {
                        let (lt, rt) = diff_ticks.unwrap_or((0, 0));
                        let l = profile.tree.left_total(n);
                        let pct = color::bar_diff_percent(l, profile.tree.total(n) - l, lt, rt);
                        color::diff_color(pct, diff_pal)
                    }
                };
                let text_top = (top + (g.bar_height_px - label_line) / 2.0).round();
                self.text.push(
                    &text,
                    label_size,
                    vx0 + pad - tx,
                    text_top - ty,
                    [vx0 - tx, top - ty, vx1 - tx, top + g.bar_height_px - ty],
                    color::label_color(bg),
                );
                labels += 1;
            }
        }

        // Focus: the collapsed ancestors as one grey line.
        if let Some(top) = g.header_top()
            && top + g.bar_height_px > ty
            && top < ty + tile.h as f32
        {
            rects.push(RectInstance {
                rect: [
                    g.graph.x - tx,
                    top - ty,
                    g.graph.w - g.gap_px,
                    g.bar_height_px,
                ],
                color: srgb([200, 200, 200]),
            });
            self.text.push(
                &spec.header_label,
                label_size,
                g.graph.x + pad - tx,
                (top + (g.bar_height_px - label_line) / 2.0).round() - ty,
                [
                    g.graph.x - tx,
                    top - ty,
                    graph_right - tx,
                    top + g.bar_height_px - ty,
                ],
                TITLE_COLOR,
            );
        }

        // The hovered bar: an outline, clipped to the graph.
        if let Some(h) = spec.hover
            && let Some(row) = layout.rows.get(h.row)
            && h.index < row.len()
            && g.visible_rows().contains(&h.row)
        {
            let (t0, t1) = spec
                .hover_ticks
                .unwrap_or((row.x0[h.index], row.x1[h.index]));
            let x0 = (g.graph.x + cam.x_of(t0) as f32)
                .round()
                .max(g.graph.x - 1.0);
            let x1 = ((g.graph.x + cam.x_of(t1) as f32).round() - g.gap_px)
                .min(graph_right + 1.0)
                .max(x0 + 1.0);
            let top = g.row_top(h.row);
            let t = scale.round().max(1.0);
            let c = [0.1, 0.1, 0.1, 0.85];
            for r in outline([x0, top, x1 - x0, g.bar_height_px], t) {
                rects.push(RectInstance {
                    rect: [r[0] - tx, r[1] - ty, r[2], r[3]],
                    color: c,
                });
            }
        }

        // Overlays: their rectangles after the base ones, their text on the top layer.
        let base_rects = rects.len() as u32;
        self.push_overlays(&spec.overlays, &mut rects, tile);
        let all_rects = rects.len() as u32;

        // Uniforms.
        let mut globals = BarGlobals::new(spec.color, diff_pal);
        globals.search_active = u32::from(spec.search_active);
        globals.view_start = cam.start_split();
        globals.view_start_frac = cam.start_frac as f32;
        globals.px_per_tick = cam.px_per_tick as f32;
        globals.target_size = [tile.w as f32, tile.h as f32];
        globals.origin_x = g.graph.x - tx;
        globals.clip_left = g.graph.x - tx;
        globals.clip_right = graph_right - tx;
        globals.bar_height = g.bar_height_px;
        globals.gap = g.gap_px;
        if let Some(scene) = scene {
            scene.bars.complete_globals(&mut globals);
            scene.bars.write_globals(&gpu.queue, &globals);
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
                label: Some("Renderer::frame"),
            });
        let bars_drawn;
        {
            let timestamps = timer.as_mut().and_then(|t| t.pass_writes());
            let mut pass = clear_pass(&mut enc, "Renderer::pass", target, BACKGROUND, timestamps);
            // Clip bars to the graph area within this tile.
            bars_drawn = match scene {
                Some(scene) if scissor_to(&mut pass, g.graph, tile) => {
                    scene.bars.draw(&mut pass, &self.bars, draws)
                }
                _ => 0,
            };
            pass.set_scissor_rect(0, 0, tile.w, tile.h);
            self.rects.render(&mut pass, 0..base_rects);
            self.text.render(&mut pass, Layer::Base)?;
            self.rects.render(&mut pass, base_rects..all_rects);
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

    /// Queues `overlays`: their rectangles onto `rects`, their text on the top layer.
    pub(super) fn push_overlays(
        &mut self,
        overlays: &[Overlay],
        rects: &mut Vec<RectInstance>,
        tile: Tile,
    ) {
        let (tx, ty) = (tile.x as f32, tile.y as f32);
        for o in overlays {
            match o {
                Overlay::Rect { rect, color } => rects.push(RectInstance {
                    rect: [rect[0] - tx, rect[1] - ty, rect[2], rect[3]],
                    color: color.map(|c| f32::from(c) / 255.0),
                }),
                Overlay::Text {
                    text,
                    size,
                    x,
                    y,
                    color,
                    clip,
                } => self.text.push_on(
                    Layer::Overlay,
                    text,
                    *size,
                    x - tx,
                    y - ty,
                    [clip[0] - tx, clip[1] - ty, clip[2] - tx, clip[3] - ty],
                    *color,
                ),
            }
        }
    }

    fn legend_captions(long: bool) -> (&'static str, &'static str) {
        if long {
            ("(shrank or removed) −100%", "+100% (grew or new)")
        } else {
            ("−100%", "+100%")
        }
    }

    fn legend_strip_width(scale: f32) -> f32 {
        (160.0 * scale).round()
    }

    /// Width of the diff legend with long or short captions.
    fn legend_width(&mut self, spec: &FrameSpec, long: bool) -> f32 {
        let s = spec.geometry.scale;
        let size = (spec.geometry.style.label_font * s).round();
        let (l, r) = Self::legend_captions(long);
        self.text.measure(l, size).width
            + self.text.measure(r, size).width
            + Self::legend_strip_width(s)
            + 2.0 * (6.0 * s).round()
    }

    /// Lays out the diff legend at the right of the title band; returns its left edge.
    fn legend(
        &mut self,
        spec: &FrameSpec,
        rects: &mut Vec<RectInstance>,
        tile: Tile,
        text_top: f32,
        title_line_h: f32,
        long: bool,
    ) -> f32 {
        let g = &spec.geometry;
        let s = g.scale;
        let (tx, ty) = (tile.x as f32, tile.y as f32);
        let size = (g.style.label_font * s).round();
        let line_h = TextLayer::line_height(size);
        let top = (text_top + (title_line_h - line_h) / 2.0).round();
        let margin = (g.style.margin * s).round();
        let strip_w = Self::legend_strip_width(s);
        let strip_h = (10.0 * s).round();
        let space = (6.0 * s).round();
        let (left_caption, right_caption) = Self::legend_captions(long);
        let right_w = self.text.measure(right_caption, size).width;
        let left_w = self.text.measure(left_caption, size).width;
        let right_x = g.width_px as f32 - margin - right_w;
        let strip_x1 = right_x - space;
        let strip_x0 = strip_x1 - strip_w;
        let left_x = strip_x0 - space - left_w;
        let clip = [
            0.0 - tx,
            g.title.y - ty,
            g.width_px as f32 - tx,
            g.title.y + g.title.h - ty,
        ];
        self.text.push(
            right_caption,
            size,
            right_x - tx,
            top - ty,
            clip,
            MUTED_COLOR,
        );
        self.text
            .push(left_caption, size, left_x - tx, top - ty, clip, MUTED_COLOR);
        let pal = diff_palette(spec.colorblind);
        const STEPS: usize = 41;
        let strip_y = (g.title.y + (g.title.h - strip_h) / 2.0).round();
        for k in 0..STEPS {
            let pct = -100.0 + 200.0 * k as f64 / (STEPS - 1) as f64;
            let a = (strip_x0 + strip_w * k as f32 / STEPS as f32).round();
            let b = (strip_x0 + strip_w * (k + 1) as f32 / STEPS as f32).round();
            let c = to_u8(color::diff_color(pct, pal));
            rects.push(RectInstance {
                rect: [a - tx, strip_y - ty, b - a, strip_h],
                color: srgb(c),
            });
        }
        left_x
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn diff_change_wording() {
        assert_eq!(diff_change(0, 5, 10, 10), "new");
        assert_eq!(diff_change(5, 0, 10, 10), "removed");
        assert_eq!(diff_change(10, 10, 100, 100), "±0%");
        assert_eq!(diff_change(10, 15, 100, 100), "+50%");
        assert_eq!(diff_change(10, 5, 100, 100), "−50%");
        // Shares, not raw counts: the right side is twice as big overall.
        assert_eq!(diff_change(10, 20, 100, 200), "±0%");
        // A left share that rounds to 0.00 %: unbounded growth (colored as +100 %).
        assert_eq!(diff_change(1, 100, 1_000_000, 1000), "+∞%");
    }

    /// A diff bar's label reads the change its color shows: both start from the shares
    /// rounded to 0.01 % (14.1 % → 12.61 %: −10.57 %; from the exact shares, −10.54 %, the
    /// label used to read −10.5 % on a bar colored for −10.57 %).
    #[test]
    fn diff_label_agrees_with_color() {
        assert_eq!(diff_change(141, 125, 1000, 991), "−10.57%");
        for (l, r, lt, rt) in [(141, 125, 1000, 991), (53, 47, 1000, 991), (7, 9, 991, 987)] {
            // Within ±100 %, where the gradient is not clamped.
            let pct = (color::bar_diff_percent(l, r, lt, rt) * 100.0).round() / 100.0;
            let sign = if pct > 0.0 { "+" } else { "−" };
            assert_eq!(diff_change(l, r, lt, rt), format!("{sign}{}%", pct.abs()));
        }
    }
}
