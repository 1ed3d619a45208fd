//! What each tool does. Every result is one JSON object; an error result has `"error"`.

use acres_farm::HOME;
use serde_json::{json, Value};

use crate::planners::planning::plancheck::{self, CheckContext};
use acres_vehicle::SkillKind;

use crate::runfolder::rows::{
    Mode, NoteRow, PlanCheckRow, PlanSource, Profile, Row, ToolDef, View as RowView,
};
use crate::tools::call::{Call, DispatchArgs, LookArgs, LookView, PlanArgs, ReadWhat, RegionArg};
use crate::tools::picture::{self, Around, Region, View};
use crate::tools::state::{round, AcceptedPlan, Frame, Geometry, LegEstimate, RunState};
use crate::world::knowledge::cell_center;

/// The outcome of one tool call.
#[derive(Debug, Clone, Default)]
pub struct ToolOutcome {
    /// The result object.
    pub result: Value,
    /// The call failed.
    pub is_error: bool,
    /// A picture that goes with the result (`look`).
    pub image: Option<Frame>,
    /// The result code of the skill request the call made (its `tool` row says it; the score
    /// counts it).
    pub code: Option<acres_vehicle::ResultCode>,
    /// The arguments did not match the schema, or the tool is unknown (its `tool` row says it).
    pub schema_error: bool,
}

fn ok(result: Value) -> ToolOutcome {
    ToolOutcome { result, ..Default::default() }
}

fn err(msg: impl Into<String>) -> ToolOutcome {
    ToolOutcome { result: json!({"error": msg.into()}), is_error: true, ..Default::default() }
}

/// A dispatch refused by the plan checker rule: the error, and `"rule": "plan"` (a planner tells
/// this refusal by the word, never by the sentence).
fn plan_rule(msg: String) -> ToolOutcome {
    ToolOutcome {
        result: json!({"error": format!("refused by the plan checker rule: {msg}"), "rule": "plan"}),
        is_error: true,
        ..Default::default()
    }
}

/// Runs one tool call: checks the arguments against the schema and types them, then acts.
pub fn execute(st: &mut RunState, tools: &[ToolDef], name: &str, args: &Value) -> ToolOutcome {
    let call = match Call::parse(tools, name, args) {
        Ok(call) => call,
        Err(e) => {
            st.counters.schema_errors += 1;
            return ToolOutcome { schema_error: true, ..err(e) };
        }
    };
    match call {
        Call::Look(a) => look(st, &a),
        Call::Read(a) => read(st, a.what),
        Call::Plan(a) => plan(st, &a),
        Call::Dispatch(a) => dispatch(st, &a),
        Call::Learned(a) => send_request(st, &a.request()),
        Call::Note(a) => {
            st.memory.notes.push(a.text.clone());
            let n = st.memory.notes.len() as u64;
            st.log(Row::Note(NoteRow { t: st.t(), wall: crate::clock::wall_now(), n, text: a.text }));
            ok(json!({"notes": n}))
        }
        Call::AskOperator(_) => {
            st.counters.interventions += 1;
            let answer = st
                .sc
                .operator
                .as_ref()
                .map_or("The operator does not answer.".to_string(), |o| o.answer.clone());
            ok(json!({"answer": answer, "interventions": st.counters.interventions}))
        }
    }
}

