//! The bar pipeline: per-row instance ranges of [`BarInstance`], drawn with `bars.wgsl`.
//!
//! [`BarScene::build`] packs a [`BarSource`]'s bars (every row, then each of its LOD
//! tiers) into instance buffers once (rows back to back, split into chunks that respect
//! the adapter's `max_buffer_size`; a row may span chunks). A frame then only writes the
//! [`BarGlobals`] uniform and, per visible row, binds the instance range the view's draw
//! data names ([`RowDraw`]) and issues one plain draw of six vertices a bar that read the
//! instances from a storage buffer. An export, which draws a single frame, uploads only
//! the list each row uses in it ([`BarSource::only_at`]). The bar colors come from
//! `bars.wgsl`; names are hashed once by `name_hash.wgsl` ([`super::names`]).

use super::gpu::{Gpu, IMMEDIATE_BYTES, PipelineSpec, render_pipeline, uniform_buffer};
use super::names::{NameHashes, PackedKeys};
use crate::color::{ColorMode, DiffPalette, HEAT_STOPS, PALETTE};
use crate::lod::TierRef;
use crate::view::draw::{BarSource, NameFlags, RowDraw};
use bytemuck::{Pod, Zeroable};

/// One bar as the GPU sees it: 32 bytes of a storage buffer, read by `load_instance` in
/// `shaders/bars.wgsl` as two `vec4<u32>` (x0, x1; name, the three values' bits).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct BarInstance {
    /// Start tick as (low 32 bits, high 32 bits).
    pub x0: [u32; 2],
    /// End tick (exclusive), (low, high).
    pub x1: [u32; 2],
    /// Interned name id, an index into the name hashes.
    pub name: u32,
    /// Self ticks, left total, right total (timeline: duration, track and category
    /// palette indices); a merged run has a negative first value.
    pub values: [f32; 3],
}

const _: () = assert!(std::mem::size_of::<BarInstance>() == crate::view::draw::INSTANCE_BYTES);

impl BarInstance {
    fn split(t: u64) -> [u32; 2] {
        [t as u32, (t >> 32) as u32]
    }
}

/// The bar shader's uniform block. Mirrors `Globals` in `shaders/bars.wgsl`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Pod, Zeroable)]
pub struct BarGlobals {
    /// `view_start: vec2<u32>`: tick at the view's left edge, (low, high).
    pub view_start: [u32; 2],
    /// `target_size: vec2<f32>`: render target size in pixels.
    pub target_size: [f32; 2],
    /// `view_start_frac: f32`: fraction of a tick past `view_start`.
    pub view_start_frac: f32,
    /// `px_per_tick: f32`.
    pub px_per_tick: f32,
    /// `origin_x: f32`: target-space x of the graph's left edge.
    pub origin_x: f32,
    /// `clip_left: f32`: target-space left of the graph area.
    pub clip_left: f32,
    /// `clip_right: f32`: target-space right of the graph area.
    pub clip_right: f32,
    /// `bar_height: f32`, pixels.
    pub bar_height: f32,
    /// `gap: f32`: separator width, pixels.
    pub gap: f32,
    /// `color_mode: u32` ([`ColorMode::shader_code`]).
    pub color_mode: u32,
    /// `max_self: f32`: the heat scale.
    pub max_self: f32,
    /// `left_ticks: f32`: left grand total of a diff.
    pub left_ticks: f32,
    /// `right_ticks: f32`: right grand total of a diff.
    pub right_ticks: f32,
    /// `search_active: u32`: 1 greys out bars whose name does not match.
    pub search_active: u32,
    /// `diff_good: vec4<f32>`.
    pub diff_good: [f32; 4],
    /// `diff_neutral: vec4<f32>`.
    pub diff_neutral: [f32; 4],
    /// `diff_bad: vec4<f32>`.
    pub diff_bad: [f32; 4],
    /// `heat: array<vec4<f32>, 3>`.
    pub heat: [[f32; 4]; 3],
    /// `palette: array<vec4<f32>, 24>` ([`PALETTE`]).
    pub palette: [[f32; 4]; PALETTE.len()],
}

const _: () = assert!(std::mem::size_of::<BarGlobals>() == 544);

