//! The skill server's events and status as the `acres_interfaces` messages that carry them (on
//! `/acres/events` and `/acres/observation`, in recordings, on the link): one conversion for the
//! vehicle node and the harness's recorder. `acres_msgs` is plain types and CDR: no ROS client
//! comes with it.

use acres_msgs::acres_interfaces::{FieldCoverage, Observation as ObsMsg, SkillEvent as EventMsg};
use acres_msgs::geometry_msgs::Point;
use acres_msgs::std_msgs::Header;

use crate::{EventDetail, SkillEvent, StatusRef};

/// Sets the skill server's part of an observation from `st`: the skill, its identifier, state,
/// progress, target and metres left, the hold's start, the interrupted motion, the coverage and
/// the fields scouted (NaN, 0 or empty where there is none). The text and lists reuse `o`'s
/// memory (the recorder sets one observation each control step). The shield flag, the pose and
/// the rest are the caller's.
pub fn set_status_fields(o: &mut ObsMsg, st: StatusRef<'_>) {
    set_text(&mut o.skill, st.skill.map_or("", |s| s.as_str()));
    o.skill_id = st.id.unwrap_or(0);
    set_text(&mut o.state, st.state.as_str());
    o.progress = st.progress;
    set_text(&mut o.target, st.target.unwrap_or(""));
    o.remaining_m = st.remaining_m.unwrap_or(f64::NAN);
    o.hold_since_s = st.hold_since_s.unwrap_or(f64::NAN);
    let (skill, id, target) = st.interrupted.map_or(("", 0, ""), |(k, id, t)| (k.as_str(), id, t));
    set_text(&mut o.interrupted_skill, skill);
    o.interrupted_id = id;
    set_text(&mut o.interrupted_target, target);
    o.coverage.truncate(st.coverage.len());
    for (i, (field, c)) in st.coverage.iter().enumerate() {
        match o.coverage.get_mut(i) {
            Some(fc) => {
                set_text(&mut fc.field, field);
                fc.coverage = *c;
            }
            None => o.coverage.push(FieldCoverage { field: field.clone(), coverage: *c }),
        }
    }
    o.scouted.truncate(st.scouted.len());
    for (i, field) in st.scouted.iter().enumerate() {
        match o.scouted.get_mut(i) {
            Some(s) => set_text(s, field),
            None => o.scouted.push(field.clone()),
        }
    }
}

/// Makes `s` the text `t`, in its own memory when it has room.
pub fn set_text(s: &mut String, t: &str) {
    if s != t {
        s.clear();
        s.push_str(t);
    }
}

/// One event as its message: the details in their fields, NaN, 0 or empty where the event has
/// none; a release with a clear way has `ahead_m` +inf.
pub fn event_msg(e: &SkillEvent, header: Header) -> EventMsg {
    let mut m = EventMsg {
        header,
        event: e.name.as_str().into(),
        skill_id: e.id.unwrap_or(0),
        skill: e.skill.map_or(String::new(), |s| s.as_str().into()),
        code: e.code.map_or(String::new(), |c| c.as_str().into()),
        cause: e.cause.clone().unwrap_or_default(),
        route_m: f64::NAN,
        remaining_m: f64::NAN,
        progress: f64::NAN,
        seconds: f64::NAN,
        ahead_m: f64::NAN,
        stopping_m: f64::NAN,
        held_s: f64::NAN,
        hold_at: Point { x: f64::NAN, y: f64::NAN, z: f64::NAN },
        ..EventMsg::default()
    };
    match &e.detail {
        EventDetail::Resumed { resumes, target, remaining_m } => {
            m.resumes_id = *resumes;
            m.target = target.clone();
            m.remaining_m = *remaining_m;
        }
        EventDetail::Ended { target, progress, remaining_m } => {
            m.target = target.clone();
            m.progress = *progress;
            m.remaining_m = *remaining_m;
        }
        EventDetail::Route { target, route_m } => {
            m.target = target.clone();
            m.route_m = *route_m;
        }
        EventDetail::Hold { ahead_m, stopping_m, x, y } => {
            m.ahead_m = *ahead_m;
            m.stopping_m = *stopping_m;
            m.hold_at = Point { x: *x, y: *y, z: 0.0 };
        }
        EventDetail::Release { held_s, ahead_m, why } => {
            m.held_s = *held_s;
            m.ahead_m = ahead_m.unwrap_or(f64::INFINITY);
            m.why = why.clone().unwrap_or_default();
        }
        EventDetail::Wait { seconds } => m.seconds = *seconds,
        EventDetail::Scouted { field } => m.field = field.clone(),
        EventDetail::None {} => {}
    }
    m
}
