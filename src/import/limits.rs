//! How much an input may take: limits decided from the memory the process can actually
//! use, so a hostile or broken input fails with a message instead of an abort.
//!
//! The memory available is the least of what the system says is available
//! (`MemAvailable` in `/proc/meminfo`), what is left of the process's address-space limit
//! (`ulimit -v`: `/proc/self/limits` less `VmSize`) and what is left of its cgroup's
//! `memory.max`. Elsewhere (no `/proc`), [`FALLBACK_MEMORY`] is assumed.
//!
//! Inputs are read or decompressed into a buffer that grows towards the limit and never
//! past it, with fallible allocation: an allocation that fails is an error naming the
//! input, not an abort.

use super::ImportError;
use std::io::Read;

/// The memory assumed available where the system does not say (not Linux).
pub const FALLBACK_MEMORY: u64 = 8 << 30;

/// The smallest input limit, however little memory seems free.
const MIN_INPUT_BYTES: u64 = 64 << 20;

/// Memory one level of depth costs from parse to picture (the tree's node, the layout's
/// row and its level-of-detail tiers, the parser's stack), measured on one folded line
/// of 2 M frames (about 290 bytes a level), rounded up.
pub const BYTES_PER_LEVEL: u64 = 384;

/// Limits that keep a hostile or broken input from exhausting memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Largest input held in memory: the decompressed data of a gzip stream (for folded
    /// stacks, parsed as they are decompressed, a block of lines), or the bytes read from
    /// standard input, a pipe, a device or a file that cannot be mapped.
    pub max_input_bytes: u64,
    /// Deepest call tree accepted (a level costs [`BYTES_PER_LEVEL`] to lay out).
    pub max_depth: u64,
}

impl Default for Limits {
    /// Limits from the memory available now (computed once per process).
    fn default() -> Self {
        static DEFAULT: std::sync::OnceLock<Limits> = std::sync::OnceLock::new();
        *DEFAULT.get_or_init(|| Limits::for_memory(available_memory()))
    }
}

impl Limits {
    /// Limits for `bytes` of available memory: an input of at most a quarter of it
    /// (parsing needs room beyond the input), depth that fits in half of it.
    pub fn for_memory(bytes: u64) -> Limits {
        Limits {
            max_input_bytes: (bytes / 4).max(MIN_INPUT_BYTES),
            max_depth: (bytes / 2 / BYTES_PER_LEVEL).max(1 << 16),
        }
    }

    /// These limits with the input limit `bytes` (`--max-input`).
    pub fn with_max_input(self, bytes: Option<u64>) -> Limits {
        Limits {
            max_input_bytes: bytes.unwrap_or(self.max_input_bytes),
            ..self
        }
    }
}

/// The memory this process can still allocate, as far as the system tells
/// ([`FALLBACK_MEMORY`] where it tells nothing).
pub fn available_memory() -> u64 {
    let read = |p: &str| std::fs::read_to_string(p).ok();
    let system = read("/proc/meminfo").and_then(|m| meminfo_available(&m));
    let address_space = read("/proc/self/limits")
        .and_then(|l| address_space_limit(&l))
        .map(|limit| {
            let used = read("/proc/self/status")
                .and_then(|s| status_vm_size(&s))
                .unwrap_or(0);
            limit.saturating_sub(used)
        });
    let cgroup = read("/sys/fs/cgroup/memory.max")
        .and_then(|m| m.trim().parse::<u64>().ok())
        .map(|max| {
            let used = read("/sys/fs/cgroup/memory.current")
                .and_then(|c| c.trim().parse::<u64>().ok())
                .unwrap_or(0);
            max.saturating_sub(used)
        });
    [system, address_space, cgroup]
        .into_iter()
        .flatten()
        .min()
        .unwrap_or(FALLBACK_MEMORY)
}

/// `MemAvailable` of a `/proc/meminfo`, in bytes.
pub fn meminfo_available(meminfo: &str) -> Option<u64> {
    kib_field(meminfo, "MemAvailable:")
}

/// `VmSize` of a `/proc/self/status`, in bytes.
fn status_vm_size(status: &str) -> Option<u64> {
    kib_field(status, "VmSize:")
}

