//! A LiDAR sweep on the link: its own `sweep` line, stamped with the sweep's acquisition time,
//! its points (x, y, z, intensity in the sensor frame, m) packed in one of three encodings
//! ([`SweepEncoding`]) and base64 with padding. Never JSON numbers.
//!
//! | encoding | what | a 4,700-point simulated sweep |
//! | --- | --- | --- |
//! | `f32` | little-endian `f32` x, y, z, intensity, 16 bytes a point (version 3's) | 100 kB |
//! | `f32_zstd` | the same bytes byte-shuffled, then zstd: lossless, bit for bit | about half |
//! | `mm_zstd` | x, y, z rounded to 1 mm ([`RESOLUTION_M`]), delta from the point before, zigzag; intensity's `f32` bits as they are; byte-shuffled, then zstd | about a tenth |
//!
//! Byte-shuffling writes byte 0 of every point's first value, then byte 1, …, one plane after
//! the other (the layout Cloudini and Blosc use): the planes of small deltas and of repeated
//! intensities are runs that zstd takes in a few bytes. A point that 1 mm cannot hold (not
//! finite, or past ±2,147 km) cannot be quantized: its sweep goes `f32_zstd` instead, and each
//! sweep names its encoding, so the reader never guesses.
//!
//! [`PackedSweep`] is a sweep encoded once, as the JSON text its line carries: the bridge packs
//! it on its loop straight from the cloud's bytes when they already are the link's layout, and
//! [`crate::encode_sweep`] copies the text into the line.

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

/// Values per point: x, y, z, intensity.
pub const FIELDS_PER_POINT: usize = 4;

/// Bytes of one point unpacked (four little-endian `f32`).
pub const BYTES_PER_POINT: usize = FIELDS_PER_POINT * 4;

/// The step of the quantized encoding, m: below the LiDAR's own range error (a few cm).
pub const RESOLUTION_M: f64 = 0.001;

/// Steps of [`RESOLUTION_M`] in a metre (an exact divisor: a millimetre comes back as the
/// nearest `f32` to it).
const STEPS_PER_M: f64 = 1000.0;

/// The most points a sweep may announce (16 MiB unpacked): a compressed sweep is never
/// unpacked past it, whatever its line claims.
pub const MAX_SWEEP_POINTS: u32 = 1 << 20;

/// The zstd level of the compressed encodings: the fastest, within a few per cent of level 3's
/// size on sweeps (the benchmark `sweep_codec` prints both).
pub const ZSTD_LEVEL: i32 = 1;

/// How a sweep's points are packed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SweepEncoding {
    /// Little-endian `f32` x, y, z, intensity, 16 bytes a point (version 3's encoding).
    #[default]
    F32,
    /// The `f32` bytes byte-shuffled and zstd-compressed: lossless.
    F32Zstd,
    /// x, y, z rounded to [`RESOLUTION_M`], delta-coded, zigzag `i32`; intensity's `f32` bits;
    /// byte-shuffled and zstd-compressed.
    MmZstd,
}

impl SweepEncoding {
    /// Every encoding, in the order a bridge offers them.
    pub const ALL: [SweepEncoding; 3] = [SweepEncoding::MmZstd, SweepEncoding::F32Zstd, SweepEncoding::F32];

    /// Its word on the link.
    pub fn as_str(self) -> &'static str {
        match self {
            SweepEncoding::F32 => "f32",
            SweepEncoding::F32Zstd => "f32_zstd",
            SweepEncoding::MmZstd => "mm_zstd",
        }
    }

    /// The encoding of a word, `None` for one the link does not know.
    pub fn parse(word: &str) -> Option<SweepEncoding> {
        Self::ALL.into_iter().find(|e| e.as_str() == word)
    }

    /// True when the points come back bit for bit.
    pub fn lossless(self) -> bool {
        self != SweepEncoding::MmZstd
    }
}

