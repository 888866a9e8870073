//! From raw bytes to UTF-8 text: transparent gzip, UTF-16 and BOM handling.
//!
//! Compression is recognised by its magic bytes, not by the file name, so `profile.txt`
//! that is really gzip works, and so does `profile.json.gz` that is not compressed.
//! A gzip stream damaged part-way keeps what decompressed cleanly (minus a trailing
//! partial line, which could otherwise carry a truncated count) and says so in a note.

use super::{ImportError, Limits};
use std::borrow::Cow;
use std::io::Read;

/// Decoded input.
#[derive(Debug)]
pub struct Decoded<'a> {
    /// UTF-8 (or, for binary formats, untouched) bytes.
    pub text: Cow<'a, [u8]>,
    /// Whether the input was gzip-compressed.
    pub gzipped: bool,
    /// A warning about partial damage, when some was found.
    pub note: Option<String>,
}

/// The gzip magic number.
pub const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];

/// Decompresses (if gzip) and converts the text encoding to UTF-8.
pub fn decode<'a>(file: &str, bytes: &'a [u8], limits: Limits) -> Result<Decoded<'a>, ImportError> {
    let (raw, gzipped, note): (Cow<'a, [u8]>, bool, Option<String>) =
        if bytes.starts_with(&GZIP_MAGIC) {
            let (data, note) = gunzip(file, bytes, limits)?;
            (Cow::Owned(data), true, note)
        } else {
            (Cow::Borrowed(bytes), false, None)
        };
    let text = match to_utf8(&raw) {
        Some(converted) => {
            // The UTF-16 bytes are not needed once converted: free them before parsing.
            drop(raw);
            Cow::Owned(converted)
        }
        None => match raw {
            Cow::Borrowed(b) => Cow::Borrowed(strip_utf8_bom(b)),
            Cow::Owned(mut v) => {
                if v.starts_with(&[0xEF, 0xBB, 0xBF]) {
                    v.drain(..3);
                }
                Cow::Owned(v)
            }
        },
    };
    Ok(Decoded {
        text,
        gzipped,
        note,
    })
}

fn strip_utf8_bom(b: &[u8]) -> &[u8] {
    b.strip_prefix(&[0xEF, 0xBB, 0xBF][..]).unwrap_or(b)
}

/// Counts the compressed bytes the decoder consumed, for error positions.
struct Counting<'a> {
    inner: &'a [u8],
    consumed: u64,
}

impl Read for Counting<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.consumed += n as u64;
        Ok(n)
    }
}

fn gunzip(
    file: &str,
    bytes: &[u8],
    limits: Limits,
) -> Result<(Vec<u8>, Option<String>), ImportError> {
    let mut counting = Counting {
        inner: bytes,
        consumed: 0,
    };
    let limit = limits.max_input_bytes;
    // The buffer is sized once from the size the gzip trailer records (modulo 2^32, and
    // only a hint: a stream of several members, or a lying trailer, grows it further), so
    // a well-formed stream is decompressed into exactly its size: no doubling past it.
    let mut out: Vec<u8> = Vec::new();
    let hint = (bytes.len() as u64 * 4).max(trailer_size(bytes)).min(limit);
    if out.try_reserve_exact(hint as usize).is_err() {
        return Err(ImportError::OutOfMemory {
            file: file.to_string(),
            bytes: hint,
        });
    }
    let mut buf = vec![0u8; 256 * 1024];
    let mut dec = flate2::read::MultiGzDecoder::new(&mut counting);
    loop {
        match dec.read(&mut buf) {
            Ok(0) => return Ok((out, None)),
            Ok(n) => super::limits::push_capped(&mut out, &buf[..n], file, limit)?,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => {
                drop(dec);
                let offset = counting.consumed;
                if out.is_empty() {
                    return Err(ImportError::Gzip {
                        file: file.to_string(),
                        offset,
                        detail: e.to_string(),
                    });
                }
                // Keep whole lines only: a cut line may end in a truncated number.
                let keep = out.iter().rposition(|&b| b == b'\n').map_or(0, |p| p + 1);
                out.truncate(keep);
                let note = format!(
                    "the gzip stream is damaged near compressed byte {offset} ({e}); \
                     loaded the {keep} bytes before the damage"
                );
                return Ok((out, Some(note)));
            }
        }
    }
}

