//! The frame benchmark: a scripted zoom of 64 wheel steps, from the whole trace down to
//! one nanosecond across the graph and back out, drawn offscreen, on W5-like timelines
//! (TARGETS.md: spans in 50 rows, every one narrower than a pixel at the full view).
//!
//! Per frame it records the CPU time to build and encode the frame up to the submit (the
//! view's draw data: visible rows, tier choice, binary searches, labels, axis; then
//! `FrameStats::encode_ms`: uniforms, text preparation, encoding), the GPU time of the pass from timestamp queries where the adapter has them,
//! and the wall time from the start of the frame until the GPU is done. It prints p50 and
//! p99 of each per size and span count, the same frames' CPU time on this thread from the
//! start of the frame through the submit (`thread CPU`: wall time less the time other
//! threads had the cores), the mean time of the view's part (`compose`:
//! the draw data, labels included), and the CPU and GPU bytes per span.
//!
//! ```text
//! cargo bench --bench frames                      # 1 M and 10 M spans, 1080p and 4K
//! cargo bench --bench frames -- --spans 100M      # the 100 M case (about 12 GB)
//! cargo bench --bench frames -- --spans 1M --sizes 1920x1080
//! cargo bench --bench frames -- --rounds 4        # the zoom in and out four times: p99
//!                                                 # of 256 frames, not the 2nd worst of 64
//! FRAMES_NO_LABELS=1 cargo bench --bench frames   # the same frames without span labels
//! FRAMES_ALL_LABELS=1 cargo bench --bench frames  # every label in every frame
//! FRAMES_SETTLE_MS=20000 cargo bench --bench frames -- --spans 100M  # first frame 20 s
//!                                                 # after the upload
//! FRAMES_WARM_MS=3000 cargo bench --bench frames  # 3 s of untimed frames first, so that
//!                                                 # a real GPU is at its working clock
//! ```
//!
//! The frames are drawn as the window draws them while the view moves: new text shaped
//! for at most `LABEL_SHAPING`, and labels placed widest bar first while the frame's
//! expected end stays within `LABEL_PLACING` (`view::labels`); what a frame leaves, the
//! window's frame at rest draws. The last columns say how many frames left labels, the
//! most bars one left, and what share of a frame at rest's labels those frames placed
//! (the same zoom replayed, untimed). `FRAMES_ALL_LABELS` draws every label in every
//! frame, as an export or a window at rest does.
//!
//! `FRAMES_NO_LABELS` separates the cost of the frame's geometry (tier choice, binary
//! searches, draws) from the label layout, which dominates the CPU p99.

use scorch::color::ColorMode;
use scorch::layout::timeline::{Band, BandMode, TrackLayout};
use scorch::layout::{Layout, Row};
use scorch::model::spans::{SpanSet, SpanTree, Track};
use scorch::model::{NO_PARENT, SourceFormat, Trace};
use scorch::pick::pick_span;
use scorch::render::{Gpu, GpuOptions, GpuTimer, Renderer, Scenes, TARGET_FORMAT, Tile};
use scorch::view::timeline::TimelineView;
use scorch::view::{Purpose, View, ViewOptions, Viewport, compose};
use std::sync::Arc;
use std::time::Instant;

const ROWS: usize = 50;
const STEPS: usize = 64;

fn parse_count(s: &str) -> Option<usize> {
    let s = s.trim();
    let (num, mul) = match s.chars().last()? {
        'M' | 'm' => (&s[..s.len() - 1], 1_000_000.0),
        'K' | 'k' => (&s[..s.len() - 1], 1_000.0),
        _ => (s, 1.0),
    };
    num.parse::<f64>().ok().map(|v| (v * mul) as usize)
}