fn rgba(c: [u8; 3]) -> [f32; 4] {
    [
        f32::from(c[0]) / 255.0,
        f32::from(c[1]) / 255.0,
        f32::from(c[2]) / 255.0,
        1.0,
    ]
}

impl BarGlobals {
    /// The color tables of a mode and palette, with the view fields zeroed.
    pub fn new(mode: ColorMode, diff: &DiffPalette) -> BarGlobals {
        let mut palette = [[0.0; 4]; PALETTE.len()];
        for (dst, src) in palette.iter_mut().zip(PALETTE) {
            *dst = rgba(src);
        }
        BarGlobals {
            view_start: [0, 0],
            target_size: [1.0, 1.0],
            view_start_frac: 0.0,
            px_per_tick: 1.0,
            origin_x: 0.0,
            clip_left: 0.0,
            clip_right: 0.0,
            bar_height: 1.0,
            gap: 1.0,
            color_mode: mode.shader_code(),
            max_self: 0.0,
            left_ticks: 0.0,
            right_ticks: 0.0,
            search_active: 0,
            diff_good: rgba(diff.good),
            diff_neutral: rgba(diff.neutral),
            diff_bad: rgba(diff.bad),
            heat: HEAT_STOPS.map(rgba),
            palette,
        }
    }
}

/// Row parameters passed as immediate data. Mirrors `RowParams` in `shaders/bars.wgsl`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Pod, Zeroable)]
pub struct RowParams {
    /// `top: f32`: target-space y of the row's top edge.
    pub top: f32,
    /// `alpha: f32`: opacity of the row.
    pub alpha: f32,
}

const _: () = assert!(std::mem::size_of::<RowParams>() as u32 == IMMEDIATE_BYTES);

/// The compiled bar pipeline; created once, shared by every scene and frame.
pub struct BarPipeline {
    pipeline: wgpu::RenderPipeline,
    bind_layout: wgpu::BindGroupLayout,
}

impl BarPipeline {
    /// Compiles `bars.wgsl` for `format`.
    pub fn new(device: &wgpu::Device, format: wgpu::TextureFormat) -> BarPipeline {
        Self::with_layout(device, format, Self::bind_layout(device))
    }

    /// The same pipeline for another target format, sharing the bind group layout, so a
    /// [`BarScene`] made for one draws with the other (window and screenshot).
    pub fn for_format(&self, device: &wgpu::Device, format: wgpu::TextureFormat) -> BarPipeline {
        Self::with_layout(device, format, self.bind_layout.clone())
    }

    /// The bind group layout scenes are made for.
    pub fn bind_group_layout(&self) -> wgpu::BindGroupLayout {
        self.bind_layout.clone()
    }

    fn bind_layout(device: &wgpu::Device) -> wgpu::BindGroupLayout {
        device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("BarPipeline::bind_layout"),
            entries: &[
                wgpu::BindGroupLayoutEntry {
                    binding: 0,
                    visibility: wgpu::ShaderStages::VERTEX,
                    ty: wgpu::BindingType::Buffer {
                        ty: wgpu::BufferBindingType::Uniform,
                        has_dynamic_offset: false,
                        min_binding_size: wgpu::BufferSize::new(
                            std::mem::size_of::<BarGlobals>() as u64
                        ),
                    },
                    count: None,
                },
                // Name hashes, then per-name search flags.
                storage_entry(1),
                storage_entry(2),
            ],
        })
    }

    fn with_layout(
        device: &wgpu::Device,
        format: wgpu::TextureFormat,
        bind_layout: wgpu::BindGroupLayout,
    ) -> BarPipeline {
        let shader = device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some("BarPipeline::shader"),
            source: wgpu::ShaderSource::Wgsl(include_str!("../../shaders/bars.wgsl").into()),
        });
        let layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some("BarPipeline::layout"),
            bind_group_layouts: &[Some(&bind_layout), Some(&instances_layout(device))],
            immediate_size: IMMEDIATE_BYTES,
        });
        let pipeline = render_pipeline(
            device,
            PipelineSpec {
                label: "BarPipeline",
                layout: &layout,
                shader: &shader,
                // Bars are read from a storage buffer (group 1), six vertices each.
                buffers: &[],
                format,
                blend: Some(wgpu::BlendState::ALPHA_BLENDING),
                topology: wgpu::PrimitiveTopology::TriangleList,
            },
        );
        BarPipeline {
            pipeline,
            bind_layout,
        }
    }
}

