// bars.wgsl: flame graph bars as instanced quads, colored on the GPU.
//
// One instance per bar (`BarInstance` in src/render/bars.rs mirrors `Instance` field by
// field), read from a storage buffer: a bar is six vertices of one plain (not instanced)
// draw, vertex `6i + k` being corner k of bar i. One draw per visible row, over the bar
// range that binary search found on the CPU; the row's top edge comes in as immediate
// data, so the instance needs no row. (Mesa's llvmpipe runs an instanced draw instance by
// instance, about a microsecond each; a plain draw shades and bins vertices in batches.)
//
// Positions stay exact at any zoom: ticks are 64-bit (two u32 halves) and the view origin
// is subtracted in integer arithmetic before anything becomes a float, so only the
// distance from the left edge of the view is rounded.
//
// Crispness: a bar at least `gap + 2` pixels wide is snapped to whole pixels and loses a
// `gap`-pixel separator on its right; a narrower bar keeps its exact extent and the
// fragment shader writes its pixel coverage as alpha, so runs of sub-pixel bars blend
// into a faithful smear instead of flickering in and out.

struct Globals {
    // Tick at the view's left edge: (low 32 bits, high 32 bits), plus a fraction.
    view_start: vec2<u32>,
    // Render target size in pixels.
    target_size: vec2<f32>,
    view_start_frac: f32,
    px_per_tick: f32,
    // Target-space x of the graph's left edge (where `view_start` lands).
    origin_x: f32,
    // Target-space x range of the graph area (bars are clamped a little beyond it).
    clip_left: f32,
    clip_right: f32,
    // Bar height and separator width, in pixels.
    bar_height: f32,
    gap: f32,
    // 0 package hash, 1 name hash, 2 heat by self value, 3 diff, 4 track (palette index
    // in values.y), 5 category (palette index in values.z).
    color_mode: u32,
    // Largest self value (heat scale).
    max_self: f32,
    // Left and right grand totals of a diff profile.
    left_ticks: f32,
    right_ticks: f32,
    // 1 while a search is active: bars whose name does not match are greyed out.
    search_active: u32,
    // Diff gradient stops at -100 %, 0 %, +100 % (sRGB, alpha unused).
    diff_good: vec4<f32>,
    diff_neutral: vec4<f32>,
    diff_bad: vec4<f32>,
    // Heat ramp stops at 0, 0.5 and 1 of sqrt(self / max_self).
    heat: array<vec4<f32>, 3>,
    // Pyroscope's 24-color palette (sRGB; `PALETTE` in src/color.rs).
    palette: array<vec4<f32>, 24>,
}

struct RowParams {
    // Target-space y of the row's top edge.
    top: f32,
    // Opacity for the whole row (1 normally).
    alpha: f32,
}

struct Instance {
    // Start tick, (low, high).
    x0: vec2<u32>,
    // End tick (exclusive), (low, high).
    x1: vec2<u32>,
    // Interned name id: index into `hashes`.
    name: u32,
    // (self ticks, left total, right total) as floats, for heat and diff colors; for
    // timeline spans (duration, track palette index, category palette index). A bar
    // that stands for a merged run of sub-pixel bars (level of detail) stores
    // -(self + 1) in x and is drawn lighter.
    values: vec3<f32>,
}

struct VsOut {
    @builtin(position) pos: vec4<f32>,
    @location(0) @interpolate(flat) color: vec4<f32>,
    // The bar's exact left and right edges in target pixels, for coverage.
    @location(1) @interpolate(flat) span: vec2<f32>,
}

@group(0) @binding(0) var<uniform> g: Globals;
@group(0) @binding(1) var<storage, read> hashes: array<vec2<u32>>;
// Per name: 1 when the name matches the current search.
@group(0) @binding(2) var<storage, read> name_flags: array<u32>;
var<immediate> row: RowParams;
// The bars of one instance chunk, 32 bytes (two vec4<u32>) each.
@group(1) @binding(0) var<storage, read> instances: array<vec4<u32>>;

fn load_instance(i: u32) -> Instance {
    let a = instances[2u * i];
    let b = instances[2u * i + 1u];
    var inst: Instance;
    inst.x0 = a.xy;
    inst.x1 = a.zw;
    inst.name = b.x;
    inst.values = bitcast<vec3<f32>>(b.yzw);
    return inst;
}

// A name's color is palette[murmur3(key) % 24], as in Pyroscope.
const PALETTE_LEN: u32 = 24u;

// (x - view_start) as a signed 64-bit integer, converted to f32 only at the end.
fn rel_ticks(x: vec2<u32>) -> f32 {
    let lo = x.x - g.view_start.x;
    let borrow = select(0u, 1u, x.x < g.view_start.x);
    let hi = x.y - g.view_start.y - borrow;
    if ((hi & 0x80000000u) != 0u) {
        let nlo = ~lo + 1u;
        let nhi = ~hi + select(0u, 1u, nlo == 0u);
        return -(f32(nhi) * 4294967296.0 + f32(nlo));
    }
    return f32(hi) * 4294967296.0 + f32(lo);
}