fn look(st: &mut RunState, a: &LookArgs) -> ToolOutcome {
    if a.view == LookView::Compare {
        let (Some(fa), Some(fb)) = (&a.frame, &a.other_frame) else {
            return err("compare needs frame and other_frame");
        };
        let (a, b) = (fa.as_str(), fb.as_str());
        let find = |id: &str| st.memory.frames.iter().find(|f| f.id == id).cloned();
        let (Some(fa), Some(fb)) = (find(a), find(b)) else {
            return err(format!("no frame {a} or {b}; the frames are f0001..f{:04}", st.memory.frames.len()));
        };
        let png = match picture::compare(
            &fa.png,
            &format!("{} t={:.0}s", fa.id, fa.t_s),
            &fb.png,
            &format!("{} t={:.0}s", fb.id, fb.t_s),
        ) {
            Ok(p) => p,
            Err(e) => return err(e.to_string()),
        };
        let id = format!("f{:04}", st.memory.frames.len() + 1);
        let region = Some(json!({"frame": a, "other_frame": b}));
        return match st.store_frame(id, png, RowView::Compare, region, Geometry { inset: None, ..fa.geom }) {
            Ok(f) => with_image(frame_result(&f), f),
            Err(e) => err(e),
        };
    }
    if let Some(id) = &a.frame {
        if a.region_given.is_none() {
            return match st.memory.frames.iter().find(|f| &f.id == id).cloned() {
                Some(f) => with_image(frame_result(&f), f),
                None => err(format!("no frame {id}; the frames are f0001..f{:04}", st.memory.frames.len())),
            };
        }
    }
    let pview = if a.view == LookView::Map {
        View::Map
    } else {
        let around_vehicle =
            RegionArg { field: None, around: Some(Around::Vehicle), x: None, y: None, radius_m: None };
        let r = a.region.as_ref().unwrap_or(&around_vehicle);
        let region = if let Some(f) = &r.field {
            Region::Field(f.clone())
        } else if let Some(what) = r.around {
            Region::Around { what, radius_m: r.radius_m }
        } else if let (Some(x), Some(y)) = (r.x, r.y) {
            Region::Circle { x, y, radius_m: r.radius_m.unwrap_or(picture::DEFAULT_RADIUS_M) }
        } else {
            return err("arguments.region: give field, around, or x and y (with radius_m)");
        };
        View::Zoom(region)
    };
    match st.picture(pview, a.region_given.clone(), None) {
        Ok(f) => with_image(frame_result(&f), f),
        Err(e) => err(e),
    }
}

fn frame_result(f: &Frame) -> Value {
    let g = &f.geom;
    let mut out = json!({"frame": f.id, "t_s": round(f.t_s, 1), "view": f.view.as_str(), "view_box": g.view_box.map(|v| round(v, 1)), "m_per_px": round(g.m_per_px, 3)});
    if let Some((view_box, m_per_px)) = g.inset {
        out["inset"] = json!({"view_box": view_box.map(|v| round(v, 1)), "m_per_px": round(m_per_px, 3)});
    }
    out
}

fn with_image(result: Value, f: Frame) -> ToolOutcome {
    ToolOutcome { result, image: Some(f), ..Default::default() }
}

fn finite(v: f32) -> Value {
    if v.is_finite() {
        json!(round(f64::from(v), 2))
    } else {
        Value::Null
    }
}

/// The `read` tool.
pub fn read(st: &mut RunState, what: ReadWhat) -> ToolOutcome {
    let t = st.t();
    match what {
        ReadWhat::Vehicle => read_vehicle(st, t),
        ReadWhat::Mission => read_mission(st, t),
        ReadWhat::Fields => read_fields(st),
        ReadWhat::Budget => read_budget(st, t),
        ReadWhat::Events => read_events(st),
        ReadWhat::Notes => read_notes(st),
        ReadWhat::Scan => read_scan(st, t),
        ReadWhat::Objects => read_objects(st),
    }
}

/// `read` vehicle.
fn read_vehicle(st: &mut RunState, t: f64) -> ToolOutcome {
    let v = st.world().vehicle();
    let mut r = json!({
        "t_s": round(t, 1), "x": round(v.pose.x, 1), "y": round(v.pose.y, 1),
        "heading_deg": round(v.pose.yaw.to_degrees(), 1), "speed_mps": round(v.speed_mps, 2),
        "driven_m": round(v.odom_m, 1), "at": st.planning_place(),
        "skill": st.skill_json(),
        "shield": {"holding": st.world().status().state == acres_vehicle::SkillState::Holding, "ahead_m": finite(st.world().ahead_m() as f32)},
    });
    if st.profile == Profile::Simulator {
        match st.guarded_truth("fuel energy") {
            Ok(truth) => r["fuel_mj"] = json!(round(truth.energy_mj, 3)),
            Err(e) => return err(e.to_string()),
        }
    }
    ok(r)
}

