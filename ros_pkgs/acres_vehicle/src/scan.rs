//! The scan function: one LiDAR sweep reduced to 360 one-degree ranges, eight 45° sectors and
//! the obstacle distance ahead. Every scan in the project is made by [`scan`].
//!
//! # Semantics
//!
//! Input points are `[x, y, z, intensity]` in the sensor frame (x forward, y left, z up, origin
//! at the sensor); intensity is ignored.
//!
//! 1. **Kept points**: `min_z_m <= z <= max_z_m`, and the horizontal range
//!    `r = hypot(x, y)` satisfies `0.05 < r <= max_range_m`. Points with a NaN coordinate are
//!    dropped. Everything below is over kept points only.
//! 2. **Bearing** `b = degrees(atan2(y, x))`, counter-clockwise from forward, in (-180, 180].
//! 3. **`ranges_m[k]`** is the minimum `r` over kept points whose bin `round(b) mod 360` is `k`
//!    (`round` is round-half-to-even, like `numpy.rint`): bin 0 is forward (-0.5° to 0.5°),
//!    90 left, 180 behind, 270 right. `f32::INFINITY` when a bin holds no point.
//! 4. **`sectors_m[s]`** is the minimum of `ranges_m[k]` over the 45 bins `k` with
//!    `((k + 22) % 360) / 45 == s`: sector 0 is ahead (bins 338..=359 and 0..=22), 2 left,
//!    4 behind, 6 right.
//! 5. **`ahead_m`** is the minimum `x` over kept points with `x > 0` and
//!    `|y| <= ahead_half_width_m`: the distance ahead along the heading to the nearest point in
//!    the vehicle's corridor. `f32::INFINITY` if none.
//!
//! Arithmetic is `f32`: `r² = x*x + y*y` (no fused multiply-add), ranges are `sqrt` of the
//! minimum `r²`, so they equal a float32 numpy reference bit for bit.
//!
//! # Bearing precision
//!
//! The bin is computed without libm `atan2`: the first-quadrant angle is
//! `45° + atan((|y| - |x|) / (|y| + |x|))`, with `atan` an odd degree-13 minimax polynomial in
//! degrees; it is reflected by the signs of `x` and `y` with sign-bit arithmetic and rounded to
//! the nearest integer (half to even) by the `1.5 * 2^23` addition trick. The bearing is within
//! 3e-5° of the exact one, so the bin agrees with numpy's `rint(degrees(arctan2(y, x))) % 360`
//! except for points within 1e-3° of a bin edge (`b = k + 0.5`), which may land in either
//! neighbour. (A LiDAR with a 0.5° azimuth step puts every other column on a bin edge: those
//! columns' bins depend on the last bits of `x` and `y`.)
//!
//! # Speed
//!
//! Points are processed in chunks of [`CHUNK`]. The height filter comes first: a vectorised
//! pass flags the in-band points; their `x, y` are then compacted into a stack buffer eight
//! points at a time, each point's slot read from a byte-wise prefix sum of the eight flags (one
//! multiplication), and a group with no in-band point (ground rings, sky) is skipped.
//! A branch-free pass over the survivors (which the compiler vectorises) computes `r²`, the
//! bin and the ahead candidate; a scalar pass scatters `r²` into four interleaved bin tables,
//! so consecutive points of one azimuth do not wait on each other's stores. Square roots are
//! taken for the bins at the end. No allocation, no `unsafe`.

/// Points per chunk of the pipeline.
pub const CHUNK: usize = 256;

/// Bins per scan.
pub const BINS: usize = 360;

/// The scan function's parameters.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ScanConfig {
    /// Lowest point kept, sensor frame, m (default -1.9: 0.3 m above ground for a 2.2 m mount).
    pub min_z_m: f32,
    /// Highest point kept, sensor frame, m (default 0.5).
    pub max_z_m: f32,
    /// Half width of the corridor ahead, m (default 1.7).
    pub ahead_half_width_m: f32,
    /// Maximum horizontal range kept, m (default 40).
    pub max_range_m: f32,
}

