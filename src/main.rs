//! The `scorch` command: a thin clap layer over the library.

use anyhow::{Context, Result, bail};
use clap::{Parser, Subcommand, ValueEnum};
use scorch::color::ColorMode;
use scorch::export::{self, ExportOptions, ExportView};
use scorch::geometry::Orientation;
use scorch::import::{self, Limits, Progress};
use scorch::layout::timeline::BandMode;
use scorch::model::Document;
use scorch::model::functions::SortKey;
use scorch::model::transform;
use scorch::render::warmup::{Hold, Warmup};
use scorch::render::{Backend, GpuOptions};
use scorch::summary::{ProfileSummary, SamplesSummary, TraceSummary};
use scorch::view::ViewKind;
use scorch::view::draw::LabelFit;
use scorch::view::top::{Top, TopFormat};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
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
    /// The view the window opens in (a trace of spans always opens in its timeline; a
    /// sampled input opens in any).
    #[arg(long, value_enum, default_value_t = ViewArg::Flamegraph)]
    view: ViewArg,
    /// Initial bar colors [default: diff for differential profiles, package otherwise].
    #[arg(long, value_enum)]
    color: Option<ColorMode>,
    /// Graphics API [default: WGPU_BACKEND, or the best available].
    #[arg(long, value_enum)]
    backend: Option<BackendArg>,
    /// Initial window size in logical pixels, WIDTHxHEIGHT.
    #[arg(long, default_value = "1280x800", value_parser = parse_size)]
    size: (u32, u32),
    /// Load big files whole before showing anything, without a preview first.
    #[arg(long)]
    no_preview: bool,
    /// Which part of a long name a cut label keeps (also in the right-click menu).
    #[arg(long, value_enum, default_value_t = FitArg::Head)]
    fit: FitArg,
    /// pprof: the sample type to show, by name (`alloc_space`), type/unit or index
    /// [default: the profile's default sample type, else its last].
    #[arg(long)]
    sample_type: Option<String>,
    #[command(flatten)]
    samples: SampleArgs,
    #[command(flatten)]
    limits: InputArgs,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum FitArg {
    /// The start of the name: `com.example.Serv…`.
    Head,
    /// The end of the name: `…Service.handle`.
    Tail,
}

fn fit_arg(f: FitArg) -> LabelFit {
    match f {
        FitArg::Head => LabelFit::Head,
        FitArg::Tail => LabelFit::Tail,
    }
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
    /// Print the function table: self and total per function, recursion counted once, in
    /// the file's units (like `pprof -top`).
    Top(TopArgs),
    /// Compare two profiles (any formats: a pprof against a folded file is fine), or
    /// runs against runs (`--base a1 a2 … --vs b1 b2 …`): the window on their difference,
    /// or `-o diff.png`.
    Diff(DiffArgs),
    /// Print what a profile file contains: format, units, totals, nodes, depth, warnings.
    Info {
        /// Profile file (folded stacks, perf script, Pyroscope flamebearer JSON or pprof, optionally gzipped);
        /// `-` reads standard input.
        input: PathBuf,
        /// pprof: the sample type to show, by name (`alloc_space`), type/unit or index
        /// [default: the profile's default sample type, else its last].
        #[arg(long)]
        sample_type: Option<String>,
        #[command(flatten)]
        samples: SampleArgs,
        #[command(flatten)]
        limits: InputArgs,
    },
}

/// How two profiles are matched (inferno-diff-folded's options).
#[derive(clap::Args, Debug, Default)]
struct MatchArgs {
    /// Scale BEFORE to AFTER's total (each stack rounded down, as inferno-diff-folded).
    #[arg(long)]
    normalize: bool,
    /// Addresses and other hex noise in names (`0x7f3a…`) become `0x...`.
    #[arg(long)]
    strip_hex: bool,
    /// Keep the suffixes that differ between recordings (`_[k]` annotations, `-PID/TID`
    /// after a command); by default they are ignored.
    #[arg(long)]
    keep_suffixes: bool,
}