/// Group 1: one chunk of bar instances. Layouts with equal entries are the same layout
/// to wgpu, so the pipeline and every scene can each make their own.
fn instances_layout(device: &wgpu::Device) -> wgpu::BindGroupLayout {
    device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
        label: Some("BarPipeline::instances_layout"),
        entries: &[storage_entry(0)],
    })
}

/// Vertices drawn per bar: two triangles.
const VERTICES_PER_BAR: u64 = 6;

/// A read-only storage buffer read by the vertex stage.
fn storage_entry(binding: u32) -> wgpu::BindGroupLayoutEntry {
    wgpu::BindGroupLayoutEntry {
        binding,
        visibility: wgpu::ShaderStages::VERTEX,
        ty: wgpu::BindingType::Buffer {
            ty: wgpu::BufferBindingType::Storage { read_only: true },
            has_dynamic_offset: false,
            min_binding_size: None,
        },
        count: None,
    }
}

/// Where part of a row's bars live on the GPU.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Segment {
    /// Chunk buffer index.
    chunk: usize,
    /// First instance of the segment within the chunk.
    chunk_start: u64,
    /// First bar of the segment within the row.
    row_start: usize,
    /// Bars in the segment.
    len: usize,
}

/// The segments of every list of every row, flat: `lists[row_lists[r] + l]` is where
/// list `l` of row `r` starts in `segments`, and the next entry where it ends.
#[derive(Debug, Default)]
struct SegmentTable {
    segments: Vec<Segment>,
    /// Per list (and one past the last): its first segment.
    lists: Vec<u32>,
    /// Per row (and one past the last): its first list.
    row_lists: Vec<u32>,
}

impl SegmentTable {
    fn start_row(&mut self) {
        self.row_lists.push(self.lists.len() as u32);
    }

    fn start_list(&mut self) {
        self.lists.push(self.segments.len() as u32);
    }

    fn finish(&mut self) {
        self.start_row();
        self.start_list();
        self.segments.shrink_to_fit();
        self.lists.shrink_to_fit();
        self.row_lists.shrink_to_fit();
    }

    /// The segments of list `list` of row `row`, if it has one.
    fn list(&self, row: usize, list: usize) -> Option<&[Segment]> {
        let first = *self.row_lists.get(row)? as usize;
        let end = *self.row_lists.get(row + 1)? as usize;
        let at = first + list;
        if at >= end {
            return None;
        }
        let (lo, hi) = (self.lists[at] as usize, self.lists[at + 1] as usize);
        Some(&self.segments[lo..hi])
    }
}

/// Packs instance lists into chunk buffers of at most `chunk_cap` instances.
struct Uploader<'a> {
    gpu: &'a Gpu,
    chunk_cap: u64,
    staging: Vec<BarInstance>,
    chunks: Vec<wgpu::Buffer>,
    bytes: u64,
}

impl Uploader<'_> {
    fn flush(&mut self) {
        if self.staging.is_empty() {
            return;
        }
        let stride = std::mem::size_of::<BarInstance>() as u64;
        let buf = self.gpu.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("BarScene::instances"),
            size: (self.staging.len() as u64 * stride).max(stride),
            usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        self.gpu
            .queue
            .write_buffer(&buf, 0, bytemuck::cast_slice(&self.staging));
        self.chunks.push(buf);
        self.staging.clear();
    }

    /// Appends `len` instances made by `make`, and to `segs` where they went.
    fn push_list(
        &mut self,
        segs: &mut Vec<Segment>,
        len: usize,
        make: impl Fn(usize) -> BarInstance,
    ) {
        let mut i = 0;
        while i < len {
            if self.staging.len() as u64 == self.chunk_cap {
                self.flush();
            }
            let room = (self.chunk_cap - self.staging.len() as u64) as usize;
            let take = room.min(len - i);
            segs.push(Segment {
                chunk: self.chunks.len(),
                chunk_start: self.staging.len() as u64,
                row_start: i,
                len: take,
            });
            self.staging.extend((i..i + take).map(&make));
            self.bytes += take as u64 * std::mem::size_of::<BarInstance>() as u64;
            i += take;
        }
    }
}

