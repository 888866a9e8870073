//! Folded ("collapsed") stacks: one sample path per line, `frame;frame;frame count`.
//!
//! The format of Brendan Gregg's `stackcollapse-*` scripts, inferno, async-profiler's
//! collapsed output and many others. Accepted variations, all seen in real files:
//! - fractional counts (`a;b 31.23`, `a;b 6.`): values are kept as exact fixed-point
//!   integers, with the precision raised mid-file when a line has more decimals (up to
//!   six; further digits are rounded and a note says so);
//! - differential lines, `a;b 12 34` (before, after), as written by `difffolded.pl`; the
//!   first valid line decides whether the file is differential;
//! - frames containing spaces (the count is the last whitespace-separated token);
//! - CRLF line ends, blank lines, `#`/`//` comment lines (counted, skipped);
//! - invalid lines (no count, a count that is not a number): skipped, counted, and the
//!   first one is reported with its line number.
//!
//! Speed (W1 of TARGETS.md: 1.2 KB lines, ten new call-tree nodes per line): the hot loop
//! allocates nothing per line and touches each byte about once.
//! - Lines are found with `memchr`; the counts are found by scanning back from the line's
//!   end over digits only (a whole-line search for the last space walked every stack).
//! - Consecutive lines share long prefixes. The common prefix with the previous line is
//!   measured eight bytes at a time, and the previous line's frame end offsets say, by a
//!   binary search, how many whole frames it covers: those frames take the previous
//!   line's nodes without being split, hashed or interned again.
//! - Below the first node a line creates, every frame is new: its node is appended
//!   without looking for an existing child.
//! - The previous stack is a slice of the input, not a copy.

use super::ImportError;
use super::chunks::{ChunkProgress, next_line_start, parse_in_chunks};
use super::text::preview;
use crate::model::{
    CallTreeBuilder, ChildOrder, Names, NodeId, Profile, ProfileMeta, SourceFormat, ValueFormat,
    Warnings,
};

/// Most fractional digits kept; more are rounded.
pub const MAX_FRACTION_DIGITS: u8 = 6;

/// A sample count as written: integer part and up to six fractional digits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Count {
    /// Integer part.
    pub int: u64,
    /// Fractional part in millionths (0..1_000_000).
    pub micros: u32,
    /// Fractional digits that matter (0..=6).
    pub digits: u8,
    /// True when digits beyond the sixth were rounded away.
    pub rounded: bool,
}

impl Count {
    /// The count in ticks of 10^-`k` units, or `None` on overflow. `k` must be at least
    /// `self.digits`.
    pub fn to_ticks(self, k: u8) -> Option<u64> {
        let scale = 10u64.pow(u32::from(k));
        let frac = u64::from(self.micros) / 10u64.pow(u32::from(MAX_FRACTION_DIGITS - k));
        self.int.checked_mul(scale)?.checked_add(frac)
    }
}

/// Parses `digits[.digits]`.
pub fn parse_count(tok: &[u8]) -> Option<Count> {
    let (int_part, frac_part) = match tok.iter().position(|&b| b == b'.') {
        Some(p) => (&tok[..p], Some(&tok[p + 1..])),
        None => (tok, None),
    };
    if int_part.is_empty() || !int_part.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let mut int: u64 = 0;
    for &d in int_part {
        int = int.checked_mul(10)?.checked_add(u64::from(d - b'0'))?;
    }
    let mut micros: u32 = 0;
    let mut digits: u8 = 0;
    let mut rounded = false;
    if let Some(frac) = frac_part {
        if !frac.iter().all(u8::is_ascii_digit) {
            return None;
        }
        for (i, &d) in frac.iter().enumerate() {
            if i < usize::from(MAX_FRACTION_DIGITS) {
                micros = micros * 10 + u32::from(d - b'0');
                if d != b'0' {
                    digits = i as u8 + 1;
                }
            } else if d != b'0' {
                rounded = true;
            }
        }
        let kept = frac.len().min(usize::from(MAX_FRACTION_DIGITS));
        micros *= 10u32.pow((usize::from(MAX_FRACTION_DIGITS) - kept) as u32);
        if frac.len() > usize::from(MAX_FRACTION_DIGITS)
            && frac[usize::from(MAX_FRACTION_DIGITS)] >= b'5'
        {
            micros += 1;
            if micros == 1_000_000 {
                micros = 0;
                int = int.checked_add(1)?;
            }
            digits = MAX_FRACTION_DIGITS;
        }
        if rounded {
            digits = MAX_FRACTION_DIGITS;
        }
    }
    Some(Count {
        int,
        micros,
        digits,
        rounded,
    })
}

/// The counts at the end of a folded line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LineCounts<'a> {
    /// The stack when the line is read as single: everything before the last token.
    pub stack: &'a [u8],
    /// The last count.
    pub last: Count,
    /// When the token before the last is a count too: the stack before both, and that
    /// count (the "before" value of a differential line).
    pub diff: Option<(&'a [u8], Count)>,
}

impl LineCounts<'_> {
    /// The second count of a differential reading, if there is one.
    pub fn right(&self) -> Option<Count> {
        self.diff.map(|_| self.last)
    }
}