impl std::fmt::Display for SweepEncoding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One sweep.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Sweep {
    /// The sweep's acquisition time on the vehicle's clock (its cloud's stamp), s.
    pub t_s: f64,
    /// The number of points.
    pub points: u32,
    /// How `data` is packed.
    pub encoding: SweepEncoding,
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
        /// Bytes decoded (after decompression, for a compressed encoding).
        bytes: usize,
        /// Points announced.
        points: u32,
        /// Bytes needed.
        want: usize,
    },
    /// More points than a sweep may have.
    #[error("a sweep of {points} points: at most {max} are read")]
    TooMany {
        /// Points announced.
        points: u32,
        /// [`MAX_SWEEP_POINTS`].
        max: u32,
    },
    /// Not a zstd frame of at most the announced points.
    #[error("sweep data ({encoding}) does not decompress to {points} points: {why}")]
    Compressed {
        /// The sweep's encoding.
        encoding: SweepEncoding,
        /// Points announced.
        points: u32,
        /// zstd's word.
        why: String,
    },
}

/// A sweep encoded once: the JSON object of a [`Sweep`], ready to be copied into its line by
/// [`crate::encode_sweep`]. Its text is exactly what serde writes for the same sweep.
#[derive(Debug, Clone)]
pub struct PackedSweep {
    t_s: f64,
    points: u32,
    encoding: SweepEncoding,
    json: Box<RawValue>,
}

impl PackedSweep {
    /// Packs points given in the link's unpacked layout (little-endian `f32` x, y, z,
    /// intensity, 16 bytes a point, as a `sensor_msgs/PointCloud2` of that layout holds them)
    /// in `encoding` (`mm_zstd` falls back to `f32_zstd` for a sweep it cannot hold). `None`
    /// when `bytes` is not whole points, there are more than [`MAX_SWEEP_POINTS`], or `t_s` is
    /// not finite.
    pub fn from_le_bytes(t_s: f64, bytes: &[u8], encoding: SweepEncoding) -> Option<PackedSweep> {
        if !bytes.len().is_multiple_of(BYTES_PER_POINT) || !t_s.is_finite() {
            return None;
        }
        let points = u32::try_from(bytes.len() / BYTES_PER_POINT).ok().filter(|&n| n <= MAX_SWEEP_POINTS)?;
        let (encoding, packed) = match encoding {
            SweepEncoding::F32 => (encoding, None),
            SweepEncoding::F32Zstd => (encoding, Some(zstd_of(&shuffle_f32(bytes))?)),
            SweepEncoding::MmZstd => match quantize(bytes) {
                Some(q) => (encoding, Some(zstd_of(&q)?)),
                None => (SweepEncoding::F32Zstd, Some(zstd_of(&shuffle_f32(bytes))?)),
            },
        };
        let payload = packed.as_deref().unwrap_or(bytes);
        let t = serde_json::to_string(&t_s).ok()?;
        let mut json = String::with_capacity(96 + payload.len().div_ceil(3) * 4);
        json.push_str("{\"t_s\":");
        json.push_str(&t);
        json.push_str(",\"points\":");
        json.push_str(&points.to_string());
        json.push_str(",\"encoding\":\"");
        json.push_str(encoding.as_str());
        json.push_str("\",\"data\":\"");
        base64_simd::STANDARD.encode_append(payload, &mut json);
        json.push_str("\"}");
        // Checks the text once (base64 needs no escapes).
        let json = RawValue::from_string(json).ok()?;
        Some(PackedSweep { t_s, points, encoding, json })
    }

    /// Packs points (x, y, z, intensity); a time that is not finite is written 0.
    pub fn pack(t_s: f64, points: &[[f32; FIELDS_PER_POINT]], encoding: SweepEncoding) -> PackedSweep {
        let t_s = if t_s.is_finite() { t_s } else { 0.0 };
        Self::from_le_bytes(t_s, &le_bytes(points), encoding)
            .expect("whole points, at most MAX_SWEEP_POINTS, and a finite time always pack")
    }

    /// The sweep's time on the vehicle's clock, s.
    pub fn t_s(&self) -> f64 {
        self.t_s
    }

