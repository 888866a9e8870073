//! Call-tree transforms, the function table and the sandwich on a 2 M-node tree (issue
//! target: each transform under 100 ms). The tree is W1 of TARGETS.md from the generator
//! (`scorch gen w1 --seed 3`, about 230 MB of folded stacks, cut where the tree reaches
//! 2 M nodes), parsed once outside the timings. The function each transform names is
//! picked from the tree itself: the one in the most nodes (so merge, collapse-recursion
//! and drop touch the most), its package, and the heaviest path two deep.
//!
//! Also the comparison of two profiles of that size, and of five runs against five.
//!
//! Run with `cargo bench --bench transforms`.

use criterion::{Criterion, criterion_group, criterion_main};
use scorch::color::package_rule;
use scorch::generator::{self, GenFormat, GenOptions, Limit, Workload};
use scorch::import;
use scorch::model::functions::{SandwichHalf, function_table, sandwich};
use scorch::model::transform::{Transform, apply};
use scorch::model::{NodeId, Profile};
use std::hint::black_box;

fn tree_of_2m_nodes() -> Profile {
    let mut text = Vec::new();
    generator::generate(
        &GenOptions {
            workload: Workload::W1,
            format: Some(GenFormat::Folded),
            seed: 3,
            limit: Some(Limit::Bytes(260 << 20)),
        },
        &mut text,
    )
    .unwrap();
    // Grow line by line up to 2 M nodes: parse a prefix found by bisection on lines.
    let ends: Vec<usize> = memchr_lines(&text);
    let (mut lo, mut hi) = (1, ends.len());
    let mut best = None;
    while lo < hi {
        let mid = (lo + hi) / 2;
        let p = import::folded::parse("w1", &text[..ends[mid - 1]]).unwrap();
        if p.tree.len() >= 2_000_000 {
            hi = mid;
            best = Some(p);
        } else {
            lo = mid + 1;
        }
    }
    best.unwrap_or_else(|| import::folded::parse("w1", &text).unwrap())
}

fn memchr_lines(text: &[u8]) -> Vec<usize> {
    text.iter()
        .enumerate()
        .filter(|&(_, &b)| b == b'\n')
        .map(|(i, _)| i + 1)
        .collect()
}

fn bench(c: &mut Criterion) {
    let p = tree_of_2m_nodes();
    let tree = &p.tree;
    eprintln!("transforms: {} nodes", tree.len());
    let rows = function_table(tree);
    let most = rows.iter().max_by_key(|r| r.nodes).unwrap();
    let f = p.names.get(most.name).to_string();
    let rule = package_rule(p.meta.spy_name.as_deref());
    let pkg = rule(&f).to_string();
    let heaviest = |n: NodeId| {
        *tree
            .children(n)
            .iter()
            .max_by_key(|&&c| tree.total(c))
            .unwrap()
    };
    let (a, b) = (heaviest(0), heaviest(heaviest(0)));
    let path = vec![
        p.names.get(tree.name(a)).to_string(),
        p.names.get(tree.name(b)).to_string(),
    ];
    eprintln!(
        "transforms: {f:?} in {} nodes, package {pkg:?}, path {path:?}",
        most.nodes
    );
    let mut g = c.benchmark_group("transform_2m_nodes");
    g.sample_size(10);
    for t in [
        Transform::Merge(f.clone()),
        Transform::Focus(f.clone()),
        Transform::FocusSubtree(path),
        Transform::CollapseRecursion(f.clone()),
        Transform::CollapsePackage(pkg),
        Transform::Drop(f.clone()),
    ] {
        let name = t.spec().split(':').next().unwrap().to_string();
        g.bench_function(name, |bch| {
            bch.iter(|| black_box(apply(&p, &t, &rule).unwrap()))
        });
    }
    g.bench_function("function_table", |bch| {
        bch.iter(|| black_box(function_table(tree)))
    });
    for half in [SandwichHalf::Callers, SandwichHalf::Callees] {
        g.bench_function(format!("sandwich_{half:?}").to_lowercase(), |bch| {
            bch.iter(|| black_box(sandwich(&p, most.name, half).unwrap()))
        });
    }
    // Comparisons: the tree against itself with the busiest function dropped (every
    // node visited on both sides), and five runs against five (a test per node).
    let dropped = apply(&p, &Transform::Drop(f.clone()), &rule).unwrap();
    let opts = scorch::model::compare::CompareOptions::default();
    g.bench_function("diff_two_profiles", |bch| {
        bch.iter(|| black_box(scorch::model::compare::diff_profiles(&p, &dropped, opts).unwrap()))
    });
    let base: Vec<Profile> = (0..5).map(|_| p.clone()).collect();
    let vs: Vec<Profile> = (0..5).map(|_| dropped.clone()).collect();
    g.bench_function("compare_runs_5_vs_5", |bch| {
        bch.iter(|| {
            black_box(scorch::model::compare::compare_runs(&base, &vs, opts, 0.05).unwrap())
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
