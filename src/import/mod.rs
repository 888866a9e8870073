//! Reading profiles: bytes in, [`Profile`] out.
//!
//! [`load_path`] and [`load_bytes`] do the whole job:
//! 1. [`decode`]: gunzip if the bytes start with the gzip magic (whatever the file is
//!    called), then turn UTF-16 (with a BOM, or recognisably without one) into UTF-8 and
//!    drop a UTF-8 BOM;
//! 2. [`detect`]: decide the format from the content (the extension is only a tie-breaker);
//! 3. hand the text to the importer for that format.
//!
//! Files of [`MMAP_MIN_BYTES`] or more are memory-mapped rather than read into a `Vec`
//! (see [`InputBytes`] for why that is sound enough and what the risk is). Gzip input of
//! folded stacks or `perf script` is parsed as it is decompressed, a block of lines at a time; other gzip
//! input is decompressed into memory by [`decode`], at most [`Limits::max_input_bytes`].
//!
//! [`load_any_path_progressive`] first hands a quick [`preview`] of a big input (slices
//! sampled across a folded or perf file, the head of a Chrome trace) to the caller; a
//! gzipped pprof's, speedscope or Firefox file's, made from its decompressed bytes, once
//! they are decompressed (the parts these previews need end the stream).
//!
//! Every error names the input and a position in it (line, column, byte, or the JSON path
//! and bar index) and says what was expected; nothing in here panics on bad input. Damage
//! that does not stop the import (a few unparsable lines) is skipped, counted, and reported
//! once through [`crate::model::Warnings`].

pub mod chrome;
pub mod chunks;
pub mod compare;
pub mod cpuprofile;
pub mod decode;
pub mod detect;
pub mod dtrace;
pub mod firefox;
pub mod flamebearer;
pub mod folded;
mod gecko_head;
pub mod jaeger;
pub(crate) mod json_tree;
pub mod limits;
pub mod otlp;
pub mod perf;
mod perf_sched;
mod perf_stream;
pub mod pprof;
pub mod preview;
pub mod sampled;
pub mod speedscope;
mod text;
pub use limits::Limits;
pub mod tidb;
mod tidb_fast;
mod trace_json;
mod trace_parts;
mod v8_tree;

use crate::model::spans::SpanSet;
use crate::model::{Profile, SourceFormat};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

/// Progress of a load, shared with another thread (the window's progress display).
#[derive(Debug, Default)]
pub struct Progress {
    /// Bytes of (decoded) input processed so far.
    pub done: AtomicU64,
    /// Bytes of (decoded) input in all; 0 until known.
    pub total: AtomicU64,
    /// How long each stage of the load took, in order (`scorch render -v`): reading,
    /// parsing, merging per-thread trees, finishing the tree.
    pub stages: std::sync::Mutex<Vec<(&'static str, std::time::Duration)>>,
    /// What the input gives, once its format is known: the device thread primes only
    /// that kind of drawing.
    gives: std::sync::OnceLock<Gives>,
    /// Set when the load is over (finished or failed).
    finished: std::sync::atomic::AtomicBool,
    /// Wakes [`wait_until`](Self::wait_until) on every update.
    wake: (std::sync::Mutex<()>, std::sync::Condvar),
}

impl Progress {
    /// Fraction done, when the total is known.
    pub fn fraction(&self) -> Option<f64> {
        let t = self.total.load(Ordering::Relaxed);
        (t > 0).then(|| self.done.load(Ordering::Relaxed) as f64 / t as f64)
    }

    /// Records that `stage` took `took` (when there is a `Progress` to record into).
    pub(crate) fn stage(p: Option<&Progress>, stage: &'static str, took: std::time::Duration) {
        if let Some(p) = p
            && let Ok(mut s) = p.stages.lock()
        {
            s.push((stage, took));
        }
    }

    /// The stages recorded so far.
    pub fn stages(&self) -> Vec<(&'static str, std::time::Duration)> {
        self.stages.lock().map(|s| s.clone()).unwrap_or_default()
    }

    fn notify(&self) {
        // Taking the lock orders the update before a waiter's check.
        drop(self.wake.0.lock());
        self.wake.1.notify_all();
    }

    /// `bytes` more are processed.
    pub fn advance(&self, bytes: u64) {
        self.done.fetch_add(bytes, Ordering::Relaxed);
        self.notify();
    }

    /// `bytes` are processed in all.
    pub fn set_done(&self, bytes: u64) {
        self.done.store(bytes, Ordering::Relaxed);
        self.notify();
    }

    /// The input is `bytes` long.
    pub fn set_total(&self, bytes: u64) {
        self.total.store(bytes, Ordering::Relaxed);
        self.notify();
    }

    /// The input's format is known: it gives `gives` (said once per load).
    pub fn set_gives(&self, gives: Gives) {
        let _ = self.gives.set(gives);
    }

    /// What the input gives, once its format is known.
    pub fn gives(&self) -> Option<Gives> {
        self.gives.get().copied()
    }

    /// The load is over, finished or failed.
    pub fn finish(&self) {
        self.finished.store(true, Ordering::Relaxed);
        self.notify();
    }

    /// Whether [`finish`](Self::finish) was called.
    pub fn is_finished(&self) -> bool {
        self.finished.load(Ordering::Relaxed)
    }

    /// Blocks until `pred` holds or the load is over, woken by each update.
    pub fn wait_until(&self, pred: impl Fn(&Progress) -> bool) {
        let mut guard = self.wake.0.lock().unwrap_or_else(|e| e.into_inner());
        while !(self.is_finished() || pred(self)) {
            guard = self.wake.1.wait(guard).unwrap_or_else(|e| e.into_inner());
        }
    }

