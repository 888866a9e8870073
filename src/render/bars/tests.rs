//! Unit tests of the bar scenes: the parallel fill, segments, colour words, chunks.

use super::*;

/// A device for the tests that need one (Mesa's software drivers where there is no
/// GPU); none, and the test skips, unless `SCORCH_REQUIRE_GPU=1`.
fn test_gpu() -> Option<Gpu> {
    match Gpu::new(&super::super::gpu::GpuOptions::default()) {
        Ok(g) => Some(g),
        Err(e) if std::env::var_os("SCORCH_REQUIRE_GPU").is_some_and(|v| v == "1") => {
            panic!("SCORCH_REQUIRE_GPU=1 but no device: {e}")
        }
        Err(e) => {
            eprintln!("skipping: {e}");
            None
        }
    }
}

#[test]
fn chunks_are_created_on_several_threads_in_order_and_mapped() {
    let Some(gpu) = test_gpu() else { return };
    let usage = wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST;
    let sizes = [4096, 8192, 256, 65536, 4096];
    let chunks = create_chunks(&gpu, "test bars", usage, &sizes).expect("small chunks");
    let got: Vec<u64> = chunks.iter().map(|c| c.size()).collect();
    assert_eq!(got, sizes);
    for (i, c) in chunks.iter().enumerate() {
        let mut view = c.get_mapped_range_mut(..).expect("mapped at creation");
        view.slice(..)
            .copy_from_slice(&vec![i as u8; c.size() as usize]);
        drop(view);
        c.unmap();
    }
}

#[test]
fn a_chunk_refused_on_another_thread_is_an_error_not_a_crash() {
    let Some(gpu) = test_gpu() else { return };
    let usage = wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST;
    let too_big = gpu.device.limits().max_buffer_size.next_multiple_of(4) + 4;
    // The last run is another thread's wherever there are two cores or more.
    let sizes = [4096, 4096, too_big];
    let err = create_chunks(&gpu, "test bars", usage, &sizes).expect_err("over the limit");
    let text = err.to_string();
    assert!(text.contains("test bars"), "{text}");
}

fn seg(row_start: u32, len: u32) -> Segment {
    Segment {
        chunk: 0,
        chunk_start: 0,
        row_start,
        len,
        base0: 0,
        base1: 0,
    }
}

/// A bar as the shader sees it: absolute ticks, name, color word.
type Decoded = (u64, u64, u32, u32);

/// A scene source of bars over `layout` (its `names`, one scene key) with `values`.
fn source<'a>(
    (layout, lod, names): (
        &'a crate::layout::Layout,
        &'a crate::lod::Lod,
        &'a crate::model::Names,
    ),
    values: crate::view::draw::BarValues<'a>,
    only_at: Option<f64>,
) -> BarSource<'a> {
    BarSource {
        key: crate::view::draw::SceneKey(1),
        layout,
        lod,
        names,
        spy: None,
        values,
        only_at,
        noun: "bars",
    }
}

/// Merged runs' values: the members' summed.
fn summed(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
    [a[0] + b[0], a[1] + b[1], a[2] + b[2]]
}

/// The reference: every wanted list of every row in order, each value computed from
/// the tree directly (members summed one by one), positions as 64-bit ticks.
fn reference(src: &BarSource<'_>) -> Vec<Decoded> {
    let codec = ValueCodec::new(&src.values);
    let mut out = Vec::new();
    for (r, row) in src.layout.rows.iter().enumerate() {
        if src.wants(r, TierRef::Row) {
            for k in 0..row.len() {
                let v = if src.values.read {
                    codec.pack(widen((src.values.of)(row.node[k])), false)
                } else {
                    ValueCodec::unread(false)
                };
                out.push((row.x0[k], row.x1[k], row.name[k], v));
            }
        }
        for (i, tier) in src.lod.rows[r].iter().enumerate() {
            if !src.wants(r, TierRef::Tier(i)) {
                continue;
            }
            for j in 0..tier.len() {
                let m = tier.members(j);
                if !src.values.read {
                    let v = ValueCodec::unread(m.len() > 1);
                    out.push((row.x0[m.start], row.x1[m.end - 1], tier.name[j], v));
                    continue;
                }
                let mut v = widen((src.values.of)(row.node[m.start]));
                for k in m.start + 1..m.end {
                    v = (src.values.merge)(v, widen((src.values.of)(row.node[k])));
                }
                let v = codec.pack(v, m.len() > 1);
                out.push((row.x0[m.start], row.x1[m.end - 1], tier.name[j], v));
            }
        }
    }
    out
}

