//! Headless export: a view to a PNG, through the same frame code as the window.
//!
//! [`crate::view::export`] sets a view up for one image from the options (GPU-free, so
//! tests and the window share it); [`render_view`] uploads its bars, composes its frame
//! exactly as a window frame is composed ([`crate::view::compose`]) and renders it
//! offscreen (in tiles past the texture limit); [`render_png`] writes an RGB PNG.

use crate::model::Document;
use crate::render::{self, Gpu, RenderError, Renderer, RgbaImage, Scenes, TARGET_FORMAT};
use crate::view::{Purpose, View, compose};
use std::io::Write as _;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

pub use crate::view::export::{
    DEFAULT_WIDTH, ExportOptions, ExportView, MAX_DEFAULT_HEIGHT_PX, OptionsError, export_view,
};

/// Why an export failed.
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    /// Options that cannot work together or with this document.
    #[error(transparent)]
    Options(#[from] OptionsError),
    /// Rendering failed.
    #[error(transparent)]
    Render(#[from] RenderError),
    /// The device could not hold the document.
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
    /// Rows in all.
    pub rows: usize,
    /// Bytes of PNG written.
    pub png_bytes: u64,
}

/// Where the time of an export went (`scorch render -v`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ExportTimings {
    /// Compiling the pipelines and loading the font (zero when the renderer was given).
    pub pipelines: Duration,
    /// Building and uploading the instances and hashing the names.
    pub upload: Duration,
    /// CPU time composing the frame, laying out labels and encoding it (every tile).
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

/// Renders `view` (set up for export, see [`export_view`]) to an image.
pub fn render_view(
    gpu: &Gpu,
    renderer: &mut Renderer,
    view: &dyn View,
    times: &mut ExportTimings,
) -> Result<(RgbaImage, ExportReport), ExportError> {
    let t0 = Instant::now();
    let mut scenes = Scenes::build(gpu, &renderer.scene_layout(), &view.bar_sources())?;
    times.upload = t0.elapsed();
    let t1 = Instant::now();
    let frame = compose(view, Purpose::Export, None, renderer.text());
    // A view made for a window (whose scene leaves rows' own bars for later): every page
    // of them this image draws. An export's view uploads them all at once.
    scenes.fetch(
        gpu,
        &view.bar_sources(),
        &frame.bars,
        crate::render::bars::PageBudget::ALL,
    )?;
    let composed = t1.elapsed();
    let mut t = render::ImageTimes::default();
    let (image, stats) = render::render_frame_timed(
        gpu,
        renderer,
        &frame,
        &scenes,
        gpu.max_texture_side(),
        &mut t,
    )?;
    times.frame = composed + t.encode;
    times.gpu = t.wait;
    times.readback = t.copy;
    let (shown, rows) = view.rows_shown();
    let report = ExportReport {
        width_px: image.width,
        height_px: image.height,
        tiles: stats.tiles,
        bars_drawn: stats.bars_drawn,
        labels: frame.labels,
        rows_cut: rows - shown,
        rows,
        png_bytes: 0,
    };
    Ok((image, report))
}

/// Draws a tiny flame graph or a tiny trace timeline, as the input `gives` (both while
/// that is not known), and throws the images away. A driver may compile what a draw needs
/// at the first draw that needs it (llvmpipe JITs its shader variants then: 20–40 ms);
/// done on the device thread while the input loads ([`crate::render::warmup::Prime`]),
/// that leaves the export's own frame only its drawing. The other kind's image would only
/// keep the device thread busy longer (on llvmpipe, priming both took 44–50 ms, the flame
/// graph alone 25–30).
pub fn prime(gpu: &Gpu, renderer: &mut Renderer, gives: Option<crate::import::Gives>) {
    use crate::import::Gives;
    const PROFILE: &[u8] = b"main;load;parse 3\nmain;draw 2\n";
    const TRACE: &[u8] = br#"[{"name":"a","ph":"X","ts":0,"dur":5,"pid":1,"tid":1},
        {"name":"b","ph":"X","ts":1,"dur":2,"pid":1,"tid":1}]"#;
    let all = [
        ("prime.folded", PROFILE, Gives::Profile),
        ("prime.json", TRACE, Gives::Trace),
    ];
    for (file, bytes, _) in all.into_iter().filter(|a| gives.is_none_or(|g| g == a.2)) {
        let Ok(imported) =
            crate::import::load_any_bytes(file, bytes, crate::import::Limits::default())
        else {
            continue;
        };
        let opts = ExportOptions {
            width: 160,
            height: Some(96),
            ..ExportOptions::default()
        };
        if let Ok(view) = export_view(&Document::from(imported), &opts) {
            let _ = render_view(gpu, renderer, &*view, &mut ExportTimings::default());
        }
    }
}

