//! Time-ordered samples at scale: 50 M samples over 8 threads with a random-walk stack
//! (a few thousand distinct stacks), built as an importer builds them. Prints the bytes
//! per sample the columns take beyond the stack table (the samples model promises at most
//! 16), then times aggregation (whole and a 10 % time range, what a range selection
//! costs) and the conversion of one thread to spans.
//!
//! Run with `cargo bench --bench samples` (about 2 GB of memory).

use criterion::{Criterion, criterion_group, criterion_main};
use scorch::model::SourceFormat;
use scorch::model::samples::{Samples, Selection, ThreadInfo};
use scorch::model::timeorder::{ConvertOptions, convert};
use scorch::model::units::ValueFormat;
use std::hint::black_box;

const SAMPLES: usize = 50_000_000;
const THREADS: usize = 8;

fn build(n: usize) -> Samples {
    let mut s = Samples::new("bench", SourceFormat::PerfScript);
    let e = s.event("cpu-clock", ValueFormat::default());
    let frames: Vec<_> = (0..64).map(|i| s.intern(&format!("f{i}"))).collect();
    let mut rng = 0x2545_f491_4f6c_dd1du64;
    let mut next = move || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    for t in 0..THREADS {
        let th = s.add_thread(ThreadInfo {
            name: format!("t{t}"),
            tid: Some(t as i64),
            ..ThreadInfo::default()
        });
        let st = s.stream(th, e);
        let mut path: Vec<u32> = Vec::new();
        let mut stack = scorch::model::samples::EMPTY_STACK;
        for i in 0..n / THREADS {
            // Mostly the same stack as before (as real samples are), sometimes a step.
            match next() % 8 {
                0 if path.len() > 1 => {
                    path.pop();
                    stack = s.stacks.parent(stack);
                }
                1 if path.len() < 40 => {
                    let f = frames[(next() % 64) as usize];
                    path.push(f);
                    stack = s.stacks.child(stack, f);
                }
                _ if path.is_empty() => {
                    path.push(frames[0]);
                    stack = s.stacks.child(stack, frames[0]);
                }
                _ => {}
            }
            s.push(st, i as u64 * 1_000_000, stack, 1);
        }
    }
    for st in &mut s.streams {
        st.time.shrink_to_fit();
        st.stack.shrink_to_fit();
    }
    s.finish()
}

fn samples(c: &mut Criterion) {
    let t0 = std::time::Instant::now();
    let s = build(SAMPLES);
    let built = t0.elapsed();
    println!(
        "{} samples, {} stacks, built in {:.2} s: {:.2} B per sample beyond the stack table \
         (stack table {:.1} MiB)",
        s.len(),
        s.stacks.len(),
        built.as_secs_f64(),
        s.sample_bytes() as f64 / s.len() as f64,
        s.stacks.heap_bytes() as f64 / (1 << 20) as f64
    );
    let mut g = c.benchmark_group("samples");
    g.sample_size(10);
    g.bench_function("aggregate 50M", |b| {
        b.iter(|| black_box(s.aggregate(Selection::default()).unwrap()))
    });
    let (lo, hi) = s.time_range();
    let range = Selection {
        event: 0,
        range: Some((lo + (hi - lo) * 45 / 100, lo + (hi - lo) * 55 / 100)),
    };
    g.bench_function("aggregate a 10% range of 50M", |b| {
        b.iter(|| black_box(s.aggregate(range).unwrap()))
    });
    // One thread's 6.25 M samples in time order.
    let mut one = s.clone();
    one.streams.truncate(1);
    g.bench_function("convert 6.25M samples of one thread", |b| {
        b.iter(|| black_box(convert(&one, ConvertOptions::default())))
    });
    g.finish();
}

criterion_group!(benches, samples);
criterion_main!(benches);