/// Reads the instances back as the draws do: list by list through the segment table,
/// each offset added to its segment's base in 64 bits. Checks that every offset fits
/// (adding it back gives a tick no further than `span` from the base).
fn decode(plan: &Plan, got: &[BarInstance], chunk_cap: u64, span: u64) -> Vec<Decoded> {
    let mut out = Vec::new();
    for r in 0..plan.rows.len() - 1 {
        let mut l = 0;
        while let Some(segs) = plan.table.list(r, l) {
            for s in segs {
                let g = s.chunk as u64 * chunk_cap + u64::from(s.chunk_start);
                if s.base1 != s.base0 {
                    assert_eq!(s.len, 1, "only a lone bar has its own end base");
                }
                for (d, b) in got[g as usize..][..s.len as usize].iter().enumerate() {
                    let x0 = s.base0 + u64::from(b.x0);
                    let x1 = s.base1 + u64::from(b.x1);
                    assert!(x0 - s.base0 < span && x1 - s.base1 < span, "{s:?} {d}");
                    let u = plan.unit.ticks();
                    out.push((x0 * u, x1 * u, b.name, b.value));
                }
            }
            l += 1;
        }
    }
    out
}

/// A W1 profile (`scorch gen w1`) of `bytes` of folded stacks.
fn w1_profile(seed: u64, bytes: u64) -> crate::model::Profile {
    let mut text = Vec::new();
    let opts = crate::generator::GenOptions {
        workload: crate::generator::Workload::parse("w1").unwrap(),
        format: None,
        seed,
        limit: Some(crate::generator::Limit::Bytes(bytes)),
    };
    crate::generator::generate(&opts, &mut text).unwrap();
    crate::import::folded::parse("w1.folded", &text).unwrap()
}

/// The upload fills mapped chunks from all cores, rows cut into groups and groups
/// into chunk pieces: the instances are those of one sequential pass, in the order
/// the segment table says, whatever the chunk size and the span of a segment's
/// offsets (tiny spans cut rows into many segments and give wide bars their own), for
/// all lists and for an export's single tier per row.
#[test]
fn the_parallel_fill_writes_what_a_sequential_pass_does() {
    let p = w1_profile(3, 8 << 20);
    let layout = crate::layout::flame_layout(&p.tree);
    let lod = crate::lod::Lod::build(&layout);
    let tree = &p.tree;
    let total = layout.total_ticks;
    let cases = [None, Some(layout.rows[0].x1[0] as f64 / 700.0)]
        .into_iter()
        .flat_map(|only_at| [(only_at, true), (only_at, false)]);
    for (only_at, read) in cases {
        for diff in [None, Some((total / 2, total))] {
            let src = source(
                (&layout, &lod, &p.names),
                crate::view::draw::BarValues {
                    of: Box::new(move |n| {
                        assert!(read, "values computed for bars that read none");
                        let t = tree.total(n) as f32;
                        [tree.self_ticks(n) as f32, (t / 3.0).floor(), t]
                    }),
                    merge: summed,
                    max_self: tree.max_self() as f32,
                    diff_ticks: diff,
                    read,
                    nested: false,
                },
                only_at,
            );
            let want = reference(&src);
            for (chunk_cap, span) in [(7u64, SEGMENT_SPAN), (1000, 97), (1 << 20, 5000)] {
                let plan = Plan::new(&src, chunk_cap, span);
                assert_eq!(plan.total as usize, want.len());
                // Big enough to be filled on all cores.
                assert!(only_at.is_some() || plan.total > 1 << 16, "{}", plan.total);
                let segments = plan.table.segments.len();
                if span < total {
                    let lists = plan.table.lists.len();
                    assert!(segments > lists, "{segments} segments, {lists} lists");
                }
                let mut mem = vec![[0u8; INSTANCE_BYTES]; want.len()];
                let mut chunks = Vec::new();
                let mut rest = &mut mem[..];
                while !rest.is_empty() {
                    let n = rest.len().min(chunk_cap as usize);
                    let (a, b) = rest.split_at_mut(n);
                    chunks.push(wgpu::WriteOnly::from_mut(a));
                    rest = b;
                }
                fill(&src, &plan, chunks);
                let got: &[BarInstance] = bytemuck::cast_slice(&mem);
                let got = decode(&plan, got, chunk_cap, span);
                assert!(
                    got == want,
                    "chunk_cap {chunk_cap}, span {span}, only_at {only_at:?}, diff {diff:?}, \
                         read {read}"
                );
            }
        }
    }
}

