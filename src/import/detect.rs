//! Format detection from content.
//!
//! JSON formats are told apart by their distinctive top-level keys, looked for in the
//! first megabyte as `"key"` followed by a colon (so a string *value* that happens to be
//! `"flamebearer"` does not count). Text formats are told apart line by line over the
//! first few hundred lines: folded stacks end in a count, `perf script` has indented
//! hexadecimal frame lines under unindented event headers, DTrace has indented
//! `module`function` frames and bare count lines. The file extension only breaks ties.

use super::folded::{overflowing_count, split_counts};
use super::text::preview;
use crate::model::SourceFormat;

/// How much of a JSON document is searched for keys.
const JSON_SNIFF_BYTES: usize = 1 << 20;
/// How many non-blank lines of a text document are classified.
const TEXT_SNIFF_LINES: usize = 400;

/// The format of `text`, or a description of what it starts with when no format matches.
pub fn detect(text: &[u8], name_hint: Option<&str>) -> Result<SourceFormat, String> {
    if looks_like_pprof(text) {
        return Ok(SourceFormat::Pprof);
    }
    if looks_binary(text) {
        let hint = if legacy_cpu_profile(text) {
            " (a legacy binary CPU profile of gperftools or Go before 1.9, which scorch does \
             not read: `pprof -proto FILE > FILE.pb` converts it to a pprof protobuf)"
        } else {
            ""
        };
        return Err(format!(
            "binary data starting with {}{hint}",
            hex_preview(&text[..text.len().min(8)])
        ));
    }
    let first = text.iter().position(|b| !b.is_ascii_whitespace());
    match first.map(|i| text[i]) {
        Some(b'{') | Some(b'[') => detect_json(text),
        Some(_) => detect_text(text, name_hint),
        None => Err("only whitespace".to_string()),
    }
}

fn detect_json(text: &[u8]) -> Result<SourceFormat, String> {
    // An object is classified by its top-level keys (found by a real scan, wherever they
    // are); arrays and anything undecided fall back to keys anywhere in the first MiB.
    if jaeger_data_first(text) {
        return Ok(SourceFormat::Jaeger);
    }
    let top = top_level_keys(text);
    let top_has = |k: &str| top.iter().any(|t| t == k);
    // Named first: a V8 heap snapshot has `nodes` and `samples` as a `.cpuprofile` does.
    if let Some(what) = other_json_format(&top) {
        return Err(format!("JSON that looks like {what}"));
    }
    if top_has("flamebearer") || top_has("flamegraph") {
        let head = &text[..text.len().min(JSON_SNIFF_BYTES)];
        let diff = top_has("leftTicks")
            || has_key(head, "leftTicks")
            || has_key_value(head, "format", "double");
        return Ok(if diff {
            SourceFormat::FlamebearerDiff
        } else {
            SourceFormat::FlamebearerSingle
        });
    }
    if top_has("traceEvents") {
        return Ok(SourceFormat::ChromeTrace);
    }
    // speedscope without `$schema` whose `shared` frames follow profiles longer than the
    // sniffed megabyte (a preview, which sniffs the head only, still sees none).
    if top_has("profiles") && (top_has("shared") || top_has("$schema") && speedscope_schema(text)) {
        return Ok(SourceFormat::Speedscope);
    }
    if top_has("span_sets") {
        return Ok(SourceFormat::TiDBTrace);
    }
    // A V8 CPU profile (`node --cpu-prof`, DevTools): `nodes` comes first, and a real
    // profile's node list is often longer than the sniffed megabyte.
    if top_has("nodes") && (top_has("samples") || top_has("timeDeltas")) {
        return Ok(SourceFormat::CpuProfile);
    }
    // V8's profiles written as one nested tree: a sampling heap profile (`selfSize` in
    // its nodes) or an old `.cpuprofile` (`hitCount`, `timestamps`).
    if top_has("head") && !top_has("nodes") {
        let head = &text[..text.len().min(JSON_SNIFF_BYTES)];
        if has_key(head, "selfSize") && has_key(head, "callFrame") {
            return Ok(SourceFormat::HeapProfile);
        }
        if has_key(head, "hitCount") || top_has("timestamps") {
            return Ok(SourceFormat::CpuProfile);
        }
    }
    if top_has("resourceSpans")
        || top_has("result") && has_key(&text[..text.len().min(JSON_SNIFF_BYTES)], "resourceSpans")
    {
        return Ok(SourceFormat::Otlp);
    }
    if top_has("meta") && (top_has("threads") || top_has("processes")) {
        return Ok(SourceFormat::FirefoxProfile);
    }
    // Firefox DevTools' legacy recording export: {label, duration, markers, …, profile: {meta, threads}}.
    if top_has("profile") && top_has("markers") {
        return Ok(SourceFormat::FirefoxProfile);
    }
    // The Firefox profiler's pre-gecko "cleopatra" format: {format, meta, profileJSON,
    // symbolicationTable}.
    if top_has("profileJSON") && (top_has("symbolicationTable") || top_has("meta")) {
        return Ok(SourceFormat::FirefoxProfile);
    }
    let head = &text[..text.len().min(JSON_SNIFF_BYTES)];
    let has = |key: &str| has_key(head, key);
    if has("flamebearer")
        || (has("flamegraph") && has("levels"))
        || (has("levels") && has("numTicks"))
    {
        let diff = has("leftTicks") || has_key_value(head, "format", "double");
        return Ok(if diff {
            SourceFormat::FlamebearerDiff
        } else {
            SourceFormat::FlamebearerSingle
        });
    }
    // An empty array is the array form of a Chrome trace with no events, whose importer
    // says so, as it does for `{"traceEvents": []}`.
    let empty_array = text
        .trim_ascii()
        .strip_prefix(b"[")
        .and_then(|t| t.strip_suffix(b"]"))
        .is_some_and(|inside| inside.trim_ascii().is_empty());
    if empty_array || has("traceEvents") || (has("ph") && (has("ts") || has("name"))) {
        return Ok(SourceFormat::ChromeTrace);
    }
    if has("meta") && (has("threads") || has("processes") || has("interval")) {
        return Ok(SourceFormat::FirefoxProfile);
    }
    if (has("$schema") && find(head, b"speedscope").is_some()) || (has("shared") && has("profiles"))
    {
        return Ok(SourceFormat::Speedscope);
    }
    if has("resourceSpans") {
        return Ok(SourceFormat::Otlp);
    }
    if (has("spans") && (has("traceID") || has("traceId") || has("processes")))
        || (has("traceID") && has("spanID"))
        || (has("traceId") && has("spanId") && has("operationName"))
    {
        return Ok(SourceFormat::Jaeger);
    }
    if has("nodes") && (has("timeDeltas") || has("samples")) {
        return Ok(SourceFormat::CpuProfile);
    }
    Err(
        "JSON without the keys of any known profile format (looked for `flamebearer`, \
         `flamegraph`, `traceEvents`, `profiles`, `resourceSpans`, `spans`, `meta`, `nodes`, \
         `head`)"
            .to_string(),
    )
}

