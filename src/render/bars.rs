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
use crate::view::draw::{BarSource, INSTANCE_BYTES, NameFlags, RowDraw};
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

const _: () = assert!(std::mem::size_of::<BarInstance>() == INSTANCE_BYTES);

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

/// Where every list of every row goes: the segment table, and per row the lists it
/// uploads (their lengths, in order), with the row's first instance in the global order.
struct Plan {
    table: SegmentTable,
    /// Per row: (first global instance, whether the row's own bars are uploaded, which
    /// tiers are); one more entry at the end holding the total.
    rows: Vec<(u64, bool, Vec<usize>)>,
    total: u64,
}

impl Plan {
    /// Lays out `src`'s wanted lists back to back in chunks of `chunk_cap` instances.
    fn new(src: &BarSource<'_>, chunk_cap: u64) -> Plan {
        let (layout, lod) = (src.layout, src.lod);
        let mut table = SegmentTable::default();
        let mut rows = Vec::with_capacity(layout.rows.len() + 1);
        let mut at = 0u64;
        let push_list = |segs: &mut Vec<Segment>, at: &mut u64, len: usize| {
            let mut i = 0;
            while i < len {
                let in_chunk = *at % chunk_cap;
                let take = ((chunk_cap - in_chunk) as usize).min(len - i);
                segs.push(Segment {
                    chunk: (*at / chunk_cap) as usize,
                    chunk_start: in_chunk,
                    row_start: i,
                    len: take,
                });
                *at += take as u64;
                i += take;
            }
        };
        for (r, row) in layout.rows.iter().enumerate() {
            table.start_row();
            let first = at;
            let own = src.wants(r, TierRef::Row);
            table.start_list();
            push_list(
                &mut table.segments,
                &mut at,
                if own { row.len() } else { 0 },
            );
            let mut tiers = Vec::new();
            for (i, tier) in lod
                .rows
                .get(r)
                .map_or(&[][..], |t| &t[..])
                .iter()
                .enumerate()
            {
                table.start_list();
                if src.wants(r, TierRef::Tier(i)) {
                    push_list(&mut table.segments, &mut at, tier.len());
                    tiers.push(i);
                }
            }
            rows.push((first, own, tiers));
        }
        table.finish();
        rows.push((at, false, Vec::new()));
        Plan {
            table,
            rows,
            total: at,
        }
    }
}

/// Mapped memory of one instance.
type Slot = [u8; INSTANCE_BYTES];

/// A thread's share of the mapped instance memory: consecutive pieces of chunk buffers,
/// written in order through a small buffer (mapped memory is written with copies, never
/// read).
struct Sink<'m> {
    pieces: std::collections::VecDeque<wgpu::WriteOnly<'m, [Slot]>>,
    buf: Vec<BarInstance>,
}

// SAFETY: each piece is an exclusive view of a range of mapped memory no other sink
// holds, like a `&mut [u8]`, which is `Send`. `WriteOnly<T>` is `Send` for `T: Send`, but
// its impl leaves out unsized `T` such as these slices.
unsafe impl Send for Sink<'_> {}

impl Sink<'_> {
    const BUF: usize = 4096;

    fn put(&mut self, b: BarInstance) {
        self.buf.push(b);
        if self.buf.len() == Self::BUF {
            self.flush();
        }
    }

    fn flush(&mut self) {
        let mut src: &[Slot] = bytemuck::cast_slice(&self.buf);
        while !src.is_empty() {
            let front = self.pieces.front_mut().expect("the plan sized every piece");
            let n = front.len().min(src.len());
            if n == 0 {
                self.pieces.pop_front();
                continue;
            }
            let mut dst = front
                .split_off(..n)
                .expect("n is at most the piece's length");
            dst.copy_from_slice(&src[..n]);
            src = &src[n..];
        }
        self.buf.clear();
    }
}

/// Writes the instances of row `r` (its own bars, then its wanted tiers, as the plan
/// has them); `vals` is scratch for the values of the row's bars, computed once and
/// summed for each tier's merged runs.
fn fill_row(
    src: &BarSource<'_>,
    r: usize,
    own: bool,
    tiers: &[usize],
    vals: &mut Vec<[f32; 3]>,
    out: &mut Sink<'_>,
) {
    let row = &src.layout.rows[r];
    let values = &src.values;
    vals.clear();
    vals.extend(row.node.iter().map(|&n| (values.of)(n)));
    if own {
        for (k, v) in vals.iter().enumerate() {
            out.put(BarInstance {
                x0: BarInstance::split(row.x0[k]),
                x1: BarInstance::split(row.x1[k]),
                name: row.name[k],
                values: *v,
            });
        }
    }
    let row_tiers = src.lod.rows.get(r).map_or(&[][..], |t| &t[..]);
    for &i in tiers {
        let tier = &row_tiers[i];
        for j in 0..tier.len() {
            let members = tier.members(j);
            let (first, count) = (members.start, members.len());
            let mut v = vals[first];
            for w in &vals[first + 1..members.end] {
                v = (values.merge)(v, *w);
            }
            // A merged run is marked by a negative first value (see bars.wgsl).
            if count > 1 {
                v[0] = -(v[0] + 1.0);
            }
            out.put(BarInstance {
                x0: BarInstance::split(row.x0[first]),
                x1: BarInstance::split(row.x1[members.end - 1]),
                name: tier.name[j],
                values: v,
            });
        }
    }
}

