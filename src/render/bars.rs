//! The bar pipeline: per-row instance ranges of [`BarInstance`], drawn with `bars.wgsl`.
//!
//! [`BarScene::build`] packs a [`BarSource`]'s bars (every row, then each of its LOD
//! tiers) into instance buffers once (rows back to back, split into chunks that respect
//! the adapter's `max_buffer_size`; a row may span chunks). A bar is 16 bytes: its ticks
//! as 32-bit offsets from its segment's 64-bit base (a list is cut into segments at chunk
//! boundaries and wherever its ticks would pass 2^32 past the base; positions are counted
//! in the layout's [`TickUnit`], a sampling period where every value is a multiple of
//! one, so that a profile of days in nanoseconds needs a segment per list, not one per
//! 4.3 s of its ticks), its name, and one
//! word of color inputs computed at upload ([`ValueCodec`]). A frame then only writes the
//! [`BarGlobals`] uniform and, per visible row and segment, binds the instance range the
//! view's draw data names ([`RowDraw`]), passes the segment's base as immediate data and
//! issues one plain indexed draw of four corners a bar (two triangles from a shared index
//! buffer) that read the instances from a storage buffer. An export, which draws a single frame, uploads only
//! the list each row uses in it ([`BarSource::only_at`]), and in name-hash colors no
//! values ([`BarValues::read`]). A tier's merged values are combined from the tier
//! written before it, not from every member again. The bar colors come from
//! `bars.wgsl`; names are hashed once by `name_hash.wgsl` ([`super::names`]).

use super::gpu::{Gpu, IMMEDIATE_BYTES, PipelineSpec, render_pipeline, uniform_buffer};
use super::names::{NameHashes, PackedKeys};
use crate::color::{ColorMode, DiffPalette, HEAT_STOPS, PALETTE, diff_percent, ratio_to_percent};
use crate::layout::TickUnit;
use crate::lod::TierRef;
use crate::view::draw::{BarSource, BarValues, GLOBALS_BYTES, INSTANCE_BYTES, NameFlags, RowDraw};
use bytemuck::{Pod, Zeroable};

/// One bar as the GPU sees it: 16 bytes of a storage buffer, read by `load_instance` in
/// `shaders/bars.wgsl` as one `vec4<u32>`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
pub struct BarInstance {
    /// Start tick minus its segment's `base0`.
    pub x0: u32,
    /// End tick (exclusive) minus its segment's `base1`.
    pub x1: u32,
    /// Interned name id, an index into the name hashes.
    pub name: u32,
    /// The color inputs ([`ValueCodec::pack`]).
    pub value: u32,
}

const _: () = assert!(std::mem::size_of::<BarInstance>() == INSTANCE_BYTES);

/// A 64-bit tick as (low 32 bits, high 32 bits).
fn split(t: u64) -> [u32; 2] {
    [t as u32, (t >> 32) as u32]
}

/// Turns a bar's three values ([`BarValues::of`], merged for a tier bar) into the word
/// `Instance.value` in `bars.wgsl` decodes. Everything a color mode needs is computed
/// here once, so the instance carries positions on the color ramps, not the values:
///
/// - bit 31: a merged run of several bars (drawn lighter);
/// - bits 16..30: the heat position sqrt(self / max self), clamped to 0..1, in 32767ths;
/// - bits 0..15, for a diff: the position on the diff gradient, Pyroscope's change
///   (`color::bar_diff_percent`: shares rounded to 0.01 %, clamped to ±100 %) as
///   (p + 100) / 200 in 65534ths, so 0 % is exact; otherwise the track (bits 0..7) and
///   category (bits 8..15) palette indices, the second and third values modulo 24.
///
/// The steps are far below what an 8-bit color channel resolves.
#[derive(Clone, Copy, Debug)]
pub struct ValueCodec {
    max_self: f32,
    diff_ticks: Option<(u64, u64)>,
}

impl ValueCodec {
    /// Steps of the heat position.
    pub const HEAT_STEPS: f64 = 32767.0;
    /// Steps of the diff position over its 200 %.
    pub const DIFF_STEPS: f64 = 65534.0;

    /// The codec of a scene's values.
    pub fn new(values: &BarValues<'_>) -> ValueCodec {
        ValueCodec {
            max_self: values.max_self,
            diff_ticks: values.diff_ticks,
        }
    }