/// `read` mission.
fn read_mission(st: &mut RunState, t: f64) -> ToolOutcome {
    let status = st.world().status();
    let cells_json = |cells: Vec<crate::world::knowledge::Cell>| -> Vec<Value> {
        cells
            .into_iter()
            .map(|c| {
                let p = cell_center(c);
                json!({"x": p.x, "y": p.y})
            })
            .collect()
    };
    let on_route = cells_json(st.memory.knowledge.on_route(&st.world().route_ahead()));
    let mut on_plan = Vec::new();
    if let Some(p) = &st.mission.plan {
        for (key, l) in p.legs.iter().skip(plan_leg_index(p)) {
            for c in cells_json(st.memory.knowledge.on_route(l)) {
                on_plan.push(json!({"leg": key.key(), "x": c["x"], "y": c["y"]}));
            }
        }
    }
    ok(json!({
        "instruction": st.sc.instruction, "fields": st.sc.fields, "scouted": status.scouted,
        "coverage": status.coverage.iter().map(|(k, v)| (k.clone(), json!(round(*v, 3)))).collect::<serde_json::Map<_, _>>(),
        "deadline_s": st.sc.deadline_s, "fuel_limit_mj": st.sc.fuel_limit_mj, "t_s": round(t, 1),
        "plan": st.mission.plan.as_ref().map(|p| json!({"visits": p.visits, "next": p.next_visit(), "return_home": p.return_home})),
        "skill": st.skill_json(),
        "interrupted": status.interrupted.map(|(k, id, target)| json!({"skill": k.as_str(), "id": id, "target": target})),
        "returns_on_route": on_route,
        "returns_on_plan": on_plan,
        "requests": st.mission.requests.iter().map(|(t, s)| json!({"t_s": round(*t, 1), "text": s})).collect::<Vec<_>>(),
        "removed": st.mission.removed,
    }))
}

/// `read` fields.
fn read_fields(st: &mut RunState) -> ToolOutcome {
    let status = st.world().status();
    let map = st.sc.map_data.clone();
    let mut list = Vec::new();
    for f in map.fields.values() {
        let in_play = st.sc.in_play(&f.id);
        let mut v = json!({
            "id": f.id, "in_play": in_play, "scouted": status.scouted.contains(&f.id),
            "coverage": round(status.coverage.get(&f.id).copied().unwrap_or(0.0), 3),
            "area_ha": round(f.area_ha, 2), "entry": {"x": f.entry_pos.x, "y": f.entry_pos.y},
            "loop_m": round(f.loop_length_m(), 1),
        });
        if in_play {
            if let Ok(legs) = st.estimate(std::slice::from_ref(&f.id), true) {
                let time: f64 = legs.iter().map(|l| l.planned_time_s).sum();
                let energy: f64 = legs.iter().map(|l| l.planned_energy_mj).sum();
                v["from_here"] =
                    json!({"planned_time_s": round(time, 1), "planned_energy_mj": round(energy, 2)});
            }
        }
        list.push(v);
    }
    ok(json!({"fields": list}))
}

