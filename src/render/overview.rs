//! The overview layer: every row of a layout squeezed into a strip, drawn once into a
//! texture and copied onto each frame by the blit pipeline.
//!
//! Drawing a million rows every frame would cost what the detail view saves, so the
//! texture is kept while its [`OverviewKey`] (scene, size, colors, search) holds and
//! redrawn only when one of them changes.

use super::bars::{BarPipeline, BarScene};
use super::blit::{BlitPipeline, BlitSource};
use super::gpu::Gpu;
use super::pass::{bar_globals, clear_pass, encoder};
use crate::view::draw::{OVERVIEW_BACKGROUND, OverviewKey, OverviewLayer};

/// The texture drawn last, and what it shows.
#[derive(Default)]
pub struct OverviewCache {
    drawn: Option<Drawn>,
}

struct Drawn {
    key: OverviewKey,
    _texture: wgpu::Texture,
    source: BlitSource,
}

impl OverviewCache {
    /// The texture of `layer` (its bars in `scene`, drawn by `bars`), drawn now into a
    /// texture of `format` unless the cached one still holds, and bound for `blit`.
    pub fn ensure(
        &mut self,
        gpu: &Gpu,
        bars: &BarPipeline,
        blit: &BlitPipeline,
        format: wgpu::TextureFormat,
        scene: &BarScene,
        layer: &OverviewLayer<'_>,
    ) -> Option<&BlitSource> {
        let max_side = gpu.max_texture_side();
        let w = (layer.rect.w as u32).clamp(1, max_side);
        let h = (layer.rect.h as u32).clamp(1, max_side);
        let key = layer.key(w, h);
        if self.drawn.as_ref().is_some_and(|d| d.key == key) {
            return self.drawn.as_ref().map(|d| &d.source);
        }
        let texture = gpu.device.create_texture(&wgpu::TextureDescriptor {
            label: Some("OverviewCache::texture"),
            size: wgpu::Extent3d {
                width: w,
                height: h,
                depth_or_array_layers: 1,
            },
            mip_level_count: 1,
            sample_count: 1,
            dimension: wgpu::TextureDimension::D2,
            format,
            usage: wgpu::TextureUsages::RENDER_ATTACHMENT | wgpu::TextureUsages::TEXTURE_BINDING,
            view_formats: &[],
        });
        let view = texture.create_view(&wgpu::TextureViewDescriptor::default());
        let strip = layer.bars(w, h);
        if let Some(s) = strip.search {
            scene.set_search(&gpu.queue, s);
        }
        let mut globals = bar_globals(&strip, [w as f32, h as f32], 0.0);
        scene.complete_globals(&mut globals);
        scene.write_globals(&gpu.queue, &globals);
        let mut enc = encoder(gpu, "OverviewCache::draw");
        {
            let mut pass = clear_pass(
                &mut enc,
                "OverviewCache::pass",
                &view,
                OVERVIEW_BACKGROUND,
                None,
            );
            scene.draw(
                &mut pass,
                bars,
                (&strip.rows, strip.lod),
                strip.bar_height,
                0.0,
                h as f32,
            );
        }
        // Submitted on its own: the frame rewrites the same uniform buffer afterwards.
        gpu.queue.submit([enc.finish()]);
        let source = blit.source(&gpu.device, &view);
        self.drawn = Some(Drawn {
            key,
            _texture: texture,
            source,
        });
        self.drawn.as_ref().map(|d| &d.source)
    }
}