/// Splits a trimmed line into stack and count(s); `None` when it does not end in a count
/// preceded by a non-empty stack.
///
/// Both counts are found by scanning back from the line's end over count bytes only
/// (digits and `.`): a token holding anything else is not a count, so the scan stops at
/// the first other byte instead of walking the whole kilobyte-long stack looking for a
/// space that frames seldom contain.
pub fn split_counts(line: &[u8]) -> Option<LineCounts<'_>> {
    let p = last_token_start(line)?;
    let last = parse_count(&line[p..])?;
    let stack = line[..p].trim_ascii_end();
    if stack.is_empty() {
        return None;
    }
    let diff = last_token_start(stack).and_then(|q| {
        let first = parse_count(&stack[q..])?;
        let s = stack[..q].trim_ascii_end();
        (!s.is_empty()).then_some((s, first))
    });
    Some(LineCounts { stack, last, diff })
}

/// Where the count-like last token of `line` starts: just after the last space or tab,
/// when every byte after it is a digit or `.`; `None` otherwise (no separator, or a token
/// that cannot be a count).
fn last_token_start(line: &[u8]) -> Option<usize> {
    let mut i = line.len();
    while i > 0 {
        match line[i - 1] {
            b' ' | b'\t' => return Some(i),
            b'0'..=b'9' | b'.' => i -= 1,
            _ => return None,
        }
    }
    None
}

/// The last token of `line` when it is written as a count (`digits[.digits]`) whose
/// integer part does not fit in 64 bits: such a line is an overflow, not malformed.
pub(super) fn overflowing_count(line: &[u8]) -> Option<&[u8]> {
    let tok = &line[last_token_start(line)?..];
    let int = tok.split(|&b| b == b'.').next()?;
    let frac_ok = tok.iter().filter(|&&b| b == b'.').count() <= 1;
    (frac_ok && !int.is_empty() && parse_count(tok).is_none()).then_some(tok)
}

/// The error for a count that does not fit in 64 bits.
fn count_overflow(count: &[u8]) -> String {
    format!(
        "the count {} is more than 2^64 - 1 (18446744073709551615)",
        String::from_utf8_lossy(&count[..count.len().min(40)])
    )
}

/// Parses a folded-stacks document (already decoded to UTF-8).
pub fn parse(file: &str, text: &[u8]) -> Result<Profile, ImportError> {
    parse_with(file, text, None)
}

/// Inputs at least this large are parsed on all cores.
pub const PARALLEL_MIN_BYTES: usize = 8 << 20;

/// [`parse`], storing the bytes consumed into `progress` every megabyte. Large inputs are
/// split at line boundaries and parsed on all cores.
pub fn parse_with(
    file: &str,
    text: &[u8],
    progress: Option<&super::Progress>,
) -> Result<Profile, ImportError> {
    let threads = crate::par::cores();
    parse_with_threads(file, text, progress, threads, PARALLEL_MIN_BYTES)
}

/// What parsing one chunk of lines produced.
struct Chunk {
    names: Names,
    builder: Option<CallTreeBuilder>,
    warnings: Warnings,
    scale_digits: u8,
    any_rounded: bool,
}

/// The mode a chunk must parse in: differential or not, and the line that decided it.
#[derive(Clone, Copy)]
struct Mode {
    diff: bool,
    decided_at: u64,
}

/// [`parse_with`] with an explicit thread count and parallel threshold (tests force
/// parallel parsing of small inputs with these).
pub fn parse_with_threads(
    file: &str,
    text: &[u8],
    progress: Option<&super::Progress>,
    threads: usize,
    min_parallel_bytes: usize,
) -> Result<Profile, ImportError> {
    let t0 = std::time::Instant::now();
    if threads <= 1 || text.len() < min_parallel_bytes.max(2) {
        let chunk = parse_chunk(file, text, 1, None, progress)?;
        super::Progress::stage(progress, "parse", t0.elapsed());
        return finish(file, chunk, progress);
    }
    // The first valid line decides the mode for every chunk, as it does sequentially.
    let mode = find_mode(text, 1);
    let Some(mode) = mode else {
        let chunk = parse_chunk(file, text, 1, None, progress)?;
        super::Progress::stage(progress, "parse", t0.elapsed());
        return finish(file, chunk, progress);
    };
    // Chunks start right after a newline.
    let results = parse_in_chunks(text, threads, next_line_start, |part, line, _| {
        parse_chunk(file, part, line, Some(mode), progress)
    });
    let chunks = results?;
    let t1 = std::time::Instant::now();
    super::Progress::stage(progress, "parse", t1 - t0);
    let merged = merge_all(file, chunks)?;
    super::Progress::stage(progress, "merge", t1.elapsed());
    finish(file, merged, progress)
}

