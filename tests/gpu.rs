//! Rendering tests on a real wgpu device (Mesa llvmpipe/lavapipe on machines without a
//! GPU). Each test skips with a message when no adapter exists, unless
//! `SCORCH_REQUIRE_GPU=1` (CI), where a missing adapter fails.
//!
//! They check what the shaders compute against the CPU reference in `scorch::color`, the
//! exactness of positions at deep zoom, crisp edges at HiDPI scales, seamless tiling, and
//! golden images of the demo profiles (`SCORCH_BLESS=1` re-blesses; look at the PNGs).

mod common;

use common::*;
use scorch::color::{
    ColorMode, DIFF_COLORBLIND, DIFF_DEFAULT, PALETTE, bar_diff_percent, diff_color, heat_color,
    murmur3_32, package_name, palette_index, pyroscope_key,
};
use scorch::export::{ExportOptions, ExportView};
use scorch::geometry::{Camera, Orientation};
use scorch::model::{Document, Profile};
use scorch::render::bars::PageBudget;
use scorch::render::names::{NameHashes, PackedKeys};
use scorch::view::flame::FlameView;
use std::sync::Arc;

const WHITE: [u8; 3] = [255, 255, 255];

fn to8(c: [f32; 3]) -> [u8; 3] {
    c.map(|v| (v * 255.0).round() as u8)
}

/// Center pixel of bar `i` of row `row` of `v`.
fn bar_center(v: &FlameView, row: usize, i: usize) -> (u32, u32) {
    let g = v.geometry(1.0);
    let cam = v.state().camera;
    let r = &v.layout().rows[row];
    let x = g.graph.x as f64 + (cam.x_of(r.x0[i]) + cam.x_of(r.x1[i])) / 2.0;
    let y = g.row_top(row) + g.bar_height_px / 2.0;
    (x as u32, y as u32)
}

fn opts(width: u32, orientation: Orientation, color: Option<ColorMode>) -> ExportOptions {
    ExportOptions {
        width,
        view: Some(match orientation {
            Orientation::Flame => ExportView::FlameGraph,
            Orientation::Icicle => ExportView::Icicle,
        }),
        color,
        ..ExportOptions::default()
    }
}

#[test]
fn gpu_murmur3_matches_cpu_reference() {
    let Some(gpu) = gpu() else { return };
    let mut words: Vec<String> = vec![
        String::new(),
        "a".into(),
        "ab".into(),
        "abc".into(),
        "abcd".into(),
        "abcde".into(),
        "Hello, world!".into(),
        "The quick brown fox jumps over the lazy dog".into(),
        "runtime.".into(),
        "main.".into(),
        "café".into(),
        "日本語の関数".into(),
        "😀 emoji".into(),
    ];
    for i in 0..500 {
        words.push(format!("pkg{i}/sub.Function{}", i * 7919));
    }
    let pairs: Vec<(&str, &str)> = words
        .iter()
        .zip(words.iter().rev())
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect();
    let packed = PackedKeys::from_pairs(pairs.iter().copied());
    let hashes = NameHashes::compute_packed(gpu, &packed).read(gpu);
    assert_eq!(hashes.len(), pairs.len());
    for ((pkg, full), got) in pairs.iter().zip(&hashes) {
        assert_eq!(
            got[0],
            murmur3_32(&pyroscope_key(pkg), 0),
            "package key {pkg:?}"
        );
        assert_eq!(
            got[1],
            murmur3_32(&pyroscope_key(full), 0),
            "name key {full:?}"
        );
    }
    // And the published vectors straight through the shader.
    let v = PackedKeys::from_pairs([("test", "Hello, world!")]);
    let h = NameHashes::compute_packed(gpu, &v).read(gpu);
    assert_eq!(h[0], [0xba6b_d213, 0xc036_3e43]);
}

fn sample_mode(
    profile: &Arc<Profile>,
    mode: ColorMode,
    colorblind: bool,
) -> (FlameView, scorch::render::RgbaImage) {
    let gpu = gpu().unwrap();
    let mut o = opts(900, Orientation::Icicle, Some(mode));
    o.colorblind = colorblind;
    let v = flame_view(profile, &o, false);
    let img = render_view(gpu, &v);
    (v, img)
}

