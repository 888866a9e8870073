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
