//! `perf script` text: one block per sample, an event line and its stack, leaf first.
//!
//! ```text
//! java 12688/12764 [002] 6544038.708352:   10101010 cpu-clock:
//!         ffffffff8103ce3b native_safe_halt+0xb ([kernel.kallsyms])
//!             7f533952bc77 _dl_check_map_versions+0x597 (/usr/lib/ld-2.28.so)
//!
//! ```
//!
//! The result is what `inferno-collapse-perf` with default options folds the same text
//! into (its results files are the oracle of `tests/corpus.rs`), turned into a tree
//! directly, without a folded string per sample: the command name is the root frame
//! (spaces become `_`), then the frames root first. A sample weighs its period when the
//! event line states one right before the event type (`10101010 cpu-clock:`), else 1,
//! as in inferno 0.12.
//! Replicated rules, in inferno's order:
//! - a line starting with `#` is skipped; a blank (whitespace-only) line ends a sample;
//! - event line: the command is everything before the first all-digit word (`pid` or
//!   `pid/tid`); the event type is the last word before the second `:` after it. Only
//!   samples of the first event type seen are kept (merging `cycles` with `instructions`
//!   would mislead); the others are counted in a note. Text after the event (`cycles:u:
//!   ffff… sym (dso)`) is a one-frame stack;
//! - stack line: `address symbol (module)`; a `+0x…` offset is stripped; a symbol
//!   starting with `(` is dropped; Rust symbols with a hash are demangled the rest of the
//!   way; `a->b` (Java inlining) gives frames `a` and `b_[i]`; `[unknown]` becomes the
//!   module's file name in brackets when the module is known; `;` becomes `:`; the
//!   argument list is cut at the first top-level `(` (not Go's `.(`, not C++'s
//!   `(anonymous namespace)`); for commands starting with `java` a leading `L` of a
//!   class path goes;
//! - one extension: a tab separates fields like a space (simpleperf writes
//!   `comm\tpid …` and `addr\tsymbol (module)`, of which inferno reads nothing);
//! - a line that is neither where one was expected is skipped and counted as invalid
//!   (inferno logs "weird event line"/"weird stack line"), with the first one reported
//!   with its line number; a sample without frames is dropped and counted in a note.
//!
//! Speed: lines are found with `memchr`, fields are byte slices of the input, and a
//! frame's name is interned straight from its slice (a reused scratch buffer only when a
//! rule rewrites it), so the hot loop allocates nothing per line. Consecutive samples
//! share their root side, which `perf script` prints last: a sample's block of stack
//! lines is compared from its end with the previous block (same command), and the
//! byte-identical lines take that block's frame ids without being parsed or interned
//! again (only lines that parsed without a warning, so no warning is lost). The path of
//! the previous sample (as name ids) is kept too, and its tree nodes are reused up to
//! the first difference, without hashing. Inputs of at
//! least [`PARALLEL_MIN_BYTES`] are split at blank lines (where the state machine is
//! always back at its start) and parsed on all cores; the per-thread stack tables are
//! merged ([`StackTable::absorb`]). The event
//! type to keep is found first by a cheap scan, so every chunk filters as the sequential
//! parse would: the result is identical (a test checks it).

use super::ImportError;
use super::chunks::ChunkProgress;
use super::folded::PARALLEL_MIN_BYTES;
use super::text::preview;
use crate::model::samples::{EMPTY_STACK, StackId, StackTable, Stream, ThreadInfo};
use crate::model::units::Unit;
use crate::model::{NameId, Names, SourceFormat, ValueFormat, Warnings};
use std::collections::HashMap;
use std::ops::Range;

pub use crate::model::samples::Samples;

/// Parses `perf script` output (already decoded to UTF-8) into its call tree (the first
/// event's samples, as inferno folds them).
pub fn parse(file: &str, text: &[u8]) -> Result<crate::model::Profile, ImportError> {
    let samples = parse_with(file, text, None)?;
    samples
        .aggregate(Default::default())
        .map_err(|e| ImportError::whole_file(file, e))
}

/// [`parse`], adding the bytes consumed to `progress` every megabyte; large inputs are
/// parsed on all cores.
pub fn parse_with(
    file: &str,
    text: &[u8],
    progress: Option<&super::Progress>,
) -> Result<Samples, ImportError> {
    let threads = crate::par::cores();
    parse_with_threads(file, text, progress, threads, PARALLEL_MIN_BYTES)
}

/// [`parse_with`] with an explicit thread count and parallel threshold (tests force
/// parallel parsing of small inputs with these).
pub fn parse_with_threads(
    file: &str,
    text: &[u8],
    progress: Option<&super::Progress>,
    threads: usize,
    min_parallel_bytes: usize,
) -> Result<Samples, ImportError> {
    let t0 = std::time::Instant::now();
    if threads <= 1 || text.len() < min_parallel_bytes.max(2) {
        let mut p = Parser::new();
        p.run(file, text, 1, progress)?;
        super::Progress::stage(progress, "parse", t0.elapsed());
        return finish(file, p, progress);
    }
    // Chunks start right after a blank line (between samples).
    let results =
        super::chunks::parse_in_chunks(text, threads, next_blank_line_end, |part, line, _| {
            let mut p = Parser::new();
            p.run(file, part, line, progress).map(|()| p)
        });
    let mut parts = results?;
    let t1 = std::time::Instant::now();
    super::Progress::stage(progress, "parse", t1 - t0);
    let mut merged = parts.remove(0);
    for p in parts {
        merged.absorb(p);
    }
    super::Progress::stage(progress, "merge", t1.elapsed());
    finish(file, merged, progress)
}

/// Whitespace as Rust's `str::trim` sees it, for ASCII (inferno trims with it).
fn is_ws(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r' | 0x0B | 0x0C)
}

/// `line` without trailing whitespace; a non-ASCII tail is trimmed as `str` would.
pub(super) fn trim_end(line: &[u8]) -> &[u8] {
    let end = line.iter().rposition(|&b| !is_ws(b)).map_or(0, |e| e + 1);
    let line = &line[..end];
    match line.last() {
        Some(&b) if b >= 0x80 => match std::str::from_utf8(line) {
            Ok(s) => s.trim_end().as_bytes(),
            Err(_) => line,
        },
        _ => line,
    }
}

/// `line` without leading whitespace; a non-ASCII head is trimmed as `str` would.
fn trim_start(line: &[u8]) -> &[u8] {
    let start = line.iter().position(|&b| !is_ws(b)).unwrap_or(line.len());
    let line = &line[start..];
    match line.first() {
        Some(&b) if b >= 0x80 => match std::str::from_utf8(line) {
            Ok(s) => s.trim_start().as_bytes(),
            Err(_) => line,
        },
        _ => line,
    }
}

fn trim(line: &[u8]) -> &[u8] {
    trim_start(trim_end(line))
}

/// The offset just past the first blank line that ends at or after `from`.
pub(super) fn next_blank_line_end(text: &[u8], from: usize) -> Option<usize> {
    // Start at the beginning of the line holding `from`.
    let mut start = memchr::memrchr(b'\n', &text[..from]).map_or(0, |i| i + 1);
    while start < text.len() {
        let end = memchr::memchr(b'\n', &text[start..]).map_or(text.len(), |i| start + i);
        if start >= from && trim_end(&text[start..end]).is_empty() {
            return Some((end + 1).min(text.len()));
        }
        start = end + 1;
    }
    None
}

