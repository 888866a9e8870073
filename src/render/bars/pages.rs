//! A window's rows' own bars, uploaded a page at a time when a frame first draws them.
//!
//! A window's scene leaves out the own bars of big rows whose finest LOD tier any view
//! of the whole layout draws ([`BarSource::defers`]): a frame draws them only once the
//! view is zoomed in past that tier, and on a big profile they are most of the
//! instances. [`Pages`]
//! keeps, per such row, which pages of [`PAGE`] bars are uploaded and where.
//! [`BarScene::fetch`] uploads the pages a frame's row draws reach (a few per row: at
//! that zoom a row shows a few bars per pixel), as many as a [`PageBudget`] allows, and
//! until all of a draw's pages are in, [`BarScene::draw`] draws the row's finest tier
//! over the same ticks ([`crate::lod::Tier::covering`], looked up only then): its bars
//! are the row's, with neighbours narrower than a few pixels of that zoom drawn as one.

use super::*;
use std::ops::Range;

/// Bars a page holds: a zoomed-in row draw reaches a few hundred bars, so a page holds
/// a few times that, not the row.
pub const PAGE: usize = 1024;

/// Pages a window frame uploads at most: 64 Ki bars, 1 MiB of instances; a frame that
/// reaches more draws those rows' finest tiers and the next frame goes on.
pub const FRAME_PAGES: usize = 64;

/// How long a window frame fills pages: past it, after one page at least, the frame
/// leaves the rest to the next frames. A page takes ~20 µs to fill and ~3 µs to write
/// on this project's 2-core test machine, where 16 pages a frame took 0.6–1.0 ms (the
/// frame benchmark's CPU p99 at 100 M spans went from 1.1 to 1.8 ms).
pub const PAGE_FILLING: std::time::Duration = std::time::Duration::from_micros(250);

/// How many pages a fetch may upload.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PageBudget {
    /// Pages at most.
    pub pages: usize,
    /// No page is begun after this instant, once one is in (`None`: no time limit).
    pub until: Option<std::time::Instant>,
}

impl PageBudget {
    /// Every page (a picture that must be exact: screenshots, exports, tests).
    pub const ALL: PageBudget = PageBudget {
        pages: usize::MAX,
        until: None,
    };

    /// `pages` pages at most, however long they take.
    pub fn pages(pages: usize) -> PageBudget {
        PageBudget { pages, until: None }
    }

    /// A window frame's, starting now: [`FRAME_PAGES`] at most, none begun after
    /// [`PAGE_FILLING`] or after `end` (the frame's own deadline, when it has one:
    /// [`crate::render::text::TextLayer::work_until`]) once one is in. A frame that moves
    /// fetches its pages after its labels are placed: without `end`, a frame whose labels
    /// took their time and that reached new pages ran a quarter of a millisecond past
    /// its deadline (the frame benchmark's CPU p99 at 100 M spans 1.0–1.2 ms).
    pub fn frame(end: Option<std::time::Instant>) -> PageBudget {
        let filling = std::time::Instant::now() + PAGE_FILLING;
        PageBudget {
            pages: FRAME_PAGES,
            until: Some(end.map_or(filling, |e| e.min(filling))),
        }
    }

    /// Whether a page may be begun after `done` pages of this fetch.
    fn allows(&self, done: usize) -> bool {
        done < self.pages && (done == 0 || self.until.is_none_or(|t| std::time::Instant::now() < t))
    }
}

/// Pages a chunk buffer holds (16 MiB of instances).
const PAGES_PER_CHUNK: usize = 1024;

/// Instances a chunk buffer holds.
const CHUNK_BARS: u64 = (PAGE * PAGES_PER_CHUNK) as u64;

/// A page's segments, once uploaded.
pub(super) type Page = Option<Box<[Segment]>>;

/// The deferred rows' pages of one scene.
#[derive(Default)]
pub(super) struct Pages {
    /// Per layout row: `None` where the scene holds the row's own bars, else per page its
    /// segments (`chunk` indexes [`Pages::chunks`]; `row_start` counts from the row's
    /// first bar), `None` until uploaded.
    rows: Vec<Option<Vec<Page>>>,
    /// Chunk buffers with their bind groups; pages fill the last one in order.
    chunks: Vec<(wgpu::Buffer, wgpu::BindGroup)>,
    /// Pages written into the last chunk.
    in_last: usize,
    /// The device refused a chunk: no page is asked for again (the rows keep drawing
    /// their finest tiers; the error was returned once).
    pub(super) refused: bool,
}

