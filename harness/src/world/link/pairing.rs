//! Sweeps paired with steps by their stamps, the way `message_filters`' approximate-time
//! policy pairs two topics: the bridge sends each sweep in its own line as it comes, stamped
//! with its acquisition time, and nothing orders it with the observation of the same instant
//! (RustDDS tends to deliver the cloud first, Fast DDS the observation).
//!
//! The rule: a sweep is paired with the step whose observation stamp is nearest its own, within
//! one control step (the tolerance; a tie goes to the earlier step). It is decided as soon as a
//! step at or after its stamp is known (queued or applied), so a nearer step cannot come after
//! the decision. Paired with a step still queued, it rides that step; paired with a step already
//! applied (it came late), its scan is taken at the next step, placed from the pose of its own
//! step. A sweep with no step within the tolerance, or replaced by a newer one paired with the
//! same step, is dropped and counted ([`Pairing::unpaired`]). At most [`WAITING_MAX`] sweeps
//! wait for their step (the oldest goes first) and [`HISTORY`] applied steps are kept.

use std::collections::VecDeque;

use acres_farm::geom::Pose;
use acres_link_protocol as link;
use acres_vehicle::scan::Scan;

use super::convert;

/// Sweeps that may wait for their step.
pub const WAITING_MAX: usize = 4;

/// Applied steps a late sweep may pair with.
pub const HISTORY: usize = 8;

/// Float slack on the tolerance, s.
const SLACK_S: f64 = 1e-6;

/// A sweep as the reader thread made it.
#[derive(Debug)]
pub struct SweepIn {
    /// Its stamp on the vehicle's clock, s.
    pub t_s: f64,
    /// Its scan (the vehicle's scan function).
    pub scan: Scan,
    /// Its points (sensor frame), for the recording.
    pub points: Vec<[f32; 4]>,
}

/// A step applied: what a late sweep needs of it.
#[derive(Debug, Clone, Copy)]
struct Applied {
    /// The observation's stamp on the vehicle's clock, s.
    raw_t_s: f64,
    /// Mission time, s.
    t_s: f64,
    /// The vehicle's pose.
    pose: Pose,
}

/// Where a sweep goes.
enum Target {
    Queued(usize),
    Applied(usize),
}

/// Sweeps waiting for their step, the applied steps, a late sweep's scan, the drops.
#[derive(Debug)]
pub struct Pairing {
    tolerance_s: f64,
    waiting: VecDeque<SweepIn>,
    applied: VecDeque<Applied>,
    late: Option<(SweepIn, f64, Pose)>,
    unpaired: u64,
}

impl Pairing {
    /// Pairs within `tolerance_s` (one control step).
    pub fn new(tolerance_s: f64) -> Pairing {
        Pairing { tolerance_s, waiting: VecDeque::new(), applied: VecDeque::new(), late: None, unpaired: 0 }
    }

    /// A sweep came.
    pub fn arrived(&mut self, sweep: SweepIn) {
        self.waiting.push_back(sweep);
        while self.waiting.len() > WAITING_MAX {
            self.waiting.pop_front();
            self.unpaired += 1;
        }
    }

    /// A step was applied: its observation's stamp (vehicle clock), mission time and pose.
    pub fn applied(&mut self, raw_t_s: f64, t_s: f64, pose: Pose) {
        self.applied.push_back(Applied { raw_t_s, t_s, pose });
        while self.applied.len() > HISTORY {
            self.applied.pop_front();
        }
    }

    /// Pairs every waiting sweep that can be decided with a step of `queued` (its slot) or an
    /// applied one (the late sweep).
    pub fn pair(&mut self, queued: &mut VecDeque<(link::Step, Option<SweepIn>)>) {
        let stamp = |s: &link::Step| convert::secs(&s.observation.header.stamp);
        let newest = queued.back().map(|(s, _)| stamp(s)).or(self.applied.back().map(|a| a.raw_t_s));
        let Some(newest) = newest else { return };
        while self.waiting.front().is_some_and(|w| w.t_s <= newest + SLACK_S) {
            let Some(sweep) = self.waiting.pop_front() else { break };
            let mut best: Option<(f64, Target)> = None;
            let mut consider = |d: f64, t: Target| {
                if d <= self.tolerance_s + SLACK_S && best.as_ref().is_none_or(|(b, _)| d < *b) {
                    best = Some((d, t));
                }
            };
            for (i, a) in self.applied.iter().enumerate() {
                consider((a.raw_t_s - sweep.t_s).abs(), Target::Applied(i));
            }
            for (i, (s, _)) in queued.iter().enumerate() {
                consider((stamp(s) - sweep.t_s).abs(), Target::Queued(i));
            }
            let replaced = match best.map(|(_, t)| t) {
                Some(Target::Queued(i)) => queued[i].1.replace(sweep).is_some(),
                Some(Target::Applied(i)) => {
                    let a = self.applied[i];
                    self.late.replace((sweep, a.t_s, a.pose)).is_some()
                }
                None => true,
            };
            self.unpaired += u64::from(replaced);
        }
    }

