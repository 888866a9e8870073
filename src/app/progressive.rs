//! Progressive loading: a preview on screen within about a second, then the whole input.
//!
//! The loader thread ([`Job::run`]) first asks [`import::preview`] for a quick partial import
//! of a big input (slices sampled across a folded or perf file, the head of a Chrome
//! trace, a gzip prefix), lays it out and uploads it like any document, and sends it as a
//! [`LoadStep::Preview`]; then it loads the whole input as before and sends
//! [`LoadStep::Full`]. The steps arrive in that order, each at most once; a preview that
//! fails is skipped silently (the full load reports the input's problems).
//!
//! The window shows the preview as an ordinary document (zoom, hover, search, screenshot
//! all work), with the status line turned amber and saying what the preview is made of
//! and how far the full load is. When the full document arrives its view replaces the
//! preview's ([`Session::replace`](super::session::Session::replace), with the old view's
//! [`ViewMemo`](crate::view::ViewMemo)), keeping what the user did:
//! - a view the user has not touched starts fitted to the whole document, as any load;
//! - orientation and colors are kept;
//! - a focused or click-zoomed flame-graph bar maps to the bar of the same call path
//!   (frame names from the root) in the full tree; a free wheel zoom or pan keeps its
//!   range as fractions of the view's root (the whole profile or the focused node): the
//!   preview's proportions approximate the full profile's, so about the same frames stay
//!   in view. A timeline keeps its time range (absolute time: the preview's and the
//!   full trace's origins may differ);
//! - vertical scroll is kept; the search runs again on the full document (the search
//!   field stays open); hover, menu and timeline selection are dropped (they name bars
//!   of the preview); the Backspace history starts afresh.
//!
//! While a load runs, the window redraws ten times a second for the progress display, but
//! over a preview only every two seconds (and on input): on llvmpipe a frame of a 150 k-bar
//! preview costs 40-50 ms of CPU (more on a busy machine), so four frames a second took
//! a fifth of a core from the loader and made the full load 10-60 % slower on the 2-core
//! machine. The window title carries the progress too.

use super::{App, Device, DeviceSlot, Loaded, Source};
use crate::import::preview::{PreviewExtent, PreviewOptions};
use crate::import::{self, Progress};
use crate::model::Document;
use crate::render::Scenes;
use crate::view::{ViewOptions, default_view};
use std::path::PathBuf;
use std::time::Instant;

/// What a loader reports, in this order: at most one preview, then the whole input.
pub enum LoadStep {
    /// A partial document to show until the full one arrives.
    Preview(Loaded, PreviewExtent),
    /// The whole input, or why it could not be loaded.
    Full(Result<Loaded, String>),
}

/// One load, on the loader thread.
pub struct Job<'a> {
    /// What to load.
    pub source: &'a Source,
    /// Where the importer reports how far it is.
    pub progress: &'a Progress,
    /// The device, once it is up: bars are uploaded here, off the UI thread.
    pub device: &'a DeviceSlot,
    /// Whether (and how) to send a preview of a big input first.
    pub preview: Option<&'a PreviewOptions>,
    /// How the view opens.
    pub view: &'a ViewOptions,
    /// Which samples, sample type, threads (`--event`, `--pid` …).
    pub choice: &'a import::ImportChoice,
}

