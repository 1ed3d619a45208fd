//! A LiDAR sweep on the link: points packed as little-endian `f32` x, y, z, intensity (16 bytes
//! a point, in the sensor frame, m), base64 with padding. Never JSON numbers: a 14,400-point
//! sweep is 230 kB packed, 307 kB as base64.
//!
//! [`PackedSweep`] is a sweep encoded once, as the JSON text its step carries: the bridge packs
//! it on a thread of its own, straight from the cloud's bytes when they already are this layout,
//! and [`crate::encode_step`] copies the text into the step line without encoding it again.

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

/// Values per point: x, y, z, intensity.
pub const FIELDS_PER_POINT: usize = 4;

/// One sweep.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Sweep {
    /// The sweep's time on the vehicle's clock, s.
    pub t_s: f64,
    /// The number of points.
    pub points: u32,
    /// The points, packed and base64.
    pub data: String,
}

/// A sweep whose data does not hold its points.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SweepError {
    /// Not base64.
    #[error("sweep data is not base64: {0}")]
    Base64(String),
    /// The bytes do not hold `points` points.
    #[error("sweep data has {bytes} bytes; {points} points need {want}")]
    Length {
        /// Bytes decoded.
        bytes: usize,
        /// Points announced.
        points: u32,
        /// Bytes needed.
        want: usize,
    },
}

/// Bytes of one packed point.
pub const BYTES_PER_POINT: usize = FIELDS_PER_POINT * 4;

/// A sweep encoded once: the JSON object of a [`Sweep`], ready to be copied into a step line by
/// [`crate::encode_step`]. Its text is exactly what [`crate::encode`] writes for the same sweep.
#[derive(Debug, Clone)]
pub struct PackedSweep {
    t_s: f64,
    points: u32,
    json: Box<RawValue>,
}

impl PackedSweep {
    /// Packs points already in the link's layout (little-endian `f32` x, y, z, intensity, 16
    /// bytes a point, as a `sensor_msgs/PointCloud2` of that layout holds them): base64 straight
    /// into the JSON text, with no copy of the points. `None` when `bytes` is not whole points.
    pub fn from_le_bytes(t_s: f64, bytes: &[u8]) -> Option<PackedSweep> {
        if !bytes.len().is_multiple_of(BYTES_PER_POINT) || !t_s.is_finite() {
            return None;
        }
        let points = u32::try_from(bytes.len() / BYTES_PER_POINT).ok()?;
        let t = serde_json::to_string(&t_s).ok()?;
        let mut json = String::with_capacity(64 + bytes.len().div_ceil(3) * 4);
        json.push_str("{\"t_s\":");
        json.push_str(&t);
        json.push_str(",\"points\":");
        json.push_str(&points.to_string());
        json.push_str(",\"data\":\"");
        base64_simd::STANDARD.encode_append(bytes, &mut json);
        json.push_str("\"}");
        // Checks the text once (base64 needs no escapes).
        let json = RawValue::from_string(json).ok()?;
        Some(PackedSweep { t_s, points, json })
    }

    /// Packs points (x, y, z, intensity).
    pub fn pack(t_s: f64, points: &[[f32; FIELDS_PER_POINT]]) -> PackedSweep {
        let mut bytes = Vec::with_capacity(points.len() * BYTES_PER_POINT);
        for p in points {
            for v in p {
                bytes.extend_from_slice(&v.to_le_bytes());
            }
        }
        let t_s = if t_s.is_finite() { t_s } else { 0.0 };
        Self::from_le_bytes(t_s, &bytes).expect("whole points and a finite time always pack")
    }

    /// The sweep's time on the vehicle's clock, s.
    pub fn t_s(&self) -> f64 {
        self.t_s
    }

    /// The number of points.
    pub fn points(&self) -> u32 {
        self.points
    }

    /// The JSON text of the sweep (what its step carries), bytes.
    pub fn json_len(&self) -> usize {
        self.json.get().len()
    }

    pub(crate) fn raw(&self) -> &RawValue {
        &self.json
    }

    /// The sweep as a message value (decodes the text: for tests and tools, not the hot path).
    pub fn to_sweep(&self) -> Sweep {
        serde_json::from_str(self.json.get()).expect("a packed sweep is a sweep")
    }
}

impl Sweep {
    /// Packs points (x, y, z, intensity).
    pub fn pack(t_s: f64, points: &[[f32; FIELDS_PER_POINT]]) -> Self {
        let mut bytes = Vec::with_capacity(points.len() * FIELDS_PER_POINT * 4);
        for p in points {
            for v in p {
                bytes.extend_from_slice(&v.to_le_bytes());
            }
        }
        Sweep { t_s, points: points.len() as u32, data: base64_simd::STANDARD.encode_to_string(bytes) }
    }