/// The first `max` decompressed bytes of a gzip stream, cut after its last whole line,
/// for detecting the format; `None` when the stream is damaged there, or when the text
/// is UTF-16 or starts with a byte order mark (those take the buffered path).
pub(super) fn gzip_head(bytes: &[u8], max: usize) -> Option<Vec<u8>> {
    let mut head = Vec::new();
    let mut dec = flate2::read::MultiGzDecoder::new(bytes).take(max as u64);
    dec.read_to_end(&mut head).ok()?;
    if head.len() == max {
        let keep = head.iter().rposition(|&b| b == b'\n').map_or(0, |p| p + 1);
        head.truncate(keep);
    }
    let marked = [&[0xEF, 0xBB, 0xBF][..], &[0xFF, 0xFE], &[0xFE, 0xFF]]
        .iter()
        .any(|m| head.starts_with(m));
    (!head.is_empty() && !marked && looks_utf16(&head).is_none()).then_some(head)
}

/// A gzip stream decompressed in blocks of whole lines, for parsers that take their
/// input a block at a time: the decompressed text is never held whole, so the input
/// limit bounds what is held (a block, or one line longer than a block), not the total.
/// Damage part-way ends the stream after the last whole line with the note [`decode`]
/// gives.
pub(super) struct GzipLines<'a> {
    file: &'a str,
    dec: flate2::read::MultiGzDecoder<Counting<'a>>,
    carry: Vec<u8>,
    emitted: u64,
    limit: u64,
    done: bool,
    /// The damage found, once the stream has ended there.
    pub note: Option<String>,
}

impl<'a> GzipLines<'a> {
    /// Lines of the gzip stream `bytes`, at most `limits.max_input_bytes` in all.
    pub(super) fn new(file: &'a str, bytes: &'a [u8], limits: Limits) -> Self {
        GzipLines {
            file,
            dec: flate2::read::MultiGzDecoder::new(Counting {
                inner: bytes,
                consumed: 0,
            }),
            carry: Vec::new(),
            emitted: 0,
            limit: limits.max_input_bytes,
            done: false,
            note: None,
        }
    }

