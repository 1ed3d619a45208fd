//! How late the vehicle's observations reach the harness: each step's delay (its receive time on
//! the harness's wall clock minus the observation's stamp on the vehicle's clock) above the
//! least delay seen on this link (the base delay, as LEDBAT and RTP's jitter measure a one-way
//! delay without synchronised clocks).
//!
//! The stamp is the vehicle's (its system clock, or the simulator's `/clock` under
//! `use_sim_time`); the two clocks need not agree on the time, only on its rate: the figure is
//! given while the vehicle's clock runs at real time (a real vehicle, a simulator at rate 1).
//! When its stamps run faster or slower than the wall (a simulator at 5 × real time), the figure
//! is `None`: the harness does not know the rate, and a delay measured across two rates grows or
//! shrinks with the run's length, not with the link.
//!
//! The base delay includes the steady part of the path (the DDS hop, the bridge's step, the
//! socket's transit when nothing queues); the lateness is what queues on top of it: steps
//! waiting behind sweeps in the socket, a stall, a slow reader.

/// The wall seconds of steps after the first one before the rates are compared.
const RATE_BASELINE_S: f64 = 5.0;
/// How far the vehicle clock's rate may stray from the wall's before the figure is withheld.
const RATE_TOLERANCE: f64 = 0.2;

/// The lateness of the steps of one link.
#[derive(Debug, Default, Clone)]
pub struct Lateness {
    /// The first step's (stamp, receive time), s.
    first: Option<(f64, f64)>,
    /// The least receive time minus stamp seen, s.
    base_s: Option<f64>,
    /// The newest step's lateness, s.
    newest_s: Option<f64>,
    /// The largest lateness since the last [`Lateness::take`], s.
    max_s: Option<f64>,
    /// The vehicle's clock does not run at real time.
    other_rate: bool,
}

/// The figures of a period.
#[derive(Debug, Default, Clone, Copy, PartialEq)]
pub struct LatenessFigures {
    /// The newest step's lateness, s (`None`: no step yet, or a vehicle clock not at real time).
    pub newest_s: Option<f64>,
    /// The largest lateness of the steps since the last figures, s.
    pub max_s: Option<f64>,
}

impl Lateness {
    /// A step whose observation is stamped `stamp_s` (vehicle clock) came at `at_wall_s` (wall
    /// clock, UNIX s); its lateness, s, when known.
    pub fn on_step(&mut self, stamp_s: f64, at_wall_s: f64) -> Option<f64> {
        if !stamp_s.is_finite() || !at_wall_s.is_finite() {
            return None;
        }
        let delay_s = at_wall_s - stamp_s;
        let &mut (stamp0, wall0) = self.first.get_or_insert((stamp_s, at_wall_s));
        let span_s = at_wall_s - wall0;
        if span_s >= RATE_BASELINE_S {
            let rate = (stamp_s - stamp0) / span_s;
            self.other_rate = (rate - 1.0).abs() > RATE_TOLERANCE;
        }
        let base_s = self.base_s.map_or(delay_s, |b| b.min(delay_s));
        self.base_s = Some(base_s);
        if self.other_rate {
            self.newest_s = None;
            return None;
        }
        let late_s = delay_s - base_s;
        self.newest_s = Some(late_s);
        self.max_s = Some(self.max_s.map_or(late_s, |m| m.max(late_s)));
        Some(late_s)
    }

    /// The figures since the last call (the largest is reset).
    pub fn take(&mut self) -> LatenessFigures {
        let max_s = if self.other_rate { None } else { self.max_s.take() };
        LatenessFigures { newest_s: self.newest_s, max_s }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_queued_step_is_late_by_its_queueing_above_the_base_delay() {
        let mut l = Lateness::default();
        // A vehicle clock 1000 s behind the wall; 5 ms of steady path; 20 Hz.
        for i in 0..100 {
            let stamp = f64::from(i) * 0.05;
            let extra = if i == 60 { 0.4 } else { 0.0 };
            let got = l.on_step(stamp, 1000.0 + stamp + 0.005 + extra).unwrap();
            assert!((got - extra).abs() < 1e-9, "step {i}: {got}");
        }
        let f = l.take();
        assert!((f.max_s.unwrap() - 0.4).abs() < 1e-9, "{f:?}");
        assert!(f.newest_s.unwrap().abs() < 1e-9);
        // The largest is of the period.
        l.on_step(5.0, 1005.005);
        assert!(l.take().max_s.unwrap().abs() < 1e-9);
    }

    #[test]
    fn a_faster_vehicle_clock_withholds_the_figure() {
        let mut l = Lateness::default();
        let mut last = Some(0.0);
        for i in 0..200 {
            let wall = f64::from(i) * 0.05;
            last = l.on_step(wall * 5.0, 1000.0 + wall);
        }
        assert_eq!(last, None);
        assert_eq!(l.take(), LatenessFigures { newest_s: None, max_s: None });
    }

    #[test]
    fn no_step_no_figure_and_non_finite_stamps_are_ignored() {
        let mut l = Lateness::default();
        assert_eq!(l.take(), LatenessFigures::default());
        assert_eq!(l.on_step(f64::NAN, 1.0), None);
        assert_eq!(l.take(), LatenessFigures::default());
    }
}
