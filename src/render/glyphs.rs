//! Text drawn as instanced glyph quads from one glyph atlas.
//!
//! A string is shaped once into a [`Run`]: per glyph its offset from the text's origin,
//! the byte range it stands for and an index into this layer's glyph table. A frame then
//! only writes one small instance (pixel rectangle, atlas position, color) per visible
//! glyph: no shaping, no per-glyph hashing. Each glyph is rasterised (by swash, through
//! glyphon's [`SwashCache`]) the first time one of its four horizontal subpixel
//! positions is drawn, and packed into an R8 atlas texture that grows up to the device's
//! limit and is emptied when full.
//!
//! The arithmetic is glyphon's (`TextRenderer::prepare` and its shader): the same glyph
//! images at the same integer pixels, clipped to the same bounds, blended the same way,
//! so pictures do not change; `tests/gpu.rs` draws strings both ways and compares.
//!
//! A run can also be drawn in part (the glyphs of a byte range, shifted): a label cut to
//! `prefix…` is its name's run up to the cut and an ellipsis, and a new cut at every
//! zoom step shapes nothing.

use super::gpu::{PipelineSpec, render_pipeline, uniform_buffer};
use bytemuck::{Pod, Zeroable};
use glyphon::{Buffer, CacheKey, FontSystem, SubpixelBin, SwashCache, SwashContent};
use std::collections::HashMap;

pub(super) type FastMap<K, V> = HashMap<K, V, foldhash::fast::RandomState>;

/// One glyph of a [`Run`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RunGlyph {
    /// Horizontal offset from the text's left edge (glyph x plus its shaping offset).
    pub x: f32,
    /// Vertical offset from the text's top edge, before the line's baseline.
    pub y: f32,
    /// The pen position before and after the glyph (its advance, kerning included).
    pub pen: f32,
    /// Where the glyph's advance ends.
    pub right: f32,
    /// The line's baseline (rounded to a pixel, as drawn), its top and its height.
    pub baseline: i32,
    line_top: f32,
    line_h: f32,
    /// Byte range of the text this glyph stands for.
    pub start: u32,
    /// End of that range.
    pub end: u32,
    /// Index into the layer's glyph table.
    glyph: u32,
}

/// A shaped string, ready to draw.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Run {
    /// Its glyphs in layout order.
    pub glyphs: Vec<RunGlyph>,
    /// Whether every glyph is left-to-right in text order (the runs drawn in part).
    pub ltr: bool,
}

/// Which glyphs of a run to draw, and where.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Part {
    /// Glyphs whose byte range lies within `from..to`.
    pub from: u32,
    /// End of that range.
    pub to: u32,
    /// Added to each glyph's x.
    pub dx: f32,
}

impl Run {
    /// Where the pen is after the glyphs of bytes `..to` (the run's width for all).
    pub fn right_of(&self, to: u32) -> f32 {
        self.glyphs
            .iter()
            .filter(|g| g.end <= to)
            .fold(0.0, |a, g| a.max(g.right))
    }

    /// The glyph that ends at byte `at`, if one does.
    pub fn ending_at(&self, at: u32) -> Option<&RunGlyph> {
        self.glyphs.iter().find(|g| g.end == at)
    }

    /// Where the pen is before the first glyph of bytes `from..`.
    pub fn left_of(&self, from: u32) -> f32 {
        self.glyphs
            .iter()
            .filter(|g| g.start >= from)
            .fold(f32::INFINITY, |a, g| a.min(g.pen))
    }
}

impl Part {
    /// The whole run, where it was shaped.
    pub const ALL: Part = Part {
        from: 0,
        to: u32::MAX,
        dx: 0.0,
    };
}

/// Where a glyph image lies in the atlas, for one subpixel position.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Slot {
    /// Not rasterised yet.
    Unknown,
    /// Nothing to draw (a space, or no image).
    Empty,
    Placed {
        left: i16,
        top: i16,
        w: u16,
        h: u16,
        ax: u16,
        ay: u16,
    },
}

struct Entry {
    /// The swash key at subpixel position zero.
    key: CacheKey,
    bins: [Slot; 4],
}

/// One glyph quad: `GlyphToRender` of glyphon without its depth and content type.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct GlyphQuad {
    /// Top-left pixel.
    pub pos: [i32; 2],
    /// Width | height << 16.
    pub dim: u32,
    /// Atlas x | atlas y << 16.
    pub uv: u32,
    /// 0xAARRGGBB.
    pub color: u32,
}

/// The atlas ran out of room this frame: [`GlyphQuads::grow`] and prepare again.
#[derive(Debug)]
pub struct AtlasFull;