    pub(crate) fn set_done_opt(p: Option<&Progress>, v: u64) {
        if let Some(p) = p {
            p.set_done(v);
        }
    }
}

/// Why an input could not be imported.
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    /// `--sample-type` was given for an input that is not a pprof profile.
    #[error("--sample-type applies to pprof profiles; {file} is {format}")]
    SampleTypeNotPprof {
        /// The input's name.
        file: String,
        /// What it is.
        format: &'static str,
    },
    /// The file could not be opened or read.
    #[error("{file}: cannot read: {error}")]
    Io {
        /// The input's name.
        file: String,
        /// The operating system's error: shown in the message, so not also a `source`
        /// (an error report walking the chain would say it twice).
        error: std::io::Error,
    },
    /// The gzip stream is damaged before any usable data.
    #[error("{file}: corrupt gzip data at compressed byte {offset}: {detail}")]
    Gzip {
        /// The input's name.
        file: String,
        /// How many compressed bytes were consumed when the error was found.
        offset: u64,
        /// The decompressor's message.
        detail: String,
    },
    /// The input (decompressed, or read from a pipe or device) exceeds the size limit.
    #[error(
        "{file}: the input exceeds the limit of {} read or decompressed into memory; \
         --max-input SIZE raises it",
        limits::describe_bytes(*.limit)
    )]
    TooLarge {
        /// The input's name.
        file: String,
        /// The limit in bytes.
        limit: u64,
    },
    /// The system refused memory for the input.
    #[error("{file}: out of memory holding {} of input", limits::describe_bytes(*.bytes))]
    OutOfMemory {
        /// The input's name.
        file: String,
        /// How many bytes were asked for.
        bytes: u64,
    },
    /// The call tree is deeper than the memory available can lay out.
    #[error(
        "{file}: the call tree is {depth} frames deep; the memory available lays out at most \
         {limit} levels (about {} a level)",
        limits::describe_bytes(limits::BYTES_PER_LEVEL)
    )]
    TooDeep {
        /// The input's name.
        file: String,
        /// The tree's depth.
        depth: u64,
        /// The deepest accepted.
        limit: u64,
    },
    /// The input holds no bytes (or only whitespace).
    #[error("{file}: the input is empty")]
    Empty {
        /// The input's name.
        file: String,
    },
    /// A text input had no usable line.
    #[error("{file}: no stack samples found: {detail}")]
    NoSamples {
        /// The input's name.
        file: String,
        /// What was found instead, with the first offending line.
        detail: String,
    },
    /// Malformed JSON, or JSON of the wrong shape, at a line and column.
    #[error("{file}: line {line}, column {column}: {message}")]
    Json {
        /// The input's name.
        file: String,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// What was expected.
        message: String,
    },
    /// Well-formed input whose content breaks the format's rules, at a named place.
    #[error("{file}: {location}: {message}")]
    Invalid {
        /// The input's name.
        file: String,
        /// Where: a JSON path and bar index, a line number …
        location: String,
        /// What is wrong and what was expected.
        message: String,
    },
    /// A format scorch recognises but cannot import yet.
    #[error(
        "{file}: recognised as {}, which this version of scorch cannot import yet \
         (it reads {})",
        format.describe(),
        supported_formats()
    )]
    Unsupported {
        /// The input's name.
        file: String,
        /// What it looks like.
        format: SourceFormat,
    },
    /// A trace of timed spans where an aggregated profile was needed.
    #[error(
        "{file}: this is a {} of timed spans, not a profile of aggregated stacks (it is \
         drawn as a timeline)",
        format.describe()
    )]
    IsTrace {
        /// The input's name.
        file: String,
        /// Its format.
        format: SourceFormat,
    },
    /// The content matches no known format.
    #[error(
        "{file}: unrecognised format: {hint} (scorch reads {})",
        supported_formats()
    )]
    Unrecognised {
        /// The input's name.
        file: String,
        /// What the first bytes look like.
        hint: String,
    },
}

/// serde_json's message without the " at line L column C" it appends (scorch's errors
/// give the position their own way).
pub(crate) fn json_message(e: &serde_json::Error) -> String {
    let m = e.to_string();
    match m.rfind(" at line ") {
        Some(i) => m[..i].to_string(),
        None => m,
    }
}

impl ImportError {
    /// serde_json's error, at its line and column.
    pub fn json(file: &str, e: &serde_json::Error) -> ImportError {
        ImportError::Json {
            file: file.to_string(),
            line: e.line(),
            column: e.column(),
            message: json_message(e),
        }
    }

    /// Content that breaks a rule of the whole input rather than of one line (a total
    /// that overflows, a tree too large).
    pub fn whole_file(file: &str, message: impl std::fmt::Display) -> ImportError {
        ImportError::Invalid {
            file: file.to_string(),
            location: "whole file".to_string(),
            message: message.to_string(),
        }
    }
}

/// What to import, beyond the bytes.
#[derive(Clone, Copy, Debug, Default)]
pub struct ImportOptions<'a> {
    /// Memory limits.
    pub limits: Limits,
    /// pprof: the sample type to show, by name, `type/unit` or index
    /// ([`pprof::PprofOptions::sample_type`]); other formats ignore it.
    pub sample_type: Option<&'a str>,
    /// Inputs with time-ordered samples: which event, threads and gap rule.
    pub samples: sampled::SampleOptions<'a>,
}

/// [`ImportOptions`] that own their strings, for a loader on a thread of its own (the
/// window's): the memory limits are the defaults but for the input limit chosen.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ImportChoice {
    /// pprof: the sample type ([`ImportOptions::sample_type`]).
    pub sample_type: Option<String>,
    /// The event of a sampled input ([`sampled::SampleOptions::event`]).
    pub event: Option<String>,
    /// Only these process ids.
    pub pids: Vec<i64>,
    /// Only these thread ids.
    pub tids: Vec<i64>,
    /// The time order's gap rule, nanoseconds.
    pub max_gap_ns: Option<u64>,
    /// The input limit ([`Limits::max_input_bytes`]) [default: from the memory available].
    pub max_input: Option<u64>,
}

impl ImportChoice {
    /// The options these choices make.
    pub fn options(&self) -> ImportOptions<'_> {
        ImportOptions {
            limits: Limits::default().with_max_input(self.max_input),
            sample_type: self.sample_type.as_deref(),
            samples: sampled::SampleOptions {
                event: self.event.as_deref(),
                pids: &self.pids,
                tids: &self.tids,
                max_gap_ns: self.max_gap_ns,
            },
        }
    }
}

/// What an input turned out to hold.
#[derive(Debug)]
pub enum Imported {
    /// Aggregated stacks.
    Profile(Box<Profile>),
    /// Timed spans.
    Trace(Box<Trace>),
}