    /// The number of points.
    pub fn points(&self) -> u32 {
        self.points
    }

    /// The encoding it was packed in (`f32_zstd` where `mm_zstd` could not hold it).
    pub fn encoding(&self) -> SweepEncoding {
        self.encoding
    }

    /// The JSON text of the sweep, bytes.
    pub fn json_len(&self) -> usize {
        self.json.get().len()
    }

    /// The JSON text of the sweep.
    pub fn json(&self) -> &str {
        self.json.get()
    }

    /// The sweep as a message value (decodes the text: for tests and tools, not the hot path).
    pub fn to_sweep(&self) -> Sweep {
        serde_json::from_str(self.json.get()).expect("a packed sweep is a sweep")
    }
}

impl Sweep {
    /// Packs points (x, y, z, intensity) in `encoding`.
    pub fn pack(t_s: f64, points: &[[f32; FIELDS_PER_POINT]], encoding: SweepEncoding) -> Self {
        PackedSweep::pack(t_s, points, encoding).to_sweep()
    }

    /// Unpacks the points (for `mm_zstd`: x, y, z the nearest `f32` to their millimetre).
    pub fn unpack(&self) -> Result<Vec<[f32; FIELDS_PER_POINT]>, SweepError> {
        if self.points > MAX_SWEEP_POINTS {
            return Err(SweepError::TooMany { points: self.points, max: MAX_SWEEP_POINTS });
        }
        let bytes = base64_simd::STANDARD
            .decode_to_vec(self.data.as_bytes())
            .map_err(|e| SweepError::Base64(e.to_string()))?;
        let want = self.points as usize * BYTES_PER_POINT;
        let raw = match self.encoding {
            SweepEncoding::F32 => bytes,
            SweepEncoding::F32Zstd | SweepEncoding::MmZstd => {
                zstd::bulk::decompress(&bytes, want).map_err(|e| SweepError::Compressed {
                    encoding: self.encoding,
                    points: self.points,
                    why: e.to_string(),
                })?
            }
        };
        if raw.len() != want {
            return Err(SweepError::Length { bytes: raw.len(), points: self.points, want });
        }
        Ok(match self.encoding {
            SweepEncoding::F32 => raw.chunks_exact(BYTES_PER_POINT).map(point_of).collect(),
            SweepEncoding::F32Zstd => unshuffle_f32(&raw),
            SweepEncoding::MmZstd => dequantize(&raw),
        })
    }
}

/// The points as little-endian bytes.
pub fn le_bytes(points: &[[f32; FIELDS_PER_POINT]]) -> Vec<u8> {
    let mut bytes = Vec::with_capacity(points.len() * BYTES_PER_POINT);
    for p in points {
        for v in p {
            bytes.extend_from_slice(&v.to_le_bytes());
        }
    }
    bytes
}

fn point_of(c: &[u8]) -> [f32; FIELDS_PER_POINT] {
    let f = |i: usize| f32::from_le_bytes([c[4 * i], c[4 * i + 1], c[4 * i + 2], c[4 * i + 3]]);
    [f(0), f(1), f(2), f(3)]
}

fn zstd_of(bytes: &[u8]) -> Option<Vec<u8>> {
    zstd::bulk::compress(bytes, ZSTD_LEVEL).ok()
}

/// Writes the 16 planes of `n` words of four bytes each: plane `4 · field + byte` holds byte
/// `byte` of field `field` of every point.
fn shuffle_words(n: usize, word: impl Fn(usize, usize) -> u32) -> Vec<u8> {
    let mut out = vec![0u8; n * BYTES_PER_POINT];
    for f in 0..FIELDS_PER_POINT {
        let (p0, rest) = out[4 * f * n..4 * (f + 1) * n].split_at_mut(n);
        let (p1, rest) = rest.split_at_mut(n);
        let (p2, p3) = rest.split_at_mut(n);
        let planes = p0.iter_mut().zip(p1.iter_mut()).zip(p2.iter_mut()).zip(p3.iter_mut());
        for (i, (((b0, b1), b2), b3)) in planes.enumerate() {
            [*b0, *b1, *b2, *b3] = word(i, f).to_le_bytes();
        }
    }
    out
}

