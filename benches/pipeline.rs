//! Per-stage benchmarks: parse (bytes/s), layout, LOD pyramid build, tier selection,
//! pick, and an offscreen frame.
//!
//! Inputs come from `scorch::generator` (`scorch gen`): W1 of TARGETS.md (mean depth
//! ~30, 20 000 distinct 40-byte frame names) as folded stacks and as `perf script`,
//! scaled down to run in seconds, deterministic from a seed, so numbers are comparable
//! between runs and machines. Parse groups report bytes/s; the `1thread` variants pin
//! the parser to one core (the TARGETS.md "one thread" figure), the others use all
//! cores as `scorch` does. Run with `cargo bench --bench pipeline`; the frame group
//! needs a GPU adapter (Mesa llvmpipe counts) and is skipped without one.
//!
//! The pprof benchmark parses W1 written by `scorch gen w1 --format pprof` (64 MiB of
//! uncompressed protobuf, a Go CPU profile's shape) on one thread.
//!
//! The Chrome trace benchmarks parse a generated ~16 MiB trace of X and B/E events over
//! four threads, on all cores and on one (the result is dropped outside the timing).

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use scorch::generator::{self, GenFormat, GenOptions, Limit, Workload};
use scorch::geometry::{FrameGeometry, Orientation, Style};
use scorch::import::{self, Limits};
use scorch::layout::flame_layout;
use scorch::lod::Lod;
use scorch::pick::pick;
use scorch::render::{self, Gpu, GpuOptions, Renderer, Scenes, TARGET_FORMAT};
use scorch::view::flame::FlameView;
use scorch::view::{Purpose, View, ViewOptions, Viewport, compose};
use std::fmt::Write as _;
use std::hint::black_box;

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

/// W1 of about `bytes` bytes in `format`, from the generator.
fn w1(bytes: usize, seed: u64, format: GenFormat) -> Vec<u8> {
    let mut out = Vec::with_capacity(bytes + (64 << 10));
    generator::generate(
        &GenOptions {
            workload: Workload::W1,
            format: Some(format),
            seed,
            limit: Some(Limit::Bytes(bytes as u64)),
        },
        &mut out,
    )
    .unwrap();
    out
}

/// W1-like folded stacks of about `bytes` bytes.
fn w1_folded(bytes: usize, seed: u64) -> Vec<u8> {
    w1(bytes, seed, GenFormat::Folded)
}

/// A Chrome trace (object form) of about `bytes` bytes: four threads, each a random walk
/// of nested B/E slices with X leaves (half with args), timestamps in fractional µs, as
/// Chrome writes them.
fn chrome_trace(bytes: usize, seed: u64) -> String {
    let mut rng = Rng(seed);
    let names: Vec<String> = (0..2_000)
        .map(|i| format!("Component{:03}::Task_{i:05}", i % 97))
        .collect();
    let mut out = String::with_capacity(bytes + 4096);
    out.push_str("{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n");
    for tid in 1..=4 {
        let _ = writeln!(
            out,
            r#"{{"pid":4242,"tid":{tid},"ph":"M","name":"thread_name","args":{{"name":"Worker{tid}"}}}},"#
        );
    }
    let mut ts = [1_000_000u64; 4]; // per thread, in ns
    let mut depth = [0usize; 4];
    let mut first = true;
    while out.len() < bytes {
        let t = (rng.next() % 4) as usize;
        let tid = t + 1;
        ts[t] += 1 + rng.next() % 5_000;
        let us = |ns: u64| format!("{}.{:03}", ns / 1000, ns % 1000);
        let r = rng.next() % 10;
        if !first {
            out.push_str(",\n");
        }
        first = false;
        let name = &names[(rng.next() % names.len() as u64) as usize];
        if r < 3 && depth[t] < 40 {
            depth[t] += 1;
            let _ = write!(
                out,
                r#"{{"pid":4242,"tid":{tid},"ts":{},"ph":"B","cat":"toplevel","name":"{name}","args":{{}}}}"#,
                us(ts[t])
            );
        } else if r < 6 && depth[t] > 0 {
            depth[t] -= 1;
            let _ = write!(
                out,
                r#"{{"pid":4242,"tid":{tid},"ts":{},"ph":"E","cat":"toplevel","name":"{name}","args":{{}}}}"#,
                us(ts[t])
            );
        } else {
            let dur = 1 + rng.next() % 3_000;
            let args = if rng.next().is_multiple_of(2) {
                r#","args":{"src_file":"../../base/task/sequence_manager.cc","src_func":"RunTask"}"#
            } else {
                ""
            };
            let _ = write!(
                out,
                r#"{{"pid":4242,"tid":{tid},"ts":{},"ph":"X","cat":"disabled-by-default-devtools.timeline","name":"{name}","dur":{},"tdur":{}{args}}}"#,
                us(ts[t]),
                us(dur),
                dur / 1000
            );
            ts[t] += dur;
        }
    }
    out.push_str("\n]}\n");
    out
}

