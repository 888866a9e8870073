//! What a tick means, and how to print an amount of them.
//!
//! A profile's values are integer ticks. [`ValueFormat`] says what one tick is: a sample
//! (optionally at a known sample rate, which makes it a duration), a byte, an object, a
//! nanosecond. Inputs with fractional counts (folded stacks allow `a;b 2.5`) are stored as
//! fixed-point integers with `ticks_per_unit` = 10^k, so all sums stay exact.
//!
//! The unit names follow Pyroscope's `metadata.units` (`samples`, `objects`, `goroutines`,
//! `bytes`, `lock_samples`, `lock_nanoseconds`, `trace_samples`, `exceptions`), plus plain
//! `nanoseconds` for traces.

use std::fmt::Write as _;

/// The quantity a profile measures.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Unit {
    /// Stack samples (CPU profiles); a duration when the sample rate is known.
    Samples,
    /// Allocated or live objects.
    Objects,
    /// Goroutine counts.
    Goroutines,
    /// Bytes (allocated or in use).
    Bytes,
    /// Lock contention events.
    LockSamples,
    /// Time spent waiting on locks.
    LockNanoseconds,
    /// Wall or CPU time in nanoseconds.
    Nanoseconds,
    /// Samples taken inside traced spans (Pyroscope `trace_samples`).
    TraceSamples,
    /// Thrown exceptions.
    Exceptions,
    /// A unit scorch does not know; printed as a plain number followed by its name.
    Other(String),
}

impl Unit {
    /// Parses Pyroscope's `metadata.units` string (unknown strings become [`Unit::Other`]).
    pub fn from_pyroscope(s: &str) -> Unit {
        match s {
            "" | "samples" => Unit::Samples,
            "objects" => Unit::Objects,
            "goroutines" => Unit::Goroutines,
            "bytes" => Unit::Bytes,
            "lock_samples" => Unit::LockSamples,
            "lock_nanoseconds" => Unit::LockNanoseconds,
            "nanoseconds" => Unit::Nanoseconds,
            "trace_samples" => Unit::TraceSamples,
            "exceptions" => Unit::Exceptions,
            other => Unit::Other(other.to_string()),
        }
    }

    /// The name used in `scorch info` and titles.
    pub fn name(&self) -> &str {
        match self {
            Unit::Samples => "samples",
            Unit::Objects => "objects",
            Unit::Goroutines => "goroutines",
            Unit::Bytes => "bytes",
            Unit::LockSamples => "lock_samples",
            Unit::LockNanoseconds => "lock_nanoseconds",
            Unit::Nanoseconds => "nanoseconds",
            Unit::TraceSamples => "trace_samples",
            Unit::Exceptions => "exceptions",
            Unit::Other(s) => s,
        }
    }
}

/// How to turn ticks into a human amount.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ValueFormat {
    /// What one unit is.
    pub unit: Unit,
    /// Samples per second, when known (Pyroscope `sampleRate`; 0 or absent means unknown).
    pub sample_rate_hz: Option<u32>,
    /// Ticks per unit: 1 for integer inputs, 10^k for inputs with k fractional digits.
    pub ticks_per_unit: u64,
}

impl Default for ValueFormat {
    fn default() -> Self {
        Self {
            unit: Unit::Samples,
            sample_rate_hz: None,
            ticks_per_unit: 1,
        }
    }
}

impl ValueFormat {
    /// `ticks` as a number of units (exact for integer profiles).
    pub fn units(&self, ticks: u64) -> f64 {
        ticks as f64 / self.ticks_per_unit.max(1) as f64
    }

    /// The duration `ticks` stand for, in nanoseconds, when the unit is a time.
    pub fn as_nanoseconds(&self, ticks: u64) -> Option<f64> {
        let v = self.units(ticks);
        match self.unit {
            Unit::Samples | Unit::TraceSamples => self
                .sample_rate_hz
                .filter(|&hz| hz > 0)
                .map(|hz| v * 1e9 / hz as f64),
            Unit::Nanoseconds | Unit::LockNanoseconds => Some(v),
            _ => None,
        }
    }

