//! Safety measured from the world's truth: per run the least clearance between the vehicle's
//! footprint and each kind of object while the vehicle moves, the time spent near a person
//! above a stated speed, the shield's holds by what held them, contacts, and refused or
//! interrupted skills. The planner never reads any of it (the vehicle profile has no truth);
//! it is the end row's `score.safety` and the leaderboard's safety columns.
//!
//! [`SafetyMeter`] is a fold: one [`SafetyMeter::step`] per control step (the true footprint,
//! speed and objects, the contact flag), one [`SafetyMeter::hold`] per `shield_hold` event (its
//! map point and the objects then), one [`SafetyMeter::skill_event`] per skill event. Everything
//! but the clearances and the near-person time could be folded from the rows alone (the
//! `event` rows and the pose rows' contact columns); those two need the objects' footprints at
//! each step, which the rows do not carry (only `episode.mcap`'s `/acres/objects` does), so
//! they are measured in the loop at the control rate (20 Hz), never from the 2 Hz pose rows.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use acres_core::objects::ObjectKind;
use acres_farm::geom::{Obb, Vec2};
use acres_vehicle::{EventName, ResultCode, SkillEvent};

/// The version of the [`Safety`] record (a score without one was written before it).
pub const SAFETY_VERSION: u32 = 1;
/// The vehicle moves above this speed, m/s: clearances count only then (a vehicle standing
/// next to a truck that parked beside it is not a near miss).
pub const MOVING_MPS: f64 = 0.1;
/// The radius around a person within which speed is limited, m (from the footprint).
pub const NEAR_PERSON_RADIUS_M: f64 = 5.0;
/// The speed above which time within [`NEAR_PERSON_RADIUS_M`] of a person counts, m/s.
pub const NEAR_PERSON_SPEED_MPS: f64 = 1.0;
/// A shield hold's obstacle point within this distance of an object's footprint is that
/// object's hold, m; else the hold had no object (a spurious return).
pub const HOLD_MATCH_M: f64 = 3.0;
/// The hold reason of a hold with no object near its point.
pub const NO_OBJECT: &str = "no_object";

/// The safety record of one run (the end row's `score.safety`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Safety {
    /// [`SAFETY_VERSION`].
    pub version: u32,
    /// The stated thresholds: moving above this speed, m/s.
    pub moving_mps: f64,
    /// The stated radius around a person, m.
    pub near_person_radius_m: f64,
    /// The stated speed near a person, m/s.
    pub near_person_speed_mps: f64,
    /// Per object kind met while moving, the least clearance between the footprints, m
    /// (0: contact). A kind never met while moving is absent.
    pub min_clearance_m: BTreeMap<String, f64>,
    /// Time within `near_person_radius_m` of a person at more than `near_person_speed_mps`, s.
    pub near_person_s: f64,
    /// Contacts: runs of control steps with the footprint touching an object.
    pub contacts: u64,
    /// Control steps with contact.
    pub contact_steps: u64,
    /// Shield holds by what held the vehicle: the kind of the object at the hold's point, or
    /// `no_object`.
    pub holds: BTreeMap<String, u64>,
    /// Skill requests the skill server refused (`skill_rejected`).
    pub refused_skills: u64,
    /// Skills that ended other than `succeeded` (blocked, stopped, failed, ...).
    pub interrupted_skills: u64,
}

/// One control step of the truth, as the meter reads it.
#[derive(Debug, Clone, Copy)]
pub struct SafetySample<'a> {
    /// The control step, s.
    pub dt_s: f64,
    /// The vehicle's true footprint.
    pub footprint: Obb,
    /// The vehicle's true speed, m/s.
    pub speed_mps: f64,
    /// The objects in the world: kind and footprint.
    pub objects: &'a [(ObjectKind, Obb)],
    /// The footprint touches an object in this step.
    pub contact: bool,
}

/// The fold of a run's safety facts.
#[derive(Debug, Clone, Default)]
pub struct SafetyMeter {
    rec: Safety,
    in_contact: bool,
    near_person_steps_s: f64,
}

