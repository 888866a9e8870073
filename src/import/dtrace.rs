//! DTrace stack aggregations: what `dtrace` prints for `@[stack()] = count()`,
//! `@[ustack()]`, `@[jstack()]` (or several of them in one key): blocks of frames, leaf
//! first, one per line, each block followed by its count on a line of its own.
//!
//! Folded the way inferno's `collapse-dtrace` folds it (its rules, our code), so that the
//! same input gives the same stacks and counts:
//! - the lines before the first blank line are the header (`CPU ID FUNCTION:NAME` and
//!   the probe that printed the aggregation) and are skipped; blank lines elsewhere do not
//!   end a stack, only a count line does (so `stack(), ustack()` keys are one stack);
//! - a frame's `+0x…` offset is cut at its last `+`; a name with `::` (C++) loses its
//!   argument list or template arguments after the last `(` or `<` past the first `::`;
//!   an empty frame is `-`; Rust names DTrace left half-demangled
//!   (`_$LT$…$GT$::f::h0123456789abcdef`) are demangled and their hash dropped; `;` in a
//!   name becomes `:`; `a->b->c` (Java inlining) is three frames, each with leading `L`s
//!   dropped and the inlined ones marked `_[i]`; hexadecimal addresses stay as they are;
//! - with [`DTraceOptions::include_offset`], offsets are kept on every frame but the leaf
//!   (inferno's `--includeoffset`).
//!
//! Where inferno fails or loses data, scorch keeps the rest and says so: a first block
//! that is itself a complete stack (a file without a header) is read as a stack, not
//! skipped; a repeated `CPU ID FUNCTION:NAME` header between stacks (an aggregation
//! printed several times) and the probe line under it are skipped rather than read as
//! frames; a count without frames, and frames without a count at the end of the input,
//! are skipped and counted.
//!
//! The result is an aggregated profile: DTrace aggregations have no time order.

use super::ImportError;
use crate::model::{
    CallTreeBuilder, ChildOrder, NameId, Names, Profile, ProfileMeta, SourceFormat, ValueFormat,
    Warnings,
};
use std::borrow::Cow;

/// How to fold.
#[derive(Clone, Copy, Debug, Default)]
pub struct DTraceOptions {
    /// Keep `+0x…` offsets on every frame but the leaf (inferno's `--includeoffset`).
    pub include_offset: bool,
}

/// Parses DTrace aggregated stacks with the default options.
pub fn parse(file: &str, text: &[u8]) -> Result<Profile, ImportError> {
    parse_with(file, text, DTraceOptions::default())
}

/// True for the header DTrace prints above probe output: `CPU     ID    FUNCTION:NAME`.
fn is_header(line: &str) -> bool {
    line.starts_with("CPU") && line.contains("FUNCTION:NAME")
}

/// True for the line under the header: `  0  64091      :tick-60s` (CPU, probe id, probe).
fn is_probe_line(line: &str) -> bool {
    let mut words = line.split_whitespace();
    let number = |w: Option<&str>| w.is_some_and(|w| w.bytes().all(|b| b.is_ascii_digit()));
    number(words.next()) && number(words.next()) && line.contains(':')
}

/// A count line, as inferno reads one: the trimmed line parses as a `u64`.
fn count_of(line: &str) -> Option<u64> {
    line.parse::<u64>().ok()
}

/// Parses DTrace aggregated stacks. A large input is cut after count lines (where a stack
/// ends) and parsed on all cores, each part into a call tree of its own, the trees then
/// joined in input order: the profile is the one a single pass makes.
pub fn parse_with(file: &str, text: &[u8], opts: DTraceOptions) -> Result<Profile, ImportError> {
    let threads = crate::par::cores();
    parse_in(file, text, opts, threads, super::folded::PARALLEL_MIN_BYTES)
}

