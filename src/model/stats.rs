//! The statistics of comparing runs: Welch's t-test on two samples of shares, Student's t
//! distribution (through the regularized incomplete beta function), and the
//! Benjamini–Hochberg false-discovery-rate correction across many tests.
//!
//! Written from the textbook definitions (Welch 1947; Benjamini & Hochberg 1995; the
//! incomplete beta function's continued fraction as in Numerical Recipes §6.4): small,
//! exact enough for p-values down to 1e-300, no allocation.

/// The result of comparing two samples.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Welch {
    /// Mean of the second sample minus the mean of the first.
    pub diff: f64,
    /// The first sample's mean.
    pub mean_a: f64,
    /// The second sample's mean.
    pub mean_b: f64,
    /// The standard error of `diff`.
    pub se: f64,
    /// Welch–Satterthwaite degrees of freedom.
    pub df: f64,
    /// Two-sided p-value of "the means are equal".
    pub p: f64,
}

impl Welch {
    /// The 95 % confidence interval of `diff` (computed on demand: the quantile is a
    /// search).
    pub fn ci95(&self) -> (f64, f64) {
        let h = half_width_95(self.se, self.df);
        (self.diff - h, self.diff + h)
    }
}

/// Half the width of a 95 % interval of standard error `se` at `df` degrees of freedom.
pub fn half_width_95(se: f64, df: f64) -> f64 {
    if se <= 0.0 || !df.is_finite() {
        return 0.0;
    }
    student_t_quantile(0.975, df) * se
}

fn mean_var(x: &[f64]) -> (f64, f64) {
    let n = x.len() as f64;
    let m = x.iter().sum::<f64>() / n;
    let v = if x.len() > 1 {
        x.iter().map(|v| (v - m) * (v - m)).sum::<f64>() / (n - 1.0)
    } else {
        0.0
    };
    (m, v)
}

/// Welch's unequal-variances t-test of `a` against `b` (each at least 2 values; fewer
/// give `None`). Two samples without any spread are equal (p = 1) or differ for certain
/// (p = 0).
pub fn welch(a: &[f64], b: &[f64]) -> Option<Welch> {
    if a.len() < 2 || b.len() < 2 {
        return None;
    }
    let (ma, va) = mean_var(a);
    let (mb, vb) = mean_var(b);
    let (na, nb) = (a.len() as f64, b.len() as f64);
    let diff = mb - ma;
    let se2 = va / na + vb / nb;
    if se2 <= 0.0 || !se2.is_finite() {
        return Some(Welch {
            diff,
            mean_a: ma,
            mean_b: mb,
            se: 0.0,
            df: f64::INFINITY,
            p: if diff == 0.0 { 1.0 } else { 0.0 },
        });
    }
    let se = se2.sqrt();
    let df = se2 * se2 / ((va / na) * (va / na) / (na - 1.0) + (vb / nb) * (vb / nb) / (nb - 1.0));
    let t = diff / se;
    let p = 2.0 * student_t_sf(t.abs(), df);
    Some(Welch {
        diff,
        mean_a: ma,
        mean_b: mb,
        se,
        df,
        p: p.clamp(0.0, 1.0),
    })
}

/// P(T > t) for Student's t with `df` degrees of freedom (t ≥ 0).
pub fn student_t_sf(t: f64, df: f64) -> f64 {
    if t.is_nan() {
        return f64::NAN;
    }
    let x = df / (df + t * t);
    0.5 * incomplete_beta(df / 2.0, 0.5, x)
}

/// The `p` quantile of Student's t with `df` degrees of freedom (0.5 < p < 1), by
/// bisection on the distribution function.
pub fn student_t_quantile(p: f64, df: f64) -> f64 {
    let (mut lo, mut hi) = (0.0f64, 1.0f64);
    while 1.0 - student_t_sf(hi, df) < p && hi < 1e12 {
        hi *= 2.0;
    }
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if 1.0 - student_t_sf(mid, df) < p {
            lo = mid;
        } else {
            hi = mid;
        }
        if hi - lo < 1e-12 * hi.max(1.0) {
            break;
        }
    }
    0.5 * (lo + hi)
}

/// ln Γ(x) for x > 0 (Lanczos, g = 7, 9 terms).
fn ln_gamma(x: f64) -> f64 {
    const C: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    if x < 0.5 {
        // Reflection.
        let pi = std::f64::consts::PI;
        return (pi / (pi * x).sin()).ln() - ln_gamma(1.0 - x);
    }
    let x = x - 1.0;
    let mut a = C[0];
    let t = x + 7.5;
    for (i, &c) in C.iter().enumerate().skip(1) {
        a += c / (x + i as f64);
    }
    0.5 * (2.0 * std::f64::consts::PI).ln() + (x + 0.5) * t.ln() - t + a.ln()
}

