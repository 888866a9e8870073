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
//!   [`text`] (glyphon with the bundled font), [`overview`] (a cached texture, copied by
//!   [`blit`]).
//! - [`scenes`]: the bars uploaded for the views, by key.
//! - [`frame`]: one frame from all of the above, into any target, tile by tile.
//!
//! [`render_frame`] renders a whole image offscreen, in tiles when it is larger than the
//! device's maximum texture size, and reads it back.

pub mod bars;
pub mod blit;
pub mod frame;
pub mod gpu;
pub mod names;
pub mod overview;
pub mod pass;
pub mod rects;
pub mod scenes;
pub mod text;
pub mod timer;
pub mod warmup;

pub use frame::{FrameStats, Renderer, TARGET_FORMAT, Tile};
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
    let mut image = RgbaImage {
        width: w,
        height: h,
        pixels: vec![0; bytes as usize],
    };
    let mut stats = ImageStats::default();
    let tile_w = w.min(max_side);
    let tile_h = h.min(max_side);
    let texture = gpu.device.create_texture(&wgpu::TextureDescriptor {
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
    });
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
            let fs = draw(&view, tile)?;
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
    let align = wgpu::COPY_BYTES_PER_ROW_ALIGNMENT;
    let padded = (w * 4).div_ceil(align) * align;
    let size = u64::from(padded) * u64::from(h);
    let buffer = gpu.device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("read_texture::staging"),
        size,
        usage: wgpu::BufferUsages::COPY_DST | wgpu::BufferUsages::MAP_READ,
        mapped_at_creation: false,
    });
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
