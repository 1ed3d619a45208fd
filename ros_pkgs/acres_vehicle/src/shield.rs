//! The shield: it passes or holds each drive command. It holds (the vehicle brakes to a stop)
//! while an obstacle is within the stopping distance in the path ahead, and releases when the
//! path is clear again. It never clamps, shortens, slows or rewrites a command: a command either
//! goes through unchanged or is replaced by a stop.
//!
//! Rule `stop_distance`: hold when `ahead_m < v·latency_s + v²/(2·brake_mps2) + margin_m`, with
//! `v` the larger of the measured and the commanded speed. Release when the obstacle is further
//! than that distance plus `release_hysteresis_m` (the same `v`), so a release is never inside a
//! hold's distance.

use serde::{Deserialize, Serialize};

use crate::follower::Twist;

/// Slack of [`within_limits`] over the exact limits (a fitted policy's rounding), m/s and rad/s.
pub const LIMITS_SLACK: f64 = 0.1;

/// The shield's check of a command that no built-in planner made (a learned skill's): forward
/// speed in `[0, limit_mps]` and yaw rate within what the steering allows at that speed, each
/// with [`LIMITS_SLACK`]. A command outside is refused (the reason), never clamped.
pub fn within_limits(cmd: Twist, speed_mps: f64, limit_mps: f64, max_curvature: f64) -> Result<(), String> {
    if cmd.speed_mps < -LIMITS_SLACK {
        return Err(format!("speed {:.2} m/s backwards", cmd.speed_mps));
    }
    if cmd.speed_mps > limit_mps + LIMITS_SLACK {
        return Err(format!("speed {:.2} m/s over the limit {limit_mps:.2} m/s", cmd.speed_mps));
    }
    let max_yaw = max_curvature * cmd.speed_mps.max(speed_mps).max(0.0) + LIMITS_SLACK;
    if cmd.yaw_rate_rps.abs() > max_yaw {
        return Err(format!(
            "yaw rate {:.2} rad/s over the steering limit {max_yaw:.2} rad/s at this speed",
            cmd.yaw_rate_rps
        ));
    }
    Ok(())
}

/// The shield's thresholds.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ShieldConfig {
    /// Clearance kept in front of the sensor, m.
    pub margin_m: f64,
    /// Deceleration assumed for the stopping distance, m/s² (below the vehicle's brake limit).
    pub brake_mps2: f64,
    /// Reaction latency (one sweep), s.
    pub latency_s: f64,
    /// Extra clearance before releasing, m.
    pub release_hysteresis_m: f64,
}

impl Default for ShieldConfig {
    fn default() -> Self {
        Self { margin_m: 4.0, brake_mps2: 2.5, latency_s: 0.2, release_hysteresis_m: 1.0 }
    }
}

/// The shield's rules by name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ShieldRuleName {
    /// Hold while an obstacle is inside the stopping distance.
    StopDistance,
    /// Release with hysteresis.
    Release,
    /// A command passes unchanged or is held.
    NeverRewrites,
}

/// A rule as reported to planners.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ShieldRule {
    /// Rule name.
    pub name: ShieldRuleName,
    /// What it does, with its thresholds.
    pub text: String,
}

/// The shield's decision for one command.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Verdict {
    /// The command goes through unchanged.
    Pass,
    /// The command is replaced by a stop.
    Hold {
        /// The obstacle distance ahead, m.
        ahead_m: f64,
        /// The stopping distance that was violated, m.
        stopping_m: f64,
    },
}

/// The shield with its hold state.
#[derive(Debug, Clone, Default)]
pub struct Shield {
    /// Thresholds.
    pub config: ShieldConfig,
    holding: bool,
}

impl Shield {
    /// A shield with these thresholds.
    pub fn new(config: ShieldConfig) -> Self {
        Self { config, holding: false }
    }

    /// The stopping distance at speed `v`, m.
    pub fn stopping_distance_m(&self, v: f64) -> f64 {
        let c = &self.config;
        v * c.latency_s + v * v / (2.0 * c.brake_mps2) + c.margin_m
    }

    /// True while holding.
    pub fn holding(&self) -> bool {
        self.holding
    }

    /// Checks a command against the obstacle distance ahead.
    pub fn check(&mut self, cmd: Twist, speed_mps: f64, ahead_m: f64) -> Verdict {
        if cmd.speed_mps <= 0.0 {
            // A stop is always safe; the hold state is kept for when motion is asked again.
            return Verdict::Pass;
        }
        let v = speed_mps.max(cmd.speed_mps);
        let stopping = self.stopping_distance_m(v);
        let release = stopping + self.config.release_hysteresis_m;
        if self.holding {
            if ahead_m > release {
                self.holding = false;
                return Verdict::Pass;
            }
            return Verdict::Hold { ahead_m, stopping_m: release };
        }
        if ahead_m < stopping {
            self.holding = true;
            return Verdict::Hold { ahead_m, stopping_m: stopping };
        }
        Verdict::Pass
    }

    /// Forgets the hold state (a new skill starts or the vehicle is stopped on purpose).
    pub fn reset(&mut self) {
        self.holding = false;
    }

    /// The rules with their thresholds.
    pub fn rules(&self) -> Vec<ShieldRule> {
        let c = &self.config;
        vec![
            ShieldRule {
                name: ShieldRuleName::StopDistance,
                text: format!(
                    "hold (brake to a stop) while an obstacle is nearer ahead than v*{:.1} s + v^2/(2*{:.1} m/s^2) + {:.1} m; the band ahead is the vehicle's width plus 0.5 m each side",
                    c.latency_s, c.brake_mps2, c.margin_m
                ),
            },
            ShieldRule {
                name: ShieldRuleName::Release,
                text: format!("release when the obstacle is {:.1} m further than the stopping distance", c.release_hysteresis_m),
            },
            ShieldRule { name: ShieldRuleName::NeverRewrites, text: "a command passes unchanged or is held; it is never clamped, shortened or slowed".into() },
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn holds_within_the_stopping_distance_and_releases_with_hysteresis() {
        let mut s = Shield::default();
        let cmd = Twist { speed_mps: 5.0, yaw_rate_rps: 0.1 };
        assert_eq!(s.check(cmd, 5.0, 30.0), Verdict::Pass);
        let stop = s.stopping_distance_m(5.0);
        assert!((stop - (1.0 + 5.0 + 4.0)).abs() < 1e-12);
        assert!(matches!(s.check(cmd, 5.0, 9.0), Verdict::Hold { .. }));
        assert!(s.holding());
        // Still held just past the stopping distance (hysteresis), released beyond it.
        assert!(matches!(s.check(cmd, 0.0, 10.5), Verdict::Hold { .. }));
        assert_eq!(s.check(cmd, 0.0, 11.5), Verdict::Pass);
        assert!(!s.holding());
    }

    #[test]
    fn never_rewrites_a_command() {
        let mut s = Shield::default();
        let cmd = Twist { speed_mps: 2.3, yaw_rate_rps: -0.2 };
        for ahead in [100.0, 50.0, 20.0, 12.0] {
            assert_eq!(s.check(cmd, 2.3, ahead), Verdict::Pass, "at {ahead}");
        }
        assert_eq!(s.check(Twist::default(), 2.3, 1.0), Verdict::Pass);
    }
}
