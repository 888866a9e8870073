// blit.wgsl: copies a texture 1:1 onto a rectangle of the target (the timeline's overview
// strip, rendered once and reused every frame).
//
// The rectangle is given in target pixels and has the texture's size, so each fragment
// reads exactly one texel with `textureLoad`: no sampler, no filtering, identical pixels.

struct Globals {
    // Render target size in pixels.
    target_size: vec2<f32>,
    _pad: vec2<f32>,
    // Left, top, width, height of the destination, in target pixels.
    rect: vec4<f32>,
}

@group(0) @binding(0) var<uniform> g: Globals;
@group(0) @binding(1) var src: texture_2d<f32>;

@vertex
fn vs_main(@builtin(vertex_index) vi: u32) -> @builtin(position) vec4<f32> {
    let corner = vec2<f32>(f32(vi & 1u), f32(vi >> 1u));
    let p = g.rect.xy + corner * g.rect.zw;
    return vec4<f32>(p.x / g.target_size.x * 2.0 - 1.0, 1.0 - p.y / g.target_size.y * 2.0, 0.0, 1.0);
}

@fragment
fn fs_main(@builtin(position) pos: vec4<f32>) -> @location(0) vec4<f32> {
    let size = vec2<i32>(textureDimensions(src));
    let texel = clamp(vec2<i32>(floor(pos.xy - g.rect.xy)), vec2<i32>(0, 0), size - vec2<i32>(1, 1));
    return textureLoad(src, texel, 0);
}