/// The lines before the first blank line, unless that block is a stack (frames and a
/// count): how many lines the header takes, and the byte where the lines after it start.
fn header_of(text: &[u8]) -> (usize, usize) {
    let (mut header_lines, mut head_frames) = (0usize, 0usize);
    let (mut head_ends_in_count, mut saw_header) = (false, false);
    let mut end = 0;
    for raw in text.split(|&b| b == b'\n') {
        let s = String::from_utf8_lossy(raw);
        let line = s.trim();
        if line.is_empty() {
            break;
        }
        end = (end + raw.len() + 1).min(text.len());
        header_lines += 1;
        saw_header |= is_header(line);
        head_ends_in_count = count_of(line).is_some();
        if !head_ends_in_count {
            head_frames += 1;
        }
    }
    if !saw_header && head_frames > 0 && head_ends_in_count {
        (0, 0)
    } else {
        (header_lines, end)
    }
}

/// Where a part of the input may start: just after the first count line that ends at or
/// after `at` (a count line ends a stack, so a part starts as the whole input's next
/// stack does); `None` when no count line follows.
pub fn next_stack_start(text: &[u8], mut at: usize) -> Option<usize> {
    // Back to the start of the line `at` is in, so a count line is read whole.
    at = text[..at.min(text.len())]
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |i| i + 1);
    while at < text.len() {
        let end = memchr::memchr(b'\n', &text[at..]).map_or(text.len(), |i| at + i);
        let line = text[at..end].trim_ascii();
        if std::str::from_utf8(line).is_ok_and(|l| count_of(l).is_some()) {
            return Some((end + 1).min(text.len()));
        }
        at = end + 1;
    }
    None
}

/// [`parse_with`] on at most `threads` parts once the input has `min_parallel_bytes`
/// (tests force parts of small inputs with these).
fn parse_in(
    file: &str,
    text: &[u8],
    opts: DTraceOptions,
    threads: usize,
    min_parallel_bytes: usize,
) -> Result<Profile, ImportError> {
    let (skip, header_end) = header_of(text);
    let mut parts = if threads <= 1 || text.len() < min_parallel_bytes.max(2) {
        vec![parse_part(file, text, 1, skip, opts)?]
    } else {
        // The first part keeps the header; the others start after a count line past it.
        let boundary = |t: &[u8], at: usize| next_stack_start(t, at.max(header_end));
        super::chunks::parse_in_chunks(text, threads, boundary, |part, first_line, base| {
            parse_part(
                file,
                part,
                first_line,
                if base == 0 { skip } else { 0 },
                opts,
            )
        })?
    };
    let mut joined = parts.remove(0);
    for p in parts {
        super::folded::merge_nodes(&mut joined.builder, &mut joined.names, &p.builder, &p.names)
            .map_err(|e| ImportError::whole_file(file, e))?;
        joined.warnings.absorb_lines(p.warnings);
        joined.stacks += p.stacks;
        joined.repeated_headers += p.repeated_headers;
        joined.data_lines += p.data_lines;
        // Only the last part can end mid-stack (the others end after a count line).
        joined.unfinished = p.unfinished;
    }
    finish(file, joined, skip)
}

/// What parsing a part of the input made.
struct Part {
    names: Names,
    builder: CallTreeBuilder,
    warnings: Warnings,
    stacks: u64,
    repeated_headers: u64,
    data_lines: u64,
    /// Frames at the part's end with no count after them, and the line they start on.
    unfinished: Option<(usize, usize)>,
}

