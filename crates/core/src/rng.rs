//! Per-component seeded random streams.
//!
//! Every random component (e.g. `link:wifi.down:loss`) owns a [`Rng`] derived from the run's
//! master seed and the component's name, so adding a draw in one component never shifts the
//! numbers another component sees. The generator is xoshiro256++ (Blackman & Vigna), seeded
//! through SplitMix64; names are hashed with FNV-1a, which is stable across platforms and
//! releases (unlike the standard library's hasher).

/// A small, fast, seedable generator (xoshiro256++).
#[derive(Clone, Debug)]
pub struct Rng {
    s: [u64; 4],
}

fn splitmix64(x: &mut u64) -> u64 {
    *x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *x;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// FNV-1a, 64 bit.
pub fn fnv1a(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        h ^= *b as u64;
        h = h.wrapping_mul(0x0000_0100_0000_01B3);
    }
    h
}

impl Rng {
    /// The stream of component `name` under master seed `seed`.
    pub fn stream(seed: u64, name: &str) -> Rng {
        let mut x = seed ^ fnv1a(name.as_bytes()).rotate_left(17);
        let s = [splitmix64(&mut x), splitmix64(&mut x), splitmix64(&mut x), splitmix64(&mut x)];
        Rng { s }
    }

    pub fn next_u64(&mut self) -> u64 {
        let s = &mut self.s;
        let result = s[0].wrapping_add(s[3]).rotate_left(23).wrapping_add(s[0]);
        let t = s[1] << 17;
        s[2] ^= s[0];
        s[3] ^= s[1];
        s[1] ^= s[2];
        s[0] ^= s[3];
        s[2] ^= t;
        s[3] = s[3].rotate_left(45);
        result
    }

    /// Uniform in [0, 1) with 53 bits of precision.
    pub fn uniform(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// True with probability `p`.
    pub fn bernoulli(&mut self, p: f64) -> bool {
        p > 0.0 && self.uniform() < p
    }

    /// Uniform integer in [0, n).
    pub fn below(&mut self, n: u64) -> u64 {
        ((self.next_u64() as u128 * n as u128) >> 64) as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_are_reproducible_and_independent() {
        let mut a = Rng::stream(7, "link:a:loss");
        let mut b = Rng::stream(7, "link:a:loss");
        let mut c = Rng::stream(7, "link:b:loss");
        let xa: Vec<u64> = (0..5).map(|_| a.next_u64()).collect();
        let xb: Vec<u64> = (0..5).map(|_| b.next_u64()).collect();
        let xc: Vec<u64> = (0..5).map(|_| c.next_u64()).collect();
        assert_eq!(xa, xb);
        assert_ne!(xa, xc);
    }

    #[test]
    fn bernoulli_rate_is_within_binomial_bounds() {
        // n = 10^6 draws at p = 1 %: sd = sqrt(n p (1-p)) = 99.5; allow 5 sd.
        let mut r = Rng::stream(1, "t");
        let n = 1_000_000;
        let hits = (0..n).filter(|_| r.bernoulli(0.01)).count() as f64;
        assert!((hits - 10_000.0).abs() < 5.0 * 99.5, "{hits}");
    }
}