    /// `ticks` in the file's units, exactly: `1234`, or `12.5` for a fixed-point profile.
    pub fn exact(&self, ticks: u64) -> String {
        let per = self.ticks_per_unit.max(1);
        let (whole, frac) = (ticks / per, ticks % per);
        if frac == 0 {
            return whole.to_string();
        }
        let digits = per.ilog10();
        if 10u64.pow(digits) != per {
            return format!("{}", ticks as f64 / per as f64);
        }
        let frac = format!("{frac:0width$}", width = digits as usize);
        format!("{whole}.{}", frac.trim_end_matches('0'))
    }

    /// `ticks` as a count of units with thousands separators, exactly when it is a whole
    /// number of them (no float on the way: two `i64::MAX` samples are
    /// `18,446,744,073,709,551,614`), else with up to two decimals.
    pub fn count(&self, ticks: u64) -> String {
        let per = self.ticks_per_unit.max(1);
        if ticks.is_multiple_of(per) {
            group_digits(&(ticks / per).to_string())
        } else {
            format_count(self.units(ticks))
        }
    }

    /// A short human string for `ticks`: `7.71 s`, `1.76 MiB`, `75.5 K objects`, `988 samples`.
    pub fn format(&self, ticks: u64) -> String {
        if let Some(ns) = self.as_nanoseconds(ticks) {
            return format_duration_ns(ns);
        }
        let v = self.units(ticks);
        match &self.unit {
            Unit::Bytes => format_bytes(v),
            Unit::Samples | Unit::TraceSamples => format!("{} samples", self.count(ticks)),
            Unit::Objects => format!("{} objects", format_si(v)),
            Unit::Goroutines => format!("{} goroutines", format_si(v)),
            Unit::LockSamples => format!("{} lock samples", format_si(v)),
            Unit::Exceptions => format!("{} exceptions", format_si(v)),
            Unit::Nanoseconds | Unit::LockNanoseconds => format_duration_ns(v),
            Unit::Other(name) => format!("{} {name}", format_si(v)),
        }
    }

    /// Like [`format`](Self::format), with the raw count added where it differs
    /// (`7.71 s, 771 samples`); used by `scorch info` and tooltips.
    pub fn format_long(&self, ticks: u64) -> String {
        let short = self.format(ticks);
        match self.unit {
            Unit::Samples | Unit::TraceSamples if self.as_nanoseconds(ticks).is_some() => {
                format!("{short} ({} samples)", self.count(ticks))
            }
            Unit::Bytes if ticks >= 1024 => {
                format!("{short} ({} bytes)", self.count(ticks))
            }
            _ => short,
        }
    }
}

/// `ratio` (0..1) as a percentage with two decimals, as Pyroscope prints it (`77.94%`).
pub fn format_percent(ratio: f64) -> String {
    let p = (ratio * 10000.0).round() / 100.0;
    if p == p.trunc() {
        format!("{p:.0}%")
    } else {
        let mut s = format!("{p:.2}");
        while s.ends_with('0') {
            s.pop();
        }
        s.push('%');
        s
    }
}

/// A duration given in nanoseconds, with three significant digits and a unit that keeps
/// the number between 1 and 1000 (`850 ns`, `12.3 µs`, `7.71 s`, `2.50 min`).
pub fn format_duration_ns(ns: f64) -> String {
    let mut s = String::new();
    write_duration_ns(ns, &mut s);
    s
}

/// [`format_duration_ns`] appended to `out`: a label loop reuses one buffer and
/// allocates only for the labels it draws.
///
/// Whole nanoseconds below an hour (every span duration a timeline labels) are written
/// with integer arithmetic: the same text as formatting the quotient as a float, which
/// costs a quarter of a frame's label layout. Exact halves, fractions, hours and days go
/// through the float formatting.
pub fn write_duration_ns(ns: f64, out: &mut String) {
    if !duration_by_integers(ns, out) {
        out.push_str(&duration_by_floats(ns));
    }
}