#[test]
fn package_and_name_colors_are_pyroscopes() {
    if gpu().is_none() {
        return;
    }
    let names = [
        "main.work",
        "runtime.mallocgc",
        "net/http.(*Client).Do",
        "github.com/grafana/pyroscope/pkg/og.Fn",
        "std::io::copy",
        "sys_read_[k]",
        "java/lang/Thread.run",
        "éclair.fn",
        "x",
    ];
    let text: String = names.iter().map(|n| format!("{n} 100\n")).collect();
    let p = profile_from("colors.folded", &text);
    for mode in [ColorMode::Package, ColorMode::Name] {
        let (v, img) = sample_mode(&p, mode, false);
        let row = &v.layout().rows[1];
        assert_eq!(row.len(), names.len());
        for i in 0..row.len() {
            let name = p.names.get(row.name[i]);
            let key = match mode {
                ColorMode::Package => pyroscope_key(package_name(None, name)),
                _ => pyroscope_key(name),
            };
            let want = PALETTE[palette_index(&key)];
            let (x, y) = bar_center(&v, 1, i);
            let got = img.pixel(x, y);
            assert!(
                color_diff(got, want) <= 1,
                "{mode:?} {name}: got {got:?} want {want:?}"
            );
        }
    }
}

/// The colors Pyroscope 0.35.6 draws `data/demo-pyroscope.json` (gospy) in, read from its
/// canvas in Chromium (`scripts/pyroscope-compare.sh`): hash, package rule, the 24-entry
/// palette and its upload, end to end. `database/sql.` is entry 10, (78, 146, 249).
#[test]
fn flamebearer_colors_are_the_ones_pyroscope_draws() {
    if gpu().is_none() {
        return;
    }
    let p = profile_at("data/demo-pyroscope.json");
    let (v, img) = sample_mode(&p, ColorMode::Package, false);
    let layout = v.layout();
    let want: &[(&str, [u8; 3])] = &[
        ("total", [137, 130, 201]),
        ("runtime.main", [229, 168, 226]),
        ("main.main", [81, 149, 206]),
        ("net/http.(*conn).serve", [137, 130, 201]),
        ("bufio.(*Reader).ReadLine", [104, 151, 202]),
        (
            "github.com/acme/shop/api.(*Handler).Checkout",
            [174, 162, 224],
        ),
        ("html/template.(*Template).Execute", [234, 100, 96]),
        ("encoding/json.Marshal", [224, 173, 108]),
        ("github.com/acme/shop/pricing.Compute", [223, 139, 83]),
        ("database/sql.(*DB).QueryContext", [78, 146, 249]),
        ("math/big.(*Float).Mul", [242, 145, 145]),
        ("github.com/lib/pq.(*conn).query", [244, 213, 152]),
        ("syscall.Syscall", [235, 168, 230]),
    ];
    for &(name, color) in want {
        let (row, i) = (0..layout.rows.len())
            .find_map(|r| {
                let names = &layout.rows[r].name;
                (0..names.len())
                    .find(|&i| p.names.get(names[i]) == name)
                    .map(|i| (r, i))
            })
            .unwrap_or_else(|| panic!("no bar named {name}"));
        let (x, y) = bar_center(&v, row, i);
        let got = img.pixel(x, y);
        assert!(
            color_diff(got, color) <= 1,
            "{name}: got {got:?}, Pyroscope draws {color:?}"
        );
    }
}

#[test]
fn diff_colors_follow_the_gradient() {
    if gpu().is_none() {
        return;
    }
    let p = profile_from(
        "d.folded",
        "r;a 100 100\nr;b 100 150\nr;c 100 50\nr;d 0 100\nr;e 100 0\nr;f 100 120\nr;g 100 80\n",
    );
    let (lt, rt) = p.meta.diff_ticks.unwrap();
    for (colorblind, pal) in [(false, &DIFF_DEFAULT), (true, &DIFF_COLORBLIND)] {
        let (v, img) = sample_mode(&p, ColorMode::Diff, colorblind);
        let row = &v.layout().rows[2];
        assert_eq!(row.len(), 7);
        for i in 0..row.len() {
            let n = row.node[i];
            let l = p.tree.left_total(n);
            let pct = bar_diff_percent(l, p.tree.total(n) - l, lt, rt);
            let want = to8(diff_color(pct, pal));
            let (x, y) = bar_center(&v, 2, i);
            let got = img.pixel(x, y);
            assert!(
                color_diff(got, want) <= 2,
                "{} ({pct:.1}%): got {got:?} want {want:?}",
                p.names.get(row.name[i])
            );
        }
        // New code is the palette's "bad" end, removed code its "good" end.
        let idx = |name: &str| {
            (0..row.len())
                .find(|&i| p.names.get(row.name[i]) == name)
                .unwrap()
        };
        let (x, y) = bar_center(&v, 2, idx("d"));
        assert!(color_diff(img.pixel(x, y), pal.bad) <= 2);
        let (x, y) = bar_center(&v, 2, idx("e"));
        assert!(color_diff(img.pixel(x, y), pal.good) <= 2);
    }
}