/// A W5-like trace: `n` spans in 50 rows, back to back with small gaps, 1000 names.
fn w5(n: usize) -> (SpanSet, TrackLayout) {
    let mut set = SpanSet::default();
    let names: Vec<_> = (0..1000)
        .map(|i| set.names.intern(&format!("task::step_{i}")))
        .collect();
    set.tracks.push(Track { name: "W5".into() });
    let per_row = n.div_ceil(ROWS);
    let mut rows = Vec::with_capacity(ROWS);
    let mut seed = 0x5eed_u64;
    set.start_ns.reserve_exact(n);
    set.dur_ns.reserve_exact(n);
    set.parent.reserve_exact(n);
    set.name.reserve_exact(n);
    set.track.reserve_exact(n);
    let mut row_of = Vec::with_capacity(n);
    for r in 0..ROWS {
        let mut row = Row::default();
        let mut t = (r as u64) * 13;
        for _ in 0..per_row.min(n - set.len()) {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let dur = 40 + (seed >> 58);
            let name = names[(seed >> 40) as usize % names.len()];
            let i = set.start_ns.len() as u32;
            set.start_ns.push(t);
            set.dur_ns.push(dur);
            set.parent.push(NO_PARENT);
            set.name.push(name);
            set.track.push(0);
            row.x0.push(t);
            row.x1.push(t + dur);
            row.name.push(name);
            row.node.push(i);
            row_of.push(r as u32);
            t += dur + 10 + (seed >> 61);
        }
        rows.push(row);
    }
    let total = rows
        .iter()
        .filter_map(|r| r.x1.last().copied())
        .max()
        .unwrap_or(1);
    let tl = TrackLayout {
        layout: Layout {
            rows,
            total_ticks: total,
        },
        row_of,
        bands: vec![Band {
            name: "W5".into(),
            track: Some(0),
            first_row: 0,
            rows: ROWS as u32,
            spans: n as u64,
        }],
        connectors: Vec::new(),
        parent: Vec::new(),
    };
    (set, tl)
}

/// This thread's CPU time in ms (`CLOCK_THREAD_CPUTIME_ID`): the frame's own work, without
/// the time the scheduler gave other threads (llvmpipe's rasterizers, other processes on
/// a small machine) while the frame waited. `None` where the clock is not available.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn thread_cpu_ms() -> Option<f64> {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid timespec for clock_gettime to write.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    (rc == 0).then(|| ts.tv_sec as f64 * 1000.0 + ts.tv_nsec as f64 / 1e6)
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn thread_cpu_ms() -> Option<f64> {
    None
}

fn pct(v: &mut [f64], p: f64) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(f64::total_cmp);
    v[((v.len() - 1) as f64 * p).round() as usize]
}