/// Glyph table entries before the table is forgotten (and runs must be shaped again).
pub const MAX_GLYPHS: usize = 1 << 16;
const FIRST_ATLAS: u32 = 512;

/// The glyph atlas, the pipeline and this frame's quads.
pub struct GlyphQuads {
    pipeline: wgpu::RenderPipeline,
    layout: wgpu::BindGroupLayout,
    sampler: wgpu::Sampler,
    params: wgpu::Buffer,
    texture: wgpu::Texture,
    bind_group: wgpu::BindGroup,
    size: u32,
    max_size: u32,
    /// Shelf packing: the next free x, the shelf's top and height.
    shelf: (u32, u32, u32),
    index: FastMap<CacheKey, u32>,
    entries: Vec<Entry>,
    /// Bumped whenever the glyph table is forgotten: runs made before are stale.
    epoch: u64,
    quads: Vec<GlyphQuad>,
    layers: [std::ops::Range<u32>; 2],
    buffer: wgpu::Buffer,
    resolution: (u32, u32),
}

fn atlas_texture(device: &wgpu::Device, size: u32) -> wgpu::Texture {
    device.create_texture(&wgpu::TextureDescriptor {
        label: Some("GlyphQuads::atlas"),
        size: wgpu::Extent3d {
            width: size,
            height: size,
            depth_or_array_layers: 1,
        },
        mip_level_count: 1,
        sample_count: 1,
        dimension: wgpu::TextureDimension::D2,
        format: wgpu::TextureFormat::R8Unorm,
        usage: wgpu::TextureUsages::TEXTURE_BINDING | wgpu::TextureUsages::COPY_DST,
        view_formats: &[],
    })
}

fn quad_buffer(device: &wgpu::Device, quads: usize) -> wgpu::Buffer {
    device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("GlyphQuads::quads"),
        size: (quads.next_power_of_two().max(256) * size_of::<GlyphQuad>()) as u64,
        usage: wgpu::BufferUsages::VERTEX | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    })
}