fn bench_parse(c: &mut Criterion) {
    let mut g = c.benchmark_group("parse");
    let trace = chrome_trace(16 << 20, 7);
    g.throughput(Throughput::Bytes(trace.len() as u64));
    g.sample_size(10);
    g.bench_with_input(BenchmarkId::new("chrome", "16MiB"), &trace, |b, t| {
        b.iter_with_large_drop(|| import::chrome::parse("t.json", black_box(t.as_bytes())).unwrap())
    });
    g.bench_with_input(
        BenchmarkId::new("chrome-1-thread", "16MiB"),
        &trace,
        |b, t| {
            b.iter_with_large_drop(|| {
                import::chrome::parse_with_threads("t.json", black_box(t.as_bytes()), 1, usize::MAX)
                    .unwrap()
            })
        },
    );
    g.finish();

    let mut g = c.benchmark_group("parse");
    for mb in [4usize, 16] {
        let text = w1_folded(mb << 20, 1);
        g.throughput(Throughput::Bytes(text.len() as u64));
        g.sample_size(10);
        g.bench_with_input(
            BenchmarkId::new("folded", format!("{mb}MiB")),
            &text,
            |b, t| {
                b.iter(|| import::load_bytes("w1.folded", black_box(t), Limits::default()).unwrap())
            },
        );
        g.bench_with_input(
            BenchmarkId::new("folded/1thread", format!("{mb}MiB")),
            &text,
            |b, t| {
                b.iter(|| {
                    import::folded::parse_with_threads("w1", black_box(t), None, 1, usize::MAX)
                        .unwrap()
                })
            },
        );
        let perf = w1(mb << 20, 1, GenFormat::Perf);
        g.throughput(Throughput::Bytes(perf.len() as u64));
        g.bench_with_input(
            BenchmarkId::new("perf", format!("{mb}MiB")),
            &perf,
            |b, t| {
                b.iter(|| import::load_bytes("w1.perf", black_box(t), Limits::default()).unwrap())
            },
        );
        g.bench_with_input(
            BenchmarkId::new("perf/1thread", format!("{mb}MiB")),
            &perf,
            |b, t| {
                b.iter(|| {
                    import::perf::parse_with_threads("w1", black_box(t), None, 1, usize::MAX)
                        .unwrap()
                })
            },
        );
    }
    // pprof: W1 as an uncompressed Go-CPU-like profile of 64 MiB (about 860 k samples).
    // The importer is single-threaded; the figure is decompressed protobuf bytes/s.
    let pprof = w1(64 << 20, 1, GenFormat::Pprof);
    g.throughput(Throughput::Bytes(pprof.len() as u64));
    g.sample_size(10);
    g.bench_with_input(
        BenchmarkId::new("pprof/1thread", "64MiB"),
        &pprof,
        |b, t| b.iter_with_large_drop(|| import::pprof::parse("w1.pb", black_box(t)).unwrap()),
    );
    let demo = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/data/demo-pyroscope.json"
    ))
    .unwrap();
    g.throughput(Throughput::Bytes(demo.len() as u64));
    g.sample_size(50);
    g.bench_function("flamebearer/demo", |b| {
        b.iter(|| import::load_bytes("demo.json", black_box(&demo), Limits::default()).unwrap())
    });
    g.finish();
}

