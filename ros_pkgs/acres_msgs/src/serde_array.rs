//! Serde for fixed arrays longer than 32 elements (serde derives only up to 32): a JSON array
//! of exactly N elements. Use with `#[serde(with = "crate::serde_array")]`.

use serde::de::Error;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Writes the array as a sequence.
pub fn serialize<S: Serializer, T: Serialize, const N: usize>(a: &[T; N], s: S) -> Result<S::Ok, S::Error> {
    s.collect_seq(a.iter())
}

/// Reads a sequence of exactly N elements.
pub fn deserialize<'de, D: Deserializer<'de>, T: Deserialize<'de>, const N: usize>(
    d: D,
) -> Result<[T; N], D::Error> {
    let v = Vec::<T>::deserialize(d)?;
    let len = v.len();
    v.try_into().map_err(|_| D::Error::invalid_length(len, &format!("an array of {N} elements").as_str()))
}