/// The regularized incomplete beta function I_x(a, b).
pub fn incomplete_beta(a: f64, b: f64, x: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    if x >= 1.0 {
        return 1.0;
    }
    let ln_front = ln_gamma(a + b) - ln_gamma(a) - ln_gamma(b) + a * x.ln() + b * (1.0 - x).ln();
    let front = ln_front.exp();
    if x < (a + 1.0) / (a + b + 2.0) {
        front * beta_cf(a, b, x) / a
    } else {
        1.0 - front * beta_cf(b, a, 1.0 - x) / b
    }
}

/// The continued fraction of the incomplete beta function (modified Lentz).
fn beta_cf(a: f64, b: f64, x: f64) -> f64 {
    const TINY: f64 = 1e-300;
    let (qab, qap, qam) = (a + b, a + 1.0, a - 1.0);
    let mut c = 1.0;
    let mut d = 1.0 - qab * x / qap;
    if d.abs() < TINY {
        d = TINY;
    }
    d = 1.0 / d;
    let mut h = d;
    // One modified-Lentz step with partial numerator `aa`: the factor `h` takes.
    let step = |aa: f64, c: &mut f64, d: &mut f64| {
        *d = 1.0 + aa * *d;
        if d.abs() < TINY {
            *d = TINY;
        }
        *c = 1.0 + aa / *c;
        if c.abs() < TINY {
            *c = TINY;
        }
        *d = 1.0 / *d;
        *d * *c
    };
    for m in 1..=300 {
        let m = f64::from(m);
        let m2 = 2.0 * m;
        h *= step(m * (b - m) * x / ((qam + m2) * (a + m2)), &mut c, &mut d);
        let del = step(
            -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2)),
            &mut c,
            &mut d,
        );
        h *= del;
        if (del - 1.0).abs() < 1e-15 {
            break;
        }
    }
    h
}

/// Benjamini–Hochberg adjusted p-values (q-values), in the order of `p`: a test is a
/// discovery at false-discovery rate α when its q ≤ α.
pub fn benjamini_hochberg(p: &[f64]) -> Vec<f64> {
    let m = p.len();
    let mut order: Vec<usize> = (0..m).collect();
    order.sort_by(|&a, &b| p[a].total_cmp(&p[b]));
    let mut q = vec![1.0; m];
    let mut running = 1.0f64;
    for (rank, &i) in order.iter().enumerate().rev() {
        let v = (p[i] * m as f64 / (rank + 1) as f64).min(1.0);
        running = running.min(v);
        q[i] = running;
    }
    q
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn t_distribution_matches_tables() {
        // Two-sided 5 % critical values from a t table.
        for (df, t) in [(1.0, 12.706), (5.0, 2.571), (10.0, 2.228), (30.0, 2.042)] {
            let q = student_t_quantile(0.975, df);
            assert!((q - t).abs() < 1e-3, "df {df}: {q}");
            assert!((2.0 * student_t_sf(t, df) - 0.05).abs() < 1e-4);
        }
        assert!((student_t_sf(0.0, 7.0) - 0.5).abs() < 1e-12);
        // Large t: tiny but positive.
        let p = student_t_sf(40.0, 18.0);
        assert!(p > 0.0 && p < 1e-18, "{p}");
    }

    #[test]
    fn welch_on_a_known_example() {
        // By the formulas, with the p-value from a numerical integration of the t
        // density (midpoint rule, 2 M steps): diff 3.14, t 2.0740, df 10.209,
        // p 0.064280.
        let a = [19.8, 20.4, 19.6, 17.8, 18.5, 18.9, 18.3, 18.9, 19.5, 22.0];
        let b = [28.2, 26.6, 20.1, 23.3, 25.2, 22.1, 17.7, 27.6, 20.6, 13.7];
        let w = welch(&a, &b).unwrap();
        assert!((w.diff - 314.0 / 100.0).abs() < 1e-9, "{w:?}");
        assert!((w.p - 0.064280).abs() < 1e-5, "{w:?}");
        let (lo, hi) = w.ci95();
        assert!(lo < w.diff && w.diff < hi);
        assert!((hi - w.diff - student_t_quantile(0.975, w.df) * w.se).abs() < 1e-12);
        assert!(welch(&[1.0], &[2.0, 3.0]).is_none());
        assert_eq!(welch(&[1.0, 1.0], &[1.0, 1.0]).unwrap().p, 1.0);
        assert_eq!(welch(&[1.0, 1.0], &[2.0, 2.0]).unwrap().p, 0.0);
    }

    #[test]
    fn benjamini_hochberg_by_hand() {
        let p = [0.01, 0.04, 0.03, 0.005];
        let q = benjamini_hochberg(&p);
        // Sorted: 0.005 (×4/1 = 0.02), 0.01 (×4/2 = 0.02), 0.03 (×4/3 = 0.04), 0.04 (×1).
        let want = [0.02, 0.04, 0.04, 0.02];
        for (a, b) in q.iter().zip(want) {
            assert!((a - b).abs() < 1e-12, "{q:?}");
        }
    }
}
