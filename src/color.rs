//! Bar colors: the CPU reference of what `shaders/bars.wgsl` and `shaders/name_hash.wgsl`
//! compute on the GPU.
//!
//! The GPU computes every bar color itself; this module exists so that (a) the inputs the
//! shaders need (hash keys, palette, gradient stops) are defined once, here, and uploaded;
//! (b) tests can assert that rendered pixels equal what the reference says; (c) the CPU can
//! pick a readable label color for a bar and draw the diff legend with the same gradient.
//!
//! Conventions follow Pyroscope (`packages/pyroscope-flamegraph/src/FlameGraph/
//! FlameGraphComponent/color.ts`, `colorPalette.ts`, `murmur3.ts`) so that a function gets
//! the color family Pyroscope users know:
//! - the *package part* of a name is chosen by a per-profiler regex (`spyName`);
//! - its MurmurHash3 x86_32 (seed 0) modulo the 24-entry palette picks the color. Pyroscope
//!   hashes `charCodeAt(i) & 0xff` over UTF-16 code units; [`pyroscope_key`] produces the
//!   same bytes, so even non-ASCII names get Pyroscope's color;
//! - diff bars: relative change of the right share over the left share, in percent rounded
//!   to 0.01 as Pyroscope rounds, clamped to ±100 %, mapped linearly green→grey→red
//!   (blue→grey→red in the color-blind palette).

use regex::Regex;
use std::sync::OnceLock;

/// How bars are colored (also the CLI's `--color` values, with these lines as their help).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum ColorMode {
    /// MurmurHash3 of the name's package part into the palette (Pyroscope's default).
    #[default]
    Package,
    /// MurmurHash3 of the whole name into the palette.
    Name,
    /// Heat by self value: pale yellow (no self time) to deep red (the largest self).
    Value,
    /// Differential: relative change from left to right, green→grey→red.
    Diff,
    /// Timelines: one color per track (process/thread, service, TiDB node type).
    Track,
    /// Timelines: one color per category (Chrome `cat`; the track's color without one).
    Category,
}

impl ColorMode {
    /// The value the shader's `globals.color_mode` takes for this mode.
    pub fn shader_code(self) -> u32 {
        match self {
            ColorMode::Package => 0,
            ColorMode::Name => 1,
            ColorMode::Value => 2,
            ColorMode::Diff => 3,
            ColorMode::Track => 4,
            ColorMode::Category => 5,
        }
    }

    /// Whether bars drawn in this mode take their color from their values (heat, diff,
    /// track, category) rather than from their name's hash alone.
    pub fn reads_values(self) -> bool {
        !matches!(self, ColorMode::Package | ColorMode::Name)
    }

    /// Lower-case name, as the CLI spells it.
    pub fn name(self) -> &'static str {
        match self {
            ColorMode::Package => "package",
            ColorMode::Name => "name",
            ColorMode::Value => "value",
            ColorMode::Diff => "diff",
            ColorMode::Track => "track",
            ColorMode::Category => "category",
        }
    }
}

/// Pyroscope's flame graph palette, as sRGB bytes, in order.
///
/// Source: `DefaultPalette.colors` in `src/FlameGraph/FlameGraphComponent/colorPalette.ts`
/// of the npm package `@pyroscope/flamegraph` 0.35.6. The first eight are
/// `Color.hsl(h, s, l)` there: the canvas receives them as `hsl(...)` strings, and the
/// bytes below are what Chromium draws for them (each is also the exact conversion rounded
/// to the nearest byte); the other sixteen are `Color.rgb` verbatim. The length is part of
/// the rule: a name's color is `murmur3(key) % 24`.
pub const PALETTE: [[u8; 3]; 24] = [
    [223, 139, 83],  // hsl(24, 69%, 60%)
    [224, 173, 108], // hsl(34, 65%, 65%)
    [104, 183, 207], // hsl(194, 52%, 61%)
    [89, 192, 163],  // hsl(163, 45%, 55%)
    [104, 151, 202], // hsl(211, 48%, 60%)
    [137, 130, 201], // hsl(246, 40%, 65%)
    [235, 168, 230], // hsl(305, 63%, 79%)
    [255, 225, 117], // hsl(47, 100%, 73%)
    [183, 219, 171],
    [244, 213, 152],
    [78, 146, 249],
    [249, 186, 143],
    [242, 145, 145],
    [130, 181, 216],
    [229, 168, 226],
    [174, 162, 224],
    [154, 196, 138],
    [242, 201, 109],
    [101, 197, 219],
    [249, 147, 78],
    [234, 100, 96],
    [81, 149, 206],
    [214, 131, 206],
    [128, 110, 183],
];

