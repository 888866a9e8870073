//! Format detection from content.
//!
//! JSON formats are told apart by their distinctive top-level keys, looked for in the
//! first megabyte as `"key"` followed by a colon (so a string *value* that happens to be
//! `"flamebearer"` does not count). Text formats are told apart line by line over the
//! first few hundred lines: folded stacks end in a count, `perf script` has indented
//! hexadecimal frame lines under unindented event headers, DTrace has indented
//! `module`function` frames and bare count lines. The file extension only breaks ties.

use super::folded::split_counts;
use crate::model::SourceFormat;

/// How much of a JSON document is searched for keys.
const JSON_SNIFF_BYTES: usize = 1 << 20;
/// How many non-blank lines of a text document are classified.
const TEXT_SNIFF_LINES: usize = 400;

/// The format of `text`, or a description of what it starts with when no format matches.
pub fn detect(text: &[u8], name_hint: Option<&str>) -> Result<SourceFormat, String> {
    if looks_binary(text) {
        return if looks_like_pprof(text) {
            Ok(SourceFormat::Pprof)
        } else {
            Err(format!(
                "binary data starting with {}",
                hex_preview(&text[..text.len().min(8)])
            ))
        };
    }
    let first = text.iter().position(|b| !b.is_ascii_whitespace());
    match first.map(|i| text[i]) {
        Some(b'{') | Some(b'[') => detect_json(text),
        Some(_) => detect_text(text, name_hint),
        None => Err("only whitespace".to_string()),
    }
}

fn detect_json(text: &[u8]) -> Result<SourceFormat, String> {
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
    if has("traceEvents") || (has("ph") && (has("ts") || has("name"))) {
        return Ok(SourceFormat::ChromeTrace);
    }
    if find(head, b"speedscope").is_some() || (has("shared") && has("profiles")) {
        return Ok(SourceFormat::Speedscope);
    }
    if has("resourceSpans") {
        return Ok(SourceFormat::Otlp);
    }
    if has("spans") && (has("traceID") || has("traceId") || has("processes")) {
        return Ok(SourceFormat::Jaeger);
    }
    if has("meta") && (has("threads") || has("processes") || has("interval")) {
        return Ok(SourceFormat::FirefoxProfile);
    }
    if has("nodes") && (has("timeDeltas") || has("samples")) {
        return Ok(SourceFormat::CpuProfile);
    }
    Err(
        "JSON without the keys of any known profile format (looked for `flamebearer`, \
         `flamegraph`, `traceEvents`, `profiles`, `resourceSpans`, `spans`, `meta`, `nodes`)"
            .to_string(),
    )
}