impl SafetyMeter {
    /// An empty meter with the stated thresholds.
    pub fn new() -> Self {
        SafetyMeter {
            rec: Safety {
                version: SAFETY_VERSION,
                moving_mps: MOVING_MPS,
                near_person_radius_m: NEAR_PERSON_RADIUS_M,
                near_person_speed_mps: NEAR_PERSON_SPEED_MPS,
                ..Safety::default()
            },
            in_contact: false,
            near_person_steps_s: 0.0,
        }
    }

    /// One control step.
    pub fn step(&mut self, s: SafetySample<'_>) {
        if s.contact {
            self.rec.contact_steps += 1;
            if !self.in_contact {
                self.rec.contacts += 1;
            }
        }
        self.in_contact = s.contact;
        let speed = s.speed_mps.abs();
        if speed <= MOVING_MPS {
            return;
        }
        let mut near_person = false;
        for (kind, obb) in s.objects {
            let d = s.footprint.distance(obb);
            let slot = self.rec.min_clearance_m.entry(kind.as_str().to_string()).or_insert(f64::INFINITY);
            *slot = slot.min(d);
            near_person |= *kind == ObjectKind::Person && d < NEAR_PERSON_RADIUS_M;
        }
        if near_person && speed > NEAR_PERSON_SPEED_MPS {
            self.near_person_steps_s += s.dt_s;
        }
    }

    /// A `shield_hold` with its obstacle point `at`, among `objects`.
    pub fn hold(&mut self, at: Vec2, objects: &[(ObjectKind, Obb)]) {
        let reason = objects
            .iter()
            .map(|(k, obb)| (point_distance(at, obb), *k))
            .filter(|(d, _)| *d <= HOLD_MATCH_M)
            .min_by(|a, b| a.0.total_cmp(&b.0))
            .map_or(NO_OBJECT, |(_, k)| k.as_str());
        *self.rec.holds.entry(reason.to_string()).or_default() += 1;
    }

    /// A skill event: refusals and skills that ended other than `succeeded`.
    pub fn skill_event(&mut self, e: &SkillEvent) {
        match (e.name, e.code) {
            (EventName::SkillRejected, _) => self.rec.refused_skills += 1,
            (EventName::SkillEnded, Some(ResultCode::Succeeded | ResultCode::Rejected)) => {}
            (EventName::SkillEnded, _) => self.rec.interrupted_skills += 1,
            _ => {}
        }
    }

    /// The record so far (clearances rounded to the millimetre, times to the millisecond).
    pub fn report(&self) -> Safety {
        let mut r = self.rec.clone();
        for v in r.min_clearance_m.values_mut() {
            *v = (*v * 1000.0).round() / 1000.0;
        }
        r.near_person_s = (self.near_person_steps_s * 1000.0).round() / 1000.0;
        r
    }
}

