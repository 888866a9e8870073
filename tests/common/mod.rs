//! Helpers shared by the integration tests: a device (or a clear skip), profile loading,
//! rendering, and golden-image comparison.
#![allow(dead_code)]

use scorch::export::{self, ExportOptions};
use scorch::import::{self, Limits};
use scorch::model::Profile;
use scorch::render::{self, Gpu, GpuOptions, Renderer, RgbaImage, Scenes, TARGET_FORMAT};
use scorch::view::flame::FlameView;
use scorch::view::{Purpose, View, ViewOptions, compose};
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

/// The shared device, or `None` (with a message) when this machine has no adapter.
/// With `SCORCH_REQUIRE_GPU=1` (set by `.ci/run`) a missing adapter fails the test instead.
pub fn gpu() -> Option<&'static Gpu> {
    static GPU: OnceLock<Option<Gpu>> = OnceLock::new();
    GPU.get_or_init(|| match Gpu::new(&GpuOptions::default()) {
        Ok(g) => {
            eprintln!("GPU tests on {}", g.describe());
            Some(g)
        }
        Err(e) => {
            if std::env::var_os("SCORCH_REQUIRE_GPU").is_some_and(|v| v == "1") {
                panic!("SCORCH_REQUIRE_GPU=1 but no device: {e}");
            }
            eprintln!("skipping GPU test: {e}");
            None
        }
    })
    .as_ref()
}

pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Imports a profile from text.
pub fn profile_from(name: &str, text: &str) -> Arc<Profile> {
    Arc::new(import::load_bytes(name, text.as_bytes(), Limits::default()).unwrap())
}

/// Imports a file relative to the repository root.
pub fn profile_at(rel: &str) -> Arc<Profile> {
    Arc::new(import::load_path(&root().join(rel)).unwrap())
}

/// A window's flame view (every level-of-detail tier, so its camera can move) of
/// `profile`, sized and fitted as the export `opts` ask, optionally without labels.
pub fn flame_view(profile: &Arc<Profile>, opts: &ExportOptions, labels: bool) -> FlameView {
    let export =
        export::export_view(&scorch::model::Document::Profile(profile.clone()), opts).unwrap();
    let export: &FlameView = export.downcast_ref().unwrap();
    let mut v = FlameView::new(
        profile.clone(),
        &ViewOptions {
            orientation: export.state().orientation,
            color: Some(export.state().color),
            title: None,
            style: scorch::geometry::Style::default(),
            ..ViewOptions::default()
        },
    );
    v.set_viewport(export.viewport().unwrap());
    v.state_mut().camera = export.state().camera;
    v.set_colorblind(opts.colorblind);
    v.set_labels(labels);
    v
}

/// Renders `view` as an export draws it (which must fit in one tile) to pixels.
pub fn render_view(gpu: &Gpu, view: &dyn View) -> RgbaImage {
    render_view_stats(gpu, view, 8192).0
}

/// [`render_view`] with tiles of at most `max_tile` pixels, and what it drew.
pub fn render_view_stats(
    gpu: &Gpu,
    view: &dyn View,
    max_tile: u32,
) -> (RgbaImage, render::ImageStats) {
    let mut renderer = Renderer::new(gpu, TARGET_FORMAT);
    let mut scenes = Scenes::build(gpu, &renderer.scene_layout(), &view.bar_sources()).unwrap();
    let frame = compose(view, Purpose::Export, None, renderer.text());
    // A window's view: the rows' own bars it draws, every page of them, as a screenshot.
    scenes
        .fetch(
            gpu,
            &view.bar_sources(),
            &frame.bars,
            scorch::render::bars::PageBudget::ALL,
        )
        .unwrap();
    render::render_frame_timed(
        gpu,
        &mut renderer,
        &frame,
        &scenes,
        max_tile,
        &mut render::ImageTimes::default(),
    )
    .unwrap()
}

/// Largest per-channel difference between two colors.
pub fn color_diff(a: [u8; 4], b: [u8; 3]) -> u8 {
    (0..3).map(|i| a[i].abs_diff(b[i])).max().unwrap()
}

