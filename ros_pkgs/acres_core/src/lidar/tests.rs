//! Tests of the LiDAR raycast.
use super::*;
use acres_farm::geom::Obb;
use std::f64::consts::FRAC_PI_2;

fn body(id: u32, x: f64, y: f64, yaw: f64, l: f64, w: f64, h: f64) -> Body {
    Body {
        id,
        obb: Obb { center: Vec2::new(x, y), yaw, half_length_m: l / 2.0, half_width_m: w / 2.0 },
        height_m: h,
    }
}

fn truck_across(id: u32, x: f64, y: f64) -> Body {
    body(id, x, y, FRAC_PI_2, 8.0, 2.5, 3.5)
}

/// The bearing of a point, degrees in [0, 360).
fn bearing(p: &[f32; 4]) -> f64 {
    (p[1] as f64).atan2(p[0] as f64).to_degrees().rem_euclid(360.0)
}

/// The points of column `j`, in sweep order.
fn column(lidar: &Lidar, sweep: &Sweep, j: usize) -> Vec<[f32; 4]> {
    let step = 360.0 / lidar.columns() as f64;
    let centre = (j as f64 + COLUMN_OFFSET) * step;
    let near = |p: &&[f32; 4]| (bearing(p) - centre + 180.0).rem_euclid(360.0) - 180.0;
    sweep.points.iter().filter(|p| near(p).abs() < step / 4.0).copied().collect()
}

#[test]
fn ground_only_sweep_and_ring_ranges() {
    let cfg = LidarConfig::default();
    let lidar = Lidar::new(cfg.clone());
    assert_eq!(lidar.columns(), 720);
    let mut sweep = Sweep::default();
    lidar.sweep(Pose { x: 5.0, y: -3.0, yaw: 0.7 }, &[], 1.5, &mut sweep);
    assert_eq!(sweep.stamp_s, 1.5);
    assert!(sweep.seen.is_empty() && sweep.points.iter().all(|p| p[3] == GROUND_INTENSITY));
    // Rings -15, -13, ..., -5 reach the ground within 40 m (at h / tan(-el)); -3, -1 do not.
    assert_eq!(sweep.points.len(), 720 * 6);
    for (i, el_deg) in [-15.0f64, -13.0, -11.0, -9.0, -7.0, -5.0].into_iter().enumerate() {
        let want = cfg.mount_height_m / (-el_deg).to_radians().tan();
        for j in [0usize, 100, 359, 719] {
            let p = sweep.points[j * 6 + i];
            let r = (p[0] as f64).hypot(p[1] as f64);
            assert!((r - want).abs() < 1e-4, "ring {el_deg}: {r} vs {want}");
            assert!((p[2] as f64 + cfg.mount_height_m).abs() < 1e-5);
        }
    }
}

#[test]
fn range_to_a_truck_face_ahead() {
    let cfg = LidarConfig::default();
    let lidar = Lidar::new(cfg.clone());
    let mut sweep = Sweep::default();
    let vehicle = Pose { x: 100.0, y: 50.0, yaw: 0.0 };
    let truck = truck_across(7, 110.0, 50.0);
    lidar.sweep(vehicle, &[truck], 0.0, &mut sweep);
    let face_x = 10.0 - 1.25 - cfg.mount_forward_m;
    let col = column(&lidar, &sweep, 0);
    let objects: Vec<_> = col.iter().filter(|p| p[3] == OBJECT_INTENSITY).collect();
    // Rings from -15 to +9 degrees meet the 3.5 m face at 7.75 m.
    assert_eq!(objects.len(), 13);
    for p in &objects {
        assert!((p[0] as f64 - face_x).abs() < 0.05, "x = {}", p[0]);
        // Column 0 looks COLUMN_OFFSET of a step (0.125°) left of ahead.
        let y = face_x * (COLUMN_OFFSET * 0.5f64).to_radians().tan();
        assert!((p[1] as f64 - y).abs() < 1e-4, "y = {}", p[1]);
    }
    // No ground return beyond the truck in that column: the -15° ring hits the face
    // (7.75 m) before the ground (8.21 m).
    assert!(col.iter().all(|p| p[3] == OBJECT_INTENSITY));
    assert_eq!(sweep.seen, vec![7]);
    // At 5 m the face (2.75 m from the sensor, z up to +1.3) takes every ring, in order.
    lidar.sweep(Pose::default(), &[truck_across(1, 5.0, 0.0)], 0.0, &mut sweep);
    let col = column(&lidar, &sweep, 0);
    assert_eq!(col.len(), 16);
    assert!(col.windows(2).all(|w| w[1][2] > w[0][2]));
}

