//! Imperfect sensing: the scenario's `sensing` keys applied where a real sensor's errors arise,
//! on the LiDAR's returns (range noise along each ray, dropped returns, spurious returns) and on
//! the odometry's pose (position and heading noise), so the scan, the shield, the knowledge
//! store and `returns_on_route` all see them, while the world's truth (contact, objects, the
//! vehicle's true pose, the digest's state) stays exact.
//!
//! **Invariant:** with every key 0 ([`Sensing::is_off`]) nothing here runs and no random number
//! is drawn: a run is bit-identical to one made before the keys existed. With keys set, the
//! noise comes from its own generator, seeded from the world's seed (`seed ^ SENSING_STREAM`),
//! drawn in a fixed order (per sweep: the points in their order, then the spurious ones; per
//! step: x, y, yaw), so a seed gives the same run on any machine and any number of workers.

use acres_farm::geom::Pose;
pub use acres_scenario::Sensing;

use crate::digest::Rng;
use crate::lidar::{LidarConfig, Sweep};

/// Mixed into the world's seed for the sensing generator (a stream of its own).
pub const SENSING_STREAM: u64 = 0x5e75_1a9e_0dd5_0001;

/// Intensity of a spurious return (between ground 0.2 and object 0.8).
pub const SPURIOUS_INTENSITY: f32 = 0.5;

/// The lowest spurious return above the ground, m.
pub const SPURIOUS_MIN_HEIGHT_M: f64 = 0.3;

/// The nearest spurious return, horizontal range from the sensor, m.
pub const SPURIOUS_MIN_RANGE_M: f64 = 2.0;

/// The sensing noise of one world.
#[derive(Debug, Clone)]
pub struct SensingNoise {
    cfg: Sensing,
    rng: Rng,
}

impl SensingNoise {
    /// The noise of `cfg` for a world seeded `seed`.
    pub fn new(cfg: Sensing, seed: u64) -> Self {
        SensingNoise { cfg, rng: Rng::new(seed ^ SENSING_STREAM) }
    }

    /// The keys.
    pub fn config(&self) -> &Sensing {
        &self.cfg
    }

    /// A uniform value in [0, 1).
    fn uniform(&mut self) -> f64 {
        (self.rng.symmetric() + 1.0) / 2.0
    }