/// Distance from a point to a rectangle (0 inside).
fn point_distance(p: Vec2, obb: &Obb) -> f64 {
    let l = p.sub(obb.center).rotate(-obb.yaw);
    let dx = (l.x.abs() - obb.half_length_m).max(0.0);
    let dy = (l.y.abs() - obb.half_width_m).max(0.0);
    dx.hypot(dy)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rect(x: f64, y: f64, hl: f64, hw: f64) -> Obb {
        Obb { center: Vec2::new(x, y), yaw: 0.0, half_length_m: hl, half_width_m: hw }
    }

    /// A vehicle 5 × 2.4 m drives along x at 2 m/s past a person (0.6 m square) standing at
    /// (20, 3): by hand, the least clearance is 3 − 0.3 − 1.2 = 1.5 m (side by side), and the
    /// vehicle is within 5 m of the person while its centre is within the x range where the
    /// corner distance is below 5 m.
    #[test]
    fn clearance_and_near_person_time_by_hand() {
        let person = [(ObjectKind::Person, rect(20.0, 3.0, 0.3, 0.3))];
        let mut m = SafetyMeter::new();
        let dt = 0.05;
        let mut x = 0.0;
        while x <= 40.0 + 1e-9 {
            m.step(SafetySample {
                dt_s: dt,
                footprint: rect(x, 0.0, 2.5, 1.2),
                speed_mps: 2.0,
                objects: &person,
                contact: false,
            });
            x += 2.0 * dt;
        }
        let r = m.report();
        assert_eq!(r.min_clearance_m.get("person"), Some(&1.5));
        // Lateral gap 1.5 m: within 5 m while the longitudinal gap g has hypot(g, 1.5) < 5,
        // g < sqrt(25 − 2.25) = 4.770 m, i.e. |x − 20| < 2.5 + 0.3 + 4.770 = 7.570 m: 15.140 m
        // of road at 2 m/s = 7.57 s, to within a step (0.05 s) at each end.
        assert!((r.near_person_s - 7.57).abs() <= 0.1, "near {}", r.near_person_s);
        assert_eq!(r.contacts, 0);
    }

    #[test]
    fn standing_still_counts_no_clearance_and_slow_counts_no_near_time() {
        let truck =
            [(ObjectKind::Truck, rect(6.0, 0.0, 1.25, 4.0)), (ObjectKind::Person, rect(0.0, 3.0, 0.3, 0.3))];
        let mut m = SafetyMeter::new();
        for _ in 0..10 {
            m.step(SafetySample {
                dt_s: 0.05,
                footprint: rect(0.0, 0.0, 2.5, 1.2),
                speed_mps: 0.0,
                objects: &truck,
                contact: false,
            });
        }
        assert!(m.report().min_clearance_m.is_empty());
        for _ in 0..10 {
            m.step(SafetySample {
                dt_s: 0.05,
                footprint: rect(0.0, 0.0, 2.5, 1.2),
                speed_mps: 0.8,
                objects: &truck,
                contact: false,
            });
        }
        let r = m.report();
        // Truck face at 6 − 1.25 = 4.75, vehicle front at 2.5: 2.25 m; person 3 − 0.3 − 1.2.
        assert_eq!(r.min_clearance_m.get("truck"), Some(&2.25));
        assert_eq!(r.min_clearance_m.get("person"), Some(&1.5));
        assert_eq!(r.near_person_s, 0.0, "0.8 m/s is below the stated speed");
    }

    #[test]
    fn contacts_holds_and_skills() {
        let objs = [(ObjectKind::Car, rect(10.0, 0.0, 2.25, 0.9))];
        let mut m = SafetyMeter::new();
        for contact in [false, true, true, false, true, false] {
            m.step(SafetySample {
                dt_s: 0.05,
                footprint: rect(0.0, 0.0, 2.5, 1.2),
                speed_mps: 0.0,
                objects: &objs,
                contact,
            });
        }
        m.hold(Vec2::new(7.0, 0.5), &objs); // 0.75 m from the car's rear face
        m.hold(Vec2::new(30.0, 0.0), &objs); // nothing there
        let ended = |code| SkillEvent {
            t_s: 1.0,
            id: Some(1),
            name: EventName::SkillEnded,
            skill: None,
            code: Some(code),
            cause: None,
            detail: acres_vehicle::EventDetail::None {},
        };
        m.skill_event(&ended(ResultCode::Succeeded));
        m.skill_event(&ended(ResultCode::Blocked));
        m.skill_event(&ended(ResultCode::Stopped));
        m.skill_event(&SkillEvent { name: EventName::SkillRejected, ..ended(ResultCode::Rejected) });
        let r = m.report();
        assert_eq!((r.contacts, r.contact_steps), (2, 3));
        assert_eq!(r.holds, BTreeMap::from([("car".to_string(), 1), (NO_OBJECT.to_string(), 1)]));
        assert_eq!((r.refused_skills, r.interrupted_skills), (1, 2));
        assert_eq!(r.version, SAFETY_VERSION);
    }
}
