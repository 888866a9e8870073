//! Helpers shared by the unit tests (compiled only under `cfg(test)`).

/// A fixed 64-bit linear congruential generator (Knuth's MMIX constants), so that the
/// randomized tests reproduce: a seed gives the same inputs on every run and machine.
pub struct Lcg(u64);

impl Lcg {
    pub fn new(seed: u64) -> Self {
        Lcg(seed)
    }

    /// Advances and returns the whole new state (its low bits are weak; prefer the high).
    pub fn step(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0
    }

    /// The next value: the new state's top 31 bits.
    pub fn next_u64(&mut self) -> u64 {
        self.step() >> 33
    }

    /// [`Lcg::next_u64`] as an index, for `% len`.
    pub fn next_usize(&mut self) -> usize {
        self.next_u64() as usize
    }
}

/// `n` Chrome `X` events of 5 µs, 10 µs apart on one thread, named `{prefix}{i % names}`,
/// each followed by `sep` (`",\n"` for one event a line, `","` for minified JSON).
pub fn chrome_x_events(n: usize, prefix: &str, names: usize, sep: &str) -> String {
    let mut out = String::new();
    for i in 0..n {
        out.push_str(&format!(
            "{{\"ph\":\"X\",\"name\":\"{prefix}{}\",\"ts\":{},\"dur\":5,\"pid\":1,\"tid\":1}}{sep}",
            i % names,
            i * 10
        ));
    }
    out
}

/// Damages `t` once at a random place: a byte replaced by one of `alphabet`, a byte
/// removed, or the input cut there (one of the three at random).
pub fn damage(rng: &mut crate::generator::Rng, t: &mut Vec<u8>, alphabet: &[u8]) {
    let at = (rng.next() % t.len() as u64) as usize;
    match rng.next() % 3 {
        0 => t[at] = alphabet[(rng.next() % alphabet.len() as u64) as usize],
        1 => {
            t.remove(at);
        }
        _ => t.truncate(at),
    }
}
