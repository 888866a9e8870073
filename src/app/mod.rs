//! The window: a winit 0.30 `ApplicationHandler` over the same frame code as export.
//!
//! The handler only translates and presents. Input becomes scorch's own keys and pointer
//! events ([`keys`]) for the [`Session`] (the window's behaviour, tested without a
//! window), which drives the active [`View`]; a frame is [`compose`]d from the view and
//! the session's chrome (status line, tooltip, menu) and drawn by the shared
//! [`Renderer`]. A screenshot composes the same view at the screenshot's size, without
//! what follows the pointer, so it is exactly what the window shows.
//!
//! The device opens on a [`Warmup`] thread while the window appears and the first load
//! runs. Frames are drawn only when something changed (`ControlFlow::Wait`), continuously
//! only while an animation runs, and on a timer while a load runs (for its progress
//! display). Loading happens on a worker thread, which lays the document out and uploads
//! its bars when the device is up; a big input is shown first as a preview, replaced by
//! the whole document when it is loaded (see [`progressive`]).

mod keys;
mod memory;
mod progressive;
pub mod session;
mod ui;

use crate::color::ColorMode;
use crate::geometry::{Orientation, Style};
use crate::import::{self, Progress};
use crate::render::bars::PageBudget;
use crate::render::warmup::{Hold, SurfaceTarget, Warmup};
use crate::render::{self, Backend, Gpu, GpuOptions, Renderer, Scenes, TARGET_FORMAT};
use crate::view::draw::{Frame, SceneKey};
use crate::view::shell::{self, Heading};
use crate::view::{Purpose, View, ViewOptions, Viewport, compose};
use session::{Effect, Session};
use std::collections::VecDeque;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};
use winit::application::ApplicationHandler;
use winit::dpi::LogicalSize;
use winit::event::{ElementState, MouseButton, WindowEvent};
use winit::event_loop::{ActiveEventLoop, ControlFlow, EventLoop, EventLoopProxy};
use winit::window::{Window, WindowId};

/// The bundled demo profile, shown by `scorch` without arguments.
pub const DEMO_PROFILE: &[u8] = include_bytes!("../../data/demo.folded");

/// What to open.
#[derive(Clone, Debug)]
pub enum Source {
    /// A file.
    Path(PathBuf),
    /// The difference of files (one against one, or runs against runs).
    Compare(import::compare::CompareInputs),
    /// The bundled demo profile.
    Demo,
}

/// Window options from the command line.
#[derive(Clone, Debug)]
pub struct AppOptions {
    /// Graphics API.
    pub backend: Option<Backend>,
    /// Screenshots are rendered at the window's physical size times this.
    pub screenshot_scale: f32,
    /// Initial orientation.
    pub orientation: Orientation,
    /// Initial color mode (`None`: diff for diffs, package otherwise).
    pub color: Option<ColorMode>,
    /// Initial window size in logical pixels.
    pub size: (u32, u32),
    /// Show a preview of big inputs while they load.
    pub preview: bool,
    /// Which part of a long name a cut label keeps.
    pub fit: crate::view::draw::LabelFit,
    /// The view documents open in (when it shows them; `None`: the usual one).
    pub view: Option<crate::view::ViewKind>,
    /// Which part of the input to show: sample type, event, threads, gap rule.
    pub choice: import::ImportChoice,
}

impl Default for AppOptions {
    fn default() -> Self {
        Self {
            backend: None,
            screenshot_scale: 1.0,
            orientation: Orientation::Flame,
            color: None,
            size: (1280, 800),
            preview: true,
            fit: crate::view::draw::LabelFit::Head,
            view: None,
            choice: import::ImportChoice::default(),
        }
    }
}

/// The window's logical sizes: the export style plus a toolbar under the title band
/// and a status line.
pub fn window_style() -> Style {
    let base = Style::default();
    let toolbar_height = 28.0;
    Style {
        status_height: 22.0,
        title_height: base.title_height + toolbar_height,
        toolbar_height,
        ..base
    }
}

/// Opens the window and runs until it is closed.
pub fn run(source: Source, opts: AppOptions) -> anyhow::Result<()> {
    let event_loop = EventLoop::<UserEvent>::with_user_event().build()?;
    event_loop.set_control_flow(ControlFlow::Wait);
    let proxy = event_loop.create_proxy();
    let mut app = App::new(proxy, opts);
    app.start_load(source);
    event_loop.run_app(&mut app)?;
    match app.fatal {
        Some(e) => Err(anyhow::anyhow!(e)),
        None => Ok(()),
    }
}

/// Messages from worker threads.
pub enum UserEvent {
    /// A load finished.
    Loaded {
        /// Which load (a newer one supersedes older ones).
        id: u64,
        /// The document's view (with its bars uploaded when the device was ready), or
        /// the error.
        result: Result<Loaded, String>,
    },
    /// A preview of a big input, sent before its `Loaded`.
    Preview {
        /// Which load.
        id: u64,
        /// The partial document's view.
        loaded: Loaded,
        /// What it was made of.
        extent: import::preview::PreviewExtent,
    },
    /// The device warm-up finished.
    DeviceReady,
    /// A view made off the window's thread ([`session::OpenJob`]).
    Opened {
        /// Which request.
        id: u64,
        /// What was made (and its bars, uploaded when the device was up), or why there
        /// is nothing to show.
        result: Result<(session::Made, Option<Scenes>), String>,
    },
}

