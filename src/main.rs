//! The `scorch` command: a thin clap layer over the library.

use anyhow::{Context, Result, bail};
use clap::{Parser, Subcommand, ValueEnum};
use scorch::color::ColorMode;
use scorch::export::{self, ExportOptions};
use scorch::import::{self, Limits};
use scorch::layout::flame_layout;
use scorch::model::Profile;
use scorch::render::{Backend, Gpu, GpuOptions, Renderer};
use scorch::view::Orientation;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// scorch: a GPU-rendered viewer for performance profiles (flame graphs, icicles, diffs).
///
/// `scorch FILE` opens FILE in a window; `scorch` alone opens the bundled demo profile.
#[derive(Parser, Debug)]
#[command(
    name = "scorch",
    version,
    about,
    args_conflicts_with_subcommands = true
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    #[command(flatten)]
    open: OpenArgs,
}

/// Options of the window.
#[derive(clap::Args, Debug)]
struct OpenArgs {
    /// Profile to open (folded stacks, perf script, Pyroscope flamebearer JSON or pprof, optionally gzipped)
    /// [default: the bundled demo profile].
    file: Option<PathBuf>,
    /// Screenshots (Ctrl+S, P) are this many times the window's physical resolution.
    #[arg(long, default_value_t = 1.0)]
    screenshot_scale: f32,
    /// Initial orientation.
    #[arg(long, value_enum, default_value_t = ViewArg::Flamegraph)]
    view: ViewArg,
    /// Initial bar colors [default: diff for differential profiles, package otherwise].
    #[arg(long, value_enum)]
    color: Option<ColorArg>,
    /// Graphics API [default: WGPU_BACKEND, or the best available].
    #[arg(long, value_enum)]
    backend: Option<BackendArg>,
    /// Initial window size in logical pixels, WIDTHxHEIGHT.
    #[arg(long, default_value = "1280x800", value_parser = parse_size)]
    size: (u32, u32),
    /// Load big files whole before showing anything, without a preview first.
    #[arg(long)]
    no_preview: bool,
}

fn parse_size(s: &str) -> Result<(u32, u32), String> {
    let (w, h) = s
        .split_once(['x', 'X'])
        .ok_or_else(|| format!("expected WIDTHxHEIGHT, got {s:?}"))?;
    let p = |v: &str| {
        v.trim()
            .parse::<u32>()
            .map_err(|_| format!("not a size: {s:?}"))
    };
    let (w, h) = (p(w)?, p(h)?);
    if w < 100 || h < 100 {
        return Err("the window must be at least 100x100".into());
    }
    Ok((w, h))
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Render a profile to a PNG image, without a window.
    Render(RenderArgs),
    /// Write a synthetic workload of TARGETS.md (w1..w7), deterministic from --seed.
    Gen(GenArgs),
    /// Print what a profile file contains: format, units, totals, nodes, depth, warnings.
    Info {
        /// Profile file (folded stacks, perf script, Pyroscope flamebearer JSON or pprof, optionally gzipped);
        /// `-` reads standard input.
        input: PathBuf,
        /// pprof: the sample type to show, by name (`alloc_space`), type/unit or index
        /// [default: the profile's default sample type, else its last].
        #[arg(long)]
        sample_type: Option<String>,
    },
}