    /// The word of a bar with values `v`; `merged`: it stands for several bars.
    pub fn pack(&self, v: [f64; 3], merged: bool) -> u32 {
        let t = if self.max_self > 0.0 {
            (v[0] / f64::from(self.max_self)).clamp(0.0, 1.0).sqrt()
        } else {
            0.0
        };
        // `as` saturates (NaN becomes 0), so odd values cannot spill into other bits. The
        // positions are never negative: adding a half and truncating rounds them as
        // `round` does, without its library call (a tenth of a large upload's time).
        let heat = ((t * Self::HEAT_STEPS + 0.5) as u32).min(0x7fff);
        let low = match self.diff_ticks {
            Some((l, r)) => {
                let share = |x: f64, total: u64| {
                    if total == 0 {
                        0.0
                    } else {
                        ratio_to_percent(x / total as f64)
                    }
                };
                let p = diff_percent(share(v[1], l), share(v[2], r));
                ((p + 100.0) / 200.0 * Self::DIFF_STEPS + 0.5) as u32
            }
            None => {
                (v[1] as u32 % PALETTE.len() as u32) | (v[2] as u32 % PALETTE.len() as u32) << 8
            }
        };
        Self::unread(merged) | heat << 16 | low.min(0xffff)
    }

    /// The word of a bar whose values no frame reads ([`BarValues::read`]): the merged
    /// bit alone.
    pub fn unread(merged: bool) -> u32 {
        u32::from(merged) << 31
    }

    /// The heat position a word holds (0..1), as the shader reads it.
    pub fn heat(word: u32) -> f64 {
        f64::from((word >> 16) & 0x7fff) / Self::HEAT_STEPS
    }

    /// The diff position a word holds (−100..100 %), as the shader reads it.
    pub fn diff(word: u32) -> f64 {
        f64::from(word & 0xffff) / Self::DIFF_STEPS * 200.0 - 100.0
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
    /// `diff_scene: u32`: 1 when the instances carry diff positions.
    pub diff_scene: u32,
    /// Padding (`pad0`, `pad1`).
    pub pad: [u32; 2],
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

const _: () = assert!(std::mem::size_of::<BarGlobals>() == GLOBALS_BYTES);

fn rgba(c: [u8; 3]) -> [f32; 4] {
    [
        f32::from(c[0]) / 255.0,
        f32::from(c[1]) / 255.0,
        f32::from(c[2]) / 255.0,
        1.0,
    ]
}

impl BarGlobals {
    /// The view counted in units of `unit` ticks instead of ticks: the start tick divided
    /// (its remainder joins the fraction), the scale multiplied.
    fn in_units(&mut self, unit: u64) {
        if unit <= 1 {
            return;
        }
        let start = u64::from(self.view_start[0]) | u64::from(self.view_start[1]) << 32;
        let (q, r) = (start / unit, start % unit);
        self.view_start = split(q);
        self.view_start_frac = ((r as f64 + f64::from(self.view_start_frac)) / unit as f64) as f32;
        self.px_per_tick = (f64::from(self.px_per_tick) * unit as f64) as f32;
    }

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
            diff_scene: 0,
            pad: [0; 2],
            search_active: 0,
            diff_good: rgba(diff.good),
            diff_neutral: rgba(diff.neutral),
            diff_bad: rgba(diff.bad),
            heat: HEAT_STOPS.map(rgba),
            palette,
        }
    }
}

/// Row and segment parameters passed as immediate data. Mirrors `RowParams` in
/// `shaders/bars.wgsl`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Pod, Zeroable)]
pub struct RowParams {
    /// `top: f32`: target-space y of the row's top edge.
    pub top: f32,
    /// `alpha: f32`: opacity of the row.
    pub alpha: f32,
    /// `base0: vec2<u32>`: the segment's base for start ticks, (low, high).
    pub base0: [u32; 2],
    /// `base1: vec2<u32>`: its base for end ticks.
    pub base1: [u32; 2],
    /// `first: u32`: the draw's first bar in its chunk.
    pub first: u32,
    /// Padding to a multiple of 8 bytes.
    pub _pad: u32,
}