/// An event line's parts: the command (trimmed), the `pid[/tid]` word and where the text
/// after it starts.
/// inferno's rule: the first all-digit word (optionally `pid/tid`) that follows a
/// space and is followed by a space ends the command (tabs count as spaces here).
/// Beyond inferno: a sample whose thread perf could not find (one that had exited when
/// `perf script` ran; seen on `sched:sched_switch` recordings) is printed with the
/// command `:-1` and the pid `-1` (or `-1/-1`); that word is its pid too.
fn event_line_pid(line: &[u8]) -> Option<(&[u8], Range<usize>, usize)> {
    let mut word_start = 0usize;
    let mut all_digits = false;
    let mut last_was_space = false;
    for (i, &c) in line.iter().enumerate() {
        if c == b' ' || c == b'\t' {
            let unknown_thread = || {
                matches!(&line[word_start..i], b"-1" | b"-1/-1")
                    && trim(&line[..word_start - 1]) == b":-1"
            };
            if !last_was_space && word_start > 0 && (all_digits || unknown_thread()) {
                return Some((trim(&line[..word_start - 1]), word_start..i, i + 1));
            }
            word_start = i + 1;
            all_digits = true;
        } else if c != b'/' && !c.is_ascii_digit() {
            all_digits = false;
        }
        last_was_space = c == b' ' || c == b'\t';
    }
    None
}

/// What an event line says after the pid.
struct EventFields {
    /// The timestamp (`6544038.708352:`), nanoseconds.
    time: Option<u64>,
    /// The event type (`cycles`), relative to the text after the pid.
    event: Option<Range<usize>>,
    /// `Some` when the line has an event part: the period before the event type, if that
    /// word is a number (inferno weights the sample by it).
    period: Option<Option<u64>>,
    /// A one-frame stack following the event.
    post: Option<Range<usize>>,
    /// What follows the event when it is not a stack (a tracepoint's fields).
    payload: Option<Range<usize>>,
}

/// The event type, period and the text after them (a one-frame stack) in what follows the
/// pid: `6544038.708352:   10101010 cycles:u:  ffff… sym (dso)` gives `cycles`, 10101010
/// and `ffff… sym (dso)`. The event is the first word after the time (and the period, a
/// number) that ends with `:`: a tracepoint keeps its subsystem (`sched:sched_switch`),
/// a counter loses its modifiers (`cycles:u`, `cpu-clock:uhH` are `cycles`,
/// `cpu-clock`, as inferno groups them). What follows is a one-frame stack only when it
/// starts with an address; a tracepoint's payload (`prev_comm=bash …`) is not.
fn event_fields(after: &[u8]) -> EventFields {
    let Some(c1) = memchr::memchr(b':', after) else {
        return EventFields {
            time: None,
            event: None,
            period: None,
            post: None,
            payload: None,
        };
    };
    let head = &after[..c1];
    let time_word = &head[memchr::memrchr2(b' ', b'\t', head).map_or(0, |i| i + 1)..];
    // Words after the time: [period] event: [rest].
    let words = |from: usize| {
        let mut i = from;
        std::iter::from_fn(move || {
            while i < after.len() && (after[i] == b' ' || after[i] == b'\t') {
                i += 1;
            }
            if i >= after.len() {
                return None;
            }
            let start = i;
            while i < after.len() && after[i] != b' ' && after[i] != b'\t' {
                i += 1;
            }
            Some(start..i)
        })
    };
    let mut it = words(c1 + 1);
    let mut period = None;
    let mut ev_word = it.next();
    if let Some(w) = &ev_word
        && let Some(p) = parse_u64(&after[w.clone()])
    {
        period = Some(p);
        ev_word = it.next();
    }
    let Some(ev_word) = ev_word else {
        return EventFields {
            time: parse_seconds(time_word),
            event: None,
            period: Some(period),
            post: None,
            payload: None,
        };
    };
    let word = &after[ev_word.clone()];
    let mut name_end = ev_word.start + word.iter().rposition(|&b| b != b':').map_or(0, |i| i + 1);
    // `cycles:u` → `cycles`: a last `:` part of modifier letters only.
    if let Some(k) = memchr::memrchr(b':', &after[ev_word.start..name_end]) {
        let suffix = &after[ev_word.start + k + 1..name_end];
        if !suffix.is_empty() && suffix.iter().all(|b| b"ukhHGpPSDIWe".contains(b)) {
            name_end = ev_word.start + k;
        }
    }
    let event = Some(ev_word.start..name_end);
    let body = trim(&after[ev_word.end..]);
    let post = (!body.is_empty()
        && body
            .iter()
            .take_while(|&&b| b != b' ' && b != b'\t')
            .all(u8::is_ascii_hexdigit))
    .then(|| {
        let start = body.as_ptr() as usize - after.as_ptr() as usize;
        start..start + body.len()
    });
    let payload = (post.is_none() && !body.is_empty()).then(|| {
        let start = body.as_ptr() as usize - after.as_ptr() as usize;
        start..start + body.len()
    });
    EventFields {
        time: parse_seconds(time_word),
        event,
        period: Some(period),
        post,
        payload,
    }
}

/// `6544038.708352` (seconds, up to nanosecond digits) as nanoseconds.
fn parse_seconds(word: &[u8]) -> Option<u64> {
    let (int, frac) = match memchr::memchr(b'.', word) {
        Some(i) => (&word[..i], &word[i + 1..]),
        None => (word, &b""[..]),
    };
    if int.is_empty() || frac.len() > 9 || !frac.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let secs = parse_u64(int)?;
    let mut ns = 0u64;
    for i in 0..9 {
        ns = ns * 10 + frac.get(i).map_or(0, |d| u64::from(d - b'0'));
    }
    secs.checked_mul(1_000_000_000)?.checked_add(ns)
}

/// `pid/tid` or `pid` (perf prints `tid` alone when it has no pid).
fn parse_pid_tid(word: &[u8]) -> (Option<i64>, Option<i64>) {
    let num = |w: &[u8]| parse_u64(w).and_then(|v| i64::try_from(v).ok());
    match memchr::memchr(b'/', word) {
        Some(i) => (num(&word[..i]), num(&word[i + 1..])),
        None => {
            let v = num(word);
            (v, v)
        }
    }
}

/// A decimal `u64` as Rust's `str::parse` reads one (an optional `+`, then digits).
fn parse_u64(word: &[u8]) -> Option<u64> {
    let digits = word.strip_prefix(b"+").unwrap_or(word);
    if digits.is_empty() {
        return None;
    }
    let mut v: u64 = 0;
    for &d in digits {
        if !d.is_ascii_digit() {
            return None;
        }
        v = v.checked_mul(10)?.checked_add(u64::from(d - b'0'))?;
    }
    Some(v)
}

/// A stack line's `(pc, rawfunc, module)`; `None` when it has not that shape.
fn stack_line_parts(line: &[u8]) -> Option<(&[u8], &[u8], &[u8])> {
    let line = trim_start(line);
    let sp = memchr::memchr2(b' ', b'\t', line)?;
    let pc = &line[..sp];
    let rest = &line[sp + 1..];
    let sp2 = memchr::memrchr(b' ', rest)?;
    let module = &rest[sp2 + 1..];
    if module.len() < 2 || module[0] != b'(' || module[module.len() - 1] != b')' {
        return None;
    }
    let module = &module[1..module.len() - 1];
    let rawfunc = match trim(&rest[..sp2]) {
        // Two spaces between pc and `(`: inferno (after the Perl script) names it " ".
        b"" => b" ".as_slice(),
        s => s,
    };
    Some((pc, rawfunc, module))
}

