//! The largest tick count that divides every position of a layout, so that positions can
//! be counted in that unit: a Go CPU profile's values are multiples of its sampling
//! period (10 ms = 10^7 ns at 100 Hz), and its flame graph spans days of nanoseconds
//! (2^49 and more) but fewer than 2^32 periods. The GPU keeps 32-bit offsets from a 64-bit
//! base per segment of a row; counted in ticks such a row needs a segment per 2^32 ticks
//! (17.6 M segments for a 200 MB pprof, 1.8 s to plan), counted in periods one.
//!
//! Dividing by the unit is exact (every position is a multiple), so it is a shift and a
//! multiplication by the odd part's inverse modulo 2^64, and so is the test whether a
//! number is a multiple (Granlund and Montgomery, "Division by invariant integers using
//! multiplication", 1994, §9).

use super::Layout;

/// A divisor of every tick position of a layout, with what divides by it exactly.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TickUnit {
    /// The unit, in ticks (1: positions are counted in ticks). 0 only while a scan has
    /// seen nothing but zeros.
    unit: u64,
    /// Its trailing zero bits.
    shift: u32,
    /// The inverse of its odd part modulo 2^64.
    inverse: u64,
    /// `u64::MAX / odd part`: a product with `inverse` at most this is a multiple.
    max_quotient: u64,
}

impl TickUnit {
    /// Positions counted in ticks.
    pub const ONE: TickUnit = TickUnit {
        unit: 1,
        shift: 0,
        inverse: 1,
        max_quotient: u64::MAX,
    };

    /// The unit `unit` ticks (0: none seen yet; only zeros are its multiples).
    fn new(unit: u64) -> TickUnit {
        if unit == 0 {
            return TickUnit {
                unit: 0,
                shift: 64,
                inverse: 0,
                max_quotient: 0,
            };
        }
        let shift = unit.trailing_zeros();
        let odd = unit >> shift;
        // Newton's iteration doubles the correct low bits: 3 (odd² ≡ 1 mod 8), then 6,
        // 12, 24, 48, 96.
        let mut inverse = odd;
        for _ in 0..5 {
            inverse = inverse.wrapping_mul(2u64.wrapping_sub(odd.wrapping_mul(inverse)));
        }
        TickUnit {
            unit,
            shift,
            inverse,
            max_quotient: u64::MAX / odd,
        }
    }

    /// The unit in ticks (at least 1).
    pub fn ticks(&self) -> u64 {
        self.unit.max(1)
    }

    /// Whether `x` is a multiple of the unit.
    #[inline]
    pub fn divides(&self, x: u64) -> bool {
        if self.unit == 0 {
            return x == 0;
        }
        x.trailing_zeros() >= self.shift
            && (x >> self.shift).wrapping_mul(self.inverse) <= self.max_quotient
    }

    /// `x` in units; exact when the unit [`divides`](Self::divides) `x`.
    #[inline]
    pub fn of(&self, x: u64) -> u64 {
        if self.unit == 0 {
            return x;
        }
        (x >> self.shift).wrapping_mul(self.inverse)
    }

    /// The largest unit dividing both this one and `x`.
    #[inline]
    pub fn with(self, x: u64) -> TickUnit {
        if self.divides(x) {
            self
        } else {
            TickUnit::new(gcd(self.unit, x))
        }
    }

    /// The largest unit dividing both this one and every one of `xs`; stops early at 1.
    pub fn with_all(mut self, xs: &[u64]) -> TickUnit {
        for &x in xs {
            self = self.with(x);
            if self.unit == 1 {
                return TickUnit::ONE;
            }
        }
        self
    }

    /// No positions seen yet: [`with`](Self::with) and [`with_all`](Self::with_all) give
    /// the largest unit of those they are given.
    pub fn none() -> TickUnit {
        TickUnit::new(0)
    }

    /// The unit found, 1 where only zeros (or nothing) were seen.
    pub fn found(self) -> TickUnit {
        if self.unit == 0 { TickUnit::ONE } else { self }
    }

    /// Whether positions are counted in ticks (nothing left to find).
    pub fn is_one(&self) -> bool {
        self.unit == 1
    }

    /// The largest unit dividing both.
    pub fn join(self, other: TickUnit) -> TickUnit {
        TickUnit::new(gcd(self.unit, other.unit))
    }

    /// The largest unit dividing every start and end of `layout`'s bars (1 for a layout
    /// with none, or only zeros). Rows on two threads when the layout is large.
    pub fn of_layout(layout: &Layout) -> TickUnit {
        let scan = |rows: &[crate::layout::Row]| {
            let mut u = TickUnit::none();
            for row in rows {
                u = u.with_all(&row.x0).with_all(&row.x1);
                if u.unit == 1 {
                    break;
                }
            }
            u
        };
        let rows = &layout.rows[..];
        let u = if crate::par::two_threads_for(layout.bar_count()) {
            // Cut between rows at half the bars.
            let half = layout.bar_count() / 2;
            let mut seen = 0;
            let mid = rows
                .iter()
                .position(|r| {
                    seen += r.len();
                    seen >= half
                })
                .map_or(rows.len(), |i| i + 1);
            let (a, b) = crate::par::both(|| scan(&rows[..mid]), || scan(&rows[mid..]));
            a.join(b)
        } else {
            scan(rows)
        };
        u.found()
    }
}

