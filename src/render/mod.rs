//! Drawing with wgpu: the only part of scorch (with `app/` and `export/`) that touches
//! the GPU.
//!
//! It draws [`crate::view::draw::Frame`]s, the CPU-side draw data views build, and knows
//! nothing of profiles, traces or views.
//!
//! - [`gpu`]: instance, adapter and device selection (`--backend`, `WGPU_*`); [`warmup`]
//!   opens a device on a thread of its own while a load runs.
//! - Layers, each prepared on the CPU, rendered into the frame's pass, trimmed:
//!   [`bars`] (bars from per-row instance ranges, `bars.wgsl`, with [`names`]: per-name
//!   MurmurHash3 on the GPU, `name_hash.wgsl`), [`rects`] (solid rectangles, `rects.wgsl`),
//!   [`text`] (shaping with the bundled font, drawn as [`glyphs`]: instanced glyph
//!   quads from one atlas, `glyphs.wgsl`), [`overview`] (a cached texture, copied by
//!   [`blit`]).
//! - [`scenes`]: the bars uploaded for the views, by key.
//! - [`frame`]: one frame from all of the above, into any target, tile by tile.
//!
//! [`render_frame`] renders a whole image offscreen, in tiles when it is larger than the
//! device's maximum texture size, and reads it back.

mod ahead;
pub mod bars;
pub mod blit;
pub mod frame;
pub mod glyphs;
pub mod gpu;
pub mod names;
pub mod overview;
pub mod pass;
pub mod rects;
pub mod scenes;
pub mod text;
pub mod timer;
pub mod warmup;

pub use frame::{FrameStats, LABEL_PLACING, LABEL_SHAPING, Renderer, TARGET_FORMAT, Tile};
pub use gpu::{Backend, Gpu, GpuError, GpuOptions};
pub use scenes::Scenes;
pub use timer::GpuTimer;

use crate::view::draw::Frame;

/// An RGBA8 image (sRGB values, straight alpha), row-major, no padding.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RgbaImage {
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
    /// `width * height * 4` bytes.
    pub pixels: Vec<u8>,
}

impl RgbaImage {
    /// The pixel at (`x`, `y`).
    pub fn pixel(&self, x: u32, y: u32) -> [u8; 4] {
        let i = ((y * self.width + x) * 4) as usize;
        [
            self.pixels[i],
            self.pixels[i + 1],
            self.pixels[i + 2],
            self.pixels[i + 3],
        ]
    }
}

/// Largest image [`render_image`] produces (bytes of RGBA): 2 GiB.
pub const MAX_IMAGE_BYTES: u64 = 2 << 30;

/// Why an image could not be rendered.
#[derive(Debug, thiserror::Error)]
pub enum RenderError {
    /// The requested image is too large to hold in memory.
    #[error(
        "an image of {width}×{height} pixels ({mib} MiB) is larger than the {limit_mib} MiB limit; lower --height, --width or --scale"
    )]
    TooLarge {
        /// Width asked for.
        width: u32,
        /// Height asked for.
        height: u32,
        /// Its size in MiB.
        mib: u64,
        /// The limit in MiB.
        limit_mib: u64,
    },
    /// A frame failed.
    #[error(transparent)]
    Frame(#[from] frame::FrameError),
    /// Reading the image back failed.
    #[error("reading the rendered image back from the GPU failed: {0}")]
    Readback(String),
    /// The device (out of memory, most often) refused what rendering needs.
    #[error(transparent)]
    Gpu(#[from] GpuError),
    /// Not even one row of a tile fits the device's largest buffer.
    #[error(
        "reading back a tile {width} pixels wide needs a buffer of {bytes} bytes, more \
         than the device's limit of {limit} bytes; lower --width or --scale"
    )]
    ReadbackTooLarge {
        /// The tile's width in pixels.
        width: u32,
        /// The buffer's size (of one row, when not even one fits).
        bytes: u64,
        /// The device's `max_buffer_size`.
        limit: u64,
    },
    /// The system refused memory for the image.
    #[error("out of memory for an image of {width}×{height} pixels ({mib} MiB)")]
    OutOfMemory {
        /// Width asked for.
        width: u32,
        /// Height asked for.
        height: u32,
        /// Its size in MiB.
        mib: u64,
    },
}