/// A stack line written without its module, as `perf script -F ip,sym` (any field list
/// without `dso`) writes them: `(pc, rawfunc, "[unknown]")`. So that other indented text
/// is not taken for a frame, the line must have perf's own shape: a tab, the address
/// right-aligned in 16 columns (`\t           d4ad7 __GI___execve`), a space, the symbol.
/// A symbol whose last `(` is never closed is a full line cut short inside its module
/// (`\t    7fa4c73bc184 start_thread (/lib/x86_64-linux-gnu`), so it is not a frame.
fn bare_stack_line_parts(line: &[u8]) -> Option<(&[u8], &[u8], &[u8])> {
    let body = line.strip_prefix(b"\t")?;
    let (field, rest) = (body.get(..16)?, body.get(16..)?);
    let digits = field.iter().position(|&c| c != b' ')?;
    let pc = &field[digits..];
    let rawfunc = trim(rest.strip_prefix(b" ")?);
    let cut_module = memchr::memrchr(b'(', rawfunc)
        .is_some_and(|open| memchr::memchr(b')', &rawfunc[open..]).is_none());
    (pc.iter().all(u8::is_ascii_hexdigit) && !rawfunc.is_empty() && !cut_module).then_some((
        pc,
        rawfunc,
        b"[unknown]".as_slice(),
    ))
}

/// True when `line` has the shape of a stack line, `pc symbol (module)` (detection's
/// test for short addresses).
pub(super) fn is_stack_line(line: &[u8]) -> bool {
    stack_line_parts(line).is_some()
}

/// Where inferno's `tidy_generic` cuts the argument list: the first `(` outside
/// `<>`, `{}`, `[]` and parentheses that is neither Go's `.(` nor `(anonymous namespace)`.
fn param_cut(f: &[u8]) -> usize {
    if memchr::memchr(b'(', f).is_none() {
        return f.len();
    }
    let mut depth: i64 = 0;
    let mut after_dot = usize::MAX;
    for (i, &c) in f.iter().enumerate() {
        match c {
            b'<' | b'{' | b'[' => depth += 1,
            b'>' | b'}' | b']' | b')' => depth -= 1,
            b'(' => {
                if depth == 0 && after_dot != i && !f[i..].starts_with(b"(anonymous namespace)") {
                    return i;
                }
                depth += 1;
            }
            b'.' => after_dot = i + 1,
            _ => {}
        }
    }
    f.len()
}

/// The last `+0x` in `f`. (A hand loop over `memrchr`: `memmem::rfind` builds a
/// searcher per call, which costs more than the search on a 40-byte name.)
fn rfind_offset(f: &[u8]) -> Option<usize> {
    let mut end = f.len();
    while let Some(i) = memchr::memrchr(b'+', &f[..end]) {
        if f[i + 1..].starts_with(b"0x") {
            return Some(i);
        }
        end = i;
    }
    None
}

/// The first `->` in `f` (Java inlining), found by its rarer `>`.
fn find_arrow(f: &[u8]) -> Option<usize> {
    let mut from = 0;
    while let Some(i) = memchr::memchr(b'>', &f[from..]) {
        let at = from + i;
        if at > 0 && f[at - 1] == b'-' {
            return Some(at - 1);
        }
        from = at + 1;
    }
    None
}

/// Length of a Rust legacy hash suffix (`h` and 16 hex digits).
const RUST_HASH_LEN: usize = 17;

/// Finishes demangling a Rust symbol that ends in a legacy hash (`::h0123…`), as
/// inferno's `fix_partially_demangled_rust_symbol` does, into `out`; false (and `out`
/// untouched) when `sym` has no such hash.
fn fix_rust_symbol(sym: &[u8], out: &mut Vec<u8>) -> bool {
    if sym.len() < RUST_HASH_LEN {
        return false;
    }
    let hash = &sym[sym.len() - RUST_HASH_LEN..];
    if hash[0] != b'h' || !hash[1..].iter().all(u8::is_ascii_hexdigit) {
        return false;
    }
    let mut rest = &sym[..sym.len() - RUST_HASH_LEN];
    if rest.ends_with(b"::") {
        rest = &rest[..rest.len() - 2];
    }
    if rest.starts_with(b"_$") {
        rest = &rest[1..];
    }
    const ESCAPES: [(&[u8], &[u8]); 20] = [
        (b"$SP$", b"@"),
        (b"$BP$", b"*"),
        (b"$RF$", b"&"),
        (b"$LT$", b"<"),
        (b"$GT$", b">"),
        (b"$LP$", b"("),
        (b"$RP$", b")"),
        (b"$C$", b","),
        (b"$u7e$", b"~"),
        (b"$u20$", b" "),
        (b"$u27$", b"'"),
        (b"$u3d$", b"="),
        (b"$u5b$", b"["),
        (b"$u5d$", b"]"),
        (b"$u7b$", b"{"),
        (b"$u7d$", b"}"),
        (b"$u3b$", b";"),
        (b"$u2b$", b"+"),
        (b"$u21$", b"!"),
        (b"$u22$", b"\""),
    ];
    out.clear();
    while !rest.is_empty() {
        if rest[0] == b'.' {
            if rest.get(1) == Some(&b'.') {
                out.extend_from_slice(b"::");
                rest = &rest[2..];
            } else {
                out.push(b'.');
                rest = &rest[1..];
            }
        } else if rest[0] == b'$' {
            match ESCAPES.iter().find(|(pat, _)| rest.starts_with(pat)) {
                Some((pat, rep)) => {
                    out.extend_from_slice(rep);
                    rest = &rest[pat.len()..];
                }
                None => {
                    out.extend_from_slice(rest);
                    break;
                }
            }
        } else {
            let n = memchr::memchr2(b'$', b'.', rest).unwrap_or(rest.len());
            out.extend_from_slice(&rest[..n]);
            rest = &rest[n..];
        }
    }
    true
}

/// One stack line of a block: where it is, and (once parsed) what it gave.
#[derive(Clone, Copy)]
struct BlockLine {
    start: usize,
    end: usize,
    line_no: u64,
    /// Frames it added.
    ids: u32,
    /// It parsed without a warning (so re-using its frames skips no warning).
    clean: bool,
}

/// A thread as perf names it: pid, tid and command.
type ThreadKey = (Option<i64>, Option<i64>, Vec<u8>);

