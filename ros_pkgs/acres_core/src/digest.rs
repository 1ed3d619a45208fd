//! A running digest of the world state (FNV-1a, 64 bit): the same inputs give the same digest,
//! bit for bit, on any machine and with any number of workers.

/// A running FNV-1a 64-bit hash.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Digest(u64);

impl Default for Digest {
    fn default() -> Self {
        Digest(0xcbf2_9ce4_8422_2325)
    }
}

impl Digest {
    /// Folds bytes in.
    pub fn bytes(&mut self, b: &[u8]) {
        for &x in b {
            self.0 ^= u64::from(x);
            self.0 = self.0.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    /// Folds the exact bits of an `f64` in.
    pub fn f64(&mut self, v: f64) {
        self.bytes(&v.to_bits().to_le_bytes());
    }
    /// Folds a `u64` in.
    pub fn u64(&mut self, v: u64) {
        self.bytes(&v.to_le_bytes());
    }
    /// The digest as 16 hex digits.
    pub fn hex(&self) -> String {
        format!("{:016x}", self.0)
    }
}

/// A small seeded generator (xorshift64*), for the world's randomness.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rng(u64);

impl Rng {
    /// A generator from a seed: distinct seeds give distinct states (the one seed that would
    /// give the all-zero state, which xorshift cannot leave, is mapped to a fixed other state).
    pub fn new(seed: u64) -> Self {
        const MIX: u64 = 0x9e37_79b9_7f4a_7c15;
        let s = seed ^ (MIX ^ 1);
        Rng(if s == 0 { 0x2545_f491_4f6c_dd1d } else { s })
    }
    /// The next value in [-1, 1).
    pub fn symmetric(&mut self) -> f64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        let v = self.0.wrapping_mul(0x2545_f491_4f6c_dd1d);
        (v >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
    }
}

#[cfg(test)]
mod tests {
    use super::Rng;

    #[test]
    fn neighbouring_seeds_give_different_streams() {
        for (a, b) in [(0, 1), (6, 7), (1, 2)] {
            let (mut x, mut y) = (Rng::new(a), Rng::new(b));
            assert_ne!((x.symmetric(), x.symmetric()), (y.symmetric(), y.symmetric()), "seeds {a} and {b}");
        }
        let mut r = Rng::new(42);
        assert!((0..1000).map(|_| r.symmetric()).all(|v| (-1.0..1.0).contains(&v)));
    }
}
