//! Deterministic example values of every message, for tests and benchmarks: every field set,
//! sequences of 0–3 elements (up to 12 bytes for `uint8[]`), finite numbers that JSON carries
//! exactly, strings with and without non-ASCII letters. One seed gives one value.

/// A seeded xorshift generator.
#[derive(Debug, Clone)]
pub struct Gen(u64);

impl Gen {
    /// A generator from a seed (any value, 0 included).
    pub fn new(seed: u64) -> Self {
        Self(seed ^ 0x9e37_79b9_7f4a_7c15)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        // xorshift64*, never stuck at 0 because the state is never 0 after the first step.
        let mut x = self.0.max(1);
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// A number in `0..n` (n > 0).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n.max(1)
    }
}

/// A type with example values.
pub trait Example: Sized {
    /// An example value drawn from `g`.
    fn example(g: &mut Gen) -> Self;
}

macro_rules! int_example {
    ($($t:ty),*) => {$(
        impl Example for $t {
            fn example(g: &mut Gen) -> Self {
                // Truncation keeps the low bits: every value of the type is possible.
                g.next_u64() as $t
            }
        }
    )*};
}
int_example!(u8, i8, u16, i16, u32, i32, u64, i64);

impl Example for bool {
    fn example(g: &mut Gen) -> Self {
        g.next_u64() & 1 == 1
    }
}

impl Example for f64 {
    fn example(g: &mut Gen) -> Self {
        // Multiples of 1/64 below ±2^20: exact in binary, at most 13 significant digits in JSON,
        // so that every JSON reader (serde_json's fast one included) reads them back exactly.
        (g.below(1 << 26) as i64 - (1 << 25)) as f64 / 64.0
    }
}

impl Example for f32 {
    fn example(g: &mut Gen) -> Self {
        (g.below(1 << 20) as i32 - (1 << 19)) as f32 / 64.0
    }
}

impl Example for String {
    fn example(g: &mut Gen) -> Self {
        const WORDS: [&str; 6] =
            ["", "map", "base_link", "F51", "Feld Ü-7 ~ 𝜋", "the shield held the vehicle"];
        WORDS[g.below(WORDS.len() as u64) as usize].to_string()
    }
}

impl<T: Example> Example for Vec<T> {
    fn example(g: &mut Gen) -> Self {
        let n = if std::mem::size_of::<T>() == 1 { g.below(13) } else { g.below(4) };
        (0..n).map(|_| T::example(g)).collect()
    }
}

impl<T: Example, const N: usize> Example for [T; N] {
    fn example(g: &mut Gen) -> Self {
        std::array::from_fn(|_| T::example(g))
    }
}