impl std::fmt::Debug for UserEvent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            UserEvent::Loaded { id, result } => f
                .debug_struct("Loaded")
                .field("id", id)
                .field("ok", &result.is_ok())
                .finish(),
            UserEvent::Preview { id, extent, .. } => f
                .debug_struct("Preview")
                .field("id", id)
                .field("extent", extent)
                .finish(),
            UserEvent::DeviceReady => f.write_str("DeviceReady"),
            UserEvent::Opened { id, result } => f
                .debug_struct("Opened")
                .field("id", id)
                .field("ok", &result.is_ok())
                .finish(),
        }
    }
}

/// What a loader thread produced: a view of the document, and its bars on the GPU when
/// the device was up.
pub struct Loaded {
    /// The view.
    pub view: Box<dyn View>,
    /// Its uploaded bars.
    pub scenes: Option<Scenes>,
}

struct Loading {
    id: u64,
    name: String,
    progress: Arc<Progress>,
    started: Instant,
    done: Arc<AtomicBool>,
}

/// The device and what a loader thread needs to upload bars off the UI thread.
type Device = (Arc<Gpu>, wgpu::BindGroupLayout);
/// Set once the device is up; loaders upload with it when it is.
type DeviceSlot = Arc<std::sync::OnceLock<Device>>;

struct Gfx {
    gpu: Arc<Gpu>,
    surface: render::warmup::Surface,
    renderer: Renderer,
    shot_renderer: Option<Renderer>,
    scenes: Scenes,
    /// A scene that could not be uploaded (not tried again).
    failed: Option<SceneKey>,
    timer: Option<render::GpuTimer>,
    /// The window's size changed since the surface was configured: configured again
    /// before the next frame, once for a burst of resize events (every configure makes
    /// a swapchain, and drivers keep some memory for each).
    reconfigure: bool,
}

/// CPU frame times for the F12 box.
#[derive(Default)]
struct FrameTimes {
    cpu_ms: VecDeque<f32>,
    encode_ms: VecDeque<f32>,
    gpu_ms: Option<f32>,
}

impl FrameTimes {
    fn push(q: &mut VecDeque<f32>, v: f32) {
        q.push_back(v);
        if q.len() > 120 {
            q.pop_front();
        }
    }

    fn line(&self, timer: bool) -> String {
        let stats = |v: &VecDeque<f32>| {
            let mut s: Vec<f32> = v.iter().copied().collect();
            s.sort_by(f32::total_cmp);
            (
                s.get(s.len() / 2).copied().unwrap_or(0.0),
                s.last().copied().unwrap_or(0.0),
                s.len(),
            )
        };
        let (p50, max, frames) = stats(&self.cpu_ms);
        let (enc50, enc_max, _) = stats(&self.encode_ms);
        let gpu = match (self.gpu_ms, timer) {
            (Some(ms), _) => format!("GPU {ms:.2} ms"),
            (None, true) => "GPU …".to_string(),
            (None, false) => "GPU n/a (no timestamp queries)".to_string(),
        };
        format!(
            "CPU {p50:.2} ms p50, {max:.2} max (encode {enc50:.2}, {enc_max:.2} max; rest: submit+present) · {gpu} · {frames} frames"
        )
    }
}

struct App {
    proxy: EventLoopProxy<UserEvent>,
    opts: AppOptions,
    window: Option<Arc<Window>>,
    warmup: Option<Warmup>,
    gfx: Option<Gfx>,
    session: Session,
    /// The file shown (screenshots go next to it; none for the demo).
    shown_path: Option<PathBuf>,
    /// What the last load read (a comparison is loaded again to swap its sides).
    source: Option<Source>,
    loading: Option<Loading>,
    next_load: u64,
    times: FrameTimes,
    clock: Instant,
    device: DeviceSlot,
    fatal: Option<String>,
    load_error: Option<String>,
    /// A screenshot's recorded state, restored once its source is loaded.
    restore: Option<crate::view::shot::ShotState>,
    /// The state to restore now that the source is loaded, once the window has a size
    /// (a view's place is kept relative to its size).
    restore_due: Option<crate::view::shot::ShotState>,
    /// The preview on screen while its load runs.
    preview: Option<progressive::ShownPreview>,
    /// What the next frame shows for the first time and when its load started, for the log.
    first_draw_note: Option<(&'static str, Instant)>,
    /// Why the last frame could not be drawn (said once, until another error or a frame
    /// that draws).
    frame_error: Option<String>,
    /// When the progress display is redrawn next.
    progress_redraw_at: Instant,
    /// Hands freed heap pages back between bursts of input.
    trimmer: memory::Trimmer,
    /// The thread that makes views off this one (started with the first).
    opener: Option<std::sync::mpsc::Sender<session::OpenJob>>,
}

fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|s| s.to_string_lossy().to_string())
        .unwrap_or_else(|| path.display().to_string())
}

impl App {
    fn new(proxy: EventLoopProxy<UserEvent>, opts: AppOptions) -> App {
        App {
            proxy,
            opts,
            window: None,
            warmup: None,
            gfx: None,
            session: {
                let mut s = Session::new();
                s.open_in_background();
                s
            },
            shown_path: None,
            source: None,
            loading: None,
            next_load: 0,
            times: FrameTimes::default(),
            clock: Instant::now(),
            device: Arc::new(std::sync::OnceLock::new()),
            fatal: None,
            load_error: None,
            restore: None,
            restore_due: None,
            preview: None,
            first_draw_note: None,
            frame_error: None,
            progress_redraw_at: Instant::now(),
            trimmer: memory::Trimmer::new(),
            opener: None,
        }
    }

