//! Headless export: a profile to a PNG, through the same renderer as the window.
//!
//! [`frame_spec`] turns [`ExportOptions`] into what to draw (GPU-free, so the window and
//! tests share it); [`render_png`] renders it offscreen (in tiles past the texture limit),
//! and writes an RGB PNG. A flame graph export builds and uploads only the level of
//! detail its one frame draws ([`view_scene`]), not the pyramid a window keeps.

use crate::color::ColorMode;
use crate::layout::Layout;
use crate::model::Profile;
use crate::render::bars::BarScene;
use crate::render::{self, FrameSpec, Gpu, RenderError, Renderer, RgbaImage, Scene, TARGET_FORMAT};
use crate::view::{FrameGeometry, Orientation, Style};
use std::path::Path;
use std::time::{Duration, Instant};

mod view_lod;
pub use view_lod::view_lod;

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
    /// The device could not hold the profile.
    #[error(transparent)]
    Gpu(#[from] crate::render::GpuError),
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
    file_title(&profile.meta.source)
}

/// The file name of an input's source, or the source itself (`<stdin>`).
fn file_title(source: &str) -> String {
    Path::new(source)
        .file_name()
        .map_or_else(|| source.to_string(), |s| s.to_string_lossy().to_string())
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
        Some(m @ (ColorMode::Track | ColorMode::Category)) => Err(ExportError::Options(format!(
            "--color {} colors a trace's spans, and {} is a profile",
            m.name(),
            profile.meta.source
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

/// Where the time of an export went (`scorch render -v`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ExportTimings {
    /// Compiling the pipelines and loading the font (zero when the renderer was given).
    pub pipelines: Duration,
    /// The level-of-detail tier the frame uses.
    pub lod: Duration,
    /// Building and uploading the instances and hashing the names.
    pub upload: Duration,
    /// CPU time laying out labels and encoding the frame (every tile).
    pub frame: Duration,
    /// Waiting for the GPU to draw and for the image to be mapped for reading.
    pub gpu: Duration,
    /// Copying the mapped image out.
    pub readback: Duration,
    /// Encoding the PNG.
    pub png: Duration,
    /// Writing it.
    pub write: Duration,
}

/// The scene a one-off frame of `spec` needs: per row only the tier (or the row) that
/// frame draws, built and uploaded; not the whole pyramid a window keeps for zooming.
/// The pixels are those of a full [`Scene::new`]:
/// [`Lod::build_for_view`](crate::lod::Lod::build_for_view) keeps exactly the tier the
/// full pyramid would give this zoom, and [`view_lod`] builds the same tier faster.
pub fn view_scene(
    gpu: &Gpu,
    renderer: &Renderer,
    profile: &Profile,
    layout: &Layout,
    spec: &FrameSpec,
) -> Scene {
    view_scene_timed(
        gpu,
        renderer,
        profile,
        layout,
        spec,
        &mut ExportTimings::default(),
    )
}

fn view_scene_timed(
    gpu: &Gpu,
    renderer: &Renderer,
    profile: &Profile,
    layout: &Layout,
    spec: &FrameSpec,
    times: &mut ExportTimings,
) -> Scene {
    let t0 = Instant::now();
    // The same expression `Renderer::render` picks tiers with.
    let ticks_per_px = 1.0 / spec.camera.px_per_tick;
    let lod = view_lod(layout, ticks_per_px);
    let t1 = Instant::now();
    let bars = BarScene::with_layout_only(
        gpu,
        &renderer.scene_layout(),
        profile,
        layout,
        &lod,
        &|row, tier| lod.tier_for(row, ticks_per_px) == tier,
    );
    times.lod = t1 - t0;
    times.upload = t1.elapsed();
    Scene { lod, bars }
}

/// Renders `profile` to an image.
pub fn render_rgba(
    gpu: &Gpu,
    profile: &Profile,
    layout: &Layout,
    opts: &ExportOptions,
) -> Result<(RgbaImage, ExportReport), ExportError> {
    let mut renderer = Renderer::new(gpu, TARGET_FORMAT);
    render_rgba_with(
        gpu,
        &mut renderer,
        profile,
        layout,
        opts,
        &mut ExportTimings::default(),
    )
}

fn render_rgba_with(
    gpu: &Gpu,
    renderer: &mut Renderer,
    profile: &Profile,
    layout: &Layout,
    opts: &ExportOptions,
    times: &mut ExportTimings,
) -> Result<(RgbaImage, ExportReport), ExportError> {
    let (spec, rows_cut) = frame_spec(profile, layout, opts)?;
    let what = format!("{} bars", layout.bar_count());
    let bytes = layout.bar_count() as u64 * 32;
    let scene = gpu.allocating(&what, bytes, || {
        view_scene_timed(gpu, renderer, profile, layout, &spec, times)
    })?;
    let mut t = render::ImageTimes::default();
    let (image, stats) =
        render::render_image_timed(gpu, renderer, &scene, profile, layout, &spec, &mut t)?;
    times.frame = t.encode;
    times.gpu = t.wait;
    times.readback = t.copy;
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
    render_png_timed(gpu, profile, layout, opts, path).map(|(report, _)| report)
}

/// [`render_png`], also saying where the time went.
pub fn render_png_timed(
    gpu: &Gpu,
    profile: &Profile,
    layout: &Layout,
    opts: &ExportOptions,
    path: &Path,
) -> Result<(ExportReport, ExportTimings), ExportError> {
    let t0 = Instant::now();
    let mut renderer = Renderer::new(gpu, TARGET_FORMAT);
    let pipelines = t0.elapsed();
    let (report, mut times) = render_png_with(gpu, &mut renderer, profile, layout, opts, path)?;
    times.pipelines = pipelines;
    Ok((report, times))
}

/// [`render_png_timed`] with a renderer made beforehand ([`Renderer::new`], on
/// another thread while the input loads).
pub fn render_png_with(
    gpu: &Gpu,
    renderer: &mut Renderer,
    profile: &Profile,
    layout: &Layout,
    opts: &ExportOptions,
    path: &Path,
) -> Result<(ExportReport, ExportTimings), ExportError> {
    let mut times = ExportTimings::default();
    let (image, mut report) = render_rgba_with(gpu, renderer, profile, layout, opts, &mut times)?;
    let png_bytes = write_png(&image, path, &mut times)?;
    report.png_bytes = png_bytes;
    Ok((report, times))
}

/// Encodes `image` and writes it to `path`; returns the bytes written.
fn write_png(
    image: &RgbaImage,
    path: &Path,
    times: &mut ExportTimings,
) -> Result<u64, ExportError> {
    let t0 = Instant::now();
    let png = encode_png(image).map_err(|detail| ExportError::Write {
        path: path.display().to_string(),
        detail,
    })?;
    let t1 = Instant::now();
    std::fs::write(path, &png).map_err(|e| ExportError::Write {
        path: path.display().to_string(),
        detail: e.to_string(),
    })?;
    times.png = t1 - t0;
    times.write = t1.elapsed();
    Ok(png.len() as u64)
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

/// A trace made ready to draw: linked, laid out in bands.
#[derive(Debug)]
pub struct TraceView {
    /// The spans.
    pub spans: crate::model::spans::SpanSet,
    /// Their tree.
    pub tree: crate::model::spans::SpanTree,
    /// Their rows and bands.
    pub tracks: crate::layout::timeline::TrackLayout,
    /// How the bands were made.
    pub mode: crate::layout::timeline::BandMode,
    /// Where the trace came from.
    pub source: String,
    /// Its format.
    pub format: crate::model::SourceFormat,
}

impl TraceView {
    /// Links and lays out `trace`; `mode` `None` picks the format's usual view (see
    /// [`default_band_mode`]).
    pub fn new(
        trace: crate::import::Trace,
        mode: Option<crate::layout::timeline::BandMode>,
    ) -> TraceView {
        let mode = mode.unwrap_or_else(|| default_band_mode(trace.format));
        let tree = crate::model::spans::SpanTree::build(&trace.spans);
        let tracks = crate::layout::timeline::track_layout(&trace.spans, &tree, mode);
        TraceView {
            spans: trace.spans,
            tree,
            tracks,
            mode,
            source: trace.source,
            format: trace.format,
        }
    }

    /// Lays the bands out again in another mode.
    pub fn set_mode(&mut self, mode: crate::layout::timeline::BandMode) {
        self.mode = mode;
        self.tracks = crate::layout::timeline::track_layout(&self.spans, &self.tree, mode);
    }

    /// The color a trace starts with: one color per track when the whole trace is one
    /// tree (TiDB Dashboard, Jaeger), by name when tracks are bands (Perfetto).
    pub fn default_color(&self) -> ColorMode {
        match self.mode {
            crate::layout::timeline::BandMode::OneTree => ColorMode::Track,
            crate::layout::timeline::BandMode::PerTrack => ColorMode::Name,
        }
    }

    /// File name for titles.
    pub fn title(&self) -> String {
        file_title(&self.source)
    }

    /// Span count, tracks and duration, for the title band.
    pub fn subtitle(&self) -> String {
        let n = self.spans.len();
        let tracks = self.spans.tracks.len();
        format!(
            "{} · {n} span{} · {tracks} track{} · {}",
            self.format.describe(),
            if n == 1 { "" } else { "s" },
            if tracks == 1 { "" } else { "s" },
            crate::model::units::format_duration_ns(self.tracks.layout.total_ticks as f64)
        )
    }
}

/// The band mode a trace format is usually viewed in: Chrome traces per thread (Perfetto),
/// distributed traces as one tree (TiDB Dashboard, Jaeger UI).
pub fn default_band_mode(format: crate::model::SourceFormat) -> crate::layout::timeline::BandMode {
    use crate::layout::timeline::BandMode;
    use crate::model::SourceFormat;
    match format {
        SourceFormat::ChromeTrace => BandMode::PerTrack,
        _ => BandMode::OneTree,
    }
}

/// What to export of a trace.
#[derive(Clone, Debug)]
pub struct TimelineExport {
    /// Width in logical pixels.
    pub width: u32,
    /// Height in logical pixels; `None` fits every band (up to the default cap).
    pub height: Option<u32>,
    /// Device pixels per logical pixel.
    pub scale: f32,
    /// Colors; `None`: the trace's default.
    pub color: Option<ColorMode>,
    /// Title; `None`: the file name.
    pub title: Option<String>,
    /// Window start, ns after the trace's start; `None`: its start.
    pub start_ns: Option<u64>,
    /// Window end; `None`: its end.
    pub end_ns: Option<u64>,
}

impl Default for TimelineExport {
    fn default() -> Self {
        TimelineExport {
            width: DEFAULT_WIDTH,
            height: None,
            scale: 1.0,
            color: None,
            title: None,
            start_ns: None,
            end_ns: None,
        }
    }
}

/// What to draw for a timeline export: geometry, the camera on `[start, end)`, colors.
pub fn timeline_spec(
    trace: &TraceView,
    opts: &TimelineExport,
) -> Result<crate::render::timeline::TimelineSpec, ExportError> {
    use crate::view::timeline::{TimelineGeometry, TimelineStyle};
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
    let color = match opts.color {
        Some(ColorMode::Diff) => {
            return Err(ExportError::Options(
                "--color diff needs a differential profile; a trace has none".into(),
            ));
        }
        Some(c) => c,
        None => trace.default_color(),
    };
    let total = trace.tracks.layout.total_ticks.max(1);
    let start = opts.start_ns.unwrap_or(0);
    let end = opts.end_ns.unwrap_or(total);
    if start >= total {
        return Err(ExportError::Options(format!(
            "--start {} is past the trace's end ({})",
            crate::model::units::format_duration_ns(start as f64),
            crate::model::units::format_duration_ns(total as f64)
        )));
    }
    if start >= end {
        return Err(ExportError::Options(format!(
            "--start ({}) must be before --end ({})",
            crate::model::units::format_duration_ns(start as f64),
            crate::model::units::format_duration_ns(end as f64)
        )));
    }
    let style = TimelineStyle::default();
    let bands = &trace.tracks.bands;
    let needed = TimelineGeometry::needed_height(bands, &style).ceil() as u32;
    let height = opts.height.unwrap_or_else(|| {
        let cap = (MAX_DEFAULT_HEIGHT_PX as f32 / opts.scale).floor() as u32;
        needed.min(cap.max(1))
    });
    let width_px = ((opts.width as f32) * opts.scale).round().max(1.0) as u32;
    let height_px = ((height as f32) * opts.scale).round().max(1.0) as u32;
    let geometry = TimelineGeometry::new(width_px, height_px, opts.scale, bands, &[], style);
    let camera = crate::view::Camera::range(start, end, f64::from(geometry.graph.w));
    let mut spec = crate::render::timeline::TimelineSpec::new(
        geometry,
        camera,
        color,
        opts.title.clone().unwrap_or_else(|| trace.title()),
    );
    spec.subtitle = trace.subtitle();
    Ok(spec)
}

/// Renders a trace's timeline to an image.
pub fn render_timeline_rgba(
    gpu: &Gpu,
    trace: &TraceView,
    opts: &TimelineExport,
) -> Result<(RgbaImage, ExportReport), ExportError> {
    render_timeline_rgba_with(gpu, &mut Renderer::new(gpu, TARGET_FORMAT), trace, opts)
}

fn render_timeline_rgba_with(
    gpu: &Gpu,
    renderer: &mut Renderer,
    trace: &TraceView,
    opts: &TimelineExport,
) -> Result<(RgbaImage, ExportReport), ExportError> {
    use crate::render::timeline::{TimelineContent, TimelineScene};
    let spec = timeline_spec(trace, opts)?;
    let what = format!("{} spans", trace.spans.len());
    let bytes = trace.tracks.layout.bar_count() as u64 * 48;
    let scene = gpu.allocating(&what, bytes, || {
        TimelineScene::new(gpu, renderer, &trace.spans, &trace.tracks)
    })?;
    let content = TimelineContent {
        scene: &scene,
        spans: &trace.spans,
        tracks: &trace.tracks,
        matches: None,
    };
    let g = &spec.geometry;
    let rows_cut = {
        let shown: usize = g.visible_rows().len();
        let all: usize = g.bands.iter().map(|b| b.rows_shown as usize).sum();
        all - shown.min(all)
    };
    let (image, stats) = render::render_tiles(
        gpu,
        g.width_px,
        g.height_px,
        gpu.max_texture_side(),
        |view, tile| renderer.render_timeline(gpu, Some(content), &spec, view, tile, None),
    )?;
    Ok((
        image,
        ExportReport {
            width_px: spec.geometry.width_px,
            height_px: spec.geometry.height_px,
            tiles: stats.tiles,
            bars_drawn: stats.bars_drawn,
            labels: stats.labels,
            rows_cut,
            png_bytes: 0,
        },
    ))
}

/// Renders a trace's timeline and writes it to `path` as PNG.
pub fn render_timeline_png(
    gpu: &Gpu,
    trace: &TraceView,
    opts: &TimelineExport,
    path: &Path,
) -> Result<ExportReport, ExportError> {
    render_timeline_png_with(
        gpu,
        &mut Renderer::new(gpu, TARGET_FORMAT),
        trace,
        opts,
        path,
    )
}

/// [`render_timeline_png`] with a renderer made beforehand.
pub fn render_timeline_png_with(
    gpu: &Gpu,
    renderer: &mut Renderer,
    trace: &TraceView,
    opts: &TimelineExport,
    path: &Path,
) -> Result<ExportReport, ExportError> {
    let (image, mut report) = render_timeline_rgba_with(gpu, renderer, trace, opts)?;
    report.png_bytes = write_png(&image, path, &mut ExportTimings::default())?;
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::import::{Limits, load_bytes};
    use crate::layout::flame_layout;
    use crate::render::GpuOptions;

    /// An export's one-tier scene draws exactly what the full scene (every tier
    /// uploaded, as the window keeps it) draws for the same frame. Skipped without an
    /// adapter (Mesa llvmpipe counts as one).
    #[test]
    fn view_scene_draws_what_the_full_scene_draws() {
        let Ok(gpu) = Gpu::new(&GpuOptions::default()) else {
            eprintln!("skipping: no GPU adapter");
            return;
        };
        // Many sub-pixel bars at several depths, so most rows draw a merged tier.
        let mut text = String::new();
        let mut x = 5u64;
        for i in 0..20_000u64 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let depth = 1 + (x >> 40) % 6;
            let frames: Vec<String> = (0..depth).map(|d| format!("f{}", (i >> d) % 53)).collect();
            text.push_str(&format!(
                "main;{} {}\n",
                frames.join(";"),
                1 + (x >> 20) % 9
            ));
        }
        let profile = load_bytes("lod.folded", text.as_bytes(), Limits::default()).unwrap();
        let layout = flame_layout(&profile.tree);
        for (width, scale) in [(400, 1.0), (1200, 1.0), (900, 2.0)] {
            let opts = ExportOptions {
                width,
                scale,
                ..ExportOptions::default()
            };
            let (spec, _) = frame_spec(&profile, &layout, &opts).unwrap();
            let mut renderer = Renderer::new(&gpu, TARGET_FORMAT);
            let full = Scene::new(&gpu, &renderer, &profile, &layout);
            let view = view_scene(&gpu, &renderer, &profile, &layout, &spec);
            assert!(view.bars.instance_bytes < full.bars.instance_bytes / 2);
            let a =
                render::render_image(&gpu, &mut renderer, &full, &profile, &layout, &spec).unwrap();
            let b =
                render::render_image(&gpu, &mut renderer, &view, &profile, &layout, &spec).unwrap();
            assert_eq!(a.1, b.1, "{width} px at scale {scale}");
            assert!(a.0 == b.0, "pixels differ at {width} px, scale {scale}");
        }
    }
}