/// The chunks' trees joined into one, in file order: in rounds, each chunk with the one
/// after it, the pairs of a round on threads of their own (on 16 cores, 16 trees took 15
/// joins one after another, 57–98 ms on one thread). A join appends the later tree's new
/// nodes in their own order, so any grouping gives the nodes (and names) the order of
/// joining them one by one: their first appearance in the file.
fn merge_all(file: &str, mut chunks: Vec<Chunk>) -> Result<Chunk, ImportError> {
    while chunks.len() > 2 {
        let mut pairs = Vec::with_capacity(chunks.len().div_ceil(2));
        let mut it = chunks.into_iter();
        while let Some(a) = it.next() {
            pairs.push((a, it.next()));
        }
        chunks = std::thread::scope(|s| {
            let handles: Vec<_> = pairs
                .into_iter()
                .map(|(mut a, b)| {
                    s.spawn(move || {
                        if let Some(b) = b {
                            merge(file, &mut a, b)?;
                        }
                        Ok(a)
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(crate::par::join)
                .collect::<Result<Vec<Chunk>, ImportError>>()
        })?;
    }
    let mut it = chunks.into_iter();
    let mut merged = it.next().expect("at least one chunk");
    for c in it {
        merge(file, &mut merged, c)?;
    }
    Ok(merged)
}

/// The mode the first valid line of `text` (whose lines are numbered from `first_line`)
/// decides.
fn find_mode(text: &[u8], first_line: u64) -> Option<Mode> {
    text.split(|&b| b == b'\n')
        .enumerate()
        .find_map(|(i, raw)| {
            split_counts(raw.trim_ascii()).map(|c| Mode {
                diff: c.diff.is_some(),
                decided_at: first_line + i as u64,
            })
        })
}

/// Parses folded stacks handed over a block of whole lines at a time by `next` (which
/// fills the block it is given and says whether there was one), so that the text is
/// never held whole: the profile is what [`parse`] gives for the blocks' concatenation.
pub fn parse_blocks(
    file: &str,
    mut next: impl FnMut(&mut Vec<u8>) -> Result<bool, ImportError>,
) -> Result<Profile, ImportError> {
    let mut block = Vec::new();
    let mut merged: Option<Chunk> = None;
    let mut mode: Option<Mode> = None;
    let mut line = 1u64;
    while next(&mut block)? {
        if mode.is_none() {
            mode = find_mode(&block, line);
        }
        let chunk = parse_chunk(file, &block, line, mode, None)?;
        line += memchr::memchr_iter(b'\n', &block).count() as u64;
        match &mut merged {
            None => merged = Some(chunk),
            Some(m) => merge(file, m, chunk)?,
        }
    }
    let chunk = match merged {
        Some(c) => c,
        None => parse_chunk(file, b"", 1, None, None)?,
    };
    finish(file, chunk, None)
}

/// Adds `other`'s samples into `into`, re-interning names; O(nodes of `other`).
fn merge(file: &str, into: &mut Chunk, other: Chunk) -> Result<(), ImportError> {
    let overflow = |e| ImportError::whole_file(file, e);
    let Some(mut ob) = other.builder else {
        into.warnings.absorb_lines(other.warnings);
        return Ok(());
    };
    // Both sides at the finer fixed-point precision.
    let digits = into.scale_digits.max(other.scale_digits);
    if other.scale_digits < digits {
        ob.rescale(10u64.pow(u32::from(digits - other.scale_digits)))
            .map_err(overflow)?;
    }
    let ib = match &mut into.builder {
        Some(b) => b,
        None => into
            .builder
            .insert(CallTreeBuilder::new(&mut into.names, ob.is_diff())),
    };
    if into.scale_digits < digits {
        ib.rescale(10u64.pow(u32::from(digits - into.scale_digits)))
            .map_err(overflow)?;
    }
    into.scale_digits = digits;
    into.any_rounded |= other.any_rounded;
    merge_nodes(ib, &mut into.names, &ob, &other.names).map_err(overflow)?;
    into.warnings.absorb_lines(other.warnings);
    Ok(())
}

/// Adds every node and self value of `from` (whose names live in `from_names`) into
/// `into` (names in `into_names`), re-interning each distinct name once; O(nodes of
/// `from`) ([`CallTreeBuilder::merge_from`]). `from`'s siblings must have distinct names
/// (a tree built with [`CallTreeBuilder::child`]).
pub(super) fn merge_nodes(
    into: &mut CallTreeBuilder,
    into_names: &mut Names,
    from: &CallTreeBuilder,
    from_names: &Names,
) -> Result<(), crate::model::tree::TotalOverflow> {
    into.merge_from(from, from_names.len(), |n| {
        into_names.intern(from_names.get(n))
    })
}

/// Parses the lines of `text`, numbered from `first_line`. `mode` fixes the differential
/// mode (parallel chunks); `None` lets the first valid line decide.
fn parse_chunk(
    file: &str,
    text: &[u8],
    first_line: u64,
    mode: Option<Mode>,
    progress: Option<&super::Progress>,
) -> Result<Chunk, ImportError> {
    let mut parser = ChunkParser::new(file, mode, text);
    let mut report = ChunkProgress::new(progress);
    let mut line_no: u64 = first_line - 1;
    let mut start = 0usize;
    while start < text.len() {
        let end = memchr::memchr(b'\n', &text[start..]).map_or(text.len(), |i| start + i);
        let raw = &text[start..end];
        start = end + 1;
        report.at(start.min(text.len()));
        line_no += 1;
        parser.line(line_no, raw.trim_ascii())?;
    }
    Ok(parser.finish())
}

/// The state of one chunk's parse; the input lines (`'t`) outlive it, so the previous
/// stack is a slice of them.
struct ChunkParser<'f, 't> {
    file: &'f str,
    names: Names,
    builder: Option<CallTreeBuilder>,
    warnings: Warnings,
    /// Fractional digits the counts are scaled by so far.
    scale_digits: u8,
    any_rounded: bool,
    /// The line that decided the mode (for the message when a later line disagrees).
    first_valid_line: u64,
    prev: PrevStack<'t>,
}

impl<'f, 't> ChunkParser<'f, 't> {
    /// A parser of the lines of `text`.
    fn new(file: &'f str, mode: Option<Mode>, text: &'t [u8]) -> Self {
        let mut names = Names::new();
        let builder = mode.map(|m| CallTreeBuilder::new(&mut names, m.diff));
        ChunkParser {
            file,
            names,
            builder,
            warnings: Warnings::default(),
            scale_digits: 0,
            any_rounded: false,
            first_valid_line: mode.map_or(0, |m| m.decided_at),
            prev: PrevStack {
                // Checked as UTF-8 at once (SIMD), so that names are sliced from it as
                // they are rather than each new frame checked again; a chunk with invalid
                // bytes checks (and lossily decodes) name by name.
                text: simdutf8::basic::from_utf8(text).ok(),
                ..PrevStack::default()
            },
        }
    }

    fn invalid(&mut self, line_no: u64, why: String) {
        self.warnings
            .invalid_line(|| format!("line {line_no}: {why}"));
    }

    fn error(&self, line_no: u64, message: String) -> ImportError {
        ImportError::Invalid {
            file: self.file.to_string(),
            location: format!("line {line_no}"),
            message,
        }
    }

    /// One trimmed line: a sample added, or a comment or invalid line counted.
    fn line(&mut self, line_no: u64, line: &'t [u8]) -> Result<(), ImportError> {
        if line.is_empty() {
            return Ok(());
        }
        let Some(counts) = split_counts(line) else {
            if let Some(count) = overflowing_count(line) {
                return Err(self.error(line_no, count_overflow(count)));
            }
            if line.starts_with(b"#") || line.starts_with(b"//") {
                self.warnings.comment_lines += 1;
            } else {
                self.invalid(
                    line_no,
                    format!(
                        "expected '<frame>;<frame>;… <count>', found {}",
                        preview(line)
                    ),
                );
            }
            return Ok(());
        };
        let Some(LineSample { stack, left, right }) = self.ticks(line_no, line, counts)? else {
            return Ok(());
        };
        let b = self.builder.as_mut().expect("set by ticks");
        let node = self.prev.place(b, &mut self.names, stack);
        let added = if b.is_diff() {
            b.add_self_diff(node, left, right)
        } else {
            b.add_self(node, right)
        };
        added.map_err(|e| self.error(line_no, e.to_string()))
    }

    /// The line's stack and its counts (before, after; before is 0 unless differential)
    /// in ticks of the chunk's scale, raising the scale when the line has more decimals.
    /// `None` (the line counted as invalid) when the line does not fit the mode or a
    /// count overflows.
    fn ticks(
        &mut self,
        line_no: u64,
        line: &[u8],
        c: LineCounts<'t>,
    ) -> Result<Option<LineSample<'t>>, ImportError> {
        let names = &mut self.names;
        let first_valid_line = &mut self.first_valid_line;
        let diff = self
            .builder
            .get_or_insert_with(|| {
                *first_valid_line = line_no;
                CallTreeBuilder::new(names, c.diff.is_some())
            })
            .is_diff();
        let (stack, left, right) = match (diff, c.diff) {
            (true, Some((s, l))) => (s, Some(l), c.last),
            (true, None) => {
                if let Some(count) = overflowing_count(c.stack) {
                    return Err(self.error(line_no, count_overflow(count)));
                }
                let why = format!(
                    "expected '<frames> <before> <after>' (line {} made this file \
                     differential), found {}",
                    self.first_valid_line,
                    preview(line)
                );
                self.invalid(line_no, why);
                return Ok(None);
            }
            (false, _) => (c.stack, None, c.last),
        };
        let need = right.digits.max(left.map_or(0, |l| l.digits));
        self.any_rounded |= right.rounded || left.is_some_and(|l| l.rounded);
        if need > self.scale_digits {
            let factor = 10u64.pow(u32::from(need - self.scale_digits));
            let b = self.builder.as_mut().expect("set above");
            if let Err(e) = b.rescale(factor) {
                let message = format!("{e} after raising the precision to {need} decimals");
                return Err(self.error(line_no, message));
            }
            self.scale_digits = need;
        }
        match (
            left.map_or(Some(0), |l| l.to_ticks(self.scale_digits)),
            right.to_ticks(self.scale_digits),
        ) {
            (Some(left), Some(right)) => Ok(Some(LineSample { stack, left, right })),
            _ => {
                self.invalid(line_no, format!("count too large: {}", preview(line)));
                Ok(None)
            }
        }
    }

    fn finish(self) -> Chunk {
        Chunk {
            names: self.names,
            builder: self.builder,
            warnings: self.warnings,
            scale_digits: self.scale_digits,
            any_rounded: self.any_rounded,
        }
    }
}

/// A valid line's stack and counts in ticks (before is 0 unless differential).
struct LineSample<'t> {
    stack: &'t [u8],
    left: u64,
    right: u64,
}

/// The previous line's stack (a slice of the input) and, per frame, its end offset in
/// that stack and its node: the frames a line shares with the line before take those
/// nodes without being split, hashed or interned again.
#[derive(Default)]
struct PrevStack<'t> {
    stack: &'t [u8],
    ends: Vec<usize>,
    nodes: Vec<NodeId>,
    /// The chunk's text, when it is UTF-8 (stacks are slices of it).
    text: Option<&'t str>,
}

impl<'t> PrevStack<'t> {
    /// The node of `stack`'s leaf frame, created where missing; `stack` becomes the
    /// previous stack.
    fn place(&mut self, b: &mut CallTreeBuilder, names: &mut Names, stack: &'t [u8]) -> NodeId {
        // A frame of the previous stack that ends inside the common prefix (or exactly at
        // it, where this stack has a frame boundary too) is the same frame at the same
        // depth.
        let lcp = common_prefix_len(self.stack, stack);
        let mut reuse = self.ends.partition_point(|&e| e < lcp);
        if reuse < self.ends.len()
            && self.ends[reuse] == lcp
            && (lcp == stack.len() || stack[lcp] == b';')
        {
            reuse += 1;
        }
        self.nodes.truncate(reuse);
        self.ends.truncate(reuse);
        let (mut node, mut frame_start) = match reuse {
            0 => (0, 0),
            d => (self.nodes[d - 1], self.ends[d - 1] + 1),
        };
        // Below a node created for this line nothing can exist yet: its children are
        // appended without the lookup.
        let mut fresh = false;
        // The stack within the checked text (frames end at ASCII bytes: slicing it there
        // always falls on character boundaries).
        let checked = self.text.and_then(|t| {
            let at = (stack.as_ptr() as usize).checked_sub(t.as_ptr() as usize)?;
            t.get(at..at + stack.len())
        });
        while frame_start <= stack.len() {
            let frame_end = memchr::memchr(b';', &stack[frame_start..])
                .map_or(stack.len(), |i| frame_start + i);
            let name = match checked.and_then(|s| s.get(frame_start..frame_end)) {
                Some(s) => names.intern(s),
                None => names.intern_bytes(&stack[frame_start..frame_end]),
            };
            node = b.path_child(node, name, &mut fresh);
            self.nodes.push(node);
            self.ends.push(frame_end);
            frame_start = frame_end + 1;
        }
        self.stack = stack;
        node
    }
}

/// Length of the common prefix of `a` and `b`, compared eight bytes at a time (stacks
/// of a kilobyte share most of their bytes with the previous line).
fn common_prefix_len(a: &[u8], b: &[u8]) -> usize {
    let n = a.len().min(b.len());
    let (a, b) = (&a[..n], &b[..n]);
    let mut i = 0;
    for (x, y) in a.chunks_exact(8).zip(b.chunks_exact(8)) {
        let word = |c: &[u8]| u64::from_le_bytes(c.try_into().unwrap_or([0; 8]));
        let diff = word(x) ^ word(y);
        if diff != 0 {
            return i + (diff.trailing_zeros() / 8) as usize;
        }
        i += 8;
    }
    i + a[i..]
        .iter()
        .zip(&b[i..])
        .take_while(|(x, y)| x == y)
        .count()
}

/// Turns a parsed (and merged) chunk into the profile, or the no-samples error.
fn finish(
    file: &str,
    chunk: Chunk,
    progress: Option<&super::Progress>,
) -> Result<Profile, ImportError> {
    let t0 = std::time::Instant::now();
    let Chunk {
        names,
        builder,
        mut warnings,
        scale_digits,
        any_rounded,
    } = chunk;
    let Some(builder) = builder else {
        let detail = warnings
            .invalid_detail("without a '<frames> <count>' form")
            .unwrap_or_else(|| "the input has no stack lines".to_string());
        return Err(ImportError::NoSamples {
            file: file.to_string(),
            detail,
        });
    };
    let diff = builder.is_diff();
    let tree = builder
        .finish(&names, ChildOrder::ByName)
        .map_err(|e| ImportError::whole_file(file, e))?;
    super::Progress::stage(progress, "tree", t0.elapsed());
    if tree.grand_total() == 0 {
        return Err(ImportError::NoSamples {
            file: file.to_string(),
            detail: "every stack has a count of 0".to_string(),
        });
    }
    if any_rounded {
        warnings.notes.push(format!(
            "counts with more than {MAX_FRACTION_DIGITS} decimals were rounded to {MAX_FRACTION_DIGITS}"
        ));
    }
    let diff_ticks = diff.then(|| {
        let l = tree.left_total(0);
        (l, tree.grand_total() - l)
    });
    Ok(Profile {
        names,
        tree,
        values: ValueFormat {
            ticks_per_unit: 10u64.pow(u32::from(scale_digits)),
            ..ValueFormat::default()
        },
        meta: ProfileMeta {
            diff_ticks,
            ..ProfileMeta::new(
                file,
                if diff {
                    SourceFormat::FoldedDiff
                } else {
                    SourceFormat::Folded
                },
                warnings,
            )
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load(s: &str) -> Profile {
        parse("t.txt", s.as_bytes()).unwrap()
    }

    fn child_named(p: &Profile, parent: NodeId, name: &str) -> NodeId {
        *p.tree
            .children(parent)
            .iter()
            .find(|&&c| p.names.get(p.tree.name(c)) == name)
            .unwrap_or_else(|| panic!("no child {name}"))
    }

    /// A chunk that is UTF-8 has its names sliced from the text checked once; one with
    /// an invalid byte anywhere checks them one by one and decodes the bad one lossily.
    /// Either way the same names and the same tree.
    #[test]
    fn names_from_checked_and_unchecked_text_are_the_same() {
        let good = b"main;f\xc3\xa9e;b 3\nmain;g 2\nmain;f\xc3\xa9e;c 1\n".to_vec();
        let mut bad = good.clone();
        bad.extend_from_slice(b"main;x\xffy 4\n");
        let (g, b) = (
            parse("g.txt", &good).unwrap(),
            parse("b.txt", &bad).unwrap(),
        );
        for p in [&g, &b] {
            let main = child_named(p, 0, "main");
            let fee = child_named(p, main, "f\u{e9}e");
            assert_eq!(p.tree.total(child_named(p, fee, "b")), 3);
            assert_eq!(p.tree.total(child_named(p, main, "g")), 2);
        }
        let xy = child_named(&b, child_named(&b, 0, "main"), "x\u{fffd}y");
        assert_eq!(b.tree.total(xy), 4);
        assert_eq!(b.tree.grand_total(), g.tree.grand_total() + 4);
    }

    #[test]
    fn counts() {
        let c = parse_count(b"31.23").unwrap();
        assert_eq!((c.int, c.micros, c.digits), (31, 230_000, 2));
        assert_eq!(c.to_ticks(2), Some(3123));
        assert_eq!(c.to_ticks(4), Some(312_300));
        assert_eq!(parse_count(b"6.").unwrap().to_ticks(0), Some(6));
        assert_eq!(parse_count(b"19.0").unwrap().digits, 0);
        let r = parse_count(b"14.2343983248722834234").unwrap();
        assert!(r.rounded);
        assert_eq!(r.to_ticks(6), Some(14_234_398));
        assert_eq!(
            parse_count(b"0.9999999").unwrap().to_ticks(6),
            Some(1_000_000)
        );
        assert!(parse_count(b"12V.43").is_none());
        assert!(parse_count(b".5").is_none());
        assert!(parse_count(b"-3").is_none());
        assert!(parse_count(b"99999999999999999999999").is_none());
    }

    #[test]
    fn simple_file_with_invalids_and_comments() {
        let p = load(
            "# comment that gives extra info\n// other\na;b;c 1\na;b;c 1\na;b;d 4\na;b;c 3\na;b 5\ninvalid line\n",
        );
        assert_eq!(p.tree.grand_total(), 14);
        assert_eq!(p.meta.warnings.invalid_lines, 1);
        assert_eq!(p.meta.warnings.comment_lines, 2);
        assert!(
            p.meta
                .warnings
                .first_invalid
                .as_deref()
                .unwrap()
                .starts_with("line 8:")
        );
        let a = child_named(&p, 0, "a");
        let b = child_named(&p, a, "b");
        assert_eq!((p.tree.total(b), p.tree.self_ticks(b)), (14, 5));
        assert_eq!(p.tree.total(child_named(&p, b, "c")), 5);
    }

    #[test]
    fn fractional_precision_rises_mid_file() {
        let p = load("a;b 3\na;c 6.1\na;d 31.23\n");
        assert_eq!(p.values.ticks_per_unit, 100);
        assert_eq!(p.tree.grand_total(), 300 + 610 + 3123);
        let a = child_named(&p, 0, "a");
        assert_eq!(p.tree.total(child_named(&p, a, "b")), 300);
    }

    #[test]
    fn crlf_spaces_and_tabs() {
        let p = load("a;b c 1\r\na;b c\t2\r\n\r\n");
        assert_eq!(p.tree.grand_total(), 3);
        let a = child_named(&p, 0, "a");
        assert_eq!(p.tree.total(child_named(&p, a, "b c")), 3);
    }

    #[test]
    fn differential_lines() {
        let p = load("a;b 6 4\na;c 0 12\na 3 0\n");
        assert_eq!(p.meta.format, SourceFormat::FoldedDiff);
        assert_eq!(p.meta.diff_ticks, Some((9, 16)));
        let a = child_named(&p, 0, "a");
        let c = child_named(&p, a, "c");
        assert_eq!((p.tree.left_total(c), p.tree.total(c)), (0, 12));
        assert_eq!(p.tree.left_self(a), 3);
    }

    #[test]
    fn diff_file_rejects_single_count_lines() {
        let p = load("a;b 6 4\na;c 5\n");
        assert_eq!(p.meta.warnings.invalid_lines, 1);
        assert!(
            p.meta
                .warnings
                .first_invalid
                .as_deref()
                .unwrap()
                .contains("differential")
        );
    }

    #[test]
    fn prefix_reuse_matches_fresh_parse() {
        // Lines sharing prefixes at and off frame boundaries.
        let text = "ab;cd;e 1\nab;cd;ef 2\nab;c;e 3\nab;cd 4\nab;cd;e;f 5\nab 6\nabc;d 7\n";
        let p = load(text);
        let mut paths: Vec<(String, u64)> = Vec::new();
        for n in 1..p.tree.len() as NodeId {
            paths.push((p.tree.path_text(&p.names, n), p.tree.self_ticks(n)));
        }
        paths.retain(|(_, s)| *s > 0);
        paths.sort();
        let mut want: Vec<(String, u64)> = text
            .lines()
            .map(|l| {
                let (s, c) = l.rsplit_once(' ').unwrap();
                (s.to_string(), c.parse().unwrap())
            })
            .collect();
        want.sort();
        assert_eq!(paths, want);
    }

    /// Prefix reuse against a fresh split of every line: frames that are prefixes of one
    /// another, empty frames, stacks that extend or shorten the previous one.
    #[test]
    fn prefix_reuse_matches_fresh_parse_randomized() {
        let frames = ["a", "ab", "abc", "", "b", "a;b", "ba"];
        let mut rng = crate::testing::Lcg::new(99u64);
        let mut next = move || rng.next_usize();
        let mut text = String::new();
        let mut want: Vec<(String, u64)> = Vec::new();
        let mut prev: Vec<&str> = Vec::new();
        for i in 0..4000u64 {
            // Mostly a variation of the previous stack, as in real files.
            let keep = if prev.is_empty() {
                0
            } else {
                next() % (prev.len() + 1)
            };
            let mut stack: Vec<&str> = prev[..keep].to_vec();
            for _ in 0..next() % 4 {
                stack.push(frames[next() % frames.len()]);
            }
            if stack.is_empty() {
                stack.push("root");
            }
            let joined = stack.join(";");
            if joined.trim().is_empty() {
                continue;
            }
            text.push_str(&format!("{joined} {}\n", i % 5 + 1));
            want.push((joined, i % 5 + 1));
            prev = stack;
        }
        let p = load(&text);
        let mut fresh = Names::new();
        let mut b = CallTreeBuilder::new(&mut fresh, false);
        for (stack, v) in &want {
            let mut node = 0;
            for f in stack.split(';') {
                let id = fresh.intern(f);
                node = b.child(node, id);
            }
            b.add_self(node, *v).unwrap();
        }
        let t = b.finish(&fresh, ChildOrder::ByName).unwrap();
        let paths = |names: &Names, tree: &crate::model::CallTree| {
            let mut v: Vec<(String, u64, u64)> = (1..tree.len() as NodeId)
                .map(|n| (tree.path_text(names, n), tree.self_ticks(n), tree.total(n)))
                .collect();
            v.sort();
            v
        };
        assert_eq!(paths(&p.names, &p.tree), paths(&fresh, &t));
        assert_eq!(p.tree.len(), t.len());
    }

    #[test]
    fn common_prefix_at_every_offset() {
        let a: Vec<u8> = (0..40u8).collect();
        for k in 0..=40 {
            let mut b = a.clone();
            if k < 40 {
                b[k] ^= 0xff;
            }
            assert_eq!(common_prefix_len(&a, &b), k);
            assert_eq!(common_prefix_len(&a[..k], &b), k);
        }
    }

    #[test]
    fn counts_are_found_from_the_end() {
        let c = split_counts(b"a b;c 12 34").unwrap();
        assert_eq!(c.stack, b"a b;c 12");
        assert_eq!(c.diff.map(|d| d.0), Some(&b"a b;c"[..]));
        // A token before the count that is not a number: a single-count line.
        assert!(split_counts(b"a;b x12 3").unwrap().diff.is_none());
        assert!(split_counts(b"a;b 1.2.3").is_none());
        assert!(split_counts(b"a;b x3").is_none());
        assert!(split_counts(b"12").is_none());
    }

    #[test]
    fn no_valid_lines_is_an_error() {
        let e = parse("n.txt", b"main\tclass=inferno\ncksum\ttitle=bar\n").unwrap_err();
        let msg = e.to_string();
        assert!(
            msg.starts_with("n.txt: no stack samples found: 2 lines"),
            "{msg}"
        );
        assert!(msg.contains("line 1"), "{msg}");
        let z = parse("z.txt", b"a;b 0\n").unwrap_err();
        assert!(z.to_string().contains("count of 0"));
    }

    /// A canonical dump: sorted (path, self, left self), totals, scale and warnings.
    fn dump(p: &Profile) -> (Vec<(String, u64, u64)>, u64, u64, Warnings) {
        let mut v = Vec::new();
        for n in 1..p.tree.len() as NodeId {
            if p.tree.self_ticks(n) > 0 {
                let path = p.tree.path_text(&p.names, n);
                v.push((path, p.tree.self_ticks(n), p.tree.left_self(n)));
            }
        }
        v.sort();
        (
            v,
            p.tree.grand_total(),
            p.values.ticks_per_unit,
            p.meta.warnings.clone(),
        )
    }

    fn random_folded(seed: u64, lines: usize, diff: bool) -> String {
        let mut rng = crate::testing::Lcg::new(seed);
        let mut next = move || rng.next_u64();
        let mut out = String::new();
        for i in 0..lines {
            match next() % 50 {
                0 => out.push_str("this line is broken\n"),
                1 => out.push_str("# a comment\n"),
                2 => out.push('\n'),
                _ => {
                    let depth = 1 + next() % 8;
                    let frames: Vec<String> =
                        (0..depth).map(|_| format!("f{}", next() % 6)).collect();
                    let count = |n: u64| {
                        if n.is_multiple_of(9) {
                            format!("{}.{}", n % 13, n % 97)
                        } else {
                            format!("{}", n % 40)
                        }
                    };
                    if diff {
                        out.push_str(&format!(
                            "{} {} {}\n",
                            frames.join(";"),
                            count(next()),
                            count(next())
                        ));
                    } else {
                        out.push_str(&format!("{} {}\n", frames.join(";"), count(next())));
                    }
                }
            }
            let _ = i;
        }
        out
    }

    #[test]
    fn parallel_parse_equals_sequential() {
        for (seed, diff) in [(1, false), (2, false), (3, true), (4, true), (5, false)] {
            let text = random_folded(seed, 3000, diff);
            let seq = parse_with_threads("r", text.as_bytes(), None, 1, usize::MAX).unwrap();
            for threads in [2, 3, 7, 16] {
                let par = parse_with_threads("r", text.as_bytes(), None, threads, 1).unwrap();
                assert_eq!(dump(&seq), dump(&par), "seed {seed}, {threads} threads");
                assert_eq!(par.meta.format, seq.meta.format);
                // The same nodes in the same order: the parts' trees are joined as if
                // their lines had been read one after another.
                let paths = |p: &Profile| -> Vec<String> {
                    (1..p.tree.len() as NodeId)
                        .map(|n| p.tree.path_text(&p.names, n))
                        .collect()
                };
                assert_eq!(paths(&seq), paths(&par), "seed {seed}, {threads} threads");
            }
        }
        // Precision raised only in a later chunk, and invalid lines only in an early one.
        let mut text = String::from("bad\n");
        for i in 0..500 {
            text.push_str(&format!("a;b{} {}\n", i % 3, i));
        }
        text.push_str("a;c 1.25\n");
        let seq = parse_with_threads("r", text.as_bytes(), None, 1, usize::MAX).unwrap();
        let par = parse_with_threads("r", text.as_bytes(), None, 4, 1).unwrap();
        assert_eq!(dump(&seq), dump(&par));
        assert_eq!(par.values.ticks_per_unit, 100);
        assert!(
            par.meta
                .warnings
                .first_invalid
                .as_deref()
                .unwrap()
                .starts_with("line 1:")
        );
    }

    /// Feeds `text` to [`parse_blocks`] in blocks of whole lines of about `size` bytes.
    fn parse_in_blocks(text: &[u8], size: usize) -> Result<Profile, ImportError> {
        let mut rest = text;
        parse_blocks("r", |block| {
            block.clear();
            if rest.is_empty() {
                return Ok(false);
            }
            let end = rest
                .iter()
                .skip(size)
                .position(|&b| b == b'\n')
                .map_or(rest.len(), |p| size + p + 1);
            block.extend_from_slice(&rest[..end]);
            rest = &rest[end..];
            Ok(true)
        })
    }

    /// Issue 14, failure 5: a gzip of folded lines was decompressed whole before it was
    /// parsed. Parsed a block at a time, it gives what one parse of the whole text does:
    /// counts, precision, modes, invalid lines and their line numbers.
    #[test]
    fn gzip_bombs_abort_parsed_in_blocks_as_whole() {
        for (seed, diff) in [(1, false), (2, false), (3, true), (4, true), (5, false)] {
            let text = random_folded(seed, 3000, diff);
            let whole = parse_with_threads("r", text.as_bytes(), None, 1, usize::MAX).unwrap();
            for size in [1, 100, 5000, 1 << 20] {
                let blocks = parse_in_blocks(text.as_bytes(), size).unwrap();
                assert_eq!(dump(&whole), dump(&blocks), "seed {seed}, blocks of {size}");
                assert_eq!(blocks.meta.format, whole.meta.format);
            }
        }
        let mut text = String::from("bad\n");
        for i in 0..500 {
            text.push_str(&format!("a;b{} {}\n", i % 3, i));
        }
        text.push_str("a;c 1.25\n");
        let whole = parse("r", text.as_bytes()).unwrap();
        let blocks = parse_in_blocks(text.as_bytes(), 64).unwrap();
        assert_eq!(dump(&whole), dump(&blocks));
        assert_eq!(blocks.values.ticks_per_unit, 100);
        // The first valid line decides the mode for later blocks, with its line number.
        let mut text = String::from("a;b 6 4\n");
        for i in 0..500 {
            text.push_str(&format!("a;b{} {} 1\n", i % 3, i));
        }
        text.push_str("a;c 5\n");
        let blocks = parse_in_blocks(text.as_bytes(), 64).unwrap();
        assert_eq!(dump(&parse("r", text.as_bytes()).unwrap()), dump(&blocks));
        let first = blocks.meta.warnings.first_invalid.unwrap();
        assert!(
            first.starts_with("line 502:") && first.contains("differential"),
            "{first}"
        );
        let none = parse_in_blocks(b"", 64).unwrap_err().to_string();
        assert_eq!(none, parse("r", b"").unwrap_err().to_string());
    }

    /// Issue 14, failure 9: a count of 10^22 (more than 64 bits hold) was "a line without
    /// a '<frames> <count>' form"; it is an overflow of the count, at its line.
    #[test]
    fn a_folded_count_of_10_22_reported_as_a_malformed_line() {
        let e = parse("o.txt", b"a;b 3\na;c 10000000000000000000000\n").unwrap_err();
        let msg = e.to_string();
        assert!(
            msg.starts_with("o.txt: line 2: the count 10000000000000000000000 is more than 2^64"),
            "{msg}"
        );
        let e = parse("o.txt", b"a;b 18446744073709551616.5\n").unwrap_err();
        assert!(
            e.to_string()
                .contains("line 1: the count 18446744073709551616.5"),
            "{e}"
        );
        // The before count of a differential line too.
        let e = parse("d.txt", b"a;b 1 2\na;c 10000000000000000000000 2\n").unwrap_err();
        assert!(
            e.to_string()
                .contains("line 2: the count 10000000000000000000000"),
            "{e}"
        );
        // The largest count is not an overflow; a malformed count is still malformed.
        assert!(parse("m.txt", b"a 18446744073709551615\n").is_ok());
        let e = parse("m.txt", b"a 1.2.3\nb 1\n").unwrap();
        assert_eq!(e.meta.warnings.invalid_lines, 1);
        // Detection takes such a file for folded stacks, whatever its name.
        let one = b"a;b 10000000000000000000000\n";
        assert_eq!(
            super::super::detect::detect(one, Some("big.txt")),
            Ok(crate::model::SourceFormat::Folded)
        );
    }

    #[test]
    fn huge_counts_overflow_cleanly() {
        let e = parse("o.txt", b"a 18446744073709551615\nb 1\n").unwrap_err();
        assert!(e.to_string().contains("2^64"), "{e}");
    }
}