/// The pages of `bars` (a range of a row's bars).
fn pages_of(bars: &Range<usize>) -> Range<usize> {
    if bars.is_empty() {
        return 0..0;
    }
    bars.start / PAGE..(bars.end - 1) / PAGE + 1
}

impl Pages {
    /// Pages for every row of `src` whose own bars its scene leaves out.
    pub(super) fn new(src: &BarSource<'_>) -> Pages {
        let rows = (0..src.layout.rows.len())
            .map(|r| {
                src.defers(r)
                    .then(|| vec![None; src.layout.rows[r].len().div_ceil(PAGE)])
            })
            .collect();
        Pages {
            rows,
            ..Pages::default()
        }
    }

    /// Whether row `row`'s own bars are in pages (uploaded or not).
    pub(super) fn defers(&self, row: usize) -> bool {
        self.rows.get(row).is_some_and(Option::is_some)
    }

    /// The pages of row `row` that `bars` reach, each page's segments, or `None` unless
    /// every one of them is uploaded (or the row is not deferred).
    pub(super) fn resident(&self, row: usize, bars: &Range<usize>) -> Option<&[Page]> {
        let pages = self.rows.get(row)?.as_ref()?;
        let reached = pages.get(pages_of(bars))?;
        reached.iter().all(Option::is_some).then_some(reached)
    }

    /// Whether row `row` is deferred and `bars` reach a page of it not uploaded.
    pub(super) fn lacks(&self, row: usize, bars: &Range<usize>) -> bool {
        !self.refused
            && self
                .rows
                .get(row)
                .and_then(Option::as_ref)
                .is_some_and(|pages| {
                    pages_of(bars).any(|p| pages.get(p).is_some_and(Option::is_none))
                })
    }

    /// The bind group of chunk `chunk`.
    pub(super) fn group(&self, chunk: usize) -> &wgpu::BindGroup {
        &self.chunks[chunk].1
    }

    /// Pages of row `row` that `bars` reach and that are not uploaded.
    fn missing(&self, row: usize, bars: &Range<usize>) -> Vec<usize> {
        let Some(Some(pages)) = self.rows.get(row).filter(|_| !self.refused) else {
            return Vec::new();
        };
        pages_of(bars)
            .filter(|&p| pages.get(p).is_some_and(Option::is_none))
            .collect()
    }

    /// Where the next page goes: a chunk with room (created when the last is full) and
    /// its first instance there. Bytes of a new chunk are added to `gpu_bytes`.
    fn room(
        &mut self,
        gpu: &Gpu,
        layout: &wgpu::BindGroupLayout,
        gpu_bytes: &mut u64,
    ) -> Result<(usize, u64), super::super::gpu::GpuError> {
        if self.chunks.is_empty() || self.in_last == PAGES_PER_CHUNK {
            let size = CHUNK_BARS * INSTANCE_BYTES as u64;
            let made = gpu.allocating("a page of bars", size, || {
                let buffer = gpu.device.create_buffer(&wgpu::BufferDescriptor {
                    label: Some("BarScene::pages"),
                    size,
                    usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST,
                    mapped_at_creation: false,
                });
                let group = gpu.device.create_bind_group(&wgpu::BindGroupDescriptor {
                    label: Some("BarScene::pages"),
                    layout,
                    entries: &[wgpu::BindGroupEntry {
                        binding: 0,
                        resource: buffer.as_entire_binding(),
                    }],
                });
                (buffer, group)
            });
            let (buffer, group) = made.inspect_err(|_| self.refused = true)?;
            self.chunks.push((buffer, group));
            self.in_last = 0;
            *gpu_bytes += size;
        }
        let chunk = self.chunks.len() - 1;
        let at = chunk as u64 * CHUNK_BARS + (self.in_last * PAGE) as u64;
        self.in_last += 1;
        Ok((chunk, at))
    }
}