/// A JSON profile format scorch does not read, recognised by its top-level keys, with
/// what to record or convert instead.
fn other_json_format(top: &[String]) -> Option<&'static str> {
    let has = |k: &str| top.iter().any(|t| t == k);
    // (The key scan stops at `samples` after `nodes`, before a snapshot's `strings`.)
    if has("snapshot") && has("nodes") {
        return Some(
            "a V8 heap snapshot (`.heapsnapshot`: the object graph at one moment), not a \
             profile: record an allocation profile (`.heapprofile`, DevTools' \"Allocation \
             sampling\" or `node --heap-prof`), which scorch reads",
        );
    }
    if has("frames") && has("raw") && has("mode") {
        return Some(
            "a Ruby stackprof dump, which scorch does not read; `stackprof --stackcollapse` \
             writes folded stacks",
        );
    }
    if has("dhatFileVersion") {
        return Some("a DHAT heap profile (valgrind), which scorch does not read");
    }
    if has("resourceProfiles") {
        return Some(
            "OpenTelemetry's profiles signal, which scorch does not read; its pprof export \
             opens",
        );
    }
    if has("recording") && has("version") {
        return Some("a Safari timeline recording, which scorch does not read");
    }
    None
}

fn detect_text(text: &[u8], name_hint: Option<&str>) -> Result<SourceFormat, String> {
    // Formats scorch does not read, named by their first lines: some of their lines look
    // like perf script's or folded stacks' (a legacy heap profile's `1: 9216 [...] @ 0x…`).
    if let Some(what) = other_text_format(text) {
        let first = text
            .split(|&b| b == b'\n')
            .find(|l| !l.trim_ascii().is_empty())
            .map(preview)
            .unwrap_or_default();
        return Err(format!("text that looks like {what}; first line: {first}"));
    }
    let mut folded = 0usize;
    let mut folded_diff = None::<bool>;
    let mut perf_frames = 0usize;
    let mut perf_headers = 0usize;
    let mut dtrace_frames = 0usize;
    let mut bare_counts = 0usize;
    let mut considered = 0usize;
    let mut first_line: Option<&[u8]> = None;

    let mut dtrace_header = false;
    for raw in text.split(|&b| b == b'\n').take(TEXT_SNIFF_LINES * 4) {
        let line = raw.strip_suffix(b"\r").unwrap_or(raw);
        let trimmed = line.trim_ascii();
        if trimmed.is_empty() {
            continue;
        }
        if considered >= TEXT_SNIFF_LINES {
            break;
        }
        considered += 1;
        first_line.get_or_insert(line);
        if trimmed.starts_with(b"#") || trimmed.starts_with(b"//") {
            considered -= 1;
            continue;
        }
        if trimmed.starts_with(b"CPU") && find(trimmed, b"FUNCTION:NAME").is_some() {
            dtrace_header = true;
            continue;
        }
        if is_perf_frame(line, trimmed) {
            perf_frames += 1;
            continue;
        }
        if is_perf_header(trimmed) {
            perf_headers += 1;
            continue;
        }
        let indented = line[0] == b' ' || line[0] == b'\t';
        if indented {
            if trimmed.contains(&b'`') || trimmed.starts_with(b"0x") {
                dtrace_frames += 1;
            } else if trimmed.iter().all(u8::is_ascii_digit) {
                bare_counts += 1;
            }
            continue;
        }
        if let Some(c) = split_counts(trimmed) {
            folded += 1;
            folded_diff.get_or_insert(c.diff.is_some());
        } else if overflowing_count(trimmed).is_some() {
            // A count too large for 64 bits: folded stacks, whose importer says so.
            folded += 1;
        }
    }

    if considered == 0 {
        return Err("only comments".to_string());
    }
    let mostly_folded = folded * 2 >= considered;
    if !mostly_folded && perf_headers > 0 && (perf_frames > 0 || perf_headers * 2 >= considered) {
        return Ok(SourceFormat::PerfScript);
    }
    if !mostly_folded && (dtrace_header || (dtrace_frames > 0 && bare_counts > 0)) {
        return Ok(SourceFormat::DTrace);
    }
    let folded_ext = name_hint.is_some_and(|n| {
        let n = n.to_ascii_lowercase();
        n.ends_with(".folded") || n.ends_with(".collapsed") || n.ends_with(".stacks")
    });
    // A few folded-looking lines among many others are not folded stacks with damage but
    // another format whose lines happen to end in a number (pprof's legacy text
    // profiles, callgrind, a GHC report): loading them would draw nonsense.
    if mostly_folded || (folded > 0 && folded_ext) {
        return Ok(if folded_diff == Some(true) {
            SourceFormat::FoldedDiff
        } else {
            SourceFormat::Folded
        });
    }
    if folded_ext {
        return Ok(SourceFormat::Folded);
    }
    let preview = first_line.map(preview).unwrap_or_default();
    Err(format!(
        "text that is not folded stacks (`frame;frame;frame count` per line), perf script \
         or DTrace output; first line: {preview}"
    ))
}