fn bench_layout_and_pick(c: &mut Criterion) {
    let text = w1_folded(16 << 20, 2);
    let p = import::load_bytes("w1.folded", &text, Limits::default()).unwrap();
    let mut g = c.benchmark_group("layout");
    g.throughput(Throughput::Elements(p.tree.len() as u64));
    g.sample_size(20);
    g.bench_function("flame/16MiB", |b| {
        b.iter(|| flame_layout(black_box(&p.tree)))
    });
    g.finish();

    let layout = flame_layout(&p.tree);
    let mut g = c.benchmark_group("lod");
    g.throughput(Throughput::Elements(layout.bar_count() as u64));
    g.sample_size(20);
    g.bench_function(format!("build/{}bars", layout.bar_count()), |b| {
        b.iter(|| Lod::build(black_box(&layout)))
    });
    // The same pyramid by a whole-row pass per threshold (what `build` did before).
    g.bench_function(format!("build_by_passes/{}bars", layout.bar_count()), |b| {
        b.iter(|| Lod::build_by_passes(black_box(&layout)))
    });
    // What a full-view export builds: the one tier per row a 1200 px frame draws.
    let export_tpp = p.tree.grand_total() as f64 / 1200.0;
    g.bench_function(format!("build_for_view/{}bars", layout.bar_count()), |b| {
        b.iter(|| Lod::build_for_view(black_box(&layout), export_tpp))
    });
    // One row of 4 Mi bars, as the last level of a large Pyroscope file holds: leaves of
    // widths over many orders of magnitude, some gaps (merged in segments on all cores);
    // and one of 1 Mi bars, merged whole, its columns (~30 MB) larger than the caches,
    // as the deep rows of a node-dense pprof of a few hundred MB are.
    for n in [4 << 20, 1 << 20] {
        let big = one_big_row(n);
        g.throughput(Throughput::Elements(big.bar_count() as u64));
        g.sample_size(10);
        g.bench_function(format!("build/one-row-{}bars", big.bar_count()), |b| {
            b.iter(|| Lod::build(black_box(&big)))
        });
    }
    g.throughput(Throughput::Elements(layout.bar_count() as u64));
    g.sample_size(20);
    // Tier selection for every row at zoom levels from the whole profile down to a
    // thousandth of it: what a frame does before drawing.
    let lod = Lod::build(&layout);
    let total = p.tree.grand_total() as f64;
    let zooms: Vec<f64> = (0..8).map(|k| total / 1920.0 / 4f64.powi(k)).collect();
    g.throughput(Throughput::Elements(
        (layout.rows.len() * zooms.len()) as u64,
    ));
    g.bench_function(format!("tier_for/{}rows", layout.rows.len()), |b| {
        b.iter(|| {
            let mut merged = 0usize;
            for &tpp in &zooms {
                for row in 0..layout.rows.len() {
                    if let scorch::lod::TierRef::Tier(i) = lod.tier_for(row, black_box(tpp)) {
                        merged += i + 1;
                    }
                }
            }
            merged
        })
    });
    g.finish();

    let geom = FrameGeometry::new(
        1920,
        1080,
        1.0,
        layout.rows.len(),
        Orientation::Flame,
        Style::default(),
    );
    let cam = geom.fit_camera(&layout);
    let mut rng = Rng(3);
    let points: Vec<(f32, f32)> = (0..4096)
        .map(|_| {
            (
                geom.graph.x + (rng.next() % geom.graph.w as u64) as f32,
                geom.graph.y + (rng.next() % geom.graph.h as u64) as f32,
            )
        })
        .collect();
    let mut g = c.benchmark_group("pick");
    g.throughput(Throughput::Elements(points.len() as u64));
    g.bench_function(format!("hover/{}bars", layout.bar_count()), |b| {
        b.iter(|| {
            points
                .iter()
                .filter(|(x, y)| pick(&layout, &geom, &cam, *x, *y).is_some())
                .count()
        })
    });
    g.finish();
}