/// The instances of page `page` of row `r` of `src` into `out` (cleared first; `vals`
/// holds their values meanwhile: both reused from page to page), and their segments (cut
/// as the scene's lists are, at `span` ticks of offsets, starting at global instance
/// `at` of chunks of `chunk_cap`; `row_start` counted from the row's first bar).
pub(super) fn page_instances(
    src: &BarSource<'_>,
    unit: TickUnit,
    (r, page): (usize, usize),
    (at, chunk_cap, span): (u64, u64, u64),
    vals: &mut Vec<[f32; 3]>,
    out: &mut Vec<BarInstance>,
) -> Vec<Segment> {
    let row = &src.layout.rows[r];
    let bars = page * PAGE..((page + 1) * PAGE).min(row.len());
    let first = bars.start;
    let values = &src.values;
    if values.read {
        values.of_bars(src.layout, r, bars.clone(), vals);
    }
    let codec = ValueCodec::new(values);
    let mut segs = Vec::new();
    let mut next = at;
    push_list(
        &mut segs,
        &mut next,
        bars.len(),
        (chunk_cap, span),
        |i| unit.of(row.x0[first + i]),
        |i| unit.of(row.x1[first + i]),
    );
    out.clear();
    out.reserve(bars.len());
    for s in &mut segs {
        for i in s.bars() {
            let k = first + i;
            let value = if values.read {
                codec.pack(widen(vals[i]), false)
            } else {
                ValueCodec::unread(false)
            };
            out.push(s.instance(unit.of(row.x0[k]), unit.of(row.x1[k]), row.name[k], value));
        }
        s.row_start += first as u32;
    }
    segs
}

impl BarScene {
    /// Whether `rows` (a frame's draws of this scene) reach a page of own bars the scene
    /// has not got: what [`fetch`](Self::fetch) would upload. No allocation, so a frame
    /// asks this first.
    pub fn lacks_pages(&self, rows: &[RowDraw]) -> bool {
        rows.iter()
            .any(|d| d.tier == TierRef::Row && self.pages.lacks(d.row, &d.range))
    }

    /// Uploads the pages of own bars that `rows` (a frame's draws of this scene, made
    /// from `src`) reach and the scene has not got yet, as many as `budget` allows
    /// (counting the `done` pages a fetch of other scenes for the same frame uploaded;
    /// a window frame takes a few and asks for another frame). Returns the pages still
    /// missing. A chunk the device refuses is an error, returned once: the scene asks
    /// for no page again, and its draws keep falling back.
    pub fn fetch(
        &mut self,
        gpu: &Gpu,
        src: &BarSource<'_>,
        rows: &[RowDraw],
        budget: PageBudget,
        done: &mut usize,
    ) -> Result<usize, super::super::gpu::GpuError> {
        let mut missing = 0;
        let (mut vals, mut instances) = (Vec::new(), Vec::new());
        for d in rows {
            if d.tier != TierRef::Row || !self.pages.defers(d.row) {
                continue;
            }
            for p in self.pages.missing(d.row, &d.range) {
                if !budget.allows(*done) {
                    missing += 1;
                    continue;
                }
                *done += 1;
                let (chunk, at) = self
                    .pages
                    .room(gpu, &self.group_layout, &mut self.gpu_bytes)?;
                let segs = page_instances(
                    src,
                    self.tick_unit,
                    (d.row, p),
                    (at, CHUNK_BARS, SEGMENT_SPAN),
                    &mut vals,
                    &mut instances,
                );
                let offset = (at % CHUNK_BARS) * INSTANCE_BYTES as u64;
                gpu.queue.write_buffer(
                    &self.pages.chunks[chunk].0,
                    offset,
                    bytemuck::cast_slice(&instances),
                );
                self.instance_bytes += (instances.len() * INSTANCE_BYTES) as u64;
                if let Some(Some(pages)) = self.pages.rows.get_mut(d.row) {
                    pages[p] = Some(segs.into_boxed_slice());
                }
            }
        }
        Ok(missing)
    }
}

#[cfg(test)]
mod budget_tests {
    use super::*;
    use std::time::{Duration, Instant};

    /// A moving frame's pages stop at its own deadline (one page at least, so a frame
    /// whose labels took all its time still gets on), and never run past
    /// [`PAGE_FILLING`]; without a deadline only [`PAGE_FILLING`] bounds them.
    #[test]
    fn a_frame_fetches_pages_until_its_deadline_one_at_least() {
        let passed = Instant::now().checked_sub(Duration::from_millis(1));
        let late = PageBudget::frame(passed);
        assert!(late.allows(0));
        assert!(!late.allows(1));
        assert_eq!(late.pages, FRAME_PAGES);

        let before = Instant::now();
        let far = PageBudget::frame(Some(before + Duration::from_secs(60)));
        let until = far.until.expect("a frame's budget has an end");
        assert!(until <= Instant::now() + PAGE_FILLING);
        assert!(far.allows(1) || Instant::now() >= until);
        assert!(!far.allows(FRAME_PAGES));

        let soon = before + Duration::from_micros(100);
        assert_eq!(PageBudget::frame(Some(soon)).until, Some(soon));

        let plain = PageBudget::frame(None);
        assert!(plain.until.expect("an end") >= before + PAGE_FILLING);
    }
}