/// The lowest point the scan keeps, above ground, m (below it: the ground's own returns).
pub const GROUND_CLEARANCE_M: f64 = 0.3;

impl Default for ScanConfig {
    /// The scan of a LiDAR mounted 2.2 m above ground ([`ScanConfig::for_mount`]`(2.2)`).
    fn default() -> Self {
        Self { min_z_m: -1.9, max_z_m: 0.5, ahead_half_width_m: 1.7, max_range_m: 40.0 }
    }
}

impl ScanConfig {
    /// The scan of a LiDAR mounted `mount_height_m` above ground: points from
    /// [`GROUND_CLEARANCE_M`] above ground up; the rest as [`ScanConfig::default`].
    pub fn for_mount(mount_height_m: f64) -> ScanConfig {
        ScanConfig { min_z_m: (GROUND_CLEARANCE_M - mount_height_m) as f32, ..ScanConfig::default() }
    }
}

/// One scan: see the module docs for the exact meaning of each field.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Scan {
    /// Nearest horizontal range per one-degree bearing bin, m (bin 0 forward, 90 left).
    pub ranges_m: [f32; BINS],
    /// Nearest range per 45° sector, m (0 ahead, 2 left, 4 behind, 6 right).
    pub sectors_m: [f32; 8],
    /// Distance ahead along the heading to the nearest point in the corridor, m.
    pub ahead_m: f32,
}

impl Default for Scan {
    fn default() -> Self {
        Self { ranges_m: [f32::INFINITY; BINS], sectors_m: [f32::INFINITY; 8], ahead_m: f32::INFINITY }
    }
}

/// `atan(u)` in degrees for `u` in [-1, 1] is `u * P(u²)`; `P`'s coefficients, lowest first.
const ATAN_DEG: [f32; 7] =
    [57.295_555, -19.089_445, 11.349_041, -7.582_14, 4.562_088, -1.925_369_1, 0.390_283_3];

/// Adding this to an `f32` `a` in [-180, 180] leaves `round(a) + 180` (half to even) in the
/// low mantissa bits: 1.5 * 2^23 + 180.
const ROUND_MAGIC: f32 = 12_583_092.0;
/// The bits of 1.5 * 2^23: subtracted to read the integer back.
const ROUND_BASE: u32 = 0x4B40_0000;
const SIGN: u32 = 0x8000_0000;

/// Bin tables are indexed by `round(bearing) + 180`, 0..=360 (0 and 360 both mean bin 180);
/// a dropped point has the `DROPPED` bits set, which puts it at 384..=511, never read. A power
/// of two wide so `k & MASK` needs no bounds check.
const TABLE: usize = 512;
const MASK: usize = TABLE - 1;
const DROPPED: u32 = 384;
const LANES: usize = 8;