impl GlyphQuads {
    /// The pipeline for targets of `format` and an empty atlas.
    pub fn new(device: &wgpu::Device, format: wgpu::TextureFormat) -> GlyphQuads {
        let shader = device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some("GlyphQuads::shader"),
            source: wgpu::ShaderSource::Wgsl(include_str!("../../shaders/glyphs.wgsl").into()),
        });
        let layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("GlyphQuads::layout"),
            entries: &[
                wgpu::BindGroupLayoutEntry {
                    binding: 0,
                    visibility: wgpu::ShaderStages::VERTEX | wgpu::ShaderStages::FRAGMENT,
                    ty: wgpu::BindingType::Texture {
                        multisampled: false,
                        view_dimension: wgpu::TextureViewDimension::D2,
                        sample_type: wgpu::TextureSampleType::Float { filterable: true },
                    },
                    count: None,
                },
                wgpu::BindGroupLayoutEntry {
                    binding: 1,
                    visibility: wgpu::ShaderStages::FRAGMENT,
                    ty: wgpu::BindingType::Sampler(wgpu::SamplerBindingType::Filtering),
                    count: None,
                },
                wgpu::BindGroupLayoutEntry {
                    binding: 2,
                    visibility: wgpu::ShaderStages::VERTEX,
                    ty: wgpu::BindingType::Buffer {
                        ty: wgpu::BufferBindingType::Uniform,
                        has_dynamic_offset: false,
                        min_binding_size: None,
                    },
                    count: None,
                },
            ],
        });
        let pipeline_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some("GlyphQuads::pipeline_layout"),
            bind_group_layouts: &[Some(&layout)],
            immediate_size: 0,
        });
        const ATTRS: [wgpu::VertexAttribute; 4] =
            wgpu::vertex_attr_array![0 => Sint32x2, 1 => Uint32, 2 => Uint32, 3 => Uint32];
        let pipeline = render_pipeline(
            device,
            PipelineSpec {
                label: "GlyphQuads",
                layout: &pipeline_layout,
                shader: &shader,
                buffers: &[Some(wgpu::VertexBufferLayout {
                    array_stride: size_of::<GlyphQuad>() as u64,
                    step_mode: wgpu::VertexStepMode::Instance,
                    attributes: &ATTRS,
                })],
                format,
                blend: Some(wgpu::BlendState::ALPHA_BLENDING),
                topology: wgpu::PrimitiveTopology::TriangleStrip,
            },
        );
        let sampler = device.create_sampler(&wgpu::SamplerDescriptor {
            label: Some("GlyphQuads::sampler"),
            min_filter: wgpu::FilterMode::Nearest,
            mag_filter: wgpu::FilterMode::Nearest,
            mipmap_filter: wgpu::MipmapFilterMode::Nearest,
            lod_min_clamp: 0.0,
            lod_max_clamp: 0.0,
            ..Default::default()
        });
        let params = uniform_buffer(device, "GlyphQuads::params", 16);
        let size = FIRST_ATLAS;
        let texture = atlas_texture(device, size);
        let bind_group = Self::bind(device, &layout, &texture, &sampler, &params);
        GlyphQuads {
            pipeline,
            layout,
            sampler,
            params,
            texture,
            bind_group,
            size,
            max_size: device.limits().max_texture_dimension_2d.min(8192),
            shelf: (0, 0, 0),
            index: FastMap::default(),
            entries: Vec::new(),
            epoch: 0,
            quads: Vec::new(),
            layers: [0..0, 0..0],
            buffer: quad_buffer(device, 256),
            resolution: (1, 1),
        }
    }

    fn bind(
        device: &wgpu::Device,
        layout: &wgpu::BindGroupLayout,
        texture: &wgpu::Texture,
        sampler: &wgpu::Sampler,
        params: &wgpu::Buffer,
    ) -> wgpu::BindGroup {
        let view = texture.create_view(&wgpu::TextureViewDescriptor::default());
        device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("GlyphQuads::bind_group"),
            layout,
            entries: &[
                wgpu::BindGroupEntry {
                    binding: 0,
                    resource: wgpu::BindingResource::TextureView(&view),
                },
                wgpu::BindGroupEntry {
                    binding: 1,
                    resource: wgpu::BindingResource::Sampler(sampler),
                },
                wgpu::BindGroupEntry {
                    binding: 2,
                    resource: params.as_entire_binding(),
                },
            ],
        })
    }

    /// Bumped whenever the glyph table is forgotten: a [`Run`] made before then must be
    /// made again.
    pub fn epoch(&self) -> u64 {
        self.epoch
    }

    /// Glyphs in the table.
    pub fn glyphs(&self) -> usize {
        self.entries.len()
    }

    /// Side of the atlas texture in pixels.
    pub fn atlas_size(&self) -> u32 {
        self.size
    }

    /// `buffer`'s glyphs as a run (shaped and laid out already).
    pub fn run_of(&mut self, buffer: &Buffer) -> Run {
        self.forget_if_full();
        run_with(buffer, |key| self.glyph_of(key))
    }

    /// Forgets the glyph table when it is full: many font sizes over a long session
    /// (runs made before follow, by the epoch) rather than growing without bound.
    fn forget_if_full(&mut self) {
        if self.entries.len() >= MAX_GLYPHS {
            self.index.clear();
            self.entries.clear();
            self.epoch += 1;
            self.clear_atlas();
        }
    }

    /// The glyph table's entry for `key` (at subpixel position zero), made when new.
    fn glyph_of(&mut self, key: CacheKey) -> u32 {
        *self.index.entry(key).or_insert_with(|| {
            self.entries.push(Entry {
                key,
                bins: [Slot::Unknown; 4],
            });
            (self.entries.len() - 1) as u32
        })
    }

    /// `run` (made by [`keyed_run_of`], its glyphs numbered by their positions in `keys`)
    /// with its glyphs numbered in the glyph table; `table` holds the entries of the keys
    /// mapped so far, for this epoch, and grows to hold every key.
    pub fn map_keyed(&mut self, mut run: Run, keys: &[CacheKey], table: &mut KeyTable) -> Run {
        self.forget_if_full();
        if table.epoch != self.epoch {
            table.epoch = self.epoch;
            table.glyph.clear();
        }
        for &key in &keys[table.glyph.len()..] {
            let g = self.glyph_of(key);
            table.glyph.push(g);
        }
        for g in &mut run.glyphs {
            g.glyph = table.glyph[g.glyph as usize];
        }
        run
    }

    /// Forgets the atlas's contents (glyphs are rasterised again as they are drawn).
    fn clear_atlas(&mut self) {
        for e in &mut self.entries {
            e.bins = [Slot::Unknown; 4];
        }
        self.shelf = (0, 0, 0);
    }

    /// After [`AtlasFull`]: an empty atlas, twice as large while the device allows;
    /// `false` when it was already as large as it gets.
    pub fn grow(&mut self, device: &wgpu::Device) -> bool {
        let grew = self.size < self.max_size;
        if grew {
            self.size = (self.size * 2).min(self.max_size);
            self.texture = atlas_texture(device, self.size);
            self.bind_group = Self::bind(
                device,
                &self.layout,
                &self.texture,
                &self.sampler,
                &self.params,
            );
        }
        self.clear_atlas();
        grew
    }

    /// Starts a frame for a target of `width`×`height`.
    pub fn begin(&mut self, width: u32, height: u32) {
        self.quads.clear();
        self.layers = [0..0, 0..0];
        self.resolution = (width, height);
    }

    /// Ends the quads of `layer` (0 or 1; call in order).
    pub fn end_layer(&mut self, layer: usize) {
        let start = if layer == 0 { 0 } else { self.layers[0].end };
        self.layers[layer] = start..self.quads.len() as u32;
    }

    /// Places a glyph image in the atlas.
    fn place(&mut self, queue: &wgpu::Queue, w: u32, h: u32, data: &[u8]) -> Option<(u16, u16)> {
        let (mut x, mut y, mut row) = self.shelf;
        if x + w > self.size {
            (x, y, row) = (0, y + row + 1, 0);
        }
        if w > self.size || y + h > self.size {
            return None;
        }
        self.shelf = (x + w + 1, y, row.max(h));
        queue.write_texture(
            wgpu::TexelCopyTextureInfo {
                texture: &self.texture,
                mip_level: 0,
                origin: wgpu::Origin3d { x, y, z: 0 },
                aspect: wgpu::TextureAspect::All,
            },
            data,
            wgpu::TexelCopyBufferLayout {
                offset: 0,
                bytes_per_row: Some(w),
                rows_per_image: None,
            },
            wgpu::Extent3d {
                width: w,
                height: h,
                depth_or_array_layers: 1,
            },
        );
        Some((x as u16, y as u16))
    }

    /// The atlas slot of glyph `glyph` at subpixel position `bin`, rasterised now if new.
    fn slot(
        &mut self,
        fonts: &mut FontSystem,
        swash: &mut SwashCache,
        queue: &wgpu::Queue,
        glyph: u32,
        bin: SubpixelBin,
    ) -> Result<Slot, AtlasFull> {
        let b = bin as usize;
        let e = &self.entries[glyph as usize];
        if e.bins[b] != Slot::Unknown {
            return Ok(e.bins[b]);
        }
        let key = CacheKey {
            x_bin: bin,
            ..e.key
        };
        let slot = match swash.get_image_uncached(fonts, key) {
            // The bundled font has outlines only; a color glyph (none) is not drawn.
            Some(img) if img.content != SwashContent::Color => {
                let (w, h) = (img.placement.width, img.placement.height);
                if w == 0 || h == 0 {
                    Slot::Empty
                } else {
                    // A subpixel mask (none from swash here) keeps its first channel.
                    let data: Vec<u8> = if img.data.len() == (w * h) as usize {
                        img.data
                    } else {
                        img.data.chunks(4).map(|c| c[0]).collect()
                    };
                    let (ax, ay) = self.place(queue, w, h, &data).ok_or(AtlasFull)?;
                    Slot::Placed {
                        left: img.placement.left as i16,
                        top: img.placement.top as i16,
                        w: w as u16,
                        h: h as u16,
                        ax,
                        ay,
                    }
                }
            }
            _ => Slot::Empty,
        };
        self.entries[glyph as usize].bins[b] = slot;
        Ok(slot)
    }

    /// Adds the quads of `part` of `run` with its origin at (`left`, `top`), clipped to
    /// `bounds` (left, top, right, bottom), as glyphon's `prepare` places a text area's
    /// glyphs.
    #[allow(clippy::too_many_arguments)]
    pub fn push(
        &mut self,
        fonts: &mut FontSystem,
        swash: &mut SwashCache,
        queue: &wgpu::Queue,
        run: &Run,
        part: Part,
        left: f32,
        top: f32,
        bounds: [i32; 4],
        color: u32,
    ) -> Result<(), AtlasFull> {
        let (rw, rh) = (self.resolution.0 as i32, self.resolution.1 as i32);
        let x_min = bounds[0].max(0);
        let x_max = bounds[2].min(rw).max(x_min);
        let y_min = bounds[1].max(0);
        let y_max = bounds[3].min(rh).max(y_min);
        for g in &run.glyphs {
            if g.end > part.to {
                // In text order, every later glyph ends after it too.
                if run.ltr {
                    break;
                }
                continue;
            }
            if g.start < part.from {
                continue;
            }
            let line_start = (top + g.line_top) as i32;
            let line_end = line_start + g.line_h as i32;
            if line_start > bounds[3] || bounds[1] > line_end {
                continue;
            }
            let (px, bin) = SubpixelBin::new((g.x + part.dx) + left);
            // `as` truncates, as `trunc` would.
            let py = (g.y + top) as i32;
            let Slot::Placed {
                left: gl,
                top: gt,
                w,
                h,
                ax,
                ay,
            } = self.slot(fonts, swash, queue, g.glyph, bin)?
            else {
                continue;
            };
            let mut x = px + i32::from(gl);
            let mut y = g.baseline + py - i32::from(gt);
            let (mut ax, mut ay) = (ax, ay);
            let (mut width, mut height) = (i32::from(w), i32::from(h));
            let max_x = x + width;
            if x > x_max || max_x < x_min {
                continue;
            }
            let max_y = y + height;
            if y > y_max || max_y < y_min {
                continue;
            }
            if x < x_min {
                ax += (x_min - x) as u16;
                width = max_x - x_min;
                x = x_min;
            }
            if x + width > x_max {
                width = x_max - x;
            }
            if y < y_min {
                ay += (y_min - y) as u16;
                height = max_y - y_min;
                y = y_min;
            }
            if y + height > y_max {
                height = y_max - y;
            }
            self.quads.push(GlyphQuad {
                pos: [x, y],
                dim: (width as u16 as u32) | ((height as u16 as u32) << 16),
                uv: u32::from(ax) | (u32::from(ay) << 16),
                color,
            });
        }
        Ok(())
    }

    /// Quads of this frame.
    pub fn len(&self) -> usize {
        self.quads.len()
    }

    /// True when this frame has no quads.
    pub fn is_empty(&self) -> bool {
        self.quads.is_empty()
    }

    /// Uploads this frame's quads and target size.
    pub fn upload(&mut self, device: &wgpu::Device, queue: &wgpu::Queue) {
        let (w, h) = self.resolution;
        queue.write_buffer(&self.params, 0, bytemuck::cast_slice(&[w, h, 0, 0]));
        if self.quads.is_empty() {
            return;
        }
        let bytes: &[u8] = bytemuck::cast_slice(&self.quads);
        if (bytes.len() as u64) > self.buffer.size() {
            self.buffer = quad_buffer(device, self.quads.len());
        }
        queue.write_buffer(&self.buffer, 0, bytes);
    }

    /// Draws the quads of `layer`.
    pub fn render(&self, pass: &mut wgpu::RenderPass<'_>, layer: usize) {
        let r = self.layers[layer].clone();
        if r.is_empty() {
            return;
        }
        pass.set_pipeline(&self.pipeline);
        pass.set_bind_group(0, &self.bind_group, &[]);
        pass.set_vertex_buffer(0, self.buffer.slice(..));
        pass.draw(0..4, r);
    }
}