/// Palette entries for tracks, in order: well apart in hue, so neighbouring tracks (TiDB
/// and TiKV, two threads) never share a color.
pub const TRACK_COLORS: [usize; 10] = [4, 0, 3, 5, 20, 17, 2, 22, 16, 23];

/// The palette index of track `i` (what `bars.wgsl` reads from an instance in track mode).
pub fn track_palette_index(i: u32) -> u32 {
    TRACK_COLORS[i as usize % TRACK_COLORS.len()] as u32
}

/// The color of track `i`.
pub fn track_color(i: u32) -> [u8; 3] {
    PALETTE[track_palette_index(i) as usize]
}

/// The three stops of a diff gradient.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DiffPalette {
    /// Color at −100 % (the right side shrank or the node disappeared).
    pub good: [u8; 3],
    /// Color at 0 % (no relative change).
    pub neutral: [u8; 3],
    /// Color at +100 % (grew by 100 % or more, or is new).
    pub bad: [u8; 3],
}

/// Pyroscope's default diff palette: green, grey, red.
pub const DIFF_DEFAULT: DiffPalette = DiffPalette {
    good: [0, 170, 0],
    neutral: [148, 142, 142],
    bad: [200, 0, 0],
};

/// Pyroscope's color-blind diff palette: blue, grey, red.
pub const DIFF_COLORBLIND: DiffPalette = DiffPalette {
    good: [26, 133, 255],
    neutral: [148, 142, 142],
    bad: [220, 50, 32],
};

/// Heat ramp for [`ColorMode::Value`]: no self time, half of the largest self, the largest.
pub const HEAT_STOPS: [[u8; 3]; 3] = [[255, 240, 170], [249, 147, 78], [200, 30, 30]];

/// MurmurHash3, x86 32-bit variant (Austin Appleby), over `data` with `seed`.
pub fn murmur3_32(data: &[u8], seed: u32) -> u32 {
    const C1: u32 = 0xcc9e_2d51;
    const C2: u32 = 0x1b87_3593;
    let mut h = seed;
    let mut chunks = data.chunks_exact(4);
    for c in &mut chunks {
        let mut k = u32::from_le_bytes([c[0], c[1], c[2], c[3]]);
        k = k.wrapping_mul(C1).rotate_left(15).wrapping_mul(C2);
        h ^= k;
        h = h.rotate_left(13).wrapping_mul(5).wrapping_add(0xe654_6b64);
    }
    let tail = chunks.remainder();
    if !tail.is_empty() {
        let mut k = 0u32;
        for (i, &b) in tail.iter().enumerate() {
            k |= u32::from(b) << (8 * i);
        }
        k = k.wrapping_mul(C1).rotate_left(15).wrapping_mul(C2);
        h ^= k;
    }
    h ^= data.len() as u32;
    h ^= h >> 16;
    h = h.wrapping_mul(0x85eb_ca6b);
    h ^= h >> 13;
    h = h.wrapping_mul(0xc2b2_ae35);
    h ^= h >> 16;
    h
}

/// The bytes Pyroscope's JavaScript `murmurhash3_32_gc` hashes for `s`: the low byte of
/// every UTF-16 code unit. Identical to the UTF-8 bytes for ASCII names.
pub fn pyroscope_key(s: &str) -> Vec<u8> {
    if s.is_ascii() {
        return s.as_bytes().to_vec();
    }
    s.encode_utf16().map(|u| (u & 0xff) as u8).collect()
}

/// Palette index of a name key, as Pyroscope computes it (`hash % colors.length`).
pub fn palette_index(key: &[u8]) -> usize {
    murmur3_32(key, 0) as usize % PALETTE.len()
}