    /// Hands the view the session asked for to the opener thread.
    fn start_open(&mut self) {
        let Some(job) = self.session.take_open_job() else {
            return;
        };
        let (proxy, device) = (&self.proxy, &self.device);
        let tx = self
            .opener
            .get_or_insert_with(|| spawn_opener(proxy.clone(), device.clone()));
        if let Err(std::sync::mpsc::SendError(job)) = tx.send(job) {
            // The thread is gone (it panicked): a fresh one.
            let tx = spawn_opener(self.proxy.clone(), self.device.clone());
            let _ = tx.send(job);
            self.opener = Some(tx);
        }
        self.redraw();
    }

    /// Shows the view of request `id` (and its bars), unless a later request or a new
    /// document superseded it.
    fn opened(&mut self, id: u64, result: Result<(session::Made, Option<Scenes>), String>) {
        let now = self.now_s();
        match result {
            Ok((made, scenes)) => {
                if self.session.opened(id, Ok(made), now)
                    && let (Some(gfx), Some(s)) = (&mut self.gfx, scenes)
                {
                    gfx.scenes = s;
                    gfx.failed = None;
                }
            }
            Err(why) => {
                self.session.opened(id, Err(why), now);
            }
        }
        self.redraw();
    }

    fn now_s(&self) -> f64 {
        self.clock.elapsed().as_secs_f64()
    }

    fn say(&mut self, msg: impl Into<String>) {
        let now = self.now_s();
        self.session.say(msg, now);
        self.redraw();
    }

    /// How views open in this window.
    fn view_options(&self, title: String) -> ViewOptions {
        ViewOptions {
            orientation: self.opts.orientation,
            color: self.opts.color,
            title: Some(title),
            style: window_style(),
            fit: self.opts.fit,
            kind: self.opts.view,
        }
    }

    /// Loads the comparison shown again: sides swapped, or one side alone.
    fn compare_step(&mut self, step: session::CompareStep) {
        let Some(Source::Compare(c)) = self.source.clone() else {
            self.say("the comparison's files are not known here".to_string());
            return;
        };
        let one = |v: &[PathBuf]| (v.len() == 1).then(|| v[0].clone());
        let next = match step {
            session::CompareStep::Swap => Some(Source::Compare(import::compare::CompareInputs {
                before: c.after.clone(),
                after: c.before.clone(),
                options: c.options,
            })),
            session::CompareStep::Before => one(&c.before).map(Source::Path),
            session::CompareStep::After => one(&c.after).map(Source::Path),
        };
        match next {
            Some(s) => self.start_load(s),
            None => self.say("a side of several runs is not one file".to_string()),
        }
    }

    /// Starts loading `source` on a worker thread.
    fn start_load(&mut self, source: Source) {
        self.restore = None;
        self.restore_due = None;
        let source = match source {
            Source::Path(p) => match self.screenshot_source(&p) {
                Ok(Some((source, state))) => {
                    self.restore = Some(state);
                    source
                }
                Ok(None) => Source::Path(p),
                Err(e) => {
                    let line = e.replace('\n', " · ");
                    if self.session.view().is_some() {
                        self.say(line);
                    } else {
                        eprintln!("scorch: {e}");
                        self.load_error = Some(line);
                    }
                    self.redraw();
                    return;
                }
            },
            s => s,
        };
        self.source = Some(source.clone());
        self.next_load += 1;
        let id = self.next_load;
        let progress = Arc::new(Progress::default());
        let done = Arc::new(AtomicBool::new(false));
        let name = match &source {
            Source::Path(p) => file_name(p),
            Source::Compare(c) => c.title(),
            Source::Demo => "demo.folded (bundled demo)".to_string(),
        };
        let proxy = self.proxy.clone();
        let prog = progress.clone();
        let done2 = done.clone();
        let device = self.device.clone();
        let preview = self
            .opts
            .preview
            .then(import::preview::PreviewOptions::default);
        let view_opts = self.view_options(name.clone());
        let choice = self.opts.choice.clone();
        std::thread::Builder::new()
            .name("scorch-load".into())
            .spawn(move || {
                let job = progressive::Job {
                    source: &source,
                    progress: &prog,
                    device: &device,
                    preview: preview.as_ref(),
                    view: &view_opts,
                    choice: &choice,
                };
                job.run(&mut |step| {
                    let event = match step {
                        progressive::LoadStep::Preview(loaded, extent) => {
                            UserEvent::Preview { id, loaded, extent }
                        }
                        progressive::LoadStep::Full(result) => {
                            done2.store(true, Ordering::Relaxed);
                            UserEvent::Loaded { id, result }
                        }
                    };
                    let _ = proxy.send_event(event);
                });
            })
            .expect("spawning the loader thread");
        // A terminal progress bar for loads that take a while.
        if std::io::stderr().is_terminal() {
            let prog = progress.clone();
            let done = done.clone();
            let label = name.clone();
            std::thread::spawn(move || ui::terminal_progress(&label, &prog, &done));
        }
        self.loading = Some(Loading {
            id,
            name: name.clone(),
            progress,
            started: Instant::now(),
            done,
        });
        self.load_error = None;
        self.drop_preview();
        if let Some(w) = &self.window {
            w.set_title(&format!("scorch — {name}"));
            w.request_redraw();
        }
    }