/// `read` budget.
fn read_budget(st: &mut RunState, t: f64) -> ToolOutcome {
    let l = &st.sc.limits;
    let c = &st.counters;
    ok(json!({
        "t_s": round(t, 1), "deadline_s": st.sc.deadline_s, "time_left_s": st.sc.deadline_s.map(|d| round(d - t, 1)),
        "fuel_limit_mj": st.sc.fuel_limit_mj, "energy_used_mj": round(st.energy_estimate_mj, 2),
        "energy_left_mj": st.sc.fuel_limit_mj.map(|f| round(f - st.energy_estimate_mj, 2)),
        "energy_is": "an estimate from the cost tables",
        "wake_ups": c.wake_ups, "wake_ups_left": u64::from(l.wake_ups).saturating_sub(c.wake_ups),
        "tool_calls": c.tool_calls, "tool_calls_left": u64::from(l.tool_calls).saturating_sub(c.tool_calls),
        "charged_s": round(c.charged_s, 1), "tokens": c.usage.total(), "usd": round(c.usd, 4),
    }))
}

/// `read` events.
fn read_events(st: &mut RunState) -> ToolOutcome {
    ok(json!({"events": st.memory.events}))
}

/// `read` notes.
fn read_notes(st: &mut RunState) -> ToolOutcome {
    ok(json!({"notes": st.memory.notes}))
}

/// `read` scan.
fn read_scan(st: &mut RunState, t: f64) -> ToolOutcome {
    let Some(s) = st.world().scan().copied() else {
        return ok(json!({"t_s": round(t, 1), "scan": null, "why": "no sweep yet"}));
    };
    let names = ["ahead", "front_left", "left", "rear_left", "behind", "rear_right", "right", "front_right"];
    let sectors: serde_json::Map<String, Value> =
        names.iter().zip(s.sectors_m.iter()).map(|(n, r)| (n.to_string(), finite(*r))).collect();
    let blocked: Vec<Value> = st
        .memory
        .knowledge
        .objects()
        .into_iter()
        .map(|c| {
            let p = cell_center(c);
            json!([p.x, p.y])
        })
        .collect();
    ok(json!({
        "t_s": round(t, 1), "ranges_m": s.ranges_m.iter().map(|r| finite(*r)).collect::<Vec<_>>(),
        "ranges_are": "360 ranges, index = bearing in degrees counter-clockwise from the heading (0 ahead, 90 left); null: no return",
        "sectors_m": sectors, "ahead_m": finite(s.ahead_m),
        "shield_rules": st.world().shield_rules().iter().map(|r| json!({"name": r.name, "rule": r.text})).collect::<Vec<_>>(),
        "blocked_places": blocked,
    }))
}

/// `read` objects.
fn read_objects(st: &mut RunState) -> ToolOutcome {
    match st.guarded_truth("the object list") {
        Ok(truth) => ok(json!({"objects": truth.objects.iter().map(|(id, kind, pose)| {
        let (l, w, h) = kind.dims_m();
        json!({"id": id, "kind": kind.as_str(), "x": round(pose.x, 1), "y": round(pose.y, 1),
               "heading_deg": round(pose.yaw.to_degrees(), 1), "length_m": l, "width_m": w, "height_m": h, "speed_mps": 0.0})
    }).collect::<Vec<_>>()})),
        Err(e) => err(e.to_string()),
    }
}

fn plan(st: &mut RunState, a: &PlanArgs) -> ToolOutcome {
    let visits = a.visits.clone();
    let return_home = a.return_home.unwrap_or(true);
    let verdict = verdict(st, &visits, return_home);
    let accepted = verdict.get("accepted") == Some(&Value::Bool(true));
    if !accepted {
        st.counters.refused_plans += 1;
    }
    let row = PlanCheckRow {
        t: st.t(),
        wall: crate::clock::wall_now(),
        visits: visits.clone(),
        return_home,
        accepted,
        source: if verdict["source"] == "harness" { PlanSource::Harness } else { PlanSource::PlanChecker },
        reason: verdict["reason"].as_str().map(String::from),
        counterexample: verdict["counterexample"].as_str().map(String::from),
        planned_time_s: verdict["planned_time_s"].as_f64(),
        planned_energy_mj: verdict["planned_energy_mj"].as_f64(),
    };
    st.log(Row::PlanCheck(row));
    ok(verdict)
}

