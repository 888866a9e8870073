//! The window: a winit 0.30 `ApplicationHandler` over the same renderer as export.
//!
//! The app owns input and presentation only. What the view shows is a
//! [`ViewState`](crate::view::state::ViewState) changed by pure transitions; what is under
//! the pointer comes from [`pick`](crate::pick::pick); search from
//! [`search`](crate::view::search). A frame is built as a [`FrameSpec`] (the same type
//! export uses) with overlays for the status line, tooltip, menu and search field, and
//! drawn by the shared [`Renderer`]; a screenshot renders that spec again offscreen, so
//! it is exactly what the window shows (minus the transient tooltip and menu).
//!
//! Frames are drawn only when something changed (`ControlFlow::Wait`), continuously only
//! while an animation or a drag runs, and on a timer while a load runs (for its progress
//! display). Loading happens on a worker thread; the
//! window appears at once and shows progress (and a progress bar on the terminal). A big
//! input is shown first as a preview, replaced by the whole document when it is loaded
//! (see [`progressive`]).

mod progressive;
mod timeline;
pub use timeline::timeline_style;
mod ui;

use crate::color::ColorMode;
use crate::import::{self, Progress};
use crate::layout::{Layout, flame_layout};
use crate::model::Profile;
use crate::pick::{BarRef, pick};
use crate::render::{self, Backend, Gpu, GpuOptions, Renderer, Scene, TARGET_FORMAT};
use crate::view::search::{SearchResult, search};
use crate::view::state::{ViewState, ZoomSpeed};
use crate::view::{FrameGeometry, Orientation, Style};
use std::collections::VecDeque;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};
use winit::application::ApplicationHandler;
use winit::dpi::{LogicalSize, PhysicalPosition};
use winit::event::{ElementState, MouseButton, MouseScrollDelta, WindowEvent};
use winit::event_loop::{ActiveEventLoop, ControlFlow, EventLoop, EventLoopProxy};
use winit::keyboard::{Key, ModifiersState, NamedKey};
use winit::window::{Window, WindowId};

/// The bundled demo profile, shown by `scorch` without arguments.
pub const DEMO_PROFILE: &[u8] = include_bytes!("../../data/demo.folded");

/// What to open.
#[derive(Clone, Debug)]
pub enum Source {
    /// A file.
    Path(PathBuf),
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
        }
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
        /// The profile or trace, laid out (with its GPU scene when the device was
        /// ready), or the error.
        result: Result<Loaded, String>,
    },
    /// A preview of a big input, sent before its `Loaded`.
    Preview {
        /// Which load.
        id: u64,
        /// The partial profile or trace, laid out.
        loaded: Loaded,
        /// What it was made of.
        extent: import::preview::PreviewExtent,
    },
}

/// What a loader thread produced.
pub enum Loaded {
    /// A profile, its flame layout and maybe its scene.
    Profile(Box<(Profile, Layout, Option<Scene>)>),
    /// A trace, laid out in bands, and maybe its scene.
    Trace(
        Box<(
            crate::export::TraceView,
            Option<crate::render::timeline::TimelineScene>,
        )>,
    ),
}

/// A loaded profile and everything the view keeps about it.
struct Doc {
    profile: Profile,
    layout: Layout,
    path: Option<PathBuf>,
    name: String,
    view: ViewState,
    search: Option<SearchResult>,
    search_cursor: Option<usize>,
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
        }
    }
}

struct Loading {
    id: u64,
    name: String,
    progress: Arc<Progress>,
    started: Instant,
    done: Arc<AtomicBool>,
}

/// What a loader thread needs to prepare a scene off the UI thread.
type SceneMaker = Arc<std::sync::OnceLock<(Arc<Gpu>, wgpu::BindGroupLayout)>>;

struct Gfx {
    gpu: Arc<Gpu>,
    surface: wgpu::Surface<'static>,
    config: wgpu::SurfaceConfiguration,
    view_format: wgpu::TextureFormat,
    renderer: Renderer,
    shot_renderer: Option<Renderer>,
    scene: Option<Scene>,
    tscene: Option<crate::render::timeline::TimelineScene>,
    timer: Option<ui::GpuTimer>,
}

/// A context menu opened on a bar.
#[derive(Clone, Debug)]
struct Menu {
    bar: BarRef,
    x: f32,
    y: f32,
    hovered: Option<usize>,
}

const MENU_ITEMS: [&str; 3] = ["Focus on this", "Copy name", "Reset view"];

#[derive(Clone, Copy, Debug)]
struct Drag {
    start: (f32, f32),
    last: (f32, f32),
    moved: bool,
}