    fn scale(&self) -> f32 {
        self.window
            .as_ref()
            .map_or(1.0, |w| w.scale_factor() as f32)
    }

    fn viewport(&self) -> Option<Viewport> {
        let g = self.gfx.as_ref()?;
        Some(Viewport {
            width_px: g.surface.config.width,
            height_px: g.surface.config.height,
            scale: self.scale(),
        })
    }

    /// Shows a loaded view (and its uploaded bars) in place of what was shown.
    fn show(&mut self, loaded: Loaded, path: Option<PathBuf>) {
        let Loaded { view, scenes } = loaded;
        for w in view.document().warnings() {
            eprintln!("scorch: warning: {}: {w}", view.document().source());
        }
        if let (Some(gfx), Some(s)) = (&mut self.gfx, scenes) {
            gfx.scenes = s;
            gfx.failed = None;
        }
        self.shown_path = path;
        let title = view.heading(Purpose::Window).title;
        self.session.show(view, self.view_options(title));
    }

    fn redraw(&self) {
        if let Some(w) = &self.window {
            w.request_redraw();
        }
    }

    /// Keeps the view's bars on the GPU (a new layout, e.g. another band mode, uploads
    /// anew); a failure is said once.
    fn sync_scenes(&mut self) {
        let (Some(gfx), Some(view)) = (&mut self.gfx, self.session.view()) else {
            return;
        };
        let sources = view.bar_sources();
        if gfx.scenes.holds(&sources) || sources.iter().any(|s| Some(s.key) == gfx.failed) {
            return;
        }
        let t0 = Instant::now();
        let layout = gfx.renderer.scene_layout();
        let failed = match gfx.scenes.sync(&gfx.gpu, &layout, &sources) {
            Ok(()) => {
                eprintln!(
                    "scorch: {} uploaded in {:.0} ms",
                    crate::view::draw::describe(&sources),
                    t0.elapsed().as_secs_f64() * 1000.0
                );
                None
            }
            Err(e) => {
                gfx.failed = sources.first().map(|s| s.key);
                Some(e.to_string())
            }
        };
        drop(sources);
        if let Some(e) = failed {
            self.say(e);
        }
    }

    /// The status line's right side while a load runs (and no preview is shown).
    fn loading_note(&self) -> Option<String> {
        self.loading.as_ref().map(|l| {
            format!(
                "loading {}… {}",
                l.name,
                l.progress
                    .fraction()
                    .map(|f| format!("{:.0}%", f * 100.0))
                    .unwrap_or_default()
            )
        })
    }

    /// The window's chrome; `for_screenshot` leaves out what follows the pointer.
    fn chrome(&self, for_screenshot: bool) -> shell::Chrome {
        let loading = self.loading_note();
        let long = self.preview_status(false);
        let short = self.preview_status(true);
        let preview = long.as_deref().zip(short.as_deref());
        let timer = self.gfx.as_ref().is_some_and(|g| g.timer.is_some());
        self.session.chrome(
            loading.as_deref(),
            preview,
            Some(self.times.line(timer)),
            for_screenshot,
        )
    }

    /// The message shown while nothing is loaded.
    fn waiting_message(&self) -> (String, Option<f64>) {
        if let Some(l) = &self.loading {
            let secs = l.started.elapsed().as_secs_f64();
            let msg = match l.progress.fraction() {
                Some(f) if f >= 1.0 => {
                    format!(
                        "Laying out {} and uploading it to the GPU… ({secs:.1} s)",
                        l.name
                    )
                }
                Some(f) => format!("Loading {}… {:.0}% ({secs:.1} s)", l.name, f * 100.0),
                None => format!("Loading {}… ({secs:.1} s)", l.name),
            };
            (msg, l.progress.fraction())
        } else if let Some(e) = &self.load_error {
            (format!("Could not load: {e}"), None)
        } else {
            (
                "Drop a profile onto this window to open it".to_string(),
                None,
            )
        }
    }

    /// Restores a loaded screenshot's state when the window has a size.
    fn restore_when_sized(&mut self) {
        if self.session.viewport().is_none() || self.session.view().is_none() {
            return;
        }
        if let Some(state) = self.restore_due.take() {
            let now = self.now_s();
            self.session.restore_shot(&state, now);
            self.redraw();
        }
    }

    /// When `path` is a screenshot that recorded its state: the source to load instead
    /// and the state to restore. An error when the PNG has no state or its source is gone
    /// (the message gives what the picture showed).
    fn screenshot_source(
        &self,
        path: &Path,
    ) -> Result<Option<(Source, crate::view::shot::ShotState)>, String> {
        let Some(state) = crate::view::shot::read_state_file(path)? else {
            return Ok(None);
        };
        if state.source.is_empty() {
            return Ok(Some((Source::Demo, state)));
        }
        let src = PathBuf::from(&state.source);
        match std::fs::metadata(&src) {
            Ok(m) => {
                if state.source_bytes.is_some_and(|b| b != m.len()) {
                    eprintln!(
                        "scorch: warning: {} has changed since the screenshot {} was taken ({} bytes then, {} now)",
                        src.display(),
                        path.display(),
                        state.source_bytes.unwrap_or(0),
                        m.len()
                    );
                }
                Ok(Some((Source::Path(src), state)))
            }
            Err(e) => Err(format!(
                "{}: the profile this screenshot shows cannot be opened ({e}). The screenshot recorded:\n{}",
                path.display(),
                state.describe()
            )),
        }
    }