#[test]
fn nothing_behind_a_box() {
    let lidar = Lidar::new(LidarConfig::default());
    let mut sweep = Sweep::default();
    let near = truck_across(1, 10.0, 0.0);
    let far = truck_across(2, 20.0, 0.0);
    lidar.sweep(Pose::default(), &[far, near], 0.0, &mut sweep);
    assert_eq!(sweep.seen, vec![1]);
    // Every point within the near truck's bearing interval stops at its face or before.
    for p in sweep.points.iter().filter(|p| (bearing(p) + 20.0) % 360.0 < 40.0) {
        assert!(p[0] < 7.76, "point past the near truck: {p:?}");
    }
}

#[test]
fn seen_lists_exactly_the_hit_bodies() {
    let lidar = Lidar::new(LidarConfig::default());
    let mut sweep = Sweep::default();
    let bodies = [
        body(30, 0.0, 15.0, 0.0, 0.6, 0.6, 1.8),  // person to the left
        body(10, 20.0, -5.0, 0.3, 4.5, 2.4, 3.0), // tractor ahead-right
        body(20, 60.0, 0.0, 0.0, 4.5, 1.8, 1.5),  // car out of range
        body(40, 30.0, 0.0, 0.0, 0.6, 0.6, 1.8),  // person far ahead, in range
    ];
    lidar.sweep(Pose::default(), &bodies, 0.0, &mut sweep);
    assert_eq!(sweep.seen, vec![10, 30, 40]);
    assert!(sweep.points.iter().filter(|p| p[3] == OBJECT_INTENSITY).count() > 10);
}

#[test]
fn body_beyond_max_range_gives_no_return() {
    let lidar = Lidar::new(LidarConfig::default());
    let mut sweep = Sweep::default();
    lidar.sweep(Pose::default(), &[truck_across(3, 45.0, 0.0)], 0.0, &mut sweep);
    assert!(sweep.seen.is_empty());
    assert_eq!(sweep.points.len(), 720 * 6);
    // Just inside range, it is seen.
    lidar.sweep(Pose::default(), &[truck_across(3, 38.0, 0.0)], 0.0, &mut sweep);
    assert_eq!(sweep.seen, vec![3]);
}

#[test]
fn box_behind_the_vehicle_wraps_the_bearing() {
    let cfg = LidarConfig::default();
    let lidar = Lidar::new(cfg.clone());
    let mut sweep = Sweep::default();
    let vehicle = Pose { x: 0.0, y: 0.0, yaw: 0.5 };
    // 10 m behind the sensor along the heading, across the path.
    let behind = vehicle.to_map(Vec2::new(cfg.mount_forward_m - 10.0, 0.0));
    let truck = body(5, behind.x, behind.y, vehicle.yaw + FRAC_PI_2, 8.0, 2.5, 3.5);
    lidar.sweep(vehicle, &[truck], 0.0, &mut sweep);
    assert_eq!(sweep.seen, vec![5]);
    let col = column(&lidar, &sweep, 360);
    let objects: Vec<_> = col.iter().filter(|p| p[3] == OBJECT_INTENSITY).collect();
    // The face is 8.75 m from the sensor: rings -13..=+7 hit it; the -15 ring meets the
    // ground first (8.21 m), and its ground point stays first in the column.
    assert_eq!(objects.len(), 11);
    assert_eq!(col[0][3], GROUND_INTENSITY);
    for p in &objects {
        assert!((p[0] as f64 + 8.75).abs() < 0.05, "x = {}", p[0]);
    }
    // Both sides of the ±180° seam see the truck, and the point order stays azimuth-major.
    let bearings: Vec<f64> = sweep.points.iter().filter(|p| p[3] == OBJECT_INTENSITY).map(bearing).collect();
    assert!(bearings.iter().any(|b| *b > 181.0) && bearings.iter().any(|b| *b < 179.0));
    assert!(bearings.windows(2).all(|w| w[1] >= w[0] - 1e-6));
}