/// The state machine of one sequential parse (of the whole input or of one chunk).
pub(super) struct Parser {
    names: Names,
    stacks: StackTable,
    warnings: Warnings,
    /// Threads by `(pid, tid, command)`.
    threads: Vec<ThreadInfo>,
    thread_index: HashMap<ThreadKey, u32>,
    /// Event names in order of first appearance, and whether any of its lines gave a
    /// period.
    events: Vec<(Vec<u8>, bool)>,
    /// Samples per `(thread, event)`.
    streams: Vec<Stream>,
    stream_index: HashMap<(u32, u32), usize>,
    /// The current sample's stream, time and pid/tid.
    stream: usize,
    time: Option<u64>,
    pid_tid: (Option<i64>, Option<i64>),
    /// Samples without a timestamp.
    untimed: u64,
    /// The lines until the next blank line are stack lines.
    in_event: bool,
    /// The current sample is of another event type: its stack lines are ignored.
    skip: bool,
    /// An event line was accepted and its sample not yet ended.
    event_open: bool,
    /// Root frame of the current sample (the command).
    comm: NameId,
    /// The command's raw bytes, to skip re-interning it for the next sample.
    comm_raw: Vec<u8>,
    /// `comm` and `comm_raw` hold a command.
    comm_known: bool,
    /// The command starts with `java` (Java class-path tidying applies).
    java: bool,
    /// The current sample's weight as its event line states it (else 1).
    period: Option<u64>,
    /// The current sample is a `sched_switch`: whether the thread blocked.
    switch: Option<bool>,
    /// `sched_wakeup` events seen.
    wakeups: Vec<super::perf_sched::Wakeup>,
    /// The current sample's frames, leaf first.
    leaf_first: Vec<NameId>,
    /// Frames of one stack line (Java inlining splits one line into several).
    group: Vec<NameId>,
    /// The previous sample's path (command first) and its stacks.
    prev_path: Vec<NameId>,
    prev_nodes: Vec<StackId>,
    /// Scratch for names a rule rewrites, and for demangled Rust symbols.
    scratch: Vec<u8>,
    rust: Vec<u8>,
    /// The stack lines of the current block (reused buffer).
    block: Vec<BlockLine>,
    /// The previous block's stack lines, what each gave, and its command: a tail of
    /// identical lines (the root side) is not parsed again.
    prev_block: Vec<BlockLine>,
    prev_ids: Vec<NameId>,
    prev_comm: Option<NameId>,
    samples: u64,
    empty_samples: u64,
}

impl Parser {
    pub(super) fn new() -> Self {
        Self {
            names: Names::new(),
            stacks: StackTable::default(),
            warnings: Warnings::default(),
            threads: Vec::new(),
            thread_index: HashMap::new(),
            events: Vec::new(),
            streams: Vec::new(),
            stream_index: HashMap::new(),
            stream: 0,
            time: None,
            pid_tid: (None, None),
            untimed: 0,
            in_event: false,
            skip: false,
            event_open: false,
            comm: 0,
            comm_raw: Vec::new(),
            comm_known: false,
            java: false,
            period: None,
            switch: None,
            wakeups: Vec::new(),
            leaf_first: Vec::new(),
            group: Vec::new(),
            prev_path: Vec::new(),
            prev_nodes: Vec::new(),
            scratch: Vec::new(),
            rust: Vec::new(),
            block: Vec::new(),
            prev_block: Vec::new(),
            prev_ids: Vec::new(),
            prev_comm: None,
            samples: 0,
            empty_samples: 0,
        }
    }

    /// The stream of the current event line's thread and event.
    fn stream_for(&mut self, comm: &[u8], event: &[u8]) -> usize {
        let key = (self.pid_tid.0, self.pid_tid.1, comm.to_vec());
        let thread = match self.thread_index.get(&key) {
            Some(&t) => t,
            None => {
                let t = self.threads.len() as u32;
                let name = String::from_utf8_lossy(comm).into_owned();
                self.threads.push(ThreadInfo {
                    process: match self.pid_tid.0 {
                        Some(p) => format!("{name} {p}"),
                        None => String::new(),
                    },
                    name,
                    pid: self.pid_tid.0,
                    tid: self.pid_tid.1,
                });
                self.thread_index.insert(key, t);
                t
            }
        };
        let ev = match self.events.iter().position(|(e, _)| e.as_slice() == event) {
            Some(i) => i as u32,
            None => {
                self.events.push((event.to_vec(), false));
                self.events.len() as u32 - 1
            }
        };
        *self.stream_index.entry((thread, ev)).or_insert_with(|| {
            self.streams.push(Stream {
                thread,
                event: ev,
                ..Stream::default()
            });
            self.streams.len() - 1
        })
    }

    fn invalid(&mut self, line_no: u64, why: &str, line: &[u8]) {
        self.warnings
            .invalid_line(|| format!("line {line_no}: {why}, found {}", preview(line)));
    }

    /// Parses the lines of `text`, numbered from `first_line`.
    pub(super) fn run(
        &mut self,
        file: &str,
        text: &[u8],
        first_line: u64,
        progress: Option<&super::Progress>,
    ) -> Result<(), ImportError> {
        let mut report = ChunkProgress::new(progress);
        let mut line_no = first_line - 1;
        let mut start = 0usize;
        while start < text.len() {
            let end = memchr::memchr(b'\n', &text[start..]).map_or(text.len(), |i| start + i);
            let raw = &text[start..end];
            start = end + 1;
            line_no += 1;
            report.at(start.min(text.len()));
            if raw.starts_with(b"#") {
                self.warnings.comment_lines += 1;
                continue;
            }
            let line = trim_end(raw);
            if line.is_empty() {
                self.end_sample(file, line_no)?;
            } else if self.in_event {
                self.stack_line(line_no, line);
            } else {
                self.event_line(line_no, line);
                if !self.leaf_first.is_empty() {
                    // An event line carrying its one-frame stack.
                    self.end_sample(file, line_no)?;
                } else if self.in_event && !self.skip {
                    // The usual case: read the whole stack block at once.
                    let (next, last_line) = self.stack_block(text, start, line_no);
                    start = next;
                    line_no = last_line;
                }
            }
        }
        if !self.leaf_first.is_empty() || self.event_open {
            self.end_sample(file, line_no)?;
        }
        Ok(())
    }

    fn event_line(&mut self, line_no: u64, line: &[u8]) {
        self.in_event = true;
        let Some((comm, pid_word, after)) = event_line_pid(line) else {
            self.invalid(
                line_no,
                "expected an event line 'comm pid[/tid] [cpu] time: [period] event:'",
                line,
            );
            self.in_event = false;
            return;
        };
        let rest = &line[after..];
        let EventFields {
            time,
            event,
            period,
            post,
            payload,
        } = event_fields(rest);
        if let Some(p) = period {
            self.period = p;
        }
        self.time = time;
        self.pid_tid = parse_pid_tid(&line[pid_word]);
        let ev: &[u8] = event.map_or(b"", |ev| &rest[ev]);
        self.stream = self.stream_for(comm, ev);
        self.switch = None;
        if let Some(pl) = payload {
            use super::perf_sched::{Sched, Wakeup, sched_of};
            match sched_of(ev, &rest[pl]) {
                Some(Sched::Switch { voluntary }) => self.switch = Some(voluntary),
                Some(Sched::Wakeup { tid }) => {
                    if let Some(time) = time {
                        self.wakeups.push(Wakeup {
                            time,
                            waker: self.streams[self.stream].thread,
                            tid,
                        });
                    }
                }
                None => {}
            }
        }
        if self.period.is_some() {
            self.events[self.streams[self.stream].event as usize].1 = true;
        }
        self.event_open = true;
        if !self.comm_known || comm != self.comm_raw.as_slice() {
            self.comm_known = true;
            self.comm_raw.clear();
            self.comm_raw.extend_from_slice(comm);
            self.comm = if memchr::memchr(b' ', comm).is_some() {
                self.scratch.clear();
                self.scratch
                    .extend(comm.iter().map(|&b| if b == b' ' { b'_' } else { b }));
                self.names.intern_bytes(&self.scratch)
            } else {
                self.names.intern_bytes(comm)
            };
            self.java = comm.starts_with(b"java");
        }
        if let Some(p) = post {
            self.stack_line(line_no, &rest[p]);
            self.in_event = false;
        }
    }