    fn screenshot(&mut self) {
        let result = self.take_screenshot();
        match result {
            Ok(path) => self.say(format!("screenshot saved to {}", path.display())),
            Err(e) => self.say(format!("screenshot failed: {e:#}")),
        }
    }

    fn take_screenshot(&mut self) -> anyhow::Result<PathBuf> {
        // The view as of now, even if no frame was drawn since the last input.
        let now = self.now_s();
        self.session.tick(now);
        self.sync_scenes();
        let chrome = self.chrome(true);
        let path = screenshot_path(self.shown_path.as_deref());
        let state = self.session.shot_state(self.shown_path.as_deref());
        let factor = self.opts.screenshot_scale.max(0.1);
        let gfx = self.gfx.as_mut().ok_or_else(|| anyhow::anyhow!("no GPU"))?;
        let view = self
            .session
            .view()
            .ok_or_else(|| anyhow::anyhow!("nothing is loaded"))?;
        if gfx.shot_renderer.is_none() {
            gfx.shot_renderer = Some(gfx.renderer.for_format(&gfx.gpu, TARGET_FORMAT));
        }
        let renderer = gfx.shot_renderer.as_mut().expect("just created");
        let frame = compose(
            view,
            Purpose::Screenshot { factor },
            Some(&chrome),
            renderer.text(),
        );
        // A screenshot is exact: every page of own bars it draws, uploaded first.
        gfx.scenes
            .fetch(&gfx.gpu, &view.bar_sources(), &frame.bars, PageBudget::ALL)?;
        let (image, _) = render::render_frame(&gfx.gpu, renderer, &frame, &gfx.scenes)?;
        let png = crate::export::encode_png_with_state(&image, state.as_ref())
            .map_err(|e| anyhow::anyhow!(e))?;
        crate::export::write_whole(&path, |f| std::io::Write::write_all(f, &png))
            .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
        Ok(path)
    }

    fn draw(&mut self) {
        let t0 = Instant::now();
        let now = self.now_s();
        let animating = self.session.tick(now);
        self.sync_scenes();
        let chrome = self.chrome(false);
        let waiting = self.waiting_message();
        let title = self
            .loading
            .as_ref()
            .map_or("scorch".to_string(), |l| l.name.clone());
        let Some(gfx) = &mut self.gfx else { return };
        // Waiting for a swapchain image is not CPU work: keep it out of the frame time.
        if std::mem::take(&mut gfx.reconfigure) {
            gfx.surface
                .surface
                .configure(&gfx.gpu.device, &gfx.surface.config);
        }
        let acquire_start = Instant::now();
        let acquired = gfx.surface.surface.get_current_texture();
        let acquire_wait = acquire_start.elapsed();
        let target = match acquired {
            wgpu::CurrentSurfaceTexture::Success(f)
            | wgpu::CurrentSurfaceTexture::Suboptimal(f) => f,
            wgpu::CurrentSurfaceTexture::Timeout | wgpu::CurrentSurfaceTexture::Occluded => return,
            wgpu::CurrentSurfaceTexture::Outdated | wgpu::CurrentSurfaceTexture::Lost => {
                gfx.surface
                    .surface
                    .configure(&gfx.gpu.device, &gfx.surface.config);
                if let Some(w) = &self.window {
                    w.request_redraw();
                }
                return;
            }
            wgpu::CurrentSurfaceTexture::Validation => {
                eprintln!("scorch: surface validation error; skipping a frame");
                return;
            }
        };
        let texture = target.texture.create_view(&wgpu::TextureViewDescriptor {
            format: Some(gfx.surface.view_format),
            ..Default::default()
        });
        let (w, h) = (gfx.surface.config.width, gfx.surface.config.height);
        let tile = render::Tile { x: 0, y: 0, w, h };
        let scale = self
            .window
            .as_ref()
            .map_or(1.0, |w| w.scale_factor() as f32);
        // While the view moves, labels have a deadline; what it leaves is drawn by the
        // next frame, once the view rests.
        let moved = self.session.take_moved();
        let moving = animating || moved;
        let text = gfx.renderer.text();
        text.begin_frame(Some(render::LABEL_SHAPING));
        text.limit_labels(moving.then_some(render::LABEL_PLACING));
        let frame = match self.session.view() {
            Some(v) => compose(v, Purpose::Window, Some(&chrome), gfx.renderer.text()),
            None => {
                let mut f = Frame::new(w, h, scale);
                let heading = Heading {
                    title,
                    subtitle: String::new(),
                    legend: None,
                };
                let (msg, progress) = waiting;
                shell::waiting(
                    &mut f,
                    &window_style(),
                    &heading,
                    &msg,
                    progress,
                    gfx.renderer.text(),
                );
                f
            }
        };
        let composed = t0.elapsed().saturating_sub(acquire_wait);
        // Rows' own bars this frame reaches and the GPU has not got: a few pages a frame
        // (the rows' finest tiers are drawn meanwhile), the rest by the next frames.
        let mut pages_left = false;
        let mut refused = None;
        if let Some(v) = self.session.view()
            && gfx.scenes.lack_pages(&frame.bars)
        {
            match gfx.scenes.fetch(
                &gfx.gpu,
                &v.bar_sources(),
                &frame.bars,
                PageBudget::frame(gfx.renderer.text().work_until()),
            ) {
                Ok(left) => pages_left = left > 0,
                // The scene asks for no page again: said once, here and on the status line.
                Err(e) => refused = Some(e),
            }
        }
        // A frame grows buffers (rectangles, text, the glyph atlas): inside an
        // out-of-memory scope, so that running out says so instead of aborting.
        let result = gfx
            .gpu
            .allocating("a frame", u64::from(w) * u64::from(h) * 4, || {
                gfx.renderer.render(
                    &gfx.gpu,
                    &frame,
                    &gfx.scenes,
                    &texture,
                    tile,
                    gfx.timer.as_mut(),
                )
            });
        drop(frame);
        // Labels left for lack of time this frame: the next frame shapes and places them.
        let text = gfx.renderer.text();
        let labels_left = text.deferred() > 0 || text.labels_left() > 0;
        let mut failed = None;
        match result {
            Ok(Ok(stats)) => FrameTimes::push(
                &mut self.times.encode_ms,
                composed.as_secs_f32() * 1000.0 + stats.encode_ms,
            ),
            Ok(Err(e)) => eprintln!("scorch: frame failed: {e}"),
            Err(e) => failed = Some(e.to_string()),
        }
        if let Some(w) = &self.window {
            w.pre_present_notify();
        }
        gfx.gpu.queue.present(target);
        if let Some(t) = &mut gfx.timer
            && let Some(ms) = t.read(&gfx.gpu)
        {
            self.times.gpu_ms = Some(ms);
        }
        let ms = t0.elapsed().saturating_sub(acquire_wait).as_secs_f32() * 1000.0;
        FrameTimes::push(&mut self.times.cpu_ms, ms);
        if let Some((what, started)) = self.first_draw_note.take() {
            eprintln!(
                "scorch: {what} on screen {:.0} ms after the load started ({:.0} ms after launch)",
                started.elapsed().as_secs_f64() * 1000.0,
                self.clock.elapsed().as_secs_f64() * 1000.0
            );
        }
        // While a load runs, `about_to_wait` schedules the progress display's redraws.
        if animating || labels_left || pages_left {
            self.redraw();
        }
        if let Some(e) = refused {
            eprintln!("scorch: bars not uploaded: {e}");
            self.say(format!(
                "zoomed-in bars not uploaded ({e}); their rows show the finest level of detail"
            ));
        }
        if failed != self.frame_error {
            if let Some(e) = &failed {
                eprintln!("scorch: frame failed: {e}");
                self.say(format!("could not draw: {e}"));
            }
            self.frame_error = failed;
        }
    }