/// A profile in nanoseconds sampled every 10 ms (Go's CPU profiles) spans 2^49 ticks
/// and more, but its positions are multiples of 10^7: counted in that unit, each list
/// is one segment (counted in ticks, a segment per 2^32 ticks of every row and tier),
/// the instances decode to the exact ticks, and the view in units puts every bar's
/// edges on the pixels the view in ticks does.
#[test]
fn positions_are_counted_in_the_sampling_period() {
    let p = w1_profile(5, 2 << 20);
    let mut layout = crate::layout::flame_layout(&p.tree);
    let period = 10_000_000u64;
    for row in &mut layout.rows {
        row.x0.iter_mut().for_each(|x| *x *= period);
        row.x1.iter_mut().for_each(|x| *x *= period);
    }
    layout.total_ticks *= period;
    assert!(layout.total_ticks > 100 << 32, "{}", layout.total_ticks);
    let lod = crate::lod::Lod::build(&layout);
    // Every list (a window), and one list a row (an export).
    for only_at in [None, Some(layout.total_ticks as f64 / 900.0)] {
        let src = source(
            (&layout, &lod, &p.names),
            crate::view::draw::BarValues {
                of: Box::new(|_| [1.0, 0.0, 0.0]),
                merge: summed,
                max_self: 1.0,
                diff_ticks: None,
                read: false,
                nested: false,
            },
            only_at,
        );
        let chunk_cap = 1 << 24;
        let plan = Plan::new(&src, chunk_cap, SEGMENT_SPAN);
        assert_eq!(plan.unit.ticks(), period);
        let lists = plan.table.lists.len() - 1;
        let nonempty = (0..lists)
            .filter(|&l| plan.table.lists[l] < plan.table.lists[l + 1])
            .count();
        assert_eq!(plan.table.segments.len(), nonempty, "one segment a list");
        let want = reference(&src);
        let mut mem = vec![[0u8; INSTANCE_BYTES]; want.len()];
        fill(&src, &plan, vec![wgpu::WriteOnly::from_mut(&mut mem[..])]);
        let got: &[BarInstance] = bytemuck::cast_slice(&mem);
        assert!(decode(&plan, got, chunk_cap, SEGMENT_SPAN) == want);
    }

    // The shader's x: (x - view start) in 64 bits, less the fraction, times the scale.
    let x_of = |g: &BarGlobals, x: u64| {
        let start = u64::from(g.view_start[0]) | u64::from(g.view_start[1]) << 32;
        let rel = x as f64 - start as f64;
        (rel - f64::from(g.view_start_frac)) * f64::from(g.px_per_tick)
    };
    let total = layout.total_ticks;
    for (start, frac, width) in [
        (0u64, 0.0f32, total),
        (total / 3 + 12_345, 0.25, total / 1000),
        (total / 2 + 7, 0.5, period * 3),
    ] {
        let mut g = BarGlobals::new(ColorMode::default(), crate::color::diff_palette(false));
        g.view_start = split(start);
        g.view_start_frac = frac;
        g.px_per_tick = (1920.0 / width as f64) as f32;
        let mut u = g;
        u.in_units(period);
        for row in layout.rows.iter().take(12) {
            for &x in row.x0.iter().chain(&row.x1).step_by(97) {
                let (a, b) = (x_of(&g, x), x_of(&u, x / period));
                if a.abs() < 1e5 {
                    assert!((a - b).abs() < 0.01 + a.abs() * 1e-6, "{x}: {a} vs {b}");
                }
            }
        }
    }
}