/// The tile an image of `w` × `h` is rendered in: at most `max_side` a side, and no more
/// rows than a readback buffer of at most `max_buffer` bytes holds (rows padded to
/// [`wgpu::COPY_BYTES_PER_ROW_ALIGNMENT`]), so that no readback ever asks the device for
/// a buffer larger than it allows.
pub fn tile_size(
    w: u32,
    h: u32,
    max_side: u32,
    max_buffer: u64,
) -> Result<(u32, u32), RenderError> {
    let tile_w = w.min(max_side).max(1);
    let row = padded_row(tile_w);
    let rows = max_buffer / u64::from(row);
    if rows == 0 {
        return Err(RenderError::ReadbackTooLarge {
            width: tile_w,
            bytes: u64::from(row),
            limit: max_buffer,
        });
    }
    let tile_h = h.min(max_side).max(1);
    Ok((tile_w, tile_h.min(u32::try_from(rows).unwrap_or(u32::MAX))))
}

/// Bytes of a row of `w` RGBA pixels in a readback buffer.
fn padded_row(w: u32) -> u32 {
    let align = wgpu::COPY_BYTES_PER_ROW_ALIGNMENT;
    (w * 4).div_ceil(align) * align
}

/// What rendering an image did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ImageStats {
    /// Tiles rendered.
    pub tiles: u32,
    /// Bars drawn over all tiles.
    pub bars_drawn: u64,
    /// Labels in the image.
    pub labels: usize,
}

/// Where the time of rendering an image went (`scorch render -v`).
#[derive(Clone, Copy, Debug, Default)]
pub struct ImageTimes {
    /// CPU time building and submitting the tiles' frames.
    pub encode: std::time::Duration,
    /// Waiting for the GPU to finish each tile and map it for reading.
    pub wait: std::time::Duration,
    /// Copying the mapped tiles into the image.
    pub copy: std::time::Duration,
}

/// Renders `frame` offscreen and returns the pixels. Images wider or taller than the
/// device's texture limit are rendered as several tiles.
pub fn render_frame(
    gpu: &Gpu,
    renderer: &mut Renderer,
    frame: &Frame<'_>,
    scenes: &Scenes,
) -> Result<(RgbaImage, ImageStats), RenderError> {
    render_frame_timed(
        gpu,
        renderer,
        frame,
        scenes,
        gpu.max_texture_side(),
        &mut ImageTimes::default(),
    )
}

/// [`render_frame`] with tiles of at most `max_tile` pixels a side (tests use small
/// tiles to check that tiling is seamless), adding where the time went to `times`.
pub fn render_frame_timed(
    gpu: &Gpu,
    renderer: &mut Renderer,
    frame: &Frame<'_>,
    scenes: &Scenes,
    max_tile: u32,
    times: &mut ImageTimes,
) -> Result<(RgbaImage, ImageStats), RenderError> {
    let (w, h) = (frame.width_px, frame.height_px);
    render_tiles_timed(gpu, w, h, max_tile, times, |view, tile| {
        renderer.render(gpu, frame, scenes, view, tile, None)
    })
}

/// Renders an image of `w` × `h` pixels tile by tile (tiles of at most `max_tile` a
/// side) with `draw`, which draws the part of the image a [`Tile`] covers into a view.
pub fn render_tiles(
    gpu: &Gpu,
    w: u32,
    h: u32,
    max_tile: u32,
    draw: impl FnMut(&wgpu::TextureView, Tile) -> Result<frame::FrameStats, frame::FrameError>,
) -> Result<(RgbaImage, ImageStats), RenderError> {
    render_tiles_timed(gpu, w, h, max_tile, &mut ImageTimes::default(), draw)
}

