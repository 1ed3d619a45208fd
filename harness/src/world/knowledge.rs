//! The knowledge store: places where the LiDAR returned points, on a 1 m grid, built only from
//! the scan (360 ranges) and the pose — what a real vehicle has.
//!
//! Each scan puts each finite range of the 360 bins on the map (from the sensor's pose) and marks
//! its 1 m cell. A cell with returns in three scans is a place with an object. A cell goes out
//! when three scans in sequence looked through it: the bin at its bearing saw further than the
//! cell (by more than 0.75 m) without a return in it. Iteration is over a `BTreeMap`, so the
//! store is deterministic.

use std::collections::{BTreeMap, BTreeSet};

use acres_farm::geom::{segment_distance, Pose, Vec2};
use acres_vehicle::scan::Scan;

/// Scans with returns that make a cell a place with an object.
pub const ENTER_SCANS: u32 = 3;
/// Scans in sequence that must look through a cell to put it out.
pub const LEAVE_SCANS: u32 = 3;
/// A place is on a route when it is nearer than this to a leg, m.
pub const ON_ROUTE_M: f64 = 1.2;

/// A grid cell index: `floor(x)`, `floor(y)`.
pub type Cell = (i32, i32);

#[derive(Debug, Clone, Copy, Default)]
struct CellState {
    hits: u32,
    through: u32,
}

/// The store.
#[derive(Debug, Clone, Default)]
pub struct Knowledge {
    cells: BTreeMap<Cell, CellState>,
    scans: u64,
}

/// The centre of a cell.
pub fn cell_center(c: Cell) -> Vec2 {
    Vec2::new(f64::from(c.0) + 0.5, f64::from(c.1) + 0.5)
}

fn cell_of(p: Vec2) -> Cell {
    (p.x.floor() as i32, p.y.floor() as i32)
}

/// The returns of a scan on the map: one point per finite bin.
pub fn scan_points(scan: &Scan, sensor: Pose) -> Vec<Vec2> {
    scan.ranges_m
        .iter()
        .enumerate()
        .filter(|(_, r)| r.is_finite())
        .map(|(k, r)| {
            let b = (k as f64).to_radians();
            sensor.to_map(Vec2::new(f64::from(*r) * b.cos(), f64::from(*r) * b.sin()))
        })
        .collect()
}

impl Knowledge {
    /// Takes one scan made at `sensor`.
    pub fn update(&mut self, scan: &Scan, sensor: Pose, max_range_m: f64) {
        self.scans += 1;
        let hit: BTreeSet<Cell> = scan_points(scan, sensor).into_iter().map(cell_of).collect();
        for c in &hit {
            let st = self.cells.entry(*c).or_default();
            st.hits += 1;
            st.through = 0;
        }
        let mut gone = Vec::new();
        for (c, st) in self.cells.iter_mut() {
            if hit.contains(c) {
                continue;
            }
            let local = sensor.to_local(cell_center(*c));
            let d = local.norm();
            if d > max_range_m || d < 0.5 {
                continue;
            }
            let bin = (local.y.atan2(local.x).to_degrees().round() as i32).rem_euclid(360) as usize;
            if f64::from(scan.ranges_m[bin]) > d + 0.75 {
                st.through += 1;
                if st.through >= LEAVE_SCANS {
                    gone.push(*c);
                }
            } else {
                st.through = 0;
            }
        }
        for c in gone {
            self.cells.remove(&c);
        }
    }

    /// Scans taken.
    pub fn scans(&self) -> u64 {
        self.scans
    }

    /// The places with objects: cells with returns in [`ENTER_SCANS`] scans.
    pub fn objects(&self) -> Vec<Cell> {
        self.cells.iter().filter(|(_, s)| s.hits >= ENTER_SCANS).map(|(c, _)| *c).collect()
    }

    /// The places with objects nearer than [`ON_ROUTE_M`] to the polyline `route`.
    pub fn on_route(&self, route: &[Vec2]) -> Vec<Cell> {
        self.objects().into_iter().filter(|c| near_polyline(cell_center(*c), route, ON_ROUTE_M)).collect()
    }
}

/// True when `p` is nearer than `d` to the polyline.
pub fn near_polyline(p: Vec2, line: &[Vec2], d: f64) -> bool {
    match line.len() {
        0 => false,
        1 => line[0].dist(p) < d,
        _ => line.windows(2).any(|w| segment_distance(p, w[0], w[1]).0 < d),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scan_with(hits: &[(usize, f32)]) -> Scan {
        let mut s = Scan::default();
        for (k, r) in hits {
            s.ranges_m[*k] = *r;
        }
        s
    }

    #[test]
    fn a_cell_enters_after_three_scans_with_returns() {
        let mut k = Knowledge::default();
        let sensor = Pose::default();
        let s = scan_with(&[(0, 10.2)]);
        k.update(&s, sensor, 40.0);
        k.update(&s, sensor, 40.0);
        assert!(k.objects().is_empty(), "two scans are not enough");
        k.update(&s, sensor, 40.0);
        assert_eq!(k.objects(), [(10, 0)]);
        assert_eq!(k.on_route(&[Vec2::new(0.0, 1.0), Vec2::new(30.0, 1.0)]), [(10, 0)]);
        assert!(k.on_route(&[Vec2::new(0.0, 3.0), Vec2::new(30.0, 3.0)]).is_empty());
    }

    #[test]
    fn a_cell_leaves_after_three_scans_in_sequence_look_through_it() {
        let mut k = Knowledge::default();
        let sensor = Pose::default();
        for _ in 0..3 {
            k.update(&scan_with(&[(0, 10.2)]), sensor, 40.0);
        }
        let clear = scan_with(&[(0, 30.0)]);
        let blind = scan_with(&[(0, 5.0)]); // something nearer hides the cell: no information
        k.update(&clear, sensor, 40.0);
        k.update(&clear, sensor, 40.0);
        k.update(&blind, sensor, 40.0);
        k.update(&clear, sensor, 40.0);
        assert_eq!(k.objects().len(), 1, "the sequence was broken by a hidden scan");
        k.update(&clear, sensor, 40.0);
        k.update(&clear, sensor, 40.0);
        assert!(!k.objects().contains(&(10, 0)));
    }
}
