//! The bridge's words (the ROS messages of `acres_interfaces`, as the link carries them) back
//! into the vehicle's types: the inverse of the vehicle node's `convert` (NaN, 0 or empty where
//! a value is absent).

use acres_vehicle::scan::ScanConfig;
use std::collections::BTreeMap;

use acres_core::objects::ObjectKind;
use acres_farm::geom::{Pose, Vec2};
use acres_link_protocol::Sweep;
use acres_msgs::acres_interfaces::{Observation, SimTruth, SkillEvent as EventMsg};
use acres_msgs::builtin_interfaces::Time;
use acres_vehicle::{EventDetail, EventName, ResultCode, SkillEvent, SkillKind, SkillState, Status};

use crate::world::{Truth, VehicleView};

/// Seconds of a ROS time stamp.
pub fn secs(t: &Time) -> f64 {
    f64::from(t.sec) + f64::from(t.nanosec) * 1e-9
}

fn text(s: &str) -> Option<String> {
    (!s.is_empty()).then(|| s.to_string())
}

fn num(v: f64) -> Option<f64> {
    (!v.is_nan()).then_some(v)
}

fn id(v: u64) -> Option<u64> {
    (v != 0).then_some(v)
}

/// The odometry part of an observation.
pub fn vehicle_of(o: &Observation) -> VehicleView {
    VehicleView {
        t_s: secs(&o.header.stamp),
        pose: Pose { x: o.x_m, y: o.y_m, yaw: o.yaw_rad },
        speed_mps: o.speed_mps,
        odom_m: o.odom_m,
    }
}

/// The route ahead in an observation (map frame).
pub fn route_of(o: &Observation) -> Vec<Vec2> {
    o.route_ahead.iter().map(|p| Vec2::new(p.x, p.y)).collect()
}

/// The skill server's status in an observation.
pub fn status_of(o: &Observation) -> Status {
    let state = match o.state.as_str() {
        "running" => SkillState::Running,
        "holding" => SkillState::Holding,
        "waiting" => SkillState::Waiting,
        _ => SkillState::Idle,
    };
    let interrupted =
        SkillKind::parse(&o.interrupted_skill).map(|k| (k, o.interrupted_id, o.interrupted_target.clone()));
    Status {
        skill: SkillKind::parse(&o.skill),
        id: SkillKind::parse(&o.skill).and(id(o.skill_id)),
        state,
        progress: o.progress,
        target: text(&o.target),
        remaining_m: num(o.remaining_m),
        hold_since_s: num(o.hold_since_s),
        interrupted,
        coverage: o.coverage.iter().map(|c| (c.field.clone(), c.coverage)).collect(),
        scouted: o.scouted.clone(),
    }
}

/// A skill server event; `None` for an event name the harness does not know.
pub fn event_of(m: &EventMsg) -> Option<SkillEvent> {
    let name = EventName::parse(&m.event)?;
    let skill = SkillKind::parse(&m.skill);
    let detail = match name {
        EventName::SkillStarted if m.resumes_id != 0 => EventDetail::Resumed {
            resumes: m.resumes_id,
            target: m.target.clone(),
            remaining_m: m.remaining_m,
        },
        EventName::SkillStarted if skill == Some(SkillKind::Wait) => EventDetail::Wait { seconds: m.seconds },
        EventName::SkillStarted if !m.route_m.is_nan() => {
            EventDetail::Route { target: m.target.clone(), route_m: m.route_m }
        }
        EventName::SkillEnded if !m.target.is_empty() => {
            EventDetail::Ended { target: m.target.clone(), progress: m.progress, remaining_m: m.remaining_m }
        }
        EventName::ShieldHold => {
            EventDetail::Hold { ahead_m: m.ahead_m, stopping_m: m.stopping_m, x: m.hold_at.x, y: m.hold_at.y }
        }
        EventName::ShieldRelease | EventName::LinkRelease => EventDetail::Release {
            held_s: m.held_s,
            ahead_m: m.ahead_m.is_finite().then_some(m.ahead_m),
            why: text(&m.why),
        },
        EventName::FieldScouted => EventDetail::Scouted { field: m.field.clone() },
        _ => EventDetail::None {},
    };
    Some(SkillEvent {
        t_s: secs(&m.header.stamp),
        name,
        id: id(m.skill_id),
        skill,
        code: ResultCode::parse(&m.code),
        cause: text(&m.cause),
        detail,
    })
}

/// The simulator's truth.
pub fn truth_of(t: &SimTruth) -> Truth {
    let kind = |k: &str| serde_json::from_value::<ObjectKind>(serde_json::Value::String(k.into())).ok();
    let mut first_seen = BTreeMap::new();
    for o in &t.objects {
        if o.first_seen_s.is_finite() && o.first_seen_s >= 0.0 {
            first_seen.insert(o.id, o.first_seen_s);
        }
    }
    Truth {
        objects: t
            .objects
            .iter()
            .filter_map(|o| Some((o.id, kind(&o.kind)?, Pose { x: o.x_m, y: o.y_m, yaw: o.yaw_rad })))
            .collect(),
        energy_mj: t.energy_mj,
        contact: t.contact,
        contact_steps: t.contact_steps,
        contact_object: u32::try_from(t.contact_object).ok(),
        first_seen,
    }
}

/// The scan of a sweep, with the vehicle's scan function and `cfg` (the scenario's mount);
/// `None` when the data is broken.
pub fn scan_of(s: &Sweep, cfg: &ScanConfig) -> Option<acres_vehicle::scan::Scan> {
    sweep_of(s, cfg).map(|(scan, _)| scan)
}

/// The scan of a sweep and its points (sensor frame: x, y, z, intensity; as the encoding gives
/// them back: bit for bit, or to the millimetre for `mm_zstd`), which the recording keeps;
/// `None` when the data is broken.
pub fn sweep_of(s: &Sweep, cfg: &ScanConfig) -> Option<(acres_vehicle::scan::Scan, Vec<[f32; 4]>)> {
    let pts = s.unpack().ok()?;
    let scan = acres_vehicle::scan::scan(&pts, cfg);
    Some((scan, pts))
}