/// A refused plan's verdict.
fn refuse(source: &str, reason: &str, text: String) -> Value {
    json!({"accepted": false, "source": source, "reason": reason, "counterexample": text})
}

/// The verdict of a plan; accepting it makes it the run's plan.
fn verdict(st: &mut RunState, visits: &[String], return_home: bool) -> Value {
    let map = st.sc.map_data.clone();
    // A refusal about one field names it in "field".
    let refuse_field = |source: &str, reason: &str, text: String, field: &str| {
        let mut v = refuse(source, reason, text);
        v["field"] = json!(field);
        v
    };
    if let Some((i, f)) = visits.iter().enumerate().find(|(_, f)| !map.fields.contains_key(*f)) {
        let ids: Vec<&str> = map.fields.keys().map(String::as_str).collect();
        return refuse_field(
            "harness",
            "unknown_field",
            format!("visit {} is {f}, which the map does not have (fields: {})", i + 1, ids.join(", ")),
            f,
        );
    }
    let mut code = vec![json!(HOME)];
    code.extend(visits.iter().map(|v| json!(v)));
    if return_home {
        code.push(json!(HOME));
    }
    let ctx =
        CheckContext { options: st.sc.fields.iter().cloned().collect(), removed: st.mission.removed.clone() };
    if let Err(r) = plancheck::check(&Value::Array(code), &ctx) {
        if let Some(f) = &r.field {
            if let Some(fd) = map.fields.get(f) {
                st.mission.highlight = Some((fd.entry_pos, format!("{}: {f}", r.reason.as_str())));
            }
        }
        return match &r.field {
            Some(f) => refuse_field("plan_checker", r.reason.as_str(), r.counterexample, f),
            None => refuse("plan_checker", r.reason.as_str(), r.counterexample),
        };
    }
    let legs = match st.estimate(visits, return_home) {
        Ok(l) => l,
        Err(e) => return refuse("harness", "no_route", e),
    };
    checked_plan(st, visits, return_home, legs)
}

/// The verdict of a plan the plan checker passed, with its legs costed: refused for the
/// deadline or the fuel limit, else accepted and made the run's plan.
fn checked_plan(st: &mut RunState, visits: &[String], return_home: bool, legs: Vec<LegEstimate>) -> Value {
    let time: f64 = legs.iter().map(|l| l.planned_time_s).sum();
    let energy: f64 = legs.iter().map(|l| l.planned_energy_mj).sum();
    let t = st.t();
    let leg_json: Vec<Value> = legs
        .iter()
        .map(|l| {
            let cells = st.memory.knowledge.on_route(&l.path);
            let mut v = json!({"leg": l.leg.key(), "planned_time_s": round(l.planned_time_s, 1), "planned_energy_mj": round(l.planned_energy_mj, 2)});
            if !cells.is_empty() {
                let p = cell_center(cells[0]);
                v["warning"] = json!(format!("LiDAR returns on this leg at ({:.0}, {:.0}): {} blocked place(s)", p.x, p.y, cells.len()));
            }
            v
        })
        .collect();
    let mut result = json!({
        "accepted": true, "visits": visits, "return_home": return_home,
        "planned_time_s": round(time, 1), "planned_energy_mj": round(energy, 2), "ends_at_s": round(t + time, 1),
        "legs": leg_json,
    });
    if let Some(d) = st.sc.deadline_s {
        if t + time > d {
            result = refuse(
                "harness",
                "deadline",
                format!(
                    "the plan ends at t = {:.0} s (planned {:.0} s from now), after the deadline {d:.0} s",
                    t + time,
                    time
                ),
            );
        }
    }
    if result["accepted"] == true {
        if let Some(f) = st.sc.fuel_limit_mj {
            if st.energy_estimate_mj + energy > f {
                result = refuse(
                    "harness",
                    "fuel",
                    format!(
                        "the plan needs {energy:.1} MJ more; {:.1} MJ used of the limit {f:.1} MJ",
                        st.energy_estimate_mj
                    ),
                );
            }
        }
    }
    if result["accepted"] == false {
        result["planned_time_s"] = json!(round(time, 1));
        result["planned_energy_mj"] = json!(round(energy, 2));
        result["legs"] = Value::Array(leg_json);
        return result;
    }
    if let Some(old) = &st.mission.plan {
        let scouted = st.world().status().scouted;
        for v in &old.visits {
            if !visits.contains(v) && !scouted.contains(v) {
                st.mission.removed.insert(v.clone());
            }
        }
    }
    st.mission.plan = Some(AcceptedPlan {
        visits: visits.to_vec(),
        return_home,
        next: 0,
        legs: legs.into_iter().map(|l| (l.leg, l.path)).collect(),
    });
    result
}