impl MatchArgs {
    fn options(&self) -> scorch::model::compare::CompareOptions {
        scorch::model::compare::CompareOptions {
            normalize: self.normalize,
            strip_hex: self.strip_hex,
            keep_suffixes: self.keep_suffixes,
        }
    }
}

#[derive(clap::Args, Debug)]
struct DiffArgs {
    /// BEFORE and AFTER (two files), unless --base and --vs name the runs.
    files: Vec<PathBuf>,
    /// Many runs against many: the base runs.
    #[arg(long, num_args = 1.., value_name = "FILE")]
    base: Vec<PathBuf>,
    /// Many runs against many: the runs compared with the base.
    #[arg(long, num_args = 1.., value_name = "FILE")]
    vs: Vec<PathBuf>,
    /// Write the difference to this PNG instead of opening the window.
    #[arg(short, long)]
    output: Option<PathBuf>,
    /// The view: a flame graph of the difference, an icicle, the table (sorted by the
    /// change), both, or the two sides side by side.
    #[arg(long, value_enum)]
    view: Option<DiffViewArg>,
    /// Image width in logical pixels (with -o).
    #[arg(long, default_value_t = export::DEFAULT_WIDTH)]
    width: u32,
    /// Image height in logical pixels (with -o) [default: what the profile needs].
    #[arg(long)]
    height: Option<u32>,
    /// Blue-grey-red diff colors instead of green-grey-red.
    #[arg(long)]
    colorblind: bool,
    #[command(flatten)]
    matching: MatchArgs,
    /// pprof: the sample type to compare.
    #[arg(long)]
    sample_type: Option<String>,
    #[command(flatten)]
    samples: SampleArgs,
    #[command(flatten)]
    limits: InputArgs,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum DiffViewArg {
    Flamegraph,
    Icicle,
    Table,
    Both,
    SideBySide,
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
    color: Option<ColorMode>,
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
    /// Flame graphs: which part of a long name a cut label keeps.
    #[arg(long, value_enum, default_value_t = FitArg::Head)]
    fit: FitArg,
    /// --view sandwich: the function in the middle, a regex or text as the search takes
    /// it (of those it matches, the one with the largest total) [default: the function
    /// with the most self time].
    #[arg(long)]
    function: Option<String>,
    /// pprof: the sample type to show, by name (`alloc_space`), type/unit or index
    /// [default: the profile's default sample type, else its last].
    #[arg(long)]
    sample_type: Option<String>,
    /// A call-tree transform applied to a profile before drawing, KIND:NAME (merge, focus,
    /// focus-subtree with a `;`-separated call path, collapse-recursion,
    /// collapse-package, drop); repeat to apply several in order.
    #[arg(long = "transform", value_name = "KIND:NAME")]
    transforms: Vec<String>,
    /// Graphics API [default: WGPU_BACKEND, or the best available].
    #[arg(long, value_enum)]
    backend: Option<BackendArg>,
    /// Print timings, the adapter and what was drawn.
    #[arg(short, long)]
    verbose: bool,
    #[command(flatten)]
    samples: SampleArgs,
    #[command(flatten)]
    limits: InputArgs,
}

#[derive(clap::Args, Debug)]
struct TopArgs {
    /// Profile file (folded stacks, perf script, Pyroscope flamebearer JSON or pprof,
    /// optionally gzipped); `-` reads standard input.
    input: PathBuf,
    /// Sort by (largest first; names A to Z) [default: self, or change for a diff].
    #[arg(long, value_enum)]
    sort: Option<SortArg>,
    /// Print only the first N functions.
    #[arg(short = 'n', long)]
    n: Option<usize>,
    /// Aligned text for reading, or TSV/CSV (a header line, exact values) for scripts.
    #[arg(long, value_enum, default_value_t = FormatArg::Text)]
    format: FormatArg,
    /// pprof: the sample type to show, by name (`alloc_space`), type/unit or index
    /// [default: the profile's default sample type, else its last].
    #[arg(long)]
    sample_type: Option<String>,
    /// A call-tree transform, KIND:NAME (merge, focus, focus-subtree with a `;`-separated
    /// call path, collapse-recursion, collapse-package, drop); repeat to apply several in
    /// order.
    #[arg(long = "transform", value_name = "KIND:NAME")]
    transforms: Vec<String>,
    /// Compare with this profile: before, after and the change per function (sorted by
    /// the change).
    #[arg(long, value_name = "BEFORE")]
    base: Option<PathBuf>,
    #[command(flatten)]
    matching: MatchArgs,
    #[command(flatten)]
    samples: SampleArgs,
    #[command(flatten)]
    limits: InputArgs,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum SortArg {
    #[value(name = "self")]
    SelfTicks,
    Total,
    Nodes,
    Name,
    Change,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum FormatArg {
    Text,
    Tsv,
    Csv,
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
    /// The heaviest child first at every level (speedscope's left heavy; profiles).
    LeftHeavy,
    /// One row per function: self, total, shares, node count (profiles).
    Table,
    /// The table beside the flame graph; --function selects a row and lights its bars.
    Both,
    /// One function (--function) between its callers and its callees (profiles).
    Sandwich,
    /// Spans on a time axis: traces, and sampled inputs in time order.
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
            eprintln!("scorch: {}", message(&e));
            ExitCode::FAILURE
        }
    }
}

/// The error and its causes, `: `-separated, leaving out a cause its parent's message
/// already ends with (an importer's message quotes the operating system's error).
fn message(e: &anyhow::Error) -> String {
    let mut out = String::new();
    for cause in e.chain() {
        let text = cause.to_string();
        if out.ends_with(&text) {
            continue;
        }
        if !out.is_empty() {
            out.push_str(": ");
        }
        out.push_str(&text);
    }
    out
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
        Some(Command::Info {
            input,
            sample_type,
            samples,
            limits,
        }) => info(&input, sample_type.as_deref(), &samples, &limits),
        Some(Command::Top(args)) => top(args),
        Some(Command::Diff(args)) => diff(args),
        Some(Command::Gen(args)) => generate(args),
        None => open(cli.open),
    }
}