    /// Unpacks the points.
    pub fn unpack(&self) -> Result<Vec<[f32; FIELDS_PER_POINT]>, SweepError> {
        let bytes = base64_simd::STANDARD
            .decode_to_vec(self.data.as_bytes())
            .map_err(|e| SweepError::Base64(e.to_string()))?;
        let want = self.points as usize * FIELDS_PER_POINT * 4;
        if bytes.len() != want {
            return Err(SweepError::Length { bytes: bytes.len(), points: self.points, want });
        }
        Ok(bytes
            .chunks_exact(FIELDS_PER_POINT * 4)
            .map(|c| {
                let f = |i: usize| f32::from_le_bytes([c[4 * i], c[4 * i + 1], c[4 * i + 2], c[4 * i + 3]]);
                [f(0), f(1), f(2), f(3)]
            })
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use base64::Engine;

    #[test]
    fn points_round_trip_bit_for_bit_and_bad_data_is_an_error() {
        let pts = vec![[1.5f32, -2.25, 0.125, 7.0], [f32::MIN_POSITIVE, f32::MAX, -0.0, 1e-30]];
        let s = Sweep::pack(3.25, &pts);
        let back = s.unpack().unwrap();
        for (a, b) in pts.iter().zip(&back) {
            for k in 0..4 {
                assert_eq!(a[k].to_bits(), b[k].to_bits());
            }
        }
        // Little-endian f32: 1.5 is 00 00 c0 3f.
        let raw = base64::engine::general_purpose::STANDARD.decode(&s.data).unwrap();
        assert_eq!(&raw[..4], &[0x00, 0x00, 0xc0, 0x3f]);
        let mut bad = s.clone();
        bad.points = 3;
        assert!(matches!(bad.unpack(), Err(SweepError::Length { want: 48, .. })));
        bad.data = "!!".into();
        assert!(matches!(bad.unpack(), Err(SweepError::Base64(_))));
    }

    #[test]
    fn the_simd_base64_agrees_with_the_base64_crate_both_ways() {
        let reference = base64::engine::general_purpose::STANDARD;
        // Every length around the SIMD blocks, bytes that cover the alphabet.
        for len in 0..300usize {
            let bytes: Vec<u8> = (0..len).map(|i| (i * 151 + len * 7) as u8).collect();
            let text = base64_simd::STANDARD.encode_to_string(&bytes);
            assert_eq!(text, reference.encode(&bytes), "encode, {len} bytes");
            let sweep = Sweep { t_s: 0.0, points: (len / BYTES_PER_POINT) as u32, data: text };
            if len.is_multiple_of(BYTES_PER_POINT) {
                let back = sweep.unpack().unwrap();
                assert_eq!(back.len(), len / BYTES_PER_POINT);
                let again: Vec<u8> = back.iter().flatten().flat_map(|v| v.to_le_bytes()).collect();
                assert_eq!(again, bytes, "decode, {len} bytes");
            }
        }
        // What the reference refuses, the link refuses: no padding, bad padding, stray bytes.
        for bad in [
            "AAAAAAAAAAAAAAAAAAAAAA",
            "AAAAAAAAAAAAAAAAAAAAAA=",
            "AAAAAAAAAAAAAAAAAAAAAA==\n",
            "AAAA AAAAAAAAAAAAAAAAAAA==",
        ] {
            assert!(reference.decode(bad).is_err(), "{bad:?}");
            let sweep = Sweep { t_s: 0.0, points: 1, data: bad.into() };
            assert!(matches!(sweep.unpack(), Err(SweepError::Base64(_))), "{bad:?}");
        }
    }

    #[test]
    fn a_packed_sweep_is_the_text_serde_writes_for_the_same_sweep() {
        let pts: Vec<[f32; 4]> = (0..37).map(|i| [i as f32 * 0.25, -1.5, 0.125, 1e-3 * i as f32]).collect();
        for t_s in [0.0, 12.3, 1e-7, 123_456.789_012_345] {
            let packed = PackedSweep::pack(t_s, &pts);
            let sweep = Sweep::pack(t_s, &pts);
            assert_eq!(packed.raw().get(), serde_json::to_string(&sweep).unwrap());
            assert_eq!(packed.to_sweep(), sweep);
            assert_eq!((packed.points(), packed.t_s()), (37, t_s));
        }
        assert!(PackedSweep::from_le_bytes(1.0, &[0u8; 17]).is_none(), "not whole points");
        assert!(PackedSweep::from_le_bytes(f64::NAN, &[0u8; 16]).is_none(), "no time");
        assert_eq!(PackedSweep::from_le_bytes(1.0, &[]).unwrap().points(), 0);
    }
}
