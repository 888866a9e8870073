//! Headless export: a profile to a PNG, through the same renderer as the window.
//!
//! [`frame_spec`] turns [`ExportOptions`] into what to draw (GPU-free, so the window and
//! tests share it); [`render_png`] renders it offscreen (in tiles past the texture limit),
//! and writes an RGB PNG.

use crate::color::ColorMode;
use crate::layout::Layout;
use crate::model::Profile;
use crate::render::{self, FrameSpec, Gpu, RenderError, Renderer, RgbaImage, Scene, TARGET_FORMAT};
use crate::view::{FrameGeometry, Orientation, Style};
use std::path::Path;

/// Default image width in logical pixels (flamegraph.pl's default).
pub const DEFAULT_WIDTH: u32 = 1200;
/// Tallest default height, in physical pixels, when the profile is deeper than that.
pub const MAX_DEFAULT_HEIGHT_PX: u32 = 16384;

/// What to export.
#[derive(Clone, Debug)]
pub struct ExportOptions {
    /// Width in logical pixels.
    pub width: u32,
    /// Height in logical pixels; `None` fits the whole profile.
    pub height: Option<u32>,
    /// Device pixels per logical pixel (2 for a HiDPI image).
    pub scale: f32,
    /// Flame graph or icicle.
    pub orientation: Orientation,
    /// Coloring; `None` picks diff for differential profiles and package otherwise.
    pub color: Option<ColorMode>,
    /// Color-blind diff palette.
    pub colorblind: bool,
    /// Title; `None` uses the input's file name.
    pub title: Option<String>,
}

impl Default for ExportOptions {
    fn default() -> Self {
        Self {
            width: DEFAULT_WIDTH,
            height: None,
            scale: 1.0,
            orientation: Orientation::Flame,
            color: None,
            colorblind: false,
            title: None,
        }
    }
}

/// Why an export failed.
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    /// Options that cannot work together or with this profile.
    #[error("{0}")]
    Options(String),
    /// Rendering failed.
    #[error(transparent)]
    Render(#[from] RenderError),
    /// Writing the PNG failed.
    #[error("cannot write {path}: {detail}")]
    Write {
        /// Output path.
        path: String,
        /// What went wrong.
        detail: String,
    },
}

/// What an export produced.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ExportReport {
    /// Image width in pixels.
    pub width_px: u32,
    /// Image height in pixels.
    pub height_px: u32,
    /// Tiles rendered.
    pub tiles: u32,
    /// Bars drawn.
    pub bars_drawn: u64,
    /// Labels drawn.
    pub labels: usize,
    /// Rows that did not fit the image (0 when all are shown).
    pub rows_cut: usize,
    /// Bytes of PNG written.
    pub png_bytes: u64,
}

/// The default title of a profile: its file name.
pub fn default_title(profile: &Profile) -> String {
    Path::new(&profile.meta.source)
        .file_name()
        .map(|s| s.to_string_lossy().to_string())
        .unwrap_or_else(|| profile.meta.source.clone())
}

/// The summary drawn after the title: totals in the profile's units.
pub fn subtitle(profile: &Profile) -> String {
    let v = &profile.values;
    let mut parts = Vec::new();
    if let Some(app) = &profile.meta.app_name {
        parts.push(app.clone());
    }
    match profile.diff_ticks() {
        Some((l, r)) if profile.is_diff() => {
            parts.push(format!(
                "before {} · after {}",
                v.format_long(l),
                v.format_long(r)
            ));
        }
        _ => parts.push(format!(
            "total {}",
            v.format_long(profile.tree.grand_total())
        )),
    }
    parts.join(" · ")
}

/// The color mode `opts` ask for, checked against the profile.
pub fn color_mode(
    profile: &Profile,
    requested: Option<ColorMode>,
) -> Result<ColorMode, ExportError> {
    match requested {
        Some(ColorMode::Diff) if !profile.is_diff() => Err(ExportError::Options(format!(
            "--color diff needs a differential profile, and {} is not one \
             (it is {})",
            profile.meta.source,
            profile.meta.format.describe()
        ))),
        Some(m) => Ok(m),
        None if profile.is_diff() => Ok(ColorMode::Diff),
        None => Ok(ColorMode::Package),
    }
}