#[test]
fn top_face_of_a_low_box_under_the_sensor() {
    let cfg =
        LidarConfig { rings: 4, min_elevation_deg: -60.0, max_elevation_deg: -30.0, ..Default::default() };
    let lidar = Lidar::new(cfg.clone());
    let mut sweep = Sweep::default();
    // A 1 m high box of 10 x 10 m around the sensor: downward rings hit its top at z = -1.2.
    let slab = body(9, 1.0, 0.0, 0.0, 10.0, 10.0, 1.0);
    lidar.sweep(Pose::default(), &[slab], 0.0, &mut sweep);
    assert_eq!(sweep.seen, vec![9]);
    assert_eq!(sweep.points.len(), 720 * 4);
    assert!(sweep.points.iter().all(|p| (p[2] + 1.2).abs() < 1e-5 && p[3] == OBJECT_INTENSITY));
}

/// Every ray against every body, no culling: the reference for the column spans.
fn brute_sweep(lidar: &Lidar, vehicle: Pose, bodies: &[Body]) -> (Vec<[f32; 4]>, Vec<u32>) {
    let cfg = lidar.config();
    let at = vehicle.to_map(Vec2::new(cfg.mount_forward_m, 0.0));
    let sensor = Pose { x: at.x, y: at.y, yaw: vehicle.yaw };
    let targets: Vec<Target> = bodies.iter().map(|b| Target::new(sensor, b)).collect();
    let (mut out, mut seen) = (Vec::new(), Vec::new());
    for &(ca, sa) in &lidar.columns {
        for ring in &lidar.rings {
            let mut best = (ring.ground_t_m, None);
            for t in &targets {
                let (s_in, s_out) = horizontal_slab(t, ca, sa);
                if let Some(r) = enter_box(s_in, s_out, cfg.mount_height_m, t.height_m, ring) {
                    if r < best.0 {
                        best = (r, Some(t.id));
                    }
                }
            }
            if best.0 <= cfg.max_range_m {
                let intensity = best.1.map_or(GROUND_INTENSITY, |_| OBJECT_INTENSITY);
                out.push(point(ring, ca, sa, best.0, intensity));
                seen.extend(best.1);
            }
        }
    }
    seen.sort_unstable();
    seen.dedup();
    (out, seen)
}

#[test]
fn culled_sweep_equals_brute_force_on_random_scenes() {
    let lidar = Lidar::new(LidarConfig::default());
    let mut sweep = Sweep::default();
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    let mut rnd = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed >> 11) as f64 / (1u64 << 53) as f64
    };
    for _ in 0..40 {
        let vehicle = Pose { x: rnd() * 20.0, y: rnd() * 20.0, yaw: (rnd() - 0.5) * 7.0 };
        let n = (rnd() * 40.0) as usize;
        let bodies: Vec<Body> = (0..n)
            .map(|i| {
                let (l, w, h) = [(8.0, 2.5, 3.5), (0.6, 0.6, 1.8), (4.5, 2.4, 3.0), (4.5, 1.8, 1.5)][i % 4];
                let x = vehicle.x + (rnd() - 0.5) * 90.0;
                let y = vehicle.y + (rnd() - 0.5) * 90.0;
                body(i as u32, x, y, rnd() * 7.0, l, w, h)
            })
            .collect();
        let capacity = sweep.points.capacity();
        lidar.sweep(vehicle, &bodies, 0.0, &mut sweep);
        let (points, seen) = brute_sweep(&lidar, vehicle, &bodies);
        assert_eq!((&sweep.points, &sweep.seen), (&points, &seen));
        // The output buffer is reused: it only grows when a sweep has more points.
        assert!(sweep.points.len() > capacity || sweep.points.capacity() == capacity);
    }
}
