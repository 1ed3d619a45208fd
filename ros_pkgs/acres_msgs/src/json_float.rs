//! JSON for floats that may be NaN or infinite (serde_json writes both as `null` and cannot read
//! `null` back as a number): NaN is `null`, +inf is `"inf"`, -inf is `"-inf"`, every other value
//! a JSON number. On the fields of `acres_interfaces` whose units allow NaN ("not given") or
//! +inf ("clear"), and on `LaserScan`'s ranges. Use with `#[serde(with = "crate::json_float")]`
//! (`crate::json_float::vec` for `Vec<f32>`).

use serde::de::{Error, Unexpected};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A float in JSON: a number, `null` (NaN), or `"inf"`/`"-inf"`/`"nan"`.
#[derive(Serialize, Deserialize)]
#[serde(untagged)]
enum Repr {
    Number(f64),
    Null(()),
    Word(String),
}

fn to_repr(x: f64) -> Repr {
    if x.is_nan() {
        Repr::Null(())
    } else if x == f64::INFINITY {
        Repr::Word("inf".into())
    } else if x == f64::NEG_INFINITY {
        Repr::Word("-inf".into())
    } else {
        Repr::Number(x)
    }
}

fn from_repr<E: Error>(r: Repr) -> Result<f64, E> {
    match r {
        Repr::Number(x) => Ok(x),
        Repr::Null(()) => Ok(f64::NAN),
        Repr::Word(w) => match w.as_str() {
            "inf" => Ok(f64::INFINITY),
            "-inf" => Ok(f64::NEG_INFINITY),
            "nan" => Ok(f64::NAN),
            _ => Err(E::invalid_value(Unexpected::Str(&w), &"a number, null, \"inf\" or \"-inf\"")),
        },
    }
}

/// A float type carried by this module.
pub trait Float: Copy {
    /// As f64 (exact).
    fn to_f64(self) -> f64;
    /// From f64 (f32: rounded, as a JSON number of an f32 field is).
    fn from_f64(x: f64) -> Self;
}

impl Float for f64 {
    fn to_f64(self) -> f64 {
        self
    }
    fn from_f64(x: f64) -> Self {
        x
    }
}

impl Float for f32 {
    fn to_f64(self) -> f64 {
        self as f64
    }
    fn from_f64(x: f64) -> Self {
        x as f32
    }
}

/// Writes one float.
pub fn serialize<S: Serializer, T: Float>(x: &T, s: S) -> Result<S::Ok, S::Error> {
    to_repr(x.to_f64()).serialize(s)
}

/// Reads one float.
pub fn deserialize<'de, D: Deserializer<'de>, T: Float>(d: D) -> Result<T, D::Error> {
    from_repr(Repr::deserialize(d)?).map(T::from_f64)
}

/// The same for a sequence of floats.
pub mod vec {
    use super::*;

    /// Writes the floats.
    pub fn serialize<S: Serializer, T: Float>(v: &[T], s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(v.iter().map(|x| to_repr(x.to_f64())))
    }

    /// Reads the floats.
    pub fn deserialize<'de, D: Deserializer<'de>, T: Float>(d: D) -> Result<Vec<T>, D::Error> {
        Vec::<Repr>::deserialize(d)?.into_iter().map(|r| from_repr(r).map(T::from_f64)).collect()
    }
}