/// Parses the lines of `text`, numbered from `first_line`, the first `skip` of them a
/// header.
fn parse_part(
    file: &str,
    text: &[u8],
    first_line: u64,
    skip: usize,
    opts: DTraceOptions,
) -> Result<Part, ImportError> {
    let mut names = Names::default();
    let mut builder = CallTreeBuilder::new(&mut names, false);
    let mut warnings = Warnings::default();
    // The current stack's frames, leaf first; where it started.
    let mut rev: Vec<NameId> = Vec::new();
    let mut stack_line = 0usize;
    let mut frames: Vec<String> = Vec::new();
    let (mut stacks, mut repeated_headers) = (0u64, 0u64);
    let (mut expect_probe, mut data_lines) = (false, 0u64);
    // Checked as UTF-8 at once (SIMD): lines are then sliced from it as they are; a part
    // with invalid bytes decodes line by line, lossily.
    let valid = simdutf8::basic::from_utf8(text).ok();
    for (i, raw) in text.split(|&b| b == b'\n').enumerate().skip(skip) {
        let line_no = i + first_line as usize;
        let s = match valid {
            // `raw` is cut at newlines, whole characters: the same bytes as a `str`.
            Some(t) => {
                let at = raw.as_ptr() as usize - text.as_ptr() as usize;
                Cow::Borrowed(&t[at..at + raw.len()])
            }
            None => String::from_utf8_lossy(raw),
        };
        let line = s.trim();
        if line.is_empty() {
            continue;
        }
        data_lines += 1;
        if let Some(count) = count_of(line) {
            expect_probe = false;
            if rev.is_empty() {
                warnings.invalid_line(|| {
                    format!("line {line_no}: a count ({count}) with no stack frames above it")
                });
                continue;
            }
            // A count of 0 adds nothing (inferno prints it as a line of 0).
            if count > 0 {
                let mut node = 0;
                for &f in rev.iter().rev() {
                    node = builder.child(node, f);
                }
                builder
                    .add_self(node, count)
                    .map_err(|e| ImportError::whole_file(file, e))?;
            }
            stacks += 1;
            rev.clear();
            continue;
        }
        if rev.is_empty() {
            if is_header(line) {
                repeated_headers += 1;
                expect_probe = true;
                continue;
            }
            if expect_probe && is_probe_line(line) {
                repeated_headers += 1;
                expect_probe = false;
                continue;
            }
            stack_line = line_no;
        }
        expect_probe = false;
        let mut used = 0;
        line_frames(line, opts.include_offset, &mut frames, &mut used);
        for f in frames[..used].iter().rev() {
            // inferno keeps offsets on every frame but the leaf.
            let f = if opts.include_offset && rev.is_empty() {
                remove_offset(f).3
            } else {
                f.as_str()
            };
            rev.push(names.intern(f));
        }
    }
    Ok(Part {
        names,
        builder,
        warnings,
        stacks,
        repeated_headers,
        data_lines,
        unfinished: (!rev.is_empty()).then_some((stack_line, rev.len())),
    })
}

/// The profile of the joined parts; `skip`: the header's lines.
fn finish(file: &str, part: Part, skip: usize) -> Result<Profile, ImportError> {
    let Part {
        names,
        builder,
        mut warnings,
        stacks,
        repeated_headers,
        data_lines,
        unfinished,
    } = part;
    if let Some((stack_line, n)) = unfinished {
        warnings.invalid_line(|| {
            format!(
                "line {stack_line}: {n} stack frames with no count line after them (the input \
                 ends mid-stack)"
            )
        });
    }
    if repeated_headers > 0 {
        warnings.notes.push(format!(
            "{repeated_headers} repeated header lines (CPU ID FUNCTION:NAME and its probe) \
             skipped"
        ));
    }
    if stacks == 0 {
        let detail = warnings
            .invalid_detail("of another shape")
            .unwrap_or_else(|| {
                if data_lines == 0 {
                    format!("only a header ({skip} lines), no stack of frames with a count")
                } else {
                    "no stack of frames followed by a count line".to_string()
                }
            });
        return Err(ImportError::NoSamples {
            file: file.to_string(),
            detail,
        });
    }
    let tree = builder
        .finish(&names, ChildOrder::ByName)
        .map_err(|e| ImportError::whole_file(file, e))?;
    if tree.grand_total() == 0 {
        return Err(ImportError::NoSamples {
            file: file.to_string(),
            detail: "every stack has a count of 0".to_string(),
        });
    }
    Ok(Profile {
        names,
        tree,
        values: ValueFormat::default(),
        meta: ProfileMeta::new(file, SourceFormat::DTrace, warnings),
    })
}