#[test]
fn heat_colors_follow_self_value() {
    if gpu().is_none() {
        return;
    }
    let p = profile_from("h.folded", "a 1\nb 10\nc 100\nd 50\ne;f 30\n");
    let (v, img) = sample_mode(&p, ColorMode::Value, false);
    let layout = v.layout();
    let max = p.tree.max_self() as f64;
    for row in 1..layout.rows.len() {
        for i in 0..layout.rows[row].len() {
            let n = layout.rows[row].node[i];
            let want = to8(heat_color(p.tree.self_ticks(n) as f64, max));
            let (x, y) = bar_center(&v, row, i);
            assert!(color_diff(img.pixel(x, y), want) <= 2, "row {row} bar {i}");
        }
    }
}

/// Bars 10^12 ticks from the origin, zoomed to 20 pixels per tick: every edge must land
/// on its exact pixel. (With plain f32 positions, 10^12 rounds to a multiple of 65 536.)
#[test]
fn deep_zoom_on_a_trillion_tick_axis_is_exact() {
    let Some(gpu) = gpu() else { return };
    let p = profile_from("deep.folded", "pad 999999999990\nt;a 1\nt;b 1\nt;c 1\n");
    let mut v = flame_view(
        &p,
        &opts(400, Orientation::Icicle, Some(ColorMode::Name)),
        false,
    );
    assert_eq!(v.layout().total_ticks, 999_999_999_993);
    v.state_mut().camera = Camera {
        start: 999_999_999_985,
        start_frac: 0.0,
        px_per_tick: 20.0,
    };
    let img = render_view(gpu, &v);
    let g = v.geometry(1.0);
    let gx = g.graph.x as u32;
    let y2 = (g.row_top(2) + g.bar_height_px / 2.0) as u32;
    let y1 = (g.row_top(1) + g.bar_height_px / 2.0) as u32;
    let color_of = |name: &str| PALETTE[palette_index(&pyroscope_key(name))];
    let px = |x: u32, y: u32| img.pixel(gx + x, y);
    // Row 2: a = [100, 120), b = [120, 140), c = [140, 160) minus a 1 px gap each.
    assert_eq!(&px(99, y2)[..3], &WHITE, "left of a");
    assert!(
        color_diff(px(100, y2), color_of("a")) <= 1,
        "a starts at 100"
    );
    assert!(color_diff(px(118, y2), color_of("a")) <= 1, "a ends at 119");
    assert_eq!(&px(119, y2)[..3], &WHITE, "gap after a");
    assert!(
        color_diff(px(120, y2), color_of("b")) <= 1,
        "b starts at 120"
    );
    assert!(
        color_diff(px(140, y2), color_of("c")) <= 1,
        "c starts at 140"
    );
    assert_eq!(&px(159, y2)[..3], &WHITE, "gap after c");
    assert_eq!(&px(160, y2)[..3], &WHITE, "nothing after c");
    // Row 1: pad ends where t starts, at 100.
    assert!(color_diff(px(98, y1), color_of("pad")) <= 1);
    assert_eq!(&px(99, y1)[..3], &WHITE);
    assert!(color_diff(px(100, y1), color_of("t")) <= 1);
    // Panning by a quarter tick moves every edge by exactly 5 pixels.
    v.state_mut().camera.start_frac = 0.25;
    let img2 = render_view(gpu, &v);
    assert!(color_diff(img2.pixel(gx + 95, y2), color_of("a")) <= 1);
    assert_eq!(&img2.pixel(gx + 94, y2)[..3], &WHITE);
}