/// The integer path of [`write_duration_ns`]; `false` (nothing written) where it does
/// not apply.
///
/// The float path rounds `n / d` computed in `f64` (relative error at most 2⁻⁵³) to two,
/// one or no decimals. Below an hour (`d` ≤ 60 × 10⁹, two decimals at most) an exact
/// quotient that is not a half lies at least 1 / (2 × 100 × `d`) ≈ 8 × 10⁻¹⁴ from the
/// nearest half, more than that error (under 4 × 10⁻¹⁵ for a value under 60), so both
/// round the same way; exact halves (where the float's error picks the side) are left to
/// the float path, and so are larger units, where the margin is smaller than the error.
fn duration_by_integers(ns: f64, out: &mut String) -> bool {
    const HOUR_NS: f64 = 3600e9;
    let a = ns.abs();
    if a == 0.0 || a >= HOUR_NS || a.fract() != 0.0 {
        return false;
    }
    let n = a as u64;
    let (d, unit): (u64, &str) = match n {
        0..1_000 => (1, "ns"),
        1_000..1_000_000 => (1_000, "µs"),
        1_000_000..1_000_000_000 => (1_000_000, "ms"),
        1_000_000_000..60_000_000_000 => (1_000_000_000, "s"),
        _ => (60_000_000_000, "min"),
    };
    // As `sig3`: no decimals from 100 up, one from 10, else two.
    let (decimals, pow) = if n >= 100 * d {
        (0, 1)
    } else if n >= 10 * d {
        (1, 10)
    } else {
        (2, 100)
    };
    let scaled = n * pow;
    let (mut q, r) = (scaled / d, scaled % d);
    if 2 * r == d {
        return false;
    }
    if 2 * r > d {
        q += 1;
    }
    if ns < 0.0 {
        out.push('-');
    }
    push_digits(out, q / pow);
    if decimals > 0 {
        out.push('.');
        let frac = q % pow;
        if decimals == 2 && frac < 10 {
            out.push('0');
        }
        push_digits(out, frac);
    }
    out.push(' ');
    out.push_str(unit);
    true
}

/// `v` in decimal, without separators.
fn push_digits(out: &mut String, mut v: u64) {
    let mut buf = [0u8; 20];
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    out.extend(buf[i..].iter().map(|&b| char::from(b)));
}

/// [`format_duration_ns`] by formatting the quotient as a float.
fn duration_by_floats(ns: f64) -> String {
    let abs = ns.abs();
    if abs == 0.0 {
        return "0 s".to_string();
    }
    let (v, unit) = if abs < 1e3 {
        (ns, "ns")
    } else if abs < 1e6 {
        (ns / 1e3, "µs")
    } else if abs < 1e9 {
        (ns / 1e6, "ms")
    } else if abs < 60e9 {
        (ns / 1e9, "s")
    } else if abs < 3600e9 {
        (ns / 60e9, "min")
    } else if abs < 86400e9 {
        (ns / 3600e9, "h")
    } else {
        (ns / 86400e9, "days")
    };
    format!("{} {unit}", sig3(v))
}

/// Bytes with binary prefixes (`512 B`, `1.76 MiB`).
pub fn format_bytes(b: f64) -> String {
    const UNITS: [&str; 6] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
    let mut v = b;
    let mut i = 0;
    while v.abs() >= 1024.0 && i + 1 < UNITS.len() {
        v /= 1024.0;
        i += 1;
    }
    if i == 0 {
        format!("{} B", format_count(b))
    } else {
        format!("{} {}", sig3(v), UNITS[i])
    }
}