/// Reduces a sweep to a [`Scan`]; see the module docs.
pub fn scan(points: &[[f32; 4]], cfg: &ScanConfig) -> Scan {
    let mut tables = [[f32::INFINITY; TABLE]; 4];
    let mut ahead = [f32::INFINITY; LANES];
    let mut band = [[0.0f32; 2]; CHUNK];
    let mut r2s = [0.0f32; CHUNK];
    let mut bins = [0u32; CHUNK];
    let max_r2 = cfg.max_range_m * cfg.max_range_m;
    let min_r2 = 0.05f32 * 0.05;
    let (lo_z, hi_z) = (cfg.min_z_m, cfg.max_z_m);
    let mut flags = [0u8; CHUNK];
    for chunk in points.chunks(CHUNK) {
        // 1. Height filter: flag the in-band points, then compact their x, y (branch-free
        // within a group of eight: every point is copied, a dropped one is overwritten).
        for (f, p) in flags.iter_mut().zip(chunk) {
            *f = ((p[2] >= lo_z) & (p[2] <= hi_z)) as u8;
        }
        let mut n = 0usize;
        let full = chunk.len() / 8 * 8;
        let mut i = 0;
        while i < full {
            let group = &chunk[i..i + 8];
            let f = u64::from_le_bytes(flags[i..i + 8].try_into().unwrap_or([0; 8]));
            i += 8;
            if f == 0 {
                // A group with no in-band point (ground rings, sky) costs no copies.
                continue;
            }
            // Byte k of `before` counts the in-band points before point k of the group.
            let before = f.wrapping_mul(0x0101_0101_0101_0100);
            for (k, p) in group.iter().enumerate() {
                let at = n + ((before >> (8 * k)) & 0xFF) as usize;
                band[at & (CHUNK - 1)] = [p[0], p[1]];
            }
            n += (f.wrapping_mul(0x0101_0101_0101_0101) >> 56) as usize;
        }
        for (p, &f) in chunk[full..].iter().zip(&flags[full..]) {
            band[n & (CHUNK - 1)] = [p[0], p[1]];
            n += f as usize;
        }
        // 2. Range, bin and ahead candidate, vectorisable; padded to whole lanes.
        let padded = n.div_ceil(LANES) * LANES;
        for p in &mut band[n..padded] {
            *p = [f32::NAN; 2];
        }
        for ((p8, r8), b8) in band[..padded]
            .chunks_exact(LANES)
            .zip(r2s[..padded].chunks_exact_mut(LANES))
            .zip(bins[..padded].chunks_exact_mut(LANES))
        {
            for l in 0..LANES {
                let (x, y) = (p8[l][0], p8[l][1]);
                let r2 = x * x + y * y;
                let keep = (r2 <= max_r2) & (r2 > min_r2);
                r8[l] = r2;
                // A dropped point (NaN too) goes to the dummy half of the table.
                b8[l] = bin_index(x, y) | if keep { 0 } else { DROPPED };
                let in_corridor = keep & (x > 0.0) & (y.abs() <= cfg.ahead_half_width_m);
                let cand = if in_corridor { x } else { f32::INFINITY };
                ahead[l] = if cand < ahead[l] { cand } else { ahead[l] };
            }
        }
        // 3. Scatter the squared ranges into the bins, rotating over four tables.
        for (r4, b4) in r2s[..padded].chunks_exact(4).zip(bins[..padded].chunks_exact(4)) {
            for t in 0..4 {
                let cell = &mut tables[t][b4[t] as usize & MASK];
                *cell = if r4[t] < *cell { r4[t] } else { *cell };
            }
        }
    }
    finish(&tables, &ahead)
}

/// `degrees(atan2(y, x))` within 3e-5°, without libm: the first-quadrant angle is
/// `45° + atan((|y| - |x|) / (|y| + |x|))`, then reflected by the signs of `x` and `y`.
#[inline(always)]
fn bearing_deg(x: f32, y: f32) -> f32 {
    let (ax, ay) = (x.abs(), y.abs());
    let u = (ay - ax) / (ay + ax);
    let s = u * u;
    let mut p = ATAN_DEG[6];
    for c in ATAN_DEG[..6].iter().rev() {
        p = p * s + c;
    }
    let q = 45.0 + p * u;
    // x < 0: 180 - q, by flipping q's sign and adding 180 where x's sign bit is set.
    let xs = x.to_bits() & SIGN;
    let flipped = f32::from_bits(q.to_bits() ^ xs);
    let half = if xs != 0 { 180.0 } else { 0.0 };
    let a = flipped + half;
    // y < 0: -a (a >= 0 here), by copying y's sign bit.
    f32::from_bits(a.to_bits() | (y.to_bits() & SIGN))
}

