//! One frame, from its draw data into any texture view: the frame shell's GPU half,
//! written once for every view.
//!
//! [`Renderer::render`] takes a [`Frame`] (built on the CPU by a view and the shell, see
//! [`crate::view::draw`]), the uploaded [`Scenes`] it refers to, and a target covering a
//! [`Tile`] of the image. Each layer follows glyphon's shape: prepare (upload this
//! frame's instances, uniforms and text), render into the one pass, and trim now and then.
//! The planes are drawn in the frame's order: overview (a cached texture), rectangles
//! under the bars, bars (each layer scissored to its clip rectangle), rectangles over
//! them, text, overlay rectangles, overlay text.
//!
//! The window's surface, its screenshots and `scorch render`'s offscreen tiles all go
//! through here; everything is shifted by the tile's origin, so an image larger than the
//! device's texture limit is drawn tile by tile with identical pixels at the seams.

use super::bars::BarPipeline;
use super::gpu::Gpu;
use super::overview::OverviewCache;
use super::pass::{bar_globals, clear_pass, encoder, scissor_to};
use super::rects::{RectInstance, RectPipeline};
use super::scenes::Scenes;
use super::text::{Layer, TextLayer};
use crate::view::draw::{Frame, Rect, Text};

pub use super::pass::Tile;

/// Texture format of every scorch target: colors are sRGB values written as they are
/// (like a browser canvas), so blending and text match what users know.
pub const TARGET_FORMAT: wgpu::TextureFormat = wgpu::TextureFormat::Rgba8Unorm;

/// What a frame cost.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct FrameStats {
    /// Bar instances drawn.
    pub bars_drawn: u64,
    /// Labels the frame places (in the whole image, not only this tile).
    pub labels: usize,
    /// CPU time spent preparing and encoding the frame, up to the submit (ms).
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

/// Pipelines, text state and the overview cache; create once per device and target
/// format.
pub struct Renderer {
    pub(super) bars: BarPipeline,
    rects: RectPipeline,
    text: TextLayer,
    pub(super) blit: super::blit::BlitPipeline,
    pub(super) format: wgpu::TextureFormat,
    overview: OverviewCache,
    frames: u64,
}

/// Queues `items` on text layer `layer` of `text`, shifted by the tile's origin; items
/// whose clip rectangle misses the tile are left out.
fn push_text(text: &mut TextLayer, layer: Layer, items: &[Text], tile: Tile) {
    let (tx, ty) = (tile.x as f32, tile.y as f32);
    for t in items.iter().filter(|t| tile.touches(t.clip)) {
        let c = t.clip;
        text.push_on(
            layer,
            &t.text,
            t.size,
            t.x - tx,
            t.y - ty,
            [c[0] - tx, c[1] - ty, c[2] - tx, c[3] - ty],
            t.color,
        );
    }
}

/// How long a window frame may spend shaping new label text
/// ([`TextLayer::begin_frame`]): what is left is shaped in the next frames.
pub const LABEL_SHAPING: std::time::Duration = std::time::Duration::from_micros(400);

/// The CPU time a window frame drawn while the view moves may take up to its submit,
/// labels included ([`TextLayer::limit_labels`]): labels are placed widest bar first
/// while the frame's expected end stays within it; the rest wait for the frame drawn
/// when the view rests.
pub const LABEL_PLACING: std::time::Duration = std::time::Duration::from_micros(800);

/// Trim the text atlas every this many frames (glyphs not used since are dropped).
const TRIM_EVERY: u64 = 256;

impl Renderer {
    /// Compiles the pipelines for targets of `format`.
    pub fn new(gpu: &Gpu, format: wgpu::TextureFormat) -> Renderer {
        Self::with_bars(gpu, format, BarPipeline::new(&gpu.device, format))
    }

    /// A renderer for another target format that can draw the same [`Scenes`] (the window
    /// draws into its surface's format, screenshots into [`TARGET_FORMAT`]).
    pub fn for_format(&self, gpu: &Gpu, format: wgpu::TextureFormat) -> Renderer {
        Self::with_bars(gpu, format, self.bars.for_format(&gpu.device, format))
    }

    fn with_bars(gpu: &Gpu, format: wgpu::TextureFormat, bars: BarPipeline) -> Renderer {
        Renderer {
            bars,
            rects: RectPipeline::new(&gpu.device, format),
            text: TextLayer::new(&gpu.device, format),
            blit: super::blit::BlitPipeline::new(&gpu.device, format),
            format,
            overview: OverviewCache::default(),
            frames: 0,
        }
    }

    /// The bind group layout scenes drawn by this renderer are built for.
    pub fn scene_layout(&self) -> wgpu::BindGroupLayout {
        self.bars.bind_group_layout()
    }

    /// The font frames are measured and drawn with.
    pub fn text(&mut self) -> &mut TextLayer {
        &mut self.text
    }