fn gpu_options(b: Option<BackendArg>) -> GpuOptions {
    GpuOptions {
        backend: b.map(|b| match b {
            BackendArg::Vulkan => Backend::Vulkan,
            BackendArg::Gl => Backend::Gl,
        }),
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
            // A screenshot reopens its source; when that is gone, say what it showed.
            if let Ok(Some(state)) = scorch::view::shot::read_state_file(&p)
                && !state.source.is_empty()
                && !std::path::Path::new(&state.source).exists()
            {
                bail!(
                    "{}: the profile this screenshot shows is gone. The screenshot recorded:\n{}",
                    p.display(),
                    state.describe()
                );
            }
            scorch::app::Source::Path(p)
        }
        None => scorch::app::Source::Demo,
    };
    scorch::app::run(
        source,
        scorch::app::AppOptions {
            backend: gpu_options(a.backend).backend,
            screenshot_scale: a.screenshot_scale,
            orientation: match a.view {
                ViewArg::Icicle => Orientation::Icicle,
                _ => Orientation::Flame,
            },
            view: Some(match a.view {
                ViewArg::Flamegraph => ViewKind::FLAME_GRAPH,
                ViewArg::Icicle => ViewKind::ICICLE,
                ViewArg::LeftHeavy => ViewKind::LEFT_HEAVY,
                ViewArg::Table => ViewKind::TABLE,
                ViewArg::Both => ViewKind::BOTH,
                ViewArg::Sandwich => ViewKind::SANDWICH,
                ViewArg::Timeline => ViewKind::TIMELINE,
            }),
            color: a.color,
            size: a.size,
            preview: !a.no_preview,
            fit: fit_arg(a.fit),
            choice: import_choice(a.sample_type, a.samples, &a.limits),
        },
    )
}