    /// Reads the stack lines from `from` up to (not including) the next blank line, and
    /// adds their frames. Lines that end the block exactly as the previous block ended
    /// (same command, byte-identical lines: the shared root side of two samples) take
    /// that block's frames without being parsed again. Returns where the blank line (or
    /// the end) starts and the number of the last line read.
    fn stack_block(&mut self, text: &[u8], from: usize, mut line_no: u64) -> (usize, u64) {
        let mut block = std::mem::take(&mut self.block);
        block.clear();
        let mut start = from;
        while start < text.len() {
            let end = memchr::memchr(b'\n', &text[start..]).map_or(text.len(), |i| start + i);
            let raw = &text[start..end];
            if raw.starts_with(b"#") {
                self.warnings.comment_lines += 1;
            } else {
                let line = trim_end(raw);
                if line.is_empty() {
                    break;
                }
                block.push(BlockLine {
                    start,
                    end: start + line.len(),
                    line_no: line_no + 1,
                    ids: 0,
                    clean: true,
                });
            }
            line_no += 1;
            start = end + 1;
        }
        let next = start.min(text.len());
        // The shared tail, compared from the end.
        let mut shared = 0usize;
        if self.prev_comm == Some(self.comm) {
            let (n, m) = (block.len(), self.prev_block.len());
            while shared < n && shared < m {
                let (a, b) = (&block[n - 1 - shared], &self.prev_block[m - 1 - shared]);
                if !b.clean || text[a.start..a.end] != text[b.start..b.end] {
                    break;
                }
                shared += 1;
            }
        }
        let head = block.len() - shared;
        for bl in &mut block[..head] {
            let (ids_before, invalid_before) = (self.leaf_first.len(), self.warnings.invalid_lines);
            self.stack_line(bl.line_no, &text[bl.start..bl.end]);
            bl.ids = (self.leaf_first.len() - ids_before) as u32;
            bl.clean = self.warnings.invalid_lines == invalid_before;
        }
        let m = self.prev_block.len();
        let mut tail_ids = 0usize;
        for (bl, prev) in block[head..].iter_mut().zip(&self.prev_block[m - shared..]) {
            bl.ids = prev.ids;
            tail_ids += prev.ids as usize;
        }
        self.leaf_first
            .extend_from_slice(&self.prev_ids[self.prev_ids.len() - tail_ids..]);
        self.prev_ids.clear();
        self.prev_ids.extend_from_slice(&self.leaf_first);
        self.prev_comm = Some(self.comm);
        self.block = std::mem::replace(&mut self.prev_block, block);
        (next, line_no)
    }

    fn stack_line(&mut self, line_no: u64, line: &[u8]) {
        if self.skip {
            return;
        }
        let parts = stack_line_parts(line).or_else(|| bare_stack_line_parts(line));
        let Some((_pc, mut rawfunc, module)) = parts else {
            self.invalid(
                line_no,
                "expected a stack frame 'address symbol (module)'",
                line,
            );
            return;
        };
        if let Some(plus) = rfind_offset(rawfunc)
            && rawfunc[plus + 3..].iter().all(u8::is_ascii_hexdigit)
        {
            rawfunc = &rawfunc[..plus];
        }
        if rawfunc.starts_with(b"(") {
            return;
        }
        let mut rust = std::mem::take(&mut self.rust);
        let func = if fix_rust_symbol(rawfunc, &mut rust) {
            rust.as_slice()
        } else {
            rawfunc
        };
        self.group.clear();
        if find_arrow(func).is_none() {
            let id = self.frame_name(func, module, false);
            self.group.push(id);
        } else {
            let mut from = 0usize;
            let mut inlined = false;
            loop {
                let end = find_arrow(&func[from..]).map(|i| from + i);
                let part = &func[from..end.unwrap_or(func.len())];
                let id = self.frame_name(part, module, inlined);
                self.group.push(id);
                inlined = true;
                match end {
                    Some(e) => from = e + 2,
                    None => break,
                }
            }
        }
        self.rust = rust;
        self.leaf_first.extend(self.group.iter().rev());
    }

    /// The interned name of one frame after inferno's renaming rules.
    fn frame_name(&mut self, func: &[u8], module: &[u8], inlined: bool) -> NameId {
        let fallback = func == b"[unknown]" && module != b"[unknown]";
        if !fallback && !inlined && memchr::memchr(b';', func).is_none() {
            let mut s = &func[..param_cut(func)];
            if self.java && s.first() == Some(&b'L') && memchr::memchr(b'/', s).is_some() {
                s = &s[1..];
            }
            return self.names.intern_bytes(s);
        }
        let buf = &mut self.scratch;
        buf.clear();
        if fallback {
            let base = memchr::memrchr(b'/', module).map_or(module, |i| &module[i + 1..]);
            buf.push(b'[');
            buf.extend_from_slice(base);
            buf.push(b']');
        } else {
            buf.extend_from_slice(func);
        }
        for b in buf.iter_mut() {
            if *b == b';' {
                *b = b':';
            }
        }
        let cut = param_cut(buf);
        buf.truncate(cut);
        if self.java && buf.first() == Some(&b'L') && memchr::memchr(b'/', buf).is_some() {
            buf.remove(0);
        }
        if inlined && !buf.windows(4).any(|w| w == b"_[i]") {
            buf.extend_from_slice(b"_[i]");
        }
        self.names.intern_bytes(buf)
    }

    /// Ends the current sample: adds its path (if it has frames) and resets the state.
    fn end_sample(&mut self, _file: &str, _line_no: u64) -> Result<(), ImportError> {
        if !self.leaf_first.is_empty() {
            let mut node: StackId = EMPTY_STACK;
            let mut reusing = true;
            let mut fresh = false;
            let len = self.leaf_first.len() + 1;
            let path = std::iter::once(self.comm).chain(self.leaf_first.iter().rev().copied());
            for (depth, id) in path.enumerate() {
                if reusing && depth < self.prev_path.len() && self.prev_path[depth] == id {
                    node = self.prev_nodes[depth];
                    continue;
                }
                if reusing {
                    reusing = false;
                    self.prev_path.truncate(depth);
                    self.prev_nodes.truncate(depth);
                }
                node = self.stacks.path_child(node, id, &mut fresh);
                self.prev_path.push(id);
                self.prev_nodes.push(node);
            }
            self.prev_path.truncate(len);
            self.prev_nodes.truncate(len);
            let weight = self.period.unwrap_or(1);
            let st = &mut self.streams[self.stream];
            let time = match self.time {
                Some(t) => t,
                None => {
                    self.untimed += 1;
                    st.time.last().copied().unwrap_or(0)
                }
            };
            st.time.push(time);
            st.stack.push(node);
            st.weight.push(weight);
            if let Some(voluntary) = self.switch.take() {
                st.set_last_counter(super::perf_sched::switch_counter(voluntary), 1);
            }
            self.samples += 1;
        } else if self.event_open {
            self.empty_samples += 1;
        }
        self.in_event = false;
        self.skip = false;
        self.event_open = false;
        self.period = None;
        self.switch = None;
        self.leaf_first.clear();
        Ok(())
    }