/// A trace and where it came from.
#[derive(Debug)]
pub struct Trace {
    /// The spans.
    pub spans: SpanSet,
    /// The input's name.
    pub source: String,
    /// The detected format.
    pub format: SourceFormat,
    /// True when the input was gzip-compressed.
    pub gzipped: bool,
    /// CPU samples recorded beside the spans (a Chrome trace's `Profile` events), and
    /// which of them to show.
    pub samples: Option<Box<sampled::Chosen>>,
}

impl From<Imported> for crate::model::Document {
    /// A loaded document: a profile as it is, a trace linked into its tree.
    fn from(imported: Imported) -> Self {
        use std::sync::Arc;
        match imported {
            Imported::Profile(p) => crate::model::Document::Profile(Arc::new(*p)),
            Imported::Trace(t) => {
                let t = *t;
                match t.samples {
                    None => crate::model::Document::Trace(Arc::new(crate::model::Trace::link(
                        t.spans, t.source, t.format, t.gzipped,
                    ))),
                    Some(chosen) => {
                        let mut s = chosen.sampled();
                        s.base = Some(Arc::new(t.spans));
                        let free = limits::available_memory();
                        crate::model::Document::Trace(Arc::new(s.trace_within(free)))
                    }
                }
            }
        }
    }
}

/// What an importer gives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Gives {
    /// An aggregated call tree.
    Profile,
    /// Timed spans.
    Trace,
}

/// What a parser produced.
#[allow(clippy::large_enum_variant)] // one per import, moved once
enum Parsed {
    Profile(Profile),
    Spans(SpanSet),
    /// Time-ordered samples (aggregated for the profile views).
    Samples(crate::model::samples::Samples),
    /// Spans with samples recorded beside them: a trace first (Chrome's events).
    SpansAndSamples(SpanSet, crate::model::samples::Samples),
    /// Samples first, with spans of their own beside them (Firefox's interval markers):
    /// a profile, whose time order shows the spans beside the samples.
    SamplesAndSpans(crate::model::samples::Samples, SpanSet),
}

/// One importer: the formats it reads (as detection names them), what it gives, its
/// parser.
pub struct Importer {
    /// The formats it reads.
    pub formats: &'static [SourceFormat],
    /// A profile or a trace.
    pub gives: Gives,
    parse: ParseFn,
}

/// A parser: the input's name, its decoded bytes, the options, where to report progress.
type ParseFn = fn(&str, &[u8], ImportOptions<'_>, Option<&Progress>) -> Result<Parsed, ImportError>;

/// Every importer, in the order formats are listed to users. Detection picks a format,
/// this table the parser; what scorch reads is said from it ([`supported_formats`]).
pub static IMPORTERS: &[Importer] = &[
    Importer {
        formats: &[SourceFormat::Folded, SourceFormat::FoldedDiff],
        gives: Gives::Profile,
        parse: |f, t, _, p| folded::parse_with(f, t, p).map(Parsed::Profile),
    },
    Importer {
        formats: &[SourceFormat::PerfScript],
        gives: Gives::Profile,
        parse: |f, t, _, p| perf::parse_with(f, t, p).map(Parsed::Samples),
    },
    Importer {
        formats: &[SourceFormat::DTrace],
        gives: Gives::Profile,
        parse: |f, t, _, _| dtrace::parse(f, t).map(Parsed::Profile),
    },
    Importer {
        formats: &[
            SourceFormat::FlamebearerSingle,
            SourceFormat::FlamebearerDiff,
        ],
        gives: Gives::Profile,
        parse: |f, t, _, _| flamebearer::parse(f, t).map(Parsed::Profile),
    },
    Importer {
        formats: &[SourceFormat::Pprof],
        gives: Gives::Profile,
        parse: |f, t, o, p| {
            let opts = pprof::PprofOptions {
                sample_type: o.sample_type,
            };
            pprof::parse_with(f, t, opts, p).map(Parsed::Profile)
        },
    },
    Importer {
        formats: &[SourceFormat::CpuProfile],
        gives: Gives::Profile,
        parse: |f, t, _, _| cpuprofile::parse(f, t).map(Parsed::Samples),
    },
    Importer {
        formats: &[SourceFormat::HeapProfile],
        gives: Gives::Profile,
        parse: |f, t, _, _| v8_tree::parse_heap(f, t).map(Parsed::Profile),
    },
    Importer {
        formats: &[SourceFormat::FirefoxProfile],
        gives: Gives::Profile,
        parse: |f, t, _, _| {
            firefox::parse(f, t).map(|(samples, spans)| match spans {
                Some(spans) => Parsed::SamplesAndSpans(samples, spans),
                None => Parsed::Samples(samples),
            })
        },
    },
    Importer {
        formats: &[SourceFormat::Speedscope],
        gives: Gives::Profile,
        parse: |f, t, _, _| speedscope::parse(f, t).map(Parsed::Samples),
    },
    Importer {
        formats: &[SourceFormat::ChromeTrace],
        gives: Gives::Trace,
        parse: |f, t, _, _| {
            chrome::parse_with_samples(f, t).map(|(spans, samples)| match samples {
                Some(s) => Parsed::SpansAndSamples(spans, s),
                None => Parsed::Spans(spans),
            })
        },
    },
    Importer {
        formats: &[SourceFormat::Jaeger],
        gives: Gives::Trace,
        parse: |f, t, _, p| jaeger::parse_with(f, t, p).map(Parsed::Spans),
    },
    Importer {
        formats: &[SourceFormat::Otlp],
        gives: Gives::Trace,
        parse: |f, t, _, p| otlp::parse_with(f, t, p).map(Parsed::Spans),
    },
    Importer {
        formats: &[SourceFormat::TiDBTrace],
        gives: Gives::Trace,
        parse: |f, t, _, p| tidb::parse_with(f, t, p).map(Parsed::Spans),
    },
];

/// "folded stacks, differential folded stacks, perf script text, …": every format an
/// importer reads.
pub fn supported_formats() -> String {
    IMPORTERS
        .iter()
        .flat_map(|i| i.formats)
        .map(|f| f.describe())
        .collect::<Vec<_>>()
        .join(", ")
}

/// Files at least this large are memory-mapped instead of read (below it, a read is as
/// fast and needs no mapping).
pub const MMAP_MIN_BYTES: u64 = 1 << 20;

/// The bytes of an input file: mapped, or read into memory.
///
/// # Mapping and its risk
/// A read-only private mapping (`memmap2::Mmap`) saves copying a multi-gigabyte file
/// into the heap: the kernel pages it in as the parsers (on all cores) walk it, and the
/// pages are reclaimable cache rather than anonymous memory. The catch is that the
/// slice is only as immutable as the file: if another process truncates the file while
/// it is mapped, touching the lost pages raises SIGBUS and the process dies; if it
/// rewrites bytes in place, the parser may see a mix of old and new content (it stays
/// memory-safe in practice: parsers only read bytes and check every bound, but in Rust's
/// model a `&[u8]` whose contents change is undefined behaviour). Profiles are
/// written once and then read, so scorch accepts this risk as ripgrep does; a mapping
/// that fails (a pipe, a special file, a filesystem without mmap) falls back to a
/// plain read.
pub enum InputBytes {
    /// A read-only mapping of the whole file.
    Mapped(memmap2::Mmap),
    /// The file read into memory.
    Read(Vec<u8>),
}

impl std::ops::Deref for InputBytes {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            InputBytes::Mapped(m) => m,
            InputBytes::Read(v) => v,
        }
    }
}