struct Rules {
    dotnet: Regex,
    go: Regex,
    php: Regex,
    python: Regex,
    ruby: Regex,
    node: Regex,
    java: Regex,
    rust: Regex,
    tracing: Regex,
}

fn rules() -> &'static Rules {
    static RULES: OnceLock<Rules> = OnceLock::new();
    RULES.get_or_init(|| {
        // Pyroscope's spyToRegex patterns, verbatim in meaning (Rust's regex crate gives
        // the same leftmost-first captures as JavaScript for these patterns).
        let r = |p: &str| Regex::new(p).expect("static regex");
        Rules {
            dotnet: r(r"^(?P<pkg>.+)\.(.+)\.(.+)\(.*\)$"),
            go: r(r"^(?P<pkg>.*?/.*?\.|.*?\.|.+)(?P<func>.*)$"),
            php: r(r"^(?P<pkg>(.*/)*)(?P<file>.*\.php+)(?P<line>.*)$"),
            python: r(r"^(?P<pkg>(.*/)*)(?P<file>.*\.py+)(?P<line>.*)$"),
            ruby: r(r"^(?P<pkg>(.*/)*)(?P<file>.*\.rb+)(?P<line>.*)$"),
            node: r(r"^(\./node_modules/)?(?P<pkg>[^/]*)(?P<file>.*\.?(jsx?|tsx?)?):(?P<func>.*):(?P<line>.*)$"),
            java: r(r"^(?P<pkg>.+/)(?P<file>.+\.)(?P<func>.+)$"),
            rust: r(r"^(?P<pkg>[^:]+)"),
            tracing: r(r"^(?P<pkg>.+?):.*$"),
        }
    })
}

/// The package part of `name`, as Pyroscope's `getPackageNameFromStackTrace` finds it for
/// profiler `spy` (`gospy`, `pyspy`, `rbspy`, `phpspy`, `javaspy`, `dotnetspy`, `nodespy`,
/// `pyroscope-rs`, `tracing`, `ebpfspy`, `scrape`; `spyToRegex` in `color.ts`).
///
/// With no spy name (folded stacks do not say what produced them), the rule is guessed
/// from the name: flamegraph.pl's kernel annotation `_[k]` puts all kernel frames in one
/// color family; other annotations (`_[j]` JIT, `_[i]` inlined, `_[w]` waker) are ignored;
/// `::` paths (Rust, C++) use their first segment; path-like names (Java `a/b/C.m`, Python
/// or Ruby files) their directory; dotted names (Go `main.work`) their first component; and
/// anything else is its own package.
pub fn package_name<'a>(spy: Option<&str>, name: &'a str) -> &'a str {
    if name.is_empty() {
        return name;
    }
    let r = rules();
    let re = match spy {
        Some("dotnetspy") => &r.dotnet,
        Some("gospy") | Some("scrape") => &r.go,
        Some("phpspy") => &r.php,
        Some("pyspy") => &r.python,
        Some("rbspy") => &r.ruby,
        Some("nodespy") => &r.node,
        Some("javaspy") => &r.java,
        Some("pyroscope-rs") => &r.rust,
        Some("tracing") => &r.tracing,
        // `ebpfspy`, `unknown` and any other name: Pyroscope's `^(?<packageName>.+)$`.
        Some(_) => return name,
        None => return guess_package(name),
    };
    match re.captures(name) {
        // Pyroscope returns `groups.packageName || ''`: an empty package is a valid key.
        Some(c) => c.name("pkg").map_or("", |m| m.as_str()),
        // Pyroscope hashes the whole name when its regex does not match.
        None => name,
    }
}

/// [`package_name`] for one profiler, as a function of the name alone (what the
/// collapse-package transform takes).
pub fn package_rule(spy: Option<&str>) -> impl for<'a> Fn(&'a str) -> &'a str + '_ {
    move |name| package_name(spy, name)
}

/// The package rule for names of unknown origin (see [`package_name`]).
fn guess_package(name: &str) -> &str {
    if name.ends_with("_[k]") {
        return &name[name.len() - 4..];
    }
    let base = ["_[j]", "_[i]", "_[w]"]
        .iter()
        .find_map(|a| name.strip_suffix(a))
        .unwrap_or(name);
    if base.contains("::") {
        return rules().rust.find(base).map_or(base, |m| m.as_str());
    }
    if let Some(i) = base.rfind('/') {
        return &base[..=i];
    }
    if let Some(i) = base.find('.')
        && i > 0
    {
        return &base[..=i];
    }
    base
}

