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

    #[test]
    fn gzip_bomb_of_folded_lines_fails_naming_the_file_and_the_limit() {
        let mut lines = Vec::new();
        while lines.len() < 8 << 20 {
            lines.extend_from_slice(b"main;serve;handle;parse 1\n");
        }
        let z = gz(&lines);
        let err = super::super::load_any_bytes("lines.gz", &z, small(1 << 20)).unwrap_err();
        assert!(matches!(err, ImportError::TooLarge { .. }), "{err}");
        assert!(err.to_string().starts_with("lines.gz: "), "{err}");
        // Within the limit the same stream loads, decompressed into exactly its size.
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