/// A row whose bars pass 2^32 ticks many times over: each bar about 3·10^9 ticks (two
/// never share a 32-bit offset range, so each is a segment with its own base) and one
/// 5·10^9 wide (more than an offset reaches: its end has a base of its own). At the full
/// view every bar shows its color; at 20 pixels per tick the edges 2.7·10^10 ticks out,
/// where the base's high word is 6, land on their exact pixels, as do the wide bar's.
#[test]
fn a_row_past_two_to_the_32_ticks_draws_every_segment_exactly() {
    let Some(gpu) = gpu() else { return };
    let mut text = String::new();
    for i in 0..10 {
        let ticks: u64 = if i == 4 { 5_000_000_000 } else { 3_000_000_007 };
        text += &format!("r;s{i} {ticks}\n");
    }
    let p = profile_from("long.folded", &text);
    let mut v = flame_view(
        &p,
        &opts(800, Orientation::Icicle, Some(ColorMode::Name)),
        false,
    );
    let row = v.layout().rows[2].clone();
    assert_eq!(row.len(), 10);
    assert!(v.layout().total_ticks > 6 << 32);
    let color_of = |name: &str| PALETTE[palette_index(&pyroscope_key(name))];
    let name = |i: usize| p.names.get(row.name[i]).to_string();
    let img = render_view(gpu, &v);
    for i in 0..row.len() {
        let (x, y) = bar_center(&v, 2, i);
        assert!(
            color_diff(img.pixel(x, y), color_of(&name(i))) <= 1,
            "bar {i}"
        );
    }
    let g = v.geometry(1.0);
    let gx = g.graph.x as u32;
    let y = (g.row_top(2) + g.bar_height_px / 2.0) as u32;
    let wide = (0..row.len())
        .find(|&i| row.x1[i] - row.x0[i] > 1 << 32)
        .unwrap();
    for edge in [row.len() - 1, wide, wide + 1] {
        let Some(prev) = edge.checked_sub(1) else {
            continue;
        };
        if edge >= row.len() {
            continue;
        }
        // The edge between bars prev and edge at pixel 100.
        v.state_mut().camera = Camera {
            start: row.x0[edge] - 5,
            start_frac: 0.0,
            px_per_tick: 20.0,
        };
        let img = render_view(gpu, &v);
        let px = |x: u32| img.pixel(gx + x, y);
        assert!(
            color_diff(px(98), color_of(&name(prev))) <= 1,
            "edge {edge}"
        );
        assert_eq!(&px(99)[..3], &WHITE, "gap before edge {edge}");
        assert!(
            color_diff(px(100), color_of(&name(edge))) <= 1,
            "edge {edge}"
        );
        assert!(
            color_diff(px(101), color_of(&name(edge))) <= 1,
            "edge {edge}"
        );
    }
}

/// A bar half a pixel wide leaves a half-covered pixel: coverage becomes alpha.
#[test]
fn sub_pixel_bars_blend_by_coverage() {
    let Some(gpu) = gpu() else { return };
    let p = profile_from("thin.folded", "p;a 1\np 3\n");
    let mut v = flame_view(
        &p,
        &opts(300, Orientation::Icicle, Some(ColorMode::Name)),
        false,
    );
    v.state_mut().camera = Camera {
        start: 0,
        start_frac: 0.0,
        px_per_tick: 0.5,
    };
    let img = render_view(gpu, &v);
    let g = v.geometry(1.0);
    // a spans [1.5, 2.0) px: pixel 1 is half a, half background.
    let y = (g.row_top(2) + g.bar_height_px / 2.0) as u32;
    let a = PALETTE[palette_index(b"a")];
    let want = [0, 1, 2].map(|c| ((u16::from(a[c]) + 255) / 2) as u8);
    let got = img.pixel(g.graph.x as u32 + 1, y);
    assert!(color_diff(got, want) <= 3, "got {got:?} want {want:?}");
    assert_eq!(&img.pixel(g.graph.x as u32 + 2, y)[..3], &WHITE);
}

