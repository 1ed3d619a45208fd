//! `pure_pursuit`: an alternative local planner — lookahead pure pursuit with a speed profile
//! from the route's curvature.
//!
//! How it differs from the built-in driver (`default`, [`crate::follower`]), which slows for
//! the turn angle at each vertex and looks ahead 4 m + 1 m per m/s:
//! - **Lookahead** grows with the speed, `ld = clamp(lookahead_s × v, min_lookahead_m,
//!   max_lookahead_m)`, and the goal point is that far along the route from the tracked progress.
//! - **Steering:** the arc through the goal point, `κ = 2 y / ld²` in the vehicle's frame,
//!   bounded by the vehicle's curvature limit; a goal point behind turns as hard as allowed.
//! - **Speed profile:** the route's curvature is sampled every `sample_m` over the braking
//!   horizon (the heading change across ±`sample_m`); each sample allows `√(a_lat / κ)`, reached
//!   by braking at `decel_mps2` from here; the route's end allows `√(2 a (remaining − 0.5))`
//!   (at least `creep_mps`, so the vehicle reaches the goal tolerance); the arc being driven
//!   allows `√(a_lat / |κ|)`; all under the ground's limit and the cap.
//!
//! It holds no state between steps: every command follows from the step alone.

use acres_farm::geom::wrap_angle;

use super::{LocalPlanner, PlanStart, PlanStep, PlannerFault};
use crate::follower::{FollowerParams, Twist};

/// Tuning of [`PurePursuit`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PurePursuitParams {
    /// Lookahead per m/s of speed, s.
    pub lookahead_s: f64,
    /// Shortest lookahead, m.
    pub min_lookahead_m: f64,
    /// Longest lookahead, m.
    pub max_lookahead_m: f64,
    /// Lateral acceleration the speed profile allows in curves, m/s².
    pub lateral_mps2: f64,
    /// Braking deceleration of the speed profile, m/s².
    pub decel_mps2: f64,
    /// The route's curvature is sampled this far apart, m.
    pub sample_m: f64,
    /// The slowest speed it commands before the goal, m/s.
    pub creep_mps: f64,
    /// The vehicle's curvature limit (wheelbase and steering), 1/m.
    pub max_curvature: f64,
}

impl PurePursuitParams {
    /// The defaults for a vehicle with the follower's geometry.
    pub fn for_vehicle(f: &FollowerParams) -> Self {
        Self {
            lookahead_s: 1.2,
            min_lookahead_m: 3.5,
            max_lookahead_m: 10.0,
            lateral_mps2: 0.6,
            decel_mps2: 0.8,
            sample_m: 2.0,
            creep_mps: 0.4,
            max_curvature: f.max_curvature,
        }
    }
}

/// The `pure_pursuit` local planner.
#[derive(Debug, Clone)]
pub struct PurePursuit {
    /// Tuning.
    pub params: PurePursuitParams,
}

impl PurePursuit {
    /// A planner with these parameters.
    pub fn new(params: PurePursuitParams) -> Self {
        Self { params }
    }

    /// The speed the profile allows at the tracked progress, m/s.
    fn profile_mps(&self, step: &PlanStep<'_>) -> f64 {
        let p = &self.params;
        let route = &step.track.path;
        let s0 = step.track.s_m;
        let mut v = step.limit_mps();
        let horizon_m = v * v / (2.0 * p.decel_mps2) + p.sample_m;
        let mut d = 0.0;
        while d <= horizon_m && s0 + d < route.length_m() {
            let s = s0 + d;
            let turn = wrap_angle(route.yaw_at(s + p.sample_m) - route.yaw_at((s - p.sample_m).max(0.0)));
            let kappa = turn.abs() / (2.0 * p.sample_m);
            if kappa > 1e-6 {
                let vc = (p.lateral_mps2 / kappa).sqrt();
                v = v.min((vc * vc + 2.0 * p.decel_mps2 * d).sqrt());
            }
            d += p.sample_m / 2.0;
        }
        let rem = (route.length_m() - s0).max(0.0);
        v.min((2.0 * p.decel_mps2 * (rem - 0.5).max(0.0)).sqrt().max(p.creep_mps))
    }
}

impl LocalPlanner for PurePursuit {
    fn start(&mut self, _start: &PlanStart<'_>) {}

    fn command(&mut self, step: &PlanStep<'_>) -> Result<Twist, PlannerFault> {
        let p = &self.params;
        let mut v = self.profile_mps(step);
        let ld = (p.lookahead_s * step.speed_mps.max(v)).clamp(p.min_lookahead_m, p.max_lookahead_m);
        let goal = step.track.path.point_at(step.track.s_m + ld);
        let local = step.pose.to_local(goal);
        let dist2 = local.x * local.x + local.y * local.y;
        let mut kappa = if dist2 > 1e-6 { 2.0 * local.y / dist2 } else { 0.0 };
        if local.x < 0.0 {
            kappa = p.max_curvature.copysign(local.y);
        }
        kappa = kappa.clamp(-p.max_curvature, p.max_curvature);
        if kappa.abs() > 1e-6 {
            v = v.min((p.lateral_mps2 / kappa.abs()).sqrt().max(p.creep_mps));
        }
        Ok(Twist { speed_mps: v, yaw_rate_rps: v.max(step.speed_mps) * kappa })
    }
}