/// The table index `round(degrees(atan2(y, x))) + 180` in 0..=360, without libm.
#[inline(always)]
fn bin_index(x: f32, y: f32) -> u32 {
    (bearing_deg(x, y) + ROUND_MAGIC).to_bits().wrapping_sub(ROUND_BASE)
}

/// The bin `round(degrees(atan2(y, x))) mod 360` of one point.
#[cfg(test)]
fn bin(x: f32, y: f32) -> u32 {
    (bin_index(x, y) + 180) % 360
}

/// Merges the bin tables, takes the square roots and fills the sectors.
fn finish(tables: &[[f32; TABLE]; 4], ahead: &[f32; LANES]) -> Scan {
    let mut merged = [f32::INFINITY; 361];
    for (i, m) in merged.iter_mut().enumerate() {
        *m = tables[0][i].min(tables[1][i]).min(tables[2][i]).min(tables[3][i]);
    }
    let mut out = Scan::default();
    for (i, &m) in merged.iter().enumerate() {
        let k = (i + 180) % BINS;
        out.ranges_m[k] = out.ranges_m[k].min(m.sqrt());
    }
    for (k, &r) in out.ranges_m.iter().enumerate() {
        let s = ((k + 22) % BINS) / 45;
        out.sectors_m[s] = out.sectors_m[s].min(r);
    }
    out.ahead_m = ahead.iter().copied().fold(f32::INFINITY, f32::min);
    out
}

#[cfg(test)]
mod for_mount_tests {
    use super::*;