impl InputBytes {
    /// True when the bytes are a mapping of the file.
    pub fn is_mapped(&self) -> bool {
        matches!(self, InputBytes::Mapped(_))
    }
}
/// Opens `path` and maps it (regular files of [`MMAP_MIN_BYTES`] or more) or reads it,
/// with the default [`Limits`].
pub fn read_input(path: &Path) -> Result<InputBytes, ImportError> {
    read_input_limited(path, Limits::default())
}

/// [`read_input`]: what is read rather than mapped (a small file, a pipe, a device, a file
/// that cannot be mapped) is at most [`Limits::max_input_bytes`]; an input with more, or
/// without an end (`/dev/zero`), is [`ImportError::TooLarge`].
pub fn read_input_limited(path: &Path, limits: Limits) -> Result<InputBytes, ImportError> {
    let name = path.display().to_string();
    let io = |error| ImportError::Io {
        file: name.clone(),
        error,
    };
    let mut file = std::fs::File::open(path).map_err(io)?;
    let meta = file.metadata().map_err(io)?;
    if meta.is_file() && meta.len() >= MMAP_MIN_BYTES {
        // SAFETY: the mapping is read-only and private, and nothing in scorch writes the
        // file. Another process truncating or rewriting it while it is mapped is the
        // accepted risk documented on `InputBytes`.
        // `populate` (MAP_POPULATE) maps every cached page in one call instead of taking a
        // page fault per 4 KiB as the parsers advance: ~50 k faults for 200 MB.
        if let Ok(map) = unsafe { memmap2::MmapOptions::new().populate().map(&file) } {
            return Ok(InputBytes::Mapped(map));
        }
    }
    let limit = limits.max_input_bytes;
    if meta.is_file() && meta.len() > limit {
        return Err(ImportError::TooLarge { file: name, limit });
    }
    let bytes = limits::read_capped(&mut file, &name, meta.len(), limit)?;
    Ok(InputBytes::Read(bytes))
}

/// Reads the input at `path` as whatever it holds: a profile or a trace.
pub fn load_any_path(path: &Path) -> Result<Imported, ImportError> {
    load_any_path_with(path, None)
}

/// [`load_any_path`], reporting progress (profiles report parsing progress; trace
/// parsers report none).
pub fn load_any_path_with(
    path: &Path,
    progress: Option<&Progress>,
) -> Result<Imported, ImportError> {
    load_any_path_with_options(path, ImportOptions::default(), progress)
}

/// [`load_any_path_with`] with options (limits, the pprof sample type).
pub fn load_any_path_with_options(
    path: &Path,
    options: ImportOptions<'_>,
    progress: Option<&Progress>,
) -> Result<Imported, ImportError> {
    with_input(path, options.limits, progress, |file, bytes| {
        load_any_bytes_with(file, bytes, options, progress)
    })
}

/// Reads (maps) `path` and hands its name and bytes to `load`; a large mapping is then
/// unmapped on a thread of its own (8-11 ms for 200 MB: every page table entry is
/// cleared, and nothing waits for it).
fn with_input(
    path: &Path,
    limits: Limits,
    progress: Option<&Progress>,
    load: impl FnOnce(&str, &[u8]) -> Result<Imported, ImportError>,
) -> Result<Imported, ImportError> {
    let file = path.display().to_string();
    let t0 = std::time::Instant::now();
    let bytes = read_input_limited(path, limits)?;
    Progress::stage(progress, "read", t0.elapsed());
    let imported = load(&file, &bytes);
    if bytes.is_mapped() && bytes.len() >= UNMAP_IN_BACKGROUND_BYTES {
        let _ = std::thread::Builder::new()
            .name("scorch-unmap".into())
            .spawn(move || drop(bytes));
    }
    imported
}

/// [`load_any_path_with`] that first hands a quick preview of a big input to `on_preview`
/// (see [`preview`]; with `preview` `None`, or for an input without one, it is not
/// called), then loads the whole input. The window shows the preview while the rest loads.
pub fn load_any_path_progressive(
    path: &Path,
    options: ImportOptions<'_>,
    progress: Option<&Progress>,
    preview: Option<&preview::PreviewOptions>,
    on_preview: impl FnOnce(preview::Preview),
) -> Result<Imported, ImportError> {
    let Some(opts) = preview else {
        return load_any_path_with_options(path, options, progress);
    };
    if let Some(p) = preview::preview_path(path, opts) {
        on_preview(p);
        return load_any_path_with_options(path, options, progress);
    }
    // A gzipped pprof, speedscope or Firefox file whose decompressed prefix gives none
    // has its preview made from the decompressed bytes the load reads.
    with_input(path, options.limits, progress, |file, bytes| {
        load_gzipped_progressive(file, bytes, options, progress, opts, on_preview)
            .unwrap_or_else(|| load_any_bytes_with(file, bytes, options, progress))
    })
}