impl Job<'_> {
    /// Loads the source, sending a preview first when the options allow one and the
    /// input has one, then the full result.
    pub fn run(&self, send: &mut dyn FnMut(LoadStep)) {
        let started = Instant::now();
        let result = match self.source {
            Source::Path(p) => {
                let options = self.choice.options();
                import::load_any_path_progressive(
                    p,
                    options,
                    Some(self.progress),
                    self.preview,
                    |pv| {
                        let t = Instant::now();
                        match prepare(pv.imported, self.device.get(), self.view) {
                            Ok(loaded) => {
                                eprintln!(
                                    "scorch: {} laid out in {:.0} ms",
                                    pv.extent.describe(),
                                    t.elapsed().as_secs_f64() * 1000.0
                                );
                                send(LoadStep::Preview(loaded, pv.extent));
                            }
                            Err(e) => eprintln!("scorch: no preview: {e}"),
                        }
                    },
                )
            }
            Source::Compare(c) => {
                if let Some((p, extent)) = self.preview.and_then(|o| compare_preview(c, o)) {
                    let doc = import::Imported::Profile(Box::new(p));
                    match prepare(doc, self.device.get(), self.view) {
                        Ok(loaded) => send(LoadStep::Preview(loaded, extent)),
                        Err(e) => eprintln!("scorch: no preview: {e}"),
                    }
                }
                import::compare::load_comparison(c, self.choice.options(), Some(self.progress))
                    .map(|p| import::Imported::Profile(Box::new(p)))
            }
            Source::Demo => import::load_bytes_with(
                "demo.folded",
                super::DEMO_PROFILE,
                import::Limits::default(),
                Some(self.progress),
            )
            .map(|p| import::Imported::Profile(Box::new(p))),
        };
        if result.is_ok() {
            eprintln!(
                "scorch: whole input read and parsed {:.0} ms after the load started",
                started.elapsed().as_secs_f64() * 1000.0
            );
        }
        // With the device up, tiers and uploads happen here, not on the UI thread (seconds
        // for millions of bars).
        let result = result
            .map_err(|e| e.to_string())
            .and_then(|imported| prepare(imported, self.device.get(), self.view));
        send(LoadStep::Full(result));
        // What the load freed and nothing reused goes back to the system.
        crate::heap::release();
    }
}

/// A preview of a comparison of two files of which at least one is big: the big sides'
/// previews (a small side read whole) compared. Shares, not totals, are what it shows
/// (each preview counts its own sample of lines).
fn compare_preview(
    c: &import::compare::CompareInputs,
    opts: &PreviewOptions,
) -> Option<(crate::model::Profile, PreviewExtent)> {
    let ([before], [after]) = (c.before.as_slice(), c.after.as_slice()) else {
        return None;
    };
    let (pb, pa) = (
        import::preview::preview_path(before, opts),
        import::preview::preview_path(after, opts),
    );
    let extent = pa.as_ref().or(pb.as_ref())?.extent.clone();
    let side = |pv: Option<import::preview::Preview>, path: &std::path::Path| match pv {
        Some(import::preview::Preview {
            imported: import::Imported::Profile(p),
            ..
        }) => Some(*p),
        Some(_) => None,
        None => import::compare::load_profile(path, Default::default(), None).ok(),
    };
    let (b, a) = (side(pb, before)?, side(pa, after)?);
    let d = crate::model::compare::diff_profiles(&b, &a, c.options).ok()?;
    Some((d, extent))
}

/// Opens the view of what a loader read and, when the device is up, uploads its bars
/// (inside an out-of-memory scope).
fn prepare(
    imported: import::Imported,
    device: Option<&Device>,
    opts: &ViewOptions,
) -> Result<Loaded, String> {
    let doc = Document::from(imported);
    let view = match (&doc, doc.sampled()) {
        // `--view timeline` on samples whose time order would not fit: the flame graph.
        (Document::Profile(_), Some(s)) if opts.kind == Some(crate::view::ViewKind::TIMELINE) => {
            match s.check_time_order(import::limits::available_memory()) {
                Ok(()) => default_view(&doc, opts),
                Err(why) => {
                    eprintln!("scorch: no timeline: {why}");
                    let opts = ViewOptions {
                        kind: None,
                        ..opts.clone()
                    };
                    default_view(&doc, &opts)
                }
            }
        }
        _ => default_view(&doc, opts),
    };
    let scenes = device
        .map(|(gpu, bind_layout)| {
            let t = Instant::now();
            let sources = view.bar_sources();
            let s = Scenes::build(gpu, bind_layout, &sources)?;
            eprintln!(
                "scorch: {} and {} merged tiers uploaded ({} MiB) in {:.0} ms",
                crate::view::draw::describe(&sources),
                sources.iter().map(|s| s.lod.bar_count()).sum::<usize>(),
                s.gpu_bytes() >> 20,
                t.elapsed().as_secs_f64() * 1000.0
            );
            Ok(s)
        })
        .transpose()
        .map_err(|e: crate::render::GpuError| e.to_string())?;
    Ok(Loaded { view, scenes })
}

/// A preview on screen.
pub(super) struct ShownPreview {
    /// The load it belongs to.
    pub(super) id: u64,
    /// What it was made of.
    pub(super) extent: PreviewExtent,
    /// Set when the full load failed: the preview is all there is.
    pub(super) failed: bool,
}

