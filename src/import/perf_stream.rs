//! `perf script` delivered a block at a time (a gzip stream being decompressed): each
//! block is parsed up to its last blank line (a sample boundary) with the perf importer's
//! [`Parser`] and merged into the samples so far, the rest carried into the next block.

use super::ImportError;
use super::perf::{Parser, Samples, finish, trim_end};

/// Parses `perf script` text delivered a block at a time by `next` (each block ending at a
/// line end; e.g. while a gzip stream is decompressed), never holding it whole: what
/// precedes a block's last blank line (a sample boundary) is parsed and merged into the
/// samples so far, the rest is carried into the next block. The result is what [`parse_with`](super::perf::parse_with)
/// gives for the whole text.
pub fn parse_blocks(
    file: &str,
    mut next: impl FnMut(&mut Vec<u8>) -> Result<bool, ImportError>,
    progress: Option<&crate::import::Progress>,
) -> Result<Samples, ImportError> {
    let t0 = std::time::Instant::now();
    let mut merged: Option<Parser> = None;
    let mut carry: Vec<u8> = Vec::new();
    let mut block = Vec::new();
    let mut line = 1u64;
    let parse = |text: &[u8], line: &mut u64, merged: &mut Option<Parser>| {
        let mut p = Parser::new();
        p.run(file, text, *line, progress)?;
        *line += memchr::memchr_iter(b'\n', text).count() as u64;
        match merged {
            None => *merged = Some(p),
            Some(m) => m.absorb(p),
        }
        Ok::<(), ImportError>(())
    };
    while next(&mut block)? {
        carry.extend_from_slice(&block);
        if let Some(cut) = after_last_blank_line(&carry) {
            parse(&carry[..cut], &mut line, &mut merged)?;
            carry.drain(..cut);
        }
    }
    if !carry.is_empty() || merged.is_none() {
        parse(&carry, &mut line, &mut merged)?;
    }
    crate::import::Progress::stage(progress, "parse", t0.elapsed());
    finish(file, merged.expect("parsed at least once"), progress)
}

/// Where the text after `text`'s last complete blank line starts, if it has one.
fn after_last_blank_line(text: &[u8]) -> Option<usize> {
    let mut nl = memchr::memrchr(b'\n', text)?;
    loop {
        let start = memchr::memrchr(b'\n', &text[..nl]).map_or(0, |i| i + 1);
        if trim_end(&text[start..nl]).is_empty() {
            return Some(nl + 1);
        }
        if start == 0 {
            return None;
        }
        nl = start - 1;
    }
}