#[derive(clap::Args, Debug)]
struct RenderArgs {
    /// Profile file (folded stacks, perf script, Pyroscope flamebearer JSON or pprof, optionally gzipped);
    /// `-` reads standard input.
    input: PathBuf,
    /// Output PNG path.
    #[arg(short, long)]
    output: PathBuf,
    /// Image width in logical pixels.
    #[arg(long, default_value_t = export::DEFAULT_WIDTH)]
    width: u32,
    /// Image height in logical pixels [default: what the profile needs].
    #[arg(long)]
    height: Option<u32>,
    /// Device pixels per logical pixel (2 for a HiDPI image).
    #[arg(long, default_value_t = 1.0)]
    scale: f32,
    /// Flame graph (root at the bottom) or icicle (root at the top) for profiles; timeline
    /// for traces [default: flamegraph for profiles, timeline for traces].
    #[arg(long, value_enum)]
    view: Option<ViewArg>,
    /// Bar colors [default: diff for differential profiles, package otherwise; track for
    /// traces shown as one tree, name for traces in bands per thread].
    #[arg(long, value_enum)]
    color: Option<ColorArg>,
    /// Blue-grey-red diff colors instead of green-grey-red.
    #[arg(long)]
    colorblind: bool,
    /// Timeline: start of the shown window, after the trace's start (`1.5ms`, `200us`,
    /// `2s`, `350ns`).
    #[arg(long, value_parser = parse_time)]
    start: Option<u64>,
    /// Timeline: end of the shown window, after the trace's start.
    #[arg(long, value_parser = parse_time)]
    end: Option<u64>,
    /// Timeline: one band per track (thread, service, node type) or the whole trace as
    /// one tree [default: bands for Chrome traces, one tree for distributed traces].
    #[arg(long, value_enum)]
    bands: Option<BandsArg>,
    /// Title line [default: the input's file name].
    #[arg(long)]
    title: Option<String>,
    /// pprof: the sample type to show, by name (`alloc_space`), type/unit or index
    /// [default: the profile's default sample type, else its last].
    #[arg(long)]
    sample_type: Option<String>,
    /// Graphics API [default: WGPU_BACKEND, or the best available].
    #[arg(long, value_enum)]
    backend: Option<BackendArg>,
    /// Print timings, the adapter and what was drawn.
    #[arg(short, long)]
    verbose: bool,
}

#[derive(clap::Args, Debug)]
struct GenArgs {
    /// Workload: w1 (typical folded), w2 (deep), w3 (long names), w4 (flat), w5 (100 M
    /// spans in 50 rows), w6 (Chrome X and B/E), w7 (1000 threads).
    #[arg(value_parser = parse_workload)]
    workload: scorch::generator::Workload,
    /// Output format [default: folded for w1-w4, chrome for w5-w7; perf and pprof for w1-w4 too].
    #[arg(long, value_enum)]
    format: Option<GenFormatArg>,
    /// Seed of the random generator: the same seed gives the same bytes.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Stop at about this many bytes (200M, 1G, 64KiB …) [default: the workload's size].
    #[arg(long, value_parser = scorch::generator::parse_size, conflicts_with = "spans")]
    size: Option<u64>,
    /// Stop after this many stack lines/samples (w1-w4) or spans (w5-w7).
    #[arg(long, value_parser = scorch::generator::parse_size)]
    spans: Option<u64>,
    /// Output file [default: standard output].
    #[arg(short, long)]
    output: Option<PathBuf>,
}