/// Where the keys of runs made off the render thread ([`keyed_run_of`]) are in the glyph
/// table, in the epoch it was made for.
#[derive(Default)]
pub struct KeyTable {
    epoch: u64,
    glyph: Vec<u32>,
}

/// `buffer`'s run with its glyphs numbered by their keys' positions in `keys` (`index`
/// finds a key's position; new keys are appended): made where the glyph table is not,
/// then numbered in it by [`GlyphQuads::map_keyed`].
pub fn keyed_run_of(
    buffer: &Buffer,
    keys: &mut Vec<CacheKey>,
    index: &mut FastMap<CacheKey, u32>,
) -> Run {
    run_with(buffer, |key| {
        *index.entry(key).or_insert_with(|| {
            keys.push(key);
            (keys.len() - 1) as u32
        })
    })
}

/// `buffer`'s run, each glyph numbered by `number` of its key at subpixel position zero.
fn run_with(buffer: &Buffer, mut number: impl FnMut(CacheKey) -> u32) -> Run {
    let mut run = Run {
        glyphs: Vec::new(),
        ltr: true,
    };
    for line in buffer.layout_runs() {
        for g in line.glyphs {
            let (key, _, _) = CacheKey::new(
                g.font_id,
                g.glyph_id,
                g.font_size,
                (0.0, 0.0),
                g.font_weight,
                g.cache_key_flags,
            );
            let glyph = number(key);
            run.ltr &= g.level.is_ltr();
            run.glyphs.push(RunGlyph {
                x: g.x + g.font_size * g.x_offset,
                y: g.y - g.font_size * g.y_offset,
                pen: g.x,
                right: g.x + g.w,
                baseline: line.line_y.round() as i32,
                line_top: line.line_top,
                line_h: line.line_height,
                start: g.start as u32,
                end: g.end as u32,
                glyph,
            });
        }
    }
    run.ltr &= run.glyphs.windows(2).all(|w| w[0].end <= w[1].start);
    run
}