    /// Performs what an input asked of the window.
    fn effect(&mut self, event_loop: &ActiveEventLoop, effect: Effect) {
        match effect {
            Effect::None => {}
            Effect::Quit => event_loop.exit(),
            Effect::Screenshot => self.screenshot(),
            Effect::Compare(step) => self.compare_step(step),
            Effect::Copy(text) => match ui::copy_to_clipboard(&text) {
                Ok(()) => self.say(format!("copied \"{text}\"")),
                Err(e) => self.say(format!(
                    "could not copy to the clipboard ({e}); the text is {text}"
                )),
            },
        }
        if self.session.take_redraw() {
            self.redraw();
        }
    }

    /// The device warm-up finished: set the window's graphics up.
    fn device_ready(&mut self, event_loop: &ActiveEventLoop) {
        let Some(result) = self.warmup.as_mut().and_then(Warmup::try_take) else {
            return;
        };
        self.warmup = None;
        let opened = match result {
            Ok(o) => o,
            Err(e) => {
                self.fatal = Some(e.to_string());
                event_loop.exit();
                return;
            }
        };
        let Some(surface) = opened.surface else {
            self.fatal = Some("the device was opened without the window's surface".into());
            event_loop.exit();
            return;
        };
        let gpu = Arc::new(opened.gpu);
        eprintln!("scorch: drawing with {}", gpu.describe());
        let timer = render::GpuTimer::new(&gpu);
        let _ = self
            .device
            .set((gpu.clone(), opened.renderer.scene_layout()));
        self.gfx = Some(Gfx {
            gpu,
            surface,
            renderer: opened.renderer,
            shot_renderer: None,
            scenes: Scenes::new(),
            failed: None,
            timer,
            reconfigure: false,
        });
        // The window may have been resized while the device was being opened.
        if let (Some(w), Some(gfx)) = (&self.window, &mut self.gfx) {
            let size = w.inner_size();
            let c = &mut gfx.surface.config;
            if size.width > 0 && size.height > 0 && (c.width, c.height) != (size.width, size.height)
            {
                (c.width, c.height) = (size.width, size.height);
                gfx.reconfigure = true;
            }
        }
        if let Some(vp) = self.viewport() {
            self.session.resize(vp);
            self.restore_when_sized();
        }
        self.redraw();
    }

    fn resized(&mut self, width: u32, height: u32) {
        if let Some(gfx) = &mut self.gfx
            && width > 0
            && height > 0
        {
            let c = &mut gfx.surface.config;
            if (c.width, c.height) != (width, height) {
                (c.width, c.height) = (width, height);
                gfx.reconfigure = true;
            }
        }
        if width > 0
            && height > 0
            && let Some(vp) = self.viewport()
        {
            self.session.resize(vp);
            self.restore_when_sized();
        }
        self.redraw();
    }