/// A gzipped pprof, speedscope or Firefox file of at least
/// [`PreviewOptions::min_gzip_bytes`](preview::PreviewOptions): decompressed whole, its
/// preview handed to `on_preview` (when it has one), then parsed; `None` for any other
/// input (nothing done).
fn load_gzipped_progressive(
    file: &str,
    bytes: &[u8],
    options: ImportOptions<'_>,
    progress: Option<&Progress>,
    opts: &preview::PreviewOptions,
    on_preview: impl FnOnce(preview::Preview),
) -> Option<Result<Imported, ImportError>> {
    if !bytes.starts_with(&decode::GZIP_MAGIC) || (bytes.len() as u64) < opts.min_gzip_bytes {
        return None;
    }
    let mut head = Vec::new();
    let mut dec = std::io::Read::take(flate2::read::MultiGzDecoder::new(bytes), 64 << 10);
    std::io::Read::read_to_end(&mut dec, &mut head).ok()?;
    if !matches!(
        detect::detect(&head, Some(file)),
        Ok(SourceFormat::Pprof | SourceFormat::Speedscope | SourceFormat::FirefoxProfile)
    ) {
        return None;
    }
    let decoded = match decode::decode(file, bytes, options.limits) {
        Ok(d) => d,
        Err(e) => return Some(Err(e)),
    };
    if let Some(p) = preview::decompressed(file, &decoded.text, bytes.len() as u64, opts) {
        on_preview(p);
    }
    Some(import_decoded(file, decoded, options, progress, true))
}

/// Mapped inputs at least this large are unmapped on a thread of their own.
const UNMAP_IN_BACKGROUND_BYTES: usize = 64 << 20;

/// [`load_any_path`] for bytes.
pub fn load_any_bytes(file: &str, bytes: &[u8], limits: Limits) -> Result<Imported, ImportError> {
    load_any_bytes_with_options(
        file,
        bytes,
        ImportOptions {
            limits,
            ..ImportOptions::default()
        },
    )
}

/// Loads `input`, a file or `-` for standard input (named `<stdin>`), whatever it holds;
/// refuses a pprof sample type for an input that is not pprof.
pub fn load_input(
    input: &Path,
    options: ImportOptions<'_>,
    progress: Option<&Progress>,
) -> Result<Imported, ImportError> {
    let sample_type = options.sample_type;
    let imported = if input == Path::new("-") {
        let bytes = limits::read_capped(
            std::io::stdin().lock(),
            "<stdin>",
            0,
            options.limits.max_input_bytes,
        )?;
        load_any_bytes_with_options("<stdin>", &bytes, options)?
    } else {
        load_any_path_with_options(input, options, progress)?
    };
    let format = match &imported {
        Imported::Profile(p) => p.meta.format,
        Imported::Trace(t) => t.format,
    };
    if sample_type.is_some() && format != crate::model::SourceFormat::Pprof {
        return Err(ImportError::SampleTypeNotPprof {
            file: input.display().to_string(),
            format: format.describe(),
        });
    }
    Ok(imported)
}

/// [`load_any_bytes`] with options (limits, the pprof sample type).
pub fn load_any_bytes_with_options(
    file: &str,
    bytes: &[u8],
    options: ImportOptions<'_>,
) -> Result<Imported, ImportError> {
    load_any_bytes_with(file, bytes, options, None)
}

/// Decodes, detects and parses once, whatever the input holds.
fn load_any_bytes_with(
    file: &str,
    bytes: &[u8],
    options: ImportOptions<'_>,
    progress: Option<&Progress>,
) -> Result<Imported, ImportError> {
    if let Some(imported) = stream_gzip(file, bytes, options, progress)? {
        return Ok(imported);
    }
    let decoded = decode::decode(file, bytes, options.limits)?;
    import_decoded(file, decoded, options, progress, true)
}

/// Decompressed folded stacks are parsed in blocks of this many bytes.
const STREAM_BLOCK_BYTES: usize = 16 << 20;

/// A gzip stream whose head is folded stacks or `perf script` text, parsed while it is
/// decompressed (block by block, never held whole); `None` for any other input, which
/// takes the buffered path (JSON and protobuf parsers need the whole text).
fn stream_gzip(
    file: &str,
    bytes: &[u8],
    options: ImportOptions<'_>,
    progress: Option<&Progress>,
) -> Result<Option<Imported>, ImportError> {
    if !bytes.starts_with(&decode::GZIP_MAGIC) {
        return Ok(None);
    }
    let Some(head) = decode::gzip_head(bytes, 1 << 20) else {
        return Ok(None);
    };
    let format = detect::detect(&head, Some(file));
    drop(head);
    let folded = match format {
        Ok(SourceFormat::Folded | SourceFormat::FoldedDiff) => true,
        Ok(SourceFormat::PerfScript) => false,
        _ => return Ok(None),
    };
    if let Some(p) = progress {
        // The decompressed size is not known until the end: say so, as traces do.
        p.set_total(0);
        p.set_gives(Gives::Profile);
    }
    let decoded = |note| decode::Decoded {
        text: std::borrow::Cow::Borrowed(&[]),
        gzipped: true,
        note,
    };
    if folded {
        let (profile, note) = gzip_blocks(file, bytes, options.limits, |next| {
            folded::parse_blocks(file, next)
        });
        finish_profile(file, profile?, &decoded(note), options.limits, progress).map(Some)
    } else {
        let (samples, note) = gzip_blocks(file, bytes, options.limits, |next| {
            perf_stream::parse_blocks(file, next, progress)
        });
        import_decoded_samples(file, samples?, None, &decoded(note), options, progress).map(Some)
    }
}