    /// The late sweep paired with an applied step, with that step's mission time and pose.
    pub fn take_late(&mut self) -> Option<(SweepIn, f64, Pose)> {
        self.late.take()
    }

    /// A sweep was replaced by a newer one before the world took it: counted.
    pub fn superseded(&mut self) {
        self.unpaired += 1;
    }

    /// Sweeps dropped here: no step within the tolerance, or replaced before they were taken.
    pub fn unpaired(&self) -> u64 {
        self.unpaired
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use acres_msgs::acres_interfaces::Observation;

    fn step(seq: u64, t_s: f64) -> (link::Step, Option<SweepIn>) {
        let mut observation = Observation::default();
        observation.header.stamp.sec = t_s.floor() as i32;
        observation.header.stamp.nanosec = ((t_s - t_s.floor()) * 1e9).round() as u32;
        (link::Step { seq, observation, events: vec![], truth: None, dropped_sweeps: 0 }, None)
    }

    fn sweep(t_s: f64) -> SweepIn {
        let scan = acres_vehicle::scan::scan(&[], &acres_vehicle::scan::ScanConfig::default());
        SweepIn { t_s, scan, points: vec![[t_s as f32, 0.0, 0.0, 0.0]] }
    }

    fn pose(x: f64) -> Pose {
        Pose { x, y: 0.0, yaw: 0.0 }
    }

    #[test]
    fn a_sweep_pairs_with_the_nearest_step_whichever_comes_first() {
        let mut p = Pairing::new(0.05);
        let mut q = VecDeque::new();
        // The sweep first: it waits for a step at or after its stamp.
        p.applied(10.0, 0.0, pose(0.0));
        p.arrived(sweep(10.05));
        p.pair(&mut q);
        assert!(p.take_late().is_none(), "10.0 is within the tolerance, but a nearer step may come");
        q.push_back(step(2, 10.05));
        p.pair(&mut q);
        assert_eq!(q[0].1.as_ref().map(|s| s.t_s), Some(10.05), "rides its own step");
        // The step first: the sweep pairs with it while it is queued.
        q.push_back(step(3, 10.1));
        p.arrived(sweep(10.1));
        p.pair(&mut q);
        assert_eq!(q[1].1.as_ref().map(|s| s.t_s), Some(10.1));
        // Between two steps: the nearer one; a tie goes to the earlier one.
        q.push_back(step(4, 10.15));
        q.push_back(step(5, 10.2));
        p.arrived(sweep(10.19));
        p.arrived(sweep(10.125));
        p.pair(&mut q);
        assert_eq!(q[3].1.as_ref().map(|s| s.t_s), Some(10.19));
        assert_eq!(q[1].1.as_ref().map(|s| s.t_s), Some(10.125), "a newer sweep replaces, counted");
        assert_eq!(p.unpaired(), 1);
    }

    #[test]
    fn a_late_sweep_goes_with_its_applied_step_and_a_far_one_is_dropped() {
        let mut p = Pairing::new(0.05);
        let mut q = VecDeque::new();
        for (k, t) in [10.0, 10.05, 10.1].into_iter().enumerate() {
            p.applied(t, t - 10.0, pose(k as f64));
        }
        p.arrived(sweep(10.06));
        p.pair(&mut q);
        let (sw, t, at) = p.take_late().expect("paired with the applied step at 10.05");
        assert_eq!((sw.t_s, at.x), (10.06, 1.0));
        assert!((t - 0.05).abs() < 1e-9, "{t}");
        // No step within one control step: dropped and counted.
        p.arrived(sweep(9.5));
        p.pair(&mut q);
        assert!(p.take_late().is_none());
        assert_eq!(p.unpaired(), 1);
        // Waiting sweeps are bounded: the oldest goes.
        for k in 0..=WAITING_MAX {
            p.arrived(sweep(20.0 + k as f64));
        }
        assert_eq!(p.unpaired(), 2);
    }
}