/// A layout's bars, tiers and name hashes, resident on the GPU.
pub struct BarScene {
    /// One bind group (group 1) per instance chunk (which it keeps alive).
    chunk_groups: Vec<wgpu::BindGroup>,
    /// Where the bars are, list by list: per row, the row's own bars, then each LOD
    /// tier's. One flat table rather than vectors per row and list, so that a layout of
    /// a million one-bar rows costs tens of bytes a row, not hundreds.
    segments: SegmentTable,
    globals: wgpu::Buffer,
    bind_group: wgpu::BindGroup,
    name_hashes: NameHashes,
    name_flags: wgpu::Buffer,
    names: usize,
    /// Bytes of instance data uploaded.
    pub instance_bytes: u64,
    max_self: f32,
    diff_ticks: Option<(u64, u64)>,
    /// The search generation whose flags `name_flags` holds.
    search_uploaded: std::cell::Cell<Option<u64>>,
}

impl BarScene {
    /// Uploads `src`'s bars and tiers (only those it [`wants`](BarSource::wants)) with
    /// the values it gives, and hashes its names.
    pub fn build(gpu: &Gpu, bind_layout: &wgpu::BindGroupLayout, src: &BarSource<'_>) -> BarScene {
        let keys = PackedKeys::for_names(src.names, src.spy);
        let name_hashes = NameHashes::compute_packed(gpu, &keys);
        let names = src.names.len();
        let (layout, lod, values) = (src.layout, src.lod, &src.values);
        let device = &gpu.device;
        let stride = std::mem::size_of::<BarInstance>() as u64;
        // A chunk is bound whole as a storage buffer, and its vertex numbers (six a bar)
        // stay far below 2^32.
        let limits = device.limits();
        let max_chunk_bytes = limits
            .max_buffer_size
            .min(limits.max_storage_buffer_binding_size)
            .min(256 << 20);
        let mut up = Uploader {
            gpu,
            chunk_cap: (max_chunk_bytes / stride).max(1),
            staging: Vec::new(),
            chunks: Vec::new(),
            bytes: 0,
        };
        let mut table = SegmentTable::default();
        for (r, row) in layout.rows.iter().enumerate() {
            table.start_row();
            let row_len = if src.wants(r, TierRef::Row) {
                row.len()
            } else {
                0
            };
            table.start_list();
            up.push_list(&mut table.segments, row_len, |k| BarInstance {
                x0: BarInstance::split(row.x0[k]),
                x1: BarInstance::split(row.x1[k]),
                name: row.name[k],
                values: (values.of)(row.node[k]),
            });
            for (i, tier) in lod
                .rows
                .get(r)
                .map_or(&[][..], |t| &t[..])
                .iter()
                .enumerate()
            {
                let tier_len = if src.wants(r, TierRef::Tier(i)) {
                    tier.len()
                } else {
                    0
                };
                table.start_list();
                up.push_list(&mut table.segments, tier_len, |j| {
                    let members = tier.members(j);
                    let (first, count) = (members.start, members.len());
                    let mut v = (values.of)(row.node[first]);
                    for k in first + 1..members.end {
                        v = (values.merge)(v, (values.of)(row.node[k]));
                    }
                    // A merged run is marked by a negative first value (see bars.wgsl).
                    if count > 1 {
                        v[0] = -(v[0] + 1.0);
                    }
                    BarInstance {
                        x0: BarInstance::split(row.x0[first]),
                        x1: BarInstance::split(row.x1[members.end - 1]),
                        name: tier.name[j],
                        values: v,
                    }
                });
            }
        }
        table.finish();
        up.flush();
        let Uploader {
            chunks,
            bytes: instance_bytes,
            ..
        } = up;

        let globals = uniform_buffer(
            device,
            "BarScene::globals",
            std::mem::size_of::<BarGlobals>(),
        );
        let name_flags = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("BarScene::name_flags"),
            size: (names.max(1) * 4) as u64,
            usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let bind_group = device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("BarScene::bind_group"),
            layout: bind_layout,
            entries: &[
                wgpu::BindGroupEntry {
                    binding: 0,
                    resource: globals.as_entire_binding(),
                },
                wgpu::BindGroupEntry {
                    binding: 1,
                    resource: name_hashes.buffer().as_entire_binding(),
                },
                wgpu::BindGroupEntry {
                    binding: 2,
                    resource: name_flags.as_entire_binding(),
                },
            ],
        });
        let group_layout = instances_layout(device);
        let chunk_groups = chunks
            .iter()
            .map(|c| {
                device.create_bind_group(&wgpu::BindGroupDescriptor {
                    label: Some("BarScene::chunk"),
                    layout: &group_layout,
                    entries: &[wgpu::BindGroupEntry {
                        binding: 0,
                        resource: c.as_entire_binding(),
                    }],
                })
            })
            .collect();
        BarScene {
            chunk_groups,
            segments: table,
            globals,
            bind_group,
            name_hashes,
            name_flags,
            names,
            instance_bytes,
            max_self: values.max_self,
            diff_ticks: values.diff_ticks,
            search_uploaded: std::cell::Cell::new(None),
        }
    }

    /// The GPU name hashes (for tests that compare them with the CPU reference).
    pub fn name_hashes(&self) -> &NameHashes {
        &self.name_hashes
    }

    /// Uploads which names match the current search (one flag per name id), unless the
    /// flags of that search are there already.
    pub fn set_search(&self, queue: &wgpu::Queue, search: NameFlags<'_>) {
        if self.search_uploaded.get() == Some(search.generation) {
            return;
        }
        let flags: Vec<u32> = (0..self.names.max(1))
            .map(|i| u32::from(search.flags.get(i).copied().unwrap_or(false)))
            .collect();
        queue.write_buffer(&self.name_flags, 0, bytemuck::cast_slice(&flags));
        self.search_uploaded.set(Some(search.generation));
    }

    /// The largest self value (the heat scale), computed once at upload.
    pub fn max_self(&self) -> f32 {
        self.max_self
    }

    /// Fills the profile-dependent fields of `g` (heat scale, diff totals).
    pub fn complete_globals(&self, g: &mut BarGlobals) {
        g.max_self = self.max_self;
        if let Some((l, r)) = self.diff_ticks {
            g.left_ticks = l as f32;
            g.right_ticks = r as f32;
        }
    }

    /// Writes this frame's uniform block.
    pub fn write_globals(&self, queue: &wgpu::Queue, g: &BarGlobals) {
        queue.write_buffer(&self.globals, 0, bytemuck::bytes_of(g));
    }

    /// Records the draws of `rows` (a row's top edge is shifted up by `dy`, the tile's
    /// top; rows outside `0..tile_h` after that are skipped). Returns the bars drawn.
    pub fn draw<'a>(
        &'a self,
        pass: &mut wgpu::RenderPass<'a>,
        pipeline: &'a BarPipeline,
        rows: &[RowDraw],
        bar_height: f32,
        dy: f32,
        tile_h: f32,
    ) -> u64 {
        pass.set_pipeline(&pipeline.pipeline);
        pass.set_bind_group(0, &self.bind_group, &[]);
        let mut bound: Option<usize> = None;
        let mut drawn = 0u64;
        for d in rows {
            let (row, tier, range, alpha) = (d.row, d.tier, &d.range, d.alpha);
            let top = d.top - dy;
            if top + bar_height <= 0.0 || top >= tile_h {
                continue;
            }
            let list = match tier {
                TierRef::Row => 0,
                TierRef::Tier(i) => i + 1,
            };
            let Some(segs) = self.segments.list(row, list) else {
                continue;
            };
            if range.is_empty() {
                continue;
            }
            pass.set_immediates(0, bytemuck::bytes_of(&RowParams { top, alpha }));
            for s in segs {
                let lo = range.start.max(s.row_start);
                let hi = range.end.min(s.row_start + s.len);
                if lo >= hi {
                    continue;
                }
                let first = s.chunk_start + (lo - s.row_start) as u64;
                let count = (hi - lo) as u64;
                if bound != Some(s.chunk) {
                    pass.set_bind_group(1, &self.chunk_groups[s.chunk], &[]);
                    bound = Some(s.chunk);
                }
                let v = VERTICES_PER_BAR;
                pass.draw((first * v) as u32..((first + count) * v) as u32, 0..1);
                drawn += count;
            }
        }
        drawn
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seg(row_start: usize, len: usize) -> Segment {
        Segment {
            chunk: 0,
            chunk_start: 0,
            row_start,
            len,
        }
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
}