    /// Fills `block` (cleared first) with the next whole lines, at least `size` bytes
    /// of them unless the stream ends first (its last line may lack a newline); false
    /// when nothing is left.
    pub(super) fn next_block(
        &mut self,
        block: &mut Vec<u8>,
        size: usize,
    ) -> Result<bool, ImportError> {
        block.clear();
        block.append(&mut self.carry);
        let mut buf = vec![0u8; 256 * 1024];
        while !self.done {
            match self.dec.read(&mut buf) {
                Ok(0) => self.done = true,
                Ok(n) => {
                    if (block.len() + n) as u64 > self.limit {
                        return Err(ImportError::TooLarge {
                            file: self.file.to_string(),
                            limit: self.limit,
                        });
                    }
                    block.extend_from_slice(&buf[..n]);
                    if block.len() >= size
                        && let Some(nl) = block.iter().rposition(|&b| b == b'\n')
                    {
                        self.carry.extend_from_slice(&block[nl + 1..]);
                        block.truncate(nl + 1);
                        break;
                    }
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => {
                    // Keep whole lines only, as decode does.
                    let keep = block.iter().rposition(|&b| b == b'\n').map_or(0, |p| p + 1);
                    block.truncate(keep);
                    let offset = self.dec.get_ref().consumed;
                    let kept = self.emitted + keep as u64;
                    self.note = Some(format!(
                        "the gzip stream is damaged near compressed byte {offset} ({e}); \
                         loaded the {kept} bytes before the damage"
                    ));
                    self.done = true;
                }
            }
        }
        self.emitted += block.len() as u64;
        Ok(!block.is_empty())
    }
}

/// The uncompressed size a gzip stream's last member records in its trailer (`ISIZE`:
/// the size modulo 2^32); 0 when the input is too short to have one.
fn trailer_size(bytes: &[u8]) -> u64 {
    match bytes.len().checked_sub(4).map(|at| &bytes[at..]) {
        Some(&[a, b, c, d]) if bytes.len() >= 18 => u32::from_le_bytes([a, b, c, d]).into(),
        _ => 0,
    }
}

/// UTF-16 (with a BOM, or detected by its zero bytes) converted to UTF-8; `None` when the
/// input is not UTF-16.
fn to_utf8(b: &[u8]) -> Option<Vec<u8>> {
    let (le, body) = if let Some(rest) = b.strip_prefix(&[0xFF, 0xFE][..]) {
        (true, rest)
    } else if let Some(rest) = b.strip_prefix(&[0xFE, 0xFF][..]) {
        (false, rest)
    } else {
        (looks_utf16(b)?, b)
    };
    let units = body.chunks_exact(2).map(|c| {
        if le {
            u16::from_le_bytes([c[0], c[1]])
        } else {
            u16::from_be_bytes([c[0], c[1]])
        }
    });
    let s: String = char::decode_utf16(units)
        .map(|r| r.unwrap_or(char::REPLACEMENT_CHARACTER))
        .collect();
    Some(s.into_bytes())
}

/// BOM-less UTF-16 guess: in the first 256 bytes, one byte of nearly every pair is zero
/// and the other is printable ASCII. Returns `Some(true)` for little endian.
pub(super) fn looks_utf16(b: &[u8]) -> Option<bool> {
    let head = &b[..b.len().min(256) & !1];
    if head.len() < 8 {
        return None;
    }
    let pairs = head.len() / 2;
    let printable = |c: u8| c == b'\n' || c == b'\r' || c == b'\t' || (0x20..0x7f).contains(&c);
    let le = head
        .chunks_exact(2)
        .filter(|c| c[1] == 0 && printable(c[0]))
        .count();
    let be = head
        .chunks_exact(2)
        .filter(|c| c[0] == 0 && printable(c[1]))
        .count();
    if le * 10 >= pairs * 9 {
        Some(true)
    } else if be * 10 >= pairs * 9 {
        Some(false)
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn gz(data: &[u8]) -> Vec<u8> {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        e.write_all(data).unwrap();
        e.finish().unwrap()
    }

    #[test]
    fn gzip_is_detected_by_magic() {
        let z = gz(b"a;b 1\n");
        let d = decode("x", &z, Limits::default()).unwrap();
        assert!(d.gzipped);
        assert_eq!(&*d.text, b"a;b 1\n");
    }

    #[test]
    fn gzip_in_blocks_of_lines_is_the_decompressed_text() {
        let mut big = Vec::new();
        for i in 0..20_000 {
            writeln!(big, "main;work;f{} {}", i % 97, i).unwrap();
        }
        big.extend_from_slice(b"last;line 1");
        let z = gz(&big);
        for size in [1, 1000, 1 << 20] {
            let mut lines = GzipLines::new("x.gz", &z, Limits::default());
            let (mut all, mut block) = (Vec::new(), Vec::new());
            while lines.next_block(&mut block, size).unwrap() {
                assert!(block.ends_with(b"\n") || all.len() + block.len() == big.len());
                all.extend_from_slice(&block);
            }
            assert_eq!(all, big);
            assert!(lines.note.is_none());
        }
        // Damage part-way: the whole lines before it and decode's note.
        let cut = &z[..z.len() / 2];
        let want = decode("x.gz", cut, Limits::default()).unwrap();
        let mut lines = GzipLines::new("x.gz", cut, Limits::default());
        let (mut all, mut block) = (Vec::new(), Vec::new());
        while lines.next_block(&mut block, 4096).unwrap() {
            all.extend_from_slice(&block);
        }
        assert_eq!(&all[..], &want.text[..]);
        assert_eq!(lines.note, want.note);
    }

    #[test]
    fn truncated_gzip_keeps_whole_lines() {
        let mut big = Vec::new();
        for i in 0..20_000 {
            writeln!(big, "main;work;f{} {}", i % 97, i).unwrap();
        }
        let z = gz(&big);
        let cut = &z[..z.len() / 2];
        let d = decode("x.gz", cut, Limits::default()).unwrap();
        assert!(d.note.as_deref().unwrap().contains("damaged"));
        assert!(d.text.ends_with(b"\n"));
        assert!(big.starts_with(&d.text));
    }

    #[test]
    fn corrupt_gzip_header_is_an_error_with_offset() {
        let err = decode("bad.gz", &[0x1f, 0x8b, 0xff, 0xff, 0, 0], Limits::default()).unwrap_err();
        assert!(matches!(err, ImportError::Gzip { .. }), "{err}");
        assert!(
            err.to_string()
                .starts_with("bad.gz: corrupt gzip data at compressed byte")
        );
    }

    fn small(max_input_bytes: u64) -> Limits {
        Limits {
            max_input_bytes,
            ..Limits::default()
        }
    }

    #[test]
    fn decompression_limit() {
        let z = gz(&vec![b'a'; 100_000]);
        let err = decode("bomb.gz", &z, small(1000)).unwrap_err();
        assert!(matches!(err, ImportError::TooLarge { .. }));
    }

    #[test]
    fn gzip_bomb_of_zeros_fails_naming_the_file_and_the_limit() {
        // 16 MiB of zeros in a few KiB: the shape of a 2 GB bomb in a 2 MB file.
        let z = gz(&vec![0u8; 16 << 20]);
        assert!(z.len() < (16 << 20) / 100, "{}", z.len());
        let err = decode("bomb.gz", &z, small(4 << 20)).unwrap_err();
        let msg = err.to_string();
        assert!(matches!(err, ImportError::TooLarge { limit, .. } if limit == 4 << 20));
        assert!(msg.starts_with("bomb.gz: "), "{msg}");
        assert!(msg.contains("4 MiB"), "{msg}");
    }

    /// Issue 14, failure 5: 2 GB of folded lines in a 2 MB gzip aborted, decompressed
    /// whole. Folded stacks are parsed as they are decompressed: 8 MiB of lines load
    /// under an input limit of 1 MiB, which only the buffered path would exceed; one line
    /// longer than the limit is refused naming the file and the limit.
    #[test]
    fn gzip_bomb_of_folded_lines_aborts() {
        let line = b"main;serve;handle;parse 1\n";
        let mut lines = Vec::new();
        while lines.len() < 8 << 20 {
            lines.extend_from_slice(line);
        }
        let z = gz(&lines);
        let p = super::super::load_bytes("lines.gz", &z, small(1 << 20)).unwrap();
        assert_eq!(p.tree.grand_total(), (lines.len() / line.len()) as u64);
        assert!(p.meta.gzipped);
        let err = decode("lines.gz", &z, small(1 << 20)).unwrap_err();
        assert!(matches!(err, ImportError::TooLarge { .. }), "{err}");
        let one = format!("{} 1\n", vec!["f"; 1 << 20].join(";"));
        let err = super::super::load_any_bytes("one.gz", &gz(one.as_bytes()), small(1 << 20))
            .unwrap_err();
        assert!(matches!(err, ImportError::TooLarge { .. }), "{err}");
        assert!(err.to_string().starts_with("one.gz: "), "{err}");
        // The buffered path decompresses into exactly the stream's size.
        let d = decode("lines.gz", &z, small(16 << 20)).unwrap();
        assert_eq!(d.text.len(), lines.len());
        if let Cow::Owned(v) = &d.text {
            assert_eq!(v.capacity(), lines.len(), "one buffer of the stream's size");
        }
    }

    #[test]
    fn utf16_with_and_without_bom() {
        let s = "a;b 1\n";
        let mut le = vec![0xFF, 0xFE];
        le.extend(s.encode_utf16().flat_map(|u| u.to_le_bytes()));
        let mut be = vec![0xFE, 0xFF];
        be.extend(s.encode_utf16().flat_map(|u| u.to_be_bytes()));
        let bare: Vec<u8> = "a;b;c 1\na;b 2\n"
            .encode_utf16()
            .flat_map(|u| u.to_le_bytes())
            .collect();
        for (input, want) in [(le, s), (be, s), (bare, "a;b;c 1\na;b 2\n")] {
            let d = decode("x", &input, Limits::default()).unwrap();
            assert_eq!(std::str::from_utf8(&d.text).unwrap(), want);
        }
    }

    #[test]
    fn utf8_bom_is_dropped() {
        let d = decode("x", b"\xEF\xBB\xBFa 1\n", Limits::default()).unwrap();
        assert_eq!(&*d.text, b"a 1\n");
    }
}