    /// Draws `frame` into `target`, which covers `tile` of the image; `scenes` hold the
    /// bars its layers name (a layer whose scene is missing draws nothing, as while a
    /// document loads); `timer` brackets the pass with GPU timestamps.
    pub fn render(
        &mut self,
        gpu: &Gpu,
        frame: &Frame<'_>,
        scenes: &Scenes,
        target: &wgpu::TextureView,
        tile: Tile,
        mut timer: Option<&mut super::timer::GpuTimer>,
    ) -> Result<FrameStats, FrameError> {
        let t_start = std::time::Instant::now();
        let (tx, ty) = (tile.x as f32, tile.y as f32);
        let size = [tile.w as f32, tile.h as f32];

        // Prepare: the overview texture (when its key changed), rectangles, text, and the
        // bar uniforms and search flags.
        let mut overview = None;
        if let Some(o) = &frame.overview
            && let Some(scene) = scenes.get(o.scene)
        {
            let source = self
                .overview
                .ensure(gpu, &self.bars, &self.blit, self.format, scene, o);
            overview = Some((o.rect, source));
        }
        if let Some((rect, _)) = overview {
            self.blit
                .prepare(&gpu.queue, size, [rect.x - tx, rect.y - ty, rect.w, rect.h]);
        }
        let shifted = |r: &Rect| RectInstance {
            rect: [r.rect[0] - tx, r.rect[1] - ty, r.rect[2], r.rect[3]],
            color: r.color,
        };
        let mut rects: Vec<RectInstance> =
            Vec::with_capacity(frame.under.len() + frame.over.len() + frame.top.len());
        rects.extend(frame.under.iter().map(shifted));
        let n_under = rects.len() as u32;
        rects.extend(frame.over.iter().map(shifted));
        let n_over = rects.len() as u32;
        rects.extend(frame.top.iter().map(shifted));
        let n_all = rects.len() as u32;
        self.rects.prepare(&gpu.device, &gpu.queue, size, &rects);
        let t_text = std::time::Instant::now();
        self.text.clear();
        push_text(&mut self.text, Layer::Base, &frame.text, tile);
        push_text(&mut self.text, Layer::Overlay, &frame.top_text, tile);
        let prepared = self.text.prepare(&gpu.device, &gpu.queue, tile.w, tile.h);
        let text_took = t_text.elapsed();
        self.text.end_frame();
        prepared?;
        for layer in &frame.bars {
            let Some(scene) = scenes.get(layer.scene) else {
                continue;
            };
            if let Some(s) = layer.search {
                scene.set_search(&gpu.queue, s);
            }
            let mut g = bar_globals(layer, size, tx);
            scene.complete_globals(&mut g);
            scene.write_globals(&gpu.queue, &g);
        }

        // Render.
        let mut enc = encoder(gpu, "Renderer::frame");
        let mut bars_drawn = 0;
        {
            let timestamps = timer.as_mut().and_then(|t| t.pass_writes());
            let mut pass = clear_pass(
                &mut enc,
                "Renderer::pass",
                target,
                frame.background,
                timestamps,
            );
            if let Some((rect, Some(source))) = overview
                && scissor_to(&mut pass, rect, tile)
            {
                self.blit.render(&mut pass, source);
            }
            pass.set_scissor_rect(0, 0, tile.w, tile.h);
            self.rects.render(&mut pass, 0..n_under);
            for layer in &frame.bars {
                if let Some(scene) = scenes.get(layer.scene)
                    && scissor_to(&mut pass, layer.clip, tile)
                {
                    bars_drawn += scene.draw(
                        &mut pass,
                        &self.bars,
                        (&layer.rows, layer.lod),
                        layer.bar_height,
                        ty,
                        size[1],
                    );
                }
            }
            pass.set_scissor_rect(0, 0, tile.w, tile.h);
            self.rects.render(&mut pass, n_under..n_over);
            self.text.render(&mut pass, Layer::Base)?;
            self.rects.render(&mut pass, n_over..n_all);
            self.text.render(&mut pass, Layer::Overlay)?;
        }
        if let Some(t) = &timer {
            t.resolve(&mut enc);
        }
        let commands = enc.finish();
        let encode_ms = t_start.elapsed().as_secs_f32() * 1000.0;
        self.text.note_drawing(
            text_took,
            frame.text.len() + frame.top_text.len(),
            std::time::Instant::now(),
        );
        gpu.queue.submit([commands]);
        if let Some(t) = timer {
            t.after_submit();
        }
        // Trim: glyphs of labels scrolled away long ago leave the atlas.
        self.frames += 1;
        if self.frames.is_multiple_of(TRIM_EVERY) {
            self.text.trim();
        }
        Ok(FrameStats {
            bars_drawn,
            labels: frame.labels,
            encode_ms,
        })
    }
}