/// Pyroscope's `ratioToPercent`: a ratio as a percentage rounded to two decimals.
pub fn ratio_to_percent(ratio: f64) -> f64 {
    (10000.0 * ratio).round() / 100.0
}

/// The shares of a diff bar as Pyroscope uses them: its left total over the left grand
/// total and its right total over the right one, in percent rounded to 0.01
/// ([`ratio_to_percent`]; 0 for an empty side). Pyroscope rounds the shares *before* it
/// computes a change, for the bar's color (`Flamegraph_render.ts`, `getColorDouble`) and
/// for the tooltip's change alike (`FlamegraphTooltip.tsx`), so both start here: the color
/// of a bar and the change its label reads then always agree (from the exact shares, a bar
/// at 141 of 1000 → 125 of 991 would read −10.5 % while colored for −10.57 %).
pub fn diff_shares(left: u64, right: u64, left_ticks: u64, right_ticks: u64) -> (f64, f64) {
    let share = |v: u64, total: u64| {
        if total == 0 {
            0.0
        } else {
            ratio_to_percent(v as f64 / total as f64)
        }
    };
    (share(left, left_ticks), share(right, right_ticks))
}

/// Relative change from `left_pct` to `right_pct` in percent, not clamped: what a diff
/// label reads. 0 when the shares are equal; +∞ when only the left one is 0.
pub fn relative_change(left_pct: f64, right_pct: f64) -> f64 {
    if left_pct == right_pct {
        return 0.0;
    }
    if left_pct == 0.0 {
        return f64::INFINITY;
    }
    ((right_pct - left_pct) / left_pct) * 100.0
}

/// Pyroscope's `diffPercent` (`color.ts`): [`relative_change`] clamped to ±100, the
/// position on the diff gradient. A node absent on the left counts as +100 %.
pub fn diff_percent(left_pct: f64, right_pct: f64) -> f64 {
    relative_change(left_pct, right_pct).clamp(-100.0, 100.0)
}

/// The position of a diff bar on the gradient, from its left/right totals and the
/// profile's left/right grand totals ([`diff_shares`], then [`diff_percent`]).
pub fn bar_diff_percent(left: u64, right: u64, left_ticks: u64, right_ticks: u64) -> f64 {
    let (lp, rp) = diff_shares(left, right, left_ticks, right_ticks);
    diff_percent(lp, rp)
}

fn lerp3(a: [u8; 3], b: [u8; 3], t: f64) -> [f32; 3] {
    let f = |x: u8, y: u8| ((f64::from(x) + (f64::from(y) - f64::from(x)) * t) / 255.0) as f32;
    [f(a[0], b[0]), f(a[1], b[1]), f(a[2], b[2])]
}

/// Color (sRGB, 0..1) of a relative change in percent (−100..100) on the diff gradient.
pub fn diff_color(pct: f64, palette: &DiffPalette) -> [f32; 3] {
    let p = pct.clamp(-100.0, 100.0);
    if p <= 0.0 {
        lerp3(palette.good, palette.neutral, (p + 100.0) / 100.0)
    } else {
        lerp3(palette.neutral, palette.bad, p / 100.0)
    }
}

/// Heat color (sRGB, 0..1) for a bar whose self value is `self_ticks` out of the largest
/// self `max_self`. The square root spreads the many small values over the ramp.
pub fn heat_color(self_ticks: f64, max_self: f64) -> [f32; 3] {
    let t = if max_self > 0.0 {
        (self_ticks / max_self).clamp(0.0, 1.0).sqrt()
    } else {
        0.0
    };
    if t <= 0.5 {
        lerp3(HEAT_STOPS[0], HEAT_STOPS[1], t * 2.0)
    } else {
        lerp3(HEAT_STOPS[1], HEAT_STOPS[2], (t - 0.5) * 2.0)
    }
}

/// The diff palette for a `colorblind` flag.
pub fn diff_palette(colorblind: bool) -> &'static DiffPalette {
    if colorblind {
        &DIFF_COLORBLIND
    } else {
        &DIFF_DEFAULT
    }
}