fn bench_frame(c: &mut Criterion) {
    let Ok(gpu) = Gpu::new(&GpuOptions::default()) else {
        eprintln!("frame benchmarks skipped: no GPU adapter");
        return;
    };
    let text = w1_folded(4 << 20, 4);
    let p = import::load_bytes("w1.folded", &text, Limits::default()).unwrap();
    let mut view = FlameView::new(std::sync::Arc::new(p), &ViewOptions::default());
    let mut renderer = Renderer::new(&gpu, TARGET_FORMAT);
    let scenes = Scenes::build(&gpu, &renderer.scene_layout(), &view.bar_sources()).unwrap();
    let bars = view.layout().bar_count();
    let mut g = c.benchmark_group("frame");
    g.sample_size(10);
    for (w, h) in [(1280u32, 720u32), (1920, 1080)] {
        view.set_viewport(Viewport::logical(w, h, 1.0));
        // The CPU draw data alone: visible rows, tiers, ranges, labels.
        g.bench_function(format!("draw_data/{w}x{h}/{bars}bars"), |b| {
            b.iter(|| compose(&view, Purpose::Export, None, renderer.text()).bar_count())
        });
        g.bench_function(
            format!("offscreen/{w}x{h}/{bars}bars/{}", gpu.describe()),
            |b| {
                b.iter(|| {
                    let frame = compose(&view, Purpose::Export, None, renderer.text());
                    render::render_frame(&gpu, &mut renderer, &frame, &scenes).unwrap()
                })
            },
        );
    }
    g.finish();
}

/// Interning ten million names drawn at random from a million distinct ones (about ten
/// lookups each, the first an insertion; a profile whose frames carry addresses or line
/// numbers): lookups that miss the caches.
fn bench_names(c: &mut Criterion) {
    let n = 1_000_000usize;
    let pool: Vec<String> = (0..n)
        .map(|i| format!("pkg{}.Class{}.method_{i}", i % 300, i % 7000))
        .collect();
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    let order: Vec<&str> = (0..10 * n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            pool[(x % n as u64) as usize].as_str()
        })
        .collect();
    let mut g = c.benchmark_group("names");
    g.throughput(Throughput::Elements(order.len() as u64));
    g.sample_size(10);
    g.bench_function("intern/1M-distinct-10M-lookups", |b| {
        b.iter_with_large_drop(|| {
            let mut names = scorch::model::Names::new();
            for s in &order {
                black_box(names.intern(s));
            }
            names
        })
    });
    g.finish();
}

criterion_group!(
    benches,
    bench_parse,
    bench_layout_and_pick,
    bench_frame,
    bench_names
);
criterion_main!(benches);

/// A layout of one row of `n` bars: widths of 1 tick to 2^24 ticks (small ones far more
/// often), a gap after one bar in four, a hundred names.
fn one_big_row(n: usize) -> scorch::layout::Layout {
    let mut row = scorch::layout::Row::with_capacity(n);
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut x = 0u64;
    for i in 0..n {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        let width = 1 + (state >> 40) % (1u64 << ((state >> 8) % 25).min((state >> 16) % 25));
        if state.is_multiple_of(4) {
            x += (state >> 20) % 4096;
        }
        row.x0.push(x);
        row.x1.push(x + width);
        row.name.push((state >> 33) as u32 % 100);
        row.node.push(i as u32);
        x += width;
    }
    scorch::layout::Layout {
        rows: vec![row],
        total_ticks: x,
    }
}