/// A count with SI suffixes above 10 000 (`9,876`, `75.5 K`, `1.20 M`).
pub fn format_si(v: f64) -> String {
    const UNITS: [&str; 6] = ["", "K", "M", "G", "T", "P"];
    if v.abs() < 10_000.0 {
        return format_count(v);
    }
    let mut x = v;
    let mut i = 0;
    while x.abs() >= 1000.0 && i + 1 < UNITS.len() {
        x /= 1000.0;
        i += 1;
    }
    format!("{} {}", sig3(x), UNITS[i])
}

/// An integer with thousands separators (`1,234,567`); fractional values keep up to two
/// decimals (`31.23`).
pub fn format_count(v: f64) -> String {
    if v.fract().abs() > 1e-9 {
        let s = format!("{v:.2}");
        return s.trim_end_matches('0').trim_end_matches('.').to_string();
    }
    let n = v.round() as i128;
    let digits = group_digits(&n.unsigned_abs().to_string());
    if n < 0 { format!("-{digits}") } else { digits }
}

/// A string of decimal digits with thousands separators.
fn group_digits(digits: &str) -> String {
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Three significant digits without trailing zeros after the point being dropped
/// (`7.71`, `12.3`, `214`, `2.50`).
fn sig3(v: f64) -> String {
    let a = v.abs();
    let mut s = String::new();
    if a >= 100.0 {
        let _ = write!(s, "{v:.0}");
    } else if a >= 10.0 {
        let _ = write!(s, "{v:.1}");
    } else {
        let _ = write!(s, "{v:.2}");
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Durations written with integers read exactly as the float formatting writes them:
    /// every whole nanosecond up to 200 µs, around every unit and decimal boundary, exact
    /// halves (1005 ns is 1.00 µs, as the float 1.005 is just under a half), negative,
    /// fractional and huge values, and a pseudo-random sweep up to 2⁵³.
    #[test]
    fn integer_durations_read_as_the_float_formatting() {
        let check = |ns: f64| {
            assert_eq!(format_duration_ns(ns), duration_by_floats(ns), "{ns}");
            assert_eq!(format_duration_ns(-ns), duration_by_floats(-ns), "-{ns}");
        };
        for n in 0..200_000u64 {
            check(n as f64);
        }
        let mut edges = Vec::new();
        for unit in [1u64, 1_000, 1_000_000, 1_000_000_000, 60_000_000_000] {
            for m in [1u64, 10, 100, 1000] {
                for frac in [0u64, 5, 50, 500, 5_000, 50_000, 500_000] {
                    let c = (unit * m).saturating_add(unit * frac / 1_000_000);
                    for k in 0..200 {
                        edges.push(c.saturating_add(k));
                        edges.push(c.saturating_sub(k));
                    }
                }
            }
        }
        // Halves at every precision: n = (2k + 1) · d / (2 · 10^p).
        for d in [1_000u64, 1_000_000, 1_000_000_000, 60_000_000_000] {
            for pow in [1u64, 10, 100] {
                let half = d / (2 * pow);
                for k in 0..2_000 {
                    edges.push((2 * k + 1) * half);
                }
            }
        }
        for n in edges {
            check(n as f64);
        }
        let mut x = 0x2545_f491_4f6c_dd1d_u64;
        for _ in 0..1_000_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let bits = 1 + (x >> 58) as u32 % 53;
            check((x & ((1u64 << bits) - 1)) as f64);
        }
        for v in [
            0.5,
            1.25,
            999.5,
            1004.9,
            1e15,
            3.6e12,
            3.6e12 - 1.0,
            8.64e13,
            1e300,
        ] {
            check(v);
        }
        assert_eq!(format_duration_ns(1005.0), "1.00 µs");
        assert_eq!(format_duration_ns(0.0), "0 s");
        assert_eq!(format_duration_ns(999_960.0), "1000 µs");
    }

    #[test]
    fn exact_values_keep_every_digit() {
        let f = |per| ValueFormat {
            ticks_per_unit: per,
            ..ValueFormat::default()
        };
        assert_eq!(
            f(1).exact(18_446_744_073_709_551_615),
            "18446744073709551615"
        );
        assert_eq!(f(100).exact(1250), "12.5");
        assert_eq!(f(100).exact(1205), "12.05");
        assert_eq!(f(100).exact(1200), "12");
        assert_eq!(f(1000).exact(7), "0.007");
        assert_eq!(f(4).exact(6), "1.5");
    }

    /// Issue 14, failure 9: a total of two `i64::MAX` samples printed through floating
    /// point (`18,446,744,073,709,551,616 samples`, 2 too many).
    #[test]
    fn a_total_of_two_i64_max_samples_printed_through_floating_point() {
        let total = 2 * i64::MAX as u64;
        let f = ValueFormat::default();
        assert_eq!(f.format(total), "18,446,744,073,709,551,614 samples");
        assert_eq!(f.format_long(total), "18,446,744,073,709,551,614 samples");
        let b = ValueFormat {
            unit: Unit::Bytes,
            ..ValueFormat::default()
        };
        assert!(
            b.format_long(total)
                .ends_with("(18,446,744,073,709,551,614 bytes)"),
            "{}",
            b.format_long(total)
        );
        let rate = ValueFormat {
            sample_rate_hz: Some(100),
            ..ValueFormat::default()
        };
        assert!(
            rate.format_long(u64::MAX)
                .ends_with("(18,446,744,073,709,551,615 samples)")
        );
        assert_eq!(f.count(0), "0");
        assert_eq!(f.count(999), "999");
        assert_eq!(f.count(1000), "1,000");
    }

    #[test]
    fn samples_with_rate_are_durations() {
        let f = ValueFormat {
            unit: Unit::Samples,
            sample_rate_hz: Some(100),
            ticks_per_unit: 1,
        };
        assert_eq!(f.format(771), "7.71 s");
        assert_eq!(f.format(3), "30.0 ms");
        assert_eq!(f.format_long(771), "7.71 s (771 samples)");
    }

    #[test]
    fn samples_without_rate_are_counts() {
        let f = ValueFormat::default();
        assert_eq!(f.format(1_234_567), "1,234,567 samples");
        let frac = ValueFormat {
            ticks_per_unit: 100,
            ..ValueFormat::default()
        };
        assert_eq!(frac.format(3123), "31.23 samples");
    }

    #[test]
    fn bytes_objects_and_time() {
        let b = ValueFormat {
            unit: Unit::Bytes,
            ..ValueFormat::default()
        };
        assert_eq!(b.format(512), "512 B");
        assert_eq!(b.format(1_848_497), "1.76 MiB");
        let o = ValueFormat {
            unit: Unit::Objects,
            ..ValueFormat::default()
        };
        assert_eq!(o.format(75_489), "75.5 K objects");
        assert_eq!(o.format(9_876), "9,876 objects");
        let ns = ValueFormat {
            unit: Unit::LockNanoseconds,
            ..ValueFormat::default()
        };
        assert_eq!(ns.format(850), "850 ns");
        assert_eq!(ns.format(12_300), "12.3 µs");
        assert_eq!(ns.format(104_247_182_296_063), "1.21 days");
    }

    #[test]
    fn percent_like_pyroscope() {
        assert_eq!(format_percent(771.0 / 988.0), "78.04%");
        assert_eq!(format_percent(1.0), "100%");
        assert_eq!(format_percent(0.5), "50%");
        assert_eq!(format_percent(0.123), "12.3%");
    }

    #[test]
    fn unknown_units_round_trip() {
        assert_eq!(Unit::from_pyroscope("widgets").name(), "widgets");
        assert_eq!(
            Unit::from_pyroscope("lock_nanoseconds"),
            Unit::LockNanoseconds
        );
    }
}