/// [`render_tiles`], adding where the time went to `times`.
pub fn render_tiles_timed(
    gpu: &Gpu,
    w: u32,
    h: u32,
    max_tile: u32,
    times: &mut ImageTimes,
    mut draw: impl FnMut(&wgpu::TextureView, Tile) -> Result<frame::FrameStats, frame::FrameError>,
) -> Result<(RgbaImage, ImageStats), RenderError> {
    let bytes = u64::from(w) * u64::from(h) * 4;
    if bytes > MAX_IMAGE_BYTES {
        return Err(RenderError::TooLarge {
            width: w,
            height: h,
            mib: bytes >> 20,
            limit_mib: MAX_IMAGE_BYTES >> 20,
        });
    }
    let max_side = max_tile.min(gpu.max_texture_side()).clamp(16, 8192);
    let (tile_w, tile_h) = tile_size(w, h, max_side, gpu.device.limits().max_buffer_size)?;
    let mut pixels = Vec::new();
    pixels
        .try_reserve_exact(bytes as usize)
        .map_err(|_| RenderError::OutOfMemory {
            width: w,
            height: h,
            mib: bytes >> 20,
        })?;
    pixels.resize(bytes as usize, 0);
    let mut image = RgbaImage {
        width: w,
        height: h,
        pixels,
    };
    let mut stats = ImageStats::default();
    let tile_bytes = u64::from(tile_w) * u64::from(tile_h) * 4;
    let texture = gpu.allocating("the image's tile", tile_bytes, || {
        gpu.device.create_texture(&wgpu::TextureDescriptor {
            label: Some("render_image::tile"),
            size: wgpu::Extent3d {
                width: tile_w,
                height: tile_h,
                depth_or_array_layers: 1,
            },
            mip_level_count: 1,
            sample_count: 1,
            dimension: wgpu::TextureDimension::D2,
            format: TARGET_FORMAT,
            usage: wgpu::TextureUsages::RENDER_ATTACHMENT | wgpu::TextureUsages::COPY_SRC,
            view_formats: &[],
        })
    })?;
    let view = texture.create_view(&wgpu::TextureViewDescriptor::default());
    let mut y = 0;
    while y < h {
        let th = tile_h.min(h - y);
        let mut x = 0;
        while x < w {
            let tw = tile_w.min(w - x);
            // Render the full tile texture; only the used part is read back.
            let tile = Tile {
                x,
                y,
                w: tile_w,
                h: tile_h,
            };
            let t0 = std::time::Instant::now();
            // What a frame allocates (instances, glyph atlases) is in the scope too.
            let fs = gpu.allocating("a tile's frame", tile_bytes, || draw(&view, tile))??;
            times.encode += t0.elapsed();
            stats.tiles += 1;
            stats.bars_drawn += fs.bars_drawn;
            stats.labels = fs.labels;
            // Straight from the mapped staging buffer into the image: no copy between.
            read_texture_with(gpu, &texture, tw, th, times, |row, src| {
                let dst = (((y + row) * w + x) * 4) as usize;
                image.pixels[dst..dst + src.len()].copy_from_slice(src);
            })?;
            x += tw;
        }
        y += th;
    }
    Ok((image, stats))
}

/// Reads the top-left `w`×`h` of `texture` back and hands `row` each row of RGBA bytes
/// (its index and `w * 4` bytes) straight from the mapped buffer; adds the time spent
/// waiting for the GPU and copying to `times`.
fn read_texture_with(
    gpu: &Gpu,
    texture: &wgpu::Texture,
    w: u32,
    h: u32,
    times: &mut ImageTimes,
    mut row: impl FnMut(u32, &[u8]),
) -> Result<(), RenderError> {
    let t0 = std::time::Instant::now();
    let padded = padded_row(w);
    let size = u64::from(padded) * u64::from(h);
    let limit = gpu.device.limits().max_buffer_size;
    if size > limit {
        return Err(RenderError::ReadbackTooLarge {
            width: w,
            bytes: size,
            limit,
        });
    }
    let buffer = gpu.allocating("reading the image back", size, || {
        gpu.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("read_texture::staging"),
            size,
            usage: wgpu::BufferUsages::COPY_DST | wgpu::BufferUsages::MAP_READ,
            mapped_at_creation: false,
        })
    })?;
    let mut enc = gpu
        .device
        .create_command_encoder(&wgpu::CommandEncoderDescriptor {
            label: Some("read_texture::encoder"),
        });
    enc.copy_texture_to_buffer(
        wgpu::TexelCopyTextureInfo {
            texture,
            mip_level: 0,
            origin: wgpu::Origin3d::ZERO,
            aspect: wgpu::TextureAspect::All,
        },
        wgpu::TexelCopyBufferInfo {
            buffer: &buffer,
            layout: wgpu::TexelCopyBufferLayout {
                offset: 0,
                bytes_per_row: Some(padded),
                rows_per_image: Some(h),
            },
        },
        wgpu::Extent3d {
            width: w,
            height: h,
            depth_or_array_layers: 1,
        },
    );
    gpu.queue.submit([enc.finish()]);
    let slice = buffer.slice(..size);
    map_slice(gpu, &slice).map_err(RenderError::Readback)?;
    let t1 = std::time::Instant::now();
    {
        let data = slice
            .get_mapped_range()
            .map_err(|e| RenderError::Readback(e.to_string()))?;
        for r in 0..h {
            let start = r as usize * padded as usize;
            row(r, &data[start..start + (w * 4) as usize]);
        }
    }
    buffer.unmap();
    times.wait += t1 - t0;
    times.copy += t1.elapsed();
    Ok(())
}