/// The word of field `f` of point `i` from the planes.
fn word_at(planes: &[u8], n: usize, i: usize, f: usize) -> u32 {
    let b = |k: usize| planes[(4 * f + k) * n + i];
    u32::from_le_bytes([b(0), b(1), b(2), b(3)])
}

fn shuffle_f32(bytes: &[u8]) -> Vec<u8> {
    let n = bytes.len() / BYTES_PER_POINT;
    shuffle_words(n, |i, f| {
        let at = i * BYTES_PER_POINT + 4 * f;
        u32::from_le_bytes([bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]])
    })
}

fn unshuffle_f32(planes: &[u8]) -> Vec<[f32; FIELDS_PER_POINT]> {
    let n = planes.len() / BYTES_PER_POINT;
    (0..n).map(|i| std::array::from_fn(|f| f32::from_bits(word_at(planes, n, i, f)))).collect()
}

/// A coordinate in millimetres, when one `i32` holds it.
fn mm(v: f32) -> Option<i32> {
    let q = (f64::from(v) * STEPS_PER_M).round();
    (q.is_finite() && q.abs() <= f64::from(i32::MAX)).then_some(q as i32)
}

fn zigzag(d: i32) -> u32 {
    ((d << 1) ^ (d >> 31)) as u32
}

fn unzigzag(z: u32) -> i32 {
    ((z >> 1) as i32) ^ -((z & 1) as i32)
}

/// The `mm_zstd` planes before compression; `None` when a coordinate does not quantize.
fn quantize(bytes: &[u8]) -> Option<Vec<u8>> {
    let n = bytes.len() / BYTES_PER_POINT;
    let mut q = Vec::with_capacity(n);
    for c in bytes.chunks_exact(BYTES_PER_POINT) {
        let p = point_of(c);
        q.push([mm(p[0])?, mm(p[1])?, mm(p[2])?, p[3].to_bits() as i32]);
    }
    Some(shuffle_words(n, |i, f| {
        if f == 3 {
            q[i][3] as u32
        } else {
            let before = if i == 0 { 0 } else { q[i - 1][f] };
            zigzag(q[i][f].wrapping_sub(before))
        }
    }))
}