/// Compares `img` with `tests/golden/NAME.png`.
///
/// Tolerance: a pixel differs when a channel is off by more than 24 (text anti-aliasing
/// varies slightly between rasterisers); the test fails when more than 0.3 % of pixels
/// differ or the size changed. On failure it writes `NAME.actual.png` and `NAME.diff.png`
/// (differing pixels in magenta over a faded copy) next to the golden, and says how to
/// re-bless. `SCORCH_BLESS=1` rewrites the golden instead.
pub fn check_golden(name: &str, img: &RgbaImage) {
    let dir = root().join("tests/golden");
    let golden = dir.join(format!("{name}.png"));
    if std::env::var_os("SCORCH_BLESS").is_some_and(|v| v == "1") {
        std::fs::write(&golden, export::encode_png(img).unwrap()).unwrap();
        eprintln!("blessed {}", golden.display());
        return;
    }
    let actual_path = dir.join(format!("{name}.actual.png"));
    let diff_path = dir.join(format!("{name}.diff.png"));
    let bless = format!("SCORCH_BLESS=1 cargo test --test gpu {name}");
    let Ok(bytes) = std::fs::read(&golden) else {
        std::fs::write(&actual_path, export::encode_png(img).unwrap()).unwrap();
        panic!(
            "golden {} is missing; wrote {}; bless with: {bless}",
            golden.display(),
            actual_path.display()
        );
    };
    let want = export::decode_png(&bytes).unwrap();
    let mut differing = 0usize;
    let mut worst = 0u8;
    let mut diff = img.clone();
    if want.width == img.width && want.height == img.height {
        for (i, (a, b)) in img
            .pixels
            .chunks_exact(4)
            .zip(want.pixels.chunks_exact(4))
            .enumerate()
        {
            let d = (0..3).map(|c| a[c].abs_diff(b[c])).max().unwrap();
            worst = worst.max(d);
            let px = &mut diff.pixels[i * 4..i * 4 + 4];
            if d > 24 {
                differing += 1;
                px.copy_from_slice(&[255, 0, 255, 255]);
            } else {
                for c in px.iter_mut().take(3) {
                    *c = 200 + *c / 5;
                }
            }
        }
    } else {
        differing = usize::MAX;
    }
    let total = (img.width * img.height) as usize;
    let limit = total * 3 / 1000;
    if differing > limit {
        std::fs::write(&actual_path, export::encode_png(img).unwrap()).unwrap();
        if differing != usize::MAX {
            std::fs::write(&diff_path, export::encode_png(&diff).unwrap()).unwrap();
        }
        panic!(
            "{name}: {} of {total} pixels differ from {} (limit {limit}, worst channel diff {worst}, \
             size {}x{} vs {}x{}); wrote {} and {}; if the change is intended, look at them and \
             bless with: {bless}",
            if differing == usize::MAX {
                total
            } else {
                differing
            },
            golden.display(),
            img.width,
            img.height,
            want.width,
            want.height,
            actual_path.display(),
            diff_path.display()
        );
    }
    let _ = std::fs::remove_file(&actual_path);
    let _ = std::fs::remove_file(&diff_path);
}

pub fn write_png(path: &Path, img: &RgbaImage) {
    std::fs::write(path, export::encode_png(img).unwrap()).unwrap();
}

/// The shared corpus folder (`../shared/corpus`), or `None` with a note naming `what`
/// was skipped when it is absent; with `CI` or `SCORCH_REQUIRE_CORPUS=1` an absent
/// corpus fails the test instead.
pub fn corpus_dir(what: &str) -> Option<PathBuf> {
    let dir = root().join("../shared/corpus");
    if !dir.join("MANIFEST.tsv").exists() {
        let required = std::env::var_os("CI").is_some()
            || std::env::var_os("SCORCH_REQUIRE_CORPUS").is_some_and(|v| v == "1");
        assert!(
            !required,
            "the corpus is required but {} is missing",
            dir.display()
        );
        eprintln!("{what} skipped: {} not found", dir.display());
        return None;
    }
    Some(dir)
}