    /// Adds another chunk's samples and counts into this one (a later part of the
    /// input: its samples follow).
    pub(super) fn absorb(&mut self, other: Parser) {
        let map = self
            .stacks
            .absorb(&mut self.names, &other.stacks, &other.names);
        let thread_map: Vec<u32> = other
            .threads
            .iter()
            .map(|t| {
                let key = (t.pid, t.tid, t.name.as_bytes().to_vec());
                *self.thread_index.entry(key).or_insert_with(|| {
                    self.threads.push(t.clone());
                    self.threads.len() as u32 - 1
                })
            })
            .collect();
        let event_map: Vec<u32> = other
            .events
            .iter()
            .map(
                |(e, period)| match self.events.iter().position(|(x, _)| x == e) {
                    Some(i) => {
                        self.events[i].1 |= *period;
                        i as u32
                    }
                    None => {
                        self.events.push((e.clone(), *period));
                        self.events.len() as u32 - 1
                    }
                },
            )
            .collect();
        for st in other.streams {
            let (thread, event) = (thread_map[st.thread as usize], event_map[st.event as usize]);
            let i = *self.stream_index.entry((thread, event)).or_insert_with(|| {
                self.streams.push(Stream {
                    thread,
                    event,
                    ..Stream::default()
                });
                self.streams.len() - 1
            });
            let to = &mut self.streams[i];
            let base = to.len();
            for c in &st.counters {
                let k = match to.counters.iter().position(|x| x.kind == c.kind) {
                    Some(k) => k,
                    None => {
                        to.counters.push(crate::model::samples::Counter {
                            kind: c.kind,
                            values: Vec::new(),
                        });
                        to.counters.len() - 1
                    }
                };
                let v = &mut to.counters[k].values;
                v.resize(base, 0);
                v.extend_from_slice(&c.values);
                v.resize(base + st.len(), 0);
            }
            to.time.extend_from_slice(&st.time);
            to.stack.extend(
                st.stack
                    .iter()
                    .map(|&s| if s == EMPTY_STACK { s } else { map[s as usize] }),
            );
            for k in 0..st.len() {
                to.weight.push(st.weight.get(k));
            }
        }
        self.wakeups
            .extend(other.wakeups.iter().map(|w| super::perf_sched::Wakeup {
                waker: thread_map[w.waker as usize],
                ..*w
            }));
        self.warnings.absorb_lines(other.warnings);
        self.samples += other.samples;
        self.untimed += other.untimed;
        self.empty_samples += other.empty_samples;
    }
}

/// What a perf event's period counts: nanoseconds for the clock events, the hardware
/// counter's unit (`cycles`, `instructions`) or the event for others; samples when no
/// line gave a period.
pub fn event_values(event: &str, has_period: bool) -> ValueFormat {
    let unit = if !has_period {
        Unit::Samples
    } else if matches!(event, "cpu-clock" | "task-clock") {
        Unit::Nanoseconds
    } else if event.contains("cycles") {
        Unit::Other("cycles".into())
    } else if event.contains("instructions") {
        Unit::Other("instructions".into())
    } else {
        Unit::Other(if event.is_empty() {
            "events".into()
        } else {
            event.to_string()
        })
    };
    ValueFormat {
        unit,
        ..ValueFormat::default()
    }
}