// JavaScript's Math.round (half up), as Pyroscope's ratioToPercent uses it.
fn js_round(x: f32) -> f32 {
    return floor(x + 0.5);
}

fn diff_color(left: f32, right: f32) -> vec3<f32> {
    var lr = 0.0;
    if (g.left_ticks > 0.0) {
        lr = left / g.left_ticks;
    }
    var rr = 0.0;
    if (g.right_ticks > 0.0) {
        rr = right / g.right_ticks;
    }
    let lp = js_round(10000.0 * lr) / 100.0;
    let rp = js_round(10000.0 * rr) / 100.0;
    var p = 0.0;
    if (lp == rp) {
        p = 0.0;
    } else if (lp == 0.0) {
        p = 100.0;
    } else {
        p = clamp((rp - lp) / lp * 100.0, -100.0, 100.0);
    }
    if (p <= 0.0) {
        return mix(g.diff_good.rgb, g.diff_neutral.rgb, (p + 100.0) / 100.0);
    }
    return mix(g.diff_neutral.rgb, g.diff_bad.rgb, p / 100.0);
}

fn heat_color(self_ticks: f32) -> vec3<f32> {
    var t = 0.0;
    if (g.max_self > 0.0) {
        t = sqrt(clamp(self_ticks / g.max_self, 0.0, 1.0));
    }
    if (t <= 0.5) {
        return mix(g.heat[0].rgb, g.heat[1].rgb, t * 2.0);
    }
    return mix(g.heat[1].rgb, g.heat[2].rgb, (t - 0.5) * 2.0);
}

@vertex
fn vs_main(@builtin(vertex_index) v: u32) -> VsOut {
    let inst = load_instance(v / 6u);
    // Two triangles, (0, 1, 2) and (2, 1, 3), over corners numbered x + 2y.
    var corners = array<u32, 6>(0u, 1u, 2u, 2u, 1u, 3u);
    let vi = corners[v % 6u];
    let lo_clip = g.clip_left - 4.0;
    let hi_clip = g.clip_right + 4.0;
    var xl = clamp(g.origin_x + (rel_ticks(inst.x0) - g.view_start_frac) * g.px_per_tick, lo_clip, hi_clip);
    var xr = clamp(g.origin_x + (rel_ticks(inst.x1) - g.view_start_frac) * g.px_per_tick, lo_clip, hi_clip);
    let sl = round(xl);
    let sr = round(xr);
    if (sr - sl >= g.gap + 2.0) {
        xl = sl;
        xr = sr - g.gap;
    }
    // The quad covers every pixel the bar touches; coverage does the rest.
    let ql = floor(xl);
    let qr = max(ceil(xr), ql + 1.0);
    let corner = vec2<f32>(f32(vi & 1u), f32(vi >> 1u));
    let x = mix(ql, qr, corner.x);
    let y = row.top + corner.y * g.bar_height;

    var rgb: vec3<f32>;
    switch (g.color_mode) {
        case 0u: {
            rgb = g.palette[hashes[inst.name].x % PALETTE_LEN].rgb;
        }
        case 1u: {
            rgb = g.palette[hashes[inst.name].y % PALETTE_LEN].rgb;
        }
        case 2u: {
            rgb = heat_color(abs(inst.values.x) - select(0.0, 1.0, inst.values.x < 0.0));
        }
        case 3u: {
            rgb = diff_color(inst.values.y, inst.values.z);
        }
        case 4u: {
            rgb = g.palette[u32(inst.values.y) % PALETTE_LEN].rgb;
        }
        default: {
            rgb = g.palette[u32(inst.values.z) % PALETTE_LEN].rgb;
        }
    }

    // Merged runs of sub-pixel bars: a lighter fill, so they read as "many small things".
    if (inst.values.x < 0.0) {
        rgb = mix(rgb, vec3<f32>(1.0, 1.0, 1.0), 0.35);
    }

    // Search: non-matching bars become light grey, as in Pyroscope.
    if (g.search_active != 0u && name_flags[inst.name] == 0u) {
        rgb = vec3<f32>(0.87, 0.87, 0.87);
    }

    var out: VsOut;
    out.pos = vec4<f32>(x / g.target_size.x * 2.0 - 1.0, 1.0 - y / g.target_size.y * 2.0, 0.0, 1.0);
    out.color = vec4<f32>(rgb, row.alpha);
    out.span = vec2<f32>(xl, xr);
    return out;
}

@fragment
fn fs_main(in: VsOut) -> @location(0) vec4<f32> {
    let px = floor(in.pos.x);
    let coverage = clamp(min(px + 1.0, in.span.y) - max(px, in.span.x), 0.0, 1.0);
    return vec4<f32>(in.color.rgb, in.color.a * coverage);
}