fn dispatch(st: &mut RunState, a: &DispatchArgs) -> ToolOutcome {
    let skill = a.skill;
    let req = a.request();
    if st.mode == Mode::Checked && matches!(skill, SkillKind::Goto | SkillKind::Scout) {
        let target = req.field.clone().or_else(|| req.place.clone()).unwrap_or_default();
        if st.sc.map_data.fields.contains_key(&target) {
            match st.mission.plan.as_ref().and_then(|p| p.next_visit().map(String::from)) {
                None => {
                    return plan_rule(format!(
                        "{} {target} needs an accepted plan whose next visit is {target}; call plan first",
                        skill.as_str()
                    ))
                }
                Some(next) if next != target => {
                    return plan_rule(format!("the next visit of the accepted plan is {next}, not {target}"));
                }
                Some(_) => {}
            }
        }
    }
    if st.mode == Mode::Checked && skill == SkillKind::Resume {
        // Resuming a goto or scout of a field is a goto or scout of it: the same plan rule.
        if let Some((_, _, target)) = st.world().status().interrupted {
            if st.sc.map_data.fields.contains_key(&target) {
                let next = st.mission.plan.as_ref().and_then(|p| p.next_visit().map(String::from));
                if next.as_deref() != Some(target.as_str()) {
                    return plan_rule(format!(
                        "resume continues to {target}, but the next visit of the accepted plan is {}",
                        next.unwrap_or_else(|| "none".into())
                    ));
                }
            }
        }
    }
    if skill == SkillKind::Wait && st.world().status().skill.is_some() {
        let Some(s) = req.seconds else {
            return err("arguments.arguments.seconds: wait needs seconds");
        };
        let at = st.t() + s;
        st.mission.timer_s = Some(at);
        return ok(
            json!({"accepted": true, "timer": true, "wakes_at_s": round(at, 1), "note": "a skill is running: a timer will wake you"}),
        );
    }
    send_request(st, &req)
}

/// Sends a skill request and makes its reply the tool's result (an error when refused).
fn send_request(st: &mut RunState, req: &acres_vehicle::SkillRequest) -> ToolOutcome {
    let reply = st.request(req);
    let v = serde_json::to_value(&reply).unwrap_or(json!({}));
    let mut r = json!({});
    for (k, val) in v.as_object().into_iter().flatten() {
        if !val.is_null() {
            r[k] = val.clone();
        }
    }
    if let Some(m) = r.get("route_m").and_then(Value::as_f64) {
        r["route_m"] = json!(round(m, 1));
    }
    ToolOutcome { result: r, is_error: !reply.accepted, code: reply.code, ..Default::default() }
}

/// The index of the first plan leg not yet driven: the legs of visits before `next` are done.
pub fn plan_leg_index(p: &AcceptedPlan) -> usize {
    let done: Vec<&String> = p.visits[..p.next.min(p.visits.len())].iter().collect();
    p.legs.iter().position(|(leg, _)| !done.iter().any(|v| leg.to == **v)).unwrap_or(p.legs.len())
}