/// The frames of one stack line, outermost first (a line is several frames only with
/// Java's `->` inlining).
fn line_frames(line: &str, include_offset: bool, out: &mut Vec<String>, used: &mut usize) {
    let (has_inlines, could_be_cpp, has_semicolon, mut frame) = if include_offset {
        (true, true, true, line)
    } else {
        remove_offset(line)
    };
    if could_be_cpp {
        frame = uncpp(frame);
    }
    let frame = if frame.is_empty() {
        Cow::Borrowed("-")
    } else {
        fix_rust_symbol(frame, include_offset)
    };
    if has_inlines {
        for (k, func) in frame.split("->").enumerate() {
            let func = func.trim_start_matches('L');
            let f = put(out, used, func);
            if has_semicolon {
                *f = f.replace(';', ":");
            }
            if k > 0 {
                f.push_str("_[i]");
            }
        }
    } else if has_semicolon {
        *put(out, used, "") = frame.replace(';', ":");
    } else {
        put(out, used, &frame);
    }
}

/// `out[*used]` set to `s` (its allocation reused: nothing is allocated per frame once the
/// strings are long enough), and `*used` counted on.
fn put<'a>(out: &'a mut Vec<String>, used: &mut usize, s: &str) -> &'a mut String {
    if *used == out.len() {
        out.push(String::new());
    }
    let f = &mut out[*used];
    *used += 1;
    f.clear();
    f.push_str(s);
    f
}

/// `(has "->", has "::", has ";", the line up to its last '+')`.
fn remove_offset(line: &str) -> (bool, bool, bool, &str) {
    let (mut inlines, mut cpp, mut semicolon) = (false, false, false);
    let mut last_offset = line.len();
    let b = line.as_bytes();
    for i in 0..b.len() {
        match b[i] {
            b'>' if i > 0 && b[i - 1] == b'-' => inlines = true,
            b':' if i > 0 && b[i - 1] == b':' => cpp = true,
            b';' => semicolon = true,
            b'+' => last_offset = i,
            _ => {}
        }
    }
    (inlines, cpp, semicolon, &line[..last_offset])
}

/// A C++ name without its argument list or template arguments: everything from the last
/// `(` or `<` after the first `::` is cut (stackcollapse.pl's `s/(::.*)[(<].*/$1/`).
fn uncpp(probe: &str) -> &str {
    let Some(scope) = probe.find("::") else {
        return probe;
    };
    match probe[scope + 2..].rfind(['(', '<']) {
        Some(open) => &probe[..scope + 2 + open],
        None => probe,
    }
}

/// `module`func` with `func` demangled where DTrace left a Rust name half-demangled.
fn fix_rust_symbol(frame: &str, include_offset: bool) -> Cow<'_, str> {
    let Some((module, func)) = frame.split_once('`') else {
        return Cow::Borrowed(frame);
    };
    if include_offset && let Some((func, offset)) = func.rsplit_once('+') {
        return match demangle_rust(func.trim_end()) {
            Cow::Owned(f) => Cow::Owned(format!("{module}`{f}+{offset}")),
            Cow::Borrowed(_) => Cow::Borrowed(frame),
        };
    }
    match demangle_rust(func.trim_end()) {
        Cow::Owned(f) => Cow::Owned(format!("{module}`{f}")),
        Cow::Borrowed(_) => Cow::Borrowed(frame),
    }
}

/// Length of a Rust symbol hash: `h` and 16 hexadecimal digits.
const RUST_HASH_LENGTH: usize = 17;

