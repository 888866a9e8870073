// Text as instanced glyph quads (`render::glyphs`): one instance per glyph, its pixel
// rectangle, its place in the R8 glyph atlas and its color. The same arithmetic as
// glyphon's shader (integer pixel positions, nearest sampling, "web" colors: sRGB
// values blended as they are), so labels keep their pixels.

struct VertexInput {
    @builtin(vertex_index) vertex_idx: u32,
    @location(0) pos: vec2<i32>,
    @location(1) dim: u32,
    @location(2) uv: u32,
    @location(3) color: u32,
}

struct VertexOutput {
    @invariant @builtin(position) position: vec4<f32>,
    @location(0) color: vec4<f32>,
    @location(1) uv: vec2<f32>,
}

struct Params {
    screen_resolution: vec2<u32>,
    _pad: vec2<u32>,
}

@group(0) @binding(0)
var atlas_texture: texture_2d<f32>;

@group(0) @binding(1)
var atlas_sampler: sampler;

@group(0) @binding(2)
var<uniform> params: Params;

@vertex
fn vs_main(in_vert: VertexInput) -> VertexOutput {
    let width = in_vert.dim & 0xffffu;
    let height = (in_vert.dim & 0xffff0000u) >> 16u;
    let color = in_vert.color;
    let corner = vec2<u32>(in_vert.vertex_idx & 1u, (in_vert.vertex_idx >> 1u) & 1u);
    let offset = vec2<u32>(width, height) * corner;
    let uv = vec2<u32>(in_vert.uv & 0xffffu, (in_vert.uv & 0xffff0000u) >> 16u) + offset;
    let pos = in_vert.pos + vec2<i32>(offset);

    var out: VertexOutput;
    out.position = vec4<f32>(
        2.0 * vec2<f32>(pos) / vec2<f32>(params.screen_resolution) - 1.0,
        0.0,
        1.0,
    );
    out.position.y *= -1.0;
    out.color = vec4<f32>(
        f32((color & 0x00ff0000u) >> 16u) / 255.0,
        f32((color & 0x0000ff00u) >> 8u) / 255.0,
        f32(color & 0x000000ffu) / 255.0,
        f32((color & 0xff000000u) >> 24u) / 255.0,
    );
    out.uv = vec2<f32>(uv) / vec2<f32>(textureDimensions(atlas_texture));
    return out;
}

@fragment
fn fs_main(in_frag: VertexOutput) -> @location(0) vec4<f32> {
    let a = textureSampleLevel(atlas_texture, atlas_sampler, in_frag.uv, 0.0).x;
    return vec4<f32>(in_frag.color.rgb, in_frag.color.a * a);
}