/// A text profile format scorch does not read, recognised by its first lines, with how
/// to turn it into one it reads.
fn other_text_format(text: &[u8]) -> Option<&'static str> {
    let head = &text[..text.len().min(64 << 10)];
    let lines = || {
        head.split(|&b| b == b'\n')
            .map(|l| l.trim_ascii())
            .filter(|l| !l.is_empty())
            .take(50)
    };
    let first = lines().next()?;
    let starts = |p: &[u8]| first.starts_with(p);
    if starts(b"# callgrind format")
        || (lines().any(|l| l.starts_with(b"events:")) && lines().any(|l| l.starts_with(b"fn=")))
    {
        return Some(
            "callgrind output (valgrind, `pprof -callgrind`), which scorch does not read; \
             for a pprof profile open the profile itself",
        );
    }
    if starts(b"heap profile:")
        || starts(b"--- contention")
        || starts(b"--- heapz")
        || starts(b"--- threadz")
        || starts(b"threadcreate profile:")
        || starts(b"goroutine profile:")
        || starts(b"PeriodType:")
    {
        return Some(
            "a legacy pprof text profile (gperftools, old Go or Java), which scorch does not \
             read: `pprof -proto FILE > FILE.pb` converts it to a pprof protobuf",
        );
    }
    if lines()
        .take(4)
        .any(|l| find(l, b"Time and Allocation Profiling Report").is_some())
    {
        return Some(
            "a GHC profiling report (`+RTS -p`), which scorch does not read; \
             `ghc-prof-flamegraph` or inferno's `collapse-ghcprof` turn it into folded stacks",
        );
    }
    if starts(b"Analysis of sampling") {
        return Some(
            "macOS `sample` output, which scorch does not read; inferno's `collapse-sample` \
             turns it into folded stacks",
        );
    }
    if starts(b"v8-version,") || starts(b"shared-library,") || starts(b"code-creation,") {
        return Some(
            "a V8 log (`node --prof`), which scorch does not read; record with \
             `node --cpu-prof` instead, whose `.cpuprofile` it reads",
        );
    }
    None
}

/// The header of a legacy binary CPU profile (gperftools' `ProfilerStart`, Go's before
/// 1.9, Java agents): the words 0, 3, 0 (1 for Java's), period, 0 in 32 or 64 bits,
/// either byte order.
fn legacy_cpu_profile(text: &[u8]) -> bool {
    let words = |size: usize, big: bool| -> Option<[u64; 3]> {
        let mut w = [0u64; 3];
        for (k, slot) in w.iter_mut().enumerate() {
            let b = text.get(k * size..(k + 1) * size)?;
            let mut v = 0u64;
            for i in 0..size {
                let byte = if big { b[i] } else { b[size - 1 - i] };
                v = (v << 8) | u64::from(byte);
            }
            *slot = v;
        }
        Some(w)
    };
    [(4, false), (4, true), (8, false), (8, true)]
        .into_iter()
        .any(|(size, big)| matches!(words(size, big), Some([0, 3, 0 | 1])))
}

/// Keys of the top-level object, in order, scanning until a key that decides the format
/// is found or 256 MiB were read. Empty for arrays and non-objects.
pub(super) fn top_level_keys(text: &[u8]) -> Vec<String> {
    const DECISIVE: [&str; 5] = [
        "flamebearer",
        "flamegraph",
        "traceEvents",
        "resourceSpans",
        "span_sets",
    ];
    const BUDGET: usize = 256 << 20;
    let mut keys = Vec::new();
    let start = match text.iter().position(|b| !b.is_ascii_whitespace()) {
        Some(i) if text[i] == b'{' => i + 1,
        _ => return keys,
    };
    let mut expect_key = true;
    let mut i = start;
    let end = text.len().min(BUDGET);
    while i < end {
        match text[i] {
            b'"' => {
                let s = i + 1;
                let mut j = s;
                // To the closing quote, over escapes (a string's bytes in word-sized steps).
                while let Some(k) = memchr::memchr2(b'"', b'\\', &text[j.min(text.len())..]) {
                    j += k;
                    if text[j] == b'"' {
                        break;
                    }
                    j += 2;
                }
                if j >= text.len() || text[j] != b'"' {
                    j = text.len();
                }
                if expect_key {
                    let key = String::from_utf8_lossy(&text[s..j.min(text.len())]).to_string();
                    let seen = |k: &str| keys.iter().any(|x: &String| x == k);
                    let done = DECISIVE.contains(&key.as_str())
                        || (key == "threads" && seen("meta"))
                        || (key == "meta" && seen("threads"))
                        || (key == "profile" && seen("markers"))
                        || ((key == "samples" || key == "timeDeltas") && seen("nodes"))
                        // A speedscope export (`$schema` names speedscope's) decides at
                        // its `profiles`: a 1 GB file's were scanned for 0.6 s.
                        || (key == "profiles" && seen("$schema") && speedscope_schema(text));
                    keys.push(key);
                    expect_key = false;
                    if done {
                        return keys;
                    }
                }
                i = j + 1;
                continue;
            }
            // A member's value: skipped to its matching close.
            b'{' | b'[' => match super::chrome::scan::skip_nested(&text[..end], i) {
                Some(after) => {
                    i = after;
                    continue;
                }
                None => break,
            },
            b'}' | b']' => return keys,
            b',' => expect_key = true,
            _ => {}
        }
        i += 1;
    }
    keys
}