fn detect_text(text: &[u8], name_hint: Option<&str>) -> Result<SourceFormat, String> {
    let mut folded = 0usize;
    let mut folded_diff = None::<bool>;
    let mut perf_frames = 0usize;
    let mut perf_headers = 0usize;
    let mut dtrace_frames = 0usize;
    let mut bare_counts = 0usize;
    let mut considered = 0usize;
    let mut first_line: Option<&[u8]> = None;

    for raw in text.split(|&b| b == b'\n').take(TEXT_SNIFF_LINES * 4) {
        let line = raw.strip_suffix(b"\r").unwrap_or(raw);
        let trimmed = trim_ascii(line);
        if trimmed.is_empty() {
            continue;
        }
        if considered >= TEXT_SNIFF_LINES {
            break;
        }
        considered += 1;
        first_line.get_or_insert(line);
        let indented = line[0] == b' ' || line[0] == b'\t';
        if indented {
            let tok = trimmed
                .split(|&b| b == b' ' || b == b'\t')
                .next()
                .unwrap_or(b"");
            let tok = tok.strip_prefix(b"0x").unwrap_or(tok);
            if tok.len() >= 4 && tok.iter().all(u8::is_ascii_hexdigit) {
                perf_frames += 1;
            } else if trimmed.contains(&b'`') || trimmed.starts_with(b"0x") {
                dtrace_frames += 1;
            } else if trimmed.iter().all(u8::is_ascii_digit) {
                bare_counts += 1;
            }
            continue;
        }
        if trimmed.starts_with(b"#") || trimmed.starts_with(b"//") {
            considered -= 1;
            continue;
        }
        if let Some(c) = split_counts(trimmed) {
            folded += 1;
            folded_diff.get_or_insert(c.diff.is_some());
        } else if trimmed.ends_with(b":") || find(trimmed, b": ").is_some() {
            perf_headers += 1;
        }
    }

    if considered == 0 {
        return Err("only comments".to_string());
    }
    if perf_frames > 0 && perf_headers > 0 && perf_frames >= folded {
        return Ok(SourceFormat::PerfScript);
    }
    if dtrace_frames > 0 && bare_counts > 0 && dtrace_frames >= folded {
        return Ok(SourceFormat::DTrace);
    }
    let folded_ext = name_hint.is_some_and(|n| {
        let n = n.to_ascii_lowercase();
        n.ends_with(".folded") || n.ends_with(".collapsed") || n.ends_with(".stacks")
    });
    if folded * 2 >= considered || (folded > 0 && (folded_ext || perf_frames + dtrace_frames == 0))
    {
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
        let rest = trim_start(&hay[after..]);
        if let Some(rest) = rest.strip_prefix(b":") {
            if trim_start(rest).starts_with(want.as_bytes()) {
                return true;
            }
        }
        from = after;
    }
    false
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    memchr::memmem::find(hay, needle)
}

fn trim_start(b: &[u8]) -> &[u8] {
    let n = b.iter().take_while(|c| c.is_ascii_whitespace()).count();
    &b[n..]
}

/// Trims ASCII whitespace at both ends.
pub(crate) fn trim_ascii(b: &[u8]) -> &[u8] {
    let start = b
        .iter()
        .position(|c| !c.is_ascii_whitespace())
        .unwrap_or(b.len());
    let end = b
        .iter()
        .rposition(|c| !c.is_ascii_whitespace())
        .map_or(start, |e| e + 1);
    &b[start..end]
}

/// A line shortened for messages: at most 80 characters, quoted.
pub(crate) fn preview(line: &[u8]) -> String {
    let s = String::from_utf8_lossy(line);
    let mut out: String = s.chars().take(80).collect();
    if s.chars().count() > 80 {
        out.push('…');
    }
    format!("'{out}'")
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

/// A pprof `Profile` message starts with field 1 (`sample_type`, length-delimited) whose
/// `ValueType` body starts with field 1 (`type`, varint): `0a <len> 08`.
fn looks_like_pprof(b: &[u8]) -> bool {
    if b.first() != Some(&0x0a) {
        return false;
    }
    // Skip the length varint.
    let mut i = 1;
    while i < b.len() && i < 6 && b[i] & 0x80 != 0 {
        i += 1;
    }
    b.get(i + 1) == Some(&0x08)
}

#[cfg(test)]
mod tests {
    use super::*;

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
        assert_eq!(
            detect(br#"{"resourceSpans": []}"#, None),
            Ok(SourceFormat::Otlp)
        );
        // A string value is not a key.
        assert!(detect(br#"{"x": "flamebearer"}"#, None).is_err());
    }

    #[test]
    fn unknown_text_is_described() {
        let e = detect(b"main\tclass=inferno\ttitle=foo\n", None).unwrap_err();
        assert!(e.contains("first line: 'main"), "{e}");
    }

    #[test]
    fn binary() {
        assert_eq!(
            detect(&[0x0a, 0x04, 0x08, 0x01, 0x10, 0x02, 0, 0, 0], None),
            Ok(SourceFormat::Pprof)
        );
        assert!(
            detect(&[0, 1, 2, 3, 0, 0, 0, 0], None)
                .unwrap_err()
                .starts_with("binary data")
        );
    }
}
