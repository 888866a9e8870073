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
        Some(converted) => Cow::Owned(converted),
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
    let mut out: Vec<u8> = Vec::with_capacity(bytes.len().saturating_mul(4).min(1 << 30));
    let mut buf = vec![0u8; 256 * 1024];
    let mut dec = flate2::read::MultiGzDecoder::new(&mut counting);
    loop {
        match dec.read(&mut buf) {
            Ok(0) => return Ok((out, None)),
            Ok(n) => {
                if out.len() as u64 + n as u64 > limits.max_decompressed_bytes {
                    return Err(ImportError::TooLarge {
                        file: file.to_string(),
                        limit: limits.max_decompressed_bytes,
                    });
                }
                out.extend_from_slice(&buf[..n]);
            }
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

    #[test]
    fn decompression_limit() {
        let z = gz(&vec![b'a'; 100_000]);
        let err = decode(
            "bomb.gz",
            &z,
            Limits {
                max_decompressed_bytes: 1000,
            },
        )
        .unwrap_err();
        assert!(matches!(err, ImportError::TooLarge { .. }));
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
