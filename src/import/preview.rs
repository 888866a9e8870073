//! Previews of big inputs: a quick, partial import that the window shows while the whole
//! input loads (TARGETS.md: the first picture within a second, whatever the file's size).
//!
//! What a preview reads depends on the format:
//! - **Folded stacks and `perf script`**: [`PreviewOptions::slices`] evenly spaced slices
//!   of the file, the first at its start and the last at its end, each cut at line
//!   (folded) or sample (blank line, perf) boundaries by the same boundary functions the
//!   parallel parsers split at ([`chunks::next_line_start`](super::chunks::next_line_start),
//!   `perf::next_blank_line_end`). The slices are concatenated and parsed as one input.
//!   An aggregated profile does not depend on line order, so slices from across the file
//!   give a tree whose proportions approximate the whole profile's; the file's head alone
//!   would show only what was recorded first (a profile written phase after phase would
//!   look like its first phase).
//!
//!   Its counts are those of the sampled lines, not scaled up: a share of the bytes is not
//!   the same share of the samples (lines differ in length and in count), so a scaled
//!   total would look exact and be a guess. The window says "preview" wherever it shows a
//!   count; shares (percentages) are the numbers that carry over.
//! - **DTrace stack aggregations**: slices as for folded stacks, cut after count lines
//!   (where a stack ends: [`dtrace::next_stack_start`]); the first slice holds the header.
//! - **Chrome JSON**: the file's first [`PreviewOptions::head_bytes`], parsed as a
//!   truncated trace (the importer accepts an event array cut anywhere): the start of the
//!   timeline, exact as far as it goes.
//! - **V8 CPU profiles** (`.cpuprofile`): the node list at the file's head, each node
//!   weighed by its own `hitCount`: the whole profile aggregated (in samples, not yet in
//!   time), before the samples and their time deltas, most of the file, are read.
//! - **gzip**: decompressing is the slow part and a stream cannot be entered in the
//!   middle, so the preview is a decompressed prefix, cut at the last line or sample
//!   boundary and read as above (the head of the profile or trace). Where that prefix
//!   gives none because what the preview needs ends the stream (a pprof's tables, a
//!   speedscope file's frames, the tables Firefox writes after a thread's samples), the
//!   full load decompresses the stream whole, as it must anyway before parsing, and the
//!   preview is made from those bytes as from a plain file's ([`decompressed`]).
//!
//! - **Jaeger and OTLP JSON**: the file's first [`PreviewOptions::head_bytes`], read as far
//!   as whole traces (the query API's `{"data": [traces …`, or an array of traces or
//!   spans) or whole resources (`{"resourceSpans": [resources …`) go: the traces at the
//!   start of the file, exact as far as they go. Other shapes of these documents (one
//!   trace holding every span) get none.
//!
//! - **Firefox profiles** (processed, and Firefox's own gecko format): the threads the
//!   file's first [`PreviewOptions::head_bytes`] can draw; Firefox writes a gecko
//!   thread's tables after its samples, so the thread the head stops in is given its
//!   tables found after the cut (`gecko_head`). A gzipped one gets the threads of its
//!   decompressed prefix, or, where that draws none, the same as a plain file once the
//!   full load has decompressed it whole ([`decompressed`]).
//!
//! - **pprof** (plain protobuf): its tables come after the samples, so the whole input is
//!   read for them, then runs of samples from across it (half of folded stacks' budget, in
//!   runs of 64 KiB from the sample fields the tables pass marks), aggregated as the full
//!   load does: proportions, like the slices of folded stacks. A gzipped pprof gets the
//!   same preview once the full load has decompressed it whole (its tables end the
//!   stream, and the protobuf parser needs all of it anyway): [`decompressed`].
//!
//! - **speedscope**: the first profile's first [`PreviewOptions::head_bytes`] of samples,
//!   with the frames (`shared`, usually written after the profiles: found from the end of
//!   the file) and as many weights (written after the samples: the key found past them
//!   without parsing them), or of events, each frame still open closed at the last one's
//!   time, as a small document of its own (`speedscope::head`): the start of the profile,
//!   exact as far as it goes. A gzipped one gets the same once the full load has
//!   decompressed it whole, as a gzipped pprof does ([`decompressed`]).
//!
//! - **flamebearer**: its names and first levels, as many whole ones as half of
//!   [`PreviewOptions::head_bytes`] holds, closed as a document of its own (with the
//!   wrapper's `metadata` from the end of the file): its levels are the flame graph's rows
//!   from the root down, so this is the top of the flame graph, exact as far as it goes.
//!   A gzipped one gets the same from its decompressed prefix (without the metadata).
//!
//! - **TiDB trace JSON**: the spans whole in the file's first
//!   [`PreviewOptions::head_bytes`] (`tidb::parse_head`), in the span sets they are in (a
//!   set cut before its `node_type` is "span set N"): the spans at the start of the file;
//!   a span whose parent is further on is a root until the whole file is read.
//!
//! Other formats (UTF-16 text, which must be converted whole) get no preview, nor do inputs under
//! [`PreviewOptions::min_bytes`], which load in about a second anyway.
//!
//! A preview maps the file without `MAP_POPULATE` (unlike [`read_input`](super::read_input)):
//! only the pages of the slices (and the kernel's read-ahead around them) are read, so a
//! 1 GB file that is not in the page cache costs a few dozen MiB of reads, not all of it. Any failure (an
//! unreadable file, a slice with no valid line) means no preview, never an error: the full
//! load that follows reports the problem with its position.

use super::decode::{GZIP_MAGIC, looks_utf16};
use super::{Imported, Trace, chrome, chunks, detect, dtrace, folded, perf};
use crate::model::SourceFormat;
use std::io::Read;
use std::ops::Range;
use std::path::Path;

/// When and how much to preview.
#[derive(Clone, Copy, Debug)]
pub struct PreviewOptions {
    /// Plain inputs smaller than this load without a preview.
    pub min_bytes: u64,
    /// gzip inputs whose compressed size is smaller than this load without a preview.
    pub min_gzip_bytes: u64,
    /// Slices sampled from folded stacks and perf script.
    pub slices: usize,
    /// Most bytes sampled from folded stacks and perf script in all: the budget is a
    /// sixty-fourth of the input (about 1.5 % of the full parse's work), at most this.
    pub max_sampled_bytes: usize,
    /// Bytes read from the head of a Chrome trace, or decompressed from a gzip stream.
    pub head_bytes: usize,
}

impl Default for PreviewOptions {
    fn default() -> Self {
        // 15.6 MiB of a 1 GB W1 file parses in 25-100 ms on the project's 2-core machine
        // (lay-out and upload of its 150 k nodes: under 10 ms). Many small slices rather
        // than a few big ones: samples come in runs (W1: ~115 consecutive lines, 140 KB,
        // under one thread), so a 1 MiB slice is a handful of runs and 16 of them put the
        // top-level shares up to 6 points off; 256 slices of 60 KiB were within 2.5 points,
        // 1024 within 1.5 but read 4× the pages around the slices from a cold disk.
        // 32 MiB of Chrome JSON or of decompressed gzip takes about as long as the slices.
        Self {
            min_bytes: 64 << 20,
            min_gzip_bytes: 8 << 20,
            slices: 256,
            max_sampled_bytes: 16 << 20,
            head_bytes: 32 << 20,
        }
    }
}