fn dequantize(planes: &[u8]) -> Vec<[f32; FIELDS_PER_POINT]> {
    let n = planes.len() / BYTES_PER_POINT;
    let mut at = [0i32; 3];
    let mut out = Vec::with_capacity(n);
    for i in 0..n {
        let mut p = [0f32; FIELDS_PER_POINT];
        for f in 0..3 {
            at[f] = at[f].wrapping_add(unzigzag(word_at(planes, n, i, f)));
            p[f] = (f64::from(at[f]) / STEPS_PER_M) as f32;
        }
        p[3] = f32::from_bits(word_at(planes, n, i, 3));
        out.push(p);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use base64::Engine;

    /// A sweep like the simulated LiDAR's: ground rings, a box, ascending rings per column.
    fn lidar_like(n_cols: usize) -> Vec<[f32; 4]> {
        let mut pts = Vec::new();
        for c in 0..n_cols {
            let az = (c as f64 + 0.25) * std::f64::consts::TAU / n_cols as f64;
            for ring in 0..8 {
                let el = (-15.0 + 2.0 * ring as f64).to_radians();
                let r = if (100..140).contains(&c) { 7.3 } else { 2.2 / -el.tan() };
                let h = r * el.cos();
                let i = if (100..140).contains(&c) { 0.8 } else { 0.2 };
                pts.push([(h * az.cos()) as f32, (h * az.sin()) as f32, (r * el.sin()) as f32, i]);
            }
        }
        pts
    }

    #[test]
    fn points_round_trip_bit_for_bit_in_the_lossless_encodings_and_bad_data_is_an_error() {
        let pts =
            vec![[1.5f32, -2.25, 0.125, 7.0], [f32::MIN_POSITIVE, f32::MAX, -0.0, 1e-30], [f32::NAN; 4]];
        for enc in [SweepEncoding::F32, SweepEncoding::F32Zstd] {
            let s = Sweep::pack(3.25, &pts, enc);
            assert_eq!(s.encoding, enc);
            let back = s.unpack().unwrap();
            for (a, b) in pts.iter().zip(&back) {
                for k in 0..4 {
                    assert_eq!(a[k].to_bits(), b[k].to_bits(), "{enc}");
                }
            }
            let mut bad = s.clone();
            bad.points = 4;
            assert!(matches!(bad.unpack(), Err(SweepError::Length { want: 64, .. })), "{enc}");
            bad.data = "!!".into();
            assert!(matches!(bad.unpack(), Err(SweepError::Base64(_))), "{enc}");
        }
        // Little-endian f32: 1.5 is 00 00 c0 3f.
        let s = Sweep::pack(3.25, &pts, SweepEncoding::F32);
        let raw = base64::engine::general_purpose::STANDARD.decode(&s.data).unwrap();
        assert_eq!(&raw[..4], &[0x00, 0x00, 0xc0, 0x3f]);
        // Not zstd, or more points than it holds, or than any sweep may have.
        let mut bad = Sweep::pack(0.0, &pts, SweepEncoding::F32Zstd);
        bad.data = base64::engine::general_purpose::STANDARD.encode([1u8, 2, 3, 4, 5, 6]);
        assert!(matches!(bad.unpack(), Err(SweepError::Compressed { .. })));
        let mut short = Sweep::pack(0.0, &pts, SweepEncoding::MmZstd);
        short.points = 2;
        assert!(short.unpack().is_err(), "a frame longer than its points is refused");
        short.points = MAX_SWEEP_POINTS + 1;
        assert!(matches!(short.unpack(), Err(SweepError::TooMany { .. })));
    }

    #[test]
    fn millimetres_come_back_within_half_a_millimetre_and_intensity_bit_for_bit() {
        let mut pts = lidar_like(720);
        pts.push([-2_000_000.0, 2_000_000.0, 0.0004, 0.3]);
        pts.push([1e-9, -0.0005, 0.0015, f32::NAN]);
        let s = Sweep::pack(1.0, &pts, SweepEncoding::MmZstd);
        assert_eq!(s.encoding, SweepEncoding::MmZstd);
        let back = s.unpack().unwrap();
        assert_eq!(back.len(), pts.len());
        for (a, b) in pts.iter().zip(&back) {
            for k in 0..3 {
                // Half a millimetre, and the f32 steps of the value and of its millimetre.
                let tol = 0.5 * RESOLUTION_M + 2.0 * f64::from(a[k].abs()) * f64::from(f32::EPSILON);
                assert!(f64::from((a[k] - b[k]).abs()) <= tol, "{a:?} -> {b:?}");
            }
            assert_eq!(a[3].to_bits(), b[3].to_bits());
        }
        // Exact millimetres come back exactly.
        let exact = vec![[1.234f32, -0.001, 40.0, 0.2]];
        assert_eq!(Sweep::pack(0.0, &exact, SweepEncoding::MmZstd).unpack().unwrap(), exact);
    }

    #[test]
    fn a_sweep_that_millimetres_cannot_hold_goes_lossless() {
        let pts = [[1.0f32, 2.0, 3.0, 0.2], [f32::INFINITY, 0.0, 0.0, 0.2], [3e9, 0.0, 0.0, 0.0]];
        for bad in 1..3 {
            let p = PackedSweep::pack(2.0, &pts[..=bad], SweepEncoding::MmZstd);
            assert_eq!(p.encoding(), SweepEncoding::F32Zstd);
            let back = p.to_sweep().unpack().unwrap();
            assert_eq!(back.iter().flatten().map(|v| v.to_bits()).collect::<Vec<_>>(), {
                pts[..=bad].iter().flatten().map(|v| v.to_bits()).collect::<Vec<_>>()
            });
        }
    }

    #[test]
    fn the_compact_encodings_are_smaller_and_empty_sweeps_pack() {
        let pts = lidar_like(720);
        let len = |e| PackedSweep::pack(0.5, &pts, e).to_sweep().data.len();
        let (f32_, lossless, mm_) =
            (len(SweepEncoding::F32), len(SweepEncoding::F32Zstd), len(SweepEncoding::MmZstd));
        assert_eq!(f32_, (pts.len() * 16).div_ceil(3) * 4);
        assert!(lossless < f32_, "{lossless} < {f32_}");
        assert!(mm_ * 4 <= f32_, "at least 4 times fewer bytes: {mm_} against {f32_}");
        for e in SweepEncoding::ALL {
            let p = PackedSweep::pack(1.0, &[], e);
            assert_eq!((p.points(), p.to_sweep().unpack().unwrap().len()), (0, 0), "{e}");
        }
    }

    #[test]
    fn the_simd_base64_agrees_with_the_base64_crate_both_ways() {
        let reference = base64::engine::general_purpose::STANDARD;
        // Every length around the SIMD blocks, bytes that cover the alphabet.
        for len in 0..300usize {
            let bytes: Vec<u8> = (0..len).map(|i| (i * 151 + len * 7) as u8).collect();
            let text = base64_simd::STANDARD.encode_to_string(&bytes);
            assert_eq!(text, reference.encode(&bytes), "encode, {len} bytes");
            let sweep = Sweep {
                t_s: 0.0,
                points: (len / BYTES_PER_POINT) as u32,
                encoding: SweepEncoding::F32,
                data: text,
            };
            if len.is_multiple_of(BYTES_PER_POINT) {
                let back = sweep.unpack().unwrap();
                assert_eq!(back.len(), len / BYTES_PER_POINT);
                assert_eq!(le_bytes(&back), bytes, "decode, {len} bytes");
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
            let sweep = Sweep { t_s: 0.0, points: 1, encoding: SweepEncoding::F32, data: bad.into() };
            assert!(matches!(sweep.unpack(), Err(SweepError::Base64(_))), "{bad:?}");
        }
    }

    #[test]
    fn a_packed_sweep_is_the_text_serde_writes_for_the_same_sweep() {
        let pts: Vec<[f32; 4]> = (0..37).map(|i| [i as f32 * 0.25, -1.5, 0.125, 1e-3 * i as f32]).collect();
        for e in SweepEncoding::ALL {
            for t_s in [0.0, 12.3, 1e-7, 123_456.789_012_345] {
                let packed = PackedSweep::pack(t_s, &pts, e);
                let sweep = Sweep::pack(t_s, &pts, e);
                assert_eq!(packed.json(), serde_json::to_string(&sweep).unwrap());
                assert_eq!(packed.to_sweep(), sweep);
                assert_eq!((packed.points(), packed.t_s(), packed.encoding()), (37, t_s, e));
            }
            assert!(PackedSweep::from_le_bytes(1.0, &[0u8; 17], e).is_none(), "not whole points");
            assert!(PackedSweep::from_le_bytes(f64::NAN, &[0u8; 16], e).is_none(), "no time");
            assert_eq!(SweepEncoding::parse(e.as_str()), Some(e));
            assert_eq!(serde_json::to_string(&e).unwrap(), format!("\"{e}\""));
        }
        assert_eq!(SweepEncoding::parse("lz4"), None);
    }

    #[test]
    fn zigzag_is_a_bijection_at_the_edges() {
        for d in [0, 1, -1, 2, -2, i32::MAX, i32::MIN, 12345, -12345] {
            assert_eq!(unzigzag(zigzag(d)), d);
        }
        assert_eq!((zigzag(0), zigzag(-1), zigzag(1), zigzag(-2)), (0, 1, 2, 3));
    }
}