#[test]
fn tiles_are_seamless() {
    let Some(gpu) = gpu() else { return };
    let p = profile_at("data/demo.folded");
    let v = flame_view(&p, &opts(500, Orientation::Flame, None), true);
    let (whole, s1) = render_view_stats(gpu, &v, 8192);
    let (tiled, s2) = render_view_stats(gpu, &v, 64);
    assert_eq!(s1.tiles, 1);
    assert!(s2.tiles > 20, "{} tiles", s2.tiles);
    assert_eq!((whole.width, whole.height), (tiled.width, tiled.height));
    let mut worst = 0;
    let mut off = 0;
    for (a, b) in whole
        .pixels
        .chunks_exact(4)
        .zip(tiled.pixels.chunks_exact(4))
    {
        let d = (0..3).map(|c| a[c].abs_diff(b[c])).max().unwrap();
        worst = worst.max(d);
        if d > 2 {
            off += 1;
        }
    }
    assert_eq!(
        off, 0,
        "{off} pixels differ between tiled and whole rendering (worst {worst})"
    );
}

#[test]
fn hidpi_doubles_the_image_and_keeps_edges_crisp() {
    let Some(gpu) = gpu() else { return };
    let p = profile_at("data/demo.folded");
    let mut o = opts(400, Orientation::Flame, Some(ColorMode::Name));
    let s1 = flame_view(&p, &o, false);
    o.scale = 2.0;
    let s2 = flame_view(&p, &o, false);
    let i1 = render_view(gpu, &s1);
    let i2 = render_view(gpu, &s2);
    assert_eq!((i2.width, i2.height), (i1.width * 2, i1.height * 2));
    // The root bar: exact color from its first pixel, background right before, at both
    // scales; the separator between rows is whole pixels.
    for (v, img) in [(&s1, &i1), (&s2, &i2)] {
        let g = v.geometry(1.0);
        let root = PALETTE[palette_index(b"total")];
        let y = (g.row_top(0) + g.bar_height_px / 2.0) as u32;
        let x0 = g.graph.x as u32;
        assert_eq!(&img.pixel(x0 - 1, y)[..3], &WHITE);
        assert!(color_diff(img.pixel(x0, y), root) <= 1);
        let top = g.row_top(0) as u32;
        assert!(
            color_diff(img.pixel(x0 + 10, top), root) <= 1,
            "first row of the bar"
        );
        assert_eq!(&img.pixel(x0 + 10, top - 1)[..3], &WHITE, "separator above");
        assert_eq!(g.gap_px, g.scale.round().max(1.0));
    }
}

/// Renders `file` as `scorch render` does and compares it with the golden image.
fn golden(name: &str, file: &str, o: ExportOptions) {
    let Some(gpu) = gpu() else { return };
    let doc = Document::Profile(profile_at(file));
    let (img, _) = scorch::export::render_rgba(gpu, &doc, &o).unwrap();
    check_golden(name, &img);
}

#[test]
fn golden_demo_flame() {
    golden(
        "demo_flame",
        "data/demo.folded",
        opts(720, Orientation::Flame, None),
    );
}

#[test]
fn golden_demo_icicle_hidpi() {
    let mut o = opts(480, Orientation::Icicle, None);
    o.scale = 2.0;
    golden("demo_icicle_2x", "data/demo.folded", o);
}

#[test]
fn golden_demo_left_heavy_1x_and_2x() {
    for (name, scale) in [("demo_left_heavy", 1.0), ("demo_left_heavy_2x", 2.0)] {
        let o = ExportOptions {
            width: 600,
            scale,
            view: Some(ExportView::LeftHeavy),
            ..ExportOptions::default()
        };
        golden(name, "data/demo.folded", o);
    }
}

#[test]
fn golden_demo_tables_1x_and_diff_2x() {
    let mut o = ExportOptions {
        width: 720,
        height: Some(260),
        view: Some(ExportView::Table),
        ..ExportOptions::default()
    };
    golden("demo_table", "data/demo.folded", o.clone());
    o.width = 600;
    o.height = Some(200);
    o.scale = 2.0;
    golden("demo_diff_table_2x", "data/demo-diff.folded", o);
}