/// The change of a diff bar's share between left and right, as labels and tooltips show
/// it: `new`, `removed`, `+12.5%`, `−4.17%`, `±0%` (to 0.01 %, as Pyroscope's tooltip),
/// from the shares rounded as for the bar's color, so label and color agree.
pub fn diff_change(left: u64, right: u64, left_ticks: u64, right_ticks: u64) -> String {
    if left == 0 && right > 0 {
        return "new".to_string();
    }
    if right == 0 && left > 0 {
        return "removed".to_string();
    }
    let (lp, rp) = diff_shares(left, right, left_ticks, right_ticks);
    let r = (relative_change(lp, rp) * 100.0).round() / 100.0;
    if r == 0.0 {
        "±0%".to_string()
    } else if r == f64::INFINITY {
        "+∞%".to_string()
    } else if r > 0.0 {
        format!("+{r}%")
    } else {
        format!("−{}%", -r)
    }
}

/// 0..1 sRGB as 8-bit values.
pub fn to_u8(c: [f32; 3]) -> [u8; 3] {
    c.map(|v| (v * 255.0).round().clamp(0.0, 255.0) as u8)
}

/// A palette entry as 0..1 sRGB.
pub fn palette_color(index: usize) -> [f32; 3] {
    let c = PALETTE[index % PALETTE.len()];
    [
        f32::from(c[0]) / 255.0,
        f32::from(c[1]) / 255.0,
        f32::from(c[2]) / 255.0,
    ]
}

/// Relative luminance of an sRGB color (WCAG), to choose dark or light label text.
pub fn luminance(c: [f32; 3]) -> f32 {
    let lin = |v: f32| {
        if v <= 0.04045 {
            v / 12.92
        } else {
            ((v + 0.055) / 1.055).powf(2.4)
        }
    };
    0.2126 * lin(c[0]) + 0.7152 * lin(c[1]) + 0.0722 * lin(c[2])
}