fn parse_workload(s: &str) -> Result<scorch::generator::Workload, String> {
    scorch::generator::Workload::parse(s).ok_or_else(|| format!("expected w1..w7, got {s:?}"))
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum GenFormatArg {
    Folded,
    Perf,
    Chrome,
    /// Uncompressed pprof protobuf, like a Go CPU profile.
    Pprof,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum ViewArg {
    Flamegraph,
    Icicle,
    /// Spans on a time axis (traces only).
    Timeline,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum BandsArg {
    /// One band per track.
    Tracks,
    /// The whole trace as one tree, colored by track.
    Tree,
}

/// A time like `1.5ms`, `200us`, `200µs`, `2s`, `350ns` or `350` (nanoseconds).
fn parse_time(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let v: f64 = num
        .parse()
        .map_err(|_| format!("expected a time like 1.5ms, 200us or 2s, got {s:?}"))?;
    let mul = match unit.trim() {
        "" | "ns" => 1.0,
        "us" | "µs" => 1e3,
        "ms" => 1e6,
        "s" => 1e9,
        other => {
            return Err(format!(
                "unknown time unit {other:?} in {s:?} (ns, us, ms, s)"
            ));
        }
    };
    let ns = v * mul;
    if !ns.is_finite() || ns < 0.0 || ns > u64::MAX as f64 / 2.0 {
        return Err(format!("time out of range: {s:?}"));
    }
    Ok(ns.round() as u64)
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum ColorArg {
    /// Hash of the name's package part into Pyroscope's palette.
    Package,
    /// Hash of the whole name into the palette.
    Name,
    /// Heat by self value.
    Value,
    /// Relative change between the two sides of a diff.
    Diff,
    /// One color per track (traces).
    Track,
    /// One color per category, e.g. Chrome's `cat` (traces).
    Category,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum BackendArg {
    Vulkan,
    Gl,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            if is_broken_pipe(&e) {
                return ExitCode::SUCCESS;
            }
            eprintln!("scorch: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

fn run(cli: Cli) -> Result<()> {
    match cli.command {
        Some(Command::Render(args)) => render(args),
        Some(Command::Info { input, sample_type }) => info(&input, sample_type.as_deref()),
        Some(Command::Gen(args)) => generate(args),
        None => open(cli.open),
    }
}

fn color_arg(c: ColorArg) -> ColorMode {
    match c {
        ColorArg::Package => ColorMode::Package,
        ColorArg::Name => ColorMode::Name,
        ColorArg::Value => ColorMode::Value,
        ColorArg::Diff => ColorMode::Diff,
        ColorArg::Track => ColorMode::Track,
        ColorArg::Category => ColorMode::Category,
    }
}

fn backend_arg(b: BackendArg) -> Backend {
    match b {
        BackendArg::Vulkan => Backend::Vulkan,
        BackendArg::Gl => Backend::Gl,
    }
}

fn view_arg(v: ViewArg) -> Orientation {
    match v {
        ViewArg::Icicle => Orientation::Icicle,
        ViewArg::Flamegraph | ViewArg::Timeline => Orientation::Flame,
    }
}

fn open(a: OpenArgs) -> Result<()> {
    if !(a.screenshot_scale.is_finite() && a.screenshot_scale > 0.0 && a.screenshot_scale <= 8.0) {
        bail!("--screenshot-scale must be between 0 and 8");
    }
    let source = match a.file {
        Some(p) => {
            if !p.exists() {
                bail!("{}: no such file", p.display());
            }
            scorch::app::Source::Path(p)
        }
        None => scorch::app::Source::Demo,
    };
    scorch::app::run(
        source,
        scorch::app::AppOptions {
            backend: a.backend.map(backend_arg),
            screenshot_scale: a.screenshot_scale,
            orientation: view_arg(a.view),
            color: a.color.map(color_arg),
            size: a.size,
            preview: !a.no_preview,
        },
    )
}

fn warn(profile: &Profile) {
    for w in profile.meta.warnings.lines() {
        eprintln!("scorch: warning: {}: {w}", profile.meta.source);
    }
}

/// Loads a profile or trace from a path or `-` (standard input), recording the stages of
/// the load into `progress`; `sample_type` picks a pprof sample type and is refused for
/// other formats.
fn load_any(
    input: &Path,
    sample_type: Option<&str>,
    progress: Option<&import::Progress>,
) -> Result<import::Imported> {
    let options = import::ImportOptions {
        limits: Limits::default(),
        sample_type,
    };
    let imported = if input == Path::new("-") {
        let mut bytes = Vec::new();
        std::io::stdin()
            .read_to_end(&mut bytes)
            .context("reading standard input")?;
        import::load_any_bytes_with_options("<stdin>", &bytes, options)?
    } else {
        import::load_any_path_with_options(input, options, progress)?
    };
    let format = match &imported {
        import::Imported::Profile(p) => p.meta.format,
        import::Imported::Trace(t) => t.format,
    };
    if sample_type.is_some() && format != scorch::model::SourceFormat::Pprof {
        bail!(
            "--sample-type applies to pprof profiles; {} is {}",
            input.display(),
            format.describe()
        );
    }
    Ok(imported)
}

/// What the device thread of `scorch render` hands over: the device, a renderer (its
/// pipelines compiled, its font loaded), and how long each took.
struct DeviceReady {
    gpu: Gpu,
    renderer: Renderer,
    /// Waiting for the parse to be nearly done.
    held: Duration,
    open: Duration,
    pipelines: Duration,
}

/// The thread opening the device for `scorch render`. Opening a device (tens of
/// milliseconds on llvmpipe, loading drivers and LLVM) and compiling the pipelines do
/// not depend on the input: they run on this thread, alongside the load and the layout.
///
/// When: a large input is parsed on every core, and a third thread would only slow the
/// parsers down; what follows the parse (merging per-thread trees, finishing the tree,
/// layout, level of detail) runs mostly on one core, with the others idle. So for an
/// input of [`HOLD_BACK_MIN_BYTES`] or more the thread waits until the parsers are
/// nine tenths through, then opens the device while the rest of the load and the layout
/// run (on W1, 200 MB: about 130 ms of mostly one-core work, for 75-100 ms of opening).
/// A smaller input or standard input: at once; a large trace (its parser reports no
/// progress): once it is loaded, alongside its layout. (Drawing a first tiny frame
/// there too, so that llvmpipe compiles its shader variants before the real frame, saved
/// 10-20 ms of drawing but cost as much elsewhere, and 19 MiB: not kept.)
///
/// On every other way out (a bad input, bad options) the guard still joins the thread:
/// exiting while a driver initialises on another thread would run the driver's exit
/// handlers under it.
struct DeviceThread {
    handle: Option<std::thread::JoinHandle<Result<DeviceReady>>>,
    /// Set when the load is over: the thread waits no longer.
    go: Arc<AtomicBool>,
}

/// Inputs at least this large have the device opened near the end of their parse.
const HOLD_BACK_MIN_BYTES: u64 = 96 << 20;

impl DeviceThread {
    fn start(backend: Option<BackendArg>, progress: Arc<import::Progress>) -> Result<DeviceThread> {
        let gpu_opts = GpuOptions {
            backend: backend.map(backend_arg),
        };
        let go = Arc::new(AtomicBool::new(false));
        let go_seen = go.clone();
        let handle = std::thread::Builder::new()
            .name("scorch-device".into())
            .spawn(move || {
                let t_start = Instant::now();
                hold_back(&go_seen, &progress);
                let t0 = Instant::now();
                let gpu = Gpu::new(&gpu_opts)?;
                let open = t0.elapsed();
                let renderer = Renderer::new(&gpu, scorch::render::TARGET_FORMAT);
                Ok(DeviceReady {
                    gpu,
                    renderer,
                    held: t0 - t_start,
                    open,
                    pipelines: t0.elapsed() - open,
                })
            })
            .context("starting the device thread")?;
        Ok(DeviceThread {
            handle: Some(handle),
            go,
        })
    }

    /// The load is over: open the device now if not yet.
    fn go(&self) {
        self.go.store(true, Ordering::Release);
    }

    fn wait(mut self) -> Result<DeviceReady> {
        self.go();
        match self.handle.take().map(|h| h.join()) {
            Some(Ok(ready)) => ready,
            _ => bail!("the device thread panicked"),
        }
    }
}

/// Returns when the device should be opened (see [`DeviceThread`]): `go` is set, or the
/// input is small, or nine tenths of a large one are parsed.
fn hold_back(go: &AtomicBool, progress: &import::Progress) {
    loop {
        if go.load(Ordering::Acquire) {
            return;
        }
        let total = progress.total.load(Ordering::Relaxed);
        let done = progress.done.load(Ordering::Relaxed);
        if total > 0 && (total < HOLD_BACK_MIN_BYTES || done >= total / 10 * 9) {
            return;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
}

impl Drop for DeviceThread {
    fn drop(&mut self) {
        self.go();
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

/// `-v` output: the stages of a load as `name ms` pairs.
fn stage_list(stages: &[(&str, Duration)]) -> String {
    stages
        .iter()
        .map(|(name, d)| format!("{name} {:.1}", ms(*d)))
        .collect::<Vec<_>>()
        .join(", ")
}

fn render(a: RenderArgs) -> Result<()> {
    let t0 = Instant::now();
    let progress = Arc::new(import::Progress::default());
    let device = DeviceThread::start(a.backend, progress.clone())?;
    if a.input == Path::new("-") {
        // Nothing says how far a read of standard input is.
        device.go();
    }
    let loaded = load_any(&a.input, a.sample_type.as_deref(), Some(&progress));
    device.go();
    let profile = match loaded? {
        import::Imported::Trace(t) => return render_timeline(a, *t, t0, device),
        import::Imported::Profile(p) => *p,
    };
    if a.view == Some(ViewArg::Timeline) {
        bail!(
            "--view timeline needs a trace with timed spans (Chrome trace, Jaeger, OTLP, TiDB); {} is {}, an aggregated profile: use --view flamegraph or icicle",
            profile.meta.source,
            profile.meta.format.describe()
        );
    }
    if a.start.is_some() || a.end.is_some() || a.bands.is_some() {
        bail!("--start, --end and --bands apply to traces (--view timeline)");
    }
    warn(&profile);
    let t_load = t0.elapsed();
    let layout = flame_layout(&profile.tree);
    let t_layout = t0.elapsed();
    let opts = ExportOptions {
        width: a.width,
        height: a.height,
        scale: a.scale,
        orientation: view_arg(a.view.unwrap_or(ViewArg::Flamegraph)),
        color: a.color.map(color_arg),
        colorblind: a.colorblind,
        title: a.title,
    };
    // Check the options before waiting for the device.
    export::frame_spec(&profile, &layout, &opts)?;
    let ready = device.wait()?;
    let (gpu, mut renderer) = (ready.gpu, ready.renderer);
    let t_gpu = t0.elapsed();
    let (report, times) =
        export::render_png_with(&gpu, &mut renderer, &profile, &layout, &opts, &a.output)?;
    let t_done = t0.elapsed();
    if report.rows_cut > 0 {
        eprintln!(
            "scorch: warning: {} of {} rows did not fit in the image; pass a larger --height",
            report.rows_cut,
            layout.rows.len()
        );
    }
    if a.verbose {
        eprintln!("scorch: adapter {}", gpu.describe());
        eprintln!(
            "scorch: {} bars in {} rows; drew {} bars and {} labels in {} tile(s)",
            layout.bar_count(),
            layout.rows.len(),
            report.bars_drawn,
            report.labels,
            report.tiles
        );
        eprintln!(
            "scorch: load {:.1} ms ({}), layout {:.1} ms, waiting for the device {:.1} ms, render+png {:.1} ms",
            ms(t_load),
            stage_list(&progress.stages()),
            ms(t_layout - t_load),
            ms(t_gpu - t_layout),
            ms(t_done - t_gpu)
        );
        eprintln!(
            "scorch: render: LOD {:.1} ms, upload {:.1} ms, frame {:.1} ms, GPU draw {:.1} ms, readback {:.1} ms, png {:.1} ms, write {:.1} ms",
            ms(times.lod),
            ms(times.upload),
            ms(times.frame),
            ms(times.gpu),
            ms(times.readback),
            ms(times.png),
            ms(times.write)
        );
        eprintln!(
            "scorch: device thread, alongside the load: held back {:.1} ms, adapter+device {:.1} ms, pipelines+font {:.1} ms",
            ms(ready.held),
            ms(ready.open),
            ms(ready.pipelines)
        );
    }
    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "wrote {} ({}×{} px, {} KiB)",
        a.output.display(),
        report.width_px,
        report.height_px,
        report.png_bytes.div_ceil(1024)
    )?;
    out.flush()?;
    // The process ends right after this: freeing the tree, the layout and the device
    // (hundreds of MB in millions of column entries, and the driver's teardown) would
    // only delay the exit, by 20-30 ms on a 200 MB profile, for memory the OS reclaims
    // at once anyway. The CLI path only: the library functions free as usual.
    std::mem::forget((renderer, gpu, layout, profile));
    Ok(())
}

fn render_timeline(
    a: RenderArgs,
    trace: import::Trace,
    t0: Instant,
    device: DeviceThread,
) -> Result<()> {
    use scorch::layout::timeline::BandMode;
    if let Some(v @ (ViewArg::Flamegraph | ViewArg::Icicle)) = a.view {
        bail!(
            "{} is a trace ({}); it is drawn as a timeline, not a {}: use --view timeline",
            trace.source,
            trace.format.describe(),
            if v == ViewArg::Icicle {
                "icicle"
            } else {
                "flame graph"
            }
        );
    }
    for w in trace.spans.warnings.lines() {
        eprintln!("scorch: warning: {}: {w}", trace.source);
    }
    let t_load = t0.elapsed();
    let mode = a.bands.map(|b| match b {
        BandsArg::Tracks => BandMode::PerTrack,
        BandsArg::Tree => BandMode::OneTree,
    });
    let view = export::TraceView::new(trace, mode);
    let t_layout = t0.elapsed();
    let opts = export::TimelineExport {
        width: a.width,
        height: a.height,
        scale: a.scale,
        color: a.color.map(color_arg),
        title: a.title,
        start_ns: a.start,
        end_ns: a.end,
    };
    export::timeline_spec(&view, &opts)?;
    let ready = device.wait()?;
    let (gpu, mut renderer) = (ready.gpu, ready.renderer);
    let t_gpu = t0.elapsed();
    let report = export::render_timeline_png_with(&gpu, &mut renderer, &view, &opts, &a.output)?;
    let t_done = t0.elapsed();
    if report.rows_cut > 0 {
        eprintln!(
            "scorch: warning: {} of {} rows did not fit in the image; pass a larger --height",
            report.rows_cut,
            view.tracks.layout.rows.len()
        );
    }
    if a.verbose {
        eprintln!("scorch: adapter {}", gpu.describe());
        eprintln!(
            "scorch: {} spans in {} rows and {} bands; drew {} bars and {} labels in {} tile(s)",
            view.spans.len(),
            view.tracks.layout.rows.len(),
            view.tracks.bands.len(),
            report.bars_drawn,
            report.labels,
            report.tiles
        );
        eprintln!(
            "scorch: load {:.1} ms, layout {:.1} ms, device {:.1} ms, render+png {:.1} ms",
            ms(t_load),
            ms(t_layout - t_load),
            ms(t_gpu - t_layout),
            ms(t_done - t_gpu)
        );
    }
    writeln!(
        std::io::stdout().lock(),
        "wrote {} ({}×{} px, {} KiB)",
        a.output.display(),
        report.width_px,
        report.height_px,
        report.png_bytes.div_ceil(1024)
    )?;
    Ok(())
}

fn generate(a: GenArgs) -> Result<()> {
    use scorch::generator::{self, GenFormat, GenOptions, Limit};
    let opts = GenOptions {
        workload: a.workload,
        format: a.format.map(|f| match f {
            GenFormatArg::Folded => GenFormat::Folded,
            GenFormatArg::Perf => GenFormat::Perf,
            GenFormatArg::Chrome => GenFormat::Chrome,
            GenFormatArg::Pprof => GenFormat::Pprof,
        }),
        seed: a.seed,
        limit: a.size.map(Limit::Bytes).or(a.spans.map(Limit::Spans)),
    };
    let report = match &a.output {
        Some(path) => {
            let file = std::fs::File::create(path)
                .with_context(|| format!("{}: cannot create", path.display()))?;
            let w = std::io::BufWriter::with_capacity(1 << 20, file);
            generator::generate(&opts, w).with_context(|| format!("writing {}", path.display()))?
        }
        None => {
            let w = std::io::BufWriter::with_capacity(1 << 20, std::io::stdout().lock());
            generator::generate(&opts, w).context("writing standard output")?
        }
    };
    if let Some(path) = &a.output {
        eprintln!(
            "scorch: wrote {} ({} bytes, {} {})",
            path.display(),
            report.bytes,
            report.items,
            if a.workload.is_stacks() {
                "stacks"
            } else {
                "spans"
            }
        );
    }
    Ok(())
}

fn ms(d: std::time::Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn info(input: &Path, sample_type: Option<&str>) -> Result<()> {
    let t0 = Instant::now();
    let imported = load_any(input, sample_type, None)?;
    match imported {
        import::Imported::Profile(p) => profile_info(*p, t0),
        import::Imported::Trace(t) => trace_info(&t, t0),
    }
}

fn trace_info(t: &import::Trace, t0: Instant) -> Result<()> {
    use scorch::model::spans::SpanTree;
    let t_load = t0.elapsed();
    let s = &t.spans;
    let tree = SpanTree::build(s);
    let t_link = t0.elapsed();
    let mode = scorch::export::default_band_mode(t.format);
    let layout = scorch::layout::timeline::track_layout(s, &tree, mode);
    let t_layout = t0.elapsed();
    let lod = scorch::lod::Lod::build(&layout.layout);
    let t_lod = t0.elapsed();
    let (start, end) = s.time_range();
    let mut out = std::io::stdout().lock();
    writeln!(out, "file:     {}", t.source)?;
    writeln!(
        out,
        "format:   {}{}",
        t.format.describe(),
        if t.gzipped { " (gzip)" } else { "" }
    )?;
    writeln!(out, "spans:    {} ({} roots)", s.len(), tree.roots.len())?;
    let mut per_track = vec![0usize; s.tracks.len()];
    for &tr in &s.track {
        if let Some(c) = per_track.get_mut(tr as usize) {
            *c += 1;
        }
    }
    for (i, (tr, n)) in s.tracks.iter().zip(&per_track).enumerate() {
        let group = s.track_info(i as u32).group;
        if group.is_empty() || tr.name.starts_with(&group) {
            writeln!(out, "track:    {} ({n} spans)", tr.name)?;
        } else {
            writeln!(out, "track:    {group} / {} ({n} spans)", tr.name)?;
        }
    }
    writeln!(
        out,
        "time:     {} from the first start to the last end (origin {} ns)",
        scorch::model::units::format_duration_ns((end - start) as f64),
        s.origin_ns
    )?;
    writeln!(
        out,
        "rows:     {} ({} spans pushed down by overlapping siblings)",
        layout.layout.rows.len(),
        layout.connectors.len()
    )?;
    // Load speed: read + parse over the file's bytes (the uncompressed size when gzipped
    // is not known here, so the rate is over what was read).
    let bytes = std::fs::metadata(&t.source).map_or(0, |m| m.len());
    let rate = if bytes > 0 {
        format!(
            " ({:.0} MB/s)",
            bytes as f64 / 1e6 / t_load.as_secs_f64().max(1e-9)
        )
    } else {
        String::new()
    };
    writeln!(
        out,
        "timing:   read+parse {:.0} ms{rate}, link {:.0} ms, layout {:.0} ms, lod {:.0} ms, total {:.0} ms",
        ms(t_load),
        ms(t_link - t_load),
        ms(t_layout - t_link),
        ms(t_lod - t_layout),
        ms(t_lod)
    )?;
    // Resident CPU bytes of what the viewer keeps for the trace.
    let mem = scorch::layout::timeline::TraceMemory::of(s, &tree, &layout, lod.heap_bytes());
    let per = |b: usize| b as f64 / s.len().max(1) as f64;
    writeln!(
        out,
        "memory:   {:.1} B/span resident ({:.1} MiB): spans {:.1}, attrs {:.1}, tree {:.1}, layout {:.1} (rows {:.1}), lod {:.1}",
        per(mem.total()),
        mem.total() as f64 / (1 << 20) as f64,
        per(mem.spans),
        per(mem.attrs),
        per(mem.tree),
        per(mem.layout),
        per(mem.rows),
        per(mem.lod),
    )?;
    // What the GPU holds: one instance per span and per tier bar (all tiers are uploaded).
    let inst = std::mem::size_of::<scorch::render::bars::BarInstance>();
    let gpu = (layout.layout.bar_count() + lod.bar_count()) * inst;
    writeln!(
        out,
        "gpu:      {:.1} B/span of instances ({:.1} MiB: {inst} B per span and per LOD tier bar, {} tier bars)",
        per(gpu),
        gpu as f64 / (1 << 20) as f64,
        lod.bar_count()
    )?;
    let mut warnings = s.warnings.lines();
    if tree.cycles_broken > 0 {
        warnings.push(format!("{} parent cycles broken", tree.cycles_broken));
    }
    if warnings.is_empty() {
        writeln!(out, "warnings: none")?;
    }
    for w in warnings {
        writeln!(out, "warning:  {w}")?;
    }
    Ok(())
}

fn profile_info(profile: Profile, t0: Instant) -> Result<()> {
    let t_load = t0.elapsed();
    let layout = flame_layout(&profile.tree);
    let t_layout = t0.elapsed();
    let lod = scorch::lod::Lod::build(&layout);
    let t_lod = t0.elapsed();
    let t = &profile.tree;
    let v = &profile.values;
    let m = &profile.meta;
    let mut out = std::io::stdout().lock();
    writeln!(out, "file:     {}", m.source)?;
    writeln!(
        out,
        "format:   {}{}",
        m.format.describe(),
        if m.gzipped { " (gzip)" } else { "" }
    )?;
    let rate = v
        .sample_rate_hz
        .map(|hz| format!(" at {hz} Hz"))
        .unwrap_or_default();
    let scale = if v.ticks_per_unit > 1 {
        format!(" (fixed point: {} ticks per unit)", v.ticks_per_unit)
    } else {
        String::new()
    };
    writeln!(out, "units:    {}{rate}{scale}", v.unit.name())?;
    if let Some(st) = &m.sample_types {
        let listed: Vec<String> = st
            .names
            .iter()
            .enumerate()
            .map(|(i, n)| {
                if i == st.chosen {
                    format!("{n} (shown)")
                } else {
                    n.clone()
                }
            })
            .collect();
        writeln!(
            out,
            "values:   {}{}",
            listed.join(", "),
            if st.names.len() > 1 {
                "; pick one with --sample-type"
            } else {
                ""
            }
        )?;
    }
    let total = t.grand_total();
    let stated = match m.stated_total {
        Some(s) if s == total => format!(" (matches the stated total {s})"),
        Some(s) => format!(" (the file states {s})"),
        None => String::new(),
    };
    writeln!(
        out,
        "total:    {} = {total} ticks{stated}",
        v.format_long(total)
    )?;
    if let Some((l, r)) = m.diff_ticks {
        writeln!(
            out,
            "diff:     before {}, after {}",
            v.format_long(l),
            v.format_long(r)
        )?;
    }
    writeln!(
        out,
        "nodes:    {} call tree nodes (root included), {} bars",
        t.len(),
        layout.bar_count()
    )?;
    writeln!(
        out,
        "depth:    {} (deepest stack has {} frames)",
        t.max_depth(),
        t.max_depth()
    )?;
    writeln!(out, "names:    {} distinct", profile.names.len())?;
    if let Some(s) = &m.spy_name {
        writeln!(out, "profiler: {s}")?;
    }
    if let Some(a) = &m.app_name {
        writeln!(out, "app:      {a}")?;
    }
    let mem = t.heap_bytes() + layout.heap_bytes() + lod.heap_bytes() + profile.names.heap_bytes();
    writeln!(
        out,
        "memory:   {} KiB (tree {} KiB, layout {} KiB, LOD {} KiB, names {} KiB)",
        mem / 1024,
        t.heap_bytes() / 1024,
        layout.heap_bytes() / 1024,
        lod.heap_bytes() / 1024,
        profile.names.heap_bytes() / 1024
    )?;
    // What the CPU keeps per bar once loaded: tree + layout + LOD (names are shared).
    let per_node = (t.heap_bytes() + layout.heap_bytes() + lod.heap_bytes()) as f64;
    writeln!(
        out,
        "per node: {:.1} B resident per node (tree {:.1} + layout {:.1} + LOD {:.1}; names excluded)",
        per_node / t.len() as f64,
        t.heap_bytes() as f64 / t.len() as f64,
        layout.heap_bytes() as f64 / t.len() as f64,
        lod.heap_bytes() as f64 / t.len() as f64
    )?;
    let bars = layout.bar_count().max(1) as f64;
    let inst = std::mem::size_of::<scorch::render::bars::BarInstance>();
    let gpu = (layout.bar_count() + lod.bar_count()) * inst;
    writeln!(
        out,
        "per bar:  {:.1} B layout + LOD (the pick index is the layout's columns); GPU {:.1} B of instances ({inst} B per bar and per LOD tier bar, {} tier bars)",
        (layout.heap_bytes() + lod.heap_bytes()) as f64 / bars,
        gpu as f64 / bars,
        lod.bar_count()
    )?;
    writeln!(
        out,
        "time:     read+parse {:.1} ms, layout {:.1} ms, LOD {:.1} ms",
        ms(t_load),
        ms(t_layout - t_load),
        ms(t_lod - t_layout)
    )?;
    let warnings = m.warnings.lines();
    if warnings.is_empty() {
        writeln!(out, "warnings: none")?;
    } else {
        for w in warnings {
            writeln!(out, "warning:  {w}")?;
        }
    }
    if m.warnings.comment_lines > 0 {
        writeln!(
            out,
            "comments: {} comment lines skipped",
            m.warnings.comment_lines
        )?;
    }
    if total == 0 {
        bail!("the profile is empty");
    }
    Ok(())
}
