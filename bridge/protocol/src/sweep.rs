//! A LiDAR sweep on the link: points packed as little-endian `f32` x, y, z, intensity (16 bytes
//! a point, in the sensor frame, m), base64 with padding. Never JSON numbers: a 14,400-point
//! sweep is 230 kB packed, 307 kB as base64.

use base64::Engine;
use serde::{Deserialize, Serialize};

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

impl Sweep {
    /// Packs points (x, y, z, intensity).
    pub fn pack(t_s: f64, points: &[[f32; FIELDS_PER_POINT]]) -> Self {
        let mut bytes = Vec::with_capacity(points.len() * FIELDS_PER_POINT * 4);
        for p in points {
            for v in p {
                bytes.extend_from_slice(&v.to_le_bytes());
            }
        }
        Sweep {
            t_s,
            points: points.len() as u32,
            data: base64::engine::general_purpose::STANDARD.encode(bytes),
        }
    }

    /// Unpacks the points.
    pub fn unpack(&self) -> Result<Vec<[f32; FIELDS_PER_POINT]>, SweepError> {
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(self.data.as_bytes())
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
}