    fn loaded(&mut self, id: u64, result: Result<Loaded, String>) {
        let Some(loading) = self.loading.take_if(|l| l.id == id) else {
            return;
        };
        loading.done.store(true, Ordering::Relaxed);
        match result {
            Ok(loaded) => {
                let doc = loaded.view.document();
                eprintln!(
                    "scorch: loaded {} in {:.0} ms: {}",
                    loading.name,
                    loading.started.elapsed().as_secs_f64() * 1000.0,
                    loaded
                        .view
                        .bar_sources()
                        .iter()
                        .map(|s| format!("{} in {} rows", s.describe(), s.layout.rows.len()))
                        .collect::<Vec<_>>()
                        .join(", ")
                );
                let path =
                    (!matches!(doc.source(), "demo.folded")).then(|| PathBuf::from(doc.source()));
                self.show_full(id, loaded, path, &loading.name);
                self.restore_due = self.restore.take();
                self.restore_when_sized();
                self.first_draw_note = Some(("whole file", loading.started));
            }
            Err(e) => {
                eprintln!("scorch: {e}");
                if !self.full_load_failed(id, &e, &loading.name) {
                    self.load_error = Some(e);
                }
            }
        }
        self.redraw();
    }
}

/// `<profile>.scorch-N.png` next to the profile (or in the current directory for the
/// demo), with the first N that does not exist: never overwrites.
/// The thread that makes views ([`session::OpenJob`]) and uploads their bars, one at a
/// time: a job that a later one superseded before it started is skipped, and one
/// superseded while it ran is not uploaded.
fn spawn_opener(
    proxy: EventLoopProxy<UserEvent>,
    device: DeviceSlot,
) -> std::sync::mpsc::Sender<session::OpenJob> {
    let (tx, rx) = std::sync::mpsc::channel::<session::OpenJob>();
    std::thread::Builder::new()
        .name("scorch-view".into())
        .spawn(move || {
            let mut next = None;
            loop {
                let Some(mut job) = next.take().or_else(|| rx.recv().ok()) else {
                    return;
                };
                while let Ok(newer) = rx.try_recv() {
                    job = newer;
                }
                let (id, kind, t) = (job.id, job.kind, Instant::now());
                let made = job.run();
                if let Ok(newer) = rx.try_recv() {
                    next = Some(newer);
                    continue;
                }
                let result = made.map(|made| {
                    let view = &made.view;
                    let made_ms = t.elapsed().as_secs_f64() * 1000.0;
                    let sources = view.bar_sources();
                    let scenes = device.get().and_then(|(gpu, layout)| {
                        // The view shown keeps its bars until this one is shown. Where the
                        // device's memory is this machine's, both sets are uploaded only
                        // with room to spare; else after the swap, on the window's thread
                        // (which frees the old bars first, as it did before views were
                        // made here).
                        let bytes: u64 = sources.iter().map(|s| s.estimated_bytes()).sum();
                        if gpu.maps_instances()
                            && bytes.saturating_mul(2) > import::limits::available_memory()
                        {
                            eprintln!(
                                "scorch: {} view: its bars are uploaded once it is shown \
                                 (too little memory for them beside the bars shown)",
                                kind.0
                            );
                            return None;
                        }
                        match Scenes::build(gpu, layout, &sources) {
                            Ok(s) => Some(s),
                            // Tried again on the window's thread, which says why.
                            Err(e) => {
                                eprintln!("scorch: {e}");
                                None
                            }
                        }
                    });
                    let bars = crate::view::draw::describe(&sources);
                    if scenes.is_some() {
                        eprintln!(
                            "scorch: {} view made in {made_ms:.0} ms, {bars} uploaded in {:.0} ms",
                            kind.0,
                            t.elapsed().as_secs_f64() * 1000.0 - made_ms
                        );
                    } else {
                        eprintln!(
                            "scorch: {} view made in {made_ms:.0} ms ({bars} left to upload)",
                            kind.0
                        );
                    }
                    drop(sources);
                    (made, scenes)
                });
                if proxy.send_event(UserEvent::Opened { id, result }).is_err() {
                    return;
                }
            }
        })
        .expect("spawning the view thread");
    tx
}

pub fn screenshot_path(profile: Option<&Path>) -> PathBuf {
    let (dir, stem) = match profile {
        Some(p) => (
            p.parent().map(Path::to_path_buf).unwrap_or_default(),
            p.file_name()
                .map_or("profile".into(), |s| s.to_string_lossy().to_string()),
        ),
        None => (PathBuf::from("."), "scorch-demo".to_string()),
    };
    for n in 1.. {
        let p = dir.join(format!("{stem}.scorch-{n}.png"));
        if !p.exists() {
            return p;
        }
    }
    unreachable!("some screenshot number is free")
}

