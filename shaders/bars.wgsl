// bars.wgsl: flame graph bars as instanced quads, colored on the GPU.
//
// One 16-byte instance per bar (`BarInstance` in src/render/bars.rs mirrors `Instance`
// field by field), read from a storage buffer: a bar is four corners of one plain (not
// instanced) indexed draw, vertex `4i + k` being corner k of the draw's bar i (the shared
// index buffer makes two triangles of each four). One draw per visible segment of a row
// (usually one; one per 16 Ki bars), over the bar range that binary search found on the
// CPU; the row's top edge, the segment's 64-bit base ticks and the draw's first bar come
// in as immediate data, so the instance needs no row and only 32-bit tick offsets. (Mesa's llvmpipe runs an instanced draw instance by
// instance, about a microsecond each; a plain draw shades and bins vertices in batches.)
//
// Positions stay exact at any zoom: ticks are 64-bit (two u32 halves: the segment's base
// plus the instance's offset, added with carry) and the view origin is subtracted in
// integer arithmetic before anything becomes a float, so only the distance from the left
// edge of the view is rounded.
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
    // 0 package hash, 1 name hash, 2 heat, 3 diff, 4 track, 5 category (what `Instance.
    // value` holds for each).
    color_mode: u32,
    // 1 when the instances carry diff positions (a diff profile); otherwise a diff color
    // is the neutral one.
    diff_scene: u32,
    pad0: u32,
    pad1: u32,
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
    // The segment's base ticks, (low, high): a bar starts at base0 + x0 and ends at
    // base1 + x1. The two differ only for a bar 2^32 ticks wide or more, drawn alone.
    base0: vec2<u32>,
    base1: vec2<u32>,
    // The draw's first bar in the chunk: its vertices are numbered from 0, four a bar.
    first: u32,
    _pad: u32,
}

struct Instance {
    // Start tick minus the segment's base0.
    x0: u32,
    // End tick (exclusive) minus the segment's base1.
    x1: u32,
    // Interned name id: index into `hashes`.
    name: u32,
    // The color inputs, computed once at upload: bit 31 set for a bar that stands for a
    // merged run of sub-pixel bars (level of detail, drawn lighter); bits 16..30 the heat
    // position sqrt(self / max self) in 32767ths; bits 0..15 either the diff position
    // (-100..100 % in 65534ths of 200, diff profiles) or the track (bits 0..7) and
    // category (bits 8..15) palette indices.
    value: u32,
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
// The bars of one instance chunk, 16 bytes (one vec4<u32>) each.
@group(1) @binding(0) var<storage, read> instances: array<vec4<u32>>;

fn load_instance(i: u32) -> Instance {
    let a = instances[i];
    var inst: Instance;
    inst.x0 = a.x;
    inst.x1 = a.y;
    inst.name = a.z;
    inst.value = a.w;
    return inst;
}

// base + off as a 64-bit (low, high) pair.
fn add_offset(base: vec2<u32>, off: u32) -> vec2<u32> {
    let lo = base.x + off;
    return vec2<u32>(lo, base.y + select(0u, 1u, lo < off));
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

// The diff gradient at the bar's position, which the upload computed as Pyroscope does
// (shares rounded to 0.01 %, relative change clamped to ±100 %: `color::bar_diff_percent`).
fn diff_color(code: u32) -> vec3<f32> {
    var p = 0.0;
    if (g.diff_scene != 0u) {
        p = f32(code) / 65534.0 * 200.0 - 100.0;
    }
    if (p <= 0.0) {
        return mix(g.diff_good.rgb, g.diff_neutral.rgb, (p + 100.0) / 100.0);
    }
    return mix(g.diff_neutral.rgb, g.diff_bad.rgb, p / 100.0);
}

// The heat ramp at t = sqrt(self / max self), which the upload computed.
fn heat_color(t: f32) -> vec3<f32> {
    if (t <= 0.5) {
        return mix(g.heat[0].rgb, g.heat[1].rgb, t * 2.0);
    }
    return mix(g.heat[1].rgb, g.heat[2].rgb, (t - 0.5) * 2.0);
}

@vertex
fn vs_main(@builtin(vertex_index) v: u32) -> VsOut {
    let inst = load_instance(row.first + v / 4u);
    // Corners numbered x + 2y; the index buffer makes them two triangles, (0, 1, 2) and
    // (2, 1, 3), so each corner is shaded once.
    let vi = v % 4u;
    let lo_clip = g.clip_left - 4.0;
    let hi_clip = g.clip_right + 4.0;
    let x0 = add_offset(row.base0, inst.x0);
    let x1 = add_offset(row.base1, inst.x1);
    var xl = clamp(g.origin_x + (rel_ticks(x0) - g.view_start_frac) * g.px_per_tick, lo_clip, hi_clip);
    var xr = clamp(g.origin_x + (rel_ticks(x1) - g.view_start_frac) * g.px_per_tick, lo_clip, hi_clip);
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
            rgb = heat_color(f32((inst.value >> 16u) & 0x7fffu) / 32767.0);
        }
        case 3u: {
            rgb = diff_color(inst.value & 0xffffu);
        }
        case 4u: {
            rgb = g.palette[(inst.value & 0xffu) % PALETTE_LEN].rgb;
        }
        default: {
            rgb = g.palette[((inst.value >> 8u) & 0xffu) % PALETTE_LEN].rgb;
        }
    }

    // Merged runs of sub-pixel bars: a lighter fill, so they read as "many small things".
    if ((inst.value & 0x80000000u) != 0u) {
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