fn kib_field(text: &str, key: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.starts_with(key))?;
    let mut words = line[key.len()..].split_whitespace();
    let n: u64 = words.next()?.parse().ok()?;
    match words.next() {
        Some("kB") => n.checked_mul(1024),
        None => Some(n),
        Some(_) => None,
    }
}

/// The soft "Max address space" of a `/proc/self/limits`, in bytes; `None` when
/// unlimited.
pub fn address_space_limit(limits: &str) -> Option<u64> {
    let line = limits
        .lines()
        .find(|l| l.starts_with("Max address space"))?;
    line["Max address space".len()..]
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

/// `bytes` for people: `512 B`, `64 MiB`, `1.5 GiB`.
pub fn describe_bytes(bytes: u64) -> String {
    const UNITS: [&str; 4] = ["KiB", "MiB", "GiB", "TiB"];
    if bytes < 1024 {
        return format!("{bytes} B");
    }
    let mut v = bytes as f64 / 1024.0;
    let mut unit = 0;
    while v >= 1024.0 && unit + 1 < UNITS.len() {
        v /= 1024.0;
        unit += 1;
    }
    if v.fract() == 0.0 || v >= 100.0 {
        format!("{v:.0} {}", UNITS[unit])
    } else {
        format!("{v:.1} {}", UNITS[unit])
    }
}

/// A size as `--max-input` takes it: bytes, or a number with `K`, `M`, `G` or `T`
/// (powers of 1024; `KB`, `KiB`, `k` and `g` are the same).
pub fn parse_size(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let digits = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (number, unit) = t.split_at(digits);
    let shift = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 0,
        "k" | "kb" | "kib" => 10,
        "m" | "mb" | "mib" => 20,
        "g" | "gb" | "gib" => 30,
        "t" | "tb" | "tib" => 40,
        _ => return Err(format!("not a size: {s:?} (expected e.g. 500M or 2G)")),
    };
    let n: f64 = number
        .parse()
        .map_err(|_| format!("not a size: {s:?} (expected e.g. 500M or 2G)"))?;
    let bytes = n * (1u64 << shift) as f64;
    if !(bytes.is_finite() && bytes >= 1.0 && bytes < u64::MAX as f64) {
        return Err(format!("not a usable size: {s:?}"));
    }
    Ok(bytes as u64)
}

/// Appends `data` to `out` unless that would take `out` past `limit` bytes, growing it by
/// doubling but never past the limit, and fallibly: an allocation the system refuses
/// is [`ImportError::OutOfMemory`], not an abort.
pub(crate) fn push_capped(
    out: &mut Vec<u8>,
    data: &[u8],
    file: &str,
    limit: u64,
) -> Result<(), ImportError> {
    let want = out.len() as u64 + data.len() as u64;
    if want > limit {
        return Err(ImportError::TooLarge {
            file: file.to_string(),
            limit,
        });
    }
    if want > out.capacity() as u64 {
        let grown = (out.capacity() as u64).saturating_mul(2).max(1 << 16);
        let target = grown.clamp(want, limit);
        let extra = usize::try_from(target).unwrap_or(usize::MAX) - out.len();
        out.try_reserve_exact(extra)
            .map_err(|_| ImportError::OutOfMemory {
                file: file.to_string(),
                bytes: target,
            })?;
    }
    out.extend_from_slice(data);
    Ok(())
}