/// Whether the document is the Jaeger query API's `{"data": [trace, …]}`: `data` its
/// first member, and the first element of that array an object with `spans` and a
/// `traceID`, `traceId` or `processes`. Decided there, the scan for top-level keys does
/// not skip the whole array (256 MiB of a big file: 0.2–0.3 s) only to find none.
fn jaeger_data_first(text: &[u8]) -> bool {
    let ws = |mut i: usize| {
        while text.get(i).is_some_and(u8::is_ascii_whitespace) {
            i += 1;
        }
        i
    };
    let mut i = ws(0);
    for token in [&b"{"[..], b"\"data\"", b":", b"["] {
        if !text[i.min(text.len())..].starts_with(token) {
            return false;
        }
        i = ws(i + token.len());
    }
    if text.get(i) != Some(&b'{') {
        return false;
    }
    let trace = top_level_keys(&text[i..]);
    let has = |k: &str| trace.iter().any(|t| t == k);
    has("spans") && (has("traceID") || has("traceId") || has("processes"))
}

/// Whether the first MiB names speedscope's file format schema.
fn speedscope_schema(text: &[u8]) -> bool {
    find(&text[..text.len().min(JSON_SNIFF_BYTES)], b"speedscope").is_some()
}

/// A `perf script` frame line: a hexadecimal address of at least six digits, then a
/// symbol (`ffffffff8103d0ca native_write_msr ([kernel.kallsyms])`), indented or not; or
/// an indented line of any hexadecimal address in the shape the perf script importer
/// reads (`\t0 [unknown] ([unknown])`, `\t4d6 main (/bin/x)`), so that a short script
/// of small addresses is recognised however few lines it has.
fn is_perf_frame(line: &[u8], trimmed: &[u8]) -> bool {
    let mut toks = trimmed
        .split(|&b| b == b' ' || b == b'\t')
        .filter(|t| !t.is_empty());
    let Some(first) = toks.next() else {
        return false;
    };
    let hex = first.strip_prefix(b"0x").unwrap_or(first);
    if !hex.iter().all(u8::is_ascii_hexdigit) || toks.next().is_none() {
        return false;
    }
    let indented = line.first().is_some_and(|&b| b == b' ' || b == b'\t');
    hex.len() >= 6 || (!hex.is_empty() && indented && super::perf::is_stack_line(trimmed))
}

/// A `perf script` event header: `comm pid[/tid] [cpu] [time:] [period] event:` — a
/// number (pid) followed later by a token ending in `:` (timestamp or event name), and no
/// `;` (which would make it a folded stack).
fn is_perf_header(trimmed: &[u8]) -> bool {
    if trimmed.contains(&b';') {
        return false;
    }
    let mut seen_pid = false;
    for tok in trimmed
        .split(|&b| b == b' ' || b == b'\t')
        .filter(|t| !t.is_empty())
    {
        let is_pid =
            tok.iter().all(|&b| b.is_ascii_digit() || b == b'/') && tok[0].is_ascii_digit();
        if seen_pid && tok.len() > 1 && tok.ends_with(b":") {
            return true;
        }
        seen_pid |= is_pid;
    }
    false
}

/// `"key"` followed by optional whitespace and a colon.
fn has_key(hay: &[u8], key: &str) -> bool {
    let pat = format!("\"{key}\"");
    let pat = pat.as_bytes();
    let mut from = 0;
    while let Some(i) = find(&hay[from..], pat) {
        let after = from + i + pat.len();
        let rest = &hay[after..];
        let skip = rest.iter().take_while(|b| b.is_ascii_whitespace()).count();
        if rest.get(skip) == Some(&b':') {
            return true;
        }
        from = after;
    }
    false
}

/// `"key": "value"` with optional whitespace around the colon.
fn has_key_value(hay: &[u8], key: &str, value: &str) -> bool {
    let pat = format!("\"{key}\"");
    let pat = pat.as_bytes();
    let want = format!("\"{value}\"");
    let mut from = 0;
    while let Some(i) = find(&hay[from..], pat) {
        let after = from + i + pat.len();
        let rest = <[u8]>::trim_ascii_start(&hay[after..]);
        if let Some(rest) = rest.strip_prefix(b":")
            && <[u8]>::trim_ascii_start(rest).starts_with(want.as_bytes())
        {
            return true;
        }
        from = after;
    }
    false
}

pub(super) fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    memchr::memmem::find(hay, needle)
}