/// What part of the input a preview shows.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PreviewExtent {
    /// Slices from across the input.
    Sampled {
        /// Number of slices.
        slices: usize,
        /// Bytes in the slices.
        sampled_bytes: u64,
        /// Bytes in the input (decompressed bytes for gzip).
        total_bytes: u64,
        /// True when the slices were taken from a gzip stream decompressed whole.
        decompressed: bool,
    },
    /// A V8 CPU profile's node list, weighed by the nodes' own hit counts: the whole
    /// profile aggregated, in samples rather than time, and without its time order.
    HitCounts {
        /// Bytes in the input.
        total_bytes: u64,
    },
    /// The input's first bytes.
    Head {
        /// Bytes read (decompressed bytes for gzip).
        head_bytes: u64,
        /// Bytes in the input (compressed bytes for gzip).
        total_bytes: u64,
        /// True when the input is gzip-compressed.
        gzipped: bool,
    },
}

impl PreviewExtent {
    /// One line for the status bar: what the preview was made from.
    pub fn describe(&self) -> String {
        match *self {
            PreviewExtent::Sampled {
                slices,
                sampled_bytes,
                total_bytes,
                decompressed,
            } => format!(
                "preview from {} of {} sampled across {} ({slices} slices)",
                mib(sampled_bytes),
                mib(total_bytes),
                if decompressed {
                    "the decompressed file"
                } else {
                    "the file"
                }
            ),
            PreviewExtent::HitCounts { total_bytes } => format!(
                "preview of {}: the node list's hit counts, before the samples",
                mib(total_bytes)
            ),
            PreviewExtent::Head {
                head_bytes,
                total_bytes,
                gzipped: false,
            } => format!("preview: first {} of {}", mib(head_bytes), mib(total_bytes)),
            PreviewExtent::Head {
                head_bytes,
                total_bytes,
                gzipped: true,
            } => format!(
                "preview: first {} decompressed of a {} gzip file",
                mib(head_bytes),
                mib(total_bytes)
            ),
        }
    }

    /// True when counts in the preview are those of a sample of the input (not a prefix
    /// shown as it is).
    pub fn is_sampled(&self) -> bool {
        matches!(self, PreviewExtent::Sampled { .. })
    }
}

/// `bytes` in MiB for people: `15.6 MiB`, `954 MiB`.
fn mib(bytes: u64) -> String {
    let m = bytes as f64 / f64::from(1u32 << 20);
    if m < 10.0 {
        format!("{m:.1} MiB")
    } else {
        format!("{m:.0} MiB")
    }
}

/// A preview: what it holds and what part of the input it was made from.
#[derive(Debug)]
pub struct Preview {
    /// The partial profile or trace. Its warnings are cleared: they describe the cut
    /// (a truncated last event), not the file; the full load reports the file's.
    pub imported: Imported,
    /// What was read.
    pub extent: PreviewExtent,
}

/// A preview of the file at `path`, or `None` when it is too small, of a format without
/// previews, or unreadable (the full load then says why).
pub fn preview_path(path: &Path, opts: &PreviewOptions) -> Option<Preview> {
    let file = std::fs::File::open(path).ok()?;
    let meta = file.metadata().ok()?;
    if !meta.is_file() || meta.len() < opts.min_bytes.min(opts.min_gzip_bytes) {
        return None;
    }
    // SAFETY: a read-only private mapping that scorch never writes; the risk of another
    // process truncating the file is the one documented on `InputBytes`. No populate:
    // only the sampled pages are read.
    let map = unsafe { memmap2::Mmap::map(&file) }.ok()?;
    // Ask for all the slices' pages at once (`MADV_WILLNEED` starts the reads without
    // waiting): from a cold disk, touching 256 slices one after the other waited for each
    // read in turn and took a second for a 1 GB file.
    let prefetch = |offset: usize, len: usize| {
        #[cfg(unix)]
        {
            let len = len.min(map.len().saturating_sub(offset));
            if len > 0 {
                let _ = map.advise_range(memmap2::Advice::WillNeed, offset, len);
            }
        }
        #[cfg(not(unix))]
        let _ = (offset, len);
    };
    preview_with(&path.display().to_string(), &map, opts, &prefetch)
}

/// A preview of `bytes` (`file` names it), or `None` (see [`preview_path`]).
pub fn preview_bytes(file: &str, bytes: &[u8], opts: &PreviewOptions) -> Option<Preview> {
    preview_with(file, bytes, opts, &|_, _| {})
}

/// [`preview_bytes`], calling `prefetch(offset, len)` for the byte ranges it is about to
/// read out of order (for slices; the head is read in order anyway).
fn preview_with(
    file: &str,
    bytes: &[u8],
    opts: &PreviewOptions,
    prefetch: &dyn Fn(usize, usize),
) -> Option<Preview> {
    if bytes.starts_with(&GZIP_MAGIC) {
        if (bytes.len() as u64) < opts.min_gzip_bytes {
            return None;
        }
        let head = gunzip_prefix(bytes, opts.head_bytes)?;
        let text = plain_text(&head)?;
        let extent = |n: usize| head_extent(n, text.len(), Some(bytes.len() as u64));
        return match detect_head(file, text)? {
            Kind::Folded => {
                let cut = last_boundary(text, chunks::next_line_start);
                let p = folded::parse(file, &text[..cut]).ok()?;
                Some(profile_preview(p, true, extent(cut)))
            }
            Kind::Perf => {
                let cut = last_boundary(text, perf::next_blank_line_end);
                let p = perf::parse(file, &text[..cut]).ok()?;
                Some(profile_preview(p, true, extent(cut)))
            }
            Kind::DTrace => {
                let cut = last_boundary(text, dtrace::next_stack_start);
                let p = dtrace::parse(file, &text[..cut]).ok()?;
                Some(profile_preview(p, true, extent(cut)))
            }
            // Its tables end the stream: not in a decompressed prefix.
            Kind::Pprof => None,
            Kind::Chrome => chrome_preview(file, text, text.len(), true, extent(text.len())),
            Kind::CpuProfile => {
                let p = super::cpuprofile::hit_count_profile(file, text)?;
                let extent = PreviewExtent::HitCounts {
                    total_bytes: bytes.len() as u64,
                };
                Some(profile_preview(p, true, extent))
            }
            Kind::Spans(format) => span_doc_preview(file, text, format, true, extent(text.len())),
            Kind::Firefox => firefox_preview(file, text, true, extent(text.len())),
            // Its frames and weights are usually written after the samples: the load
            // makes it from the decompressed bytes ([`decompressed`]).
            Kind::Speedscope => None,
            Kind::Flamebearer => flamebearer_preview(file, text, text.len(), extent),
        };
    }
    if (bytes.len() as u64) < opts.min_bytes {
        return None;
    }
    let text = plain_text(bytes)?;
    let bom = bytes.len() - text.len();
    let sampled = |boundary: fn(&[u8], usize) -> Option<usize>| {
        let budget = (text.len() / 64)
            .min(opts.max_sampled_bytes)
            .max(opts.slices);
        let slice_bytes = budget / opts.slices.max(1);
        // A slice may run past its aimed length to the next line or sample end.
        for at in slice_targets(text.len(), opts.slices, slice_bytes) {
            prefetch(bom + at, slice_bytes + (64 << 10));
        }
        let slices = sample_slices(text, opts.slices, slice_bytes, boundary);
        let mut buf = Vec::with_capacity(slices.iter().map(|r| r.len()).sum());
        for r in &slices {
            buf.extend_from_slice(&text[r.clone()]);
        }
        let extent = PreviewExtent::Sampled {
            slices: slices.len(),
            sampled_bytes: buf.len() as u64,
            total_bytes: text.len() as u64,
            decompressed: false,
        };
        (buf, extent)
    };
    match detect_head(file, text)? {
        Kind::Folded => {
            let (buf, extent) = sampled(chunks::next_line_start);
            let p = folded::parse_with(file, &buf, None).ok()?;
            Some(profile_preview(p, false, extent))
        }
        Kind::Perf => {
            let (buf, extent) = sampled(perf::next_blank_line_end);
            let p = perf::parse_with(file, &buf, None)
                .ok()?
                .aggregate(Default::default())
                .ok()?;
            Some(profile_preview(p, false, extent))
        }
        Kind::Pprof => pprof_preview(file, text, opts),
        Kind::DTrace => {
            let (buf, extent) = sampled(dtrace::next_stack_start);
            let p = dtrace::parse(file, &buf).ok()?;
            Some(profile_preview(p, false, extent))
        }
        Kind::Chrome => {
            let (head, extent) = plain_head(text.len(), opts);
            chrome_preview(file, text, head, false, extent)
        }
        Kind::Spans(format) => {
            let (head, extent) = plain_head(text.len(), opts);
            span_doc_preview(file, &text[..head], format, false, extent)
        }
        Kind::Firefox => firefox_whole_preview(file, text, opts, None),
        Kind::Speedscope => speedscope_preview(file, text, opts, None),
        Kind::Flamebearer => {
            // Half the head, as for gecko: its levels read at ~90 MB/s here.
            let head = text.len().min(opts.head_bytes / 2);
            prefetch(bom, head);
            let extent = |n: usize| head_extent(n, text.len(), None);
            flamebearer_preview(file, text, head, extent)
        }
        Kind::CpuProfile => {
            let head = text.len().min(opts.head_bytes);
            prefetch(bom, head);
            let p = super::cpuprofile::hit_count_profile(file, &text[..head])?;
            let extent = PreviewExtent::HitCounts {
                total_bytes: text.len() as u64,
            };
            Some(profile_preview(p, false, extent))
        }
    }
}

