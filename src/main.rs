//! The `scorch` command: a thin clap layer over the library.

use anyhow::{Context, Result, bail};
use clap::{Parser, Subcommand, ValueEnum};
use scorch::color::ColorMode;
use scorch::export::{self, ExportOptions};
use scorch::import::{self, Limits};
use scorch::layout::flame_layout;
use scorch::model::Profile;
use scorch::render::{Backend, Gpu, GpuOptions};
use scorch::view::Orientation;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

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
    /// Profile to open (folded stacks or Pyroscope flamebearer JSON, optionally gzipped)
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
    /// Print what a profile file contains: format, units, totals, nodes, depth, warnings.
    Info {
        /// Profile file (folded stacks or Pyroscope flamebearer JSON, optionally gzipped);
        /// `-` reads standard input.
        input: PathBuf,
    },
}

#[derive(clap::Args, Debug)]
struct RenderArgs {
    /// Profile file (folded stacks or Pyroscope flamebearer JSON, optionally gzipped);
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
    /// Flame graph (root at the bottom) or icicle (root at the top).
    #[arg(long, value_enum, default_value_t = ViewArg::Flamegraph)]
    view: ViewArg,
    /// Bar colors [default: diff for differential profiles, package otherwise].
    #[arg(long, value_enum)]
    color: Option<ColorArg>,
    /// Blue-grey-red diff colors instead of green-grey-red.
    #[arg(long)]
    colorblind: bool,
    /// Title line [default: the input's file name].
    #[arg(long)]
    title: Option<String>,
    /// Graphics API [default: WGPU_BACKEND, or the best available].
    #[arg(long, value_enum)]
    backend: Option<BackendArg>,
    /// Print timings, the adapter and what was drawn.
    #[arg(short, long)]
    verbose: bool,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum ViewArg {
    Flamegraph,
    Icicle,
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
        Some(Command::Info { input }) => info(&input),
        None => open(cli.open),
    }
}

fn color_arg(c: ColorArg) -> ColorMode {
    match c {
        ColorArg::Package => ColorMode::Package,
        ColorArg::Name => ColorMode::Name,
        ColorArg::Value => ColorMode::Value,
        ColorArg::Diff => ColorMode::Diff,
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
        ViewArg::Flamegraph => Orientation::Flame,
        ViewArg::Icicle => Orientation::Icicle,
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
        },
    )
}

fn load(input: &Path) -> Result<Profile> {
    if input == Path::new("-") {
        let mut bytes = Vec::new();
        std::io::stdin()
            .read_to_end(&mut bytes)
            .context("reading standard input")?;
        Ok(import::load_bytes("<stdin>", &bytes, Limits::default())?)
    } else {
        Ok(import::load_path(input)?)
    }
}

fn warn(profile: &Profile) {
    for w in profile.meta.warnings.lines() {
        eprintln!("scorch: warning: {}: {w}", profile.meta.source);
    }
}

fn render(a: RenderArgs) -> Result<()> {
    let t0 = Instant::now();
    let profile = load(&a.input)?;
    warn(&profile);
    let t_load = t0.elapsed();
    let layout = flame_layout(&profile.tree);
    let t_layout = t0.elapsed();
    let opts = ExportOptions {
        width: a.width,
        height: a.height,
        scale: a.scale,
        orientation: view_arg(a.view),
        color: a.color.map(color_arg),
        colorblind: a.colorblind,
        title: a.title,
    };
    // Check the options before paying for a device.
    export::frame_spec(&profile, &layout, &opts)?;
    let gpu = Gpu::new(&GpuOptions {
        backend: a.backend.map(backend_arg),
    })?;
    let t_gpu = t0.elapsed();
    let report = export::render_png(&gpu, &profile, &layout, &opts, &a.output)?;
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
            "scorch: load {:.1} ms, layout {:.1} ms, device {:.1} ms, render+png {:.1} ms",
            ms(t_load),
            ms(t_layout - t_load),
            ms(t_gpu - t_layout),
            ms(t_done - t_gpu)
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
    Ok(())
}

fn ms(d: std::time::Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn info(input: &Path) -> Result<()> {
    let imported = if input == Path::new("-") {
        let mut bytes = Vec::new();
        std::io::stdin()
            .read_to_end(&mut bytes)
            .context("reading standard input")?;
        import::load_any_bytes("<stdin>", &bytes, Limits::default())?
    } else {
        import::load_any_path(input)?
    };
    match imported {
        import::Imported::Profile(p) => profile_info(*p),
        import::Imported::Trace(t) => trace_info(&t),
    }
}

fn trace_info(t: &import::Trace) -> Result<()> {
    use scorch::model::spans::SpanTree;
    let s = &t.spans;
    let tree = SpanTree::build(s);
    let layout = scorch::layout::timeline::timeline_layout(s, &tree);
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
        layout.rows.len(),
        layout.connectors.len()
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

fn profile_info(profile: Profile) -> Result<()> {
    let layout = flame_layout(&profile.tree);
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
    let mem = t.heap_bytes() + layout.heap_bytes() + profile.names.heap_bytes();
    writeln!(
        out,
        "memory:   {} KiB (tree {} KiB, layout {} KiB, names {} KiB)",
        mem / 1024,
        t.heap_bytes() / 1024,
        layout.heap_bytes() / 1024,
        profile.names.heap_bytes() / 1024
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