const _: () = assert!(std::mem::size_of::<RowParams>() as u32 == IMMEDIATE_BYTES);

/// The compiled bar pipeline; created once, shared by every scene and frame.
pub struct BarPipeline {
    pipeline: wgpu::RenderPipeline,
    bind_layout: wgpu::BindGroupLayout,
    /// Two triangles over four corners for each of [`QUADS_PER_DRAW`] bars.
    quads: wgpu::Buffer,
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
                // Bars are read from a storage buffer (group 1), four corners each.
                buffers: &[],
                format,
                blend: Some(wgpu::BlendState::ALPHA_BLENDING),
                topology: wgpu::PrimitiveTopology::TriangleList,
            },
        );
        BarPipeline {
            pipeline,
            bind_layout,
            quads: quad_indices(device),
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

/// Bars one indexed draw covers at most: their four corners each are numbered below 2^16.
const QUADS_PER_DRAW: u64 = 1 << 14;

const _: () = assert!(QUADS_PER_DRAW * 4 <= 1 << 16);

/// The index buffer's contents: for each of [`QUADS_PER_DRAW`] bars, two triangles over its
/// four corners (numbered x + 2y), (0, 1, 2) and (2, 1, 3). Drawn as six vertices with no
/// index buffer, the two corners the triangles share were shaded twice; on llvmpipe
/// (whose vertex stage runs on one thread) that was a quarter of the draw of a 1200-px
/// flame graph of 20 k bars.
fn quad_index_data() -> Vec<u16> {
    (0..QUADS_PER_DRAW as u16)
        .flat_map(|q| [0u16, 1, 2, 2, 1, 3].map(|c| q * 4 + c))
        .collect()
}

fn quad_indices(device: &wgpu::Device) -> wgpu::Buffer {
    use wgpu::util::DeviceExt;
    device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
        label: Some("BarPipeline::quads"),
        contents: bytemuck::cast_slice(&quad_index_data()),
        usage: wgpu::BufferUsages::INDEX,
    })
}

/// The indexed draws of `count` bars from `first`: (first bar, bars), at most
/// [`QUADS_PER_DRAW`] each.
fn draw_runs(first: u64, count: u64) -> impl Iterator<Item = (u64, u64)> {
    (0..count.div_ceil(QUADS_PER_DRAW)).map(move |i| {
        let at = i * QUADS_PER_DRAW;
        (first + at, (count - at).min(QUADS_PER_DRAW))
    })
}

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

/// Where part of a list of a row's bars lives on the GPU, and the ticks its instances'
/// offsets count from: every start tick of the segment is within 2^32 of `base0`, every
/// end tick within 2^32 of `base1`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Segment {
    /// Chunk buffer index.
    chunk: u32,
    /// First instance of the segment within the chunk.
    chunk_start: u32,
    /// First bar of the segment within the list.
    row_start: u32,
    /// Bars in the segment.
    len: u32,
    /// Base of the start ticks: the first bar's start.
    base0: u64,
    /// Base of the end ticks: `base0`, or for a single bar 2^32 ticks wide or more, its
    /// end.
    base1: u64,
}

impl Segment {
    /// The list's bars it holds.
    fn bars(&self) -> std::ops::Range<usize> {
        self.row_start as usize..(self.row_start + self.len) as usize
    }

    /// The instance of a bar from `x0` to `x1`.
    fn instance(&self, x0: u64, x1: u64, name: u32, value: u32) -> BarInstance {
        BarInstance {
            x0: x0.wrapping_sub(self.base0) as u32,
            x1: x1.wrapping_sub(self.base1) as u32,
            name,
            value,
        }
    }
}

/// Ticks a segment's offsets reach: 2^32.
const SEGMENT_SPAN: u64 = 1 << 32;

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
    /// What positions are counted in: the largest tick count dividing all of them.
    unit: TickUnit,
}