/// A plain pprof input: its tables (written after the samples, so the whole input is read)
/// and [`PreviewOptions::slices`] runs of samples from across it. A gzipped one gets none
/// here (its tables are at the end of the stream): see [`decompressed`].
fn pprof_preview(file: &str, bytes: &[u8], opts: &PreviewOptions) -> Option<Preview> {
    pprof_sampled(file, bytes, opts, false)
}

/// A preview of a gzipped pprof input, made from its decompressed bytes: the full load
/// decompresses the stream whole anyway (a protobuf parser needs all of it, and the
/// tables end it), so it hands them over before parsing them all (about a second for
/// 200 MB, where the whole takes several). `None` for anything but a pprof of at least
/// [`PreviewOptions::min_bytes`], or one whose tables cannot be read.
fn pprof_decompressed(file: &str, bytes: &[u8], opts: &PreviewOptions) -> Option<Preview> {
    if (bytes.len() as u64) < opts.min_bytes
        || detect::detect(bytes, Some(file)) != Ok(SourceFormat::Pprof)
    {
        return None;
    }
    pprof_sampled(file, bytes, opts, true)
}

fn pprof_sampled(
    file: &str,
    bytes: &[u8],
    opts: &PreviewOptions,
    decompressed: bool,
) -> Option<Preview> {
    // Half the budget of folded stacks: pprof's samples are dense (W1: a node per 7 bytes,
    // so 8 MiB of samples lay out as a million bars).
    let slices = (opts.slices / 2).min(opts.max_sampled_bytes >> 17).max(1);
    let (p, read) = super::pprof::preview(file, bytes, slices)?;
    let extent = PreviewExtent::Sampled {
        slices,
        sampled_bytes: read,
        total_bytes: bytes.len() as u64,
        decompressed,
    };
    Some(profile_preview(p, decompressed, extent))
}

/// A speedscope file's first samples or events with their frames (`text` the whole
/// document: the frames are usually at its end); `gzipped` the compressed size, when
/// `text` was decompressed from a gzip stream.
fn speedscope_preview(
    file: &str,
    text: &[u8],
    opts: &PreviewOptions,
    gzipped: Option<u64>,
) -> Option<Preview> {
    let h = super::speedscope::head::head_document(text, opts.head_bytes)?;
    let p = super::speedscope::parse(file, &h.doc)
        .ok()?
        .aggregate(Default::default())
        .ok()?;
    let extent = head_extent(h.sample_bytes, text.len(), gzipped);
    Some(profile_preview(p, gzipped.is_some(), extent))
}

/// A preview of a gzipped input made from its decompressed bytes, for the formats whose
/// preview needs the end of the file (`compressed` bytes of gzip gave `text`): a pprof's
/// tables end the stream, a speedscope file's frames are usually written after its
/// profiles, and Firefox writes a thread's tables after its samples, so a decompressed
/// prefix shows nothing of them. The full load decompresses the stream whole before
/// parsing anyway; it hands the preview over in between. `None` for other formats (their
/// prefix gives a preview: [`preview_path`]), or under the sizes for previews.
pub fn decompressed(
    file: &str,
    text: &[u8],
    compressed: u64,
    opts: &PreviewOptions,
) -> Option<Preview> {
    if compressed < opts.min_gzip_bytes || (text.len() as u64) < opts.min_bytes {
        return None;
    }
    let text = plain_text(text)?;
    match detect_head(file, text)? {
        Kind::Pprof => pprof_decompressed(file, text, opts),
        Kind::Speedscope => speedscope_preview(file, text, opts, Some(compressed)),
        Kind::Firefox => firefox_whole_preview(file, text, opts, Some(compressed)),
        _ => None,
    }
}

/// A flamebearer file's names and first levels, as many whole ones as `head` bytes hold.
fn flamebearer_preview(
    file: &str,
    text: &[u8],
    head: usize,
    extent: impl Fn(usize) -> PreviewExtent,
) -> Option<Preview> {
    let (doc, read) = super::flamebearer::head_document(text, head)?;
    let p = super::flamebearer::parse(file, &doc).ok()?;
    let extent = extent(read);
    let gzipped = matches!(extent, PreviewExtent::Head { gzipped: true, .. });
    Some(profile_preview(p, gzipped, extent))
}

/// The extent of a preview of the first `head_bytes` of a text of `len` bytes; `gzipped`:
/// the compressed size, when the text was decompressed from a gzip stream (the extent
/// then gives that size).
fn head_extent(head_bytes: usize, len: usize, gzipped: Option<u64>) -> PreviewExtent {
    PreviewExtent::Head {
        head_bytes: head_bytes as u64,
        total_bytes: gzipped.unwrap_or(len as u64),
        gzipped: gzipped.is_some(),
    }
}

/// How much of a plain input of `len` bytes a head preview reads, and its extent.
fn plain_head(len: usize, opts: &PreviewOptions) -> (usize, PreviewExtent) {
    let head = len.min(opts.head_bytes);
    let extent = head_extent(head, len, None);
    (head, extent)
}

/// The formats that have previews.
enum Kind {
    Folded,
    Perf,
    /// DTrace stack aggregations (sliced after count lines, where a stack ends).
    DTrace,
    /// A pprof profile (plain: its tables and runs of samples from across it).
    Pprof,
    Chrome,
    CpuProfile,
    /// Jaeger or OTLP JSON (one document, read as far as the head goes).
    Spans(SourceFormat),
    /// A Firefox profile (one document: the threads whose tables the head holds).
    Firefox,
    /// A speedscope file (its first profile's first samples or events, with the frames
    /// and weights found where they are written).
    Speedscope,
    /// A flamebearer file (its names and first levels: the top of the flame graph).
    Flamebearer,
}

