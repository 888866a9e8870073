// rects.wgsl: solid axis-aligned rectangles (backgrounds, legend swatches, outlines).
//
// One instance per rectangle, in target pixels; `RectInstance` in src/render/rects.rs
// mirrors `Instance`. Rectangles are expected on whole pixels, so no coverage is computed.

struct Globals {
    // Render target size in pixels.
    target_size: vec2<f32>,
    _pad: vec2<f32>,
}

struct Instance {
    // Left, top, width, height in target pixels.
    @location(0) rect: vec4<f32>,
    // sRGB color with straight alpha.
    @location(1) color: vec4<f32>,
}

struct VsOut {
    @builtin(position) pos: vec4<f32>,
    @location(0) @interpolate(flat) color: vec4<f32>,
}

@group(0) @binding(0) var<uniform> g: Globals;

@vertex
fn vs_main(@builtin(vertex_index) vi: u32, inst: Instance) -> VsOut {
    let corner = vec2<f32>(f32(vi & 1u), f32(vi >> 1u));
    let p = inst.rect.xy + corner * inst.rect.zw;
    var out: VsOut;
    out.pos = vec4<f32>(p.x / g.target_size.x * 2.0 - 1.0, 1.0 - p.y / g.target_size.y * 2.0, 0.0, 1.0);
    out.color = inst.color;
    return out;
}

@fragment
fn fs_main(in: VsOut) -> @location(0) vec4<f32> {
    return in.color;
}