/// Maps `slice` for reading and waits until it is.
fn map_slice(gpu: &Gpu, slice: &wgpu::BufferSlice<'_>) -> Result<(), String> {
    let (tx, rx) = std::sync::mpsc::channel();
    slice.map_async(wgpu::MapMode::Read, move |r| {
        let _ = tx.send(r);
    });
    gpu.device
        .poll(wgpu::PollType::wait_indefinitely())
        .map_err(|e| e.to_string())?;
    rx.recv()
        .map_err(|e| e.to_string())?
        .map_err(|e| e.to_string())
}

fn map_read(gpu: &Gpu, buffer: &wgpu::Buffer, size: u64) -> Result<Vec<u8>, String> {
    let slice = buffer.slice(..size);
    map_slice(gpu, &slice)?;
    let data = slice
        .get_mapped_range()
        .map_err(|e| e.to_string())?
        .to_vec();
    buffer.unmap();
    Ok(data)
}

/// Reads `size` bytes of a `COPY_SRC` buffer back to the CPU (tests, diagnostics).
pub fn read_buffer(gpu: &Gpu, src: &wgpu::Buffer, size: u64) -> Vec<u8> {
    let staging = gpu.device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("read_buffer::staging"),
        size: size.max(4),
        usage: wgpu::BufferUsages::COPY_DST | wgpu::BufferUsages::MAP_READ,
        mapped_at_creation: false,
    });
    let mut enc = gpu
        .device
        .create_command_encoder(&wgpu::CommandEncoderDescriptor {
            label: Some("read_buffer::encoder"),
        });
    enc.copy_buffer_to_buffer(src, 0, &staging, 0, size);
    gpu.queue.submit([enc.finish()]);
    map_read(gpu, &staging, size).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 14, failure 3: the export's readback buffer was asked for whatever a tile
    /// needed. Tiles are now cut so that no readback buffer exceeds the device's
    /// `max_buffer_size`, and a width whose single row exceeds it is an error naming
    /// both sizes.
    #[test]
    fn panic_on_gpu_out_of_memory_in_the_export_readback_buffer() {
        // A device with the default 256 MiB limit: a full 8192² tile fits exactly.
        assert_eq!(
            tile_size(20_000, 300_000, 8192, 256 << 20).unwrap(),
            (8192, 8192)
        );
        // A small limit cuts tiles to the rows it holds; every readback fits.
        for (w, h, limit) in [(1000, 5000, 1 << 20), (8192, 8192, 100_000), (7, 9, 256)] {
            let (tw, th) = tile_size(w, h, 8192, limit).unwrap();
            assert!(th >= 1 && th <= h && tw <= w, "{tw}×{th}");
            assert!(
                u64::from(padded_row(tw)) * u64::from(th) <= limit,
                "{tw}×{th}"
            );
        }
        let err = tile_size(8192, 10, 8192, 1000).unwrap_err();
        assert!(matches!(err, RenderError::ReadbackTooLarge { .. }));
        let msg = err.to_string();
        assert!(
            msg.contains("32768 bytes") && msg.contains("limit of 1000 bytes"),
            "{msg}"
        );
    }
}