/// The format of `text` judged from its first 4 MiB (as much as detection reads of text
/// formats, and enough to find a Chrome trace's `traceEvents` key), if it has previews.
fn detect_head(file: &str, text: &[u8]) -> Option<Kind> {
    let head = &text[..text.len().min(4 << 20)];
    match detect::detect(head, Some(file)) {
        Ok(SourceFormat::Folded | SourceFormat::FoldedDiff) => Some(Kind::Folded),
        Ok(SourceFormat::PerfScript) => Some(Kind::Perf),
        Ok(SourceFormat::DTrace) => Some(Kind::DTrace),
        Ok(SourceFormat::Pprof) => Some(Kind::Pprof),
        Ok(SourceFormat::ChromeTrace) => Some(Kind::Chrome),
        Ok(SourceFormat::CpuProfile) => Some(Kind::CpuProfile),
        Ok(f @ (SourceFormat::Jaeger | SourceFormat::Otlp | SourceFormat::TiDBTrace)) => {
            Some(Kind::Spans(f))
        }
        Ok(SourceFormat::FirefoxProfile) => Some(Kind::Firefox),
        Ok(SourceFormat::Speedscope) => Some(Kind::Speedscope),
        Ok(SourceFormat::FlamebearerSingle | SourceFormat::FlamebearerDiff) => {
            Some(Kind::Flamebearer)
        }
        // A V8 CPU profile's samples come after its node list, often past the head.
        _ if head.trim_ascii_start().starts_with(b"{\"nodes\"")
            && detect::find(head, b"\"callFrame\"").is_some() =>
        {
            Some(Kind::CpuProfile)
        }
        _ => None,
    }
}

/// `bytes` as UTF-8 text without a BOM, or `None` for UTF-16 (converted whole by the full
/// load, not worth previewing).
fn plain_text(bytes: &[u8]) -> Option<&[u8]> {
    if bytes.starts_with(&[0xFF, 0xFE]) || bytes.starts_with(&[0xFE, 0xFF]) {
        return None;
    }
    if looks_utf16(bytes).is_some() {
        return None;
    }
    Some(bytes.strip_prefix(&[0xEF, 0xBB, 0xBF][..]).unwrap_or(bytes))
}

/// A profile preview, its warnings cleared; `gzipped` as the input was.
fn profile_preview(mut p: crate::model::Profile, gzipped: bool, extent: PreviewExtent) -> Preview {
    p.meta.warnings = Default::default();
    p.meta.gzipped = gzipped;
    Preview {
        imported: Imported::Profile(Box::new(p)),
        extent,
    }
}

/// The first `head` bytes of a Chrome trace as a truncated trace, cut back to the end of a
/// line in its last MiB (or eighth) when there is one (one event a line, as most writers do), else
/// anywhere but inside a UTF-8 character (minified JSON: the importer drops the cut event).
fn chrome_preview(
    file: &str,
    text: &[u8],
    head: usize,
    gzipped: bool,
    extent: PreviewExtent,
) -> Option<Preview> {
    let mut cut = head.min(text.len());
    if cut < text.len() {
        let from = cut - (cut / 8).min(1 << 20);
        match memchr::memrchr(b'\n', &text[from..cut]) {
            Some(i) => cut = from + i + 1,
            None => {
                while cut > 0 && text[cut] & 0xC0 == 0x80 {
                    cut -= 1;
                }
            }
        }
    }
    let mut spans = chrome::parse(file, &text[..cut]).ok()?;
    if spans.is_empty() {
        return None;
    }
    spans.warnings = Default::default();
    let extent = match extent {
        PreviewExtent::Head {
            total_bytes,
            gzipped,
            ..
        } => PreviewExtent::Head {
            head_bytes: cut as u64,
            total_bytes,
            gzipped,
        },
        other => other,
    };
    Some(Preview {
        imported: Imported::Trace(Box::new(Trace {
            spans,
            source: file.to_string(),
            format: SourceFormat::ChromeTrace,
            gzipped,
            samples: None,
        })),
        extent,
    })
}

/// A Firefox profile's first threads, from `text`, the whole document (`gzipped`: the
/// compressed size, when it was decompressed from a gzip stream).
fn firefox_whole_preview(
    file: &str,
    text: &[u8],
    opts: &PreviewOptions,
    gzipped: Option<u64>,
) -> Option<Preview> {
    let head = text.len().min(opts.head_bytes);
    let extent = |head_bytes: usize| head_extent(head_bytes, text.len(), gzipped);
    // Firefox's own profiles write a thread's tables after its samples: the thread the
    // head stops in, given its tables found after the cut. Half the head: gecko's rows
    // read at ~80 MB/s here, so half keeps the preview near half a second, a million
    // samples of a Firefox thread.
    if let Some(h) = super::gecko_head::head_document(text, head / 2)
        && let Some(p) = firefox_preview(file, &h.doc, gzipped.is_some(), extent(h.head_bytes))
    {
        return Some(p);
    }
    // A gzipped file's prefix was tried before it was decompressed whole.
    if gzipped.is_some() {
        return None;
    }
    firefox_preview(file, &text[..head], false, extent(head))
}

/// The flame graph of the samples of the threads `head` (a Firefox profile's start) can
/// draw.
fn firefox_preview(
    file: &str,
    head: &[u8],
    gzipped: bool,
    extent: PreviewExtent,
) -> Option<Preview> {
    let (samples, _markers) = super::firefox::parse_head(file, head)?;
    let p = samples.aggregate(Default::default()).ok()?;
    Some(profile_preview(p, gzipped, extent))
}

/// The traces (Jaeger) or resources (OTLP) complete in `head`, the start of a document
/// of `format`, or the spans (TiDB), as a trace.
fn span_doc_preview(
    file: &str,
    head: &[u8],
    format: SourceFormat,
    gzipped: bool,
    extent: PreviewExtent,
) -> Option<Preview> {
    let mut spans = match format {
        SourceFormat::Jaeger => super::jaeger::parse_head(file, head)?,
        SourceFormat::TiDBTrace => super::tidb::parse_head(head)?,
        _ => super::otlp::parse_head(file, head)?,
    };
    if spans.is_empty() {
        return None;
    }
    spans.warnings = Default::default();
    Some(Preview {
        imported: Imported::Trace(Box::new(Trace {
            spans,
            source: file.to_string(),
            format,
            gzipped,
            samples: None,
        })),
        extent,
    })
}

/// The first `limit` decompressed bytes of a gzip stream, or `None` when the stream ends
/// before them (a small input: the full load is quick) or is damaged before any data.
fn gunzip_prefix(bytes: &[u8], limit: usize) -> Option<Vec<u8>> {
    let mut out = vec![0u8; limit];
    let mut dec = flate2::read::MultiGzDecoder::new(bytes);
    let mut filled = 0;
    while filled < limit {
        match dec.read(&mut out[filled..]) {
            Ok(0) => return None,
            Ok(n) => filled += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) if filled > 0 => break,
            Err(_) => return None,
        }
    }
    out.truncate(filled);
    Some(out)
}