    #[test]
    fn the_default_is_the_scan_of_a_2_2_m_mount() {
        assert_eq!(ScanConfig::for_mount(2.2), ScanConfig::default());
        assert_eq!(ScanConfig::for_mount(1.0).min_z_m, -0.7);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A point at `bearing_deg` and horizontal range `r`, height `z`.
    fn at(bearing_deg: f64, r: f64, z: f32) -> [f32; 4] {
        let b = bearing_deg.to_radians();
        [(r * b.cos()) as f32, (r * b.sin()) as f32, z, 0.8]
    }

    fn only_bin(s: &Scan) -> Vec<usize> {
        (0..BINS).filter(|&k| s.ranges_m[k].is_finite()).collect()
    }

    #[test]
    fn single_points_land_in_their_bins() {
        let cfg = ScanConfig::default();
        for (bearing, want) in
            [(0.0, 0), (90.0, 90), (180.0, 180), (270.0, 270), (359.6, 0), (-0.4, 0), (0.6, 1), (179.7, 180)]
        {
            let s = scan(&[at(bearing, 10.0, 0.0)], &cfg);
            assert_eq!(only_bin(&s), vec![want], "bearing {bearing}");
            assert!((s.ranges_m[want] - 10.0).abs() < 1e-5);
        }
        // Exactly behind with y = -0.0 is bin 180 too.
        assert_eq!(only_bin(&scan(&[[-5.0, -0.0, 0.0, 0.0]], &cfg)), vec![180]);
    }

    #[test]
    fn bins_match_libm_away_from_edges() {
        let cfg = ScanConfig { max_range_m: 1e6, ..Default::default() };
        let mut worst = 0.0f64;
        for i in 0..200_000u32 {
            let b = -180.0 + 360.0 * (i as f64 + 0.37) / 200_000.0;
            let r = 0.1 + (i % 97) as f64 * 3.1;
            let p = at(b, r, 0.0);
            let exact = (p[1] as f64).atan2(p[0] as f64).to_degrees();
            let frac = exact - exact.floor();
            if (frac - 0.5).abs() < 1e-3 {
                continue;
            }
            let want = (exact.round_ties_even() as i64).rem_euclid(360) as u32;
            assert_eq!(bin(p[0], p[1]), want, "bearing {exact}");
            let got = bearing_deg(p[0], p[1]) as f64;
            worst = worst.max((got - exact).abs());
        }
        assert!(worst < 3e-5, "worst bearing error {worst}°");
        assert!(scan(&[at(10.0, 1e5, 0.0)], &cfg).ranges_m[10].is_finite());
    }

    #[test]
    fn height_band_and_range_filter() {
        let cfg = ScanConfig::default();
        let s = scan(
            &[
                at(0.0, 8.0, -2.2),   // ground: dropped
                at(10.0, 8.0, -1.95), // below the band
                at(20.0, 8.0, -1.9),  // on the lower edge: kept
                at(30.0, 8.0, 0.5),   // on the upper edge: kept
                at(40.0, 8.0, 0.51),  // above
                at(50.0, 40.5, 0.0),  // beyond range
                at(60.0, 0.04, 0.0),  // too close
                [f32::NAN, 1.0, 0.0, 0.0],
            ],
            &cfg,
        );
        assert_eq!(only_bin(&s), vec![20, 30]);
    }

    #[test]
    fn bins_keep_the_minimum_and_sectors_group_them() {
        let cfg = ScanConfig::default();
        let pts = [
            at(0.2, 12.0, 0.0),
            at(-0.2, 9.0, 0.0),
            at(0.0, 15.0, 0.0),
            at(22.4, 7.0, 0.0),  // bin 22: sector 0
            at(22.6, 3.0, 0.0),  // bin 23: sector 1
            at(-22.0, 6.5, 0.0), // bin 338: sector 0
            at(-22.6, 2.0, 0.0), // bin 337: sector 7
            at(90.0, 4.0, 0.0),
            at(270.0, 5.0, 0.0),
        ];
        let s = scan(&pts, &cfg);
        assert!((s.ranges_m[0] - 9.0).abs() < 1e-5);
        let want = [6.5, 3.0, 4.0, f32::INFINITY, f32::INFINITY, f32::INFINITY, 5.0, 2.0];
        for (got, want) in s.sectors_m.iter().zip(want) {
            assert!((got - want).abs() < 1e-5 || (got.is_infinite() && want.is_infinite()), "{s:?}");
        }
    }

    #[test]
    fn ahead_band() {
        let cfg = ScanConfig::default();
        let s = scan(&[[6.0, 1.8, 0.0, 0.8], [9.0, 1.6, 0.0, 0.8], [-2.0, 0.0, 0.0, 0.8]], &cfg);
        assert_eq!(s.ahead_m, 9.0);
        assert_eq!(scan(&[[6.0, 1.8, 0.0, 0.8]], &cfg).ahead_m, f32::INFINITY);
        assert_eq!(scan(&[[6.0, -1.6, -2.0, 0.8]], &cfg).ahead_m, f32::INFINITY);
    }

    #[test]
    fn empty_input_is_all_infinity() {
        let s = scan(&[], &ScanConfig::default());
        assert_eq!(s, Scan::default());
        assert!(s.ranges_m.iter().chain(&s.sectors_m).all(|r| *r == f32::INFINITY));
        assert_eq!(s.ahead_m, f32::INFINITY);
    }

    #[test]
    fn chunking_does_not_change_the_result() {
        // Many points over several chunks, with a partial last chunk and mixed heights.
        let cfg = ScanConfig::default();
        let pts: Vec<[f32; 4]> = (0..2_345)
            .map(|i| at(i as f64 * 0.77 + 0.13, 1.0 + (i % 53) as f64 * 0.9, [-2.2, -1.0, 0.2][i % 3]))
            .collect();
        let whole = scan(&pts, &cfg);
        let mut by_parts = Scan::default();
        for part in pts.chunks(100) {
            let s = scan(part, &cfg);
            for k in 0..BINS {
                by_parts.ranges_m[k] = by_parts.ranges_m[k].min(s.ranges_m[k]);
            }
            by_parts.ahead_m = by_parts.ahead_m.min(s.ahead_m);
        }
        assert_eq!(whole.ranges_m, by_parts.ranges_m);
        assert_eq!(whole.ahead_m, by_parts.ahead_m);
    }
}