/// Hands `parse` the decompressed blocks of a gzip stream (each ending at a line end) as
/// a `next(block)` function; returns what it made and the decoder's note.
fn gzip_blocks<T>(
    file: &str,
    bytes: &[u8],
    limits: Limits,
    parse: impl FnOnce(
        &mut dyn FnMut(&mut Vec<u8>) -> Result<bool, ImportError>,
    ) -> Result<T, ImportError>,
) -> (Result<T, ImportError>, Option<String>) {
    let mut lines = decode::GzipLines::new(file, bytes, limits);
    // A block, and the read that completes it, stay well within the input limit.
    let size = usize::try_from(limits.max_input_bytes / 4)
        .unwrap_or(usize::MAX)
        .clamp(1, STREAM_BLOCK_BYTES);
    // One thread decompresses the next block while this one parses the last: at most
    // four blocks are held, and parsed ones go back to be filled again.
    std::thread::scope(|s| {
        let (tx, rx) = std::sync::mpsc::sync_channel::<Result<Vec<u8>, ImportError>>(1);
        let (back_tx, back_rx) = std::sync::mpsc::sync_channel::<Vec<u8>>(2);
        let producer = s.spawn(move || {
            loop {
                let mut block = back_rx.try_recv().unwrap_or_default();
                match lines.next_block(&mut block, size) {
                    Ok(false) => break,
                    Ok(true) => {
                        if tx.send(Ok(block)).is_err() {
                            break;
                        }
                    }
                    Err(e) => {
                        let _ = tx.send(Err(e));
                        break;
                    }
                }
            }
            lines.note
        });
        let made = parse(&mut |block| match rx.recv() {
            Ok(next) => {
                let parsed = std::mem::replace(block, next?);
                let _ = back_tx.try_send(parsed);
                Ok(true)
            }
            Err(_) => Ok(false),
        });
        // A parse that failed early stops the producer at its next send.
        drop(rx);
        let note = producer.join().unwrap_or(None);
        (made, note)
    })
}

/// Detects and parses decoded input; with `traces` false a trace is refused
/// ([`ImportError::IsTrace`]) after detection instead of parsed.
fn import_decoded(
    file: &str,
    decoded: decode::Decoded<'_>,
    options: ImportOptions<'_>,
    progress: Option<&Progress>,
    traces: bool,
) -> Result<Imported, ImportError> {
    let text = decoded.text.as_ref();
    // Known at once: a small input's device is opened while it parses (render::warmup).
    if let Some(p) = progress {
        p.set_total(text.len() as u64);
    }
    if text.iter().all(|b| b.is_ascii_whitespace()) {
        return Err(ImportError::Empty {
            file: file.to_string(),
        });
    }
    let format = detect::detect(text, Some(file)).map_err(|hint| ImportError::Unrecognised {
        file: file.to_string(),
        hint,
    })?;
    let Some(importer) = IMPORTERS.iter().find(|i| i.formats.contains(&format)) else {
        return Err(ImportError::Unsupported {
            file: file.to_string(),
            format,
        });
    };
    if let Some(p) = progress {
        p.set_gives(importer.gives);
    }
    let is_trace = importer.gives == Gives::Trace;
    if is_trace && !traces {
        return Err(ImportError::IsTrace {
            file: file.to_string(),
            format,
        });
    }
    let reports = matches!(
        format,
        SourceFormat::Folded
            | SourceFormat::FoldedDiff
            | SourceFormat::PerfScript
            | SourceFormat::Pprof
            | SourceFormat::Jaeger
            | SourceFormat::Otlp
    );
    if !reports && let Some(p) = progress {
        // The other parsers report no progress: say the total is unknown rather than let
        // a percentage sit at zero.
        p.set_total(0);
    }
    let (spans, samples) = match (importer.parse)(file, text, options, progress)? {
        Parsed::Spans(spans) => (spans, None),
        // A caller that takes profiles only gets the samples aggregated.
        Parsed::SpansAndSamples(_, samples) if !traces => {
            return import_decoded_samples(file, samples, None, &decoded, options, progress);
        }
        Parsed::SamplesAndSpans(samples, spans) => {
            let spans = Some(spans).filter(|_| traces);
            return import_decoded_samples(file, samples, spans, &decoded, options, progress);
        }
        Parsed::SpansAndSamples(spans, samples) => (spans, Some(samples)),
        Parsed::Profile(p) => {
            return finish_profile(file, p, &decoded, options.limits, progress);
        }
        Parsed::Samples(samples) => {
            return import_decoded_samples(file, samples, None, &decoded, options, progress);
        }
    };
    let mut spans = spans;
    if let Some(note) = decoded.note {
        spans.warnings.notes.push(note);
    }
    // Read whole (for the parsers that report progress: the others left no total).
    Progress::set_done_opt(progress, text.len() as u64);
    let samples = match samples {
        Some(s) if !s.is_empty() => Some(Box::new(sampled::choose(file, s, &options.samples)?)),
        _ => None,
    };
    Ok(Imported::Trace(Box::new(Trace {
        spans,
        source: file.to_string(),
        format,
        gzipped: decoded.gzipped,
        samples,
    })))
}

/// Samples aggregated into their profile (which keeps them, and `spans` to show beside
/// their time order).
fn import_decoded_samples(
    file: &str,
    mut samples: crate::model::samples::Samples,
    spans: Option<SpanSet>,
    decoded: &decode::Decoded<'_>,
    options: ImportOptions<'_>,
    progress: Option<&Progress>,
) -> Result<Imported, ImportError> {
    samples.meta_mut().gzipped = decoded.gzipped;
    if let Some(note) = &decoded.note {
        samples.meta_mut().warnings.notes.push(note.clone());
    }
    let mut spans = spans;
    let filters = &options.samples;
    if let Some(set) = spans.as_mut().filter(|_| filters.filters()) {
        let dropped = set.retain_tracks(|t| filters.keeps(t.pid, t.tid));
        if dropped > 0 {
            samples.meta_mut().warnings.notes.push(format!(
                "{dropped} span{} of other threads left out ({})",
                if dropped == 1 { "" } else { "s" },
                filters.filter_text()
            ));
        }
    }
    let chosen = sampled::choose(file, samples, &options.samples)?;
    let mut sampled = chosen.sampled();
    sampled.base = spans.filter(|s| !s.is_empty()).map(std::sync::Arc::new);
    let mut p = sampled
        .profile()
        .map_err(|e| ImportError::whole_file(file, e))?;
    // The note is in the samples' meta already.
    p.meta
        .warnings
        .notes
        .retain(|n| Some(n) != decoded.note.as_ref());
    finish_profile(file, p, decoded, options.limits, progress)
}

/// A parsed profile with what decoding found (gzip, a note) and the progress at the end;
/// a tree deeper than [`Limits::max_depth`] is [`ImportError::TooDeep`] (laying it out
/// would exhaust memory).
fn finish_profile(
    file: &str,
    mut profile: Profile,
    decoded: &decode::Decoded<'_>,
    limits: Limits,
    progress: Option<&Progress>,
) -> Result<Imported, ImportError> {
    let depth = u64::from(profile.tree.max_depth());
    if depth > limits.max_depth {
        return Err(ImportError::TooDeep {
            file: file.to_string(),
            depth,
            limit: limits.max_depth,
        });
    }
    Progress::set_done_opt(progress, decoded.text.len() as u64);
    profile.meta.gzipped = decoded.gzipped;
    if let Some(note) = &decoded.note {
        profile.meta.warnings.notes.push(note.clone());
    }
    Ok(Imported::Profile(Box::new(profile)))
}