/// How far the full load is, for the preview's status: reading (with a percentage once
/// the importer reports one), or laying out and uploading (which reports none).
fn full_load_stage(l: &super::Loading) -> String {
    load_stage(l.progress.fraction())
}

fn load_stage(fraction: Option<f64>) -> String {
    match fraction {
        Some(f) if f >= 1.0 => "whole file read, laying it out".to_string(),
        // Floored: "100 %" only once the reading is done. Nothing reported yet (a
        // decompressed document's format being detected, a parser that reports none):
        // no percentage sitting at zero.
        Some(f) if f > 0.0 => format!("loading the whole file {:.0} %", (f * 100.0).floor()),
        _ => "loading the whole file…".to_string(),
    }
}

impl App {
    /// Shows a preview that arrived for load `id`.
    pub(super) fn show_preview(&mut self, id: u64, mut loaded: Loaded, extent: PreviewExtent) {
        let Some(loading) = self.loading.as_ref().filter(|l| l.id == id) else {
            return;
        };
        self.first_draw_note = Some(("preview", loading.started));
        eprintln!(
            "scorch: {} shown {:.0} ms after the load started",
            extent.describe(),
            loading.started.elapsed().as_secs_f64() * 1000.0
        );
        let doc = loaded.view.document();
        let path = PathBuf::from(doc.source());
        loaded.view.set_note(Some(counts_note(&doc, &extent)));
        self.show(loaded, Some(path));
        self.preview = Some(ShownPreview {
            id,
            extent,
            failed: false,
        });
        self.redraw();
    }

    /// The preview shown for load `id`, taken (the full document replaces it).
    fn take_preview(&mut self, id: u64) -> bool {
        self.preview.take_if(|p| p.id == id).is_some()
    }

    /// Shows the full document of load `id`, in place of its preview if one is shown.
    pub(super) fn show_full(&mut self, id: u64, loaded: Loaded, path: Option<PathBuf>, name: &str) {
        if !self.take_preview(id) {
            self.show(loaded, path);
            return;
        }
        self.plain_title(name);
        let Loaded { view, scenes } = loaded;
        if let (Some(gfx), Some(s)) = (&mut self.gfx, scenes) {
            gfx.scenes = s;
            gfx.failed = None;
        }
        self.shown_path = path;
        let now = self.now_s();
        self.session.replace(view, now);
    }

    fn plain_title(&self, name: &str) {
        if let Some(w) = &self.window {
            w.set_title(&format!("scorch — {name}"));
        }
    }

    /// The full load of `id` failed: with its preview on screen, keep showing it and say
    /// so; returns false when no preview is shown (the caller shows the error).
    pub(super) fn full_load_failed(&mut self, id: u64, error: &str, name: &str) -> bool {
        match &mut self.preview {
            Some(p) if p.id == id => {
                p.failed = true;
                if let Some(w) = &self.window {
                    w.set_title(&format!("scorch — {name} (preview only)"));
                }
                self.say(format!(
                    "could not load the whole file, showing the preview: {error}"
                ));
                true
            }
            _ => false,
        }
    }

    /// A new load starts: a preview of an earlier load goes (it would otherwise stay on
    /// screen looking complete).
    pub(super) fn drop_preview(&mut self) {
        if self.preview.take().is_some() {
            self.session.take_view();
            self.shown_path = None;
            if let Some(gfx) = &mut self.gfx {
                gfx.scenes = Scenes::new();
            }
        }
    }

    /// What the status line says while a preview is shown: what it is made of and how far
    /// the full load is. `short` for when the status line carries something else too.
    pub(super) fn preview_status(&self, short: bool) -> Option<String> {
        let p = self.preview.as_ref()?;
        if p.failed {
            return Some(if short {
                "PREVIEW only".to_string()
            } else {
                format!(
                    "PREVIEW only ({}): the whole file failed to load",
                    p.extent.describe()
                )
            });
        }
        let l = self.loading.as_ref()?;
        let stage = full_load_stage(l);
        // Whole seconds: the display is refreshed every two seconds.
        let secs = l.started.elapsed().as_secs_f64();
        Some(if short {
            format!("PREVIEW · {stage} ({secs:.0} s)")
        } else {
            format!(
                "PREVIEW {} · {stage} ({secs:.0} s)",
                p.extent
                    .describe()
                    .trim_start_matches("preview")
                    .trim_start_matches(':')
                    .trim_start()
            )
        })
    }