/// Label text color for a bar of color `bg`: near-black on light bars, white on dark ones
/// (whichever has the higher contrast ratio).
pub fn label_color(bg: [f32; 3]) -> [u8; 3] {
    let l = luminance(bg);
    let dark = (l + 0.05) / (0.0 + 0.05);
    let light = (1.0 + 0.05) / (l + 0.05);
    if dark >= light {
        [17, 17, 17]
    } else {
        [255, 255, 255]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn diff_change_wording() {
        assert_eq!(diff_change(0, 5, 10, 10), "new");
        assert_eq!(diff_change(5, 0, 10, 10), "removed");
        assert_eq!(diff_change(10, 10, 100, 100), "±0%");
        assert_eq!(diff_change(10, 15, 100, 100), "+50%");
        assert_eq!(diff_change(10, 5, 100, 100), "−50%");
        // Shares, not raw counts: the right side is twice as big overall.
        assert_eq!(diff_change(10, 20, 100, 200), "±0%");
        // A left share that rounds to 0.00 %: unbounded growth (colored as +100 %).
        assert_eq!(diff_change(1, 100, 1_000_000, 1000), "+∞%");
    }

    /// A diff bar's label reads the change its color shows: both start from the shares
    /// rounded to 0.01 % (14.1 % → 12.61 %: −10.57 %; from the exact shares, −10.54 %, the
    /// label used to read −10.5 % on a bar colored for −10.57 %).
    #[test]
    fn diff_label_agrees_with_color() {
        assert_eq!(diff_change(141, 125, 1000, 991), "−10.57%");
        for (l, r, lt, rt) in [(141, 125, 1000, 991), (53, 47, 1000, 991), (7, 9, 991, 987)] {
            // Within ±100 %, where the gradient is not clamped.
            let pct = (bar_diff_percent(l, r, lt, rt) * 100.0).round() / 100.0;
            let sign = if pct > 0.0 { "+" } else { "−" };
            assert_eq!(diff_change(l, r, lt, rt), format!("{sign}{}%", pct.abs()));
        }
    }

    /// Published MurmurHash3 x86_32 vectors (Wikipedia, SMHasher), cross-checked against
    /// the `mmh3` reference implementation.
    #[test]
    fn murmur3_test_vectors() {
        let cases: &[(&[u8], u32, u32)] = &[
            (b"", 0, 0),
            (b"", 1, 0x514E_28B7),
            (b"", 0xffff_ffff, 0x81F1_6F39),
            (b"\0\0\0\0", 0, 0x2362_F9DE),
            (b"aaaa", 0x9747_b28c, 0x5A97_808A),
            (b"a", 0x9747_b28c, 0x7FA0_9EA6),
            (b"abc", 0x9747_b28c, 0xC84A_62DD),
            (b"abcd", 0x9747_b28c, 0xF047_8627),
            (b"Hello, world!", 0x9747_b28c, 0x2488_4CBA),
            (
                b"The quick brown fox jumps over the lazy dog",
                0x9747_b28c,
                0x2FA8_26CD,
            ),
            (b"test", 0, 0xba6b_d213),
            (b"Hello, world!", 0, 0xc036_3e43),
            (
                b"The quick brown fox jumps over the lazy dog",
                0,
                0x2e4f_f723,
            ),
        ];
        for &(data, seed, want) in cases {
            assert_eq!(murmur3_32(data, seed), want, "{:?} seed {seed:#x}", data);
        }
    }

    #[test]
    fn pyroscope_key_matches_js_char_codes() {
        assert_eq!(pyroscope_key("main."), b"main.".to_vec());
        // 'é' is U+00E9 (one UTF-16 unit, low byte 0xE9); '€' is U+20AC (low byte 0xAC).
        assert_eq!(pyroscope_key("é€"), vec![0xE9, 0xAC]);
        // Astral characters are two UTF-16 units in JavaScript.
        assert_eq!(pyroscope_key("😀").len(), 2);
    }

    /// The palette is `DefaultPalette.colors` of `@pyroscope/flamegraph` 0.35.6
    /// (`colorPalette.ts`): eight `Color.hsl` entries, converted the exact way and rounded,
    /// then sixteen `Color.rgb`; 24 in all, so `hash % 24` picks the entry.
    #[test]
    fn palette_is_pyroscopes() {
        let hsl_to_rgb8 = |h: f64, s: f64, l: f64| {
            let (s, l) = (s / 100.0, l / 100.0);
            let c = (1.0 - (2.0 * l - 1.0).abs()) * s;
            let x = c * (1.0 - ((h / 60.0) % 2.0 - 1.0).abs());
            let (r, g, b) = match (h / 60.0) as u32 {
                0 => (c, x, 0.0),
                1 => (x, c, 0.0),
                2 => (0.0, c, x),
                3 => (0.0, x, c),
                4 => (x, 0.0, c),
                _ => (c, 0.0, x),
            };
            let m = l - c / 2.0;
            [r, g, b].map(|v| ((v + m) * 255.0).round() as u8)
        };
        let hsl = [
            (24.0, 69.0, 60.0),
            (34.0, 65.0, 65.0),
            (194.0, 52.0, 61.0),
            (163.0, 45.0, 55.0),
            (211.0, 48.0, 60.0),
            (246.0, 40.0, 65.0),
            (305.0, 63.0, 79.0),
            (47.0, 100.0, 73.0),
        ];
        for (i, &(h, s, l)) in hsl.iter().enumerate() {
            assert_eq!(PALETTE[i], hsl_to_rgb8(h, s, l), "entry {i}");
        }
        // The sixteen `Color.rgb(r, g, b)` of colorPalette.ts, in its order.
        let rgb = "183,219,171 244,213,152 78,146,249 249,186,143 242,145,145 130,181,216 \
                   229,168,226 174,162,224 154,196,138 242,201,109 101,197,219 249,147,78 \
                   234,100,96 81,149,206 214,131,206 128,110,183";
        let ours: Vec<String> = PALETTE[8..]
            .iter()
            .map(|c| c.map(|v| v.to_string()).join(","))
            .collect();
        assert_eq!(ours.join(" "), rgb);
        assert_eq!(PALETTE.len(), 24);
    }

    /// Names and the colors Pyroscope 0.35.6 draws them in, read from its canvas in
    /// Chromium (`scripts/pyroscope-compare.sh`): the package rule of each profiler, the
    /// hash and the palette together.
    #[test]
    fn known_names_get_pyroscopes_colors() {
        let key = |spy, name| pyroscope_key(package_name(spy, name));
        assert_eq!(palette_index(&key(Some("gospy"), "runtime.main")), 14);
        assert_eq!(palette_index(&key(Some("gospy"), "main.work")), 21);
        assert_eq!(palette_index(&key(Some("gospy"), "total")), 5);
        let dotnet = "System.Private.CoreLib!System.Threading.ThreadPoolWorkQueue.Dispatch()";
        assert_eq!(palette_index(&key(Some("dotnetspy"), dotnet)), 1);
        let cases: &[(&str, &str, [u8; 3])] = &[
            ("gospy", "total", [137, 130, 201]),
            ("gospy", "runtime.main", [229, 168, 226]),
            ("gospy", "main.work", [81, 149, 206]),
            ("gospy", "net/http.(*Client).Do", [137, 130, 201]),
            (
                "gospy",
                "github.com/grafana/pyroscope/pkg/og.Fn",
                [235, 168, 230],
            ),
            ("dotnetspy", dotnet, [224, 173, 108]),
            (
                "dotnetspy",
                "example!Example.Program.Main(class System.String[])",
                [242, 145, 145],
            ),
            ("pyspy", "main.py:26 - <module>", [223, 139, 83]),
            (
                "pyspy",
                "pyroscope_io/__init__.py:80 - set_tag",
                [101, 197, 219],
            ),
            (
                "pyspy",
                "tornado/platform/asyncio.py:199 - start",
                [101, 197, 219],
            ),
            (
                "pyspy",
                "asyncio/base_events.py:596 - run_forever",
                [104, 151, 202],
            ),
            (
                "rbspy",
                "gems/pyroscope-0.0.23/lib/pyroscope.rb:31 - set_tag",
                [128, 110, 183],
            ),
            ("phpspy", "<internal> - sleep", [244, 213, 152]),
            ("javaspy", "Main.main", [78, 146, 249]),
            (
                "nodespy",
                "./node_modules/express/lib/router/index.js:handle:45",
                [78, 146, 249],
            ),
            ("nodespy", "app.js:main:10", [224, 173, 108]),
            ("pyroscope-rs", "tokio::runtime::park", [78, 146, 249]),
            ("tracing", "main:42", [223, 139, 83]),
            ("ebpfspy", "tokio::runtime::park", [234, 100, 96]),
            ("unknown", "my_crate::handler::run", [81, 149, 206]),
            ("unknown", "éclair.fn", [104, 183, 207]),
            ("unknown", "日本.関数", [235, 168, 230]),
            ("unknown", "😀.smile", [137, 130, 201]),
        ];
        for &(spy, name, want) in cases {
            let got = PALETTE[palette_index(&key(Some(spy), name))];
            assert_eq!(got, want, "{spy} {name}");
        }
    }

    #[test]
    fn go_package_parts() {
        let go = Some("gospy");
        assert_eq!(package_name(go, "main.work"), "main.");
        assert_eq!(package_name(go, "runtime.mallocgc"), "runtime.");
        assert_eq!(package_name(go, "net/http.(*Client).Do"), "net/http.");
        assert_eq!(
            package_name(
                go,
                "github.com/pyroscope-io/pyroscope/pkg/agent/upstream/remote.(*Remote).safeUpload"
            ),
            "github.com/pyroscope-io/pyroscope/pkg/agent/upstream/remote."
        );
        assert_eq!(package_name(go, "total"), "total");
    }

    #[test]
    fn other_spies() {
        assert_eq!(
            package_name(Some("pyspy"), "pyroscope_io/__init__.py:80-set_tag"),
            "pyroscope_io/"
        );
        assert_eq!(package_name(Some("pyspy"), "main.py:26-<module>"), "");
        assert_eq!(
            package_name(Some("rbspy"), "webrick/server.rb:325-block in start_thread"),
            "webrick/"
        );
        assert_eq!(
            package_name(Some("javaspy"), "java/lang/Thread.run"),
            "java/lang/"
        );
        assert_eq!(
            package_name(
                Some("dotnetspy"),
                "example!Example.Program.Main(classSystem.String[])"
            ),
            "example!Example"
        );
        assert_eq!(
            package_name(Some("pyroscope-rs"), "std::thread::spawn"),
            "std"
        );
        assert_eq!(
            package_name(Some("ebpfspy"), "do_syscall_64"),
            "do_syscall_64"
        );
        assert_eq!(package_name(Some("tracing"), "main:42"), "main");
        assert_eq!(
            package_name(Some("tracing"), "tokio::runtime::park"),
            "tokio"
        );
        assert_eq!(package_name(Some("unknown"), "main.work"), "main.work");
    }

    #[test]
    fn guessed_rules_for_folded_names() {
        assert_eq!(package_name(None, "alloc::vec::Vec<T>::push"), "alloc");
        assert_eq!(package_name(None, "java/util/HashMap.get"), "java/util/");
        assert_eq!(
            package_name(None, "io/netty/channel/nio/NioEventLoop:.run_[j]"),
            "io/netty/channel/nio/"
        );
        assert_eq!(package_name(None, "sys_write_[k]"), "_[k]");
        assert_eq!(package_name(None, "tcp_sendmsg_[k]"), "_[k]");
        assert_eq!(package_name(None, "main.work"), "main.");
        assert_eq!(package_name(None, ".hidden"), ".hidden");
        assert_eq!(package_name(None, "do_syscall_64"), "do_syscall_64");
        assert_eq!(package_name(None, "[unknown]"), "[unknown]");
    }

    #[test]
    fn diff_percent_like_pyroscope() {
        assert_eq!(diff_percent(10.0, 10.0), 0.0);
        assert_eq!(diff_percent(0.0, 5.0), 100.0);
        assert_eq!(diff_percent(10.0, 15.0), 50.0);
        assert_eq!(diff_percent(10.0, 40.0), 100.0);
        assert_eq!(diff_percent(10.0, 0.0), -100.0);
        // Shares are rounded to 0.01 % before comparing, as Pyroscope does.
        assert_eq!(bar_diff_percent(1, 1, 100_000, 100_001), 0.0);
        // 141/1000 → 125/991: shares 14.1 % and 12.61 %, so −10.567…, not the −10.54 %
        // of the exact shares.
        assert_eq!(diff_shares(141, 125, 1000, 991), (14.1, 12.61));
        let pct = bar_diff_percent(141, 125, 1000, 991);
        assert!((pct - (12.61 - 14.1) / 14.1 * 100.0).abs() < 1e-12, "{pct}");
        // Unclamped for labels; a left share of 0.00 % is unbounded growth.
        assert_eq!(relative_change(10.0, 40.0), 300.0);
        assert_eq!(relative_change(0.0, 5.0), f64::INFINITY);
        assert_eq!(bar_diff_percent(1, 100, 1_000_000, 1000), 100.0);
    }

    #[test]
    fn diff_gradient_endpoints() {
        let to8 = |c: [f32; 3]| c.map(|v| (v * 255.0).round() as u8);
        assert_eq!(to8(diff_color(-100.0, &DIFF_DEFAULT)), DIFF_DEFAULT.good);
        assert_eq!(to8(diff_color(0.0, &DIFF_DEFAULT)), DIFF_DEFAULT.neutral);
        assert_eq!(to8(diff_color(100.0, &DIFF_DEFAULT)), DIFF_DEFAULT.bad);
        assert_eq!(
            to8(diff_color(250.0, &DIFF_COLORBLIND)),
            DIFF_COLORBLIND.bad
        );
        assert_eq!(to8(diff_color(-50.0, &DIFF_COLORBLIND)), [87, 138, 199]);
    }

    #[test]
    fn heat_ramp_is_monotonic_in_red_dominance() {
        let a = heat_color(0.0, 100.0);
        let b = heat_color(25.0, 100.0);
        let c = heat_color(100.0, 100.0);
        assert!(a[1] > b[1] && b[1] > c[1], "{a:?} {b:?} {c:?}");
    }

    #[test]
    fn label_contrast() {
        assert_eq!(label_color(palette_color(7)), [17, 17, 17]);
        assert_eq!(label_color([200.0 / 255.0, 0.0, 0.0]), [255, 255, 255]);
    }
}