/// Greatest common divisor (binary; gcd(0, x) = x).
fn gcd(mut a: u64, mut b: u64) -> u64 {
    if a == 0 {
        return b;
    }
    if b == 0 {
        return a;
    }
    let shift = (a | b).trailing_zeros();
    a >>= a.trailing_zeros();
    loop {
        b >>= b.trailing_zeros();
        if a > b {
            std::mem::swap(&mut a, &mut b);
        }
        b -= a;
        if b == 0 {
            return a << shift;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generator::Rng;
    use crate::layout::Row;

    #[test]
    fn divides_and_divides_exactly_as_the_hardware_does() {
        let mut rng = Rng(11);
        for unit in [
            1u64,
            2,
            3,
            7,
            10,
            1000,
            10_000_000,
            1 << 20,
            3 << 40,
            u64::MAX,
        ] {
            let u = TickUnit::new(unit);
            assert_eq!(u.ticks(), unit);
            for _ in 0..2000 {
                let r = rng.next();
                let x = match r % 4 {
                    0 => r,
                    1 => (r >> 2) % 1000,
                    2 => ((r >> 2) % (u64::MAX / unit)) * unit,
                    _ => ((r >> 2) % (1 << 30))
                        .wrapping_mul(unit)
                        .wrapping_add((r >> 50) % 3),
                };
                assert_eq!(u.divides(x), x % unit == 0, "{x} by {unit}");
                if x % unit == 0 {
                    assert_eq!(u.of(x), x / unit, "{x} by {unit}");
                }
            }
        }
        let none = TickUnit::new(0);
        assert!(none.divides(0) && !none.divides(5));
        assert_eq!(none.ticks(), 1);
    }

    #[test]
    fn gcd_is_the_greatest_common_divisor() {
        let mut rng = Rng(5);
        for _ in 0..5000 {
            let g = 1 + rng.next() % 100_000;
            let (a, b) = (g * (rng.next() % 1_000_000), g * (rng.next() % 1_000_000));
            let d = gcd(a, b);
            assert_eq!((a % d.max(1), b % d.max(1)), (0, 0));
            // No larger common divisor: a/d and b/d are coprime.
            if d > 0 && a > 0 && b > 0 {
                assert_eq!(gcd(a / d, b / d), 1);
            }
        }
        assert_eq!((gcd(0, 12), gcd(12, 0), gcd(0, 0)), (12, 12, 0));
    }

    fn layout(rows: Vec<Vec<(u64, u64)>>) -> Layout {
        let mut total = 0;
        let rows = rows
            .into_iter()
            .map(|bars| {
                let mut row = Row::default();
                for (i, (a, b)) in bars.into_iter().enumerate() {
                    total = total.max(b);
                    row.push(a, b, 0, i as u32);
                }
                row
            })
            .collect();
        Layout {
            rows,
            total_ticks: total,
        }
    }

    /// A profile sampled every 10 ms in nanoseconds counts in 10^7; one bar off the grid
    /// anywhere (any row, start or end) brings the unit down to what still divides all.
    #[test]
    fn the_unit_of_a_layout_divides_every_position() {
        let p = 10_000_000u64;
        let rows = vec![
            vec![(0, 900 * p)],
            vec![(0, 500 * p), (500 * p, 900 * p)],
            vec![(10 * p, 20 * p), (600 * p, 601 * p)],
        ];
        assert_eq!(TickUnit::of_layout(&layout(rows.clone())).ticks(), p);
        let mut off = rows.clone();
        off[2][1].1 = 601 * p + 5_000;
        assert_eq!(TickUnit::of_layout(&layout(off)).ticks(), 5_000);
        let mut off = rows.clone();
        off[1][1].0 = 500 * p + 3;
        assert_eq!(TickUnit::of_layout(&layout(off)).ticks(), 1);
        assert_eq!(TickUnit::of_layout(&layout(vec![])), TickUnit::ONE);
        assert_eq!(
            TickUnit::of_layout(&layout(vec![vec![(0, 0)]])),
            TickUnit::ONE
        );
        // A large layout (rows on two threads) whose one odd position is in its last row.
        let mut big: Vec<Vec<(u64, u64)>> = (0..40)
            .map(|r| {
                (0..10_000u64)
                    .map(|i| (i * 6 * p, (i * 6 + 3 + r % 2) * p))
                    .collect()
            })
            .collect();
        assert_eq!(TickUnit::of_layout(&layout(big.clone())).ticks(), p);
        big[39][9_999].1 += 2 * p / 5;
        // gcd(10^7, 4·10^6) = 2·10^6.
        assert_eq!(TickUnit::of_layout(&layout(big)).ticks(), p / 5);
    }
}