/// The end of the last whole line or sample of `text` (0 when there is none), where
/// `boundary(text, at)` finds the first boundary at or after `at` (a position just past
/// a line end, or past a blank line).
fn last_boundary(text: &[u8], boundary: fn(&[u8], usize) -> Option<usize>) -> usize {
    // Look in the last 64 KiB first, then in four times as much, and so on.
    let mut back = 64usize << 10;
    loop {
        let from = text.len().saturating_sub(back);
        let mut last = None;
        let mut at = from;
        while let Some(b) = boundary(text, at).filter(|&b| b > at && b <= text.len()) {
            last = Some(b);
            at = b;
        }
        match last {
            Some(b) => return b,
            None if from == 0 => return 0,
            None => back = back.saturating_mul(4),
        }
    }
}

/// Where [`sample_slices`] aims its `count` slices of `slice_bytes` in `len` bytes: at
/// i/(count-1) of the way to the last possible start, so that the first slice starts the
/// text and the last one ends it.
fn slice_targets(len: usize, count: usize, slice_bytes: usize) -> impl Iterator<Item = usize> {
    let span = len.saturating_sub(slice_bytes.max(1)) as u128;
    (0..count).map(move |i| {
        if count <= 1 {
            0
        } else {
            (span * i as u128 / (count - 1) as u128) as usize
        }
    })
}

