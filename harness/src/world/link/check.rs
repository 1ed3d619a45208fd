//! The vehicle's word checked before the harness believes it: a step whose numbers are not
//! finite where the contract wants them finite, out of any farm's range, or whose time goes back
//! or jumps ahead past [`JUMP_MAX_S`] is a fault of the vehicle. The link world then ends the
//! run (`link_lost`, the cause naming the step and the field) instead of planning on it or
//! writing a pose row for every half second of a jump.

use acres_link_protocol::Step;

use super::convert::secs;

/// The largest step in the vehicle's clock between two steps, s (they come at 20 Hz; a stall of
/// the link queues steps, it does not stretch their stamps).
pub const JUMP_MAX_S: f64 = 10.0;
/// The largest coordinate of a position, m (a farm is a few km across).
pub const POSITION_MAX_M: f64 = 1.0e6;
/// The largest speed, m/s.
pub const SPEED_MAX_MPS: f64 = 100.0;
/// The largest other quantity (distances, seconds, energies).
pub const VALUE_MAX: f64 = 1.0e9;
/// The most points of a route ahead.
pub const ROUTE_POINTS_MAX: usize = 100_000;

/// What a value may be besides a finite number within its bound.
#[derive(Clone, Copy)]
enum May {
    /// Finite only.
    Finite,
    /// NaN (not given) or finite.
    Absent,
    /// NaN, finite, or +inf (nothing ahead).
    Endless,
}

fn value(what: &str, v: f64, max: f64, may: May) -> Result<(), String> {
    let ok = match may {
        _ if v.is_finite() => v.abs() <= max,
        May::Finite => false,
        May::Absent => v.is_nan(),
        May::Endless => v.is_nan() || v == f64::INFINITY,
    };
    if ok {
        Ok(())
    } else {
        // Large values in exponent form (1e308, not 309 digits).
        Err(if v.is_finite() && v.abs() >= 1e6 {
            format!("{what} is {v:e}")
        } else {
            format!("{what} is {v}")
        })
    }
}

/// Checks step `s` after the step of time `last_t_s` (the vehicle's clock, s; `None`: the
/// first); the fault in words (the step's number and the field).
pub fn step(s: &Step, last_t_s: Option<f64>) -> Result<(), String> {
    check(s, last_t_s).map_err(|e| format!("the vehicle's step {} is not believable: {e}", s.seq))
}

fn check(s: &Step, last_t_s: Option<f64>) -> Result<(), String> {
    let o = &s.observation;
    if o.header.stamp.nanosec >= 1_000_000_000 {
        return Err(format!("its stamp's nanosec is {}", o.header.stamp.nanosec));
    }
    let t = secs(&o.header.stamp);
    if let Some(last) = last_t_s {
        if t < last - 1e-6 {
            return Err(format!("its time goes back from {last} s to {t} s"));
        }
        if t - last > JUMP_MAX_S {
            return Err(format!(
                "its time jumps ahead {} s (from {last} s to {t} s; at most {JUMP_MAX_S} s)",
                t - last
            ));
        }
    }
    value("x_m", o.x_m, POSITION_MAX_M, May::Finite)?;
    value("y_m", o.y_m, POSITION_MAX_M, May::Finite)?;
    value("yaw_rad", o.yaw_rad, 1.0e3, May::Finite)?;
    value("speed_mps", o.speed_mps, SPEED_MAX_MPS, May::Finite)?;
    value("odom_m", o.odom_m, VALUE_MAX, May::Finite)?;
    value("progress", o.progress, 1.0e3, May::Absent)?;
    value("remaining_m", o.remaining_m, VALUE_MAX, May::Absent)?;
    value("ahead_m", o.ahead_m, VALUE_MAX, May::Endless)?;
    value("hold_since_s", o.hold_since_s, VALUE_MAX, May::Absent)?;
    value("energy_estimate_mj", o.energy_estimate_mj, VALUE_MAX, May::Absent)?;
    for c in &o.coverage {
        value("a field's coverage", c.coverage, 1.0e3, May::Finite)?;
    }
    if o.route_ahead.len() > ROUTE_POINTS_MAX {
        return Err(format!("its route ahead has {} points", o.route_ahead.len()));
    }
    for p in &o.route_ahead {
        value("a point of the route ahead", p.x, POSITION_MAX_M, May::Finite)?;
        value("a point of the route ahead", p.y, POSITION_MAX_M, May::Finite)?;
    }
    for e in &s.events {
        if e.header.stamp.nanosec >= 1_000_000_000 {
            return Err(format!("an event's stamp's nanosec is {}", e.header.stamp.nanosec));
        }
        let fields = [
            ("route_m", e.route_m),
            ("remaining_m", e.remaining_m),
            ("progress", e.progress),
            ("seconds", e.seconds),
            ("stopping_m", e.stopping_m),
            ("held_s", e.held_s),
            ("hold_at.x", e.hold_at.x),
            ("hold_at.y", e.hold_at.y),
        ];
        for (k, v) in fields {
            value(&format!("an event's {k}"), v, VALUE_MAX, May::Absent)?;
        }
        value("an event's ahead_m", e.ahead_m, VALUE_MAX, May::Endless)?;
    }
    if let Some(tr) = &s.truth {
        value("the truth's energy_mj", tr.energy_mj, VALUE_MAX, May::Absent)?;
        for ob in &tr.objects {
            value("a true object's x_m", ob.x_m, POSITION_MAX_M, May::Finite)?;
            value("a true object's y_m", ob.y_m, POSITION_MAX_M, May::Finite)?;
            value("a true object's yaw_rad", ob.yaw_rad, 1.0e3, May::Finite)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use acres_msgs::acres_interfaces::Observation;
    use acres_msgs::builtin_interfaces::Time;

    fn at(t: f64, x: f64) -> Step {
        let mut o = Observation {
            x_m: x,
            progress: f64::NAN,
            remaining_m: f64::NAN,
            ahead_m: f64::INFINITY,
            ..Default::default()
        };
        o.header.stamp = Time { sec: t.floor() as i32, nanosec: ((t - t.floor()) * 1e9).round() as u32 };
        Step { seq: 7, observation: o, events: Vec::new(), truth: None, dropped_sweeps: 0 }
    }

    #[test]
    fn believable_steps_pass() {
        assert_eq!(step(&at(100.0, 3.0), None), Ok(()));
        assert_eq!(step(&at(100.05, 3.0), Some(100.0)), Ok(()));
        assert_eq!(step(&at(100.0, 3.0), Some(100.0)), Ok(()), "the same time again is no fault");
    }

    #[test]
    fn non_finite_or_absurd_numbers_and_bad_times_are_faults_naming_the_field() {
        for (x, what) in [(f64::NAN, "x_m is NaN"), (f64::INFINITY, "x_m is inf"), (1e308, "x_m is 1e308")] {
            let e = step(&at(100.0, x), None).unwrap_err();
            assert!(e.contains("step 7") && e.contains(what), "{e}");
        }
        let e = step(&at(f64::from(1u32 << 31) - 1.0, 0.0), Some(100.0)).unwrap_err();
        assert!(e.contains("jumps ahead"), "{e}");
        let e = step(&at(6.9, 0.0), Some(7.5)).unwrap_err();
        assert!(e.contains("goes back from 7.5 s to 6.9"), "{e}");
        let mut s = at(1.0, 0.0);
        s.observation.speed_mps = -f64::INFINITY;
        assert!(step(&s, None).unwrap_err().contains("speed_mps is -inf"));
    }
}