/// Fills the mapped chunks with every row's instances, rows split into contiguous
/// groups of about equal size, one per core (big scenes only).
fn fill(src: &BarSource<'_>, plan: &Plan, chunks: Vec<wgpu::WriteOnly<'_, [Slot]>>) {
    let rows = plan.rows.len() - 1;
    let threads = if plan.total < 1 << 16 {
        1
    } else {
        std::thread::available_parallelism()
            .map_or(1, |n| n.get())
            .min(rows.max(1))
    };
    // Row boundaries of the groups: group g takes rows bounds[g]..bounds[g + 1].
    let mut bounds = vec![0usize];
    for g in 1..threads {
        let goal = plan.total * g as u64 / threads as u64;
        let r = plan.rows.partition_point(|e| e.0 < goal).min(rows);
        bounds.push(r.max(*bounds.last().expect("starts with 0")));
    }
    bounds.push(rows);
    // Cut the chunks at the groups' first instances.
    let mut sinks = Vec::with_capacity(threads);
    let mut pieces: std::collections::VecDeque<_> = chunks.into_iter().collect();
    for g in 0..threads {
        let want = plan.rows[bounds[g + 1]].0 - plan.rows[bounds[g]].0;
        let mut mine = std::collections::VecDeque::new();
        let mut left = want as usize;
        while left > 0 {
            let piece = pieces
                .pop_front()
                .expect("the chunks hold the plan's total");
            if piece.len() <= left {
                left -= piece.len();
                mine.push_back(piece);
            } else {
                let (a, b) = piece.split_at(left);
                mine.push_back(a);
                pieces.push_front(b);
                left = 0;
            }
        }
        sinks.push(Sink {
            pieces: mine,
            buf: Vec::with_capacity(Sink::BUF),
        });
    }
    let work = |g: usize, mut sink: Sink<'_>| {
        let mut vals = Vec::new();
        for r in bounds[g]..bounds[g + 1] {
            let (_, own, tiers) = &plan.rows[r];
            if *own || !tiers.is_empty() {
                fill_row(src, r, *own, tiers, &mut vals, &mut sink);
            }
        }
        sink.flush();
    };
    if threads == 1 {
        let sink = sinks.pop().expect("one group");
        work(0, sink);
        return;
    }
    std::thread::scope(|s| {
        let mut handles = Vec::new();
        let mut sinks = sinks.into_iter().enumerate();
        let (g0, first) = sinks.next().expect("one group at least");
        for (g, sink) in sinks {
            handles.push(s.spawn(move || work(g, sink)));
        }
        work(g0, first);
        for h in handles {
            h.join().expect("an upload thread panicked");
        }
    });
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
    pub fn build(
        gpu: &Gpu,
        bind_layout: &wgpu::BindGroupLayout,
        src: &BarSource<'_>,
    ) -> Result<BarScene, super::gpu::GpuError> {
        let keys = PackedKeys::for_names(src.names, src.spy);
        let name_hashes = NameHashes::compute_packed(gpu, &keys);
        let names = src.names.len();
        let values = &src.values;
        let device = &gpu.device;
        let stride = std::mem::size_of::<BarInstance>() as u64;
        // A chunk is bound whole as a storage buffer, and its vertex numbers (six a bar)
        // stay far below 2^32.
        let limits = device.limits();
        let max_chunk_bytes = limits
            .max_buffer_size
            .min(limits.max_storage_buffer_binding_size)
            .min(256 << 20);
        let chunk_cap = (max_chunk_bytes / stride).max(1);
        let plan = Plan::new(src, chunk_cap);
        // Mapped at creation and filled in place on all cores: no staging copy of our
        // own, and the values of a row's bars are computed once for all its tiers.
        // Their own out-of-memory scope: a buffer that failed must not be mapped.
        let chunks: Vec<wgpu::Buffer> =
            gpu.allocating(&src.describe(), plan.total * stride, || {
                (0..plan.total.div_ceil(chunk_cap))
                    .map(|c| {
                        let len = (plan.total - c * chunk_cap).min(chunk_cap);
                        device.create_buffer(&wgpu::BufferDescriptor {
                            label: Some("BarScene::instances"),
                            size: len * stride,
                            usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST,
                            mapped_at_creation: true,
                        })
                    })
                    .collect()
            })?;
        {
            let mut views = chunks
                .iter()
                .map(|c| c.get_mapped_range_mut(..))
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| super::gpu::GpuError::Refused {
                    adapter: gpu.describe(),
                    what: src.describe(),
                    detail: e.to_string(),
                })?;
            let slices = views
                .iter_mut()
                .map(|v| v.slice(..).into_chunks::<INSTANCE_BYTES>().0)
                .collect();
            fill(src, &plan, slices);
        }
        for c in &chunks {
            c.unmap();
        }
        let instance_bytes = plan.total * stride;
        let table = plan.table;

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
        Ok(BarScene {
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
        })
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

    /// The reference: every wanted list of every row in order, each value computed from
    /// the tree directly (members summed one by one).
    fn reference(src: &BarSource<'_>) -> Vec<BarInstance> {
        let mut out = Vec::new();
        for (r, row) in src.layout.rows.iter().enumerate() {
            if src.wants(r, TierRef::Row) {
                for k in 0..row.len() {
                    out.push(BarInstance {
                        x0: BarInstance::split(row.x0[k]),
                        x1: BarInstance::split(row.x1[k]),
                        name: row.name[k],
                        values: (src.values.of)(row.node[k]),
                    });
                }
            }
            for (i, tier) in src.lod.rows[r].iter().enumerate() {
                if !src.wants(r, TierRef::Tier(i)) {
                    continue;
                }
                for j in 0..tier.len() {
                    let m = tier.members(j);
                    let mut v = (src.values.of)(row.node[m.start]);
                    for k in m.start + 1..m.end {
                        v = (src.values.merge)(v, (src.values.of)(row.node[k]));
                    }
                    if m.len() > 1 {
                        v[0] = -(v[0] + 1.0);
                    }
                    out.push(BarInstance {
                        x0: BarInstance::split(row.x0[m.start]),
                        x1: BarInstance::split(row.x1[m.end - 1]),
                        name: tier.name[j],
                        values: v,
                    });
                }
            }
        }
        out
    }

    /// The upload fills mapped chunks from all cores, rows cut into groups and groups
    /// into chunk pieces: the instances are those of one sequential pass, in the order
    /// the segment table says, whatever the chunk size, for all lists and for an
    /// export's single tier per row.
    #[test]
    fn the_parallel_fill_writes_what_a_sequential_pass_does() {
        let mut text = Vec::new();
        let opts = crate::generator::GenOptions {
            workload: crate::generator::Workload::parse("w1").unwrap(),
            format: None,
            seed: 3,
            limit: Some(crate::generator::Limit::Bytes(8 << 20)),
        };
        crate::generator::generate(&opts, &mut text).unwrap();
        let p = crate::import::folded::parse("w1.folded", &text).unwrap();
        let layout = crate::layout::flame_layout(&p.tree);
        let lod = crate::lod::Lod::build(&layout);
        let tree = &p.tree;
        for only_at in [None, Some(layout.rows[0].x1[0] as f64 / 700.0)] {
            let src = BarSource {
                key: crate::view::draw::SceneKey(1),
                layout: &layout,
                lod: &lod,
                names: &p.names,
                spy: None,
                values: crate::view::draw::BarValues {
                    of: Box::new(move |n| {
                        [tree.self_ticks(n) as f32, tree.total(n) as f32, n as f32]
                    }),
                    merge: |a, b| [a[0] + b[0], a[1] + b[1], a[2].max(b[2])],
                    max_self: 1.0,
                    diff_ticks: None,
                },
                only_at,
                noun: "bars",
            };
            let want = reference(&src);
            for chunk_cap in [7u64, 1000, 1 << 20] {
                let plan = Plan::new(&src, chunk_cap);
                assert_eq!(plan.total as usize, want.len());
                // Big enough to be filled on all cores.
                assert!(only_at.is_some() || plan.total > 1 << 16, "{}", plan.total);
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
                // Through the segment table: list l of row r, piece by piece.
                for (r, row) in layout.rows.iter().enumerate() {
                    let lists = 1 + lod.rows[r].len();
                    for l in 0..lists {
                        for s in plan.table.list(r, l).unwrap() {
                            let g = (s.chunk as u64 * chunk_cap + s.chunk_start) as usize;
                            let first = &got[g];
                            if l == 0 {
                                assert_eq!(first.name, row.name[s.row_start]);
                            } else {
                                assert_eq!(first.name, lod.rows[r][l - 1].name[s.row_start]);
                            }
                        }
                    }
                }
                assert!(
                    got == &want[..],
                    "chunk_cap {chunk_cap}, only_at {only_at:?}"
                );
            }
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