/// Renders `doc` as `opts` ask to an image.
pub fn render_rgba(
    gpu: &Gpu,
    doc: &Document,
    opts: &ExportOptions,
) -> Result<(RgbaImage, ExportReport), ExportError> {
    let view = export_view(doc, opts)?;
    let mut renderer = Renderer::new(gpu, TARGET_FORMAT);
    render_view(gpu, &mut renderer, &*view, &mut ExportTimings::default())
}

/// Renders `doc` as `opts` ask and writes it to `path` as PNG.
pub fn render_png(
    gpu: &Gpu,
    doc: &Document,
    opts: &ExportOptions,
    path: &Path,
) -> Result<ExportReport, ExportError> {
    let view = export_view(doc, opts)?;
    let t0 = Instant::now();
    let mut renderer = Renderer::new(gpu, TARGET_FORMAT);
    let pipelines = t0.elapsed();
    let (report, mut times) = render_png_with(gpu, &mut renderer, &*view, path)?;
    times.pipelines = pipelines;
    let _ = times;
    Ok(report)
}

/// Renders `view` with a renderer made beforehand ([`Renderer::new`], on another thread
/// while the input loads) and writes it to `path` as PNG; says where the time went.
pub fn render_png_with(
    gpu: &Gpu,
    renderer: &mut Renderer,
    view: &dyn View,
    path: &Path,
) -> Result<(ExportReport, ExportTimings), ExportError> {
    let mut times = ExportTimings::default();
    let (image, mut report) = render_view(gpu, renderer, view, &mut times)?;
    report.png_bytes = write_png(&image, path, &mut times)?;
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
    write_whole(path, |f| f.write_all(&png)).map_err(|e| ExportError::Write {
        path: path.display().to_string(),
        detail: e.to_string(),
    })?;
    times.png = t1 - t0;
    times.write = t1.elapsed();
    Ok(png.len() as u64)
}

/// Writes `path` whole or not at all: `write` fills a temporary file in the same
/// directory (hidden, ending in `.tmp`), which is flushed to disk and renamed over `path`
/// only when it succeeded; on any error the temporary file is removed and `path` is as it
/// was. A screenshot or an export interrupted by a full disk, an error or a crash never
/// leaves a partial PNG where a viewer would open it.
pub fn write_whole(
    path: &Path,
    write: impl FnOnce(&mut std::fs::File) -> std::io::Result<()>,
) -> std::io::Result<()> {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let name = path
        .file_name()
        .map_or_else(|| "output".into(), |n| n.to_string_lossy().into_owned());
    let tmp = dir.join(format!(
        ".{name}.{}-{}.tmp",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    ));
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&tmp)?;
    let done = write(&mut file)
        .and_then(|()| file.sync_all())
        .and_then(|()| {
            drop(file);
            std::fs::rename(&tmp, path)
        });
    if done.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    done
}

/// Encodes an opaque RGBA image as an RGB PNG.
pub fn encode_png(image: &RgbaImage) -> Result<Vec<u8>, String> {
    encode_png_with_state(image, None)
}