fn hex_preview(b: &[u8]) -> String {
    b.iter()
        .map(|x| format!("{x:02x}"))
        .collect::<Vec<_>>()
        .join(" ")
}

fn looks_binary(text: &[u8]) -> bool {
    let head = &text[..text.len().min(512)];
    head.iter()
        .filter(|&&b| b == 0 || (b < 0x20 && !matches!(b, b'\n' | b'\r' | b'\t' | 0x0c)))
        .count()
        * 20
        > head.len().max(1)
}

/// Reads a protobuf varint at `i`: (value, bytes used).
fn varint(b: &[u8], mut i: usize) -> Option<(u64, usize)> {
    let start = i;
    let mut v = 0u64;
    let mut shift = 0;
    while i < b.len() && shift < 64 {
        let byte = b[i];
        v |= u64::from(byte & 0x7f) << shift;
        i += 1;
        if byte & 0x80 == 0 {
            return Some((v, i - start));
        }
        shift += 7;
    }
    None
}

/// A pprof `Profile` message: the first fields (up to 32) all have `Profile`'s field
/// numbers (1..=14) with the right wire types (messages and strings length-delimited,
/// integers varint; `comment` either) and lengths that fit the input.
fn looks_like_pprof(b: &[u8]) -> bool {
    let mut i = 0;
    let mut fields = 0;
    while i < b.len() && fields < 32 {
        let Some((tag, n)) = varint(b, i) else {
            return false;
        };
        i += n;
        let (field, wire) = (tag >> 3, tag & 7);
        let ok = match field {
            1..=6 | 11 => wire == 2,
            7..=10 | 12 | 14 => wire == 0,
            13 => wire == 0 || wire == 2,
            _ => false,
        };
        if !ok {
            return false;
        }
        let Some((v, n)) = varint(b, i) else {
            return false;
        };
        i += n;
        if wire == 2 {
            match i.checked_add(v as usize) {
                Some(end) if end <= b.len() => i = end,
                // A length past the end of a profile's field (a damaged or truncated
                // file): the pprof importer says where, which "binary data" would not.
                _ => return fields >= 1 || looks_binary(b),
            }
        }
        fields += 1;
    }
    fields >= 3 || (fields >= 1 && i == b.len() && b.len() >= 8)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Found by the browser-peer harness: `node --cpu-prof` writes `nodes` first, and a
    /// profile of more than about 6000 nodes pushed `samples` past the first MiB, so it was
    /// "unrecognised".
    #[test]
    fn a_cpuprofile_whose_nodes_fill_the_first_megabyte_is_recognised() {
        let mut doc = String::from(r#"{"nodes":["#);
        for id in 1..=20_000 {
            if id > 1 {
                doc.push(',');
            }
            doc.push_str(&format!(
                r#"{{"id":{id},"callFrame":{{"functionName":"f{id}","scriptId":"1","url":"file:///x.js","lineNumber":{id},"columnNumber":0}},"hitCount":1,"children":[]}}"#
            ));
        }
        doc.push_str(r#"],"startTime":0,"endTime":100,"samples":[1,2],"timeDeltas":[1,1]}"#);
        assert!(doc.len() > 2 * JSON_SNIFF_BYTES, "{}", doc.len());
        assert_eq!(detect(doc.as_bytes(), None), Ok(SourceFormat::CpuProfile));
    }

    #[test]
    fn speedscope_without_schema_whose_frames_follow_the_first_megabyte_is_recognised() {
        let samples = vec!["[0,1,2]"; 400_000].join(",");
        let doc = format!(
            r#"{{"exporter":"x","profiles":[{{"type":"sampled","name":"m","unit":"none","startValue":0,"endValue":1,"samples":[{samples}],"weights":[]}}],"shared":{{"frames":[{{"name":"a"}}]}}}}"#
        );
        assert!(doc.len() > 2 * JSON_SNIFF_BYTES, "{}", doc.len());
        assert_eq!(detect(doc.as_bytes(), None), Ok(SourceFormat::Speedscope));
    }

    #[test]
    fn folded_and_diff() {
        assert_eq!(detect(b"a;b;c 1\na;b 2\n", None), Ok(SourceFormat::Folded));
        assert_eq!(
            detect(b"a;b;c 1 4\na;b 2 0\n", None),
            Ok(SourceFormat::FoldedDiff)
        );
        assert_eq!(
            detect(b"# comment\na;b 1\nTHIS IS BAD\n", None),
            Ok(SourceFormat::Folded)
        );
    }

    #[test]
    fn perf_script() {
        let perf = b"java 12345 [001] 1234.567890: cycles:\n\
                     \t7f1c2b3a4d5e func_a (/lib/x.so)\n\
                     \tffffffff81000000 func_b ([kernel.kallsyms])\n\n";
        assert_eq!(detect(perf, None), Ok(SourceFormat::PerfScript));
    }

    #[test]
    fn dtrace() {
        let d = b"\n  libc.so.1`_lwp_park+0x15\n  libc.so.1`cond_wait+0x2a\n  5\n";
        assert_eq!(detect(d, None), Ok(SourceFormat::DTrace));
    }

    #[test]
    fn json_kinds() {
        assert_eq!(
            detect(br#"{"flamebearer": {"names": []}, "metadata": {}}"#, None),
            Ok(SourceFormat::FlamebearerSingle)
        );
        assert_eq!(
            detect(
                br#"{"leftTicks": 1, "rightTicks": 2, "flamebearer": {}}"#,
                None
            ),
            Ok(SourceFormat::FlamebearerDiff)
        );
        assert_eq!(
            detect(br#"{"flamegraph": {"names": [], "levels": []}}"#, None),
            Ok(SourceFormat::FlamebearerSingle)
        );
        assert_eq!(
            detect(br#"[{"name":"a","ph":"B","ts":1}]"#, None),
            Ok(SourceFormat::ChromeTrace)
        );
        assert_eq!(
            detect(br#"{"traceEvents": []}"#, None),
            Ok(SourceFormat::ChromeTrace)
        );
        assert_eq!(detect(b" [ \n ]\n", None), Ok(SourceFormat::ChromeTrace));
        assert_eq!(
            detect(br#"{"resourceSpans": []}"#, None),
            Ok(SourceFormat::Otlp)
        );
        // A string value is not a key.
        assert!(detect(br#"{"x": "flamebearer"}"#, None).is_err());
    }

    /// The query API's `{"data": [trace, …]}` is Jaeger at its first trace: the rest of
    /// the array is not scanned for a top-level key (here a later `traceEvents` would
    /// decide otherwise); anything else in `data` is decided as before.
    #[test]
    fn a_leading_data_array_of_traces_is_jaeger() {
        let trace = r#"{"traceID":"1","spans":[{"spanID":"1","startTime":1,"duration":1}]}"#;
        for doc in [
            format!(r#"{{"data":[{trace}]}}"#),
            format!("\n{{ \"data\" :\n [ {trace} ], \"traceEvents\": []}}"),
            r#"{"data":[{"processes":{},"spans":[]}],"total":0}"#.to_string(),
        ] {
            assert!(jaeger_data_first(doc.as_bytes()), "{doc}");
            assert_eq!(
                detect(doc.as_bytes(), None),
                Ok(SourceFormat::Jaeger),
                "{doc}"
            );
        }
        for doc in [
            r#"{"total":0,"data":[{"traceID":"1","spans":[]}]}"#,
            r#"{"data":{"traceID":"1","spans":[]}}"#,
            r#"{"data":[{"traceID":"1"}],"spans":[]}"#,
            r#"{"data":[{"spans":[]}]}"#,
            r#"{"data":[[{"traceID":"1","spans":[]}]]}"#,
            r#"[{"data":[{"traceID":"1","spans":[]}]}]"#,
        ] {
            assert!(!jaeger_data_first(doc.as_bytes()), "{doc}");
        }
        let chrome = br#"{"data":[{"x":1}],"traceEvents":[]}"#;
        assert_eq!(detect(chrome, None), Ok(SourceFormat::ChromeTrace));
    }

    #[test]
    fn top_level_keys_skip_nested_and_strings() {
        let doc = br#"{"a": {"traceEvents": 1}, "b\"c": "x,{", "flamebearer": {}}"#;
        assert_eq!(top_level_keys(doc), vec!["a", "b\\\"c", "flamebearer"]);
        assert!(top_level_keys(b"[1, 2]").is_empty());
        let firefox =
            br#"{"label":"","markers":[{"name":"x"}],"profile":{"meta":{},"threads":[]}}"#;
        assert_eq!(detect(firefox, None), Ok(SourceFormat::FirefoxProfile));
        let cleopatra = br#"{"format":"profileJSONWithSymbolicationTable,1","profileJSON":[],
            "symbolicationTable":{}}"#;
        assert_eq!(detect(cleopatra, None), Ok(SourceFormat::FirefoxProfile));
    }

    /// A speedscope export decides at its `profiles` (not scanned to find `shared`);
    /// another `$schema` does not.
    #[test]
    fn a_speedscope_schema_decides_at_profiles() {
        let doc = |schema: &str| {
            format!(
                r#"{{"$schema":"{schema}","profiles":[{{"type":"evented","events":[{}]}}],"shared":{{"frames":[]}}}}"#,
                vec![r#"{"type":"O","frame":0,"at":1}"#; 40_000].join(",")
            )
        };
        let ours = doc("https://www.speedscope.app/file-format-schema.json");
        assert!(ours.len() > JSON_SNIFF_BYTES);
        assert_eq!(top_level_keys(ours.as_bytes()), ["$schema", "profiles"]);
        assert_eq!(detect(ours.as_bytes(), None), Ok(SourceFormat::Speedscope));
        let other = doc("https://example.com/schema.json");
        assert_eq!(
            top_level_keys(other.as_bytes()),
            ["$schema", "profiles", "shared"]
        );
        assert_eq!(detect(other.as_bytes(), None), Ok(SourceFormat::Speedscope));
    }

    /// The word-at-a-time skip ends every value where a byte-at-a-time one does: long
    /// runs of numbers (past the 64 bytes where `memchr` takes over), strings with
    /// brackets, quotes and escapes in them, a value cut short.
    #[test]
    fn nested_values_end_where_a_byte_loop_ends_them() {
        fn reference(t: &[u8]) -> Option<usize> {
            let (mut i, mut depth) = (0, 0usize);
            loop {
                match *t.get(i)? {
                    b'"' => {
                        i += 1;
                        loop {
                            match *t.get(i)? {
                                b'\\' => i += 2,
                                b'"' => break,
                                _ => i += 1,
                            }
                        }
                        i += 1;
                    }
                    b'{' | b'[' => {
                        depth += 1;
                        i += 1;
                    }
                    b'}' | b']' => {
                        depth -= 1;
                        i += 1;
                        if depth == 0 {
                            return Some(i);
                        }
                    }
                    _ => i += 1,
                }
            }
        }
        let mut rng = crate::generator::Rng(77);
        let mut long_runs = 0;
        for case in 0..400 {
            let mut v = String::from("[");
            let mut open = vec![']'];
            for _ in 0..rng.below(80) {
                match rng.below(8) {
                    0 => {
                        v += "{\"k\":[";
                        open.push('}');
                        open.push(']');
                    }
                    1 if open.len() > 1 => v.push(open.pop().unwrap_or(']')),
                    2 => v += "\"a]}\\\"[{\\\\\",",
                    3 => {
                        let n = rng.below(200) as usize;
                        long_runs += usize::from(n > 30);
                        v += &"1234567,".repeat(n);
                    }
                    _ => v += "12,",
                }
            }
            while let Some(c) = open.pop() {
                v.push(c);
            }
            v += " tail";
            let t = v.as_bytes();
            let skip = super::super::chrome::scan::skip_nested;
            assert_eq!(skip(t, 0), reference(t), "case {case}: {v}");
            let cut = &t[..rng.below(t.len() as u64) as usize];
            if !cut.is_empty() {
                assert_eq!(skip(cut, 0), reference(cut), "case {case} cut");
            }
        }
        assert!(long_runs > 50, "{long_runs} long runs");
    }

    /// Top-level keys are found past nested values of every kind, with brackets and
    /// quotes inside their strings.
    #[test]
    fn top_level_keys_of_random_documents() {
        let mut rng = crate::generator::Rng(0x2545_f491_4f6c_dd1d);
        let mut next = move |n: u64| rng.below(n);
        for _ in 0..300 {
            let mut doc = String::from("{");
            let mut want = Vec::new();
            for k in 0..1 + next(6) {
                // A nested value: arrays and objects of numbers and tricky strings.
                let mut value = String::new();
                let mut open = Vec::new();
                for _ in 0..next(60) {
                    match next(7) {
                        0 => {
                            value += "[";
                            open.push(']');
                        }
                        1 => {
                            value += "{\"k\":";
                            open.push('}');
                        }
                        2 if !open.is_empty() => {
                            value.push(open.pop().unwrap());
                        }
                        3 => value += "\"a]}\\\"[{,\"",
                        _ => value += "12",
                    }
                    if !value.ends_with(['[', ':']) {
                        value += ",";
                    }
                }
                let value = value.trim_end_matches(',').to_string();
                let mut v = if value.is_empty() {
                    "1".to_string()
                } else {
                    value
                };
                while let Some(c) = open.pop() {
                    if v.ends_with([',', ':', '[']) && c == '}' {
                        v += "0";
                    }
                    v = v.trim_end_matches(',').to_string();
                    v.push(c);
                }
                if k > 0 {
                    doc += ",";
                }
                let key = format!("key{k}");
                doc += &if next(2) == 0 {
                    format!("\"{key}\":[{v}]")
                } else {
                    format!("\"{key}\":{{\"v\":[{v}],\"w\":\"}}\"}}")
                };
                want.push(key);
            }
            doc += "}";
            assert_eq!(top_level_keys(doc.as_bytes()), want, "{doc}");
        }
    }

    #[test]
    fn unknown_text_is_described() {
        let e = detect(b"main\tclass=inferno\ttitle=foo\n", None).unwrap_err();
        assert!(e.contains("first line: 'main"), "{e}");
    }

    /// Issue 14, failure 8: three samples of one or two frames with short addresses were
    /// "text that is not folded stacks…": the frames were not recognised, and three
    /// headers are not half of eight lines.
    #[test]
    fn a_perf_script_with_few_frames_is_recognised() {
        let perf = b"prog 1234 100.000001: cycles:\n\t4d6 main (/bin/prog)\n\n\
                     prog 1234 100.000002: cycles:\n\t4d6 main (/bin/prog)\n\t600 start (/bin/prog)\n\n\
                     prog 1234 100.000003: cycles:\n\t0 [unknown] ([unknown])\n\t600 start (/bin/prog)\n";
        assert_eq!(detect(perf, None), Ok(SourceFormat::PerfScript));
        let p = super::super::perf::parse("few.txt", perf).unwrap();
        assert_eq!(p.tree.total(0), 3);
        // One sample of one frame.
        let one = b"prog 1234 100.000001: cycles:\n\t1 main (/bin/prog)\n";
        assert_eq!(detect(one, None), Ok(SourceFormat::PerfScript));
        // DTrace frames and folded lines are not taken for perf frames.
        assert!(!is_perf_frame(
            b"  libc.so.1`_write+0x15",
            b"libc.so.1`_write+0x15"
        ));
        assert!(!is_perf_frame(b"  0xffff", b"0xffff"));
        assert!(!is_perf_frame(b"a (b)", b"a (b)"));
    }

    #[test]
    fn old_perf_and_single_line_perf() {
        let old =
            b"java 19983 cycles:\nffffffff8103d0ca native_write_msr_safe ([kernel.kallsyms])\n";
        assert_eq!(detect(old, None), Ok(SourceFormat::PerfScript));
        let single =
            b"  false 39654 19115.489713:  1 cycles:u:  ffffffff9b201293 [unknown] ([unknown])\n";
        assert_eq!(detect(single, None), Ok(SourceFormat::PerfScript));
        assert_eq!(
            detect(
                b"CPU     ID                    FUNCTION:NAME\n  8  35077   :tick-60s\n",
                None
            ),
            Ok(SourceFormat::DTrace)
        );
        // A folded file whose frames contain colons stays folded.
        assert_eq!(
            detect(b"main;a::b: 3\nmain 2\n", None),
            Ok(SourceFormat::Folded)
        );
    }

    #[test]
    fn binary() {
        // sample_type {type: 1, unit: 2}, time_nanos, period.
        let pprof = [
            0x0a, 0x04, 0x08, 0x01, 0x10, 0x02, 0x48, 0x96, 0x01, 0x60, 0x0a,
        ];
        assert_eq!(detect(&pprof, None), Ok(SourceFormat::Pprof));
        // A text file starting with a newline is not protobuf.
        assert_eq!(detect(b"\na;b 1\nc 2\n", None), Ok(SourceFormat::Folded));
        assert!(
            detect(&[0, 1, 2, 3, 0, 0, 0, 0], None)
                .unwrap_err()
                .starts_with("binary data")
        );
    }

    /// A few lines that happen to read as folded stacks among many that do not are
    /// another format (pprof's legacy thread profile below loaded as one stack named
    /// `threadcreate profile: total`); with a folded file's name they are damage.
    #[test]
    fn a_few_folded_looking_lines_are_not_folded_stacks() {
        let junk = "prologue\n1 @ 0x44cb3 0x45045\n1 @ 0x44cb3 0x45323\nsome text here\n";
        let doc = format!("main;run 7\n{junk}");
        let e = detect(doc.as_bytes(), None).unwrap_err();
        assert!(e.starts_with("text that is not folded stacks"), "{e}");
        assert_eq!(
            detect(doc.as_bytes(), Some("x.folded")),
            Ok(SourceFormat::Folded)
        );
        // Half the lines folded: damage, loaded (the bad lines are counted).
        let half = "a;b 1\nnot a stack\nc;d 2\nnor this\n";
        assert_eq!(detect(half.as_bytes(), None), Ok(SourceFormat::Folded));
    }

    /// Formats scorch does not read are named, with what converts them.
    #[test]
    fn other_profile_formats_are_named() {
        let cases: &[(&str, &str)] = &[
            (
                "threadcreate profile: total 7\n1 @ 0x44cb3 0x45045\n",
                "legacy pprof text profile",
            ),
            (
                "heap profile:    144:  8498176 [   144:  8498176] @ heapz_v2/524288\n     1:     9216 [     1:     9216] @ 0xc635c8 0x42ecc3\n",
                "legacy pprof text profile",
            ),
            (
                "--- contentionz 1 ---\ncycles/second = 3201000000\n",
                "legacy pprof",
            ),
            (
                "# callgrind format\nevents: Instructions\n\nfl=file1.c\nfn=main\n16 20\ncalls=1 50\n16 400\n",
                "callgrind",
            ),
            (
                "positions: instr line\nevents: cpu(ms)\n\nfn=main\n0 10\n",
                "callgrind",
            ),
            (
                "\tSun Aug  6 14:52 2023 Time and Allocation Profiling Report  (Final)\n\nmain Main a.hs:1 30.4 9.4 7 5617272\n",
                "GHC profiling report",
            ),
            (
                "Analysis of sampling rg (pid 64751) every 1 millisecond\nProcess: rg\n",
                "macOS `sample`",
            ),
            (
                "v8-version,6,0,287,53,0\nshared-library,\"node\",0x1,0x2,0\n",
                "V8 log",
            ),
        ];
        for (doc, want) in cases {
            let e = detect(doc.as_bytes(), None).unwrap_err();
            assert!(e.contains(want), "{doc:?}: {e}");
        }
        // The legacy binary CPU profile's header, 64-bit little-endian (gperftools) and
        // Java's 32-bit one.
        let cpu: Vec<u8> = [0u64, 3, 0, 10_000, 0, 1, 1, 0x4a2f10]
            .iter()
            .flat_map(|w| w.to_le_bytes())
            .collect();
        let java: Vec<u8> = [0u32, 3, 1, 10_000, 0, 1, 1, 0x4a2f10]
            .iter()
            .flat_map(|w| w.to_le_bytes())
            .collect();
        let json: &[(&str, &str)] = &[
            (
                r#"{"snapshot":{"meta":{}},"nodes":[0,1],"samples":[],"strings":["a"]}"#,
                "V8 heap snapshot",
            ),
            (
                r#"{"version":1.2,"mode":"cpu","interval":1000,"frames":{},"raw":[]}"#,
                "stackprof",
            ),
            (
                r#"{"dhatFileVersion":2,"mode":"rust-heap","pps":[]}"#,
                "DHAT",
            ),
            (r#"{"resourceProfiles":[]}"#, "profiles signal"),
            (r#"{"version":1,"recording":{"records":[]}}"#, "Safari"),
        ];
        for (doc, want) in json {
            let e = detect(doc.as_bytes(), None).unwrap_err();
            assert!(
                e.contains(want) && e.starts_with("JSON that looks like"),
                "{doc}: {e}"
            );
        }
        let e = detect(br#"{"a":1}"#, None).unwrap_err();
        assert!(!e.contains("looks like"), "{e}");
        for header in [cpu, java] {
            let e = detect(&header, None).unwrap_err();
            assert!(e.contains("legacy binary CPU profile"), "{e}");
        }
        let e = detect(&[0, 1, 2, 3, 0, 0, 0, 0], None).unwrap_err();
        assert!(!e.contains("legacy"), "{e}");
    }
}
