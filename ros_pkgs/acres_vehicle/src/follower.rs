//! The built-in path follower ("the default local planner"): pure pursuit for steering and a
//! speed profile that obeys the ground's speed limit, slows for corners and stops at the end.

use acres_farm::geom::{wrap_angle, Polyline, Pose};
use acres_farm::{Map, SpeedLimits};

/// What the follower commands: forward speed and yaw rate (a `Twist`).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Twist {
    /// Forward speed, m/s.
    pub speed_mps: f64,
    /// Yaw rate, rad/s.
    pub yaw_rate_rps: f64,
}

/// Tuning of the follower.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FollowerParams {
    /// Comfortable deceleration for the speed profile, m/s².
    pub decel_mps2: f64,
    /// Speed at a sharp corner (over 60°), m/s.
    pub corner_mps: f64,
    /// Pure pursuit look-ahead at standstill, m; grows by 1 m per m/s.
    pub lookahead_m: f64,
    /// The skill reached its goal when the path's end is this near, m.
    pub goal_tolerance_m: f64,
    /// Wheelbase, m, and the steering limit, rad: bound the curvature.
    pub max_curvature: f64,
}

impl Default for FollowerParams {
    fn default() -> Self {
        Self {
            decel_mps2: 1.0,
            corner_mps: 1.5,
            lookahead_m: 4.0,
            goal_tolerance_m: 1.0,
            max_curvature: 0.6f64.tan() / 2.9,
        }
    }
}

/// Follows one path from a starting arc length.
#[derive(Debug, Clone)]
pub struct Follower {
    /// The path.
    pub path: Polyline,
    /// Progress along the path, m.
    pub s_m: f64,
    /// Tuning.
    pub params: FollowerParams,
    /// Turn angle at each vertex (0 at the ends), rad.
    turns: Vec<f64>,
}

impl Follower {
    /// A follower at arc length `s_m` of `path`.
    pub fn new(path: Polyline, s_m: f64, params: FollowerParams) -> Self {
        let mut turns = vec![0.0; path.points.len()];
        for (i, w) in path.points.windows(3).enumerate() {
            let a = w[1].sub(w[0]).yaw();
            let b = w[2].sub(w[1]).yaw();
            turns[i + 1] = wrap_angle(b - a).abs();
        }
        Self { path, s_m, params, turns }
    }

    /// Metres left to the end.
    pub fn remaining_m(&self) -> f64 {
        (self.path.length_m() - self.s_m).max(0.0)
    }

    /// Fraction of the path done.
    pub fn progress(&self) -> f64 {
        let l = self.path.length_m();
        if l <= 0.0 {
            1.0
        } else {
            (self.s_m / l).clamp(0.0, 1.0)
        }
    }

    /// Updates the progress from the pose; returns the cross-track distance, m.
    pub fn track(&mut self, pose: &Pose) -> f64 {
        let (s, d) = self.path.project_window(pose.pos(), self.s_m - 2.0, self.s_m + 12.0);
        if s > self.s_m {
            self.s_m = s;
        }
        d
    }

    /// True when the goal is reached.
    pub fn arrived(&self) -> bool {
        self.remaining_m() <= self.params.goal_tolerance_m
    }

    /// The command for this step. `limits` are the speed limits, `cap_mps` an optional cap.
    pub fn command(
        &self,
        map: &Map,
        pose: &Pose,
        speed_mps: f64,
        limits: SpeedLimits,
        cap_mps: Option<f64>,
    ) -> Twist {
        if self.arrived() {
            return Twist::default();
        }
        let p = &self.params;
        // Speed: ground limit, cap, corners ahead, the end of the path.
        let in_field = map.field_at(pose.pos()).is_some();
        let mut v = if in_field { limits.field_mps } else { limits.lane_mps };
        if let Some(c) = cap_mps {
            v = v.min(c);
        }
        let horizon = v * v / (2.0 * p.decel_mps2) + 2.0;
        let i0 = self.path.segment_at(self.s_m) + 1;
        for i in i0..self.path.points.len() {
            let d = self.path.cum_m[i] - self.s_m;
            if d > horizon {
                break;
            }
            let turn = self.turns[i];
            if turn > 0.35 {
                let vc = if turn > 1.05 { p.corner_mps } else { p.corner_mps * 1.6 };
                v = v.min((vc * vc + 2.0 * p.decel_mps2 * d.max(0.0)).sqrt());
            }
        }
        let rem = self.remaining_m();
        v = v.min((2.0 * p.decel_mps2 * (rem - 0.5).max(0.0)).sqrt().max(0.4));
        // Steering: pure pursuit towards the look-ahead point.
        let ld = p.lookahead_m + speed_mps;
        let target = self.path.point_at(self.s_m + ld);
        let local = pose.to_local(target);
        let dist2 = local.x * local.x + local.y * local.y;
        let mut kappa = if dist2 > 1e-6 { 2.0 * local.y / dist2 } else { 0.0 };
        if local.x < 0.0 {
            // The target is behind: turn as hard as allowed, towards its side.
            kappa = if local.y >= 0.0 { p.max_curvature } else { -p.max_curvature };
            v = v.min(p.corner_mps);
        }
        kappa = kappa.clamp(-p.max_curvature, p.max_curvature);
        // Sharp turns need a slower speed so the steering rate keeps up.
        if kappa.abs() > 0.08 {
            v = v.min(p.corner_mps.max(2.0 * p.corner_mps * (1.0 - kappa.abs() / p.max_curvature)));
        }
        Twist { speed_mps: v, yaw_rate_rps: v.max(speed_mps) * kappa }
    }
}