struct App {
    proxy: EventLoopProxy<UserEvent>,
    opts: AppOptions,
    window: Option<Arc<Window>>,
    gfx: Option<Gfx>,
    doc: Option<Doc>,
    tdoc: Option<timeline::TraceDoc>,
    tl_drag: Option<timeline::TimelineDrag>,
    loading: Option<Loading>,
    next_load: u64,
    cursor: Option<(f32, f32)>,
    modifiers: ModifiersState,
    drag: Option<Drag>,
    hover: Option<BarRef>,
    /// A merged LOD run under the pointer: (row, tier, index in the tier).
    hover_run: Option<(usize, usize, usize)>,
    menu: Option<Menu>,
    search_open: bool,
    search_text: String,
    message: Option<(String, Instant)>,
    show_times: bool,
    cpu_ms: VecDeque<f32>,
    encode_ms: VecDeque<f32>,
    gpu_ms: Option<f32>,
    clock: Instant,
    scene_maker: SceneMaker,
    fatal: Option<String>,
    load_error: Option<String>,
    /// The preview on screen while its load runs.
    preview: Option<progressive::ShownPreview>,
    /// What the next frame shows for the first time and when its load started, for the log.
    first_draw_note: Option<(&'static str, Instant)>,
    /// When the progress display is redrawn next.
    progress_redraw_at: Instant,
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
            gfx: None,
            doc: None,
            tdoc: None,
            tl_drag: None,
            loading: None,
            next_load: 0,
            cursor: None,
            modifiers: ModifiersState::empty(),
            drag: None,
            hover: None,
            hover_run: None,
            menu: None,
            search_open: false,
            search_text: String::new(),
            message: None,
            show_times: false,
            cpu_ms: VecDeque::new(),
            encode_ms: VecDeque::new(),
            gpu_ms: None,
            clock: Instant::now(),
            scene_maker: Arc::new(std::sync::OnceLock::new()),
            fatal: None,
            load_error: None,
            preview: None,
            first_draw_note: None,
            progress_redraw_at: Instant::now(),
        }
    }

    fn now_s(&self) -> f64 {
        self.clock.elapsed().as_secs_f64()
    }

    fn say(&mut self, msg: impl Into<String>) {
        let msg = msg.into();
        eprintln!("scorch: {msg}");
        self.message = Some((msg, Instant::now()));
    }

    /// Starts loading `source` on a worker thread.
    fn start_load(&mut self, source: Source) {
        self.next_load += 1;
        let id = self.next_load;
        let progress = Arc::new(Progress::default());
        let done = Arc::new(AtomicBool::new(false));
        let (name, path) = match &source {
            Source::Path(p) => (file_name(p), Some(p.clone())),
            Source::Demo => ("demo.folded (bundled demo)".to_string(), None),
        };
        let proxy = self.proxy.clone();
        let prog = progress.clone();
        let done2 = done.clone();
        let maker = self.scene_maker.clone();
        let preview = self
            .opts
            .preview
            .then(import::preview::PreviewOptions::default);
        std::thread::Builder::new()
            .name("scorch-load".into())
            .spawn(move || {
                progressive::load(&source, &prog, &maker, preview.as_ref(), &mut |step| {
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
        let _ = path;
    }

    fn style() -> Style {
        window_style()
    }

    fn scale(&self) -> f32 {
        self.window
            .as_ref()
            .map_or(1.0, |w| w.scale_factor() as f32)
    }

    fn size(&self) -> (u32, u32) {
        self.gfx
            .as_ref()
            .map_or((1, 1), |g| (g.config.width, g.config.height))
    }

    /// Geometry of the window for the current document and view.
    fn geometry(&self) -> FrameGeometry {
        let (w, h) = self.size();
        let rows = self.doc.as_ref().map_or(0, |d| d.layout.rows.len());
        let orientation = self
            .doc
            .as_ref()
            .map_or(self.opts.orientation, |d| d.view.orientation);
        let mut g =
            FrameGeometry::with_physical_size(w, h, self.scale(), rows, orientation, Self::style());
        if let Some(d) = &self.doc {
            g.scroll_px = d.view.scroll_px;
            if let Some(f) = d.view.focus {
                g.first_row = f.bar.row;
                g.header = true;
            }
        }
        g
    }

    fn set_doc(
        &mut self,
        profile: Profile,
        layout: Layout,
        scene: Option<Scene>,
        path: Option<PathBuf>,
        name: String,
    ) {
        let g = {
            let (w, h) = self.size();
            FrameGeometry::with_physical_size(
                w,
                h,
                self.scale(),
                layout.rows.len(),
                self.opts.orientation,
                Self::style(),
            )
        };
        let color =
            crate::export::color_mode(&profile, self.opts.color).unwrap_or(ColorMode::Package);
        let view = ViewState::new(
            &layout,
            f64::from(g.graph.w),
            g.graph.h,
            g.row_pitch_px,
            self.opts.orientation,
            color,
        );
        for w in profile.meta.warnings.lines() {
            eprintln!("scorch: warning: {}: {w}", profile.meta.source);
        }
        if let Some(gfx) = &mut self.gfx {
            gfx.scene = Some(
                scene.unwrap_or_else(|| Scene::new(&gfx.gpu, &gfx.renderer, &profile, &layout)),
            );
            gfx.tscene = None;
        }
        self.tdoc = None;
        self.clear_interaction();
        self.doc = Some(Doc {
            profile,
            layout,
            path,
            name,
            view,
            search: None,
            search_cursor: None,
        });
    }

    /// Forgets what pointed into the document being replaced: hover (and the merged run
    /// under it), a timeline drag, the menu and the search field.
    fn clear_interaction(&mut self) {
        self.hover = None;
        self.hover_run = None;
        self.tl_drag = None;
        self.menu = None;
        self.search_open = false;
        self.search_text.clear();
    }

    fn redraw(&self) {
        if let Some(w) = &self.window {
            w.request_redraw();
        }
    }

    fn update_hover(&mut self) {
        if self.tdoc.is_some() {
            self.tl_update_hover();
            return;
        }
        let g = self.geometry();
        let new = match (&self.doc, self.cursor) {
            (Some(d), Some((x, y))) if self.drag.is_none_or(|d| !d.moved) => {
                pick(&d.layout, &g, &d.view.camera, x, y)
            }
            _ => None,
        };
        // A merged run of sub-pixel bars drawn at this zoom, under the pointer.
        let run = match (&self.doc, &self.gfx, self.cursor, new) {
            (Some(d), Some(gfx), Some((x, _)), Some(bar)) => gfx.scene.as_ref().and_then(|sc| {
                let cam = &d.view.camera;
                let tick = cam.tick_at(f64::from(x - g.graph.x));
                sc.lod
                    .merged_run_at(&d.layout, bar.row, 1.0 / cam.px_per_tick, tick)
                    .map(|(k, j)| (bar.row, k, j))
            }),
            _ => None,
        };
        if new != self.hover || run != self.hover_run {
            self.hover = new;
            self.hover_run = run;
            self.redraw();
        }
    }

    /// The merged LOD run under the pointer, as its tier and index.
    fn hovered_run(&self) -> Option<crate::lod::MergedRun> {
        let (r, k, j) = self.hover_run?;
        let layout = &self.doc.as_ref()?.layout;
        self.gfx.as_ref()?.scene.as_ref()?.lod.run(layout, r, k, j)
    }

    fn graph_x(&self, x: f32) -> f64 {
        f64::from(x - self.geometry().graph.x)
    }

    fn run_search(&mut self) {
        if self.tdoc.is_some() {
            self.tl_run_search();
            return;
        }
        let Some(d) = &mut self.doc else { return };
        if self.search_text.is_empty() {
            d.search = None;
            d.search_cursor = None;
        } else {
            let r = search(&d.profile, &d.layout, &self.search_text);
            d.search_cursor = None;
            d.search = Some(r);
        }
        if let (Some(gfx), Some(d)) = (&self.gfx, &self.doc)
            && let Some(scene) = &gfx.scene
        {
            let flags = d
                .search
                .as_ref()
                .map(|s| s.name_matches.clone())
                .unwrap_or_default();
            scene.bars.set_search(&gfx.gpu.queue, &flags);
        }
        self.redraw();
    }

    fn jump_to_match(&mut self, backwards: bool) {
        if self.tdoc.is_some() {
            self.tl_jump_to_match(backwards);
            return;
        }
        let now = self.now_s();
        let Some(d) = &mut self.doc else { return };
        let Some(s) = &d.search else { return };
        let current = d.search_cursor.map(|i| s.bars[i]);
        if let Some(i) = s.next_from(&d.layout, current, backwards) {
            let bar = s.bars[i];
            d.search_cursor = Some(i);
            d.view.zoom_to_bar(&d.layout, bar, now);
        }
        self.redraw();
    }

    fn screenshot(&mut self) {
        let result = if self.tdoc.is_some() {
            self.tl_screenshot()
        } else {
            self.take_screenshot()
        };
        match result {
            Ok(path) => self.say(format!("screenshot saved to {}", path.display())),
            Err(e) => self.say(format!("screenshot failed: {e:#}")),
        }
        self.redraw();
    }

    fn take_screenshot(&mut self) -> anyhow::Result<PathBuf> {
        // The view as of now, even if no frame was drawn since the last input.
        let now = self.now_s();
        if let Some(d) = &mut self.doc {
            d.view.tick(now);
        }
        let spec = {
            let d = self
                .doc
                .as_ref()
                .ok_or_else(|| anyhow::anyhow!("nothing is loaded"))?;
            let s = self.opts.screenshot_scale.max(0.1);
            let (w, h) = self.size();
            let mut g = FrameGeometry::with_physical_size(
                (w as f32 * s).round() as u32,
                (h as f32 * s).round() as u32,
                self.scale() * s,
                d.layout.rows.len(),
                d.view.orientation,
                Self::style(),
            );
            g.scroll_px = d.view.scroll_px * s;
            if let Some(f) = d.view.focus {
                g.first_row = f.bar.row;
                g.header = true;
            }
            let mut cam = d.view.camera;
            cam.px_per_tick *= f64::from(s);
            self.build_spec(g, cam, true)
        };
        let path = {
            let d = self.doc.as_ref().expect("checked above");
            screenshot_path(d.path.as_deref())
        };
        let gfx = self.gfx.as_mut().ok_or_else(|| anyhow::anyhow!("no GPU"))?;
        let d = self.doc.as_ref().expect("checked above");
        let scene = gfx
            .scene
            .as_ref()
            .ok_or_else(|| anyhow::anyhow!("no scene"))?;
        if gfx.shot_renderer.is_none() {
            gfx.shot_renderer = Some(gfx.renderer.for_format(&gfx.gpu, TARGET_FORMAT));
        }
        let renderer = gfx.shot_renderer.as_mut().expect("just created");
        let (image, _) =
            render::render_image(&gfx.gpu, renderer, scene, &d.profile, &d.layout, &spec)?;
        let png = crate::export::encode_png(&image).map_err(|e| anyhow::anyhow!(e))?;
        std::fs::write(&path, png)?;
        Ok(path)
    }

    fn draw(&mut self) {
        let t0 = Instant::now();
        let now = self.now_s();
        let animating = self.doc.as_mut().is_some_and(|d| d.view.tick(now));
        // The view may have moved under a still pointer (animation, keys): re-pick.
        self.update_hover();
        let animating = animating || self.tdoc.as_mut().is_some_and(|d| d.view.tick(now));
        let spec = match self.tl_geometry() {
            Some(tg) => {
                let cam = self.tdoc.as_ref().map(|d| d.view.camera);
                AnySpec::Timeline(Box::new(self.tl_build_spec(
                    tg,
                    cam.unwrap_or(crate::view::Camera::fit(1, 1.0)),
                    false,
                )))
            }
            None => {
                let g = self.geometry();
                let cam = self.doc.as_ref().map(|d| d.view.camera);
                AnySpec::Flame(Box::new(self.build_spec(
                    g,
                    cam.unwrap_or(crate::view::Camera::fit(1, 1.0)),
                    false,
                )))
            }
        };
        let Some(gfx) = &mut self.gfx else { return };
        // Waiting for a swapchain image is not CPU work: keep it out of the frame time.
        let acquire_start = Instant::now();
        let acquired = gfx.surface.get_current_texture();
        let acquire_wait = acquire_start.elapsed();
        let frame = match acquired {
            wgpu::CurrentSurfaceTexture::Success(f)
            | wgpu::CurrentSurfaceTexture::Suboptimal(f) => f,
            wgpu::CurrentSurfaceTexture::Timeout | wgpu::CurrentSurfaceTexture::Occluded => return,
            wgpu::CurrentSurfaceTexture::Outdated | wgpu::CurrentSurfaceTexture::Lost => {
                gfx.surface.configure(&gfx.gpu.device, &gfx.config);
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
        let view = frame.texture.create_view(&wgpu::TextureViewDescriptor {
            format: Some(gfx.view_format),
            ..Default::default()
        });
        let tile = render::Tile {
            x: 0,
            y: 0,
            w: gfx.config.width,
            h: gfx.config.height,
        };
        let result = match (&spec, &self.doc, &gfx.scene) {
            (AnySpec::Timeline(spec), _, _) => {
                Self::tl_render(gfx, self.tdoc.as_ref(), spec, &view, tile)
            }
            (AnySpec::Flame(spec), Some(d), Some(scene)) => gfx.renderer.render_timed(
                &gfx.gpu,
                Some((scene, &d.profile, &d.layout)),
                spec,
                &view,
                tile,
                gfx.timer.as_mut(),
            ),
            (AnySpec::Flame(spec), _, _) => {
                gfx.renderer
                    .render_timed(&gfx.gpu, None, spec, &view, tile, gfx.timer.as_mut())
            }
        };
        match result {
            Ok(stats) => {
                self.encode_ms.push_back(stats.encode_ms);
                if self.encode_ms.len() > 120 {
                    self.encode_ms.pop_front();
                }
            }
            Err(e) => eprintln!("scorch: frame failed: {e}"),
        }
        if let Some(w) = &self.window {
            w.pre_present_notify();
        }
        gfx.gpu.queue.present(frame);
        if let Some(t) = &mut gfx.timer
            && let Some(ms) = t.read(&gfx.gpu)
        {
            self.gpu_ms = Some(ms);
        }
        let ms = t0.elapsed().saturating_sub(acquire_wait).as_secs_f32() * 1000.0;
        self.cpu_ms.push_back(ms);
        if self.cpu_ms.len() > 120 {
            self.cpu_ms.pop_front();
        }
        if let Some((what, started)) = self.first_draw_note.take() {
            eprintln!(
                "scorch: {what} on screen {:.0} ms after the load started ({:.0} ms after launch)",
                started.elapsed().as_secs_f64() * 1000.0,
                self.clock.elapsed().as_secs_f64() * 1000.0
            );
        }
        // While a load runs, `about_to_wait` schedules the progress display's redraws.
        if animating {
            self.redraw();
        }
    }

    fn on_key(&mut self, event_loop: &ActiveEventLoop, key: &Key, text: Option<&str>) {
        let ctrl = self.modifiers.control_key() || self.modifiers.super_key();
        let now = self.now_s();
        // The search field takes typing while open.
        if self.search_open {
            match key {
                Key::Named(NamedKey::Escape) => {
                    self.search_open = false;
                    self.search_text.clear();
                    self.run_search();
                }
                Key::Named(NamedKey::Enter) => {
                    self.search_open = false;
                    self.jump_to_match(self.modifiers.shift_key());
                }
                Key::Named(NamedKey::Backspace) => {
                    self.search_text.pop();
                    self.run_search();
                }
                _ if ctrl => {}
                _ => {
                    if let Some(t) = text
                        && !t.chars().any(char::is_control)
                    {
                        self.search_text.push_str(t);
                        self.run_search();
                    }
                }
            }
            self.redraw();
            return;
        }
        if self.tdoc.is_some() {
            match key {
                Key::Named(NamedKey::F12) => self.show_times = !self.show_times,
                Key::Character(c) if matches!(c.as_str(), "f" | "F") && ctrl => self.open_search(),
                Key::Character(c) if matches!(c.as_str(), "s" | "S") && ctrl => self.screenshot(),
                Key::Character(c) if matches!(c.as_str(), "q" | "Q") && ctrl => event_loop.exit(),
                Key::Character(c) if c.as_str() == "/" => self.open_search(),
                Key::Character(c) if matches!(c.as_str(), "p" | "P") => self.screenshot(),
                _ => {
                    self.tl_key(key, ctrl);
                }
            }
            self.update_hover();
            self.redraw();
            return;
        }
        let w = self.geometry().graph.w as f64;
        let Some(d) = &mut self.doc else {
            if let Key::Named(NamedKey::Escape) = key {
                event_loop.exit();
            }
            return;
        };
        let v = &mut d.view;
        match key {
            Key::Named(NamedKey::Escape) => {
                if self.menu.take().is_some() {
                } else if d.search.is_some() {
                    self.search_text.clear();
                    d.search = None;
                    self.run_search();
                } else if v.zoomed.is_some() {
                    v.zoom_out(now);
                } else if v.focus.is_some() {
                    v.reset();
                }
            }
            Key::Named(NamedKey::Backspace) => {
                v.back(now);
            }
            Key::Named(NamedKey::ArrowLeft) => v.pan_px(w * 0.1),
            Key::Named(NamedKey::ArrowRight) => v.pan_px(-w * 0.1),
            Key::Named(NamedKey::ArrowUp) => {
                v.scroll_by(up_sign(v.orientation) * v.row_pitch * 3.0)
            }
            Key::Named(NamedKey::ArrowDown) => {
                v.scroll_by(-up_sign(v.orientation) * v.row_pitch * 3.0)
            }
            Key::Named(NamedKey::PageUp) => v.scroll_by(up_sign(v.orientation) * v.graph_h * 0.9),
            Key::Named(NamedKey::PageDown) => {
                v.scroll_by(-up_sign(v.orientation) * v.graph_h * 0.9)
            }
            Key::Named(NamedKey::Home) => v.scroll_by(-1e9),
            Key::Named(NamedKey::End) => v.scroll_by(1e9),
            Key::Named(NamedKey::F12) => self.show_times = !self.show_times,
            Key::Character(c) => {
                let c = c.as_str();
                match c {
                    "f" | "F" if ctrl => self.open_search(),
                    "s" | "S" if ctrl => self.screenshot(),
                    "/" => self.open_search(),
                    "+" | "=" | "w" | "W" => v.zoom_around(w / 2.0, 1.5),
                    "-" | "_" | "s" | "S" => v.zoom_around(w / 2.0, 1.0 / 1.5),
                    "0" => v.reset(),
                    "a" | "A" => v.pan_px(w * 0.1),
                    "d" | "D" => v.pan_px(-w * 0.1),
                    "i" | "I" => v.toggle_orientation(),
                    "c" | "C" => {
                        let diff = d.profile.is_diff();
                        v.cycle_color(diff);
                    }
                    "n" => self.jump_to_match(false),
                    "N" => self.jump_to_match(true),
                    "p" | "P" => self.screenshot(),
                    "q" | "Q" if ctrl => event_loop.exit(),
                    _ => {}
                }
            }
            _ => {}
        }
        self.update_hover();
        self.redraw();
    }

    fn open_search(&mut self) {
        self.search_open = true;
        self.menu = None;
        self.redraw();
    }

    fn menu_item_at(&self, x: f32, y: f32) -> Option<usize> {
        let m = self.menu.as_ref()?;
        let s = self.scale();
        let (w, h) = ui::menu_size(s);
        let g = self.geometry();
        // The same placement the menu is drawn with (kept inside the window, above the
        // status line).
        let mx = m.x.min(g.width_px as f32 - w).max(0.0).round();
        let my =
            m.y.min(g.status.y - h * MENU_ITEMS.len() as f32)
                .max(0.0)
                .round();
        if x < mx || x >= mx + w || y < my {
            return None;
        }
        let i = ((y - my) / h) as usize;
        (i < MENU_ITEMS.len()).then_some(i)
    }

    fn menu_action(&mut self, item: usize) {
        let Some(m) = self.menu.take() else { return };
        let now = self.now_s();
        let Some(d) = &mut self.doc else { return };
        match item {
            0 => d.view.focus_on(&d.layout, m.bar, now),
            1 => {
                let name = d
                    .profile
                    .names
                    .get(d.layout.rows[m.bar.row].name[m.bar.index])
                    .to_string();
                match ui::copy_to_clipboard(&name) {
                    Ok(()) => self.say(format!("copied \"{name}\"")),
                    Err(e) => self.say(format!(
                        "could not copy to the clipboard ({e}); the name is {name}"
                    )),
                }
            }
            _ => d.view.reset(),
        }
        self.redraw();
    }
}

/// Lays out what a loader read and, when the device is up, builds its GPU scene (inside
/// an out-of-memory scope).
fn prepare(
    imported: import::Imported,
    device: Option<&(Arc<Gpu>, wgpu::BindGroupLayout)>,
) -> Result<Loaded, String> {
    match imported {
        import::Imported::Trace(t) => {
            let view = crate::export::TraceView::new(*t, None);
            let scene = device
                .map(|(gpu, bind_layout)| {
                    let bytes = view.tracks.layout.bar_count() as u64 * 48;
                    gpu.allocating(&format!("{} spans", view.spans.len()), bytes, || {
                        crate::render::timeline::TimelineScene::with_layout(
                            gpu,
                            bind_layout,
                            &view.spans,
                            &view.tracks,
                        )
                    })
                })
                .transpose()
                .map_err(|e| e.to_string())?;
            Ok(Loaded::Trace(Box::new((view, scene))))
        }
        import::Imported::Profile(profile) => {
            let profile = *profile;
            let layout = flame_layout(&profile.tree);
            let scene = device
                .map(|(gpu, bind_layout)| {
                    let t = Instant::now();
                    let bytes = layout.bar_count() as u64 * 48;
                    let what = format!("{} bars", layout.bar_count());
                    let s = gpu.allocating(&what, bytes, || {
                        Scene::with_layout(gpu, bind_layout, &profile, &layout)
                    })?;
                    eprintln!(
                        "scorch: {} bars and {} merged tiers uploaded ({} MiB) in {:.0} ms",
                        layout.bar_count(),
                        s.lod.bar_count(),
                        s.bars.instance_bytes >> 20,
                        t.elapsed().as_secs_f64() * 1000.0
                    );
                    Ok(s)
                })
                .transpose()
                .map_err(|e: crate::render::GpuError| e.to_string())?;
            Ok(Loaded::Profile(Box::new((profile, layout, scene))))
        }
    }
}

/// A frame to draw: a flame graph's or a timeline's.
enum AnySpec {
    Flame(Box<crate::render::FrameSpec>),
    Timeline(Box<crate::render::timeline::TimelineSpec>),
}

/// The window's logical sizes: the export style plus a status line.
pub fn window_style() -> Style {
    Style {
        status_height: 22.0,
        ..Style::default()
    }
}

/// Scroll direction that moves towards the root for each orientation.
fn up_sign(o: Orientation) -> f32 {
    match o {
        Orientation::Flame => 1.0,
        Orientation::Icicle => -1.0,
    }
}

/// `<profile>.scorch-N.png` next to the profile (or in the current directory for the
/// demo), with the first N that does not exist: never overwrites.
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
        let gpu = match pollster::block_on(Gpu::with_instance(instance, &gpu_opts, Some(&surface)))
        {
            Ok(g) => g,
            Err(e) => {
                self.fatal = Some(e.to_string());
                event_loop.exit();
                return;
            }
        };
        let size = window.inner_size();
        let caps = surface.get_capabilities(&gpu.adapter);
        // Prefer a non-sRGB format (colors are sRGB values, as in a browser canvas);
        // otherwise draw through a non-sRGB view of an sRGB surface.
        let format = caps
            .formats
            .iter()
            .copied()
            .find(|f| !f.is_srgb())
            .or_else(|| caps.formats.first().copied())
            .unwrap_or(wgpu::TextureFormat::Bgra8Unorm);
        let view_format = format.remove_srgb_suffix();
        let Some(mut config) =
            surface.get_default_config(&gpu.adapter, size.width.max(1), size.height.max(1))
        else {
            self.fatal = Some(format!(
                "the adapter {} cannot present to this window",
                gpu.describe()
            ));
            event_loop.exit();
            return;
        };
        config.format = format;
        config.view_formats = if view_format != format {
            vec![view_format]
        } else {
            vec![]
        };
        config.present_mode = wgpu::PresentMode::AutoVsync;
        surface.configure(&gpu.device, &config);
        eprintln!("scorch: drawing with {}", gpu.describe());
        let renderer = Renderer::new(&gpu, view_format);
        let timer = ui::GpuTimer::new(&gpu);
        let gpu = Arc::new(gpu);
        let _ = self.scene_maker.set((gpu.clone(), renderer.scene_layout()));
        self.gfx = Some(Gfx {
            gpu,
            surface,
            config,
            view_format,
            renderer,
            shot_renderer: None,
            scene: None,
            tscene: None,
            timer,
        });
        self.window = Some(window);
        // A document that finished loading before the window existed.
        if let Some(d) = self.doc.take() {
            self.set_doc(d.profile, d.layout, None, d.path, d.name);
        }
        if let Some(d) = self.tdoc.take() {
            self.set_trace(d.trace, None, d.path, d.name);
        }
        self.redraw();
    }

    fn user_event(&mut self, _event_loop: &ActiveEventLoop, event: UserEvent) {
        match event {
            UserEvent::Preview { id, loaded, extent } => self.show_preview(id, loaded, extent),
            UserEvent::Loaded { id, result } => {
                let Some(loading) = self.loading.take_if(|l| l.id == id) else {
                    return;
                };
                loading.done.store(true, Ordering::Relaxed);
                let drawn_note = Some(("whole file", loading.started));
                match result {
                    Ok(Loaded::Trace(b)) => {
                        let (trace, scene) = *b;
                        let path = PathBuf::from(&trace.source);
                        eprintln!(
                            "scorch: loaded {} in {:.0} ms: {} spans in {} rows, {} bands",
                            loading.name,
                            loading.started.elapsed().as_secs_f64() * 1000.0,
                            trace.spans.len(),
                            trace.tracks.layout.rows.len(),
                            trace.tracks.bands.len()
                        );
                        self.show_full_trace(id, trace, scene, Some(path), loading.name);
                        self.first_draw_note = drawn_note;
                    }
                    Ok(Loaded::Profile(b)) => {
                        let (profile, layout, scene) = *b;
                        let path = (profile.meta.source != "demo.folded")
                            .then(|| PathBuf::from(&profile.meta.source));
                        eprintln!(
                            "scorch: loaded {} in {:.0} ms: {} bars in {} rows",
                            loading.name,
                            loading.started.elapsed().as_secs_f64() * 1000.0,
                            layout.bar_count(),
                            layout.rows.len()
                        );
                        self.show_full_profile(id, profile, layout, scene, path, loading.name);
                        self.first_draw_note = drawn_note;
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
    }

    fn window_event(&mut self, event_loop: &ActiveEventLoop, _id: WindowId, event: WindowEvent) {
        match event {
            WindowEvent::CloseRequested => event_loop.exit(),
            WindowEvent::Resized(size) => {
                if let Some(gfx) = &mut self.gfx
                    && size.width > 0
                    && size.height > 0
                {
                    gfx.config.width = size.width;
                    gfx.config.height = size.height;
                    gfx.surface.configure(&gfx.gpu.device, &gfx.config);
                }
                if size.width > 0 && size.height > 0 {
                    self.tl_resize();
                    let g = self.geometry();
                    if let Some(d) = &mut self.doc {
                        d.view
                            .resize(f64::from(g.graph.w), g.graph.h, g.row_pitch_px);
                    }
                }
                self.redraw();
            }
            WindowEvent::ScaleFactorChanged { .. } => {
                self.tl_resize();
                let g = self.geometry();
                if let Some(d) = &mut self.doc {
                    d.view
                        .resize(f64::from(g.graph.w), g.graph.h, g.row_pitch_px);
                }
                self.redraw();
            }
            WindowEvent::RedrawRequested => self.draw(),
            WindowEvent::ModifiersChanged(m) => self.modifiers = m.state(),
            WindowEvent::DroppedFile(path) => self.start_load(Source::Path(path)),
            WindowEvent::CursorLeft { .. } => {
                self.cursor = None;
                self.update_hover();
            }
            WindowEvent::CursorMoved { position, .. } => {
                let (x, y) = (position.x as f32, position.y as f32);
                self.cursor = Some((x, y));
                if let Some(m) = &mut self.menu {
                    let _ = m;
                    let item = self.menu_item_at(x, y);
                    if let Some(m) = &mut self.menu
                        && m.hovered != item
                    {
                        m.hovered = item;
                        self.redraw();
                    }
                }
                if let Some(mut drag) = self.drag {
                    let (dx, dy) = (x - drag.last.0, y - drag.last.1);
                    if !drag.moved
                        && ((x - drag.start.0).abs() > 3.0 || (y - drag.start.1).abs() > 3.0)
                    {
                        drag.moved = true;
                    }
                    if self.tdoc.is_some() {
                        self.tl_drag_to(x, dx, dy, drag.moved);
                    } else if drag.moved
                        && let Some(d) = &mut self.doc
                    {
                        d.view.pan_px(f64::from(dx));
                        d.view.scroll_by(up_sign(d.view.orientation) * dy);
                        self.redraw();
                    }
                    drag.last = (x, y);
                    self.drag = Some(drag);
                }
                self.update_hover();
            }
            WindowEvent::MouseInput { state, button, .. } => {
                let Some((x, y)) = self.cursor else { return };
                match (button, state) {
                    (MouseButton::Left, ElementState::Pressed) => {
                        if self.menu.is_some() {
                            match self.menu_item_at(x, y) {
                                Some(i) => self.menu_action(i),
                                None => self.menu = None,
                            }
                            self.redraw();
                            return;
                        }
                        self.drag = Some(Drag {
                            start: (x, y),
                            last: (x, y),
                            moved: false,
                        });
                        if self.tdoc.is_some() {
                            self.tl_press(x, y);
                        }
                    }
                    (MouseButton::Left, ElementState::Released) if self.tdoc.is_some() => {
                        let moved = self.drag.take().is_some_and(|d| d.moved);
                        self.tl_release(x, y, moved);
                        self.update_hover();
                    }
                    (MouseButton::Left, ElementState::Released) => {
                        let drag = self.drag.take();
                        if drag.is_some_and(|d| !d.moved) {
                            let now = self.now_s();
                            let g = self.geometry();
                            let run = self.hovered_run().map(|run| (run.x0, run.x1));
                            if let Some(d) = &mut self.doc {
                                if g.is_header(y) {
                                    d.view.reset();
                                } else if let Some((x0, x1)) = run {
                                    // A merged run: zoom into it rather than onto one
                                    // sub-pixel bar of it.
                                    d.view.zoom_to_ticks(x0, x1, now);
                                } else if let Some(bar) = pick(&d.layout, &g, &d.view.camera, x, y)
                                {
                                    d.view.click(&d.layout, bar, now);
                                }
                            }
                        }
                        self.update_hover();
                        self.redraw();
                    }
                    (MouseButton::Right, ElementState::Pressed) if self.tdoc.is_none() => {
                        self.menu = self.hover.map(|bar| Menu {
                            bar,
                            x,
                            y,
                            hovered: None,
                        });
                        self.redraw();
                    }
                    _ => {}
                }
            }
            WindowEvent::MouseWheel { delta, .. } => {
                let (dx, dy) = match delta {
                    MouseScrollDelta::LineDelta(x, y) => (f64::from(x) * 40.0, f64::from(y)),
                    MouseScrollDelta::PixelDelta(PhysicalPosition { x, y }) => (x, y / 40.0),
                };
                let cx = self.cursor.map_or(0.0, |c| self.graph_x(c.0));
                let speed = if self.modifiers.control_key() {
                    ZoomSpeed::Fine
                } else if self.modifiers.shift_key() {
                    ZoomSpeed::Fast
                } else {
                    ZoomSpeed::Normal
                };
                let alt = self.modifiers.alt_key();
                if self.tdoc.is_some() {
                    self.tl_wheel(dx, dy, speed, alt);
                } else if let Some(d) = &mut self.doc {
                    if alt {
                        d.view.scroll_by(
                            up_sign(d.view.orientation) * dy as f32 * d.view.row_pitch * 3.0,
                        );
                    } else {
                        if dy != 0.0 {
                            d.view.wheel_zoom(cx, dy, speed);
                        }
                        if dx != 0.0 {
                            d.view.pan_px(-dx);
                        }
                    }
                }
                self.menu = None;
                self.update_hover();
                self.redraw();
            }
            WindowEvent::PinchGesture { delta, .. } => {
                let cx = self.cursor.map_or(0.0, |c| self.graph_x(c.0));
                if let Some(d) = &mut self.tdoc {
                    d.view.zoom_around(cx, 1.0 + delta);
                } else if let Some(d) = &mut self.doc {
                    d.view.zoom_around(cx, 1.0 + delta);
                }
                self.update_hover();
                self.redraw();
            }
            WindowEvent::KeyboardInput {
                event,
                is_synthetic: false,
                ..
            } if event.state == ElementState::Pressed => {
                let text = event.text.as_ref().map(|t| t.to_string());
                self.on_key(event_loop, &event.logical_key, text.as_deref());
            }
            _ => {}
        }
    }

    fn about_to_wait(&mut self, event_loop: &ActiveEventLoop) {
        // While loading, refresh the progress display ten times a second, every two seconds
        // over a preview (see `progressive`), not every frame.
        if self.loading.is_some() {
            let now = Instant::now();
            if now >= self.progress_redraw_at {
                let period = if self.preview.is_some() { 2000 } else { 100 };
                self.progress_redraw_at = now + Duration::from_millis(period);
                self.show_preview_progress();
                self.redraw();
            }
            event_loop.set_control_flow(ControlFlow::WaitUntil(self.progress_redraw_at));
        } else if self
            .message
            .as_ref()
            .is_some_and(|(_, t)| t.elapsed() < Duration::from_secs(6))
        {
            event_loop.set_control_flow(ControlFlow::WaitUntil(
                Instant::now() + Duration::from_millis(500),
            ));
        } else {
            if self.message.take().is_some() {
                self.redraw();
            }
            event_loop.set_control_flow(ControlFlow::Wait);
        }
    }
}