/// What to draw for `opts`: geometry (height fitted to the profile unless given), a camera
/// showing the whole profile, colors and title. Also returns how many rows do not fit.
pub fn frame_spec(
    profile: &Profile,
    layout: &Layout,
    opts: &ExportOptions,
) -> Result<(FrameSpec, usize), ExportError> {
    if opts.width == 0 || opts.height == Some(0) {
        return Err(ExportError::Options(
            "--width and --height must be at least 1".into(),
        ));
    }
    if !(opts.scale.is_finite() && opts.scale > 0.0 && opts.scale <= 16.0) {
        return Err(ExportError::Options(format!(
            "--scale must be between 0 and 16, not {}",
            opts.scale
        )));
    }
    let color = color_mode(profile, opts.color)?;
    let style = Style::default();
    let rows = layout.rows.len();
    let needed = FrameGeometry::needed_height(rows, &style).ceil() as u32;
    let height = opts.height.unwrap_or_else(|| {
        let cap = (MAX_DEFAULT_HEIGHT_PX as f32 / opts.scale).floor() as u32;
        needed.min(cap.max(1))
    });
    let geometry = FrameGeometry::new(
        opts.width,
        height,
        opts.scale,
        rows,
        opts.orientation,
        style,
    );
    let shown = (geometry.graph.h / geometry.row_pitch_px).floor() as usize;
    let rows_cut = rows.saturating_sub(shown);
    let camera = geometry.fit_camera(layout);
    let mut spec = FrameSpec::new(
        geometry,
        camera,
        color,
        opts.title.clone().unwrap_or_else(|| default_title(profile)),
    );
    spec.colorblind = opts.colorblind;
    spec.subtitle = subtitle(profile);
    Ok((spec, rows_cut))
}

/// Renders `profile` to an image.
pub fn render_rgba(
    gpu: &Gpu,
    profile: &Profile,
    layout: &Layout,
    opts: &ExportOptions,
) -> Result<(RgbaImage, ExportReport), ExportError> {
    let (spec, rows_cut) = frame_spec(profile, layout, opts)?;
    let mut renderer = Renderer::new(gpu, TARGET_FORMAT);
    let scene = Scene::new(gpu, &renderer, profile, layout);
    let (image, stats) = render::render_image(gpu, &mut renderer, &scene, profile, layout, &spec)?;
    let report = ExportReport {
        width_px: image.width,
        height_px: image.height,
        tiles: stats.tiles,
        bars_drawn: stats.bars_drawn,
        labels: stats.labels,
        rows_cut,
        png_bytes: 0,
    };
    Ok((image, report))
}

/// Renders `profile` and writes it to `path` as PNG.
pub fn render_png(
    gpu: &Gpu,
    profile: &Profile,
    layout: &Layout,
    opts: &ExportOptions,
    path: &Path,
) -> Result<ExportReport, ExportError> {
    let (image, mut report) = render_rgba(gpu, profile, layout, opts)?;
    let png = encode_png(&image).map_err(|detail| ExportError::Write {
        path: path.display().to_string(),
        detail,
    })?;
    std::fs::write(path, &png).map_err(|e| ExportError::Write {
        path: path.display().to_string(),
        detail: e.to_string(),
    })?;
    report.png_bytes = png.len() as u64;
    Ok(report)
}

/// Encodes an opaque RGBA image as an RGB PNG.
pub fn encode_png(image: &RgbaImage) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    {
        let mut enc = png::Encoder::new(&mut out, image.width, image.height);
        enc.set_color(png::ColorType::Rgb);
        enc.set_depth(png::BitDepth::Eight);
        enc.set_compression(png::Compression::Fast);
        let mut w = enc.write_header().map_err(|e| e.to_string())?;
        let rgb: Vec<u8> = image
            .pixels
            .chunks_exact(4)
            .flat_map(|p| [p[0], p[1], p[2]])
            .collect();
        w.write_image_data(&rgb).map_err(|e| e.to_string())?;
        w.finish().map_err(|e| e.to_string())?;
    }
    Ok(out)
}

/// Decodes a PNG (RGB or RGBA, 8-bit) into RGBA; for golden tests and tools.
pub fn decode_png(bytes: &[u8]) -> Result<RgbaImage, String> {
    let dec = png::Decoder::new(std::io::Cursor::new(bytes));
    let mut reader = dec.read_info().map_err(|e| e.to_string())?;
    let size = reader
        .output_buffer_size()
        .ok_or_else(|| "PNG too large".to_string())?;
    let mut buf = vec![0; size];
    let info = reader.next_frame(&mut buf).map_err(|e| e.to_string())?;
    let (w, h) = (info.width, info.height);
    let pixels = match (info.color_type, info.bit_depth) {
        (png::ColorType::Rgba, png::BitDepth::Eight) => buf[..(w * h * 4) as usize].to_vec(),
        (png::ColorType::Rgb, png::BitDepth::Eight) => buf[..(w * h * 3) as usize]
            .chunks_exact(3)
            .flat_map(|p| [p[0], p[1], p[2], 255])
            .collect(),
        other => return Err(format!("unsupported PNG pixel format {other:?}")),
    };
    Ok(RgbaImage {
        width: w,
        height: h,
        pixels,
    })
}