/// Appends the segments of a list of `len` bars whose ticks `x0(i)` and `x1(i)` give
/// (both sorted, as in every layout row and tier), starting at global instance `at`: cut
/// at chunk boundaries (`chunk_cap` instances) and before the first bar whose end is
/// `span` or more ticks past the segment's first start. A bar at least `span` wide is a
/// segment of its own, with its end as the end base.
fn push_list(
    segs: &mut Vec<Segment>,
    at: &mut u64,
    len: usize,
    (chunk_cap, span): (u64, u64),
    x0: impl Fn(usize) -> u64,
    x1: impl Fn(usize) -> u64,
) {
    let mut i = 0;
    while i < len {
        let in_chunk = *at % chunk_cap;
        let room = ((chunk_cap - in_chunk) as usize).min(len - i);
        let base = x0(i);
        // Bars i..i + fit end within `span` of the base (ends are sorted).
        let fit = crate::lod::partition(room, |d| x1(i + d).saturating_sub(base) < span);
        let (take, base1) = if fit == 0 { (1, x1(i)) } else { (fit, base) };
        segs.push(Segment {
            chunk: (*at / chunk_cap) as u32,
            chunk_start: in_chunk as u32,
            row_start: i as u32,
            len: take as u32,
            base0: base,
            base1,
        });
        *at += take as u64;
        i += take;
    }
}

