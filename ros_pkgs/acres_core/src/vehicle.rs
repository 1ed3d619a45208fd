//! The simulated vehicle: kinematic bicycle steering with steering and acceleration limits, the
//! physical side of the ground conditions (slip, rolling resistance), and the fuel energy model.
//!
//! Energy: the wheels need `P = (c_rr·m·g + m·a⁺)·v_wheel + ½·ρ·CdA·v³`; fuel power is
//! `P / η + P_idle`; fuel energy is its integral (MJ). Slip makes the wheels turn faster than the
//! vehicle moves over the ground, so wet ground costs more energy per metre.

use acres_farm::geom::{wrap_angle, Obb, Pose, Vec2};
use acres_farm::Condition;

/// A drive command, as `geometry_msgs/Twist` carries it: forward speed and yaw rate.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Command {
    /// Target forward speed, m/s (no reverse: negative is taken as 0).
    pub speed_mps: f64,
    /// Target yaw rate, rad/s (counter-clockwise positive).
    pub yaw_rate_rps: f64,
}

impl Command {
    /// Stand still.
    pub const STOP: Command = Command { speed_mps: 0.0, yaw_rate_rps: 0.0 };
}

/// Fixed parameters of the vehicle.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct VehicleParams {
    /// Wheelbase, m.
    pub wheelbase_m: f64,
    /// Footprint length, m (the pose is its centre).
    pub length_m: f64,
    /// Footprint width, m.
    pub width_m: f64,
    /// Height, m.
    pub height_m: f64,
    /// Steering angle limit, rad.
    pub max_steer_rad: f64,
    /// Steering rate limit, rad/s.
    pub max_steer_rate_rps: f64,
    /// Acceleration limit, m/s².
    pub max_accel_mps2: f64,
    /// Braking limit, m/s².
    pub max_brake_mps2: f64,
    /// Top speed, m/s.
    pub max_speed_mps: f64,
    /// Mass, kg.
    pub mass_kg: f64,
    /// Drag area Cd·A, m².
    pub drag_area_m2: f64,
    /// Engine efficiency (fuel to wheel).
    pub efficiency: f64,
    /// Fuel power at idle, W.
    pub idle_power_w: f64,
}

impl Default for VehicleParams {
    fn default() -> Self {
        Self {
            wheelbase_m: 2.9,
            length_m: 5.0,
            width_m: 2.4,
            height_m: 2.8,
            max_steer_rad: 0.6,
            max_steer_rate_rps: 0.8,
            max_accel_mps2: 1.0,
            max_brake_mps2: 3.0,
            max_speed_mps: 8.0,
            mass_kg: 6000.0,
            drag_area_m2: 3.0,
            efficiency: 0.3,
            idle_power_w: 8000.0,
        }
    }
}

/// The ground under the vehicle.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ground {
    /// A lane or the yard.
    Lane,
    /// Inside a field.
    Field,
}

/// The physical side of a condition on one ground.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GroundPhysics {
    /// Rolling resistance coefficient.
    pub c_rr: f64,
    /// Fraction of wheel speed lost to slip.
    pub slip: f64,
    /// Relative random spread of the slip per step (seeded).
    pub slip_jitter: f64,
}

/// The physics of `condition` on `ground`.
pub fn ground_physics(condition: Condition, ground: Ground) -> GroundPhysics {
    match (condition, ground) {
        (Condition::Dry, Ground::Lane) => GroundPhysics { c_rr: 0.03, slip: 0.01, slip_jitter: 0.0 },
        (Condition::Dry, Ground::Field) => GroundPhysics { c_rr: 0.08, slip: 0.03, slip_jitter: 0.2 },
        (Condition::Wet, Ground::Lane) => GroundPhysics { c_rr: 0.04, slip: 0.03, slip_jitter: 0.2 },
        (Condition::Wet, Ground::Field) => GroundPhysics { c_rr: 0.13, slip: 0.09, slip_jitter: 0.3 },
    }
}

/// The moving state of the vehicle.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct VehicleState {
    /// Centre and heading.
    pub pose: Pose,
    /// Wheel speed, m/s.
    pub wheel_speed_mps: f64,
    /// Speed over ground, m/s.
    pub speed_mps: f64,
    /// Yaw rate, rad/s.
    pub yaw_rate_rps: f64,
    /// Steering angle, rad.
    pub steer_rad: f64,
    /// Distance driven over ground, m.
    pub odom_m: f64,
}