/// A list whose ticks pass 2^32: segments restart their base before an offset would
/// overflow, and a bar wider than 2^32 ticks is a segment of its own whose end counts
/// from its own base. Every tick comes back exact.
#[test]
fn ticks_beyond_two_to_the_32_are_cut_into_segments() {
    let big = 3u64 << 32;
    // A 2^40-wide bar, then bars 3·2^32 apart, one tick wide, near 2^62.
    let mut x0 = vec![0u64];
    let mut x1 = vec![1u64 << 40];
    for k in 0..5u64 {
        let at = (1u64 << 62) + k * big;
        x0.push(at);
        x1.push(at + 1);
    }
    // Then four bars within one segment, the last ending 2^32 − 1 past the first start.
    let at = (1u64 << 62) + 5 * big;
    x0.extend([at, at + 10, at + 20, at + (1 << 31)]);
    x1.extend([at + 10, at + 20, at + 30, at + SEGMENT_SPAN - 1]);
    let mut segs = Vec::new();
    let mut next = 0;
    let n = x0.len();
    push_list(
        &mut segs,
        &mut next,
        n,
        (1 << 20, SEGMENT_SPAN),
        |i| x0[i],
        |i| x1[i],
    );
    assert_eq!(next, n as u64);
    assert_eq!(segs.len(), 1 + 5 + 1, "{segs:?}");
    assert_eq!((segs[0].base0, segs[0].base1), (0, 1 << 40));
    assert_eq!(segs[6].len, 4);
    for s in &segs {
        for k in s.bars() {
            let b = s.instance(x0[k], x1[k], 0, 0);
            assert_eq!(s.base0 + u64::from(b.x0), x0[k]);
            assert_eq!(s.base1 + u64::from(b.x1), x1[k]);
        }
    }
    // The shader's 64-bit add with carry, on the split halves.
    let add = |base: [u32; 2], off: u32| {
        let lo = base[0].wrapping_add(off);
        let hi = base[1] + u32::from(lo < off);
        u64::from(lo) | u64::from(hi) << 32
    };
    let s = segs[6];
    let b = s.instance(x0[n - 1], x1[n - 1], 0, 0);
    assert_eq!(add(split(s.base1), b.x1), x1[n - 1]);
    let s = Segment {
        base0: u64::from(u32::MAX) - 5,
        base1: u64::from(u32::MAX) - 5,
        ..seg(0, 1)
    };
    let b = s.instance(s.base0 + 10, s.base0 + 20, 0, 0);
    assert_eq!(add(split(s.base0), b.x0), s.base0 + 10, "the carry");
    assert_eq!(add(split(s.base1), b.x1), s.base0 + 20);
}