impl Plan {
    /// Lays out `src`'s wanted lists back to back in chunks of `chunk_cap` instances,
    /// in segments whose offsets stay below `span` ticks ([`SEGMENT_SPAN`]; tests use
    /// less).
    fn new(src: &BarSource<'_>, chunk_cap: u64, span: u64) -> Plan {
        let (layout, lod) = (src.layout, src.lod);
        let unit = match src.only_at {
            // Every list: the rows' positions (the tiers' are some of them).
            None => TickUnit::of_layout(layout),
            // One list a row: only its positions need to be multiples.
            Some(_) => {
                let mut u = TickUnit::none();
                for (r, row) in layout.rows.iter().enumerate() {
                    if u.is_one() {
                        break;
                    }
                    if src.wants(r, TierRef::Row) {
                        u = u.with_all(&row.x0).with_all(&row.x1);
                    }
                    for (i, tier) in lod.rows.get(r).into_iter().flatten().enumerate() {
                        if src.wants(r, TierRef::Tier(i)) {
                            for j in 0..tier.len() {
                                u = u.with(tier.x0(row, j)).with(tier.x1(row, j));
                            }
                        }
                    }
                }
                u.found()
            }
        };
        let mut table = SegmentTable::default();
        let mut rows = Vec::with_capacity(layout.rows.len() + 1);
        let mut at = 0u64;
        let caps = (chunk_cap, span);
        for (r, row) in layout.rows.iter().enumerate() {
            table.start_row();
            let first = at;
            let own = src.wants(r, TierRef::Row);
            table.start_list();
            push_list(
                &mut table.segments,
                &mut at,
                if own { row.len() } else { 0 },
                caps,
                |i| unit.of(row.x0[i]),
                |i| unit.of(row.x1[i]),
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
                    push_list(
                        &mut table.segments,
                        &mut at,
                        tier.len(),
                        caps,
                        |j| unit.of(tier.x0(row, j)),
                        |j| unit.of(tier.x1(row, j)),
                    );
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
            unit,
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

/// What a thread reuses from row to row while filling: the values of a row's bars, and
/// those of the last tier written.
#[derive(Default)]
struct FillScratch {
    vals: Vec<[f32; 3]>,
    tier: Vec<[f64; 3]>,
}

fn widen(v: [f32; 3]) -> [f64; 3] {
    v.map(f64::from)
}

/// Turns `vals`, the values of `finer`'s bars, into those of `tier`'s, a tier of the same
/// row built after it (each of its bars a run of `finer`'s): one pass, in place (bar `j`
/// is written after the runs it combines were read). False, with `vals` spoiled, where
/// `tier`'s bars do not start and end on `finer`'s.
fn combine(
    finer: &crate::lod::Tier,
    tier: &crate::lod::Tier,
    merge: fn([f64; 3], [f64; 3]) -> [f64; 3],
    vals: &mut Vec<[f64; 3]>,
) -> bool {
    if vals.len() != finer.len() {
        return false;
    }
    let mut p = 0;
    for j in 0..tier.len() {
        let m = tier.members(j);
        if p >= finer.len() || finer.first(p) != m.start {
            return false;
        }
        let mut v = vals[p];
        p += 1;
        while p < finer.len() && finer.first(p) < m.end {
            v = merge(v, vals[p]);
            p += 1;
        }
        if finer.members(p - 1).end != m.end {
            return false;
        }
        vals[j] = v;
    }
    vals.truncate(tier.len());
    p == finer.len()
}

/// Writes the instances of row `r` (its own bars, then its wanted tiers, as the plan
/// has them, segment by segment). The values of the row's bars are computed once; a
/// tier's merged values are combined from the tier written before it (the first from
/// the row's), so the values cost about two passes over the row whatever the number
/// of tiers. None of it where no frame reads them.
fn fill_row(src: &BarSource<'_>, plan: &Plan, r: usize, s: &mut FillScratch, out: &mut Sink<'_>) {
    let (_, own, tiers) = &plan.rows[r];
    let row = &src.layout.rows[r];
    let values = &src.values;
    let codec = ValueCodec::new(values);
    let unit = plan.unit;
    s.vals.clear();
    if values.read {
        values.of_row(src.layout, r, &mut s.vals);
    }
    if *own {
        for seg in plan.table.list(r, 0).unwrap_or_default() {
            for k in seg.bars() {
                let value = if values.read {
                    codec.pack(widen(s.vals[k]), false)
                } else {
                    ValueCodec::unread(false)
                };
                out.put(seg.instance(unit.of(row.x0[k]), unit.of(row.x1[k]), row.name[k], value));
            }
        }
    }
    let row_tiers = src.lod.rows.get(r).map_or(&[][..], |t| &t[..]);
    let mut prev: Option<usize> = None;
    for &i in tiers {
        let tier = &row_tiers[i];
        if values.read {
            let combined =
                prev.is_some_and(|p| combine(&row_tiers[p], tier, values.merge, &mut s.tier));
            if !combined {
                s.tier.clear();
                s.tier.extend((0..tier.len()).map(|j| {
                    let m = tier.members(j);
                    s.vals[m.start + 1..m.end]
                        .iter()
                        .fold(widen(s.vals[m.start]), |v, w| (values.merge)(v, widen(*w)))
                }));
            }
        }
        for seg in plan.table.list(r, i + 1).unwrap_or_default() {
            for j in seg.bars() {
                let members = tier.members(j);
                let merged = members.len() > 1;
                let value = if values.read {
                    codec.pack(s.tier[j], merged)
                } else {
                    ValueCodec::unread(merged)
                };
                let (x0, x1) = (
                    unit.of(row.x0[members.start]),
                    unit.of(row.x1[members.end - 1]),
                );
                out.put(seg.instance(x0, x1, tier.name[j], value));
            }
        }
        prev = Some(i);
    }
}

/// Fills the mapped chunks with every row's instances, rows split into contiguous
/// groups of about equal size, one per core (big scenes only).
fn fill(src: &BarSource<'_>, plan: &Plan, chunks: Vec<wgpu::WriteOnly<'_, [Slot]>>) {
    let rows = plan.rows.len() - 1;
    let threads = if plan.total < 1 << 16 {
        1
    } else {
        crate::par::cores().min(rows.max(1))
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
        let mut scratch = FillScratch::default();
        for r in bounds[g]..bounds[g + 1] {
            let (_, own, tiers) = &plan.rows[r];
            if *own || !tiers.is_empty() {
                fill_row(src, plan, r, &mut scratch, &mut sink);
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

/// Creates instance chunks of `sizes` bytes, mapped. wgpu zero-fills a buffer mapped at
/// creation (or its staging copy) in the thread that creates it, and the first touch of
/// fresh pages is the costly part: 3.4 GB of chunks took 4 s on one core. A scene of
/// several chunks creates them on all cores, in contiguous runs, each thread in its own
/// out-of-memory scope (wgpu's error scopes are per thread); a buffer that failed is
/// never mapped. An error names the whole scene's bytes.
fn create_chunks(
    gpu: &Gpu,
    what: &str,
    usage: wgpu::BufferUsages,
    sizes: &[u64],
) -> Result<Vec<wgpu::Buffer>, super::gpu::GpuError> {
    let total: u64 = sizes.iter().sum();
    let make = |sizes: &[u64]| {
        gpu.allocating(what, total, || {
            sizes
                .iter()
                .map(|&size| {
                    gpu.device.create_buffer(&wgpu::BufferDescriptor {
                        label: Some("BarScene::instances"),
                        size,
                        usage,
                        mapped_at_creation: true,
                    })
                })
                .collect::<Vec<_>>()
        })
    };
    let threads = crate::par::cores().min(sizes.len());
    if threads <= 1 {
        return make(sizes);
    }
    let per = sizes.len().div_ceil(threads);
    std::thread::scope(|s| {
        let rest: Vec<_> = sizes[per..]
            .chunks(per)
            .map(|run| s.spawn(move || make(run)))
            .collect();
        let mut chunks = make(&sizes[..per]);
        for h in rest {
            let run = h.join().expect("a thread creating buffers panicked");
            if let Ok(all) = &mut chunks {
                all.extend(run?);
            }
        }
        chunks
    })
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
    /// Every byte the scene holds on the GPU: instances, name hashes and search flags,
    /// the uniform block.
    pub gpu_bytes: u64,
    max_self: f32,
    diff_ticks: Option<(u64, u64)>,
    /// Ticks per unit of the instances' and segments' positions ([`TickUnit`]).
    unit: u64,
    /// That unit.
    tick_unit: TickUnit,
    /// The own bars of rows with tiers, a page at a time as frames first draw them (a
    /// window's scene; an export's has none).
    pages: pages::Pages,
    /// The layout of a chunk's bind group (for the pages' chunks).
    group_layout: wgpu::BindGroupLayout,
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
        // A chunk is bound whole as a storage buffer, and its bar numbers (passed to each
        // draw as the run's first bar) stay far below 2^32.
        let limits = device.limits();
        let max_chunk_bytes = limits
            .max_buffer_size
            .min(limits.max_storage_buffer_binding_size)
            .min(256 << 20);
        let chunk_cap = (max_chunk_bytes / stride).max(1);
        let plan = Plan::new(src, chunk_cap, SEGMENT_SPAN);
        // Mapped at creation and filled in place on all cores: no staging copy of our
        // own, and the values of a row's bars are computed once for all its tiers. Where
        // the device draws from the CPU's memory, the buffers themselves are mapped, so
        // wgpu needs no staging copy either.
        let usage = if gpu.maps_instances() {
            wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::MAP_WRITE
        } else {
            wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST
        };
        let sizes: Vec<u64> = (0..plan.total.div_ceil(chunk_cap))
            .map(|c| (plan.total - c * chunk_cap).min(chunk_cap) * stride)
            .collect();
        let chunks = create_chunks(gpu, &src.describe(), usage, &sizes)?;
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
        let tick_unit = plan.unit;
        let unit = plan.unit.ticks();
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
        let gpu_bytes =
            instance_bytes + name_hashes.buffer().size() + name_flags.size() + globals.size();
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
            gpu_bytes,
            max_self: values.max_self,
            diff_ticks: values.diff_ticks,
            unit,
            tick_unit,
            pages: pages::Pages::new(src),
            group_layout,
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

    /// Fills the profile-dependent fields of `g` (whether the bars carry diff positions)
    /// and puts its view in the unit the scene's positions are counted in.
    pub fn complete_globals(&self, g: &mut BarGlobals) {
        g.diff_scene = u32::from(self.diff_ticks.is_some());
        g.in_units(self.unit);
    }

    /// Writes this frame's uniform block.
    pub fn write_globals(&self, queue: &wgpu::Queue, g: &BarGlobals) {
        queue.write_buffer(&self.globals, 0, bytemuck::bytes_of(g));
    }

    /// Records the draws of `rows` (a row's top edge is shifted up by `dy`, the tile's
    /// top; rows outside `0..tile_h` after that are skipped), chosen from the tiers
    /// `lod` (for a row whose own bars' pages are not all in, its finest tier is drawn
    /// instead). Returns the bars drawn.
    pub fn draw<'a>(
        &'a self,
        pass: &mut wgpu::RenderPass<'a>,
        pipeline: &'a BarPipeline,
        (rows, lod): (&[RowDraw], &crate::lod::Lod),
        bar_height: f32,
        dy: f32,
        tile_h: f32,
    ) -> u64 {
        pass.set_pipeline(&pipeline.pipeline);
        pass.set_bind_group(0, &self.bind_group, &[]);
        pass.set_index_buffer(pipeline.quads.slice(..), wgpu::IndexFormat::Uint16);
        // The chunk bound last: (whether a pages' chunk, its index). Rows drawn from
        // pages come after the others (rows never overlap, so the order draws the same
        // pixels): a rebind between every two rows would cost more than their draws.
        let mut bound: Option<(bool, usize)> = None;
        let mut drawn = 0u64;
        for paged_pass in [false, true] {
            for d in rows {
                let (row, tier, range, alpha) = (d.row, d.tier, &d.range, d.alpha);
                let top = d.top - dy;
                if top + bar_height <= 0.0 || top >= tile_h || range.is_empty() {
                    continue;
                }
                let mut run = Run {
                    pass: &mut *pass,
                    bound: &mut bound,
                    top,
                    alpha,
                };
                if tier == TierRef::Row && self.pages.defers(row) {
                    // The row's own bars where all their pages are in, else its finest
                    // tier over the same ticks (found only then: two binary searches).
                    match self.pages.resident(row, range) {
                        Some(pages) if paged_pass => {
                            let segs = pages.iter().flatten().flat_map(|p| p.iter());
                            drawn += run.segments(segs, range, |c| self.pages.group(c), true);
                        }
                        None if !paged_pass => {
                            let finest = lod.tier(row, 0);
                            if let (Some(t), Some(segs)) = (finest, self.segments.list(row, 1)) {
                                let main = |c: usize| &self.chunk_groups[c];
                                let fallback = t.covering(range);
                                drawn += run.segments(segs.iter(), &fallback, main, false);
                            }
                        }
                        _ => {}
                    }
                    continue;
                }
                if paged_pass {
                    continue;
                }
                let list = match tier {
                    TierRef::Row => 0,
                    TierRef::Tier(i) => i + 1,
                };
                let Some(segs) = self.segments.list(row, list) else {
                    continue;
                };
                // Segments are in bar order: skip to the first one the range reaches.
                let from = segs.partition_point(|s| s.bars().end <= range.start);
                let main = |c: usize| &self.chunk_groups[c];
                drawn += run.segments(segs[from..].iter(), range, main, false);
            }
        }
        drawn
    }
}

/// One row draw's state while its segments are recorded.
struct Run<'p, 'a> {
    pass: &'p mut wgpu::RenderPass<'a>,
    bound: &'p mut Option<(bool, usize)>,
    top: f32,
    alpha: f32,
}

impl<'a> Run<'_, 'a> {
    /// Draws the bars of `range` that the segments `segs` (in bar order) hold, binding
    /// each segment's chunk (`group`; `paged`: a pages' chunk) when another is bound.
    /// Returns the bars drawn.
    fn segments<'s>(
        &mut self,
        segs: impl Iterator<Item = &'s Segment>,
        range: &std::ops::Range<usize>,
        group: impl Fn(usize) -> &'a wgpu::BindGroup,
        paged: bool,
    ) -> u64 {
        let mut drawn = 0;
        for s in segs {
            let bars = s.bars();
            if bars.start >= range.end {
                break;
            }
            let lo = range.start.max(bars.start);
            let hi = range.end.min(bars.end);
            if lo >= hi {
                continue;
            }
            let first = u64::from(s.chunk_start) + (lo - bars.start) as u64;
            let count = (hi - lo) as u64;
            let chunk = s.chunk as usize;
            if *self.bound != Some((paged, chunk)) {
                self.pass.set_bind_group(1, group(chunk), &[]);
                *self.bound = Some((paged, chunk));
            }
            let mut params = RowParams {
                top: self.top,
                alpha: self.alpha,
                base0: split(s.base0),
                base1: split(s.base1),
                first: 0,
                _pad: 0,
            };
            for (from, n) in draw_runs(first, count) {
                // A chunk holds far fewer than 2^32 bars (`BarScene::new`).
                params.first = from as u32;
                self.pass.set_immediates(0, bytemuck::bytes_of(&params));
                self.pass.draw_indexed(0..(n * 6) as u32, 0, 0..1);
            }
            drawn += count;
        }
        drawn
    }
}

mod pages;
pub use pages::{FRAME_PAGES, PAGE, PAGE_FILLING, PageBudget};

#[cfg(test)]
mod tests;