/// `count` slices of `text`, each about `slice_bytes` long, evenly spaced from the start
/// of `text` to its end, in order and disjoint. A slice starts at 0 or at a boundary and
/// ends at a boundary or at the end of `text`, where `boundary(text, at)` returns the
/// first boundary at or after `at` (as for [`chunks::next_line_start`]): a slice never
/// splits a line (or sample). When the slices would cover `text`, one slice is all of it.
/// Deterministic: the same text gives the same slices.
pub fn sample_slices(
    text: &[u8],
    count: usize,
    slice_bytes: usize,
    boundary: impl Fn(&[u8], usize) -> Option<usize>,
) -> Vec<Range<usize>> {
    let len = text.len();
    if count == 0 || len == 0 {
        return Vec::new();
    }
    if count.saturating_mul(slice_bytes) >= len {
        return std::iter::once(0..len).collect();
    }
    let slice_bytes = slice_bytes.max(1);
    let mut out: Vec<Range<usize>> = Vec::with_capacity(count);
    let mut prev_end = 0usize;
    for target in slice_targets(len, count, slice_bytes) {
        let start = if target == 0 {
            0
        } else {
            match boundary(text, target) {
                Some(s) => s,
                None => break,
            }
        };
        let start = start.max(prev_end);
        if start >= len {
            break;
        }
        let end = match start.checked_add(slice_bytes) {
            Some(e) if e < len => boundary(text, e).map_or(len, |b| b.min(len)),
            _ => len,
        };
        out.push(start..end);
        prev_end = end;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Folded text of `lines` lines of varying length, each with count 1.
    fn folded_text(lines: usize) -> String {
        let mut s = String::new();
        for i in 0..lines {
            s.push_str(&format!("main;f{};g{} 1\n", i % 7, "x".repeat(i % 13)));
        }
        s
    }

    fn opts(min: u64) -> PreviewOptions {
        PreviewOptions {
            min_bytes: min,
            min_gzip_bytes: min,
            slices: 4,
            max_sampled_bytes: 1 << 20,
            head_bytes: 64 << 10,
        }
    }

    #[test]
    fn slices_are_whole_lines_even_ordered_and_deterministic() {
        let text = folded_text(5000);
        let t = text.as_bytes();
        let s = sample_slices(t, 8, 500, chunks::next_line_start);
        assert_eq!(s, sample_slices(t, 8, 500, chunks::next_line_start));
        assert_eq!(s.len(), 8);
        assert_eq!(s[0].start, 0, "the first slice starts the text");
        assert_eq!(s[7].end, t.len(), "the last slice ends the text");
        for r in &s {
            assert!(
                r.start == 0 || t[r.start - 1] == b'\n',
                "{r:?} starts mid-line"
            );
            assert!(
                r.end == t.len() || t[r.end - 1] == b'\n',
                "{r:?} ends mid-line"
            );
            // At least the asked length, at most one line (< 40 bytes here) more.
            assert!(r.len() >= 500 || r.end == t.len(), "{r:?}");
            assert!(r.len() < 500 + 40, "{r:?}");
        }
        for w in s.windows(2) {
            assert!(w[0].end <= w[1].start, "{w:?} overlap");
        }
        // Even spacing: each start within a line of where an even split puts it.
        let step = (t.len() - 500) as f64 / 7.0;
        for (i, r) in s.iter().enumerate() {
            let aim = step * i as f64;
            assert!(
                (r.start as f64 - aim).abs() < 40.0,
                "slice {i} at {}",
                r.start
            );
        }
    }

    #[test]
    fn slices_of_small_or_odd_inputs() {
        let nl = chunks::next_line_start;
        assert!(sample_slices(b"", 4, 10, nl).is_empty());
        assert!(sample_slices(b"a 1\n", 0, 10, nl).is_empty());
        // Slices that would cover the text: the whole text, once.
        assert_eq!(
            sample_slices(b"a 1\nb 2\n", 4, 10, nl),
            std::iter::once(0..8).collect::<Vec<_>>()
        );
        // No line ends at all: one slice from the start to the end.
        let one_line = vec![b'a'; 1000];
        assert_eq!(
            sample_slices(&one_line, 4, 10, nl),
            std::iter::once(0..1000).collect::<Vec<_>>()
        );
        // Lines longer than the slices: slices never overlap nor repeat a line.
        let long = format!("{}\n", "x".repeat(300)).repeat(10);
        let s = sample_slices(long.as_bytes(), 16, 5, nl);
        for w in s.windows(2) {
            assert!(w[0].end <= w[1].start && !w[1].is_empty(), "{s:?}");
        }
    }

    #[test]
    fn perf_slices_cut_at_sample_boundaries() {
        let mut text = String::from("# header\n\n");
        for i in 0..400 {
            text.push_str(&format!(
                "prog {i} [000] 1.0: 1 cycles:\n\tffffff81 f{} (/bin/x)\n\tffffff82 main (/bin/x)\n\n",
                i % 5
            ));
        }
        let t = text.as_bytes();
        let s = sample_slices(t, 6, 300, perf::next_blank_line_end);
        assert_eq!(s.len(), 6);
        for r in &s {
            let part = &text[r.clone()];
            assert!(
                r.start == 0 || part.starts_with("prog "),
                "slice {r:?} starts inside a sample: {:?}",
                &part[..20]
            );
            assert!(part.ends_with("\n\n"), "slice {r:?} ends inside a sample");
        }
        let p = preview_bytes("t.perf", t, &{
            let mut o = opts(1);
            o.slices = 6;
            o
        })
        .expect("a preview");
        let Imported::Profile(p) = p.imported else {
            panic!("not a profile")
        };
        assert!(p.tree.grand_total() > 0);
        assert_eq!(p.meta.warnings.invalid_lines, 0, "{:?}", p.meta.warnings);
    }

    #[test]
    fn preview_total_is_the_sampled_lines_count() {
        let text = folded_text(20_000);
        let o = opts(1000);
        let p = preview_bytes("t.folded", text.as_bytes(), &o).expect("a preview");
        let PreviewExtent::Sampled {
            slices,
            sampled_bytes,
            total_bytes,
            ..
        } = p.extent
        else {
            panic!("not sampled: {:?}", p.extent)
        };
        assert_eq!(slices, 4);
        assert_eq!(total_bytes, text.len() as u64);
        // The budget: a sixty-fourth of the input, give or take a line per slice.
        let budget = text.len() as u64 / 64;
        // (The last slice ends the text, so it may be a line short.)
        assert!(sampled_bytes + 4 + 40 >= budget && sampled_bytes < budget + 4 * 40);
        // Recompute the slices: every line in them has count 1, so the tree's total is
        // the number of sampled lines.
        let s = sample_slices(
            text.as_bytes(),
            4,
            (budget / 4) as usize,
            chunks::next_line_start,
        );
        let lines: usize = s
            .iter()
            .map(|r| memchr::memchr_iter(b'\n', &text.as_bytes()[r.clone()]).count())
            .sum();
        assert_eq!(s.iter().map(|r| r.len() as u64).sum::<u64>(), sampled_bytes);
        let Imported::Profile(p) = p.imported else {
            panic!("not a profile")
        };
        assert_eq!(p.tree.grand_total(), lines as u64);
        assert!(p.meta.warnings.is_empty());
    }

    #[test]
    fn proportions_approximate_the_whole_file() {
        // The first half of the file is all `a`, the second all `b`: a head preview would
        // show only `a`, slices across the file show both about equally.
        let mut text = "main;a 1\n".repeat(20_000);
        text.push_str(&"main;b 1\n".repeat(20_000));
        let p = preview_bytes("t.folded", text.as_bytes(), &opts(1000)).expect("a preview");
        let Imported::Profile(p) = p.imported else {
            panic!("not a profile")
        };
        let main = p.tree.children(0)[0];
        let share = |name: &str| {
            let n = p
                .tree
                .children(main)
                .iter()
                .copied()
                .find(|&c| p.names.get(p.tree.name(c)) == name)
                .expect("present");
            p.tree.total(n) as f64 / p.tree.grand_total() as f64
        };
        assert!((share("a") - 0.5).abs() < 0.05, "{}", share("a"));
        assert!((share("b") - 0.5).abs() < 0.05, "{}", share("b"));
    }

    #[test]
    fn dtrace_slices_are_whole_stacks_from_across_the_file() {
        // A header, then stacks of `main` over `a` in the first half and over `b` in the
        // second, each with its count; stack() and ustack() keys have a blank line inside.
        let mut text = String::from(
            "CPU     ID                    FUNCTION:NAME\n  0  64091       :tick-60s\n\n",
        );
        for i in 0..40_000 {
            let leaf = if i < 20_000 { "a" } else { "b" };
            text.push_str(&format!("  k`{leaf}+0x1\n\n  u`main+0x2\n  1\n\n"));
        }
        let p = preview_bytes("t.out", text.as_bytes(), &opts(1000)).expect("a preview");
        assert!(matches!(p.extent, PreviewExtent::Sampled { slices: 4, .. }));
        let Imported::Profile(p) = p.imported else {
            panic!("not a profile")
        };
        // Whole stacks only: every sample is main;a or main;b, nothing warned about.
        assert!(p.meta.warnings.is_empty(), "{:?}", p.meta.warnings);
        let main = p.tree.children(0);
        assert_eq!(main.len(), 1);
        let total = p.tree.grand_total() as f64;
        for &c in p.tree.children(main[0]) {
            let share = p.tree.total(c) as f64 / total;
            assert!((share - 0.5).abs() < 0.1, "{share}");
        }
        assert_eq!(p.tree.children(main[0]).len(), 2);
        assert!(total < 40_000.0 / 4.0);
    }

    #[test]
    fn small_inputs_and_other_formats_get_none() {
        let text = folded_text(2000);
        assert!(preview_bytes("t.folded", text.as_bytes(), &opts(1 << 30)).is_none());
        assert!(preview_bytes("t.folded", text.as_bytes(), &opts(1)).is_some());
        // A TiDB document without spans.
        let tidb = br#"{"span_sets":[{"node_type":"TiDB","spans":[]}]}"#;
        assert!(preview_bytes("t.json", tidb, &opts(1)).is_none());
        let utf16: Vec<u8> = "a;b 1\n"
            .repeat(100)
            .encode_utf16()
            .flat_map(|u| u.to_le_bytes())
            .collect();
        assert!(preview_bytes("t.folded", &utf16, &opts(1)).is_none());
        // Damage never panics: no preview, or one with what parsed.
        assert!(preview_bytes("t.folded", b"\n\n\n\n", &opts(1)).is_none());
        assert!(preview_bytes("t.folded", &[0x1f, 0x8b, 1, 2, 3], &opts(1)).is_none());
    }

    /// A big sampled speedscope file, its frames written after the profiles as speedscope
    /// exports them: the preview is its first samples (the head's worth), weighed, named,
    /// marked as the head; gzipped, none.
    #[test]
    fn speedscope_previews_its_first_samples() {
        let mut samples = Vec::new();
        for i in 0..20_000u32 {
            // The first half all under f0, the second all under f1.
            let top = u32::from(i >= 10_000);
            samples.push(format!("[{top},{},{}]", 2 + i % 5, 7 + i % 3));
        }
        let weights = vec!["2"; 20_000].join(",");
        let frames: Vec<String> = (0..10).map(|i| format!("{{\"name\":\"f{i}\"}}")).collect();
        let text = format!(
            "{{\"profiles\":[{{\"type\":\"sampled\",\"name\":\"m\",\"unit\":\"none\",\
             \"startValue\":0,\"endValue\":40000,\"samples\":[{}],\"weights\":[{weights}]}}],\
             \"shared\":{{\"frames\":[{}]}}}}",
            samples.join(","),
            frames.join(",")
        );
        let p = preview_bytes("t.speedscope.json", text.as_bytes(), &opts(1)).expect("a preview");
        let PreviewExtent::Head {
            head_bytes,
            total_bytes,
            gzipped: false,
        } = p.extent
        else {
            panic!("{:?}", p.extent)
        };
        assert_eq!(total_bytes, text.len() as u64);
        assert!(
            (64 << 10..(64 << 10) + 16).contains(&head_bytes),
            "{head_bytes}"
        );
        let Imported::Profile(part) = p.imported else {
            panic!("a profile")
        };
        // 64 KiB of 8-byte samples (with their commas), each weighing 2, all in the first
        // half: under f0.
        let n = part.tree.grand_total() / 2;
        assert_eq!(n, 8193, "samples");
        let root_children: Vec<&str> = part
            .tree
            .children(0)
            .iter()
            .map(|&c| part.names.get(part.tree.name(c)))
            .collect();
        assert_eq!(root_children, ["f0"]);
        assert!(preview_bytes("t.speedscope.json", text.as_bytes(), &opts(1 << 30)).is_none());
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        std::io::Write::write_all(&mut gz, text.as_bytes()).unwrap();
        assert!(preview_bytes("t.json.gz", &gz.finish().unwrap(), &opts(1)).is_none());
    }

    /// A big TiDB document previews as the spans whole in its head, in their span sets;
    /// plain and gzipped.
    #[test]
    fn tidb_heads_are_their_whole_spans() {
        let span = |i: usize| {
            format!(
                r#"{{"span_id":{i},"parent_id":{},"begin_unix_time_ns":{},"duration_ns":50,"event":"op{}"}}"#,
                i / 3,
                1_607_658_272_409_800_000u64 + i as u64 * 10,
                i % 7
            )
        };
        let set = |name: &str, ids: std::ops::Range<usize>| {
            let spans: Vec<String> = ids.map(span).collect();
            format!(
                r#"{{"node_type":"{name}","spans":[{}]}}"#,
                spans.join(",\n")
            )
        };
        let doc = format!(
            r#"{{"trace_id":1,"span_sets":[{},{}]}}"#,
            set("TiDB", 1..4000),
            set("TiKV", 4000..8000)
        );
        assert!(doc.len() > 256 << 10, "{} bytes", doc.len());
        let whole = super::super::tidb::parse("t.json", doc.as_bytes()).unwrap();
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        std::io::Write::write_all(&mut gz, doc.as_bytes()).unwrap();
        let gz = gz.finish().unwrap();
        for (bytes, gzipped) in [(doc.as_bytes(), false), (&gz[..], true)] {
            let p = preview_bytes("t.json", bytes, &opts(1)).expect("a preview");
            assert!(
                matches!(p.extent, PreviewExtent::Head { head_bytes, .. } if head_bytes == 64 << 10),
                "{:?}",
                p.extent
            );
            let Imported::Trace(t) = p.imported else {
                panic!("not a trace")
            };
            assert_eq!((t.format, t.gzipped), (SourceFormat::TiDBTrace, gzipped));
            // The whole spans of the first 64 KiB: the first set's start, as in the file.
            let n = t.spans.len();
            let per = doc.len() / 8000;
            assert!(n >= (64 << 10) / per - 2 && n < 4000, "{n} spans");
            assert_eq!(t.spans.tracks[0].name, "TiDB");
            for i in 0..n {
                assert_eq!(
                    t.spans.names.get(t.spans.name[i]),
                    whole.names.get(whole.name[i])
                );
            }
        }
    }

    /// A big Jaeger or OTLP document previews as the traces (resources) complete in its
    /// head, marked as the head; plain and gzipped.
    #[test]
    fn jaeger_and_otlp_heads_are_their_whole_traces() {
        let span = |t: usize, i: usize| {
            format!(
                r#"{{"traceID":"{t:x}","spanID":"{i:x}","operationName":"op","startTime":{},"duration":3,"references":[]}}"#,
                1000 + i
            )
        };
        let traces: Vec<String> = (1..400)
            .map(|t| {
                let spans: Vec<String> = (1..=20).map(|i| span(t, i)).collect();
                format!(
                    r#"{{"traceID":"{t:x}","spans":[{}],"processes":{{}}}}"#,
                    spans.join(",")
                )
            })
            .collect();
        let jaeger = format!(r#"{{"data":[{}]}}"#, traces.join(","));
        let otlp_span = |i: usize| {
            format!(
                r#"{{"traceId":"ab","spanId":"{i:x}","name":"op","startTimeUnixNano":"{}","endTimeUnixNano":"{}"}}"#,
                1000 + i,
                2000 + i
            )
        };
        let resources: Vec<String> = (0..400)
            .map(|r| {
                let spans: Vec<String> = (0..20).map(|i| otlp_span(r * 20 + i)).collect();
                format!(
                    r#"{{"resource":{{}},"scopeSpans":[{{"spans":[{}]}}]}}"#,
                    spans.join(",")
                )
            })
            .collect();
        let otlp = format!(r#"{{"resourceSpans":[{}]}}"#, resources.join(","));
        for (name, doc, format) in [
            ("t.json", &jaeger, SourceFormat::Jaeger),
            ("o.json", &otlp, SourceFormat::Otlp),
        ] {
            assert!(doc.len() > 200 << 10, "{} bytes", doc.len());
            let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
            std::io::Write::write_all(&mut gz, doc.as_bytes()).unwrap();
            let gz = gz.finish().unwrap();
            for (bytes, gzipped) in [(doc.as_bytes(), false), (&gz[..], true)] {
                let p = preview_bytes(name, bytes, &opts(1)).expect("a preview");
                let PreviewExtent::Head { head_bytes, .. } = p.extent else {
                    panic!("{name}: not a head: {:?}", p.extent)
                };
                assert_eq!(head_bytes, 64 << 10, "{name}");
                let Imported::Trace(t) = p.imported else {
                    panic!("{name}: not a trace")
                };
                assert_eq!(t.format, format);
                assert_eq!(t.gzipped, gzipped);
                // Whole traces of 20 spans only, as many as the head holds.
                let n = t.spans.len();
                assert!(n > 0 && n.is_multiple_of(20), "{name}: {n} spans");
                let per = doc.len() / 400;
                assert!(
                    n / 20 >= (64 << 10) / per - 1,
                    "{name}: {n} spans in the head"
                );
            }
        }
    }

    /// A Firefox profile's head draws the threads whose tables it holds: a thread's
    /// samples whose times it cut off are counted all the same, a thread it cuts inside
    /// its tables is left out, and a gecko profile (samples before tables) gets the tables
    /// found after its head.
    #[test]
    fn firefox_heads_draw_the_threads_whose_tables_they_hold() {
        let thread = |k: usize| {
            let stack: Vec<String> = (0..10_000).map(|i| (i % 3).to_string()).collect();
            let time: Vec<String> = (0..10_000).map(|i| format!("{}.5", 1000 + i)).collect();
            format!(
                r#"{{"name":"T{k}","stringArray":["a","b","c"],"funcTable":{{"name":[0,1,2]}},
                "frameTable":{{"func":[0,1,2]}},"stackTable":{{"prefix":[null,0,1],"frame":[0,1,2]}},
                "samples":{{"stack":[{}],"time":[{}]}}}}"#,
                stack.join(","),
                time.join(",")
            )
        };
        let threads: Vec<String> = (0..3).map(thread).collect();
        let doc = format!(
            r#"{{"meta":{{"preprocessedProfileVersion":48,"interval":1,"startTime":0}},"threads":[{}]}}"#,
            threads.join(",")
        );
        let total = |head: usize| {
            let mut o = opts(1);
            o.head_bytes = head;
            let p = preview_bytes("f.json", doc.as_bytes(), &o)?;
            let Imported::Profile(p) = p.imported else {
                panic!("a profile")
            };
            Some(p.tree.grand_total())
        };
        // Inside the first thread's times: all of its samples.
        let in_times = doc.find(r#""time""#).unwrap() + 5_000;
        assert_eq!(total(in_times), Some(10_000));
        // Inside the second thread's tables: the first thread alone.
        let second = doc.find(r#""name":"T1""#).unwrap();
        let in_tables = second + doc[second..].find("stackTable").unwrap();
        assert_eq!(total(in_tables), Some(10_000));
        // Inside the third thread's samples: the first two whole, some of the third.
        let third = doc.find(r#""name":"T2""#).unwrap();
        let in_third = third + doc[third..].find(r#""stack""#).unwrap() + 1_000;
        let n = total(in_third).unwrap();
        assert!(n > 20_000 && n < 30_000, "{n}");
        // A gecko profile: its samples come first, its tables after them.
        let gecko = format!(
            r#"{{"meta":{{"version":20,"interval":1,"startTime":0}},"threads":[{{"name":"T",
            "samples":{{"schema":{{"stack":0,"time":1}},"data":[{}]}},
            "stackTable":{{"schema":{{"prefix":0,"frame":1}},"data":[[null,0]]}},
            "frameTable":{{"schema":{{"location":0}},"data":[[0]]}},"stringTable":["a"]}}]}}"#,
            vec!["[0,1]"; 20_000].join(",")
        );
        // Its head (half the budget) is its first samples, given the tables found after
        // them.
        let mut o = opts(1);
        o.head_bytes = gecko.len() * 3 / 4;
        let p = preview_bytes("g.json", gecko.as_bytes(), &o).expect("a gecko preview");
        let PreviewExtent::Head { head_bytes, .. } = p.extent else {
            panic!("a head")
        };
        let half = o.head_bytes as u64 / 2;
        assert!(head_bytes <= half && head_bytes > half - 8, "{head_bytes}");
        let Imported::Profile(p) = p.imported else {
            panic!("a profile")
        };
        let n = p.tree.grand_total();
        assert!(n > 6_500 && n < 8_500, "{n} of 20000 samples");
        o.head_bytes = gecko.len();
        assert!(preview_bytes("g.json", gecko.as_bytes(), &o).is_some());
    }

    /// A flamebearer file's preview is its names and the levels its head holds whole (half
    /// the head budget): the top of the flame graph, with the whole profile's totals.
    #[test]
    fn flamebearer_head_is_the_top_of_the_flame_graph() {
        // Root, 2 000 children, 2 000 grandchildren (one each).
        let kids: Vec<String> = (0..2000)
            .map(|i| format!("{},5,0,{}", u64::from(i == 0), 1 + i % 3))
            .collect();
        let grandkids: Vec<String> = (0..2000)
            .map(|i| format!("{},5,5,4", u64::from(i == 0)))
            .collect();
        let doc = format!(
            r#"{{"version":1,"flamebearer":{{"names":["total","a","b","c","d"],"levels":[[0,12001,2001,0],[{}],[{}]],"numTicks":12001,"maxSelf":2001}},"metadata":{{"format":"single","units":"bytes","spyName":"gospy"}}}}"#,
            kids.join(","),
            grandkids.join(",")
        );
        let whole = super::super::flamebearer::parse("f.json", doc.as_bytes()).unwrap();
        assert_eq!(whole.tree.max_depth(), 2);
        let preview = |head: usize| {
            let mut o = opts(1);
            o.head_bytes = head;
            preview_bytes("f.json", doc.as_bytes(), &o)
        };
        // Half the head reaches into the grandchildren: root and children, exact.
        let third = doc.rfind("[1,5,5,4").unwrap();
        let p = preview(2 * (third + 100)).expect("a flamebearer preview");
        let PreviewExtent::Head {
            head_bytes,
            total_bytes,
            ..
        } = p.extent
        else {
            panic!("a head")
        };
        assert!(head_bytes as usize <= third && total_bytes == doc.len() as u64);
        let Imported::Profile(p) = p.imported else {
            panic!("a profile")
        };
        assert_eq!(p.tree.max_depth(), 1);
        assert_eq!(p.tree.grand_total(), 12_001);
        assert_eq!(p.tree.children(0).len(), 2000);
        assert_eq!(p.values.unit, whole.values.unit);
        // Half the head within the children: level 0 alone, the root.
        let p = preview(2 * (third - 100)).expect("a flamebearer preview");
        let Imported::Profile(p) = p.imported else {
            panic!("a profile")
        };
        assert_eq!((p.tree.max_depth(), p.tree.grand_total()), (0, 12_001));
    }

    #[test]
    fn chrome_head_is_a_truncated_trace() {
        let mut text = String::from("{\"traceEvents\":[\n");
        text.push_str(&crate::testing::chrome_x_events(5000, "e", 9, ",\n"));
        text.push_str("{}]}\n");
        let mut o = opts(1000);
        o.head_bytes = 10_000;
        let p = preview_bytes("t.json", text.as_bytes(), &o).expect("a preview");
        let PreviewExtent::Head {
            head_bytes,
            total_bytes,
            gzipped: false,
        } = p.extent
        else {
            panic!("{:?}", p.extent)
        };
        assert!(head_bytes <= 10_000 && head_bytes > 9_000, "{head_bytes}");
        assert_eq!(total_bytes, text.len() as u64);
        let Imported::Trace(t) = p.imported else {
            panic!("not a trace")
        };
        // Every whole line after the first holds one event.
        let lines = memchr::memchr_iter(b'\n', &text.as_bytes()[..head_bytes as usize]).count();
        assert_eq!(t.spans.len(), lines - 1);
        assert!(t.spans.warnings.is_empty());
    }

    #[test]
    fn minified_chrome_json_is_cut_anywhere() {
        // One line after the first: no line end near the cut.
        let mut text = String::from("[\n");
        text.push_str(&crate::testing::chrome_x_events(3000, "é", 9, ","));
        text.push_str("{}]");
        let mut o = opts(1000);
        o.head_bytes = 20_001;
        let p = preview_bytes("t.json", text.as_bytes(), &o).expect("a preview");
        let Imported::Trace(t) = p.imported else {
            panic!("not a trace")
        };
        assert!(t.spans.len() > 200, "{}", t.spans.len());
    }

    #[test]
    fn gzip_preview_is_a_decompressed_prefix() {
        use std::io::Write;
        let text = folded_text(50_000);
        let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        enc.write_all(text.as_bytes()).unwrap();
        let gz = enc.finish().unwrap();
        let p = preview_bytes("t.folded.gz", &gz, &opts(1000)).expect("a preview");
        let PreviewExtent::Head {
            head_bytes,
            gzipped: true,
            ..
        } = p.extent
        else {
            panic!("{:?}", p.extent)
        };
        assert!(head_bytes <= 64 << 10 && head_bytes > (64 << 10) - 40);
        assert_eq!(text.as_bytes()[head_bytes as usize - 1], b'\n');
        let Imported::Profile(pr) = p.imported else {
            panic!("not a profile")
        };
        let lines = memchr::memchr_iter(b'\n', &text.as_bytes()[..head_bytes as usize]).count();
        assert_eq!(pr.tree.grand_total(), lines as u64);
        assert!(pr.meta.gzipped);
        assert!(p.extent.describe().contains("decompressed of a"));
        // A stream shorter than the head: no preview (the full load is quick).
        let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        enc.write_all(b"a;b 1\n").unwrap();
        assert!(preview_bytes("s.gz", &enc.finish().unwrap(), &opts(1)).is_none());
    }

    #[test]
    fn last_boundary_finds_the_last_line_end() {
        let t = b"a 1\nb 2\nc";
        assert_eq!(last_boundary(t, chunks::next_line_start), 8);
        assert_eq!(last_boundary(b"abc", chunks::next_line_start), 0);
        let long = format!("{}\n{}", "x".repeat(200_000), "y".repeat(300_000));
        assert_eq!(
            last_boundary(long.as_bytes(), chunks::next_line_start),
            200_001
        );
    }

    #[test]
    fn describe_says_what_was_read() {
        let s = PreviewExtent::Sampled {
            slices: 16,
            sampled_bytes: 16 << 20,
            total_bytes: 954 << 20,
            decompressed: false,
        };
        assert_eq!(
            s.describe(),
            "preview from 16 MiB of 954 MiB sampled across the file (16 slices)"
        );
        let s = PreviewExtent::Sampled {
            slices: 64,
            sampled_bytes: 8 << 20,
            total_bytes: 192 << 20,
            decompressed: true,
        };
        assert_eq!(
            s.describe(),
            "preview from 8.0 MiB of 192 MiB sampled across the decompressed file (64 slices)"
        );
        let h = PreviewExtent::Head {
            head_bytes: 32 << 20,
            total_bytes: 450 << 20,
            gzipped: false,
        };
        assert_eq!(h.describe(), "preview: first 32 MiB of 450 MiB");
    }
}
