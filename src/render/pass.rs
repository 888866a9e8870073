//! What every render pass of scorch shares: the tile a target covers, clearing, scissoring
//! to image rectangles, and the bar shader's uniforms for a layer of bars.

use super::bars::BarGlobals;
use super::gpu::Gpu;
use crate::color;
use crate::geometry::RectPx;
use crate::view::draw::BarsLayer;

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

impl Tile {
    /// Whether the image rectangle `clip` (left, top, right, bottom) reaches into it.
    pub fn touches(&self, clip: [f32; 4]) -> bool {
        let (x, y) = (self.x as f32, self.y as f32);
        clip[2] > x && clip[0] < x + self.w as f32 && clip[3] > y && clip[1] < y + self.h as f32
    }
}

/// A command encoder labelled `label`.
pub fn encoder(gpu: &Gpu, label: &str) -> wgpu::CommandEncoder {
    gpu.device
        .create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some(label) })
}

/// Begins a render pass into `view` that clears it to `bg` (sRGB).
pub fn clear_pass<'e>(
    enc: &'e mut wgpu::CommandEncoder,
    label: &str,
    view: &wgpu::TextureView,
    bg: [u8; 3],
    timestamp_writes: Option<wgpu::RenderPassTimestampWrites<'e>>,
) -> wgpu::RenderPass<'e> {
    let bg = crate::view::draw::rgba(bg, 1.0);
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
pub fn scissor_to(pass: &mut wgpu::RenderPass<'_>, rect: RectPx, tile: Tile) -> bool {
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

/// The bar shader's uniforms for `layer` drawn into a target `target` pixels large whose
/// top-left is image pixel `(tx, ty)`.
pub fn bar_globals(layer: &BarsLayer<'_>, target: [f32; 2], tx: f32) -> BarGlobals {
    let cam = &layer.camera;
    let mut g = BarGlobals::new(layer.color, color::diff_palette(layer.colorblind));
    g.search_active = u32::from(layer.search.is_some());
    g.view_start = cam.start_split();
    g.view_start_frac = cam.start_frac as f32;
    g.px_per_tick = cam.px_per_tick as f32;
    g.target_size = target;
    g.origin_x = layer.clip.x - tx;
    g.clip_left = layer.clip.x - tx;
    g.clip_right = layer.clip.x + layer.clip.w - tx;
    g.bar_height = layer.bar_height;
    g.gap = layer.gap;
    g
}