/// Turns the parsed (and merged) state into the samples, or the no-samples error.
pub(super) fn finish(
    file: &str,
    p: Parser,
    progress: Option<&super::Progress>,
) -> Result<Samples, ImportError> {
    let t0 = std::time::Instant::now();
    let Parser {
        names,
        stacks,
        mut warnings,
        threads,
        events,
        mut streams,
        samples,
        untimed,
        empty_samples,
        wakeups,
        ..
    } = p;
    if samples == 0 {
        let none = "no event line followed by stack frames";
        let detail = match warnings.invalid_detail("of another shape") {
            Some(lines) => format!("{none}; {lines}"),
            None => none.to_string(),
        };
        return Err(ImportError::NoSamples {
            file: file.to_string(),
            detail,
        });
    }
    if empty_samples > 0 {
        warnings.notes.push(format!(
            "{empty_samples} sample{} without stack frames left out",
            if empty_samples == 1 { "" } else { "s" }
        ));
    }
    let timed = untimed == 0;
    if !timed {
        // Without timestamps, samples are laid out one after another by weight.
        warnings.notes.push(format!(
            "{untimed} sample{} without a timestamp: the time order shows samples in file \
             order",
            if untimed == 1 { "" } else { "s" }
        ));
        for st in &mut streams {
            let mut t = 0u64;
            for i in 0..st.len() {
                st.time[i] = t;
                t = t.saturating_add(st.weight.get(i));
            }
        }
    }
    let mut out = Samples::new(file, SourceFormat::PerfScript);
    out.names = names;
    out.stacks = stacks;
    out.threads = threads;
    out.streams = streams;
    out.timed = timed;
    out.thread_root_frames = true;
    for (e, period) in &events {
        // Event `i` must stay index `i`: two names that differ only in invalid UTF-8 read
        // the same once it is replaced, so a repeat gets a number.
        let lossy = String::from_utf8_lossy(e);
        let mut name = lossy.to_string();
        for n in 2.. {
            if !out.events.iter().any(|x| x.name == name) {
                break;
            }
            name = format!("{lossy} #{n}");
        }
        out.event(&name, event_values(&lossy, *period));
    }
    if events.len() > 1 {
        let counts: Vec<String> = (0..events.len() as u32)
            .map(|e| format!("{} ({})", out.events[e as usize].name, out.count_of(e)))
            .collect();
        warnings.notes.push(format!(
            "samples of {} events: {}; the first is shown (choose another with --event or \
             the toolbar)",
            events.len(),
            counts.join(", ")
        ));
    }
    out.meta_mut().warnings = warnings;
    let mut out = out.finish();
    if timed {
        super::perf_sched::link_wakers(&mut out, wakeups);
    }
    super::Progress::stage(progress, "samples", t0.elapsed());
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load(s: &str) -> crate::model::Profile {
        parse("t.perf", s.as_bytes()).unwrap()
    }

    /// The first event's samples folded, and every sample as `thread event time path`.
    fn agg(s: &Samples) -> (Vec<String>, Vec<String>) {
        let mut each = Vec::new();
        for st in &s.streams {
            for i in 0..st.len() {
                let path: Vec<&str> = s
                    .stacks
                    .frames_of(st.stack[i])
                    .into_iter()
                    .map(|n| s.names.get(n))
                    .collect();
                each.push(format!(
                    "{} {} {} {} {}",
                    s.threads[st.thread as usize].label(),
                    s.events[st.event as usize].name,
                    st.time[i],
                    st.weight.get(i),
                    path.join(";")
                ));
            }
        }
        each.sort();
        (
            s.aggregate(Default::default()).unwrap().folded_lines(),
            each,
        )
    }

    #[test]
    fn basic_sample_reversed_with_comm_root() {
        let p = load(
            "# header\njava 12688/12764 [002] 6544038.708352: cpu-clock:\n\
             \tffffffff8103ce3b native_safe_halt+0xb ([kernel.kallsyms])\n\
             \t    7f533952bc77 main+0x597 (/usr/bin/app)\n\
             \n\
             V8 WorkerThread 25607 4794564.109216: cpu-clock:\n\
             \t7f53389994d0 [unknown] (/usr/lib/libfoo.so)\n\
             \t0 [unknown] ([unknown])\n\n",
        );
        assert_eq!(
            p.folded_lines(),
            [
                "V8_WorkerThread;[unknown];[libfoo.so] 1",
                "java;main;native_safe_halt 1",
            ]
        );
        assert_eq!(p.meta.warnings.comment_lines, 1);
        assert_eq!(p.meta.warnings.invalid_lines, 0);
        assert_eq!(p.meta.format, SourceFormat::PerfScript);
    }

    #[test]
    fn renaming_rules() {
        let p = load(
            "java 1 1.0: cycles:\n\
             \t1 Lorg/mozilla/Foo;.call(Lorg/Ctx;)V (/tmp/perf-1.map)\n\
             \t2 a->b->c (/x)\n\
             \t3 net/http.(*Client).Do (/x)\n\
             \t4 ns::(anonymous namespace)::f(int) (/x)\n\
             \t5 std::function<void (int)>::operator()(int) (/x)\n\
             \t6 (deleted) (/x)\n\
             \t7 std::fs::File::open::hb90e1c1c787080f0 (/x)\n\
             \t8 _$LT$F$u20$as$u20$alloc..boxed..FnBox$LT$A$GT$$GT$::call_box::h8612a2a83552fc2d (/x)\n\
             \t9  (/lib/libc.so)\n",
        );
        assert_eq!(
            p.folded_lines(),
            [
                "java; ;<F as alloc::boxed::FnBox<A>>::call_box;std::fs::File::open;\
              std::function<void (int)>::operator;ns::(anonymous namespace)::f;\
              net/http.(*Client).Do;a;b_[i];c_[i];org/mozilla/Foo:.call 1"
            ]
        );
    }

    #[test]
    fn first_event_type_only_and_single_line_stacks() {
        let p = load(
            "a 1 1.0: 5 cycles:u:  ffffffff9b201293 [unknown] ([unknown])\n\
             a 1 1.1: 5 cycles:      7fa68b1f2d84 _dl_start+0x4 (/usr/lib/ld.so)\n\
             a 1 1.2: 5 instructions:\n\tf x (/x)\n\nb 2 1.3: 5 cycles:\n\tf y (/y)\n",
        );
        assert_eq!(
            p.folded_lines(),
            ["a;[unknown] 5", "a;_dl_start 5", "b;y 5"]
        );
        assert!(
            p.meta.warnings.notes[0]
                .starts_with("samples of 2 events: cycles (3), instructions (1)"),
            "{:?}",
            p.meta.warnings.notes
        );
        assert_eq!(p.values.unit, Unit::Other("cycles".into()));
    }

    #[test]
    fn event_names_alike_once_invalid_utf8_is_replaced_stay_apart() {
        // Found by fuzzing: `ev\xff` and `ev\xfe` both read `ev\u{fffd}`, and the second
        // event's samples pointed past the list of events.
        let text = b"a 1 1.0: 5 ev\xff:\n\tf x (/x)\n\na 1 2.0: 5 ev\xfe:\n\tf y (/x)\n";
        let s = parse_with("t.perf", text, None).unwrap();
        assert_eq!(s.events.len(), 2);
        assert_eq!(s.events[1].name, "ev\u{fffd} #2");
    }

    #[test]
    fn events_threads_times_and_units_are_kept() {
        let text = "app 10/11 [000] 100.000001: 1000000 cpu-clock:\n\t1 f (/x)\n\t2 main (/x)\n\n\
                    app 10/12 [001] 100.000500: 1 page-faults:\n\t1 g (/x)\n\n\
                    app 10/11 [000] 100.001001: 1000000 cpu-clock:\n\t1 main (/x)\n\n\
                    app 10/11 100.002001123: 1000000 cpu-clock:\n\t1 main (/x)\n";
        let s = parse_with("t.perf", text.as_bytes(), None).unwrap();
        let (folded, each) = agg(&s);
        assert_eq!(folded, ["app;main 2000000", "app;main;f 1000000"]);
        assert_eq!(
            each,
            [
                "app 10/11 cpu-clock 0 1000000 app;main;f",
                "app 10/11 cpu-clock 1000000 1000000 app;main",
                "app 10/11 cpu-clock 2000123 1000000 app;main",
                "app 10/12 page-faults 499000 1 app;g",
            ]
        );
        assert_eq!(s.origin_ns, 100_000_001_000);
        assert!(s.timed && s.thread_root_frames);
        assert_eq!(s.events[0].values.unit, Unit::Nanoseconds);
        assert_eq!(s.events[1].values.unit, Unit::Other("page-faults".into()));
        // A cpu-clock profile's total is time: 561 samples of 1 ms read "3 ms", not
        // "3,000,000 samples".
        let p = s.aggregate(Default::default()).unwrap();
        assert_eq!(p.values.format(p.tree.grand_total()), "3.00 ms");
        // Without timestamps the samples follow each other by weight.
        let s = parse_with(
            "t.perf",
            b"a 1 cycles:\n\t1 f (/x)\n\na 1 cycles:\n\t1 f (/x)\n",
            None,
        )
        .unwrap();
        assert!(!s.timed);
        assert_eq!(s.streams[0].time, [0, 1]);
    }

    /// `perf script -F comm,tid,time,ip,sym` (no `dso`) writes frames without their
    /// module: they are frames all the same, named as with modules (an `[unknown]`
    /// symbol stays `[unknown]`); an indented line without perf's right-aligned address
    /// (`not_an_address main`, `3 short`) is still damage.
    #[test]
    fn frames_without_modules_are_frames() {
        let bare = load(
            "app 21596  4181.445599: \n\
             \tffffffff8223b096 mas_prev\n\t    7f0d6c4b1f38 main+0x158\n\n\
             app 21596  4181.445699: \n\
             \tffffffff8223b096 mas_prev\n\t    7f0d6c4b1f38 [unknown]\n\t           d4ad7 main\n\t               0 [unknown]\n\n\
             app 21596  4181.445799: \n\
             \tffffffff8223b096 mas_prev\n\tnot_an_address main\n\t3 short\n\
             \t    7fa4c73bc184 start_thread (/lib/x86_64-linux-gnu\n\n",
        );
        let full = load(
            "app 21596  4181.445599: \n\
             \tffffffff8223b096 mas_prev ([kernel.kallsyms])\n\t7f0d6c4b1f38 main+0x158 (/a)\n\n\
             app 21596  4181.445699: \n\
             \tffffffff8223b096 mas_prev ([kernel.kallsyms])\n\t7f0d6c4b1f38 [unknown] ([unknown])\n\t7f0d6c4b1f00 main (/a)\n\t0 [unknown] ([unknown])\n\n",
        );
        assert_eq!(bare.folded_lines()[..2], full.folded_lines()[..]);
        assert_eq!(full.meta.warnings.invalid_lines, 0);
        assert_eq!(bare.meta.warnings.invalid_lines, 3);
        assert_eq!(
            bare.folded_lines(),
            [
                "app;[unknown];main;[unknown];mas_prev 1",
                "app;main;mas_prev 1",
                "app;mas_prev 1"
            ]
        );
    }

    /// `perf script` prints a sample whose thread it could not find (one that had exited)
    /// with the command `:-1` and the pid `-1`: such samples are kept (a real
    /// `sched:sched_switch` recording had 52 of them), under that command.
    #[test]
    fn samples_of_threads_perf_could_not_find_are_kept() {
        let text = "app 10/11 [000] 100.000001: sched:sched_switch: prev_comm=app prev_pid=11 prev_prio=120 prev_state=S ==> next_comm=swapper/0 next_pid=0 next_prio=120\n\
                    \tffffffff82266cc8 __schedule+0x628 ([kernel.kallsyms])\n\t2 main (/x)\n\n\
                    :-1    -1 [001]  100.000500: sched:sched_switch: prev_comm=opt cgu.10 prev_pid=21659 prev_prio=120 prev_state=R+ ==> next_comm=Xvfb next_pid=17855 next_prio=120\n\
                    \tffffffff82266cc8 __schedule+0x628 ([kernel.kallsyms])\n\t2 worker (/y)\n\n\
                    :-1 -1/-1 [001]  100.000600: sched:sched_switch: prev_comm=x prev_pid=7 prev_prio=120 prev_state=D ==> next_comm=y next_pid=8 next_prio=120\n\
                    \tffffffff82266cc8 __schedule+0x628 ([kernel.kallsyms])\n\n\
                    app -1 [000] 100.000700: sched:sched_switch: prev_comm=app prev_pid=11 prev_prio=120 prev_state=S ==> next_comm=z next_pid=9 next_prio=120\n\
                    \tffffffff82266cc8 __schedule+0x628 ([kernel.kallsyms])\n\n";
        let s = parse_with("t.perf", text.as_bytes(), None).unwrap();
        let (folded, each) = agg(&s);
        assert_eq!(
            folded,
            [
                ":-1;__schedule 1",
                ":-1;worker;__schedule 1",
                "app;main;__schedule 1"
            ]
        );
        assert_eq!(each.len(), 3, "{each:?}");
        // Only perf's own `:-1` makes `-1` a pid: another command's `-1` is damage (the
        // event line and its frame).
        let p = load(text);
        assert_eq!(p.meta.warnings.invalid_lines, 2);
        let first = p.meta.warnings.first_invalid.as_deref().unwrap();
        assert!(
            first.starts_with("line 12: expected an event line"),
            "{first}"
        );
    }

    #[test]
    fn damage_is_counted_and_located() {
        let p = load(
            "java 10488  9962.502413:   10101010 cpu-clock:\n\n\
             \tffffffffaee8017b fput+0xb ([kernel.kallsyms])\n\
             inline-counter 26037  8801.193547:     250000 cpu-clock:uhH:\n\
             \t          401b97 main+0x1f (./inline-counter)\n\n\
             inline-counter 26037  8801.193547:     250000 cpu-clock:uhH:\n\
             \t          THIS_IS_A_WEIRD_LINE\n",
        );
        assert_eq!(p.folded_lines(), ["inline-counter;main 250000"]);
        assert_eq!(p.meta.warnings.invalid_lines, 2);
        let first = p.meta.warnings.first_invalid.as_deref().unwrap();
        assert!(
            first.starts_with("line 3: expected an event line"),
            "{first}"
        );
        assert_eq!(
            p.meta.warnings.notes.len(),
            1,
            "{:?}",
            p.meta.warnings.notes
        );
    }

    #[test]
    fn shared_tails_are_reused_without_losing_warnings() {
        let block = |comm: &str, leaf: &str| {
            format!(
                "{comm} 1 1.0: cycles:\n\t1 {leaf} (/x)\n\t2 mid(int) (/x)\n# note\n\t3 bad\n\t4 root (/x)\n\n"
            )
        };
        let text = [
            block("a", "leaf1"),
            block("a", "leaf2"),
            block("java", "Lleaf/2"),
            block("java", "Lleaf/2"),
        ]
        .concat();
        let p = load(&text);
        assert_eq!(
            p.folded_lines(),
            [
                "a;root;mid;leaf1 1",
                "a;root;mid;leaf2 1",
                "java;root;mid;leaf/2 2"
            ]
        );
        assert_eq!(p.meta.warnings.invalid_lines, 4);
        assert_eq!(p.meta.warnings.comment_lines, 4);
        let first = p.meta.warnings.first_invalid.as_deref().unwrap();
        assert!(
            first.starts_with("line 5: expected a stack frame"),
            "{first}"
        );
    }

    #[test]
    fn no_samples_is_a_clear_error() {
        let e = parse("n.perf", b"garbage here\nmore\n")
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("n.perf: no stack samples found"), "{e}");
        assert!(e.contains("line 1"), "{e}");
    }

    fn random_perf(seed: u64, samples: usize) -> String {
        let mut rng = crate::testing::Lcg::new(seed);
        let mut next = move || rng.next_u64();
        let mut out = String::new();
        for _ in 0..samples {
            match next() % 40 {
                0 => out.push_str("garbage line\n"),
                1 => out.push_str("# comment\n"),
                2 => out.push_str("\n\n"),
                _ => {
                    let ev = if next() % 7 == 0 {
                        "instructions"
                    } else {
                        "cycles"
                    };
                    let comm = ["java", "my app", "x"][(next() % 3) as usize];
                    out.push_str(&format!("{comm} {} [000] 1.0: 1 {ev}:\n", next() % 100));
                    for _ in 0..next() % 9 {
                        out.push_str(&format!(
                            "\t{:x} f{}+0x1{} (/lib/m{}.so)\n",
                            next(),
                            next() % 7,
                            if next() % 5 == 0 { "->g" } else { "" },
                            next() % 3
                        ));
                    }
                    out.push('\n');
                }
            }
        }
        out
    }

    #[test]
    fn mangled_input_never_panics_and_splits_the_same() {
        let base = random_perf(11, 300).into_bytes();
        let mut rng = crate::testing::Lcg::new(99u64);
        let mut next = move || rng.next_usize();
        let alphabet = b" \t\n:;()+0x[]/->#\xff\xc3L12";
        for _ in 0..200 {
            let mut t = base.clone();
            for _ in 0..1 + next() % 40 {
                if t.len() < 2 {
                    break;
                }
                let i = next() % t.len();
                match next() % 3 {
                    0 => t[i] = alphabet[next() % alphabet.len()],
                    1 => t.truncate(i.max(1)),
                    _ => {
                        t.remove(i);
                    }
                }
            }
            let seq = parse_with_threads("m", &t, None, 1, usize::MAX);
            let par = parse_with_threads("m", &t, None, 3, 1);
            match (seq, par) {
                (Ok(a), Ok(b)) => {
                    assert_eq!(agg(&a), agg(&b));
                    assert_eq!(a.meta().warnings, b.meta().warnings);
                }
                (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string()),
                (a, b) => panic!("sequential {:?} vs parallel {:?}", a.is_ok(), b.is_ok()),
            }
        }
    }

    #[test]
    fn parallel_parse_equals_sequential() {
        for seed in 1..6 {
            let text = random_perf(seed, 2000);
            let seq = parse_with_threads("r", text.as_bytes(), None, 1, usize::MAX).unwrap();
            for threads in [2, 3, 8] {
                let par = parse_with_threads("r", text.as_bytes(), None, threads, 1).unwrap();
                assert_eq!(agg(&seq), agg(&par), "seed {seed}, {threads} threads");
                assert_eq!(seq.meta().warnings, par.meta().warnings, "seed {seed}");
            }
        }
    }
}