impl ApplicationHandler<UserEvent> for App {
    fn resumed(&mut self, event_loop: &ActiveEventLoop) {
        if self.window.is_some() {
            return;
        }
        let title = match &self.loading {
            Some(l) => format!("scorch — {}", l.name),
            None => "scorch".to_string(),
        };
        let attrs = Window::default_attributes()
            .with_title(title)
            .with_inner_size(LogicalSize::new(self.opts.size.0, self.opts.size.1));
        let window = match event_loop.create_window(attrs) {
            Ok(w) => Arc::new(w),
            Err(e) => {
                self.fatal = Some(format!("cannot open a window: {e}"));
                event_loop.exit();
                return;
            }
        };
        let gpu_opts = GpuOptions {
            backend: self.opts.backend,
        };
        let instance = Gpu::instance(&gpu_opts, Some(Box::new(event_loop.owned_display_handle())));
        let surface = match instance.create_surface(window.clone()) {
            Ok(s) => s,
            Err(e) => {
                self.fatal = Some(format!("cannot draw into the window: {e}"));
                event_loop.exit();
                return;
            }
        };
        let size = window.inner_size();
        let target = SurfaceTarget {
            instance,
            surface,
            size: (size.width, size.height),
        };
        let proxy = self.proxy.clone();
        match Warmup::start(gpu_opts, Some(target), Hold::No, None, move || {
            let _ = proxy.send_event(UserEvent::DeviceReady);
        }) {
            Ok(w) => self.warmup = Some(w),
            Err(e) => {
                self.fatal = Some(format!("cannot start the device thread: {e}"));
                event_loop.exit();
                return;
            }
        }
        self.window = Some(window);
    }

    fn user_event(&mut self, event_loop: &ActiveEventLoop, event: UserEvent) {
        self.trimmer.touch(Instant::now());
        match event {
            UserEvent::DeviceReady => self.device_ready(event_loop),
            UserEvent::Preview { id, loaded, extent } => self.show_preview(id, loaded, extent),
            UserEvent::Loaded { id, result } => self.loaded(id, result),
            UserEvent::Opened { id, result } => self.opened(id, result),
        }
    }

    fn window_event(&mut self, event_loop: &ActiveEventLoop, _id: WindowId, event: WindowEvent) {
        let now = self.now_s();
        self.trimmer.touch(Instant::now());
        let effect = match event {
            WindowEvent::CloseRequested => Effect::Quit,
            WindowEvent::Resized(size) => {
                self.resized(size.width, size.height);
                Effect::None
            }
            WindowEvent::ScaleFactorChanged { .. } => {
                if let Some(vp) = self.viewport() {
                    self.session.resize(vp);
                    self.restore_when_sized();
                    self.restore_when_sized();
                }
                Effect::None
            }
            WindowEvent::RedrawRequested => {
                self.draw();
                Effect::None
            }
            WindowEvent::ModifiersChanged(m) => {
                self.session.modifiers(keys::mods(m.state()));
                Effect::None
            }
            WindowEvent::DroppedFile(path) => {
                // With Shift held, the dropped file is the base of the one shown.
                let after = match &self.source {
                    Some(Source::Path(p)) => Some(p.clone()),
                    Some(Source::Compare(c)) if c.after.len() == 1 => Some(c.after[0].clone()),
                    _ => None,
                };
                match after {
                    Some(after) if self.session.mods().shift => {
                        self.start_load(Source::Compare(import::compare::CompareInputs {
                            before: vec![path],
                            after: vec![after],
                            options: Default::default(),
                        }));
                    }
                    _ => self.start_load(Source::Path(path)),
                }
                Effect::None
            }
            WindowEvent::CursorLeft { .. } => {
                self.session.pointer_left();
                Effect::None
            }
            WindowEvent::CursorMoved { position, .. } => {
                self.session
                    .pointer_moved(position.x as f32, position.y as f32);
                Effect::None
            }
            WindowEvent::MouseInput { state, button, .. } => match (button, state) {
                (MouseButton::Left, ElementState::Pressed) => self.session.left_pressed(now),
                (MouseButton::Left, ElementState::Released) => self.session.left_released(now),
                (MouseButton::Right, ElementState::Pressed) => {
                    self.session.right_pressed();
                    Effect::None
                }
                _ => Effect::None,
            },
            WindowEvent::MouseWheel { delta, .. } => {
                self.session.wheel(keys::wheel(delta));
                Effect::None
            }
            WindowEvent::PinchGesture { delta, .. } => {
                self.session.pinch(delta);
                Effect::None
            }
            WindowEvent::KeyboardInput {
                event,
                is_synthetic: false,
                ..
            } if event.state == ElementState::Pressed => {
                let text = event.text.as_ref().map(|t| t.to_string());
                self.session
                    .key(&keys::key(&event.logical_key), text.as_deref(), now)
            }
            _ => Effect::None,
        };
        self.effect(event_loop, effect);
    }

    fn about_to_wait(&mut self, event_loop: &ActiveEventLoop) {
        self.start_open();
        // While loading, refresh the progress display ten times a second, every two seconds
        // over a preview (see `progressive`), not every frame.
        let now = self.now_s();
        if self.loading.is_some() {
            let t = Instant::now();
            if t >= self.progress_redraw_at {
                let period = if self.preview.is_some() { 2000 } else { 100 };
                self.progress_redraw_at = t + Duration::from_millis(period);
                self.show_preview_progress();
                self.redraw();
            }
            event_loop.set_control_flow(ControlFlow::WaitUntil(self.progress_redraw_at));
        } else {
            let mut wake = None;
            if self.session.message_alive(now) {
                wake = Some(Instant::now() + Duration::from_millis(500));
            } else if self.session.take_redraw() {
                self.redraw();
                // The frame comes first; the trim waits for a pause.
                event_loop.set_control_flow(ControlFlow::Wait);
                return;
            }
            // Between bursts of input: freed memory goes back (documents replaced, caches
            // turned over), at most every two seconds.
            if let Some(at) = self.trimmer.idle(Instant::now()) {
                wake = Some(wake.map_or(at, |w| w.min(at)));
            }
            event_loop.set_control_flow(wake.map_or(ControlFlow::Wait, ControlFlow::WaitUntil));
        }
    }
}