/// The color word keeps what the shader's modes need: the diff position within a
/// hundredth of a percent of Pyroscope's (0 % exactly), the heat position within
/// 1/32767, the palette indices and the merged flag; odd values stay in their bits.
#[test]
fn the_color_word_round_trips_what_each_mode_reads() {
    let diff = ValueCodec {
        max_self: 1000.0,
        diff_ticks: Some((1_000_000, 991_000)),
    };
    for (l, r) in [
        (141u64, 125u64),
        (1000, 1000),
        (0, 50),
        (50, 0),
        (333_333, 333_334),
        (999_999, 991_000),
        (1, 2),
    ] {
        let w = diff.pack([7.0, l as f64, r as f64], false);
        let want = crate::color::bar_diff_percent(l, r, 1_000_000, 991_000);
        let got = ValueCodec::diff(w);
        assert!((got - want).abs() < 0.01, "{l} {r}: {got} vs {want}");
        if want == 0.0 {
            assert_eq!(got, 0.0);
        }
        assert_eq!(w >> 31, 0);
    }
    for s in [
        0.0f64,
        1.0,
        10.0,
        250.0,
        999.0,
        1000.0,
        5000.0,
        -3.0,
        f64::NAN,
    ] {
        let w = diff.pack([s, 0.0, 0.0], true);
        assert_eq!(w >> 31, 1);
        let want = if s.is_nan() {
            0.0
        } else {
            (s / 1000.0).clamp(0.0, 1.0).sqrt()
        };
        assert!((ValueCodec::heat(w) - want).abs() <= 0.5 / 32767.0, "{s}");
    }
    let timeline = ValueCodec {
        max_self: 10.0,
        diff_ticks: None,
    };
    let w = timeline.pack([5.0, 7.0, 23.0], false);
    assert_eq!((w & 0xff, (w >> 8) & 0xff), (7, 23));
    let w = timeline.pack([f64::INFINITY, 1e30, -4.0], true);
    assert_eq!((w & 0xff, (w >> 8) & 0xff), ((u32::MAX % 24), 0));
    assert!((ValueCodec::heat(w) - 1.0).abs() < 1e-9);
    assert_eq!(w >> 31, 1);
    let nan = ValueCodec {
        max_self: 1.0,
        diff_ticks: Some((0, 0)),
    };
    assert_eq!(ValueCodec::diff(nan.pack([0.0; 3], false)), 0.0);
    let _ = nan.pack([f64::NAN; 3], false);
}

/// Issue 14, failure 2: a scene kept three levels of vectors per row (rows, lists,
/// segments), hundreds of bytes for each of a million one-bar rows. The flat table
/// gives back every row's lists as they were pushed.
#[test]
fn a_million_deep_trace_costs_hundreds_of_bytes_a_row_in_its_scene() {
    let mut t = SegmentTable::default();
    // Row 0: its bars in two segments, one tier of one; row 1: no bars; row 2: one.
    t.start_row();
    t.start_list();
    t.segments.extend([seg(0, 5), seg(5, 3)]);
    t.start_list();
    t.segments.push(seg(0, 1));
    t.start_row();
    t.start_list();
    t.start_row();
    t.start_list();
    t.segments.push(seg(0, 1));
    t.finish();
    assert_eq!(t.list(0, 0), Some(&[seg(0, 5), seg(5, 3)][..]));
    assert_eq!(t.list(0, 1), Some(&[seg(0, 1)][..]));
    assert_eq!(t.list(0, 2), None);
    assert_eq!(t.list(1, 0), Some(&[][..]));
    assert_eq!(t.list(1, 1), None);
    assert_eq!(t.list(2, 0), Some(&[seg(0, 1)][..]));
    assert_eq!(t.list(3, 0), None);
    // A row of one bar and no tier: one segment and two indices.
    let per_row = std::mem::size_of::<Segment>() + 2 * std::mem::size_of::<u32>();
    assert!(per_row <= 48, "{per_row}");
}

/// Each bar's two triangles share two corners, numbered once: the index buffer covers
/// [`QUADS_PER_DRAW`] bars with 16-bit corner numbers, and the draws of any count of bars
/// cover each once, in order, at most that many at a time.
#[test]
fn bars_are_drawn_as_indexed_quads_in_runs() {
    let idx = quad_index_data();
    assert_eq!(idx.len() as u64, QUADS_PER_DRAW * 6);
    for (q, tri) in idx.chunks(6).enumerate() {
        let b = (q * 4) as u16;
        assert_eq!(tri, [b, b + 1, b + 2, b + 2, b + 1, b + 3], "bar {q}");
    }
    assert_eq!(idx.iter().max(), Some(&u16::MAX));
    for (first, count) in [
        (0, 0),
        (5, 1),
        (7, QUADS_PER_DRAW),
        (3, QUADS_PER_DRAW + 1),
        (0, 5 * QUADS_PER_DRAW - 2),
    ] {
        let runs: Vec<(u64, u64)> = draw_runs(first, count).collect();
        let mut next = first;
        for &(from, n) in &runs {
            assert_eq!(from, next);
            assert!(n > 0 && n <= QUADS_PER_DRAW, "{first} {count}: {runs:?}");
            next += n;
        }
        assert_eq!(next, first + count, "{first} {count}: {runs:?}");
        assert_eq!(runs.len() as u64, count.div_ceil(QUADS_PER_DRAW));
    }
}