/// A legacy-mangled Rust name that was only partly demangled
/// (`_$LT$std..fs..File$u20$as$u20$std..io..Read$GT$::read::h5d84059cf335c8e6`) as Rust
/// prints it (`<std::fs::File as std::io::Read>::read`); anything without the trailing
/// hash is returned as it is.
fn demangle_rust(symbol: &str) -> Cow<'_, str> {
    let is_hash = |s: &str| {
        s.len() == RUST_HASH_LENGTH
            && s.starts_with('h')
            && s[1..].bytes().all(|c| c.is_ascii_hexdigit())
    };
    let Some(cut) = symbol.len().checked_sub(RUST_HASH_LENGTH) else {
        return Cow::Borrowed(symbol);
    };
    if !symbol.get(cut..).is_some_and(is_hash) {
        return Cow::Borrowed(symbol);
    }
    let mut rest = &symbol[..cut];
    if let Some(r) = rest.strip_suffix("::") {
        rest = r;
    }
    if rest.starts_with("_$") {
        rest = &rest[1..];
    }
    const ESCAPES: [(&str, &str); 20] = [
        ("$SP$", "@"),
        ("$BP$", "*"),
        ("$RF$", "&"),
        ("$LT$", "<"),
        ("$GT$", ">"),
        ("$LP$", "("),
        ("$RP$", ")"),
        ("$C$", ","),
        ("$u7e$", "~"),
        ("$u20$", " "),
        ("$u27$", "'"),
        ("$u3d$", "="),
        ("$u5b$", "["),
        ("$u5d$", "]"),
        ("$u7b$", "{"),
        ("$u7d$", "}"),
        ("$u3b$", ";"),
        ("$u2b$", "+"),
        ("$u21$", "!"),
        ("$u22$", "\""),
    ];
    let mut out = String::with_capacity(rest.len());
    while !rest.is_empty() {
        if let Some(r) = rest.strip_prefix("..") {
            out.push_str("::");
            rest = r;
        } else if let Some(r) = rest.strip_prefix('.') {
            out.push('.');
            rest = r;
        } else if rest.starts_with('$') {
            match ESCAPES.iter().find(|(from, _)| rest.starts_with(from)) {
                Some((from, to)) => {
                    out.push_str(to);
                    rest = &rest[from.len()..];
                }
                None => {
                    out.push_str(rest);
                    break;
                }
            }
        } else {
            let end = rest.find(['$', '.']).unwrap_or(rest.len());
            out.push_str(&rest[..end]);
            rest = &rest[end..];
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEADER: &str =
        "CPU     ID                    FUNCTION:NAME\n  0  64091       :tick-60s\n\n";

    fn fold(text: &str) -> Vec<String> {
        parse("t.txt", text.as_bytes()).unwrap().folded_lines()
    }

    fn fold_offsets(text: &str) -> Vec<String> {
        let opts = DTraceOptions {
            include_offset: true,
        };
        parse_with("t.txt", text.as_bytes(), opts)
            .unwrap()
            .folded_lines()
    }

    /// A profile as its paths with self counts, total and warnings.
    fn dump(p: &Profile) -> (Vec<(String, u64)>, u64, Vec<String>) {
        let mut v: Vec<(String, u64)> = (1..p.tree.len() as crate::model::NodeId)
            .filter(|&n| p.tree.self_ticks(n) > 0)
            .map(|n| (p.tree.path_text(&p.names, n), p.tree.self_ticks(n)))
            .collect();
        v.sort();
        (v, p.tree.grand_total(), p.meta.warnings.lines())
    }

    #[test]
    fn parts_on_all_cores_make_the_profile_one_pass_makes() {
        let mut rng = crate::testing::Lcg::new(9);
        for case in 0..6 {
            let mut text = if case % 3 == 2 {
                String::new() // no header: the first block is a stack
            } else {
                HEADER.to_string()
            };
            for _ in 0..400 {
                match rng.next_u64() % 40 {
                    0 => text.push_str("  17\n"),               // a count with no frames
                    1 => text.push_str(&format!("\n{HEADER}")), // a repeated header
                    2 => text.push_str("  k`a\n  0\n"),
                    _ => {
                        let depth = 1 + rng.next_u64() % 9;
                        for _ in 0..depth {
                            let f = rng.next_u64() % 7;
                            text.push_str(&format!("  m{f}`fn_{f}+0x{:x}\n", f * 3));
                            if f == 6 {
                                text.push('\n'); // stack(), ustack(): one stack
                            }
                        }
                        text.push_str(&format!("  {}\n\n", 1 + rng.next_u64() % 50));
                    }
                }
            }
            if case % 2 == 1 {
                text.push_str("  k`unfinished\n");
            }
            let one = parse_in("t", text.as_bytes(), Default::default(), 1, usize::MAX).unwrap();
            for threads in [2, 3, 8] {
                let parts = parse_in("t", text.as_bytes(), Default::default(), threads, 0).unwrap();
                assert_eq!(dump(&parts), dump(&one), "case {case}, {threads} parts");
            }
        }
        // Cut only after count lines, past the header.
        let text = format!("{HEADER}  k`a\n  12\n\n  k`b\n  3\n");
        let second = text.find("  k`b").unwrap();
        assert_eq!(next_stack_start(text.as_bytes(), 0), Some(second - 1));
        assert_eq!(next_stack_start(text.as_bytes(), second), Some(text.len()));
    }

    #[test]
    fn stacks_leaf_first_with_counts_and_offsets_cut() {
        let text = format!(
            "{HEADER}\n              unix`tsc_read+0x3\n              genunix`gethrtime+0xa\n\
             \x20             unix`sys_syscall+0x10e\n                5\n\n\
             \x20             genunix`gethrtime+0x1\n              unix`sys_syscall+0x10e\n\
             \x20               2\n\n              unix`tsc_read\n              \
             genunix`gethrtime\n              unix`sys_syscall\n                1\n"
        );
        assert_eq!(
            fold(&text),
            [
                "unix`sys_syscall;genunix`gethrtime 2",
                "unix`sys_syscall;genunix`gethrtime;unix`tsc_read 6"
            ]
        );
        // inferno's --includeoffset: every frame keeps it but the leaf.
        assert_eq!(
            fold_offsets(&text),
            [
                "unix`sys_syscall+0x10e;genunix`gethrtime 2",
                "unix`sys_syscall+0x10e;genunix`gethrtime+0xa;unix`tsc_read 5",
                "unix`sys_syscall;genunix`gethrtime;unix`tsc_read 1"
            ]
        );
    }

    #[test]
    fn cpp_java_rust_and_hex_names_as_inferno_folds_them() {
        let text = format!(
            "{HEADER}  libjvm.so`Klass::method(Thread*, int)+0x4a\n  \
             libjvm.so`java_start(Thread*)+0xf6\n  0x104d08831\n  1\n\n  test`baz\n  \
             test`foo->bar->Lbaz\n  test`main\n  2\n\n  \
             app`_$LT$std..fs..File$u20$as$u20$std..io..Read$GT$::read::h5d84059cf335c8e6+0x12\n  \
             app`rg::main::hfde2d9e28d13fd56 (.llvm.123)+0x4\n  app`a;b+0x1\n  \
             +0x10\n  3\n"
        );
        assert_eq!(
            fold(&text),
            [
                "-;app`a:b;app`rg::main;app`<std::fs::File as std::io::Read>::read 3",
                "0x104d08831;libjvm.so`java_start(Thread*);libjvm.so`Klass::method 1",
                "test`main;test`foo;bar_[i];baz_[i];test`baz 2",
            ]
        );
    }

    #[test]
    fn headers_blank_lines_and_damage() {
        // stack() and ustack() in one key: the blank line between them does not end it.
        let text = format!("{HEADER}  k`a\n  k`b\n\n  u`c\n  u`d\n  4\n");
        assert_eq!(fold(&text), ["u`d;u`c;k`b;k`a 4"]);
        // Without a header, the first block is a stack, not a header.
        assert_eq!(
            fold("  k`a\n  k`b\n  4\n\n  k`a\n  1\n"),
            ["k`a 1", "k`b;k`a 4"]
        );
        // An aggregation printed twice: its second header is no frame.
        let text = format!("{HEADER}  k`a\n  1\n{HEADER}  k`a\n  2\n");
        let p = parse("t.txt", text.as_bytes()).unwrap();
        assert_eq!(p.folded_lines(), ["k`a 3"]);
        assert!(p.meta.warnings.notes[0].contains("2 repeated header lines"));
        // A count without frames, and frames without a count at the end: counted.
        let text = format!("{HEADER}  7\n  k`a\n  1\n\n  k`b\n  k`c\n");
        let p = parse("t.txt", text.as_bytes()).unwrap();
        assert_eq!(p.folded_lines(), ["k`a 1"]);
        assert_eq!(p.meta.warnings.invalid_lines, 2);
        assert_eq!(
            p.meta.warnings.first_invalid.as_deref(),
            Some("line 4: a count (7) with no stack frames above it")
        );
        let text = format!("{HEADER}  k`b\n  k`c\n");
        let e = parse("t.txt", text.as_bytes()).unwrap_err().to_string();
        assert!(
            e.contains("1 line of another shape (line 4: 2 stack frames with no count line"),
            "{e}"
        );
    }

    #[test]
    fn only_a_header_or_nothing_is_a_clear_error() {
        let e = parse("t.txt", HEADER.trim_end().as_bytes())
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("t.txt: no stack samples found: only a header (2 lines"),
            "{e}"
        );
        let p = parse(
            "t.txt",
            format!("{HEADER}  k`a\n  0\n\n  k`b\n  1\n").as_bytes(),
        )
        .unwrap();
        assert_eq!(p.tree.len(), 2);
        let e = parse("t.txt", format!("{HEADER}  k`a\n  0\n").as_bytes())
            .unwrap_err()
            .to_string();
        assert!(e.contains("every stack has a count of 0"), "{e}");
    }

    #[test]
    fn huge_counts_deep_stacks_and_bad_bytes_do_not_panic() {
        let max = u64::MAX;
        let text = format!("{HEADER}  k`a\n  {max}\n\n  k`b\n  {max}\n");
        let e = parse("t.txt", text.as_bytes()).unwrap_err().to_string();
        assert!(e.starts_with("t.txt: whole file:"), "{e}");
        let deep = "  k`f+0x1\n".repeat(100_000);
        let p = parse("t.txt", format!("{HEADER}{deep}  1\n").as_bytes()).unwrap();
        assert_eq!(p.tree.max_depth(), 100_000);
        let mut bytes = HEADER.as_bytes().to_vec();
        bytes.extend_from_slice(b"  k`\xf0\x28\x8c\xbc+0x1\n  1\n");
        let p = parse("t.txt", &bytes).unwrap();
        assert_eq!(p.folded_lines(), ["k`\u{fffd}(\u{fffd}\u{fffd} 1"]);
    }

    #[test]
    fn rust_demangling_leaves_other_names_alone() {
        assert_eq!(
            demangle_rust("rg::search_parallel::_$u7b$$u7b$closure$u7d$$u7d$::h6e849b55a66fcd85"),
            "rg::search_parallel::_{{closure}}"
        );
        assert_eq!(
            demangle_rust(
                "_$LT$F$u20$as$u20$alloc..boxed..FnBox$LT$A$GT$$GT$::call_box::h8612a2a83552fc2d"
            ),
            "<F as alloc::boxed::FnBox<A>>::call_box"
        );
        for unchanged in [
            "_ZN3std2rt19lang_start_internal17h540c897fe52ba9c5E",
            "std::sys::unix::fs::File::open",
            "héllo wörld ünïcode ✓ x",
        ] {
            assert!(
                matches!(demangle_rust(unchanged), Cow::Borrowed(_)),
                "{unchanged}"
            );
        }
        assert_eq!(
            uncpp("TestClass::TestClass2<blargh>(const char*)[__1cJTestClass2t6Mpkc_v_]"),
            "TestClass::TestClass2<blargh>"
        );
    }

    #[test]
    fn every_prefix_fails_cleanly_or_loads() {
        let text = format!("{HEADER}  k`a+0x1\n  k`b->c;d\n  3\n\n  u`x::y(int)\n  +0x2\n  1\n");
        for n in 0..text.len() {
            let one = parse("t.txt", &text.as_bytes()[..n]);
            // Read in parts: the same profile or the same error, never a panic.
            let parts = parse_in("t.txt", &text.as_bytes()[..n], Default::default(), 3, 0);
            match (one, parts) {
                (Ok(a), Ok(b)) => assert_eq!(dump(&a), dump(&b), "{n} bytes"),
                (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string(), "{n} bytes"),
                (a, b) => panic!("{n} bytes: {a:?} against {b:?}"),
            }
        }
    }
}