/// `-v` output: the stages of a load as `name ms` pairs.
fn stage_list(stages: &[(&str, Duration)]) -> String {
    stages
        .iter()
        .map(|(name, d)| format!("{name} {:.1}", ms(*d)))
        .collect::<Vec<_>>()
        .join(", ")
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// The window's import options (owned: its loader runs on a thread of its own).
fn import_choice(
    sample_type: Option<String>,
    samples: SampleArgs,
    input: &InputArgs,
) -> scorch::import::ImportChoice {
    scorch::import::ImportChoice {
        sample_type,
        event: samples.event,
        pids: samples.pid,
        tids: samples.tid,
        max_gap_ns: samples.max_gap,
        max_input: input.max_input,
    }
}

fn import_options<'a>(
    sample_type: Option<&'a str>,
    samples: &'a SampleArgs,
    input: &InputArgs,
) -> import::ImportOptions<'a> {
    import::ImportOptions {
        limits: Limits::default().with_max_input(input.max_input),
        sample_type,
        samples: import::sampled::SampleOptions {
            event: samples.event.as_deref(),
            pids: &samples.pid,
            tids: &samples.tid,
            max_gap_ns: samples.max_gap,
        },
    }
}

/// How much of an input may be held in memory.
#[derive(clap::Args, Debug, Default)]
struct InputArgs {
    /// Largest input held in memory: decompressed gzip data, or what is read from standard
    /// input, a pipe or a device (`500M`, `2G`) [default: a quarter of the memory available].
    #[arg(long, value_name = "SIZE", value_parser = import::limits::parse_size)]
    max_input: Option<u64>,
}

/// Options of inputs with time-ordered samples (perf script, .cpuprofile, speedscope,
/// Firefox profiles, Chrome traces with CPU samples).
#[derive(clap::Args, Debug, Default)]
struct SampleArgs {
    /// The event to show, for inputs with several (`perf script` of `cpu-clock` and
    /// `sched:sched_switch`) [default: the first in the file].
    #[arg(long)]
    event: Option<String>,
    /// Only samples of these process ids (comma-separated, as inferno's --pid).
    #[arg(long, value_delimiter = ',')]
    pid: Vec<i64>,
    /// Only samples of these thread ids (comma-separated).
    #[arg(long, value_delimiter = ',')]
    tid: Vec<i64>,
    /// Time order: a sample further than this from its thread's previous one ends every
    /// open span (`10ms`, `500us`) [default: 4 median sampling intervals].
    #[arg(long, value_parser = parse_time)]
    max_gap: Option<u64>,
}