    /// A standard normal value (Box–Muller, one of the pair).
    fn normal(&mut self) -> f64 {
        let u1 = 1.0 - self.uniform(); // (0, 1]
        let u2 = self.uniform();
        (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
    }

    /// The odometry's pose of the true pose `truth`: one draw per step (x, y, yaw). Call only
    /// when [`Sensing::pose_on`].
    pub fn pose(&mut self, truth: Pose) -> Pose {
        let (sp, sy) = (self.cfg.pose_noise_m, self.cfg.yaw_noise_rad);
        let dx = sp * self.normal();
        let dy = sp * self.normal();
        let dyaw = sy * self.normal();
        Pose { x: truth.x + dx, y: truth.y + dy, yaw: acres_farm::geom::wrap_angle(truth.yaw + dyaw) }
    }

    /// Perturbs a sweep in place (its points in the sensor frame): each return is dropped with
    /// the probability `dropout`, the others moved along their ray by a normal error of
    /// `range_noise_m`; then `spurious_per_sweep` returns on average are added (the whole part
    /// always, the fraction with that probability). `seen` (which objects returned points) is
    /// the world's truth and is left as the raycast made it. Call only when
    /// [`Sensing::lidar_on`].
    pub fn sweep(&mut self, lidar: &LidarConfig, sweep: &mut Sweep) {
        let (dropout, sigma) = (self.cfg.dropout, self.cfg.range_noise_m);
        if dropout > 0.0 || sigma > 0.0 {
            let mut kept = 0;
            for i in 0..sweep.points.len() {
                if dropout > 0.0 && self.uniform() < dropout {
                    continue;
                }
                let mut p = sweep.points[i];
                if sigma > 0.0 {
                    let r = f64::from(p[0]).hypot(f64::from(p[1])).hypot(f64::from(p[2]));
                    if r > 1e-6 {
                        // Along the ray, never through the sensor.
                        let k = ((r + sigma * self.normal()).max(0.05) / r) as f32;
                        p = [p[0] * k, p[1] * k, p[2] * k, p[3]];
                    }
                }
                sweep.points[kept] = p;
                kept += 1;
            }
            sweep.points.truncate(kept);
        }
        let rate = self.cfg.spurious_per_sweep;
        if rate > 0.0 {
            let whole = rate.floor();
            let n = whole as usize + usize::from(self.uniform() < rate - whole);
            let reach = lidar.max_range_m.max(SPURIOUS_MIN_RANGE_M);
            for _ in 0..n {
                let bearing = std::f64::consts::TAU * self.uniform();
                let range = SPURIOUS_MIN_RANGE_M + (reach - SPURIOUS_MIN_RANGE_M) * self.uniform();
                let height = SPURIOUS_MIN_HEIGHT_M
                    + (lidar.mount_height_m - SPURIOUS_MIN_HEIGHT_M).max(0.0) * self.uniform();
                let z = height - lidar.mount_height_m;
                sweep.points.push([
                    (range * bearing.cos()) as f32,
                    (range * bearing.sin()) as f32,
                    z as f32,
                    SPURIOUS_INTENSITY,
                ]);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sweep() -> Sweep {
        let points = (0..1000).map(|i| [10.0 + (i % 7) as f32, (i % 5) as f32, -1.0, 0.2]).collect();
        Sweep { stamp_s: 0.1, points, seen: vec![3] }
    }

    #[test]
    fn same_seed_same_sweep_and_each_key_acts() {
        let lidar = LidarConfig::default();
        let cfg =
            Sensing { range_noise_m: 0.05, dropout: 0.1, spurious_per_sweep: 2.5, ..Sensing::default() };
        let (mut a, mut b) = (sweep(), sweep());
        SensingNoise::new(cfg.clone(), 7).sweep(&lidar, &mut a);
        SensingNoise::new(cfg.clone(), 7).sweep(&lidar, &mut b);
        assert_eq!(a, b, "a seed gives the same sweep");
        let mut c = sweep();
        SensingNoise::new(cfg, 8).sweep(&lidar, &mut c);
        assert_ne!(a, c, "another seed another sweep");
        assert_eq!(a.seen, vec![3], "seen is truth");
        // About 10 % dropped, 2 or 3 spurious returns (intensity 0.5) added.
        let spurious = a.points.iter().filter(|p| p[3] == SPURIOUS_INTENSITY).count();
        assert!((2..=3).contains(&spurious), "{spurious} spurious");
        let kept = a.points.len() - spurious;
        assert!((850..=950).contains(&kept), "{kept} of 1000 kept");
        for p in a.points.iter().filter(|p| p[3] == SPURIOUS_INTENSITY) {
            let r = f64::from(p[0]).hypot(f64::from(p[1]));
            assert!((SPURIOUS_MIN_RANGE_M - 1e-3..=40.0 + 1e-3).contains(&r), "range {r}");
            assert!(p[2] >= (SPURIOUS_MIN_HEIGHT_M - 2.2) as f32 - 1e-5 && p[2] <= 1e-5, "z {}", p[2]);
        }
    }

    #[test]
    fn range_noise_moves_points_along_their_ray_with_the_stated_spread() {
        let lidar = LidarConfig::default();
        let cfg = Sensing { range_noise_m: 0.1, ..Sensing::default() };
        let mut s = sweep();
        let before = s.points.clone();
        SensingNoise::new(cfg, 1).sweep(&lidar, &mut s);
        assert_eq!(s.points.len(), before.len());
        let mut sum2 = 0.0;
        for (p, q) in before.iter().zip(&s.points) {
            let r0 = f64::from(p[0]).hypot(f64::from(p[1])).hypot(f64::from(p[2]));
            let r1 = f64::from(q[0]).hypot(f64::from(q[1])).hypot(f64::from(q[2]));
            // Same direction.
            let cos = (f64::from(p[0]) * f64::from(q[0])
                + f64::from(p[1]) * f64::from(q[1])
                + f64::from(p[2]) * f64::from(q[2]))
                / (r0 * r1);
            assert!(cos > 1.0 - 1e-6);
            sum2 += (r1 - r0).powi(2);
        }
        let sd = (sum2 / before.len() as f64).sqrt();
        assert!((0.09..0.11).contains(&sd), "spread {sd}");
    }

    #[test]
    fn pose_noise_has_the_stated_spread() {
        let cfg = Sensing { pose_noise_m: 0.2, yaw_noise_rad: 0.01, ..Sensing::default() };
        let mut n = SensingNoise::new(cfg, 3);
        let truth = Pose { x: 5.0, y: -2.0, yaw: 0.5 };
        let k = 4000;
        let (mut sx, mut syaw) = (0.0, 0.0);
        for _ in 0..k {
            let p = n.pose(truth);
            sx += (p.x - truth.x).powi(2);
            syaw += (p.yaw - truth.yaw).powi(2);
        }
        let (sdx, sdyaw) = ((sx / k as f64).sqrt(), (syaw / k as f64).sqrt());
        assert!((0.19..0.21).contains(&sdx), "x spread {sdx}");
        assert!((0.0095..0.0105).contains(&sdyaw), "yaw spread {sdyaw}");
    }
}