/// Reads and imports the profile at `path`.
pub fn load_path(path: &Path) -> Result<Profile, ImportError> {
    load_path_with(path, None)
}

/// [`load_path`], reporting progress.
pub fn load_path_with(path: &Path, progress: Option<&Progress>) -> Result<Profile, ImportError> {
    let file = path.display().to_string();
    let limits = Limits::default();
    let bytes = read_input_limited(path, limits)?;
    load_bytes_with(&file, &bytes, limits, progress)
}

/// Imports a profile from `bytes`; `file` names it in errors (a path, or `<stdin>`).
pub fn load_bytes(file: &str, bytes: &[u8], limits: Limits) -> Result<Profile, ImportError> {
    load_bytes_with(file, bytes, limits, None)
}

/// [`load_bytes`], reporting progress.
pub fn load_bytes_with(
    file: &str,
    bytes: &[u8],
    limits: Limits,
    progress: Option<&Progress>,
) -> Result<Profile, ImportError> {
    let options = ImportOptions {
        limits,
        ..ImportOptions::default()
    };
    if let Some(Imported::Profile(p)) = stream_gzip(file, bytes, options, progress)? {
        return Ok(*p);
    }
    let decoded = decode::decode(file, bytes, limits)?;
    match import_decoded(file, decoded, options, progress, false)? {
        Imported::Profile(p) => Ok(*p),
        Imported::Trace(t) => Err(ImportError::IsTrace {
            file: file.to_string(),
            format: t.format,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The load's progress says what the input gives as soon as its format is known
    /// (`scorch render` primes the device with a drawing of that kind), gzipped folded
    /// stacks included; nothing before.
    #[test]
    fn progress_says_what_the_input_gives() {
        let folded = b"main;a 3\nmain;b 2\n".to_vec();
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        std::io::Write::write_all(&mut gz, &folded).unwrap();
        let gzipped = gz.finish().unwrap();
        let trace = br#"[{"name":"a","ph":"X","ts":0,"dur":5,"pid":1,"tid":1}]"#.to_vec();
        let jaeger = br#"{"data":[{"traceID":"t","spans":[{"traceID":"t","spanID":"s","operationName":"op","startTime":1,"duration":2,"references":[],"processID":"p1"}],"processes":{"p1":{"serviceName":"svc"}}}]}"#.to_vec();
        for (file, bytes, want) in [
            ("a.folded", folded, Gives::Profile),
            ("a.folded.gz", gzipped, Gives::Profile),
            ("a.json", trace, Gives::Trace),
            ("jaeger.json", jaeger, Gives::Trace),
        ] {
            let progress = Progress::default();
            assert_eq!(progress.gives(), None);
            load_any_bytes_with(file, &bytes, ImportOptions::default(), Some(&progress))
                .unwrap_or_else(|e| panic!("{file}: {e}"));
            assert_eq!(progress.gives(), Some(want), "{file}");
        }
    }

    /// Issue 14, failure 10: "No such file or directory (os error 2): No such file or
    /// directory (os error 2)": the operating system's error was in the message and its
    /// source too, so a report of the chain said it twice.
    #[test]
    fn io_errors_repeat_their_cause() {
        let missing = std::env::temp_dir().join("scorch-no-such-file-anywhere");
        let e = load_any_path(&missing).unwrap_err();
        let report = format!("{:#}", anyhow::Error::from(e));
        assert!(
            report.starts_with(&missing.display().to_string()),
            "{report}"
        );
        assert_eq!(report.matches("os error 2").count(), 1, "{report}");
    }

    /// The formats users are told about are those an importer reads, and every format
    /// detection names is read or refused by name.
    #[test]
    fn messages_list_what_the_importers_read() {
        let s = supported_formats();
        for f in IMPORTERS.iter().flat_map(|i| i.formats) {
            assert!(s.contains(f.describe()), "{s}");
        }
        assert!(s.contains("Chrome Trace Event JSON") && s.contains("pprof protobuf"));
        // Every format detection can name has an importer (the match fails to compile
        // when a format is added, so this list cannot fall behind).
        let all = [
            SourceFormat::Folded,
            SourceFormat::FoldedDiff,
            SourceFormat::FlamebearerSingle,
            SourceFormat::FlamebearerDiff,
            SourceFormat::PerfScript,
            SourceFormat::DTrace,
            SourceFormat::ChromeTrace,
            SourceFormat::Speedscope,
            SourceFormat::Pprof,
            SourceFormat::FirefoxProfile,
            SourceFormat::Jaeger,
            SourceFormat::Otlp,
            SourceFormat::CpuProfile,
            SourceFormat::TiDBTrace,
            SourceFormat::HeapProfile,
        ];
        for f in all {
            match f {
                SourceFormat::Folded
                | SourceFormat::FoldedDiff
                | SourceFormat::FlamebearerSingle
                | SourceFormat::FlamebearerDiff
                | SourceFormat::PerfScript
                | SourceFormat::DTrace
                | SourceFormat::ChromeTrace
                | SourceFormat::Speedscope
                | SourceFormat::Pprof
                | SourceFormat::FirefoxProfile
                | SourceFormat::Jaeger
                | SourceFormat::Otlp
                | SourceFormat::CpuProfile
                | SourceFormat::TiDBTrace
                | SourceFormat::HeapProfile => {}
            }
            assert!(
                IMPORTERS.iter().any(|i| i.formats.contains(&f)),
                "{} is detected but no importer reads it",
                f.describe()
            );
        }
        // A recognised file with nothing in it is refused naming the file and the format's
        // own reason, not called unrecognised.
        let e = load_any_bytes(
            "x.json",
            br#"{"meta":{"interval":1},"threads":[]}"#,
            Limits::default(),
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.starts_with("x.json") && !e.contains("unrecognised"),
            "{e}"
        );
        let e = load_any_bytes("x.bin", b"\x01\x02 nothing", Limits::default())
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("unrecognised format") && e.contains("TiDB trace JSON"),
            "{e}"
        );
    }

    #[test]
    fn large_files_are_mapped_small_ones_read_and_both_load() {
        let dir = std::env::temp_dir().join(format!("scorch-mmap-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let big = dir.join("big.folded");
        let line = "main;work;leaf 1\n";
        let n = (MMAP_MIN_BYTES as usize).div_ceil(line.len());
        std::fs::write(&big, line.repeat(n)).unwrap();
        let small = dir.join("small.folded");
        std::fs::write(&small, line).unwrap();
        assert!(read_input(&big).unwrap().is_mapped());
        assert!(!read_input(&small).unwrap().is_mapped());
        assert_eq!(load_path(&big).unwrap().tree.grand_total(), n as u64);
        assert_eq!(load_path(&small).unwrap().tree.grand_total(), 1);
        let missing = load_path(&dir.join("nope")).unwrap_err().to_string();
        assert!(missing.contains("nope: cannot read"), "{missing}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// Issue 14, failure 5: a 38 KB gzip holding one folded line of 20 M frames aborted
    /// laying out a row per level. A tree deeper than the memory lays out is an error
    /// naming the file and the limit (here a limit of 1000 levels and 5000 frames).
    #[test]
    fn abort_on_a_gzip_holding_one_folded_line_of_20m_frames() {
        let line = format!("{} 1\n", vec!["f"; 5000].join(";"));
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        std::io::Write::write_all(&mut e, line.as_bytes()).unwrap();
        let z = e.finish().unwrap();
        let limits = Limits {
            max_depth: 1000,
            ..Limits::default()
        };
        let err = load_bytes("deep.folded.gz", &z, limits).unwrap_err();
        assert!(
            matches!(
                err,
                ImportError::TooDeep {
                    depth: 5000,
                    limit: 1000,
                    ..
                }
            ),
            "{err}"
        );
        assert!(err.to_string().starts_with("deep.folded.gz: "), "{err}");
        let err = load_any_bytes("deep.folded.gz", &z, limits).unwrap_err();
        assert!(matches!(err, ImportError::TooDeep { .. }), "{err}");
        // Within the limit it loads.
        let p = load_bytes("deep.folded.gz", &z, Limits::default()).unwrap();
        assert_eq!(p.tree.max_depth(), 5000);
    }

    /// Options whose input limit cuts `len` decompressed bytes into about five blocks (a
    /// block is a quarter of the limit).
    fn in_five_blocks(len: usize) -> ImportOptions<'static> {
        ImportOptions {
            limits: Limits {
                max_input_bytes: len as u64 * 5 / 4,
                ..Limits::default()
            },
            ..ImportOptions::default()
        }
    }

    /// Issue 14, failure 5: gzipped `perf script` is parsed while it is decompressed, in
    /// blocks cut anywhere at line ends (samples straddle them), and gives what the
    /// decompressed text gives: the same call tree, the same events and counts, and line
    /// numbers that run on across blocks.
    #[test]
    fn gzipped_perf_script_is_parsed_while_decompressed() {
        let dir = env!("CARGO_MANIFEST_DIR");
        for rec in ["python-threads.perf.gz", "python-wakeups.perf.gz"] {
            let z = std::fs::read(format!("{dir}/data/recordings/{rec}")).unwrap();
            let plain = decode::decode(rec, &z, Limits::default())
                .unwrap()
                .text
                .to_vec();
            let Some(Imported::Profile(streamed)) =
                stream_gzip(rec, &z, in_five_blocks(plain.len()), None).unwrap()
            else {
                panic!("{rec}: not streamed");
            };
            let whole = load_bytes("x.perf", &plain, Limits::default()).unwrap();
            assert_eq!(streamed.folded_lines(), whole.folded_lines(), "{rec}");
            assert!(streamed.meta.gzipped);
            let len = |p: &Profile| p.meta.sampled.as_ref().map(|s| s.samples.len());
            assert_eq!(len(&streamed), len(&whole), "{rec}");
            assert!(len(&whole).is_some_and(|n| n > 100), "{rec}");
        }
        // A damaged sample in the third block is reported at its line in the whole text.
        let mut text = String::new();
        for i in 0..3000 {
            text.push_str(&format!(
                "python 42/42 {}.000001: 1 cpu-clock:\n\t7f00 f{} (/usr/bin/python)\n\t7f01 main (/usr/bin/python)\n\n",
                i,
                i % 7
            ));
        }
        let bad_line = 2401 * 4 + 1;
        let mut lines: Vec<&str> = text.split('\n').collect();
        lines[bad_line - 1] = "python 42/42 9999.0: 1 cpu-clock:";
        lines[bad_line] = "\tnot a frame line at all";
        let text = lines.join("\n");
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        std::io::Write::write_all(&mut e, text.as_bytes()).unwrap();
        let z = e.finish().unwrap();
        let streamed = stream_gzip("x.perf.gz", &z, in_five_blocks(text.len()), None)
            .unwrap()
            .unwrap();
        let whole = load_any_bytes("x.perf", text.as_bytes(), Limits::default()).unwrap();
        let (Imported::Profile(s), Imported::Profile(w)) = (streamed, whole) else {
            panic!("not profiles");
        };
        assert_eq!(s.folded_lines(), w.folded_lines());
        let warned = format!("{:?}", s.meta.warnings);
        assert_eq!(warned, format!("{:?}", w.meta.warnings));
        assert!(
            warned.contains(&format!("line {}:", bad_line + 1)),
            "{warned}"
        );
    }

    /// Issue 14, failure 6: a file read rather than mapped stops at the input limit too.
    #[test]
    fn plain_file_over_the_limit_names_the_file_and_the_limit() {
        let dir = std::env::temp_dir().join(format!("scorch-limit-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("small.folded");
        std::fs::write(&path, "main;work 1\n".repeat(100)).unwrap();
        let limits = Limits {
            max_input_bytes: 500,
            ..Limits::default()
        };
        let err = read_input_limited(&path, limits).err().unwrap();
        assert!(
            matches!(err, ImportError::TooLarge { limit: 500, .. }),
            "{err}"
        );
        assert!(err.to_string().contains("small.folded: "), "{err}");
        assert!(read_input_limited(&path, Limits::default()).is_ok());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