#[test]
fn golden_demo_sandwich_1x_and_2x() {
    let mut o = ExportOptions {
        width: 720,
        view: Some(ExportView::Sandwich),
        function: Some("serde_json::ser::to_vec".into()),
        ..ExportOptions::default()
    };
    golden("demo_sandwich", "data/demo.folded", o.clone());
    o.width = 480;
    o.scale = 2.0;
    o.function = Some("app::search::rank".into());
    golden("demo_sandwich_2x", "data/demo.folded", o);
}

#[test]
fn golden_demo_both_1x_and_diff_2x() {
    let mut o = ExportOptions {
        width: 1000,
        view: Some(ExportView::Both),
        function: Some("app::search::rank".into()),
        ..ExportOptions::default()
    };
    golden("demo_both", "data/demo.folded", o.clone());
    o.width = 760;
    o.scale = 2.0;
    o.function = None;
    golden("demo_diff_both_2x", "data/demo-diff.folded", o);
}

#[test]
fn golden_demo_value_heat() {
    golden(
        "demo_value",
        "data/demo.folded",
        opts(720, Orientation::Flame, Some(ColorMode::Value)),
    );
}

#[test]
fn golden_demo_diff() {
    golden(
        "demo_diff",
        "data/demo-diff.folded",
        opts(720, Orientation::Icicle, None),
    );
}

#[test]
fn golden_demo_diff_colorblind() {
    let mut o = opts(720, Orientation::Icicle, None);
    o.colorblind = true;
    golden("demo_diff_colorblind", "data/demo-diff.folded", o);
}

#[test]
fn golden_pyroscope_flamebearer() {
    golden(
        "demo_pyroscope",
        "data/demo-pyroscope.json",
        opts(720, Orientation::Icicle, None),
    );
}

/// `lines` stacks `root;f<i mod distinct>` of 1 to 7 samples: a row of `distinct`
/// narrow bars side by side under the root.
fn narrow_bars(lines: usize, distinct: usize) -> Arc<Profile> {
    let mut text = String::new();
    for i in 0..lines {
        text.push_str(&format!("root;f{} {}\n", i % distinct, 1 + i % 7));
    }
    profile_from("many.folded", &text)
}

/// Level of detail: a 200 000-bar row at full view draws about two bars per pixel, and a
/// merged run of sub-pixel bars is drawn lighter than the palette color.
#[test]
fn lod_bounds_the_bars_drawn_per_frame() {
    let Some(gpu) = gpu() else { return };
    let p = narrow_bars(200_000, 50_000);
    let v = flame_view(
        &p,
        &opts(600, Orientation::Icicle, Some(ColorMode::Name)),
        false,
    );
    let layout = v.layout();
    let (img, stats) = render_view_stats(gpu, &v, 8192);
    let g = v.geometry(1.0);
    let cam = v.state().camera;
    let width = g.graph.w as u64;
    assert!(layout.bar_count() > 50_000);
    assert!(
        stats.bars_drawn <= 2 + 2 * (2 * width + 1),
        "{} bars drawn for {} px",
        stats.bars_drawn,
        width
    );
    // Row 2 is merged runs: each is its dominant name's color mixed 35 % towards white.
    let lod = v.lod();
    let tpp = 1.0 / cam.px_per_tick;
    let scorch::lod::TierRef::Tier(k) = lod.tier_for(2, tpp) else {
        panic!("row 2 needs a tier at full view");
    };
    let tier = &lod.rows[2][k];
    let run = (0..tier.len())
        .filter_map(|j| lod.run(layout, 2, k, j))
        .filter(|run| run.count > 1)
        .max_by_key(|run| run.x1 - run.x0)
        .expect("a merged run");
    let x = g.graph.x as f64 + (cam.x_of(run.x0) + cam.x_of(run.x1)) / 2.0;
    let y = (g.row_top(2) + g.bar_height_px / 2.0) as u32;
    let c = PALETTE[palette_index(&pyroscope_key(p.names.get(run.name)))];
    let want = c.map(|v| (f32::from(v) + (255.0 - f32::from(v)) * 0.35).round() as u8);
    let got = img.pixel(x as u32, y);
    assert!(
        color_diff(got, want) <= 3,
        "merged run: got {got:?}, want {want:?}"
    );
}