fn main() {
    let mut spans = vec![1_000_000usize, 10_000_000];
    let mut sizes = vec![(1920u32, 1080u32), (3840, 2160)];
    let mut rounds = 1usize;
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut i = 0;
    while i < args.len() {
        match args[i].as_str() {
            "--spans" if i + 1 < args.len() => {
                spans = args[i + 1].split(',').filter_map(parse_count).collect();
                i += 1;
            }
            "--sizes" if i + 1 < args.len() => {
                sizes = args[i + 1]
                    .split(',')
                    .filter_map(|s| {
                        let (w, h) = s.split_once('x')?;
                        Some((w.parse().ok()?, h.parse().ok()?))
                    })
                    .collect();
                i += 1;
            }
            "--rounds" if i + 1 < args.len() => {
                rounds = args[i + 1].parse().unwrap_or(1).max(1);
                i += 1;
            }
            _ => {} // cargo bench passes --bench
        }
        i += 1;
    }
    let gpu = match Gpu::new(&GpuOptions::default()) {
        Ok(g) => g,
        Err(e) => {
            eprintln!("frames: no GPU adapter: {e}");
            return;
        }
    };
    println!("adapter: {}", gpu.describe());
    let budget = match std::env::var_os("FRAMES_ALL_LABELS") {
        Some(_) => None,
        None => Some(scorch::render::LABEL_SHAPING),
    };
    println!(
        "label shaping per frame: {}; labels placed until {} (widest first)",
        budget.map_or("no limit".to_string(), |d| format!("{} µs", d.as_micros())),
        budget.map_or("the last".to_string(), |_| format!(
            "{} µs after the frame's start",
            scorch::render::LABEL_PLACING.as_micros()
        ))
    );
    println!(
        "| spans | size | CPU encode p50 | p99 | thread CPU p50 | p99 | compose mean | GPU pass p50 | p99 | wall p50 | p99 | bars drawn p50 | CPU B/span | GPU B/span | hover pick p50 | p99 | frames leaving labels | most left | labels placed by those |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|");
    for &n in &spans {
        let t = Instant::now();
        let (set, tl) = w5(n);
        let cpu_bytes = tl.layout.heap_bytes()
            + tl.row_of.capacity() * 4
            + tl.parent.capacity() * 4
            + set.len() * (8 + 8 + 4 + 4 + 4);
        // No tree: nothing in these frames reads one, and 100 M spans would pay for it.
        let trace = Arc::new(Trace {
            spans: set,
            tree: SpanTree::default(),
            source: "W5".into(),
            format: SourceFormat::ChromeTrace,
            gzipped: false,
            sampled: None,
            sampling: None,
        });
        let mut view = TimelineView::with_tracks(
            trace,
            BandMode::PerTrack,
            tl,
            &ViewOptions {
                color: Some(ColorMode::Name),
                title: Some("W5".into()),
                ..ViewOptions::default()
            },
        );
        view.set_labels(std::env::var_os("FRAMES_NO_LABELS").is_none());
        let mut renderer = Renderer::new(&gpu, TARGET_FORMAT);
        let mut scenes = Scenes::build(&gpu, &renderer.scene_layout(), &view.bar_sources())
            .expect("the spans fit on the device");
        gpu.device
            .poll(wgpu::PollType::wait_indefinitely())
            .expect("device poll");
        let cpu_bytes = cpu_bytes + view.lod().heap_bytes();
        eprintln!(
            "frames: {n} spans built and uploaded in {:.1} s ({} MiB of instances)",
            t.elapsed().as_secs_f64(),
            scenes.instance_bytes() >> 20
        );
        let uploaded = Instant::now();
        // FRAMES_SETTLE_MS: wait this long after the upload before the first frame, to
        // tell a card's own settling after a large upload from the frames' cost.
        if let Some(ms) = std::env::var("FRAMES_SETTLE_MS")
            .ok()
            .and_then(|v| v.parse::<u64>().ok())
        {
            eprintln!("frames: waiting {ms} ms before the first frame");
            std::thread::sleep(std::time::Duration::from_millis(ms));
        }
        for &(w, h) in &sizes {
            view.set_viewport(Viewport {
                width_px: w,
                height_px: h,
                scale: 1.0,
            });
            let g = view.geometry(1.0);
            let texture = gpu.device.create_texture(&wgpu::TextureDescriptor {
                label: Some("frames::target"),
                size: wgpu::Extent3d {
                    width: w,
                    height: h,
                    depth_or_array_layers: 1,
                },
                mip_level_count: 1,
                sample_count: 1,
                dimension: wgpu::TextureDimension::D2,
                format: TARGET_FORMAT,
                usage: wgpu::TextureUsages::RENDER_ATTACHMENT,
                view_formats: &[],
            });
            let target = texture.create_view(&wgpu::TextureViewDescriptor::default());
            let mut timer = GpuTimer::new(&gpu);
            // From the whole trace to one nanosecond across the graph in 32 steps, back in
            // 32, about a point a third of the way in.
            let span = view.tracks().layout.total_ticks as f64;
            let factor = span.powf(1.0 / 32.0);
            let x = f64::from(g.graph.w) * 0.37;
            let (mut cpu, mut gpu_ms, mut wall, mut drawn) =
                (Vec::new(), Vec::new(), Vec::new(), Vec::new());
            let mut composed: Vec<f64> = Vec::new();
            let mut thread_cpu: Vec<f64> = Vec::new();
            let mut picks: Vec<f64> = Vec::new();
            let mut rng = 0x9e37_79b9_u64;
            let (mut left_frames, mut most_left) = (0usize, 0usize);
            // Labels placed per zoom step, in frames that left some for the frame at rest.
            let mut placed_in_short: Vec<(usize, usize)> = Vec::new();
            let tile = Tile { x: 0, y: 0, w, h };
            // One frame first: the overview texture is drawn once and then reused.
            let warm = compose(&view, Purpose::Export, None, renderer.text());
            renderer
                .render(&gpu, &warm, &scenes, &target, tile, None)
                .expect("frame");
            // FRAMES_WARM_MS: keep drawing that frame, untimed, this long first. A GPU idle
            // while the spans were built has lowered its clock (an H200 went from 1980 to
            // 345 MHz, and once took 1.5 s of frames to climb back), so without this the
            // first round can measure the card's clock ramp as well as the frames.
            let warm_for = std::env::var("FRAMES_WARM_MS")
                .ok()
                .and_then(|v| v.parse::<u64>().ok())
                .map(std::time::Duration::from_millis);
            let warming = Instant::now();
            loop {
                gpu.device
                    .poll(wgpu::PollType::wait_indefinitely())
                    .expect("device poll");
                match warm_for {
                    Some(d) if warming.elapsed() < d => {
                        renderer
                            .render(&gpu, &warm, &scenes, &target, tile, None)
                            .expect("frame");
                    }
                    _ => break,
                }
            }
            drop(warm);
            for step in (0..rounds).flat_map(|_| 0..STEPS) {
                if step < STEPS / 2 {
                    view.state_mut().zoom_around(x, factor);
                } else {
                    view.state_mut().zoom_around(x, 1.0 / factor);
                }
                let cam = view.state().camera;
                // Hover picks at this zoom: 2000 pointer positions over the rows.
                let layout = &view.tracks().layout;
                for _ in 0..2000 {
                    rng = rng
                        .wrapping_mul(6364136223846793005)
                        .wrapping_add(1442695040888963407);
                    let px = g.graph.x + (rng >> 40) as f32 % g.graph.w;
                    let py = g.graph.y
                        + g.header_px
                        + ((rng >> 20) & 0xffff) as f32 % (ROWS as f32 * g.row_pitch_px);
                    let t = Instant::now();
                    std::hint::black_box(pick_span(layout, &g, &cam, px, py, 4.0));
                    picks.push(t.elapsed().as_nanos() as f64);
                }
                let c0 = thread_cpu_ms();
                let t0 = Instant::now();
                // As the window does while the view moves: at most `LABEL_SHAPING` of
                // shaping new label text per frame, and labels placed widest first until
                // `LABEL_PLACING` after the start (FRAMES_ALL_LABELS: every label in every
                // frame, as an export or a window at rest).
                renderer.text().begin_frame(budget);
                renderer
                    .text()
                    .limit_labels(budget.map(|_| scorch::render::LABEL_PLACING));
                let frame = compose(&view, Purpose::Export, None, renderer.text());
                // As the window does: the rows' own bars this frame reaches, a few pages
                // a frame (the rest of them by the following frames).
                let mut fetch_ms = 0.0;
                if scenes.lack_pages(&frame.bars) {
                    let budget =
                        scorch::render::bars::PageBudget::frame(renderer.text().work_until());
                    let f = Instant::now();
                    scenes
                        .fetch(&gpu, &view.bar_sources(), &frame.bars, budget)
                        .expect("pages");
                    fetch_ms = f.elapsed().as_secs_f64() * 1000.0;
                }
                let built_ms = t0.elapsed().as_secs_f64() * 1000.0;
                composed.push(built_ms);
                let stats = renderer
                    .render(&gpu, &frame, &scenes, &target, tile, timer.as_mut())
                    .expect("frame");
                if let (Some(a), Some(b)) = (c0, thread_cpu_ms()) {
                    thread_cpu.push(b - a);
                }
                drop(frame);
                let left = renderer.text().deferred() + renderer.text().labels_left();
                if left > 0 {
                    left_frames += 1;
                    most_left = most_left.max(left);
                    placed_in_short.push((step, stats.labels));
                }
                gpu.device
                    .poll(wgpu::PollType::wait_indefinitely())
                    .expect("device poll");
                wall.push(t0.elapsed().as_secs_f64() * 1000.0);
                let encode_ms = built_ms + f64::from(stats.encode_ms);
                cpu.push(encode_ms);
                drawn.push(stats.bars_drawn as f64);
                if let Some(t) = timer.as_mut() {
                    // The readback was started after the submit; one more poll finishes it.
                    let _ = gpu.device.poll(wgpu::PollType::wait_indefinitely());
                    if let Some(ms) = t.read(&gpu) {
                        gpu_ms.push(f64::from(ms));
                    }
                }
                if std::env::var_os("FRAMES_TRACE").is_some() {
                    eprintln!(
                        "step {step} at {:.2} s: {:.2} ms wall, {:.3} ms encode ({built_ms:.3} compose, {fetch_ms:.3} pages), {} GPU, {} bars, {} labels ({left} left), {:.3e} ns/px",
                        uploaded.elapsed().as_secs_f64(),
                        wall.last().unwrap(),
                        encode_ms,
                        gpu_ms
                            .last()
                            .map_or("–".to_string(), |g| format!("{g:.3} ms")),
                        stats.bars_drawn,
                        stats.labels,
                        1.0 / cam.px_per_tick
                    );
                }
            }
            // The same zoom once more, untimed, each frame composed as at rest: how many
            // labels the frames that left some placed of those a frame at rest places.
            let mut at_rest = vec![0usize; STEPS];
            if !placed_in_short.is_empty() {
                for (step, all) in at_rest.iter_mut().enumerate() {
                    if step < STEPS / 2 {
                        view.state_mut().zoom_around(x, factor);
                    } else {
                        view.state_mut().zoom_around(x, 1.0 / factor);
                    }
                    renderer.text().begin_frame(None);
                    *all = compose(&view, Purpose::Export, None, renderer.text()).labels;
                }
            }
            let shares: Vec<f64> = placed_in_short
                .iter()
                .filter(|&&(step, _)| at_rest[step] > 0)
                .map(|&(step, placed)| placed as f64 / at_rest[step] as f64)
                .collect();
            let share_col = if shares.is_empty() {
                "–".to_string()
            } else {
                format!(
                    "{:.0} % (least {:.0} %)",
                    100.0 * shares.iter().sum::<f64>() / shares.len() as f64,
                    100.0 * shares.iter().copied().fold(1.0, f64::min)
                )
            };
            let thread_col = if thread_cpu.is_empty() {
                ("n/a".to_string(), "n/a".to_string())
            } else {
                (
                    format!("{:.3} ms", pct(&mut thread_cpu, 0.5)),
                    format!("{:.3} ms", pct(&mut thread_cpu, 0.99)),
                )
            };
            let gpu_col = if gpu_ms.is_empty() {
                ("n/a".to_string(), "n/a".to_string())
            } else {
                (
                    format!("{:.2} ms", pct(&mut gpu_ms, 0.5)),
                    format!("{:.2} ms", pct(&mut gpu_ms, 0.99)),
                )
            };
            println!(
                "| {n} | {w}×{h} | {:.3} ms | {:.3} ms | {} | {} | {:.3} ms | {} | {} | {:.2} ms | {:.2} ms | {:.0} | {:.1} | {:.1} | {:.0} ns | {:.0} ns | {left_frames} of {} | {most_left} | {share_col} |",
                pct(&mut cpu, 0.5),
                pct(&mut cpu, 0.99),
                thread_col.0,
                thread_col.1,
                composed.iter().sum::<f64>() / composed.len().max(1) as f64,
                gpu_col.0,
                gpu_col.1,
                pct(&mut wall, 0.5),
                pct(&mut wall, 0.99),
                pct(&mut drawn, 0.5),
                cpu_bytes as f64 / n as f64,
                scenes.gpu_bytes() as f64 / n as f64,
                pct(&mut picks, 0.5),
                pct(&mut picks, 0.99),
                STEPS * rounds,
            );
        }
    }
}