/// Encodes an opaque RGBA image as an RGB PNG that records `state` (a window
/// screenshot's; see [`crate::view::shot`]).
pub fn encode_png_with_state(
    image: &RgbaImage,
    state: Option<&crate::view::shot::ShotState>,
) -> Result<Vec<u8>, String> {
    let rgb: Vec<u8> = image
        .pixels
        .chunks_exact(4)
        .flat_map(|p| [p[0], p[1], p[2]])
        .collect();
    crate::view::shot::encode_rgb_png(image.width, image.height, &rgb, state)
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::import::{Limits, load_bytes};
    use crate::render::GpuOptions;
    use crate::view::flame::FlameView;
    use crate::view::{ViewOptions, Viewport};
    use std::sync::Arc;

    /// Issue 14: screenshots and exports must never leave a partial file. A write that
    /// fails half way leaves neither the destination nor a temporary file; one that
    /// succeeds replaces the destination whole.
    #[test]
    fn screenshots_leave_a_partial_file() {
        let dir = std::env::temp_dir().join(format!("scorch-whole-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("shot.png");
        let listing = || {
            let mut v: Vec<String> = std::fs::read_dir(&dir)
                .unwrap()
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect();
            v.sort();
            v
        };
        let e = write_whole(&path, |f| {
            f.write_all(b"\x89PNG half")?;
            Err(std::io::Error::other("disk full"))
        })
        .unwrap_err();
        assert_eq!(e.to_string(), "disk full");
        assert!(listing().is_empty(), "{:?}", listing());
        write_whole(&path, |f| f.write_all(b"old")).unwrap();
        let _ = write_whole(&path, |f| {
            f.write_all(b"new but cut")?;
            Err(std::io::Error::other("cut"))
        });
        assert_eq!(std::fs::read(&path).unwrap(), b"old");
        write_whole(&path, |f| f.write_all(b"new")).unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"new");
        assert_eq!(listing(), ["shot.png"]);
        // A destination that cannot be replaced (a directory) leaves no temporary file.
        let sub = dir.join("sub.png");
        std::fs::create_dir(&sub).unwrap();
        std::fs::write(sub.join("x"), b"x").unwrap();
        assert!(write_whole(&sub, |f| f.write_all(b"png")).is_err());
        assert_eq!(listing(), ["shot.png", "sub.png"]);
        // A missing directory is an error, and nothing is written.
        assert!(write_whole(Path::new("/nonexistent-dir/x.png"), |_| Ok(())).is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// An export's one-tier scene draws exactly what a window's full scene (every tier
    /// uploaded) draws for the same frame. Skipped without an adapter (Mesa llvmpipe
    /// counts as one).
    #[test]
    fn the_export_scene_draws_what_the_full_scene_draws() {
        let Ok(gpu) = Gpu::new(&GpuOptions::default()) else {
            eprintln!("skipping: no GPU adapter");
            return;
        };
        // Many sub-pixel bars at several depths, so most rows draw a merged tier.
        let mut text = String::new();
        let mut rng = crate::testing::Lcg::new(5);
        for i in 0..20_000u64 {
            let x = rng.step();
            let depth = 1 + (x >> 40) % 6;
            let frames: Vec<String> = (0..depth).map(|d| format!("f{}", (i >> d) % 53)).collect();
            text.push_str(&format!(
                "main;{} {}\n",
                frames.join(";"),
                1 + (x >> 20) % 9
            ));
        }
        let profile =
            Arc::new(load_bytes("lod.folded", text.as_bytes(), Limits::default()).unwrap());
        let doc = Document::Profile(profile.clone());
        for (width, scale) in [(400, 1.0), (1200, 1.0), (900, 2.0)] {
            let opts = ExportOptions {
                width,
                scale,
                ..ExportOptions::default()
            };
            let export = export_view(&doc, &opts).unwrap();
            let vp: Viewport = export.viewport().unwrap();
            let mut full = FlameView::new(
                profile.clone(),
                &ViewOptions {
                    color: opts.color,
                    ..ViewOptions::default()
                },
            );
            full.set_viewport(vp);
            let mut renderer = Renderer::new(&gpu, TARGET_FORMAT);
            let mut t = ExportTimings::default();
            let (a, ra) = render_view(&gpu, &mut renderer, &*export, &mut t).unwrap();
            let (b, rb) = render_view(&gpu, &mut renderer, &full, &mut t).unwrap();
            let full_bytes = Scenes::build(&gpu, &renderer.scene_layout(), &full.bar_sources())
                .unwrap()
                .instance_bytes();
            let export_bytes = Scenes::build(&gpu, &renderer.scene_layout(), &export.bar_sources())
                .unwrap()
                .instance_bytes();
            assert!(export_bytes < full_bytes / 2);
            assert_eq!(ra, rb, "{width} px at scale {scale}");
            assert!(a == b, "pixels differ at {width} px, scale {scale}");
        }
    }
}