/// Issue 14, failure 3: a buffer the device refuses (out of memory in the export's
/// readback buffer, under a 4 GB limit) panicked in wgpu's default error handler. In
/// the allocation scope a refused buffer, and what then uses it, is an error naming
/// what was being allocated.
#[test]
fn panic_on_gpu_out_of_memory_in_the_export_readback_buffer() {
    let Some(gpu) = gpu() else { return };
    let too_big = gpu.device.limits().max_buffer_size + 4;
    let r = gpu.allocating("reading the image back", too_big, || {
        let b = gpu.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("too big"),
            size: too_big,
            usage: wgpu::BufferUsages::COPY_DST | wgpu::BufferUsages::MAP_READ,
            mapped_at_creation: false,
        });
        let mut enc = gpu.device.create_command_encoder(&Default::default());
        enc.clear_buffer(&b, 0, Some(4));
        gpu.queue.submit([enc.finish()]);
    });
    let err = r.unwrap_err().to_string();
    assert!(err.contains("reading the image back"), "{err}");
    // The device is still usable afterwards.
    let p = profile_at("data/demo.folded");
    let v = flame_view(&p, &opts(300, Orientation::Flame, None), true);
    let (img, _) = render_view_stats(gpu, &v, 8192);
    assert_eq!(img.width, 300);
}

/// `scorch render` draws a tiny image of the kind the input gives (or one of each while
/// the format is not known) on the device thread while the input loads
/// (`export::prime`), so that the driver compiles its shader variants there. The
/// renderer it leaves (glyphs in the atlas, text caches) draws the export's pixels
/// exactly as a fresh one does, whichever kind it primed: flame graphs in hash, heat and
/// diff colors, and a trace timeline.
#[test]
fn an_export_after_the_priming_draws_the_same_pixels() {
    use scorch::export::{ExportTimings, export_view, prime, render_view};
    use scorch::render::{Renderer, TARGET_FORMAT};
    let Some(gpu) = gpu() else { return };
    let profile = Document::Profile(profile_at("data/demo.folded"));
    let diff = Document::Profile(profile_at("data/demo-diff.folded"));
    let trace = Document::from(
        scorch::import::load_any_path(&root().join("data/demo-tidb-trace.json")).unwrap(),
    );
    let cases = [
        (&profile, opts(640, Orientation::Flame, None)),
        (
            &profile,
            opts(640, Orientation::Icicle, Some(ColorMode::Name)),
        ),
        (
            &profile,
            opts(640, Orientation::Flame, Some(ColorMode::Value)),
        ),
        (&diff, opts(640, Orientation::Flame, None)),
        (&trace, ExportOptions::default()),
    ];
    use scorch::import::Gives;
    for gives in [None, Some(Gives::Profile), Some(Gives::Trace)] {
        let mut primed = Renderer::new(gpu, TARGET_FORMAT);
        prime(gpu, &mut primed, gives);
        for (i, (doc, o)) in cases.iter().enumerate() {
            let i = format!("{i} primed for {gives:?}");
            let view = export_view(doc, o).unwrap();
            let mut fresh = Renderer::new(gpu, TARGET_FORMAT);
            let (want, _) =
                render_view(gpu, &mut fresh, &*view, &mut ExportTimings::default()).unwrap();
            let (got, _) =
                render_view(gpu, &mut primed, &*view, &mut ExportTimings::default()).unwrap();
            assert_eq!(
                (got.width, got.height),
                (want.width, want.height),
                "case {i}"
            );
            assert!(got.pixels == want.pixels, "case {i}: the pixels differ");
            // Not a blank picture: the bars are there.
            let distinct: std::collections::HashSet<&[u8]> = got.pixels.chunks(4).collect();
            assert!(distinct.len() > 8, "case {i}: {} colors", distinct.len());
        }
    }
}