impl VehicleState {
    /// Advances one step of `dt_s` under `cmd`; returns the fuel energy used, J.
    /// `slip_noise` in [-1, 1] scales the slip jitter.
    pub fn step(
        &mut self,
        p: &VehicleParams,
        phys: GroundPhysics,
        cmd: Command,
        dt_s: f64,
        slip_noise: f64,
    ) -> f64 {
        let target = cmd.speed_mps.clamp(0.0, p.max_speed_mps);
        let accel = ((target - self.wheel_speed_mps) / dt_s).clamp(-p.max_brake_mps2, p.max_accel_mps2);
        let v0 = self.wheel_speed_mps;
        let v1 = (v0 + accel * dt_s).max(0.0);
        // Steering from the commanded yaw rate at the commanded speed (bicycle model).
        let v_ref = target.max(v1).max(0.5);
        let want = if cmd.speed_mps > 0.0 || v1 > 0.0 {
            (cmd.yaw_rate_rps * p.wheelbase_m / v_ref).atan().clamp(-p.max_steer_rad, p.max_steer_rad)
        } else {
            self.steer_rad
        };
        let max_d = p.max_steer_rate_rps * dt_s;
        self.steer_rad += (want - self.steer_rad).clamp(-max_d, max_d);
        let slip = (phys.slip * (1.0 + phys.slip_jitter * slip_noise)).clamp(0.0, 0.5);
        let v_wheel = 0.5 * (v0 + v1);
        let v_ground = v_wheel * (1.0 - slip);
        let yaw_rate = v_ground * self.steer_rad.tan() / p.wheelbase_m;
        let mid_yaw = self.pose.yaw + 0.5 * yaw_rate * dt_s;
        self.pose.x += v_ground * mid_yaw.cos() * dt_s;
        self.pose.y += v_ground * mid_yaw.sin() * dt_s;
        self.pose.yaw = wrap_angle(self.pose.yaw + yaw_rate * dt_s);
        self.wheel_speed_mps = v1;
        self.speed_mps = v1 * (1.0 - slip);
        self.yaw_rate_rps = yaw_rate;
        self.odom_m += v_ground * dt_s;
        const G: f64 = 9.81;
        const RHO: f64 = 1.2;
        let traction = phys.c_rr * p.mass_kg * G + p.mass_kg * accel.max(0.0);
        // Traction works at the wheels (slip included); air resists the motion over ground.
        let wheel_power = traction * v_wheel + 0.5 * RHO * p.drag_area_m2 * v_ground.powi(3);
        (wheel_power / p.efficiency + p.idle_power_w) * dt_s
    }

    /// The footprint at the current pose.
    pub fn footprint(&self, p: &VehicleParams) -> Obb {
        Obb {
            center: Vec2::new(self.pose.x, self.pose.y),
            yaw: self.pose.yaw,
            half_length_m: p.length_m / 2.0,
            half_width_m: p.width_m / 2.0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accelerates_within_limits_and_turns_with_the_bicycle_model() {
        let p = VehicleParams::default();
        let phys = ground_physics(Condition::Dry, Ground::Lane);
        let mut s = VehicleState::default();
        let mut e = 0.0;
        for _ in 0..20 {
            e += s.step(&p, phys, Command { speed_mps: 5.0, yaw_rate_rps: 0.0 }, 0.05, 0.0);
        }
        assert!((s.wheel_speed_mps - 1.0).abs() < 1e-9, "1 s at 1 m/s² gives 1 m/s");
        assert!(e > 0.0);
        for _ in 0..200 {
            s.step(&p, phys, Command { speed_mps: 2.0, yaw_rate_rps: 0.3 }, 0.05, 0.0);
        }
        assert!(s.steer_rad > 0.0 && s.steer_rad <= p.max_steer_rad);
        assert!((s.yaw_rate_rps - 0.3 * 0.99).abs() < 0.02, "yaw rate {}", s.yaw_rate_rps);
    }

    #[test]
    fn wet_fields_cost_more_energy_per_metre() {
        let p = VehicleParams::default();
        let per_metre = |c| {
            let mut s = VehicleState::default();
            let mut e = 0.0;
            for _ in 0..2000 {
                e += s.step(
                    &p,
                    ground_physics(c, Ground::Field),
                    Command { speed_mps: 2.0, yaw_rate_rps: 0.0 },
                    0.05,
                    0.0,
                );
            }
            e / s.odom_m
        };
        assert!(per_metre(Condition::Wet) > per_metre(Condition::Dry) * 1.3);
    }
}