    /// Keeps the window title's progress current while a preview is shown (the title
    /// changes without drawing a frame); the plain title comes back with the full document.
    pub(super) fn show_preview_progress(&self) {
        let (Some(w), Some(l)) = (&self.window, &self.loading) else {
            return;
        };
        if self.preview.as_ref().is_some_and(|p| p.id == l.id) {
            w.set_title(&format!(
                "scorch — {} (preview; {})",
                l.name,
                full_load_stage(l)
            ));
        }
    }
}

/// The note on what a preview's numbers cover, for its title band and tooltips.
fn counts_note(doc: &Document, extent: &PreviewExtent) -> &'static str {
    match doc {
        Document::Trace(_) => "preview: the first part of the trace only",
        Document::Profile(_) if matches!(extent, PreviewExtent::HitCounts { .. }) => {
            "preview: the whole profile by the nodes' hit counts; time order and times follow"
        }
        Document::Profile(_) if extent.is_sampled() => {
            "preview: counts of the sampled lines only, shares approximate the whole file"
        }
        Document::Profile(_) => "preview: counts of the file's first part only",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    /// The preview's status gives a percentage only once the load reports one: none
    /// while nothing is reported (a total set, no byte parsed yet), none at all for a
    /// parser that reports nothing, floored below 100 % until the reading is done.
    #[test]
    fn the_load_stage_shows_no_percentage_before_one_is_reported() {
        assert_eq!(load_stage(Some(0.0)), "loading the whole file…");
        assert_eq!(load_stage(None), "loading the whole file…");
        assert_eq!(load_stage(Some(0.4)), "loading the whole file 40 %");
        assert_eq!(load_stage(Some(0.999)), "loading the whole file 99 %");
        assert_eq!(load_stage(Some(1.0)), "whole file read, laying it out");
    }

    fn folded(lines: usize) -> String {
        let mut s = String::new();
        for i in 0..lines {
            s.push_str(&format!("main;f{};g{} 1\n", i % 7, i % 11));
        }
        s
    }

    fn small_opts() -> PreviewOptions {
        PreviewOptions {
            min_bytes: 10_000,
            min_gzip_bytes: 10_000,
            slices: 4,
            max_sampled_bytes: 1 << 20,
            head_bytes: 64 << 10,
        }
    }

    fn run(source: &Source, preview: Option<&PreviewOptions>) -> Vec<LoadStep> {
        let device: DeviceSlot = Arc::new(std::sync::OnceLock::new());
        let mut steps = Vec::new();
        let job = Job {
            source,
            progress: &Progress::default(),
            device: &device,
            preview,
            view: &ViewOptions::default(),
            choice: &import::ImportChoice::default(),
        };
        job.run(&mut |s| steps.push(s));
        steps
    }

    /// A profile's total, or a trace's span count.
    fn total(l: &Loaded) -> u64 {
        match l.view.document() {
            Document::Profile(p) => p.tree.grand_total(),
            Document::Trace(t) => t.spans.len() as u64,
        }
    }

    fn is_trace(l: &Loaded) -> bool {
        matches!(l.view.document(), Document::Trace(_))
    }

    #[test]
    fn loader_sends_the_preview_then_the_whole_file() {
        let dir = std::env::temp_dir().join(format!("scorch-progressive-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let big = dir.join("big.folded");
        std::fs::write(&big, folded(20_000)).unwrap();
        let steps = run(&Source::Path(big.clone()), Some(&small_opts()));
        match &steps[..] {
            [
                LoadStep::Preview(p, PreviewExtent::Sampled { .. }),
                LoadStep::Full(Ok(f)),
            ] => {
                assert!(total(p) > 0 && total(p) < total(f));
                assert_eq!(total(f), 20_000);
            }
            _ => panic!("expected a preview then the full profile"),
        }
        // Without previews, and for small files: the full load only.
        for (path, opts) in [
            (big.clone(), None),
            (dir.join("small.folded"), Some(small_opts())),
        ] {
            if !path.exists() {
                std::fs::write(&path, "a;b 1\n").unwrap();
            }
            let steps = run(&Source::Path(path), opts.as_ref());
            assert!(matches!(&steps[..], [LoadStep::Full(Ok(_))]));
        }
        // A file that cannot be read: the error, no preview.
        let steps = run(&Source::Path(dir.join("missing")), Some(&small_opts()));
        assert!(matches!(&steps[..], [LoadStep::Full(Err(e))] if e.contains("missing")));
        // A Chrome trace: its head as a trace, then the whole trace.
        let json = format!(
            "[\n{}",
            crate::testing::chrome_x_events(3000, "e", 5, ",\n")
        );
        let trace = dir.join("t.json");
        std::fs::write(&trace, json).unwrap();
        let mut o = small_opts();
        o.head_bytes = 20_000;
        let steps = run(&Source::Path(trace), Some(&o));
        match &steps[..] {
            [
                LoadStep::Preview(p, PreviewExtent::Head { .. }),
                LoadStep::Full(Ok(f)),
            ] if is_trace(p) && is_trace(f) => assert!(total(p) < total(f) && total(f) == 3000),
            _ => panic!("expected a trace preview then the full trace"),
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

#[cfg(test)]
mod choice_tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn the_window_loads_the_event_and_threads_chosen_on_the_command_line() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("data/recordings/python-threads.perf.gz");
        let device: DeviceSlot = Arc::new(std::sync::OnceLock::new());
        let choice = import::ImportChoice {
            event: Some("sched:sched_switch".into()),
            tids: vec![17914],
            ..import::ImportChoice::default()
        };
        let mut steps = Vec::new();
        Job {
            source: &Source::Path(path),
            progress: &Progress::default(),
            device: &device,
            preview: None,
            view: &ViewOptions::default(),
            choice: &choice,
        }
        .run(&mut |s| steps.push(s));
        let Some(LoadStep::Full(Ok(loaded))) = steps.pop() else {
            panic!("a full load")
        };
        let doc = loaded.view.document();
        let p = doc.as_profile().expect("samples aggregate");
        // `perf script -F tid,event`: 23 sched_switch samples of thread 17914.
        assert_eq!(p.tree.grand_total(), 23);
        let s = doc.sampled().expect("samples");
        assert_eq!(
            s.samples.events[s.selection.event as usize].name,
            "sched:sched_switch"
        );
    }
}

#[cfg(test)]
mod compare_tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn a_comparison_of_big_files_shows_a_preview_first() {
        let dir = std::env::temp_dir().join(format!("scorch-cmp-preview-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let (a, b) = (dir.join("a.folded"), dir.join("b.folded"));
        let lines = |f: &str, n: usize| -> String {
            (0..n)
                .map(|i| format!("main;{f}{} {}\n", i % 5, 1 + i % 3))
                .collect()
        };
        std::fs::write(&a, lines("f", 4000)).unwrap();
        std::fs::write(&b, "main;f1 7\nmain;g 3\n").unwrap();
        let opts = PreviewOptions {
            min_bytes: 10_000,
            min_gzip_bytes: 10_000,
            slices: 4,
            max_sampled_bytes: 4096,
            head_bytes: 4096,
        };
        let device: DeviceSlot = Arc::new(std::sync::OnceLock::new());
        let source = Source::Compare(import::compare::CompareInputs {
            before: vec![a],
            after: vec![b],
            options: Default::default(),
        });
        let mut steps = Vec::new();
        Job {
            source: &source,
            progress: &Progress::default(),
            device: &device,
            preview: Some(&opts),
            view: &ViewOptions::default(),
            choice: &import::ImportChoice::default(),
        }
        .run(&mut |s| steps.push(s));
        assert_eq!(steps.len(), 2, "a preview, then the whole comparison");
        let LoadStep::Preview(pv, _) = &steps[0] else {
            panic!("a preview first")
        };
        let LoadStep::Full(Ok(full)) = &steps[1] else {
            panic!("then the whole")
        };
        for l in [pv, full] {
            let Document::Profile(p) = l.view.document() else {
                panic!("a profile")
            };
            assert!(p.is_diff() && p.meta.comparison.is_some());
        }
        let Document::Profile(p) = full.view.document() else {
            unreachable!()
        };
        // The whole: 4000 lines of 1–3 before, 10 after.
        let before: u64 = (0..4000u64).map(|i| 1 + i % 3).sum();
        assert_eq!(p.diff_totals(), Some((before, 10)));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