/// A window's scene leaves a row's own bars out while its finest tier is what a view of
/// the whole layout draws, and uploads them a page at a time when a frame first draws
/// them: until then the frame draws that tier over the same ticks, and once fetched the
/// pixels are those of a scene that held the own bars from the start.
#[test]
fn own_bars_come_a_page_at_a_time_and_draw_exactly() {
    use scorch::render::{self, Renderer, Scenes, TARGET_FORMAT};
    use scorch::view::{Purpose, View, compose};
    let Some(gpu) = gpu() else { return };
    let p = narrow_bars(600_000, 300_000);
    let mut v = flame_view(
        &p,
        &opts(600, Orientation::Icicle, Some(ColorMode::Name)),
        false,
    );
    assert!(
        v.bar_sources()[0].defers(2),
        "row 2's own bars are left for later"
    );
    assert!(!v.bar_sources()[0].defers(0), "the root's are not");
    // Two pixels a tick, in the middle of row 2's 300 000 bars, across the start of a
    // page: its own bars are drawn, from two pages.
    let page = scorch::render::bars::PAGE;
    let across = v.layout().rows[2].x0[150 * page];
    v.state_mut().camera = Camera {
        start: across - 150,
        start_frac: 0.0,
        px_per_tick: 2.0,
    };
    let tpp = 0.5;
    assert_eq!(v.lod().tier_for(2, tpp), scorch::lod::TierRef::Row);
    let mut renderer = Renderer::new(gpu, TARGET_FORMAT);
    let layout = renderer.scene_layout();
    let sources = v.bar_sources();
    let mut frame = compose(&v, Purpose::Export, None, renderer.text());
    let mut scenes = Scenes::build(gpu, &layout, &sources).unwrap();
    let before = scenes.instance_bytes();
    // The reference: a scene that holds every list this zoom draws, own bars included.
    let mut whole = v.bar_sources();
    whole[0].only_at = Some(tpp);
    let reference = Scenes::build(gpu, &layout, &whole).unwrap();
    let (want, _) = render::render_frame(gpu, &mut renderer, &frame, &reference).unwrap();
    let (fallback, _) = render::render_frame(gpu, &mut renderer, &frame, &scenes).unwrap();
    assert_ne!(
        fallback.pixels, want.pixels,
        "the finest tier drawn meanwhile"
    );
    // That is the picture of the deferred rows' finest tiers over the frame's ticks.
    let drawn = frame.bars[0].rows.clone();
    let (t0, t1) = frame.bars[0]
        .camera
        .visible_ticks(f64::from(frame.bars[0].clip.w));
    let mut tiered = 0;
    for d in &mut frame.bars[0].rows {
        if d.tier == scorch::lod::TierRef::Row && sources[0].defers(d.row) {
            let finest = v.lod().tier(d.row, 0).unwrap();
            d.range = finest.range_between(&v.layout().rows[d.row], t0, t1);
            d.tier = scorch::lod::TierRef::Tier(0);
            tiered += 1;
        }
    }
    assert!(tiered >= 1);
    let (finest, _) = render::render_frame(gpu, &mut renderer, &frame, &scenes).unwrap();
    assert!(finest.pixels == fallback.pixels, "the finest tier, exactly");
    frame.bars[0].rows = drawn;
    // No budget: nothing uploaded, the pages this frame reaches counted.
    let missing = scenes
        .fetch(gpu, &sources, &frame.bars, PageBudget::pages(0))
        .unwrap();
    assert_eq!(missing, 2, "{missing} pages missing");
    assert_eq!(scenes.instance_bytes(), before);
    // Out of time: one page all the same, so that every frame gets on, and no more.
    let late = PageBudget {
        pages: usize::MAX,
        until: Some(std::time::Instant::now()),
    };
    assert_eq!(scenes.fetch(gpu, &sources, &frame.bars, late).unwrap(), 1);
    assert_eq!(
        scenes
            .fetch(gpu, &sources, &frame.bars, PageBudget::pages(1))
            .unwrap(),
        0
    );
    assert_eq!(
        scenes
            .fetch(gpu, &sources, &frame.bars, PageBudget::ALL)
            .unwrap(),
        0
    );
    let fetched = scenes.instance_bytes() - before;
    assert_eq!(fetched as usize % 16, 0);
    assert!(fetched as usize <= missing * page * 16, "{fetched} bytes");
    assert_eq!(
        scenes
            .fetch(gpu, &sources, &frame.bars, PageBudget::ALL)
            .unwrap(),
        0
    );
    assert_eq!(
        scenes.instance_bytes() - before,
        fetched,
        "pages are fetched once"
    );
    let (got, _) = render::render_frame(gpu, &mut renderer, &frame, &scenes).unwrap();
    assert!(
        got.pixels == want.pixels,
        "own bars drawn exactly once fetched"
    );
}