fn render(a: RenderArgs) -> Result<()> {
    let t0 = Instant::now();
    let progress = Arc::new(Progress::default());
    // The device opens alongside the load (near its end for a big input; at once for
    // standard input, whose size nothing tells).
    let hold = if a.input == Path::new("-") {
        Hold::No
    } else {
        Hold::UntilParsed(progress.clone())
    };
    let warmup = Warmup::start(
        gpu_options(a.backend),
        None,
        hold,
        Some(export::prime),
        || {},
    )
    .context("starting the device thread")?;
    let loaded = import::load_input(
        &a.input,
        import_options(a.sample_type.as_deref(), &a.samples, &a.limits),
        Some(&progress),
    );
    warmup.release();
    let loaded = transformed(loaded?, &a.transforms)?;
    let doc = Document::from(loaded);
    for w in doc.warnings() {
        eprintln!("scorch: warning: {}: {w}", doc.source());
    }
    let t_load = t0.elapsed();
    let opts = ExportOptions {
        width: a.width,
        height: a.height,
        scale: a.scale,
        view: a.view.map(|v| match v {
            ViewArg::Flamegraph => ExportView::FlameGraph,
            ViewArg::Icicle => ExportView::Icicle,
            ViewArg::LeftHeavy => ExportView::LeftHeavy,
            ViewArg::Table => ExportView::Table,
            ViewArg::Both => ExportView::Both,
            ViewArg::Sandwich => ExportView::Sandwich,
            ViewArg::Timeline => ExportView::Timeline,
        }),
        color: a.color,
        colorblind: a.colorblind,
        // A transformed profile says so in its title: `file · focus f › merge g`.
        title: a.title.clone().or_else(|| {
            let ts = transform::parse_all(&a.transforms).ok()?;
            let crumbs: Vec<String> = ts.iter().map(|t| t.label()).collect();
            (!crumbs.is_empty()).then(|| {
                let file = a.input.file_name().unwrap_or_default().to_string_lossy();
                format!("{file} · {}", crumbs.join(" › "))
            })
        }),
        start_ns: a.start,
        end_ns: a.end,
        bands: a.bands.map(|b| match b {
            BandsArg::Tracks => BandMode::PerTrack,
            BandsArg::Tree => BandMode::OneTree,
        }),
        fit: fit_arg(a.fit),
        function: a.function.clone(),
    };
    // Checked and laid out before waiting for the device.
    let view = export::export_view(&doc, &opts)?;
    let t_layout = t0.elapsed();
    let ready = warmup.wait()?;
    let (gpu, mut renderer) = (ready.gpu, ready.renderer);
    let t_gpu = t0.elapsed();
    let (report, times) = export::render_png_with(&gpu, &mut renderer, &*view, &a.output)?;
    let t_done = t0.elapsed();
    if report.rows_cut > 0 {
        eprintln!(
            "scorch: warning: {} of {} rows did not fit in the image; pass a larger --height",
            report.rows_cut, report.rows
        );
    }
    if a.verbose {
        let what: Vec<String> = view.bar_sources().iter().map(|s| s.describe()).collect();
        eprintln!("scorch: adapter {}", gpu.describe());
        eprintln!(
            "scorch: {} in {} rows; drew {} bars and {} labels in {} tile(s)",
            what.join(", "),
            report.rows,
            report.bars_drawn,
            report.labels,
            report.tiles
        );
        eprintln!(
            "scorch: load {:.1} ms ({}), layout+LOD {:.1} ms, waiting for the device {:.1} ms, render+png {:.1} ms",
            ms(t_load),
            stage_list(&progress.stages()),
            ms(t_layout - t_load),
            ms(t_gpu - t_layout),
            ms(t_done - t_gpu)
        );
        eprintln!(
            "scorch: render: upload {:.1} ms, frame {:.1} ms, GPU draw {:.1} ms, readback {:.1} ms, png {:.1} ms, write {:.1} ms",
            ms(times.upload),
            ms(times.frame),
            ms(times.gpu),
            ms(times.readback),
            ms(times.png),
            ms(times.write)
        );
        eprintln!(
            "scorch: device thread, alongside the load: held back {:.1} ms, adapter+device {:.1} ms, pipelines+font {:.1} ms, first draws {:.1} ms",
            ms(ready.held),
            ms(ready.open),
            ms(ready.pipelines),
            ms(ready.primed)
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
    std::mem::forget((renderer, gpu, view, doc));
    Ok(())
}

fn diff(a: DiffArgs) -> Result<()> {
    let inputs = match (a.files.as_slice(), a.base.is_empty(), a.vs.is_empty()) {
        ([before, after], true, true) => scorch::import::compare::CompareInputs {
            before: vec![before.clone()],
            after: vec![after.clone()],
            options: a.matching.options(),
        },
        ([], false, false) => {
            if a.base.len() < 2 || a.vs.len() < 2 {
                bail!("--base and --vs need at least two runs each (a test needs a spread)");
            }
            scorch::import::compare::CompareInputs {
                before: a.base.clone(),
                after: a.vs.clone(),
                options: a.matching.options(),
            }
        }
        _ => bail!("scorch diff takes BEFORE AFTER, or --base RUN… --vs RUN…"),
    };
    for p in inputs.before.iter().chain(&inputs.after) {
        if !p.exists() {
            bail!("{}: no such file", p.display());
        }
    }
    let kind = a.view.map(|v| match v {
        DiffViewArg::Flamegraph => ViewKind::FLAME_GRAPH,
        DiffViewArg::Icicle => ViewKind::ICICLE,
        DiffViewArg::Table => ViewKind::TABLE,
        DiffViewArg::Both => ViewKind::BOTH,
        DiffViewArg::SideBySide => ViewKind::SIDE_BY_SIDE,
    });
    let Some(output) = a.output else {
        return scorch::app::run(
            scorch::app::Source::Compare(inputs),
            scorch::app::AppOptions {
                view: kind,
                orientation: match a.view {
                    Some(DiffViewArg::Icicle) => Orientation::Icicle,
                    _ => Orientation::Flame,
                },
                choice: import_choice(a.sample_type, a.samples, &a.limits),
                ..scorch::app::AppOptions::default()
            },
        );
    };
    let opts = import_options(a.sample_type.as_deref(), &a.samples, &a.limits);
    let p = scorch::import::compare::load_comparison(&inputs, opts, None)?;
    for w in p.meta.warnings.lines() {
        eprintln!("scorch: warning: {w}");
    }
    let doc = Document::Profile(Arc::new(p));
    let eo = ExportOptions {
        width: a.width,
        height: a.height,
        view: a.view.map(|v| match v {
            DiffViewArg::Flamegraph => ExportView::FlameGraph,
            DiffViewArg::Icicle => ExportView::Icicle,
            DiffViewArg::Table => ExportView::Table,
            DiffViewArg::Both => ExportView::Both,
            DiffViewArg::SideBySide => ExportView::SideBySide,
        }),
        colorblind: a.colorblind,
        title: Some(inputs.title()),
        ..ExportOptions::default()
    };
    let gpu = scorch::render::Gpu::new(&GpuOptions::default())?;
    let report = export::render_png(&gpu, &doc, &eo, &output)?;
    println!(
        "wrote {} ({}×{} px, {} KiB)",
        output.display(),
        report.width_px,
        report.height_px,
        report.png_bytes.div_ceil(1024)
    );
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

fn info(
    input: &Path,
    sample_type: Option<&str>,
    samples: &SampleArgs,
    limits: &InputArgs,
) -> Result<()> {
    let t0 = Instant::now();
    let imported = import::load_input(input, import_options(sample_type, samples, limits), None)?;
    let load = t0.elapsed();
    let mut out = std::io::stdout().lock();
    match imported {
        import::Imported::Profile(p) => {
            let s = ProfileSummary::of(&p, load);
            write!(out, "{s}")?;
            if let Some(sampled) = &p.meta.sampled {
                // The profile's lines above gave the warnings.
                let mut s = SamplesSummary::of(sampled);
                s.warnings.clear();
                write!(out, "{s}")?;
            }
            if s.total == 0 {
                bail!(
                    "{}: the profile is empty: {}",
                    input.display(),
                    why_empty(&p)
                );
            }
        }
        imported @ import::Imported::Trace(_) => {
            let t1 = Instant::now();
            let Document::Trace(trace) = Document::from(imported) else {
                unreachable!("a trace imports as a trace")
            };
            write!(out, "{}", TraceSummary::of(&trace, load, t1.elapsed()))?;
            if let Some(sampled) = &trace.sampled {
                write!(out, "{}", SamplesSummary::of(sampled))?;
            }
        }
    }
    Ok(())
}

/// Why a loaded profile totals 0: its samples all weigh 0, or it has none.
fn why_empty(p: &scorch::model::Profile) -> String {
    let Some(sampled) = &p.meta.sampled else {
        return "no stack has a nonzero value".to_string();
    };
    let s = &sampled.samples;
    let event = sampled.selection.event;
    let name = s.events.get(event as usize).map_or("", |e| e.name.as_str());
    match s.count_of(event) {
        0 => format!("no {name} samples"),
        1 => format!("its one {name} sample has a weight of 0"),
        n => format!("every one of its {n} {name} samples has a weight of 0"),
    }
}

/// `imported` with the `--transform` specs applied in order (profiles only).
fn transformed(imported: import::Imported, specs: &[String]) -> Result<import::Imported> {
    if specs.is_empty() {
        return Ok(imported);
    }
    let ts = transform::parse_all(specs).map_err(|e| anyhow::anyhow!("--transform {e}"))?;
    match imported {
        import::Imported::Profile(p) => {
            let rule = scorch::color::package_rule(p.meta.spy_name.as_deref());
            let out = transform::apply_all(&p, &ts, &rule)
                .with_context(|| format!("{}: --transform", p.meta.source))?;
            Ok(import::Imported::Profile(Box::new(out)))
        }
        import::Imported::Trace(t) => bail!(
            "{}: --transform applies to call trees (profiles), and this is a trace of timed spans",
            t.source
        ),
    }
}

/// A trace with CPU samples as the profile of its samples (for `top`); anything else as
/// it is.
fn sampled_profile(imported: import::Imported) -> import::Imported {
    match imported {
        import::Imported::Trace(t) if t.samples.is_some() => {
            match Document::from(import::Imported::Trace(t)).as_profile() {
                Some(p) => import::Imported::Profile(Box::new((*p).clone())),
                None => unreachable!("a trace with samples aggregates them"),
            }
        }
        other => other,
    }
}

fn top(a: TopArgs) -> Result<()> {
    let imported = import::load_input(
        &a.input,
        import_options(a.sample_type.as_deref(), &a.samples, &a.limits),
        None,
    )?;
    let imported = sampled_profile(imported);
    let imported = transformed(imported, &a.transforms)?;
    let imported = match (&a.base, imported) {
        (Some(base), import::Imported::Profile(after)) => {
            let opts = import_options(a.sample_type.as_deref(), &a.samples, &a.limits);
            let before = scorch::import::compare::load_profile(base, opts, None)?;
            let before =
                match transformed(import::Imported::Profile(Box::new(before)), &a.transforms)? {
                    import::Imported::Profile(p) => *p,
                    import::Imported::Trace(_) => unreachable!("a profile stays a profile"),
                };
            let d = scorch::model::compare::diff_profiles(&before, &after, a.matching.options())
                .map_err(|_| anyhow::anyhow!("the compared totals exceed 2^64 - 1"))?;
            import::Imported::Profile(Box::new(d))
        }
        (_, i) => i,
    };
    let import::Imported::Profile(p) = imported else {
        bail!(
            "{}: scorch top lists the functions of a profile; this is a trace of timed spans",
            a.input.display()
        );
    };
    for w in p.meta.warnings.lines() {
        eprintln!("scorch: warning: {}: {w}", p.meta.source);
    }
    let sort = a.sort.map(|s| match s {
        SortArg::SelfTicks => SortKey::SelfTicks,
        SortArg::Total => SortKey::Total,
        SortArg::Nodes => SortKey::Nodes,
        SortArg::Name => SortKey::Name,
        SortArg::Change => SortKey::Change,
    });
    let format = match a.format {
        FormatArg::Text => TopFormat::Text,
        FormatArg::Tsv => TopFormat::Tsv,
        FormatArg::Csv => TopFormat::Csv,
    };
    let table = Top::of(&p, sort, a.n, format);
    let mut out = std::io::stdout().lock();
    write!(out, "{table}")?;
    out.flush()?;
    Ok(())
}