/// Reads `reader` to its end into memory, at most `limit` bytes of it: a reader with more
/// (or with no end: a pipe that never stops, `/dev/zero`) is [`ImportError::TooLarge`].
/// `hint` (the file's size, when known) sizes the buffer up front.
pub(crate) fn read_capped(
    mut reader: impl Read,
    file: &str,
    hint: u64,
    limit: u64,
) -> Result<Vec<u8>, ImportError> {
    let mut out = Vec::new();
    if hint > 0 && hint <= limit {
        let hint = usize::try_from(hint).unwrap_or(usize::MAX);
        out.try_reserve_exact(hint)
            .map_err(|_| ImportError::OutOfMemory {
                file: file.to_string(),
                bytes: hint as u64,
            })?;
    }
    let mut buf = vec![0u8; 256 * 1024];
    loop {
        match reader.read(&mut buf) {
            Ok(0) => return Ok(out),
            Ok(n) => push_capped(&mut out, &buf[..n], file, limit)?,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(error) => {
                return Err(ImportError::Io {
                    file: file.to_string(),
                    error,
                });
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A reader that never ends, as `/dev/zero` or `yes |`.
    struct Endless;

    impl Read for Endless {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            buf.fill(b'y');
            Ok(buf.len())
        }
    }

    #[test]
    fn plain_input_without_an_end_stops_at_the_limit() {
        let err = read_capped(Endless, "<stdin>", 0, 1 << 20).unwrap_err();
        assert!(matches!(err, ImportError::TooLarge { .. }), "{err}");
        let msg = err.to_string();
        assert!(msg.starts_with("<stdin>: "), "{msg}");
        assert!(msg.contains("1 MiB"), "{msg}");
        assert!(msg.contains("--max-input"), "{msg}");
    }

    #[test]
    fn reading_under_the_limit_keeps_every_byte() {
        let data: Vec<u8> = (0..300_000u32).map(|i| i as u8).collect();
        let got = read_capped(&data[..], "x", 0, data.len() as u64).unwrap();
        assert_eq!(got, data);
        let err = read_capped(&data[..], "x", 0, data.len() as u64 - 1).unwrap_err();
        assert!(matches!(err, ImportError::TooLarge { .. }), "{err}");
    }

    #[test]
    fn growth_never_passes_the_limit() {
        let mut out = Vec::new();
        let limit = 200_000;
        for _ in 0..limit / 1000 {
            push_capped(&mut out, &[0; 1000], "x", limit).unwrap();
            assert!(out.capacity() as u64 <= limit, "{}", out.capacity());
        }
        assert!(push_capped(&mut out, &[0], "x", limit).is_err());
    }

    #[test]
    fn limits_follow_the_memory_available() {
        let m = "MemTotal:       24684084 kB\nMemFree:          714264 kB\n\
                 MemAvailable:    4194304 kB\nBuffers: 1 kB\n";
        assert_eq!(meminfo_available(m), Some(4 << 30));
        let l = Limits::for_memory(4 << 30);
        assert_eq!(l.max_input_bytes, 1 << 30);
        assert_eq!(l.max_depth, (2 << 30) / BYTES_PER_LEVEL);
        // However little is free, small inputs still load.
        assert_eq!(Limits::for_memory(0).max_input_bytes, MIN_INPUT_BYTES);
        // The default is decided from this machine, never more than it has.
        assert!(Limits::default().max_input_bytes <= available_memory().max(MIN_INPUT_BYTES));
    }

    #[test]
    fn address_space_limit_of_ulimit_v() {
        let l = "Limit                     Soft Limit           Hard Limit           Units     \n\
                 Max cpu time              unlimited            unlimited            seconds   \n\
                 Max address space         4096000000           unlimited            bytes     \n";
        assert_eq!(address_space_limit(l), Some(4_096_000_000));
        let u = l.replace("4096000000", "unlimited");
        assert_eq!(address_space_limit(&u), None);
        assert_eq!(
            status_vm_size("Name: x\nVmSize:\t  1000 kB\n"),
            Some(1_024_000)
        );
    }

    #[test]
    fn sizes_as_max_input_takes_them() {
        assert_eq!(parse_size("500M"), Ok(500 << 20));
        assert_eq!(parse_size("2G"), Ok(2 << 30));
        assert_eq!(parse_size("1.5g"), Ok(3 << 29));
        assert_eq!(parse_size("4096"), Ok(4096));
        assert_eq!(parse_size("64KiB"), Ok(64 << 10));
        assert!(parse_size("lots").is_err());
        assert!(parse_size("0").is_err());
        assert!(parse_size("-1G").is_err());
        assert_eq!(describe_bytes(1 << 30), "1 GiB");
        assert_eq!(describe_bytes(3 << 29), "1.5 GiB");
        assert_eq!(describe_bytes(100), "100 B");
    }
}