/// The pages of a window scene's deferred rows hold exactly those rows' own bars: every
/// page's instances, decoded through its segments, are the row's bars from the page's
/// first on (ticks, names, and the values the whole row gives them, nested or not), at
/// any span of offsets and chunk position; the scene itself holds every other list.
#[test]
fn pages_hold_the_deferred_rows_own_bars() {
    // Rows of hundreds of thousands of narrow bars side by side (and children under
    // them, for the nested values): their finest tiers are what a view of the whole
    // draws.
    let mut text = String::new();
    for i in 0..600_000 {
        text.push_str(&format!("root;f{};g{} {}\n", i % 300_000, i % 7, 1 + i % 3));
    }
    let p = crate::import::folded::parse("many.folded", text.as_bytes()).unwrap();
    let layout = crate::layout::flame_layout(&p.tree);
    let lod = crate::lod::Lod::build(&layout);
    let tree = &p.tree;
    for (nested, read) in [(true, true), (false, true), (false, false)] {
        let src = source(
            (&layout, &lod, &p.names),
            crate::view::draw::BarValues {
                of: Box::new(move |n| {
                    let t = tree.total(n) as f32;
                    [tree.self_ticks(n) as f32, t, t]
                }),
                merge: summed,
                max_self: tree.max_self() as f32,
                diff_ticks: None,
                read,
                nested,
            },
            None,
        );
        let deferred: Vec<usize> = (0..layout.rows.len()).filter(|&r| src.defers(r)).collect();
        assert!(deferred.len() >= 2 && !src.defers(0), "{deferred:?}");
        let unit = TickUnit::of_layout(&layout);
        let codec = ValueCodec::new(&src.values);
        let (mut vals, mut whole, mut got) = (Vec::new(), Vec::new(), Vec::new());
        let mut paged = 0;
        for &r in &deferred {
            let row = &layout.rows[r];
            assert!(!src.wants(r, TierRef::Row));
            src.values.of_row(&layout, r, &mut whole);
            for page in 0..row.len().div_ceil(pages::PAGE) {
                for (at, chunk_cap, span) in [(0, 1 << 20, SEGMENT_SPAN), (4096, 3 << 13, 64)] {
                    let segs = pages::page_instances(
                        &src,
                        unit,
                        (r, page),
                        (at, chunk_cap, span),
                        &mut vals,
                        &mut got,
                    );
                    let mut k = page * pages::PAGE;
                    let mut next = got.iter();
                    for s in &segs {
                        assert_eq!(s.row_start as usize, k, "row {r} page {page}");
                        for _ in s.bars() {
                            let b = next.next().expect("an instance per bar");
                            let x0 = (s.base0 + u64::from(b.x0)) * unit.ticks();
                            let x1 = (s.base1 + u64::from(b.x1)) * unit.ticks();
                            let v = if read {
                                codec.pack(widen(whole[k]), false)
                            } else {
                                ValueCodec::unread(false)
                            };
                            assert_eq!(
                                (x0, x1, b.name, b.value),
                                (row.x0[k], row.x1[k], row.name[k], v)
                            );
                            k += 1;
                        }
                    }
                    assert!(next.next().is_none());
                    assert_eq!(k, ((page + 1) * pages::PAGE).min(row.len()));
                    paged += 1;
                }
            }
        }
        assert!(paged > 20, "{paged} pages");
        // Which pages a draw lacks; none once the device refused a chunk.
        let mut book = pages::Pages::new(&src);
        let r = deferred[0];
        assert!(book.lacks(r, &(0..1)) && !book.lacks(0, &(0..1)));
        book.refused = true;
        assert!(
            !book.lacks(r, &(0..1)),
            "a refused scene asks for no page again"
        );
    }
}
